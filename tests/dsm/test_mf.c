/* test_mf.c: SGD matrix factorization (strategy 2d: ratings in 2-D blocks, W partitioned
 * with the users, H rotated around the ring) written directly against the C API, checked
 * bit for bit against the serial oracle replaying the block order the runtime recorded.
 * Also: a second loop over held-out ratings (another iteration space: W is repartitioned),
 * several epochs, the loss accumulator, the compute-only switch, and the ratings loaded
 * from a triplets file. */
#include <math.h>

#include "oracle.h"

enum { K = 4, NU = 37, NI = 29 };

typedef struct MfEnv {
    float lr, lam;
} MfEnv;

static int mf_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    const MfEnv *E = env;
    OrnRtView *W = &b->views[1], *H = &b->views[2];
    const float *r = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t key[2];
        orn_rt_block_key(b, e, key);
        int64_t kw[2] = {0, key[0]}, kh[2] = {0, key[1]};
        float *w = orn_rt_wptr(W, kw), *h = orn_rt_wptr(H, kh);
        int64_t sw = W->stride[0], sh = H->stride[0];
        float pred = 0;
        for (int k = 0; k < K; k++) pred += w[k * sw] * h[k * sh];
        float err = r[e] - pred;
        b->acc[0].f64 += (double)err * err;
        for (int k = 0; k < K; k++) {
            float wk = w[k * sw], hk = h[k * sh];
            w[k * sw] = wk + E->lr * (err * hk - E->lam * wk);
            h[k * sh] = hk + E->lr * (err * wk - E->lam * hk);
        }
    }
    return 0;
}

/* Held-out loss: reads only. */
static int eval_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *W = &b->views[1], *H = &b->views[2];
    const float *r = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t key[2];
        orn_rt_block_key(b, e, key);
        float pred = 0;
        for (int k = 0; k < K; k++) {
            int64_t kw[2] = {k, key[0]}, kh[2] = {k, key[1]};
            pred += orn_rt_get_f32(W, kw) * orn_rt_get_f32(H, kh);
        }
        double err = r[e] - pred;
        b->acc[0].f64 += err * err;
        b->acc[1].i64 += 1;
    }
    return 0;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Ratings with skewed users: user u rates about 40 / (u + 1) + 3 items. */
static void write_ratings(TestEnv *t, const char *path, int held_out)
{
    if (t->rank == 0) {
        FILE *f = fopen(path, "w");
        CHECK(t, f != NULL);
        fprintf(f, "# user item rating\n");
        for (int u = 0; u < NU; u++) {
            int deg = 40 / (u + 1) + 3;
            if (deg > NI) deg = NI; /* 5 is prime to NI: distinct items */
            for (int j = 0; j < deg; j++) {
                int i = (int)((uint64_t)(u * 7 + j * 5) % NI);
                if (((uint64_t)(u + i) % 5 == 0) != held_out) continue;
                float v = 1.0f + (float)(mix((uint64_t)(u * 1000 + i)) % 9) / 2.0f;
                fprintf(f, "%d\t%d %.9g\n", u, i, (double)v);
            }
            if (u % 9 == 0) fprintf(f, "\n");
        }
        CHECK(t, fclose(f) == 0);
    }
    OK(t, orn_dsm_barrier(t->dsm));
}

static OrnDsmArray *dense_like(TestEnv *t, int64_t rows, int64_t cols, uint64_t seed)
{
    int64_t dims[2] = {rows, cols};
    OrnDsmArray *a = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 2, dims, seed, 1, &a));
    return a;
}

static void run_mf(TestEnv *t, int blocks_per_rank, int c0, int c1, int s0, int s1)
{
    char ptrain[512], ptest[512];
    t_path(t, ptrain, sizeof ptrain, "mf_train.triplets");
    t_path(t, ptest, sizeof ptest, "mf_test.triplets");
    write_ratings(t, ptrain, 0);
    write_ratings(t, ptest, 1);
    OrnDsmArray *R = NULL, *Rt = NULL;
    OK(t, orn_dsm_load_triplets(t->dsm, ptrain, 0, &R));
    OK(t, orn_dsm_load_triplets(t->dsm, ptest, 0, &Rt));
    CHECK(t, R->dims[0] <= NU && R->dims[1] <= NI);
    OrnDsmArray *W = dense_like(t, K, NU, 11), *H = dense_like(t, K, NI, 12);
    orn_rt_set_blocks_per_rank(t->rt, blocks_per_rank);
    orn_rt_set_subblock(t->rt, s0, s1);
    orn_rt_set_trace(t->rt, 1);

    static const OrnRtPlanArray arrays[3] = {
        {"ratings", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}},
        {"W", ORN_RT_PARTITIONED, 2, {-1, 0, -1, -1}, 0, {0}, {0}},
        {"H", ORN_RT_ROTATED, 2, {-1, 1, -1, -1}, 0, {0}, {0}},
    };
    static const OrnRtPlanAcc accs[2] = {{"loss", ORN_RT_ACC_SUM, ORN_RT_F64},
                                         {"count", ORN_RT_ACC_SUM, ORN_RT_I64}};
    OrnRtPlan plan = {.version = ORN_RT_PLAN_VERSION,
                      .loop_id = 7,
                      .file = "test_mf.c",
                      .line = 1,
                      .strategy = ORN_RT_2D,
                      .nkeys = 2,
                      .npart = 2,
                      .part_dims = {0, 1},
                      .part_count = {c0, c1},
                      .narrays = 3,
                      .arrays = arrays,
                      .naccs = 1,
                      .accs = accs};
    OrnRtPlan eplan = plan;
    eplan.loop_id = 8;
    eplan.naccs = 2;

    /* The oracle's copies. W/H extents may exceed the ratings' (users without ratings). */
    OArr oR, oRt, oW, oH;
    oarr_gather(t, R, &oR);
    oarr_gather(t, Rt, &oRt);
    oarr_gather(t, W, &oW);
    oarr_gather(t, H, &oH);
    /* The ratings' extents come from the data; W and H must cover them. */
    CHECK(t, oW.dims[1] >= R->dims[0] && oH.dims[1] >= R->dims[1]);
    OArr *oarrs[3] = {&oR, &oW, &oH}, *earrs[3] = {&oRt, &oW, &oH};

    MfEnv env = {0.05f, 0.01f};
    for (int epoch = 0; epoch < 3; epoch++) {
        OrnRtArg args[3] = {{R, NULL}, {W, NULL}, {H, NULL}};
        OrnRtScalar acc[1] = {{.f64 = 0.0}};
        OrnRtLoop loop = {&plan, args, mf_body, NULL, &env, acc, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        int64_t ntr;
        const OrnRtTraceEntry *tr = orn_rt_trace(t->rt, &ntr);
        CHECK(t, ntr > 0);
        OrnRtStats st;
        orn_rt_stats(t->rt, &st);
        int64_t nb1 = (c1 ? c1 : (int64_t)blocks_per_rank * t->size) * (s1 > 0 ? s1 : 1);
        CHECK(t, st.steps == (int64_t)t->size * ((nb1 + t->size - 1) / t->size));
        /* Sub-blocks are tiles of the iteration space, in the trace with their boxes. */
        if (s0 > 0) {
            int64_t nb0 = (c0 ? c0 : (int64_t)blocks_per_rank * t->size) * s0;
            CHECK(t, st.grid[0] == nb0 && st.grid[1] == nb1 && st.sub[0] == s0 && st.sub[1] == s1);
        }

        /* At most W and H move back from the held-out loop's partitions (its ratings have
         * other boundaries); the training ratings do not move after the first epoch. */
        CHECK(t, epoch == 0 || st.repartitioned <= 2);

        /* The serial oracle replays the recorded order. */
        Oracle o;
        oracle_init(&o, t, &plan, oarrs, NULL, NULL);
        OrnRtScalar oacc[1] = {{.f64 = 0.0}};
        uint64_t stream = ((uint64_t)7 << 32) | (uint64_t)epoch;
        oracle_replay(&o, mf_body, &env, tr, ntr, oacc, 0, stream);
        oracle_free(&o);
        {
            CHECK(t, oarr_same(t, W, &oW));
            CHECK(t, oarr_same(t, H, &oH));
            CHECK(t, memcmp(&acc[0].f64, &oacc[0].f64, 8) == 0);
        }
        /* Trace sanity: every rating ran once. */
        int64_t total = 0;
        for (int64_t i = 0; i < ntr; i++) total += tr[i].count;
        CHECK(t, total == R->nnz);

        /* Held-out loss: another iteration space, same strategy: W is repartitioned. */
        OrnRtArg eargs[3] = {{Rt, NULL}, {W, NULL}, {H, NULL}};
        OrnRtScalar eacc[2] = {{.f64 = 0.0}, {.i64 = 0}};
        OrnRtLoop eloop = {&eplan, eargs, eval_body, NULL, NULL, eacc, 0};
        OK(t, orn_rt_run(t->rt, &eloop));
        CHECK(t, eacc[1].i64 == Rt->nnz);
        tr = orn_rt_trace(t->rt, &ntr);
        oracle_init(&o, t, &eplan, earrs, NULL, NULL);
        OrnRtScalar oeacc[2] = {{.f64 = 0.0}, {.i64 = 0}};
        oracle_replay(&o, eval_body, NULL, tr, ntr, oeacc, 0,
                      ((uint64_t)8 << 32) | (uint64_t)epoch);
        oracle_free(&o);
        CHECK(t, memcmp(&eacc[0].f64, &oeacc[0].f64, 8) == 0);
        if (t->rank == 0 && epoch == 2)
            printf("mf: %d ranks, %d blocks/rank: train loss %.6f, held-out %.6f\n", t->size,
                   blocks_per_rank, acc[0].f64, eacc[0].f64);
        env.lr *= 0.9f;
    }
    /* The same loop twice in a row: nothing moves the second time, and the result is the
     * same bit for bit. */
    double first = 0;
    for (int rep = 0; rep < 2; rep++) {
        OrnRtArg eargs[3] = {{Rt, NULL}, {W, NULL}, {H, NULL}};
        OrnRtScalar eacc[2] = {{.f64 = 0.0}, {.i64 = 0}};
        OrnRtLoop eloop = {&eplan, eargs, eval_body, NULL, NULL, eacc, 0};
        OK(t, orn_rt_run(t->rt, &eloop));
        OrnRtStats st;
        orn_rt_stats(t->rt, &st);
        if (rep == 1) CHECK(t, st.repartitioned == 0 && !memcmp(&first, &eacc[0].f64, 8));
        first = eacc[0].f64;
    }
    /* A body that reads the CSR form (rowptr, cols) instead of keys: the same result. */
    {
        OrnRtPlan cplan = eplan;
        cplan.keys_unused = 1;
        OrnRtArg eargs[3] = {{Rt, NULL}, {W, NULL}, {H, NULL}};
        OrnRtScalar eacc[2] = {{.f64 = 0.0}, {.i64 = 0}};
        OrnRtLoop eloop = {&cplan, eargs, eval_body, NULL, NULL, eacc, 0};
        OK(t, orn_rt_run(t->rt, &eloop));
        CHECK(t, !memcmp(&first, &eacc[0].f64, 8) && eacc[1].i64 == Rt->nnz);
    }
    oarr_free(&oR);
    oarr_free(&oRt);
    oarr_free(&oW);
    oarr_free(&oH);
    orn_dsm_free(R);
    orn_dsm_free(Rt);
    orn_dsm_free(W);
    orn_dsm_free(H);
}

/* Compute-only mode keeps H's blocks in place: the run must still complete and visit
 * every rating once (values are meaningless). */
static void run_nocomm(TestEnv *t)
{
    int64_t dims[2] = {NU, NI};
    OrnDsmArray *R = NULL, *W = dense_like(t, K, NU, 1), *H = dense_like(t, K, NI, 2);
    int64_t n = 0, keys[2 * NU * NI];
    float vals[NU * NI];
    for (int u = t->rank; u < NU; u += t->size)
        for (int i = 0; i < NI; i += 3) {
            keys[2 * n] = u;
            keys[2 * n + 1] = i;
            vals[n++] = 1.0f;
        }
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, n, keys, vals, NULL, NULL, &R));
    static const OrnRtPlanArray arrays[3] = {
        {"R", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}},
        {"W", ORN_RT_PARTITIONED, 2, {-1, 0, -1, -1}, 0, {0}, {0}},
        {"H", ORN_RT_ROTATED, 2, {-1, 1, -1, -1}, 0, {0}, {0}},
    };
    static const OrnRtPlanAcc accs[1] = {{"n", ORN_RT_ACC_SUM, ORN_RT_I64}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      9,
                      "test_mf.c",
                      2,
                      ORN_RT_2D,
                      ORN_RT_2D,
                      0,
                      2,
                      2,
                      {0, 1},
                      {0, 0},
                      {{0}},
                      0,
                      3,
                      arrays,
                      1,
                      accs,
                      0};
    orn_rt_set_nocomm(t->rt, 1);
    OrnRtArg args[3] = {{R, NULL}, {W, NULL}, {H, NULL}};
    OrnRtScalar acc[1] = {{.i64 = 0}};
    OrnRtLoop loop = {&plan, args, eval_body, NULL, NULL, acc, 0};
    /* eval_body's second accumulator is the count: use a plan with both. */
    static const OrnRtPlanAcc accs2[2] = {{"l", ORN_RT_ACC_SUM, ORN_RT_F64},
                                          {"n", ORN_RT_ACC_SUM, ORN_RT_I64}};
    plan.naccs = 2;
    plan.accs = accs2;
    OrnRtScalar acc2[2] = {{.f64 = 0}, {.i64 = 0}};
    loop.acc = acc2;
    (void)acc;
    OK(t, orn_rt_run(t->rt, &loop));
    CHECK(t, acc2[1].i64 == R->nnz);
    orn_rt_set_nocomm(t->rt, 0);
    /* H is whole and home afterwards. */
    for (int64_t j = 0; j < H->part.ntiles; j++)
        CHECK(t, (H->part.owner[j] == t->rank) == (H->tiles[j].held != 0));
    orn_dsm_free(R);
    orn_dsm_free(W);
    orn_dsm_free(H);
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    run_mf(&t, 2, 0, 0, 0, 0);   /* sub-blocks off */
    run_mf(&t, 3, 0, 0, 0, 0);   /* 3P blocks per dimension, L = 3 */
    run_mf(&t, 2, 5, 7, 0, 0);   /* block counts that do not divide: empty ring slots */
    run_mf(&t, 2, 0, 0, 3, 2);   /* 3 x 2 sub-blocks per block (cache blocking) */
    run_mf(&t, 1, 5, 3, 2, 3);   /* sub-blocks of block counts that do not divide */
    run_mf(&t, 2, 0, 0, -1, -1); /* automatic (too few ratings to cut) */
    orn_rt_set_slice(t.rt, 3);   /* many progress polls inside blocks */
    run_mf(&t, 1, 0, 0, 0, 0);   /* B = P: L = 1, no overlap, still correct */
    orn_rt_set_slice(t.rt, 4096);
    run_nocomm(&t);
    return t_finish(&t, "test_mf");
}
