/* exec.c: running one parallel_for (orn_rt_run): validation, binding blocks to views (their
 * slow paths -- caches, on-demand fetches, buffer deltas -- are view_slow.c's), the
 * step/round driver shared by all schedules, accumulators and the trace.
 *
 * Driver: a schedule (sched_*.c) divides the loop into global steps; at step s every rank
 * runs its work items (blocks, or element ranges of blocks, in key order). When the loop
 * prefetches or has buffers, the work of a step is cut into rounds -- one block each, or
 * flush_every iterations -- and every round is
 *     prefetch pass -> bulk fetch (collective) -> bodies -> buffer flush (collective)
 * All ranks run the same number of rounds per step (the maximum; every rank computes
 * everyone's work from the replicated partition metadata), so the collectives match.
 * Reads of prefetched arrays inside a round see the values as of the round's start: at
 * most one flush interval stale, as the language allows for buffers.
 *
 * Accumulators: each block keeps its own partial (starting from the identity); at the end
 * the partials are gathered and combined in block order on every rank, so the result is
 * bit-identical on every rank and from run to run.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "managed.h"
#include "rt_int.h"

double rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int rt_fail(Exec *x, int code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return orn_dsm_fail(x->dsm, code, "%s", msg);
}

int rt_fail_lines(Exec *x, int code, const char *lines, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return orn_dsm_fail_lines(x->dsm, code, lines, "%s", msg);
}

void rt_work_push(WorkList *l, int64_t tile, int64_t first, int64_t count)
{
    if (count <= 0) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->w = orn_xrealloc(l->w, (size_t)l->cap * sizeof *l->w);
    }
    l->w[l->n++] = (Work){tile, first, count, NULL, 0};
}

void rt_work_push_runs(WorkList *l, int64_t tile, const int64_t *runs, int64_t nruns)
{
    int64_t count = 0;
    for (int64_t r = 0; r < nruns; r++) count += runs[2 * r + 1];
    if (count <= 0) return;
    rt_work_push(l, tile, runs[0], count);
    l->w[l->n - 1].runs = runs;
    l->w[l->n - 1].nruns = nruns;
}

/* ---------------------------------------------------------------- shared by the schedules */

int rt_partition_all(Exec *x, int np, RtOwnerFn fn)
{
    int status = rt_partition_iter(x, np, fn);
    if (!status) status = rt_partition_args(x, np, fn);
    return status;
}

int rt_step_noop(Exec *x, int64_t s)
{
    (void)x;
    (void)s;
    return ORN_OK;
}

int rt_finish_noop(Exec *x)
{
    (void)x;
    return ORN_OK;
}

void rt_work_owned(Exec *x, int rank, WorkList *out)
{
    const OrnDsmArray *it = x->iter;
    for (int64_t t = 0; t < it->part.ntiles; t++)
        if (it->part.owner[t] == rank) rt_work_push(out, t, 0, it->tiles[t].n);
}

void rt_work_wavefront(Exec *x, int64_t s, int rank, WorkList *out)
{
    const OrnDsmArray *it = x->iter;
    for (int64_t b0 = rank; b0 < x->nb[0]; b0 += x->P) {
        int64_t b1 = s - b0;
        if (b1 < 0 || b1 >= x->nb[1]) continue;
        int grid[ORN_DSM_MAXDIM] = {0, 0, 0, 0};
        grid[x->kd[0]] = (int)b0;
        grid[x->kd[1]] = (int)b1;
        int64_t t = orn_dsm_part_ravel(&it->part, grid);
        rt_work_push(out, t, 0, it->tiles[t].n);
    }
}

/* A buffer's target that the loop reads replicated: every rank's whole array as one tile,
 * which is then the rank's copy (rt_buffer_set_replica: its own updates go to it at once and
 * its reads see them, as for a prefetched copy; the flush makes every copy the same). NULL
 * when the array is not held that way (sparse, or not one whole tile). */
static char *replicated_copy(OrnDsmArray *a)
{
    if (a->sparse || a->part.ntiles != 1) return NULL;
    OrnDsmTile *t = &a->tiles[0];
    int64_t vol = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (t->lo[d] != 0 || t->hi[d] != a->dims[d]) return NULL;
        vol *= a->dims[d];
    }
    return t->held && t->vals && t->n == vol ? t->vals : NULL;
}

const char *rt_role_name(int r)
{
    static const char *const names[] = {"partitioned", "rotated",  "replicated",
                                        "prefetched",  "buffered", "remote"};
    return r >= 0 && r <= 5 ? names[r] : "?";
}

/* ---------------------------------------------------------------- binding blocks */

void rt_box_view(OrnRtView *v, const OrnDsmArray *a, int64_t t)
{
    const OrnDsmTile *tl = &a->tiles[t];
    v->base = a->sparse ? NULL : tl->vals;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) {
        v->lo[d] = d < a->ndim ? tl->lo[d] : 0;
        v->hi[d] = d < a->ndim ? tl->hi[d] : 0;
        v->stride[d] = 0;
    }
    int64_t s = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        v->stride[d] = s;
        s *= tl->hi[d] - tl->lo[d];
    }
    if (a->sparse && a->ndim == 2 && tl->cols) {
        v->rowptr = tl->rowptr;
        v->cols = tl->cols;
        v->rvals = tl->vals;
        v->rlo = tl->lo[0];
        v->rn = tl->hi[0] - tl->lo[0];
        v->clo = tl->lo[1];
    }
}

static void empty_view(OrnRtView *v)
{
    v->base = NULL;
    v->cols = NULL;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) v->lo[d] = v->hi[d] = v->stride[d] = 0;
}

static void acc_identity(const OrnRtPlanAcc *a, OrnRtScalar *v)
{
    memset(v, 0, sizeof *v);
    int one = a->kind == ORN_RT_ACC_PROD, lo = a->kind == ORN_RT_ACC_MAX,
        hi = a->kind == ORN_RT_ACC_MIN;
    switch (a->type) {
    case ORN_RT_I32:
        v->i32 = one ? 1 : hi ? INT32_MAX : lo ? INT32_MIN : 0;
        break;
    case ORN_RT_I64:
        v->i64 = one ? 1 : hi ? INT64_MAX : lo ? INT64_MIN : 0;
        break;
    case ORN_RT_F32:
        v->f32 = one ? 1.0f : hi ? INFINITY : lo ? -INFINITY : 0.0f;
        break;
    case ORN_RT_F64:
        v->f64 = one ? 1.0 : hi ? INFINITY : lo ? -INFINITY : 0.0;
        break;
    }
}

#define COMBINE(f)                                                                                 \
    switch (a->kind) {                                                                             \
    case ORN_RT_ACC_SUM:                                                                           \
        r->f = r->f + p->f;                                                                        \
        break;                                                                                     \
    case ORN_RT_ACC_PROD:                                                                          \
        r->f = r->f * p->f;                                                                        \
        break;                                                                                     \
    case ORN_RT_ACC_MIN:                                                                           \
        r->f = p->f < r->f ? p->f : r->f;                                                          \
        break;                                                                                     \
    case ORN_RT_ACC_MAX:                                                                           \
        r->f = p->f > r->f ? p->f : r->f;                                                          \
        break;                                                                                     \
    }

static void acc_combine(const OrnRtPlanAcc *a, OrnRtScalar *r, const OrnRtScalar *p)
{
    switch (a->type) {
    case ORN_RT_I32: {
        /* Integer sums and products wrap (computed unsigned: no undefined behaviour). */
        if (a->kind == ORN_RT_ACC_SUM)
            r->i32 = (int32_t)((uint32_t)r->i32 + (uint32_t)p->i32);
        else if (a->kind == ORN_RT_ACC_PROD)
            r->i32 = (int32_t)((uint32_t)r->i32 * (uint32_t)p->i32);
        else if (a->kind == ORN_RT_ACC_MIN)
            r->i32 = p->i32 < r->i32 ? p->i32 : r->i32;
        else
            r->i32 = p->i32 > r->i32 ? p->i32 : r->i32;
        break;
    }
    case ORN_RT_I64: {
        if (a->kind == ORN_RT_ACC_SUM)
            r->i64 = (int64_t)((uint64_t)r->i64 + (uint64_t)p->i64);
        else if (a->kind == ORN_RT_ACC_PROD)
            r->i64 = (int64_t)((uint64_t)r->i64 * (uint64_t)p->i64);
        else if (a->kind == ORN_RT_ACC_MIN)
            r->i64 = p->i64 < r->i64 ? p->i64 : r->i64;
        else
            r->i64 = p->i64 > r->i64 ? p->i64 : r->i64;
        break;
    }
    case ORN_RT_F32:
        COMBINE(f32) break;
    case ORN_RT_F64:
        COMBINE(f64) break;
    }
}

static int bind(Exec *x, int64_t tile, OrnRtBlock *b)
{
    const OrnRtPlan *pl = x->plan;
    OrnDsmArray *it = x->iter;
    OrnDsmTile *t = &it->tiles[tile];
    if (!t->held)
        return rt_fail(x, ORN_E_INTERNAL, "block %lld of the iteration space is not held here",
                       (long long)tile);
    memset(b, 0, sizeof *b);
    b->ndim = pl->nkeys;
    b->sparse = it->sparse || x->iter_keys != NULL;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) {
        b->lo[d] = d < it->ndim ? t->lo[d] : 0;
        b->hi[d] = d < it->ndim ? t->hi[d] : 0;
    }
    b->keys = x->iter_keys ? x->iter_keys(x, tile) : t->keys;
    b->vals = t->vals;
    b->views = x->views;
    b->acc = pl->naccs ? &x->accpart[tile * pl->naccs] : NULL;
    if (pl->naccs && !x->accused[tile]) {
        for (int a = 0; a < pl->naccs; a++) acc_identity(&pl->accs[a], &b->acc[a]);
        x->accused[tile] = 1;
    }
    b->seed = x->rt->seed;
    b->stream = x->stream;
    b->block = tile;
    for (int k = 0; k < x->n; k++) {
        OrnRtView *v = &x->views[k];
        ViewImpl *vi = &x->vi[k];
        int role = v->role;
        vi->tile = -1;
        /* bodies add into a buffer's dense store inline; the prefetch pass adds nothing */
        v->deltas = role == ORN_RT_BUFFERED && vi->buf && !x->in_prefetch
                        ? rt_buffer_inline(vi->buf)
                        : NULL;
        v->cols = NULL; /* box_view sets the CSR rows of a sparse tile */
        int bound = 0, status;
        if (k == 0) {
            vi->tile = tile;
            if (vi->xform) {
                empty_view(v);
                continue;
            }
            if (rt_ghost_bind(x, 0, tile, v)) continue;
            if ((status = rt_halo_bind(x, 0, tile, v, &bound))) return status;
            if (!bound) rt_box_view(v, it, tile);
            continue;
        }
        switch (role) {
        case ORN_RT_PARTITIONED:
        case ORN_RT_ROTATED: {
            int64_t ta = rt_aligned_tile(x, k, tile);
            if (!vi->store->tiles[ta].held)
                return rt_fail(x, ORN_E_INTERNAL, "block %lld of %s is not held here",
                               (long long)ta, vi->store->name);
            vi->tile = ta;
            if (rt_ghost_bind(x, k, ta, v)) break;
            if ((status = rt_halo_bind(x, k, ta, v, &bound))) return status;
            if (!bound) rt_box_view(v, vi->store, ta);
            break;
        }
        case ORN_RT_REPLICATED:
            rt_box_view(v, vi->store, 0);
            vi->tile = 0;
            break;
        default:
            /* a whole copy (blocking.c), else a window (window.c), else the slow path */
            if (x->replica && x->replica[k])
                rt_replica_bind(x, k, v);
            else if (!rt_window_bind(x, k, v))
                empty_view(v);
        }
    }
    for (int k = 0; k < x->n; k++) { /* after the targets' views are bound */
        ViewImpl *vi = &x->vi[k];
        if (!vi->buf) continue;
        OrnRtDeltas *q = &vi->buf->dd;
        q->held = NULL;
        if (vi->held_view < 0 || x->in_prefetch) continue;
        const ViewImpl *tv = &x->vi[vi->held_view];
        OrnRtView box;
        rt_box_view(&box, tv->store, tv->tile);
        if (!box.base) continue;
        q->held = box.base;
        for (int d = 0; d < ORN_RT_MAXDIM; d++) {
            q->hlo[d] = box.lo[d];
            q->hn[d] = box.hi[d] - box.lo[d];
            q->hs[d] = box.stride[d];
        }
    }
    return ORN_OK;
}

/* Buffer k's updates of its target's block that the current block holds can go there at
 * once (bind: OrnRtDeltas.held): several ranks, the default apply, a dense target without a
 * copy whose every view in the loop is partitioned or rotated without a halo -- no other
 * rank reads the block during the round, so only this rank's reads see the updates, and
 * they see them in the order it makes them. The view, or -1. */
static int held_view(const Exec *x, int k)
{
    const OrnRtBuffer *b = x->vi[k].buf;
    if (x->P < 2 || b->apply || b->replica || b->target->sparse) return -1;
    int view = -1;
    for (int j = 0; j < x->n; j++) {
        if (j == k || x->vi[j].store != b->target) continue;
        int role = x->views[j].role;
        if (role != ORN_RT_PARTITIONED && role != ORN_RT_ROTATED) return -1;
        for (int d = 0; d < x->plan->arrays[j].ndim; d++)
            if (x->plan->arrays[j].halo_lo[d] || x->plan->arrays[j].halo_hi[d]) return -1;
        view = j;
    }
    return view;
}

/* ---------------------------------------------------------------- running work */

/* A body returned rc != 0: the loop's error, or contained (contain.c: OK, no more bodies). */
static int body_failed(Exec *x, int rc)
{
    int code = orn_dsm_error_code(x->dsm) == ORN_E_BODY
                   ? ORN_E_BODY
                   : rt_fail(x, ORN_E_BODY, "the loop body failed (status %d)", rc);
    return rt_body_contain(x, code) ? ORN_OK : code;
}

static void trace_push(Exec *x, const Work *w)
{
    if (!x->rt->trace_on) return;
    if (x->ntr == x->captr) {
        x->captr = x->captr ? 2 * x->captr : 64;
        x->tr = orn_xrealloc(x->tr, (size_t)x->captr * sizeof *x->tr);
    }
    OrnRtTraceEntry *e = &x->tr[x->ntr++];
    memset(e, 0, sizeof *e);
    e->step = x->step;
    e->round = x->round;
    e->rank = x->me;
    e->seq = x->seq++;
    e->block = w->tile;
    e->first = w->first;
    e->count = w->count;
    const OrnDsmTile *t = &x->iter->tiles[w->tile];
    for (int d = 0; d < x->iter->ndim; d++) {
        e->lo[d] = t->lo[d];
        e->hi[d] = t->hi[d];
    }
}

void orn_rt_block_key_csr(const OrnRtBlock *b, int64_t e, int64_t *key)
{
    key[0] = b->lo[0] + orn_dsm_last_le(b->rowptr, b->hi[0] - b->lo[0], e);
    key[1] = b->lo[1] + b->cols[e];
}

/* Elements [f, f + len) of the bound tile t into b: CSR tiles get their keys decoded into
 * x->keybuf (the call then sees elements [0, len) of keys and vals), unless the body reads
 * rowptr / cols instead. */
static void set_range(Exec *x, OrnRtBlock *b, const OrnDsmTile *t, int decode, int64_t f,
                      int64_t len)
{
    if (!decode) {
        b->first = f;
        b->count = len;
        if (b->rowptr) b->row_first = orn_dsm_tile_row_of(t, f);
        return;
    }
    int nd = x->iter->ndim;
    if (x->capkeybuf < len * nd) {
        x->capkeybuf = len * nd;
        x->keybuf = orn_xrealloc(x->keybuf, (size_t)x->capkeybuf * sizeof *x->keybuf);
    }
    orn_dsm_tile_keys(x->iter, t, f, len, x->keybuf);
    b->keys = x->keybuf;
    b->vals = (char *)t->vals + (size_t)f * x->iter->esize;
    b->first = 0;
    b->count = len;
}

static int run_item(Exec *x, const Work *w, int prefetch_pass)
{
    OrnRtBlock b;
    const OrnRtLoop *L = x->loop;
    if (x->body_skip) return ORN_OK; /* a contained error: the schedule goes on without bodies */
    x->in_prefetch = prefetch_pass;  /* bind gives no direct pointers for this pass's writes */
    int status = bind(x, w->tile, &b);
    x->in_prefetch = 0;
    if (status) return status;
    const OrnDsmTile *t = &x->iter->tiles[w->tile];
    int csr = t->cols != NULL && !x->iter_keys;
    int decode = csr && !x->plan->keys_unused;
    if (csr && !decode) {
        b.rowptr = t->rowptr;
        b.cols = t->cols;
    }
    int64_t end = w->first + w->count, len = w->count;
    if (prefetch_pass) {
        RtSpan sp = rt_span_begin(x, ORN_TL_COMPUTE, "prefetch pass");
        orn_tl_int(x->tl, sp.id, "tile", w->tile);
        x->in_prefetch = 1;
        for (int64_t f = w->first; f < end; f += len) {
            if (decode) len = x->rt->slice;
            if (len > end - f) len = end - f;
            set_range(x, &b, t, decode, f, len);
            int rc = L->prefetch(x->rt, &b, L->env);
            if (rc || x->body_skip) {
                x->in_prefetch = 0;
                return rc ? body_failed(x, rc) : ORN_OK;
            }
        }
        x->in_prefetch = 0;
        rt_span_end(x, sp, NULL);
        return x->status;
    }
    RtSpan sp = rt_span_begin(x, ORN_TL_COMPUTE, "block");
    if (sp.id >= 0) {
        orn_tl_int(x->tl, sp.id, "tile", w->tile);
        orn_tl_int(x->tl, sp.id, "elements", w->count);
        orn_tl_int(x->tl, sp.id, "step", x->step);
    }
    if (w->runs) { /* one binding, the runs in order */
        for (int64_t r = 0; r < w->nruns; r++) {
            Work piece = {w->tile, w->runs[2 * r], w->runs[2 * r + 1], NULL, 0};
            if (piece.count <= 0) continue;
            trace_push(x, &piece);
            set_range(x, &b, t, 0, piece.first, piece.count);
            int rc = L->body(x->rt, &b, L->env);
            if (rc) return body_failed(x, rc);
            if (x->status || x->body_skip) return x->status;
            if (x->need_progress && r + 1 < w->nruns) {
                status = orn_dsm_progress(x->dsm);
                if (status) return status;
            }
        }
        rt_span_end(x, sp, &x->rt->stats.compute);
        x->rt->stats.blocks++;
        x->pr_done += w->count;
        rt_progress_tick(x, 0);
        return ORN_OK;
    }
    trace_push(x, w);
    /* fuse.c: the first loop of a pair calls in chunks that the second follows; the
     * second skips what the first's pass computed */
    int64_t chunk = x->fuse_phase == 1 ? rt_fuse_chunk(t) : 0;
    for (int64_t from = w->first, pend = end; from < end; from = pend) {
        if (x->fuse_phase == 2) from = rt_fuse_skip(x, t, from, end, &pend);
        for (int64_t f = from; f < pend; f += len) {
            len = pend - f;
            if (!L->whole && (x->need_progress || decode || x->rt->sliced)) len = x->rt->slice;
            if (chunk > 0 && len > chunk) len = chunk;
            if (len > pend - f) len = pend - f;
            set_range(x, &b, t, decode, f, len);
            int rc = L->body(x->rt, &b, L->env);
            if (rc) return body_failed(x, rc);
            if (x->status || x->body_skip) return x->status;
            if (chunk > 0 && (status = rt_fuse_after(x, w->tile, f, f + len))) return status;
            if (x->need_progress && f + len < end) {
                status = orn_dsm_progress(x->dsm);
                if (status) return status;
            }
            if (f + len < end) rt_progress_tick(x, f + len - w->first);
        }
    }
    rt_span_end(x, sp, &x->rt->stats.compute);
    x->rt->stats.blocks++;
    x->pr_done += w->count;
    rt_progress_tick(x, 0);
    return ORN_OK;
}

/* Collective: fetch what the prefetch pass announced: the prefetch cache's keys, and the
 * windows' rows as ranges. */
static int exchange(Exec *x)
{
    int64_t n = 0, nr = 0, wn, elems = 0;
    rt_window_plan(x);
    for (int k = 0; k < x->n; k++) {
        n += x->vi[k].nreq;
        const OrnDsmRun *r = rt_window_ranges(&x->vi[k], &wn);
        nr += wn;
        for (int64_t i = 0; i < wn; i++) elems += r[i].n;
    }
    int *ids = orn_xmalloc((size_t)(n ? n : 1) * sizeof *ids);
    int64_t *lins = orn_xmalloc((size_t)(n ? n : 1) * sizeof *lins);
    unsigned char *vals = orn_xcalloc((size_t)(n ? n : 1), 8);
    unsigned char *found = orn_xcalloc((size_t)(n ? n : 1), 1);
    OrnDsmRun *rng = orn_xmalloc((size_t)(nr ? nr : 1) * sizeof *rng);
    int64_t m = 0, mr = 0;
    for (int k = 0; k < x->n; k++) {
        for (int64_t i = 0; i < x->vi[k].nreq; i++) {
            ids[m] = x->vi[k].store->id;
            lins[m++] = x->vi[k].req[i];
        }
        const OrnDsmRun *r = rt_window_ranges(&x->vi[k], &wn);
        if (wn) memcpy(rng + mr, r, (size_t)wn * sizeof *rng);
        mr += wn;
    }
    OrnDsmFetch f = {n, ids, lins, vals, 8, found, nr, rng};
    RtSpan sp = rt_xfer_begin(x, "prefetch exchange");
    orn_tl_int(x->tl, sp.id, "keys", n);
    orn_tl_int(x->tl, sp.id, "range elements", elems);
    int status = orn_dsm_fetch_bulk(x->dsm, &f);
    rt_xfer_end(x, sp, &x->rt->stats.transfer);
    if (!status) {
        m = 0;
        for (int k = 0; k < x->n; k++) {
            ViewImpl *vi = &x->vi[k];
            for (int64_t i = 0; i < vi->nreq; i++, m++) {
                CacheEnt *c = rt_map_find(&vi->cache, vi->req[i]);
                memcpy(c->val, vals + (size_t)m * 8, 8);
                c->found = found[m];
                c->state = 2;
            }
            vi->nreq = 0;
            if (!status) status = rt_window_fill(x, k);
        }
        x->rt->stats.prefetched += n + elems;
    }
    free(ids);
    free(lins);
    free(vals);
    free(found);
    free(rng);
    return status;
}

/* A position in a work list: an item and the iterations of it already taken. */
typedef struct WorkCursor {
    int64_t item, off;
} WorkCursor;

/* Appends to out the next t iterations of in from *c (fewer at its end), in pieces that
 * do not cross items. */
static void take_work(const WorkList *in, WorkCursor *c, int64_t t, WorkList *out)
{
    for (int64_t fill = 0; fill < t && c->item < in->n;) {
        const Work *w = &in->w[c->item];
        int64_t len = w->count - c->off < t - fill ? w->count - c->off : t - fill;
        rt_work_push(out, w->tile, w->first + c->off, len);
        fill += len;
        c->off += len;
        if (c->off == w->count) {
            c->item++;
            c->off = 0;
        }
    }
}

/* Cut a work list into rounds: per block, or per flush_every iterations. Writes the round
 * number of each piece into rounds (parallel to the pieces in out); returns the count. */
static int64_t cut_rounds(const Exec *x, const WorkList *in, WorkList *out, int64_t **round_of)
{
    int64_t nr = 0, group = -1, cap = 0;
    WorkCursor c = {0, 0};
    out->n = 0;
    *round_of = NULL;
    while (c.item < in->n) {
        int64_t from = out->n;
        if (x->flush_every > 0) {
            take_work(in, &c, x->flush_every, out);
        } else {
            /* A round per block: its sub-blocks (consecutive tiles of one group) share it. */
            const Work *w = &in->w[c.item++];
            int64_t g = rt_tile_group(x, w->tile);
            if (group >= 0 && g != group) nr++;
            group = g;
            rt_work_push(out, w->tile, w->first, w->count);
        }
        if (out->cap > cap) {
            cap = out->cap;
            *round_of = orn_xrealloc(*round_of, (size_t)cap * sizeof **round_of);
        }
        for (int64_t i = from; i < out->n; i++) (*round_of)[i] = nr;
        if (x->flush_every > 0) nr++;
    }
    if (x->flush_every <= 0 && group >= 0) nr++;
    return nr;
}

/* Buffer view k's target, which no view of the loop reads (PageRank's push `dnext[t] +=`),
 * with the default apply and no flush interval: flushing it before the step's last round
 * would change nothing any iteration sees, only cost an exchange (and the rounding of the
 * sums, which the deltas then keep per rank until the step's end). */
static int unread_target(const Exec *x, int k)
{
    const OrnRtBuffer *b = x->vi[k].buf;
    if (b->apply || b->flush_every > 0) return 0;
    for (int j = 0; j < x->n; j++)
        if (j != k && x->vi[j].store == x->vi[k].store) return 0;
    return 1;
}

/* The view of buffer k's target that the schedule rotates (its tiles travel during the
 * loop: the flushes route its deltas by the schedule's holder), or -1. */
static int rotated_view(const Exec *x, int k)
{
    if (x->P < 2 || !x->sched->holder) return -1;
    for (int j = 0; j < x->n; j++)
        if (j != k && x->vi[j].store == x->vi[k].buf->target && x->views[j].role == ORN_RT_ROTATED)
            return j;
    return -1;
}

int rt_buffers_arrived(Exec *x, const OrnDsmArray *a, int64_t tile)
{
    int status = ORN_OK;
    for (int k = 0; k < x->n && !status; k++)
        if (x->vi[k].buf && x->vi[k].buf->target == a && x->vi[k].buf->npending)
            status = rt_buffer_arrived(x->vi[k].buf, tile);
    return status;
}

/* Collective. An owner answers on-demand reads whenever it waits, also while it still
 * waits inside a flush whose deltas it has not applied yet; a rank that finished the flush
 * early could then read a stale value. So when bodies may read remotely, a barrier after
 * the flush makes every owner apply before anyone reads. */
static int flush_buffers(Exec *x, int last)
{
    int any = 0;
    RtSpan sp = rt_xfer_begin(x, NULL); /* each flush is a span (buffer.c) */
    for (int k = 0; k < x->n; k++) {
        if (!x->vi[k].buf) continue;
        if (!last && unread_target(x, k)) continue;
        OrnRtBuffer *b = x->vi[k].buf;
        int j = b->route ? rotated_view(x, k) : -1;
        for (int64_t t = 0; j >= 0 && t < b->target->part.ntiles; t++)
            b->route[t] = x->sched->holder(x, j, t);
        int status = orn_rt_buffer_flush(b);
        if (status) return status;
        any = 1;
    }
    rt_xfer_end(x, sp, &x->rt->stats.flush);
    if (any && x->remote_reads && x->P > 1) return rt_barrier(x);
    return ORN_OK;
}

static int cmp_lin(const void *a, const void *b)
{
    int64_t p = *(const int64_t *)a, q = *(const int64_t *)b;
    return (p > q) - (p < q);
}

/* Collective: send the round's writes of remote arrays to their owners. */
static int flush_remote(Exec *x)
{
    RtSpan sp = {0, 0, -1};
    int any = 0;
    for (int k = 0; k < x->n; k++) any |= x->views[k].role == ORN_RT_REMOTE;
    if (any) sp = rt_xfer_begin(x, "remote writes");
    int status = ORN_OK;
    for (int k = 0; k < x->n && !status; k++) {
        ViewImpl *vi = &x->vi[k];
        if (x->views[k].role != ORN_RT_REMOTE) continue;
        OrnDsmArray *s = vi->store;
        int nd = s->ndim;
        int64_t n = vi->ndirty;
        if (n > 1) qsort(vi->dirty, (size_t)n, sizeof *vi->dirty, cmp_lin);
        int64_t *keys = orn_xmalloc((size_t)(n ? n : 1) * (size_t)nd * 8);
        char *vals = orn_xmalloc((size_t)(n ? n : 1) * s->esize);
        for (int64_t i = 0; i < n; i++) {
            const CacheEnt *c = rt_map_find(&vi->cache, vi->dirty[i]);
            orn_dsm_unravel(s, vi->dirty[i], keys + i * nd);
            memcpy(vals + (size_t)i * s->esize, c->val, s->esize);
        }
        status = orn_dsm_write_elements(s, n, keys, vals);
        free(keys);
        free(vals);
        vi->ndirty = 0;
    }
    if (any) rt_xfer_end(x, sp, &x->rt->stats.transfer);
    return status;
}

static void clear_caches(Exec *x)
{
    for (int k = 0; k < x->n; k++) {
        rt_map_clear(&x->vi[k].cache);
        x->vi[k].nreq = 0;
    }
}

/* Boundary j of the round for every managed buffer of the loop (managed.h). */
static int managed_boundary(Exec *x, int j)
{
    RtSpan sp = rt_xfer_begin(x, "managed exchange");
    int status = ORN_OK;
    for (int k = 0; k < x->n && !status; k++)
        if (x->vi[k].buf && x->vi[k].buf->mg) status = rt_managed_boundary(x->vi[k].buf, j);
    rt_xfer_end(x, sp, &x->rt->stats.flush);
    return status;
}

/* The bodies of one round: pieces [from, at). With managed buffers the rank's iterations of
 * the round are cut into m sub-rounds of equal shares (fixed points of its own iteration
 * count), with a boundary after each but the last -- every one of them, also without work. */
static int run_round(Exec *x, const WorkList *pieces, int64_t from, int64_t at)
{
    int m = 0, status = ORN_OK;
    for (int k = 0; k < x->n; k++)
        if (x->vi[k].buf && x->vi[k].buf->mg) {
            int mk = rt_managed_subrounds(x->vi[k].buf->mg);
            if (!m || mk < m) m = mk;
        }
    for (int k = 0; k < x->n && m; k++) /* the clock of the round's work starts */
        if (x->vi[k].buf && x->vi[k].buf->mg) rt_managed_round_begin(x->vi[k].buf->mg, m);
    if (m < 2) {
        for (int64_t i = from; i < at && !status; i++) status = run_item(x, &pieces->w[i], 0);
        return status;
    }
    int64_t total = 0, done = 0;
    for (int64_t i = from; i < at; i++) total += pieces->w[i].count;
    int j = 0;
    for (int64_t i = from; i < at && !status; i++) {
        Work w = pieces->w[i];
        while (w.count > 0 && !status) {
            while (j < m - 1 && done >= total * (j + 1) / m && !status)
                status = managed_boundary(x, j++);
            if (status) break;
            int64_t len = j < m - 1 ? total * (j + 1) / m - done : w.count;
            if (len > w.count) len = w.count;
            Work piece = {w.tile, w.first, len, NULL, 0};
            status = run_item(x, &piece, 0);
            w.first += len;
            w.count -= len;
            done += len;
        }
    }
    while (j < m - 1 && !status) status = managed_boundary(x, j++);
    return status;
}

/* One round, pieces [from, at) of this rank's work: its prefetch, bodies and flushes. */
static int one_round(Exec *x, const WorkList *pieces, int64_t from, int64_t at, int last)
{
    int status = ORN_OK;
    if (x->loop->prefetch && x->prefetch_needed && !x->skip_prefetch) {
        int pass = rt_window_pass_needed(x);
        for (int64_t i = from; i < at && pass && !status; i++)
            status = run_item(x, &pieces->w[i], 1);
        if (!status) status = exchange(x);
        if (status) return status;
    }
    status = run_round(x, pieces, from, at);
    if (status) return status;
    status = flush_buffers(x, last);
    rt_window_flushed(x);
    if (!status) status = flush_remote(x);
    clear_caches(x);
    x->round++;
    x->rt->stats.rounds++;
    return status;
}

/* The adaptive flush interval, for a buffer without flush_every of an f32 or f64 target that
 * the loop reads through a copy on every rank (own updates visible, the others' as of the
 * last flush): SGD's parameters, whose changes are functions of the values read. (Integer
 * targets are counts -- LDA's topic totals --, whose concurrent changes add up exactly as
 * the serial loop's would; they keep a flush per block.) Its
 * measure is the share of the elements changed in a round that two or more ranks changed:
 * each such element took concurrent changes made from the same stale value, summed at the
 * flush where a serial loop would have made each from the other's result. Above 3/8 the
 * interval halves, down to RT_INTERVAL_MIN; below 3/16 it doubles, up to RT_INTERVAL_MAX.
 * A round at the floor still above 3/8 (a small dense model that every iteration changes
 * whole: softmax regression's weights) cannot be made shorter at an affordable cost, and
 * summing there adds up P steps taken from one stale value (it diverges at 3 ranks): from
 * then on the flushes average the changes of elements several ranks changed (as
 * staleness_aware does; a change one rank made alone is added whole), until a round below
 * 3/16 lets the interval grow again. The counts come from the changes every rank gathered,
 * so every rank chooses the same interval: a function of the data and the rank count,
 * never of timings. At one rank updates are applied at once and there is nothing to
 * choose. tests/e2e/slr_replay.c replays the same rule. */
#define RT_INTERVAL_MIN 64
#define RT_INTERVAL_MAX ((int64_t)1 << 20)

static void adapt_begin(Exec *x)
{
    if (x->P == 1 || !x->rounds || x->flush_every > 0) return;
    int64_t t = 0;
    for (int k = 0; k < x->n; k++) {
        OrnRtBuffer *b = x->vi[k].buf;
        if (!b || b->apply || b->mg || !b->replica || unread_target(x, k)) continue;
        if (b->target->type != ORN_DSM_F32 && b->target->type != ORN_DSM_F64) continue;
        b->count_changes = 1;
        if (!b->interval) b->interval = RT_INTERVAL_MIN;
        if (!t || b->interval < t) t = b->interval;
    }
    x->adapt = t > 0;
    if (x->adapt) x->flush_every = t;
}

static void adapt_interval(Exec *x)
{
    int64_t t = 0;
    for (int k = 0; k < x->n; k++) {
        OrnRtBuffer *b = x->vi[k].buf;
        if (!b || !b->count_changes) continue;
        if (b->changed > 0 && b->shared * 8 > b->changed * 3) {
            b->averaging = b->interval <= RT_INTERVAL_MIN; /* this round ran at the floor */
            b->interval = b->interval / 2 > RT_INTERVAL_MIN ? b->interval / 2 : RT_INTERVAL_MIN;
        } else if (b->changed > 0 && b->shared * 16 < b->changed * 3) {
            b->averaging = 0;
            b->interval = b->interval < RT_INTERVAL_MAX / 2 ? 2 * b->interval : RT_INTERVAL_MAX;
        }
        if (!t || b->interval < t) t = b->interval;
    }
    x->flush_every = t;
}

/* Rounds of x->flush_every iterations per rank, chosen anew after each flush: everyone
 * runs rounds until every rank's work is done, which each rank tells from everyone's work. */
static int adaptive_rounds(Exec *x, int64_t s, const WorkList *mine)
{
    int status = ORN_OK, more = 0;
    int64_t *left = orn_xcalloc((size_t)x->P, sizeof *left);
    WorkCursor c = {0, 0};
    WorkList other = {0}, pieces = {0};
    for (int q = 0; q < x->P; q++) {
        other.n = 0;
        x->sched->work(x, s, q, &other);
        for (int64_t i = 0; i < other.n; i++) left[q] += other.w[i].count;
        more |= left[q] > 0;
    }
    while (more && !status) {
        int64_t t = x->flush_every;
        int full = 1; /* a round everyone ran whole: its counts measure interval t */
        more = 0;
        for (int q = 0; q < x->P; q++) {
            full &= left[q] >= t;
            left[q] -= left[q] < t ? left[q] : t;
            more |= left[q] > 0;
        }
        pieces.n = 0;
        take_work(mine, &c, t, &pieces);
        status = one_round(x, &pieces, 0, pieces.n, !more);
        if (!status && full) adapt_interval(x);
    }
    free(left);
    free(other.w);
    free(pieces.w);
    return status;
}

static int run_step(Exec *x, int64_t s)
{
    int status = ORN_OK;
    WorkList mine = {0}, other = {0}, pieces = {0};
    int64_t *round_of = NULL;
    x->sched->work(x, s, x->me, &mine);
    if (!x->rounds) {
        for (int64_t i = 0; i < mine.n && !status; i++) {
            const Work *w = &mine.w[i];
            if (x->sched->item_begin) status = x->sched->item_begin(x, w);
            if (!status) status = run_item(x, w, 0);
            if (!status && x->sched->item_end) status = x->sched->item_end(x, w);
        }
        if (!status && x->sched->step_sync && x->P > 1 && !x->ghost) status = rt_barrier(x);
        /* Values fetched on demand are valid for this step only: in ordered schedules an
         * element read before its block ran is rewritten by a later step. */
        clear_caches(x);
        goto fn_exit;
    }
    if (x->adapt) {
        status = adaptive_rounds(x, s, &mine);
        goto fn_exit;
    }
    /* Rounds: everyone runs max over ranks of their round counts. */
    int64_t rounds = 0;
    for (int q = 0; q < x->P; q++) {
        WorkList tmp = {0};
        int64_t *ro = NULL;
        other.n = 0;
        x->sched->work(x, s, q, &other);
        int64_t nr = cut_rounds(x, &other, &tmp, &ro);
        if (nr > rounds) rounds = nr;
        free(tmp.w);
        free(ro);
    }
    cut_rounds(x, &mine, &pieces, &round_of);
    int64_t at = 0;
    for (int64_t r = 0; r < rounds && !status; r++) {
        int64_t from = at;
        while (at < pieces.n && round_of[at] == r) at++;
        status = one_round(x, &pieces, from, at, r == rounds - 1);
    }
fn_exit:
    free(mine.w);
    free(other.w);
    free(pieces.w);
    free(round_of);
    return status;
}

/* ---------------------------------------------------------------- validation */

/* The shared plan check (plan_check.c, the analyzer's too), then what only the runtime
 * can see: the arguments themselves. The same verdict on every rank: it depends on the
 * plan and on replicated array metadata only. */
static int validate(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    const OrnRtLoop *L = x->loop;
    char msg[512];
    int status = ORN_OK;
    if (!p || !L->args || !L->body)
        return rt_fail(x, ORN_E_PLAN, "no iteration space, arguments or body");
    if (p->naccs && !L->acc) return rt_fail(x, ORN_E_PLAN, "accumulators without storage");
    int n = p->narrays > 0 && p->arrays ? p->narrays : 0;
    OrnRtPlanFacts *facts = orn_xcalloc((size_t)(n ? n : 1), sizeof *facts);
    for (int k = 0; k < n; k++) {
        const OrnRtPlanArray *a = &p->arrays[k];
        const char *nm = a->name ? a->name : "?";
        OrnDsmArray *arr = a->role == ORN_RT_BUFFERED
                               ? (L->args[k].buffer ? L->args[k].buffer->target : NULL)
                               : L->args[k].array;
        if (!arr) {
            status = rt_fail(x, ORN_E_PLAN, "array %s (%s): no %s given", nm, rt_role_name(a->role),
                             a->role == ORN_RT_BUFFERED ? "buffer" : "array");
            goto fn_exit;
        }
        if (a->ndim != arr->ndim) {
            status = rt_fail(x, ORN_E_PLAN, "array %s: plan says %d dimensions, array has %d", nm,
                             a->ndim, arr->ndim);
            goto fn_exit;
        }
        if ((a->role == ORN_RT_PREFETCHED || a->role == ORN_RT_BUFFERED ||
             a->role == ORN_RT_REMOTE) &&
            !orn_dsm_linear_ok(arr)) {
            status = rt_fail(x, ORN_E_PLAN, "array %s: too large for keyed remote access", nm);
            goto fn_exit;
        }
        facts[k].sparse = arr->sparse;
    }
    if (orn_rt_plan_check(p, facts, msg, (int)sizeof msg) >= 0)
        status = rt_fail(x, ORN_E_PLAN, "%s", msg);
fn_exit:
    free(facts);
    return status;
}

/* ---------------------------------------------------------------- finishing */

static int reduce_accs(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    int na = p->naccs, status;
    if (!na) return ORN_OK;
    int64_t nt = x->iter->part.ntiles, used = 0;
    size_t rec = 8 + (size_t)na * sizeof(OrnRtScalar);
    for (int64_t t = 0; t < nt; t++) used += x->accused[t];
    char *mine = orn_xmalloc((size_t)(used ? used : 1) * rec), *all = NULL;
    int64_t m = 0;
    for (int64_t t = 0; t < nt; t++) {
        if (!x->accused[t]) continue;
        memcpy(mine + (size_t)m * rec, &t, 8);
        memcpy(mine + (size_t)m * rec + 8, &x->accpart[t * na], (size_t)na * sizeof(OrnRtScalar));
        m++;
    }
    size_t *counts = orn_xcalloc((size_t)x->P, sizeof *counts);
    RtSpan sp = rt_xfer_begin(x, "accumulators");
    status =
        orn_dsm_allgatherv(x->dsm, mine, (size_t)used * rec, (void **)&all, counts, "accumulators");
    rt_xfer_end(x, sp, &x->rt->stats.transfer);
    if (!status) {
        size_t total = 0;
        for (int q = 0; q < x->P; q++) total += counts[q];
        const char **by_tile = orn_xcalloc((size_t)nt, sizeof *by_tile);
        for (size_t off = 0; off < total; off += rec) {
            int64_t t;
            memcpy(&t, all + off, 8);
            if (t >= 0 && t < nt) by_tile[t] = all + off + 8;
        }
        for (int a = 0; a < na; a++) {
            OrnRtScalar r = x->loop->acc[a];
            for (int64_t t = 0; t < nt; t++) {
                if (!by_tile[t]) continue;
                OrnRtScalar pv;
                memcpy(&pv, by_tile[t] + (size_t)a * sizeof pv, sizeof pv);
                acc_combine(&p->accs[a], &r, &pv);
            }
            x->loop->acc[a] = r;
        }
        free(by_tile);
    }
    free(mine);
    free(all);
    free(counts);
    return status;
}

static int cmp_trace(const void *a, const void *b)
{
    const OrnRtTraceEntry *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    if (x->round != y->round) return x->round < y->round ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int gather_trace(Exec *x)
{
    OrnRtCtx *rt = x->rt;
    free(rt->trace);
    rt->trace = NULL;
    rt->ntrace = 0;
    if (!rt->trace_on) return ORN_OK;
    void *all = NULL;
    size_t *counts = orn_xcalloc((size_t)x->P, sizeof *counts);
    RtSpan sp = rt_xfer_begin(x, "trace");
    int status = orn_dsm_allgatherv(x->dsm, x->tr ? (void *)x->tr : (void *)"",
                                    (size_t)x->ntr * sizeof *x->tr, &all, counts, "trace");
    rt_xfer_end(x, sp, &x->rt->stats.transfer);
    if (!status) {
        size_t total = 0;
        for (int q = 0; q < x->P; q++) total += counts[q];
        rt->ntrace = (int64_t)(total / sizeof(OrnRtTraceEntry));
        rt->trace = all;
        all = NULL;
        if (rt->ntrace > 1) qsort(rt->trace, (size_t)rt->ntrace, sizeof *rt->trace, cmp_trace);
    }
    free(all);
    free(counts);
    return status;
}

static uint64_t next_stream(OrnRtCtx *rt, int loop_id)
{
    int i = 0;
    for (; i < rt->nloops; i++)
        if (rt->loops[i].loop_id == loop_id) break;
    if (i == rt->nloops) {
        if (rt->nloops == rt->caploops) {
            rt->caploops = rt->caploops ? 2 * rt->caploops : 16;
            rt->loops = orn_xrealloc(rt->loops, (size_t)rt->caploops * sizeof *rt->loops);
        }
        rt->loops[rt->nloops++] = (LoopCount){loop_id, 0};
    }
    int64_t n = rt->loops[i].count++;
    return ((uint64_t)(uint32_t)loop_id << 32) | (uint32_t)n;
}

static const OrnRtSched *pick(OrnRtStrategy s)
{
    switch (s) {
    case ORN_RT_SERIAL:
        return &orn_rt_sched_serial;
    case ORN_RT_1D:
        return &orn_rt_sched_1d;
    case ORN_RT_2D:
        return &orn_rt_sched_2d_rotation;
    case ORN_RT_2D_ORDERED:
        return &orn_rt_sched_2d_wavefront;
    case ORN_RT_UNIMODULAR:
        return &orn_rt_sched_unimodular;
    }
    return NULL;
}

RtSpan rt_xfer_begin(const Exec *x, const char *name)
{
    OrnDsmTraffic t;
    orn_dsm_traffic(x->dsm, &t);
    RtSpan s = {rt_now(), t.sync, name ? orn_tl_begin(x->tl, ORN_TL_PHASE, name) : -1};
    return s;
}

void rt_xfer_end(Exec *x, RtSpan s, double *stat)
{
    OrnDsmTraffic t;
    orn_dsm_traffic(x->dsm, &t);
    double all = rt_now() - s.t0, sync = t.sync - s.sync0;
    if (sync > all) sync = all;
    *stat += all - sync;
    x->rt->stats.wait += sync;
    orn_tl_end(x->tl, s.id);
}

int rt_barrier(Exec *x)
{
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "barrier");
    int status = orn_dsm_barrier(x->dsm);
    rt_span_end(x, sp, &x->rt->stats.wait);
    return status;
}

/* The loop's span: "file:line (strategy)" (the timeline on). */
static int64_t loop_span(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    const char *file = p && p->file ? p->file : "?";
    const char *strat = x->sched ? x->sched->name : "plan";
    const char *base = strrchr(file, '/');
    char name[320];
    snprintf(name, sizeof name, "%s:%d (%s)", base ? base + 1 : file, p ? p->line : 0, strat);
    int64_t id = orn_tl_begin(x->tl, ORN_TL_LOOP, name);
    orn_tl_str(x->tl, id, "file", file);
    orn_tl_int(x->tl, id, "line", p ? p->line : 0);
    orn_tl_str(x->tl, id, "strategy", strat);
    if (p) orn_tl_int(x->tl, id, "loop_id", p->loop_id);
    return id;
}

/* The loop's statistics as arguments of its span. */
static void loop_span_end(Exec *x, int64_t id, const OrnRtStats *st)
{
    if (id < 0) return;
    orn_tl_int(x->tl, id, "run", (int64_t)(uint32_t)x->stream);
    orn_tl_int(x->tl, id, "steps", st->steps);
    orn_tl_int(x->tl, id, "blocks", st->blocks);
    orn_tl_num(x->tl, id, "compute_s", st->compute);
    orn_tl_num(x->tl, id, "wait_s", st->wait);
    orn_tl_num(x->tl, id, "flush_s", st->flush);
    orn_tl_num(x->tl, id, "transfer_s", st->transfer);
    orn_tl_end(x->tl, id);
}

/* The per-loop summary: this run added to its source location's sums. */
static void add_to_summary(OrnRtCtx *rt, const OrnRtPlan *p, const OrnRtStats *st)
{
    const char *file = p->file ? p->file : "?";
    int i = 0;
    for (; i < rt->nsums; i++) {
        const RtLoopSum *e = &rt->sums[i];
        if (e->line == p->line && e->loop_id == p->loop_id && strcmp(e->file, file) == 0) break;
    }
    if (i == rt->nsums) {
        if (rt->nsums == rt->capsums) {
            rt->capsums = rt->capsums ? 2 * rt->capsums : 16;
            rt->sums = orn_xrealloc(rt->sums, (size_t)rt->capsums * sizeof *rt->sums);
        }
        RtLoopSum *e = &rt->sums[rt->nsums++];
        memset(e, 0, sizeof *e);
        size_t fl = strlen(file) + 1;
        e->file = orn_xmalloc(fl);
        memcpy(e->file, file, fl);
        e->line = p->line;
        e->loop_id = p->loop_id;
        e->strategy = (int)p->strategy;
    }
    RtLoopSum *e = &rt->sums[i];
    e->runs++;
    e->total += st->total;
    e->compute += st->compute;
    e->wait += st->wait;
    e->transfer += st->transfer + st->flush;
    e->sent += st->sent;
    e->received += st->received;
}

int orn_rt_run(OrnRtCtx *rt, const OrnRtLoop *loop)
{
    Exec x;
    int status;
    double t0 = rt_now();
    memset(&x, 0, sizeof x);
    memset(&rt->stats, 0, sizeof rt->stats);
    x.rt = rt;
    x.dsm = rt->dsm;
    x.loop = loop;
    x.plan = loop->plan;
    x.fuse = rt->fuse;
    x.fuse_phase = rt_fuse_phase(rt->fuse, loop);
    x.P = orn_dsm_size(rt->dsm);
    x.me = orn_dsm_rank(rt->dsm);
    x.tl = orn_dsm_timeline(rt->dsm);
    int64_t lspan = -1;
    OrnDsmTraffic t0x;
    orn_dsm_traffic(rt->dsm, &t0x);
    RtSpan setup = {0, 0, -1}, fin = {0, 0, -1};
    orn_dsm_clear_error(rt->dsm);
    rt->agreed = 0;
    const OrnRtSched *strat = NULL; /* names the strategy in messages */
    if (loop->plan && (int)loop->plan->strategy >= 0 && loop->plan->strategy <= ORN_RT_SERIAL)
        x.sched = strat = pick(loop->plan->strategy);
    if (x.tl) lspan = loop_span(&x);
    status = validate(&x);
    if (status) goto fn_fail;
    rt_progress_begin(&x);
    rt_choose_orientation(&x);
    rt_choose_unskewed(&x);
    const OrnRtPlan *p = x.plan;
    x.sched = x.bands ? &orn_rt_sched_skew : pick(p->strategy);
    x.n = p->narrays;
    x.iter = loop->args[0].array;
    x.stream = next_stream(rt, p->loop_id);
    /* Placing the arrays: partitions, repartitions, ghost cells, copies. */
    setup = rt_xfer_begin(&x, "setup");
    x.views = orn_xcalloc((size_t)x.n, sizeof *x.views);
    x.vi = orn_xcalloc((size_t)x.n, sizeof *x.vi);
    x.flush_every = p->flush_every;
    for (int k = 0; k < x.n; k++) {
        OrnRtView *v = &x.views[k];
        ViewImpl *vi = &x.vi[k];
        vi->x = &x;
        vi->k = k;
        vi->buf = p->arrays[k].role == ORN_RT_BUFFERED ? loop->args[k].buffer : NULL;
        vi->store = vi->buf ? vi->buf->target : loop->args[k].array;
        vi->tile = -1;
        vi->read_only = p->arrays[k].read_only != 0 && p->arrays[k].role != ORN_RT_BUFFERED;
        rt_map_init(&vi->cache, sizeof(CacheEnt));
        v->ndim = vi->store->ndim;
        v->type = (int)vi->store->type;
        v->esize = vi->store->esize;
        v->role = p->arrays[k].role;
        /* Serial runs on one rank that holds everything: remote arrays are plain there. */
        if (v->role == ORN_RT_REMOTE && p->strategy == ORN_RT_SERIAL) v->role = ORN_RT_PARTITIONED;
        if (v->role == ORN_RT_REMOTE) x.rounds = 1;
        v->ops = &rt_view_ops;
        v->impl = vi;
        if (vi->buf) {
            x.rounds = 1;
            int64_t fe = vi->buf->flush_every;
            if (fe > 0 && (x.flush_every <= 0 || fe < x.flush_every)) x.flush_every = fe;
        }
    }
    /* A CPU body may write what it does not only read (a @gpu loop's device copies come
     * back unchanged to the host, or its CPU path touches the arrays: gpu.c). */
    for (int k = 0; k < x.n && !loop->whole; k++)
        if (!x.vi[k].read_only) orn_dsm_touch(x.vi[k].store);
    for (int k = 0; k < x.n; k++)
        for (int j = 0; j < x.n; j++)
            if (j != k && x.vi[j].buf && x.vi[j].store == x.vi[k].store) x.vi[k].buffered = 1;
    rt_choose_rotated(&x);
    for (int i = 0; i < p->npart; i++) x.kd[i] = p->part_dims[i];
    for (int k = 0; k < x.n && !status; k++)
        if (x.vi[k].buf) status = rt_buffer_prepare(x.vi[k].buf, x.P);
    if (status) goto fn_fail;
    /* Small prefetched arrays are copied whole; what is left is fetched per round. */
    status = rt_replicate_prefetched(&x);
    if (status) goto fn_fail;
    for (int k = 0; k < x.n; k++) {
        int role = x.views[k].role;
        if (role == ORN_RT_REMOTE || (role == ORN_RT_PREFETCHED && !(x.replica && x.replica[k])))
            x.remote_reads = 1;
    }
    if (loop->prefetch && x.prefetch_needed) x.rounds = 1;

    status = x.sched->setup(&x);
    if (!status && x.fuse_phase == 1) status = rt_fuse_begin(&x);
    if (!status) status = rt_halo_setup(&x);
    if (!status) status = rt_replica_ready(&x);
    if (status) goto fn_fail;
    rt_window_setup(&x);
    for (int k = 0; k < x.n && !status; k++) { /* after the schedule placed the arrays */
        if (!x.vi[k].buf) continue;
        rt_buffer_loop_begin(x.vi[k].buf, x.P, x.iter->nnz);
        char *copy = NULL;
        for (int j = 0; j < x.n && !copy; j++) {
            if (x.vi[j].store != x.vi[k].store) continue;
            if (x.replica && x.replica[j])
                copy = x.replica[j];
            else if (x.views[j].role == ORN_RT_REPLICATED)
                copy = replicated_copy(x.vi[j].store);
        }
        if (copy) status = rt_buffer_set_replica(x.vi[k].buf, copy, x.P);
        x.vi[k].held_view = status ? -1 : held_view(&x, k);
        if (!status && rotated_view(&x, k) >= 0) {
            OrnRtBuffer *b = x.vi[k].buf;
            b->route = orn_xcalloc((size_t)b->target->part.ntiles, sizeof(int));
            /* records to where the blocks are: the dense flush to fixed owners is out */
            b->owners_dense = b->owners_guess = 0;
            b->dd.collect = !b->direct && !b->dd.direct;
        }
    }
    if (!status) adapt_begin(&x);
    rt_xfer_end(&x, setup, &rt->stats.transfer);
    if (status) goto fn_fail;
    rt_progress_total(&x);
    /* Repartitions finish at different times on different ranks: nobody reads remotely
     * before every rank has its new partitions in place. */
    if (x.halo) x.remote_reads = 1;
    if (x.remote_reads && x.P > 1) {
        status = rt_window_agree(&x);
        if (status) goto fn_fail;
        /* Owners answer on-demand reads between slices of their own blocks too, so a
         * reader does not wait for a whole block. */
        x.need_progress = 1;
    }
    if (p->naccs) {
        x.accpart = orn_xcalloc((size_t)x.iter->part.ntiles * (size_t)p->naccs, sizeof *x.accpart);
        x.accused = orn_xcalloc((size_t)x.iter->part.ntiles, 1);
    }
    for (int64_t s = 0; s < x.nsteps; s++) {
        x.step = s;
        status = x.sched->step_begin(&x, s);
        if (!status) status = run_step(&x, s);
        if (!status) status = x.sched->step_end(&x, s);
        if (!status && rt->contain && x.P > 1 && s + 1 < x.nsteps) status = rt_body_step_agree(&x);
        if (status) goto fn_fail;
    }
    status = rt_halo_drain(&x);
    if (status) goto fn_fail;
    rt->stats.steps = x.nsteps;
    rt->stats.strategy = p->strategy;
    rt->stats.in_place = x.skew != 0;
    rt->stats.rotated_key = p->strategy == ORN_RT_2D && p->npart == 2 ? x.kd[1] : -1;
    if (p->strategy == ORN_RT_1D || p->strategy == ORN_RT_2D) {
        for (int d = 0; d < x.iter->ndim; d++) rt->stats.grid[d] = x.iter->part.nb[d];
        for (int i = 0; i < p->npart; i++) rt->stats.sub[x.kd[i]] = x.sub[i] > 1 ? x.sub[i] : 1;
        if (x.split_dim >= 0) rt->stats.sub[x.split_dim] = x.nsplit;
        rt->stats.cache_bytes = rt->cache_bytes;
        rt->stats.ws_bytes = x.ws_bytes;
    }
    fin = rt_span_begin(&x, ORN_TL_PHASE, "finish");
    status = x.sched->finish(&x);
    for (int k = 0; k < x.n && !status; k++)
        if (x.vi[k].buf && x.vi[k].buf->npending)
            status = rt_fail(&x, ORN_E_INTERNAL, "buffer(%s): deltas for blocks that never arrived",
                             x.vi[k].buf->target->name);
    /* Buffers' targets whose every rank read a copy: the flushes went to the copies. */
    for (int k = 0; k < x.n && !status && x.replica && x.P > 1; k++)
        if (x.replica[k] && x.vi[k].buffered) {
            int done = 0; /* one copy per array (blocking.c) */
            for (int j = 0; j < k; j++) done |= x.replica[j] == x.replica[k];
            if (!done) rt_replica_writeback(&x, k);
        }
    /* contained body errors: the same verdict everywhere, before anything reduces */
    if (!status) status = rt_body_agree(&x);
    if (!status) status = reduce_accs(&x);
    if (!status) status = gather_trace(&x);
    /* Nobody leaves (and maybe frees or rewrites an array) while a peer may still read
     * from it on demand. */
    if (!status && x.remote_reads && x.P > 1) status = rt_barrier(&x);
    if (status) goto fn_fail;
fn_exit:
    /* the finish phase ends; after an error the loop's end closes what is still open
     * (marked unfinished) */
    orn_tl_end(x.tl, fin.id);
    rt_progress_end(&x);
    if (x.sched && x.sched->cleanup) x.sched->cleanup(&x);
    rt_halo_free(&x);
    rt_ghost_free(&x);
    rt_replica_free(&x);
    rt_window_free(&x);
    if (x.vi)
        for (int k = 0; k < x.n; k++) {
            if (x.vi[k].buf) rt_buffer_loop_end(x.vi[k].buf);
            rt_map_free(&x.vi[k].cache);
            free(x.vi[k].rowkeys[0]);
            free(x.vi[k].rowkeys[1]);
            free(x.vi[k].req);
            free(x.vi[k].dirty);
        }
    free(x.keybuf);
    free(x.views);
    free(x.vi);
    free(x.accpart);
    free(x.accused);
    free(x.tr);
    free(x.body_msg);
    rt->stats.total = rt_now() - t0;
    OrnDsmTraffic t1x;
    orn_dsm_traffic(rt->dsm, &t1x);
    rt->stats.sent = t1x.sent - t0x.sent;
    rt->stats.received = t1x.received - t0x.received;
    loop_span_end(&x, lspan, &rt->stats);
    if (rt->summary_on && !status && x.plan) add_to_summary(rt, x.plan, &rt->stats);
    free(x.own_arrays);
    free(x.own_plan);
    return status;
fn_fail:
    if (rt->agreed && status == ORN_E_BODY) goto fn_exit; /* its message names file and line */
    /* the strategy the compiler chose (the schedule that runs it may differ: sched_skew.c
     * runs 2d_ordered and unimodular plans, sched_serial.c some unimodular ones) */
    orn_dsm_fail_ctx(rt->dsm, status, "parallel_for at %s:%d (%s)",
                     loop->plan && loop->plan->file ? loop->plan->file : "?",
                     loop->plan ? loop->plan->line : 0, strat ? strat->name : "plan");
    goto fn_exit;
}
