/* extent.h: how large a dist array is, estimated at compile time.
 *
 * The cost model (strategy_int.h) counts arrays, not bytes, because sizes are run-time
 * values. Some are known well enough to matter: `dist mu = zeros(f64, d)` with `param d =
 * 32` is 32 elements, and replicating it costs nothing next to moving a million-row array
 * to a new partition. The estimate evaluates a constructor's extents (zeros, fill, rand,
 * randn; a buffer has its target's) with consts at their values, params at their defaults
 * and top-level variables through their declaring assignment; rows/cols/dim of another
 * array, min, max, div and + - * compose. A loader's arrays have sizes from the data: their
 * extents stay symbolic (dimension m of X), so that `zeros(f64, cols(X))` is known to be one
 * row of X. Anything else (a value read at run time) is unknown. An estimate, never a bound:
 * nothing may rely on it for correctness. */
#ifndef ORN_EXTENT_H
#define ORN_EXTENT_H

#include "sema.h"

/* Arrays of at most this many elements (estimated) are small: copying one to every rank
 * costs about as little as any message. */
#define ORN_EXTENT_SMALL 65536LL

/* The estimated number of elements of dist array (or buffer) `arr`, or -1 when unknown. */
long long orn_extent_elems(const OrnSym *arr);

/* Whether array `a` is smaller than `space` by at least a whole extent: each of a's extents
 * is one of space's (the same estimate, or the same dimension of the same array read from
 * data: `zeros(f64, cols(X))` against X), and space has more. Copying such an array costs
 * a row's worth of the loop's own elements, whatever the data's size. */
bool orn_extent_within(const OrnSym *a, const OrnSym *space);

/* Whether dimension m of array `a` is far longer than dimension p of `space`: space's is
 * small (an estimate up to ORN_EXTENT_SMALL) and a's comes from data or is over twice as
 * long (`v = X[c, j]` over 16 centres, X read from a file). Cutting a along m with the
 * space's blocks would put all but the first rows of a on the last rank. */
bool orn_extent_overhangs(const OrnSym *a, int m, const OrnSym *space, int p);

/* The expression a constructor gives dimension d of dist array `arr` (`h` of `zeros(f32, h,
 * w)`; a buffer: its target's), or NULL (a loader's array, or no such dimension). Exact,
 * unlike the estimates: access.c proves bounds with it. */
const OrnNode *orn_extent_arg(const OrnSym *arr, int d);

/* Whether `a` is read from data (a loader's array): the loader cuts it by rows. */
bool orn_extent_from_data(const OrnSym *a);

#endif
