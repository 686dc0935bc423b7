/* held.c: whole copies of dense arrays (dsm.h): the whole array onto every rank in one
 * exchange, and top-level reads of an array that nothing writes meanwhile served from one.
 *
 * Top-level code reads a dist array's element as a collective of its own (orn_dsm_get: the
 * owner broadcasts it), 1-1000 us each with the rank count: a top-level loop copying a
 * 3000 x 40 array into a local one element by element made 120,000 of them. The compiler
 * holds the arrays such a loop reads when its body writes no dist array (codegen/c_hold.c,
 * cg_hold_open). While held, the reads are counted, every rank alike (top-level code runs
 * on every rank alike); once they have cost about what copying the array costs (one read
 * per 64 KiB of it, at least 16 reads) and the array is at most the hold's limit, every
 * rank reads it whole in one exchange and serves the held reads from its copy. The copy
 * goes at the last release. A single read stays one collective: a loop that reads a few
 * elements of a huge array never copies it. */
#include "dsm_int.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define HELD_BYTES_PER_READ (64 << 10)
#define HELD_MIN_READS      16

int orn_dsm_read_whole(OrnDsmArray *a, void *out)
{
    if (a->sparse)
        return orn_dsm_fail(a->ctx, ORN_E_ARG, "array %s: sparse, no whole copy", a->name);
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    size_t es = a->esize;
    /* the tiles this rank owns, packed in tile order (each its box row-major), then every
     * rank's in one allgather */
    size_t mine = 0;
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (a->tiles[t].held && a->part.owner[t] == me) mine += (size_t)a->tiles[t].n;
    char *sbuf = orn_xmalloc((mine ? mine : 1) * es), *all = NULL;
    size_t at = 0;
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (a->tiles[t].held && a->part.owner[t] == me && a->tiles[t].n) {
            memcpy(sbuf + at, a->tiles[t].vals, (size_t)a->tiles[t].n * es);
            at += (size_t)a->tiles[t].n * es;
        }
    size_t *pos = orn_xcalloc((size_t)P + 1, sizeof *pos);
    if (P > 1) status = orn_dsm_allgatherv(ctx, sbuf, at, (void **)&all, pos + 1, "whole copy");
    for (int q = 0; q < P; q++) pos[q + 1] += pos[q];
    for (int64_t t = 0; t < a->part.ntiles && !status; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        int o = a->part.owner[t];
        const char *src;
        if (tl->n == 0) continue;
        if (o == ORN_DSM_ALL || o == me || P == 1) {
            if (!tl->held) continue;
            src = tl->vals;
        } else {
            src = all + pos[o];
            pos[o] += (size_t)tl->n * es;
        }
        orn_dsm_tile_copy(a, t, 0, a->dims[0], out, 0, (void *)src, 0, ORN_DSM_TO_ROWS);
    }
    free(pos);
    free(sbuf);
    free(all);
    return status;
}

void orn_dsm_hold(OrnDsmArray *a, size_t max)
{
    if (!a) return;
    if (!a->held++) {
        a->held_reads = 0;
        a->held_max = max;
    }
}

void orn_dsm_release(OrnDsmArray *a)
{
    if (!a || !a->held || --a->held) return;
    free(a->held_copy);
    a->held_copy = NULL;
}

int orn_dsm_held_copy(OrnDsmArray *a, const char **copy)
{
    *copy = NULL;
    if (!a->held || a->sparse || a->ctx->size == 1) return ORN_OK;
    if (a->held_copy) {
        *copy = a->held_copy;
        return ORN_OK;
    }
    size_t bytes = (size_t)a->nnz * a->esize;
    a->held_reads++;
    if (a->held_reads < HELD_MIN_READS || (size_t)a->held_reads * HELD_BYTES_PER_READ < bytes ||
        bytes > a->held_max)
        return ORN_OK;
    char *c = orn_xmalloc(bytes ? bytes : 1);
    int64_t span = orn_tl_begin(a->ctx->tl, ORN_TL_TRANSFER, "whole copy");
    int status = orn_dsm_read_whole(a, c);
    orn_tl_end(a->ctx->tl, span);
    if (status) {
        free(c);
        return status;
    }
    *copy = a->held_copy = c;
    return ORN_OK;
}

void orn_dsm_release_all(OrnDsmCtx *ctx)
{
    for (int i = 0; i < ctx->nreg; i++) {
        OrnDsmArray *a = ctx->reg[i];
        if (!a || !a->held) continue;
        a->held = 1;
        orn_dsm_release(a);
    }
}
