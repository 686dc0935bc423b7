/* gen_dense.c: dense data for the forms corpus (bench/forms/run.sh), in Orion's binary
 * array format (dsm/saveload.c: 80-byte header, then the values row-major), which
 * load(path, type = f32|f64, dims = 2) reads and the C baselines read directly.
 *
 *   gen_dense N D CLUSTERS SEED f32|f64 OUT [LABELS]
 *
 * N points in D dimensions drawn from CLUSTERS Gaussian blobs (centres uniform in
 * [-2, 2]^D, unit variance; the blob of a point chosen at random): k-means points, the
 * rows of a logistic regression, a matrix for the matrix-vector forms. With LABELS, also a
 * 1-D array of N labels in {0, 1} of the same type: 1 when x . w* + noise > 0 for a fixed
 * random w* (a separable-with-noise classification problem). Deterministic for a given
 * SEED (splitmix64, bench/common/bench.h). */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: gen_dense N D CLUSTERS SEED f32|f64 OUT [LABELS]\n");
        return 2;
    }
    int64_t n = atoll(argv[1]), d = atoll(argv[2]), k = atoll(argv[3]);
    bench_rng = (uint64_t)atoll(argv[4]);
    int f64 = strcmp(argv[5], "f64") == 0;
    if (n < 1 || d < 1 || k < 1 || (!f64 && strcmp(argv[5], "f32"))) {
        fprintf(stderr, "gen_dense: bad arguments\n");
        return 2;
    }
    size_t es = f64 ? 8 : 4;
    double *ctr = bench_xmalloc((size_t)(k * d) * 8), *wstar = bench_xmalloc((size_t)d * 8);
    for (int64_t i = 0; i < k * d; i++) ctr[i] = 4.0 * bench_uniform() - 2.0;
    for (int64_t j = 0; j < d; j++) wstar[j] = bench_gauss();
    char *x = bench_xmalloc((size_t)(n * d) * es), *y = bench_xmalloc((size_t)n * es);
    for (int64_t p = 0; p < n; p++) {
        int64_t c = (int64_t)(bench_next() % (uint64_t)k);
        double z = 0;
        for (int64_t j = 0; j < d; j++) {
            double v = ctr[c * d + j] + bench_gauss();
            if (f64)
                ((double *)x)[p * d + j] = v;
            else
                ((float *)x)[p * d + j] = (float)v, v = ((float *)x)[p * d + j];
            z += v * wstar[j];
        }
        double label = z + 2.0 * bench_gauss() > 0 ? 1.0 : 0.0;
        if (f64)
            ((double *)y)[p] = label;
        else
            ((float *)y)[p] = (float)label;
    }
    int rc = bench_write_array(argv[6], x, n, d, 2, f64 ? 3 : 2, es);
    if (!rc && argc == 8) rc = bench_write_array(argv[7], y, n, 1, 1, f64 ? 3 : 2, es);
    free(ctr), free(wstar), free(x), free(y);
    return rc;
}
