/* lda_replay.c: the serial oracle of LDA (lda_trace.orn, examples/lda.orn's loops) for the
 * unordered-loop check.
 *
 *   lda_replay DOCWORD TRACE INIT_LINE SAMPLE_LINE LL_LINE TOPICS ITERS ALPHA BETA SEED OUTDIR
 *              [gpu]
 *
 * Reads the tokens as load_docword does (one element (doc, word, j) per occurrence, key
 * order) and replays every loop run of the trace one block after another, elements
 * [first, first + count) of the tokens in the block's box:
 *   - the random draws are the runtime's: orn_rt_rng_init(seed, the run's stream, the
 *     token's key), then randint/rand as the generated code draws them;
 *   - topic_delta (a buffer of topic_count) keeps one delta store per rank; at the end of
 *     each round the stores are applied in rank order, and until then the sampler of a
 *     rank reads topic_count as of the last flush plus that rank's own deltas since (the
 *     sampler reads topic_count replicated: each rank's copy takes its own updates at once,
 *     docs/language.md section 7; integer changes, so the copy's change at the flush is
 *     exactly the summed deltas); at one rank each update applies to topic_count at once;
 *   - the log-likelihood accumulator keeps one partial per block, summed in the order that
 *     block ran its tokens, and the partials are added in block order to the value before
 *     the loop (0.0): the runtime's reduction, so ll is compared bit for bit too.
 * With `gpu` (the GPU path of @gpu loops, docs/runtime.md section 16) a piece's updates of
 * topic_delta are made at the end of the piece, in the order its tokens made them: at one
 * rank its tokens read topic_count as of the piece's start.
 * The arithmetic is the generated code's (i32 counts, i64 totals, f64 scalars in source
 * order). Writes z.txt (the tokens' topics), doc_topic.txt, word_topic.txt,
 * topic_count.txt and ll.txt (one value per iteration) in save()'s text format into
 * OUTDIR, to be compared byte for byte with the program's. */
#include <math.h>

#include "replay.h"

typedef struct Token {
    int64_t d, w, j;
    int32_t z;
} Token;

typedef struct Lda {
    Replay r;
    Token *tok;
    int64_t ntok, ndocs, nwords;
    int64_t K;
    double alpha, beta, vbeta;
    uint64_t seed;
    int32_t *dt, *wt; /* doc_topic[t, d] at t * ndocs + d, word_topic[t, w] at t * nwords + w */
    int64_t *tc;      /* topic_count */
    int64_t *delta;   /* topic_delta: per rank, K each */
    unsigned char *touched;
    int64_t nranks;
    int direct; /* the current loop runs at one rank: topic_delta's updates apply at once */
    Token **sel;
    int gpu; /* updates wait for the end of their piece (pend: rank, topic, delta) */
    int64_t (*pend)[3];
    int64_t npend, cappend;
} Lda;

static int by_key(const void *a, const void *b)
{
    const Token *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    if (x->w != y->w) return x->w < y->w ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

static void load(Lda *L, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) replay_die(&L->r, "cannot open %s", path);
    size_t cap = 1024;
    char line[512];
    L->tok = malloc(cap * sizeof *L->tok);
    while (fgets(line, sizeof line, f)) {
        long long d, w, c;
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '#' || *s == '\n' || *s == '\r' || !*s) continue;
        if (sscanf(s, "%lld %lld %lld", &d, &w, &c) != 3 || d < 0 || w < 0 || c < 1)
            replay_die(&L->r, "%s: bad line: %s", path, line);
        for (long long j = 0; j < c; j++) {
            if ((size_t)L->ntok == cap) L->tok = realloc(L->tok, (cap *= 2) * sizeof *L->tok);
            L->tok[L->ntok++] = (Token){d, w, j, 0};
        }
        if (d + 1 > L->ndocs) L->ndocs = d + 1;
        if (w + 1 > L->nwords) L->nwords = w + 1;
    }
    fclose(f);
    qsort(L->tok, (size_t)L->ntok, sizeof *L->tok, by_key);
}

/* The tokens of entry e, in key order: sel[first .. first + count). */
static void select_block(Lda *L, const ReplayEntry *e)
{
    int64_t m = 0;
    for (int64_t x = 0; x < L->ntok; x++) {
        const Token *t = &L->tok[x];
        if (t->d >= e->lo[0] && t->d < e->hi[0] && t->w >= e->lo[1] && t->w < e->hi[1] &&
            t->j >= e->lo[2] && t->j < e->hi[2])
            L->sel[m++] = &L->tok[x];
    }
    if (e->first + e->count > m)
        replay_die(&L->r,
                   "block %" PRId64 " has %" PRId64 " tokens, the trace runs %" PRId64 "..%" PRId64,
                   e->block, m, e->first, e->first + e->count);
}

static void buffer_apply(Lda *L, int rank, int64_t t, int64_t d)
{
    if (L->direct) {
        L->tc[t] = (int64_t)((uint64_t)L->tc[t] + (uint64_t)d);
        return;
    }
    int64_t *p = &L->delta[rank * L->K + t];
    *p = (int64_t)((uint64_t)*p + (uint64_t)d);
    L->touched[rank * L->K + t] = 1;
}

static void buffer_add(Lda *L, int rank, int64_t t, int64_t d)
{
    if (!L->gpu) {
        buffer_apply(L, rank, t, d);
        return;
    }
    if (L->npend == L->cappend) {
        L->cappend = L->cappend ? 2 * L->cappend : 256;
        L->pend = realloc(L->pend, (size_t)L->cappend * sizeof *L->pend);
    }
    L->pend[L->npend][0] = rank;
    L->pend[L->npend][1] = t;
    L->pend[L->npend++][2] = d;
}

/* The end of a piece under `gpu`: its updates, in order. */
static void piece_end(Lda *L)
{
    for (int64_t i = 0; i < L->npend; i++)
        buffer_apply(L, (int)L->pend[i][0], L->pend[i][1], L->pend[i][2]);
    L->npend = 0;
}

/* End of a round: every rank's deltas, rank 0 first (integers: the order cannot matter,
 * but it is the runtime's). */
static void flush(Lda *L)
{
    for (int64_t q = 0; q < L->nranks; q++)
        for (int64_t t = 0; t < L->K; t++) {
            if (!L->touched[q * L->K + t]) continue;
            L->tc[t] = (int64_t)((uint64_t)L->tc[t] + (uint64_t)L->delta[q * L->K + t]);
            L->delta[q * L->K + t] = 0;
            L->touched[q * L->K + t] = 0;
        }
}

static void init_token(Lda *L, const ReplayLoop *l, int rank, Token *tk)
{
    OrnRtRng g;
    int64_t key[3] = {tk->d, tk->w, tk->j};
    orn_rt_rng_init(&g, L->seed, l->stream, key, 3);
    int64_t t = orn_rt_rng_int(&g, L->K);
    tk->z = (int32_t)t;
    L->dt[t * L->ndocs + tk->d] += 1;
    L->wt[t * L->nwords + tk->w] += 1;
    buffer_add(L, rank, t, 1);
}

/* One term of the sampling distribution, as the generated code computes it. */
static double weight(const Lda *L, const Token *tk, int64_t t, int64_t old, int rank)
{
    int64_t nt = L->tc[t];
    if (!L->direct) nt = (int64_t)((uint64_t)nt + (uint64_t)L->delta[rank * L->K + t]);
    if (t == old) nt = nt - 1;
    return ((L->dt[t * L->ndocs + tk->d] + L->alpha) * (L->wt[t * L->nwords + tk->w] + L->beta)) /
           ((double)nt + L->vbeta);
}

static void sample_token(Lda *L, const ReplayLoop *l, int rank, Token *tk)
{
    OrnRtRng g;
    int64_t key[3] = {tk->d, tk->w, tk->j};
    orn_rt_rng_init(&g, L->seed, l->stream, key, 3);
    int64_t old = tk->z;
    L->dt[old * L->ndocs + tk->d] -= 1;
    L->wt[old * L->nwords + tk->w] -= 1;
    buffer_add(L, rank, old, -1);
    double total = 0.0;
    for (int64_t t = 0; t < L->K; t++) total = total + weight(L, tk, t, old, rank);
    double u = orn_rt_rng_uniform(&g) * total;
    int64_t nt = L->K - 1;
    double acc = 0.0;
    for (int64_t t = 0; t < L->K; t++) {
        acc = acc + weight(L, tk, t, old, rank);
        if (acc > u) {
            nt = t;
            break;
        }
    }
    tk->z = (int32_t)nt;
    L->dt[nt * L->ndocs + tk->d] += 1;
    L->wt[nt * L->nwords + tk->w] += 1;
    buffer_add(L, rank, nt, 1);
}

/* The eight partial sums of a loop reduction (docs/language.md): element t goes to partial
 * t mod 8, combined as ((p0+p1)+(p2+p3))+((p4+p5)+(p6+p7)). */
static double lanes(const double *r)
{
    return ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
}

static double token_ll(const Lda *L, const Token *tk)
{
    double r[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t t = 0; t < L->K; t++) r[t & 7] += (double)L->dt[t * L->ndocs + tk->d];
    double nd = 0.0 + lanes(r);
    double q[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t t = 0; t < L->K; t++)
        q[t & 7] +=
            ((((L->dt[t * L->ndocs + tk->d] + L->alpha) / (nd + ((double)L->K * L->alpha))) *
              (L->wt[t * L->nwords + tk->w] + L->beta)) /
             ((double)L->tc[t] + L->vbeta));
    double p = 0.0 + lanes(q);
    return log(p);
}

enum { INIT, SAMPLE, LL };

/* Replay one loop run; returns the reduced log-likelihood for LL runs. */
static double run_loop(Lda *L, const ReplayLoop *l, int kind)
{
    double *part = calloc((size_t)(l->nblocks ? l->nblocks : 1), sizeof *part);
    unsigned char *used = calloc((size_t)(l->nblocks ? l->nblocks : 1), 1);
    L->direct = l->nranks == 1;
    if (l->nranks > L->nranks) {
        L->nranks = l->nranks;
        L->delta = realloc(L->delta, (size_t)(L->nranks * L->K) * sizeof *L->delta);
        L->touched = realloc(L->touched, (size_t)(L->nranks * L->K));
        memset(L->delta, 0, (size_t)(L->nranks * L->K) * sizeof *L->delta);
        memset(L->touched, 0, (size_t)(L->nranks * L->K));
    }
    for (int64_t k = 0; k < l->n; k++) {
        const ReplayEntry *e = &l->e[k];
        select_block(L, e);
        for (int64_t x = e->first; x < e->first + e->count; x++) {
            Token *tk = L->sel[x];
            if (kind == INIT)
                init_token(L, l, e->rank, tk);
            else if (kind == SAMPLE)
                sample_token(L, l, e->rank, tk);
            else
                part[e->block] = part[e->block] + token_ll(L, tk);
        }
        used[e->block] = 1;
        piece_end(L);
        if (replay_round_ends(l, k)) flush(L);
    }
    double ll = 0.0;
    for (int64_t b = 0; b < l->nblocks; b++)
        if (used[b]) ll = ll + part[b];
    free(part);
    free(used);
    return ll;
}

static void save_counts(const Lda *L, const char *dir, const char *name, const int32_t *a,
                        int64_t cols)
{
    FILE *f = replay_create(&L->r, dir, name);
    for (int64_t t = 0; t < L->K; t++)
        for (int64_t c = 0; c < cols; c++)
            fprintf(f, "%" PRId64 " %" PRId64 " %" PRId32 "\n", t, c, a[t * cols + c]);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 12 && !(argc == 13 && strcmp(argv[12], "gpu") == 0)) {
        fprintf(stderr, "usage: lda_replay DOCWORD TRACE INIT_LINE SAMPLE_LINE LL_LINE TOPICS "
                        "ITERS ALPHA BETA SEED OUTDIR [gpu]\n");
        return 2;
    }
    Lda L;
    memset(&L, 0, sizeof L);
    L.gpu = argc == 13;
    L.r.prog = "lda_replay";
    load(&L, argv[1]);
    int lines[3] = {atoi(argv[3]), atoi(argv[4]), atoi(argv[5])};
    L.K = atoll(argv[6]);
    int64_t iters = atoll(argv[7]);
    L.alpha = atof(argv[8]);
    L.beta = atof(argv[9]);
    L.seed = (uint64_t)atoll(argv[10]);
    const char *out = argv[11];
    L.vbeta = (double)L.nwords * L.beta;
    L.dt = calloc((size_t)(L.K * L.ndocs), sizeof *L.dt);
    L.wt = calloc((size_t)(L.K * L.nwords), sizeof *L.wt);
    L.tc = calloc((size_t)L.K, sizeof *L.tc);
    L.sel = malloc((size_t)(L.ntok ? L.ntok : 1) * sizeof *L.sel);
    double *lls = calloc((size_t)(iters ? iters : 1), sizeof *lls);

    replay_open(&L.r, "lda_replay", argv[2]);
    ReplayLoop l = {0};
    int64_t runs[3] = {0, 0, 0};
    while (replay_next(&L.r, 3, &l)) {
        int kind = l.line == lines[0]   ? INIT
                   : l.line == lines[1] ? SAMPLE
                   : l.line == lines[2] ? LL
                                        : -1;
        if (kind < 0) replay_die(&L.r, "a loop at line %d in the trace", l.line);
        /* the program runs init once, then (sample, ll) per iteration */
        int64_t want = kind == INIT ? 0 : 1 + 2 * runs[kind] + (kind == LL);
        if (runs[0] + runs[1] + runs[2] != want)
            replay_die(&L.r, "the loop at line %d runs out of order", l.line);
        double ll = run_loop(&L, &l, kind);
        if (kind == LL) lls[runs[2]] = ll;
        runs[kind]++;
    }
    free(l.e);
    replay_close(&L.r);
    if (runs[0] != 1 || runs[1] != iters || runs[2] != iters)
        replay_die(&L.r,
                   "the trace has %" PRId64 "/%" PRId64 "/%" PRId64
                   " runs of the loops, expected 1/%" PRId64 "/%" PRId64,
                   runs[0], runs[1], runs[2], iters, iters);

    FILE *f = replay_create(&L.r, out, "z.txt");
    for (int64_t x = 0; x < L.ntok; x++)
        fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId32 "\n", L.tok[x].d, L.tok[x].w,
                L.tok[x].j, L.tok[x].z);
    fclose(f);
    save_counts(&L, out, "doc_topic.txt", L.dt, L.ndocs);
    save_counts(&L, out, "word_topic.txt", L.wt, L.nwords);
    f = replay_create(&L.r, out, "topic_count.txt");
    for (int64_t t = 0; t < L.K; t++) fprintf(f, "%" PRId64 " %" PRId64 "\n", t, L.tc[t]);
    fclose(f);
    f = replay_create(&L.r, out, "ll.txt");
    for (int64_t i = 0; i < iters; i++) fprintf(f, "%" PRId64 " %.17g\n", i, lls[i]);
    fclose(f);
    printf("lda_replay: %" PRId64 " tokens, 1 + 2 x %" PRId64 " loop runs replayed\n", L.ntok,
           iters);
    free(lls);
    free(L.tok);
    free(L.sel);
    free(L.dt);
    free(L.wt);
    free(L.tc);
    free(L.delta);
    free(L.touched);
    free(L.pend);
    return 0;
}
