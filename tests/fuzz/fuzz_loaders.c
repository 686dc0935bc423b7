/* fuzz_loaders.c: libFuzzer target for the data loaders: the first byte picks a format
 * (triplets, libsvm, docword, load() of a saved array, text or binary, or load_csv with or
 * without a header line, f64 or i32) and whether non-finite values are allowed, the rest is
 * the file. Every input must end in an array or in an
 * error status with a message, never in a crash, a hang, a leak or a sanitizer report. Runs the DSM
 * in one process (the local transport), so no MPI is needed.
 *
 * Bounded 60-second run (clang only):
 *   cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DORN_FUZZ=ON
 *   cmake --build build/fuzz -j2 --target fuzz_loaders
 *   mkdir -p build/fuzz/corpus-loaders
 *   build/fuzz/tests/fuzz/fuzz_loaders -max_total_time=60 -max_len=4096 -timeout=10 \
 *       -rss_limit_mb=2048 build/fuzz/corpus-loaders tests/fuzz/corpus/loaders
 * The replay test fuzz/loaders/replay runs tests/fuzz/corpus/loaders on every ctest. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsm.h"
#include "transport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t put = size ? fwrite(data, 1, size, f) : 0;
    return (fclose(f) != 0 || put != size) ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char path[64];
    /* A suffix decides between the text and the binary format of load(). */
    int kind = data[0] < 12 ? data[0] % 6 : 6;
    /* data[0] / 6 odd: with ORN_DSM_ALLOW_NONFINITE (nan, inf, overflow load); csv (12 and
     * up): bit 0 a header line, bit 1 i32 values, bit 2 non-finite allowed */
    unsigned flags = (kind < 6 ? data[0] / 6 % 2 : data[0] / 4 % 2) ? ORN_DSM_ALLOW_NONFINITE : 0;
    snprintf(path, sizeof path, "/tmp/orn-fuzz-%ld%s", (long)getpid(), kind == 4 ? ".txt" : ".bin");
    if (write_file(path, data + 1, size - 1) != 0) abort();

    OrnDsmTransport *tp = NULL;
    OrnDsmCtx *ctx = NULL;
    if (orn_dsm_tp_local_new(&tp) != ORN_OK || orn_dsm_ctx_new(tp, &ctx) != ORN_OK) abort();
    OrnDsmArray *a = NULL, *b = NULL;
    int st;
    switch (kind) {
    case 0:
        st = orn_dsm_load_triplets(ctx, path, flags, &a);
        break;
    case 1:
        st = orn_dsm_load_libsvm(ctx, path, flags, &a, &b);
        break;
    case 2:
        st = orn_dsm_load_docword(ctx, path, &a);
        break;
    case 3:
        st = orn_dsm_load(ctx, path, ORN_DSM_ANYTYPE, flags, &a);
        break;
    case 4:
        st = orn_dsm_load(ctx, path, ORN_DSM_F32, flags, &a);
        break;
    case 5:
        st = orn_dsm_load(ctx, path, ORN_DSM_I64, flags, &a);
        break;
    default:
        st = orn_dsm_load_csv(ctx, path, data[0] / 2 % 2 ? ORN_DSM_I32 : ORN_DSM_F64, data[0] % 2,
                              flags, &a);
        break;
    }
    /* A failure must say what went wrong, in printable text (file bytes escaped). */
    if (st != ORN_OK && orn_dsm_error(ctx)[0] == '\0') abort();
    for (const char *m = orn_dsm_error(ctx); *m; m++)
        if ((unsigned char)*m < 0x20 || *m == 0x7f) abort();
    orn_dsm_free(b);
    orn_dsm_free(a);
    orn_dsm_ctx_free(ctx);
    unlink(path);
    return 0;
}
