/* sched_1d.c: the 1d strategy: blocks along one key dimension, no ordering between them.
 *
 * The iteration space is cut along key dimension k into B blocks (B = blocks_per_rank * P
 * by default) with histogram-balanced boundaries; rank r owns the contiguous blocks
 * [r B / P, (r+1) B / P) (a space already in bands along k keeps them, layout.c keep_bands:
 * one per rank, or m P dealt cyclically, block g on rank g mod P). Every partitioned array is cut
 * the same way along the dimensions its subscripts tie to k and lives with the same ranks, so a
 * block touches only local data; prefetched arrays are read through a per-block cache and buffers
 * collect deltas.
 *
 * Cost model (N iterations, t per iteration, P ranks, R rounds per rank, per round K
 * distinct prefetched keys and D distinct buffered keys per rank, latency a, byte time b):
 *   T = (N / P) t (1 + imbalance)
 *     + R [ 4 (P-1) a + 32 K b          prefetch: requests and replies, two alltoallv
 *         + 2 (P-1) a + 16 D b ]        flush: one alltoallv of (key, delta)
 * Without prefetching and buffers there is no communication at all (R = 0). A round is a
 * block by default, or flush_every iterations; the imbalance is that of the histogram.
 */
#include "rt_int.h"

static int owner1d(const Exec *x, const int *g)
{
    if (g[0] < 0) return 0;
    if (x->cyclic) return g[0] % x->P;       /* bands kept as dealt (layout.c, keep_bands) */
    int sub = x->sub[0] > 1 ? x->sub[0] : 1; /* sub-blocks of a block stay together */
    return (int)((int64_t)(g[0] / sub) * x->P / (x->nb[0] / sub));
}

static int setup(Exec *x)
{
    rt_choose_blocking(x, 1);
    int status = rt_partition_all(x, 1, owner1d);
    x->nsteps = 1;
    return status;
}

static void work(Exec *x, int64_t s, int rank, WorkList *out)
{
    (void)s;
    rt_work_owned(x, rank, out);
}

const OrnRtSched orn_rt_sched_1d = {
    .name = "1d",
    .setup = setup,
    .step_begin = rt_step_noop,
    .step_end = rt_step_noop,
    .work = work,
    .finish = rt_finish_noop,
    .cleanup = NULL,
    .step_sync = 0,
};
