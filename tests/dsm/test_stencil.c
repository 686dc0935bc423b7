/* test_stencil.c: ordered loops. A 5-point Gauss-Seidel sweep (@ordered, strategy
 * 2d_ordered: a wavefront of 2-D blocks; neighbours in other blocks through the prefetch
 * cache, or fetched on demand) and a skewed stencil whose dependences include (1, -1)
 * (strategy unimodular, T = [[1, 0], [1, 1]]), both bit-identical to the serial loop in key
 * order at every rank count, with several block counts. Also a sparse ordered loop. */
#include <math.h>

#include "oracle.h"

enum { NR = 23, NC = 31 };

static double U_at(OrnRtView *U, int64_t i, int64_t j)
{
    int64_t k[2] = {i, j};
    return orn_rt_get_f64(U, k);
}

/* Gauss-Seidel: u = (N + S + W + E) / 4 inside, boundary fixed. */
static int gs_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0];
    double *u = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        int64_t i = k[0], j = k[1];
        if (i == 0 || j == 0 || i == NR - 1 || j == NC - 1) continue;
        u[e] =
            0.25 * (U_at(U, i - 1, j) + U_at(U, i + 1, j) + U_at(U, i, j - 1) + U_at(U, i, j + 1));
        b->acc[0].f64 = fmax(b->acc[0].f64, fabs(u[e]));
    }
    return 0;
}

static int gs_prefetch(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0];
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        int64_t i = k[0], j = k[1];
        if (i == 0 || j == 0 || i == NR - 1 || j == NC - 1) continue;
        int64_t nb[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
        for (int q = 0; q < 4; q++) orn_rt_prefetch(U, nb[q]);
    }
    return 0;
}

/* A skewed 6-point stencil: reads (i-1, j+1) (already updated) and (i+1, j-1) (not yet):
 * dependence vectors (1, -1), (1, 0), (0, 1). */
static int skew_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0];
    double *u = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        int64_t i = k[0], j = k[1];
        if (i == 0 || j == 0 || i == NR - 1 || j == NC - 1) continue;
        u[e] = (U_at(U, i - 1, j) + U_at(U, i, j - 1) + U_at(U, i - 1, j + 1) + U_at(U, i + 1, j) +
                U_at(U, i, j + 1) + U_at(U, i + 1, j - 1)) /
                   6.0 +
               0.01;
    }
    return 0;
}

static int skew_prefetch(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0];
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        int64_t i = k[0], j = k[1];
        if (i == 0 || j == 0 || i == NR - 1 || j == NC - 1) continue;
        int64_t nb[6][2] = {{i - 1, j}, {i, j - 1}, {i - 1, j + 1},
                            {i + 1, j}, {i, j + 1}, {i + 1, j - 1}};
        for (int q = 0; q < 6; q++) orn_rt_prefetch(U, nb[q]);
    }
    return 0;
}

static void ordered(TestEnv *t, OrnRtStrategy strat, orn_rt_body_fn body, orn_rt_prefetch_fn pf,
                    int bpr, int c0, int c1)
{
    int64_t dims[2] = {NR, NC};
    OrnDsmArray *U = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 5, 0, &U));
    orn_rt_set_blocks_per_rank(t->rt, bpr);
    /* 2d_ordered: no halo declared, so neighbours come through the cache (the prefetch
     * pass, or on demand); unimodular: the halo the compiler gives, so that at several
     * ranks it runs in place as a skewed wavefront with travelling rows (sched_skew.c) */
    static const OrnRtPlanArray plain[1] = {
        {"U", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}}};
    static const OrnRtPlanArray halo[1] = {
        {"U", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {1, 1, 0, 0}, {1, 1, 0, 0}}};
    const OrnRtPlanArray *arrays = strat == ORN_RT_UNIMODULAR ? halo : plain;
    static const OrnRtPlanAcc accs[1] = {{"big", ORN_RT_ACC_MAX, ORN_RT_F64}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      20,
                      "test_stencil.c",
                      1,
                      strat,
                      ORN_RT_2D_ORDERED,
                      1,
                      2,
                      2,
                      {0, 1},
                      {c0, c1},
                      {{1, 0}, {1, 1}},
                      0,
                      1,
                      arrays,
                      1,
                      accs,
                      0};
    if (strat != ORN_RT_UNIMODULAR) plan.transform[1][0] = 0;
    OArr oU;
    oarr_gather(t, U, &oU);
    OArr *oarrs[1] = {&oU};
    for (int sweep = 0; sweep < 3; sweep++) {
        OrnRtArg args[1] = {{U, NULL}};
        OrnRtScalar acc[1] = {{.f64 = 0}};
        OrnRtLoop loop = {&plan, args, body, pf, NULL, acc, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        Oracle o;
        oracle_init(&o, t, &plan, oarrs, NULL, NULL);
        OrnRtScalar oacc[1] = {{.f64 = 0}};
        oracle_serial(&o, body, NULL, oacc, 0, 0);
        oracle_free(&o);
        CHECK(t, oarr_same(t, U, &oU));
        /* max is exact whatever the association */
        CHECK(t, acc[0].f64 == oacc[0].f64);
        OrnRtStats st;
        orn_rt_stats(t->rt, &st);
        int64_t got[2] = {st.prefetched, st.misses};
        OK(t, orn_dsm_allreduce_i64(t->dsm, got, 2, ORN_DSM_SUM));
        if (t->size > 1 && pf) CHECK(t, got[0] > 0);
        if (t->size > 1 && !pf && strat == ORN_RT_2D_ORDERED) CHECK(t, got[1] > 0);
    }
    oarr_free(&oU);
    orn_dsm_free(U);
}

/* An ordered loop over a sparse space: x[i, j] = x[i, j] + x[i - 1, j] (0 if absent), a
 * running sum down the columns, over the stored elements only. */
static int colsum_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *S = &b->views[0];
    float *v = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        if (k[0] == 0) continue;
        int64_t up[2] = {k[0] - 1, k[1]};
        v[e] += orn_rt_get_f32(S, up);
    }
    return 0;
}

static void sparse_ordered(TestEnv *t)
{
    int64_t dims[2] = {40, 17}, n = 0;
    int64_t *keys = malloc(40 * 17 * 16);
    float *vals = malloc(40 * 17 * 4);
    for (int64_t i = 0; i < 40; i++)
        for (int64_t j = 0; j < 17; j++)
            if ((i * 3 + j * 5) % 4 != 0 && (i * 17 + j) % t->size == t->rank) {
                keys[2 * n] = i;
                keys[2 * n + 1] = j;
                vals[n++] = (float)((i + 2 * j) % 7) * 0.5f;
            }
    OrnDsmArray *S = NULL;
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, n, keys, vals, NULL, NULL, &S));
    free(keys);
    free(vals);
    static const OrnRtPlanArray arrays[1] = {
        {"S", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      21,
                      "test_stencil.c",
                      2,
                      ORN_RT_2D_ORDERED,
                      ORN_RT_2D_ORDERED,
                      1,
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
    OArr oS;
    oarr_gather(t, S, &oS);
    OArr *oarrs[1] = {&oS};
    OrnRtArg args[1] = {{S, NULL}};
    OrnRtLoop loop = {&plan, args, colsum_body, NULL, NULL, NULL, 0};
    OK(t, orn_rt_run(t->rt, &loop));
    Oracle o;
    oracle_init(&o, t, &plan, oarrs, NULL, NULL);
    oracle_serial(&o, colsum_body, NULL, NULL, 0, 0);
    oracle_free(&o);
    CHECK(t, oarr_same(t, S, &oS));
    oarr_free(&oS);
    orn_dsm_free(S);
}

/* Column recurrence u[i, j] += 0.5 u[i-1, j]: dependence (1, 0) only. With the interchange
 * T = [[0, 1], [1, 0]] the transformed blocks along j are independent (unimodular, one
 * partitioned dimension, inner 1d). */
static int col_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0];
    double *u = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        if (k[0] > 0) u[e] += 0.5 * U_at(U, k[0] - 1, k[1]);
    }
    return 0;
}

static void interchange(TestEnv *t)
{
    int64_t dims[2] = {NR, NC};
    OrnDsmArray *U = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 6, 0, &U));
    static const OrnRtPlanArray arrays[1] = {
        {"U", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}}};
    OrnRtPlan plan = {.version = ORN_RT_PLAN_VERSION,
                      .loop_id = 22,
                      .file = "test_stencil.c",
                      .line = 3,
                      .strategy = ORN_RT_UNIMODULAR,
                      .inner = ORN_RT_1D,
                      .ordered = 1,
                      .nkeys = 2,
                      .npart = 1,
                      .part_dims = {0, 0},
                      .transform = {{0, 1}, {1, 0}},
                      .narrays = 1,
                      .arrays = arrays};
    OArr oU;
    oarr_gather(t, U, &oU);
    OArr *oarrs[1] = {&oU};
    OrnRtArg args[1] = {{U, NULL}};
    OrnRtLoop loop = {&plan, args, col_body, NULL, NULL, NULL, 0};
    OK(t, orn_rt_run(t->rt, &loop));
    OrnRtStats st;
    orn_rt_stats(t->rt, &st);
    CHECK(t, st.steps == 1);
    Oracle o;
    oracle_init(&o, t, &plan, oarrs, NULL, NULL);
    oracle_serial(&o, col_body, NULL, NULL, 0, 0);
    oracle_free(&o);
    CHECK(t, oarr_same(t, U, &oU));
    oarr_free(&oU);
    orn_dsm_free(U);
}

/* An edit-distance-like wavefront with arrays indexed by one key: u = Gauss-Seidel +
 * a[i - 1] (partitioned with the rows, read-only, a halo) + b[j - 1] (rotated, read-only, a
 * halo: ghost cells) + the stored values of row j of sp (sparse, rotated, a row view); then
 * cs[j] += u (rotated, written: the column's running state travels with the column block)
 * and rs[i] += u (partitioned, written). */
static int pipe_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0], *A = &b->views[1], *B = &b->views[2], *CS = &b->views[3],
              *RS = &b->views[4], *SP = &b->views[5];
    double *u = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        int64_t i = k[0], j = k[1], ki[1] = {i}, kj[1] = {j};
        if (i > 0 && j > 0 && i < NR - 1 && j < NC - 1) {
            int64_t pi[1] = {i - 1}, pj[1] = {j - 1};
            const int64_t *keys;
            const void *vals;
            int64_t n;
            orn_rt_row(SP, j, &keys, &vals, &n);
            double side = 0;
            for (int64_t x = 0; x < n; x++)
                side += (double)((const float *)vals)[x] * (double)(keys[2 * x + 1] + 1);
            u[e] = 0.25 * (U_at(U, i - 1, j) + U_at(U, i + 1, j) + U_at(U, i, j - 1) +
                           U_at(U, i, j + 1)) +
                   0.01 * orn_rt_get_f64(A, pi) + 0.02 * orn_rt_get_f64(B, pj) + 0.001 * side;
        }
        *(double *)orn_rt_wptr(CS, kj) += u[e];
        *(double *)orn_rt_wptr(RS, ki) += u[e];
    }
    return 0;
}

static void pipeline(TestEnv *t, int c0, int c1, int64_t replicate_max)
{
    int64_t dims[2] = {NR, NC}, dr[1] = {NR}, dc[1] = {NC}, ds[2] = {NC, 5}, n = 0;
    OrnDsmArray *U = NULL, *A = NULL, *B = NULL, *CS = NULL, *RS = NULL, *SP = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 7, 0, &U));
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 1, dr, 8, 0, &A));
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 1, dc, 9, 0, &B));
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F64, 1, dc, &CS));
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F64, 1, dr, &RS));
    int64_t keys[NC * 5 * 2];
    float vals[NC * 5];
    for (int64_t j = 0; j < NC; j++)
        for (int64_t f = 0; f < 5; f++)
            if ((j * 7 + f * 3) % 4 != 0 && (j * 5 + f) % t->size == t->rank) {
                keys[2 * n] = j;
                keys[2 * n + 1] = f;
                vals[n++] = (float)((j + f) % 5) * 0.25f;
            }
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, ds, 1, n, keys, vals, NULL, NULL, &SP));
    orn_rt_set_blocks_per_rank(t->rt, 2);
    orn_rt_set_replicate_max(t->rt, replicate_max);
    static const OrnRtPlanArray arrays[6] = {
        {"U", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {1, 1, 0, 0}, {1, 1, 0, 0}},
        {"a", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 1, {1, 0, 0, 0}, {0}},
        {"b", ORN_RT_ROTATED, 1, {1, -1, -1, -1}, 1, {1, 0, 0, 0}, {0}},
        {"cs", ORN_RT_ROTATED, 1, {1, -1, -1, -1}, 0, {0}, {0}},
        {"rs", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"sp", ORN_RT_ROTATED, 2, {1, -1, -1, -1}, 1, {0}, {0}}};
    OrnRtPlan plan = {.version = ORN_RT_PLAN_VERSION,
                      .loop_id = 23,
                      .file = "test_stencil.c",
                      .line = 4,
                      .strategy = ORN_RT_2D_ORDERED,
                      .inner = ORN_RT_2D_ORDERED,
                      .ordered = 1,
                      .nkeys = 2,
                      .npart = 2,
                      .part_dims = {0, 1},
                      .part_count = {c0, c1},
                      .narrays = 6,
                      .arrays = arrays};
    OrnDsmArray *arrs[6] = {U, A, B, CS, RS, SP};
    OArr o[6];
    OArr *oarrs[6];
    for (int k = 0; k < 6; k++) {
        oarr_gather(t, arrs[k], &o[k]);
        oarrs[k] = &o[k];
    }
    for (int sweep = 0; sweep < 2; sweep++) {
        OrnRtArg args[6] = {{U, NULL}, {A, NULL}, {B, NULL}, {CS, NULL}, {RS, NULL}, {SP, NULL}};
        OrnRtLoop loop = {&plan, args, pipe_body, NULL, NULL, NULL, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        Oracle or ;
        oracle_init(& or, t, &plan, oarrs, NULL, NULL);
        oracle_serial(& or, pipe_body, NULL, NULL, 0, 0);
        oracle_free(& or);
        for (int k = 0; k < 6; k++) CHECK(t, oarr_same(t, arrs[k], &o[k]));
        /* travelling column blocks of b take ghost cells; copied ones need none */
        OrnRtStats st;
        orn_rt_stats(t->rt, &st);
        int64_t ghosts = st.ghosts;
        OK(t, orn_dsm_allreduce_i64(t->dsm, &ghosts, 1, ORN_DSM_SUM));
        if (t->size > 1 && sweep == 0) CHECK(t, (ghosts > 0) == (replicate_max == 0));
    }
    /* every column block is home: the arrays are whole and in place for the next loop */
    for (int k = 0; k < 6; k++) {
        for (int64_t x = 0; x < arrs[k]->part.ntiles; x++)
            CHECK(t, (arrs[k]->part.owner[x] == t->rank || arrs[k]->part.owner[x] == ORN_DSM_ALL) ==
                         (arrs[k]->tiles[x].held != 0));
        oarr_free(&o[k]);
        orn_dsm_free(arrs[k]);
    }
    orn_rt_set_replicate_max(t->rt, (int64_t)64 << 20);
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    ordered(&t, ORN_RT_2D_ORDERED, gs_body, gs_prefetch, 2, 0, 0);
    ordered(&t, ORN_RT_2D_ORDERED, gs_body, gs_prefetch, 1, 3, 5);
    ordered(&t, ORN_RT_2D_ORDERED, gs_body, NULL, 3, 0, 0);
    /* One-row blocks: an element read on demand before its block runs is read again
     * after; a cache kept across steps would serve the old value. */
    ordered(&t, ORN_RT_2D_ORDERED, gs_body, NULL, 1, NR, 3);
    ordered(&t, ORN_RT_2D_ORDERED, gs_body, gs_prefetch, 1, NR, 3);
    /* unimodular over a dense space: serially in key order on the space itself
     * (rt_choose_unskewed), then the transformed copy's wavefront ($ORN_UNIMODULAR) */
    ordered(&t, ORN_RT_UNIMODULAR, skew_body, NULL, 2, 0, 0);
    interchange(&t);
    setenv("ORN_UNIMODULAR", "1", 1);
    ordered(&t, ORN_RT_UNIMODULAR, skew_body, skew_prefetch, 2, 0, 0);
    ordered(&t, ORN_RT_UNIMODULAR, skew_body, NULL, 1, 4, 2);
    interchange(&t);
    unsetenv("ORN_UNIMODULAR");
    sparse_ordered(&t);
    /* rotated arrays in a wavefront: travelling (a last row whose rank does not precede
     * rank 0 in the ring with 5 rows of blocks), and copied to every rank */
    pipeline(&t, 0, 0, 0);
    pipeline(&t, 5, 3, 0);
    pipeline(&t, 0, 0, (int64_t)64 << 20);
    return t_finish(&t, "test_stencil");
}
