/* test_loops.c: loop features against the serial oracle and serial formulas: accumulators
 * of every kind and type, random streams that do not depend on ranks or schedules, the
 * serial strategy, remote and replicated arrays, 3-D iteration spaces, run-to-run
 * determinism, plan validation and body errors. */
#include <math.h>

#include "oracle.h"

/* ---------------------------------------------------------------- accumulators */

static int acc_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    const double *v = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1];
        orn_rt_block_key(b, e, k);
        b->acc[0].f64 += v[e];
        b->acc[1].f64 *= 1.0 + v[e] * 1e-3;
        int32_t m = (int32_t)((k[0] * 7919) % 1000) - 500;
        b->acc[2].i32 = m < b->acc[2].i32 ? m : b->acc[2].i32;
        b->acc[3].i64 = k[0] * k[0] > b->acc[3].i64 ? k[0] * k[0] : b->acc[3].i64;
        b->acc[4].i32 += 1;
        b->acc[5].f32 += (float)v[e];
        b->acc[6].f64 = fmax(b->acc[6].f64, v[e]);
    }
    return 0;
}

static void test_accumulators(TestEnv *t)
{
    int64_t dims[1] = {1234};
    OrnDsmArray *a = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 1, dims, 77, 1, &a));
    static const OrnRtPlanArray arrays[1] = {
        {"a", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}}};
    static const OrnRtPlanAcc accs[7] = {
        {"s", ORN_RT_ACC_SUM, ORN_RT_F64},  {"p", ORN_RT_ACC_PROD, ORN_RT_F64},
        {"mn", ORN_RT_ACC_MIN, ORN_RT_I32}, {"mx", ORN_RT_ACC_MAX, ORN_RT_I64},
        {"n", ORN_RT_ACC_SUM, ORN_RT_I32},  {"sf", ORN_RT_ACC_SUM, ORN_RT_F32},
        {"big", ORN_RT_ACC_MAX, ORN_RT_F64}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      40,
                      "test_loops.c",
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
                      1,
                      arrays,
                      7,
                      accs,
                      0};
    orn_rt_set_trace(t->rt, 1);
    OrnRtScalar acc[7] = {{.f64 = 1.5}, {.f64 = 2.0},   {.i32 = 0},     {.i64 = -5},
                          {.i32 = 10},  {.f32 = 0.25f}, {.f64 = -1e300}};
    OrnRtScalar oacc[7];
    memcpy(oacc, acc, sizeof acc);
    OrnRtArg args[1] = {{a, NULL}};
    OrnRtLoop loop = {&plan, args, acc_body, NULL, NULL, acc, 0};
    OK(t, orn_rt_run(t->rt, &loop));
    int64_t ntr;
    const OrnRtTraceEntry *tr = orn_rt_trace(t->rt, &ntr);
    OArr oa;
    oarr_gather(t, a, &oa);
    OArr *oarrs[1] = {&oa};
    Oracle o;
    oracle_init(&o, t, &plan, oarrs, NULL, NULL);
    oracle_replay(&o, acc_body, NULL, tr, ntr, oacc, 0, 0);
    oracle_free(&o);
    CHECK(t, !memcmp(acc, oacc, sizeof acc));
    CHECK(t, acc[2].i32 == -500 && acc[3].i64 == 1233 * 1233 && acc[4].i32 == 10 + 1234);
    /* Every rank holds the same values (bit-identical). */
    OrnRtScalar mine[7];
    memcpy(mine, acc, sizeof acc);
    OK(t, orn_dsm_bcast(t->dsm, mine, sizeof mine, 0));
    CHECK(t, !memcmp(mine, acc, sizeof acc));
    oarr_free(&oa);
    orn_dsm_free(a);
}

/* ---------------------------------------------------------------- random streams */

static int rng_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    double *v = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        OrnRtRng g;
        orn_rt_rng_iter(&g, b, k);
        double u = orn_rt_rng_uniform(&g), z = orn_rt_rng_normal(&g);
        int64_t r = orn_rt_rng_int(&g, 10);
        v[e] = u + z * 1000.0 + (double)r * 1e6;
    }
    return 0;
}

static void test_rng(TestEnv *t)
{
    int64_t dims[2] = {17, 23};
    static const OrnRtPlanArray arrays[1] = {
        {"A", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}}};
    OrnRtPlan p1 = {ORN_RT_PLAN_VERSION,
                    41,
                    "test_loops.c",
                    2,
                    ORN_RT_1D,
                    ORN_RT_1D,
                    0,
                    2,
                    1,
                    {1, 0},
                    {0, 0},
                    {{0}},
                    0,
                    1,
                    arrays,
                    0,
                    NULL,
                    0};
    OrnRtPlan p2 = {ORN_RT_PLAN_VERSION,
                    41,
                    "test_loops.c",
                    2,
                    ORN_RT_2D_ORDERED,
                    ORN_RT_2D_ORDERED,
                    0,
                    2,
                    2,
                    {0, 1},
                    {0, 0},
                    {{0}},
                    0,
                    1,
                    arrays,
                    0,
                    NULL,
                    0};
    orn_rt_set_seed(t->rt, 12345);
    for (int run = 0; run < 2; run++) {
        OrnDsmArray *A = NULL;
        OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F64, 2, dims, &A));
        OrnRtArg args[1] = {{A, NULL}};
        OrnRtLoop loop = {run ? &p2 : &p1, args, rng_body, NULL, NULL, NULL, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        OArr g;
        oarr_gather(t, A, &g);
        /* Serial formula: stream = loop id << 32 | how many times that loop id ran. */
        uint64_t stream = ((uint64_t)41 << 32) | (uint64_t)run;
        for (int64_t i = 0; i < 17; i++)
            for (int64_t j = 0; j < 23; j++) {
                int64_t k[2] = {i, j};
                OrnRtRng r;
                orn_rt_rng_init(&r, 12345, stream, k, 2);
                double u = orn_rt_rng_uniform(&r), z = orn_rt_rng_normal(&r);
                int64_t q = orn_rt_rng_int(&r, 10);
                double want = u + z * 1000.0 + (double)q * 1e6;
                CHECK(t, !memcmp(&((double *)g.vals)[i * 23 + j], &want, 8));
                CHECK(t, u >= 0 && u < 1 && q >= 0 && q < 10);
            }
        oarr_free(&g);
        orn_dsm_free(A);
    }
    orn_rt_set_seed(t->rt, 0);
}

/* ---------------------------------------------------------------- serial and remote */

/* Writes A at a permuted key and reads B anywhere: serial (remote A on rank 0) or 1d with A
 * remote (a permutation: no two iterations write the same element). */
static int perm_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    const int64_t *n = env;
    OrnRtView *A = &b->views[1], *B = &b->views[2], *T = &b->views[3];
    const float *v = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1];
        orn_rt_block_key(b, e, k);
        int64_t dst[1] = {(k[0] * 7) % *n}, src[1] = {(k[0] * 13 + 5) % *n}, tk[1] = {k[0] % 3};
        float *p = orn_rt_wptr(A, dst);
        *p = *p * 0.5f + v[e] + orn_rt_get_f32(B, src) * orn_rt_get_f32(T, tk);
    }
    return 0;
}

static void test_serial_remote(TestEnv *t)
{
    int64_t n = 101, dims[1] = {101}, td[1] = {3};
    static const OrnRtPlanArray ser_arrays[4] = {
        {"I", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"A", ORN_RT_REMOTE, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
        {"B", ORN_RT_PREFETCHED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
        {"T", ORN_RT_REPLICATED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
    };
    OrnRtPlan ps = {ORN_RT_PLAN_VERSION,
                    42,
                    "test_loops.c",
                    3,
                    ORN_RT_SERIAL,
                    ORN_RT_SERIAL,
                    0,
                    1,
                    0,
                    {0, 0},
                    {0, 0},
                    {{0}},
                    0,
                    4,
                    ser_arrays,
                    0,
                    NULL,
                    0};
    OrnRtPlan p1 = ps;
    p1.strategy = ORN_RT_1D;
    p1.npart = 1;
    p1.loop_id = 43;
    for (int which = 0; which < 2; which++) {
        const OrnRtPlan *plan = which ? &p1 : &ps;
        OrnDsmArray *I = NULL, *A = NULL, *B = NULL, *T = NULL;
        OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 1, dims, 1, 0, &I));
        OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 1, dims, 2, 0, &A));
        OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 1, dims, 3, 0, &B));
        OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 1, td, 4, 0, &T));
        OArr oI, oA, oB, oT;
        oarr_gather(t, I, &oI);
        oarr_gather(t, A, &oA);
        oarr_gather(t, B, &oB);
        oarr_gather(t, T, &oT);
        OArr *oarrs[4] = {&oI, &oA, &oB, &oT};
        OrnRtArg args[4] = {{I, NULL}, {A, NULL}, {B, NULL}, {T, NULL}};
        OrnRtLoop loop = {plan, args, perm_body, NULL, &n, NULL, 0};
        for (int rep = 0; rep < 2; rep++) {
            OK(t, orn_rt_run(t->rt, &loop));
            int64_t ntr;
            const OrnRtTraceEntry *tr = orn_rt_trace(t->rt, &ntr);
            Oracle o;
            oracle_init(&o, t, plan, oarrs, NULL, NULL);
            if (which == 0) {
                CHECK(t, ntr == 1 && tr[0].rank == 0 && tr[0].count == 101);
                oracle_serial(&o, perm_body, &n, NULL, 0, 0);
            } else {
                oracle_replay(&o, perm_body, &n, tr, ntr, NULL, 0, 0);
            }
            oracle_free(&o);
            CHECK(t, oarr_same(t, A, &oA));
        }
        oarr_free(&oI);
        oarr_free(&oA);
        oarr_free(&oB);
        oarr_free(&oT);
        orn_dsm_free(I);
        orn_dsm_free(A);
        orn_dsm_free(B);
        orn_dsm_free(T);
    }
}

/* ---------------------------------------------------------------- 3-D, determinism */

/* tokens keyed (doc, word, j): count per doc through a partitioned array, per word through
 * a buffer (LDA's shape). */
static int tok_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *D = &b->views[1], *W = &b->views[2];
    int32_t *z = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[3];
        orn_rt_block_key(b, e, k);
        OrnRtRng g;
        orn_rt_rng_iter(&g, b, k);
        int64_t topic = orn_rt_rng_int(&g, 5);
        z[e] = (int32_t)topic;
        int64_t dk[2] = {topic, k[0]}, wk[2] = {topic, k[1]};
        int32_t *dp = orn_rt_wptr(D, dk);
        *dp += 1;
        orn_rt_add_i32(W, wk, 1);
    }
    return 0;
}

static void test_tokens(TestEnv *t)
{
    char path[512];
    t_path(t, path, sizeof path, "tok.docword");
    if (t->rank == 0) {
        FILE *f = fopen(path, "w");
        for (int d = 0; d < 41; d++)
            for (int w = d % 5; w < 37; w += 3) fprintf(f, "%d %d %d\n", d, w, 1 + (d * w) % 3);
        fclose(f);
    }
    OK(t, orn_dsm_barrier(t->dsm));
    int64_t sums[2][2];
    for (int run = 0; run < 2; run++) {
        OrnDsmArray *Z = NULL, *D = NULL, *W = NULL;
        OK(t, orn_dsm_load_docword(t->dsm, path, &Z));
        int64_t dd[2] = {5, Z->dims[0]}, wd[2] = {5, Z->dims[1]};
        OK(t, orn_dsm_dense(t->dsm, ORN_DSM_I32, 2, dd, &D));
        OK(t, orn_dsm_dense(t->dsm, ORN_DSM_I32, 2, wd, &W));
        OrnRtBuffer *dW = NULL;
        OK(t, orn_rt_buffer_new(t->rt, W, NULL, NULL, 0, &dW));
        static const OrnRtPlanArray arrays[3] = {
            {"tokens", ORN_RT_PARTITIONED, 3, {0, 1, 2, -1}, 0, {0}, {0}},
            {"doc_topic", ORN_RT_PARTITIONED, 2, {-1, 0, -1, -1}, 0, {0}, {0}},
            {"dW", ORN_RT_BUFFERED, 2, {-1, 1, -1, -1}, 0, {0}, {0}},
        };
        OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                          44 + run,
                          "test_loops.c",
                          4,
                          ORN_RT_1D,
                          ORN_RT_1D,
                          0,
                          3,
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
        OArr oZ, oD, oW;
        oarr_gather(t, Z, &oZ);
        oarr_gather(t, D, &oD);
        oarr_gather(t, W, &oW);
        OArr *oarrs[3] = {&oZ, &oD, &oW};
        OrnRtArg args[3] = {{Z, NULL}, {D, NULL}, {NULL, dW}};
        OrnRtLoop loop = {&plan, args, tok_body, NULL, NULL, NULL, 0};
        orn_rt_set_seed(t->rt, 99);
        OK(t, orn_rt_run(t->rt, &loop));
        int64_t ntr;
        const OrnRtTraceEntry *tr = orn_rt_trace(t->rt, &ntr);
        Oracle o;
        oracle_init(&o, t, &plan, oarrs, NULL, NULL);
        oracle_replay(&o, tok_body, NULL, tr, ntr, NULL, 99, ((uint64_t)(44 + run) << 32) | 0);
        oracle_free(&o);
        CHECK(t, oarr_same(t, Z, &oZ) && oarr_same(t, D, &oD) && oarr_same(t, W, &oW));
        double s1, s2;
        OK(t, orn_dsm_sum(D, &s1));
        OK(t, orn_dsm_sum(W, &s2));
        CHECK(t, s1 == (double)Z->nnz && s2 == (double)Z->nnz);
        sums[run][0] = (int64_t)s1;
        sums[run][1] = (int64_t)s2;
        oarr_free(&oZ);
        oarr_free(&oD);
        oarr_free(&oW);
        orn_rt_buffer_free(dW);
        orn_dsm_free(Z);
        orn_dsm_free(D);
        orn_dsm_free(W);
    }
    CHECK(t, sums[0][0] == sums[1][0]);
    orn_rt_set_seed(t->rt, 0);
}

/* Two runs from the same start give bit-identical arrays (buffers, prefetch, rounds). */
static int det_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *w = &b->views[1], *dw = &b->views[2];
    const float *v = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1];
        orn_rt_block_key(b, e, k);
        for (int q = 0; q < 3; q++) {
            int64_t f[1] = {(k[0] * (q + 3) + q) % 50};
            float x = orn_rt_get_f32(w, f);
            orn_rt_add_f32(dw, f, 0.01f * (v[e] - x));
        }
    }
    return 0;
}

static void test_determinism(TestEnv *t)
{
    int64_t dims[1] = {333}, wd[1] = {50};
    static const OrnRtPlanArray arrays[3] = {
        {"v", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"w", ORN_RT_PREFETCHED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
        {"dw", ORN_RT_BUFFERED, 1, {-1, -1, -1, -1}, 0, {0}, {0}},
    };
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      46,
                      "test_loops.c",
                      5,
                      ORN_RT_1D,
                      ORN_RT_1D,
                      0,
                      1,
                      1,
                      {0, 0},
                      {0, 0},
                      {{0}},
                      3,
                      3,
                      arrays,
                      0,
                      NULL,
                      0};
    void *first = NULL;
    for (int run = 0; run < 2; run++) {
        OrnDsmArray *v = NULL, *w = NULL;
        OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 1, dims, 8, 1, &v));
        OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F32, 1, wd, &w));
        OrnRtBuffer *dw = NULL;
        OK(t, orn_rt_buffer_new(t->rt, w, NULL, NULL, 0, &dw));
        OrnRtArg args[3] = {{v, NULL}, {w, NULL}, {NULL, dw}};
        OrnRtLoop loop = {&plan, args, det_body, NULL, NULL, NULL, 0};
        for (int epoch = 0; epoch < 4; epoch++) OK(t, orn_rt_run(t->rt, &loop));
        int64_t n, *k;
        void *vals;
        OK(t, orn_dsm_gather(w, &n, &k, &vals));
        if (run == 0)
            first = vals;
        else {
            CHECK(t, !memcmp(first, vals, 50 * 4));
            free(vals);
        }
        orn_rt_buffer_free(dw);
        orn_dsm_free(v);
        orn_dsm_free(w);
    }
    free(first);
}

/* ---------------------------------------------------------------- dense flushes to owners */

/* Every iteration adds to every element of a 2-D target (so flushes send owners dense
 * slices), integers so that any order of adds gives the same sums. */
static int grid_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    OrnRtView *dg = &b->views[1];
    (void)rt;
    (void)env;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1];
        orn_rt_block_key(b, e, k);
        for (int64_t i = 0; i < 9; i++)
            for (int64_t j = 0; j < 14; j++) {
                int64_t g[2] = {i, j};
                orn_rt_add_f64(dg, g, (double)((k[0] + 3 * i + 7 * j) % 11));
            }
    }
    return 0;
}

/* The flush of a dense store to owners whose tiles are not one range of the store: column
 * bands, and a 2 x 2 grid (runs packed), then row bands (in place), against the serial sums,
 * with flushes inside the loop and at its end. */
static void test_owner_slices(TestEnv *t)
{
    int64_t dims[1] = {157}, gd[2] = {9, 14};
    static const OrnRtPlanArray arrays[2] = {
        {"v", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"dg", ORN_RT_BUFFERED, 2, {-1, -1, -1, -1}, 0, {0}, {0}},
    };
    OrnRtPlan plan = {.version = ORN_RT_PLAN_VERSION,
                      .loop_id = 46,
                      .file = "test_loops.c",
                      .line = 5,
                      .strategy = ORN_RT_1D,
                      .inner = ORN_RT_1D,
                      .nkeys = 1,
                      .npart = 1,
                      .flush_every = 2,
                      .narrays = 2,
                      .arrays = arrays};
    double want[9 * 14] = {0};
    for (int64_t k = 0; k < dims[0]; k++)
        for (int64_t i = 0; i < 9; i++)
            for (int64_t j = 0; j < 14; j++) want[i * 14 + j] += (double)((k + 3 * i + 7 * j) % 11);
    int shapes[3][2] = {{1, t->size}, {2, 2}, {t->size, 1}};
    for (int sh = 0; sh < 3; sh++) {
        OrnDsmPart part;
        OK(t, orn_dsm_part_init(&part, 2, shapes[sh]));
        for (int d = 0; d < 2; d++) orn_dsm_bounds_uniform(part.bounds[d], gd[d], part.nb[d]);
        for (int64_t q = 0; q < part.ntiles; q++) part.owner[q] = (int)(q % t->size);
        OrnDsmArray *v = NULL, *g = NULL;
        OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 1, dims, 8, 1, &v));
        OK(t, orn_dsm_dense_part(t->dsm, ORN_DSM_F64, 2, gd, &part, &g));
        orn_dsm_part_free(&part);
        OrnRtBuffer *dg = NULL;
        OK(t, orn_rt_buffer_new(t->rt, g, NULL, NULL, sh == 1 ? 5 : 0, &dg));
        OrnRtArg args[2] = {{v, NULL}, {NULL, dg}};
        OrnRtLoop loop = {&plan, args, grid_body, NULL, NULL, NULL, 0};
        for (int run = 0; run < 2; run++) OK(t, orn_rt_run(t->rt, &loop));
        int64_t n, *k;
        void *vals;
        OK(t, orn_dsm_gather(g, &n, &k, &vals));
        CHECK(t, n == 9 * 14);
        for (int64_t e = 0; e < n; e++)
            CHECK(t, ((double *)vals)[e] == 2 * want[e]); /* row-major */
        free(k);
        free(vals);
        orn_rt_buffer_free(dg);
        orn_dsm_free(v);
        orn_dsm_free(g);
    }
}

/* ---------------------------------------------------------------- errors */

static int failing_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)env;
    (void)b;
    return orn_rt_body_error(rt, "division by zero at line 12") ? 1 : 1;
}

static int oob_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    int64_t k[1] = {-1};
    (void)orn_rt_get_f32(&b->views[0], k);
    return 0;
}

static void test_errors(TestEnv *t)
{
    int64_t dims[1] = {64}, d2[2] = {4, 4};
    OrnDsmArray *a = NULL, *m = NULL;
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F32, 1, dims, &a));
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F32, 2, d2, &m));
    static const OrnRtPlanArray rot[2] = {
        {"a", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"m", ORN_RT_ROTATED, 2, {0, -1, -1, -1}, 0, {0}, {0}}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      47,
                      "prog.orn",
                      9,
                      ORN_RT_1D,
                      ORN_RT_1D,
                      0,
                      1,
                      1,
                      {0, 0},
                      {0, 0},
                      {{0}},
                      0,
                      2,
                      rot,
                      0,
                      NULL,
                      0};
    OrnRtArg args[2] = {{a, NULL}, {m, NULL}};
    OrnRtLoop loop = {&plan, args, failing_body, NULL, NULL, NULL, 0};
    CHECK(t, orn_rt_run(t->rt, &loop) == ORN_E_PLAN);
    CHECK(t, !strcmp(orn_rt_error(t->rt), "parallel_for at prog.orn:9 (1d): array m: only the 2d "
                                          "and 2d_ordered strategies rotate "
                                          "arrays"));
    plan.narrays = 1;
    plan.npart = 2;
    CHECK(t, orn_rt_run(t->rt, &loop) == ORN_E_PLAN);
    CHECK(t,
          strstr(orn_rt_error(t->rt), "strategy needs 1 partitioned key dimensions, plan has 2"));
    plan.npart = 1;
    /* Every rank has blocks (2 per rank): all fail the same way, before any collective. */
    CHECK(t, orn_rt_run(t->rt, &loop) == ORN_E_BODY);
    CHECK(t, !strcmp(orn_rt_error(t->rt),
                     "parallel_for at prog.orn:9 (1d): division by zero at line 12"));
    loop.body = oob_body;
    CHECK(t, orn_rt_run(t->rt, &loop) == ORN_E_RANGE);
    CHECK(t, strstr(orn_rt_error(t->rt), "read of a[-1] (partitioned): outside the array"));
    orn_dsm_free(a);
    orn_dsm_free(m);
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    test_accumulators(&t);
    test_rng(&t);
    test_serial_remote(&t);
    test_tokens(&t);
    test_determinism(&t);
    test_owner_slices(&t);
    test_errors(&t);
    return t_finish(&t, "test_loops");
}
