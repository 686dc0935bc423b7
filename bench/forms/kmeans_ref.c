/* kmeans_ref.c: hand-written serial C baseline of the f64 k-means forms (kmeans_buf,
 * kmeans_view; bench/forms/run.sh).
 *
 *   kmeans_ref POINTS K ITERS
 *
 * POINTS: a dense f64 (N, D) array in Orion's binary format (bench/forms/gen_dense.c).
 * Lloyd's algorithm as the .orn forms: initial centroids are the first K points; each
 * iteration assigns every point to its nearest centroid (squared distance, the first of
 * equal distances wins), sums each cluster's points and counts them, then divides. As
 * bench/kmeans/kmeans_ref.c (the f32 workload's baseline), the centroids are kept
 * transposed (D x K, in L1) so that the distances of one point to all K centroids are
 * computed together with the loop over centroids innermost, which vectorizes. Prints
 * "bench: S s/iter  sse X" (the sum of squared distances of the last assignment). */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: kmeans_ref POINTS K ITERS\n");
        return 2;
    }
    int k = atoi(argv[2]), iters = atoi(argv[3]);
    size_t len;
    char *buf = bench_slurp(argv[1], &len);
    int64_t n, d;
    uint32_t type;
    memcpy(&type, buf + 16, 4);
    memcpy(&n, buf + 32, 8);
    memcpy(&d, buf + 40, 8);
    if (type != 3 || len != 80 + (size_t)(n * d) * 8 || memcmp(buf, "ORNARR", 6) || k > n) {
        fprintf(stderr, "%s: not a dense f64 Orion array of the expected size\n", argv[1]);
        return 1;
    }
    const double *X = (const double *)(buf + 80);
    double *CT = bench_xmalloc((size_t)(k * d) * 8), *dd = bench_xmalloc((size_t)k * 8);
    double *S = bench_xmalloc((size_t)(k * d) * 8), *cnt = bench_xmalloc((size_t)k * 8);
    int32_t *assign = bench_xmalloc((size_t)n * 4);
    for (int c = 0; c < k; c++)
        for (int64_t j = 0; j < d; j++) CT[j * k + c] = X[c * d + j];
    double total = 0, sse = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        memset(S, 0, (size_t)(k * d) * 8);
        memset(cnt, 0, (size_t)k * 8);
        sse = 0;
        for (int64_t p = 0; p < n; p++) {
            const double *x = X + p * d;
            for (int c = 0; c < k; c++) dd[c] = 0;
            for (int64_t j = 0; j < d; j++) {
                const double *y = CT + j * k;
                double xj = x[j];
                for (int c = 0; c < k; c++) {
                    double t = xj - y[c];
                    dd[c] += t * t;
                }
            }
            double best = 1e30;
            int bc = 0;
            for (int c = 0; c < k; c++)
                if (dd[c] < best) best = dd[c], bc = c;
            assign[p] = bc;
            sse += best;
            double *s = S + bc * d;
            for (int64_t j = 0; j < d; j++) s[j] += x[j];
            cnt[bc] += 1.0;
        }
        for (int c = 0; c < k; c++)
            if (cnt[c] > 0)
                for (int64_t j = 0; j < d; j++) CT[j * k + c] = S[c * d + j] / cnt[c];
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  sse %.6e  %.3f s\n", it + 1, sse, secs);
    }
    printf("bench: %.6f s/iter  sse %.9e\n", total / iters, sse);
    free(buf), free(CT), free(dd), free(S), free(cnt), free(assign);
    return 0;
}
