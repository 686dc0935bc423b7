/* pagerank_ref.c: hand-written serial C baseline of the PageRank workload (bench/run.sh).
 *
 *   pagerank_ref GRAPH ITERS [DAMPING]
 *
 * GRAPH: "dst src weight" lines, weight = 1 / outdeg(src) (bench/pagerank/gen_graph.c).
 * The links are stored as CSR by destination (a pull formulation: no write conflicts, one
 * sequential pass over the edges, a gather from the rank vector), float ranks. Each
 * iteration forms contrib[s] = weight(s) * pr[s] once per node (pagerank.orn forms it in
 * its node loop, after pr changes), then next[d] = (1 - damping)/n + damping * sum of
 * contrib over d's in-links, summed in src order as the .orn loop does. Prints
 * "bench: S s/iter  n_sum_sq X" where X = n * sum(pr^2). */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: pagerank_ref GRAPH ITERS [DAMPING]\n");
        return 2;
    }
    int iters = atoi(argv[2]);
    double damping = argc > 3 ? atof(argv[3]) : 0.85;
    char *buf = bench_slurp(argv[1], NULL), *p = buf;
    size_t cap = 1 << 20, m = 0;
    int32_t *dst = bench_xmalloc(cap * 4), *src = bench_xmalloc(cap * 4);
    float *wt = bench_xmalloc(cap * 4);
    int32_t n = 0;
    while ((p = bench_line(p))) {
        char *e;
        long d = strtol(p, &e, 10), s = strtol(e, &e, 10);
        float w = strtof(e, &e);
        p = e;
        if (m == cap) {
            cap *= 2;
            dst = realloc(dst, cap * 4), src = realloc(src, cap * 4), wt = realloc(wt, cap * 4);
        }
        dst[m] = (int32_t)d, src[m] = (int32_t)s, wt[m++] = w;
        if (s >= n) n = (int32_t)s + 1;
        if (d >= n) n = (int32_t)d + 1;
    }
    free(buf);
    size_t *start = calloc((size_t)n + 1, sizeof *start);
    int32_t *col = bench_xmalloc(m * 4);
    float *inv = calloc((size_t)n, sizeof *inv);
    for (size_t e = 0; e < m; e++) start[dst[e] + 1]++, inv[src[e]] = wt[e];
    for (int32_t v = 0; v < n; v++) start[v + 1] += start[v];
    for (size_t e = 0; e < m; e++) col[start[dst[e]]++] = src[e]; /* stable: src order kept */
    for (int32_t v = n; v > 0; v--) start[v] = start[v - 1];
    start[0] = 0;
    free(dst), free(src), free(wt);
    float *pr = bench_xmalloc((size_t)n * 4), *contrib = bench_xmalloc((size_t)n * 4);
    for (int32_t v = 0; v < n; v++) pr[v] = (float)(1.0 / n);
    printf("pagerank_ref: %d nodes, %zu edges\n", n, m);
    double base = (1.0 - damping) / n, total = 0;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now(), change = 0;
        for (int32_t v = 0; v < n; v++) contrib[v] = inv[v] * pr[v];
        for (int32_t v = 0; v < n; v++) {
            float s = 0;
            for (size_t e = start[v]; e < start[v + 1]; e++) s += contrib[col[e]];
            float next = (float)(base + damping * s);
            change += fabs((double)next - pr[v]);
            pr[v] = next;
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  L1 change %.6e  %.3f s\n", it + 1, change, secs);
    }
    double sq = 0;
    for (int32_t v = 0; v < n; v++) sq += (double)pr[v] * pr[v];
    printf("bench: %.6f s/iter  n_sum_sq %.9f\n", total / iters, n * sq);
    return 0;
}
