/* sema_int.h: private to semantic analysis (sema.c, sema_expr.c, sema_call.c, sema_fold.c,
 * sema_loop.c, sema_infer.c).
 *
 * One `Sema` context lives for the duration of orn_sema(). It owns the scope stack (a
 * binding stack plus a name -> innermost binding map), every symbol created so far, one
 * FnInfo per top-level fn and one LoopCtx per parallel_for. Heap vectors here are freed when
 * orn_sema() returns; what later passes keep is copied into the unit's arena. */
#ifndef ORN_SEMA_INT_H
#define ORN_SEMA_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "sema.h"
#include "unit.h"

/* Append x to the heap vector (v, n, cap), growing it geometrically. */
#define ORN_VPUSH(v, n, cap, x)                                                                    \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? 2 * (cap) : 8;                                                         \
            (v) = orn_xrealloc((v), (size_t)(cap) * sizeof *(v));                                  \
        }                                                                                          \
        (v)[(n)++] = (x);                                                                          \
    } while (0)

#define ORN_ERR(s, span, ...)     orn_diag((s)->d, ORN_ERROR, (span), __VA_ARGS__)
#define ORN_NOTE_AT(s, span, ...) orn_diag((s)->d, ORN_NOTE, (span), __VA_ARGS__)
#define ORN_NOTE(s, ...)          orn_note_plain((s)->d, __VA_ARGS__)
#define ORN_TSTR(s, t)            orn_type_str((s)->ty, (t))

/* Open-addressing map from interned name to an int (binding index, or a flag). */
typedef struct OrnSemaMap {
    const OrnName **keys;
    int *vals;
    size_t cap, count;
} OrnSemaMap;

typedef struct OrnSemaBinding {
    const OrnName *name;
    OrnSym *sym;
    int prev;  /* the binding of the same name it hides, or -1 */
    int scope; /* index of the scope that holds it */
} OrnSemaBinding;

/* A top-level fn or extern: its signature (resolved before any body is checked, so calls
 * may precede definitions) and what its body does, for the parallel_for rules. */
typedef struct OrnSemaFn {
    OrnNode *fn;
    OrnSym *sym;
    const OrnType **ptypes; /* nparams, arena */
    int nparams;
    const OrnType *ret; /* T_VOID without "-> T" */
    OrnSym *clash;      /* an earlier fn of the same name (reported at the definition) */
    /* direct facts about the body */
    OrnNode **callees; /* user fns (N_FN, not externs) called directly, deduplicated */
    int ncallees, capcallees;
    OrnSym **bufs; /* buffers updated directly */
    int nbufs, capbufs;
    OrnSym **reads; /* top-level non-dist symbols read directly */
    int nreads, capreads;
    OrnNode *bad;         /* first call that may not run inside parallel_for, or NULL */
    const char *bad_name; /* its built-in name */
    bool bad_collective;  /* collective (else: ends the program) */
    /* computed after every body is checked */
    OrnNode *reach_bad; /* first such call reachable through calls, or NULL */
    const char *reach_bad_name;
    bool reach_bad_collective;
} OrnSemaFn;

enum { ACC_NONE = -1, ACC_BAD = 100 };

/* An outer symbol touched inside the current parallel_for body. */
typedef struct OrnSemaOuter {
    OrnSym *sym;
    int acc;       /* ACC_NONE: not written; ACC_SUM..ACC_MAX; ACC_BAD */
    OrnSpan first; /* first update */
    bool read;     /* read other than as the x of its own x = min(x, e) */
    OrnSpan read_span;
    bool mixed_reported;
} OrnSemaOuter;

typedef struct OrnSemaLoop {
    OrnLoop *info;
    int sym_base; /* symbols with id < sym_base were declared outside */
    OrnSemaOuter *outer;
    int nouter, capouter;
    OrnNode **calls; /* N_CALL of user fns in the body */
    int ncalls, capcalls;
    OrnSym **bufs;
    int nbufs, capbufs;
} OrnSemaLoop;

/* Float inference (docs/language.md, "Float inference"): a local of a parallel_for or fn
 * body first assigned a weak f64, and what its later assignments store. */
typedef struct OrnSemaCand {
    OrnNode *decl; /* the declaring N_ASSIGN (the same node in every run) */
    OrnSym *sym;
    bool f32; /* some update stores an f32 value */
    bool f64; /* some update stores a value that is neither f32 nor weak */
} OrnSemaCand;

/* A top-level name declared somewhere in the program (for "declared later" hints). */
typedef struct OrnSemaLater {
    const OrnName *name;
    OrnSpan span;
} OrnSemaLater;

typedef struct Sema {
    OrnUnit *u;
    OrnTypes *ty;
    OrnDiags *d;
    /* scopes */
    OrnSemaBinding *binds;
    int nbinds, capbinds;
    int *scopes; /* first binding index of each open scope */
    int nscopes, capscopes;
    OrnSemaMap map;     /* name -> innermost binding index */
    OrnSemaMap unknown; /* names already reported as unknown */
    /* results */
    OrnSym **syms;
    int nsyms, capsyms;
    OrnSemaFn *fns;
    int nfns;
    OrnSemaLoop **loops;
    int nloops, caploops;
    OrnSemaLater *later;
    int nlater, caplater;
    /* where we are */
    OrnSemaFn *fn;            /* fn whose body is being checked, or NULL */
    OrnSemaLoop *loop;        /* parallel_for whose body is being checked, or NULL */
    int seqloops;             /* for/while loops open inside the current fn or parallel_for */
    int depth;                /* open blocks; 0 at top level */
    int quiet_collective;     /* > 0: inside a misplaced dist (already reported) */
    const OrnNode *dist_init; /* the call that initializes the dist being declared */
    const OrnNode *var_init;  /* the call that initializes a variable: x = call(...) */
    const OrnNode *selfread;  /* the x of x = min(x, e) inside a parallel_for */
    OrnNode **applies;        /* N_KWARG apply = f of every buffer() */
    int napplies, capapplies;
    /* float inference: orn_sema() runs the walk again until the f32 set is stable */
    OrnNode *const *f32decls; /* in: declarations typed f32 in this run */
    int nf32decls;
    OrnSemaCand *cands; /* out: every candidate declared in this run */
    int ncands, capcands;
    bool probe;             /* a silent run that only decides the f32 set */
    const OrnSym *selfweak; /* probe: the variable whose update is being checked */
} Sema;

/* sema.c: one walk of the whole program, diagnostics to d, the declarations f32decls typed
 * f32; fills u->sema and the nodes. With next: the f32 set after this run (heap). Returns
 * the number of float inference candidates. */
int orn_sema_walk(OrnUnit *u, OrnDiags *d, OrnNode *const *f32decls, int nf32decls, bool probe,
                  OrnNode ***next, int *nnext);
OrnSym *orn_sema_lookup(Sema *s, const OrnName *id);
void orn_sema_note_decl(Sema *s, const OrnSym *sym);
void orn_sema_note_rank0(Sema *s, const char *name);
/* `name` (a built-in, or "+" for '+' on str) is not allowed inside parallel_for: an error
 * there, recorded in a fn (reported where a loop calls it). */
void orn_sema_not_in_loop(Sema *s, OrnNode *e, const char *name, bool collective);
const char *orn_sema_describe(Sema *s, const OrnSym *sym);
void orn_sema_unknown(Sema *s, const OrnName *id, OrnSpan span, bool call);
void orn_sema_record_read(Sema *s, OrnNode *name, OrnSym *sym);
void orn_sema_record_call(Sema *s, OrnNode *call, OrnSemaFn *callee);
void orn_sema_record_bad(Sema *s, OrnNode *call, const char *what, bool collective);
OrnSemaFn *orn_sema_fn_of(Sema *s, const OrnSym *sym);
OrnSpan orn_sema_prefix(Sema *s, OrnSpan span, const char *word);
OrnSemaOuter *orn_sema_outer(OrnSemaLoop *l, OrnSym *sym);
void orn_sema_push_scope(Sema *s);
void orn_sema_pop_scope(Sema *s);
OrnSym *orn_sema_declare(Sema *s, OrnNode *var, OrnSymKind kind, const OrnType *t, OrnNode *decl);
void orn_sema_stmts(Sema *s, OrnNode *list);

/* sema_loop.c */
void orn_sema_parfor(Sema *s, OrnNode *n);
void orn_sema_post(Sema *s);

/* sema_expr.c */
const OrnType *orn_sema_expr(Sema *s, OrnNode *e);
const OrnType *orn_sema_subscripts(Sema *s, OrnNode *index, const OrnType *arr, const OrnSym *sym);
const OrnType *orn_sema_arith(Sema *s, OrnOp op, const OrnType *l, const OrnType *r, OrnSpan span,
                              OrnSpan lspan, OrnSpan rspan);
bool orn_sema_var_convertible(const OrnType *to, const OrnType *from);
bool orn_sema_is_typename(const OrnName *id);
const OrnType *orn_sema_terr(Sema *s);
bool orn_sema_weak(const Sema *s, const OrnNode *e);
/* `x op= e` (n) with x f32 (`target`: a scalar, an element or a view of f32) and e a weak f64
 * (vt): e converts to f32 first, as in `x = x op e` -- the value becomes f32(e), typed;
 * returns the value's type. In the final run only (the probes decide which locals are f32);
 * idempotent. */
const OrnType *orn_sema_narrow_update(Sema *s, OrnNode *n, const OrnType *target,
                                      const OrnType *vt);

/* Shared by sema_expr.c and sema_call.c. */
static inline const OrnType *orn_sema_scalar(Sema *s, OrnTypeKind k)
{
    return orn_type_scalar(s->ty, k);
}
/* T_ERROR (or no type yet): accepted silently by every check. */
static inline bool orn_sema_is_err(const OrnType *t)
{
    return !t || t->kind == T_ERROR;
}
/* The plural suffix of a count in a message: "1 argument", "2 arguments". */
static inline const char *orn_sema_plural(long n)
{
    return n == 1 ? "" : "s";
}

/* sema_call.c */
const OrnType *orn_sema_call(Sema *s, OrnNode *e, bool want_value);
int orn_sema_builtin_of(const OrnName *id);

/* sema_rewrite.c: `for (k, v) in` a dense view or local 1-D array (type t, already checked)
 * rewritten in place as `for k in 0..n` with `v = X[e, k]` first; false: left as it is. */
bool orn_sema_foreach_as_for(Sema *s, OrnNode *n, const OrnType *t);
/* A `for` (checked) whose body is one `if` bounding the loop variable: the for over the
 * range where it holds, its body the if's, rewritten in place; else left as it is. */
void orn_sema_for_narrow(Sema *s, OrnNode *n);
/* sema_rewrite.c 3.: an invariant element read that is a subscript, read once before the
 * loop (n becomes `if lo < hi` around the read and the loop). */
void orn_sema_for_hoist(Sema *s, OrnNode *n);

/* sema_fold.c */
bool orn_sema_fold(Sema *s, const OrnNode *e, OrnConstVal *v);

/* sema_infer.c */
void orn_sema_infer_decl(Sema *s, OrnNode *n, OrnNode *val, OrnSym *sym);
OrnSemaCand *orn_sema_cand(Sema *s, const OrnSym *sym);
void orn_sema_infer_update(Sema *s, OrnNode *n, OrnSemaCand *c);

#endif
