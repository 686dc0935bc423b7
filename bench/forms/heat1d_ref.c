/* heat1d_ref.c: hand-written serial C baseline of the heat1d form (bench/forms/run.sh).
 *
 *   heat1d_ref N ITERS [A]
 *
 * The explicit 1-D heat sweep of heat1d.orn, double-buffered, U into V then V into U,
 * the ends fixed, with the same arithmetic per point (so the same bits). The two sweeps of
 * an iteration are fused block by block (temporal blocking, as bench/stencil/jacobi_ref.c
 * does in 2-D): V over a block of BLOCK points, then U one point behind it, so that the
 * block is still in cache when the second sweep reads it; each piece is a unit-stride loop
 * that gcc vectorizes. Prints "bench: S s/iter  sum X". */
#include "../common/bench.h"

#define BLOCK 4096 /* points per block: two 32 KB pieces of U and V, in L1/L2 */

/* v[i] for i in [lo, hi) from u */
static void sweep(double *restrict v, const double *restrict u, long lo, long hi, double a)
{
    for (long i = lo; i < hi; i++) v[i] = u[i] + a * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: heat1d_ref N ITERS [A]\n");
        return 2;
    }
    long n = atol(argv[1]);
    int iters = atoi(argv[2]);
    double a = argc > 3 ? atof(argv[3]) : 0.25;
    double *u = bench_xmalloc((size_t)n * 8), *v = bench_xmalloc((size_t)n * 8);
    for (long i = 0; i < n; i++) u[i] = v[i] = (double)(i % 100) / 100.0;
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        /* V on [lo, hi), then U on [lo - 1, hi - 1): U[i] needs V[i + 1], computed, and
         * the next block's V[hi] needs the old U[hi - 1], not yet overwritten */
        for (long lo = 1; lo < n - 1; lo += BLOCK) {
            long hi = lo + BLOCK < n - 1 ? lo + BLOCK : n - 1;
            sweep(v, u, lo, hi, a);
            sweep(u, v, lo > 1 ? lo - 1 : 1, hi == n - 1 ? hi : hi - 1, a);
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    double s = 0;
    for (long i = 0; i < n; i++) s += u[i];
    printf("bench: %.6f s/iter  sum %.9f\n", total / iters, s);
    free(u), free(v);
    return 0;
}
