/* strat_unimodular.c: a unimodular change of key coordinates, then 1d, 2d or 2d_ordered.
 *
 * Schedule: new coordinates k~ = T k for an integer matrix T with determinant +-1 (so it
 * maps the iterations one to one onto integer points); the iteration space is blocked in
 * the new coordinates and run by the inner schedule, each block in lexicographic order of
 * k~. The classic case is the 9-point Gauss-Seidel stencil: its dependences (1, -1), (1, 0),
 * (1, 1), (0, 1) are not all nonnegative, but after the skew [[1, 0], [1, 1]] (new
 * coordinates (i, i + j)) they are (1, 0), (1, 1), (1, 2), (0, 1) and the wavefront is legal.
 *
 * Search: for each pair of key dimensions (p, q), 2 x 2 blocks embedded in the identity:
 * skews [[1, 0], [f, 1]] and [[1, f], [0, 1]], and each of them followed by an interchange,
 * for f = 1, -1, 2, -2, 3, -3, in that order (small factors keep blocks compact). Each T is
 * tried with every inner schedule on the transformed vectors T v; legality is checked
 * exactly as for the plain schedules (with lexicographic positivity of T v inside blocks).
 *
 * Cost model: the inner schedule's cost + ORN_COST_BASE_TRANSFORM = 5: blocks are
 * parallelograms in the original keys, so blocks hold uneven numbers of iterations and
 * arrays are only partitioned with the iteration space when they are aligned with every key
 * the partition rows of T mention. The best inner schedule wins (1d, then 2d, then
 * 2d_ordered; then cost; then the smaller factor). */
#include "strategy_int.h"

#include <stdlib.h>

static void embed(OrnDepMat *T, int p, int q, int a, int b, int c, int d)
{
    orn_plan_identity(T);
    T->m[p][p] = a;
    T->m[p][q] = b;
    T->m[q][p] = c;
    T->m[q][q] = d;
}

/* Try every inner schedule under T; keep the best in *best. */
static void try_transform(const OrnPlanProblem *pb, const OrnDepMat *T, int f,
                          OrnPlanSchedule *best, int *best_f, bool *found)
{
    int n = pb->nkeys;
    for (int cls = 0; cls < 3; cls++) {
        for (int p = 0; p < n; p++) {
            for (int q = cls == 0 ? p : 0; q < (cls == 0 ? p + 1 : n); q++) {
                if (cls > 0 && q == p) continue;
                bool ok;
                OrnPlanSchedule s = {0};
                s.strategy = ORN_STRAT_UNIMODULAR;
                s.transformed = true;
                s.T = *T;
                s.dims[0] = p;
                s.dims[1] = q;
                if (cls == 0) {
                    s.inner = ORN_STRAT_1D;
                    s.ndims = 1;
                    ok = orn_plan_1d_legal(pb, T, p, NULL, NULL);
                } else if (cls == 1) {
                    s.inner = ORN_STRAT_2D;
                    s.ndims = 2;
                    ok = !pb->ordered && orn_plan_2d_legal(pb, T, p, q, NULL, NULL);
                } else {
                    s.inner = ORN_STRAT_2D_ORDERED;
                    s.ndims = 2;
                    ok = orn_plan_wavefront_legal(pb, T, p, q, NULL, NULL);
                }
                if (!ok || !orn_plan_runnable(pb, &s)) continue;
                s.cost = orn_plan_cost(pb, &s);
                bool better =
                    !*found || s.inner < best->inner ||
                    (s.inner == best->inner &&
                     (s.cost < best->cost || (s.cost == best->cost && abs(f) < abs(*best_f))));
                if (better) {
                    *best = s;
                    *best_f = f;
                    *found = true;
                }
            }
        }
    }
}

bool orn_plan_unimodular_search(const OrnPlanProblem *pb, OrnPlanSchedule *out, int *tried)
{
    static const int factors[] = {1, -1, 2, -2, 3, -3};
    int n = pb->nkeys;
    bool found = false;
    int best_f = 0;
    *tried = 0;
    for (int p = 0; p < n; p++) {
        for (int q = p + 1; q < n; q++) {
            for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
                int f = factors[i];
                OrnDepMat T;
                /* skews, then skews followed by an interchange of p and q */
                const int forms[4][4] = {{1, 0, f, 1}, {1, f, 0, 1}, {f, 1, 1, 0}, {0, 1, 1, f}};
                for (int k = 0; k < 4; k++) {
                    embed(&T, p, q, forms[k][0], forms[k][1], forms[k][2], forms[k][3]);
                    ++*tried;
                    try_transform(pb, &T, f, out, &best_f, &found);
                }
            }
        }
    }
    return found;
}
