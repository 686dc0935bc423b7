/* oracle.h: the serial oracle. It runs the SAME body functions as the distributed runtime,
 * in one process, over whole copies of the arrays (gathered before the loop), block by
 * block in a given order: the trace the runtime recorded (unordered loops), or key order
 * (ordered loops: one block covering everything). Buffers are emulated as the language
 * defines them: deltas summed per rank, applied at the end of each round in rank order,
 * keys ascending; at one rank each update at once (through a custom apply too). Accumulators are
 * combined per block in block order, as documented. Results are compared bit for bit (memcmp) with
 * the gathered distributed arrays. */
#ifndef ORN_TEST_ORACLE_H
#define ORN_TEST_ORACLE_H

#include "harness.h"

typedef struct OArr {
    int ndim, sparse;
    OrnDsmType type;
    size_t esize;
    int64_t dims[ORN_RT_MAXDIM];
    int64_t n;     /* stored elements (dense: the volume) */
    int64_t *keys; /* sparse: n * ndim, key order */
    char *vals;
    int64_t *rowptr; /* sparse: dims[0] + 1 */
} OArr;

static inline void oarr_gather(TestEnv *t, OrnDsmArray *a, OArr *o)
{
    void *vals = NULL;
    memset(o, 0, sizeof *o);
    OK(t, orn_dsm_gather(a, &o->n, &o->keys, &vals));
    o->vals = vals;
    o->ndim = a->ndim;
    o->sparse = a->sparse;
    o->type = a->type;
    o->esize = a->esize;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) o->dims[d] = d < a->ndim ? a->dims[d] : 1;
    if (o->sparse) {
        o->rowptr = calloc((size_t)o->dims[0] + 1, sizeof *o->rowptr);
        for (int64_t i = 0; i < o->n; i++) o->rowptr[o->keys[i * o->ndim] + 1]++;
        for (int64_t r = 0; r < o->dims[0]; r++) o->rowptr[r + 1] += o->rowptr[r];
    }
}

static inline void oarr_free(OArr *o)
{
    free(o->keys);
    free(o->vals);
    free(o->rowptr);
    memset(o, 0, sizeof *o);
}

/* The distributed array equals the oracle's copy bit for bit. */
static inline int oarr_same(TestEnv *t, OrnDsmArray *a, const OArr *o)
{
    OArr g;
    oarr_gather(t, a, &g);
    int same = g.n == o->n && g.esize == o->esize &&
               (!o->sparse || !memcmp(g.keys, o->keys, (size_t)o->n * (size_t)o->ndim * 8)) &&
               !memcmp(g.vals, o->vals, (size_t)o->n * o->esize);
    oarr_free(&g);
    return same;
}

static inline int64_t oarr_lin(const OArr *o, const int64_t *key)
{
    int64_t lin = 0;
    for (int d = 0; d < o->ndim; d++) lin = lin * o->dims[d] + key[d];
    return lin;
}

/* Per-rank delta stores of one buffer: dense, volume-sized (tests are small). */
typedef struct OBuf {
    OArr *target;
    int P;
    double *delta;          /* P * volume, summed in the target's type (see add) */
    unsigned char *touched; /* P * volume */
    orn_rt_apply_fn apply;
    void *env;
    /* oracle_eager: every rank reads its own copy of the target, which takes its own
     * updates at once; a flush adds each rank's change to its copy (copy - the target), in
     * rank order, and resets the copies to the target (the runtime's rule when every rank
     * has a copy, runtime/buffer.c); P * volume elements */
    char *copies;
    /* oracle_adaptive: the adaptive flush interval's rule (runtime/exec.c, adapt_interval):
     * after a round every rank ran whole at `interval`, the share of the changed elements
     * that two or more ranks changed halves it above 3/8 (floor 64) or doubles it below
     * 3/16; a round above 3/8 at the floor makes the next flushes average (each change
     * divided by the ranks that changed that element) until a round below 3/16 */
    int adaptive, averaging;
    int64_t interval, changed, shared;
} OBuf;

typedef struct OView {
    OrnRtView v; /* first: the runtime hands bodies &views[k] */
} OView;

typedef struct Oracle {
    TestEnv *t;
    const OrnRtPlan *plan;
    OArr **arr; /* per plan array (buffered: the target) */
    OBuf *buf;  /* per plan array (buffered only) */
    OrnRtView *views;
    int cur_rank; /* rank whose block runs now (for buffers) */
    /* The running block's elements: the iteration space is read and written through them
     * (the runtime's view of the iteration space aliases the block's values). */
    int64_t cur_n;
    const int64_t *cur_keys;
    char *cur_vals;
    struct OImpl *impl;
} Oracle;

typedef struct OImpl {
    Oracle *o;
    int k;
} OImpl;

/* The running block's element with this key (iteration space only), or NULL. */
static inline char *o_cur(Oracle *o, const int64_t *key, int nd)
{
    int64_t lo = 0, hi = o->cur_n;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        int c = 0;
        for (int d = 0; d < nd && !c; d++)
            c = o->cur_keys[mid * nd + d] < key[d] ? -1 : o->cur_keys[mid * nd + d] > key[d];
        if (!c) return o->cur_vals + (size_t)mid * o->arr[0]->esize;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static inline void o_read(OrnRtView *v, const int64_t *key, void *out)
{
    OImpl *im = v->impl;
    OArr *a = im->o->arr[im->k];
    memset(out, 0, v->esize);
    if (im->k == 0) {
        const char *p = o_cur(im->o, key, a->ndim);
        if (p) {
            memcpy(out, p, a->esize);
            return;
        }
    }
    for (int d = 0; d < a->ndim; d++)
        if (key[d] < 0 || key[d] >= a->dims[d]) {
            fprintf(stderr, "oracle: read outside array %d\n", im->k);
            abort();
        }
    if (!a->sparse) {
        memcpy(out, a->vals + (size_t)oarr_lin(a, key) * a->esize, a->esize);
        return;
    }
    for (int64_t i = a->rowptr[key[0]]; i < a->rowptr[key[0] + 1]; i++)
        if (!memcmp(a->keys + i * a->ndim, key, (size_t)a->ndim * 8)) {
            memcpy(out, a->vals + (size_t)i * a->esize, a->esize);
            return;
        }
}

static inline void *o_write(OrnRtView *v, const int64_t *key)
{
    OImpl *im = v->impl;
    OArr *a = im->o->arr[im->k];
    if (im->k == 0) {
        char *p = o_cur(im->o, key, a->ndim);
        if (p) return p;
    }
    if (a->sparse)
        for (int64_t i = a->rowptr[key[0]]; i < a->rowptr[key[0] + 1]; i++)
            if (!memcmp(a->keys + i * a->ndim, key, (size_t)a->ndim * 8))
                return a->vals + (size_t)i * a->esize;
    fprintf(stderr, "oracle: write outside array %d\n", im->k);
    abort();
}

/* *elem += *d, both of the type. */
static inline void o_add_typed(OrnDsmType type, char *elem, const void *d)
{
    if (type == ORN_DSM_F32) {
        float x, y;
        memcpy(&x, elem, 4);
        memcpy(&y, d, 4);
        x += y;
        memcpy(elem, &x, 4);
    } else if (type == ORN_DSM_F64) {
        double x, y;
        memcpy(&x, elem, 8);
        memcpy(&y, d, 8);
        x += y;
        memcpy(elem, &x, 8);
    } else if (type == ORN_DSM_I32) {
        int32_t x, y;
        memcpy(&x, elem, 4);
        memcpy(&y, d, 4);
        x = (int32_t)((uint32_t)x + (uint32_t)y);
        memcpy(elem, &x, 4);
    } else {
        int64_t x, y;
        memcpy(&x, elem, 8);
        memcpy(&y, d, 8);
        x = (int64_t)((uint64_t)x + (uint64_t)y);
        memcpy(elem, &x, 8);
    }
}

/* *out = *x - *y, of the type. */
static inline void o_sub_typed(OrnDsmType type, char *out, const char *x, const char *y)
{
    if (type == ORN_DSM_F32) {
        float a, c;
        memcpy(&a, x, 4);
        memcpy(&c, y, 4);
        a -= c;
        memcpy(out, &a, 4);
    } else if (type == ORN_DSM_F64) {
        double a, c;
        memcpy(&a, x, 8);
        memcpy(&c, y, 8);
        a -= c;
        memcpy(out, &a, 8);
    } else if (type == ORN_DSM_I32) {
        uint32_t a, c;
        memcpy(&a, x, 4);
        memcpy(&c, y, 4);
        a -= c;
        memcpy(out, &a, 4);
    } else {
        uint64_t a, c;
        memcpy(&a, x, 8);
        memcpy(&c, y, 8);
        a -= c;
        memcpy(out, &a, 8);
    }
}

static inline void o_add(OrnRtView *v, const int64_t *key, const void *delta)
{
    OImpl *im = v->impl;
    OBuf *b = &im->o->buf[im->k];
    int64_t vol = 1, lin = oarr_lin(b->target, key);
    if (b->P == 1) { /* one rank: each update at once */
        char *elem = b->target->vals + (size_t)lin * b->target->esize;
        if (b->apply)
            b->apply(elem, delta, b->env);
        else
            o_add_typed(b->target->type, elem, delta);
        return;
    }
    for (int d = 0; d < b->target->ndim; d++) vol *= b->target->dims[d];
    if (b->copies)
        o_add_typed(b->target->type,
                    b->copies +
                        ((size_t)im->o->cur_rank * (size_t)vol + (size_t)lin) * b->target->esize,
                    delta);
    size_t at = (size_t)im->o->cur_rank * (size_t)vol + (size_t)lin;
    b->touched[at] = 1;
    /* Sum in the element type, as the runtime does. */
    switch (b->target->type) {
    case ORN_DSM_F32: {
        float acc, d;
        memcpy(&acc, &b->delta[at], 4);
        memcpy(&d, delta, 4);
        acc += d;
        memcpy(&b->delta[at], &acc, 4);
        break;
    }
    case ORN_DSM_F64: {
        double d;
        memcpy(&d, delta, 8);
        b->delta[at] += d;
        break;
    }
    case ORN_DSM_I32: {
        int32_t acc, d;
        memcpy(&acc, &b->delta[at], 4);
        memcpy(&d, delta, 4);
        acc += d;
        memcpy(&b->delta[at], &acc, 4);
        break;
    }
    case ORN_DSM_I64: {
        int64_t acc, d;
        memcpy(&acc, &b->delta[at], 8);
        memcpy(&d, delta, 8);
        acc += d;
        memcpy(&b->delta[at], &acc, 8);
        break;
    }
    }
}

static inline void o_prefetch(OrnRtView *v, const int64_t *key)
{
    (void)v;
    (void)key;
}

static inline void o_row(OrnRtView *v, int64_t i, const int64_t **keys, const void **vals,
                         int64_t *n)
{
    OImpl *im = v->impl;
    OArr *a = im->o->arr[im->k];
    *keys = a->keys + a->rowptr[i] * a->ndim;
    *vals = a->vals + (size_t)a->rowptr[i] * a->esize;
    *n = a->rowptr[i + 1] - a->rowptr[i];
}

static const OrnRtViewOps oracle_ops = {o_read, o_write, o_add, o_prefetch, o_row};

/* arrs[k]: the oracle's copy of plan array k (for buffers: of the target). */
static inline void oracle_init(Oracle *o, TestEnv *t, const OrnRtPlan *plan, OArr **arrs,
                               orn_rt_apply_fn apply, void *apply_env)
{
    memset(o, 0, sizeof *o);
    o->t = t;
    o->plan = plan;
    o->arr = arrs;
    o->buf = calloc((size_t)plan->narrays, sizeof *o->buf);
    o->views = calloc((size_t)plan->narrays, sizeof *o->views);
    o->impl = calloc((size_t)plan->narrays, sizeof *o->impl);
    for (int k = 0; k < plan->narrays; k++) {
        OArr *a = arrs[k];
        OrnRtView *v = &o->views[k];
        o->impl[k] = (OImpl){o, k};
        v->ops = &oracle_ops;
        v->impl = &o->impl[k];
        v->ndim = a->ndim;
        v->type = (int)a->type;
        v->esize = a->esize;
        v->role = plan->arrays[k].role;
        if (!a->sparse && v->role != ORN_RT_BUFFERED && k > 0) {
            /* The whole array is the local box. */
            v->base = a->vals;
            int64_t s = 1;
            for (int d = a->ndim - 1; d >= 0; d--) {
                v->lo[d] = 0;
                v->hi[d] = a->dims[d];
                v->stride[d] = s;
                s *= a->dims[d];
            }
        }
        if (v->role == ORN_RT_BUFFERED) {
            int64_t vol = 1;
            for (int d = 0; d < a->ndim; d++) vol *= a->dims[d];
            o->buf[k].target = a;
            o->buf[k].P = t->size;
            o->buf[k].delta = calloc((size_t)(t->size * vol), sizeof(double));
            o->buf[k].touched = calloc((size_t)(t->size * vol), 1);
            o->buf[k].apply = apply;
            o->buf[k].env = apply_env;
        }
    }
}

static inline void oracle_free(Oracle *o)
{
    for (int k = 0; k < o->plan->narrays; k++) {
        free(o->buf[k].delta);
        free(o->buf[k].touched);
        free(o->buf[k].copies);
    }
    free(o->buf);
    free(o->views);
    free(o->impl);
}

/* End of a round: apply every rank's summed deltas, rank 0 first, keys ascending. */
static inline void oracle_flush(Oracle *o)
{
    for (int k = 0; k < o->plan->narrays; k++) {
        OBuf *b = &o->buf[k];
        if (!b->target) continue;
        int64_t vol = 1;
        for (int d = 0; d < b->target->ndim; d++) vol *= b->target->dims[d];
        size_t es = b->target->esize;
        b->changed = b->shared = 0;
        if (b->copies) /* each rank's change to its copy, rank order; +0 changes nothing */
            for (int64_t lin = 0; lin < vol; lin++) {
                char *elem = b->target->vals + (size_t)lin * es, old[8], d[8];
                memcpy(old, elem, es);
                int cnt = 0;
                for (int pass = 0; pass < 2; pass++)
                    for (int q = 0; q < b->P; q++) {
                        o_sub_typed(b->target->type, d,
                                    b->copies + ((size_t)q * (size_t)vol + (size_t)lin) * es, old);
                        int zero = 1;
                        for (size_t c = 0; c < es; c++) zero &= d[c] == 0;
                        if (zero) continue;
                        if (!pass) {
                            cnt++;
                            continue;
                        }
                        if (b->averaging && cnt > 1 && b->target->type == ORN_DSM_F32) {
                            float v;
                            memcpy(&v, d, 4);
                            v = v / (float)cnt;
                            memcpy(d, &v, 4);
                        } else if (b->averaging && cnt > 1 && b->target->type == ORN_DSM_F64) {
                            double v;
                            memcpy(&v, d, 8);
                            v = v / (double)cnt;
                            memcpy(d, &v, 8);
                        }
                        o_add_typed(b->target->type, elem, d);
                    }
                b->changed += cnt > 0;
                b->shared += cnt > 1;
            }
        for (int q = 0; q < b->P; q++)
            for (int64_t lin = 0; lin < vol; lin++) {
                size_t at = (size_t)q * (size_t)vol + (size_t)lin;
                if (!b->touched[at]) continue;
                if (b->copies) {
                    b->touched[at] = 0;
                    b->delta[at] = 0;
                    continue;
                }
                char *elem = b->target->vals + (size_t)lin * b->target->esize;
                if (b->apply)
                    b->apply(elem, &b->delta[at], b->env);
                else
                    o_add_typed(b->target->type, elem, &b->delta[at]);
                b->touched[at] = 0;
                b->delta[at] = 0;
            }
        for (int q = 0; q < b->P && b->copies; q++)
            memcpy(b->copies + (size_t)q * (size_t)vol * b->target->esize, b->target->vals,
                   (size_t)vol * b->target->esize);
    }
}

/* Buffer view k (eager) has the adaptive interval, in state s before the run (OBuf). */
static inline void oracle_adaptive(Oracle *o, int k, const OrnRtBufferState *s)
{
    OBuf *b = &o->buf[k];
    b->adaptive = 1;
    b->interval = s->interval ? s->interval : 64;
    b->averaging = s->averaging;
}

/* After a round: the adaptive rule, where every rank ran `interval` iterations in it. */
static inline void oracle_adapt(Oracle *o, const int64_t *ran)
{
    for (int k = 0; k < o->plan->narrays; k++) {
        OBuf *b = &o->buf[k];
        if (!b->target || !b->adaptive) continue;
        int full = 1;
        for (int q = 0; q < b->P; q++) full &= ran[q] == b->interval;
        if (!full) continue;
        if (b->changed > 0 && b->shared * 8 > b->changed * 3) {
            b->averaging = b->interval <= 64;
            b->interval = b->interval / 2 > 64 ? b->interval / 2 : 64;
        } else if (b->changed > 0 && b->shared * 16 < b->changed * 3) {
            b->averaging = 0;
            b->interval = b->interval < ((int64_t)1 << 19) ? 2 * b->interval : (int64_t)1 << 20;
        }
    }
}

/* Buffer view k: every rank has a copy of the target (see OBuf.copies). */
static inline void oracle_eager(Oracle *o, int k)
{
    OBuf *b = &o->buf[k];
    int64_t vol = 1;
    for (int d = 0; d < b->target->ndim; d++) vol *= b->target->dims[d];
    size_t bytes = (size_t)vol * b->target->esize;
    b->copies = malloc((size_t)b->P * bytes + 1);
    for (int q = 0; q < b->P; q++) memcpy(b->copies + (size_t)q * bytes, b->target->vals, bytes);
}

/* Views of eager buffers' targets read the running rank's copy. */
static inline void oracle_bind_copies(Oracle *o)
{
    for (int k = 0; k < o->plan->narrays; k++) {
        OBuf *b = &o->buf[k];
        if (!b->copies) continue;
        int64_t vol = 1;
        for (int d = 0; d < b->target->ndim; d++) vol *= b->target->dims[d];
        for (int j = 1; j < o->plan->narrays; j++)
            if (o->arr[j] == b->target && o->views[j].role != ORN_RT_BUFFERED)
                o->views[j].base = b->copies + (size_t)o->cur_rank * (size_t)vol * b->target->esize;
    }
}

static inline void acc_ident(const OrnRtPlanAcc *a, OrnRtScalar *v)
{
    memset(v, 0, sizeof *v);
    int one = a->kind == ORN_RT_ACC_PROD, lo = a->kind == ORN_RT_ACC_MAX,
        hi = a->kind == ORN_RT_ACC_MIN;
    if (a->type == ORN_RT_F64) v->f64 = one ? 1.0 : hi ? 1.0 / 0.0 : lo ? -1.0 / 0.0 : 0.0;
    if (a->type == ORN_RT_F32) v->f32 = one ? 1.0f : hi ? 1.0f / 0.0f : lo ? -1.0f / 0.0f : 0.0f;
    if (a->type == ORN_RT_I64) v->i64 = one ? 1 : hi ? INT64_MAX : lo ? INT64_MIN : 0;
    if (a->type == ORN_RT_I32) v->i32 = one ? 1 : hi ? INT32_MAX : lo ? INT32_MIN : 0;
}

/* Run one block: elements of the iteration space inside [lo, hi), in key order,
 * [first, first + count) of them. */
static inline void oracle_block(Oracle *o, orn_rt_body_fn body, void *env, const int64_t *lo,
                                const int64_t *hi, int64_t first, int64_t count, OrnRtScalar *acc,
                                uint64_t seed, uint64_t stream, int64_t block)
{
    OArr *it = o->arr[0];
    int nd = it->ndim;
    int64_t *idx = malloc((size_t)(it->n ? it->n : 1) * sizeof *idx), m = 0;
    int64_t key[ORN_RT_MAXDIM];
    for (int64_t i = 0; i < it->n; i++) {
        if (it->sparse)
            memcpy(key, it->keys + i * nd, (size_t)nd * 8);
        else {
            int64_t l = i;
            for (int d = nd - 1; d >= 0; d--) {
                key[d] = l % it->dims[d];
                l /= it->dims[d];
            }
        }
        int in = 1;
        for (int d = 0; d < nd; d++) in &= key[d] >= lo[d] && key[d] < hi[d];
        if (in) idx[m++] = i;
    }
    int64_t *keys = malloc((size_t)(m ? m : 1) * (size_t)nd * 8);
    char *vals = malloc((size_t)(m ? m : 1) * it->esize);
    for (int64_t j = 0; j < m; j++) {
        int64_t i = idx[j];
        if (it->sparse)
            memcpy(keys + j * nd, it->keys + i * nd, (size_t)nd * 8);
        else {
            int64_t l = i;
            for (int d = nd - 1; d >= 0; d--) {
                keys[j * nd + d] = l % it->dims[d];
                l /= it->dims[d];
            }
        }
        memcpy(vals + (size_t)j * it->esize, it->vals + (size_t)i * it->esize, it->esize);
    }
    OrnRtBlock b;
    memset(&b, 0, sizeof b);
    b.ndim = nd;
    b.sparse = 1; /* the oracle always lists keys: bodies must use orn_rt_block_key or keys */
    for (int d = 0; d < ORN_RT_MAXDIM; d++) {
        b.lo[d] = d < nd ? lo[d] : 0;
        b.hi[d] = d < nd ? hi[d] : 0;
    }
    b.first = first;
    b.count = count;
    b.keys = keys;
    b.vals = vals;
    b.views = o->views;
    b.acc = acc;
    b.seed = seed;
    b.stream = stream;
    b.block = block;
    o->cur_n = m;
    o->cur_keys = keys;
    o->cur_vals = vals;
    if (body(o->t->rt, &b, env) != 0) {
        fprintf(stderr, "oracle: body failed\n");
        abort();
    }
    for (int64_t j = 0; j < m; j++)
        memcpy(it->vals + (size_t)idx[j] * it->esize, vals + (size_t)j * it->esize, it->esize);
    o->cur_n = 0;
    free(idx);
    free(keys);
    free(vals);
}

/* Replay a trace (sorted by step, round, rank, sequence). acc: values before the loop in,
 * reduced values out. */
static inline void oracle_replay(Oracle *o, orn_rt_body_fn body, void *env,
                                 const OrnRtTraceEntry *tr, int64_t n, OrnRtScalar *acc,
                                 uint64_t seed, uint64_t stream)
{
    const OrnRtPlan *p = o->plan;
    int64_t nblocks = 0;
    for (int64_t i = 0; i < n; i++)
        if (tr[i].block + 1 > nblocks) nblocks = tr[i].block + 1;
    OrnRtScalar *part =
        calloc((size_t)(nblocks ? nblocks : 1) * (size_t)(p->naccs ? p->naccs : 1), sizeof *part);
    unsigned char *used = calloc((size_t)(nblocks ? nblocks : 1), 1);
    int64_t *ran = calloc((size_t)o->t->size, sizeof *ran); /* per rank in the round */
    for (int64_t i = 0; i < n; i++) {
        const OrnRtTraceEntry *e = &tr[i];
        ran[e->rank] += e->count;
        if (!used[e->block])
            for (int a = 0; a < p->naccs; a++)
                acc_ident(&p->accs[a], &part[e->block * p->naccs + a]);
        used[e->block] = 1;
        o->cur_rank = e->rank;
        oracle_bind_copies(o);
        oracle_block(o, body, env, e->lo, e->hi, e->first, e->count,
                     p->naccs ? &part[e->block * p->naccs] : NULL, seed, stream, e->block);
        if (i + 1 == n || tr[i + 1].step != e->step || tr[i + 1].round != e->round) {
            oracle_flush(o);
            oracle_adapt(o, ran);
            memset(ran, 0, (size_t)o->t->size * sizeof *ran);
        }
    }
    free(ran);
    for (int a = 0; a < p->naccs; a++) {
        OrnRtScalar r = acc[a];
        for (int64_t b = 0; b < nblocks; b++) {
            if (!used[b]) continue;
            const OrnRtScalar *q = &part[b * p->naccs + a];
            const OrnRtPlanAcc *c = &p->accs[a];
#define COMB(f)                                                                                    \
    r.f = c->kind == ORN_RT_ACC_SUM    ? r.f + q->f                                                \
          : c->kind == ORN_RT_ACC_PROD ? r.f * q->f                                                \
          : c->kind == ORN_RT_ACC_MIN  ? (q->f < r.f ? q->f : r.f)                                 \
                                       : (q->f > r.f ? q->f : r.f)
            if (c->type == ORN_RT_F64)
                COMB(f64);
            else if (c->type == ORN_RT_F32)
                COMB(f32);
            else if (c->type == ORN_RT_I64)
                COMB(i64);
            else
                COMB(i32);
#undef COMB
        }
        acc[a] = r;
    }
    free(part);
    free(used);
}

/* An ordered loop: one block, everything, key order. */
static inline void oracle_serial(Oracle *o, orn_rt_body_fn body, void *env, OrnRtScalar *acc,
                                 uint64_t seed, uint64_t stream)
{
    OArr *it = o->arr[0];
    int64_t lo[ORN_RT_MAXDIM] = {0, 0, 0, 0}, hi[ORN_RT_MAXDIM];
    for (int d = 0; d < ORN_RT_MAXDIM; d++) hi[d] = it->dims[d];
    OrnRtTraceEntry e;
    memset(&e, 0, sizeof e);
    memcpy(e.lo, lo, sizeof lo);
    memcpy(e.hi, hi, sizeof hi);
    e.count = it->n;
    oracle_replay(o, body, env, &e, 1, acc, seed, stream);
}

#endif
