/* view_slow.c: the slow paths of a loop body's views (rt.h, OrnRtViewOps; bound by exec.c):
 * an access the generated code could not address in the block's box -- a key outside it, a
 * prefetched or remote element, a buffer's delta -- reads the rank's caches or fetches the
 * element, writes through to its owner's copy or the buffer, and reports a key outside the
 * array with the loop's line (contained by contain.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

/* First error inside a body's slow path wins; the body carries on with zeros (contained,
 * contain.c: to the end of its slice, its last). ext: text after `why` ("": none). */
static void body_err_ext(Exec *x, OrnRtView *v, const char *what, const int64_t *key,
                         const char *why, const char *ext)
{
    if (x->status || x->body_code) return;
    char ks[160];
    const ViewImpl *vi = v->impl;
    orn_dsm_key_text(vi->store, key, ks, sizeof ks); /* as the program writes it */
    char at[300] = "", src[400] = "";
    const char *name = x->plan->arrays[vi->k].name;
    if (v->line > 0) {
        int col = orn_rt_src_excerpt(x->rt->src, v->line, name, src, sizeof src);
        snprintf(at, sizeof at, col > 0 ? " at %s:%d:%d" : " at %s:%d",
                 x->plan->file ? x->plan->file : "?", ORN_RT_SITE_LINE(v->line), col);
    }
    int code = rt_fail_lines(x, ORN_E_RANGE, src, "%s %s[%s]%s (%s): %s%s", what, name ? name : "?",
                             ks, at, rt_role_name(v->role), why, ext);
    if (!rt_body_contain(x, code)) x->status = code;
}

static void body_err(Exec *x, OrnRtView *v, const char *what, const int64_t *key, const char *why)
{
    body_err_ext(x, v, what, key, why, "");
}

/* A key outside the array: the message names its extents as declared ("(its extents:
 * 3000 x 20)"). */
static void body_outside(Exec *x, OrnRtView *v, const char *what, const int64_t *key)
{
    if (x->status || x->body_code) return;
    const ViewImpl *vi = v->impl;
    const OrnDsmArray *a = vi->buf     ? vi->buf->target
                           : vi->xform ? x->loop->args[vi->k].array
                                       : vi->store;
    int64_t decl[ORN_DSM_MAXDIM] = {0, 0, 0, 0};
    for (int s = 0; s < a->ndim; s++) decl[orn_dsm_decl_dim(a, s)] = a->dims[s];
    char ext[160];
    size_t len = (size_t)snprintf(ext, sizeof ext, " (its extents: ");
    for (int d = 0; d < a->ndim && len < sizeof ext; d++)
        len += (size_t)snprintf(ext + len, sizeof ext - len, "%s%lld", d ? " x " : "",
                                (long long)decl[d]);
    if (len < sizeof ext) snprintf(ext + len, sizeof ext - len, ")");
    body_err_ext(x, v, what, key, "outside the array", ext);
}

/* The key in the store's coordinates and its linear index: -1 outside the array, -2 inside
 * it but outside the store (unimodular: the transformed copy spans only the box of the
 * stored elements' images, so such a key names no stored element). */
static int64_t store_key(const ViewImpl *vi, const int64_t *key, int nd, int64_t *skey)
{
    const OrnDsmArray *s = vi->store;
    if (vi->xform) {
        const OrnDsmArray *a = vi->x->loop->args[vi->k].array;
        for (int d = 0; d < nd; d++)
            if (key[d] < 0 || key[d] >= a->dims[d]) return -1;
        for (int i = 0; i < s->ndim; i++) {
            int64_t y = -vi->off[i];
            for (int j = 0; j < nd; j++) y += (int64_t)vi->T[i][j] * key[j];
            skey[i] = y;
        }
        for (int d = 0; d < s->ndim; d++)
            if (skey[d] < 0 || skey[d] >= s->dims[d]) return -2;
        return orn_dsm_ravel(s, skey);
    }
    for (int d = 0; d < nd; d++) skey[d] = key[d];
    for (int d = 0; d < s->ndim; d++)
        if (skey[d] < 0 || skey[d] >= s->dims[d]) return -1;
    return orn_dsm_ravel(s, skey);
}

static int in_tile(const OrnDsmTile *t, const int64_t *k, int nd)
{
    for (int d = 0; d < nd; d++)
        if (k[d] < t->lo[d] || k[d] >= t->hi[d]) return 0;
    return 1;
}

/* Reads may go anywhere (through the cache) for prefetched and replicated arrays, in
 * ordered schedules, whose steps separate writers from readers, and for partitioned arrays
 * that nobody writes during the loop (beyond the ghost cells of halo.c). Rotated blocks
 * travel, so a rotated array is read only within its block and halo. */
static int reads_anywhere(const Exec *x, const OrnRtView *v)
{
    const ViewImpl *vi = v->impl;
    return v->role == ORN_RT_PREFETCHED || v->role == ORN_RT_REPLICATED ||
           v->role == ORN_RT_REMOTE || x->halo || (vi->read_only && v->role == ORN_RT_PARTITIONED);
}

static void op_read(OrnRtView *v, const int64_t *key, void *out)
{
    ViewImpl *vi = v->impl;
    Exec *x = vi->x;
    OrnDsmArray *s = vi->store;
    int64_t skey[ORN_DSM_MAXDIM];
    memset(out, 0, v->esize);
    if (v->role == ORN_RT_BUFFERED) {
        body_err(x, v, "read of", key, "a buffer can only be updated with += and -=");
        return;
    }
    int64_t lin = store_key(vi, key, v->ndim, skey);
    if (lin == -2) return; /* no stored element: zero */
    if (lin < 0) {
        body_outside(x, v, "read of", key);
        return;
    }
    /* The block's own (sparse) tile. */
    if (vi->tile >= 0 && s->sparse && in_tile(&s->tiles[vi->tile], skey, s->ndim)) {
        const OrnDsmTile *t = &s->tiles[vi->tile];
        int64_t i = orn_dsm_tile_find(s, t, skey);
        if (i >= 0) memcpy(out, (const char *)t->vals + (size_t)i * s->esize, s->esize);
        return;
    }
    if (vi->ghost) { /* its block's band and travelling rows (ghost.c), nothing else */
        if (!rt_ghost_read(vi, skey, out))
            body_err(x, v, "read of", key, "beyond the rows its block reads (plan violation)");
        return;
    }
    if (!reads_anywhere(x, v)) {
        body_err(x, v, "read of", key, "outside the block this rank runs (plan violation)");
        return;
    }
    /* Held here: read directly (nobody writes it concurrently). */
    int64_t t = orn_dsm_part_tile_of(&s->part, skey);
    if (s->tiles[t].held) {
        const void *p = orn_dsm_local_ptr(s, skey);
        if (p) memcpy(out, p, s->esize);
        return;
    }
    CacheEnt *c = rt_map_find(&vi->cache, lin);
    if (c && c->state == 2) {
        memcpy(out, c->val, s->esize);
        return;
    }
    /* Miss: fetch on demand from the owner, never a silent zero. */
    unsigned char val[8] = {0};
    int found = 0, created;
    int status = orn_dsm_fetch_one(s, lin, val, &found);
    if (status) {
        if (!x->status) x->status = status;
        return;
    }
    x->rt->stats.misses++;
    c = rt_map_insert(&vi->cache, lin, &created);
    memcpy(c->val, val, 8);
    c->state = 2;
    c->found = (unsigned char)found;
    memcpy(out, val, s->esize);
}

static void *op_write(OrnRtView *v, const int64_t *key)
{
    ViewImpl *vi = v->impl;
    Exec *x = vi->x;
    OrnDsmArray *s = vi->store;
    int64_t skey[ORN_DSM_MAXDIM];
    memset(vi->scratch, 0, sizeof vi->scratch);
    if (x->in_prefetch) return vi->scratch;
    if (v->role == ORN_RT_BUFFERED || v->role == ORN_RT_PREFETCHED ||
        v->role == ORN_RT_REPLICATED || vi->read_only) {
        body_err(x, v, "write of", key, "this array is read-only in the loop");
        return vi->scratch;
    }
    int64_t lin = store_key(vi, key, v->ndim, skey);
    if (lin < 0) {
        if (lin == -2)
            body_err(x, v, "write of", key,
                     "no such stored element (sparse arrays keep their structure)");
        else
            body_outside(x, v, "write of", key);
        return vi->scratch;
    }
    if (v->role == ORN_RT_REMOTE) {
        /* Held here: write in place. Elsewhere: write into the cache (fetching the current
         * value first, for read-modify-write) and send it to the owner at the round's end. */
        if (s->tiles[orn_dsm_part_tile_of(&s->part, skey)].held) {
            void *p = orn_dsm_local_ptr(s, skey);
            if (p) return p;
            body_err(x, v, "write of", key,
                     "no such stored element (sparse arrays keep their "
                     "structure)");
            return vi->scratch;
        }
        CacheEnt *c = rt_map_find(&vi->cache, lin);
        if (!c || c->state != 2) {
            unsigned char val[8] = {0};
            int found = 0, created;
            int status = orn_dsm_fetch_one(s, lin, val, &found);
            if (status) {
                if (!x->status) x->status = status;
                return vi->scratch;
            }
            if (!found && s->sparse) {
                body_err(x, v, "write of", key,
                         "no such stored element (sparse arrays keep "
                         "their structure)");
                return vi->scratch;
            }
            x->rt->stats.misses++;
            c = rt_map_insert(&vi->cache, lin, &created);
            memcpy(c->val, val, 8);
            c->state = 2;
            c->found = (unsigned char)found;
        }
        if (!c->dirty) {
            c->dirty = 1;
            if (vi->ndirty == vi->capdirty) {
                vi->capdirty = vi->capdirty ? 2 * vi->capdirty : 64;
                vi->dirty = orn_xrealloc(vi->dirty, (size_t)vi->capdirty * sizeof *vi->dirty);
            }
            vi->dirty[vi->ndirty++] = lin;
        }
        return c->val;
    }
    if (vi->tile >= 0 && s->sparse && in_tile(&s->tiles[vi->tile], skey, s->ndim)) {
        const OrnDsmTile *t = &s->tiles[vi->tile];
        int64_t i = orn_dsm_tile_find(s, t, skey);
        if (i >= 0) return (char *)t->vals + (size_t)i * s->esize;
        body_err(x, v, "write of", key,
                 "no such stored element (sparse arrays keep their "
                 "structure)");
        return vi->scratch;
    }
    body_err(x, v, "write of", key, "outside the block this rank runs (plan violation)");
    return vi->scratch;
}

static void op_add(OrnRtView *v, const int64_t *key, const void *delta)
{
    ViewImpl *vi = v->impl;
    Exec *x = vi->x;
    if (x->in_prefetch) return;
    if (!vi->buf) {
        body_err(x, v, "update of", key, "only buffers take deltas");
        return;
    }
    OrnDsmArray *a = vi->buf->target;
    for (int d = 0; d < a->ndim; d++) {
        if (key[d] < 0 || key[d] >= a->dims[d]) {
            body_outside(x, v, "update of", key);
            return;
        }
    }
    /* the block the current block holds takes it at once (bind) */
    int64_t o = orn_rt_held_off(&vi->buf->dd, a->ndim, key);
    if (o >= 0) {
        rt_buffer_add_at(vi->buf, vi->buf->dd.held + (size_t)o * a->esize, delta);
        return;
    }
    rt_buffer_add_lin(vi->buf, orn_dsm_ravel(a, key), delta);
}

static void op_prefetch(OrnRtView *v, const int64_t *key)
{
    ViewImpl *vi = v->impl;
    Exec *x = vi->x;
    if (!x->in_prefetch || !vi->store || v->role == ORN_RT_BUFFERED) return;
    if (orn_rt_local(v, key)) return;
    if (vi->win && rt_window_announce(vi, key)) return;
    OrnDsmArray *s = vi->store;
    int64_t skey[ORN_DSM_MAXDIM];
    int64_t lin = store_key(vi, key, v->ndim, skey);
    if (lin < 0 || !reads_anywhere(x, v)) return;
    if (s->tiles[orn_dsm_part_tile_of(&s->part, skey)].held) return;
    int created;
    CacheEnt *c = rt_map_insert(&vi->cache, lin, &created);
    if (!created) return;
    c->state = 1;
    if (vi->nreq == vi->capreq) {
        vi->capreq = vi->capreq ? 2 * vi->capreq : 256;
        vi->req = orn_xrealloc(vi->req, (size_t)vi->capreq * sizeof *vi->req);
    }
    vi->req[vi->nreq++] = lin;
}

static void op_row(OrnRtView *v, int64_t i, const int64_t **keys, const void **vals, int64_t *n)
{
    ViewImpl *vi = v->impl;
    Exec *x = vi->x;
    OrnDsmArray *s = vi->store;
    *keys = NULL;
    *vals = NULL;
    *n = 0;
    int64_t key[ORN_DSM_MAXDIM] = {i, 0, 0, 0};
    if (!s || !s->sparse || vi->xform) {
        body_err(x, v, "row view of", key, "row views need a sparse array");
        return;
    }
    if (i < 0 || i >= s->dims[0]) {
        body_outside(x, v, "row view of", key);
        return;
    }
    int64_t t = vi->tile;
    if (t < 0 || i < s->tiles[t].lo[0] || i >= s->tiles[t].hi[0]) {
        if (v->role != ORN_RT_REPLICATED) {
            body_err(x, v, "row view of", key,
                     "outside the block this rank runs (row views of "
                     "sparse arrays need the array partitioned with the loop or replicated)");
            return;
        }
        t = orn_dsm_part_tile_of(&s->part, key);
    }
    OrnDsmTile *tl = &s->tiles[t];
    orn_dsm_tile_rows(s, t);
    int64_t r = i - tl->lo[0];
    *vals = (const char *)tl->vals + (size_t)tl->rowptr[r] * s->esize;
    *n = tl->rowptr[r + 1] - tl->rowptr[r];
    if (tl->cols) {
        /* CSR: the row's keys decoded into one of two buffers (two rows may be in use). */
        int f = vi->rowflip ^= 1;
        if (vi->caprow[f] < *n * 2) {
            vi->caprow[f] = *n * 2;
            vi->rowkeys[f] = orn_xrealloc(vi->rowkeys[f], (size_t)vi->caprow[f] * 8);
        }
        orn_dsm_tile_keys(s, tl, tl->rowptr[r], *n, vi->rowkeys[f]);
        *keys = vi->rowkeys[f];
    } else {
        *keys = tl->keys + tl->rowptr[r] * s->ndim;
    }
}

void orn_rt_slow_read(OrnRtView *v, int nd, int64_t k0, int64_t k1, int64_t k2, int64_t k3,
                      void *out)
{
    const int64_t key[ORN_RT_MAXDIM] = {k0, k1, k2, k3};
    v->line = ORN_RT_LINE(nd);
    v->ops->read(v, key, out);
    v->line = 0;
}

void *orn_rt_slow_write(OrnRtView *v, int nd, int64_t k0, int64_t k1, int64_t k2, int64_t k3,
                        int keep)
{
    const int64_t key[ORN_RT_MAXDIM] = {k0, k1, k2, k3};
    v->line = ORN_RT_LINE(nd);
    void *q;
    if (keep) {
        char cur[16]; /* read-modify-write: the current value into the write slot */
        v->ops->read(v, key, cur);
        q = v->ops->write(v, key);
        memcpy(q, cur, v->esize);
    } else {
        q = v->ops->write(v, key);
    }
    v->line = 0;
    return q;
}

void orn_rt_slow_add(OrnRtView *v, int nd, int64_t k0, int64_t k1, int64_t k2, int64_t k3,
                     const void *delta)
{
    const int64_t key[ORN_RT_MAXDIM] = {k0, k1, k2, k3};
    v->line = ORN_RT_LINE(nd);
    v->ops->add(v, key, delta);
    v->line = 0;
}

const OrnRtViewOps rt_view_ops = {
    .read = op_read,
    .write = op_write,
    .add = op_add,
    .prefetch = op_prefetch,
    .row = op_row,
};
