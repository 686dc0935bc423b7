/* logreg_ref.c: hand-written serial C baseline of the dense logistic regression forms
 * (logreg_scalar, logreg_view: f64; logreg_f32 when built with -DREAL_F32;
 * bench/forms/run.sh).
 *
 *   logreg_ref DATA LABELS ITERS [STEP]
 *
 * DATA: a dense (N, D) array, LABELS a 1-D array of N labels in {0, 1}, both in Orion's
 * binary format (bench/forms/gen_dense.c), f64 (f32 with -DREAL_F32). Full-batch gradient
 * descent as the .orn forms: per iteration, for every sample the margin x . w, p =
 * sigmoid(margin), the log-loss term, and err * x added into the gradient; then w -= STEP
 * g / N. Rows are contiguous; the margin is a dot product with 8 (f64) or 16 (f32) partial
 * sums so that it vectorizes without -ffast-math, and the gradient update is a unit-stride
 * axpy. Prints "bench: S s/iter  logloss X" (mean log-loss of the last iteration). */
#include "../common/bench.h"

#ifdef REAL_F32
typedef float real;
#define LANES     16
#define TYPE_CODE 2
#define EXP       expf
#define LOG       logf
#else
typedef double real;
#define LANES     8
#define TYPE_CODE 3
#define EXP       exp
#define LOG       log
#endif

static const real *load_array(const char *path, int64_t *n, int64_t *d, char **keep)
{
    size_t len;
    char *blk, *buf = bench_slurp_at(path, &len, 80, &blk); /* the elements on a cache line */
    uint32_t type, ndim;
    memcpy(&type, buf + 16, 4);
    memcpy(&ndim, buf + 20, 4);
    memcpy(n, buf + 32, 8);
    memcpy(d, buf + 40, 8);
    if (ndim == 1) *d = 1;
    if (memcmp(buf, "ORNARR", 6) || type != TYPE_CODE ||
        len != 80 + (size_t)(*n * *d) * sizeof(real)) {
        fprintf(stderr, "%s: not a dense Orion array of the expected type and size\n", path);
        exit(1);
    }
    *keep = blk;
    return (const real *)(buf + 80);
}

static real dot(const real *restrict x, const real *restrict w, int64_t d)
{
    real acc[LANES] = {0};
    int64_t j = 0;
    for (; j + LANES <= d; j += LANES)
        for (int l = 0; l < LANES; l++) acc[l] += x[j + l] * w[j + l];
    for (; j < d; j++) acc[j % LANES] += x[j] * w[j];
    for (int s = LANES / 2; s > 0; s /= 2)
        for (int l = 0; l < s; l++) acc[l] += acc[l + s];
    return acc[0];
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: logreg_ref DATA LABELS ITERS [STEP]\n");
        return 2;
    }
    int iters = atoi(argv[3]);
    double step = argc > 4 ? atof(argv[4]) : 0.5;
    int64_t n, d, ny, one;
    char *bx, *by;
    const real *X = load_array(argv[1], &n, &d, &bx), *y = load_array(argv[2], &ny, &one, &by);
    if (ny != n) {
        fprintf(stderr, "logreg_ref: %lld labels for %lld samples\n", (long long)ny, (long long)n);
        return 1;
    }
    real *w = calloc((size_t)d, sizeof *w), *g = calloc((size_t)d, sizeof *g);
    double total = 0, loss = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        loss = 0;
        for (int64_t i = 0; i < n; i++) {
            const real *x = X + i * d;
            real p = 1 / (1 + EXP(-dot(x, w, d)));
            real label = y[i];
            loss += -(label * LOG(p + (real)1e-12) + (1 - label) * LOG(1 - p + (real)1e-12));
            real err = p - label;
            for (int64_t j = 0; j < d; j++) g[j] += err * x[j];
        }
        for (int64_t j = 0; j < d; j++) {
            w[j] -= (real)(step * g[j] / (double)n);
            g[j] = 0;
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  log-loss %.6f  %.3f s\n", it + 1, loss / (double)n, secs);
    }
    printf("bench: %.6f s/iter  logloss %.9f\n", total / iters, loss / (double)n);
    free(bx), free(by), free(w), free(g);
    return 0;
}
