/* strat_wavefront.c: 2d_ordered, a wavefront over 2-D blocks.
 *
 * Schedule: the iteration space is cut into B x B blocks along key dimensions p and q
 * (B a run-time parameter, by default 2 x the number of ranks). Block (s, t) runs at step
 * s + t, after blocks (s-1, t) and (s, t-1); rank s mod P owns row s, so row s's data for
 * column t arrives from rank s-1 as a pipeline. Inside a block iterations run in
 * lexicographic key order.
 *
 * Legal when every dependence, taken from the earlier to the later iteration in key order
 * (the lexicographically positive split of each vector), is nonnegative in both p and q:
 * the later iteration's block is then the same block (run in key order) or one reached by
 * steps that only increase s and t, so it runs at a later step. Blocks of one step differ
 * in s and t in opposite directions, so they never conflict. Also used for unordered loops
 * that neither 1d nor 2d can run: key order is one of the orders they allow.
 *
 * Cost model: ORN_COST_BASE_WAVEFRONT = 20: with B blocks per dimension the wavefront has
 * 2B - 1 steps and ranks idle while it fills and drains (B = 2P keeps half of them busy on
 * average), on top of the roles' cost as for 2d (arrays aligned only with q move down the
 * pipeline: rotated). */
#include "strategy_int.h"

bool orn_plan_wavefront_legal(const OrnPlanProblem *pb, const OrnDepMat *T, int p, int q,
                              int *blocker, int *nviol)
{
    int bad = 0, first = -1;
    for (int i = 0; i < pb->nvecs; i++) {
        OrnDepVec pieces[2 * ORN_DEP_MAXDIM];
        int n = orn_plan_oriented(pb, T, &pb->vecs[i], pieces);
        bool ok = true;
        for (int j = 0; j < n && ok; j++)
            ok = pieces[j].d[p].lo >= 0 && pieces[j].d[q].lo >= 0 && orn_dep_vec_lexpos(&pieces[j]);
        if (!ok) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (blocker) *blocker = first;
    if (nviol) *nviol = bad;
    return bad == 0;
}
