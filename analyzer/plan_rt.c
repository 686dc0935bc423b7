/* plan_rt.c: plans in the runtime's terms, and the fallback from roles the runtime's plan
 * check refuses (plan_rt.h). */
#include "plan_rt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

static int halo_width(long long c)
{
    return c <= 0 ? 0 : c > INT_MAX ? INT_MAX : (int)c;
}

void orn_plan_rt_array(const OrnPlanProblem *pb, int k, OrnRole r, OrnRtPlanArray *out)
{
    const OrnPlanArray *a = &pb->arrays[k];
    memset(out, 0, sizeof *out);
    out->name = a->name;
    out->role = (OrnRtRole)r; /* the same numbering */
    out->ndim = a->ndims;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) out->key_dim[d] = -1;
    for (int d = 0; d < a->ndims && d < ORN_RT_MAXDIM; d++) {
        if (a->is_space)
            out->key_dim[d] = d;
        else if (!a->is_buffer && a->key_of_dim[d] >= 0 && a->coef[d] == 1)
            out->key_dim[d] = a->key_of_dim[d];
        if (out->key_dim[d] < 0) continue; /* never cut: a block spans the dimension */
        /* The iteration space may also be read at elements that are not the iteration's
         * own (A[n - 1 - i]): anywhere. */
        if (a->key_of_dim[d] != out->key_dim[d]) {
            out->halo_lo[d] = out->halo_hi[d] = ORN_RT_HALO_ANY;
            continue;
        }
        out->halo_lo[d] = halo_width(-a->halo_lo[d]);
        out->halo_hi[d] = halo_width(a->halo_hi[d]);
        if (a->win_lo[d]) { /* a window known at run time: some halo on either side */
            if (out->halo_lo[d] < 1) out->halo_lo[d] = 1;
            if (out->halo_hi[d] < 1) out->halo_hi[d] = 1;
        }
    }
    /* written elements, not buffer deltas: the runtime knows its buffers' targets */
    out->read_only = !a->is_buffer && !a->written;
}

/* A problem without its iteration space first (the strategies' unit tests describe loops
 * by their other arrays) gets the one the runtime always has: dense, one dimension per key. */
static int space_offset(const OrnPlanProblem *pb)
{
    return pb->narrays > 0 && pb->arrays[0].is_space ? 0 : 1;
}

void orn_plan_rt_plan(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnRole *roles,
                      OrnRtPlanArray *arrays, OrnRtPlan *out)
{
    int off = space_offset(pb);
    memset(out, 0, sizeof *out);
    out->version = ORN_RT_PLAN_VERSION;
    out->strategy = (OrnRtStrategy)s->strategy;
    out->inner = (OrnRtStrategy)(s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy);
    out->ordered = pb->ordered;
    out->nkeys = pb->nkeys;
    if (s->strategy != ORN_STRAT_SERIAL) {
        out->npart = s->ndims > 2 ? 2 : s->ndims;
        for (int i = 0; i < out->npart; i++) out->part_dims[i] = s->dims[i];
    }
    for (int i = 0; i < ORN_RT_MAXDIM; i++)
        for (int j = 0; j < ORN_RT_MAXDIM; j++)
            out->transform[i][j] = s->transformed ? s->T.m[i][j] : i == j;
    if (off) {
        memset(&arrays[0], 0, sizeof arrays[0]);
        arrays[0].name = "(iteration space)";
        arrays[0].ndim = pb->nkeys;
        for (int d = 0; d < ORN_RT_MAXDIM; d++) arrays[0].key_dim[d] = d < pb->nkeys ? d : -1;
        arrays[0].read_only = 1;
    }
    for (int k = 0; k < pb->narrays; k++) orn_plan_rt_array(pb, k, roles[k], &arrays[off + k]);
    out->narrays = pb->narrays + off;
    out->arrays = arrays;
}

/* The next role to try for array a after role r was refused, or r when there is none. */
static OrnRole fallback(const OrnPlanProblem *pb, const OrnPlanArray *a, OrnRole r)
{
    if (a->is_space || a->is_buffer) return r;
    if (a->written) return ORN_ROLE_REMOTE;
    OrnRole u = orn_plan_unaligned_role(pb, a);
    if (r != u && r != ORN_ROLE_REPLICATED) return u;
    return ORN_ROLE_REPLICATED;
}

bool orn_plan_rt_runnable(const OrnPlanProblem *pb, const OrnPlanSchedule *s, OrnRole *roles,
                          char (*why)[ORN_PLAN_WHY], char *plan_why)
{
    int n = pb->narrays, off = space_offset(pb);
    OrnRtPlanArray *arrays = orn_xmalloc((size_t)(n + 1) * sizeof *arrays);
    OrnRtPlanFacts *facts = orn_xcalloc((size_t)(n + 1), sizeof *facts);
    char msg[ORN_PLAN_WHY];
    bool ok = false;
    for (int k = 0; k < n; k++) {
        facts[off + k].sparse = pb->arrays[k].sparse;
        facts[off + k].rows = pb->arrays[k].rows;
        if (why) why[k][0] = 0;
    }
    /* each array moves down its fallbacks (at most two steps), so this ends */
    for (int round = 0; round <= 2 * n + 1; round++) {
        OrnRtPlan plan;
        orn_plan_rt_plan(pb, s, roles, arrays, &plan);
        int bad = orn_rt_plan_check(&plan, facts, msg, (int)sizeof msg) - off;
        if (bad < -off) {
            ok = true;
            break;
        }
        /* the iteration space and the plan itself have no other role */
        bool array = bad >= (off ? 0 : 1) && bad < n;
        if (!array || fallback(pb, &pb->arrays[bad], roles[bad]) == roles[bad]) {
            if (plan_why) memcpy(plan_why, msg, sizeof msg);
            break;
        }
        if (why && !why[bad][0]) memcpy(why[bad], msg, sizeof msg);
        roles[bad] = fallback(pb, &pb->arrays[bad], roles[bad]);
    }
    free(arrays);
    free(facts);
    return ok;
}
