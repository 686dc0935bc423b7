/* partition.c: range partitions (tile grids) and histogram balancing.
 *
 * A partition is replicated metadata: every rank holds the same grid, boundaries and
 * owners, so any rank can find the owner of any key without asking (O(log nb) per
 * dimension).
 *
 * Balancing (orn_dsm_balance): boundaries along one dimension from a global histogram of
 * the stored coordinates, so that tiles hold about equal numbers of elements even for
 * power-law data. The histogram has B = min(extent, 65536) bins of equal width w; it is
 * summed over ranks (integers: exact, rank-count independent) and boundary k is put on the
 * bin edge whose prefix count is closest to k * N / nb. Cost: one allreduce of B int64
 * (2 (P-1) a + 8 B P b) plus a pass over the local elements. The imbalance of a tile is at
 * most one bin's count, which for skewed data is dominated by the heaviest single row.
 */
#include "dsm_int.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"

int orn_dsm_part_init(OrnDsmPart *p, int ndim, const int nb[])
{
    memset(p, 0, sizeof *p);
    if (ndim < 1 || ndim > ORN_DSM_MAXDIM) return ORN_E_ARG;
    p->ndim = ndim;
    p->ntiles = 1;
    for (int d = 0; d < ORN_DSM_MAXDIM; d++) {
        p->nb[d] = 1;
        if (d < ndim) {
            if (nb[d] < 1) return ORN_E_ARG;
            p->nb[d] = nb[d];
            p->bounds[d] = orn_xcalloc((size_t)nb[d] + 1, sizeof(int64_t));
            p->ntiles *= nb[d];
        }
    }
    p->owner = orn_xcalloc((size_t)p->ntiles, sizeof *p->owner);
    p->slot = orn_xcalloc((size_t)p->ntiles, sizeof *p->slot);
    return ORN_OK;
}

void orn_dsm_part_free(OrnDsmPart *p)
{
    for (int d = 0; d < ORN_DSM_MAXDIM; d++) free(p->bounds[d]);
    free(p->owner);
    free(p->slot);
    memset(p, 0, sizeof *p);
}

int orn_dsm_part_copy(OrnDsmPart *dst, const OrnDsmPart *src)
{
    int status = orn_dsm_part_init(dst, src->ndim, src->nb);
    if (status) return status;
    for (int d = 0; d < src->ndim; d++)
        memcpy(dst->bounds[d], src->bounds[d], ((size_t)src->nb[d] + 1) * sizeof(int64_t));
    memcpy(dst->owner, src->owner, (size_t)src->ntiles * sizeof *dst->owner);
    memcpy(dst->slot, src->slot, (size_t)src->ntiles * sizeof *dst->slot);
    return ORN_OK;
}

int orn_dsm_part_equal(const OrnDsmPart *a, const OrnDsmPart *b)
{
    if (a->ndim != b->ndim || a->ntiles != b->ntiles) return 0;
    for (int d = 0; d < a->ndim; d++) {
        if (a->nb[d] != b->nb[d]) return 0;
        if (memcmp(a->bounds[d], b->bounds[d], ((size_t)a->nb[d] + 1) * sizeof(int64_t))) return 0;
    }
    return memcmp(a->owner, b->owner, (size_t)a->ntiles * sizeof *a->owner) == 0;
}

void orn_dsm_bounds_uniform(int64_t *bounds, int64_t extent, int nb)
{
    for (int k = 0; k <= nb; k++)
        bounds[k] = (extent / nb) * k + ((extent % nb) * k) / nb; /* floor(extent k / nb) */
}

int64_t orn_dsm_part_tile_of(const OrnDsmPart *p, const int64_t *key)
{
    int64_t t = 0;
    for (int d = 0; d < p->ndim; d++) {
        t = t * p->nb[d] + orn_dsm_last_le(p->bounds[d], p->nb[d], key[d]);
    }
    return t;
}

void orn_dsm_part_unravel(const OrnDsmPart *p, int64_t t, int *grid)
{
    for (int d = p->ndim - 1; d >= 0; d--) {
        grid[d] = (int)(t % p->nb[d]);
        t /= p->nb[d];
    }
}

int64_t orn_dsm_part_ravel(const OrnDsmPart *p, const int *grid)
{
    int64_t t = 0;
    for (int d = 0; d < p->ndim; d++) t = t * p->nb[d] + grid[d];
    return t;
}

int orn_dsm_part_default(OrnDsmCtx *ctx, int ndim, const int64_t *dims, OrnDsmPart *p)
{
    int nb[ORN_DSM_MAXDIM] = {ctx->size, 1, 1, 1};
    int status = orn_dsm_part_init(p, ndim, nb);
    if (status) return status;
    for (int d = 0; d < ndim; d++) orn_dsm_bounds_uniform(p->bounds[d], dims[d], p->nb[d]);
    for (int64_t t = 0; t < p->ntiles; t++) p->owner[t] = (int)t;
    return ORN_OK;
}

/* A histogram of coordinates along one dimension of extent E: B <= 65536 bins of width w. */
typedef struct Hist {
    int64_t B, w;
    int64_t *h;
} Hist;

static void hist_init(Hist *H, int64_t extent)
{
    /* ceiling divisions that cannot overflow: extents reach INT64_MAX */
    H->B = extent < 65536 ? extent : 65536;
    H->w = extent / H->B + (extent % H->B != 0);
    H->B = extent / H->w + (extent % H->w != 0);
    H->h = orn_xcalloc((size_t)H->B + 1, sizeof *H->h);
}

/* Collective: the ranks' histograms summed, boundaries at the bin edges whose prefix counts
 * are nearest k N / nb; frees the histogram. */
static int hist_finish(OrnDsmCtx *ctx, int64_t extent, int nb, int64_t *bounds, Hist *H)
{
    int64_t B = H->B, w = H->w, *h = H->h;
    bounds[0] = 0;
    bounds[nb] = extent;
    int status = orn_dsm_allreduce_i64(ctx, h, (size_t)B, ORN_DSM_SUM);
    if (status) goto fn_exit;
    int64_t N = 0;
    for (int64_t b = 0; b < B; b++) N += h[b];
    /* prefix(e) = elements in bins < e; walk edges once. */
    int64_t e = 0, pre = 0;
    for (int k = 1; k < nb; k++) {
        double target = (double)N * k / nb;
        while (e < B && (double)(pre + h[e]) <= target) pre += h[e++];
        /* Edge e has prefix pre <= target; edge e+1 has pre + h[e] > target. */
        int64_t edge = e;
        if (e < B && (double)(pre + h[e]) - target < target - (double)pre) {
            pre += h[e];
            edge = ++e;
        }
        int64_t bnd = edge < B ? edge * w : extent; /* (B - 1) w < extent: no overflow */
        if (bnd > extent) bnd = extent;
        if (bnd < bounds[k - 1]) bnd = bounds[k - 1];
        bounds[k] = bnd;
    }
fn_exit:
    free(h);
    H->h = NULL;
    return status;
}

/* Boundaries of an empty extent: all 0, still collective (the ranks' call patterns stay
 * identical). */
static int empty_bounds(OrnDsmCtx *ctx, int nb, int64_t *bounds)
{
    for (int k = 0; k <= nb; k++) bounds[k] = 0;
    int64_t dummy = 0;
    return orn_dsm_allreduce_i64(ctx, &dummy, 1, ORN_DSM_SUM);
}

/* Boundaries from a histogram of coordinates `coord(i)` of n local elements. */
static int hist_bounds(OrnDsmCtx *ctx, int64_t extent, int nb, int64_t *bounds, const int64_t *keys,
                       int64_t n, int stride, int dim)
{
    if (extent <= 0) return empty_bounds(ctx, nb, bounds);
    Hist H;
    hist_init(&H, extent);
    for (int64_t i = 0; i < n; i++) H.h[keys[i * stride + dim] / H.w]++;
    return hist_finish(ctx, extent, nb, bounds, &H);
}

int orn_dsm_balance(OrnDsmArray *a, int dim, int nb, int64_t *bounds)
{
    OrnDsmCtx *ctx = a->ctx;
    if (!a->sparse) {
        orn_dsm_bounds_uniform(bounds, a->dims[dim], nb);
        return ORN_OK;
    }
    int64_t extent = a->dims[dim];
    if (extent <= 0) return empty_bounds(ctx, nb, bounds);
    /* Count each stored element once (replicated tiles only on rank 0), straight from the
     * tiles: CSR rows by their offsets, columns as stored. */
    Hist H;
    hist_init(&H, extent);
    int64_t w = H.w, *h = H.h;
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        if (!tl->held || (a->part.owner[t] == ORN_DSM_ALL && ctx->rank != 0)) continue;
        if (tl->cols && dim == 0) {
            for (int64_t r = 0; r < tl->hi[0] - tl->lo[0]; r++)
                h[(tl->lo[0] + r) / w] += tl->rowptr[r + 1] - tl->rowptr[r];
        } else if (tl->cols && dim == 1) {
            for (int64_t i = 0; i < tl->n; i++) h[(tl->lo[1] + tl->cols[i]) / w]++;
        } else if (tl->cols) {
            /* key 2 of runs: decoded */
            int64_t k[3 * 256];
            for (int64_t i = 0; i < tl->n; i += 256) {
                int64_t m = tl->n - i < 256 ? tl->n - i : 256;
                orn_dsm_tile_keys(a, tl, i, m, k);
                for (int64_t j = 0; j < m; j++) h[k[j * a->ndim + dim] / w]++;
            }
        } else {
            for (int64_t i = 0; i < tl->n; i++) h[tl->keys[i * a->ndim + dim] / w]++;
        }
    }
    return hist_finish(ctx, extent, nb, bounds, &H);
}

int orn_dsm_balance_with(OrnDsmCtx *ctx, int64_t extent, int nb, int64_t *bounds,
                         orn_dsm_hist_fn fill, void *ud)
{
    if (extent <= 0) return empty_bounds(ctx, nb, bounds);
    Hist H;
    hist_init(&H, extent);
    fill(H.h, H.w, ud);
    return hist_finish(ctx, extent, nb, bounds, &H);
}

int orn_dsm_balance_keys(OrnDsmCtx *ctx, int64_t extent, int nb, int64_t *bounds,
                         const int64_t *keys, int64_t n, int ndim, int dim)
{
    return hist_bounds(ctx, extent, nb, bounds, keys, n, ndim, dim);
}
