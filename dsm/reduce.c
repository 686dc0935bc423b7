/* reduce.c: reductions over distributed arrays (dsm.h): sum, dot and norm, each rank's
 * held tiles (a replicated tile counted once, on rank 0) summed in double and combined with
 * an allreduce; dot of arrays partitioned differently moves a copy of the second onto the
 * first's partition. */
#include "dsm_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

double orn_dsm_to_f64(OrnDsmType t, const void *p)
{
    switch (t) {
    case ORN_DSM_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        return (double)v;
    }
    case ORN_DSM_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        return (double)v;
    }
    case ORN_DSM_F32: {
        float v;
        memcpy(&v, p, 4);
        return (double)v;
    }
    case ORN_DSM_F64: {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    }
    return 0;
}

/* Combine per-tile partials (each contributed by exactly one rank) in tile order. */
static int tile_total(OrnDsmArray *a, double *part, double *out)
{
    int status = orn_dsm_allreduce_f64(a->ctx, part, (size_t)a->part.ntiles, ORN_DSM_SUM);
    if (status) return status;
    double s = 0;
    for (int64_t t = 0; t < a->part.ntiles; t++) s += part[t];
    *out = s;
    return ORN_OK;
}

static int contributes(const OrnDsmArray *a, int64_t t)
{
    int o = a->part.owner[t];
    return a->tiles[t].held && (o != ORN_DSM_ALL || a->ctx->rank == 0);
}

int orn_dsm_sum(OrnDsmArray *a, double *out)
{
    double *part = orn_xcalloc((size_t)a->part.ntiles, sizeof *part);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        if (!contributes(a, t)) continue;
        const char *v = a->tiles[t].vals;
        double s = 0;
        for (int64_t i = 0; i < a->tiles[t].n; i++)
            s += orn_dsm_to_f64(a->type, v + (size_t)i * a->esize);
        part[t] = s;
    }
    int status = tile_total(a, part, out);
    free(part);
    return status;
}

int orn_dsm_dot(OrnDsmArray *a, OrnDsmArray *b, double *out)
{
    OrnDsmCtx *ctx = a->ctx;
    OrnDsmArray *tmp = NULL;
    int status = ORN_OK;
    if (a->ndim != b->ndim)
        return orn_dsm_fail(ctx, ORN_E_ARG, "dot: %d and %d dimensions", a->ndim, b->ndim);
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d])
            return orn_dsm_fail(ctx, ORN_E_ARG, "dot: extents differ in dimension %d (%lld, %lld)",
                                d, (long long)a->dims[d], (long long)b->dims[d]);
    if (!orn_dsm_part_equal(&a->part, &b->part)) {
        status = orn_dsm_copy(b, &tmp);
        if (!status) status = orn_dsm_repartition(tmp, &a->part);
        if (status) goto fn_exit;
        b = tmp;
    }
    double *part = orn_xcalloc((size_t)a->part.ntiles, sizeof *part);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        if (!contributes(a, t)) continue;
        OrnDsmTile *ta = &a->tiles[t], *tb = &b->tiles[t];
        /* Iterate the sparse side (a if both are), look up the other. */
        OrnDsmArray *it = a->sparse || !b->sparse ? a : b, *other = it == a ? b : a;
        OrnDsmTile *ti = it == a ? ta : tb, *to = it == a ? tb : ta;
        double s = 0;
        for (int64_t i = 0; i < ti->n; i++) {
            const char *vi = (const char *)ti->vals + (size_t)i * it->esize;
            const void *vo = NULL;
            if (!other->sparse && !it->sparse)
                vo = (const char *)to->vals + (size_t)i * other->esize;
            else {
                int64_t key[ORN_DSM_MAXDIM];
                orn_dsm_tile_key(it, ti, i, key);
                vo = orn_dsm_local_ptr(other, key);
            }
            if (vo) s += orn_dsm_to_f64(it->type, vi) * orn_dsm_to_f64(other->type, vo);
        }
        part[t] = s;
    }
    status = tile_total(a, part, out);
    free(part);
fn_exit:
    orn_dsm_free(tmp);
    return status;
}

int orn_dsm_norm(OrnDsmArray *a, double *out)
{
    double s = 0;
    int status = orn_dsm_dot(a, a, &s);
    if (!status) *out = sqrt(s);
    return status;
}
