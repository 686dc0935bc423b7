/* gs_ref.c: hand-written serial C baseline of the gauss_seidel form (bench/forms/run.sh).
 *
 *   gs_ref N SWEEPS [POINTS]
 *
 * In-place Gauss-Seidel sweeps in row-major order, the same arithmetic per point as
 * gauss_seidel.orn, 0.25 * (((up + down) + left) + right) (so the same grid): the left
 * neighbour, just written, stays in a register. The dependences run along both axes, so
 * the sweep is a chain of adds that neither vectorizes nor blocks without changing the
 * order of the updates. POINTS 9: gauss_seidel9.orn's 9-point stencil, the eight
 * neighbours summed row by row, left to right, times 0.125. Prints "bench: S s/iter  sum X". */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: gs_ref N SWEEPS [POINTS]\n");
        return 2;
    }
    long n = atol(argv[1]);
    int sweeps = atoi(argv[2]), nine = argc == 4 && atoi(argv[3]) == 9;
    double *u = bench_xmalloc((size_t)(n * n) * 8);
    memset(u, 0, (size_t)(n * n) * 8);
    for (long j = 0; j < n; j++) u[j] = 1.0;
    double total = 0;
    for (int s = 0; s < sweeps; s++) {
        double t0 = bench_now();
        if (nine)
            for (long i = 1; i < n - 1; i++) {
                const double *a = u + (i - 1) * n, *c = u + (i + 1) * n;
                double *b = u + i * n;
                for (long j = 1; j < n - 1; j++)
                    b[j] = 0.125 * (a[j - 1] + a[j] + a[j + 1] + b[j - 1] + b[j + 1] + c[j - 1] +
                                    c[j] + c[j + 1]);
            }
        else
            for (long i = 1; i < n - 1; i++)
                for (long j = 1; j < n - 1; j++)
                    u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
                                           u[i * n + j - 1] + u[i * n + j + 1]);
        double secs = bench_now() - t0;
        total += secs;
        printf("sweep %3d  %.3f s\n", s + 1, secs);
    }
    double sum = 0;
    for (long i = 0; i < n * n; i++) sum += u[i];
    printf("bench: %.6f s/iter  sum %.9f\n", total / sweeps, sum);
    free(u);
    return 0;
}
