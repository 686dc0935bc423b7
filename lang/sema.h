/* sema.h: symbols and the results of semantic analysis.
 *
 * orn_sema() resolves every name, types every expression, checks every rule of
 * docs/language.md (sections 3 to 9) and records, for each parallel_for, what later passes
 * need (OrnLoop). It reports all errors it finds through the unit's diagnostics. */
#ifndef ORN_SEMA_H
#define ORN_SEMA_H

#include <stdbool.h>

#include "ast.h"
#include "types.h"

typedef enum {
#define X(e, name, lo, hi, flags) ORN_##e,
#include "builtins.def"
#undef X
    ORN_BI__COUNT
} OrnBuiltin;

enum { BI_COLLECTIVE = 1, BI_CONST = 2, BI_NOLOOP = 4, BI_TYPEARG = 8 };

typedef struct OrnBuiltinInfo {
    const char *name;
    int min_args, max_args; /* max -1: variadic */
    int flags;
} OrnBuiltinInfo;
extern const OrnBuiltinInfo orn_builtins[ORN_BI__COUNT];
int orn_builtin_lookup(const char *name); /* ORN_BI_* or -1 */

typedef enum {
    SYM_VAR,    /* variable (top level or local) */
    SYM_CONST,  /* const: cval holds the folded value */
    SYM_PARAM,  /* run-time param: cval holds the default */
    SYM_DIST,   /* dist array or buffer */
    SYM_FN,     /* fn (decl->u.fn); type: its result type, T_VOID without one */
    SYM_EXTERN, /* extern fn (decl->u.fn); type as for SYM_FN */
    SYM_ARG,    /* parameter of a fn */
    SYM_KEY,    /* parallel_for key (read-only) */
    SYM_VALUE,  /* parallel_for value variable */
    SYM_LOOPVAR /* for-loop variable (i in 0..n; k, v in view) */
} OrnSymKind;

typedef struct OrnConstVal {
    OrnTypeKind kind; /* T_BOOL, T_I64, T_F64, T_STR (T_I32/T_F32 after conversions) */
    int64_t i;
    double f;
    bool b;
    const char *s;
    size_t slen;
} OrnConstVal;

struct OrnSym {
    OrnSymKind kind;
    const OrnName *name;
    const OrnType *type;
    OrnSpan span;        /* where it is declared */
    OrnNode *decl;       /* declaring node (N_ASSIGN, N_CONST, N_PARAM, N_DIST, N_FN, N_ARG,
                            N_FOR, N_FOREACH, N_PARFOR) */
    bool global;         /* declared at top level */
    OrnNode *fn;         /* enclosing N_FN, or NULL */
    OrnNode *parfor;     /* enclosing N_PARFOR where declared, or NULL */
    OrnConstVal cval;    /* SYM_CONST, SYM_PARAM */
    int key_index;       /* SYM_KEY: which key (0-based) */
    int id;              /* unique per unit, in declaration order (for codegen names) */
    bool assigned_in_fn; /* written inside some fn */
    bool readonly_value; /* SYM_VAR: the value of a `for (k, v) in` (sema_rewrite.c) */
};

typedef enum { ACC_SUM, ACC_PROD, ACC_MIN, ACC_MAX } OrnAccKind;

typedef struct OrnAccum {
    OrnSym *sym;
    OrnAccKind kind;
    OrnSpan first; /* first update inside the loop */
} OrnAccum;

/* What sema learned about one parallel_for. */
struct OrnLoop {
    OrnNode *node; /* the N_PARFOR */
    int index;     /* 0-based, in source order */
    OrnSym *space; /* the dist array iterated */
    OrnSym *keys[4];
    int nkeys;
    OrnSym *value;    /* or NULL */
    OrnAccum *accums; /* accumulators, in order of first update */
    int naccums;
    OrnSym **buffers; /* buffers updated in the body (directly or in callees) */
    int nbuffers;
    OrnNode **callees; /* N_FN of user functions called, transitively, deduplicated
                          (externs are not included), breadth-first from the body */
    int ncallees;
    OrnSym **outer_reads; /* non-dist outer variables/params/consts/loop variables read
                             (replicated) in the body or by its callees; accumulators
                             are not included */
    int nouter_reads;
};

typedef struct OrnSema {
    OrnLoop **loops; /* every parallel_for in source order */
    int nloops;
    OrnSym **syms; /* every symbol, by id */
    int nsyms;
    OrnNode **fns; /* every N_FN (fn and extern), in source order */
    int nfns;
} OrnSema;

typedef struct OrnUnit OrnUnit;
/* Runs semantic analysis on u->program; fills u->sema. Returns false if any error. */
bool orn_sema(OrnUnit *u);

/* The value of a constant expression of an analysed unit (literals, consts, arithmetic,
 * comparisons, and/or/not, conversions and the BI_CONST built-ins), without reporting
 * anything; false if e is not constant (or folding it would overflow or divide by zero).
 * For later passes, e.g. subscripts a*k + c with a and c consts. */
bool orn_sema_eval_const(const OrnNode *e, OrnConstVal *out);
/* Whether print takes the typed expression e: a number, bool or str, a named array (not the
 * lines of load_text), or a view (an element-wise expression only over dense views). */
bool orn_sema_printable(const OrnNode *e);

#endif
