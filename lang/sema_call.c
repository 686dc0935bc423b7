/* sema_call.c: typing of calls: the built-in table, each built-in's arguments (arity,
 * keyword arguments, the array constructors and loaders, buffer(), reductions, dense linear
 * algebra, printf formats) and calls of user fns and externs.
 *
 * Why a file of its own: the call rules were most of sema_expr.c, which had grown past the
 * project's size limit, and they use the expression rules only through orn_sema_expr() and
 * the helpers in sema_int.h. As there, an operand of type T_ERROR is accepted silently, so
 * one mistake gives one diagnostic. A call that may not run inside parallel_for is reported
 * here, or recorded on the enclosing fn for the post pass in sema_loop.c. */
#include "sema_int.h"

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
    case ORN_BI_LOG_METRIC:
        return "log_metric(name, step, value)";
    case ORN_BI_ZEROS:
        return "zeros(type, d0, ...)";
    case ORN_BI_FILL:
        return "fill(type, value, d0, ...)";
    case ORN_BI_RAND:
        return "rand() or rand(type, d0, ..., seed = s)";
    case ORN_BI_RANDN:
        return "randn() or randn(type, d0, ..., seed = s)";
    case ORN_BI_LOAD_TRIPLETS:
        return "load_triplets(path, allow_nonfinite = false)";
    case ORN_BI_LOAD_LIBSVM:
        return "load_libsvm(path, allow_nonfinite = false)";
    case ORN_BI_LOAD_DOCWORD:
        return "load_docword(path)";
    case ORN_BI_LOAD_CSV:
        return "load_csv(path, type = f64, header = false, allow_nonfinite = false)";
    case ORN_BI_LOAD:
        return "load(path, type = f64, dims = 2, sparse = false, allow_nonfinite = false)";
    case ORN_BI_SAVE:
        return "save(A, path)";
    case ORN_BI_BUFFER:
        return "buffer(A, apply = f, flush_every = n, budget = x, staleness_aware = b)";
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
        snprintf(want, sizeof want, "at least %d argument%s", in->min_args,
                 orn_sema_plural(in->min_args));
    else if (in->min_args == in->max_args && in->min_args == 0)
        snprintf(want, sizeof want, "no arguments");
    else if (in->min_args == in->max_args)
        snprintf(want, sizeof want, "%d argument%s", in->min_args, orn_sema_plural(in->min_args));
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
/* name cannot be used inside parallel_for (or in a fn that one calls: recorded, reported at
 * the loop's calls). */
void orn_sema_not_in_loop(Sema *s, OrnNode *e, const char *name, bool collective)
{
    if (s->quiet_collective) return;
    if (s->loop) {
        if (collective) {
            ORN_ERR(s, e->span, "'%s' is collective and cannot be used inside parallel_for", name);
            ORN_NOTE(s, "collective operations run on every rank together; do this before or "
                        "after the loop");
        } else {
            if (strcmp(name, "+") == 0)
                ORN_ERR(s, e->span, "'+' on str cannot be used inside parallel_for");
            else if (strcmp(name, "parse") == 0)
                ORN_ERR(s, e->span,
                        "converting a str to a number cannot be used inside "
                        "parallel_for");
            else
                ORN_ERR(s, e->span, "'%s' cannot be used inside parallel_for", name);
            orn_sema_note_rank0(s, name);
        }
        return;
    }
    if (s->fn) orn_sema_record_bad(s, e, name, collective);
}

static bool expect_int(Sema *s, OrnNode *x, const char *what)
{
    const OrnType *t = x->type ? x->type : orn_sema_expr(s, x);
    if (orn_sema_is_err(t) || orn_type_is_integer(t)) return !orn_sema_is_err(t);
    ORN_ERR(s, x->span, "%s must be an integer, found %s", what, ORN_TSTR(s, t));
    return false;
}

static bool expect_str(Sema *s, OrnNode *x, const char *what)
{
    const OrnType *t = x->type ? x->type : orn_sema_expr(s, x);
    if (orn_sema_is_err(t) || t->kind == T_STR) return !orn_sema_is_err(t);
    ORN_ERR(s, x->span, "%s must be a str, found %s", what, ORN_TSTR(s, t));
    return false;
}

static bool expect_num(Sema *s, OrnNode *x, const char *name)
{
    const OrnType *t = x->type ? x->type : orn_sema_expr(s, x);
    if (orn_sema_is_err(t) || orn_type_is_numeric(t)) return !orn_sema_is_err(t);
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
        return orn_sema_scalar(s, T_F64);
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
        if (!orn_sema_is_err(t)) {
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
        if (!orn_sema_is_err(vt) && !orn_type_is_numeric(vt))
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

/* allow_nonfinite = b, the loaders' option (docs/language.md section 7): any bool. */
static void loader_kwargs(Sema *s, OrnNode *e, const char *name, const char *const *allowed)
{
    check_kwargs(s, e, name, allowed);
    OrnNode *kw = find_kw(e, "allow_nonfinite");
    if (!kw || !kw->u.kwarg.value) return;
    const OrnType *t = orn_sema_expr(s, kw->u.kwarg.value);
    if (!orn_sema_is_err(t) && t->kind != T_BOOL)
        ORN_ERR(s, kw->u.kwarg.value->span, "'allow_nonfinite' must be true or false, found %s",
                ORN_TSTR(s, t));
}

/* load(path, type =, dims =, sparse =), load_csv(path, type =, header =): the element type
 * and the shape known when compiling. */
static const OrnType *load_ctor(Sema *s, OrnNode *e, const char *name, Args *a)
{
    static const char *const load_kw[] = {"type", "dims", "sparse", "allow_nonfinite", NULL};
    static const char *const csv_kw[] = {"type", "header", "allow_nonfinite", NULL};
    bool csv = e->u.call.builtin == ORN_BI_LOAD_CSV;
    loader_kwargs(s, e, name, csv ? csv_kw : load_kw);
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
    if ((kw = find_kw(e, "header")) && kw->u.kwarg.value) {
        OrnNode *v = kw->u.kwarg.value;
        const OrnType *t = orn_sema_expr(s, v);
        if (!orn_sema_is_err(t) && t->kind != T_BOOL) {
            ORN_ERR(s, v->span, "'header' must be a bool, found %s", ORN_TSTR(s, t));
            ok = false;
        }
    }
    return ok ? orn_type_array(s->ty, elem, dims, true, sparse) : orn_sema_terr(s);
}

static const OrnType *buffer_ctor(Sema *s, OrnNode *e, Args *a)
{
    static const char *const buf_kw[] = {"apply", "flush_every", "budget", "staleness_aware", NULL};
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
            } else if (!orn_sema_is_err(sym->type)) {
                ORN_ERR(s, arg->span, "'buffer' needs a dist array, but '%s' is %s", sym->name->s,
                        orn_sema_describe(s, sym));
                orn_sema_note_decl(s, sym);
            }
        }
    } else {
        const OrnType *t = orn_sema_expr(s, arg);
        if (!orn_sema_is_err(t)) ORN_ERR(s, arg->span, "'buffer' needs the name of a dist array");
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
                bool any_err = orn_sema_is_err(info->ret);
                for (int i = 0; i < info->nparams; i++) any_err |= orn_sema_is_err(info->ptypes[i]);
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
    kw = find_kw(e, "budget");
    if (kw && kw->u.kwarg.value) {
        OrnNode *v = kw->u.kwarg.value;
        double f = v->kind == N_FLOAT ? v->u.flit.v : v->kind == N_INT ? (double)v->u.ilit.v : 0;
        if (expect_num(s, v, "budget") && (v->kind == N_FLOAT || v->kind == N_INT) &&
            !(f >= 0 && f <= 1))
            ORN_ERR(s, v->span, "'budget' is a fraction of the link, between 0 and 1, found %g", f);
    }
    kw = find_kw(e, "staleness_aware");
    if (kw && kw->u.kwarg.value) {
        OrnNode *v = kw->u.kwarg.value;
        const OrnType *t = orn_sema_expr(s, v);
        if (!orn_sema_is_err(t) && t->kind != T_BOOL)
            ORN_ERR(s, v->span, "'staleness_aware' must be true or false, found %s",
                    ORN_TSTR(s, t));
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
    if (orn_sema_is_err(t) || t->kind == T_ARRAY) return t;
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
        if (orn_sema_is_err(t[i])) {
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
    bool vec = false;
    if (!bad && n == 2) {
        bool same = t[0]->kind == T_ARRAY && t[1]->kind == T_ARRAY && t[0]->ndims == t[1]->ndims &&
                    t[0]->dist == t[1]->dist;
        /* a view pairs with a view, a local 1-D array or a whole dense 1-D dist array (read
         * whole, like x[j] for every j: `y[i] = dot(A[i, :], x)`); two whole dist arrays are
         * the collective dot */
        bool d0 = t[0]->kind == T_ARRAY && t[0]->dist, d1 = t[1]->kind == T_ARRAY && t[1]->dist;
        vec = is_vec(t[0]) && is_vec(t[1]) && !(d0 && d1) && !(d0 && t[0]->sparse) &&
              !(d1 && t[1]->sparse);
        if (vec) whole_dist = false;
        if (!same && !vec) {
            ORN_ERR(s, e->span,
                    "'dot' needs two views, or two arrays of the same shape; "
                    "found %s and %s",
                    ORN_TSTR(s, t[0]), ORN_TSTR(s, t[1]));
            if (is_vec(t[0]) && is_vec(t[1]) && ((d0 && t[0]->sparse) || (d1 && t[1]->sparse)))
                ORN_NOTE(s, "a whole sparse array pairs with nothing but its own shape: write "
                            "the sum as a loop, 's += a * x[j]' in 'for (j, a) in A[i, :]'");
            else if (d0 != d1 && t[0]->kind == T_ARRAY && t[1]->kind == T_ARRAY)
                ORN_NOTE(s, "a local array and a dist array of the same shape pair only as "
                            "vectors (1-D)");
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
    /* dot of two f32 vectors -- views or local 1-D arrays -- is f32, summed in f32 */
    if (!bad && n == 2 && (vec || !whole_dist) && is_vec(t[0]) && is_vec(t[1]) &&
        t[0]->elem == T_F32 && t[1]->elem == T_F32)
        return orn_sema_scalar(s, T_F32);
    return orn_sema_scalar(s, T_F64);
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
        if (bi == ORN_BI_MATMUL_INTO && !orn_sema_is_err(t) && t->kind != T_BOOL)
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
        if (orn_sema_is_err(t)) {
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
    if (bad) return orn_sema_scalar(s, T_VOID);
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
        return orn_sema_scalar(s, T_VOID);
    }
    /* the output is written: the rules of an element store */
    OrnNode *out = a->pos[0];
    OrnSym *sym = out->kind == N_NAME ? out->u.name.sym
                  : out->u.index.base && out->u.index.base->kind == N_NAME
                      ? out->u.index.base->u.name.sym
                      : NULL;
    if (!sym) return orn_sema_scalar(s, T_VOID);
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
    return orn_sema_scalar(s, T_VOID);
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
        if (!orn_sema_is_err(t))
            ORN_ERR(s, fmt->span, "the printf format must be a string literal");
        return;
    }
    fmt->type = orn_sema_scalar(s, T_STR);
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
        bool ok = orn_sema_is_err(t) || (want == C_INT && orn_type_is_integer(t)) ||
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
                orn_sema_plural(nconv), nargs, nargs == 1 ? " is" : "s are");
    }
    (void)e;
}

static const OrnType *builtin_call(Sema *s, OrnNode *e, int bi)
{
    static const char *const nonfinite_kw[] = {"allow_nonfinite", NULL};
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
                     bi == ORN_BI_LOAD_DOCWORD || bi == ORN_BI_LOAD || bi == ORN_BI_LOAD_CSV ||
                     bi == ORN_BI_BUFFER;
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
    if (in->flags & BI_COLLECTIVE) orn_sema_not_in_loop(s, e, name, true);
    if (in->flags & BI_NOLOOP) orn_sema_not_in_loop(s, e, name, false);
    /* the constructors check their own keyword arguments */
    if (!(bi == ORN_BI_ZEROS || bi == ORN_BI_FILL || bi == ORN_BI_RAND || bi == ORN_BI_RANDN ||
          bi == ORN_BI_LOAD || bi == ORN_BI_LOAD_CSV || bi == ORN_BI_BUFFER ||
          bi == ORN_BI_MATMUL_INTO || bi == ORN_BI_ADD_OUTER || bi == ORN_BI_SOLVE_INTO ||
          bi == ORN_BI_LOAD_TRIPLETS || bi == ORN_BI_LOAD_LIBSVM))
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
        return orn_sema_scalar(s, k == T_F32 ? T_F32 : T_F64);
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
        return orn_sema_scalar(s, k);
    }
    case ORN_BI_DIV:
    case ORN_BI_MOD: {
        bool ok = true;
        for (int i = 0; i < 2; i++) {
            const OrnType *t = orn_sema_expr(s, a.pos[i]);
            if (orn_sema_is_err(t)) {
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
        return orn_sema_scalar(s, orn_kind_promote(a.pos[0]->type->kind, a.pos[1]->type->kind));
    }
    case ORN_BI_I32:
    case ORN_BI_I64:
    case ORN_BI_F32:
    case ORN_BI_F64: {
        const OrnType *t = orn_sema_expr(s, a.pos[0]);
        static const OrnTypeKind to[] = {T_I32, T_I64, T_F32, T_F64};
        OrnTypeKind k = to[bi - ORN_BI_I32];
        if (!orn_sema_is_err(t) && t->kind == T_STR) { /* parses the text (strings.c) */
            orn_sema_not_in_loop(s, e, "parse", false);
            return orn_sema_scalar(s, k);
        }
        if (!orn_sema_is_err(t) && !orn_type_is_numeric(t) && t->kind != T_BOOL) {
            ORN_ERR(s, a.pos[0]->span, "cannot convert %s to %s", ORN_TSTR(s, t), orn_kind_name(k));
            return orn_sema_terr(s);
        }
        return orn_sema_scalar(s, k);
    }
    case ORN_BI_STR: {
        const OrnType *t = orn_sema_expr(s, a.pos[0]);
        if (!orn_sema_is_err(t) && !orn_type_is_numeric(t) && t->kind != T_BOOL &&
            t->kind != T_STR) {
            ORN_ERR(s, a.pos[0]->span, "cannot convert %s to str", ORN_TSTR(s, t));
            return orn_sema_terr(s);
        }
        return orn_sema_scalar(s, T_STR);
    }
    case ORN_BI_RANDINT:
        expect_int(s, a.pos[0], "the bound of 'randint'");
        return orn_sema_scalar(s, T_I64);
    case ORN_BI_LEN: {
        const OrnType *t = orn_sema_expr(s, a.pos[0]);
        if (!orn_sema_is_err(t) && !is_vec(t) && t->kind != T_STR)
            ORN_ERR(s, a.pos[0]->span, "'len' needs a view, a 1-D array or a str, found %s",
                    ORN_TSTR(s, t));
        return orn_sema_scalar(s, T_I64);
    }
    case ORN_BI_WALL_TIME:
        return orn_sema_scalar(s, T_F64);
    case ORN_BI_PRINT:
    case ORN_BI_EPRINT:
        for (OrnNode *x = e->u.call.args; x; x = x->next) {
            if (x->kind == N_KWARG) continue;
            const OrnType *t = orn_sema_expr(s, x);
            if (orn_sema_is_err(t) || t->kind <= T_STR) continue;
            bool arr = t->kind == T_ARRAY;
            if (!orn_sema_printable(x)) {
                ORN_ERR(s, x->span,
                        "'%s' takes numbers, bools, strings, arrays and views, found %s", name,
                        ORN_TSTR(s, t));
                if (t->kind == T_VIEW) /* an element-wise expression over a sparse view */
                    ORN_NOTE(s, "print the sparse view itself, or compute it into a local array");
                else if (orn_type_is_str_array(t) && x->kind == N_NAME && x->u.name.sym)
                    ORN_NOTE(s,
                             "print its lines one by one: 'for i in 0..len(%s) print(%s[i]) end'",
                             x->u.name.sym->name->s, x->u.name.sym->name->s);
                continue;
            }
            /* an array's or a view's text is made on every rank at top level (a whole dist
             * array: collectively); inside a loop eprint takes scalars */
            if (s->loop) {
                ORN_ERR(s, x->span,
                        "inside parallel_for '%s' takes numbers, bools and strings, found %s", name,
                        ORN_TSTR(s, t));
                ORN_NOTE(s, "print its elements (eprint(v[0], v[1])), or print it after the loop");
            } else if (s->fn) {
                /* print itself is recorded by the call; eprint only with such arguments */
                orn_sema_record_bad(s, x, arr && t->dist ? name : "eprint", arr && t->dist);
            }
        }
        return orn_sema_scalar(s, T_VOID);
    case ORN_BI_PRINTF:
        check_printf(s, e, &a);
        return orn_sema_scalar(s, T_VOID);
    case ORN_BI_EXIT:
        expect_int(s, a.pos[0], "the exit code");
        return orn_sema_scalar(s, T_VOID);
    case ORN_BI_SEED:
        expect_int(s, a.pos[0], "the seed");
        return orn_sema_scalar(s, T_VOID);
    case ORN_BI_LOG_METRIC:
        expect_str(s, a.pos[0], "the name of a metric");
        if (!expect_int(s, a.pos[1], "the step of a metric") && a.pos[1]->type &&
            orn_type_is_float(a.pos[1]->type))
            ORN_NOTE(s, "convert it with 'i64(...)'");
        expect_num(s, a.pos[2], name);
        return orn_sema_scalar(s, T_VOID);
    case ORN_BI_ZEROS:
    case ORN_BI_FILL:
    case ORN_BI_RAND:
    case ORN_BI_RANDN:
        return array_ctor(s, e, bi, name, &a);
    case ORN_BI_LOAD_TRIPLETS:
        loader_kwargs(s, e, name, nonfinite_kw);
        expect_str(s, a.pos[0], "the path");
        return orn_type_array(s->ty, T_F32, 2, true, true);
    case ORN_BI_LOAD_DOCWORD:
        expect_str(s, a.pos[0], "the path");
        return orn_type_array(s->ty, T_I32, 3, true, true);
    case ORN_BI_LOAD_LIBSVM:
        loader_kwargs(s, e, name, nonfinite_kw);
        expect_str(s, a.pos[0], "the path");
        return orn_type_tuple(s->ty, orn_type_array(s->ty, T_F32, 2, true, true),
                              orn_type_array(s->ty, T_F32, 1, true, false));
    case ORN_BI_LOAD_TEXT:
        expect_str(s, a.pos[0], "the path");
        return orn_type_array(s->ty, T_STR, 1, false, false);
    case ORN_BI_LOAD:
    case ORN_BI_LOAD_CSV:
        return load_ctor(s, e, name, &a);
    case ORN_BI_BUFFER:
        return buffer_ctor(s, e, &a);
    case ORN_BI_SAVE:
        expect_array(s, a.pos[0], name);
        expect_str(s, a.pos[1], "the path");
        return orn_sema_scalar(s, T_VOID);
    case ORN_BI_ROWS:
    case ORN_BI_COLS:
    case ORN_BI_NNZ: {
        const OrnType *t = expect_array(s, a.pos[0], name);
        if (bi == ORN_BI_COLS && !orn_sema_is_err(t) && t->ndims < 2)
            ORN_ERR(s, a.pos[0]->span, "'cols' needs an array of at least 2 dimensions, found %s",
                    ORN_TSTR(s, t));
        return orn_sema_scalar(s, T_I64);
    }
    case ORN_BI_DIM: {
        const OrnType *t = expect_array(s, a.pos[0], name);
        int64_t d;
        if (expect_int(s, a.pos[1], "the dimension") && !orn_sema_is_err(t) &&
            const_int(a.pos[1], &d) && (d < 0 || d >= t->ndims))
            ORN_ERR(s, a.pos[1]->span, "dimension %lld is out of range for %s (0 to %d)",
                    (long long)d, ORN_TSTR(s, t), t->ndims - 1);
        return orn_sema_scalar(s, T_I64);
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

bool orn_sema_printable(const OrnNode *e)
{
    const OrnType *t = e->type;
    if (!t) return false;
    if (t->kind >= T_BOOL && t->kind <= T_STR) return true;
    if (t->kind == T_ARRAY) return !orn_type_is_str_array(t) && e->kind == N_NAME;
    return t->kind == T_VIEW && (!t->sparse || e->kind == N_INDEX);
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
                orn_sema_plural(info->nparams), npos, npos == 1 ? "was" : "were");
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
