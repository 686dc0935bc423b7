/* window.c: dense windows, so that reads of prefetched (and remote) arrays are loads.
 *
 * Generated bodies read every array through its view's dense box (orn_rt_box, then
 * orn_rt_ld_*: an inline bounds test and a load, the view's slow path outside the box).
 * Prefetched and remote arrays used to have no box at all, so every read took the slow
 * path: an indirect call, a tile search and a hash lookup in the prefetch cache (about 266
 * instructions per float). This file gives such views a box, in one of two forms:
 *
 *   - TILE: the storage of a tile this rank holds (the largest one), no copy. At -n 1, or
 *     whenever the array is held here in one tile, that is the whole array. It is exactly
 *     what the slow path reads for held keys (op_read reads held tiles in place; buffers
 *     and remote writes update them in place between rounds), so it is always valid, also
 *     for remote arrays (whose writes to held keys go to the tile too).
 *   - COPY: a private row-major copy of rows [r0, r1) of dimension 0 (all of the other
 *     dimensions), holding the current value of every element of those rows: the held
 *     ones copied from their tiles, the others fetched in bulk by the round's exchange
 *     as ranges of the owners' tiles (together with the prefetch cache's keys, in the same
 *     collective: dsm/fetch.c). Only for
 *     prefetched, dense arrays that no other plan array of the loop writes (the analyzer
 *     made them read-only). Such an array changes during the loop only at flushes of a
 *     buffer that targets it: a copy then stays valid for every later block, round and
 *     step of the loop (and grows when a block reads beyond it), except that a buffer's
 *     flush drops it. At the end of the loop a copy of the whole array is kept (among the
 *     runtime's spares, within the cap) with every rank's write generation of the array's
 *     storage at the loop's start (OrnDsmArray.gen: every writer of the DSM and the
 *     runtime gives a new one, dsm.h); the next loop that reads the array so agrees on the
 *     generations in place of the barrier before its remote reads (rt_window_agree, one
 *     message each way per peer) and takes the copy back, without a pass or a fetch, when
 *     they are the same on every rank. $ORN_WINDOW_CHECK=1 fetches it again instead and
 *     fails the loop if the two differ (a writer that forgot to touch the array): the tests
 *     run with it. Other copies are given back to the spares, their bytes forgotten.
 *     Such a whole copy is the array's node replica instead where it has one
 *     (dsm/replica.c, taken in rt_window_agree): one copy in shared memory for all of the
 *     host's ranks, each writing its own tiles (and those it takes from other hosts),
 *     rewritten when a generation changed; the window only borrows it (shared).
 *
 * Keys outside the box still take the slow path, so correctness never depends on a window:
 * a window only ever holds values the slow path would return.
 *
 * Announcing. The prefetch pass calls orn_rt_prefetch for every read. Keys inside the
 * view's box return at once (inline test, in op_prefetch). For views that may get a COPY
 * the others set a bit in a bitmap over the array's linear keys (one bit per element,
 * allocated on first use) and widen the announced range: no tile search, no hash insert. The
 * exchange then decides per view (rt_window_plan) between a COPY over the rows of the announced
 * range (joined with the current copy and the held tile's rows, when that fits) and the prefetch
 * cache (the announced remote keys, read off the bitmap in key order, into the cache as before).
 * When no key can be announced -- every array a loop may read anywhere is held whole by every rank,
 * e.g. at -n 1 -- the runtime skips the prefetch pass and the exchange (rt_window_setup), and
 * likewise for a round in which every such view's box already covers its whole array
 * (rt_window_pass_needed). The context remembers, per loop and view, when the first
 * exchange of a run copied the whole array (RtWinHint): the next run of that loop copies it
 * at once, without a pass. The values are fetched again (the array may have changed
 * between the runs); only the decision is reused.
 *
 * Cost model, in instructions (callgrind) per element, for one view and one exchange:
 * n_slow announcements outside the box (reads that would take the slow path), n_uniq
 * distinct keys among them, L held and R remote elements that a COPY adds:
 *     cache:  n_slow * C_SLOW + n_uniq * C_KEY
 *     COPY:   L * C_COPY + R * C_FETCH (ranges of the owners' tiles), paid once for REUSE
 *             rounds unless a buffer
 *             targets the array (then per round)
 * A COPY is chosen when it is cheaper and its bytes are at most the window cap
 * ($ORN_WINDOW_MB, default 256 MiB; a copy never exceeds the array either). The bitmap
 * costs dims-volume / 8 bytes, only for arrays within 8x the cap. When every key is local
 * the choice is static: TILE when one held tile is the whole array, else a COPY of the
 * whole array once per loop (within the cap, no buffer targeting it), else TILE.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

/* Measured with callgrind on bench/pagerank and bench/slr at -n 2 (orn_dsm_fetch_bulk costs
 * about 300 instructions per element requested by key, requester and owner together). A
 * copy's remote rows come as ranges of the owners' tiles (their bytes, no key each): 100 MB
 * of f64 rows in 0.085 s at -n 2 on this machine, 6.6 ns an element, against 125 ns an
 * element when they were keys (a gather of random rows of a 400k x 64 array). */
#define C_SLOW  150 /* a read through the slow path: call, tile search, hash find */
#define C_KEY   360 /* a key fetched into the cache: bulk fetch, hash insert */
#define C_FETCH 16  /* an element of a copy fetched in bulk, in a range */
#define C_COPY  1   /* an element copied from a tile held here */
#define REUSE   4   /* rounds a copy of a loop-constant array is expected to serve */

struct RtWindow {
    OrnRtCtx *rt;     /* its spares hold the copy between runs (rt_spare_take) */
    int can_copy;     /* a COPY may serve this view */
    int64_t tile;     /* TILE: the largest held dense tile, -1 none */
    int64_t rowsz;    /* elements per index of dimension 0 */
    size_t cap;       /* bytes a COPY may take */
    char *buf;        /* COPY: rows [r0, r1), row-major */
    size_t bufcap;    /* bytes */
    int64_t r0, r1;   /* rows in buf */
    int valid;        /* buf holds the current values of rows [r0, r1) */
    uint64_t *mark;   /* keys announced outside the box, one bit per linear key */
    int64_t mlo, mhi; /* range of the keys announced outside the box; mhi < 0: none */
    int64_t nslow;    /* announcements outside the box */
    int64_t nuniq;    /* distinct keys among them */
    /* COPY being filled: the rows [a, b) of remote tiles it still needs, each one run of
     * the tile's storage, fetched as a range into buf (at: byte offset) when the tile spans
     * every dimension but 0, else into stage (at) and copied from there row by row. */
    struct Run {
        int64_t tile, a, b;
        int64_t first, n; /* the run in the tile's storage: elements [first, first + n) */
        size_t at;
        int staged;
    } * runs;
    int64_t nruns, capruns;
    OrnDsmRun *rng; /* the runs as the fetch's ranges (rt_window_ranges) */
    char *stage;
    size_t nstage, capstage;
    int whole;   /* copy the whole array at the first exchange, without a pass (hint) */
    int planned; /* exchanges that decided for this view in this run */
    /* A whole copy may be kept for the next run (rt_window_agree): every rank's generation
     * of the array's storage at this run's start (P of them, once agreed), and under
     * $ORN_WINDOW_CHECK=1 the kept copy that would have served, to compare (check). */
    int keep;
    int shared; /* buf is the array's node replica (dsm/replica.c): not ours to give back */
    uint64_t *gens;
    char *check;
    size_t checkcap;
};

/* The hint of (loop, view k), or NULL. */
static RtWinHint *hint_find(OrnRtCtx *rt, int loop_id, int k)
{
    for (int i = 0; i < rt->nwin_hints; i++)
        if (rt->win_hints[i].loop_id == loop_id && rt->win_hints[i].k == k)
            return &rt->win_hints[i];
    return NULL;
}

/* Remember (whole) or forget what the first exchange of this run decided for view k. */
static void hint_set(Exec *x, int k, int whole)
{
    OrnRtCtx *rt = x->rt;
    const OrnDsmArray *s = x->vi[k].store;
    RtWinHint *h = hint_find(rt, x->plan->loop_id, k);
    if (!whole) {
        if (h) *h = rt->win_hints[--rt->nwin_hints];
        return;
    }
    if (!h) {
        if (rt->nwin_hints == rt->capwin_hints) {
            rt->capwin_hints = rt->capwin_hints ? 2 * rt->capwin_hints : 8;
            rt->win_hints =
                orn_xrealloc(rt->win_hints, (size_t)rt->capwin_hints * sizeof *rt->win_hints);
        }
        h = &rt->win_hints[rt->nwin_hints++];
    }
    *h = (RtWinHint){x->plan->loop_id, k, s->id, s->nnz};
}

static int held_everywhere(const Exec *x, const OrnDsmArray *s)
{
    if (x->P == 1) return 1;
    for (int64_t t = 0; t < s->part.ntiles; t++)
        if (s->part.owner[t] != ORN_DSM_ALL) return 0;
    return 1;
}

/* The runtime's op_prefetch may record keys of this view (exec.c: reads_anywhere). */
static int announcing(const Exec *x, int k)
{
    const OrnRtView *v = &x->views[k];
    const ViewImpl *vi = &x->vi[k];
    if (!vi->store || v->role == ORN_RT_BUFFERED) return 0;
    if (x->replica && x->replica[k]) return 0; /* copied whole before the loop */
    return v->role == ORN_RT_PREFETCHED || v->role == ORN_RT_REPLICATED ||
           v->role == ORN_RT_REMOTE || x->halo || (vi->read_only && v->role == ORN_RT_PARTITIONED);
}

static void tile_view(const OrnDsmArray *s, int64_t t, OrnRtView *v)
{
    const OrnDsmTile *tl = &s->tiles[t];
    v->base = tl->vals;
    int64_t st = 1;
    for (int d = ORN_RT_MAXDIM - 1; d >= 0; d--) {
        v->lo[d] = d < s->ndim ? tl->lo[d] : 0;
        v->hi[d] = d < s->ndim ? tl->hi[d] : 0;
        v->stride[d] = d < s->ndim ? st : 0;
        if (d < s->ndim) st *= tl->hi[d] - tl->lo[d];
    }
}

static void copy_view(const OrnDsmArray *s, const RtWindow *w, OrnRtView *v)
{
    v->base = w->buf;
    int64_t st = 1;
    for (int d = ORN_RT_MAXDIM - 1; d >= 0; d--) {
        v->lo[d] = d == 0 ? w->r0 : 0;
        v->hi[d] = d == 0 ? w->r1 : d < s->ndim ? s->dims[d] : 0;
        v->stride[d] = d < s->ndim ? st : 0;
        if (d < s->ndim) st *= v->hi[d] - v->lo[d];
    }
}

/* The part of tile t within rows [a, b) into the copy: copied now when the tile is held
 * here, else listed as a run to fetch. Returns the element count. */
static int64_t take_rows(const OrnDsmArray *s, RtWindow *w, int64_t t, int64_t a, int64_t b,
                         int fill)
{
    const OrnDsmTile *tl = &s->tiles[t];
    int64_t a0 = tl->lo[0] > a ? tl->lo[0] : a, b0 = tl->hi[0] < b ? tl->hi[0] : b;
    if (b0 <= a0) return 0;
    int64_t trow = 1; /* elements per row of the tile */
    for (int d = 1; d < s->ndim; d++) trow *= tl->hi[d] - tl->lo[d];
    int64_t vol = (b0 - a0) * trow;
    if (!fill || !vol) return vol;
    if (tl->held) {
        orn_dsm_tile_copy(s, t, a0, b0, w->buf, w->r0 * w->rowsz, tl->vals, 0, ORN_DSM_TO_ROWS);
        return vol;
    }
    if (w->nruns == w->capruns) {
        w->capruns = w->capruns ? 2 * w->capruns : 16;
        w->runs = orn_xrealloc(w->runs, (size_t)w->capruns * sizeof *w->runs);
    }
    struct Run *r = &w->runs[w->nruns++];
    r->tile = t;
    r->a = a0;
    r->b = b0;
    r->first = (a0 - tl->lo[0]) * trow;
    r->n = vol;
    r->staged = trow != w->rowsz;
    if (r->staged) {
        r->at = w->nstage;
        w->nstage += (size_t)vol * s->esize;
    } else {
        r->at = (size_t)((a0 - w->r0) * w->rowsz) * s->esize;
    }
    return vol;
}

/* Elements of rows [a, b) held here (*l) and elsewhere (*r); with fill, copy / list them. */
static void rows_scan(const OrnDsmArray *s, RtWindow *w, int64_t a, int64_t b, int fill, int64_t *l,
                      int64_t *r)
{
    if (b <= a) return;
    for (int64_t t = 0; t < s->part.ntiles; t++) {
        int64_t n = take_rows(s, w, t, a, b, fill);
        if (s->tiles[t].held)
            *l += n;
        else
            *r += n;
    }
}

/* Make the copy cover rows [n0, n1), keeping the valid rows it has; the rest is copied
 * from held tiles or listed in w->runs (valid once rt_window_fill has run). */
static void copy_build(const OrnDsmArray *s, RtWindow *w, int64_t n0, int64_t n1)
{
    size_t es = s->esize, bytes = (size_t)((n1 - n0) * w->rowsz) * es;
    int64_t l = 0, r = 0;
    w->nruns = 0;
    w->nstage = 0;
    if (w->valid) {
        char *nb = rt_spare_take(w->rt, bytes ? bytes : 1);
        memcpy(nb + (size_t)((w->r0 - n0) * w->rowsz) * es, w->buf,
               (size_t)((w->r1 - w->r0) * w->rowsz) * es);
        rt_spare_give(w->rt, w->buf, w->bufcap, w->cap);
        w->buf = nb;
        w->bufcap = bytes;
        int64_t o0 = w->r0, o1 = w->r1;
        w->r0 = n0;
        w->r1 = n1;
        rows_scan(s, w, n0, o0, 1, &l, &r);
        rows_scan(s, w, o1, n1, 1, &l, &r);
    } else {
        if (w->bufcap < bytes) {
            if (w->buf) rt_spare_give(w->rt, w->buf, w->bufcap, w->cap);
            w->buf = rt_spare_take(w->rt, bytes ? bytes : 1);
            w->bufcap = bytes ? bytes : 1;
        }
        w->r0 = n0;
        w->r1 = n1;
        rows_scan(s, w, n0, n1, 1, &l, &r);
    }
    w->valid = w->nruns == 0;
}

static size_t window_cap(void)
{
    const char *e = getenv("ORN_WINDOW_MB"); /* MiB, fractions allowed (tests) */
    double mb = e && *e ? strtod(e, NULL) : 256.0;
    return mb > 0 && mb < 1e12 ? (size_t)(mb * 1048576.0) : 0;
}

int orn_rt_replica_reserve(OrnRtCtx *rt, OrnDsmArray *a)
{
    size_t cap = window_cap(), bytes = (size_t)a->nnz * a->esize;
    if (rt->replicate_max > 0 && (uint64_t)rt->replicate_max > cap) cap = (size_t)rt->replicate_max;
    if (orn_dsm_size(a->ctx) < 2 || bytes > cap) return ORN_OK;
    return orn_dsm_replica_reserve(a);
}

void rt_window_setup(Exec *x)
{
    size_t cap = window_cap();
    int all_local = 1;
    for (int k = 0; k < x->n; k++)
        if (announcing(x, k) && !held_everywhere(x, x->vi[k].store)) all_local = 0;
    x->skip_prefetch = all_local;
    for (int k = 1; k < x->n; k++) {
        OrnRtView *v = &x->views[k];
        ViewImpl *vi = &x->vi[k];
        OrnDsmArray *s = vi->store;
        if (v->role != ORN_RT_PREFETCHED && v->role != ORN_RT_REMOTE) continue;
        if (!s || s->sparse || vi->xform || s->ndim < 1) continue;
        if (x->replica && x->replica[k]) continue; /* copied whole before the loop */
        RtWindow *w = orn_xcalloc(1, sizeof *w);
        vi->win = w;
        w->rt = x->rt;
        w->tile = -1;
        w->mhi = -1;
        w->cap = cap;
        w->rowsz = 1;
        for (int d = 1; d < s->ndim; d++) w->rowsz *= s->dims[d];
        for (int64_t t = 0; t < s->part.ntiles; t++)
            if (s->tiles[t].held && s->tiles[t].vals && s->tiles[t].n > 0 &&
                (w->tile < 0 || s->tiles[t].n > s->tiles[w->tile].n))
                w->tile = t;
        int aliased = 0;
        for (int j = 0; j < x->n; j++)
            if (j != k && x->vi[j].store == s && !x->vi[j].read_only && !x->vi[j].buf)
                aliased = 1; /* buffers: vi->buffered, copies dropped at flushes */
        uint64_t vol = (uint64_t)s->nnz;
        w->can_copy = v->role == ORN_RT_PREFETCHED && !aliased && vol > 0 && vol / 8 <= cap;
        if (!all_local && w->can_copy && !vi->buffered) {
            const RtWinHint *h = hint_find(x->rt, x->plan->loop_id, k);
            w->whole =
                h && h->array_id == s->id && h->nnz == s->nnz && (uint64_t)s->nnz * s->esize <= cap;
        }
        w->keep = !all_local && w->can_copy && !vi->buffered && !x->loop->whole &&
                  (uint64_t)s->nnz * s->esize <= cap;
        if (!all_local || !w->can_copy || vi->buffered) continue;
        if (w->tile >= 0 && (uint64_t)s->tiles[w->tile].n == vol) continue; /* TILE is whole */
        if (vol * s->esize > cap) continue;
        copy_build(s, w, 0, s->dims[0]); /* everything is held: valid at once */
    }
}

int rt_window_bind(Exec *x, int k, OrnRtView *v)
{
    RtWindow *w = x->vi[k].win;
    if (!w) return 0;
    if (w->valid) {
        copy_view(x->vi[k].store, w, v);
        return 1;
    }
    /* Writes in the prefetch pass are ignored (op_write): no direct pointers then. */
    if (w->tile < 0 || (v->role == ORN_RT_REMOTE && x->in_prefetch)) return 0;
    tile_view(x->vi[k].store, w->tile, v);
    return 1;
}

/* A read-only partitioned array (the iteration space, say) of an unordered loop with no
 * halo is read within its block only: its pass announces nothing. */
static int within_block(const Exec *x, int k)
{
    const OrnRtPlanArray *a = &x->plan->arrays[k];
    if (x->halo || x->views[k].role != ORN_RT_PARTITIONED) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->halo_lo[d] != 0 || a->halo_hi[d] != 0) return 0;
    return 1;
}

int rt_window_pass_needed(Exec *x)
{
    if (x->skip_prefetch) return 0;
    for (int k = 0; k < x->n; k++) {
        if (!announcing(x, k) || held_everywhere(x, x->vi[k].store) || within_block(x, k)) continue;
        const RtWindow *w = x->vi[k].win;
        if (w && w->whole && !w->valid) continue; /* copied whole by the coming exchange */
        if (!w || !w->valid || w->r0 > 0 || w->r1 < x->vi[k].store->dims[0]) return 1;
    }
    return 0;
}

int rt_window_announce(ViewImpl *vi, const int64_t *key)
{
    RtWindow *w = vi->win;
    if (!w->can_copy) return 0;
    const OrnDsmArray *s = vi->store;
    int64_t lin = 0;
    for (int d = 0; d < s->ndim; d++) {
        if ((uint64_t)key[d] >= (uint64_t)s->dims[d]) return 1; /* the body reports it */
        lin = lin * s->dims[d] + key[d];
    }
    w->nslow++;
    if (w->mhi < 0 || lin < w->mlo) w->mlo = lin;
    if (lin > w->mhi) w->mhi = lin;
    if (!w->mark) w->mark = orn_xcalloc((size_t)((uint64_t)s->nnz / 64 + 1), sizeof *w->mark);
    uint64_t *m = &w->mark[lin >> 6], bit = (uint64_t)1 << (lin & 63);
    if (!(*m & bit)) {
        *m |= bit;
        w->nuniq++;
    }
    return 1;
}

/* The announced remote keys into the prefetch cache (the old path), in key order. */
static void to_cache(ViewImpl *vi, RtWindow *w)
{
    if (!w->mark) return;
    for (int64_t i = w->mlo >> 6; i <= w->mhi >> 6; i++) {
        uint64_t m = w->mark[i];
        while (m) {
            int64_t lin = i * 64 + __builtin_ctzll(m), key[ORN_DSM_MAXDIM];
            m &= m - 1;
            orn_dsm_unravel(vi->store, lin, key);
            if (vi->store->tiles[orn_dsm_part_tile_of(&vi->store->part, key)].held) continue;
            int created;
            CacheEnt *c = rt_map_insert(&vi->cache, lin, &created);
            if (!created) continue;
            c->state = 1;
            if (vi->nreq == vi->capreq) {
                vi->capreq = vi->capreq ? 2 * vi->capreq : 256;
                vi->req = orn_xrealloc(vi->req, (size_t)vi->capreq * sizeof *vi->req);
            }
            vi->req[vi->nreq++] = lin;
        }
    }
}

static void clear_marks(RtWindow *w)
{
    if (w->mark && w->mhi >= 0)
        memset(&w->mark[w->mlo >> 6], 0,
               (size_t)((w->mhi >> 6) - (w->mlo >> 6) + 1) * sizeof *w->mark);
    w->mhi = -1;
    w->nslow = w->nuniq = 0;
}

/* Cost of making the copy cover rows [n0, n1), or -1 when over the cap. */
static double copy_cost(const OrnDsmArray *s, const RtWindow *w, int64_t n0, int64_t n1)
{
    if ((uint64_t)(n1 - n0) * (uint64_t)w->rowsz * s->esize > w->cap) return -1;
    int64_t l = 0, r = 0;
    RtWindow *m = (RtWindow *)w; /* rows_scan without fill does not write */
    if (w->valid) {
        rows_scan(s, m, n0, w->r0, 0, &l, &r);
        rows_scan(s, m, w->r1, n1, 0, &l, &r);
    } else {
        rows_scan(s, m, n0, n1, 0, &l, &r);
    }
    return (double)l * C_COPY + (double)r * C_FETCH;
}

void rt_window_plan(Exec *x)
{
    for (int k = 1; k < x->n; k++) {
        ViewImpl *vi = &x->vi[k];
        RtWindow *w = vi->win;
        if (!w) continue;
        w->nruns = 0;
        if (w->shared) continue; /* the whole array, for the whole run */
        const OrnDsmArray *s = vi->store;
        if (w->can_copy && w->whole && !w->valid) {
            copy_build(s, w, 0, s->dims[0]);
            w->planned++;
            clear_marks(w);
            continue;
        }
        if (!w->can_copy || w->mhi < 0) continue;
        int64_t a = w->mlo / w->rowsz, b = w->mhi / w->rowsz + 1;
        if (w->valid) {
            if (w->r0 < a) a = w->r0;
            if (w->r1 > b) b = w->r1;
        }
        double keys = (double)w->nslow * C_SLOW + (double)w->nuniq * C_KEY;
        if (!vi->buffered) keys *= REUSE;
        /* The cheapest that pays: the whole array (later passes have nothing to announce),
         * the announced rows with the held tile's (their reads stay loads), or alone. */
        int64_t ta = a, tb = b;
        if (w->tile >= 0) {
            const OrnDsmTile *tl = &s->tiles[w->tile];
            if (tl->lo[0] < ta) ta = tl->lo[0];
            if (tl->hi[0] > tb) tb = tl->hi[0];
        }
        int64_t cand[3][2] = {{0, s->dims[0]}, {ta, tb}, {a, b}};
        int i = 0;
        for (; i < 3; i++) {
            double c = copy_cost(s, w, cand[i][0], cand[i][1]);
            if (c >= 0 && c <= keys) break;
        }
        if (i < 3)
            copy_build(s, w, cand[i][0], cand[i][1]);
        else
            to_cache(vi, w);
        if (!w->planned++ && !vi->buffered) hint_set(x, k, i == 0);
        clear_marks(w);
    }
}

const OrnDsmRun *rt_window_ranges(ViewImpl *vi, int64_t *n)
{
    RtWindow *w = vi->win;
    *n = w ? w->nruns : 0;
    if (!*n) return NULL;
    const OrnDsmArray *s = vi->store;
    if (w->capstage < w->nstage) {
        free(w->stage);
        w->stage = orn_xmalloc(w->nstage);
        w->capstage = w->nstage;
    }
    w->rng = orn_xrealloc(w->rng, (size_t)w->nruns * sizeof *w->rng);
    for (int64_t i = 0; i < w->nruns; i++) {
        const struct Run *r = &w->runs[i];
        w->rng[i] =
            (OrnDsmRun){s->id, r->tile, r->first, r->n, (r->staged ? w->stage : w->buf) + r->at};
    }
    return w->rng;
}

int rt_window_fill(Exec *x, int k)
{
    RtWindow *w = x->vi[k].win;
    if (!w || !w->nruns) return ORN_OK;
    const OrnDsmArray *s = x->vi[k].store;
    for (int64_t i = 0; i < w->nruns; i++) {
        const struct Run *r = &w->runs[i];
        if (r->staged)
            orn_dsm_tile_copy(s, r->tile, r->a, r->b, w->buf, w->r0 * w->rowsz, w->stage + r->at,
                              r->first, ORN_DSM_TO_ROWS);
    }
    w->nruns = 0;
    w->nstage = 0;
    w->valid = 1;
    if (w->check && w->r0 == 0 && w->r1 == s->dims[0]) {
        int same = !memcmp(w->check, w->buf, (size_t)s->nnz * s->esize);
        rt_spare_give(w->rt, w->check, w->checkcap, w->cap);
        w->check = NULL;
        if (!same)
            return rt_fail(x, ORN_E_INTERNAL,
                           "array %s: the copy kept from an earlier run differs from the array "
                           "at the same generations (a writer did not touch it)",
                           x->plan->arrays[k].name);
    }
    return ORN_OK;
}

int rt_window_agree(Exec *x)
{
    int nk = 0, P = x->P;
    for (int k = 0; k < x->n; k++) nk += x->vi[k].win && x->vi[k].win->keep;
    if (!nk) return rt_barrier(x);
    uint64_t *g = orn_xcalloc((size_t)P * (size_t)nk, sizeof *g);
    for (int k = 0, j = 0; k < x->n; k++)
        if (x->vi[k].win && x->vi[k].win->keep)
            g[(size_t)x->me * (size_t)nk + (size_t)j++] = x->vi[k].store->gen;
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "barrier: generations of kept copies");
    int status =
        orn_dsm_allgather_into(x->dsm, g, (size_t)nk * sizeof *g, "generations of kept copies");
    rt_span_end(x, sp, &x->rt->stats.wait);
    int check = x->rt->window_check;
    for (int k = 0, j = 0; k < x->n && !status; k++) {
        RtWindow *w = x->vi[k].win;
        if (!w || !w->keep) continue;
        w->gens = orn_xmalloc((size_t)P * sizeof *w->gens);
        for (int r = 0; r < P; r++) w->gens[r] = g[(size_t)r * (size_t)nk + (size_t)j];
        j++;
        OrnDsmArray *s = x->vi[k].store;
        size_t size = 0, bytes = (size_t)s->nnz * s->esize;
        const void *rep = NULL;
        if (bytes <= w->cap) status = orn_dsm_replica(s, w->gens, check, &rep);
        if (status) break;
        if (rep) { /* every rank of the host reads one copy */
            if (w->buf) rt_spare_give(w->rt, w->buf, w->bufcap, w->cap);
            w->buf = (char *)rep;
            w->bufcap = bytes;
            w->shared = 1;
            w->r0 = 0;
            w->r1 = s->dims[0];
            w->valid = 1;
            x->rt->stats.shared += (int64_t)s->nnz;
            continue;
        }
        char *p = rt_spare_find(x->rt, s->id, w->gens, P, &size);
        if (!p) continue;
        if (check) { /* fetched again, and compared when complete (rt_window_fill) */
            w->check = p;
            w->checkcap = size;
            continue;
        }
        if (size < bytes) { /* not reached: a kept copy is of the whole array */
            rt_spare_give(w->rt, p, size, w->cap);
            continue;
        }
        if (w->buf) rt_spare_give(w->rt, w->buf, w->bufcap, w->cap);
        w->buf = p;
        w->bufcap = size;
        w->r0 = 0;
        w->r1 = s->dims[0];
        w->valid = 1;
        x->rt->stats.kept += (int64_t)s->nnz;
    }
    free(g);
    return status;
}

void rt_window_flushed(Exec *x)
{
    for (int k = 1; k < x->n; k++)
        if (x->vi[k].win && x->vi[k].buffered) x->vi[k].win->valid = 0;
}

void rt_window_free(Exec *x)
{
    if (!x->vi) return;
    for (int k = 0; k < x->n; k++) {
        RtWindow *w = x->vi[k].win;
        if (!w) continue;
        const OrnDsmArray *s = x->vi[k].store;
        if (w->shared) w->buf = NULL; /* the replica stays with the array */
        if (w->buf && w->gens && w->valid && w->r0 == 0 && w->r1 == s->dims[0])
            rt_spare_keep(w->rt, w->buf, w->bufcap, w->cap, s->id, w->gens, x->P);
        else if (w->buf)
            rt_spare_give(w->rt, w->buf, w->bufcap, w->cap); /* the next run's copy */
        if (w->check) rt_spare_give(w->rt, w->check, w->checkcap, w->cap);
        free(w->gens);
        free(w->mark);
        free(w->runs);
        free(w->rng);
        free(w->stage);
        free(w);
        x->vi[k].win = NULL;
    }
}
