/* conv1d_ref.c: hand-written serial C baseline of the conv1d form (bench/forms/run.sh).
 *
 *   conv1d_ref N KW ITERS
 *
 * y[i] = sum over k < KW of x[i + k] w[k], f32, the width known at run time, as an expert
 * writes it: the loops interchanged in blocks of BLOCK outputs (for each k, a unit-stride
 * pass y += x[. + k] w[k] over the block, which gcc vectorizes; the block of y stays in
 * L1), each output's adds in k order from zero (conv1d.orn's loop reduction keeps sixteen
 * partials: the last bits differ). Prints "bench: S s/iter  sum X" (X: the sum of y in
 * double). */
#include "../common/bench.h"

#define BLOCK 2048 /* outputs per block: 8 KB of y */

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: conv1d_ref N KW ITERS\n");
        return 2;
    }
    long n = atol(argv[1]);
    int kw = atoi(argv[2]), iters = atoi(argv[3]);
    float *x = bench_xmalloc((size_t)(n + kw) * 4), *y = bench_xmalloc((size_t)n * 4);
    float *w = bench_xmalloc((size_t)(kw > 0 ? kw : 1) * 4);
    for (long i = 0; i < n + kw; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f;
    for (int k = 0; k < kw; k++) w[k] = 1.0f / (float)(k + 1);
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        for (long b = 0; b < n; b += BLOCK) {
            long e = b + BLOCK < n ? b + BLOCK : n;
            for (long i = b; i < e; i++) y[i] = 0.0f;
            for (int k = 0; k < kw; k++) {
                const float wk = w[k], *xk = x + k;
                for (long i = b; i < e; i++) y[i] += xk[i] * wk;
            }
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    double s = 0;
    for (long i = 0; i < n; i++) s += y[i];
    printf("bench: %.6f s/iter  sum %.9e\n", total / iters, s);
    free(x), free(y), free(w);
    return 0;
}
