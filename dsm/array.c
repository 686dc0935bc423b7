/* array.c: distributed dense and sparse arrays: creation, element placement, moving
 * elements between partitions, gathering and single-element access (reductions:
 * reduce.c; sorting a batch of elements: sort.c).
 *
 * Invariants:
 * - a->part is identical on every rank; tiles[t].n is known on every rank.
 * - A rank holds storage only for the tiles it owns (and for replicated tiles), so memory
 *   is proportional to the local share.
 * - Dense tiles store their box row-major; sparse tiles store keys strictly increasing.
 *
 * Moving elements (orn_dsm_repartition): dense arrays send box intersections of old and new
 * tiles, both sides enumerating (old tile, new tile) pairs in the same order, so only
 * values travel (no keys): one alltoallv, 2 (P-1) a + b (bytes moved). Sparse arrays send
 * (key, value) records to the owner of the new tile, built straight from the old tiles and
 * into the new ones (dsm/build.c), or rebuild tiles locally when nothing moves between
 * ranks (dsm/refine.c).
 */
#include "dsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

/* ---------------------------------------------------------------- keys */

int64_t orn_dsm_ravel(const OrnDsmArray *a, const int64_t *key)
{
    int64_t lin = 0;
    for (int d = 0; d < a->ndim; d++) lin = lin * a->dims[d] + key[d];
    return lin;
}

void orn_dsm_unravel(const OrnDsmArray *a, int64_t lin, int64_t *key)
{
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t e = a->dims[d] ? a->dims[d] : 1;
        key[d] = lin % e;
        lin /= e;
    }
}

static void runs_place(OrnDsmRuns *r)
{
    const OrnDsmTile *tl = r->t;
    r->lin = r->at = 0;
    for (int d = 0; d < r->a->ndim; d++) {
        r->lin = r->lin * r->a->dims[d] + r->idx[d];
        r->at = r->at * (tl->hi[d] - tl->lo[d]) + (r->idx[d] - tl->lo[d]);
    }
}

int orn_dsm_runs_begin(OrnDsmRuns *r, const OrnDsmArray *a, int64_t t, int64_t r0, int64_t r1)
{
    const OrnDsmTile *tl = &a->tiles[t];
    r->a = a;
    r->t = tl;
    r->len = 0;
    for (int d = 0; d < a->ndim; d++) {
        r->lo[d] = d == 0 && tl->lo[0] < r0 ? r0 : tl->lo[d];
        r->hi[d] = d == 0 && tl->hi[0] > r1 ? r1 : tl->hi[d];
        if (r->hi[d] <= r->lo[d]) return 0;
        r->idx[d] = r->lo[d];
    }
    r->len = r->hi[a->ndim - 1] - r->lo[a->ndim - 1];
    runs_place(r);
    return 1;
}

int orn_dsm_runs_next(OrnDsmRuns *r)
{
    int d = r->a->ndim - 2;
    for (; d >= 0; d--) {
        if (++r->idx[d] < r->hi[d]) break;
        r->idx[d] = r->lo[d];
    }
    if (d < 0) return r->len = 0;
    runs_place(r);
    return 1;
}

int orn_dsm_tile_copy(const OrnDsmArray *a, int64_t t, int64_t r0, int64_t r1, void *rows,
                      int64_t rows_first, void *vals, int64_t vals_first, int how)
{
    size_t es = a->esize;
    OrnDsmRuns u;
    for (int ok = orn_dsm_runs_begin(&u, a, t, r0, r1); ok; ok = orn_dsm_runs_next(&u)) {
        char *r = (char *)rows + (size_t)(u.lin - rows_first) * es;
        char *v = (char *)vals + (size_t)(u.at - vals_first) * es;
        size_t run = (size_t)u.len * es;
        if (how == ORN_DSM_TO_ROWS)
            memcpy(r, v, run);
        else if (how == ORN_DSM_FROM_ROWS)
            memcpy(v, r, run);
        else if (memcmp(r, v, run))
            return 1;
    }
    return 0;
}

static int volume_ok(int ndim, const int64_t *dims, int64_t *vol)
{
    int64_t v = 1;
    for (int d = 0; d < ndim; d++) {
        if (dims[d] < 0) return 0;
        if (dims[d] && v > INT64_MAX / dims[d]) return 0;
        v *= dims[d];
    }
    *vol = v;
    return 1;
}

int orn_dsm_linear_ok(const OrnDsmArray *a)
{
    int64_t v;
    return volume_ok(a->ndim, a->dims, &v);
}

int orn_dsm_key_cmp(const int64_t *a, const int64_t *b, int ndim)
{
    for (int d = 0; d < ndim; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return 0;
}

int64_t orn_dsm_box_volume(int ndim, const int64_t *lo, const int64_t *hi)
{
    int64_t v = 1;
    for (int d = 0; d < ndim; d++) v *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
    return v;
}

static void key_str(char *buf, size_t n, const int64_t *key, int ndim)
{
    size_t len = 0;
    len += (size_t)snprintf(buf + len, n - len, "(");
    for (int d = 0; d < ndim && len < n; d++)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)key[d]);
    if (len < n) snprintf(buf + len, n - len, ")");
}

/* ---------------------------------------------------------------- arrays and tiles */

int orn_dsm_array_new(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims, int sparse,
                      OrnDsmArray **out)
{
    int64_t vol = 0;
    *out = NULL;
    if (ndim < 1 || ndim > ORN_DSM_MAXDIM)
        return orn_dsm_fail(ctx, ORN_E_ARG, "array: %d dimensions (1 to %d allowed)", ndim,
                            ORN_DSM_MAXDIM);
    if ((int)type < ORN_DSM_I32 || (int)type > ORN_DSM_F64)
        return orn_dsm_fail(ctx, ORN_E_ARG, "array: unknown element type %d", (int)type);
    for (int d = 0; d < ndim; d++)
        if (dims[d] < 0)
            return orn_dsm_fail(ctx, ORN_E_ARG, "array: negative extent %lld", (long long)dims[d]);
    if (!sparse && !volume_ok(ndim, dims, &vol))
        return orn_dsm_fail(ctx, ORN_E_ARG, "array: dense volume overflows 64 bits");
    OrnDsmArray *a = orn_xcalloc(1, sizeof *a);
    a->ctx = ctx;
    a->type = type;
    a->esize = orn_dsm_type_size(type);
    a->ndim = ndim;
    for (int d = 0; d < ORN_DSM_MAXDIM; d++) a->dims[d] = d < ndim ? dims[d] : 1;
    a->sparse = sparse;
    a->nnz = sparse ? 0 : vol;
    if (ctx->nreg == ctx->capreg) {
        ctx->capreg = ctx->capreg ? 2 * ctx->capreg : 16;
        ctx->reg = orn_xrealloc(ctx->reg, (size_t)ctx->capreg * sizeof *ctx->reg);
    }
    a->id = ctx->nreg;
    ctx->reg[ctx->nreg++] = a;
    orn_dsm_touch(a);
    snprintf(a->name, sizeof a->name, "array#%d", a->id);
    *out = a;
    return ORN_OK;
}

void orn_dsm_set_name(OrnDsmArray *a, const char *name)
{
    snprintf(a->name, sizeof a->name, "%s", name);
}

void orn_dsm_set_perm(OrnDsmArray *a, const int *perm)
{
    a->permuted = 0;
    for (int s = 0; s < a->ndim; s++) {
        a->perm[s] = perm[s];
        a->permuted |= perm[s] != s;
    }
}

int orn_dsm_decl_dim(const OrnDsmArray *a, int s)
{
    return a->permuted ? a->perm[s] : s;
}

void orn_dsm_key_text(const OrnDsmArray *a, const int64_t *key, char *buf, size_t n)
{
    int64_t decl[ORN_DSM_MAXDIM] = {0, 0, 0, 0};
    for (int s = 0; s < a->ndim; s++) decl[orn_dsm_decl_dim(a, s)] = key[s];
    size_t len = 0;
    if (n) buf[0] = 0;
    for (int d = 0; d < a->ndim && len < n; d++)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "", (long long)decl[d]);
}

void orn_dsm_tile_box(const OrnDsmArray *a, int64_t t, int64_t *lo, int64_t *hi)
{
    int grid[ORN_DSM_MAXDIM];
    orn_dsm_part_unravel(&a->part, t, grid);
    for (int d = 0; d < ORN_DSM_MAXDIM; d++) {
        lo[d] = 0;
        hi[d] = 1;
        if (d < a->ndim) {
            lo[d] = a->part.bounds[d][grid[d]];
            hi[d] = a->part.bounds[d][grid[d] + 1];
        }
    }
}

static void tile_release(OrnDsmTile *t)
{
    free(t->mem ? t->mem : t->vals);
    t->mem = NULL;
    t->pad_lo = t->pad_hi = 0;
    free(t->keys);
    free(t->rowptr);
    free(t->cols);
    t->vals = NULL;
    t->keys = NULL;
    t->rowptr = NULL;
    t->cols = NULL;
}

/* Bytes of one row of dimension 0 of tile t's box. */
static size_t tile_row_bytes(const OrnDsmArray *a, const OrnDsmTile *t)
{
    size_t row = a->esize;
    for (int d = 1; d < a->ndim; d++) row *= (size_t)(t->hi[d] - t->lo[d]);
    return row;
}

int orn_dsm_tile_pad(OrnDsmArray *a, int64_t t, int64_t lo, int64_t hi)
{
    OrnDsmTile *tl = &a->tiles[t];
    if (a->sparse || !tl->held || !tl->n) return ORN_OK;
    if (tl->pad_lo >= lo && tl->pad_hi >= hi) return ORN_OK;
    if (lo < tl->pad_lo) lo = tl->pad_lo;
    if (hi < tl->pad_hi) hi = tl->pad_hi;
    size_t row = tile_row_bytes(a, tl), box = (size_t)tl->n * a->esize;
    char *mem = orn_xmalloc(box + (size_t)(lo + hi) * row);
    orn_dsm_touch(a);
    memcpy(mem + (size_t)lo * row, tl->vals, box);
    free(tl->mem ? tl->mem : tl->vals);
    tl->mem = mem;
    tl->vals = mem + (size_t)lo * row;
    tl->pad_lo = lo;
    tl->pad_hi = hi;
    return ORN_OK;
}

void orn_dsm_tile_unpad(OrnDsmArray *a, int64_t t)
{
    OrnDsmTile *tl = &a->tiles[t];
    if (!tl->mem) return;
    size_t box = (size_t)tl->n * a->esize;
    char *v = orn_xmalloc(box ? box : 1);
    orn_dsm_touch(a);
    memcpy(v, tl->vals, box);
    free(tl->mem);
    tl->mem = NULL;
    tl->vals = v;
    tl->pad_lo = tl->pad_hi = 0;
}

/* Sparse 2-D tiles to CSR: row offsets and int32 columns instead of two int64 keys per
 * element (20 -> 8 bytes per f32 element, plus 8 per row); 3-D tiles of arrays with runs
 * likewise, key 2 dropped (it is implied, see OrnDsmTile). */
static void tiles_compact(const OrnDsmArray *a, OrnDsmTile *tiles, int64_t ntiles)
{
    int nd = a->ndim;
    if (!a->sparse || (nd != 2 && !(nd == 3 && a->runs))) return;
    for (int64_t t = 0; t < ntiles; t++) {
        OrnDsmTile *tl = &tiles[t];
        if (!tl->held || !tl->keys || tl->cols) continue;
        int64_t rows = tl->hi[0] - tl->lo[0];
        if (tl->hi[1] - tl->lo[1] > INT32_MAX || rows < 0) continue;
        free(tl->rowptr);
        tl->rowptr = orn_xcalloc((size_t)rows + 1, sizeof *tl->rowptr);
        tl->cols = orn_dsm_xmalloc_huge((size_t)tl->n * sizeof *tl->cols);
        for (int64_t e = 0; e < tl->n; e++) {
            tl->rowptr[tl->keys[nd * e] - tl->lo[0] + 1]++;
            tl->cols[e] = (int32_t)(tl->keys[nd * e + 1] - tl->lo[1]);
        }
        for (int64_t r = 0; r < rows; r++) tl->rowptr[r + 1] += tl->rowptr[r];
        free(tl->keys);
        tl->keys = NULL;
    }
}

int64_t orn_dsm_tile_row_of(const OrnDsmTile *t, int64_t e)
{
    return orn_dsm_last_le(t->rowptr, t->hi[0] - t->lo[0], e);
}

void orn_dsm_tile_keys(const OrnDsmArray *a, const OrnDsmTile *t, int64_t first, int64_t n,
                       int64_t *out)
{
    if (n <= 0) return;
    if (!t->cols) {
        memcpy(out, t->keys + first * a->ndim, (size_t)n * (size_t)a->ndim * sizeof *out);
        return;
    }
    int64_t r = orn_dsm_tile_row_of(t, first);
    if (a->ndim == 3) {
        /* runs: key 2 counts up along equal columns of a row */
        int64_t j = 0;
        while (first - j > t->rowptr[r] && t->cols[first - j - 1] == t->cols[first]) j++;
        for (int64_t i = 0; i < n; i++) {
            int64_t e = first + i;
            if (i > 0) {
                if (t->rowptr[r + 1] <= e) {
                    while (t->rowptr[r + 1] <= e) r++;
                    j = 0;
                } else {
                    j = t->cols[e] == t->cols[e - 1] ? j + 1 : 0;
                }
            }
            out[3 * i] = t->lo[0] + r;
            out[3 * i + 1] = t->lo[1] + t->cols[e];
            out[3 * i + 2] = t->lo[2] + j;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t e = first + i;
        while (t->rowptr[r + 1] <= e) r++;
        out[2 * i] = t->lo[0] + r;
        out[2 * i + 1] = t->lo[1] + t->cols[e];
    }
}

void orn_dsm_tile_key(const OrnDsmArray *a, const OrnDsmTile *t, int64_t e, int64_t *key)
{
    orn_dsm_tile_keys(a, t, e, 1, key);
}

static void tiles_free(OrnDsmTile *tiles, int64_t n)
{
    if (!tiles) return;
    for (int64_t t = 0; t < n; t++) tile_release(&tiles[t]);
    free(tiles);
}

/* New tile table for partition p (boxes, holders; no storage). */
static OrnDsmTile *tiles_for(const OrnDsmArray *a, const OrnDsmPart *p)
{
    OrnDsmTile *tiles = orn_xcalloc((size_t)p->ntiles, sizeof *tiles);
    int me = a->ctx->rank;
    for (int64_t t = 0; t < p->ntiles; t++) {
        int grid[ORN_DSM_MAXDIM];
        orn_dsm_part_unravel(p, t, grid);
        for (int d = 0; d < ORN_DSM_MAXDIM; d++) {
            tiles[t].lo[d] = d < a->ndim ? p->bounds[d][grid[d]] : 0;
            tiles[t].hi[d] = d < a->ndim ? p->bounds[d][grid[d] + 1] : 1;
        }
        tiles[t].n = a->sparse ? 0 : orn_dsm_box_volume(a->ndim, tiles[t].lo, tiles[t].hi);
        tiles[t].held = p->owner[t] == me || p->owner[t] == ORN_DSM_ALL;
    }
    return tiles;
}

enum { DENSE_PAD = 2, DENSE_PAD_MIN = 64, DENSE_PAD_BYTES = 16384, DENSE_PAD_FRAC = 64 };

/* Rows of room on either side of a dense tile of `rows` rows of `row` bytes: DENSE_PAD,
 * or up to DENSE_PAD_BYTES where rows are short (a 1-D array: 4096 f32 elements, a window's
 * halo or a band boundary that moves by a few elements fits, dense_repartition), at most
 * 1/DENSE_PAD_FRAC of the tile; none under DENSE_PAD_MIN rows. */
static int64_t dense_pad(int64_t rows, size_t row)
{
    if (rows < DENSE_PAD_MIN) return 0;
    int64_t pad = row ? (int64_t)(DENSE_PAD_BYTES / row) : 0;
    if (pad > rows / DENSE_PAD_FRAC) pad = rows / DENSE_PAD_FRAC;
    return pad > DENSE_PAD ? pad : DENSE_PAD;
}

/* memset through a volatile pointer, never elided: it both zeroes a large tile (from
 * orn_try_alloc, not zeroed) and faults its pages in on their owner. */
static void *(*const volatile touch_zero)(void *, int, size_t) = memset;

/* Storage for the held tiles of a dense array. Extents come from user programs and data,
 * so a request too large for this rank is an error that says how much was asked for, not
 * an abort. */
static int alloc_dense(const OrnDsmArray *a, OrnDsmTile *tiles, int64_t ntiles)
{
    for (int64_t t = 0; t < ntiles; t++) {
        OrnDsmTile *tl = &tiles[t];
        if (!tl->held || !tl->n || tl->vals) continue; /* vals: an old tile's (repartition) */
        /* Tiles of at least DENSE_PAD_MIN rows get rows of room on either side (dense_pad,
         * orn_dsm_tile_pad): a stencil's ghost rows then need no second allocation and copy
         * of the tile (at most 2 DENSE_PAD / DENSE_PAD_MIN more memory). */
        int64_t rows = tl->hi[0] - tl->lo[0];
        int64_t pad = dense_pad(rows, (size_t)(tl->n / (rows > 0 ? rows : 1)) * a->esize);
        int64_t room = pad ? tl->n + 2 * pad * (tl->n / rows) : tl->n;
        size_t bytes = (uint64_t)room <= SIZE_MAX / a->esize ? (size_t)room * a->esize : 0;
        int huge = bytes >= ORN_DSM_HUGE_MIN;
        if (!bytes || !(tl->vals = huge ? orn_try_alloc(bytes) : orn_try_zalloc_data(bytes, 1)))
            return orn_dsm_fail(a->ctx, ORN_E_ARG,
                                "array: cannot allocate %lld elements of %s (%.3g GB) on rank %d",
                                (long long)tiles[t].n, orn_dsm_type_name(a->type),
                                (double)tiles[t].n * (double)a->esize / 1e9, a->ctx->rank);
        /* Large tiles are touched now, by their owner (first-touch placement, in huge
         * pages where advised): their page faults belong to making the array, not to
         * the first loop that writes it (a stencil's first sweep faulted in its whole
         * grid: 0.23 s of a 0.03 s sweep). */
        if (huge) {
            orn_dsm_huge(tl->vals, bytes);
            touch_zero(tl->vals, 0, bytes);
        }
        if (pad) {
            tl->mem = tl->vals;
            tl->vals = (char *)tl->mem + (size_t)(pad * (tl->n / rows)) * a->esize;
            tl->pad_lo = tl->pad_hi = pad;
        }
    }
    return ORN_OK;
}

void orn_dsm_tiles_reset(OrnDsmArray *a)
{
    tiles_free(a->tiles, a->part.ntiles);
    a->tiles = tiles_for(a, &a->part);
}

int orn_dsm_holds(const OrnDsmArray *a, int64_t t)
{
    return a->tiles[t].held;
}

void orn_dsm_free(OrnDsmArray *a)
{
    if (!a) return;
    OrnDsmCtx *ctx = a->ctx;
    if (a->id >= 0 && a->id < ctx->nreg && ctx->reg[a->id] == a) ctx->reg[a->id] = NULL;
    orn_dsm_replica_free(a);
    free(a->held_copy);
    tiles_free(a->tiles, a->part.ntiles);
    orn_dsm_part_free(&a->part);
    free(a);
}

int orn_dsm_dense(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims, OrnDsmArray **out)
{
    return orn_dsm_dense_part(ctx, type, ndim, dims, NULL, out);
}

int orn_dsm_dense_part(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                       const OrnDsmPart *part, OrnDsmArray **out)
{
    OrnDsmArray *a = NULL;
    int status = orn_dsm_array_new(ctx, type, ndim, dims, 0, &a);
    if (status) return status;
    if (part && part->ndim != ndim) status = ORN_E_ARG;
    if (!status)
        status = part ? orn_dsm_part_copy(&a->part, part)
                      : orn_dsm_part_default(ctx, ndim, a->dims, &a->part);
    if (status) {
        orn_dsm_free(a);
        return orn_dsm_fail(ctx, status, "array: bad partition");
    }
    a->tiles = tiles_for(a, &a->part);
    status = alloc_dense(a, a->tiles, a->part.ntiles);
    if (status) {
        orn_dsm_free(a);
        return status;
    }
    *out = a;
    return ORN_OK;
}

/* Call fn(key, ptr) for every element of a held dense tile, in row-major order. */
int orn_dsm_init(OrnDsmArray *a, orn_dsm_init_fn fn, void *ud)
{
    if (a->sparse) return orn_dsm_fail(a->ctx, ORN_E_ARG, "init: array is sparse");
    orn_dsm_touch(a);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        OrnDsmTile *tl = &a->tiles[t];
        if (!tl->held || !tl->n) continue;
        int64_t key[ORN_DSM_MAXDIM];
        memcpy(key, tl->lo, sizeof key);
        char *v = tl->vals;
        for (int64_t i = 0; i < tl->n; i++) {
            fn(orn_dsm_ravel(a, key), v + (size_t)i * a->esize, ud);
            for (int d = a->ndim - 1; d >= 0; d--) {
                if (++key[d] < tl->hi[d]) break;
                key[d] = tl->lo[d];
            }
        }
    }
    return ORN_OK;
}

int orn_dsm_fill(OrnDsmArray *a, const void *value)
{
    orn_dsm_touch(a);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        OrnDsmTile *tl = &a->tiles[t];
        if (!tl->held) continue;
        for (int64_t i = 0; i < tl->n; i++)
            memcpy((char *)tl->vals + (size_t)i * a->esize, value, a->esize);
    }
    return ORN_OK;
}

int orn_dsm_copy(OrnDsmArray *a, OrnDsmArray **out)
{
    OrnDsmArray *b = NULL;
    int status = orn_dsm_array_new(a->ctx, a->type, a->ndim, a->dims, a->sparse, &b);
    if (status) return status;
    orn_dsm_part_copy(&b->part, &a->part);
    b->nnz = a->nnz;
    b->runs = a->runs;
    b->part_tag = a->part_tag;
    b->tiles = tiles_for(b, &b->part);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        const OrnDsmTile *s = &a->tiles[t];
        OrnDsmTile *d = &b->tiles[t];
        d->n = s->n;
        if (!s->held || !s->n) continue;
        d->vals = orn_xmalloc((size_t)s->n * a->esize);
        memcpy(d->vals, s->vals, (size_t)s->n * a->esize);
        if (a->sparse && s->cols) {
            size_t rows = (size_t)(s->hi[0] - s->lo[0]) + 1;
            d->rowptr = orn_xmalloc(rows * sizeof *d->rowptr);
            memcpy(d->rowptr, s->rowptr, rows * sizeof *d->rowptr);
            d->cols = orn_xmalloc((size_t)s->n * sizeof *d->cols);
            memcpy(d->cols, s->cols, (size_t)s->n * sizeof *d->cols);
        } else if (a->sparse) {
            d->keys = orn_xmalloc((size_t)s->n * (size_t)a->ndim * sizeof *d->keys);
            memcpy(d->keys, s->keys, (size_t)s->n * (size_t)a->ndim * sizeof *d->keys);
        }
    }
    *out = b;
    return ORN_OK;
}

int64_t orn_dsm_tile_find(const OrnDsmArray *a, const OrnDsmTile *t, const int64_t *key)
{
    if (t->cols && a->ndim == 3) {
        /* runs: the first element of column c in the row, then key 2's offset in the run */
        int64_t r = key[0] - t->lo[0], c = key[1] - t->lo[1], k = key[2] - t->lo[2];
        if (r < 0 || r >= t->hi[0] - t->lo[0] || c < 0 || c >= t->hi[1] - t->lo[1] || k < 0 ||
            k >= t->hi[2] - t->lo[2])
            return -1;
        int64_t lo = t->rowptr[r], hi = t->rowptr[r + 1];
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (t->cols[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo + k < t->rowptr[r + 1] && t->cols[lo + k] == c ? lo + k : -1;
    }
    if (t->cols) {
        int64_t r = key[0] - t->lo[0], c = key[1] - t->lo[1];
        if (r < 0 || r >= t->hi[0] - t->lo[0] || c < 0 || c >= t->hi[1] - t->lo[1]) return -1;
        int64_t lo = t->rowptr[r], hi = t->rowptr[r + 1];
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (t->cols[mid] == c) return mid;
            if (t->cols[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        return -1;
    }
    int64_t lo = 0, hi = t->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = orn_dsm_key_cmp(t->keys + mid * a->ndim, key, a->ndim);
        if (c == 0) return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void *orn_dsm_local_ptr(OrnDsmArray *a, const int64_t *key)
{
    for (int d = 0; d < a->ndim; d++)
        if (key[d] < 0 || key[d] >= a->dims[d]) return NULL;
    int64_t t = orn_dsm_part_tile_of(&a->part, key);
    OrnDsmTile *tl = &a->tiles[t];
    if (!tl->held) return NULL;
    if (a->sparse) {
        int64_t i = orn_dsm_tile_find(a, tl, key);
        return i < 0 ? NULL : (char *)tl->vals + (size_t)i * a->esize;
    }
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++) off = off * (tl->hi[d] - tl->lo[d]) + (key[d] - tl->lo[d]);
    return (char *)tl->vals + (size_t)off * a->esize;
}

int orn_dsm_tile_rows(OrnDsmArray *a, int64_t t)
{
    OrnDsmTile *tl = &a->tiles[t];
    if (tl->rowptr || !a->sparse || !tl->held) return ORN_OK;
    int64_t rows = tl->hi[0] - tl->lo[0];
    tl->rowptr = orn_xcalloc((size_t)rows + 1, sizeof *tl->rowptr);
    int64_t i = 0;
    for (int64_t r = 0; r <= rows; r++) {
        while (i < tl->n && tl->keys[i * a->ndim] < tl->lo[0] + r) i++;
        tl->rowptr[r] = i;
    }
    return ORN_OK;
}

/* ---------------------------------------------------------------- sparse scatter */

/* Send n elements (keys, values, tags; selfonly[i] marks elements of replicated tiles,
 * which every rank holds and therefore only keeps for itself) to the holders of their
 * tiles in partition np. Returns np's tiles with sorted (key, tag) storage; *tags_out
 * gets the tags per tile (caller frees each) when want_tags. */
/* Record coordinates: int32 when every extent fits (half the bytes), else int64. */
static void put_key(char *r, const int64_t *key, int nd, size_t cw)
{
    for (int d = 0; d < nd; d++) {
        if (cw == 4) {
            int32_t v = (int32_t)key[d];
            memcpy(r + 4 * d, &v, 4);
        } else {
            memcpy(r + 8 * d, &key[d], 8);
        }
    }
}

static void get_key(const char *r, int64_t *key, int nd, size_t cw)
{
    for (int d = 0; d < nd; d++) {
        if (cw == 4) {
            int32_t v;
            memcpy(&v, r + 4 * d, 4);
            key[d] = v;
        } else {
            memcpy(&key[d], r + 8 * d, 8);
        }
    }
}

/* Destination rank of element i (-2: nobody), or ORN_DSM_ALL. */
static int scatter_dest(const OrnDsmPart *np, const int64_t *key, const unsigned char *selfonly,
                        int64_t i, int me)
{
    int o = np->owner[orn_dsm_part_tile_of(np, key)];
    if (selfonly && selfonly[i]) o = (o == ORN_DSM_ALL || o == me) ? me : -2;
    return o;
}

static int sparse_scatter(OrnDsmArray *a, const OrnDsmPart *np, int64_t n, const int64_t *keys,
                          const char *vals, int has_tags, const int64_t *tags,
                          const unsigned char *selfonly, OrnDsmTile **tiles_out,
                          int64_t ***tags_out, void **owned, int nowned)
{
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank, nd = a->ndim, status = ORN_OK;
    /* Records carry a tag (a source line) when any rank has tags: the record size must be
     * the same on every rank (a rank with no elements may pass no tags). */
    size_t tagb = has_tags ? 8 : 0;
    size_t cw = 4;
    for (int d = 0; d < nd; d++)
        if (a->dims[d] > INT32_MAX) cw = 8;
    size_t es = a->esize, kb = (size_t)nd * cw, rec = kb + tagb + es;
    size_t *scount = orn_xcalloc((size_t)P, sizeof *scount);
    size_t *rcount = orn_xcalloc((size_t)P, sizeof *rcount);
    size_t *soff = orn_xcalloc((size_t)P + 1, sizeof *soff);
    char *sbuf = NULL, *rbuf = NULL;
    OrnDsmTile *tiles = NULL;
    int64_t **ttags = NULL;

    for (int64_t i = 0; i < n; i++) {
        int o = scatter_dest(np, keys + i * nd, selfonly, i, me);
        if (o == ORN_DSM_ALL)
            for (int p = 0; p < P; p++) scount[p] += rec;
        else if (o >= 0)
            scount[o] += rec;
    }
    for (int p = 0; p < P; p++) soff[p + 1] = soff[p] + scount[p];
    sbuf = orn_xmalloc(soff[P] ? soff[P] : 1);
    {
        size_t *pos = orn_xmalloc((size_t)P * sizeof *pos);
        memcpy(pos, soff, (size_t)P * sizeof *pos);
        for (int64_t i = 0; i < n; i++) {
            int64_t tag = tags ? tags[i] : -1;
            int o = scatter_dest(np, keys + i * nd, selfonly, i, me);
            for (int p = 0; p < P; p++) {
                if (o != ORN_DSM_ALL && o != p) continue;
                char *r = sbuf + pos[p];
                put_key(r, keys + i * nd, nd, cw);
                memcpy(r + kb, &tag, tagb);
                memcpy(r + kb + tagb, vals + (size_t)i * es, es);
                pos[p] += rec;
            }
        }
        free(pos);
    }
    /* The packed records are all that is needed now: at peak, memory holds the records
     * twice (sent and received), not the caller's arrays too. */
    for (int i = 0; i < nowned; i++) {
        free(owned[i]);
        owned[i] = NULL;
    }
    status = orn_dsm_alltoallv(ctx, sbuf, scount, (void **)&rbuf, rcount, "move elements");
    if (status) goto fn_exit;
    free(sbuf);
    sbuf = NULL;

    /* Count per tile, then place. */
    size_t total = 0;
    for (int p = 0; p < P; p++) total += rcount[p];
    int64_t nrec = (int64_t)(total / rec);
    tiles = tiles_for(a, np);
    ttags = has_tags ? orn_xcalloc((size_t)np->ntiles, sizeof *ttags) : NULL;
    int64_t *fill = orn_xcalloc((size_t)np->ntiles, sizeof *fill);
    int64_t key[ORN_DSM_MAXDIM];
    for (int64_t i = 0; i < nrec; i++) {
        get_key(rbuf + (size_t)i * rec, key, nd, cw);
        fill[orn_dsm_part_tile_of(np, key)]++;
    }
    for (int64_t t = 0; t < np->ntiles; t++) {
        tiles[t].n = fill[t];
        if (fill[t]) {
            tiles[t].keys = orn_dsm_xmalloc_huge((size_t)fill[t] * (size_t)nd * 8);
            tiles[t].vals = orn_dsm_xmalloc_huge((size_t)fill[t] * es);
            if (ttags) ttags[t] = orn_xmalloc((size_t)fill[t] * 8);
        }
        fill[t] = 0;
    }
    for (int64_t i = 0; i < nrec; i++) {
        const char *r = rbuf + (size_t)i * rec;
        get_key(r, key, nd, cw);
        int64_t t = orn_dsm_part_tile_of(np, key), j = fill[t]++;
        memcpy(tiles[t].keys + j * nd, key, (size_t)nd * 8);
        if (ttags) memcpy(&ttags[t][j], r + kb, 8);
        memcpy((char *)tiles[t].vals + (size_t)j * es, r + kb + tagb, es);
    }
    free(fill);
    free(rbuf);
    rbuf = NULL;
    for (int64_t t = 0; t < np->ntiles; t++)
        if (tiles[t].n)
            orn_dsm_sort_elements(nd, es, tiles[t].n, tiles[t].keys, tiles[t].vals,
                                  ttags ? ttags[t] : NULL);
    /* Without tags nobody looks for duplicates: the tiles can be compacted now. */
    if (!tags_out) tiles_compact(a, tiles, np->ntiles);
    *tiles_out = tiles;
    tiles = NULL;
    if (tags_out) {
        *tags_out = ttags;
        ttags = NULL;
    }
fn_exit:
    if (ttags) {
        for (int64_t t = 0; t < np->ntiles; t++) free(ttags[t]);
        free(ttags);
    }
    tiles_free(tiles, np->ntiles);
    free(sbuf);
    free(rbuf);
    free(scount);
    free(rcount);
    free(soff);
    return status;
}

static void free_tags(int64_t **tags, int64_t n)
{
    if (!tags) return;
    for (int64_t t = 0; t < n; t++) free(tags[t]);
    free(tags);
}

/* Global element counts of sparse tiles: each holder (rank 0 for replicated tiles)
 * contributes its count. */
static int sync_counts(OrnDsmArray *a, OrnDsmTile *tiles, const OrnDsmPart *p)
{
    int64_t *cnt = orn_xcalloc((size_t)p->ntiles, sizeof *cnt);
    for (int64_t t = 0; t < p->ntiles; t++)
        if (p->owner[t] == a->ctx->rank || (p->owner[t] == ORN_DSM_ALL && a->ctx->rank == 0))
            cnt[t] = tiles[t].n;
    int status = orn_dsm_allreduce_i64(a->ctx, cnt, (size_t)p->ntiles, ORN_DSM_SUM);
    if (!status) {
        a->nnz = 0;
        for (int64_t t = 0; t < p->ntiles; t++) {
            tiles[t].n = cnt[t];
            a->nnz += cnt[t];
        }
    }
    free(cnt);
    return status;
}

/* Check sorted tiles for duplicate keys; on one, record the error and return the order
 * key of the report (the later line, or the key's index). */
static int find_duplicates(OrnDsmArray *a, OrnDsmTile *tiles, int64_t **tags, const OrnDsmPart *p,
                           const char *path, int64_t *order)
{
    int nd = a->ndim, found = 0;
    int64_t best = 0, bt = -1, bi = -1;
    for (int64_t t = 0; t < p->ntiles; t++) {
        const OrnDsmTile *tl = &tiles[t];
        if (!tl->held) continue;
        for (int64_t i = 1; i < tl->n; i++) {
            if (orn_dsm_key_cmp(tl->keys + (i - 1) * nd, tl->keys + i * nd, nd)) continue;
            int64_t ord =
                tags && tags[t][i] >= 0 ? tags[t][i] : orn_dsm_ravel(a, tl->keys + i * nd);
            if (!found || ord < best) {
                found = 1;
                best = ord;
                bt = t;
                bi = i;
            }
        }
    }
    if (!found) return ORN_OK;
    char ks[160];
    key_str(ks, sizeof ks, tiles[bt].keys + bi * nd, nd);
    *order = best;
    if (tags && tags[bt][bi] >= 0)
        return orn_dsm_fail(a->ctx, ORN_E_PARSE, "%s:%lld: duplicate key %s, first on line %lld",
                            path ? path : "input", (long long)tags[bt][bi], ks,
                            (long long)tags[bt][bi - 1]);
    return orn_dsm_fail(a->ctx, ORN_E_ARG, "duplicate key %s", ks);
}

static int from_elements(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims, int sparse,
                         int64_t n, const int64_t *keys, const void *vals, const int64_t *lines,
                         const char *path, OrnDsmArray **out, void **owned, int nowned);

int orn_dsm_from_elements(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                          int sparse, int64_t n, const int64_t *keys, const void *vals,
                          const int64_t *lines, const char *path, OrnDsmArray **out)
{
    return from_elements(ctx, type, ndim, dims, sparse, n, keys, vals, lines, path, out, NULL, 0);
}

int orn_dsm_from_elements_owned(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                                int sparse, int64_t n, int64_t **keys, void **vals, int64_t **lines,
                                const char *path, OrnDsmArray **out)
{
    void *owned[3] = {*keys, *vals, lines ? *lines : NULL};
    *keys = NULL;
    *vals = NULL;
    if (lines) *lines = NULL;
    int status = from_elements(ctx, type, ndim, dims, sparse, n, owned[0], owned[1], owned[2], path,
                               out, owned, 3);
    for (int i = 0; i < 3; i++) free(owned[i]);
    return status;
}

static int from_elements(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims, int sparse,
                         int64_t n, const int64_t *keys, const void *vals, const int64_t *lines,
                         const char *path, OrnDsmArray **out, void **owned, int nowned)
{
    OrnDsmArray *a = NULL;
    OrnDsmTile *tiles = NULL;
    int64_t **tags = NULL;
    int64_t order = 0, ntiles = 0;
    int status = ORN_OK;
    *out = NULL;

    /* Keys inside the extents (checked locally, agreed on the first bad one). */
    if (ndim >= 1 && ndim <= ORN_DSM_MAXDIM) {
        for (int64_t i = 0; i < n && !status; i++) {
            for (int d = 0; d < ndim; d++) {
                if (keys[i * ndim + d] >= 0 && keys[i * ndim + d] < dims[d]) continue;
                char ks[160];
                key_str(ks, sizeof ks, keys + i * ndim, ndim);
                order = lines ? lines[i] : i;
                if (lines)
                    status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: key %s outside the array",
                                          path ? path : "input", (long long)lines[i], ks);
                else
                    status = orn_dsm_fail(ctx, ORN_E_RANGE, "element key %s outside the array", ks);
                break;
            }
        }
    }
    status = orn_dsm_agree_at(ctx, status, order);
    if (status) return status;
    /* Records carry lines on every rank or on none (their size must agree): a rank with no
     * elements may have passed NULL where the others passed lines. */
    int64_t tagged = lines != NULL;
    status = orn_dsm_allreduce_i64(ctx, &tagged, 1, ORN_DSM_MAX);
    if (status) return status;
    int64_t *nolines = tagged && !lines ? orn_xcalloc((size_t)(n ? n : 1), sizeof *nolines) : NULL;
    if (nolines) lines = nolines;
    status = orn_dsm_array_new(ctx, type, ndim, dims, sparse, &a);
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_fail;

    /* Default partition; sparse arrays balanced along dimension 0. */
    status = orn_dsm_part_default(ctx, ndim, a->dims, &a->part);
    if (status) goto fn_fail;
    ntiles = a->part.ntiles;
    if (sparse) {
        status = orn_dsm_balance_keys(ctx, a->dims[0], a->part.nb[0], a->part.bounds[0], keys, n,
                                      ndim, 0);
        if (!status) status = orn_dsm_rows_fit(ctx, a, &a->part, path);
        if (status) goto fn_fail;
    }
    status = sparse_scatter(a, &a->part, n, keys, vals, tagged != 0, lines, NULL, &tiles, &tags,
                            owned, nowned);
    if (status) goto fn_fail;
    order = 0;
    status = find_duplicates(a, tiles, tags, &a->part, path, &order);
    status = orn_dsm_agree_at(ctx, status, order);
    if (status) goto fn_fail;
    if (!sparse) {
        /* Every key of every tile exactly once: no duplicates, so count == volume. */
        int64_t missing = -1;
        for (int64_t t = 0; t < a->part.ntiles && missing < 0; t++) {
            OrnDsmTile *tl = &tiles[t];
            if (!tl->held) continue;
            int64_t vol = orn_dsm_box_volume(ndim, tl->lo, tl->hi);
            if (tl->n == vol) continue;
            /* First key of the box that is not present. */
            int64_t key[ORN_DSM_MAXDIM], j = 0;
            memcpy(key, tl->lo, sizeof key);
            for (int64_t i = 0; i < vol; i++) {
                if (j < tl->n && !orn_dsm_key_cmp(tl->keys + j * ndim, key, ndim))
                    j++;
                else {
                    missing = orn_dsm_ravel(a, key);
                    break;
                }
                for (int d = ndim - 1; d >= 0; d--) {
                    if (++key[d] < tl->hi[d]) break;
                    key[d] = tl->lo[d];
                }
            }
        }
        if (missing >= 0) {
            int64_t key[ORN_DSM_MAXDIM];
            char ks[160];
            orn_dsm_unravel(a, missing, key);
            key_str(ks, sizeof ks, key, ndim);
            status = orn_dsm_fail(ctx, ORN_E_ARG, "dense array: no value for element %s", ks);
        }
        status = orn_dsm_agree_at(ctx, status, missing);
        if (status) goto fn_fail;
        for (int64_t t = 0; t < a->part.ntiles; t++) {
            free(tiles[t].keys);
            tiles[t].keys = NULL;
            tiles[t].n = orn_dsm_box_volume(ndim, tiles[t].lo, tiles[t].hi);
        }
    } else {
        tiles_compact(a, tiles, a->part.ntiles);
        status = sync_counts(a, tiles, &a->part);
        if (status) goto fn_fail;
    }
    a->tiles = tiles;
    tiles = NULL;
    *out = a;
    a = NULL;
fn_exit:
    free_tags(tags, ntiles);
    free(nolines);
    return status;
fn_fail:
    tiles_free(tiles, ntiles);
    orn_dsm_free(a);
    a = NULL;
    goto fn_exit;
}

/* ---------------------------------------------------------------- repartition */

/* Copy the intersection box `ilo..ihi` between two row-major boxes. */
static void box_copy(int nd, size_t es, const int64_t *ilo, const int64_t *ihi, const int64_t *slo,
                     const int64_t *shi, const char *src, const int64_t *dlo, const int64_t *dhi,
                     char *dst)
{
    int64_t idx[ORN_DSM_MAXDIM];
    memcpy(idx, ilo, sizeof idx);
    size_t row = (size_t)(ihi[nd - 1] - ilo[nd - 1]) * es;
    for (;;) {
        int64_t so = 0, doff = 0;
        for (int d = 0; d < nd; d++) {
            so = so * (shi[d] - slo[d]) + (idx[d] - slo[d]);
            doff = doff * (dhi[d] - dlo[d]) + (idx[d] - dlo[d]);
        }
        memcpy(dst + (size_t)doff * es, src + (size_t)so * es, row);
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++idx[d] < ihi[d]) break;
            idx[d] = ilo[d];
        }
        if (d < 0) break;
    }
}

static int intersect(int nd, const OrnDsmTile *a, const OrnDsmTile *b, int64_t *lo, int64_t *hi)
{
    for (int d = 0; d < nd; d++) {
        lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (lo[d] >= hi[d]) return 0;
    }
    return 1;
}

/* Source rank of the data for (old tile to, new tile tn) received by rank `r`; -1 if r
 * receives nothing for this pair. */
static int pair_source(const OrnDsmPart *op, const OrnDsmPart *np, int64_t to, int64_t tn, int r)
{
    int no = np->owner[tn], oo = op->owner[to];
    if (no != ORN_DSM_ALL && no != r) return -1;
    return oo == ORN_DSM_ALL ? r : oo;
}

/* New tiles that keep an old tile's storage (dense_repartition): a new tile held here whose
 * box is an old one's held here, moved along dimension 0 within that tile's box and room
 * (dense_pad) -- a band boundary moved by a few rows (conv1d at -n 2: the outputs' bands
 * follow the input's, 4 elements; the copy into new storage, its pages zeroed by the kernel,
 * took 5 ms of a 0.7 ms run). from[tn]: the old tile, or -1. The old tiles are still read
 * (sent, copied) where they lie; nothing writes inside their boxes. */
static void keep_storage(const OrnDsmArray *a, OrnDsmTile *nt, int64_t ntn, int64_t *from)
{
    const OrnDsmPart *op = &a->part;
    for (int64_t tn = 0; tn < ntn; tn++) {
        OrnDsmTile *t = &nt[tn];
        from[tn] = -1;
        if (!t->held || !t->n) continue;
        for (int64_t to = 0; to < op->ntiles && from[tn] < 0; to++) {
            const OrnDsmTile *o = &a->tiles[to];
            if (!o->held || !o->n || !o->vals) continue;
            /* both ends within the old tile's room of its own: nothing of the allocation
             * is left unused but that room (a band of a replicated array, or of a tile
             * cut into several, would keep the whole old allocation: LDA's peak RSS 84 ->
             * 105 MB) */
            int64_t room = dense_pad(o->hi[0] - o->lo[0], tile_row_bytes(a, o));
            int same = t->lo[0] >= o->lo[0] - o->pad_lo && t->hi[0] <= o->hi[0] + o->pad_hi &&
                       t->lo[0] <= o->lo[0] + room && t->hi[0] >= o->hi[0] - room &&
                       t->lo[0] < o->hi[0] && t->hi[0] > o->lo[0];
            for (int d = 1; d < a->ndim && same; d++)
                same = t->lo[d] == o->lo[d] && t->hi[d] == o->hi[d];
            for (int64_t k = 0; k < tn && same; k++) same = from[k] != to;
            if (!same) continue;
            size_t row = tile_row_bytes(a, o);
            char *base = (char *)(o->mem ? o->mem : o->vals);
            t->mem = base;
            t->pad_lo = t->lo[0] - (o->lo[0] - o->pad_lo);
            t->pad_hi = o->hi[0] + o->pad_hi - t->hi[0];
            t->vals = base + (size_t)t->pad_lo * row;
            from[tn] = to;
        }
    }
}

static int dense_repartition(OrnDsmArray *a, const OrnDsmPart *np, OrnDsmTile **out)
{
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank, nd = a->ndim, status;
    size_t es = a->esize;
    const OrnDsmPart *op = &a->part;
    OrnDsmTile *nt = tiles_for(a, np);
    int64_t *from = orn_xcalloc((size_t)np->ntiles + 1, sizeof *from);
    keep_storage(a, nt, np->ntiles, from);
    if ((status = alloc_dense(a, nt, np->ntiles)) != ORN_OK) {
        for (int64_t tn = 0; tn < np->ntiles; tn++)
            if (from[tn] >= 0) nt[tn].mem = nt[tn].vals = NULL;
        tiles_free(nt, np->ntiles);
        free(from);
        return status;
    }
    size_t *scount = orn_xcalloc((size_t)P, sizeof *scount);
    size_t *rcount = orn_xcalloc((size_t)P, sizeof *rcount);
    size_t *pos = orn_xcalloc((size_t)P + 1, sizeof *pos);
    char *sbuf = NULL, *rbuf = NULL;
    int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM];

    /* Sizes, then pack; pairs in (old, new) order; local pairs copied directly. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            size_t tot = 0;
            for (int p = 0; p < P; p++) {
                pos[p] = tot;
                tot += scount[p];
            }
            sbuf = orn_xmalloc(tot ? tot : 1);
            orn_dsm_huge(sbuf, tot);
        }
        for (int64_t to = 0; to < op->ntiles; to++) {
            const OrnDsmTile *ot = &a->tiles[to];
            if (!ot->held) continue;
            for (int64_t tn = 0; tn < np->ntiles; tn++) {
                if (!intersect(nd, ot, &nt[tn], lo, hi)) continue;
                size_t bytes = (size_t)orn_dsm_box_volume(nd, lo, hi) * es;
                for (int p = 0; p < P; p++) {
                    if (pair_source(op, np, to, tn, p) != me) continue;
                    if (p == me) {
                        if (pass == 1 && from[tn] != to) /* else: already in place */
                            box_copy(nd, es, lo, hi, ot->lo, ot->hi, ot->vals, nt[tn].lo, nt[tn].hi,
                                     nt[tn].vals);
                        continue;
                    }
                    if (pass == 0)
                        scount[p] += bytes;
                    else {
                        box_copy(nd, es, lo, hi, ot->lo, ot->hi, ot->vals, lo, hi, sbuf + pos[p]);
                        pos[p] += bytes;
                    }
                }
            }
        }
    }
    status = orn_dsm_alltoallv(ctx, sbuf, scount, (void **)&rbuf, rcount, "repartition");
    if (status) goto fn_exit;
    {
        size_t off = 0;
        for (int p = 0; p < P; p++) {
            pos[p] = off;
            off += rcount[p];
        }
    }
    for (int64_t to = 0; to < op->ntiles; to++) {
        for (int64_t tn = 0; tn < np->ntiles; tn++) {
            int src = pair_source(op, np, to, tn, me);
            if (src < 0 || src == me) continue;
            if (!intersect(nd, &a->tiles[to], &nt[tn], lo, hi)) continue;
            size_t bytes = (size_t)orn_dsm_box_volume(nd, lo, hi) * es;
            box_copy(nd, es, lo, hi, lo, hi, rbuf + pos[src], nt[tn].lo, nt[tn].hi, nt[tn].vals);
            pos[src] += bytes;
        }
    }
    /* the storage kept passes from the old tiles to the new */
    for (int64_t tn = 0; tn < np->ntiles; tn++)
        if (from[tn] >= 0) {
            OrnDsmTile *o = &a->tiles[from[tn]];
            o->mem = o->vals = NULL;
            o->pad_lo = o->pad_hi = 0;
        }
    *out = nt;
    nt = NULL;
fn_exit:
    if (nt)
        for (int64_t tn = 0; tn < np->ntiles; tn++)
            if (from[tn] >= 0) nt[tn].mem = nt[tn].vals = NULL;
    tiles_free(nt, np->ntiles);
    free(from);
    free(sbuf);
    free(rbuf);
    free(scount);
    free(rcount);
    free(pos);
    return status;
}

static int sparse_repartition(OrnDsmArray *a, const OrnDsmPart *np, OrnDsmTile **out)
{
    int status;
    if (orn_dsm_moves_local(a, np)) {
        /* sub-blocks of the tiles held here, or unions of them: no messages (refine.c) */
        OrnDsmTile *nt = tiles_for(a, np);
        orn_dsm_move_local(a, np, nt);
        tiles_compact(a, nt, np->ntiles);
        status = sync_counts(a, nt, np);
        if (status) {
            tiles_free(nt, np->ntiles);
            return status;
        }
        *out = nt;
        return ORN_OK;
    }
    /* records straight from the tiles to the new owners, tiles straight from the records
     * (build.c): no int64 key list, no tile-wide sort, no second copy of the old tiles */
    OrnDsmTile *nt = tiles_for(a, np);
    status = orn_dsm_scatter_tiles(a, np, nt);
    if (!status) {
        tiles_compact(a, nt, np->ntiles);
        status = sync_counts(a, nt, np);
    }
    if (status) {
        tiles_free(nt, np->ntiles);
        return status;
    }
    *out = nt;
    return ORN_OK;
}

int orn_dsm_repartition(OrnDsmArray *a, const OrnDsmPart *np)
{
    if (orn_dsm_part_equal(&a->part, np)) {
        memcpy(a->part.slot, np->slot, (size_t)np->ntiles * sizeof *np->slot);
        return ORN_OK;
    }
    orn_dsm_touch(a);
    if (np->ndim != a->ndim)
        return orn_dsm_fail(a->ctx, ORN_E_INTERNAL,
                            "repartition: partition has %d dimensions, "
                            "array %d",
                            np->ndim, a->ndim);
    for (int d = 0; d < a->ndim; d++)
        if (np->bounds[d][0] != 0 || np->bounds[d][np->nb[d]] != a->dims[d])
            return orn_dsm_fail(a->ctx, ORN_E_INTERNAL,
                                "repartition: boundaries of dimension %d do not span 0..%lld", d,
                                (long long)a->dims[d]);
    OrnDsmTile *nt = NULL;
    int status = a->sparse ? sparse_repartition(a, np, &nt) : dense_repartition(a, np, &nt);
    if (status) return status;
    tiles_free(a->tiles, a->part.ntiles);
    orn_dsm_part_free(&a->part);
    orn_dsm_part_copy(&a->part, np);
    a->tiles = nt;
    a->part_tag = 0;
    return ORN_OK;
}

/* ---------------------------------------------------------------- gather, get, set */

static int replicated_part(const OrnDsmArray *a, OrnDsmPart *p)
{
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1};
    int status = orn_dsm_part_init(p, a->ndim, nb);
    if (status) return status;
    for (int d = 0; d < a->ndim; d++) {
        p->bounds[d][0] = 0;
        p->bounds[d][1] = a->dims[d];
    }
    p->owner[0] = ORN_DSM_ALL;
    return ORN_OK;
}

int orn_dsm_gather(OrnDsmArray *a, int64_t *n, int64_t **keys, void **vals)
{
    OrnDsmArray *c = NULL;
    OrnDsmPart p;
    int status = orn_dsm_copy(a, &c);
    if (status) return status;
    status = replicated_part(a, &p);
    if (!status) status = orn_dsm_repartition(c, &p);
    orn_dsm_part_free(&p);
    if (status) {
        orn_dsm_free(c);
        return status;
    }
    OrnDsmTile *t = &c->tiles[0];
    orn_dsm_tile_unpad(c, 0); /* the caller frees vals */
    *n = t->n;
    if (t->cols) {
        t->keys = orn_xmalloc((size_t)(t->n ? t->n : 1) * (size_t)c->ndim * sizeof *t->keys);
        orn_dsm_tile_keys(c, t, 0, t->n, t->keys);
    }
    *keys = t->keys;
    *vals = t->vals;
    if (!*vals) *vals = orn_xmalloc(1);
    t->keys = NULL;
    t->vals = NULL;
    orn_dsm_free(c);
    return ORN_OK;
}

static int key_inside(OrnDsmArray *a, const int64_t *key, const char *op)
{
    for (int d = 0; d < a->ndim; d++) {
        if (key[d] >= 0 && key[d] < a->dims[d]) continue;
        char ks[160];
        key_str(ks, sizeof ks, key, a->ndim);
        return orn_dsm_fail(a->ctx, ORN_E_RANGE, "%s: key %s outside %s", op, ks, a->name);
    }
    return ORN_OK;
}

int orn_dsm_get(OrnDsmArray *a, const int64_t *key, void *out)
{
    int status = key_inside(a, key, "read");
    if (status) return status;
    int64_t t = orn_dsm_part_tile_of(&a->part, key);
    int o = a->part.owner[t];
    if (o != ORN_DSM_ALL && a->held) { /* a top-level loop's read (held.c) */
        const char *copy;
        status = orn_dsm_held_copy(a, &copy);
        if (status) return status;
        if (copy) {
            memcpy(out, copy + (size_t)orn_dsm_ravel(a, key) * a->esize, a->esize);
            return ORN_OK;
        }
    }
    memset(out, 0, a->esize);
    if (o == ORN_DSM_ALL || o == a->ctx->rank) {
        void *p = orn_dsm_local_ptr(a, key);
        if (p) memcpy(out, p, a->esize);
    }
    if (o == ORN_DSM_ALL) return ORN_OK;
    return orn_dsm_bcast(a->ctx, out, a->esize, o);
}

int orn_dsm_set(OrnDsmArray *a, const int64_t *key, const void *value)
{
    int status = key_inside(a, key, "write");
    if (status) return status;
    orn_dsm_touch(a);
    int64_t t = orn_dsm_part_tile_of(&a->part, key);
    int o = a->part.owner[t];
    if (o == ORN_DSM_ALL || o == a->ctx->rank) {
        void *p = orn_dsm_local_ptr(a, key);
        if (p)
            memcpy(p, value, a->esize);
        else {
            char ks[160];
            key_str(ks, sizeof ks, key, a->ndim);
            status = orn_dsm_fail(a->ctx, ORN_E_RANGE,
                                  "write: %s has no stored element %s (sparse arrays keep "
                                  "their structure)",
                                  a->name, ks);
        }
    }
    if (o == ORN_DSM_ALL) return status;
    return orn_dsm_agree(a->ctx, status);
}

/* ---------------------------------------------------------------- writing elements */

int orn_dsm_write_elements(OrnDsmArray *a, int64_t n, const int64_t *keys, const void *vals)
{
    OrnDsmCtx *ctx = a->ctx;
    orn_dsm_touch(a);
    int P = ctx->size, nd = a->ndim, status = ORN_OK;
    size_t es = a->esize, rec = (size_t)nd * 8 + es;
    size_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    size_t *pos = orn_xcalloc((size_t)P + 1, sizeof *pos);
    int *dest = orn_xmalloc((size_t)(n ? n : 1) * sizeof *dest);
    char *sbuf = NULL, *rbuf = NULL;
    for (int64_t i = 0; i < n; i++) {
        status = key_inside(a, keys + i * nd, "write");
        if (status) break;
        dest[i] = a->part.owner[orn_dsm_part_tile_of(&a->part, keys + i * nd)];
        if (dest[i] == ORN_DSM_ALL)
            for (int p = 0; p < P; p++) sc[p] += rec;
        else
            sc[dest[i]] += rec;
    }
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_exit;
    for (int p = 0; p < P; p++) pos[p + 1] = pos[p] + sc[p];
    sbuf = orn_xmalloc(pos[P] ? pos[P] : 1);
    for (int64_t i = 0; i < n; i++) {
        for (int p = 0; p < P; p++) {
            if (dest[i] != ORN_DSM_ALL && dest[i] != p) continue;
            memcpy(sbuf + pos[p], keys + i * nd, (size_t)nd * 8);
            memcpy(sbuf + pos[p] + (size_t)nd * 8, (const char *)vals + (size_t)i * es, es);
            pos[p] += rec;
        }
    }
    status = orn_dsm_alltoallv(ctx, sbuf, sc, (void **)&rbuf, rc, "write elements");
    if (status) goto fn_exit;
    size_t total = 0;
    for (int p = 0; p < P; p++) total += rc[p];
    for (size_t off = 0; off < total; off += rec) {
        int64_t key[ORN_DSM_MAXDIM];
        memcpy(key, rbuf + off, (size_t)nd * 8);
        void *dst = orn_dsm_local_ptr(a, key);
        if (!dst) {
            char ks[160];
            key_str(ks, sizeof ks, key, nd);
            status =
                orn_dsm_fail(ctx, ORN_E_RANGE, "write: %s has no stored element %s", a->name, ks);
            break;
        }
        memcpy(dst, rbuf + off + (size_t)nd * 8, es);
    }
    status = orn_dsm_agree(ctx, status);
fn_exit:
    free(sc);
    free(rc);
    free(pos);
    free(dest);
    free(sbuf);
    free(rbuf);
    return status;
}
