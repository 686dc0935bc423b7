/* standardize_ref.c: hand-written serial C baseline of the standardize form
 * (bench/forms/standardize.orn, bench/forms/run.sh).
 *
 *   standardize_ref DATA ITERS
 *
 * DATA: a dense (N, D) f64 array in Orion's binary format (bench/forms/gen_dense.c). Per
 * iteration: the sums and sums of squares of every column in one pass over the rows (the
 * row's D sums vectorize), the means and deviations, then every element scaled in place,
 * a row at a time (dividing, as the .orn program does: multiplying by 1 / deviation would
 * change the bits). Prints "bench: S s/iter sumsq X" (the sum of the squares of X after the
 * last iteration). */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: standardize_ref DATA ITERS\n");
        return 2;
    }
    int iters = atoi(argv[2]);
    size_t len;
    char *blk, *buf = bench_slurp_at(argv[1], &len, 80, &blk);
    uint32_t type, ndim;
    int64_t n, d;
    memcpy(&type, buf + 16, 4);
    memcpy(&ndim, buf + 20, 4);
    memcpy(&n, buf + 32, 8);
    memcpy(&d, buf + 40, 8);
    if (memcmp(buf, "ORNARR", 6) || type != 3 || ndim != 2 ||
        len != 80 + (size_t)(n * d) * sizeof(double)) {
        fprintf(stderr, "%s: not a dense 2-D f64 Orion array\n", argv[1]);
        return 1;
    }
    double *X = (double *)(buf + 80);
    double *mu = bench_xmalloc((size_t)d * sizeof *mu), *sq = bench_xmalloc((size_t)d * sizeof *sq),
           *sd = bench_xmalloc((size_t)d * sizeof *sd);
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        for (int64_t j = 0; j < d; j++) mu[j] = sq[j] = 0;
        for (int64_t i = 0; i < n; i++) {
            const double *x = X + i * d;
            for (int64_t j = 0; j < d; j++) {
                mu[j] += x[j];
                sq[j] += x[j] * x[j];
            }
        }
        for (int64_t j = 0; j < d; j++) {
            mu[j] /= (double)n;
            sd[j] = sqrt(sq[j] / (double)n - mu[j] * mu[j]);
        }
        for (int64_t i = 0; i < n; i++) {
            double *x = X + i * d;
            for (int64_t j = 0; j < d; j++) x[j] = (x[j] - mu[j]) / sd[j];
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    double s = 0;
    for (int64_t i = 0; i < n * d; i++) s += X[i] * X[i];
    printf("bench: %.6f s/iter  sumsq %.12e\n", total / iters, s);
    free(mu);
    free(sq);
    free(sd);
    free(blk);
    return 0;
}
