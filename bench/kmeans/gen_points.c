/* gen_points.c: dense points for the k-means workload, in Orion's binary array format.
 *
 *   gen_points N DIMS CLUSTERS SEED OUT
 *
 * N points in DIMS dimensions (f32), drawn from CLUSTERS Gaussian blobs (centres uniform in
 * [-10, 10]^DIMS, unit variance), the blob of point p chosen at random. OUT is a dense 2-D
 * f32 array (N, DIMS) in the format save() writes and load(path, type = f32, dims = 2)
 * reads (dsm/saveload.c: 80-byte header, then the values row-major); the C baseline reads
 * the same file. Deterministic for a given SEED. */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: gen_points N DIMS CLUSTERS SEED OUT\n");
        return 2;
    }
    int64_t n = atoll(argv[1]), d = atoll(argv[2]), k = atoll(argv[3]);
    bench_rng = (uint64_t)atoll(argv[4]);
    if (n < 1 || d < 1 || k < 1) return 2;
    float *ctr = bench_xmalloc((size_t)(k * d) * 4), *x = bench_xmalloc((size_t)(n * d) * 4);
    for (int64_t i = 0; i < k * d; i++) ctr[i] = (float)(20.0 * bench_uniform() - 10.0);
    for (int64_t p = 0; p < n; p++) {
        int64_t c = (int64_t)(bench_next() % (uint64_t)k);
        for (int64_t j = 0; j < d; j++) x[p * d + j] = ctr[c * d + j] + (float)bench_gauss();
    }
    if (bench_write_array(argv[5], x, n, d, 2, 2, 4)) return 1;
    return 0;
}
