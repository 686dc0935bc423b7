/* slr_replay.c: the serial oracle of sparse logistic regression (slr_trace.orn,
 * examples/slr.orn's loops) for the unordered-loop check.
 *
 *   slr_replay TRAIN TEST TRACE TRAIN_LINE TEST_LINE EPOCHS STEP LAM OUTDIR
 *              [gpu | dense=L,... | stale] [adaptive]
 *
 * Reads both libsvm files as load_libsvm does (sample n = the n-th data line, feature
 * idx in column idx - 1, f32 values and labels) and replays every loop run of the trace
 * one piece after another: samples [lo + first, lo + first + count) of the piece's block.
 *   - dw (a buffer of w, flushed every `flush` samples per rank) keeps one f32 delta store
 *     per rank, each delta added in the order the rank made it; at the end of each round
 *     the stores are applied to w rank 0 first (w[f] += the rank's sum, in f32), and until
 *     then every read of w sees it as of the last flush -- the staleness the contract
 *     allows, reproduced exactly -- except that each rank reads its own copy of w, which
 *     takes its own updates at once (w is small: every rank has a copy) and is reset to w
 *     at every flush; at one rank each update applies to w at once (docs/language.md);
 *   - the accumulators (loss, f64; correct, i64) keep one partial per block, summed in
 *     the order the block ran its samples, added in block order to the value before the
 *     loop: the runtime's reduction, so they are compared bit for bit too.
 * With `gpu` (the GPU path of @gpu loops, docs/runtime.md section 16) a piece's updates of
 * dw are made at the end of the piece, in the order its samples made them: until then its
 * samples read w (or the rank's copy) as of the piece's start.
 * With stale the buffer's target has no copy on the ranks (SLR with ORN_REPLICATE_MAX=0: w
 * prefetched per round): every read of w sees it as of the last flush, a rank's own updates
 * included, and each rank's deltas, summed per feature in f32 in the order it made them,
 * are added at the flush in rank order.
 * With adaptive the program's buffer has no flush_every (the adaptive interval, runtime/exec.c
 * adapt_interval): after each round that every rank ran whole, the share of the elements
 * changed that two or more ranks changed (a change: a copy's element minus w's, in f32, other
 * than +0) halves the interval above 3/8 (floor 64), doubles it below 3/16; a round above 3/8
 * run at the floor makes the next flushes average: each change divided by the number of
 * ranks that changed that element, until a round below 3/16. The interval starts at 64 and
 * carries over from one loop run to the next. Only the rounds, not their lengths, come from
 * the trace: the rule is replayed to know which flushes average.
 * With dense=L,... the loops are dlr_trace.orn's, over dense rows: the runs of the loops at
 * lines L (its copies of the samples into dense rows) are left out, and a margin is the
 * generated code's reduction of a scalar loop over a whole row -- feature f into partial sum
 * f mod 16, the partials added as a tree (orn_std_lanes_f32) -- where a zero feature adds
 * +-0 to its partial. With LAM = 0 the weight updates are the sparse ones (a zero feature's
 * update is +-0, which changes no weight).
 * The arithmetic is the generated code's: x * w[f] is an f32 product, everything else f64
 * in source order, the delta rounded to f32. Writes w.txt, loss.txt and correct.txt (one
 * value per epoch) in save()'s text format into OUTDIR, to be compared byte for byte with
 * the program's. */
#include <math.h>

#include "replay.h"

typedef struct Data {
    int64_t n, nf;      /* samples, features (largest idx) */
    int64_t *rowptr;    /* n + 1 */
    int64_t *col;       /* 0-based feature of each non-zero */
    float *val, *label; /* non-zeros; labels */
} Data;

static void load(const Replay *r, const char *path, Data *D)
{
    FILE *f = fopen(path, "r");
    if (!f) replay_die(r, "cannot open %s", path);
    size_t cap = 256, rcap = 64;
    char line[4096];
    memset(D, 0, sizeof *D);
    D->col = malloc(cap * sizeof *D->col);
    D->val = malloc(cap * sizeof *D->val);
    D->label = malloc(rcap * sizeof *D->label);
    D->rowptr = malloc((rcap + 1) * sizeof *D->rowptr);
    D->rowptr[0] = 0;
    int64_t nnz = 0;
    while (fgets(line, sizeof line, f)) {
        char *s = line, *end;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '#' || *s == '\n' || *s == '\r' || !*s) continue;
        if ((size_t)D->n == rcap) {
            rcap *= 2;
            D->label = realloc(D->label, rcap * sizeof *D->label);
            D->rowptr = realloc(D->rowptr, (rcap + 1) * sizeof *D->rowptr);
        }
        D->label[D->n] = strtof(s, &end);
        if (end == s) replay_die(r, "%s: bad label: %s", path, line);
        s = end;
        for (;;) {
            while (*s == ' ' || *s == '\t') s++;
            if (*s == '\n' || *s == '\r' || !*s) break;
            long long idx = strtoll(s, &end, 10);
            if (end == s || *end != ':' || idx < 1) replay_die(r, "%s: bad feature: %s", path, s);
            s = end + 1;
            float v = strtof(s, &end);
            if (end == s) replay_die(r, "%s: bad value: %s", path, s);
            s = end;
            if ((size_t)nnz == cap) {
                cap *= 2;
                D->col = realloc(D->col, cap * sizeof *D->col);
                D->val = realloc(D->val, cap * sizeof *D->val);
            }
            D->col[nnz] = idx - 1;
            D->val[nnz++] = v;
            if (idx > D->nf) D->nf = idx;
        }
        D->rowptr[++D->n] = nnz;
    }
    fclose(f);
}

static void data_free(Data *D)
{
    free(D->rowptr);
    free(D->col);
    free(D->val);
    free(D->label);
}

typedef struct Slr {
    Replay r;
    Data tr, te;
    int64_t nf;
    double step, lam;
    float *w;
    float *delta; /* dw: per rank, nf each */
    unsigned char *touched;
    int64_t nranks;
    int direct;       /* the current loop runs at one rank: dw's updates apply at once */
    float *copy;      /* several ranks: each rank's copy of w (nranks * nf), which takes its own
                         updates at once and is reset to w at every flush */
    int gpu;          /* updates wait for the end of their piece (pend, npend) */
    int dense;        /* dlr_trace.orn's margins over dense rows (dense=) */
    int stale;        /* no copies: reads see w as of the last flush (stale) */
    int adaptive;     /* the adaptive interval's rule (adaptive) */
    int64_t interval; /* its iterations per rank, 64 at first */
    int averaging;    /* the flushes average what several ranks changed */
    int64_t changed, shared; /* the last flush's counts */
    struct {
        int rank;
        int64_t f;
        float d;
    } * pend;
    int64_t npend, cappend;
} Slr;

/* z = sum over the row of x * w[f], in f32: `z = 0.0` then `z += x * w[f]` with x and w[f]
 * f32 makes z f32 (docs/language.md, "Float inference"). */
static float margin_sparse(const float *w, const Data *D, int64_t n)
{
    float z = 0.0f;
    for (int64_t k = D->rowptr[n]; k < D->rowptr[n + 1]; k++) z = z + D->val[k] * w[D->col[k]];
    return z;
}

/* ... over the dense row (nf features, the zeros included): sixteen partials, a tree. */
static float margin_dense(const float *w, const Data *D, int64_t n, int64_t nf)
{
    float s[16] = {0};
    int64_t k = D->rowptr[n];
    for (int64_t f = 0; f < nf; f++) {
        float x = k < D->rowptr[n + 1] && D->col[k] == f ? D->val[k++] : 0.0f;
        s[f & 15] += x * w[f];
    }
    float t = (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
              (((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])));
    return 0.0f + t;
}

static float margin(const Slr *S, const float *w, const Data *D, int64_t n)
{
    return S->dense ? margin_dense(w, D, n, S->nf) : margin_sparse(w, D, n);
}

/* Update f of dw by d as rank makes it: into what the rank reads, and its delta store. */
static void update(Slr *S, int rank, int64_t f, float d)
{
    float *wr = S->direct ? S->w : S->copy + rank * S->nf;
    if (S->direct || !S->stale) wr[f] += d;
    if (S->direct) return;
    S->delta[rank * S->nf + f] += d;
    S->touched[rank * S->nf + f] = 1;
}

/* The end of a piece under `gpu`: its updates, in order. */
static void piece_end(Slr *S)
{
    for (int64_t i = 0; i < S->npend; i++) update(S, S->pend[i].rank, S->pend[i].f, S->pend[i].d);
    S->npend = 0;
}

/* One training sample; returns its loss term. */
static double train_sample(Slr *S, int rank, int64_t n)
{
    const Data *D = &S->tr;
    float *wr = S->direct ? S->w : S->copy + rank * S->nf; /* what this rank reads */
    float z = margin(S, wr, D, n);
    float p = 1.0f / (1.0f + expf(-z)); /* sigmoid of an f32 is f32 */
    double target = 0.0;                /* only ever assigned weak values: f64 */
    if (D->label[n] > 0) target = 1.0;
    /* p + 1e-12 and 1.0 - p are f32 (weak literals), their logs too */
    double loss = -((target * logf(p + (float)1e-12)) +
                    ((1.0 - target) * logf(((float)1.0 - p) + (float)1e-12)));
    double g = p - target;
    for (int64_t k = D->rowptr[n]; k < D->rowptr[n + 1]; k++) {
        int64_t f = D->col[k];
        double r = S->step * ((g * D->val[k]) + (S->lam * wr[f]));
        if (!S->gpu) {
            update(S, rank, f, (float)(-r));
            continue;
        }
        if (S->npend == S->cappend) {
            S->cappend = S->cappend ? 2 * S->cappend : 256;
            S->pend = realloc(S->pend, (size_t)S->cappend * sizeof *S->pend);
        }
        S->pend[S->npend].rank = rank;
        S->pend[S->npend].f = f;
        S->pend[S->npend++].d = (float)(-r);
    }
    return loss;
}

/* End of a round: each rank's change to its copy of w (copy - w, f32), rank 0 first, a
 * change of +0 skipped; then every copy is w again. (Without copies the runtime adds each
 * rank's summed deltas; w is small, so every rank has a copy here.) */
static void flush(Slr *S)
{
    if (S->nranks > 1 && !S->stale) {
        S->changed = S->shared = 0;
        for (int64_t f = 0; f < S->nf; f++) {
            float old = S->w[f];
            int cnt = 0;
            for (int64_t q = 0; q < S->nranks; q++) {
                float d = S->copy[q * S->nf + f] - old;
                uint32_t bits;
                memcpy(&bits, &d, 4);
                cnt += bits != 0;
            }
            S->changed += cnt > 0;
            S->shared += cnt > 1;
            for (int64_t q = 0; q < S->nranks; q++) {
                float d = S->copy[q * S->nf + f] - old;
                uint32_t bits;
                memcpy(&bits, &d, 4);
                if (bits) S->w[f] += S->averaging && cnt > 1 ? d / (float)cnt : d;
            }
        }
        for (int64_t q = 0; q < S->nranks; q++) {
            memcpy(S->copy + q * S->nf, S->w, (size_t)S->nf * sizeof *S->w);
            memset(S->touched + q * S->nf, 0, (size_t)S->nf);
            memset(S->delta + q * S->nf, 0, (size_t)S->nf * sizeof *S->delta);
        }
        return;
    }
    for (int64_t q = 0; q < S->nranks; q++)
        for (int64_t f = 0; f < S->nf; f++) {
            if (!S->touched[q * S->nf + f]) continue;
            S->w[f] += S->delta[q * S->nf + f];
            S->delta[q * S->nf + f] = 0.0f;
            S->touched[q * S->nf + f] = 0;
        }
    for (int64_t q = 0; q < S->nranks; q++)
        memcpy(S->copy + q * S->nf, S->w, (size_t)S->nf * sizeof *S->w);
}

/* After a round every rank ran whole at the interval: the adaptive interval's rule. */
static void adapt(Slr *S)
{
    if (S->changed > 0 && S->shared * 8 > S->changed * 3) {
        S->averaging = S->interval <= 64;
        S->interval = S->interval / 2 > 64 ? S->interval / 2 : 64;
    } else if (S->changed > 0 && S->shared * 16 < S->changed * 3) {
        S->averaging = 0;
        S->interval = S->interval < ((int64_t)1 << 19) ? 2 * S->interval : (int64_t)1 << 20;
    }
}

/* Replay one loop run: the training loop (train != 0) returns the reduced loss, the test
 * loop the reduced count of correct predictions (in *correct). */
static double run_loop(Slr *S, const ReplayLoop *l, int train, int64_t *correct)
{
    const Data *D = train ? &S->tr : &S->te;
    S->direct = l->nranks == 1;
    int64_t nb = l->nblocks ? l->nblocks : 1;
    double *loss = calloc((size_t)nb, sizeof *loss);
    int64_t *good = calloc((size_t)nb, sizeof *good);
    unsigned char *used = calloc((size_t)nb, 1);
    if (l->nranks > S->nranks) {
        S->nranks = l->nranks;
        S->delta = realloc(S->delta, (size_t)(S->nranks * S->nf) * sizeof *S->delta);
        S->touched = realloc(S->touched, (size_t)(S->nranks * S->nf));
        memset(S->delta, 0, (size_t)(S->nranks * S->nf) * sizeof *S->delta);
        memset(S->touched, 0, (size_t)(S->nranks * S->nf));
        S->copy = realloc(S->copy, (size_t)(S->nranks * S->nf) * sizeof *S->copy);
    }
    for (int64_t q = 0; q < S->nranks; q++)
        memcpy(S->copy + q * S->nf, S->w, (size_t)S->nf * sizeof *S->w);
    int64_t *ran = calloc((size_t)S->nranks, sizeof *ran); /* per rank, in this round */
    for (int64_t k = 0; k < l->n; k++) {
        const ReplayEntry *e = &l->e[k];
        ran[e->rank] += e->count;
        if (e->lo[0] + e->first + e->count > e->hi[0] || e->hi[0] > D->n)
            replay_die(&S->r,
                       "block %" PRId64 " [%" PRId64 ", %" PRId64 ") cannot run %" PRId64
                       "..%" PRId64,
                       e->block, e->lo[0], e->hi[0], e->first, e->first + e->count);
        for (int64_t n = e->lo[0] + e->first; n < e->lo[0] + e->first + e->count; n++) {
            if (train) {
                loss[e->block] = loss[e->block] + train_sample(S, e->rank, n);
            } else if ((margin(S, S->w, D, n) > 0.0) == (D->label[n] > 0)) {
                good[e->block] += 1;
            }
        }
        used[e->block] = 1;
        piece_end(S);
        if (!replay_round_ends(l, k)) continue;
        flush(S);
        int full = !S->direct && train && S->adaptive && !S->stale;
        for (int64_t q = 0; q < l->nranks; q++) full &= ran[q] == S->interval;
        if (full) adapt(S);
        memset(ran, 0, (size_t)S->nranks * sizeof *ran);
    }
    free(ran);
    double sum = 0.0;
    *correct = 0;
    for (int64_t b = 0; b < nb; b++) {
        if (!used[b]) continue;
        sum = sum + loss[b];
        *correct += good[b];
    }
    free(loss);
    free(good);
    free(used);
    return sum;
}

int main(int argc, char **argv)
{
    int adaptive = argc > 10 && strcmp(argv[argc - 1], "adaptive") == 0;
    int nmode = argc - 10 - adaptive; /* the mode before it, if any */
    const char *mode = nmode == 1 ? argv[10] : "";
    const char *skip = strncmp(mode, "dense=", 6) == 0 ? mode + 5 : NULL;
    int stale = strcmp(mode, "stale") == 0, gpu = strcmp(mode, "gpu") == 0;
    if (argc < 10 || nmode > 1 || (nmode == 1 && !skip && !stale && !gpu)) {
        fprintf(stderr, "usage: slr_replay TRAIN TEST TRACE TRAIN_LINE TEST_LINE EPOCHS STEP "
                        "LAM OUTDIR [gpu | dense=L,... | stale] [adaptive]\n");
        return 2;
    }
    Slr S;
    memset(&S, 0, sizeof S);
    S.gpu = gpu;
    S.stale = stale;
    S.adaptive = adaptive;
    S.interval = 64;
    S.dense = skip != NULL;
    S.r.prog = "slr_replay";
    load(&S.r, argv[1], &S.tr);
    load(&S.r, argv[2], &S.te);
    int train_line = atoi(argv[4]), test_line = atoi(argv[5]);
    int64_t epochs = atoll(argv[6]);
    S.step = atof(argv[7]);
    S.lam = atof(argv[8]);
    const char *out = argv[9];
    S.nf = S.tr.nf > S.te.nf ? S.tr.nf : S.te.nf;
    S.w = calloc((size_t)(S.nf ? S.nf : 1), sizeof *S.w);
    double *losses = calloc((size_t)(epochs ? epochs : 1), sizeof *losses);
    int64_t *corrects = calloc((size_t)(epochs ? epochs : 1), sizeof *corrects);

    replay_open(&S.r, "slr_replay", argv[3]);
    ReplayLoop l = {0};
    int64_t runs = 0;
    while (replay_next(&S.r, 1, &l)) {
        char at[32];
        snprintf(at, sizeof at, ",%d,", l.line);
        if (skip) {
            char list[256];
            snprintf(list, sizeof list, ",%s,", skip + 1);
            if (strstr(list, at)) continue;
        }
        int train = l.line == train_line;
        if (!train && l.line != test_line)
            replay_die(&S.r, "a loop at line %d in the trace", l.line);
        /* the program alternates: train, test, train, test, ... */
        if (train != (runs % 2 == 0) || runs / 2 >= epochs)
            replay_die(&S.r, "the loop at line %d runs out of order", l.line);
        int64_t correct;
        double loss = run_loop(&S, &l, train, &correct);
        if (train)
            losses[runs / 2] = loss;
        else
            corrects[runs / 2] = correct;
        runs++;
    }
    free(l.e);
    replay_close(&S.r);
    if (runs != 2 * epochs)
        replay_die(&S.r, "the trace has %" PRId64 " loop runs, expected %" PRId64, runs,
                   2 * epochs);

    FILE *f = replay_create(&S.r, out, "w.txt");
    for (int64_t x = 0; x < S.nf; x++) fprintf(f, "%" PRId64 " %.9g\n", x, (double)S.w[x]);
    fclose(f);
    f = replay_create(&S.r, out, "loss.txt");
    for (int64_t e = 0; e < epochs; e++) fprintf(f, "%" PRId64 " %.17g\n", e, losses[e]);
    fclose(f);
    f = replay_create(&S.r, out, "correct.txt");
    for (int64_t e = 0; e < epochs; e++) fprintf(f, "%" PRId64 " %" PRId64 "\n", e, corrects[e]);
    fclose(f);
    printf("slr_replay: %" PRId64 " samples, %" PRId64 " loop runs replayed\n", S.tr.n, runs);
    free(losses);
    free(corrects);
    free(S.w);
    free(S.delta);
    free(S.copy);
    free(S.touched);
    free(S.pend);
    data_free(&S.tr);
    data_free(&S.te);
    return 0;
}
