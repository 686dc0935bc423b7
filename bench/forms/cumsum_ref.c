/* cumsum_ref.c: hand-written serial C baseline of the cumsum_rows form (bench/forms/run.sh).
 *
 *   cumsum_ref ROWS COLS ITERS
 *
 * R[r, j] = R[r, j - 1] + X[r, j] along each row, f64, row-major, as an expert writes it: a
 * running variable per row (the adds in the same order as cumsum_rows.orn: the same bits).
 * Prints "bench: S s/iter  sum X" (X: the sum of R in double). */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cumsum_ref ROWS COLS ITERS\n");
        return 2;
    }
    long rows = atol(argv[1]), cols = atol(argv[2]);
    int iters = atoi(argv[3]);
    double *x = bench_xmalloc((size_t)(rows * cols) * 8),
           *y = bench_xmalloc((size_t)(rows * cols) * 8);
    for (long r = 0; r < rows; r++)
        for (long j = 0; j < cols; j++)
            x[r * cols + j] = (double)((r * 7919 + j * 31) % 1000) / 1000.0;
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        for (long r = 0; r < rows; r++) {
            const double *xr = x + r * cols;
            double *yr = y + r * cols, a = xr[0];
            yr[0] = a;
            for (long j = 1; j < cols; j++) {
                a = a + xr[j];
                yr[j] = a;
            }
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    double s = 0;
    for (long i = 0; i < rows * cols; i++) s += y[i];
    printf("bench: %.6f s/iter  sum %.9e\n", total / iters, s);
    free(x), free(y);
    return 0;
}
