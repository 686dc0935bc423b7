/* extent.h: how large a dist array is, estimated at compile time.
 *
 * The cost model (strategy_int.h) counts arrays, not bytes, because sizes are run-time
 * values. Some are known well enough to matter: `dist mu = zeros(f64, d)` with `param d =
 * 32` is 32 elements, and replicating it costs nothing next to moving a million-row array
 * to a new partition. The estimate evaluates a constructor's extents (zeros, fill, rand,
 * randn; a buffer has its target's) with consts at their values, params at their defaults
 * and top-level variables through their declaring assignment; rows/cols/dim of another
 * array, min, max, div and + - * compose. Anything else (a loader's arrays, a value read
 * at run time) is unknown. An estimate, never a bound: nothing may rely on it for
 * correctness. */
#ifndef ORN_EXTENT_H
#define ORN_EXTENT_H

#include "sema.h"

/* Arrays of at most this many elements (estimated) are small: copying one to every rank
 * costs about as little as any message. */
#define ORN_EXTENT_SMALL 65536LL

/* The estimated number of elements of dist array (or buffer) `arr`, or -1 when unknown. */
long long orn_extent_elems(const OrnSym *arr);

#endif
