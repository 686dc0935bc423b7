/* jacobi_ref.c: hand-written serial C baseline of the stencil workload (bench/run.sh).
 *
 *   jacobi_ref N ITERS
 *
 * 5-point Jacobi on an N x N double grid, two grids, one iteration = sweep A into B, then
 * B into A, the arithmetic of bench/stencil/jacobi.orn term for term. The two sweeps are
 * fused row by row (temporal blocking of depth 2): once row i of B is computed, no later
 * row of B reads row i-1 of A, so that row is recomputed at once from B rows i-2..i,
 * while they are still in cache. Each grid is streamed from memory once per
 * iteration instead of twice; a 3-row window of each grid (3 x 3 x 32 KiB at N = 4096)
 * stays in L2. Prints "bench: S s/iter  grid_sum X". */
#include "../common/bench.h"

static inline void row(double *restrict out, const double *restrict up, const double *restrict mid,
                       const double *restrict down, long n)
{
    for (long j = 1; j < n - 1; j++) out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: jacobi_ref N ITERS\n");
        return 2;
    }
    long n = atol(argv[1]);
    int iters = atoi(argv[2]);
    double *A = malloc((size_t)(n * n) * sizeof *A), *B = malloc((size_t)(n * n) * sizeof *B);
    if (!A || !B || n < 3) return 1;
    /* first touch before the clock, as the .orn runtime does when it makes a large array:
     * the first iteration then measures the sweeps, not the page faults of a lazy calloc */
    explicit_bzero(A, (size_t)(n * n) * sizeof *A); /* memset after malloc is a calloc to gcc */
    explicit_bzero(B, (size_t)(n * n) * sizeof *B);
    for (long j = 0; j < n; j++) A[j] = B[j] = 1.0;
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        for (long i = 1; i < n - 1; i++) {
            row(B + i * n, A + (i - 1) * n, A + i * n, A + (i + 1) * n, n);
            if (i >= 2) row(A + (i - 1) * n, B + (i - 2) * n, B + (i - 1) * n, B + i * n, n);
        }
        row(A + (n - 2) * n, B + (n - 3) * n, B + (n - 2) * n, B + (n - 1) * n, n);
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    double s = 0;
    for (long x = 0; x < n * n; x++) s += A[x];
    printf("bench: %.6f s/iter  grid_sum %.9f\n", total / iters, s);
    free(A), free(B);
    return 0;
}
