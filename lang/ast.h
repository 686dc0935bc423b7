/* ast.h: the syntax tree.
 *
 * Nodes live in the unit's arena. Lists are singly linked through `next` (a list is its
 * first node; NULL is the empty list). Names are interned (compare by pointer). The parser
 * fills kind, span and the union; semantic analysis fills `type` (expressions) and the
 * `sym`/`builtin`/`info` fields documented below. Nothing else writes nodes. */
#ifndef ORN_AST_H
#define ORN_AST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "intern.h"
#include "source.h"

typedef enum {
#define X(k, s) k,
#include "ast.def"
#undef X
    N__COUNT
} OrnNodeKind;

typedef enum {
    OP_NONE,
    /* binary */
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_AND,
    OP_OR,
    /* unary */
    OP_NEG,
    OP_NOT,
    /* assignment: OP_NONE is plain '=', else OP_ADD/OP_SUB/OP_MUL/OP_DIV for += -= *= /= */
} OrnOp;

typedef struct OrnNode OrnNode;
typedef struct OrnType OrnType; /* types.h */
typedef struct OrnSym OrnSym;   /* sema.h */
typedef struct OrnLoop OrnLoop; /* sema.h */

struct OrnNode {
    OrnNodeKind kind;
    OrnSpan span;
    OrnNode *next;       /* next in the enclosing list */
    const OrnType *type; /* sema: type of an expression (NULL for statements) */
    union {
        struct {
            int64_t v;
        } ilit; /* N_INT */
        struct {
            double v;
        } flit; /* N_FLOAT */
        struct {
            const char *s;
            size_t len;
        } slit; /* N_STR: decoded bytes, NUL-terminated */
        struct {
            bool v;
        } blit;  /* N_BOOL */
        struct { /* N_NAME */
            const OrnName *id;
            OrnSym *sym; /* sema: what it refers to */
        } name;
        struct {
            OrnOp op;
            OrnNode *e;
        } unary; /* N_UNARY: OP_NEG, OP_NOT */
        struct {
            OrnOp op;
            OrnNode *l, *r;
        } binary;              /* N_BINARY */
        struct {               /* N_CALL */
            const OrnName *id; /* callee name */
            OrnSpan id_span;
            OrnNode *args; /* positional, then N_KWARG */
            int builtin;   /* sema: ORN_BI_* or -1 */
            OrnSym *sym;   /* sema: fn/extern symbol, or NULL */
        } call;
        struct {
            const OrnName *id;
            OrnSpan id_span;
            OrnNode *value;
        } kwarg; /* N_KWARG */
        struct {
            OrnNode *base;
            OrnNode *subs;
        } index; /* N_INDEX: subs may hold N_SLICE */
        struct {
            OrnNode *stmts;
        } block; /* N_BLOCK */
        struct {
            OrnNode *e;
        } expr_stmt;  /* N_EXPR */
        struct {      /* N_ASSIGN */
            OrnOp op; /* OP_NONE for '=' */
            OrnNode *target, *value;
            bool declares;    /* sema: first assignment of a variable */
            bool binds_value; /* sema: `v = X[e, k]` of a foreach made a for (sema_rewrite.c) */
        } assign;
        struct { /* N_CONST, N_PARAM */
            const OrnName *id;
            OrnSpan id_span;
            OrnNode *value;
            OrnSym *sym; /* sema */
        } decl;
        struct {            /* N_DIST */
            OrnNode *names; /* N_NAME list (1 or 2) */
            OrnNode *value;
        } dist;
        struct { /* N_IF */
            OrnNode *cond;
            OrnNode *then; /* N_BLOCK */
            OrnNode *els;  /* NULL, N_BLOCK, or N_IF for elif */
        } if_;
        struct {          /* N_FOR */
            OrnNode *var; /* N_NAME */
            OrnNode *lo, *hi;
            OrnNode *body; /* N_BLOCK */
        } for_;
        struct {                  /* N_FOREACH */
            OrnNode *key, *value; /* N_NAME each */
            OrnNode *iter;
            OrnNode *body;
        } foreach;
        struct {
            OrnNode *cond;
            OrnNode *body;
        } while_;            /* N_WHILE */
        struct {             /* N_PARFOR */
            OrnNode *keys;   /* N_NAME list */
            bool keys_paren; /* written as (k1, ...) */
            OrnNode *value;  /* N_NAME or NULL */
            OrnNode *space;  /* iteration space expression */
            OrnNode *body;   /* N_BLOCK */
            bool ordered, gpu;
            OrnSpan ordered_span, gpu_span;
            OrnLoop *info; /* sema */
        } parfor;
        struct {
            OrnNode *value;
        } ret;   /* N_RETURN: value or NULL */
        struct { /* N_FN */
            const OrnName *id;
            OrnSpan id_span;
            OrnNode *args; /* N_ARG list */
            OrnNode *ret;  /* N_TYPE or NULL */
            OrnNode *body; /* N_BLOCK; NULL for extern */
            bool is_extern;
            const char *lib; /* extern "lib" or NULL */
            OrnSym *sym;     /* sema */
        } fn;
        struct { /* N_ARG */
            const OrnName *id;
            OrnNode *type; /* N_TYPE */
            OrnSym *sym;   /* sema */
        } arg;
        struct {
            const OrnName *id;
        } type; /* N_TYPE */
    } u;
};

/* Node constructors (arena-allocated, zeroed, `kind` and `span` set). */
typedef struct OrnUnit OrnUnit;
OrnNode *orn_node_new(OrnUnit *u, OrnNodeKind kind, OrnSpan span);
const char *orn_node_kind_name(OrnNodeKind kind);
const char *orn_op_name(OrnOp op); /* "+", "and", ... */
int orn_list_len(const OrnNode *list);
/* Call f(child, ud) for each direct child of n, in source order, lists expanded; NULL
 * children are skipped. The one place that knows which union members hold children:
 * passes that walk the whole tree build on it. */
void orn_ast_each_child(const OrnNode *n, void (*f)(const OrnNode *child, void *ud), void *ud);

/* --emit=ast: an indented S-expression-like dump, one node per line, with line:col. */
void orn_ast_dump(FILE *out, const OrnNode *root);

#endif
