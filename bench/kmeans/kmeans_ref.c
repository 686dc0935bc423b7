/* kmeans_ref.c: hand-written serial C baseline of the k-means workload (bench/run.sh).
 *
 *   kmeans_ref POINTS K ITERS
 *
 * POINTS: a dense f32 (N, D) array in Orion's binary format (bench/kmeans/gen_points.c).
 * Lloyd's algorithm as bench/kmeans/kmeans.orn: initial centroids are the first K points;
 * each iteration assigns every point to the nearest centroid (squared distance, float, the
 * first of equal distances wins) and sums each cluster's points in double, then divides.
 * The point loop is one sequential pass. The centroids are kept transposed (D x K floats,
 * padded to whole vectors, in L1) so that the distances of one point to a vector of
 * centroids (8 doubles or 16 floats: one 512-bit register) are computed together, the loop
 * over the vector innermost: it vectorizes, and the partial sums stay in registers. Each
 * distance is summed as the .orn program's loop reduction defines it (docs/language.md
 * section 13): dimension j into partial j mod L (L = 8, or 16 in float), the partials
 * combined as a balanced tree -- L independent chains of adds, where one sum in order
 * would wait on each add. Prints
 * "bench: S s/iter  sse X" (the sum of squared distances of the last assignment).
 *
 * Built with -DKMEANS_F64 it is the baseline of the f64 forms of bench/forms (kmeans_buf,
 * kmeans_view: points from bench/forms/gen_dense.c): the same algorithm in double. */
#include "../common/bench.h"

#ifdef KMEANS_F64
typedef double real;
#define REAL_NAME "f64"
#define LANES     8
#else
typedef float real;
#define REAL_NAME "f32"
#define LANES     16
#endif
#define VEC LANES /* centroids per vector */

/* The loop reduction's tree of partials p[0..LANES) (one eight-tree, or two, the first
 * eight's first). */
static inline real tree8(const real *p)
{
    return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: kmeans_ref POINTS K ITERS\n");
        return 2;
    }
    int k = atoi(argv[2]), iters = atoi(argv[3]);
    size_t len;
    char *blk, *buf = bench_slurp_at(argv[1], &len, 80, &blk); /* the elements on a cache line */
    int64_t n, d;
    memcpy(&n, buf + 32, 8);
    memcpy(&d, buf + 40, 8);
    if (len != 80 + (size_t)(n * d) * sizeof(real) || memcmp(buf, "ORNARR", 6) || k > n) {
        fprintf(stderr, "%s: not a dense " REAL_NAME " Orion array of the expected size\n",
                argv[1]);
        return 1;
    }
    const real *X = (const real *)(buf + 80);
    int kp = (k + VEC - 1) / VEC * VEC; /* CT's row: K centroids padded to whole vectors */
    real *CT = bench_xmalloc((size_t)(kp * d) * sizeof(real)),
         *dd = bench_xmalloc((size_t)kp * sizeof(real));
    memset(CT, 0, (size_t)(kp * d) * sizeof(real));
    double *S = bench_xmalloc((size_t)(k * (d + 1)) * 8);
    int32_t *assign = bench_xmalloc((size_t)n * 4);
    for (int c = 0; c < k; c++)
        for (int64_t j = 0; j < d; j++) CT[j * kp + c] = X[c * d + j];
    printf("kmeans_ref: %lld points, %lld dims, k %d\n", (long long)n, (long long)d, k);
    double total = 0, sse = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        memset(S, 0, (size_t)(k * (d + 1)) * 8);
        sse = 0;
        for (int64_t p = 0; p < n; p++) {
            const real *x = X + p * d;
            for (int c0 = 0; c0 < kp; c0 += VEC) {
                real part[LANES][VEC] = {{0}};
                for (int64_t j = 0; j < d; j++) {
                    const real *y = CT + j * kp + c0;
                    real xj = x[j], *pj = part[j % LANES];
                    for (int c = 0; c < VEC; c++) {
                        real t = xj - y[c];
                        pj[c] += t * t;
                    }
                }
                for (int c = 0; c < VEC; c++) {
                    real q[LANES];
                    for (int l = 0; l < LANES; l++) q[l] = part[l][c];
#if LANES == 8
                    dd[c0 + c] = tree8(q);
#else
                    dd[c0 + c] = tree8(q) + tree8(q + 8);
#endif
                }
            }
            real best = (real)1e30;
            int bc = 0;
            for (int c = 0; c < k; c++)
                if (dd[c] < best) best = dd[c], bc = c;
            assign[p] = bc;
            sse += best;
            double *s = S + bc * (d + 1);
            for (int64_t j = 0; j < d; j++) s[j] += x[j];
            s[d] += 1.0;
        }
        for (int c = 0; c < k; c++)
            if (S[c * (d + 1) + d] > 0)
                for (int64_t j = 0; j < d; j++)
                    CT[j * kp + c] = (real)(S[c * (d + 1) + j] / S[c * (d + 1) + d]);
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  sse %.6e  %.3f s\n", it + 1, sse, secs);
    }
    printf("bench: %.6f s/iter  sse %.9e\n", total / iters, sse);
    free(blk), free(CT), free(dd), free(S), free(assign);
    return 0;
}
