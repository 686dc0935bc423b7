/* fuse.c: two consecutive stencil sweeps run as one pass over the data (orn_rt_run_pair).
 *
 * A double-buffered stencil is two parallel_for loops in a row: A writes V from U's
 * neighbours, B writes U from V's neighbours. Run one after the other, each streams both
 * arrays through memory; C programmers fuse them in cache blocks, and so does this file.
 * While A computes a tile of V a chunk of rows at a time, B's rows of the same tile follow
 * E rows behind (E: the widest halo along the partitioned dimension of either loop), so
 * they read V and write U while both are still in cache. B's run afterwards computes only
 * what A's pass left: the E rows at each tile's edges, which need other tiles' V (ghost
 * cells, exchanged by B's run as usual) or which other tiles' A read as ghost cells.
 *
 * Why the result is that of A then B, element for element:
 *   - B's row i reads V rows i - E .. i + E of its own tile, all written by A already
 *     (A is at least E rows ahead), and never read again by A (A writes V, reads U);
 *   - B writes U row i only when A is past row i + E: A's later rows read U rows >= i + 1
 *     (halo <= E), still the old values; A's reads of other tiles' U (ghost cells, local
 *     or remote, copied at any time during A) are rows within E of those tiles' edges,
 *     which B leaves to its own run;
 *   - no element of B is computed twice: B's run skips exactly the rows done here (by
 *     global row, so a repartition in between does not matter).
 *
 * When (checked from the plans and arguments at run time; anything else runs A then B):
 * both loops 1d along key dimension 0 without buffers, accumulators, prefetching, traces,
 * contained errors (the REPL) or device bodies; A writes only its iteration array V, B only
 * its iteration array U != V, every other array is read-only in both (and dense); every
 * array is partitioned with dimension 0 indexed by key 0 at a bounded halo; per tile of A,
 * every array of B has a local tile of the same rows, whole along the other dimensions (the
 * one A bound, or for an array A does not read, the one with that box). The
 * code generator pairs only adjacent loops whose bodies have no effects (no output, calls
 * or random draws: their order would show). $ORN_FUSE=0 turns pairing off.
 *
 * Cost model (per rank, N bytes of U and of V, cache C): unfused, each sweep streams both
 * arrays: about 2 x 3N bytes from memory per pair (read U, write V; read V, write U); fused,
 * about 3N when a chunk of both arrays (2 x chunk bytes) stays in C, plus 2E rows per tile
 * swept again by B's run. Chunks are RT_FUSE_CHUNK elements (in whole rows).
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

#define RT_FUSE_CHUNK 16384 /* elements of A per call: 128 KiB of f64 per array */

struct RtFuse {
    const OrnRtLoop *a, *b;
    int E;          /* rows B lags behind A; rows at tile edges left to B's run */
    int *amap;      /* per array of B: the array of A with the same store, or -1 */
    int64_t *bt;    /* per tile of A and array k of B: the tile of k bound with it */
    int64_t ntiles; /* tiles of A's iteration store when A started */
    int64_t *adone; /* per tile: elements of A done, contiguous from the tile's start */
    int64_t *bhi;   /* per tile: B's rows [tlo + E, bhi) done; -1 unused, -2 not fused */
    int64_t (*iv)[2];
    int64_t niv; /* B's rows done here, global [lo, hi), sorted */
    uint64_t stream;
    int64_t fused; /* elements of B computed here */
    Exec xb;       /* B's context for its views' slow paths (errors) */
    OrnRtView *views;
    ViewImpl *vi;
};

/* The widest halo along dimension 0 of plan p's arrays, or -1 when p does not qualify. */
static int plan_lag(const OrnRtPlan *p)
{
    if (p->strategy != ORN_RT_1D || p->npart != 1 || p->part_dims[0] != 0 || p->naccs ||
        p->narrays < 2)
        return -1;
    int E = 0;
    for (int k = 0; k < p->narrays; k++) {
        const OrnRtPlanArray *a = &p->arrays[k];
        if (a->role != ORN_RT_PARTITIONED || a->ndim < 1 || a->key_dim[0] != 0) return -1;
        if ((k == 0) == (a->read_only != 0)) return -1; /* only the iteration array written */
        if (a->halo_lo[0] < 0 || a->halo_hi[0] < 0) return -1;
        if (a->halo_lo[0] > E) E = a->halo_lo[0];
        if (a->halo_hi[0] > E) E = a->halo_hi[0];
    }
    return E;
}

static int find_store(const OrnRtLoop *l, const OrnDsmArray *s)
{
    for (int k = 0; k < l->plan->narrays; k++)
        if (l->args[k].array == s) return k;
    return -1;
}

static int dense(const OrnDsmArray *a)
{
    return a && !a->sparse;
}

/* The pairing of a then b, or NULL (run them one after the other). */
static RtFuse *pair_new(OrnRtCtx *rt, const OrnRtLoop *a, const OrnRtLoop *b)
{
    if (rt->fuse_off || rt->contain || rt->trace_on || a->whole || b->whole || a->prefetch ||
        b->prefetch || !a->plan || !b->plan)
        return NULL;
    int ea = plan_lag(a->plan), eb = plan_lag(b->plan);
    if (ea < 0 || eb < 0) return NULL;
    const OrnDsmArray *V = a->args[0].array, *U = b->args[0].array;
    if (!dense(V) || !dense(U) || U == V || U->ndim != V->ndim) return NULL;
    for (int d = 0; d < V->ndim; d++)
        if (U->dims[d] != V->dims[d]) return NULL;
    /* the iteration arrays appear once in each loop; B's arrays are A's */
    if (find_store(a, U) < 0 || find_store(b, V) < 0) return NULL;
    for (int k = 1; k < a->plan->narrays; k++)
        if (a->args[k].array == V || !dense(a->args[k].array)) return NULL;
    int *amap = orn_xcalloc((size_t)b->plan->narrays, sizeof *amap);
    for (int k = 0; k < b->plan->narrays; k++) {
        amap[k] = find_store(a, b->args[k].array);
        if ((k > 0 && b->args[k].array == U) || !dense(b->args[k].array)) {
            free(amap);
            return NULL;
        }
    }
    RtFuse *F = orn_xcalloc(1, sizeof *F);
    F->a = a;
    F->b = b;
    F->E = ea > eb ? ea : eb;
    F->amap = amap;
    return F;
}

int rt_fuse_phase(const RtFuse *F, const OrnRtLoop *l)
{
    return !F ? 0 : l == F->a ? 1 : l == F->b ? 2 : 0;
}

/* Called at A's start (its iteration store partitioned): per-tile state, B's views. */
int rt_fuse_begin(Exec *x)
{
    RtFuse *F = x->fuse;
    const OrnRtPlan *bp = F->b->plan;
    F->ntiles = x->iter->part.ntiles;
    F->adone = orn_xcalloc((size_t)F->ntiles, sizeof *F->adone);
    F->bhi = orn_xmalloc((size_t)F->ntiles * sizeof *F->bhi);
    F->bt = orn_xcalloc((size_t)(F->ntiles * bp->narrays), sizeof *F->bt);
    for (int64_t t = 0; t < F->ntiles; t++) F->bhi[t] = -1;
    /* B's stream as its own run will draw it (A's run does not advance B's count) */
    int64_t n = 0;
    for (int i = 0; i < x->rt->nloops; i++)
        if (x->rt->loops[i].loop_id == bp->loop_id) n = x->rt->loops[i].count;
    F->stream = ((uint64_t)(uint32_t)bp->loop_id << 32) | (uint32_t)n;
    orn_dsm_touch(F->b->args[0].array); /* B writes U during A's run */
    Exec *xb = &F->xb;
    memset(xb, 0, sizeof *xb);
    xb->rt = x->rt;
    xb->dsm = x->dsm;
    xb->loop = F->b;
    xb->plan = bp;
    xb->sched = &orn_rt_sched_1d;
    xb->P = x->P;
    xb->me = x->me;
    xb->iter = F->b->args[0].array;
    xb->n = bp->narrays;
    xb->split_dim = -1;
    F->views = orn_xcalloc((size_t)bp->narrays, sizeof *F->views);
    F->vi = orn_xcalloc((size_t)bp->narrays, sizeof *F->vi);
    xb->views = F->views;
    xb->vi = F->vi;
    for (int k = 0; k < bp->narrays; k++) {
        OrnRtView *v = &F->views[k];
        ViewImpl *vi = &F->vi[k];
        vi->x = xb;
        vi->k = k;
        vi->store = F->b->args[k].array;
        vi->tile = -1;
        vi->read_only = bp->arrays[k].read_only != 0;
        rt_map_init(&vi->cache, sizeof(CacheEnt));
        v->ndim = vi->store->ndim;
        v->type = (int)vi->store->type;
        v->esize = vi->store->esize;
        v->role = ORN_RT_PARTITIONED;
        v->ops = &rt_view_ops;
        v->impl = vi;
    }
    return ORN_OK;
}

/* Elements of A per call for tile t (whole rows), or 0 when t is not fused. */
int64_t rt_fuse_chunk(const OrnDsmTile *t)
{
    int64_t rows = t->hi[0] - t->lo[0];
    if (rows <= 0) return 0;
    int64_t W = t->n / rows;
    return W >= RT_FUSE_CHUNK ? W : RT_FUSE_CHUNK / W * W;
}

/* Tile t of s spans rows [lo, hi) and whole other dimensions, and is held here. */
static int same_rows(const OrnDsmArray *s, int64_t t, int64_t lo, int64_t hi)
{
    if (t < 0 || t >= s->part.ntiles) return 0;
    const OrnDsmTile *tl = &s->tiles[t];
    if (!tl->held || !tl->vals || tl->lo[0] != lo || tl->hi[0] != hi) return 0;
    for (int d = 1; d < s->ndim; d++)
        if (tl->lo[d] != 0 || tl->hi[d] != s->dims[d]) return 0;
    return 1;
}

/* Whether tile `tile` of A (bound: x->vi[].tile) can be fused: every array of B has a
 * local tile with the same rows, whole along the other dimensions (F->bt). */
static int tile_ok(const Exec *x, int64_t tile)
{
    const RtFuse *F = x->fuse;
    const OrnDsmTile *it = &x->iter->tiles[tile];
    int nb = F->b->plan->narrays;
    for (int k = 0; k < nb; k++) {
        int ka = F->amap[k];
        const OrnDsmArray *s = F->b->args[k].array;
        int64_t ta = ka == 0 ? tile : ka > 0 ? x->vi[ka].tile : -1;
        for (int64_t u = 0; ka < 0 && u < s->part.ntiles && ta < 0; u++)
            if (same_rows(s, u, it->lo[0], it->hi[0])) ta = u;
        if (!same_rows(s, ta, it->lo[0], it->hi[0])) return 0;
        F->bt[tile * nb + k] = ta;
    }
    return 1;
}

/* B's body over rows [from, to) of A's tile `tile`. */
static int run_b(Exec *x, int64_t tile, int64_t from, int64_t to)
{
    RtFuse *F = x->fuse;
    const OrnRtLoop *B = F->b;
    const OrnDsmTile *it = &x->iter->tiles[tile];
    int64_t W = it->n / (it->hi[0] - it->lo[0]);
    OrnRtBlock b;
    memset(&b, 0, sizeof b);
    for (int k = 0; k < B->plan->narrays; k++) {
        OrnDsmArray *s = B->args[k].array;
        int64_t ta = F->bt[tile * B->plan->narrays + k];
        const OrnDsmTile *t = &s->tiles[ta];
        OrnRtView *v = &F->views[k];
        v->deltas = NULL;
        v->cols = NULL;
        rt_box_view(v, s, ta);
        F->vi[k].tile = ta;
        if (k == 0) {
            b.vals = t->vals;
            for (int d = 0; d < ORN_RT_MAXDIM; d++) {
                b.lo[d] = d < s->ndim ? t->lo[d] : 0;
                b.hi[d] = d < s->ndim ? t->hi[d] : 0;
            }
        }
    }
    b.ndim = B->plan->nkeys;
    b.views = F->views;
    b.seed = x->rt->seed;
    b.stream = F->stream;
    b.block = tile;
    b.first = (from - it->lo[0]) * W;
    b.count = (to - from) * W;
    int rc = B->body(x->rt, &b, B->env);
    if (F->xb.status) return F->xb.status; /* a slow path's error (a key out of range) */
    if (rc)
        return orn_dsm_error_code(x->dsm) == ORN_E_BODY
                   ? ORN_E_BODY
                   : rt_fail(x, ORN_E_BODY, "the loop body failed (status %d)", rc);
    return ORN_OK;
}

/* A's body has run elements [f0, f1) of tile `tile` (bound): B follows where it can. */
int rt_fuse_after(Exec *x, int64_t tile, int64_t f0, int64_t f1)
{
    RtFuse *F = x->fuse;
    if (tile < 0 || tile >= F->ntiles || F->bhi[tile] == -2 || F->adone[tile] < 0) return ORN_OK;
    const OrnDsmTile *it = &x->iter->tiles[tile];
    int64_t tlo = it->lo[0], thi = it->hi[0], E = F->E;
    if (F->adone[tile] != f0) {
        /* a piece out of order: B's rows done so far stay done (A's later rows read U
         * rows past them), the rest is left to B's run */
        F->adone[tile] = -1;
        return ORN_OK;
    }
    if (F->bhi[tile] == -1) {
        if (thi - tlo <= 2 * E || !tile_ok(x, tile)) {
            F->bhi[tile] = -2;
            return ORN_OK;
        }
        F->bhi[tile] = tlo + E;
    }
    F->adone[tile] = f1;
    int64_t W = it->n / (thi - tlo);
    int64_t top = f1 >= it->n ? thi - E : tlo + f1 / W - E;
    if (top > thi - E) top = thi - E;
    if (top <= F->bhi[tile]) return ORN_OK;
    int64_t from = F->bhi[tile];
    int status = run_b(x, tile, from, top);
    if (status) return status;
    F->bhi[tile] = top;
    F->fused += (top - from) * W;
    return ORN_OK;
}

static int cmp_iv(const void *p, const void *q)
{
    const int64_t *a = p, *b = q;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* After A: the rows of B done, by global row. */
static void collect(RtFuse *F, const OrnDsmArray *V)
{
    F->iv = orn_xcalloc((size_t)(F->ntiles ? F->ntiles : 1), sizeof *F->iv);
    for (int64_t t = 0; t < F->ntiles && t < V->part.ntiles; t++) {
        int64_t lo = V->tiles[t].lo[0] + F->E;
        if (F->bhi[t] > lo) {
            F->iv[F->niv][0] = lo;
            F->iv[F->niv][1] = F->bhi[t];
            F->niv++;
        }
    }
    qsort(F->iv, (size_t)F->niv, sizeof *F->iv, cmp_iv);
}

/* B's run, over elements [f, e) of tile t: the first element at or after f that A's pass
 * did not compute (e when none), and in *pend the end of the run of such elements that
 * starts there (at most e). The done rows are disjoint and sorted, so one walk finds both. */
int64_t rt_fuse_skip(const Exec *x, const OrnDsmTile *t, int64_t f, int64_t e, int64_t *pend)
{
    const RtFuse *F = x->fuse;
    int64_t rows = t->hi[0] - t->lo[0];
    *pend = e;
    if (rows <= 0 || F->niv == 0) return f;
    int64_t W = t->n / rows;
    for (int64_t i = 0; i < F->niv && f < e; i++) {
        int64_t lo = (F->iv[i][0] - t->lo[0]) * W, hi = (F->iv[i][1] - t->lo[0]) * W;
        if (hi <= f) continue;
        if (lo <= f) { /* f lies in done rows: past them */
            f = hi;
            continue;
        }
        if (lo < e) *pend = lo;
        break;
    }
    return f < e ? f : e;
}

static void pair_free(RtFuse *F)
{
    if (F->vi)
        for (int k = 0; k < F->b->plan->narrays; k++) rt_map_free(&F->vi[k].cache);
    free(F->vi);
    free(F->views);
    free(F->amap);
    free(F->bt);
    free(F->adone);
    free(F->bhi);
    free(F->iv);
    free(F);
}

int orn_rt_run_pair(OrnRtCtx *rt, const OrnRtLoop *a, const OrnRtLoop *b)
{
    RtFuse *F = pair_new(rt, a, b);
    if (!F) {
        int status = orn_rt_run(rt, a);
        rt->pair_stats = rt->stats;
        return status ? status : orn_rt_run(rt, b);
    }
    rt->fuse = F;
    int status = orn_rt_run(rt, a);
    if (!status) {
        rt->pair_stats = rt->stats;
        collect(F, a->args[0].array);
        status = orn_rt_run(rt, b);
        rt->stats.fused = F->fused;
    }
    rt->fuse = NULL;
    pair_free(F);
    return status;
}
