/* strategy.h: choosing how a parallel_for runs, from its dependence vectors and a summary
 * of the arrays it touches. Pure data in, pure data out (no AST), so it is unit-tested on
 * hand-built vectors.
 *
 * Strategies (one file each, its legality rule and cost model at the top):
 *   1d          strat_1d.c         blocks along one key dimension, no communication between
 *                                  blocks while the loop runs
 *   2d          strat_2d.c         blocks along two dimensions; rank r owns the blocks of row
 *                                  r and the arrays indexed by the other dimension rotate
 *   2d_ordered  strat_wavefront.c  blocks (s, t) run at wavefront step s + t, each block in
 *                                  lexicographic order
 *   unimodular  strat_unimodular.c a unimodular change of key coordinates (a skew, possibly
 *                                  with an interchange), then one of the above
 *   serial      strategy.c         one iteration at a time, in key order
 *
 * The preference is 1d, then 2d, then 2d_ordered, then unimodular, then serial; within one
 * strategy the candidate with the lowest estimated communication wins (costs are in
 * strategy_int.h). */
#ifndef ORN_STRATEGY_H
#define ORN_STRATEGY_H

#include <stdbool.h>

#include "arena.h"
#include "dep.h"

typedef enum {
    ORN_STRAT_1D,
    ORN_STRAT_2D,
    ORN_STRAT_2D_ORDERED,
    ORN_STRAT_UNIMODULAR,
    ORN_STRAT_SERIAL,
} OrnStrategy;

typedef enum {
    ORN_ROLE_PARTITIONED, /* co-partitioned with the iteration space: stays on its rank */
    ORN_ROLE_ROTATED,     /* 2-D schedules: blocks move from rank to rank */
    ORN_ROLE_REPLICATED,  /* read-only, whole copy on every rank */
    ORN_ROLE_PREFETCHED,  /* read-only, irregular: the elements a block reads are fetched */
    ORN_ROLE_BUFFERED,    /* a buffer: deltas collected, applied to the target at flushes */
    ORN_ROLE_REMOTE,      /* written where no block owns it: writes go to the owner rank */
} OrnRole;

const char *orn_plan_strategy_name(OrnStrategy s); /* "1d", "2d", ... */
const char *orn_plan_role_name(OrnRole r);         /* "partitioned", ... */

/* What the strategies need to know about one array the loop touches. */
typedef struct OrnPlanArray {
    const char *name;
    int ndims;
    bool is_space;        /* the iteration space */
    bool is_buffer;       /* a buffer (only updated with += / -=; never conflicts) */
    bool read, written;   /* element reads and writes (buffer updates are neither) */
    bool only_const;      /* every subscript of every access is a constant */
    bool varying_unknown; /* some subscript is unknown and differs between iterations */
    /* Alignment: array dimension m is aligned with key key_of_dim[m] when every access
     * subscripts it as coef[m]*key + c with the same key and coefficient; the constants
     * range over [halo_lo[m], halo_hi[m]]. -1: not aligned. */
    int key_of_dim[ORN_DEP_MAXDIM];
    long long coef[ORN_DEP_MAXDIM];
    long long halo_lo[ORN_DEP_MAXDIM], halo_hi[ORN_DEP_MAXDIM];
    /* A window known at run time along aligned dimension m (access.h: `i + k`, k over
     * [win_lo, win_hi), negated when win_neg): the halo is then [halo_lo[m] + min(0, w),
     * halo_hi[m] + max(0, w)] over the window's offsets w, set by the code before each run
     * (codegen); NULL: none. One window per dimension (another one: not aligned). */
    const struct OrnNode *win_lo[ORN_DEP_MAXDIM], *win_hi[ORN_DEP_MAXDIM];
    bool win_neg[ORN_DEP_MAXDIM];
    /* the window moved by a shift known at run time (dep.h, OrnSub.wsh), or NULL */
    const struct OrnNode *win_sh[ORN_DEP_MAXDIM];
    bool win_shneg[ORN_DEP_MAXDIM];
    unsigned keys_mask;    /* keys used by some affine subscript (bit p: key p) */
    bool space_misaligned; /* the iteration space, also accessed at elements that are not
                              the iteration's own (A[n - 1 - i]): those cross blocks */
    bool sparse;           /* a sparse array (a buffer: its target) */
    bool rows;             /* sparse, read through row views X[i, :] (for (f, x) in X[i, :]) */
    bool sparse_rows;      /* rows of a sparse array are iterated (for (k, v) in A[i, :]):
                              the runtime serves a row from the block's own tile or from a
                              copy on every rank, never by fetching */
    int row_key;           /* sparse_rows: the key k when every row iterated is A[k, :],
                              else -1 (a block then holds its rows only if the array is
                              cut along dimension 0 by k alone) */
    long long est_elems;   /* elements, estimated from the declaration (extent.h), or -1 */
    bool within_space;     /* smaller than the iteration space by a whole extent (extent.h) */
    bool overhang;         /* read-only, at keys along a dimension far longer than the
                              space's (extent.h): not aligned, prefetched */
    unsigned prev_dims;    /* the array's dimensions (bit m: dimension m) that the loop before
                              this one over it, in program order, cut as a 1d partition; 0:
                              none or unknown. Cutting others moves the array (strategy.c) */
} OrnPlanArray;

/* The problem: keys, semantics, distinct nonzero dependence vectors (sign-normalized with
 * orn_dep_sign_normalize), arrays. */
typedef struct OrnPlanProblem {
    int nkeys;
    const char *keys[ORN_DEP_MAXDIM];
    bool ordered;
    bool sparse_space;
    const OrnDepVec *vecs;
    int nvecs;
    const OrnPlanArray *arrays;
    int narrays;
} OrnPlanProblem;

/* A schedule. dims are partition dimensions: of the transformed space when `transformed`.
 * For 2d and 2d_ordered dims[0] is the dimension whose blocks stay on their rank (rank r
 * owns row r of blocks) and dims[1] the one whose arrays move. */
typedef struct OrnPlanSchedule {
    OrnStrategy strategy;
    OrnStrategy inner; /* unimodular: the schedule applied after the transform */
    int dims[2];
    int ndims;
    bool transformed;
    OrnDepMat T; /* identity unless transformed */
    int cost;    /* estimated communication, strategy_int.h */
} OrnPlanSchedule;

/* A schedule that was considered, for --explain. */
typedef struct OrnPlanCandidate {
    OrnPlanSchedule s;
    bool legal;
    int blocker;         /* illegal: index (in problem->vecs) of the first vector that
                            breaks it */
    int nviolations;     /* how many vectors break it */
    const char *refused; /* legal, but the runtime's plan check refuses it whatever the
                            roles (plan_rt.h): why; else NULL */
} OrnPlanCandidate;

typedef struct OrnPlanChoice {
    OrnPlanSchedule best;
    OrnRole *roles;           /* per problem array: the roles that run */
    OrnRole *planned;         /* per problem array: the role the strategy asked for */
    const char **refused;     /* per problem array: why the runtime's plan check refused the
                                 planned role (then roles[k] != planned[k]), else NULL */
    const char *plan_refused; /* serial because the check refused every legal schedule:
                                 why (the first one's reason), else NULL */
    OrnPlanCandidate *cands;  /* every non-unimodular candidate, in order of preference */
    int ncands;
    int best_cand; /* index in cands, or -1 (unimodular or serial) */
    /* serial: the vectors that break the closest candidate */
    int *culprits;
    int nculprits;
    int closest;          /* index in cands of that candidate, or -1 */
    int unimodular_tried; /* number of transforms searched */
} OrnPlanChoice;

/* Choose a schedule and the role of each array. Allocates from `a`. */
void orn_plan_choose(OrnArena *a, const OrnPlanProblem *pb, OrnPlanChoice *out);

/* Does an access of dimension m of a reach outside the elements the key's block owns
 * (a*k + c with c outside [0, |a| - 1])? */
bool orn_plan_dim_has_halo(const OrnPlanArray *a, int m);

/* Roles of the arrays under schedule s (out has pb->narrays entries): those the strategy
 * asks for, changed where the runtime's plan check refuses them (plan_rt.h), so that costs
 * and plans speak of roles that run. Returns false when the check refuses the schedule
 * itself, whatever the roles. */
bool orn_plan_roles(const OrnPlanProblem *pb, const OrnPlanSchedule *s, OrnRole *out);

/* The role array a gets when no partitioned key follows it: remote when written,
 * replicated or prefetched when read-only (the fallback of roles the runtime refuses). */
OrnRole orn_plan_unaligned_role(const OrnPlanProblem *pb, const OrnPlanArray *a);

/* The estimated cost of s and what it is made of, as text: "12: H rotated 10, 2 for
 * synchronised steps". */
/* The dimensions of array a (bit m: dimension m) that schedule s cuts as a 1d partition
 * (0 for other schedules and arrays not aligned with the partition key). */
unsigned orn_plan_cut_dims(const OrnPlanProblem *pb, const OrnPlanSchedule *s,
                           const OrnPlanArray *a);

void orn_plan_cost_text(const OrnPlanProblem *pb, const OrnPlanSchedule *s, char *buf, int size);

/* "1d along i", "2d over (u, i)", "2d_ordered over (i, j)", "serial". */
const char *orn_plan_schedule_text(const OrnPlanProblem *pb, const OrnPlanSchedule *s, char *buf,
                                   int size);

/* Oriented pieces of vector v for schedules that run blocks in an order: the
 * lexicographically positive split (orn_dep_lexpos), each multiplied by T. Returns the
 * count (<= 2 * ORN_DEP_MAXDIM). */
int orn_plan_oriented(const OrnPlanProblem *pb, const OrnDepMat *T, const OrnDepVec *v,
                      OrnDepVec *out);

void orn_plan_identity(OrnDepMat *T);

/* The key or transformed dimension name of dim d under s ("u", or "i+j" for a row of T)
 * into buf. */
const char *orn_plan_dim_name(const OrnPlanProblem *pb, const OrnPlanSchedule *s, int d, char *buf,
                              int size);

#endif
