/* sema_expr.c: typing of expressions, the built-ins, printf formats and const folding.
 *
 * Every function here sets node->type on the expression it checks and returns it. An
 * operand of type T_ERROR is accepted silently, so one mistake gives one diagnostic. */
#include "sema_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const OrnBuiltinInfo orn_builtins[ORN_BI__COUNT] = {
#define X(e, name, lo, hi, flags) {name, lo, hi, flags},
#include "builtins.def"
#undef X
};

int orn_builtin_lookup(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < ORN_BI__COUNT; i++)
        if (strcmp(orn_builtins[i].name, name) == 0) return i;
    return -1;
}

/* `int(x)` and `float(x)` are the conversions i64(x) and f64(x). */
int orn_sema_builtin_of(const OrnName *id)
{
    if (!id) return -1;
    if (strcmp(id->s, "int") == 0) return ORN_BI_I64;
    if (strcmp(id->s, "float") == 0) return ORN_BI_F64;
    return orn_builtin_lookup(id->s);
}

bool orn_sema_is_typename(const OrnName *id)
{
    return id && orn_kind_from_name(id->s) != T_ERROR;
}

const OrnType *orn_sema_terr(Sema *s)
{
    return orn_type_scalar(s->ty, T_ERROR);
}

static const OrnType *scalar(Sema *s, OrnTypeKind k)
{
    return orn_type_scalar(s->ty, k);
}

static bool is_err(const OrnType *t)
{
    return !t || t->kind == T_ERROR;
}

static const char *plural(long n)
{
    return n == 1 ? "" : "s";
}

/* Section 3: a variable (or parameter, or fn result) of type `to` accepts `from` when the
 * types are equal or the conversion is integer->integer, integer->float or float->float. */
bool orn_sema_var_convertible(const OrnType *to, const OrnType *from)
{
    if (is_err(to) || is_err(from) || to == from) return true;
    if (orn_type_is_numeric(to) && orn_type_is_numeric(from))
        return !(orn_type_is_float(from) && orn_type_is_integer(to));
    return false;
}

/* ---- names ---------------------------------------------------------------------------- */

static const char *buffer_target_name(const OrnSym *sym)
{
    const OrnNode *d = sym->decl;
    if (!d || d->kind != N_DIST || !d->u.dist.value || d->u.dist.value->kind != N_CALL) return NULL;
    const OrnNode *a = d->u.dist.value->u.call.args;
    if (!a || a->kind != N_NAME || !a->u.name.id) return NULL;
    return a->u.name.id->s;
}

static const OrnType *name_value(Sema *s, OrnNode *n)
{
    const OrnName *id = n->u.name.id;
    if (!id) return orn_sema_terr(s);
    OrnSym *sym = orn_sema_lookup(s, id);
    if (!sym) {
        if (orn_sema_is_typename(id))
            ORN_ERR(s, n->span, "'%s' is a type, not a value", id->s);
        else if (orn_sema_builtin_of(id) >= 0)
            ORN_ERR(s, n->span, "'%s' is a built-in function; call it as '%s(...)'", id->s, id->s);
        else
            orn_sema_unknown(s, id, n->span, false);
        return orn_sema_terr(s);
    }
    n->u.name.sym = sym;
    switch (sym->kind) {
    case SYM_FN:
    case SYM_EXTERN:
        ORN_ERR(s, n->span, "'%s' is a function; call it as '%s(...)'", id->s, id->s);
        return orn_sema_terr(s);
    case SYM_DIST:
        if (sym->type->kind == T_BUFFER) {
            if (s->loop)
                ORN_ERR(s, n->span, "buffer '%s' cannot be read inside parallel_for", id->s);
            else
                ORN_ERR(s, n->span, "buffer '%s' cannot be read", id->s);
            const char *target = buffer_target_name(sym);
            if (target)
                ORN_NOTE_AT(s, sym->span, "'%s' collects updates to '%s'; read '%s' instead", id->s,
                            target, target);
            else
                orn_sema_note_decl(s, sym);
            return orn_sema_terr(s);
        }
        break;
    default:
        orn_sema_record_read(s, n, sym);
        break;
    }
    return sym->type;
}

/* ---- operators -------------------------------------------------------------------------- */

const OrnType *orn_sema_arith(Sema *s, OrnOp op, const OrnType *l, const OrnType *r, OrnSpan span,
                              OrnSpan lspan, OrnSpan rspan)
{
    if (is_err(l) || is_err(r)) return orn_sema_terr(s);
    bool lv = l->kind == T_VIEW, rv = r->kind == T_VIEW;
    bool lok = lv || orn_type_is_numeric(l), rok = rv || orn_type_is_numeric(r);
    if (lok && rok) {
        OrnTypeKind lk = lv ? l->elem : l->kind, rk = rv ? r->elem : r->kind;
        if (op == OP_DIV && (lk == T_I32 || lk == T_I64) && (rk == T_I32 || rk == T_I64)) {
            ORN_ERR(s, span, "integer division: use div(a, b) or convert an operand to float");
            return orn_sema_terr(s);
        }
        OrnTypeKind k = orn_kind_promote(lk, rk);
        if (lv || rv)
            return orn_type_view(s->ty, k, (lv && l->dist) || (rv && r->dist),
                                 (!lv || l->sparse) && (!rv || r->sparse));
        return scalar(s, k);
    }
    const OrnType *bad = lok ? r : l;
    ORN_ERR(s, lok ? rspan : lspan, "cannot apply '%s' to %s", orn_op_name(op), ORN_TSTR(s, bad));
    if (bad->kind == T_ARRAY)
        ORN_NOTE(s, "arithmetic works on numbers, and element-wise on views such as 'A[:, j]'");
    return orn_sema_terr(s);
}

static void need_bool(Sema *s, OrnNode *e, const char *what)
{
    const OrnType *t = e ? e->type : NULL;
    if (is_err(t) || t->kind == T_BOOL) return;
    ORN_ERR(s, e->span, "'%s' needs bool operands, found %s", what, ORN_TSTR(s, t));
    if (orn_type_is_numeric(t))
        ORN_NOTE(s, "numbers are not truthy: compare explicitly, as in 'x != 0'");
}

static const OrnType *unary(Sema *s, OrnNode *e)
{
    OrnNode *a = e->u.unary.e;
    const OrnType *t = orn_sema_expr(s, a);
    if (is_err(t)) return e->u.unary.op == OP_NOT ? scalar(s, T_BOOL) : orn_sema_terr(s);
    if (e->u.unary.op == OP_NOT) {
        if (t->kind != T_BOOL) {
            ORN_ERR(s, a->span, "'not' needs a bool, found %s", ORN_TSTR(s, t));
            if (orn_type_is_numeric(t))
                ORN_NOTE(s, "numbers are not truthy: compare explicitly, as in 'x == 0'");
        }
        return scalar(s, T_BOOL);
    }
    if (orn_type_is_numeric(t) || t->kind == T_VIEW) return t;
    ORN_ERR(s, a->span, "cannot apply '-' to %s", ORN_TSTR(s, t));
    return orn_sema_terr(s);
}

/* A weak float (docs/language.md, "f32 arithmetic"): a value fixed for the whole loop that
 * comes from no array element -- a literal, a param or const, inside a parallel_for body a
 * top-level variable, and arithmetic of those. Mixed with f32 it converts to f32. */
static bool weak(const Sema *s, const OrnNode *e)
{
    if (!e || !e->type) return false;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
        return true;
    case N_NAME: {
        const OrnSym *y = e->u.name.sym;
        if (!y) return false;
        if (y->kind == SYM_PARAM || y->kind == SYM_CONST) return true;
        if (y == s->selfweak) return true; /* sema_infer.c: x in an update of x */
        return s->loop && (y->kind == SYM_VAR || y->kind == SYM_LOOPVAR) && y->global;
    }
    case N_UNARY:
        return e->u.unary.op == OP_NEG && weak(s, e->u.unary.e);
    case N_BINARY:
        switch (e->u.binary.op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
        case OP_DIV:
            return weak(s, e->u.binary.l) && weak(s, e->u.binary.r);
        default:
            return false;
        }
    default:
        return false;
    }
}

bool orn_sema_weak(const Sema *s, const OrnNode *e)
{
    return weak(s, e);
}

static OrnTypeKind num_kind(const OrnType *t)
{
    return t->kind == T_VIEW ? t->elem : t->kind;
}

/* f32 op weak f64 -> f32 (and views of f32 with weak scalars stay views of f32). */
static const OrnType *narrow_weak(Sema *s, const OrnType *t, const OrnNode *l, const OrnNode *r)
{
    if (is_err(t) || num_kind(t) != T_F64 || is_err(l->type) || is_err(r->type)) return t;
    OrnTypeKind lk = num_kind(l->type), rk = num_kind(r->type);
    bool ok =
        (lk == T_F32 && rk == T_F64 && weak(s, r)) || (rk == T_F32 && lk == T_F64 && weak(s, l));
    if (!ok) return t;
    if (t->kind == T_VIEW) return orn_type_view(s->ty, T_F32, t->dist, t->sparse);
    return scalar(s, T_F32);
}

static const OrnType *binary(Sema *s, OrnNode *e)
{
    OrnOp op = e->u.binary.op;
    OrnNode *l = e->u.binary.l, *r = e->u.binary.r;
    const OrnType *lt = orn_sema_expr(s, l), *rt = orn_sema_expr(s, r);
    switch (op) {
    case OP_AND:
    case OP_OR:
        need_bool(s, l, orn_op_name(op));
        if (is_err(lt) || lt->kind == T_BOOL) need_bool(s, r, orn_op_name(op));
        return scalar(s, T_BOOL);
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
        if (is_err(lt) || is_err(rt)) return scalar(s, T_BOOL);
        if (orn_type_is_numeric(lt) && orn_type_is_numeric(rt)) return scalar(s, T_BOOL);
        if (lt->kind == T_BOOL && rt->kind == T_BOOL) {
            if (op == OP_EQ || op == OP_NE) return scalar(s, T_BOOL);
            ORN_ERR(s, e->span, "'%s' needs numbers; bools compare only with '==' and '!='",
                    orn_op_name(op));
            return scalar(s, T_BOOL);
        }
        ORN_ERR(s, e->span, "cannot compare %s with %s", ORN_TSTR(s, lt), ORN_TSTR(s, rt));
        return scalar(s, T_BOOL);
    default: {
        const OrnType *t =
            orn_sema_arith(s, op, lt, rt, e->span, l ? l->span : e->span, r ? r->span : e->span);
        return l && r ? narrow_weak(s, t, l, r) : t;
    }
    }
}

/* ---- subscripts ----------------------------------------------------------------------- */

const OrnType *orn_sema_subscripts(Sema *s, OrnNode *ix, const OrnType *arr, const OrnSym *sym)
{
    int nsubs = 0, nslices = 0;
    OrnNode *slice1 = NULL, *slice2 = NULL;
    for (OrnNode *sub = ix->u.index.subs; sub; sub = sub->next) {
        nsubs++;
        if (sub->kind == N_SLICE) {
            if (++nslices == 1)
                slice1 = sub;
            else if (nslices == 2)
                slice2 = sub;
            continue;
        }
        const OrnType *t = orn_sema_expr(s, sub);
        if (!is_err(t) && !orn_type_is_integer(t))
            ORN_ERR(s, sub->span, "subscript must be an integer, found %s", ORN_TSTR(s, t));
    }
    if (is_err(arr)) return orn_sema_terr(s);
    const char *name = sym ? sym->name->s : "the array";
    if (nsubs != arr->ndims) {
        if (sym)
            ORN_ERR(s, ix->span, "'%s' has %d dimension%s but %d subscript%s given", name,
                    arr->ndims, plural(arr->ndims), nsubs, nsubs == 1 ? " is" : "s are");
        else
            ORN_ERR(s, ix->span, "the array has %d dimension%s but %d subscript%s given",
                    arr->ndims, plural(arr->ndims), nsubs, nsubs == 1 ? " is" : "s are");
        if (sym) orn_sema_note_decl(s, sym);
        return orn_sema_terr(s);
    }
    if (nslices) {
        if (arr->ndims != 2) {
            ORN_ERR(s, slice1->span, "a ':' view needs a 2-D array, but '%s' has %d dimension%s",
                    name, arr->ndims, plural(arr->ndims));
            if (sym) orn_sema_note_decl(s, sym);
            return orn_sema_terr(s);
        }
        if (slice2) {
            ORN_ERR(s, slice2->span, "a view takes one ':'; the other subscript must be an index");
            return orn_sema_terr(s);
        }
        return orn_type_view(s->ty, arr->elem, arr->dist, arr->sparse);
    }
    return scalar(s, arr->elem);
}

static const OrnType *index_read(Sema *s, OrnNode *e)
{
    OrnNode *b = e->u.index.base;
    const OrnType *bt;
    OrnSym *sym = NULL;
    if (b && b->kind == N_NAME) {
        bt = name_value(s, b);
        b->type = bt;
        sym = b->u.name.sym;
    } else {
        bt = orn_sema_expr(s, b);
    }
    if (!is_err(bt) && bt->kind == T_ARRAY) return orn_sema_subscripts(s, e, bt, sym);
    for (OrnNode *sub = e->u.index.subs; sub; sub = sub->next)
        if (sub->kind != N_SLICE) orn_sema_expr(s, sub);
    if (is_err(bt)) return orn_sema_terr(s);
    if (bt->kind == T_VIEW)
        ORN_ERR(s, b->span, "a view cannot be subscripted; subscript the array, as in 'A[i, j]'");
    else if (sym)
        ORN_ERR(s, b->span, "cannot subscript '%s', which is %s", sym->name->s, ORN_TSTR(s, bt));
    else
        ORN_ERR(s, b->span, "cannot subscript %s", ORN_TSTR(s, bt));
    if (sym && bt->kind != T_VIEW) orn_sema_note_decl(s, sym);
    return orn_sema_terr(s);
}

/* ---- calls -------------------------------------------------------------------------------- */

enum { MAXPOS = 8 };

typedef struct Args {
    OrnNode *pos[MAXPOS]; /* the first positional arguments */
    int npos;             /* all positional arguments */
    OrnNode *kw;          /* first N_KWARG */
    int nkw;
} Args;

static void split_args(Sema *s, OrnNode *e, Args *a)
{
    memset(a, 0, sizeof *a);
    for (OrnNode *x = e->u.call.args; x; x = x->next) {
        if (x->kind == N_KWARG) {
            if (!a->kw) a->kw = x;
            a->nkw++;
        } else if (a->kw) {
            ORN_ERR(s, x->span, "positional argument after a keyword argument");
        } else {
            if (a->npos < MAXPOS) a->pos[a->npos] = x;
            a->npos++;
        }
    }
}

static void eval_args(Sema *s, OrnNode *e)
{
    for (OrnNode *x = e->u.call.args; x; x = x->next) {
        if (x->kind == N_KWARG) {
            if (x->u.kwarg.value) x->type = orn_sema_expr(s, x->u.kwarg.value);
        } else if (x->kind == N_NAME && orn_sema_is_typename(x->u.name.id) &&
                   !orn_sema_lookup(s, x->u.name.id)) {
            x->type = orn_type_typename(s->ty, orn_kind_from_name(x->u.name.id->s));
        } else if (!x->type) {
            orn_sema_expr(s, x);
        }
    }
}

static OrnNode *find_kw(OrnNode *e, const char *name)
{
    for (OrnNode *x = e->u.call.args; x; x = x->next)
        if (x->kind == N_KWARG && x->u.kwarg.id && strcmp(x->u.kwarg.id->s, name) == 0) return x;
    return NULL;
}

static const char *usage(int bi)
{
    switch (bi) {
    case ORN_BI_POW:
        return "pow(a, b)";
    case ORN_BI_MIN:
        return "min(a, b)";
    case ORN_BI_MAX:
        return "max(a, b)";
    case ORN_BI_DIV:
        return "div(a, b)";
    case ORN_BI_MOD:
        return "mod(a, b)";
    case ORN_BI_RANDINT:
        return "randint(n)";
    case ORN_BI_LEN:
        return "len(v)";
    case ORN_BI_WALL_TIME:
        return "wall_time()";
    case ORN_BI_PRINT:
        return "print(args...)";
    case ORN_BI_PRINTF:
        return "printf(\"format\", args...)";
    case ORN_BI_EPRINT:
        return "eprint(args...)";
    case ORN_BI_EXIT:
        return "exit(code)";
    case ORN_BI_SEED:
        return "set_seed(n)";
    case ORN_BI_ZEROS:
        return "zeros(type, d0, ...)";
    case ORN_BI_FILL:
        return "fill(type, value, d0, ...)";
    case ORN_BI_RAND:
        return "rand() or rand(type, d0, ..., seed = s)";
    case ORN_BI_RANDN:
        return "randn() or randn(type, d0, ..., seed = s)";
    case ORN_BI_LOAD_TRIPLETS:
        return "load_triplets(path)";
    case ORN_BI_LOAD_LIBSVM:
        return "load_libsvm(path)";
    case ORN_BI_LOAD_DOCWORD:
        return "load_docword(path)";
    case ORN_BI_LOAD:
        return "load(path)";
    case ORN_BI_SAVE:
        return "save(A, path)";
    case ORN_BI_BUFFER:
        return "buffer(A, apply = f, flush_every = n)";
    case ORN_BI_ROWS:
        return "rows(A)";
    case ORN_BI_COLS:
        return "cols(A)";
    case ORN_BI_DIM:
        return "dim(A, d)";
    case ORN_BI_NNZ:
        return "nnz(A)";
    case ORN_BI_SUM:
        return "sum(A)";
    case ORN_BI_DOT:
        return "dot(a, b)";
    case ORN_BI_NORM:
        return "norm(A)";
    case ORN_BI_LOAD_TEXT:
        return "lines = load_text(path)";
    case ORN_BI_MATMUL_INTO:
        return "matmul_into(C, A, B, add = false)";
    case ORN_BI_ADD_OUTER:
        return "add_outer(A, x, y, scale = 1.0)";
    case ORN_BI_SOLVE_INTO:
        return "solve_into(x, A, b)";
    default:
        return NULL; /* one-number math and conversions: name(x) */
    }
}

static bool check_arity(Sema *s, OrnNode *e, int bi, const char *name, int npos)
{
    const OrnBuiltinInfo *in = &orn_builtins[bi];
    if (npos >= in->min_args && (in->max_args < 0 || npos <= in->max_args)) return true;
    char want[64];
    if (in->max_args < 0)
        snprintf(want, sizeof want, "at least %d argument%s", in->min_args, plural(in->min_args));
    else if (in->min_args == in->max_args && in->min_args == 0)
        snprintf(want, sizeof want, "no arguments");
    else if (in->min_args == in->max_args)
        snprintf(want, sizeof want, "%d argument%s", in->min_args, plural(in->min_args));
    else
        snprintf(want, sizeof want, "%d to %d arguments", in->min_args, in->max_args);
    ORN_ERR(s, e->span, "'%s' takes %s but %d %s given", name, want, npos,
            npos == 1 ? "was" : "were");
    const char *u = usage(bi);
    if (u)
        ORN_NOTE(s, "usage: %s", u);
    else
        ORN_NOTE(s, "usage: %s(x)", name);
    return false;
}

/* Report keyword arguments the built-in does not take (allowed: NULL-terminated names)
 * and duplicates; evaluate the values of unknown ones so errors inside them show. */
static void check_kwargs(Sema *s, OrnNode *e, const char *name, const char *const *allowed)
{
    for (OrnNode *x = e->u.call.args; x; x = x->next) {
        if (x->kind != N_KWARG || !x->u.kwarg.id) continue;
        const char *kw = x->u.kwarg.id->s;
        bool ok = false;
        for (int i = 0; allowed && allowed[i]; i++)
            if (strcmp(allowed[i], kw) == 0) ok = true;
        if (!ok) {
            ORN_ERR(s, x->u.kwarg.id_span, "'%s' has no keyword argument '%s'", name, kw);
            if (x->u.kwarg.value) orn_sema_expr(s, x->u.kwarg.value);
            continue;
        }
        for (OrnNode *y = e->u.call.args; y != x; y = y->next)
            if (y->kind == N_KWARG && y->u.kwarg.id == x->u.kwarg.id) {
                ORN_ERR(s, x->u.kwarg.id_span, "keyword argument '%s' is given twice", kw);
                break;
            }
    }
}

/* A use of something that must run on every rank (collective) or that ends the program. */
static void not_in_loop(Sema *s, OrnNode *e, const char *name, bool collective)
{
    if (s->quiet_collective) return;
    if (s->loop) {
        if (collective) {
            ORN_ERR(s, e->span, "'%s' is collective and cannot be used inside parallel_for", name);
            ORN_NOTE(s, "collective operations run on every rank together; do this before or "
                        "after the loop");
        } else {
            ORN_ERR(s, e->span, "'%s' cannot be used inside parallel_for", name);
        }
        return;
    }
    if (s->fn) orn_sema_record_bad(s, e, name, collective);
}

static bool expect_int(Sema *s, OrnNode *x, const char *what)
{
    const OrnType *t = x->type ? x->type : orn_sema_expr(s, x);
    if (is_err(t) || orn_type_is_integer(t)) return !is_err(t);
    ORN_ERR(s, x->span, "%s must be an integer, found %s", what, ORN_TSTR(s, t));
    return false;
}

static bool expect_str(Sema *s, OrnNode *x, const char *what)
{
    const OrnType *t = x->type ? x->type : orn_sema_expr(s, x);
    if (is_err(t) || t->kind == T_STR) return !is_err(t);
    ORN_ERR(s, x->span, "%s must be a str, found %s", what, ORN_TSTR(s, t));
    return false;
}

static bool expect_num(Sema *s, OrnNode *x, const char *name)
{
    const OrnType *t = x->type ? x->type : orn_sema_expr(s, x);
    if (is_err(t) || orn_type_is_numeric(t)) return !is_err(t);
    ORN_ERR(s, x->span, "'%s' needs a number, found %s", name, ORN_TSTR(s, t));
    return false;
}

/* A constant integer value of x if it folds, without reporting anything. */
static bool const_int(const OrnNode *x, int64_t *v)
{
    OrnConstVal cv;
    if (!orn_sema_fold(NULL, x, &cv)) return false;
    if (cv.kind != T_I32 && cv.kind != T_I64) return false;
    *v = cv.i;
    return true;
}

static const OrnType *array_ctor(Sema *s, OrnNode *e, int bi, const char *name, Args *a)
{
    bool draw = bi == ORN_BI_RAND || bi == ORN_BI_RANDN;
    static const char *const seed_kw[] = {"seed", NULL};
    check_kwargs(s, e, name, draw ? seed_kw : NULL);
    if (draw && a->npos == 0) {
        OrnNode *kw = find_kw(e, "seed");
        if (kw) {
            ORN_ERR(s, kw->u.kwarg.id_span,
                    "'seed' applies to array draws, as in '%s(f64, n, seed = 1)'", name);
            if (kw->u.kwarg.value) orn_sema_expr(s, kw->u.kwarg.value);
        }
        return scalar(s, T_F64);
    }
    OrnNode *t0 = a->pos[0];
    OrnTypeKind elem = T_ERROR;
    bool ok = true;
    if (t0->kind == N_NAME && orn_sema_is_typename(t0->u.name.id) &&
        !orn_sema_lookup(s, t0->u.name.id)) {
        elem = orn_kind_from_name(t0->u.name.id->s);
        t0->type = orn_type_typename(s->ty, elem);
        if (!orn_kind_is_numeric(elem)) {
            ORN_ERR(s, t0->span, "array elements must be numeric (i32, i64, f32 or f64), found %s",
                    orn_kind_name(elem));
            ok = false;
        } else if (draw && elem != T_F32 && elem != T_F64) {
            ORN_ERR(s, t0->span, "'%s' makes float arrays: use f32 or f64", name);
            ok = false;
        }
    } else {
        const OrnType *t = orn_sema_expr(s, t0);
        if (!is_err(t)) {
            ORN_ERR(s, t0->span,
                    "the first argument of '%s' must be an element type "
                    "(i32, i64, f32 or f64)",
                    name);
            if (draw) ORN_NOTE(s, "use 'randint(n)' for a random integer below n");
        }
        ok = false;
    }
    int first = 1;
    if (bi == ORN_BI_FILL) {
        const OrnType *vt = orn_sema_expr(s, a->pos[1]);
        if (!is_err(vt) && !orn_type_is_numeric(vt))
            ORN_ERR(s, a->pos[1]->span, "the fill value must be a number, found %s",
                    ORN_TSTR(s, vt));
        first = 2;
    }
    int ndims = a->npos - first;
    if (ndims < 1 && ok) {
        ORN_ERR(s, e->span, "'%s' needs at least one extent after the element type", name);
        ORN_NOTE(s, "usage: %s", usage(bi));
        ok = false;
    }
    for (int i = first; i < a->npos && i < MAXPOS; i++) {
        OrnNode *x = a->pos[i];
        int64_t v;
        if (!expect_int(s, x, "an array extent")) continue;
        if (const_int(x, &v) && v <= 0) {
            ORN_ERR(s, x->span, "an array extent must be positive, found %lld", (long long)v);
            ok = false;
        }
    }
    OrnNode *seed = draw ? find_kw(e, "seed") : NULL;
    if (seed && seed->u.kwarg.value) expect_int(s, seed->u.kwarg.value, "the seed");
    if (!ok) return orn_sema_terr(s);
    if (e != s->dist_init && e != s->var_init) {
        /* Arrays are not values (docs/language.md section 5): one is made only to be named. */
        ORN_ERR(s, e->span,
                "an array can only initialize a variable, as in 'a = %s(...)' or "
                "'dist A = %s(...)'",
                name, name);
        return orn_sema_terr(s);
    }
    return orn_type_array(s->ty, elem, ndims, e == s->dist_init, false);
}

static const OrnType *load_ctor(Sema *s, OrnNode *e, const char *name, Args *a)
{
    static const char *const load_kw[] = {"type", "dims", "sparse", NULL};
    check_kwargs(s, e, name, load_kw);
    expect_str(s, a->pos[0], "the path");
    OrnTypeKind elem = T_F64;
    int dims = 2;
    bool sparse = false, ok = true;
    OrnNode *kw;
    if ((kw = find_kw(e, "type")) && kw->u.kwarg.value) {
        OrnNode *v = kw->u.kwarg.value;
        if (v->kind == N_NAME && orn_sema_is_typename(v->u.name.id) &&
            orn_kind_is_numeric(orn_kind_from_name(v->u.name.id->s))) {
            elem = orn_kind_from_name(v->u.name.id->s);
            v->type = orn_type_typename(s->ty, elem);
        } else {
            ORN_ERR(s, v->span, "'type' must be an element type (i32, i64, f32 or f64)");
            ok = false;
        }
    }
    if ((kw = find_kw(e, "dims")) && kw->u.kwarg.value) {
        int64_t v;
        orn_sema_expr(s, kw->u.kwarg.value);
        if (const_int(kw->u.kwarg.value, &v) && v >= 1 && v <= 4) {
            dims = (int)v;
        } else {
            ORN_ERR(s, kw->u.kwarg.value->span, "'dims' must be a constant from 1 to 4");
            ok = false;
        }
    }
    if ((kw = find_kw(e, "sparse")) && kw->u.kwarg.value) {
        OrnNode *v = kw->u.kwarg.value;
        orn_sema_expr(s, v);
        if (v->kind == N_BOOL) {
            sparse = v->u.blit.v;
        } else {
            ORN_ERR(s, v->span, "'sparse' must be true or false");
            ok = false;
        }
    }
    return ok ? orn_type_array(s->ty, elem, dims, true, sparse) : orn_sema_terr(s);
}

static const OrnType *buffer_ctor(Sema *s, OrnNode *e, Args *a)
{
    static const char *const buf_kw[] = {"apply", "flush_every", NULL};
    check_kwargs(s, e, "buffer", buf_kw);
    OrnNode *arg = a->pos[0];
    const OrnType *target = NULL;
    if (arg->kind == N_NAME && arg->u.name.id) {
        OrnSym *sym = orn_sema_lookup(s, arg->u.name.id);
        if (!sym) {
            orn_sema_unknown(s, arg->u.name.id, arg->span, false);
        } else {
            arg->u.name.sym = sym;
            arg->type = sym->type;
            if (sym->kind == SYM_DIST && sym->type->kind == T_ARRAY) {
                target = sym->type;
            } else if (!is_err(sym->type)) {
                ORN_ERR(s, arg->span, "'buffer' needs a dist array, but '%s' is %s", sym->name->s,
                        orn_sema_describe(s, sym));
                orn_sema_note_decl(s, sym);
            }
        }
    } else {
        const OrnType *t = orn_sema_expr(s, arg);
        if (!is_err(t)) ORN_ERR(s, arg->span, "'buffer' needs the name of a dist array");
    }
    OrnNode *kw = find_kw(e, "apply");
    if (kw && kw->u.kwarg.value) {
        OrnNode *v = kw->u.kwarg.value;
        OrnSym *f = v->kind == N_NAME ? orn_sema_lookup(s, v->u.name.id) : NULL;
        OrnSemaFn *info = f ? orn_sema_fn_of(s, f) : NULL;
        if (v->kind == N_NAME && !f && orn_sema_builtin_of(v->u.name.id) < 0) {
            orn_sema_unknown(s, v->u.name.id, v->span, true);
        } else if (!info) {
            if (v->kind != N_NAME) orn_sema_expr(s, v);
            const char *k = target ? orn_kind_name(target->elem) : "T";
            ORN_ERR(s, v->span, "'apply' must name a fn 'fn f(old: %s, delta: %s) -> %s'", k, k, k);
            if (f) orn_sema_note_decl(s, f);
        } else {
            v->u.name.sym = f;
            v->type = f->type;
            ORN_VPUSH(s->applies, s->napplies, s->capapplies, kw);
            if (target) {
                OrnTypeKind k = target->elem;
                bool sig = info->nparams == 2 && info->ret->kind == k &&
                           info->ptypes[0]->kind == k && info->ptypes[1]->kind == k;
                bool any_err = is_err(info->ret);
                for (int i = 0; i < info->nparams; i++) any_err |= is_err(info->ptypes[i]);
                if (!sig && !any_err) {
                    ORN_ERR(s, v->span,
                            "apply function '%s' must have the signature "
                            "'fn %s(old: %s, delta: %s) -> %s'",
                            f->name->s, f->name->s, orn_kind_name(k), orn_kind_name(k),
                            orn_kind_name(k));
                    ORN_NOTE_AT(s, f->span, "'%s' is declared here", f->name->s);
                }
            }
        }
    }
    kw = find_kw(e, "flush_every");
    if (kw && kw->u.kwarg.value) {
        int64_t v;
        if (expect_int(s, kw->u.kwarg.value, "'flush_every'") && const_int(kw->u.kwarg.value, &v) &&
            v <= 0)
            ORN_ERR(s, kw->u.kwarg.value->span, "'flush_every' must be positive, found %lld",
                    (long long)v);
    }
    return target ? orn_type_buffer(s->ty, target) : orn_sema_terr(s);
}

/* An array argument of rows/cols/dim/nnz/save: any array, local or dist. */
static const OrnType *expect_array(Sema *s, OrnNode *x, const char *name)
{
    const OrnType *t = orn_sema_expr(s, x);
    if (orn_type_is_str_array(t)) {
        ORN_ERR(s, x->span, "'%s' needs a numeric array, found %s", name, ORN_TSTR(s, t));
        ORN_NOTE(s, "the lines of load_text support only 'len' and 'lines[i]'");
        return orn_sema_terr(s);
    }
    if (is_err(t) || t->kind == T_ARRAY) return t;
    ORN_ERR(s, x->span, "'%s' needs an array, found %s", name, ORN_TSTR(s, t));
    return orn_sema_terr(s);
}

static bool is_vec(const OrnType *t)
{
    return t->kind == T_VIEW || (t->kind == T_ARRAY && t->ndims == 1);
}

static const OrnType *reduction(Sema *s, OrnNode *e, int bi, const char *name, Args *a)
{
    bool whole_dist = false, bad = false;
    const OrnType *t[2] = {NULL, NULL};
    int n = bi == ORN_BI_DOT ? 2 : 1;
    for (int i = 0; i < n; i++) {
        t[i] = orn_sema_expr(s, a->pos[i]);
        if (is_err(t[i])) {
            bad = true;
            continue;
        }
        if ((t[i]->kind != T_ARRAY && t[i]->kind != T_VIEW) || orn_type_is_str_array(t[i])) {
            ORN_ERR(s, a->pos[i]->span, "'%s' needs an array or a view, found %s", name,
                    ORN_TSTR(s, t[i]));
            bad = true;
            continue;
        }
        if (t[i]->kind == T_ARRAY && t[i]->dist) whole_dist = true;
    }
    if (!bad && n == 2) {
        bool same = t[0]->kind == T_ARRAY && t[1]->kind == T_ARRAY && t[0]->ndims == t[1]->ndims;
        /* a view pairs with a view or a local 1-D array, never a whole dist array */
        bool vec = is_vec(t[0]) && is_vec(t[1]) && !(t[0]->kind == T_ARRAY && t[0]->dist) &&
                   !(t[1]->kind == T_ARRAY && t[1]->dist);
        if (!same && !vec) {
            ORN_ERR(s, e->span,
                    "'dot' needs two views, or two arrays of the same shape; "
                    "found %s and %s",
                    ORN_TSTR(s, t[0]), ORN_TSTR(s, t[1]));
            bad = true;
        }
    }
    if (!bad && whole_dist) {
        if (s->loop && !s->quiet_collective) {
            ORN_ERR(s, e->span,
                    "'%s' of a whole dist array is collective and cannot be used "
                    "inside parallel_for",
                    name);
            ORN_NOTE(s, "compute it before the loop, or use a view such as 'A[:, j]'");
        } else if (s->fn) {
            orn_sema_record_bad(s, e, name, true);
        }
    }
    /* dot of two f32 views (or local f32 vectors) is f32, summed in f32 */
    if (!bad && n == 2 && t[0]->kind == T_VIEW && t[1]->kind == T_VIEW && t[0]->elem == T_F32 &&
        t[1]->elem == T_F32)
        return scalar(s, T_F32);
    return scalar(s, T_F64);
}

/* matmul_into(C, A, B), add_outer(A, x, y), solve_into(x, A, b): OpenBLAS on local arrays
 * and views. Operands are names of local arrays or views (A[i, :], A[:, j]) of one float
 * element type; the first is written, so it follows the rules of an element store. */
static const OrnType *dense_linalg(Sema *s, OrnNode *e, int bi, const char *name, Args *a)
{
    static const char *const mm_kw[] = {"add", NULL}, *const outer_kw[] = {"scale", NULL};
    check_kwargs(s, e, name,
                 bi == ORN_BI_MATMUL_INTO ? mm_kw
                 : bi == ORN_BI_ADD_OUTER ? outer_kw
                                          : NULL);
    for (OrnNode *x = e->u.call.args; x; x = x->next) {
        if (x->kind != N_KWARG || !x->u.kwarg.id || !x->u.kwarg.value) continue;
        const char *kw = x->u.kwarg.id->s;
        if (strcmp(kw, bi == ORN_BI_MATMUL_INTO ? "add" : "scale") != 0 || bi == ORN_BI_SOLVE_INTO)
            continue;
        const OrnType *t = orn_sema_expr(s, x->u.kwarg.value);
        if (bi == ORN_BI_MATMUL_INTO && !is_err(t) && t->kind != T_BOOL)
            ORN_ERR(s, x->u.kwarg.value->span, "'add' of 'matmul_into' must be a bool, found %s",
                    ORN_TSTR(s, t));
        if (bi == ORN_BI_ADD_OUTER) expect_num(s, x->u.kwarg.value, "scale");
    }
    bool bad = false, mixed = false;
    int nd[3] = {0, 0, 0};
    OrnTypeKind elem = T_ERROR;
    int elem_from = -1;
    for (int i = 0; i < 3; i++) {
        OrnNode *x = a->pos[i];
        const OrnType *t = orn_sema_expr(s, x);
        if (is_err(t)) {
            bad = true;
            continue;
        }
        bool plain = x->kind == N_NAME || (x->kind == N_INDEX && t->kind == T_VIEW);
        if ((t->kind != T_ARRAY && t->kind != T_VIEW) || orn_type_is_str_array(t) || !plain) {
            ORN_ERR(s, x->span, "'%s' needs a local array or a view, found %s", name,
                    t->kind == T_VIEW ? "an element-wise expression" : ORN_TSTR(s, t));
            if (t->kind == T_VIEW) ORN_NOTE(s, "compute it into a local array first");
            bad = true;
            continue;
        }
        if (t->kind == T_ARRAY && t->dist) {
            ORN_ERR(s, x->span, "'%s' works on local arrays and views, not on the whole dist array",
                    name);
            ORN_NOTE(s, "pass a row or column such as 'A[i, :]', or copy the block into a local "
                        "array");
            bad = true;
            continue;
        }
        if (t->kind == T_ARRAY && t->ndims > 2) {
            ORN_ERR(s, x->span, "'%s' needs 1-D or 2-D arrays, found %s", name, ORN_TSTR(s, t));
            bad = true;
            continue;
        }
        if (t->elem != T_F32 && t->elem != T_F64) {
            ORN_ERR(s, x->span, "'%s' needs f32 or f64 elements, found %s", name, ORN_TSTR(s, t));
            bad = true;
            continue;
        }
        if (elem == T_ERROR) {
            elem = t->elem;
            elem_from = i;
        } else if (t->elem != elem) {
            if (!mixed)
                ORN_ERR(s, x->span,
                        "'%s' needs one element type: argument %d is %s, argument %d is %s", name,
                        elem_from + 1, orn_kind_name(elem), i + 1, orn_kind_name(t->elem));
            if (!mixed) ORN_NOTE(s, "BLAS computes in one precision; use f32 or f64 throughout");
            mixed = bad = true;
            continue;
        }
        nd[i] = t->kind == T_VIEW ? 1 : t->ndims;
    }
    if (bad) return scalar(s, T_VOID);
    /* the shapes each form accepts */
    bool ok;
    const char *want;
    if (bi == ORN_BI_MATMUL_INTO) {
        ok = (nd[0] == 2 && nd[1] == 2 && nd[2] == 2) || (nd[0] == 1 && nd[1] == 2 && nd[2] == 1) ||
             (nd[0] == 1 && nd[1] == 1 && nd[2] == 2);
        want = "C = A B with a 2-D C, A and B (matrix product), or a 1-D C with A 2-D and B 1-D "
               "(A times a vector) or A 1-D and B 2-D (a vector times B)";
    } else if (bi == ORN_BI_ADD_OUTER) {
        ok = nd[0] == 2 && nd[1] == 1 && nd[2] == 1;
        want = "a 2-D A and 1-D x and y";
    } else {
        ok = nd[0] == 1 && nd[1] == 2 && nd[2] == 1;
        want = "a 1-D x and b and a 2-D A";
    }
    if (!ok) {
        ORN_ERR(s, e->span, "'%s' needs %s; found %d-D, %d-D and %d-D arguments", name, want, nd[0],
                nd[1], nd[2]);
        ORN_NOTE(s, "usage: %s", usage(bi));
        return scalar(s, T_VOID);
    }
    /* the output is written: the rules of an element store */
    OrnNode *out = a->pos[0];
    OrnSym *sym = out->kind == N_NAME ? out->u.name.sym
                  : out->u.index.base && out->u.index.base->kind == N_NAME
                      ? out->u.index.base->u.name.sym
                      : NULL;
    if (!sym) return scalar(s, T_VOID);
    const OrnType *st = sym->type;
    if (st && st->kind == T_BUFFER) {
        ORN_ERR(s, out->span, "'%s' cannot write into buffer '%s'", name, sym->name->s);
        ORN_NOTE(s, "write into a local array, then add it to the buffer: 'B[i, :] += x'");
    } else if (st && st->kind == T_ARRAY && st->sparse) {
        ORN_ERR(s, out->span, "'%s' cannot write into sparse array '%s'", name, sym->name->s);
    } else if (st && st->kind == T_ARRAY && !st->dist) {
        if (s->loop && sym->id < s->loop->sym_base) {
            ORN_ERR(s, out->span, "'%s' is written inside parallel_for but is not a reduction",
                    sym->name->s);
            ORN_NOTE_AT(s, sym->span, "'%s' is declared here, outside the loop, as %s",
                        sym->name->s, ORN_TSTR(s, st));
            ORN_NOTE(s, "declare the output inside the loop, as in 'x = zeros(f64, K)'");
        } else if (s->fn && sym->global) {
            ORN_ERR(s, out->span, "cannot assign to top-level variable '%s' inside fn '%s'",
                    sym->name->s, s->fn->sym->name->s);
            orn_sema_note_decl(s, sym);
        }
    }
    if (s->fn) sym->assigned_in_fn = true;
    return scalar(s, T_VOID);
}

/* The source span of decoded bytes [from, to) of string literal `lit`: each escape is two
 * source bytes for one decoded byte. Falls back to the whole literal. */
static OrnSpan str_span(Sema *s, const OrnNode *lit, size_t from, size_t to)
{
    const OrnSource *src = &s->u->src;
    uint32_t lo = lit->span.lo, hi = lit->span.hi;
    if (!src->text || hi > src->len || lo >= hi || src->text[lo] != '"') return lit->span;
    uint32_t j = lo + 1, start = j;
    for (size_t d = 0; d < to && j < hi; d++) {
        if (d == from) start = j;
        j += src->text[j] == '\\' ? 2 : 1;
    }
    if (j > hi) return lit->span;
    if (from >= to) start = j;
    return orn_source_span(src, start, j);
}

/* printf: the format is a string literal whose conversions match the arguments. */
static void check_printf(Sema *s, OrnNode *e, Args *a)
{
    OrnNode *fmt = a->pos[0];
    OrnNode *args = fmt->next;
    for (OrnNode *x = args; x; x = x->next)
        if (x->kind != N_KWARG) orn_sema_expr(s, x);
    if (fmt->kind != N_STR) {
        const OrnType *t = orn_sema_expr(s, fmt);
        if (!is_err(t)) ORN_ERR(s, fmt->span, "the printf format must be a string literal");
        return;
    }
    fmt->type = scalar(s, T_STR);
    const char *f = fmt->u.slit.s;
    size_t n = fmt->u.slit.len;
    OrnNode *arg = args && args->kind != N_KWARG ? args : NULL;
    int nconv = 0, nargs = a->npos - 1;
    for (size_t i = 0; i < n; i++) {
        if (f[i] != '%') continue;
        size_t st = i++;
        if (i < n && f[i] == '%') continue;
        while (i < n && f[i] && strchr("-+ #0", f[i])) i++;
        bool star = false;
        while (i < n && ((f[i] >= '0' && f[i] <= '9') || f[i] == '*')) star |= f[i++] == '*';
        if (i < n && f[i] == '.') {
            i++;
            while (i < n && ((f[i] >= '0' && f[i] <= '9') || f[i] == '*')) star |= f[i++] == '*';
        }
        size_t end = i < n ? i + 1 : n;
        if (i < n && f[i] && strchr("hlLjzt", f[i])) { /* show the whole "%ld" */
            while (end < n && f[end] && strchr("hlLjzt", f[end])) end++;
            if (end < n && ((f[end] >= 'a' && f[end] <= 'z') || (f[end] >= 'A' && f[end] <= 'Z')))
                end++;
        }
        OrnSpan cs = str_span(s, fmt, st, end);
        int clen = (int)(end - st);
        if (star) {
            ORN_ERR(s, cs,
                    "'*' in printf conversion '%.*s' is not supported; write the width "
                    "as a number",
                    clen, f + st);
            return;
        }
        if (i >= n) {
            ORN_ERR(s, cs, "incomplete conversion '%.*s' at the end of the printf format", clen,
                    f + st);
            return;
        }
        char c = f[i];
        enum { C_INT, C_FLOAT, C_STR } want;
        if (c == 'd' || c == 'i') {
            want = C_INT;
        } else if (c && strchr("feEgG", c)) {
            want = C_FLOAT;
        } else if (c == 's') {
            want = C_STR;
        } else if (c && strchr("hlLjzt", c)) {
            ORN_ERR(s, cs,
                    "length modifier '%c' in printf conversion '%.*s' is not needed; "
                    "arguments are converted",
                    c, clen, f + st);
            return;
        } else {
            if (c > ' ' && c < 127)
                ORN_ERR(s, cs, "unknown printf conversion '%.*s'", clen, f + st);
            else
                ORN_ERR(s, cs, "incomplete printf conversion '%.*s'", clen - 1, f + st);
            ORN_NOTE(s, "printf converts %%d %%i (integers), %%f %%e %%g (floats) and %%s (str)");
            return;
        }
        nconv++;
        if (!arg) continue;
        const OrnType *t = arg->type;
        bool ok = is_err(t) || (want == C_INT && orn_type_is_integer(t)) ||
                  (want == C_FLOAT && orn_type_is_float(t)) || (want == C_STR && t->kind == T_STR);
        if (!ok) {
            static const char *const what[] = {"an integer", "a float", "a str"};
            ORN_ERR(s, arg->span, "printf conversion '%.*s' needs %s, but the argument is %s", clen,
                    f + st, what[want], ORN_TSTR(s, t));
            ORN_NOTE_AT(s, cs, "the conversion is here");
            if (want == C_FLOAT && orn_type_is_integer(t))
                ORN_NOTE(s, "use '%%d' for integers, or convert with 'f64(...)'");
            else if (want == C_INT && orn_type_is_float(t))
                ORN_NOTE(s, "use '%%f', '%%e' or '%%g' for floats, or convert with 'i64(...)'");
        }
        arg = arg->next && arg->next->kind != N_KWARG ? arg->next : NULL;
    }
    if (nconv != nargs) {
        OrnNode *extra = args;
        for (int k = 0; extra && k < nconv; k++) extra = extra->next;
        ORN_ERR(s, nconv > nargs ? fmt->span : extra->span,
                "the printf format has %d conversion%s but %d argument%s given", nconv,
                plural(nconv), nargs, nargs == 1 ? " is" : "s are");
    }
    (void)e;
}

static const OrnType *builtin_call(Sema *s, OrnNode *e, int bi)
{
    const char *name = e->u.call.id->s;
    const OrnBuiltinInfo *in = &orn_builtins[bi];
    Args a;
    e->u.call.builtin = bi;
    split_args(s, e, &a);
    if (!check_arity(s, e, bi, name, a.npos)) {
        eval_args(s, e);
        return orn_sema_terr(s);
    }
    /* built-ins that only create a dist array */
    bool init_only = bi == ORN_BI_LOAD_TRIPLETS || bi == ORN_BI_LOAD_LIBSVM ||
                     bi == ORN_BI_LOAD_DOCWORD || bi == ORN_BI_LOAD || bi == ORN_BI_BUFFER;
    if (init_only && e != s->dist_init) {
        ORN_ERR(s, e->span, "'%s' can only initialize a dist array, as in 'dist A = %s(...)'", name,
                name);
        eval_args(s, e);
        return orn_sema_terr(s);
    }
    if (bi == ORN_BI_LOAD_TEXT && e != s->var_init) {
        if (e == s->dist_init) {
            ORN_ERR(s, e->span, "'load_text' makes a local array of str, which cannot be dist");
            ORN_NOTE(s, "drop 'dist': the lines are replicated on every rank, as in "
                        "'lines = load_text(path)'");
        } else {
            ORN_ERR(s, e->span,
                    "'load_text' can only initialize a variable, as in 'lines = load_text(path)'");
        }
        eval_args(s, e);
        return orn_sema_terr(s);
    }
    if (in->flags & BI_COLLECTIVE) not_in_loop(s, e, name, true);
    if (in->flags & BI_NOLOOP) not_in_loop(s, e, name, false);
    /* the constructors check their own keyword arguments */
    if (!(bi == ORN_BI_ZEROS || bi == ORN_BI_FILL || bi == ORN_BI_RAND || bi == ORN_BI_RANDN ||
          bi == ORN_BI_LOAD || bi == ORN_BI_BUFFER || bi == ORN_BI_MATMUL_INTO ||
          bi == ORN_BI_ADD_OUTER || bi == ORN_BI_SOLVE_INTO))
        check_kwargs(s, e, name, NULL);

    switch (bi) {
    case ORN_BI_SQRT:
    case ORN_BI_EXP:
    case ORN_BI_LOG:
    case ORN_BI_SIN:
    case ORN_BI_COS:
    case ORN_BI_TANH:
    case ORN_BI_FLOOR:
    case ORN_BI_CEIL:
    case ORN_BI_SIGMOID: {
        if (!expect_num(s, a.pos[0], name)) return orn_sema_terr(s);
        OrnTypeKind k = a.pos[0]->type->kind;
        return scalar(s, k == T_F32 ? T_F32 : T_F64);
    }
    case ORN_BI_ABS:
        if (!expect_num(s, a.pos[0], name)) return orn_sema_terr(s);
        return a.pos[0]->type;
    case ORN_BI_POW:
    case ORN_BI_MIN:
    case ORN_BI_MAX: {
        bool ok0 = expect_num(s, a.pos[0], name);
        bool ok1 = expect_num(s, a.pos[1], name);
        if (!ok0 || !ok1) return orn_sema_terr(s);
        OrnTypeKind k = orn_kind_promote(a.pos[0]->type->kind, a.pos[1]->type->kind);
        if (bi == ORN_BI_POW && (k == T_I32 || k == T_I64)) k = T_F64;
        return scalar(s, k);
    }
    case ORN_BI_DIV:
    case ORN_BI_MOD: {
        bool ok = true;
        for (int i = 0; i < 2; i++) {
            const OrnType *t = orn_sema_expr(s, a.pos[i]);
            if (is_err(t)) {
                ok = false;
            } else if (!orn_type_is_integer(t)) {
                if (ok) {
                    ORN_ERR(s, a.pos[i]->span, "'%s' needs integers, found %s", name,
                            ORN_TSTR(s, t));
                    if (orn_type_is_float(t) && bi == ORN_BI_DIV)
                        ORN_NOTE(s, "use '/' to divide floats");
                }
                ok = false;
            }
        }
        if (!ok) return orn_sema_terr(s);
        return scalar(s, orn_kind_promote(a.pos[0]->type->kind, a.pos[1]->type->kind));
    }
    case ORN_BI_I32:
    case ORN_BI_I64:
    case ORN_BI_F32:
    case ORN_BI_F64: {
        const OrnType *t = orn_sema_expr(s, a.pos[0]);
        static const OrnTypeKind to[] = {T_I32, T_I64, T_F32, T_F64};
        OrnTypeKind k = to[bi - ORN_BI_I32];
        if (!is_err(t) && !orn_type_is_numeric(t) && t->kind != T_BOOL) {
            ORN_ERR(s, a.pos[0]->span, "cannot convert %s to %s", ORN_TSTR(s, t), orn_kind_name(k));
            return orn_sema_terr(s);
        }
        return scalar(s, k);
    }
    case ORN_BI_RANDINT:
        expect_int(s, a.pos[0], "the bound of 'randint'");
        return scalar(s, T_I64);
    case ORN_BI_LEN: {
        const OrnType *t = orn_sema_expr(s, a.pos[0]);
        if (!is_err(t) && !is_vec(t))
            ORN_ERR(s, a.pos[0]->span, "'len' needs a view or a 1-D array, found %s",
                    ORN_TSTR(s, t));
        return scalar(s, T_I64);
    }
    case ORN_BI_WALL_TIME:
        return scalar(s, T_F64);
    case ORN_BI_PRINT:
    case ORN_BI_EPRINT:
        for (OrnNode *x = e->u.call.args; x; x = x->next) {
            if (x->kind == N_KWARG) continue;
            const OrnType *t = orn_sema_expr(s, x);
            if (!is_err(t) && t->kind > T_STR)
                ORN_ERR(s, x->span, "'%s' takes numbers, bools and strings, found %s", name,
                        ORN_TSTR(s, t));
        }
        return scalar(s, T_VOID);
    case ORN_BI_PRINTF:
        check_printf(s, e, &a);
        return scalar(s, T_VOID);
    case ORN_BI_EXIT:
        expect_int(s, a.pos[0], "the exit code");
        return scalar(s, T_VOID);
    case ORN_BI_SEED:
        expect_int(s, a.pos[0], "the seed");
        return scalar(s, T_VOID);
    case ORN_BI_ZEROS:
    case ORN_BI_FILL:
    case ORN_BI_RAND:
    case ORN_BI_RANDN:
        return array_ctor(s, e, bi, name, &a);
    case ORN_BI_LOAD_TRIPLETS:
        expect_str(s, a.pos[0], "the path");
        return orn_type_array(s->ty, T_F32, 2, true, true);
    case ORN_BI_LOAD_DOCWORD:
        expect_str(s, a.pos[0], "the path");
        return orn_type_array(s->ty, T_I32, 3, true, true);
    case ORN_BI_LOAD_LIBSVM:
        expect_str(s, a.pos[0], "the path");
        return orn_type_tuple(s->ty, orn_type_array(s->ty, T_F32, 2, true, true),
                              orn_type_array(s->ty, T_F32, 1, true, false));
    case ORN_BI_LOAD_TEXT:
        expect_str(s, a.pos[0], "the path");
        return orn_type_array(s->ty, T_STR, 1, false, false);
    case ORN_BI_LOAD:
        return load_ctor(s, e, name, &a);
    case ORN_BI_BUFFER:
        return buffer_ctor(s, e, &a);
    case ORN_BI_SAVE:
        expect_array(s, a.pos[0], name);
        expect_str(s, a.pos[1], "the path");
        return scalar(s, T_VOID);
    case ORN_BI_ROWS:
    case ORN_BI_COLS:
    case ORN_BI_NNZ: {
        const OrnType *t = expect_array(s, a.pos[0], name);
        if (bi == ORN_BI_COLS && !is_err(t) && t->ndims < 2)
            ORN_ERR(s, a.pos[0]->span, "'cols' needs an array of at least 2 dimensions, found %s",
                    ORN_TSTR(s, t));
        return scalar(s, T_I64);
    }
    case ORN_BI_DIM: {
        const OrnType *t = expect_array(s, a.pos[0], name);
        int64_t d;
        if (expect_int(s, a.pos[1], "the dimension") && !is_err(t) && const_int(a.pos[1], &d) &&
            (d < 0 || d >= t->ndims))
            ORN_ERR(s, a.pos[1]->span, "dimension %lld is out of range for %s (0 to %d)",
                    (long long)d, ORN_TSTR(s, t), t->ndims - 1);
        return scalar(s, T_I64);
    }
    case ORN_BI_SUM:
    case ORN_BI_DOT:
    case ORN_BI_NORM:
        return reduction(s, e, bi, name, &a);
    case ORN_BI_MATMUL_INTO:
    case ORN_BI_ADD_OUTER:
    case ORN_BI_SOLVE_INTO:
        return dense_linalg(s, e, bi, name, &a);
    default:
        eval_args(s, e);
        return orn_sema_terr(s);
    }
}

static const OrnType *user_call(Sema *s, OrnNode *e, OrnSym *sym)
{
    OrnSemaFn *info = orn_sema_fn_of(s, sym);
    const char *name = sym->name->s;
    e->u.call.sym = sym;
    if (!info) {
        eval_args(s, e);
        return orn_sema_terr(s);
    }
    int npos = 0;
    bool kw_reported = false;
    OrnNode *par = info->fn->u.fn.args;
    for (OrnNode *x = e->u.call.args; x; x = x->next) {
        if (x->kind == N_KWARG) {
            if (!kw_reported) ORN_ERR(s, x->span, "'%s' takes no keyword arguments", name);
            kw_reported = true;
            if (x->u.kwarg.value) orn_sema_expr(s, x->u.kwarg.value);
            continue;
        }
        const OrnType *t = orn_sema_expr(s, x);
        if (npos < info->nparams && !orn_sema_var_convertible(info->ptypes[npos], t)) {
            ORN_ERR(s, x->span, "argument %d of '%s' must be %s, found %s", npos + 1, name,
                    ORN_TSTR(s, info->ptypes[npos]), ORN_TSTR(s, t));
            if (par && par->kind == N_ARG && par->u.arg.id)
                ORN_NOTE_AT(s, par->span, "parameter '%s' is declared here as %s", par->u.arg.id->s,
                            ORN_TSTR(s, info->ptypes[npos]));
        }
        npos++;
        if (par) par = par->next;
    }
    if (npos != info->nparams) {
        ORN_ERR(s, e->span, "'%s' takes %d argument%s but %d %s given", name, info->nparams,
                plural(info->nparams), npos, npos == 1 ? "was" : "were");
        ORN_NOTE_AT(s, sym->span, "'%s' is declared here", name);
    }
    orn_sema_record_call(s, e, info);
    return info->ret;
}

const OrnType *orn_sema_call(Sema *s, OrnNode *e, bool want_value)
{
    const OrnName *id = e->u.call.id;
    const OrnType *t;
    e->u.call.builtin = -1;
    OrnSym *sym = id ? orn_sema_lookup(s, id) : NULL;
    if (!id) {
        eval_args(s, e);
        t = orn_sema_terr(s);
    } else if (sym && (sym->kind == SYM_FN || sym->kind == SYM_EXTERN)) {
        t = user_call(s, e, sym);
    } else if (sym) {
        ORN_ERR(s, e->u.call.id_span, "'%s' is not a function", id->s);
        orn_sema_note_decl(s, sym);
        eval_args(s, e);
        t = orn_sema_terr(s);
    } else {
        int bi = orn_sema_builtin_of(id);
        if (bi >= 0) {
            t = builtin_call(s, e, bi);
        } else if (orn_sema_is_typename(id)) {
            /* bool(x), str(x): the other type names convert */
            ORN_ERR(s, e->u.call.id_span, "there is no conversion to %s", id->s);
            if (strcmp(id->s, "bool") == 0) ORN_NOTE(s, "compare instead, as in 'x != 0'");
            eval_args(s, e);
            t = orn_sema_terr(s);
        } else {
            orn_sema_unknown(s, id, e->u.call.id_span, true);
            eval_args(s, e);
            t = orn_sema_terr(s);
        }
    }
    if (t->kind == T_VOID && want_value) {
        ORN_ERR(s, e->span, "'%s' does not return a value", id->s);
        t = orn_sema_terr(s);
    }
    e->type = t;
    return t;
}

const OrnType *orn_sema_expr(Sema *s, OrnNode *e)
{
    if (!e) return orn_sema_terr(s);
    const OrnType *t;
    switch (e->kind) {
    case N_INT:
        t = scalar(s, T_I64);
        break;
    case N_FLOAT:
        t = scalar(s, T_F64);
        break;
    case N_STR:
        t = scalar(s, T_STR);
        break;
    case N_BOOL:
        t = scalar(s, T_BOOL);
        break;
    case N_NAME:
        t = name_value(s, e);
        break;
    case N_UNARY:
        t = unary(s, e);
        break;
    case N_BINARY:
        t = binary(s, e);
        break;
    case N_CALL:
        t = orn_sema_call(s, e, true);
        break;
    case N_INDEX:
        t = index_read(s, e);
        break;
    case N_SLICE:
        ORN_ERR(s, e->span, "':' can only be used as a subscript, as in 'A[:, j]'");
        t = orn_sema_terr(s);
        break;
    case N_KWARG:
        ORN_ERR(s, e->span, "a keyword argument can only be given in a call");
        t = orn_sema_terr(s);
        break;
    default:
        orn_ice(s->d, e->span, "sema: %s node where an expression was expected",
                orn_node_kind_name(e->kind));
        t = orn_sema_terr(s);
        break;
    }
    e->type = t;
    return t;
}

/* ---- constant folding ------------------------------------------------------------------- */

#define FOLD_FAIL(s, span, ...)                                                                    \
    do {                                                                                           \
        if (s) ORN_ERR((s), (span), __VA_ARGS__);                                                  \
        return false;                                                                              \
    } while (0)

static double cv_float(const OrnConstVal *v)
{
    switch (v->kind) {
    case T_I32:
    case T_I64:
        return (double)v->i;
    case T_BOOL:
        return v->b;
    default:
        return v->f;
    }
}

/* Convert v to kind `to` in place (C's conversions); false if out of range. */
static bool cv_convert(OrnConstVal *v, OrnTypeKind to)
{
    if (v->kind == to) return true;
    if (to == T_F32 || to == T_F64) {
        double f = cv_float(v);
        v->f = to == T_F32 ? (double)(float)f : f;
    } else if (to == T_I32 || to == T_I64) {
        int64_t i;
        if (v->kind == T_F32 || v->kind == T_F64) {
            double f = trunc(v->f);
            if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) return false;
            i = (int64_t)f;
        } else if (v->kind == T_BOOL) {
            i = v->b;
        } else {
            i = v->i;
        }
        if (to == T_I32 && (i < INT32_MIN || i > INT32_MAX)) return false;
        v->i = i;
    } else if (to == T_BOOL) {
        return false;
    }
    v->kind = to;
    return true;
}

static bool int_result(Sema *s, OrnSpan span, OrnTypeKind k, int64_t r, bool overflow,
                       OrnConstVal *v)
{
    if (overflow || (k == T_I32 && (r < INT32_MIN || r > INT32_MAX)))
        FOLD_FAIL(s, span, "integer overflow in constant expression");
    v->kind = k;
    v->i = r;
    return true;
}

static bool fold_arith(Sema *s, const OrnNode *e, OrnOp op, OrnConstVal *l, OrnConstVal *r,
                       OrnConstVal *v)
{
    OrnTypeKind k = e->type->kind;
    if (!cv_convert(l, k) || !cv_convert(r, k))
        FOLD_FAIL(s, e->span, "value out of range in constant expression");
    if (k == T_F32 || k == T_F64) {
        double x = l->f, y = r->f, z;
        switch (op) {
        case OP_ADD:
            z = x + y;
            break;
        case OP_SUB:
            z = x - y;
            break;
        case OP_MUL:
            z = x * y;
            break;
        default:
            if (y == 0) FOLD_FAIL(s, e->span, "division by zero in constant expression");
            z = x / y;
            break;
        }
        v->kind = k;
        v->f = k == T_F32 ? (double)(float)z : z;
        return true;
    }
    int64_t z = 0;
    bool ovf;
    switch (op) {
    case OP_ADD:
        ovf = __builtin_add_overflow(l->i, r->i, &z);
        break;
    case OP_SUB:
        ovf = __builtin_sub_overflow(l->i, r->i, &z);
        break;
    case OP_MUL:
        ovf = __builtin_mul_overflow(l->i, r->i, &z);
        break;
    default:
        return false; /* integer '/' is a type error, reported already */
    }
    return int_result(s, e->span, k, z, ovf, v);
}

static bool fold_compare(const OrnNode *e, OrnOp op, OrnConstVal *l, OrnConstVal *r, OrnConstVal *v)
{
    int c;
    if (l->kind == T_BOOL && r->kind == T_BOOL) {
        c = (int)l->b - (int)r->b;
    } else {
        OrnTypeKind k = orn_kind_promote(l->kind, r->kind);
        if (k == T_ERROR || !cv_convert(l, k) || !cv_convert(r, k)) return false;
        if (k == T_I32 || k == T_I64)
            c = (l->i > r->i) - (l->i < r->i);
        else if (l->f != l->f || r->f != r->f)
            c = 2; /* NaN: unordered */
        else
            c = (l->f > r->f) - (l->f < r->f);
    }
    bool b;
    switch (op) {
    case OP_EQ:
        b = c == 0;
        break;
    case OP_NE:
        b = c != 0;
        break;
    case OP_LT:
        b = c == -1;
        break;
    case OP_LE:
        b = c == -1 || c == 0;
        break;
    case OP_GT:
        b = c == 1;
        break;
    default:
        b = c == 1 || c == 0;
        break;
    }
    (void)e;
    memset(v, 0, sizeof *v);
    v->kind = T_BOOL;
    v->b = b;
    return true;
}

static bool fold_call(Sema *s, const OrnNode *e, OrnConstVal *v)
{
    int bi = e->u.call.builtin;
    const char *name = e->u.call.id ? e->u.call.id->s : "?";
    if (bi < 0 || !(orn_builtins[bi].flags & BI_CONST))
        FOLD_FAIL(s, e->span, "'%s' cannot be used in a constant expression", name);
    OrnConstVal a[2];
    int n = 0;
    for (const OrnNode *x = e->u.call.args; x && n < 2; x = x->next)
        if (!orn_sema_fold(s, x, &a[n++])) return false;
    OrnTypeKind k = e->type->kind;
    memset(v, 0, sizeof *v);
    switch (bi) {
    case ORN_BI_I32:
    case ORN_BI_I64:
    case ORN_BI_F32:
    case ORN_BI_F64:
        *v = a[0];
        if (!cv_convert(v, k))
            FOLD_FAIL(s, e->span, "value out of range for %s in constant expression",
                      orn_kind_name(k));
        return true;
    case ORN_BI_ABS:
        *v = a[0];
        if (k == T_I32 || k == T_I64)
            return int_result(s, e->span, k, v->i < 0 ? -v->i : v->i, v->i == INT64_MIN, v);
        v->f = fabs(v->f);
        return true;
    case ORN_BI_MIN:
    case ORN_BI_MAX: {
        if (!cv_convert(&a[0], k) || !cv_convert(&a[1], k)) return false;
        bool first;
        if (k == T_I32 || k == T_I64)
            first = bi == ORN_BI_MIN ? a[0].i <= a[1].i : a[0].i >= a[1].i;
        else
            first = bi == ORN_BI_MIN ? a[0].f <= a[1].f : a[0].f >= a[1].f;
        *v = first ? a[0] : a[1];
        return true;
    }
    case ORN_BI_DIV:
    case ORN_BI_MOD: {
        if (!cv_convert(&a[0], k) || !cv_convert(&a[1], k)) return false;
        int64_t x = a[0].i, y = a[1].i;
        if (y == 0) FOLD_FAIL(s, e->span, "division by zero in constant expression");
        if (y == -1) /* INT64_MIN / -1 overflows; any x % -1 is 0 */
            return bi == ORN_BI_DIV ? int_result(s, e->span, k, -x, x == INT64_MIN, v)
                                    : int_result(s, e->span, k, 0, false, v);
        return int_result(s, e->span, k, bi == ORN_BI_DIV ? x / y : x % y, false, v);
    }
    default: {
        double x = cv_float(&a[0]), r;
        switch (bi) {
        case ORN_BI_SQRT:
            r = sqrt(x);
            break;
        case ORN_BI_EXP:
            r = exp(x);
            break;
        case ORN_BI_LOG:
            r = log(x);
            break;
        case ORN_BI_SIN:
            r = sin(x);
            break;
        case ORN_BI_COS:
            r = cos(x);
            break;
        case ORN_BI_TANH:
            r = tanh(x);
            break;
        case ORN_BI_FLOOR:
            r = floor(x);
            break;
        case ORN_BI_CEIL:
            r = ceil(x);
            break;
        case ORN_BI_SIGMOID:
            r = 1.0 / (1.0 + exp(-x));
            break;
        case ORN_BI_POW:
            r = pow(x, cv_float(&a[1]));
            break;
        default:
            FOLD_FAIL(s, e->span, "'%s' cannot be used in a constant expression", name);
        }
        if (k == T_F32) {
            /* the f32 overloads compute in float, as the generated C does */
            float fx = (float)x, fr;
            switch (bi) {
            case ORN_BI_SQRT:
                fr = sqrtf(fx);
                break;
            case ORN_BI_EXP:
                fr = expf(fx);
                break;
            case ORN_BI_LOG:
                fr = logf(fx);
                break;
            case ORN_BI_SIN:
                fr = sinf(fx);
                break;
            case ORN_BI_COS:
                fr = cosf(fx);
                break;
            case ORN_BI_TANH:
                fr = tanhf(fx);
                break;
            case ORN_BI_FLOOR:
                fr = floorf(fx);
                break;
            case ORN_BI_CEIL:
                fr = ceilf(fx);
                break;
            case ORN_BI_POW:
                fr = powf(fx, (float)cv_float(&a[1]));
                break;
            default:
                fr = 1.0f / (1.0f + expf(-fx));
                break;
            }
            r = fr;
        }
        v->kind = k;
        v->f = r;
        return true;
    }
    }
}

bool orn_sema_fold(Sema *s, const OrnNode *e, OrnConstVal *v)
{
    memset(v, 0, sizeof *v);
    if (!e || !e->type || e->type->kind == T_ERROR) return false;
    switch (e->kind) {
    case N_INT:
        v->kind = T_I64;
        v->i = e->u.ilit.v;
        return true;
    case N_FLOAT:
        v->kind = T_F64;
        v->f = e->u.flit.v;
        return true;
    case N_BOOL:
        v->kind = T_BOOL;
        v->b = e->u.blit.v;
        return true;
    case N_STR:
        v->kind = T_STR;
        v->s = e->u.slit.s;
        v->slen = e->u.slit.len;
        return true;
    case N_NAME: {
        const OrnSym *sym = e->u.name.sym;
        if (sym && sym->kind == SYM_CONST && sym->cval.kind != T_ERROR) {
            *v = sym->cval;
            return true;
        }
        if (s && sym) {
            ORN_ERR(s, e->span, "'%s' is not a constant", sym->name->s);
            orn_sema_note_decl(s, sym);
            if (sym->kind == SYM_PARAM) ORN_NOTE(s, "param values are set at run time");
        }
        return false;
    }
    case N_UNARY: {
        if (!orn_sema_fold(s, e->u.unary.e, v)) return false;
        if (e->u.unary.op == OP_NOT) {
            v->b = !v->b;
            return v->kind == T_BOOL;
        }
        if (v->kind == T_I32 || v->kind == T_I64)
            return int_result(s, e->span, v->kind, v->i == INT64_MIN ? 0 : -v->i, v->i == INT64_MIN,
                              v);
        v->f = -v->f;
        return v->kind == T_F32 || v->kind == T_F64;
    }
    case N_BINARY: {
        OrnConstVal l, r;
        OrnOp op = e->u.binary.op;
        if (!orn_sema_fold(s, e->u.binary.l, &l)) return false;
        if (op == OP_AND || op == OP_OR) {
            /* both sides must be constant, even when the left decides */
            if (!orn_sema_fold(s, e->u.binary.r, &r)) return false;
            v->kind = T_BOOL;
            v->b = op == OP_AND ? (l.b && r.b) : (l.b || r.b);
            return true;
        }
        if (!orn_sema_fold(s, e->u.binary.r, &r)) return false;
        switch (op) {
        case OP_EQ:
        case OP_NE:
        case OP_LT:
        case OP_LE:
        case OP_GT:
        case OP_GE:
            return fold_compare(e, op, &l, &r, v);
        default:
            return fold_arith(s, e, op, &l, &r, v);
        }
    }
    case N_CALL:
        return fold_call(s, e, v);
    case N_INDEX:
        FOLD_FAIL(s, e->span, "array elements cannot be used in a constant expression");
    default:
        FOLD_FAIL(s, e->span, "this expression is not a constant");
    }
}
