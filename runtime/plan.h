/* plan.h: the plan of one parallel_for -- the interface between the analyzer (which
 * chooses strategies and roles, issue 3) and the runtime (which executes them).
 *
 * Pure data: no MPI, no runtime types, no allocation. Code generation emits an OrnRtPlan
 * as a static initializer next to the loop body; the runtime validates it (orn_rt_run()
 * fails with ORN_E_PLAN and a message on an inconsistent plan) and executes it. Names
 * carry the OrnRt / ORN_RT_ prefix so this header can be included next to the analyzer's
 * own headers; the numbering of strategies and roles is the analyzer's (OrnStrategy,
 * OrnRole), so code generation can convert by value. Field meanings: docs/runtime.md,
 * section "Plans".
 */
#ifndef ORN_RT_PLAN_H
#define ORN_RT_PLAN_H

#include <stdint.h>

#define ORN_RT_PLAN_VERSION 2
#define ORN_RT_MAXDIM       4
/* A halo width: reads along this dimension are not confined near the block (A[n - 1 - i]). */
#define ORN_RT_HALO_ANY (-1)

/* How the iteration space is split and scheduled (the strategies of --explain). */
typedef enum OrnRtStrategy {
    ORN_RT_1D = 0,         /* blocks along one key dimension, no communication between blocks */
    ORN_RT_2D = 1,         /* 2-D blocks; "rotated" arrays travel around a ring of ranks */
    ORN_RT_2D_ORDERED = 2, /* 2-D blocks run as a wavefront: block (s, t) at step s + t */
    ORN_RT_UNIMODULAR = 3, /* transform the keys by `transform`, then `inner` */
    ORN_RT_SERIAL = 4      /* one rank runs every iteration in key order */
} OrnRtStrategy;

/* What an array is to the loop. */
typedef enum OrnRtRole {
    ORN_RT_PARTITIONED = 0, /* split like the iteration space along its mapped key
                               dimensions; each block reads and writes its own part (and
                               reads a halo around it when the array is read-only) */
    ORN_RT_ROTATED = 1,     /* 2d only: split along part_dims[1]; its blocks travel */
    ORN_RT_REPLICATED = 2,  /* a full read-only copy on every rank */
    ORN_RT_PREFETCHED = 3,  /* read-only in the loop, any key: fetched per block */
    ORN_RT_BUFFERED = 4,    /* a buffer(): += / -= deltas sent to the owners at flushes */
    ORN_RT_REMOTE = 5       /* written at elements no block owns: reads are fetched, writes
                               go to the owners at the end of the round */
} OrnRtRole;

/* Element types; the numbering is that of OrnDsmType. */
typedef enum OrnRtType { ORN_RT_I32 = 0, ORN_RT_I64 = 1, ORN_RT_F32 = 2, ORN_RT_F64 = 3 } OrnRtType;

typedef enum OrnRtAccKind {
    ORN_RT_ACC_SUM = 0,  /* x += e */
    ORN_RT_ACC_PROD = 1, /* x *= e */
    ORN_RT_ACC_MIN = 2,  /* x = min(x, e) */
    ORN_RT_ACC_MAX = 3   /* x = max(x, e) */
} OrnRtAccKind;

typedef struct OrnRtPlanArray {
    const char *name; /* for messages */
    OrnRtRole role;
    int ndim; /* the array's dimensionality */
    /* key_dim[d]: the loop key that indexes array dimension d (subscript k + c), or -1
     * when that dimension is indexed otherwise (a constant, ':', unknown). For the
     * iteration space (arrays[0]) key_dim[d] == d. For a buffer: that of its target. */
    int key_dim[ORN_RT_MAXDIM];
    /* The body never writes this array's elements (nor, for the iteration space, its value
     * variable); a buffer of the loop may still update it at flushes. In 1d and 2d loops
     * the runtime then serves reads outside the block's box: from ghost cells copied before
     * the loop (when no buffer of the loop targets the array), else from other ranks'
     * blocks through the cache or on demand. */
    int read_only;
    /* Halo widths: every read of dimension d of a block's data lies within
     * [lo[d] - halo_lo[d], hi[d] + halo_hi[d]) of the block's box (the analyzer's offsets c
     * of subscripts k + c), or anywhere along d with ORN_RT_HALO_ANY. For read-only arrays
     * of 1d and 2d loops, the view then covers box + halo (docs/runtime.md, section 5). */
    int halo_lo[ORN_RT_MAXDIM], halo_hi[ORN_RT_MAXDIM];
} OrnRtPlanArray;

typedef struct OrnRtPlanAcc {
    const char *name;
    OrnRtAccKind kind;
    OrnRtType type;
} OrnRtPlanAcc;

typedef struct OrnRtPlan {
    int version;      /* ORN_RT_PLAN_VERSION */
    int loop_id;      /* unique per program; keys the loop's random streams */
    const char *file; /* source position, for messages */
    int line;
    OrnRtStrategy strategy;
    OrnRtStrategy inner; /* unimodular: the strategy in the transformed space (1d, 2d or
                            2d_ordered; 2d runs as 2d_ordered); ignored otherwise */
    int ordered;         /* @ordered */
    int nkeys;           /* dimensionality of the iteration space */
    /* Partitioned key dimensions: 1 for 1d, 2 for 2d / 2d_ordered, 1 or 2 for unimodular
     * (dimensions of the transformed keys), 0 for serial. For 2d and 2d_ordered,
     * part_dims[0] is the dimension whose blocks stay on their rank and part_dims[1] the
     * one whose rotated arrays move. */
    int npart;
    int part_dims[2];
    /* Blocks per partitioned dimension; 0 = the run-time default (blocks_per_rank * ranks,
     * default 2 * ranks; $ORN_BLOCKS_PER_RANK or orn_rt_set_blocks_per_rank()). */
    int part_count[2];
    /* unimodular: transformed key = transform * key (nkeys x nkeys, determinant +-1). */
    int transform[ORN_RT_MAXDIM][ORN_RT_MAXDIM];
    /* Iterations per rank between buffer flushes; 0 = at the end of each block. A buffer's
     * own flush_every (buffer(A, flush_every = n)) takes precedence when smaller. */
    int64_t flush_every;
    int narrays;
    const OrnRtPlanArray *arrays; /* arrays[0] is the iteration space */
    int naccs;
    const OrnRtPlanAcc *accs;
    /* The body iterates a sparse 2-D iteration space through OrnRtBlock.rowptr / cols /
     * row_first and never reads OrnRtBlock.keys: the runtime then decodes no keys and calls
     * the body with whole blocks (first and count index the block's elements). 0: keys are
     * decoded per slice (docs/runtime.md, section 6). */
    int keys_unused;
} OrnRtPlan;

/* What the caller knows about an array that the plan does not say (one per plan array). */
typedef struct OrnRtPlanFacts {
    int sparse; /* the array (a buffer: its target) is sparse */
    int rows;   /* the body reads whole rows of it through orn_rt_row (a sparse view
                   X[i, :]); the analyzer knows it, the runtime learns it only when a body
                   asks and passes 0 */
} OrnRtPlanFacts;

/* The plan check: can the runtime execute plan p? The one set of rules that the analyzer
 * applies to every plan it considers (and falls back from, analyzer/plan_rt.c) and that
 * orn_rt_run applies to every plan it receives, so a plan the runtime would refuse is never
 * emitted. Pure: no runtime state, no allocation. facts may be NULL (nothing known: dense
 * arrays, no row views). Returns -1 when p passes; otherwise writes "array B: ..." or a
 * plan-wide reason (without the "parallel_for at ..." prefix) into msg and returns the index
 * of the array at fault, or narrays when the fault is the plan's, not one array's. The rules
 * are stated in docs/runtime.md, section 5. */
int orn_rt_plan_check(const OrnRtPlan *p, const OrnRtPlanFacts *facts, char *msg, int size);

#endif
