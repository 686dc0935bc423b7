/* conv1d_ref.c: hand-written serial C baseline of the conv1d form (bench/forms/run.sh).
 *
 *   conv1d_ref N KW ITERS [rev]
 *
 * y[i] = sum over k < KW of x[i + k] w[k], f32, the width known at run time, as an expert
 * writes it: register blocking across outputs. For each block of BLOCK outputs, their sums
 * stay in a small array the compiler keeps in vector registers while k runs (a unit-stride
 * pass acc += x[. + k] w[k] over the block, vectorized), each output's adds in k order from
 * zero (conv1d.orn's loop reduction keeps sixteen partials: the last bits differ). Measured
 * on this machine (4M outputs, width 9, -O3 -march=native -ffp-contract=off): BLOCK 32 1.75
 * ms, 64 1.8, 128 1.95, 16 5.4; the loops interchanged over blocks of 2048 outputs with y
 * in L1 (the previous baseline) 2.5; the naive loop 6.2. Prints "bench: S s/iter  sum X"
 * (X: the sum of y in double). With "rev", the conv1d_rev form: y[i] = sum over k of
 * x[i + KW - 1 - k] w[k], which is this loop with the taps reversed (w'[m] = w[KW - 1 - m]). */
#include "../common/bench.h"

#define BLOCK 32 /* outputs per block: two 512-bit registers of sums */

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: conv1d_ref N KW ITERS [rev]\n");
        return 2;
    }
    long n = atol(argv[1]);
    int kw = atoi(argv[2]), iters = atoi(argv[3]);
    float *x = bench_xmalloc((size_t)(n + kw) * 4), *y = bench_xmalloc((size_t)n * 4);
    float *w = bench_xmalloc((size_t)(kw > 0 ? kw : 1) * 4);
    for (long i = 0; i < n + kw; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f;
    int rev = argc > 4 && strcmp(argv[4], "rev") == 0;
    for (int k = 0; k < kw; k++) w[rev ? kw - 1 - k : k] = 1.0f / (float)(k + 1);
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        long b = 0;
        for (; b + BLOCK <= n; b += BLOCK) {
            float acc[BLOCK];
            for (int l = 0; l < BLOCK; l++) acc[l] = 0.0f;
            for (int k = 0; k < kw; k++) {
                const float wk = w[k], *xk = x + b + k;
                for (int l = 0; l < BLOCK; l++) acc[l] += xk[l] * wk;
            }
            for (int l = 0; l < BLOCK; l++) y[b + l] = acc[l];
        }
        for (long i = b; i < n; i++) { /* the last outputs, fewer than a block */
            float s = 0.0f;
            for (int k = 0; k < kw; k++) s += x[i + k] * w[k];
            y[i] = s;
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
