/* sched_serial.c: the serial strategy: one rank runs every iteration in key order.
 *
 * The iteration space and every partitioned array are moved to rank 0 as single tiles
 * (the plan asked for no parallelism, so the data follows the one worker); prefetched
 * arrays stay where they are and are read through the cache, replicated ones are copied.
 *
 * Cost model (N iterations, t per iteration, V bytes of partitioned data, P ranks):
 *   T = N t + V (a + b) to gather (once; later runs find the data in place)
 *       + per round (buffers / prefetch): the round's collectives, 4 (P-1) a + b bytes.
 * No speedup by design; the compiler warns when it picks this.
 */
#include "rt_int.h"

static int owner0(const Exec *x, const int *g)
{
    (void)x;
    (void)g;
    return 0;
}

static int setup(Exec *x)
{
    int status = rt_partition_all(x, 0, owner0);
    x->nsteps = 1;
    return status;
}

static void work(Exec *x, int64_t s, int rank, WorkList *out)
{
    (void)s;
    if (rank == 0) rt_work_push(out, 0, 0, x->iter->tiles[0].n);
}

const OrnRtSched orn_rt_sched_serial = {
    .name = "serial",
    .setup = setup,
    .step_begin = rt_step_noop,
    .step_end = rt_step_noop,
    .work = work,
    .finish = rt_finish_noop,
    .cleanup = NULL,
    .step_sync = 0,
};
