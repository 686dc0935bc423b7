/* lower.h: what every back end needs to know about a unit, computed once (lower.c).
 *
 * - names: every symbol gets a unique identifier in generated code (orn_cg_name);
 * - storage: top-level variables (also those declared inside top-level blocks, which loop
 *   bodies may read) are file-scope statics, replicated per rank;
 * - loops: each parallel_for's plan in the runtime's terms (strategy, partition dims,
 *   transform, roles, key_dim, read-only flag and halo widths of each plan array,
 *   accumulators) and the index of every array its body touches;
 * - functions that need a loop context: those that (transitively) touch dist arrays or
 *   draw random numbers; a loop body calls per-loop clones of them;
 * - the prefetch slice: which reads a loop's prefetch pass announces, and which body
 *   variables it can compute (untainted) before the data is there;
 * - view assignments: whether `V op= expr` fuses into one loop without a temporary.
 */
#ifndef ORN_CG_LOWER_H
#define ORN_CG_LOWER_H

#include <stdbool.h>

#include "analyze.h"
#include "emit.h"

/* A halo width meaning "anywhere along this dimension" (the runtime's ORN_RT_HALO_ANY). */
#define ORN_CG_HALO_ANY (-1)

/* One array of a loop's plan (index k = views[k] in the body). */
typedef struct OrnCgArray {
    OrnSym *sym;    /* dist array, or buffer */
    OrnSym *target; /* buffer: the array it updates; else NULL */
    OrnRole role;   /* effective role (analyzer numbering = runtime numbering) */
    int ndim;
    int key_dim[ORN_DEP_MAXDIM];
    bool read_only; /* the loop never writes it (nor, for the iteration space, its value) */
    /* Halo widths below / above the block along each dimension that key_dim ties to a key
     * (offsets c of the subscripts k + c), ORN_CG_HALO_ANY where the iteration space is
     * also read at other elements (A[n - 1 - i]); 0 elsewhere. The runtime gives read-only
     * arrays of 1d and 2d loops ghost cells of these widths. */
    int halo_lo[ORN_DEP_MAXDIM], halo_hi[ORN_DEP_MAXDIM];
    /* A window known at run time along a dimension (analyzer/strategy.h, OrnPlanArray):
     * its for's bounds, direction and the constant offsets' hull [win_c_lo, win_c_hi]; the
     * code before each run sets the plan's halo widths from them (orn_rt_win_halo); win_hi
     * NULL: a shift by the value of win_lo (orn_rt_shift_halo). */
    const OrnNode *win_lo[ORN_DEP_MAXDIM], *win_hi[ORN_DEP_MAXDIM];
    bool win_neg[ORN_DEP_MAXDIM];
    long long win_c_lo[ORN_DEP_MAXDIM], win_c_hi[ORN_DEP_MAXDIM];
    /* a window moved by a shift known at run time: the shift (negated: win_shneg), or NULL */
    const OrnNode *win_sh[ORN_DEP_MAXDIM];
    bool win_shneg[ORN_DEP_MAXDIM];
    bool announce; /* the prefetch pass announces its reads */
    bool peek;     /* prefetch pass may read it directly (dense, in the local box) */
    /* Storage order (analyzer/layout.h): perm[s] is the logical dimension stored as
     * storage dimension s (identity unless the layout pass chose otherwise). key_dim and
     * the halo widths above are per storage dimension, in runtime keys. */
    int perm[ORN_DEP_MAXDIM];
} OrnCgArray;

struct OrnCgLoop {
    int id; /* loop_id: the sema index */
    const OrnLoop *loop;
    const OrnLoopPlan *plan;
    OrnStrategy strategy, inner;
    int npart, part_dims[2];
    int transform[ORN_DEP_MAXDIM][ORN_DEP_MAXDIM];
    OrnCgArray *arrays;
    int narrays;
    /* The runtime walks the iteration space in its storage order: runtime key r is the
     * loop's logical key kperm[r] (identity unless the space is stored permuted).
     * part_dims above are runtime keys. */
    int kperm[ORN_DEP_MAXDIM];
    bool uses_rng;          /* body or callees draw random numbers */
    bool prefetch;          /* emit a prefetch pass */
    unsigned char *tainted; /* by sym id: body variable the prefetch pass cannot compute */
};

struct OrnCgProgram {
    OrnUnit *u;
    const OrnPlanSet *plans;
    const char *file;
    OrnCgLoop *loops; /* by OrnLoop.index */
    int nloops;
    unsigned char *needs_ctx; /* by index in u->sema.fns: fn needs a loop context */
    unsigned char *uses_rng;  /* by index in u->sema.fns: fn (transitively) draws numbers */
    const char **names;       /* by sym id */
    bool gpu;                 /* --gpu (OrnCgOptions) */
    bool gpu_rowcache;        /* --gpu-rowcache (OrnCgOptions) */
    bool module;              /* OrnCgOptions.module, .from */
    uint32_t from;
    int vec_bytes; /* OrnCgOptions.vec_bytes (16, 32 or 64) */
};

bool orn_cg_lower(OrnUnit *u, const OrnPlanSet *plans, const OrnCgOptions *opt, OrnCgProgram *out);
void orn_cg_lower_free(OrnCgProgram *p);

/* The generated identifier of a symbol. */
const char *orn_cg_name(const OrnCgProgram *p, const OrnSym *s);
/* A top-level variable (file-scope static). */
bool orn_cg_is_static(const OrnSym *s);
/* Index of a fn's N_FN in u->sema.fns, or -1. */
int orn_cg_fn_index(const OrnCgProgram *p, const OrnNode *fn);
/* The plan array index of a dist array or buffer in loop l, or -1. */
int orn_cg_array_index(const OrnCgLoop *l, const OrnSym *s);
/* The accumulator index of s in loop l, or -1. */
int orn_cg_acc_index(const OrnCgLoop *l, const OrnSym *s);
/* The symbol of a name node, or the array named by an index node's base. */
OrnSym *orn_cg_base_sym(const OrnNode *e);
/* The buffer's target array (from its declaration). */
OrnSym *orn_cg_buffer_target(const OrnSym *buf);
/* A view node (A[:, j] / A[i, :]): its ':' dimension and the other subscript. */
bool orn_cg_view_parts(const OrnNode *e, int *dim, const OrnNode **fixed);
/* Does `target op= rhs` (target a view) fuse into one loop? False when rhs reads a view of
 * the same array across the other dimension, where element x of the right side may read
 * what element y < x of the target already wrote. */
bool orn_cg_view_fusable(const OrnNode *target, const OrnNode *rhs);
/* Prefetch slice: is the expression computable in loop l's prefetch pass? */
bool orn_cg_expr_tainted(const OrnCgLoop *l, const OrnNode *e);
bool orn_cg_sym_tainted(const OrnCgLoop *l, const OrnSym *s);

#endif
