/* sched_2d_wavefront.c: the 2d_ordered strategy: 2-D blocks run as a wavefront.
 *
 * The iteration space is cut into B0 x B1 blocks along the partitioned key dimensions
 * (k0, k1). Block (s, t) runs at step s + t, on rank s mod P (rows dealt cyclically, so
 * every rank has work once the wavefront has filled). Dependence vectors of an ordered loop
 * that gets this strategy are non-negative in k0 and k1, so a block depends only on blocks
 * of earlier steps, and blocks of one anti-diagonal are independent: running steps in
 * order, and each block's elements in key order, gives exactly the result of the serial
 * loop in key order, at any rank count.
 * Steps are separated by a collective (the round's prefetch exchange, or a barrier), so a
 * read of another block -- through the prefetch cache, or fetched on demand -- sees every
 * write of earlier steps and none of later ones.
 *
 * Cost model (N iterations, t per iteration, P ranks, B0 = B1 = B blocks, halo of H keys
 * per block, latency a, byte time b):
 *   T = (2B - 1) steps x [ ceil(active blocks / P) (N / B^2) t
 *                          + 4 (P-1) a + 32 H b     halo exchange (prefetch)
 *                          or ceil(log2 P) a ]      barrier when nothing is prefetched
 * Parallel efficiency ~ B / (B + P - 1) for B0 = B1 = B and B a multiple of P.
 */
#include "rt_int.h"

static int owner_cyclic(const Exec *x, const int *g)
{
    return g[0] < 0 ? 0 : g[0] % x->P;
}

static int setup(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    for (int k = 1; k < x->n; k++) {
        if (p->arrays[k].role != ORN_RT_PARTITIONED) continue;
        int tied0 = 0;
        for (int d = 0; d < p->arrays[k].ndim; d++) tied0 |= p->arrays[k].key_dim[d] == x->kd[0];
        if (!tied0)
            return rt_fail(x, ORN_E_PLAN,
                           "2d_ordered: partitioned array %s must be indexed by "
                           "key %d (make it prefetched or replicated otherwise)",
                           p->arrays[k].name ? p->arrays[k].name : "?", x->kd[0]);
    }
    int status = rt_partition_iter(x, 2, owner_cyclic);
    if (!status) status = rt_partition_args(x, 2, owner_cyclic);
    x->halo = 1;
    x->nsteps = (int64_t)x->nb[0] + x->nb[1] - 1;
    return status;
}

static int noop(Exec *x, int64_t s)
{
    (void)x;
    (void)s;
    return ORN_OK;
}

static void work(Exec *x, int64_t s, int rank, WorkList *out)
{
    const OrnDsmArray *it = x->iter;
    for (int64_t b0 = rank; b0 < x->nb[0]; b0 += x->P) {
        int64_t b1 = s - b0;
        if (b1 < 0 || b1 >= x->nb[1]) continue;
        int grid[ORN_DSM_MAXDIM] = {0, 0, 0, 0};
        grid[x->kd[0]] = (int)b0;
        grid[x->kd[1]] = (int)b1;
        int64_t t = orn_dsm_part_ravel(&it->part, grid);
        rt_work_push(out, t, 0, it->tiles[t].n);
    }
}

static int finish(Exec *x)
{
    (void)x;
    return ORN_OK;
}

const OrnRtSched orn_rt_sched_2d_wavefront = {
    .name = "2d_ordered",
    .setup = setup,
    .step_begin = noop,
    .step_end = noop,
    .work = work,
    .finish = finish,
    .cleanup = NULL,
    .step_sync = 1,
};
