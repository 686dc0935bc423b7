/* strategy_int.h: private to the strategy files (strategy.c, strat_*.c).
 *
 * Cost units. Sizes are unknown at compile time, so the model counts arrays, weighted by
 * how much of each one crosses the network per execution of the loop, with P ranks:
 *
 *   partitioned   0    stays where it is (+ORN_COST_HALO when blocks read a halo of
 *                      neighbouring elements along a partitioned dimension)
 *   rotated      10    every block passes through every rank: (P-1)/P of the array per
 *                      rank, in P steps that overlap with computation
 *   replicated   10    the whole array sent to every rank before the loop (read-only)
 *   prefetched    6    only the elements each block reads, fetched before the block
 *   buffered      4    deltas, sent at flushes; usually far fewer than the elements
 *   remote       12    element writes sent to their owner one message batch per block
 *
 * Sizes are sometimes known well enough (extent.h): a small array (at most
 * ORN_EXTENT_SMALL elements, estimated, or smaller than the iteration space by a whole
 * extent: the means of X's columns against X) costs ORN_COST_SMALL when replicated,
 * prefetched or rotated, as little as one message; an array that is not small and that the loop
 * before, over the same array, cut along other dimensions costs ORN_COST_REPARTITION on
 * top when partitioned: the runtime moves it to the new partition, (P-1)/P of it, as a
 * replicated array would be sent.
 *
 * plus a per-strategy term for lost parallelism and synchronisation, given in each
 * strategy's file (ORN_COST_BASE_*). */
#ifndef ORN_STRATEGY_INT_H
#define ORN_STRATEGY_INT_H

#include "extent.h"
#include "strategy.h"

enum {
    ORN_COST_ROTATED = 10,
    ORN_COST_REPLICATED = 10,
    ORN_COST_PREFETCHED = 6,
    ORN_COST_BUFFERED = 4,
    ORN_COST_REMOTE = 12,
    ORN_COST_HALO = 1,
    ORN_COST_SMALL = 1,
    ORN_COST_REPARTITION = 10,
    ORN_COST_BASE_1D = 0,
    ORN_COST_BASE_2D = 2,
    ORN_COST_BASE_WAVEFRONT = 20,
    ORN_COST_BASE_TRANSFORM = 5,
    ORN_COST_BASE_SERIAL = 1000,
};

/* Legality of each schedule on the transformed vectors T v (T is the identity for the
 * plain strategies). On false, *blocker is the index of the first vector in pb->vecs that
 * breaks it and *nviol how many do (either pointer may be NULL). */
bool orn_plan_1d_legal(const OrnPlanProblem *pb, const OrnDepMat *T, int p, int *blocker,
                       int *nviol);
bool orn_plan_2d_legal(const OrnPlanProblem *pb, const OrnDepMat *T, int p, int q, int *blocker,
                       int *nviol);
bool orn_plan_wavefront_legal(const OrnPlanProblem *pb, const OrnDepMat *T, int p, int q,
                              int *blocker, int *nviol);

/* Search unimodular transforms; on success fills *out (strategy ORN_STRAT_UNIMODULAR, inner
 * set, cost set) and returns true. *tried counts the transforms examined. */
bool orn_plan_unimodular_search(const OrnPlanProblem *pb, OrnPlanSchedule *out, int *tried);

/* The cost of s: its base plus the roles of the arrays (strategy.c). */
int orn_plan_cost(const OrnPlanProblem *pb, const OrnPlanSchedule *s);

/* Whether the runtime's plan check accepts s with some roles (orn_plan_roles). */
bool orn_plan_runnable(const OrnPlanProblem *pb, const OrnPlanSchedule *s);

#endif
