/* emit_c_int.h: the C back end's private header: the emitter state shared by its files.
 *
 *   emit_c.c   output, C types and literals, the unit (preamble, main), the target struct
 *   c_expr.c   expressions: names, subscripts, calls, built-ins, sequencing
 *   c_view.c   view expressions (one fused loop per statement) and reductions
 *   c_stmt.c   statements
 *   c_for.c    `for` loops in loop bodies: index-set splitting, loop reductions
 *   c_jam.c    a loop reduction computed for a vector of its enclosing loop's values
 *              (or of a dense run's keys)
 *   c_coljam.c a dense run's keys W at a time around its one `for` into buffers
 *   c_srow.c   reads of a dense run's space on its own row, the previous element carried
 *   c_loop.c   the prefetch slice, user functions and their per-loop clones, plans and
 *              loop bodies (element walks, boxes)
 * Functions shared between these files carry the cg_ prefix. */
#ifndef ORN_CG_EMIT_C_INT_H
#define ORN_CG_EMIT_C_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "emit.h"
#include "lower.h"
#include "version.h"

typedef enum { CX_TOP, CX_FN, CX_BODY, CX_CLONE, CX_PREFETCH } Ctx;

enum { MAXLEAF = 64, ORN_RT_MAXDIM_CG = 4 };

/* Before the block loop of a reduction's lanes (one vector of partial sums, one add chain):
 * two blocks an iteration, the same adds in the same order. Streaming from memory, the loop
 * of one block an iteration ran 15-20% under the unrolled one on this Zen 5 (2.1 against 1.76
 * ns a block of 8 f64, 4096 x 4096 matrix-vector; in cache the same), as gcc unrolls it in
 * a caller of its own choosing; four blocks gain nothing more. */
#define CG_UNROLL2 "_Pragma(\"GCC unroll 2\")"

typedef struct VLeaf {
    const OrnNode *n;
    int id;
    bool dup; /* the same view as an earlier leaf (or the target): shares its id */
} VLeaf;

typedef struct VX {
    VLeaf views[MAXLEAF], scalars[MAXLEAF];
    int nviews, nscalars;
    bool overflow;
    const OrnNode *target; /* an assignment's target view, declared by the caller */
    int target_id;
} VX;

/* What the lanes of a warp kernel did to shared memory since its last __syncwarp
 * (cuda_warp.c): plan arrays (bit k) read on every lane, read and written by lane 0, and the
 * dimensions (bit d) along which loops split across the lanes read and wrote views of array
 * k (element x on lane x mod 32). */
enum { ORN_GPU_MAXARR_CG = 16, ORN_GPU_MAXACC_CG = 8 }; /* runtime/gpu/orn_gpu.h's limits */
typedef struct WarpAcc {
    uint32_t rd, rd0, wr0;
    uint8_t sr[ORN_GPU_MAXARR_CG], sw[ORN_GPU_MAXARR_CG];
} WarpAcc;

/* Where a warp kernel's code is being written: no warp (the C back end, a kernel of a thread
 * per tile), the iteration's warp-uniform code (every lane runs it), a loop split across the
 * lanes (each lane runs its share: no barriers, no further splitting). */
enum { WARP_NONE, WARP_UNIFORM, WARP_SPLIT };

/* A loop reduction computed for W values of its enclosing `for`'s variable at once (c_jam.c):
 * the outer loop, its variable, the reduction (an N_FOR of the outer body), its last
 * statement `sum += e` and sum; the top-level local arrays read as arr[var + k0, jvar + k1]
 * (read from transposed copies jt<site>_<a>_); the emitted names' id; W values of var per
 * vector, L partials; nest: the reduction is being written for the vector (else the outer
 * loop, which reads the sums). */
enum { ORN_CG_MAXJAM = 4, ORN_CG_MAXJAMARR = 2, ORN_CG_MAXJAMACC = 8 };
typedef struct CgJam {
    const OrnNode *outer, *red_for, *red;
    const OrnNode *dot; /* or, instead of red_for: `sum = dot(a, b)`'s call (c_view.c) */
    const OrnSym *var, *sum;
    const OrnSym *arr[ORN_CG_MAXJAMARR];
    int narr;
    struct {
        int arr;
        int64_t k0, k1;
        bool row; /* a row view arr[var + k0, :] of dot's operands (k1 unused) */
    } acc[ORN_CG_MAXJAMACC];
    int nacc;
    int site, id, W, L;
    bool nest;
    const OrnCgLoop *loop; /* the loop whose body holds the jam */
} CgJam;

typedef struct C {
    const OrnCgProgram *p;
    OrnUnit *u;
    OrnBuf *out;
    OrnBuf pre, decls, defs, mainb;
    OrnBuf *b;
    int ind;
    int tmp;
    Ctx cx;
    const OrnCgLoop *loop;
    const OrnNode *fn;
    int line;
    int cloops;                /* C loops of user statements open inside a loop body */
    int pf_drop;               /* prefetch: inside a branch emitted without its condition */
    const OrnNode *pf_rows[8]; /* prefetch: element reads a row announcement covers (row_walk) */
    int npf_rows;
    bool pf_inbox; /* prefetch: in a run's range whose boxable reads are proven in their
                      boxes (c_loop.c, pf_runs): those are not announced */
    int fast;      /* inside the fast version of a `for` whose accesses are proven in their boxes */
    /* local arrays the loop body declares by a constructor, each with a slot in the body
     * function that keeps its storage between iterations (cg_arr_slots); take: the
     * declaration being written takes its slot's array */
    const OrnSym *slots[32];
    int nslots;
    const OrnSym *take;
    const OrnNode **proven; /* ifs whose conditions hold in the fast range being written, and
                               clamps (min/max) that are their proven_keep argument there */
    const OrnNode **proven_keep;
    int nproven;
    int bufs_sure; /* ... of a for-in whose buffer updates' keys were tested too (c_stmt.c) */
    /* a version where a buffer adds in place into its target (c_stmt.c, csr_row_loop): the
     * fast reads of view alias_x - 1 go through buffer view alias_b - 1's box (0: none),
     * counted in alias_used */
    int alias_x, alias_b, alias_used;
    /* the variable and body of the innermost versioned range being emitted in its fast
     * version (a `for`, the column key of a CSR walk, the innermost key of a dense one)
     * and whether the loop's value variable changes with it: the accesses the walk of that
     * loop qualified -- views, local arrays -- are addressed without tests
     * (version.h, orn_cg_view_proven) */
    const OrnSym *vfast_var;
    const OrnSym *vfast_varying; /* a for-in's value, which changes with its key */
    const OrnNode *vfast_body;
    bool vfast_vv;
    bool next_used;
    bool cuda; /* writing CUDA (emit_cuda.c): C++, no compound literals */
    bool failed;
    unsigned char *applied; /* by fn index: apply wrapper emitted */
    /* elements held in locals pv<i>_ for a run of the CSR walk (version.h, fixed elements):
     * accesses to these arrays read and write the local */
    const OrnSym *promo[ORN_CG_MAXFIXED];
    int npromo;
    bool promo_add[ORN_CG_MAXFIXED]; /* ... a buffer's element, only added to: inside lanes,
                                      * pvl<i>_[l_] (c_loop.c, lane_loop) */
    /* inside the lanes of a dense run (c_loop.c, lane_loop): accumulator i is accl<i>_[l_] */
    bool lanes;
    int run_lanes; /* the run's accumulator lanes, W, kept across its segments (c_loop.c) */
    bool holding;  /* inside a top-level loop that holds the arrays it reads (c_hold.c) */
    /* row pointers of the fast `for` loops being emitted (version.h, orn_cg_rows): a read
     * listed here is rp<row_id>_[last subscript] */
    const OrnNode *rows[ORN_CG_MAXROWS * 4];
    int row_id[ORN_CG_MAXROWS * 4], row_last[ORN_CG_MAXROWS * 4];
    bool row_buf[ORN_CG_MAXROWS * 4];  /* a buffer's row: NULL where it does not add in place */
    bool row_sure[ORN_CG_MAXROWS * 4]; /* ... inside a version of the loop that tested it */
    /* ... whose element at the loop's variable is held in the local bt<row_tmp>_ (c_coljam.c),
     * or -1 */
    int row_tmp[ORN_CG_MAXROWS * 4];
    int nrows;
    /* operands already evaluated into temporaries (left-to-right sequencing) */
    const OrnNode *subst[MAXLEAF];
    int subst_id[MAXLEAF];
    int nsubst;
    int warp;       /* WARP_*: a warp kernel's body (cuda_warp.c) */
    WarpAcc ws;     /* its accesses since the last barrier */
    WarpAcc wexit;  /* ... where the iteration ended early (a top-level continue) */
    WarpAcc wblock; /* ... at the start of a block of the compound statement being written */
    bool wmid;      /* the statement being written needs a barrier before its writes */
    /* the row cache of a warp kernel (cuda_rows.c): plan array k's slot, or -1; bit s: slot
     * s's array is written by the loop; slots in use */
    signed char rc_slot[ORN_GPU_MAXARR_CG];
    unsigned rc_wr;
    int nrc;
    /* the jams of the loop body being written (c_jam.c): their outer loops (the body declares
     * their copies' pointers), the one being written, and an outer loop being written as is */
    const OrnNode *jam_site[ORN_CG_MAXJAM];
    int njam;
    const CgJam *jam;
    const OrnNode *jam_off;
    /* writing a loop body's function: the outer scalars it reads are its locals <name>_l,
     * copied at its start (c_loop.c, body_fn) */
    bool olocal;
    /* a parallel_for written with the one before it as a pair (c_stmt.c, st_parfor) */
    const OrnNode *paired;
    /* a dense run whose iteration space's box is the run's own storage (c_loop.c,
     * srow_version): reads of the space's elements on the iteration's own row,
     * A[i, j + c], are row_[j + c], so gcc sees the run's writes and reads as one array
     * (an ordered stencil's left neighbour, just written, stays in a register) */
    const OrnSym *srow_arr;
    const OrnNode *srow_keys; /* the loop's keys (N_NAME list, source order) */
    const OrnSym *srow_last;  /* the run's key */
    bool srow_prev;           /* ... and A[i, j - 1] is the local pv_ (c_srow.c) */
} C;

enum { EL_SLOW, EL_STRIDED, EL_UNIT };

/* emit_c.c */
void cg_o(C *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_ind(C *c);
void cg_ol(C *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_ice(C *c, const OrnNode *n, const char *what);
const char *cg_nm(C *c, const OrnSym *s);
/* The source site (ORN_RT_SITE, runtime/orn_box.h) of access e of the array named name, on
 * line `line`: the line, and which of the line's `name[` e is, so that a run-time error's
 * caret points at e (runtime/srcline.c); the line alone where e lies elsewhere. */
unsigned cg_site(const C *c, const OrnNode *e, const char *name, unsigned line);
const char *cg_ctype(OrnTypeKind k);
const char *cg_sfx(OrnTypeKind k);
const char *cg_dsmt(OrnTypeKind k);
const char *cg_rtt(OrnTypeKind k);
OrnTypeKind cg_elem_of(const OrnType *t);
OrnTypeKind cg_kind_of(const OrnNode *e);
OrnTypeKind cg_num_elem(const OrnNode *e);
bool cg_is_local_array(const OrnSym *s);
bool cg_is_buffer(const OrnSym *s);
bool cg_in_loop_ctx(const C *c);
void cg_put_i64(C *c, int64_t v);
void cg_put_f64(C *c, double v);
void cg_put_str(C *c, const char *s, size_t n);
void cg_put_const(C *c, const OrnConstVal *v, OrnTypeKind k);

/* c_expr.c */
const OrnNode *cg_arg_n(const OrnNode *call, int i);
const OrnNode *cg_kwarg(const OrnNode *call, const char *name);
void cg_ex_as(C *c, const OrnNode *e, OrnTypeKind k);
const int *cg_perm_of(const C *c, const OrnSym *s);
int cg_sdim(const int *perm, int d);
void cg_ex_subs(C *c, const OrnNode *subs, const OrnSym *arr);
void cg_ex_key(C *c, const OrnNode *subs, const OrnSym *arr);
void cg_put_dims(C *c, const OrnSym *s);
int cg_array_k(C *c, const OrnNode *e, const OrnSym *s);
void cg_ex_index(C *c, const OrnNode *e);
/* Whether s, in the loop body being written, is an outer scalar read through its local copy
 * (C.olocal). */
bool cg_outer_local(const C *c, const OrnSym *s);
int cg_promoted(const C *c, const OrnSym *s);
/* A whole array or a view as an OrnStdVec initializer. With `copy`, a view of a dense dist
 * array in top-level code (cg_vec_copied) is read whole onto every rank (orn_std_vec_dist_in):
 * the variable it initializes is then declared with cg_vec_scope(c, e) after its name (its
 * copy freed at the end of its scope), and a target is stored back (orn_std_vec_store). */
void cg_vec_ctor(C *c, const OrnNode *e, bool copy);
bool cg_vec_copied(const C *c, const OrnNode *e);
const char *cg_vec_scope(const C *c, const OrnNode *e);
void cg_arr_init_args(C *c, const OrnNode *call, int bi, const OrnNode *a1);
bool cg_impure(const OrnNode *e);
void cg_ex(C *c, const OrnNode *e);
void cg_ex_cond(C *c, const OrnNode *e);

/* c_for.c: row pointers before a fast `for` over var in [from, to) with this body
 * (version.h, orn_cg_rows); returns how many accesses were listed, to pass to
 * cg_rows_close after the loop. cg_row_of: the listed access e, or -1. */
int cg_rows_open(C *c, const OrnSym *var, const OrnNode *body, const char *from, const char *to);
void cg_rows_close(C *c, int n);
int cg_row_of(const C *c, const OrnNode *e);

/* c_view.c */
void cg_vx_collect(C *c, VX *vx, const OrnNode *e);
/* The text of an array or a view argument of print/eprint: a char * the call frees. */
void cg_show_arg(C *c, const OrnNode *e);
/* The leaves' declarations in source order (ids grow as cg_vx_collect meets them), so that
 * their effects (randint in an operand or a subscript) happen left to right: scalars
 * evaluated once (s<id>_), views as vectors (w<id>_) or, fast, as pointers and strides
 * (cg_view_decl). */
void cg_vx_decls(C *c, const VX *vx, bool fast);
/* A view leaf that fast code addresses as a pointer, a stride and a length (cg_vx_decls):
 * a view proven in its box (cg_view_fast), a local array or a view of one. */
bool cg_leaf_fast(const C *c, const OrnNode *e);
void cg_vx_setup(C *c, const VX *vx, int first);
void cg_vx_elem(C *c, const VX *vx, const OrnNode *e, int fast, int xid);
void cg_vx_hoist(C *c, const VX *vx);
void cg_vx_fast_cond(C *c, const VX *vx, int extra);
void cg_vx_unit_cond(C *c, const VX *vx, int extra);
void cg_ex_reduce(C *c, const OrnNode *e, int bi);
/* A dot jam (c_jam.c): whether every operand view that is not a transposed row is addressed
 * directly here (cg_leaf_fast); the sums of W values of the outer variable from cb<jam id>_. */
bool cg_jam_dot_ready(C *c, const OrnNode *call);
/* e is v, v + K, K + v or v - K (K an integer literal): *off = the offset (c_jam.c). */
bool cg_var_off(const OrnNode *e, const OrnSym *v, int64_t *off);
/* A read of the iteration space's element on the iteration's own row, A[i, j + c] with every
 * subscript its dimension's key and the run's key offset by the constant c: *off = c (c_loop.c). */
/* c_srow.c: whether e reads the space on the run's own row (A[i, j + c]: *off = c); whether
 * the fast version of a dense run gets a twin that reads such elements through row_ (the
 * space has a value and a box, its keys are all named, some read has c != 0; sets c's
 * srow_keys and srow_last); within that twin, whether A[i, j - 1] is carried in pv_ (read
 * at offset -1, nothing else writes the space: no element writes of it, no user function
 * calls, no buffer into it, no accumulators, no break, continue or return). */
bool cg_srow_read(const C *c, const OrnNode *e, int64_t *off);
bool cg_srow_version(C *c, const OrnCgLoop *l, const OrnSym *last);
bool cg_srow_carry(const C *c, const OrnCgLoop *l);
void cg_jam_dot_nest(C *c, const CgJam *j);
/* A view proven in its box by the fast version being emitted (version.h); cg_view_decl
 * declares its pointer q<id>_, stride t<id>_ and length n<id>_. */
bool cg_view_fast(const C *c, const OrnNode *e);
void cg_view_decl(C *c, const OrnNode *e, int id);

/* c_vassign.c: an assignment or buffer add whose target is a view. */
void cg_st_assign_view(C *c, const OrnNode *s);

/* c_stmt.c */
void cg_st_list(C *c, const OrnNode *list);
void cg_st_block(C *c, const OrnNode *blk);
void cg_st_assign(C *c, const OrnNode *s);
/* The C operator of a compound assignment (`+` for `+=`), NULL for `=`. */
const char *cg_assign_op(OrnOp op);
void cg_bind_var(C *c, const OrnSym *s, const char *type, const char *val);
int cg_for_bounds(C *c, const OrnNode *s);
void cg_for_open(C *c, const OrnNode *s);
/* The loop over [lo<id>_, hi<id>_) that cg_for_bounds declared, its variable bound. */
void cg_for_head(C *c, const OrnNode *s, int id);
void cg_for_close(C *c);
void cg_st_foreach(C *c, const OrnNode *s, bool values, const OrnBuf *pre_body);
/* c_hold.c: whether a top-level statement may write a dist array; a top-level loop's
 * holds on the dense dist arrays it reads, when it writes none (opened: true; close with
 * the result). */
bool cg_may_write(const OrnNode *n);
bool cg_hold_open(C *c, const OrnNode *s);
void cg_hold_close(C *c, bool held);
/* c_gather.c: in the fast loop over CSR row `id` (j<id>_ < rn<id>_, columns ro/rc), prefetch
 * what body reads at [key] or [key, ...] of the loop's boxed arrays CG_GATHER_AHEAD entries
 * ahead: called with head before the loop (the flags of the boxes large enough), then
 * inside it, at c->ind. */
void cg_gather_prefetch(C *c, const OrnNode *body, const OrnSym *key, int id, bool head);
/* The slots of the local arrays loop l's body declares by zeros/fill/rand/randn, declared
 * at the body function's top (pad: its indentation) and listed in c->slots: each iteration
 * takes the array the last one freed (orn_std_arr_take) instead of a new allocation. */
void cg_arr_slots(C *c, const OrnCgLoop *l, const char *pad);
void cg_st(C *c, const OrnNode *s);
/* cg_st without a warp kernel's barriers (cuda_warp.c places them). */
void cg_st_plain(C *c, const OrnNode *s);

/* For each buffer of loop l whose target the body reads through a box: bs<k>_, whether
 * the buffer adds in place into that box's storage (orn_rt_box_same; c_stmt.c). */
void cg_buf_alias_prologue(C *c, const OrnCgLoop *l, const char *indent);

/* c_for.c */
/* Whether expression e reads symbol s (a name, an array's base, inside subscripts). */
bool cg_mentions(const OrnNode *e, const OrnSym *s);
void cg_split_range(C *c, const OrnCgSpan *sp, int n, const char *lo, const char *hi, int id);
/* The same, narrowed to where the guards hold (version.h: orn_cg_guards). */
void cg_split_range_g(C *c, const OrnCgSpan *sp, int n, const OrnCgGuard *g, int ng, const char *lo,
                      const char *hi, int id);
void cg_span_full(C *c, const OrnCgSpan *sp);
void cg_span_test(C *c, const OrnCgSpan *sp);
void cg_span_clip(C *c, const OrnCgSpan *sp, const char *f0, const char *f1);
/* Whether loop l's plan has halos known only at run time (windows, lower.h). */
bool cg_loop_windows(const OrnCgLoop *l);
/* The body of a loop over var (a `for`, a row view's `for (k, v)`); fast: the version
 * whose accesses the loop's once-per-range test proved, addressed without tests. */
void cg_loop_body(C *c, const OrnSym *var, const OrnNode *body, int fast);
/* The same for a `for (k, v) in ...`: v changes with k (varying). */
void cg_loop_body_in(C *c, const OrnSym *var, const OrnSym *varying, const OrnNode *body, int fast);
void cg_st_for(C *c, const OrnNode *s);
/* Whether `for` f is a loop reduction (docs/language.md, section 13). */
bool cg_for_is_reduction(const C *c, const OrnNode *f);

/* c_jam.c */
/* Whether `for` f (in a loop body) holds a loop reduction that can be computed for a vector
 * of f's values at once; fills j. */
bool cg_jam_match(const C *c, const OrnNode *f, CgJam *j);
/* At the start of a loop body's function: the pointers of its jams' transposed copies. */
void cg_jam_prologue(C *c);
/* `for` f as a jam when it is one of the body's (true: written); the reduction inside the
 * jam's outer loop, replaced by its sum (cg_jam_sum); an element of a transposed array in
 * the jam's vector code (cg_jam_elem). */
bool cg_jam_for(C *c, const OrnNode *f);
bool cg_jam_sum(C *c, const OrnNode *f);
/* The bounds lo<id>_, hi<id>_ of the jam's outer loop f: the chunk being written. */
bool cg_jam_chunk(C *c, const OrnNode *f, int id);
bool cg_jam_elem(C *c, const OrnNode *e);
/* In a dot jam: whether view leaf e is a transposed array's row, its element x (a C
 * expression); the sums' tree of the W values (partials r<rid>_[L][W]) into the jam's sums;
 * the jam's value in place of dot's call e (the outer loop). */
bool cg_jam_leaf(const C *c, const OrnNode *e);
void cg_jam_leaf_elem(C *c, const OrnNode *e, const char *x);
void cg_jam_tree(C *c, int rid, int L);
/* The same tree of the partials kept as vectors p<rid>_<l>_<h>_ (of type jv<rid>_, chunk h
 * of OrnCgProgram.vec_bytes bytes of the W values, started at -0: c_for.c reduce_jam_regs)
 * into the jam's sums from value `at` on, plus +0. */
void cg_jam_tree_regs(C *c, int rid, int L, int h, int at);
/* The sum vector v (of type jv<rid>_, started at -0) plus +0 into the jam's sums from value
 * `at` on: cg_jam_tree_regs's end, and c_for.c's tree made as the terms come. */
void cg_jam_store_sum(C *c, int rid, const char *v, int at);
/* The loop over the jam's vector of W values (cc<id>_), the outer variable bound in it; the
 * caller closes it. */
void cg_jam_vec_open(C *c, int id);
bool cg_jam_value(C *c, const OrnNode *e);

/* c_expr.c: e free of effects (constants, names, operators, BI_CONST built-ins), with
 * element reads when `reads`, of none of the n arrays in avoid. */
bool cg_pure_expr(const OrnNode *e, bool reads, const OrnSym *const *avoid, int n);
/* c_coljam.c: the whole groups of W keys of a fast dense run [from, to) whose body is one
 * `for` adding into buffers at its variable, jammed; the rest from jl_ is the caller's. */
bool cg_coljam(C *c, const OrnCgLoop *l, const OrnSym *key, const char *vt, const char *from,
               const char *to, int lvl);
/* c_jam.c: the same for a fast dense run whose body has a loop reduction (conv1d's
 * `for k ... s += X[i + k] * w[k]`) reading the key only in unit-stride subscripts: the
 * reduction's sums of W keys at once, partial l of key j in r[l][j - jl_] (the same partials,
 * tree and bits), then the W keys' statements reading them; the rest from jl_ is the
 * caller's. */
bool cg_keyjam(C *c, const OrnCgLoop *l, const OrnSym *key, const char *vt, const char *from,
               const char *to, int lvl);
/* c_scatter.c: a run's body that is one `B[e] += d` or `-= d` into a one-dimensional buffer
 * B, e and d free of element reads (a histogram: `H[i64(v * bins)] += 1`): the statement,
 * else NULL. */
const OrnNode *cg_scatter_stmt(C *c, const OrnCgLoop *l, const OrnNode *blk);
/* The elements [from, to) of such a run at indentation lvl: the keys a chunk at a time, the
 * adds in place when the chunk's keys lie in B's box, else each through orn_rt_bbadd_. */
void cg_scatter_loop(C *c, const OrnSym *last, const char *vt, const char *from, const char *to,
                     const OrnNode *s, int lvl);
/* A dense space of two or more keys whose body is that statement keyed by the run's own key
 * plus a constant (column sums): two whole rows at a time; nothing when it does not apply. */
void cg_scatter_rows(C *c, const OrnCgLoop *l, const OrnSym *const *keys, int nd, const char *vt);
/* c_loop.c: the statements of a fast dense run's key (bound to the C expression key) at
 * indentation lvl: its value pointer vp_ into row_ (vt: the value's C type, or NULL). */
void cg_elem_body(C *c, const OrnCgLoop *l, const OrnSym *last, const char *vt, const char *key,
                  int lvl);

/* cuda_gpu.c (@gpu loops under --gpu) */
/* Does the CUDA back end run this loop's body? If not, the first construct it does not run
 * and a description of it. */
bool cg_gpu_check(const C *c, const OrnCgLoop *l, const OrnNode **bad, const char **why);
/* The plan arrays whose rows the body walks, a bit each (OrnGpuKernel.rows). */
uint32_t cg_gpu_rows(const OrnCgLoop *l);
/* A @gpu loop of a --gpu build that the CUDA back end runs. */
bool cg_gpu_loop(const C *c, const OrnCgLoop *l);
void cg_gpu_env(C *c, const OrnCgLoop *l);
void cg_gpu_env_locals(C *c, const OrnCgLoop *l);
void cg_gpu_host(C *c, const OrnCgLoop *l);

/* cuda_warp.c (warp kernels of the CUDA back end) */
/* Does the CUDA back end run this loop body on warps (it has view work to split)? */
bool cg_warp_loop(const C *c, const OrnCgLoop *l);
/* cuda_rows.c: the arrays of a warp kernel whose row views go through the warp's row cache
 * (c->rc_slot, rc_wr, nrc), leaving out the plan arrays of `dropped` (bits); and, for the
 * body written with them, the plan arrays it addresses otherwise too (bits: drop them and
 * write the body again). */
void cg_gpu_rc_choose(C *c, const OrnCgLoop *l, uint32_t dropped);
uint32_t cg_gpu_rc_check(const C *c, const char *body, size_t n);
/* cuda_pref.c: orn_gpu_pref_N, the prefetch of a warp kernel's next element, when the body
 * has accesses its keys alone address; false (nothing written) otherwise. */
bool cg_gpu_pref(C *c, const OrnCgLoop *l, int id);
/* Is s the name of one of the loop's keys? */
bool cg_is_loop_key(const OrnLoop *lp, const OrnNode *s);
/* The element function's body: its start (warp-uniform code, with the accesses a previous
 * iteration may have left unsynchronized) and end (pending writes synchronized). cg_warp_end
 * returns whether what this iteration leaves is within start, else adds it there: the body
 * must then be written again from the new start. */
void cg_warp_begin(C *c, const WarpAcc *start);
bool cg_warp_end(C *c, WarpAcc *start);
/* A statement of warp-uniform code: the barrier its accesses need first, then cg_st_plain. */
void cg_warp_st(C *c, const OrnNode *s);
/* A block of a compound statement in warp-uniform code: its start and end. */
void cg_warp_block_begin(C *c);
void cg_warp_block_end(C *c);
/* Inside the statement being written, between its evaluation on every lane and its writes:
 * the barrier it needs there, if any. */
void cg_warp_mid(C *c);
/* orn_gpu_sync(L_): a barrier; pending writes: one if there are any. */
void cg_warp_sync(C *c);
void cg_warp_flush(C *c);
/* A shared write's right side that lane 0 evaluates alone (no effects, no split work). */
bool cg_warp_lane0(const C *c, const OrnNode *rhs);
/* An element-wise view statement that a warp splits across its lanes. */
bool cg_warp_view_split(const C *c, const OrnNode *s);

/* c_loop.c */
/* Seed the iteration's random stream rng_ from its logical key (runtime keys in kk_, the
 * block in b_). */
void cg_rng_iter(C *c, const OrnCgLoop *l, const char *pad);
/* c_prefetch.c: the prefetch slice of a statement list: what decides which elements the
 * statements read, each read announced instead of made. */
void cg_pf_list(C *c, const OrnNode *list);
void cg_fn_params(C *c, const OrnNode *fn, bool first);
OrnTypeKind cg_fn_ret(const OrnNode *fn);
void cg_c_function(void *st_, const OrnNode *fn);
void cg_c_loop(void *st_, const OrnCgLoop *l);

#endif
