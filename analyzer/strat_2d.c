/* strat_2d.c: two-dimensional partitioning with rotation (unordered loops).
 *
 * Schedule: the iteration space is cut into B x B blocks along key dimensions p and q
 * (B is a run-time parameter, by default 2 x the number of ranks, so that a rank can send one
 * block while it computes the next). Rank r owns the blocks (s, *) with s = r mod P. At step
 * t every rank runs one block (s, (s + t) mod B); between steps the blocks of the arrays
 * indexed by q move to the next rank. Blocks that run at the same time share no p-block and
 * no q-block.
 *
 * Legal when two iterations that conflict are never in concurrent blocks: every dependence
 * vector is 0 in p or 0 in q (it then stays in one row or one column of blocks, which run
 * one after the other). Only for unordered loops: the rotation does not follow key order.
 *
 * Cost model: ORN_COST_BASE_2D = 2 for the B synchronised steps. Arrays aligned with p stay
 * (partitioned); arrays aligned only with q rotate (ORN_COST_ROTATED each). So the
 * dimension that stays is the one that indexes more (or more expensive) arrays: SGD MF
 * keeps W (indexed by users) and rotates H (indexed by items) when both tie, keeping the
 * first key. */
#include "strategy_int.h"

bool orn_plan_2d_legal(const OrnPlanProblem *pb, const OrnDepMat *T, int p, int q, int *blocker,
                       int *nviol)
{
    int bad = 0, first = -1;
    for (int i = 0; i < pb->nvecs; i++) {
        OrnDepVec t;
        orn_dep_transform(pb->nkeys, T, &pb->vecs[i], &t);
        bool ok = !pb->ordered && (orn_dep_range_is_zero(t.d[p]) || orn_dep_range_is_zero(t.d[q]));
        if (!ok) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (blocker) *blocker = first;
    if (nviol) *nviol = bad;
    return bad == 0;
}
