/* gen_graph.c: a synthetic power-law directed graph for the PageRank workload.
 *
 *   gen_graph NODES AVG_OUTDEG SEED OUT
 *
 * Node s gets 1 + uniform{0..2 AVG_OUTDEG - 2} distinct out-links (never to itself), so
 * every node has an out-link and there are no dangling nodes. Each link goes, with
 * probability 1/2, to a uniformly random node, else to the target of a uniformly random
 * earlier link (the copying model of Kleinberg et al. 1999: preferential attachment), which
 * gives a power-law in-degree distribution. Writes "dst src weight" lines, 0-based, weight
 * = 1 / outdeg(src), sorted by dst then src: the input of load_triplets. Deterministic for
 * a given SEED (splitmix64). */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: gen_graph NODES AVG_OUTDEG SEED OUT\n");
        return 2;
    }
    int64_t n = atoll(argv[1]), deg = atoll(argv[2]);
    bench_rng = (uint64_t)atoll(argv[3]);
    if (n < 2 || deg < 1 || deg * 2 > n) {
        fprintf(stderr, "gen_graph: bad sizes\n");
        return 2;
    }
    size_t cap = (size_t)(n * deg * 2 + 16), m = 0;
    int32_t *src = bench_xmalloc(cap * sizeof *src), *dst = bench_xmalloc(cap * sizeof *dst);
    int32_t *outdeg = bench_xmalloc((size_t)n * sizeof *outdeg);
    for (int64_t s = 0; s < n; s++) {
        int64_t d = 1 + (int64_t)(bench_next() % (uint64_t)(2 * deg - 1));
        size_t first = m;
        while ((int64_t)(m - first) < d) {
            int32_t t;
            if (m == 0 || (bench_next() & 1))
                t = (int32_t)(bench_next() % (uint64_t)n);
            else
                t = dst[bench_next() % m];
            if (t == s) continue;
            int dup = 0;
            for (size_t x = first; x < m; x++) dup |= dst[x] == t;
            if (dup) continue;
            src[m] = (int32_t)s;
            dst[m++] = t;
        }
        outdeg[s] = (int32_t)d;
    }
    /* counting sort by dst; stable, so src stays ascending within a dst */
    size_t *start = calloc((size_t)n + 1, sizeof *start);
    for (size_t e = 0; e < m; e++) start[dst[e] + 1]++;
    for (int64_t v = 0; v < n; v++) start[v + 1] += start[v];
    int32_t *col = bench_xmalloc(m * sizeof *col);
    for (size_t e = 0; e < m; e++) col[start[dst[e]]++] = src[e];
    FILE *f = fopen(argv[4], "w");
    if (!f) {
        perror(argv[4]);
        return 1;
    }
    size_t e = 0;
    for (int64_t v = 0; v < n; v++)
        for (; e < start[v]; e++) fprintf(f, "%d %d %.9g\n", (int)v, col[e], 1.0 / outdeg[col[e]]);
    if (fclose(f)) {
        perror(argv[4]);
        return 1;
    }
    fprintf(stderr, "gen_graph: %lld nodes, %zu edges\n", (long long)n, m);
    return 0;
}
