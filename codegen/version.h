/* version.h: loop versioning for direct element access (shared lowering, every back end).
 *
 * Inside a loop body, an element access A[s0, s1, ...] to an array the block holds densely
 * compiles to a load or store on the block's storage after a bounds test (the key lies in
 * the view's box; otherwise the view's slow path serves it). A `for v in lo..hi` loop whose
 * accesses all have subscripts of the form `v + c` or loop-invariant can instead test once:
 * every access's key range over [lo, hi) lies in its box. The emitter then writes the loop
 * twice, a fast version with plain loads and stores (which the C compiler vectorizes) and
 * the checked version for when the test fails.
 *
 * orn_cg_for_spans() decides whether a `for` qualifies and lists the spans to test: per
 * (array, dimension), either the loop variable plus an offset or an invariant expression.
 * It rejects loops whose bodies call user functions (their clones address arrays the
 * analysis does not see), assign the loop variable, or index with anything else. */
#ifndef ORN_CG_VERSION_H
#define ORN_CG_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#include "lower.h"

typedef struct OrnCgSpan {
    int array;                /* index in the loop's plan arrays; -1 for a local array */
    const OrnSym *local;      /* a local array (row-major, extents in its OrnStdArr), or NULL */
    int dim;                  /* array dimension, in storage order */
    bool var;                 /* subscript is the loop variable + off */
    int64_t off;              /* var: the constant offset */
    const OrnNode *inv;       /* !var: the loop-invariant subscript expression; var: NULL,
                                 or an invariant shift added (`i + lag`, and a window moved
                                 by it: `i + kw - 1 - k`); !var, range: its start */
    bool full;                /* the whole extent of dim (a view's ':'; var and inv unset) */
    bool range;               /* a nested loop's variable + off: [rlo + off, rhi - 1 + off];
                                 with var, a window: var + (+-)n + off, n over [rlo, rhi) */
    bool neg;                 /* range: minus the nested loop's variable (off - n) */
    const OrnNode *rlo, *rhi; /* range: that loop's bounds (invariant) */
    bool buffer;              /* a buffer's key: the box of its in-place updates (B<array>_) */
} OrnCgSpan;

enum { ORN_CG_MAXSPAN = 32 };

/* Windows: a subscript `var + n + c` (or `var - n + c`, in any order of the terms) with n the
 * variable of a nested loop whose bounds are invariant (`X[i + k]` in `for k in 0..w`)
 * spans the window around var: a `var` span with `range` set, clipped at both ends of the
 * window (the offsets of the nested loop's first and last values), so the inner loop runs
 * without tests in the var range where every window lies in the box (a 1-D convolution). */

/* Whether array k of loop l may be addressed through a box (dense, not a buffer). */
bool orn_cg_boxable(const OrnCgLoop *l, int k);

/* The spans a once-per-range test must check before running `for_stmt` (an N_FOR inside
 * loop l's body) without per-access tests. Returns false when versioning does not apply
 * (including when the body addresses no boxable array). */
bool orn_cg_for_spans(const OrnCgLoop *l, const OrnNode *for_stmt, OrnCgSpan *spans, int *nspans);

/* The same for a loop that may leave early (a `break` of its own): such a loop is not cut
 * into segments but versioned whole -- the fast version when the test proves the whole
 * range, else the checked one (LDA's search for the sampled topic). */
bool orn_cg_for_spans_whole(const OrnCgLoop *l, const OrnNode *for_stmt, OrnCgSpan *spans,
                            int *nspans);

/* The same for the innermost key of a parallel_for over a dense space: var is that key,
 * body the loop body, and the value variable changes with it (value_varies). With bufs,
 * the keys of the buffer elements the body adds to are listed too, as in
 * orn_cg_foreach_spans below. */
bool orn_cg_range_spans(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body,
                        bool value_varies, OrnCgSpan *spans, int *nspans, bool *bufs);

/* Views `W[u, :]` of a boxable 2-D array take part too, when their fixed subscript has one
 * of the forms above: the test then also checks that the whole extent along ':' lies in
 * the box (a `full` span), and the fast version addresses the view as a pointer and a
 * stride, without a view descriptor (c_view.c). Views whose subscript does not qualify are
 * left to their own checked path without ruling the split out.
 *
 * Nested `for` loops whose bounds are invariant: a subscript that is such a loop's
 * variable plus a constant spans the loop's whole range (a `range` span), so one test
 * before the outer loop covers the inner ones too (k-means' C[c, j] inside `for c`, `for
 * j`), and the inner loops run without tests or splitting.
 *
 * Whether `view` (an N_INDEX -- a view, or an element of a local array -- inside the loop
 * over var with this body; value_varies as given to orn_cg_range_spans) is covered by the
 * test: the same walk, asked about that access. */
bool orn_cg_view_proven(const OrnCgLoop *l, const OrnSym *var, const OrnSym *varying,
                        const OrnNode *body, bool value_varies, const OrnNode *view);

/* The spans of a `for (k, v) in view` (N_FOREACH) over its key k: as orn_cg_range_spans,
 * with the value v changing with k (varying, for orn_cg_view_proven). The keys of the
 * buffer elements the body adds to are listed too (spans with `buffer`: the test then
 * also puts each in the box its updates go to in place, orn_rt_bbox) when every one has
 * one of the forms above; *bufs says whether they were (bufs NULL: not listed, as in
 * device code, which has no such box). */
bool orn_cg_foreach_spans(const OrnCgLoop *l, const OrnNode *foreach_stmt, OrnCgSpan *spans,
                          int *nspans, bool *bufs);

/* Local arrays (`C[c, j]` on a top-level or body-local array) take part in the test when
 * every subscript of the access has one of the forms above and the body does not reassign
 * the array (its extents are then fixed for the range): their spans are listed with
 * `local` set, and accesses that do not qualify keep their per-access test without ruling
 * the split out (orn_cg_view_proven answers for them too). */

/* Scalar replacement: the arrays whose every access in `body` (a loop body run for each
 * value of var, the column key of a CSR walk) is one and the same element while var
 * varies -- identical subscripts, each invariant -- and that body writes, or only reads
 * (PageRank's push `pr[s] / outdeg[s]` over s's edges: loaded once per row, so the
 * compiler also hoists the division; not when a buffer of the loop updates the array).
 * Such an element may live in a local for the whole run of var (loaded before, stored
 * after when written): nothing else
 * in the body can reach it (no user function calls, no whole-array or view uses of the
 * array; distinct dist arrays never share storage). The iteration space (array 0) and
 * arrays that are not boxable are never listed. A buffer's element qualifies too when the
 * body only adds to it (+=, -=) and never uses the array it updates (buffer set): its adds
 * go in order into the buffer's in-place storage (orn_rt_bbox), where nothing else reads
 * them during the run; the code falls back to the adds when there is none. Returns how many
 * (at most max). */
enum { ORN_CG_MAXFIXED = 8 };
typedef struct OrnCgFixed {
    int array;             /* plan array index */
    const OrnNode *access; /* one of its accesses (N_INDEX): the subscripts */
    bool written;
    bool buffer; /* a buffer's element (only added to) */
} OrnCgFixed;
int orn_cg_fixed_elems(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, OrnCgFixed *out,
                       int max);

/* Index-set splitting. A dense loop body that is one `if COND` without else, where COND is
 * a conjunction of terms each either invariant along the innermost key var (evaluated
 * once per row) or a comparison `var OP e` / `e OP var` with e an invariant integer
 * expression (a bound), holds COND exactly on one interval of var: [max of the lower
 * bounds, min of the upper ones) when the row terms hold, empty otherwise. The emitter
 * runs that interval with the `if`'s statements alone (no per-element test, no masked
 * stores) and the rest of the row as written. Every term is free of side effects and of
 * division, so evaluating it once, even where the `and` would not have reached it, can
 * neither trap nor differ. */
/* Guards proven over a range. An `if` anywhere in the body of a loop over var (inside
 * nested `for` loops with invariant bounds too) whose condition is a conjunction of
 * comparisons `A OP B` (or `B OP A`), B an invariant integer expression and A of the
 * window form of version.h -- var (coefficient 1) or not, plus at most one nested loop's
 * variable n, an invariant term and a constant, through the variables the body declares
 * by their only assignment (`cc = c + dc` ... `if cc >= 0 and cc < w`) -- holds for every
 * value n takes where var lies in one interval: a term with var bounds it (the extreme n
 * over its loop's range), one without var is a test made once before the loop. The
 * emitter narrows the fast range to that interval (cg_split_range_g) and writes such an
 * `if` there as its statements alone: a 3x3 filter whose neighbours are tested against
 * the extents then runs its interior without tests, as hand-written C does. Clamps the same
 * way: an integer `min(A, U)` (`max(A, L)`), U invariant, is A where A <= U (A >= L), and
 * nested ones (`min(max(r + dr, 0), h - 1)`) compare the innermost A; such a call is listed
 * with the `if`s (ifs[i]) and keep[i] is the argument it is in the narrowed range (NULL for
 * an if), so a blur clamped to the edge runs its interior as the tested one does. */
enum { ORN_CG_MAXGUARD = 16 };
typedef struct OrnCgGuard {
    int kind;                 /* 0: var >= bound, 1: var < bound, 2: test */
    const OrnNode *b;         /* B */
    const OrnNode *inv;       /* A's invariant term, or NULL */
    const OrnNode *rlo, *rhi; /* n's loop bounds, or NULL (no n) */
    int nsign;                /* +1: A holds +n, -1: -n */
    int64_t c;                /* A's constant */
    OrnOp op;                 /* test: A OP B (A at n's extreme for OP) */
} OrnCgGuard;
int orn_cg_guards(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, bool value_varies,
                  OrnCgGuard *g, int maxg, const OrnNode **ifs, const OrnNode **keep, int *nifs,
                  int maxifs);

enum { ORN_CG_MAXBOUND = 8 };
typedef struct OrnCgSplit {
    const OrnNode *then; /* the if's N_BLOCK */
    const OrnNode *row[ORN_CG_MAXBOUND];
    int nrow;
    struct {
        const OrnNode *e;
        int plus1; /* the bound is e + 1 (var > e, var <= e) */
    } lo[ORN_CG_MAXBOUND], hi[ORN_CG_MAXBOUND];
    int nlo, nhi;
} OrnCgSplit;
bool orn_cg_split_if(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, OrnCgSplit *out);

/* Row pointers. In the fast version of `for var in lo..hi` (its accesses proven in their
 * boxes), an element access (or a buffer update) whose unit-stride subscript -- the last in storage
 * order, of a boxable dist array or a local array -- is `var + c` and whose other subscripts are
 * invariant (no division, nothing the body assigns) reads one row: its address without the
 * last subscript is computed once before the loop (`rp = base + at(s0, .., 0)`) and each
 * read is `rp[var + c]`, the same element. The C compiler then sees unit-stride loads off
 * one pointer (k-means' `X[i, j] - C[c, j]` over j) and vectorizes them as a hand-written
 * loop. Reads of the same row share one pointer (`group`: the index of the first). Whether
 * each is proven is the caller's question (the same as its per-access one). */
enum { ORN_CG_MAXROWS = 16 };
typedef struct OrnCgRow {
    const OrnNode *access; /* the N_INDEX */
    int array;             /* plan array index; -1: a local array */
    int last;              /* the logical dimension stored last (unit stride) */
    int group;             /* index of the first row of the same array and subscripts */
    bool buffer;           /* an update of a buffer (array): its row exists only where the
                              buffer adds in place (a non-empty hoisted box), tested once */
    int64_t off;           /* the last subscript is var + off */
} OrnCgRow;
int orn_cg_rows(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, OrnCgRow *out, int max);

#endif
