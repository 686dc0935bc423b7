/* reduce_ref.c: hand-written serial C baseline of the one-pass reduction forms (histogram,
 * stats_acc; bench/forms/run.sh).
 *
 *   reduce_ref histogram N BINS ITERS
 *   reduce_ref stats N ITERS
 *
 * The values are the .orn programs', v[i] = ((i * 7919) mod 10007) / 10007, in an array.
 * histogram: counts of floor(v * BINS) (int64), cleared and recounted ITERS times; prints
 * the sum of squared counts. stats: sum, sum of squares, min and max in one pass, each in 8
 * lanes so that the pass vectorizes without -ffast-math, ITERS times; prints variance +
 * max - min. "bench: S s/iter  NAME X" as the .orn forms. */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    int hist = argc == 5 && !strcmp(argv[1], "histogram");
    if (!hist && !(argc == 4 && !strcmp(argv[1], "stats"))) {
        fprintf(stderr, "usage: reduce_ref histogram N BINS ITERS | reduce_ref stats N ITERS\n");
        return 2;
    }
    int64_t n = atoll(argv[2]), bins = hist ? atoll(argv[3]) : 0;
    int iters = atoi(argv[hist ? 4 : 3]);
    double *v = bench_xmalloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) v[i] = (double)(i * 7919 % 10007) / 10007.0;
    int64_t *h = bench_xmalloc((size_t)(bins ? bins : 1) * 8);
    double total = 0, figure = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        if (hist) {
            memset(h, 0, (size_t)bins * 8);
            for (int64_t i = 0; i < n; i++) h[(int64_t)(v[i] * (double)bins)]++;
        } else {
            double s[8] = {0}, sq[8] = {0}, lo[8], hi[8];
            for (int l = 0; l < 8; l++) lo[l] = 1e30, hi[l] = -1e30;
            int64_t i = 0;
            for (; i + 8 <= n; i += 8)
#pragma omp simd /* lanes across l: gcc otherwise vectorizes across i, 2x slower */
                for (int l = 0; l < 8; l++) {
                    double x = v[i + l];
                    s[l] += x, sq[l] += x * x;
                    lo[l] = x < lo[l] ? x : lo[l], hi[l] = x > hi[l] ? x : hi[l];
                }
            for (; i < n; i++) {
                double x = v[i];
                s[i % 8] += x, sq[i % 8] += x * x;
                lo[i % 8] = x < lo[i % 8] ? x : lo[i % 8],
                       hi[i % 8] = x > hi[i % 8] ? x : hi[i % 8];
            }
            for (int l = 1; l < 8; l++) {
                s[0] += s[l], sq[0] += sq[l];
                lo[0] = lo[l] < lo[0] ? lo[l] : lo[0], hi[0] = hi[l] > hi[0] ? hi[l] : hi[0];
            }
            double mean = s[0] / (double)n;
            figure = sq[0] / (double)n - mean * mean + hi[0] - lo[0];
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    if (hist) {
        figure = 0;
        for (int64_t b = 0; b < bins; b++) figure += (double)h[b] * (double)h[b];
        printf("bench: %.6f s/iter  sumsq %.1f\n", total / iters, figure);
    } else {
        printf("bench: %.6f s/iter  stats %.12e\n", total / iters, figure);
    }
    free(v), free(h);
    return 0;
}
