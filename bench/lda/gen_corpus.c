/* gen_corpus.c: a small synthetic corpus drawn from the LDA generative model, for the
 * QUICK smoke test of the lda workload (the full benchmark uses a real corpus,
 * bench/lda/fetch_corpus.sh).
 *
 *   gen_corpus DOCS WORDS TOPICS TOKENS_PER_DOC SEED OUT
 *
 * Each topic puts its mass on its own WORDS/TOPICS-word band plus a little everywhere;
 * each document mixes two topics. Writes "doc word count" lines (load_docword's format),
 * sorted by doc then word. */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: gen_corpus DOCS WORDS TOPICS TOKENS_PER_DOC SEED OUT\n");
        return 2;
    }
    int nd = atoi(argv[1]), nw = atoi(argv[2]), nt = atoi(argv[3]), len = atoi(argv[4]);
    bench_rng = (uint64_t)atoll(argv[5]);
    if (nd < 1 || nw < nt || nt < 1 || len < 1) return 2;
    FILE *f = fopen(argv[6], "w");
    if (!f) {
        perror(argv[6]);
        return 1;
    }
    int *count = calloc((size_t)nw, sizeof *count), band = nw / nt;
    for (int d = 0; d < nd; d++) {
        int t1 = (int)(bench_next() % (uint64_t)nt), t2 = (int)(bench_next() % (uint64_t)nt);
        for (int x = 0; x < len; x++) {
            int t = bench_uniform() < 0.7 ? t1 : t2, w;
            if (bench_uniform() < 0.1)
                w = (int)(bench_next() % (uint64_t)nw);
            else
                w = t * band + (int)(bench_next() % (uint64_t)band);
            count[w]++;
        }
        for (int w = 0; w < nw; w++)
            if (count[w]) fprintf(f, "%d %d %d\n", d, w, count[w]), count[w] = 0;
    }
    return fclose(f) ? 1 : 0;
}
