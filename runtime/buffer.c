/* buffer.c: write buffers (buffer(A) in the language).
 *
 * A rank sums its deltas per key in a hash map (so a hot key costs one record per flush,
 * whatever the number of updates). A flush sends each rank's records to the owners of the
 * keys (to every rank for replicated tiles) with one alltoallv; the owner applies them in
 * source-rank order. Each element therefore sees its deltas in a fixed order (rank 0's
 * first), so results are bit-identical from run to run. Cost per flush: 2 (P-1) a + 16 b per
 * distinct key updated.
 *
 * A dense target of at most ORN_RT_DENSE_DELTAS bytes ($ORN_DENSE_DELTAS overrides; 0 turns
 * it off) keeps its deltas in a dense store instead (OrnRtDeltas, rt.h): an update is an
 * add at the key's linear index, plus one flag and one list entry the first time a key is
 * touched since the last flush, which generated bodies do inline. The per-key sums, and so
 * the results, are those of the hash map: deltas of one key are summed in the order they
 * are made. Memory: the target's size plus one byte per element, per buffer.
 *
 * One rank: a buffer applies every update to its target at once (direct), the default
 * apply inline, a custom one through its function. Deferring them would only make reads
 * stale, which the language allows but nobody wants, and would cost a store, a flag and a
 * list entry per update, then the flush; at one rank the loop is thus exactly the serial
 * loop. At several ranks a custom apply sees each element's summed delta at the flush
 * (f(old, d1 + d2), which is not f(f(old, d1), d2): the rank count changes the result).
 *
 * Managed communication (budget) and staleness-aware flushes of small copies: managed.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORN_RT_DENSE_DELTAS ((int64_t)64 << 20)
/* Targets up to this size with a copy on every rank diff the whole copy at a flush rather
 * than list touched keys: an allgather of P times this much against a flag, a list entry
 * and a saved value per first touch (40 % of SLR's updates with 10000 samples a round). */
#define RT_SNAPSHOT_MAX ((size_t)4 << 20)
/* Dense targets up to this size flush dense slices to their owners from a loop's start
 * (rt_buffer_loop_begin; flush_dense_owners) */
#define RT_OWNERS_DENSE_MAX ((size_t)64 << 10)
/* elements a flush of such a copy adds up at a time (16 KiB of f64: fits L1 with the rest) */
#define RT_SNAP_BLOCK 2048

#include "arena.h"
#include "managed.h"
#include "rt_int.h"

int orn_rt_buffer_new(OrnRtCtx *rt, OrnDsmArray *target, orn_rt_apply_fn apply, void *env,
                      int64_t flush_every, OrnRtBuffer **out)
{
    if (!orn_dsm_linear_ok(target))
        return orn_dsm_fail(rt->dsm, ORN_E_ARG, "buffer(%s): array too large to buffer",
                            target->name);
    if (flush_every < 0)
        return orn_dsm_fail(rt->dsm, ORN_E_ARG, "buffer(%s): flush_every must be >= 0",
                            target->name);
    OrnRtBuffer *b = orn_xcalloc(1, sizeof *b);
    b->rt = rt;
    b->target = target;
    b->apply = apply;
    b->env = env;
    b->flush_every = flush_every;
    b->dd.collect = 1;
    rt_map_init(&b->deltas, 8);
    int64_t cap = ORN_RT_DENSE_DELTAS;
    const char *env_cap = getenv("ORN_DENSE_DELTAS");
    if (env_cap && *env_cap) cap = strtoll(env_cap, NULL, 10);
    int64_t vol = target->sparse ? -1 : target->nnz;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) b->dd.dims[d] = d < target->ndim ? target->dims[d] : 1;
    b->dd.ndim = target->ndim;
    if (vol > 0 && vol <= cap / (int64_t)target->esize) {
        b->dense = 1;
        b->dd.base = orn_xcalloc((size_t)vol, target->esize);
        b->dd.seen = orn_xcalloc((size_t)vol, 1);
        b->dd.cap = 1024;
        b->dd.touched = orn_xmalloc((size_t)b->dd.cap * sizeof *b->dd.touched);
    }
    *out = b;
    return ORN_OK;
}

void orn_rt_deltas_grow(OrnRtDeltas *q)
{
    q->cap *= 2;
    q->touched = orn_xrealloc(q->touched, (size_t)q->cap * sizeof *q->touched);
}

void orn_rt_buffer_free(OrnRtBuffer *b)
{
    if (!b) return;
    rt_map_free(&b->deltas);
    free(b->dd.base);
    free(b->dd.seen);
    free(b->dd.touched);
    free(b->dd.orig);
    free(b->marks);
    free(b->nchg);
    free(b->route);
    free(b->pending);
    free(b->mine);
    free(b->xbuf);
    orn_dsm_shm_unmap(b->shm, b->shm_bytes);
    free(b);
}

OrnDsmArray *orn_rt_buffer_target(OrnRtBuffer *b)
{
    return b->target;
}

int64_t orn_rt_buffer_flush_every(const OrnRtBuffer *b)
{
    return b->flush_every;
}

int orn_rt_buffer_set_budget(OrnRtBuffer *b, double budget)
{
    if (!(budget >= 0 && budget <= 1))
        return orn_dsm_fail(b->rt->dsm, ORN_E_ARG,
                            "buffer(%s): budget must be between 0 and 1, found %g", b->target->name,
                            budget);
    b->budget = budget;
    return ORN_OK;
}

void orn_rt_buffer_set_staleness_aware(OrnRtBuffer *b, int on)
{
    b->stale_aware = on != 0;
}

void orn_rt_buffer_state(const OrnRtBuffer *b, OrnRtBufferState *s)
{
    memset(s, 0, sizeof *s);
    s->flush_every = b->flush_every;
    s->interval = b->interval;
    s->budget = b->budget;
    s->stale_aware = b->stale_aware;
    s->averaging = b->averaging;
}

int orn_rt_buffer_restore(OrnRtBuffer *b, const OrnRtBufferState *s)
{
    if (s->interval < 0)
        return orn_dsm_fail(b->rt->dsm, ORN_E_ARG, "buffer(%s): bad flush interval %lld",
                            b->target->name, (long long)s->interval);
    int status = orn_rt_buffer_set_budget(b, s->budget);
    b->stale_aware = s->stale_aware != 0;
    b->interval = s->interval;
    b->averaging = s->averaging != 0;
    return status;
}

static void add_typed(int type, void *acc, const void *d)
{
    switch (type) {
    case ORN_DSM_I32: {
        int32_t a, x;
        memcpy(&a, acc, 4);
        memcpy(&x, d, 4);
        a = (int32_t)((uint32_t)a + (uint32_t)x); /* wraps like the target would */
        memcpy(acc, &a, 4);
        break;
    }
    case ORN_DSM_I64: {
        int64_t a, x;
        memcpy(&a, acc, 8);
        memcpy(&x, d, 8);
        a = (int64_t)((uint64_t)a + (uint64_t)x);
        memcpy(acc, &a, 8);
        break;
    }
    case ORN_DSM_F32: {
        float a, x;
        memcpy(&a, acc, 4);
        memcpy(&x, d, 4);
        a += x;
        memcpy(acc, &a, 4);
        break;
    }
    case ORN_DSM_F64: {
        double a, x;
        memcpy(&a, acc, 8);
        memcpy(&x, d, 8);
        a += x;
        memcpy(acc, &a, 8);
        break;
    }
    }
}

/* *d /= n, d an f32 or f64 change (averaged as rt_stale_add does). */
static void div_float(int type, char *d, int n)
{
    if (type == ORN_DSM_F32) {
        float v;
        memcpy(&v, d, 4);
        v = v / (float)n;
        memcpy(d, &v, 4);
    } else {
        double v;
        memcpy(&v, d, 8);
        v = v / (double)n;
        memcpy(d, &v, 8);
    }
}

/* *out = *x - *y in the element type. */
static void sub_typed(int type, void *out, const void *x, const void *y)
{
    switch (type) {
    case ORN_DSM_I32: {
        uint32_t a, c;
        memcpy(&a, x, 4);
        memcpy(&c, y, 4);
        a -= c;
        memcpy(out, &a, 4);
        break;
    }
    case ORN_DSM_I64: {
        uint64_t a, c;
        memcpy(&a, x, 8);
        memcpy(&c, y, 8);
        a -= c;
        memcpy(out, &a, 8);
        break;
    }
    case ORN_DSM_F32: {
        float a, c;
        memcpy(&a, x, 4);
        memcpy(&c, y, 4);
        a -= c;
        memcpy(out, &a, 4);
        break;
    }
    case ORN_DSM_F64: {
        double a, c;
        memcpy(&a, x, 8);
        memcpy(&c, y, 8);
        a -= c;
        memcpy(out, &a, 8);
        break;
    }
    }
}

static int zero_bits(const char *d, size_t n)
{
    int z = 1;
    for (size_t c = 0; c < n; c++) z &= d[c] == 0;
    return z;
}

int rt_buffer_prepare(OrnRtBuffer *b, int P)
{
    OrnDsmArray *a = b->target;
    if (P != 1 || b->apply || a->sparse || a->part.ntiles == 1) return ORN_OK;
    /* One rank: the target in one tile, so that bodies add to it inline (dd.direct). */
    OrnDsmPart one;
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1};
    int status = orn_dsm_part_init(&one, a->ndim, nb);
    if (status) return status;
    for (int d = 0; d < a->ndim; d++) {
        one.bounds[d][0] = 0;
        one.bounds[d][1] = a->dims[d];
    }
    one.owner[0] = 0;
    status = orn_dsm_repartition(a, &one);
    orn_dsm_part_free(&one);
    return status;
}

void rt_buffer_loop_begin(OrnRtBuffer *b, int P, int64_t iters)
{
    OrnDsmArray *a = b->target;
    b->direct = P == 1;
    b->dd.direct = NULL;
    /* the dense flush to owners needs owners: a target replicated by an earlier loop lists
     * its keys again */
    int fixed = 1;
    for (int64_t t = 0; t < a->part.ntiles; t++) fixed &= a->part.owner[t] != ORN_DSM_ALL;
    if (!fixed || b->direct) b->owners_dense = 0;
    /* A small dense target flushes dense from the start: its whole store costs less to send
     * than listing the keys of even a few updates, and a first run that listed them would
     * take every update through the slow path (the same sums either way). */
    b->owners_guess = 0;
    int dense_ok = !b->direct && P > 1 && b->dense && !b->apply && !a->sparse && fixed;
    if (dense_ok && (size_t)a->nnz * a->esize <= RT_OWNERS_DENSE_MAX) b->owners_dense = 1;
    /* Before any flush measured the choice, a loop whose ranks each make at least as many
     * updates between flushes as the target has elements (an iteration an update at least:
     * PageRank's push) guesses the dense flush, so its first run does not list every key;
     * that flush counts the touched elements and goes back to records for what follows when
     * they were few. */
    int64_t per = iters / P;
    if (b->flush_every > 0 && b->flush_every < per) per = b->flush_every;
    if (dense_ok && !b->owners_dense && !b->owners_known && per >= a->nnz)
        b->owners_dense = b->owners_guess = 1;
    b->dd.collect = !b->direct && !b->owners_dense;
    b->owners_checked = 0;
    b->most_touched = 0;
    if (!b->direct || a->sparse || b->apply) return; /* a custom apply: rt_buffer_add_lin */
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        if (tl->held && tl->n == a->nnz && tl->n > 0) b->dd.direct = tl->vals;
    }
}

int rt_buffer_set_replica(OrnRtBuffer *b, char *copy, int P)
{
    size_t bytes = (size_t)b->target->nnz * b->target->esize;
    b->replica = copy;
    if (P == 1 || b->apply) return ORN_OK; /* then reads wait for the flushes */
    if (bytes <= RT_SNAPSHOT_MAX) {
        /* updates exactly as at one rank; the flush diffs the whole copy */
        b->dd.direct = copy;
        b->dd.collect = 0;
        b->snap = orn_xmalloc(bytes ? bytes : 1);
        memcpy(b->snap, copy, bytes);
        int status = rt_managed_new(b, P, &b->mg);
        b->mine = b->mg ? NULL : orn_xmalloc(bytes ? bytes : 1); /* its copy - snap */
        return status;
    }
    if (!b->dense) return ORN_OK;
    b->dd.direct = copy;
    b->dd.collect = 1; /* the flush sends copy - orig of the listed keys */
    b->owners_dense = b->owners_guess = 0;
    if (!b->dd.orig) b->dd.orig = orn_xmalloc(bytes);
    return ORN_OK;
}

void rt_buffer_loop_end(OrnRtBuffer *b)
{
    orn_dsm_touch(b->target); /* updates went into the target or its copy */
    b->direct = 0;
    b->dd.direct = NULL;
    b->dd.held = NULL;
    b->dd.collect = 1; /* outside loops (orn_rt_buffer_add) deltas wait for a flush */
    b->replica = NULL;
    b->count_changes = 0;
    free(b->route);
    b->route = NULL;
    b->npending = 0;
    rt_managed_free(b->mg);
    b->mg = NULL;
    free(b->snap);
    free(b->mine);
    free(b->xbuf);
    b->snap = b->mine = b->xbuf = NULL;
}

OrnRtDeltas *rt_buffer_inline(OrnRtBuffer *b)
{
    return b->dd.direct || (b->dense && !b->direct) ? &b->dd : NULL;
}

static int apply_one(OrnRtBuffer *b, void *elem, const char *delta);

int rt_buffer_add_lin(OrnRtBuffer *b, int64_t lin, const void *delta)
{
    if (b->direct) { /* inside a loop: its start and end touch the target (exec.c, gpu.c) */
        int64_t key[ORN_DSM_MAXDIM];
        orn_dsm_unravel(b->target, lin, key);
        void *elem = orn_dsm_local_ptr(b->target, key);
        if (!elem)
            return orn_dsm_fail(b->rt->dsm, ORN_E_RANGE,
                                "buffer(%s): an update of an element that is not stored "
                                "(sparse arrays keep their structure)",
                                b->target->name);
        return apply_one(b, elem, delta);
    }
    if (b->dense || b->dd.direct) { /* as orn_rt_badd_* (rt.h) */
        OrnRtDeltas *q = &b->dd;
        size_t es = b->target->esize;
        if (q->collect && !q->seen[lin]) {
            if (q->n == q->cap) orn_rt_deltas_grow(q);
            q->seen[lin] = 1;
            q->touched[q->n++] = lin;
            if (q->direct) memcpy(q->orig + (size_t)lin * es, q->direct + (size_t)lin * es, es);
        }
        add_typed(b->target->type, (q->direct ? q->direct : q->base) + (size_t)lin * es, delta);
        return ORN_OK;
    }
    int created;
    void *acc = rt_map_insert(&b->deltas, lin, &created);
    add_typed(b->target->type, acc, delta);
    return ORN_OK;
}

void rt_buffer_add_at(OrnRtBuffer *b, void *elem, const void *delta)
{
    add_typed(b->target->type, elem, delta);
}

int orn_rt_buffer_add(OrnRtBuffer *b, const int64_t *key, const void *delta)
{
    OrnDsmArray *a = b->target;
    for (int d = 0; d < a->ndim; d++)
        if (key[d] < 0 || key[d] >= a->dims[d])
            return orn_dsm_fail(b->rt->dsm, ORN_E_RANGE, "buffer(%s): key outside the array",
                                a->name);
    return rt_buffer_add_lin(b, orn_dsm_ravel(a, key), delta);
}

/* One record (lin, delta) applied to elem. */
static int apply_one(OrnRtBuffer *b, void *elem, const char *delta)
{
    if (!b->apply) {
        add_typed(b->target->type, elem, delta);
        return ORN_OK;
    }
    if (b->apply(elem, delta, b->env) != 0)
        return orn_dsm_fail(b->rt->dsm, ORN_E_BODY, "buffer(%s): apply function failed",
                            b->target->name);
    return ORN_OK;
}

/* *x += *d unless d is +0 (every bit clear: untouched), typed; n elements. Branch-free
 * (a select on the bits): whether an element changed is data, and a branch on it would be
 * mispredicted half the time. */
#if defined(__GNUC__) && !defined(__clang__)
#define RT_VECTORIZE __attribute__((optimize("tree-vectorize"))) RT_CLONES
#else
#define RT_VECTORIZE RT_CLONES
#endif

/* The elements of d (n of es bytes, es 4 or 8) with a bit set. */
RT_VECTORIZE static int64_t count_nonzero(const char *d, int64_t n, size_t es)
{
    int64_t c = 0;
    if (es == 4) {
        const uint32_t *v = (const uint32_t *)(const void *)d;
        for (int64_t i = 0; i < n; i++) c += v[i] != 0;
    } else {
        const uint64_t *v = (const uint64_t *)(const void *)d;
        for (int64_t i = 0; i < n; i++) c += v[i] != 0;
    }
    return c;
}
#define ADD_NONZERO(T, UT)                                                                         \
    RT_VECTORIZE static void add_nonzero_##T(T *restrict x, const T *restrict d, int64_t n)        \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T s = (T)(x[i] + d[i]);                                                                \
            UT bx, bd, bs;                                                                         \
            memcpy(&bx, &x[i], sizeof bx);                                                         \
            memcpy(&bd, &d[i], sizeof bd);                                                         \
            memcpy(&bs, &s, sizeof bs);                                                            \
            UT m = (UT)0 - (UT)(bd != 0);                                                          \
            bx = (bs & m) | (bx & ~m);                                                             \
            memcpy(&x[i], &bx, sizeof bx);                                                         \
        }                                                                                          \
    }
ADD_NONZERO(float, uint32_t)
ADD_NONZERO(double, uint64_t)
#undef ADD_NONZERO

/* dst[i] = apply(dst[i], d[i]) (default: +=) for each of n elements whose change d[i] is
 * not +0 (every bit clear: untouched, or no change). */
int rt_buffer_add_changes(OrnRtBuffer *b, char *dst, const char *d, int64_t n)
{
    OrnDsmArray *a = b->target;
    orn_dsm_touch(a);
    size_t es = a->esize;
    if (!b->apply && a->type == ORN_DSM_F32) {
        add_nonzero_float((float *)(void *)dst, (const float *)(const void *)d, n);
        return ORN_OK;
    }
    if (!b->apply && a->type == ORN_DSM_F64) {
        add_nonzero_double((double *)(void *)dst, (const double *)(const void *)d, n);
        return ORN_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        if (zero_bits(d + (size_t)i * es, es)) continue;
        int status = apply_one(b, dst + (size_t)i * es, d + (size_t)i * es);
        if (status) return status;
    }
    return ORN_OK;
}

/* This loop's flushes average what several ranks changed: its adaptive interval is at the
 * floor and still too long (exec.c, adapt_interval). */
static int averages(const OrnRtBuffer *b)
{
    return b->averaging && b->count_changes;
}

/* A block at a time: per element the ranks that changed it, summed over the P vectors in
 * turn (each pass a vectorized compare, counts as wide as the elements), then the counts. */
#define COUNT_CHANGES(T, name)                                                                     \
    RT_VECTORIZE static void name(const char *d, size_t stride, int P, int64_t n, int64_t *c,      \
                                  int64_t *s)                                                      \
    {                                                                                              \
        T k[RT_SNAP_BLOCK];                                                                        \
        for (int64_t lo = 0; lo < n; lo += RT_SNAP_BLOCK) {                                        \
            int64_t m = n - lo < RT_SNAP_BLOCK ? n - lo : RT_SNAP_BLOCK;                           \
            memset(k, 0, sizeof k);                                                                \
            for (int q = 0; q < P; q++) {                                                          \
                const T *restrict v = (const T *)(const void *)(d + (size_t)q * stride) + lo;      \
                for (int64_t i = 0; i < m; i++) k[i] += (T)(v[i] != 0);                            \
            }                                                                                      \
            T changed = 0, shared = 0;                                                             \
            for (int64_t i = 0; i < m; i++) {                                                      \
                changed += (T)(k[i] > 0);                                                          \
                shared += (T)(k[i] > 1);                                                           \
            }                                                                                      \
            *c += (int64_t)changed;                                                                \
            *s += (int64_t)shared;                                                                 \
        }                                                                                          \
    }
COUNT_CHANGES(uint32_t, count_changes_4)
COUNT_CHANGES(uint64_t, count_changes_8)
#undef COUNT_CHANGES

/* rt_stale_add (rt_int.h) a block at a time: per element the ranks that changed it (as
 * COUNT_CHANGES), then each rank's changes in rank order, divided by that count where it is
 * above one and added where they are not +0 -- a select on the bits, not a branch, so that
 * the loops vectorize (softmax regression's 160 weights at the adaptive floor: 7,813 of
 * these an epoch, 6 ns an element when it branched and divided one element at a time). The
 * same bits as the element-at-a-time sum: x / 1 is x, and a skipped change leaves dst alone
 * (-0 included). */
#define STALE_ADD(T, UT, name)                                                                     \
    RT_VECTORIZE static void name(T *restrict dst, const char *d, size_t stride, int P, int64_t n) \
    {                                                                                              \
        T k[RT_SNAP_BLOCK]; /* counts as the elements' type: exact, and no conversions */          \
        for (int64_t lo = 0; lo < n; lo += RT_SNAP_BLOCK) {                                        \
            int64_t m = n - lo < RT_SNAP_BLOCK ? n - lo : RT_SNAP_BLOCK;                           \
            for (int64_t i = 0; i < m; i++) k[i] = 0;                                              \
            for (int q = 0; q < P; q++) {                                                          \
                const UT *restrict u = (const UT *)(const void *)(d + (size_t)q * stride) + lo;    \
                for (int64_t i = 0; i < m; i++) k[i] += u[i] != 0 ? (T)1 : (T)0;                   \
            }                                                                                      \
            for (int64_t i = 0; i < m; i++) k[i] = k[i] > 1 ? k[i] : (T)1;                         \
            for (int q = 0; q < P; q++) {                                                          \
                const UT *restrict u = (const UT *)(const void *)(d + (size_t)q * stride) + lo;    \
                T *restrict x = dst + lo;                                                          \
                for (int64_t i = 0; i < m; i++) { /* a select on bits, as ADD_NONZERO */           \
                    T v;                                                                           \
                    memcpy(&v, &u[i], sizeof v);                                                   \
                    T s = x[i] + v / k[i];                                                         \
                    UT bx, bs, z = (UT)0 - (UT)(u[i] != 0);                                        \
                    memcpy(&bx, &x[i], sizeof bx);                                                 \
                    memcpy(&bs, &s, sizeof bs);                                                    \
                    bx = (bs & z) | (bx & ~z);                                                     \
                    memcpy(&x[i], &bx, sizeof bx);                                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
STALE_ADD(float, uint32_t, stale_add_f32)
STALE_ADD(double, uint64_t, stale_add_f64)
#undef STALE_ADD

void rt_stale_add(int type, char *dst, const char *d, size_t stride, int P, int64_t n)
{
    if (type == ORN_DSM_F32)
        stale_add_f32((float *)(void *)dst, d, stride, P, n);
    else
        stale_add_f64((double *)(void *)dst, d, stride, P, n);
}

/* d = c - o, elementwise (a copy's change since its snapshot). */
RT_VECTORIZE static void sub_float(float *restrict d, const float *restrict c,
                                   const float *restrict o, int64_t n)
{
    for (int64_t i = 0; i < n; i++) d[i] = c[i] - o[i];
}

/* Adds to b->changed / b->shared the elements of P change vectors (stride bytes apart, n
 * elements each) that some rank / two or more ranks changed (a change of +0: unchanged).
 * Only f32 and f64 targets count (exec.c, adapt_begin). */
static void count_changes(OrnRtBuffer *b, const char *d, size_t stride, int P, int64_t n)
{
    if (b->target->esize == 4)
        count_changes_4(d, stride, P, n, &b->changed, &b->shared);
    else
        count_changes_8(d, stride, P, n, &b->changed, &b->shared);
}

/* The P change vectors d (`stride` bytes apart, n elements each) added to dst as a flush of
 * a copy adds them: divided by the ranks that changed an element where avg (rt_stale_add),
 * else each added in rank order (zero changes skipped), a block at a time so that dst and
 * the P changes pass through the cache once; counted first where the loop counts. */
static int apply_changes(OrnRtBuffer *b, char *dst, const char *d, size_t stride, int P, int64_t n,
                         int avg)
{
    size_t es = b->target->esize;
    if (avg) {
        if (b->count_changes) count_changes(b, d, stride, P, n);
        rt_stale_add(b->target->type, dst, d, stride, P, n);
        return ORN_OK;
    }
    int status = ORN_OK;
    for (int64_t lo = 0; lo < n && !status; lo += RT_SNAP_BLOCK) {
        int64_t m = n - lo < RT_SNAP_BLOCK ? n - lo : RT_SNAP_BLOCK;
        size_t at = (size_t)lo * es;
        if (b->count_changes) count_changes(b, d + at, stride, P, m);
        for (int q = 0; q < P && !status; q++)
            status = rt_buffer_add_changes(b, dst + at, d + (size_t)q * stride + at, m);
    }
    return status;
}

/* Change vectors of this target go by slices (sum_changes): from OrnRtCtx.slices_bytes of
 * changes times (2P - 3). */
static int sliced(const OrnRtBuffer *b, int P)
{
    int64_t bytes = b->target->nnz * (int64_t)b->target->esize;
    return P >= 2 && bytes * (2 * P - 3) >= b->rt->slices_bytes;
}

/* The slices of a target's change vector: rank r's [off[r], off[r + 1]) bytes, a P-th of
 * the elements cut at 64-byte multiples (P + 1 offsets). */
static void slice_offsets(const OrnRtBuffer *b, int P, size_t *off)
{
    int64_t vol = b->target->nnz, es = (int64_t)b->target->esize;
    int64_t unit = es < 64 ? 64 / es : 1; /* elements per cut */
    for (int q = 0; q < P; q++) {
        int64_t lo = vol / P * q + vol % P * q / P; /* vol * q / P without overflow */
        off[q] = (size_t)((lo - lo % unit) * es);
    }
    off[P] = (size_t)(vol * es);
}

/* A snapshot flush's memory shared by the ranks of a host (orn_dsm_shm_map): change vectors
 * of `stride` bytes in `sets` sets of P slots, then, for vectors that go by slices, the summed
 * vector and each rank's two counts, then the barriers' arrival numbers (a cache line a
 * rank). Vectors by slices have one set of page-aligned slots; whole ones two sets of
 * 64-byte-aligned slots, used by turns (shm_whole). Made at the buffer's first snapshot
 * flush (collectively: every rank flushes there) unless $ORN_FLUSH_SHM=0 (OrnRtCtx.flush_shm,
 * the same on every rank) or it would pass RT_FLUSH_SHM_MAX (/dev/shm is often small); NULL
 * on every rank where shared memory cannot be had. One object per host (dsm/shm.c): a rank
 * reserves what it writes there -- its own slots, and on several hosts the slots of whole
 * vectors it takes (shm_cross), or the other hosts' parts of its slice and the summed
 * slices it takes (shm_sum). Lives as long as the buffer. */
#define RT_FLUSH_SHM_MAX ((size_t)64 << 20)

static char *shm_slot(const OrnRtBuffer *b, int set, int q)
{
    return b->shm + ((size_t)set * (size_t)b->shm_P + (size_t)q) * b->shm_stride;
}

static char *shm_sum_area(const OrnRtBuffer *b)
{
    return b->shm + (size_t)b->shm_sets * (size_t)b->shm_P * b->shm_stride;
}

static int64_t *shm_counts(const OrnRtBuffer *b)
{
    return (int64_t *)(void *)(shm_sum_area(b) + (b->shm_sets == 1 ? b->shm_stride : 0));
}

static int64_t *shm_seq(const OrnRtBuffer *b)
{
    return shm_counts(b) + ((size_t)b->shm_P * 2 + 7) / 8 * 8;
}

static int shm_prepare(OrnRtBuffer *b, int P, int me)
{
    if (b->shm || b->shm_tried) return ORN_OK;
    b->shm_tried = 1;
    size_t bytes = (size_t)b->target->nnz * b->target->esize;
    int by_slices = sliced(b, P);
    b->shm_P = P;
    b->shm_sets = by_slices ? 1 : 2;
    b->shm_stride = by_slices ? (bytes + 4095) / 4096 * 4096 : (bytes + 63) / 64 * 64;
    size_t slots = (size_t)b->shm_sets * (size_t)P * b->shm_stride;
    size_t sum = by_slices ? b->shm_stride : 0, cnt = ((size_t)P * 2 + 7) / 8 * 8 * 8;
    size_t seq = (size_t)P * ORN_DSM_SHM_SEQ_STRIDE * 8;
    OrnDsmCtx *dsm = b->rt->dsm;
    int hosts = orn_dsm_nhosts(dsm), h = orn_dsm_host_of(dsm, me);
    if (!b->rt->flush_shm || !bytes || slots + sum > RT_FLUSH_SHM_MAX) return ORN_OK;
    b->shm_bytes = slots + sum + cnt + seq;
    size_t *off = orn_xmalloc(((size_t)P + 1) * sizeof *off), n = 0;
    size_t *ranges = orn_xmalloc(((size_t)P * 3 + 4) * 2 * sizeof *ranges);
    slice_offsets(b, P, off);
    for (int q = 0; q < P; q++) { /* what this rank writes of the slots: its own, and */
        int other = hosts > 1 && orn_dsm_host_of(dsm, q) != h;
        if (q == me || (other && !by_slices && orn_dsm_taker(dsm, q, h) == me)) {
            for (int set = 0; set < b->shm_sets; set++) { /* whole vectors it takes (shm_cross) */
                size_t lo = ((size_t)set * (size_t)P + (size_t)q) * b->shm_stride;
                ranges[n++] = lo;
                ranges[n++] = lo + bytes;
            }
        } else if (other && by_slices) { /* other hosts' parts of its slice (shm_sum) */
            ranges[n++] = (size_t)q * b->shm_stride + off[me];
            ranges[n++] = (size_t)q * b->shm_stride + off[me + 1];
        }
    }
    for (int r = 0; r < P && by_slices; r++) { /* its slice of the sum, other hosts' it takes */
        if (r != me &&
            (hosts == 1 || orn_dsm_host_of(dsm, r) == h || orn_dsm_taker(dsm, r, h) != me))
            continue;
        ranges[n++] = slots + off[r];
        ranges[n++] = slots + off[r + 1];
    }
    ranges[n++] = slots + sum; /* the counts and arrival numbers, small */
    ranges[n++] = b->shm_bytes;
    free(off);
    void *base = NULL;
    int status = orn_dsm_shm_map(dsm, b->shm_bytes, b->target->id, ranges, (int)n / 2, &base);
    free(ranges);
    b->shm = base;
    return status;
}

/* An exchange with the ranks of other hosts, as the caller filled `x`; frees x. */
static int cross_run(OrnDsmCtx *dsm, OrnDsmSwap *x, const char *what)
{
    int status = orn_dsm_exchange(dsm, x, NULL, what);
    orn_dsm_swap_free(x);
    return status;
}

/* Ranks on several hosts: this rank's change vector (in its slot of `set`) goes to the rank
 * that takes it on every other host (orn_dsm_taker), and those this rank takes from other
 * hosts' ranks land in their slots of its host's memory, in place. One exchange of the
 * vectors alone, point to point; then each host's memory holds all P. */
static int shm_cross(OrnRtBuffer *b, int set)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    int P = orn_dsm_size(dsm), me = orn_dsm_rank(dsm), h = orn_dsm_host_of(dsm, me);
    size_t bytes = (size_t)b->target->nnz * b->target->esize;
    OrnDsmSwap c = orn_dsm_swap_new(P);
    for (int p = 0; p < P; p++) {
        int hp = orn_dsm_host_of(dsm, p);
        if (hp == h) continue;
        if (orn_dsm_taker(dsm, me, hp) == p) {
            c.sp[p] = shm_slot(b, set, me);
            c.sn[p] = bytes;
        }
        if (orn_dsm_taker(dsm, p, h) == me) {
            c.rp[p] = shm_slot(b, set, p);
            c.rn[p] = bytes;
        }
    }
    return cross_run(dsm, &c, "buffer flush: other hosts");
}

/* sum_changes through shared memory, a vector that goes whole: every rank's change vector
 * lies in its slot of this flush's set (flush_snapshot computed it there); after a barrier each
 * rank adds all P where they lie, as after an exchange of the whole vectors (apply_changes: the
 * same operations in the same order, the same bits and counts). The sets take turns: a rank
 * writes the other set at the next flush while a slower one may still read this one, and
 * this set again only after the next barrier, when every rank has read it. One barrier, no
 * message: softmax's 640 bytes at every round of 64 points. On several hosts the other
 * hosts' vectors come first (shm_cross); a taker writes a slot of this set only after the
 * last barrier, as its owner would have. */
static int shm_whole(OrnRtBuffer *b, char *dst, int avg)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    int P = orn_dsm_size(dsm), set = (int)(b->shm_turn++ & 1), status = ORN_OK;
    if (orn_dsm_nhosts(dsm) > 1) status = shm_cross(b, set);
    if (!status) status = orn_dsm_shm_barrier(dsm, shm_seq(b), ++b->shm_k, "buffer flush");
    if (status) return status;
    return apply_changes(b, dst, shm_slot(b, set, 0), b->shm_stride, P, b->target->nnz, avg);
}

/* sum_changes through shared memory, by slices: every rank's change vector lies in its slot
 * (flush_snapshot computed it there); after a barrier rank r adds the P ranks' parts of its slice
 * where they lie into its slice of dst (apply_changes: the same operations in the same order as the
 * slices exchanged by messages, so the same bits) and puts that and its counts in the shared
 * sum; after a second barrier every rank copies the others' slices into dst and sums the
 * counts. Nothing goes through MPI: no copy into and out of messages, and each rank reads
 * the others' parts where they lie. The slots are read only between the two barriers and the
 * sum after the second: a rank writes its slot at the next flush only once every rank has
 * passed the second, and its slice of the sum after the next flush's first. On several
 * hosts (each with its memory): before the first barrier each rank sends every rank of
 * another host that rank's slice of its vector, which lands in the sender's slot there (only
 * the slice's owner reads it); after its adds, each rank sends its summed slice to its taker
 * on every other host, which puts it in its host's sum before the second barrier (where no
 * one reads it until then): each slice's adds made once, in rank order, as on one host;
 * the counts summed over all ranks by a collective. */
static int shm_sum(OrnRtBuffer *b, char *dst, int avg)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    int P = orn_dsm_size(dsm), me = orn_dsm_rank(dsm), h = orn_dsm_host_of(dsm, me);
    int hosts = orn_dsm_nhosts(dsm) > 1, status = ORN_OK;
    size_t *off = orn_xmalloc(((size_t)P + 1) * sizeof *off);
    slice_offsets(b, P, off);
    size_t es = b->target->esize, sb = off[me + 1] - off[me];
    char *sum = shm_sum_area(b);
    int64_t *cnt = shm_counts(b);
    if (hosts) { /* the other hosts' parts of this rank's slice, into their slots here */
        OrnDsmSwap c = orn_dsm_swap_new(P);
        for (int p = 0; p < P; p++)
            if (orn_dsm_host_of(dsm, p) != h) {
                c.sp[p] = b->shm + (size_t)me * b->shm_stride + off[p];
                c.sn[p] = off[p + 1] - off[p];
                c.rp[p] = b->shm + (size_t)p * b->shm_stride + off[me];
                c.rn[p] = sb;
            }
        status = cross_run(dsm, &c, "buffer flush: other hosts' changes");
    }
    if (!status) status = orn_dsm_shm_barrier(dsm, shm_seq(b), ++b->shm_k, "buffer flush: changes");
    if (!status)
        status = apply_changes(b, dst + off[me], b->shm + off[me], b->shm_stride, P,
                               (int64_t)(sb / es), avg);
    if (!status) {
        memcpy(sum + off[me], dst + off[me], sb);
        cnt[2 * me] = b->changed;
        cnt[2 * me + 1] = b->shared;
    }
    if (!status && hosts) { /* this rank's slice to its taker on every other host */
        OrnDsmSwap c = orn_dsm_swap_new(P);
        for (int p = 0; p < P; p++) {
            int hp = orn_dsm_host_of(dsm, p);
            if (hp == h) continue;
            if (orn_dsm_taker(dsm, me, hp) == p) {
                c.sp[p] = sum + off[me];
                c.sn[p] = sb;
            }
            if (orn_dsm_taker(dsm, p, h) == me) {
                c.rp[p] = sum + off[p];
                c.rn[p] = off[p + 1] - off[p];
            }
        }
        status = cross_run(dsm, &c, "buffer flush: other hosts' slices");
    }
    if (!status) status = orn_dsm_shm_barrier(dsm, shm_seq(b), ++b->shm_k, "buffer flush: slices");
    for (int q = 0; q < P && !status; q++)
        if (q != me) memcpy(dst + off[q], sum + off[q], off[q + 1] - off[q]);
    free(off);
    if (!status && b->count_changes && hosts) { /* the host's counts alone are here */
        int64_t c[2] = {b->changed, b->shared};
        status = orn_dsm_allreduce_i64(dsm, c, 2, ORN_DSM_SUM);
        b->changed = c[0];
        b->shared = c[1];
    } else if (!status && b->count_changes) {
        b->changed = b->shared = 0;
        for (int q = 0; q < P; q++) {
            b->changed += cnt[2 * q];
            b->shared += cnt[2 * q + 1];
        }
    }
    return status;
}

/* Everyone's change vector (mine: the target's nnz elements) added into dst, the copy every
 * rank holds alike, per element in rank order (apply_changes). Small vectors: one exchange
 * of the whole vectors (orn_dsm_allgather_into), each rank adding all P. Larger: by slices
 * (transport.h) -- rank r receives the P ranks' parts of its slice, a P-th of the elements
 * cut at 64-byte multiples, adds them into its slice of dst, and the slices go round --
 * (P - 1) / P of the vector each way twice and one slice's adds per rank, rather than
 * P - 1 vectors each way and P vectors' adds. The same operations per element in the same
 * order: the same bits either way; the counts (b->changed, b->shared) are summed over the
 * slices. Slices from OrnRtCtx.slices_bytes ($ORN_FLUSH_SLICES, default 48 KB) of changes
 * times (2P - 3): per rank they save (P - 2) vectors' transfer and (P - 1) vectors' adds
 * against one more exchange (two with counts, each a few us over shared memory), at 10
 * GB/s for both worth it from 48 KB at P = 2 (SLR's 400 KB), 16 KB at 3, 10 KB at 4;
 * softmax's 640 bytes go whole. (Snapshots through the host's shared memory: shm_whole,
 * shm_sum, the same adds.) b->xbuf, allocated here, lives as long as the loop
 * (its size fixed by the target and P). */
static int sum_changes(OrnRtBuffer *b, char *dst, const char *mine, int avg)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    OrnDsmArray *a = b->target;
    int P = orn_dsm_size(dsm), me = orn_dsm_rank(dsm), status;
    int64_t vol = a->nnz;
    size_t es = a->esize, bytes = (size_t)vol * es;
    if (!sliced(b, P)) {
        if (!b->xbuf) b->xbuf = orn_xmalloc((size_t)P * bytes + 1);
        char *all = b->xbuf;
        memcpy(all + (size_t)me * bytes, mine, bytes);
        status = orn_dsm_allgather_into(dsm, all, bytes, "buffer flush");
        return status ? status : apply_changes(b, dst, all, bytes, P, vol, avg);
    }
    size_t *off = orn_xmalloc(((size_t)P + 1) * sizeof *off), most = 0;
    slice_offsets(b, P, off);
    for (int q = 0; q < P; q++)
        if (off[q + 1] - off[q] > most) most = off[q + 1] - off[q];
    if (!b->xbuf) b->xbuf = orn_xmalloc((size_t)P * most + 1);
    size_t sb = off[me + 1] - off[me];
    status = orn_dsm_scatter_slices(dsm, mine, off, b->xbuf, "buffer flush");
    if (!status) status = apply_changes(b, dst + off[me], b->xbuf, sb, P, (int64_t)(sb / es), avg);
    if (!status && b->count_changes) {
        int64_t c[2] = {b->changed, b->shared};
        status = orn_dsm_allreduce_i64(dsm, c, 2, ORN_DSM_SUM);
        b->changed = c[0];
        b->shared = c[1];
    }
    if (!status) status = orn_dsm_gather_slices(dsm, dst, off, "buffer flush");
    free(off);
    return status;
}

/* Everyone's whole dense store to everyone (when that is no more bytes than the touched
 * keys' records): added to every rank's copy (sum_changes), elements whose summed delta is
 * +0 left alone (untouched ones among them); the most keys a rank touched chooses the next
 * flush. */
static int flush_dense_everyone(OrnRtBuffer *b)
{
    OrnDsmArray *a = b->target;
    int64_t most = b->dd.n;
    int status = sum_changes(b, b->replica, b->dd.base, averages(b));
    for (int64_t i = 0; i < b->dd.n; i++) {
        memset(b->dd.base + (size_t)b->dd.touched[i] * a->esize, 0, a->esize);
        b->dd.seen[b->dd.touched[i]] = 0;
    }
    b->dd.n = 0;
    if (!status) status = orn_dsm_allreduce_i64(b->rt->dsm, &most, 1, ORN_DSM_MAX);
    b->most_touched = most;
    return status;
}

/* Small target, a copy on every rank: each rank's copy - snap (b->mine, or its slot of the
 * shared memory where the vector goes by slices and the host's ranks share one: shm_sum)
 * added to snap on every rank (sum_changes: in rank order, zero changes skipped; averaged
 * where staleness-aware or at the adaptive floor), then every copy = snap. */
static int flush_snapshot(OrnRtBuffer *b)
{
    OrnDsmArray *a = b->target;
    OrnDsmCtx *dsm = b->rt->dsm;
    int64_t vol = a->nnz;
    size_t es = a->esize, bytes = (size_t)vol * es;
    int P = orn_dsm_size(dsm), status = ORN_OK;
    if (P > 1) status = shm_prepare(b, P, orn_dsm_rank(dsm));
    if (status) return status;
    char *mine = b->shm
                     ? shm_slot(b, b->shm_sets == 2 ? (int)(b->shm_turn & 1) : 0, orn_dsm_rank(dsm))
                     : b->mine;
    if (a->type == ORN_DSM_F32) {
        sub_float((float *)(void *)mine, (const float *)(const void *)b->replica,
                  (const float *)(const void *)b->snap, vol);
    } else {
        for (int64_t i = 0; i < vol; i++)
            sub_typed(a->type, mine + (size_t)i * es, b->replica + (size_t)i * es,
                      b->snap + (size_t)i * es);
    }
    int avg = (b->stale_aware || averages(b)) && (a->type == ORN_DSM_F32 || a->type == ORN_DSM_F64);
    if (!b->shm)
        status = sum_changes(b, b->snap, mine, avg);
    else
        status = sliced(b, P) ? shm_sum(b, b->snap, avg) : shm_whole(b, b->snap, avg);
    if (status) return status;
    memcpy(b->replica, b->snap, bytes);
    b->rt->stats.flushed += vol;
    return ORN_OK;
}

/* A dense target without copies, with the default apply (PageRank's push `dnext[t] +=`, a
 * histogram, a gradient or k-means' sums through a buffer): when some rank touched so many keys
 * that records (16 bytes a key, each unravelled, looked up and applied one by one) weigh more than
 * the whole target, every rank sends each owner the dense slices of its store over the owner's
 * tiles, run by run along the last dimension (a reduce-scatter), and the owner adds them, source
 * rank by source rank, elements whose summed delta is +0 left alone (untouched ones among them):
 * the records' result. The choice is collective (the most keys any rank touched by a loop
 * run's first flush; records for the rest of that run otherwise) and holds from
 * then on (owners_dense; until a run at one rank): updates in loops then add to the store without
 * listing their keys, and a flush clears the whole store. Returns 1 in *done when it flushed, 0
 * when records are the better choice (nothing changed then). */
static int flush_dense_owners(OrnRtBuffer *b, int *done)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    OrnDsmArray *a = b->target;
    int P = orn_dsm_size(dsm), me = orn_dsm_rank(dsm);
    *done = 0;
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (a->part.owner[t] == ORN_DSM_ALL) return ORN_OK;
    size_t es = a->esize;
    int status = ORN_OK;
    int back = 0; /* a guessed dense choice that this flush finds wrong */
    /* decided once per loop run (a loop flushing every few iterations would otherwise pay a
     * collective per flush for the same answer), from the listed keys, or from the changed
     * elements of a guessed dense store */
    if (!b->owners_dense || b->owners_guess) {
        if (!b->owners_dense && b->owners_checked) return ORN_OK;
        int guessed = b->owners_guess;
        b->owners_guess = 0;
        b->owners_checked = b->owners_known = 1;
        int64_t most = guessed ? count_nonzero(b->dd.base, a->nnz, es) : b->dd.n;
        status = orn_dsm_allreduce_i64(dsm, &most, 1, ORN_DSM_MAX);
        if (status) return status;
        int few = (size_t)most * 16 < (size_t)a->nnz * es;
        if (few && !guessed) return ORN_OK;
        back = few && guessed;
    }
    *done = 1;
    /* Each other rank's slices of the store go to it in place where they lie in one range of
     * the store (a 1-D target, or bands of whole rows: no pass of packing), else packed (each
     * zeroed right after its copy, while in cache); this rank's own slices are added from the
     * store itself, in their place in the source order, then zeroed: they never pass through
     * the packing or the exchange. The sizes are the tiles' sizes, known on every rank: one
     * exchange of the data alone. */
    OrnDsmSwap x = orn_dsm_swap_new(P);
    size_t *sn = x.sn, *pos = orn_xcalloc((size_t)P + 1, sizeof *pos), mine = 0;
    /* rank q's slices in place at [lo[q], hi[q]) of the store; hi[q] PACKED: not one range */
    enum { UNSEEN = -1, PACKED = -2 };
    int64_t *lo = orn_xcalloc(2 * (size_t)P, sizeof *lo), *hi = lo + P;
    for (int q = 0; q < P; q++) lo[q] = hi[q] = UNSEEN;
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        int o = a->part.owner[t];
        if (o == me) {
            mine += (size_t)a->tiles[t].n * es;
            continue;
        }
        sn[o] += (size_t)a->tiles[t].n * es;
        OrnDsmRuns r;
        for (int ok = orn_dsm_runs_begin(&r, a, t, 0, a->dims[0]); ok; ok = orn_dsm_runs_next(&r)) {
            if (lo[o] == UNSEEN) lo[o] = hi[o] = r.lin;
            hi[o] = hi[o] == r.lin && hi[o] >= 0 ? r.lin + r.len : PACKED;
        }
    }
    for (int q = 0; q < P; q++) pos[q + 1] = pos[q] + (hi[q] == PACKED ? sn[q] : 0);
    char *sbuf = orn_xmalloc(pos[P] ? pos[P] : 1), *rbuf = orn_xmalloc(mine * (size_t)P + 1);
    int dense = b->owners_dense; /* the whole store is cleared (else its touched keys) */
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        OrnDsmRuns r;
        int o = a->part.owner[t];
        if (o == me || hi[o] != PACKED) continue;
        for (int ok = orn_dsm_runs_begin(&r, a, t, 0, a->dims[0]); ok; ok = orn_dsm_runs_next(&r)) {
            char *src = b->dd.base + (size_t)r.lin * es;
            memcpy(sbuf + pos[o], src, (size_t)r.len * es);
            if (dense) memset(src, 0, (size_t)r.len * es);
            pos[o] += (size_t)r.len * es;
        }
    }
    for (int q = 0, k = 0; q < P; q++) {
        if (q == me) continue;
        x.sp[q] = hi[q] == PACKED ? sbuf + pos[q] - sn[q]
                                  : b->dd.base + (size_t)(lo[q] > 0 ? lo[q] : 0) * es;
        x.rn[q] = mine;
        x.rp[q] = rbuf + (size_t)k++ * mine;
    }
    status = orn_dsm_exchange(dsm, &x, NULL, "buffer flush");
    for (int q = 0; q < P && dense && !status; q++) /* sent in place: now cleared */
        if (q != me && hi[q] >= 0) memset(b->dd.base + (size_t)lo[q] * es, 0, sn[q]);
    size_t off = 0;
    for (int q = 0; q < P && !status; q++)
        for (int64_t t = 0; t < a->part.ntiles && !status; t++) {
            if (a->part.owner[t] != me) continue;
            OrnDsmTile *tl = &a->tiles[t];
            if (tl->n == 0) continue; /* an empty box (more blocks than rows) */
            if (!tl->held || !tl->vals) {
                status = orn_dsm_fail(dsm, ORN_E_INTERNAL, "buffer(%s): tile %lld not held",
                                      a->name, (long long)t);
                break;
            }
            OrnDsmRuns r;
            for (int ok = orn_dsm_runs_begin(&r, a, t, 0, a->dims[0]); ok && !status;
                 ok = orn_dsm_runs_next(&r)) {
                char *own = b->dd.base + (size_t)r.lin * es;
                status = rt_buffer_add_changes(b, (char *)tl->vals + (size_t)r.at * es,
                                               q == me ? own : rbuf + off, r.len);
                if (q == me && dense) memset(own, 0, (size_t)r.len * es);
                if (q != me) off += (size_t)r.len * es;
            }
        }
    if (dense) {
        for (int64_t i = 0; i < b->dd.n; i++) b->dd.seen[b->dd.touched[i]] = 0; /* outside loops */
        b->dd.n = 0;
        b->rt->stats.flushed += a->nnz;
        if (back) { /* the rest of the loop, and the next runs, list their keys */
            b->owners_dense = 0;
            b->dd.collect = 1;
        }
    } else {
        for (int64_t i = 0; i < b->dd.n; i++) {
            memset(b->dd.base + (size_t)b->dd.touched[i] * es, 0, es);
            b->dd.seen[b->dd.touched[i]] = 0;
        }
        b->rt->stats.flushed += b->dd.n;
        b->dd.n = 0;
        /* the rest of the loop flushes so too: its updates need not list their keys */
        b->owners_dense = 1;
        b->dd.collect = 0;
    }
    orn_dsm_swap_free(&x);
    free(pos);
    free(lo);
    free(sbuf);
    free(rbuf);
    return status;
}

/* count_changes for a flush's records, gathered from every rank (one key at most
 * once per rank). */
static void count_records(OrnRtBuffer *b, const char *rbuf, size_t total, int eager)
{
    const size_t rec = 16;
    OrnDsmArray *a = b->target;
    if (!b->marks) b->marks = orn_xcalloc((size_t)(a->nnz ? a->nnz : 1), 1);
    for (int pass = 0; pass < 2; pass++)
        for (size_t off = 0; off < total; off += rec) {
            int64_t lin;
            memcpy(&lin, rbuf + off, 8);
            if (eager && zero_bits(rbuf + off + 8, a->esize)) continue;
            unsigned char *m = &b->marks[lin];
            if (!pass) {
                *m += *m < 2;
                continue;
            }
            b->changed += *m > 0;
            b->shared += *m > 1;
            *m = 0;
        }
}

/* A delta for an element of a travelling tile not installed here yet: kept, in arrival
 * order, until the tile arrives. */
static void wait_for_tile(OrnRtBuffer *b, int64_t tile, int64_t lin, const char *delta)
{
    const size_t rec = 24;
    if (b->npending == b->cappending) {
        b->cappending = b->cappending ? 2 * b->cappending : 64;
        b->pending = orn_xrealloc(b->pending, b->cappending * rec);
    }
    char *r = b->pending + b->npending++ * rec;
    memcpy(r, &tile, 8);
    memcpy(r + 8, &lin, 8);
    memcpy(r + 16, delta, 8);
}

int rt_buffer_arrived(OrnRtBuffer *b, int64_t tile)
{
    const size_t rec = 24;
    OrnDsmArray *a = b->target;
    size_t kept = 0;
    int status = ORN_OK;
    for (size_t i = 0; i < b->npending; i++) {
        char *r = b->pending + i * rec;
        int64_t t, lin, key[ORN_DSM_MAXDIM];
        memcpy(&t, r, 8);
        if (t != tile || status) {
            memmove(b->pending + kept++ * rec, r, rec);
            continue;
        }
        memcpy(&lin, r + 8, 8);
        orn_dsm_unravel(a, lin, key);
        void *elem = orn_dsm_local_ptr(a, key);
        status = elem ? apply_one(b, elem, r + 16)
                      : orn_dsm_fail(b->rt->dsm, ORN_E_INTERNAL,
                                     "buffer(%s): block %lld arrived without its element", a->name,
                                     (long long)tile);
    }
    b->npending = kept;
    return status;
}

/* The flush proper (orn_rt_buffer_flush records it on the timeline). */
static int flush(OrnRtBuffer *b)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    OrnDsmArray *a = b->target;
    orn_dsm_touch(a);
    b->changed = b->shared = 0;
    int P = orn_dsm_size(dsm), status = ORN_OK;
    /* With a copy of the target on every rank, every record goes to every rank; during
     * the loop only the copies are read, so the owners take theirs at its end
     * (rt_replica_writeback). */
    int everyone = b->replica && P > 1;
    if (everyone && b->mg) return rt_managed_flush(b);
    if (everyone && b->snap) return flush_snapshot(b);
    /* This rank's copy took its own updates at once: its change to each touched element
     * (copy - orig) is its delta, and the copy goes back to the last flush's values. */
    int eager = everyone && b->dd.direct;
    if (eager)
        for (int64_t i = 0; i < b->dd.n; i++) {
            size_t at = (size_t)b->dd.touched[i] * a->esize;
            sub_typed(a->type, b->dd.base + at, b->replica + at, b->dd.orig + at);
            memcpy(b->replica + at, b->dd.orig + at, a->esize);
        }
    if (!everyone && P > 1 && b->dense && !b->apply && !a->sparse && !b->route) {
        int done = 0;
        status = flush_dense_owners(b, &done);
        if (status || done) return status;
    }
    /* Dense or records: decided alike on every rank, from the last flush's counts. Only for
     * the default apply: the dense store cannot tell a touched element whose deltas sum to
     * +0 from an untouched one, and a custom f(old, 0) need not be old. */
    if (everyone && b->dense && !b->apply &&
        (size_t)b->most_touched * 16 >= (size_t)a->nnz * a->esize) {
        b->rt->stats.flushed += b->dd.n;
        return flush_dense_everyone(b);
    }
    const size_t rec = 16;
    int64_t n = b->dense ? b->dd.n : b->deltas.n, m = 0;
    int64_t *lins = orn_xmalloc((size_t)(n ? n : 1) * sizeof *lins);
    int *dest = orn_xmalloc((size_t)(n ? n : 1) * sizeof *dest);
    size_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    size_t *pos = orn_xcalloc((size_t)P + 1, sizeof *pos);
    char *sbuf = NULL, *rbuf = NULL;

    if (b->dense)
        memcpy(lins, b->dd.touched, (size_t)n * sizeof *lins);
    else
        for (int64_t i = 0; i < b->deltas.cap; i++)
            if (b->deltas.keys[i] >= 0) lins[m++] = b->deltas.keys[i];
    (void)m;
    /* No sort: one source's keys are distinct, so the order an owner applies them in
     * cannot change a result; first-touch (or hash) order is deterministic anyway. */
    for (int64_t i = 0; i < n; i++) {
        int64_t key[ORN_DSM_MAXDIM];
        if (everyone) {
            dest[i] = 0; /* one copy, gathered by all */
        } else {
            orn_dsm_unravel(a, lins[i], key);
            int64_t t = orn_dsm_part_tile_of(&a->part, key);
            dest[i] = b->route ? b->route[t] : a->part.owner[t];
        }
        if (dest[i] == ORN_DSM_ALL)
            for (int p = 0; p < P; p++) sc[p] += rec;
        else
            sc[dest[i]] += rec;
    }
    for (int p = 0; p < P; p++) pos[p + 1] = pos[p] + sc[p];
    sbuf = orn_xmalloc(pos[P] ? pos[P] : 1);
    for (int64_t i = 0; i < n; i++) {
        const void *d = b->dense ? (const void *)(b->dd.base + (size_t)lins[i] * a->esize)
                                 : rt_map_find(&b->deltas, lins[i]);
        for (int p = 0; p < P; p++) {
            if (dest[i] != ORN_DSM_ALL && dest[i] != p) continue;
            memcpy(sbuf + pos[p], &lins[i], 8);
            memset(sbuf + pos[p] + 8, 0, 8);
            memcpy(sbuf + pos[p] + 8, d, a->esize);
            pos[p] += rec;
        }
    }
    if (b->dense) {
        for (int64_t i = 0; i < n; i++) {
            memset(b->dd.base + (size_t)lins[i] * a->esize, 0, a->esize);
            b->dd.seen[lins[i]] = 0;
        }
        b->dd.n = 0;
    } else {
        rt_map_clear(&b->deltas);
    }
    b->rt->stats.flushed += n;
    if (everyone) {
        status = orn_dsm_allgatherv(dsm, sbuf, sc[0], (void **)&rbuf, rc, "buffer flush");
        if (status) goto fn_exit;
        b->most_touched = 0;
        for (int p = 0; p < P; p++)
            if ((int64_t)(rc[p] / rec) > b->most_touched) b->most_touched = (int64_t)(rc[p] / rec);
    } else if (P == 1) { /* one rank: the records are already where they apply */
        rbuf = sbuf;
        rc[0] = sc[0];
        sbuf = NULL;
    } else {
        status = orn_dsm_alltoallv(dsm, sbuf, sc, (void **)&rbuf, rc, "buffer flush");
        if (status) goto fn_exit;
    }
    /* Apply in source-rank order (the receive buffer is in rank order). */
    size_t total = 0;
    for (int p = 0; p < P; p++) total += rc[p];
    if (everyone && b->count_changes) count_records(b, rbuf, total, eager);
    int avg = everyone && averages(b);
    if (avg) { /* the adaptive interval's floor: the ranks that changed each element */
        if (!b->nchg) b->nchg = orn_xcalloc((size_t)(a->nnz ? a->nnz : 1), sizeof *b->nchg);
        for (size_t off = 0; off < total; off += rec) {
            int64_t lin;
            memcpy(&lin, rbuf + off, 8);
            if (!(eager && zero_bits(rbuf + off + 8, a->esize))) b->nchg[lin]++;
        }
    }
    for (size_t off = 0; off < total && !status; off += rec) {
        int64_t lin, key[ORN_DSM_MAXDIM];
        memcpy(&lin, rbuf + off, 8);
        if (everyone) { /* eager: a change of +0 leaves the element alone (as flush_snapshot) */
            if (eager && zero_bits(rbuf + off + 8, a->esize)) continue;
            char *d = rbuf + off + 8;
            if (avg && b->nchg[lin] > 1) div_float(a->type, d, b->nchg[lin]);
            status = apply_one(b, b->replica + (size_t)lin * a->esize, d);
            continue;
        }
        orn_dsm_unravel(a, lin, key);
        void *elem = orn_dsm_local_ptr(a, key);
        if (!elem && b->route) { /* its tile travels here (rt_buffer_arrived) */
            wait_for_tile(b, orn_dsm_part_tile_of(&a->part, key), lin, rbuf + off + 8);
            continue;
        }
        if (!elem) {
            status = orn_dsm_fail(dsm, ORN_E_RANGE,
                                  "buffer(%s): a delta for an element that is not stored here "
                                  "(sparse arrays keep their structure)",
                                  a->name);
            break;
        }
        if (!status) status = apply_one(b, elem, rbuf + off + 8);
    }
    if (avg)
        for (size_t off = 0; off < total; off += rec) {
            int64_t lin;
            memcpy(&lin, rbuf + off, 8);
            b->nchg[lin] = 0;
        }
fn_exit:
    free(lins);
    free(dest);
    free(sc);
    free(rc);
    free(pos);
    free(sbuf);
    free(rbuf);
    return status;
}

int orn_rt_buffer_flush(OrnRtBuffer *b)
{
    OrnTl *tl = orn_dsm_timeline(b->rt->dsm);
    if (!tl) return flush(b);
    char name[64];
    snprintf(name, sizeof name, "flush %s", b->target->name[0] ? b->target->name : "buffer");
    int64_t sp = orn_tl_begin(tl, ORN_TL_FLUSH, name);
    int64_t before = b->rt->stats.flushed;
    int status = flush(b);
    orn_tl_int(tl, sp, "deltas", b->rt->stats.flushed - before);
    if (b->count_changes) { /* the adaptive interval's measure (exec.c, adapt_interval) */
        orn_tl_int(tl, sp, "changed", b->changed);
        orn_tl_int(tl, sp, "shared", b->shared);
        orn_tl_int(tl, sp, "interval", b->interval);
    }
    orn_tl_end(tl, sp);
    return status;
}
