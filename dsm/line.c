/* line.c: one line of a dense 2-D array for top-level code (dsm.h): a row or a column read
 * whole onto every rank in one exchange, and written back by the ranks that hold it.
 *
 * Top-level code runs on every rank alike, so a view statement there (`r[:, 0] += a * X[:, j]`)
 * needs every element of the views on every rank, and every rank computes the same result.
 * Read element by element, each element is a collective of its own (orn_dsm_get: the owner
 * broadcasts it), 1-1000 us each with the rank count; read as a line, each owner sends its
 * pieces to every other rank once: one exchange whose sizes every rank knows from the
 * partition. Written back, each rank stores the elements it holds from its copy, which
 * equals every other rank's: no message at all. */
#include "dsm_int.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"

/* Tile t holds part of the line through `fixed` along `dim`. */
static int crosses(const OrnDsmArray *a, int64_t t, int dim, int64_t fixed)
{
    const OrnDsmTile *tl = &a->tiles[t];
    int other = 1 - dim;
    return tl->lo[other] <= fixed && fixed < tl->hi[other] && tl->hi[dim] > tl->lo[dim];
}

/* The line's elements in tile t (held): a pointer to the first and the stride in elements. */
static char *piece(const OrnDsmArray *a, int64_t t, int dim, int64_t fixed, int64_t *stride)
{
    const OrnDsmTile *tl = &a->tiles[t];
    int64_t w = tl->hi[1] - tl->lo[1];
    *stride = dim == 1 ? 1 : w;
    int64_t off = dim == 1 ? (fixed - tl->lo[0]) * w : fixed - tl->lo[1];
    return (char *)tl->vals + (size_t)off * a->esize;
}

/* n elements between a strided piece and a packed run, either way. */
static void move(char *to, int64_t ts, const char *from, int64_t fs, int64_t n, size_t es)
{
    if (ts == 1 && fs == 1) {
        memcpy(to, from, (size_t)n * es);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(to + (size_t)(i * ts) * es, from + (size_t)(i * fs) * es, es);
}

static int bad_line(const OrnDsmArray *a, int dim, int64_t fixed)
{
    if (a->ndim == 2 && !a->sparse && (dim == 0 || dim == 1) && fixed >= 0 &&
        fixed < a->dims[1 - dim])
        return ORN_OK;
    return orn_dsm_fail(a->ctx, ORN_E_ARG, "array %s: no line %lld along dimension %d", a->name,
                        (long long)fixed, dim);
}

int orn_dsm_read_line(OrnDsmArray *a, int dim, int64_t fixed, void *out)
{
    int status = bad_line(a, dim, fixed);
    if (status) return status;
    const char *copy;
    status = orn_dsm_held_copy(a, &copy); /* a top-level loop's read (held.c) */
    if (status) return status;
    if (copy) {
        int64_t key[2] = {dim == 1 ? fixed : 0, dim == 0 ? fixed : 0};
        move(out, 1, copy + (size_t)orn_dsm_ravel(a, key) * a->esize, dim == 1 ? 1 : a->dims[1],
             a->dims[dim], a->esize);
        return ORN_OK;
    }
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank;
    size_t es = a->esize;
    /* what each rank sends everyone: its pieces, packed in tile order */
    size_t *at = orn_xcalloc((size_t)P + 1, sizeof *at);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        int o = a->part.owner[t];
        if (o != ORN_DSM_ALL && crosses(a, t, dim, fixed))
            at[o + 1] += (size_t)(a->tiles[t].hi[dim] - a->tiles[t].lo[dim]) * es;
    }
    for (int q = 0; q < P; q++) at[q + 1] += at[q];
    char *all = orn_xmalloc(at[P] ? at[P] : 1);
    OrnDsmSwap x = orn_dsm_swap_new(P);
    char *mine = all + at[me];
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        int o = a->part.owner[t];
        if ((o != me && o != ORN_DSM_ALL) || !crosses(a, t, dim, fixed)) continue;
        const OrnDsmTile *tl = &a->tiles[t];
        int64_t n = tl->hi[dim] - tl->lo[dim], s;
        const char *from = piece(a, t, dim, fixed, &s);
        char *to = o == me ? mine : (char *)out + (size_t)tl->lo[dim] * es; /* replicated */
        move(to, 1, from, s, n, es);
        if (o == me) mine += (size_t)n * es;
    }
    for (int q = 0; q < P; q++) {
        if (q == me) continue;
        x.sp[q] = all + at[me];
        x.sn[q] = at[me + 1] - at[me];
        x.rp[q] = all + at[q];
        x.rn[q] = at[q + 1] - at[q];
    }
    status = orn_dsm_exchange(ctx, &x, NULL, "a top-level view");
    for (int64_t t = 0; t < a->part.ntiles && !status; t++) { /* each rank's, in tile order */
        int o = a->part.owner[t];
        if (o == ORN_DSM_ALL || !crosses(a, t, dim, fixed)) continue;
        const OrnDsmTile *tl = &a->tiles[t];
        int64_t n = tl->hi[dim] - tl->lo[dim];
        move((char *)out + (size_t)tl->lo[dim] * es, 1, all + at[o], 1, n, es);
        at[o] += (size_t)n * es;
    }
    orn_dsm_swap_free(&x);
    free(all);
    free(at);
    return status;
}

int orn_dsm_write_line(OrnDsmArray *a, int dim, int64_t fixed, const void *in)
{
    int status = bad_line(a, dim, fixed);
    if (status) return status;
    orn_dsm_touch(a);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        if (!a->tiles[t].held || !crosses(a, t, dim, fixed)) continue;
        const OrnDsmTile *tl = &a->tiles[t];
        int64_t s;
        char *to = piece(a, t, dim, fixed, &s);
        move(to, s, (const char *)in + (size_t)tl->lo[dim] * a->esize, 1, tl->hi[dim] - tl->lo[dim],
             a->esize);
    }
    return ORN_OK;
}
