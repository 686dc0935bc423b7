/* analyze.h: the analyzer's entry point and its result, one plan per parallel_for.
 *
 * orn_analyze runs after orn_sema succeeded. For each loop it collects the accesses
 * (access.h), tests every pair that can conflict (dep.h), chooses a schedule and the role
 * of each array (strategy.h), and writes notes that say why. A loop that must run serially
 * gets a warning (an error under -Werror) at the accesses that forced it. Plans are plain
 * data in the unit's arena: codegen translates them into the runtime's descriptors, and
 * explain.h prints them. Nothing here depends on the runtime. */
#ifndef ORN_ANALYZE_H
#define ORN_ANALYZE_H

#include <stdbool.h>

#include "access.h"
#include "dep.h"
#include "layout.h"
#include "strategy.h"
#include "unit.h"

/* Two accesses (indexes into OrnLoopPlan.acc.v) that produce a dependence. */
typedef struct OrnDepPair {
    int a, b;
} OrnDepPair;

/* One distinct dependence vector and the access pairs that produce it. For unordered loops
 * its sign is normalized (orn_dep_sign_normalize: a vector stands for itself and its
 * negation); for ordered loops it is lexicographically positive, from the earlier to the
 * later iteration (orn_dep_lexpos). */
typedef struct OrnLoopDep {
    OrnDepVec v;
    OrnDepPair *pairs;
    int npairs;
} OrnLoopDep;

typedef struct OrnArrayPlan {
    OrnSym *sym;
    OrnRole role;
    OrnSym *target;    /* buffered: the array the buffer updates */
    OrnPlanArray info; /* flags and alignment with the keys */
} OrnArrayPlan;

/* A sentence of explanation; `kind` says which part of --explain it belongs to. */
typedef enum {
    ORN_NOTE_STRATEGY,    /* why the chosen schedule is legal */
    ORN_NOTE_REJECTED,    /* a preferred schedule that is illegal, and the vector why */
    ORN_NOTE_ALTERNATIVE, /* a legal schedule that lost on cost */
    ORN_NOTE_ROLE,        /* why an array has its role (array: index in arrays) */
    ORN_NOTE_OTHER,       /* accumulators, allowed write-write pairs, assumptions, blocks */
} OrnNoteKind;

typedef struct OrnPlanNote {
    OrnNoteKind kind;
    int array; /* ORN_NOTE_ROLE: index in OrnLoopPlan.arrays; else -1 */
    const char *text;
} OrnPlanNote;

typedef struct OrnLoopPlan {
    const OrnLoop *loop;
    int line; /* of the parallel_for keyword */
    bool ordered;
    int nkeys;
    const char *keys[ORN_DEP_MAXDIM];
    OrnAccessList acc;
    OrnLoopDep *deps;
    int ndeps;
    OrnPlanProblem problem;
    OrnPlanChoice choice;
    OrnPlanSchedule sched; /* = choice.best */
    /* partition dims are sched.dims[0 .. sched.ndims) (of the transformed space when
       sched.transformed; the matrix is sched.T) */
    OrnArrayPlan *arrays; /* the iteration space first, then by first access */
    int narrays;
    /* Blocks per partitioned dimension = blocks_per_rank x ranks by default; a run-time
     * parameter of the plan (more blocks pipeline and balance better, fewer cost less
     * synchronisation). 0 for serial. */
    int blocks_per_rank;
    OrnPlanNote *notes; /* in order: strategy, rejected, alternatives, roles, other */
    int nnotes;
} OrnLoopPlan;

typedef struct OrnPlanSet {
    OrnLoopPlan *loops; /* in source order */
    int nloops;
    OrnLayoutSet layout; /* storage order of dist arrays (layout.h) */
} OrnPlanSet;

/* Analyse every parallel_for of u (after a successful orn_sema). Serial loops are reported
 * as warnings through u->diags. Returns false only on an internal error. */
bool orn_analyze(OrnUnit *u, OrnPlanSet *out);

#endif
