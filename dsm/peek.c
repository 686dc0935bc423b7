/* peek.c: chosen elements of an array read onto every rank (dsm.h), for `print` of a whole
 * array: the elements a summary shows, not the array.
 *
 * Dense: the keys are known to every rank, and so is each one's owner (the partition is
 * replicated), so each owner packs the values of its keys in their order and one exchange of
 * slices gives every rank all of them; no sizes are exchanged. Sparse: which elements are
 * stored where is known only to their holders, so each rank picks from the tiles it owns the
 * first and last `k` stored elements (in declared key order) and counts the rest; one
 * allgather of those candidates, sorted, gives the whole array's first and last `k`. */
#include "dsm_int.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

/* The rank that contributes tile t's elements: its owner; rank 0 for a replicated tile. */
static int source_of(const OrnDsmArray *a, int64_t t)
{
    int o = a->part.owner[t];
    return o == ORN_DSM_ALL ? 0 : o;
}

int orn_dsm_get_many(OrnDsmArray *a, int64_t n, const int64_t *keys, void *out)
{
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank, nd = a->ndim;
    size_t es = a->esize;
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < nd; d++)
            if (keys[i * nd + d] < 0 || keys[i * nd + d] >= a->dims[d])
                return orn_dsm_fail(ctx, ORN_E_RANGE, "read: key outside %s", a->name);
    int *src = orn_xmalloc((size_t)(n ? n : 1) * sizeof *src);
    size_t *off = orn_xcalloc((size_t)P + 1, sizeof *off);
    for (int64_t i = 0; i < n; i++) {
        src[i] = source_of(a, orn_dsm_part_tile_of(&a->part, keys + i * nd));
        off[src[i] + 1] += es;
    }
    for (int p = 0; p < P; p++) off[p + 1] += off[p];
    char *buf = orn_xcalloc(off[P] ? off[P] : 1, 1);
    size_t *at = orn_xmalloc(((size_t)P + 1) * sizeof *at);
    memcpy(at, off, ((size_t)P + 1) * sizeof *at);
    /* this rank's slice: the values of its keys in their order (absent sparse keys: 0) */
    for (int64_t i = 0; i < n; i++) {
        if (src[i] != me) continue;
        const void *v = orn_dsm_local_ptr(a, keys + i * nd);
        if (v) memcpy(buf + at[me], v, es);
        at[me] += es;
    }
    int status = P > 1 ? orn_dsm_gather_slices(ctx, buf, off, "print: reading elements") : ORN_OK;
    if (!status) {
        memcpy(at, off, ((size_t)P + 1) * sizeof *at);
        for (int64_t i = 0; i < n; i++) {
            memcpy((char *)out + (size_t)i * es, buf + at[src[i]], es);
            at[src[i]] += es;
        }
    }
    free(at);
    free(buf);
    free(off);
    free(src);
    return status;
}

/* ---------------------------------------------------------------- sparse: the ends */

/* One stored element: its declared key (unused dimensions 0) and its value. */
typedef struct Rec {
    int64_t key[ORN_DSM_MAXDIM];
    char val[8];
} Rec;

static int rec_cmp(const void *x, const void *y)
{
    const Rec *a = x, *b = y;
    for (int d = 0; d < ORN_DSM_MAXDIM; d++)
        if (a->key[d] != b->key[d]) return a->key[d] < b->key[d] ? -1 : 1;
    return 0;
}

/* Calls fn for every stored element of this rank's tiles on the line (line_dim < 0: every
 * element), with its declared key. */
typedef void (*Visit)(void *ud, const Rec *r);
static void visit_local(const OrnDsmArray *a, int line_dim, int64_t fixed, Visit fn, void *ud)
{
    int nd = a->ndim, me = a->ctx->rank;
    int64_t skey[ORN_DSM_MAXDIM];
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        if (source_of(a, t) != me || !tl->held || tl->n == 0) continue;
        for (int64_t e = 0; e < tl->n; e++) {
            Rec r;
            memset(&r, 0, sizeof r);
            orn_dsm_tile_key(a, tl, e, skey);
            for (int s = 0; s < nd; s++) r.key[orn_dsm_decl_dim(a, s)] = skey[s];
            bool on = true;
            for (int d = 0; d < nd && line_dim >= 0; d++)
                if (d != line_dim && r.key[d] != fixed) on = false;
            if (!on) continue;
            memcpy(r.val, (const char *)tl->vals + (size_t)e * a->esize, a->esize);
            fn(ud, &r);
        }
    }
}

static void count_one(void *ud, const Rec *r)
{
    (void)r;
    ++*(int64_t *)ud;
}

/* The k smallest (lo) and the k largest (hi) keys seen, each kept sorted; or, when every
 * element is kept (all), every one in `lo`. */
typedef struct Ends {
    Rec *lo, *hi;
    int64_t nlo, nhi, k;
    bool all;
} Ends;

static void keep_one(void *ud, const Rec *r)
{
    Ends *e = ud;
    if (e->all) {
        e->lo[e->nlo++] = *r;
        return;
    }
    /* smallest: insert where it belongs if there is room or it beats the largest kept */
    if (e->nlo < e->k || rec_cmp(r, &e->lo[e->nlo - 1]) < 0) {
        int64_t j = e->nlo < e->k ? e->nlo++ : e->k - 1;
        while (j > 0 && rec_cmp(r, &e->lo[j - 1]) < 0) {
            e->lo[j] = e->lo[j - 1];
            j--;
        }
        e->lo[j] = *r;
    }
    if (e->nhi < e->k || rec_cmp(r, &e->hi[0]) > 0) {
        /* largest, ascending: drop the smallest kept when full */
        int64_t j;
        if (e->nhi < e->k) {
            j = e->nhi++;
        } else {
            memmove(e->hi, e->hi + 1, (size_t)(e->k - 1) * sizeof *e->hi);
            j = e->k - 1;
        }
        while (j > 0 && rec_cmp(r, &e->hi[j - 1]) < 0) {
            e->hi[j] = e->hi[j - 1];
            j--;
        }
        e->hi[j] = *r;
    }
}

int orn_dsm_sparse_ends(OrnDsmArray *a, int line_dim, int64_t fixed, int64_t limit, int64_t edge,
                        int64_t *total, int64_t *n, int64_t **keys, void **vals)
{
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank, nd = a->ndim;
    size_t es = a->esize;
    int64_t mine = 0;
    visit_local(a, line_dim, fixed, count_one, &mine);
    /* the counts first: every element when there are at most `limit`, else the ends */
    int64_t *cnt = orn_xcalloc((size_t)P, sizeof *cnt);
    cnt[me] = mine;
    int status =
        P > 1 ? orn_dsm_allgather_into(ctx, cnt, sizeof *cnt, "print: sparse counts") : ORN_OK;
    *total = 0;
    for (int q = 0; q < P; q++) *total += cnt[q];
    free(cnt);
    if (status) return status;
    int64_t k = *total <= limit ? *total : edge;
    /* this rank's elements when it has at most 2k, else its k first and k last: between
     * them, every rank's, the whole array's k first and k last */
    Ends e = {.k = k, .all = mine <= 2 * k};
    int64_t cap = e.all ? mine : k;
    e.lo = orn_xmalloc((size_t)(cap ? cap : 1) * sizeof(Rec));
    e.hi = orn_xmalloc((size_t)(k ? k : 1) * sizeof(Rec));
    visit_local(a, line_dim, fixed, keep_one, &e);
    size_t nrec = (size_t)(e.nlo + (e.all ? 0 : e.nhi));
    size_t len = nrec * sizeof(Rec);
    char *send = orn_xmalloc(len ? len : 1);
    memcpy(send, e.lo, (size_t)e.nlo * sizeof(Rec));
    if (!e.all) memcpy(send + (size_t)e.nlo * sizeof(Rec), e.hi, (size_t)e.nhi * sizeof(Rec));
    free(e.lo);
    free(e.hi);
    char *all = send;
    size_t *counts = orn_xcalloc((size_t)P, sizeof *counts);
    counts[0] = len;
    if (P > 1) {
        status =
            orn_dsm_allgatherv(ctx, send, len, (void **)&all, counts, "print: sparse elements");
        free(send);
        if (status) {
            free(counts);
            return status;
        }
    }
    size_t ntot = 0;
    for (int q = 0; q < P; q++) ntot += counts[q] / sizeof(Rec);
    Rec *g = orn_xmalloc((ntot ? ntot : 1) * sizeof *g);
    memcpy(g, all, ntot * sizeof(Rec));
    free(all);
    free(counts);
    qsort(g, ntot, sizeof *g, rec_cmp);
    /* the first k and the last k (all of them when that is every one) */
    size_t keep = *total <= 2 * k ? ntot : (size_t)(2 * k);
    if (keep < ntot) memmove(g + k, g + ntot - (size_t)k, (size_t)k * sizeof *g);
    *n = (int64_t)keep;
    *keys = orn_xmalloc((keep ? keep : 1) * (size_t)nd * sizeof **keys);
    *vals = orn_xmalloc((keep ? keep : 1) * es);
    for (size_t i = 0; i < keep; i++) {
        memcpy(*keys + i * (size_t)nd, g[i].key, (size_t)nd * sizeof(int64_t));
        memcpy((char *)*vals + i * es, g[i].val, es);
    }
    free(g);
    return ORN_OK;
}
