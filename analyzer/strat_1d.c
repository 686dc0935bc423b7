/* strat_1d.c: one-dimensional partitioning.
 *
 * Schedule: the iteration space is cut into B blocks along key dimension p (B is a run-time
 * parameter, by default 2 x the number of ranks); each rank runs its blocks, each block in
 * key order. No block waits for another.
 *
 * Legal when no two iterations in different blocks conflict: every dependence vector is
 * exactly 0 in dimension p. For ordered loops (and after a transform) iterations of one
 * block must also run in an order that keeps each dependence, so every oriented vector must
 * be lexicographically positive in the coordinates the block is traversed in.
 *
 * Cost model: ORN_COST_BASE_1D = 0: blocks never synchronize while the loop runs. Arrays
 * aligned with p are partitioned and cost nothing; every other array is replicated,
 * prefetched, buffered or written remotely (strategy_int.h). Among legal dimensions the one
 * that leaves the fewest (and cheapest) arrays unpartitioned wins. */
#include "strategy_int.h"

bool orn_plan_1d_legal(const OrnPlanProblem *pb, const OrnDepMat *T, int p, int *blocker,
                       int *nviol)
{
    int bad = 0, first = -1;
    for (int i = 0; i < pb->nvecs; i++) {
        bool ok = true;
        if (!pb->ordered) {
            OrnDepVec t;
            orn_dep_transform(pb->nkeys, T, &pb->vecs[i], &t);
            ok = orn_dep_range_is_zero(t.d[p]);
        } else {
            OrnDepVec pieces[2 * ORN_DEP_MAXDIM];
            int n = orn_plan_oriented(pb, T, &pb->vecs[i], pieces);
            for (int j = 0; j < n && ok; j++)
                ok = orn_dep_range_is_zero(pieces[j].d[p]) && orn_dep_vec_lexpos(&pieces[j]);
        }
        if (!ok) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (blocker) *blocker = first;
    if (nviol) *nviol = bad;
    return bad == 0;
}
