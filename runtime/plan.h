/* plan.h: the plan of one parallel_for -- the interface between the analyzer (which
 * produces plans, issue 3) and the runtime (which executes them).
 *
 * Pure data: no MPI, no runtime types, no allocation. The analyzer fills an OrnPlan; code
 * generation emits it as a static initializer next to the loop body; the runtime validates
 * it (orn_rt_run() fails with ORN_E_PLAN and a message on an inconsistent plan) and
 * executes it. Field meanings are documented in docs/runtime.md, section "Plans".
 */
#ifndef ORN_PLAN_H
#define ORN_PLAN_H

#include <stdint.h>

#define ORN_PLAN_VERSION 1
#define ORN_PLAN_MAXDIM 4

/* How the iteration space is split and scheduled (the strategies of --explain). */
typedef enum OrnPlanStrategy {
    ORN_PLAN_SERIAL = 0,     /* one rank runs every iteration in key order */
    ORN_PLAN_1D = 1,         /* blocks along one key dimension, no communication between blocks */
    ORN_PLAN_2D = 2,         /* 2-D blocks; "rotated" arrays travel around a ring of ranks */
    ORN_PLAN_2D_ORDERED = 3, /* 2-D blocks run as a wavefront: block (s, t) at step s + t */
    ORN_PLAN_UNIMODULAR = 4  /* transform the keys by `transform`, then a 2-D wavefront */
} OrnPlanStrategy;

/* What an array is to the loop. */
typedef enum OrnPlanRole {
    ORN_ROLE_PARTITIONED = 0, /* split like the iteration space along its mapped key
                                 dimensions; each block reads and writes its own part */
    ORN_ROLE_ROTATED = 1,     /* 2d only: split along part_dims[1]; its blocks travel */
    ORN_ROLE_REPLICATED = 2,  /* a full read-only copy on every rank */
    ORN_ROLE_PREFETCHED = 3,  /* read-only in the loop, any key: fetched per block */
    ORN_ROLE_BUFFERED = 4     /* a buffer(): += / -= deltas sent to the owners at flushes */
} OrnPlanRole;

/* Element types; the numbering is that of OrnDsmType. */
typedef enum OrnPlanType {
    ORN_PLAN_I32 = 0,
    ORN_PLAN_I64 = 1,
    ORN_PLAN_F32 = 2,
    ORN_PLAN_F64 = 3
} OrnPlanType;

typedef enum OrnPlanAccKind {
    ORN_ACC_SUM = 0, /* x += e */
    ORN_ACC_PROD = 1, /* x *= e */
    ORN_ACC_MIN = 2, /* x = min(x, e) */
    ORN_ACC_MAX = 3  /* x = max(x, e) */
} OrnPlanAccKind;

typedef struct OrnPlanArray {
    const char *name; /* for messages */
    OrnPlanRole role;
    int ndim; /* the array's dimensionality */
    /* key_dim[d]: the loop key that indexes array dimension d (subscript a*k + c with
     * a = 1), or -1 when that dimension is indexed otherwise (a constant, ':', unknown).
     * For the iteration space (arrays[0]) key_dim[d] == d. For a buffer, the mapping of its
     * target. */
    int key_dim[ORN_PLAN_MAXDIM];
} OrnPlanArray;

typedef struct OrnPlanAcc {
    const char *name;
    OrnPlanAccKind kind;
    OrnPlanType type;
} OrnPlanAcc;

typedef struct OrnPlan {
    int version;      /* ORN_PLAN_VERSION */
    int loop_id;      /* unique per program; keys the loop's random streams */
    const char *file; /* source position, for messages */
    int line;
    OrnPlanStrategy strategy;
    int ordered; /* @ordered */
    int nkeys;   /* dimensionality of the iteration space */
    /* Partitioned key dimensions: 1 for 1d, 2 for 2d / 2d_ordered / unimodular (dimensions
     * of the transformed keys), 0 for serial. For 2d, part_dims[1] is the rotated one. */
    int npart;
    int part_dims[2];
    /* Blocks per partitioned dimension; 0 = the run-time default (blocks_per_rank * ranks,
     * default 2 * ranks; ORN_BLOCKS_PER_RANK or orn_rt_set_blocks_per_rank()). */
    int part_count[2];
    /* unimodular: transformed key = transform * key (nkeys x nkeys, determinant +-1). */
    int transform[ORN_PLAN_MAXDIM][ORN_PLAN_MAXDIM];
    /* Iterations per rank between buffer flushes; 0 = at the end of each block. A buffer's
     * own flush_every (buffer(A, flush_every = n)) takes precedence when smaller. */
    int64_t flush_every;
    int narrays;
    const OrnPlanArray *arrays; /* arrays[0] is the iteration space */
    int naccs;
    const OrnPlanAcc *accs;
} OrnPlan;

#endif
