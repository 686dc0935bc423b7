/* test_plan_check.c: the plan check that the analyzer and the runtime share
 * (runtime/plan_check.c), on hand-built plans: plans the runtime runs pass, and every rule
 * refuses what it should, naming the array at fault (or the plan) with the runtime's
 * message. The runtime side (orn_rt_run refusing a plan before any communication) is
 * covered by tests/dsm/test_loops.c; that every plan the analyzer emits passes, by
 * test_analyze.c. */
#include <string.h>

#include "check.h"
#include "plan.h"

static OrnRtPlanArray arr(const char *name, OrnRtRole role, int ndim, int k0, int k1, int ro)
{
    OrnRtPlanArray a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.role = role;
    a.ndim = ndim;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) a.key_dim[d] = -1;
    a.key_dim[0] = k0;
    if (ndim > 1) a.key_dim[1] = k1;
    a.read_only = ro;
    return a;
}

static OrnRtPlan plan2(OrnRtStrategy st, OrnRtPlanArray *a, int n)
{
    OrnRtPlan p;
    memset(&p, 0, sizeof p);
    p.version = ORN_RT_PLAN_VERSION;
    p.file = "t.orn";
    p.strategy = p.inner = st;
    p.nkeys = 2;
    p.npart = st == ORN_RT_1D ? 1 : st == ORN_RT_SERIAL ? 0 : 2;
    p.part_dims[0] = 0;
    p.part_dims[1] = 1;
    for (int i = 0; i < ORN_RT_MAXDIM; i++) p.transform[i][i] = 1;
    p.narrays = n;
    p.arrays = a;
    return p;
}

/* The check's verdict: the index it names (-1: passes) and its message contains `want`. */
static void expect(const OrnRtPlan *p, const OrnRtPlanFacts *f, int at, const char *want, int line)
{
    char msg[256] = "";
    int got = orn_rt_plan_check(p, f, msg, (int)sizeof msg);
    CHECK_MSG(got == at, "line %d: the check names %d, expected %d (%s)", line, got, at, msg);
    if (want) CHECK_MSG(strstr(msg, want) != NULL, "line %d: '%s' lacks '%s'", line, msg, want);
}
#define EXPECT(p, f, at, want) expect(p, f, at, want, __LINE__)

static void test_passes(void)
{
    /* SGD MF, 2d: W partitioned by u, H rotated with i; F sparse rotated, no halo */
    OrnRtPlanArray a[] = {
        arr("ratings", ORN_RT_PARTITIONED, 2, 0, 1, 1), arr("W", ORN_RT_PARTITIONED, 2, 0, -1, 0),
        arr("H", ORN_RT_ROTATED, 2, 1, -1, 0), arr("F", ORN_RT_ROTATED, 2, 1, -1, 1)};
    OrnRtPlanFacts f[4] = {{1, 0}, {0, 0}, {0, 0}, {1, 1}};
    OrnRtPlan p = plan2(ORN_RT_2D, a, 4);
    EXPECT(&p, f, -1, NULL);
    EXPECT(&p, NULL, -1, NULL);
    /* the same arrays in a wavefront (edit distance: A[i - 1] partitioned, B[j - 1]
     * rotated read-only with a halo, col_best[j] rotated and written without one) */
    OrnRtPlanArray w[] = {
        arr("D", ORN_RT_PARTITIONED, 2, 0, 1, 0), arr("A", ORN_RT_PARTITIONED, 1, 0, -1, 1),
        arr("B", ORN_RT_ROTATED, 1, 1, -1, 1), arr("col_best", ORN_RT_ROTATED, 1, 1, -1, 0)};
    w[0].halo_lo[0] = w[0].halo_lo[1] = 1;
    w[1].halo_lo[0] = 1;
    w[2].halo_lo[0] = 1;
    p = plan2(ORN_RT_2D_ORDERED, w, 4);
    EXPECT(&p, NULL, -1, NULL);
    /* serial takes anything the iteration space allows */
    OrnRtPlanArray s[] = {arr("D", ORN_RT_PARTITIONED, 2, 0, 1, 0),
                          arr("X", ORN_RT_PARTITIONED, 1, -1, -1, 0)};
    p = plan2(ORN_RT_SERIAL, s, 2);
    EXPECT(&p, NULL, -1, NULL);
    /* unimodular skew with prefetched and remote arrays */
    OrnRtPlanArray u[] = {arr("U", ORN_RT_PARTITIONED, 2, 0, 1, 0),
                          arr("C", ORN_RT_PREFETCHED, 2, 0, 1, 1)};
    p = plan2(ORN_RT_UNIMODULAR, u, 2);
    p.inner = ORN_RT_2D_ORDERED;
    p.transform[1][0] = 1;
    EXPECT(&p, NULL, -1, NULL);
}

static void test_refusals(void)
{
    OrnRtPlanArray a[] = {arr("R", ORN_RT_PARTITIONED, 2, 0, 1, 1),
                          arr("W", ORN_RT_PARTITIONED, 2, 0, -1, 0),
                          arr("H", ORN_RT_ROTATED, 2, 1, -1, 0)};
    OrnRtPlan p = plan2(ORN_RT_1D, a, 3);
    EXPECT(&p, NULL, 2, "array H: only the 2d and 2d_ordered strategies rotate arrays");
    p = plan2(ORN_RT_UNIMODULAR, a, 3);
    p.inner = ORN_RT_2D_ORDERED;
    EXPECT(&p, NULL, 1, "array W: unimodular loops take only prefetched, replicated");
    /* rotated arrays: tied to k1 alone, once */
    p = plan2(ORN_RT_2D, a, 3);
    a[2].key_dim[1] = 0;
    EXPECT(&p, NULL, 2, "2d: rotated array H must be indexed by key 1 in exactly one dimension");
    a[2].key_dim[1] = 1;
    EXPECT(&p, NULL, 2, "2d: rotated array H must be indexed by key 1 in exactly one dimension");
    a[2].key_dim[1] = -1;
    /* a written or sparse rotated array has no halo along k1; a read-only dense one may */
    a[2].halo_lo[0] = 1;
    EXPECT(&p, NULL, 2, "array H: a rotated array that is written is read within its block only");
    a[2].read_only = 1;
    EXPECT(&p, NULL, -1, NULL);
    OrnRtPlanFacts f[3] = {{1, 0}, {0, 0}, {1, 0}};
    EXPECT(&p, f, 2, "array H: a rotated array that is sparse is read within its block only");
    a[2].halo_hi[1] = ORN_RT_HALO_ANY;
    EXPECT(&p, NULL, 2, "array H: a rotated array is read within its block and a bounded halo");
    a[2] = arr("H", ORN_RT_ROTATED, 2, 1, -1, 0);
    /* partitioned arrays follow k0 */
    a[1].key_dim[0] = 1;
    EXPECT(&p, NULL, 1, "2d: partitioned array W must be indexed by key 0");
    p.strategy = p.inner = ORN_RT_2D_ORDERED;
    EXPECT(&p, NULL, 1, "2d_ordered: partitioned array W must be indexed by key 0");
    a[1].key_dim[0] = 0;
    /* row views of sparse arrays: a whole copy, or the block's own rows */
    OrnRtPlanArray r[] = {arr("ratings", ORN_RT_PARTITIONED, 2, 0, 1, 1),
                          arr("F", ORN_RT_PREFETCHED, 2, -1, -1, 1)};
    OrnRtPlanFacts rf[2] = {{1, 0}, {1, 1}};
    OrnRtPlan q = plan2(ORN_RT_1D, r, 2);
    EXPECT(&q, rf, 1, "array F: row views of a sparse array need it replicated");
    rf[1].rows = 0; /* element reads of a prefetched sparse array are fine */
    EXPECT(&q, rf, -1, NULL);
    rf[1].rows = 1;
    r[1].role = ORN_RT_REPLICATED;
    EXPECT(&q, rf, -1, NULL);
    r[1] = arr("F", ORN_RT_PARTITIONED, 2, 0, -1, 1);
    EXPECT(&q, rf, -1, NULL);
    r[1].halo_lo[0] = 1; /* F[u - 1, :]: not the block's rows */
    EXPECT(&q, rf, 1,
           "array F: row views of a sparse array read the rows of the block's own tile, "
           "but the loop reads F at rows of other blocks too");
    /* the iteration space and the plan itself */
    a[0].key_dim[1] = 0;
    EXPECT(&p, NULL, 0, "iteration space R: dimension 1 must map to key 1");
    a[0].key_dim[1] = 1;
    a[0].role = ORN_RT_PREFETCHED;
    EXPECT(&p, NULL, 0, "the iteration space R must be partitioned");
    a[0].role = ORN_RT_PARTITIONED;
    p = plan2(ORN_RT_2D, a, 3);
    p.part_dims[1] = 0;
    EXPECT(&p, NULL, 3, "the two partitioned key dimensions are the same");
    p = plan2(ORN_RT_2D, a, 3);
    p.npart = 1;
    EXPECT(&p, NULL, 3, "strategy needs 2 partitioned key dimensions, plan has 1");
    p = plan2(ORN_RT_2D, a, 3);
    p.version = 1;
    EXPECT(&p, NULL, 3, "plan version 1");
    OrnRtPlanArray u[] = {arr("U", ORN_RT_PARTITIONED, 2, 0, 1, 0)};
    p = plan2(ORN_RT_UNIMODULAR, u, 1);
    p.inner = ORN_RT_1D;
    p.npart = 1;
    p.transform[0][1] = 2;
    p.transform[1][0] = 1; /* det 1 - 2 = -1: fine */
    EXPECT(&p, NULL, -1, NULL);
    p.transform[1][1] = 3; /* det 3 - 2 = 1 */
    EXPECT(&p, NULL, -1, NULL);
    p.transform[1][1] = 4; /* det 2 */
    EXPECT(&p, NULL, 1, "the transform is not an integer matrix with determinant +-1");
    p.transform[1][1] = 1;
    p.inner = ORN_RT_SERIAL;
    EXPECT(&p, NULL, 1, "unimodular: inner strategy serial");
    OrnRtPlanAcc acc = {"s", (OrnRtAccKind)7, ORN_RT_F64};
    p = plan2(ORN_RT_2D, a, 3);
    p.naccs = 1;
    p.accs = &acc;
    EXPECT(&p, NULL, 3, "accumulator 0: bad kind or type");
}

int main(void)
{
    test_passes();
    test_refusals();
    if (!check_failures) printf("plan check: every rule refuses what it should\n");
    return CHECK_DONE();
}
