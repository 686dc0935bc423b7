/* reduce.c: reductions over distributed arrays (dsm.h): sum, dot and norm.
 *
 * Every rank adds the values of its held tiles (a replicated tile counted once, on rank 0)
 * -- the elements converted to double, for dot their products formed in double -- into an
 * exact accumulator (xsum.h), the ranks' accumulators are summed word by word with an
 * allreduce, and the total is rounded once. So the result is the correctly rounded sum of
 * those doubles, which depends on neither the partition, the rank count, the storage layout
 * nor the order of the tiles: the same bits at -n 1 and -n 64.
 *
 * Why not a fixed tree over fixed-size chunks of the global order: under a 2-D or column
 * partition the elements of one chunk of row-major order lie in tiles of several ranks,
 * interleaved, so summing a chunk in order would need the elements moved; an exact sum has
 * no order to keep. Cost: a few integer operations per element (about as much as the
 * element's conversion) and one allreduce of ORN_XSUM_WORDS int64s (560 bytes a rank)
 * instead of one double per tile. dot of arrays partitioned differently still moves a copy
 * of the second onto the first's partition. */
#include "dsm_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "xsum.h"

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

/* Merge the ranks' accumulators (integer sums: any order gives the same words) and round. */
static int xsum_total(OrnDsmCtx *ctx, OrnXsum *acc, double *out)
{
    orn_xsum_normalize(acc);
    int status = orn_dsm_allreduce_i64(ctx, acc->w, ORN_XSUM_WORDS, ORN_DSM_SUM);
    if (status) return status;
    *out = orn_xsum_round(acc);
    return ORN_OK;
}

static int contributes(const OrnDsmArray *a, int64_t t)
{
    int o = a->part.owner[t];
    return a->tiles[t].held && (o != ORN_DSM_ALL || a->ctx->rank == 0);
}

/* One tile's values into acc, the conversion chosen once per tile. */
static void add_values(OrnXsum *acc, OrnDsmType type, const void *vals, int64_t n)
{
    switch (type) {
    case ORN_DSM_F32:
        for (int64_t i = 0; i < n; i++) orn_xsum_add(acc, (double)((const float *)vals)[i]);
        break;
    case ORN_DSM_F64:
        for (int64_t i = 0; i < n; i++) orn_xsum_add(acc, ((const double *)vals)[i]);
        break;
    case ORN_DSM_I32:
        for (int64_t i = 0; i < n; i++) orn_xsum_add(acc, (double)((const int32_t *)vals)[i]);
        break;
    case ORN_DSM_I64:
        for (int64_t i = 0; i < n; i++) orn_xsum_add(acc, (double)((const int64_t *)vals)[i]);
        break;
    }
}

int orn_dsm_sum(OrnDsmArray *a, double *out)
{
    OrnXsum acc;
    orn_xsum_init(&acc);
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (contributes(a, t)) add_values(&acc, a->type, a->tiles[t].vals, a->tiles[t].n);
    return xsum_total(a->ctx, &acc, out);
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
    OrnXsum acc;
    orn_xsum_init(&acc);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        if (!contributes(a, t)) continue;
        OrnDsmTile *ta = &a->tiles[t], *tb = &b->tiles[t];
        /* Iterate the sparse side (a if both are), look up the other. */
        OrnDsmArray *it = a->sparse || !b->sparse ? a : b, *other = it == a ? b : a;
        OrnDsmTile *ti = it == a ? ta : tb, *to = it == a ? tb : ta;
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
            if (vo)
                orn_xsum_add(&acc, orn_dsm_to_f64(it->type, vi) * orn_dsm_to_f64(other->type, vo));
        }
    }
    status = xsum_total(ctx, &acc, out);
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
