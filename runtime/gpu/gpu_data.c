/* gpu_data.c: a block's data on the device and back (gpu_int.h).
 *
 * In: each plan array's local box -- its contiguous span at its strides -- except buffers;
 * where the plan promises reads within a halo of the block (halo_lo/halo_hi along
 * dimensions tied to keys) that the view's box does not cover (an ordered loop reads its
 * neighbours through the cache: 2d_ordered, the stencil), a private copy of box + halo is
 * assembled on the host first: the view's box copied, the rest read through the view's slow
 * path (cache, tile held here, or on demand), as the CPU body would read it. The elements
 * outside the block cannot change while it runs (a 1d or 2d plan has no dependence there;
 * an ordered plan ran their blocks in earlier steps), so the copy is exact. 2-D sparse
 * arrays bound as CSR tiles send the rows the block reads (those of its range along the
 * key that indexes their rows).
 *
 * Out: arrays the loop writes come back (the view's box; the halo is never written: 1d and
 * 2d plans write only inside the block). Buffer updates come back as records and are applied
 * in element order through the buffer calls of the CPU body (orn_gpu_log_apply). */
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "orn_std_scalar.h"

OrnDsmArray *orn_gpu_view_store(const OrnRtView *v, const void *host, size_t bytes, int *own)
{
    const ViewImpl *vi = v->impl;
    *own = 0;
    if (!vi || !vi->store) return NULL;
    OrnDsmArray *s = vi->store;
    if (!host) return s;
    /* the tile bound first; a copy of the whole array may be a tile held here too */
    for (int64_t i = -1; i < s->part.ntiles && !*own; i++) {
        int64_t t = i < 0 ? vi->tile : i;
        if (t < 0 || t >= s->part.ntiles || !s->tiles[t].held || !s->tiles[t].vals) continue;
        const char *lo = s->tiles[t].vals, *p = host;
        *own = p >= lo && p + bytes <= lo + (size_t)s->tiles[t].n * s->esize;
    }
    return s;
}

/* Device memory with host[0, bytes) of view v: the array's resident copy where the bytes are
 * its own storage, else scratch slot `slot` filled now. */
static void *put_view(GpuState *g, const OrnRtView *v, const void *host, size_t bytes, int slot,
                      GpuData *gd)
{
    int own = 0, stale = 0;
    OrnDsmArray *s = orn_gpu_view_store(v, host, bytes, &own);
    if (own) {
        void *d = gpu_res_copy(g, s, host, bytes, NULL, &stale);
        if (stale) gd->stale = 1;
        return d;
    }
    const ViewImpl *vi = v->impl;
    const char *rep = vi && vi->x && vi->x->replica ? vi->x->replica[vi->k] : NULL;
    if (s && rep && vi->x->P == 1 && (const char *)host >= rep &&
        (const char *)host + bytes <= rep + (size_t)s->nnz * s->esize) {
        /* a whole copy of the array made for this loop at one rank: what it holds is the
         * array's storage at its generation (at several ranks other ranks' parts change
         * without a generation here: copied every time) */
        int64_t tag[GPU_RES_TAG] = {3, (const char *)host - rep};
        void *d = gpu_res_copy(g, s, host, bytes, tag, &stale);
        if (stale) gd->stale = 1;
        return d;
    }
    void *d = gpu_res_scratch(g, slot, bytes);
    if (!d || (bytes && g->ops->put(d, host, bytes) != 0)) return NULL;
    g->st_in += (int64_t)bytes;
    return d;
}

void orn_gpu_data_free(GpuData *gd)
{
    for (int j = 0; j < ORN_GPU_MAXARR; j++) {
        free(gd->ext[j]);
        gd->ext[j] = NULL;
    }
}

/* Elements of a box's contiguous span (0 without a dense box). */
static int64_t box_span(const OrnRtBox *x, int nd)
{
    int64_t span = 1;
    for (int d = 0; d < nd; d++) {
        if (x->n[d] == 0) return 0;
        span += (int64_t)(x->n[d] - 1) * (d == nd - 1 ? 1 : x->s[d]);
    }
    return x->base ? span : 0;
}

/* The region [lo, lo + n) that block b reads of plan array j (view v): the view's box,
 * widened by the plan's finite halos along dimensions tied to keys, within the array.
 * Returns whether it reaches beyond the view's box. */
static int want_region(const OrnRtBlock *b, const OrnRtPlanArray *pa, const OrnRtView *v,
                       const int64_t *dims, int64_t *lo, int64_t *n)
{
    int wider = 0;
    for (int d = 0; d < v->ndim; d++) {
        int64_t l = v->lo[d], h = v->hi[d];
        int kd = pa->key_dim[d];
        int hl = pa->halo_lo[d], hh = pa->halo_hi[d];
        if (kd >= 0 && kd < b->ndim && hl >= 0 && hh >= 0 && (hl || hh)) {
            int64_t a = b->lo[kd] - hl, z = b->hi[kd] + hh;
            a = a < 0 ? 0 : a;
            z = z > dims[d] ? dims[d] : z;
            if (a < l) l = a, wider = 1;
            if (z > h) h = z, wider = 1;
        }
        lo[d] = l;
        n[d] = h > l ? h - l : 0;
    }
    return wider;
}

/* A private row-major copy of region [lo, lo + n) of view v: rows (the last dimension) in
 * the view's box are copied, every other element read through the view. */
static char *assemble(OrnRtView *v, const int64_t *lo, const int64_t *n)
{
    int nd = v->ndim;
    int64_t total = 1;
    for (int d = 0; d < nd; d++) total *= n[d];
    char *out = malloc((size_t)(total ? total : 1) * v->esize);
    if (!out || total == 0) return out;
    int64_t key[ORN_RT_MAXDIM] = {0}, last = n[nd - 1];
    for (int d = 0; d < nd; d++) key[d] = lo[d];
    char *dst = out;
    for (;;) {
        /* one row: key[0 .. nd - 2] fixed, the last dimension over [lo, lo + last) */
        int in = v->base != NULL;
        for (int d = 0; d < nd - 1; d++) in &= key[d] >= v->lo[d] && key[d] < v->hi[d];
        int64_t a = lo[nd - 1], z = lo[nd - 1] + last;
        int64_t ia = in ? (v->lo[nd - 1] > a ? v->lo[nd - 1] : a) : z;
        int64_t iz = in ? (v->hi[nd - 1] < z ? v->hi[nd - 1] : z) : z;
        if (iz < ia) ia = iz = z;
        for (int64_t c = a; c < z; c++) {
            if (c == ia && ia < iz) {
                key[nd - 1] = ia;
                memcpy(dst + (c - a) * (int64_t)v->esize, orn_rt_local(v, key),
                       (size_t)(iz - ia) * v->esize);
                c = iz - 1;
                continue;
            }
            key[nd - 1] = c;
            orn_rt_read(v, key, dst + (c - a) * (int64_t)v->esize);
        }
        dst += last * (int64_t)v->esize;
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++key[d] < lo[d] + n[d]) break;
            key[d] = lo[d];
        }
        if (d < 0) break;
    }
    return out;
}

/* The CSR rows of 2-D sparse view v that block b reads (those of its range along the key
 * that indexes the rows, else all the view holds) into device view gv. */
static int rows_in(GpuState *g, const OrnRtBlock *b, const OrnRtPlanArray *pa, const OrnRtView *v,
                   OrnGpuView *gv, GpuData *gd)
{
    int64_t r0 = v->rlo, r1 = v->rlo + v->rn;
    int kd = pa->key_dim[0];
    if (kd >= 0 && kd < b->ndim) {
        r0 = b->lo[kd] > r0 ? b->lo[kd] : r0;
        r1 = b->hi[kd] < r1 ? b->hi[kd] : r1;
    }
    if (r1 < r0) r1 = r0;
    int64_t nr = r1 - r0, e0 = v->rowptr[r0 - v->rlo], ne = v->rowptr[r1 - v->rlo] - e0;
    int own = 0, valid = 0, stale = 0;
    OrnDsmArray *s =
        orn_gpu_view_store(v, v->rvals + e0 * (int64_t)v->esize, v->esize * (size_t)ne, &own);
    if (!s) return -1;
    /* the row offsets from r0, derived from the array's rows (a resident copy) */
    int64_t tag[GPU_RES_TAG] = {1, (int64_t)(intptr_t)v->rowptr, r0, r1};
    int64_t *drp = gpu_res_derived(g, s, tag, sizeof *drp * (size_t)(nr + 1), NULL, &valid);
    if (!drp) return -1;
    if (!valid) {
        int64_t *rp = malloc(sizeof *rp * (size_t)(nr + 1));
        if (!rp) return -1;
        for (int64_t r = 0; r <= nr; r++) rp[r] = v->rowptr[r0 - v->rlo + r] - e0;
        int rc = g->ops->put(drp, rp, sizeof *rp * (size_t)(nr + 1));
        free(rp);
        if (rc != 0) return -1;
        g->st_in += (int64_t)(sizeof *rp * (size_t)(nr + 1));
        gpu_res_filled(g, drp, s);
    }
    gv->rowptr = drp;
    if (ne == 0 || !own) {
        /* no elements (e0 may be the end of cols): an allocation nothing reads */
        if (ne) return -1; /* rows bound outside the array's storage: not on the GPU path */
        gv->cols = gpu_res_scratch(g, GPU_SLOT_EMPTY, 16);
        gv->rvals = (const char *)gv->cols;
    } else {
        gv->cols = gpu_res_copy(g, s, v->cols + e0, sizeof *v->cols * (size_t)ne, NULL, &stale);
        gv->rvals = gpu_res_copy(g, s, v->rvals + e0 * (int64_t)v->esize, v->esize * (size_t)ne,
                                 NULL, &stale);
        if (stale) gd->stale = 1;
    }
    if (!gv->cols || !gv->rvals) return -1;
    gv->rlo = r0;
    gv->rn = nr;
    gv->clo = v->clo;
    return 0;
}

int orn_gpu_data_in(GpuState *g, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuDims *dims,
                    uint32_t rows, OrnGpuArgs *a, GpuData *gd)
{
    for (int j = 0; j < plan->narrays; j++) {
        OrnRtView *v = &b->views[j];
        const OrnRtPlanArray *pa = &plan->arrays[j];
        OrnGpuBox *gb = &a->box[j];
        OrnGpuView *gv = &a->view[j];
        int nd = v->ndim > 0 ? v->ndim : 1;
        a->dims[j] = dims[j];
        gb->esize = gv->esize = v->esize;
        gb->err = gv->err = a->err;
        for (int q = 0; q < ORN_GPU_MAXKEY && q < ORN_RT_MAXDIM; q++) {
            gv->lo[q] = v->lo[q];
            gv->hi[q] = v->hi[q];
        }
        int own = 0;
        gd->store[j] = orn_gpu_view_store(v, NULL, 0, &own);
        if (pa->role == ORN_RT_BUFFERED) continue;
        if (j < 32 && (rows >> j & 1u) && v->cols && v->ndim == 2 &&
            rows_in(g, b, pa, v, gv, gd) != 0)
            return -1;
        OrnRtBox x = orn_rt_box(v);
        gd->span[j] = box_span(&x, nd);
        if (!gd->span[j]) continue;
        int64_t lo[ORN_RT_MAXDIM], n[ORN_RT_MAXDIM];
        if (want_region(b, pa, v, dims[j].dims, lo, n)) {
            gd->ext[j] = assemble(v, lo, n);
            if (!gd->ext[j]) return -1;
            int64_t s = 1;
            gd->span[j] = 1;
            for (int d = nd - 1; d >= 0; d--) {
                gd->elo[j][d] = gb->lo[d] = lo[d];
                gd->en[j][d] = n[d];
                gb->n[d] = (uint64_t)n[d];
                gb->s[d] = s;
                s *= n[d];
            }
            gd->span[j] = s;
            size_t bytes = v->esize * (size_t)(s ? s : 1);
            gb->base = gpu_res_scratch(g, GPU_SLOT_EXT + j, bytes);
            if (!gb->base || g->ops->put(gb->base, gd->ext[j], bytes) != 0) return -1;
            g->st_in += (int64_t)bytes;
        } else {
            for (int q = 0; q < ORN_GPU_MAXKEY; q++) {
                gb->lo[q] = x.lo[q];
                gb->n[q] = x.n[q];
                gb->s[q] = x.s[q];
            }
            gb->base = put_view(g, v, x.base, v->esize * (size_t)gd->span[j], GPU_SLOT_BOX + j, gd);
        }
        if (!gb->base || gd->stale) return -1;
    }
    return 0;
}

int orn_gpu_vals_in_box(const OrnRtBlock *b, const GpuData *gd)
{
    OrnRtView *v = &b->views[0];
    if (b->sparse || !b->vals || !gd->span[0] || !v->base) return 0;
    OrnRtBox x = orn_rt_box(v);
    const char *p = (const char *)b->vals + b->first * (int64_t)v->esize;
    const char *end = (const char *)b->vals + (b->first + b->count) * (int64_t)v->esize;
    return p >= v->base && end <= v->base + box_span(&x, v->ndim) * (int64_t)v->esize;
}

/* Whether the loop writes plan array j's box (what comes back). */
static int written(const OrnRtPlanArray *pa)
{
    return !pa->read_only && pa->role != ORN_RT_REPLICATED && pa->role != ORN_RT_PREFETCHED &&
           pa->role != ORN_RT_BUFFERED;
}

void orn_gpu_data_forget(GpuState *g, const OrnRtPlan *plan, const OrnGpuArgs *a)
{
    for (int j = 0; j < plan->narrays; j++)
        if (written(&plan->arrays[j]) && a->box[j].base) gpu_res_forget(g, a->box[j].base);
}

int orn_gpu_data_out(GpuState *g, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuArgs *a,
                     const GpuData *gd)
{
    for (int j = 0; j < plan->narrays; j++) {
        const OrnRtPlanArray *pa = &plan->arrays[j];
        OrnRtView *v = &b->views[j];
        if (!gd->span[j] || !written(pa)) continue;
        size_t bytes = v->esize * (size_t)gd->span[j];
        if (!gd->ext[j]) {
            if (gpu_get(g, v->base, a->box[j].base, bytes) != 0) return -1;
            g->st_out += (int64_t)bytes;
            if (gd->store[j]) gpu_res_wrote(g, gd->store[j], v->base, bytes, a->box[j].base);
            continue;
        }
        /* the view's box out of the extended copy, row by row */
        char *ext = gd->ext[j];
        if (gpu_get(g, ext, a->box[j].base, bytes) != 0) return -1;
        g->st_out += (int64_t)bytes;
        if (gd->store[j]) {
            OrnRtBox x = orn_rt_box(v);
            gpu_res_wrote(g, gd->store[j], v->base, v->esize * (size_t)box_span(&x, v->ndim), NULL);
        }
        int nd = v->ndim;
        int64_t key[ORN_RT_MAXDIM] = {0};
        for (int d = 0; d < nd; d++) {
            key[d] = v->lo[d];
            if (v->hi[d] <= v->lo[d]) goto next_array;
        }
        for (;;) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++) off = off * gd->en[j][d] + (key[d] - gd->elo[j][d]);
            memcpy(orn_rt_local(v, key), ext + off * (int64_t)v->esize,
                   (size_t)(v->hi[nd - 1] - v->lo[nd - 1]) * v->esize);
            int d = nd - 2;
            for (; d >= 0; d--) {
                if (++key[d] < v->hi[d]) break;
                key[d] = v->lo[d];
            }
            if (d < 0) break;
        }
    next_array:;
    }
    return 0;
}

/* One update, as the CPU body makes it (orn_rt_bbadd_T on the buffer's hoisted box). */
static void badd(const OrnRtBox *x, OrnRtView *v, int nd, const OrnGpuRec *r)
{
    int64_t key[ORN_RT_MAXDIM] = {0};
    for (int d = 0; d < nd && d < ORN_GPU_MAXKEY; d++) key[d] = r->key[d];
    switch (v->type) {
    case ORN_RT_I32: {
        int32_t d;
        memcpy(&d, r->d, sizeof d);
        orn_rt_bbadd_i32(x, v, nd, key, d);
        return;
    }
    case ORN_RT_I64: {
        int64_t d;
        memcpy(&d, r->d, sizeof d);
        orn_rt_bbadd_i64(x, v, nd, key, d);
        return;
    }
    case ORN_RT_F32: {
        float d;
        memcpy(&d, r->d, sizeof d);
        orn_rt_bbadd_f32(x, v, nd, key, d);
        return;
    }
    default: {
        double d;
        memcpy(&d, r->d, sizeof d);
        orn_rt_bbadd_f64(x, v, nd, key, d);
        return;
    }
    }
}

/* An accumulator update as the CPU body makes it: `acc = (T)(acc op v)` with v the operand
 * as the body converts it, widened exactly (double, int64_t), and acc widened exactly: the
 * operation in the wider type rounds once to T as the body's does (float + and * computed in
 * double and rounded to float are float's; integers wrap alike); min and max pick an operand
 * in the body's argument order (orn_std_scalar.h). */
static void acc_apply(OrnRtScalar *acc, const OrnRtPlanAcc *pa, const OrnGpuRec *r)
{
    int second = r->key[0] != 0;
    if (pa->type == ORN_RT_F32 || pa->type == ORN_RT_F64) {
        double v, x = pa->type == ORN_RT_F32 ? (double)acc->f32 : acc->f64;
        memcpy(&v, r->d, sizeof v);
        switch (pa->kind) {
        case ORN_RT_ACC_PROD:
            x = x * v;
            break;
        case ORN_RT_ACC_MIN:
            x = second ? orn_std_min_f64(v, x) : orn_std_min_f64(x, v);
            break;
        case ORN_RT_ACC_MAX:
            x = second ? orn_std_max_f64(v, x) : orn_std_max_f64(x, v);
            break;
        default:
            x = x + v;
        }
        if (pa->type == ORN_RT_F32)
            acc->f32 = (float)x;
        else
            acc->f64 = x;
        return;
    }
    int64_t v, x = pa->type == ORN_RT_I32 ? (int64_t)acc->i32 : acc->i64;
    memcpy(&v, r->d, sizeof v);
    switch (pa->kind) {
    case ORN_RT_ACC_PROD:
        x = (int64_t)((uint64_t)x * (uint64_t)v);
        break;
    case ORN_RT_ACC_MIN:
        x = second ? orn_std_min_i64(v, x) : orn_std_min_i64(x, v);
        break;
    case ORN_RT_ACC_MAX:
        x = second ? orn_std_max_i64(v, x) : orn_std_max_i64(x, v);
        break;
    default:
        x = (int64_t)((uint64_t)x + (uint64_t)v);
    }
    if (pa->type == ORN_RT_I32)
        acc->i32 = (int32_t)(uint32_t)(uint64_t)x;
    else
        acc->i64 = x;
}

/* One slot (OrnGpuArgs.acc1): operand v (8 bytes), flag f (1 + second, 0 none). */
static void slot_apply(OrnRtScalar *acc, const OrnRtPlanAcc *pa, const unsigned char *v,
                       unsigned char f)
{
    OrnGpuRec r;
    r.key[0] = f - 1;
    memcpy(r.d, v, sizeof r.d);
    acc_apply(acc, pa, &r);
}

/* Accumulator acc's slots (OrnGpuArgs.acc1: operands v, flags f) in element order, where the
 * block has no records: a float sum as a plain loop, the same operations as acc_apply's. */
static void acc_slots(OrnRtScalar *acc, const OrnRtPlanAcc *pa, const unsigned char *v,
                      const unsigned char *f, int64_t nelem)
{
    if (pa->kind == ORN_RT_ACC_SUM && (pa->type == ORN_RT_F64 || pa->type == ORN_RT_F32)) {
        int f32 = pa->type == ORN_RT_F32;
        double x = f32 ? (double)acc->f32 : acc->f64, d;
        for (int64_t e = 0; e < nelem; e++) {
            if (!f[e]) continue;
            memcpy(&d, v + e * 8, sizeof d);
            x = f32 ? (double)(float)(x + d) : x + d;
        }
        if (f32)
            acc->f32 = (float)x;
        else
            acc->f64 = x;
        return;
    }
    for (int64_t e = 0; e < nelem; e++)
        if (f[e]) slot_apply(acc, pa, v + e * 8, f[e]);
}

int orn_gpu_log_apply(const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuRec *rec, int64_t n,
                      int64_t nelem, const unsigned char *acc1, int nacc)
{
    if (n == 0 && !acc1) return 0;
    if (n == 0) { /* accumulators are independent of each other: one at a time */
        for (int i = 0; i < nacc; i++)
            acc_slots(&b->acc[i], &plan->accs[i], acc1 + (size_t)i * (size_t)nelem * 8,
                      acc1 + (size_t)nacc * (size_t)nelem * 8 + (size_t)i * (size_t)nelem, nelem);
        return 0;
    }
    /* counting sort: element e's records at start[e] + seq */
    int64_t *start = calloc((size_t)nelem + 1, sizeof *start);
    int64_t *order = malloc(sizeof *order * (size_t)n);
    int rc = -1;
    if (!start || !order) goto fn_exit;
    for (int64_t i = 0; i < n; i++) {
        int arr = rec[i].arr;
        if (rec[i].elem < 0 || rec[i].elem >= nelem ||
            (arr < 0 ? -1 - arr >= plan->naccs
                     : arr >= plan->narrays || plan->arrays[arr].role != ORN_RT_BUFFERED))
            goto fn_exit;
        start[rec[i].elem + 1]++;
    }
    for (int64_t e = 0; e < nelem; e++) start[e + 1] += start[e];
    for (int64_t i = 0; i < n; i++) order[i] = -1;
    for (int64_t i = 0; i < n; i++) {
        const OrnGpuRec *r = &rec[i];
        if (r->seq < 0 || r->seq >= start[r->elem + 1] - start[r->elem] ||
            order[start[r->elem] + r->seq] >= 0)
            goto fn_exit;
        order[start[r->elem] + r->seq] = i;
    }
    {
        OrnRtBox bx[ORN_GPU_MAXARR];
        for (int j = 0; j < plan->narrays; j++)
            if (plan->arrays[j].role == ORN_RT_BUFFERED) bx[j] = orn_rt_bbox(&b->views[j]);
        const unsigned char *flags = acc1 ? acc1 + (size_t)nacc * (size_t)nelem * 8 : NULL;
        for (int64_t e = 0; e < nelem; e++) {
            for (int i = 0; flags && i < nacc; i++) {
                unsigned char f = flags[(int64_t)i * nelem + e];
                if (f)
                    slot_apply(&b->acc[i], &plan->accs[i], acc1 + ((int64_t)i * nelem + e) * 8, f);
            }
            for (int64_t j = start[e]; j < start[e + 1]; j++) {
                const OrnGpuRec *r = &rec[order[j]];
                if (r->arr < 0)
                    acc_apply(&b->acc[-1 - r->arr], &plan->accs[-1 - r->arr], r);
                else
                    badd(&bx[r->arr], &b->views[r->arr], plan->arrays[r->arr].ndim, r);
            }
        }
    }
    rc = 0;
fn_exit:
    free(start);
    free(order);
    return rc;
}
