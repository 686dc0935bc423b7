/* fuzz_front.c: libFuzzer target for the front end: bytes -> unit -> parse -> sema.
 *
 * Any input must end in diagnostics, never in a crash, a hang, a leak or a sanitizer
 * report. Diagnostics are counted, not printed (diag_out NULL).
 *
 * Build and run a bounded 60-second fuzz run (clang only):
 *   cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DORN_FUZZ=ON
 *   cmake --build build/fuzz -j2 --target fuzz_front
 *   mkdir -p build/fuzz/corpus-front
 *   build/fuzz/tests/fuzz/fuzz_front -dict=tests/fuzz/front.dict -max_total_time=60 \
 *       -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
 *       build/fuzz/corpus-front tests/fuzz/corpus/front
 * New inputs go to build/fuzz/corpus-front (the first directory); crashes are written as
 * crash-* in the current directory. Copy an input worth keeping into
 * tests/fuzz/corpus/front/, where the always-built replay test (fuzz/front/replay) runs
 * it on every ctest. See tests/fuzz/README.md. */
#include <stddef.h>
#include <stdint.h>

#include "sema.h"
#include "unit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    OrnUnit *u = orn_unit_new("fuzz.orn", (const char *)data, size, NULL);
    if (orn_parse(u, false) == ORN_PARSE_OK) orn_sema(u);
    orn_unit_free(u);
    /* The REPL's mode reports less and returns INCOMPLETE: exercise it too. */
    u = orn_unit_new("fuzz.orn", (const char *)data, size, NULL);
    (void)orn_parse(u, true);
    orn_unit_free(u);
    return 0;
}
