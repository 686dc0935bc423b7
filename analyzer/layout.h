/* layout.h: the storage order of each dense dist array, chosen from all its accesses.
 *
 * A dist array is declared with logical dimensions (W = randn(f32, K, n)); the runtime
 * stores each local box row-major in *storage* dimensions, the last one unit stride. The
 * layout pass picks, per array, the permutation that makes the dimension the program walks
 * fastest the last storage dimension: the dimension a ':' slices (W[:, u] is then
 * contiguous), that an inner `for k` varies (W[k, u]), or that the innermost key of a
 * parallel_for varies. Votes, per access: a slice 4, the innermost `for` variable 2, the
 * innermost parallel_for key 1; the most-voted dimension moves to the end when it has
 * strictly more votes than the declared last one, the others keep their order.
 *
 * Only arrays that the program creates with zeros/fill/rand/randn or a dense load (which
 * loads in declared order and then redistributes: orn_std_load_perm) and uses through
 * elements, views, reductions, extents, save, buffers and as iteration spaces of 1d, 2d
 * or serial loops are eligible; anything else (sparse loads, BLAS built-ins, whole-array dot,
 * ordered or skewed iteration spaces) keeps the declared order. Logical indices never
 * change: code generation permutes keys, extents and plans (codegen/lower.c), the runtime
 * fills rand arrays and saves by logical index. */
#ifndef ORN_LAYOUT_H
#define ORN_LAYOUT_H

#include "sema.h"

#ifndef ORN_LAYOUT_MAXDIM
#define ORN_LAYOUT_MAXDIM 4
#endif

typedef struct OrnLayout {
    const OrnSym *sym;
    int ndims;
    /* perm[s]: the logical dimension stored as storage dimension s */
    int perm[ORN_LAYOUT_MAXDIM];
    int votes[ORN_LAYOUT_MAXDIM]; /* per logical dimension */
} OrnLayout;

typedef struct OrnLayoutSet {
    OrnLayout *v; /* only arrays stored in another order than declared */
    int n;
} OrnLayoutSet;

typedef struct OrnPlanSet OrnPlanSet;

/* Choose layouts for every dist array of u (after orn_analyze filled ps's loops). */
void orn_layout_choose(OrnUnit *u, const OrnPlanSet *ps, OrnLayoutSet *out);
/* The layout of s (a buffer: of its target), or NULL when it is stored as declared. */
const OrnLayout *orn_layout_of(const OrnLayoutSet *ls, const OrnSym *s);
/* The dist array a buffer() updates, or s itself. */
const OrnSym *orn_layout_base(const OrnSym *s);

#endif
