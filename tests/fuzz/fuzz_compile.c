/* fuzz_compile.c: libFuzzer target for the whole compiler short of the C compiler:
 * bytes -> unit -> parse -> sema -> analysis -> the generated C (and the CUDA of @gpu loops,
 * and the C of a REPL module), into memory.
 *
 * What orionc accepts it must compile: an input that parses and analyses without an error
 * must generate code without an internal error (a false return from orn_cg_generate is
 * abort()ed, so libFuzzer and the replay report it), and no input may crash, hang, leak or
 * trip a sanitizer on the way. Whether the generated C compiles and computes the right
 * thing is the differential campaign's part (tests/diff).
 *
 * Build and run a bounded fuzz run (clang only), as for fuzz_front (README.md here):
 *   cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DORN_FUZZ=ON
 *   cmake --build build/fuzz -j2 --target fuzz_compile
 *   mkdir -p build/fuzz/corpus-compile
 *   build/fuzz/tests/fuzz/fuzz_compile -dict=tests/fuzz/front.dict -max_total_time=60 \
 *       -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
 *       build/fuzz/corpus-compile tests/fuzz/corpus/front tests/diff/regress examples */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze.h"
#include "diag.h"
#include "emit.h"
#include "sema.h"
#include "unit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void generate(OrnUnit *u, const OrnPlanSet *plans, const OrnCgTarget *t,
                     const OrnCgOptions *o)
{
    OrnBuf code;
    orn_buf_init(&code);
    if (!orn_cg_generate(u, plans, t, o, &code)) {
        fprintf(stderr, "fuzz_compile: internal error in the %s emitter (%s%s)\n", t->name,
                o->gpu ? "gpu" : "cpu", o->module ? ", module" : "");
        abort();
    }
    orn_buf_free(&code);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    OrnUnit *u = orn_unit_new("fuzz.orn", (const char *)data, size, NULL);
    OrnPlanSet plans;
    if (orn_parse(u, false) == ORN_PARSE_OK && orn_sema(u) && orn_analyze(u, &plans) &&
        !orn_diags_failed(&u->diags)) {
        OrnCgOptions o = {.file = "fuzz.orn", .vec_bytes = 64};
        generate(u, &plans, &orn_cg_target_c, &o);
        o.gpu = true;
        o.vec_bytes = 32;
        generate(u, &plans, &orn_cg_target_c, &o);
        generate(u, &plans, &orn_cg_target_cuda, &o);
        OrnCgOptions m = {.file = "fuzz.orn", .module = true, .vec_bytes = 16};
        generate(u, &plans, &orn_cg_target_c, &m);
    }
    orn_unit_free(u);
    return 0;
}
