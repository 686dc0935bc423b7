/* layout.c: how a plan partitions its arrays: the iteration space balanced along the
 * partitioned key dimensions, every "partitioned" array aligned with it (same boundaries
 * along the dimensions its subscripts tie to those keys, same owners), "replicated" arrays
 * copied everywhere. A partition made for a plan is tagged with the plan's signature, so
 * running a loop again (an epoch) moves nothing and recomputes no histogram. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

int rt_repartition(Exec *x, OrnDsmArray *a, const OrnDsmPart *p)
{
    if (orn_dsm_part_equal(&a->part, p)) return orn_dsm_repartition(a, p); /* slots only */
    x->rt->stats.repartitioned++;
    return orn_dsm_repartition(a, p);
}

int rt_blocks(Exec *x, int i)
{
    int c = x->plan->part_count[i];
    if (c > 0) return c;
    return x->rt->blocks_per_rank * x->P;
}

uint64_t rt_plan_sig(const Exec *x, uint64_t salt)
{
    uint64_t v[8] = {(uint64_t)x->plan->strategy,
                     (uint64_t)x->plan->npart,
                     (uint64_t)x->kd[0],
                     (uint64_t)x->kd[1],
                     (uint64_t)x->nb[0],
                     (uint64_t)x->nb[1],
                     (uint64_t)x->P,
                     salt};
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 8; i++) h = (h ^ v[i]) * 1099511628211ULL;
    return h | 1;
}

int rt_single_part(const OrnDsmArray *a, int owner, OrnDsmPart *out)
{
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1};
    int status = orn_dsm_part_init(out, a->ndim, nb);
    if (status) return status;
    for (int d = 0; d < a->ndim; d++) {
        out->bounds[d][0] = 0;
        out->bounds[d][1] = a->dims[d];
    }
    out->owner[0] = owner;
    return ORN_OK;
}

int rt_partition_iter(Exec *x, int np, RtOwnerFn fn)
{
    OrnDsmArray *it = x->iter;
    OrnDsmPart p;
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1}, status;
    for (int i = 0; i < np; i++) {
        x->nb[i] = rt_blocks(x, i);
        nb[x->kd[i]] = x->nb[i];
    }
    uint64_t sig = rt_plan_sig(x, 0);
    if (it->part_tag == sig) return ORN_OK;
    status = orn_dsm_part_init(&p, it->ndim, nb);
    if (status) return rt_fail(x, ORN_E_PLAN, "bad block counts");
    for (int d = 0; d < it->ndim && !status; d++) {
        if (nb[d] > 1)
            status = orn_dsm_balance(it, d, nb[d], p.bounds[d]);
        else {
            p.bounds[d][0] = 0;
            p.bounds[d][1] = it->dims[d];
        }
    }
    for (int64_t t = 0; t < p.ntiles && !status; t++) {
        int grid[ORN_DSM_MAXDIM], g[2] = {-1, -1};
        orn_dsm_part_unravel(&p, t, grid);
        for (int i = 0; i < np; i++) g[i] = grid[x->kd[i]];
        p.owner[t] = fn(x, g);
    }
    if (!status) status = rt_repartition(x, it, &p);
    if (!status) it->part_tag = sig;
    orn_dsm_part_free(&p);
    return status;
}

int rt_aligned_part(Exec *x, OrnDsmArray *a, const int *key_dim, int np, RtOwnerFn fn,
                    OrnDsmPart *out)
{
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1}, map[ORN_DSM_MAXDIM] = {-1, -1, -1, -1};
    const OrnDsmPart *ip = &x->iter->part;
    for (int d = 0; d < a->ndim; d++)
        for (int i = 0; i < np; i++)
            if (key_dim[d] == x->kd[i]) {
                map[d] = i;
                nb[d] = ip->nb[x->kd[i]];
            }
    int status = orn_dsm_part_init(out, a->ndim, nb);
    if (status) return status;
    for (int d = 0; d < a->ndim; d++) {
        int64_t *b = out->bounds[d];
        if (map[d] < 0) {
            b[0] = 0;
            b[1] = a->dims[d];
            continue;
        }
        const int64_t *src = ip->bounds[x->kd[map[d]]];
        for (int k = 0; k < nb[d]; k++) {
            b[k] = src[k] < a->dims[d] ? src[k] : a->dims[d];
            if (k && b[k] < b[k - 1]) b[k] = b[k - 1];
        }
        b[0] = 0;
        b[nb[d]] = a->dims[d];
    }
    for (int64_t t = 0; t < out->ntiles; t++) {
        int grid[ORN_DSM_MAXDIM], g[2] = {-1, -1};
        orn_dsm_part_unravel(out, t, grid);
        for (int d = 0; d < a->ndim; d++)
            if (map[d] >= 0 && g[map[d]] < 0) g[map[d]] = grid[d];
        out->owner[t] = fn(x, g);
    }
    return ORN_OK;
}

int rt_partition_args(Exec *x, int np, RtOwnerFn fn)
{
    const OrnRtPlan *p = x->plan;
    for (int k = 1; k < x->n; k++) {
        const OrnRtPlanArray *pa = &p->arrays[k];
        OrnDsmArray *a = x->loop->args[k].array;
        OrnDsmPart part;
        int status = ORN_OK;
        if (pa->role == ORN_RT_PARTITIONED || (pa->role == ORN_RT_REMOTE && np == 0)) {
            int tied = 0;
            for (int d = 0; d < pa->ndim; d++)
                for (int i = 0; i < np; i++) tied |= pa->key_dim[d] == x->kd[i];
            if (np > 0 && !tied)
                return rt_fail(x, ORN_E_PLAN,
                               "array %s is partitioned but no dimension of it "
                               "is indexed by a partitioned key",
                               pa->name ? pa->name : "?");
            status = rt_aligned_part(x, a, pa->key_dim, np, fn, &part);
        } else if (pa->role == ORN_RT_REPLICATED) {
            status = rt_single_part(a, ORN_DSM_ALL, &part);
        } else {
            continue;
        }
        if (!status) status = rt_repartition(x, a, &part);
        orn_dsm_part_free(&part);
        if (status) return status;
    }
    return ORN_OK;
}

int64_t rt_aligned_tile(Exec *x, int k, int64_t t)
{
    const OrnDsmArray *a = x->vi[k].store;
    const OrnRtPlanArray *pa = &x->plan->arrays[k];
    int git[ORN_DSM_MAXDIM], ga[ORN_DSM_MAXDIM];
    orn_dsm_part_unravel(&x->iter->part, t, git);
    for (int d = 0; d < a->ndim; d++)
        ga[d] = a->part.nb[d] > 1 && pa->key_dim[d] >= 0 ? git[pa->key_dim[d]] : 0;
    return orn_dsm_part_ravel(&a->part, ga);
}
