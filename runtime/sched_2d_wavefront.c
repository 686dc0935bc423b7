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
    int status = rt_partition_all(x, 2, owner_cyclic);
    x->halo = 1;
    x->nsteps = (int64_t)x->nb[0] + x->nb[1] - 1;
    return status;
}

const OrnRtSched orn_rt_sched_2d_wavefront = {
    .name = "2d_ordered",
    .setup = setup,
    .step_begin = rt_step_noop,
    .step_end = rt_step_noop,
    .work = rt_work_wavefront,
    .finish = rt_finish_noop,
    .cleanup = NULL,
    .step_sync = 1,
};
