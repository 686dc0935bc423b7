/* lda_ref.c: hand-written serial C baseline of the LDA workload (bench/run.sh).
 *
 *   lda_ref DOCWORD TOPICS ITERS [ALPHA BETA SEED]
 *
 * Collapsed Gibbs sampling as bench/lda/lda.orn (examples/lda.orn): per token, remove it
 * from the counts, draw a topic with probability proportional to
 * (n_dt + alpha)(n_wt + beta)/(n_t + V beta) in double, add it back. Written as one does
 * by hand: tokens stored in document order, the counts of one document and of one word
 * each a contiguous row of TOPICS int32 (n_dt, n_wt), exact topic totals, one pass that
 * fills the cumulative weights and a linear search in them (the .orn program makes two
 * passes). Initial topics uniformly random. Prints "bench: S s/iter  ll_per_token X", X the
 * per-token log-likelihood log p(w | d) under the final counts, computed as in lda.orn. */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: lda_ref DOCWORD TOPICS ITERS [ALPHA BETA SEED]\n");
        return 2;
    }
    int K = atoi(argv[2]), iters = atoi(argv[3]);
    double alpha = argc > 4 ? atof(argv[4]) : 0.1, beta = argc > 5 ? atof(argv[5]) : 0.01;
    bench_rng = argc > 6 ? (uint64_t)atoll(argv[6]) : 7;
    char *buf = bench_slurp(argv[1], NULL), *p = buf;
    size_t cap = 1 << 20, n = 0;
    int32_t *tdoc = bench_xmalloc(cap * 4), *tword = bench_xmalloc(cap * 4);
    int nd = 0, nw = 0;
    while ((p = bench_line(p))) {
        char *e;
        long d = strtol(p, &e, 10), w = strtol(e, &e, 10), c = strtol(e, &e, 10);
        p = e;
        for (long x = 0; x < c; x++) {
            if (n == cap) cap *= 2, tdoc = realloc(tdoc, cap * 4), tword = realloc(tword, cap * 4);
            tdoc[n] = (int32_t)d, tword[n++] = (int32_t)w;
        }
        if (d >= nd) nd = (int)d + 1;
        if (w >= nw) nw = (int)w + 1;
    }
    free(buf);
    int32_t *z = bench_xmalloc(n * 4);
    int32_t *ndt = calloc((size_t)nd * (size_t)K, 4), *nwt = calloc((size_t)nw * (size_t)K, 4);
    int64_t *nt = calloc((size_t)K, 8);
    double *cum = bench_xmalloc((size_t)K * 8), vbeta = nw * beta;
    for (size_t x = 0; x < n; x++) {
        int t = (int)(bench_next() % (uint64_t)K);
        z[x] = t, ndt[(size_t)tdoc[x] * K + t]++, nwt[(size_t)tword[x] * K + t]++, nt[t]++;
    }
    printf("lda_ref: %d docs, %d words, %zu tokens, %d topics\n", nd, nw, n, K);
    double total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        for (size_t x = 0; x < n; x++) {
            int32_t *dt = ndt + (size_t)tdoc[x] * K, *wt = nwt + (size_t)tword[x] * K;
            int old = z[x];
            dt[old]--, wt[old]--, nt[old]--;
            double acc = 0;
            for (int t = 0; t < K; t++) {
                acc += (dt[t] + alpha) * (wt[t] + beta) / (nt[t] + vbeta);
                cum[t] = acc;
            }
            double u = bench_uniform() * acc;
            int t = 0;
            while (t < K - 1 && cum[t] <= u) t++;
            z[x] = t, dt[t]++, wt[t]++, nt[t]++;
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s  %.3g tokens/s\n", it + 1, secs, n / secs);
    }
    double ll = 0;
    for (size_t x = 0; x < n; x++) {
        int32_t *dt = ndt + (size_t)tdoc[x] * K, *wt = nwt + (size_t)tword[x] * K;
        double sd = 0, pr = 0;
        for (int t = 0; t < K; t++) sd += dt[t];
        for (int t = 0; t < K; t++)
            pr += (dt[t] + alpha) / (sd + K * alpha) * (wt[t] + beta) / (nt[t] + vbeta);
        ll += log(pr);
    }
    printf("bench: %.6f s/iter  ll_per_token %.6f\n", total / iters, ll / (double)n);
    return 0;
}
