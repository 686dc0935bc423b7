/* softmax_ref.c: the plain-C baseline of bench/forms/softmax.orn -- multinomial logistic
 * regression by serial SGD on f32 points (Orion's binary array format), K x d f32 weights,
 * the scores in f64. The same arithmetic as the .orn loop at one rank: the f32 dot with 16
 * partials and their tree of adjacent pairs (orn_std_sdot_f32's order), exp/log in f64, each weight
 * += (float)-(s * x).
 *
 *   softmax_ref POINTS K ITERS [STEP]
 */
#include "../common/bench.h"

static const float *load_points(const char *path, int64_t *n, int64_t *d, char **keep)
{
    size_t len;
    char *blk, *buf = bench_slurp_at(path, &len, 80, &blk);
    uint32_t type, ndim;
    memcpy(&type, buf + 16, 4);
    memcpy(&ndim, buf + 20, 4);
    memcpy(n, buf + 32, 8);
    memcpy(d, buf + 40, 8);
    if (memcmp(buf, "ORNARR", 6) || type != 2 || ndim != 2 ||
        len != 80 + (size_t)(*n * *d) * sizeof(float)) {
        fprintf(stderr, "%s: not a dense 2-D f32 Orion array\n", path);
        exit(1);
    }
    *keep = blk;
    return (const float *)(buf + 80);
}

static float dot16(const float *restrict a, const float *restrict b, int64_t d)
{
    float acc[16] = {0};
    int64_t j = 0;
    for (; j + 16 <= d; j += 16)
        for (int l = 0; l < 16; l++) acc[l] += a[j + l] * b[j + l];
    for (; j < d; j++) acc[j % 16] += a[j] * b[j];
    /* adjacent pairs, level by level, written out: the compiler keeps them in registers */
    return (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) +
           (((acc[8] + acc[9]) + (acc[10] + acc[11])) +
            ((acc[12] + acc[13]) + (acc[14] + acc[15])));
}

/* z[k] = W[k, :] . x for the K classes; returns the largest. */
static double scores(const float *W, const float *x, int64_t K, int64_t d, double *z)
{
    double m = -1.0e300;
    for (int64_t k = 0; k < K; k++) {
        z[k] = dot16(W + k * d, x, d);
        m = z[k] > m ? z[k] : m;
    }
    return m;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: softmax_ref POINTS K ITERS [STEP]\n");
        return 2;
    }
    int64_t K = atoll(argv[2]);
    int iters = atoi(argv[3]);
    double step = argc > 4 ? atof(argv[4]) : 0.01;
    int64_t n, d;
    char *keep;
    const float *X = load_points(argv[1], &n, &d, &keep);
    if (K < 1 || K > d) {
        fprintf(stderr, "softmax_ref: K must be in 1..%lld\n", (long long)d);
        return 2;
    }
    int64_t *y = bench_xmalloc((size_t)n * sizeof *y);
    for (int64_t i = 0; i < n; i++) {
        const float *x = X + i * d;
        int64_t lab = 0;
        for (int64_t k = 1; k < K; k++)
            if (x[k] > x[lab]) lab = k;
        y[i] = lab;
    }
    float *W = calloc((size_t)(K * d), sizeof *W);
    double *z = bench_xmalloc((size_t)K * sizeof *z), total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        double loss = 0;
        for (int64_t i = 0; i < n; i++) {
            const float *x = X + i * d;
            double m = scores(W, x, K, d, z), tot = 0;
            for (int64_t k = 0; k < K; k++) {
                z[k] = exp(z[k] - m);
                tot += z[k];
            }
            loss += -log(z[y[i]] / tot);
            for (int64_t k = 0; k < K; k++) {
                double s = step * (z[k] / tot - (k == y[i] ? 1.0 : 0.0));
                float *w = W + k * d;
                for (int64_t j = 0; j < d; j++) w[j] += (float)-(s * x[j]);
            }
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  log-loss %.6f  %.3f s\n", it + 1, loss / (double)n, secs);
    }
    double final = 0; /* the final model's mean loss over the points */
    for (int64_t i = 0; i < n; i++) {
        const float *x = X + i * d;
        double m = scores(W, x, K, d, z), tot = 0;
        for (int64_t k = 0; k < K; k++) tot += exp(z[k] - m);
        final += -(z[y[i]] - m - log(tot));
    }
    printf("bench: %.6f s/iter  logloss %.9f\n", total / iters, final / (double)n);
    free(keep), free(y), free(W), free(z);
    return 0;
}
