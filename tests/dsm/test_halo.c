/* test_halo.c: reads of read-only arrays outside the block's box in unordered loops.
 *
 * Stencils read their neighbours: with the plan's halo widths the runtime copies the ghost
 * cells of read-only partitioned and rotated arrays before the loop, so every such read
 * takes the view's fast path (no slow path, no fetch). Reads beyond the halo
 * (ORN_RT_HALO_ANY, sparse arrays) go through the cache or are fetched on demand. The loops
 * write only their own elements, so the result is unique: every array and accumulator must
 * equal the serial computation bit for bit, at every rank count and block count. An array
 * that a buffer of the loop updates gets no ghost cells: there the result is that of the
 * serial replay of the recorded rounds (oracle.h). */
#include <math.h>

#include "oracle.h"

enum { NR = 23, NC = 17 };

/* Plan arrays, named fields: the halo widths are the point here. */
static OrnRtPlanArray arr(const char *name, OrnRtRole role, int ndim, int k0, int k1, int ro,
                          int lo0, int lo1, int hi0, int hi1)
{
    OrnRtPlanArray a = {.name = name,
                        .role = role,
                        .ndim = ndim,
                        .key_dim = {k0, k1, -1, -1},
                        .read_only = ro,
                        .halo_lo = {lo0, lo1, 0, 0},
                        .halo_hi = {hi0, hi1, 0, 0}};
    return a;
}

static OrnRtPlan plan_of(OrnRtStrategy s, int ordered, int nkeys, const OrnRtPlanArray *arrays,
                         int n, const OrnRtPlanAcc *accs, int naccs)
{
    OrnRtPlan p = {.version = ORN_RT_PLAN_VERSION,
                   .loop_id = 60,
                   .file = "halo.orn",
                   .line = 3,
                   .strategy = s,
                   .inner = s,
                   .ordered = ordered,
                   .nkeys = nkeys,
                   .npart = s == ORN_RT_2D ? 2 : 1,
                   .part_dims = {0, 1},
                   .narrays = n,
                   .arrays = arrays,
                   .naccs = naccs,
                   .accs = accs};
    for (int i = 0; i < ORN_RT_MAXDIM; i++) p.transform[i][i] = 1;
    return p;
}

static const OrnRtPlanAcc ACCS[2] = {{"big", ORN_RT_ACC_MAX, ORN_RT_F64},
                                     {"slow", ORN_RT_ACC_SUM, ORN_RT_I64}};

/* A read that must take the fast path: counted in accumulator 1 when it does not. */
static double fast_get(const OrnRtBlock *b, OrnRtView *v, int64_t i, int64_t j)
{
    int64_t k[2] = {i, j};
    if (!orn_rt_local(v, k)) b->acc[1].i64++;
    return orn_rt_get_f64(v, k);
}

static double fast_get1(const OrnRtBlock *b, OrnRtView *v, int64_t i)
{
    int64_t k[1] = {i};
    if (!orn_rt_local(v, k)) b->acc[1].i64++;
    return orn_rt_get_f64(v, k);
}

/* ---------------------------------------------------------------- 1d */

/* The stencil of the 1d loops, on a reader of U: asymmetric widths, 2 below and 3 above
 * along i, 1 along j. The reference calls it with a plain array. */
typedef double (*UGet)(const void *ctx, int64_t i, int64_t j);

static double stencil(UGet get, const void *ctx, int64_t i, int64_t j, double u)
{
    double r = -4.0 * u;
    if (i >= 2) r += 0.5 * get(ctx, i - 2, j);
    if (i + 3 < NR) r += 0.25 * get(ctx, i + 3, j);
    if (j > 0) r += get(ctx, i, j - 1);
    if (j + 1 < NC) r += get(ctx, i, j + 1);
    return r;
}

typedef struct BodyCtx {
    const OrnRtBlock *b;
    OrnRtView *v;
} BodyCtx;

static double view_get(const void *ctx, int64_t i, int64_t j)
{
    const BodyCtx *c = ctx;
    return fast_get(c->b, c->v, i, j);
}

static double plain_get(const void *ctx, int64_t i, int64_t j)
{
    return ((const double *)ctx)[i * NC + j];
}

/* Iteration space U (read-only), result into R[i, j]. */
static int u_space_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0], *R = &b->views[1];
    const double *u = b->vals;
    BodyCtx c = {b, U};
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        double r = stencil(view_get, &c, k[0], k[1], u[e]);
        *(double *)orn_rt_wptr(R, k) = r;
        b->acc[0].f64 = fmax(b->acc[0].f64, fabs(r));
    }
    return 0;
}

/* Iteration space R (written), U a second, read-only array. */
static int r_space_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[1];
    double *r = b->vals;
    BodyCtx c = {b, U};
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        r[e] = stencil(view_get, &c, k[0], k[1], fast_get(b, U, k[0], k[1]));
        b->acc[0].f64 = fmax(b->acc[0].f64, fabs(r[e]));
    }
    return 0;
}

/* Sum over ranks of this loop's statistics: prefetched, misses, ghosts. */
static void loop_stats(TestEnv *t, int64_t *got)
{
    OrnRtStats st;
    orn_rt_stats(t->rt, &st);
    got[0] = st.prefetched;
    got[1] = st.misses;
    got[2] = st.ghosts;
    OK(t, orn_dsm_allreduce_i64(t->dsm, got, 3, ORN_DSM_SUM));
}

static void stencil_1d(TestEnv *t, int bpr, int ordered, int u_space)
{
    int64_t dims[2] = {NR, NC};
    OrnDsmArray *U = NULL, *R = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 11, 1, &U));
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 12, 0, &R));
    orn_rt_set_blocks_per_rank(t->rt, bpr);
    OrnRtPlanArray arrays[2];
    arrays[u_space ? 0 : 1] = arr("U", ORN_RT_PARTITIONED, 2, 0, 1, 1, 2, 1, 3, 1);
    arrays[u_space ? 1 : 0] = arr("R", ORN_RT_PARTITIONED, 2, 0, 1, 0, 0, 0, 0, 0);
    OrnRtPlan plan = plan_of(ORN_RT_1D, ordered, 2, arrays, 2, ACCS, 2);
    OArr oU;
    oarr_gather(t, U, &oU);
    double *want = malloc(sizeof(double) * NR * NC), big = 0;
    for (int64_t i = 0; i < NR; i++)
        for (int64_t j = 0; j < NC; j++) {
            double *uv = (double *)oU.vals;
            want[i * NC + j] = stencil(plain_get, uv, i, j, uv[i * NC + j]);
            big = fmax(big, fabs(want[i * NC + j]));
        }
    /* Twice: the second run finds its partitions in place. */
    for (int run = 0; run < 2; run++) {
        OrnRtArg args[2] = {{u_space ? U : R, NULL}, {u_space ? R : U, NULL}};
        OrnRtScalar acc[2] = {{.f64 = 0}, {.i64 = 0}};
        OrnRtLoop loop = {&plan, args, u_space ? u_space_body : r_space_body, NULL, NULL, acc, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        int64_t got[3];
        loop_stats(t, got);
        CHECK(t, acc[0].f64 == big);
        CHECK(t, acc[1].i64 == 0); /* every halo read on the fast path */
        CHECK(t, got[0] == 0);     /* nothing prefetched */
        CHECK(t, got[1] == 0);     /* nothing fetched on demand */
        if (t->size > 1) CHECK(t, got[2] > 0);
        OArr oR, oU2;
        oarr_gather(t, R, &oR);
        oarr_gather(t, U, &oU2);
        CHECK(t, !memcmp(oR.vals, want, sizeof(double) * NR * NC));
        CHECK(t, !memcmp(oU2.vals, oU.vals, sizeof(double) * NR * NC)); /* untouched */
        oarr_free(&oR);
        oarr_free(&oU2);
    }
    free(want);
    oarr_free(&oU);
    orn_dsm_free(U);
    orn_dsm_free(R);
}

/* ---------------------------------------------------------------- 2d */

/* Iteration space U (read-only, halo 1 along both keys), G[i] partitioned and H[j]
 * rotated, both read-only with halos, result into R[i, j]. */
static double stencil2(UGet get, const void *ctx, const double *g, const double *h, int64_t i,
                       int64_t j, double u)
{
    double r = -4.0 * u;
    if (i > 0) r += get(ctx, i - 1, j);
    if (i + 1 < NR) r += get(ctx, i + 1, j);
    if (j > 0) r += get(ctx, i, j - 1);
    if (j + 1 < NC) r += get(ctx, i, j + 1);
    if (i > 0) r += 0.5 * g[i - 1];
    if (i + 2 < NR) r += 0.25 * g[i + 2];
    if (j >= 2) r += 0.125 * h[j - 2];
    if (j + 1 < NC) r += h[j + 1];
    return r;
}

typedef struct Body2 {
    const OrnRtBlock *b;
    OrnRtView *U, *G, *H;
} Body2;

static double view2_get(const void *ctx, int64_t i, int64_t j)
{
    const Body2 *c = ctx;
    return fast_get(c->b, c->U, i, j);
}

static int body_2d(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    Body2 c = {b, &b->views[0], &b->views[2], &b->views[3]};
    OrnRtView *R = &b->views[1];
    const double *u = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        int64_t i = k[0], j = k[1];
        /* the neighbours of G and H the stencil reads, gathered through the views */
        double g[NR], h[NC];
        if (i > 0) g[i - 1] = fast_get1(b, c.G, i - 1);
        if (i + 2 < NR) g[i + 2] = fast_get1(b, c.G, i + 2);
        if (j >= 2) h[j - 2] = fast_get1(b, c.H, j - 2);
        if (j + 1 < NC) h[j + 1] = fast_get1(b, c.H, j + 1);
        double r = stencil2(view2_get, &c, g, h, i, j, u[e]);
        *(double *)orn_rt_wptr(R, k) = r;
        b->acc[0].f64 = fmax(b->acc[0].f64, fabs(r));
    }
    return 0;
}

static void stencil_2d(TestEnv *t, int bpr)
{
    int64_t dims[2] = {NR, NC}, gd[1] = {NR}, hd[1] = {NC};
    OrnDsmArray *U = NULL, *R = NULL, *G = NULL, *H = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 21, 1, &U));
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F64, 2, dims, &R));
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 1, gd, 22, 1, &G));
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 1, hd, 23, 1, &H));
    orn_rt_set_blocks_per_rank(t->rt, bpr);
    OrnRtPlanArray arrays[4] = {
        arr("U", ORN_RT_PARTITIONED, 2, 0, 1, 1, 1, 1, 1, 1),
        arr("R", ORN_RT_PARTITIONED, 2, 0, 1, 0, 0, 0, 0, 0),
        arr("G", ORN_RT_PARTITIONED, 1, 0, -1, 1, 1, 0, 2, 0),
        arr("H", ORN_RT_ROTATED, 1, 1, -1, 1, 2, 0, 1, 0),
    };
    OrnRtPlan plan = plan_of(ORN_RT_2D, 0, 2, arrays, 4, ACCS, 2);
    OArr oU, oG, oH;
    oarr_gather(t, U, &oU);
    oarr_gather(t, G, &oG);
    oarr_gather(t, H, &oH);
    double *want = malloc(sizeof(double) * NR * NC), big = 0;
    const double *uv = (const double *)oU.vals;
    for (int64_t i = 0; i < NR; i++)
        for (int64_t j = 0; j < NC; j++) {
            want[i * NC + j] = stencil2(plain_get, uv, (const double *)oG.vals,
                                        (const double *)oH.vals, i, j, uv[i * NC + j]);
            big = fmax(big, fabs(want[i * NC + j]));
        }
    for (int run = 0; run < 2; run++) {
        OrnRtArg args[4] = {{U, NULL}, {R, NULL}, {G, NULL}, {H, NULL}};
        OrnRtScalar acc[2] = {{.f64 = 0}, {.i64 = 0}};
        OrnRtLoop loop = {&plan, args, body_2d, NULL, NULL, acc, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        int64_t got[3];
        loop_stats(t, got);
        CHECK(t, acc[0].f64 == big);
        CHECK(t, acc[1].i64 == 0);
        CHECK(t, got[0] == 0 && got[1] == 0);
        if (t->size > 1) CHECK(t, got[2] > 0);
        OArr oR;
        oarr_gather(t, R, &oR);
        CHECK(t, !memcmp(oR.vals, want, sizeof(double) * NR * NC));
        oarr_free(&oR);
        /* H came home after its rotation, unchanged */
        CHECK(t, oarr_same(t, H, &oH));
    }
    free(want);
    oarr_free(&oU);
    oarr_free(&oG);
    oarr_free(&oH);
    orn_dsm_free(U);
    orn_dsm_free(R);
    orn_dsm_free(G);
    orn_dsm_free(H);
}

/* ---------------------------------------------------------------- beyond the halo */

/* R[i, j] = U[NR - 1 - i, j] - u: U is read anywhere along i (ORN_RT_HALO_ANY). */
static int mirror_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *U = &b->views[0], *R = &b->views[1];
    const double *u = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2], m[2];
        orn_rt_block_key(b, e, k);
        m[0] = NR - 1 - k[0];
        m[1] = k[1];
        double r = orn_rt_get_f64(U, m) - u[e];
        *(double *)orn_rt_wptr(R, k) = r;
        b->acc[0].f64 = fmax(b->acc[0].f64, fabs(r));
    }
    return 0;
}

static int mirror_prefetch(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        k[0] = NR - 1 - k[0];
        orn_rt_prefetch(&b->views[0], k);
    }
    return 0;
}

static void anywhere(TestEnv *t, int with_prefetch)
{
    int64_t dims[2] = {NR, NC};
    OrnDsmArray *U = NULL, *R = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 31, 1, &U));
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F64, 2, dims, &R));
    orn_rt_set_blocks_per_rank(t->rt, 2);
    OrnRtPlanArray arrays[2] = {
        arr("U", ORN_RT_PARTITIONED, 2, 0, 1, 1, ORN_RT_HALO_ANY, 0, ORN_RT_HALO_ANY, 0),
        arr("R", ORN_RT_PARTITIONED, 2, 0, 1, 0, 0, 0, 0, 0),
    };
    OrnRtPlan plan = plan_of(ORN_RT_1D, 0, 2, arrays, 2, ACCS, 2);
    OArr oU;
    oarr_gather(t, U, &oU);
    const double *uv = (const double *)oU.vals;
    double *want = malloc(sizeof(double) * NR * NC), big = 0;
    for (int64_t i = 0; i < NR; i++)
        for (int64_t j = 0; j < NC; j++) {
            want[i * NC + j] = uv[(NR - 1 - i) * NC + j] - uv[i * NC + j];
            big = fmax(big, fabs(want[i * NC + j]));
        }
    OrnRtArg args[2] = {{U, NULL}, {R, NULL}};
    OrnRtScalar acc[2] = {{.f64 = 0}, {.i64 = 0}};
    OrnRtLoop loop = {&plan, args, mirror_body, with_prefetch ? mirror_prefetch : NULL, NULL,
                      acc,   0};
    OK(t, orn_rt_run(t->rt, &loop));
    int64_t got[3];
    loop_stats(t, got);
    CHECK(t, acc[0].f64 == big);
    /* Rows of other ranks: announced and fetched in bulk, or fetched on demand. */
    if (t->size > 1) CHECK(t, with_prefetch ? got[0] > 0 && got[1] == 0 : got[1] > 0);
    OArr oR;
    oarr_gather(t, R, &oR);
    CHECK(t, !memcmp(oR.vals, want, sizeof(double) * NR * NC));
    oarr_free(&oR);
    free(want);
    oarr_free(&oU);
    orn_dsm_free(U);
    orn_dsm_free(R);
}

/* A sparse read-only iteration space read one row down (halo 1 above along i): sparse
 * arrays get no ghost cells, the neighbours come from held tiles or on demand. */
static int sparse_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *S = &b->views[0];
    const double *s = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2] = {b->keys[2 * e] + 1, b->keys[2 * e + 1]};
        if (k[0] >= NR) continue;
        double below = orn_rt_get_f64(S, k);
        b->acc[0].f64 = fmax(b->acc[0].f64, s[e] * below);
        b->acc[1].i64 += below != 0;
    }
    return 0;
}

static int stored(int64_t i, int64_t j)
{
    return (i * 7 + j * 3) % 4 != 0;
}

static void sparse_halo(TestEnv *t)
{
    int64_t dims[2] = {NR, NC}, n = 0;
    int64_t *keys = malloc(sizeof(int64_t) * 2 * NR * NC);
    double *vals = malloc(sizeof(double) * NR * NC);
    for (int64_t i = 0; i < NR; i++)
        for (int64_t j = 0; j < NC; j++)
            if (t->rank == 0 && stored(i, j)) {
                keys[2 * n] = i;
                keys[2 * n + 1] = j;
                vals[n++] = 1.0 + (double)((i * 31 + j * 17) % 29) / 7.0;
            }
    OrnDsmArray *S = NULL;
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F64, 2, dims, 1, n, keys, vals, NULL, NULL, &S));
    double big = 0;
    int64_t found = 0;
    for (int64_t i = 0; i + 1 < NR; i++)
        for (int64_t j = 0; j < NC; j++)
            if (stored(i, j) && stored(i + 1, j)) {
                double a = 1.0 + (double)((i * 31 + j * 17) % 29) / 7.0;
                double c = 1.0 + (double)(((i + 1) * 31 + j * 17) % 29) / 7.0;
                big = fmax(big, a * c);
                found++;
            }
    OrnRtPlanArray arrays[1] = {arr("S", ORN_RT_PARTITIONED, 2, 0, 1, 1, 0, 0, 1, 0)};
    OrnRtPlan plan = plan_of(ORN_RT_1D, 0, 2, arrays, 1, ACCS, 2);
    OrnRtArg args[1] = {{S, NULL}};
    OrnRtScalar acc[2] = {{.f64 = 0}, {.i64 = 0}};
    OrnRtLoop loop = {&plan, args, sparse_body, NULL, NULL, acc, 0};
    OK(t, orn_rt_run(t->rt, &loop));
    CHECK(t, acc[0].f64 == big);
    CHECK(t, acc[1].i64 == found);
    free(keys);
    free(vals);
    orn_dsm_free(S);
}

/* ---------------------------------------------------------------- a buffer's target */

enum { NB = 203 };

/* w is read-only in the body but a buffer of the loop updates it at every flush: no ghost
 * cells (they would go stale); reads beyond the block see the values as of the round's
 * start, as the oracle's replay of the trace does. */
static int64_t w_at(const OrnRtBlock *b, int64_t i)
{
    int64_t k[1] = {i};
    return i >= 0 && i < NB ? orn_rt_get_i64(&b->views[1], k) : 0;
}

static int buf_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    int64_t *s = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1];
        orn_rt_block_key(b, e, k);
        int64_t i = k[0], far[1] = {(i * 7) % NB};
        s[e] = w_at(b, i - 1) + 3 * w_at(b, i + 1) + 7 * w_at(b, i + 2);
        orn_rt_add_i64(&b->views[2], k, i + 1);
        orn_rt_add_i64(&b->views[2], far, 1);
    }
    return 0;
}

static int buf_prefetch(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1];
        orn_rt_block_key(b, e, k);
        int64_t nb[3][1] = {{k[0] - 1}, {k[0] + 1}, {k[0] + 2}};
        for (int q = 0; q < 3; q++) orn_rt_prefetch(&b->views[1], nb[q]);
    }
    return 0;
}

static void buffered_target(TestEnv *t, int64_t flush_every, int with_prefetch)
{
    int64_t dims[1] = {NB};
    OrnDsmArray *S = NULL, *w = NULL;
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_I64, 1, dims, &S));
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_I64, 1, dims, 41, 0, &w));
    OrnRtBuffer *dw = NULL;
    OK(t, orn_rt_buffer_new(t->rt, w, NULL, NULL, flush_every, &dw));
    orn_rt_set_blocks_per_rank(t->rt, 2);
    orn_rt_set_trace(t->rt, 1);
    OrnRtPlanArray arrays[3] = {arr("S", ORN_RT_PARTITIONED, 1, 0, -1, 0, 0, 0, 0, 0),
                                arr("w", ORN_RT_PARTITIONED, 1, 0, -1, 1, 1, 0, 2, 0),
                                arr("dw", ORN_RT_BUFFERED, 1, 0, -1, 0, 0, 0, 0, 0)};
    OrnRtPlan plan = plan_of(ORN_RT_1D, 0, 1, arrays, 3, NULL, 0);
    OArr oS, ow;
    oarr_gather(t, S, &oS);
    oarr_gather(t, w, &ow);
    OArr *oarrs[3] = {&oS, &ow, &ow};
    for (int run = 0; run < 2; run++) {
        OrnRtArg args[3] = {{S, NULL}, {w, NULL}, {NULL, dw}};
        OrnRtLoop loop = {&plan, args, buf_body, with_prefetch ? buf_prefetch : NULL,
                          NULL,  NULL, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        int64_t got[3], ntr;
        loop_stats(t, got);
        CHECK(t, got[2] == 0); /* no ghost cells */
        if (t->size > 1) CHECK(t, with_prefetch ? got[0] > 0 : got[1] > 0);
        const OrnRtTraceEntry *tr = orn_rt_trace(t->rt, &ntr);
        Oracle o;
        oracle_init(&o, t, &plan, oarrs, NULL, NULL);
        oracle_replay(&o, buf_body, NULL, tr, ntr, NULL, 0, 0);
        oracle_free(&o);
        CHECK(t, oarr_same(t, S, &oS));
        CHECK(t, oarr_same(t, w, &ow));
    }
    orn_rt_set_trace(t->rt, 0);
    oarr_free(&oS);
    oarr_free(&ow);
    orn_rt_buffer_free(dw);
    orn_dsm_free(S);
    orn_dsm_free(w);
}

/* ---------------------------------------------------------------- plan errors */

static int nop_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)b;
    (void)env;
    return 0;
}

static void plan_errors(TestEnv *t)
{
    int64_t dims[2] = {NR, NC}, hd[1] = {NC};
    OrnDsmArray *U = NULL, *H = NULL;
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F64, 2, dims, &U));
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F64, 1, hd, &H));
    OrnRtPlanArray arrays[2] = {arr("U", ORN_RT_PARTITIONED, 2, 0, 1, 1, -2, 0, 0, 0),
                                arr("H", ORN_RT_ROTATED, 1, 1, -1, 1, 0, 0, 0, 0)};
    OrnRtPlan plan = plan_of(ORN_RT_2D, 0, 2, arrays, 2, NULL, 0);
    OrnRtArg args[2] = {{U, NULL}, {H, NULL}};
    OrnRtLoop loop = {&plan, args, nop_body, NULL, NULL, NULL, 0};
    CHECK(t, orn_rt_run(t->rt, &loop) == ORN_E_PLAN);
    CHECK(t, !strcmp(orn_rt_error(t->rt),
                     "parallel_for at halo.orn:3 (2d): array U: negative halo width along "
                     "dimension 0"));
    arrays[0].halo_lo[0] = 1;
    arrays[1].halo_hi[0] = ORN_RT_HALO_ANY;
    CHECK(t, orn_rt_run(t->rt, &loop) == ORN_E_PLAN);
    CHECK(t, strstr(orn_rt_error(t->rt), "array H: a rotated array is read within its block"));
    arrays[1].halo_hi[0] = 3;
    OK(t, orn_rt_run(t->rt, &loop));
    orn_dsm_free(U);
    orn_dsm_free(H);
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    /* 5 blocks per rank: blocks of one or two rows, narrower than the halo of 3 */
    for (int bpr = 1; bpr <= 5; bpr += 2)
        for (int u_space = 0; u_space < 2; u_space++) stencil_1d(&t, bpr, 0, u_space);
    stencil_1d(&t, 2, 1, 1); /* @ordered, 1d: blocks in key order, the same ghost cells */
    for (int bpr = 1; bpr <= 3; bpr++) stencil_2d(&t, bpr);
    anywhere(&t, 1);
    anywhere(&t, 0);
    sparse_halo(&t);
    buffered_target(&t, 0, 0);
    buffered_target(&t, 5, 1);
    buffered_target(&t, 17, 0);
    plan_errors(&t);
    return t_finish(&t, "test_halo");
}
