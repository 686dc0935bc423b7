/* snapshot.c: this rank's share of the DSM as a byte stream, for checkpoints
 * (stdlib/ckpt.c, docs/runtime.md section 15).
 *
 * Written: the registry (its next id and every live array by id), and per array its type,
 * extents, name, tag, partition (replicated: in every rank's stream), tile table (boxes,
 * counts, holders) and the storage of the tiles this rank holds, in the form they have
 * (dense, dense with ghost-row room, CSR, runs, listed keys). Read back into a context with
 * an empty registry at the same rank, every array gets the id, partition, tag and bytes it
 * had, so loops run on it exactly as they would have (reductions follow the partition, and
 * a loop finds its arrays where it left them).
 *
 * Local: no communication. Native byte order and layout: the checkpoint's manifest makes
 * sure the same build of the same program reads it. A stream that does not parse (which a
 * checksum already rules out for what this module wrote) is ORN_E_FORMAT. */
#include "dsm_int.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define SNAP_MAGIC   0x534d5344u /* "DSMS" */
#define SNAP_VERSION 1u

enum { HAS_VALS = 1, HAS_KEYS = 2, HAS_ROWPTR = 4, HAS_COLS = 8, HAS_ROOM = 16 };

/* ---------------------------------------------------------------- writing */

static int put(const OrnDsmIo *io, const void *p, size_t n)
{
    return n ? io->put(io->ud, p, n) : 0;
}

static int put_i64(const OrnDsmIo *io, int64_t v)
{
    return put(io, &v, sizeof v);
}

static int put_i32(const OrnDsmIo *io, int32_t v)
{
    return put(io, &v, sizeof v);
}

static int64_t tile_rows(const OrnDsmTile *t)
{
    return t->hi[0] - t->lo[0];
}

/* Bytes of one row of dimension 0 of the tile's box (dense room is counted in rows). */
static size_t row_bytes(const OrnDsmArray *a, const OrnDsmTile *t)
{
    size_t row = a->esize;
    for (int d = 1; d < a->ndim; d++) row *= (size_t)(t->hi[d] - t->lo[d]);
    return row;
}

static int write_tile(const OrnDsmArray *a, const OrnDsmTile *t, const OrnDsmIo *io)
{
    int flags = (t->vals ? HAS_VALS : 0) | (t->keys ? HAS_KEYS : 0) | (t->rowptr ? HAS_ROWPTR : 0) |
                (t->cols ? HAS_COLS : 0) | (t->mem ? HAS_ROOM : 0);
    if (!t->held) flags = 0;
    int rc = put(io, t->lo, sizeof t->lo) || put(io, t->hi, sizeof t->hi) || put_i64(io, t->n) ||
             put_i32(io, t->held) || put_i32(io, flags) || put_i64(io, t->pad_lo) ||
             put_i64(io, t->pad_hi);
    if (rc || !flags) return rc;
    size_t n = (size_t)t->n;
    if (flags & HAS_VALS) rc = rc || put(io, t->vals, n * a->esize);
    if (flags & HAS_KEYS) rc = rc || put(io, t->keys, n * (size_t)a->ndim * sizeof *t->keys);
    if (flags & HAS_ROWPTR)
        rc = rc || put(io, t->rowptr, (size_t)(tile_rows(t) + 1) * sizeof *t->rowptr);
    if (flags & HAS_COLS) rc = rc || put(io, t->cols, n * sizeof *t->cols);
    return rc;
}

static int write_array(const OrnDsmArray *a, const OrnDsmIo *io)
{
    const OrnDsmPart *p = &a->part;
    int rc = put_i32(io, (int32_t)a->type) || put_i32(io, a->ndim) || put_i32(io, a->sparse) ||
             put_i32(io, a->runs) || put(io, a->dims, sizeof a->dims) || put_i64(io, a->nnz) ||
             put(io, &a->part_tag, sizeof a->part_tag) || put(io, a->name, sizeof a->name) ||
             put(io, p->nb, sizeof p->nb);
    for (int d = 0; d < a->ndim && !rc; d++)
        rc = put(io, p->bounds[d], ((size_t)p->nb[d] + 1) * sizeof(int64_t));
    if (!rc)
        rc = put(io, p->owner, (size_t)p->ntiles * sizeof *p->owner) ||
             put(io, p->slot, (size_t)p->ntiles * sizeof *p->slot);
    for (int64_t t = 0; t < p->ntiles && !rc; t++) rc = write_tile(a, &a->tiles[t], io);
    return rc;
}

int orn_dsm_snap_write(OrnDsmCtx *ctx, const OrnDsmIo *io)
{
    uint32_t head[2] = {SNAP_MAGIC, SNAP_VERSION};
    int rc = put(io, head, sizeof head) || put_i32(io, ctx->nreg) || put_i32(io, ctx->rank) ||
             put_i32(io, ctx->size);
    for (int id = 0; id < ctx->nreg && !rc; id++) {
        const OrnDsmArray *a = ctx->reg[id];
        rc = put_i32(io, a != NULL);
        if (a && !rc) rc = write_array(a, io);
    }
    return rc ? orn_dsm_fail(ctx, ORN_E_IO, "snapshot: cannot write the arrays") : ORN_OK;
}

/* ---------------------------------------------------------------- reading */

static int get(const OrnDsmIo *io, void *p, size_t n)
{
    return n ? io->get(io->ud, p, n) : 0;
}

static int get_i64(const OrnDsmIo *io, int64_t *v)
{
    return get(io, v, sizeof *v);
}

static int get_i32(const OrnDsmIo *io, int32_t *v)
{
    return get(io, v, sizeof *v);
}

/* A buffer of n elements of size es read from the stream (at least one byte allocated, so
 * that a present pointer stays non-NULL for empty tiles). */
static int get_block(const OrnDsmIo *io, size_t n, size_t es, void **out)
{
    *out = NULL;
    if (es && n > SIZE_MAX / es / 2) return 1;
    size_t bytes = n * es;
    *out = orn_xmalloc(bytes ? bytes : 1);
    return get(io, *out, bytes);
}

static int bad(OrnDsmCtx *ctx, const char *what)
{
    return orn_dsm_fail(ctx, ORN_E_FORMAT, "snapshot: %s", what);
}

static int read_tile(OrnDsmArray *a, OrnDsmTile *t, const OrnDsmIo *io)
{
    int32_t held = 0, flags = 0;
    if (get(io, t->lo, sizeof t->lo) || get(io, t->hi, sizeof t->hi) || get_i64(io, &t->n) ||
        get_i32(io, &held) || get_i32(io, &flags) || get_i64(io, &t->pad_lo) ||
        get_i64(io, &t->pad_hi))
        return bad(a->ctx, "truncated tile");
    t->held = held;
    int64_t rows = tile_rows(t);
    if (t->n < 0 || rows < 0 || t->pad_lo < 0 || t->pad_hi < 0 || (!held && flags))
        return bad(a->ctx, "bad tile");
    size_t n = (size_t)t->n;
    void *p = NULL;
    int rc = 0;
    if (flags & HAS_VALS) {
        if (flags & HAS_ROOM) {
            size_t row = row_bytes(a, t), room = (size_t)(t->pad_lo + t->pad_hi) * row;
            if (n > SIZE_MAX / 2 / a->esize || room > SIZE_MAX / 2) return bad(a->ctx, "bad tile");
            t->mem = orn_xmalloc(n * a->esize + room);
            t->vals = (char *)t->mem + (size_t)t->pad_lo * row;
            rc = get(io, t->vals, n * a->esize);
        } else {
            rc = get_block(io, n, a->esize, &p);
            t->vals = p; /* owned by the tile (and freed with it) even when truncated */
        }
    }
    if (!rc && (flags & HAS_KEYS)) {
        rc = get_block(io, n, (size_t)a->ndim * sizeof *t->keys, &p);
        t->keys = p;
    }
    if (!rc && (flags & HAS_ROWPTR)) {
        rc = get_block(io, (size_t)rows + 1, sizeof *t->rowptr, &p);
        t->rowptr = p;
    }
    if (!rc && (flags & HAS_COLS)) {
        rc = get_block(io, n, sizeof *t->cols, &p);
        t->cols = p;
    }
    return rc ? bad(a->ctx, "truncated tile") : ORN_OK;
}

static int read_array(OrnDsmCtx *ctx, int id, const OrnDsmIo *io, OrnDsmArray **out)
{
    int32_t type = 0, ndim = 0, sparse = 0, runs = 0;
    int64_t dims[ORN_DSM_MAXDIM];
    OrnDsmArray *a = NULL;
    if (get_i32(io, &type) || get_i32(io, &ndim) || get_i32(io, &sparse) || get_i32(io, &runs) ||
        get(io, dims, sizeof dims))
        return bad(ctx, "truncated array");
    if (type < ORN_DSM_I32 || type > ORN_DSM_F64 || ndim < 1 || ndim > ORN_DSM_MAXDIM)
        return bad(ctx, "bad array");
    /* registered at the next id, which the caller made this array's */
    int status = orn_dsm_array_new(ctx, (OrnDsmType)type, ndim, dims, sparse, &a);
    if (status) return status;
    if (a->id != id) {
        status = orn_dsm_fail(ctx, ORN_E_INTERNAL, "snapshot: array id %d, expected %d", a->id, id);
        goto fn_fail;
    }
    a->runs = runs;
    int nb[ORN_DSM_MAXDIM];
    if (get_i64(io, &a->nnz) || get(io, &a->part_tag, sizeof a->part_tag) ||
        get(io, a->name, sizeof a->name) || get(io, nb, sizeof nb)) {
        status = bad(ctx, "truncated array");
        goto fn_fail;
    }
    a->name[sizeof a->name - 1] = '\0';
    int64_t ntiles = 1;
    for (int d = 0; d < ndim; d++) {
        if (nb[d] < 1 || nb[d] > (1 << 24) || ntiles > (INT64_C(1) << 32) / nb[d]) {
            status = bad(ctx, "bad partition");
            goto fn_fail;
        }
        ntiles *= nb[d];
    }
    if (orn_dsm_part_init(&a->part, ndim, nb)) {
        status = bad(ctx, "bad partition");
        goto fn_fail;
    }
    OrnDsmPart *p = &a->part;
    for (int d = 0; d < ndim; d++)
        if (get(io, p->bounds[d], ((size_t)nb[d] + 1) * sizeof(int64_t))) {
            status = bad(ctx, "truncated partition");
            goto fn_fail;
        }
    if (get(io, p->owner, (size_t)p->ntiles * sizeof *p->owner) ||
        get(io, p->slot, (size_t)p->ntiles * sizeof *p->slot)) {
        status = bad(ctx, "truncated partition");
        goto fn_fail;
    }
    a->tiles = orn_xcalloc((size_t)p->ntiles, sizeof *a->tiles);
    for (int64_t t = 0; t < p->ntiles; t++) {
        status = read_tile(a, &a->tiles[t], io);
        if (status) goto fn_fail;
    }
    *out = a;
    return ORN_OK;
fn_fail:
    orn_dsm_free(a);
    return status;
}

int orn_dsm_snap_read(OrnDsmCtx *ctx, const OrnDsmIo *io)
{
    uint32_t head[2];
    int32_t nreg = 0, rank = 0, size = 0;
    if (ctx->nreg != 0) return orn_dsm_fail(ctx, ORN_E_INTERNAL, "snapshot: arrays exist already");
    if (get(io, head, sizeof head) || get_i32(io, &nreg) || get_i32(io, &rank) ||
        get_i32(io, &size))
        return bad(ctx, "truncated header");
    if (head[0] != SNAP_MAGIC || head[1] != SNAP_VERSION || nreg < 0)
        return bad(ctx, "not a DSM snapshot of this version");
    if (rank != ctx->rank || size != ctx->size)
        return orn_dsm_fail(ctx, ORN_E_FORMAT,
                            "snapshot: written by rank %d of %d, read by rank %d of %d", (int)rank,
                            (int)size, ctx->rank, ctx->size);
    ctx->capreg = nreg > 16 ? nreg : 16;
    ctx->reg = orn_xrealloc(ctx->reg, (size_t)ctx->capreg * sizeof *ctx->reg);
    for (int id = 0; id < nreg; id++) {
        int32_t present = 0;
        OrnDsmArray *a = NULL;
        ctx->nreg = id; /* the next id orn_dsm_array_new hands out */
        ctx->reg[id] = NULL;
        if (get_i32(io, &present)) return bad(ctx, "truncated registry");
        if (present) {
            int status = read_array(ctx, id, io, &a);
            if (status) return status;
        }
        ctx->nreg = id + 1;
    }
    ctx->nreg = nreg;
    return ORN_OK;
}
