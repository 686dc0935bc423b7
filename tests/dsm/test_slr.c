/* test_slr.c: sparse logistic regression (strategy 1d over the samples; X partitioned with
 * them; the weights w prefetched per block and updated through a buffer) written directly
 * against the C API and loaded from a libsvm file, checked bit for bit against the serial
 * oracle replaying the recorded rounds. Variants: flush at the end of each block, every 7
 * iterations, reads on demand only (no prefetch pass), a custom apply function. Then a
 * staleness test: with buffers, a read sees every delta flushed before its round and
 * nothing after but its own rank's updates, so it is stale by at most the other ranks'
 * flush intervals. */
#include <math.h>

#include "oracle.h"

enum { NS = 157, NF = 41 };

typedef struct SlrEnv {
    float step, lam;
} SlrEnv;

static int slr_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    const SlrEnv *E = env;
    OrnRtView *X = &b->views[1], *w = &b->views[2], *dw = &b->views[3];
    const float *y = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t n[1];
        orn_rt_block_key(b, e, n);
        const int64_t *fk;
        const void *fv;
        int64_t nf;
        orn_rt_row(X, n[0], &fk, &fv, &nf);
        const float *xv = fv;
        float z = 0;
        for (int64_t j = 0; j < nf; j++) z += xv[j] * orn_rt_get_f32(w, &fk[2 * j + 1]);
        float p = 1.0f / (1.0f + expf(-z));
        float target = y[e] > 0 ? 1.0f : 0.0f;
        b->acc[0].f64 += -(target * log(p + 1e-12) + (1.0 - target) * log(1.0 - p + 1e-12));
        float g = p - target;
        for (int64_t j = 0; j < nf; j++) {
            float wf = orn_rt_get_f32(w, &fk[2 * j + 1]);
            orn_rt_add_f32(dw, &fk[2 * j + 1], -E->step * (g * xv[j] + E->lam * wf));
        }
    }
    return 0;
}

static int slr_prefetch(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *X = &b->views[1], *w = &b->views[2];
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t n[1];
        orn_rt_block_key(b, e, n);
        const int64_t *fk;
        const void *fv;
        int64_t nf;
        orn_rt_row(X, n[0], &fk, &fv, &nf);
        for (int64_t j = 0; j < nf; j++) orn_rt_prefetch(w, &fk[2 * j + 1]);
    }
    return 0;
}

/* A custom apply: damped update w = w + 0.5 delta (deterministic, in place). */
static int half_apply(void *elem, const void *delta, void *env)
{
    (void)env;
    float x, d;
    memcpy(&x, elem, 4);
    memcpy(&d, delta, 4);
    x = x + 0.5f * d;
    memcpy(elem, &x, 4);
    return 0;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void write_libsvm(TestEnv *t, const char *path)
{
    if (t->rank == 0) {
        FILE *f = fopen(path, "w");
        CHECK(t, f != NULL);
        for (int s = 0; s < NS; s++) {
            if (s == 40) fprintf(f, "# a comment in the middle\n\n");
            fprintf(f, "%s", mix((uint64_t)s) % 2 ? "+1" : "-1");
            /* skewed: low features are common, sample s has 1 + s % 9 of them */
            int nf = 1 + s % 9, last = 0;
            for (int j = 0; j < nf; j++) {
                int idx = last + 1 + (int)(mix((uint64_t)(s * 100 + j)) % 5);
                if (idx > NF) break;
                fprintf(f, " %d:%.6g", idx, (double)(mix((uint64_t)(s * 77 + j)) % 100) / 50.0);
                last = idx;
            }
            fprintf(f, "\n");
        }
        CHECK(t, fclose(f) == 0);
    }
    OK(t, orn_dsm_barrier(t->dsm));
}

/* copies: w copied whole to every rank (its flushes then go to every copy); else read
 * through the prefetch pass or on demand. */
static void run_slr(TestEnv *t, int64_t flush_every, int with_prefetch, int custom_apply,
                    int copies)
{
    orn_rt_set_replicate_max(t->rt, copies ? (int64_t)64 << 20 : 0);
    char path[512];
    t_path(t, path, sizeof path, "slr.libsvm");
    write_libsvm(t, path);
    OrnDsmArray *X = NULL, *y = NULL, *w = NULL;
    OK(t, orn_dsm_load_libsvm(t->dsm, path, 0, &X, &y));
    CHECK(t, y->dims[0] == NS && X->dims[0] == NS && X->dims[1] <= NF);
    int64_t wd[1] = {X->dims[1]};
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F32, 1, wd, &w));
    OrnRtBuffer *dw = NULL;
    OK(t, orn_rt_buffer_new(t->rt, w, custom_apply ? half_apply : NULL, NULL, flush_every, &dw));
    orn_rt_set_trace(t->rt, 1);

    static const OrnRtPlanArray arrays[4] = {
        {"y", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"X", ORN_RT_PARTITIONED, 2, {0, -1, -1, -1}, 0, {0}, {0}},
        {"w", ORN_RT_PREFETCHED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
        {"dw", ORN_RT_BUFFERED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
    };
    static const OrnRtPlanAcc accs[1] = {{"loss", ORN_RT_ACC_SUM, ORN_RT_F64}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      3,
                      "test_slr.c",
                      1,
                      ORN_RT_1D,
                      ORN_RT_1D,
                      0,
                      1,
                      1,
                      {0, 0},
                      {0, 0},
                      {{0}},
                      0,
                      4,
                      arrays,
                      1,
                      accs,
                      0};

    OArr oy, oX, ow;
    oarr_gather(t, y, &oy);
    oarr_gather(t, X, &oX);
    oarr_gather(t, w, &ow);
    OArr *oarrs[4] = {&oy, &oX, &ow, &ow};
    SlrEnv env = {0.1f, 0.001f};
    int64_t rounds = 0;
    for (int epoch = 0; epoch < 3; epoch++) {
        OrnRtArg args[4] = {{y, NULL}, {X, NULL}, {w, NULL}, {NULL, dw}};
        OrnRtScalar acc[1] = {{.f64 = 0}};
        OrnRtLoop loop = {&plan, args, slr_body, with_prefetch ? slr_prefetch : NULL, &env, acc, 0};
        OrnRtBufferState before, after;
        orn_rt_buffer_state(dw, &before);
        OK(t, orn_rt_run(t->rt, &loop));
        orn_rt_buffer_state(dw, &after);
        OrnRtStats st;
        orn_rt_stats(t->rt, &st);
        rounds = st.rounds;
        /* The plan does not change between epochs: nothing moves after the first. */
        if (epoch > 0) CHECK(t, st.repartitioned == 0);
        if (epoch == 0 && t->size > 1) CHECK(t, st.repartitioned > 0);
        if (copies && t->size > 1) CHECK(t, st.replicated == 1 && st.prefetched + st.misses == 0);
        if (!copies && with_prefetch && t->size > 1) CHECK(t, st.prefetched > 0);
        if (!copies && !with_prefetch && t->size > 1) CHECK(t, st.misses > 0);
        int64_t ntr;
        const OrnRtTraceEntry *tr = orn_rt_trace(t->rt, &ntr);
        Oracle o;
        oracle_init(&o, t, &plan, oarrs, custom_apply ? half_apply : NULL, NULL);
        if (copies && t->size > 1 && !custom_apply) oracle_eager(&o, 3);
        /* a plain buffer of a copied f32 target: the adaptive interval (docs/language.md) */
        int adaptive = copies && t->size > 1 && !custom_apply && flush_every == 0;
        if (adaptive) oracle_adaptive(&o, 3, &before);
        OrnRtScalar oacc[1] = {{.f64 = 0}};
        oracle_replay(&o, slr_body, &env, tr, ntr, oacc, 0, 0);
        if (adaptive) /* the oracle's rule reached the runtime's state */
            CHECK(t, o.buf[3].interval == after.interval && o.buf[3].averaging == after.averaging);
        oracle_free(&o);
        CHECK(t, oarr_same(t, w, &ow));
        CHECK(t, memcmp(&acc[0].f64, &oacc[0].f64, 8) == 0);
        if (flush_every > 0)
            for (int64_t i = 0; i < ntr; i++) CHECK(t, tr[i].count <= flush_every);
        if (t->rank == 0 && epoch == 2)
            printf(
                "slr: %d ranks, flush %lld, prefetch %d, copies %d: log-loss %.6f, %lld rounds\n",
                t->size, (long long)flush_every, with_prefetch, copies, acc[0].f64 / NS,
                (long long)rounds);
    }
    oarr_free(&oy);
    oarr_free(&oX);
    oarr_free(&ow);
    orn_rt_buffer_free(dw);
    orn_dsm_free(X);
    orn_dsm_free(y);
    orn_dsm_free(w);
}

/* Each iteration records the counter it reads, then adds 1 to it through a buffer. */
static int stale_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *c = &b->views[1], *dc = &b->views[2];
    int64_t zero[1] = {0};
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        ((int64_t *)b->vals)[e] = orn_rt_get_i64(c, zero);
        orn_rt_add_i64(dc, zero, 1);
    }
    return 0;
}

static void run_stale(TestEnv *t, int64_t flush_every)
{
    int64_t n1[1] = {203}, one[1] = {1};
    OrnDsmArray *seen = NULL, *c = NULL;
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_I64, 1, n1, &seen));
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_I64, 1, one, &c));
    OrnRtBuffer *dc = NULL;
    OK(t, orn_rt_buffer_new(t->rt, c, NULL, NULL, flush_every, &dc));
    static const OrnRtPlanArray arrays[3] = {
        {"seen", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"c", ORN_RT_PREFETCHED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
        {"dc", ORN_RT_BUFFERED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
    };
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      4,
                      "test_slr.c",
                      2,
                      ORN_RT_1D,
                      ORN_RT_1D,
                      0,
                      1,
                      1,
                      {0, 0},
                      {0, 0},
                      {{0}},
                      0,
                      3,
                      arrays,
                      0,
                      NULL,
                      0};
    OrnRtArg args[3] = {{seen, NULL}, {c, NULL}, {NULL, dc}};
    OrnRtLoop loop = {&plan, args, stale_body, NULL, NULL, NULL, 0};
    OK(t, orn_rt_run(t->rt, &loop));
    int64_t ntr;
    const OrnRtTraceEntry *tr = orn_rt_trace(t->rt, &ntr);
    OArr os;
    oarr_gather(t, seen, &os);
    int64_t total;
    OK(t, orn_dsm_get(c, (int64_t[1]){0}, &total));
    CHECK(t, total == 203);
    /* Iterations of round r read exactly the number of iterations of rounds < r, plus
     * those their own rank ran before them in the round: every rank has a copy of the
     * counter (small, prefetched), which takes its own updates at once. */
    int64_t before = 0;
    for (int64_t i = 0; i < ntr;) {
        int64_t j = i, in_round = 0, mine[64] = {0};
        while (j < ntr && tr[j].round == tr[i].round) in_round += tr[j++].count;
        for (int64_t k = i; k < j; k++)
            for (int64_t e = tr[k].first; e < tr[k].first + tr[k].count; e++) {
                int64_t got = ((int64_t *)os.vals)[tr[k].lo[0] + e];
                CHECK(t, got == before + mine[tr[k].rank]++);
                /* the bound: missing increments are this round's, at most P flush intervals
                 * (one per rank) */
                if (flush_every > 0) CHECK(t, in_round <= (int64_t)t->size * flush_every);
            }
        before += in_round;
        i = j;
    }
    CHECK(t, before == 203);
    oarr_free(&os);
    orn_rt_buffer_free(dc);
    orn_dsm_free(seen);
    orn_dsm_free(c);
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    run_slr(&t, 0, 1, 0, 0);
    run_slr(&t, 7, 1, 0, 0);
    run_slr(&t, 5, 0, 0, 0);
    run_slr(&t, 11, 1, 1, 0);
    run_slr(&t, 0, 1, 0, 1);
    run_slr(&t, 7, 1, 0, 1);
    run_slr(&t, 11, 1, 1, 1);
    run_stale(&t, 0);
    run_stale(&t, 1);
    run_stale(&t, 13);
    return t_finish(&t, "test_slr");
}
