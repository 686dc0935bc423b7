/* emit_c.c: the C back end (orn_cg_target_c): one C file per program, compiled by the
 * system C compiler against runtime/rt.h and stdlib/orn_std.h.
 *
 * Shape of the output:
 *   preamble     includes, the program context P_, params (static, parsed at start),
 *                top-level variables (static: replicated per rank), dist arrays, externs
 *   functions    each fn as a static C function (top-level version: dist element access
 *                is collective); per loop, clones of the fns its body calls that need a
 *                loop context (dist access through the block's views, the iteration's
 *                random stream)
 *   loops        per parallel_for: the OrnRtPlan initializer, the body
 *                orn_body_N(rt, block, env) iterating elements [first, first + count) in
 *                key order, and when the plan prefetches, orn_prefetch_N: the same walk
 *                reduced to the statements that compute announced keys
 *   main()       orn_std_init, the top-level statements, orn_std_finish
 *
 * Expressions keep C's usual arithmetic conversions, which are the language's; integer
 * arithmetic wraps (the program is compiled with -fwrapv). View expressions
 * (W[:, u] += s * (e * H[:, i] - lam * W[:, u])) become one loop over the view length
 * with scalar operands evaluated once before it, a fast version over strided pointers when
 * every view lies in its local box and a slow version through the runtime otherwise.
 * Reductions over views (dot, sum, norm) use the fixed eight-way partial sums of
 * orn_std.h. Views, reductions and printing are written as GNU statement expressions
 * ({ ... }), which gcc and clang accept; generated code is compiled without -pedantic. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "emit.h"
#include "lower.h"
#include "version.h"

typedef enum { CX_TOP, CX_FN, CX_BODY, CX_CLONE, CX_PREFETCH } Ctx;

enum { MAXLEAF = 64, ORN_RT_MAXDIM_CG = 4 };

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
    int cloops;  /* C loops of user statements open inside a loop body */
    int pf_drop; /* prefetch: inside a branch emitted without its condition */
    int fast;    /* inside the fast version of a `for` whose accesses are proven in their boxes */
    bool next_used;
    bool failed;
    unsigned char *applied; /* by fn index: apply wrapper emitted */
    /* operands already evaluated into temporaries (left-to-right sequencing) */
    const OrnNode *subst[MAXLEAF];
    int subst_id[MAXLEAF];
    int nsubst;
} C;

static void box_prologue(C *c, const OrnCgLoop *l, const char *indent);

/* ---------------------------------------------------------------- output */

static void o(C *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void o(C *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    orn_buf_vprintf(c->b, fmt, ap);
    va_end(ap);
}

static void ind(C *c)
{
    for (int i = 0; i < c->ind; i++) orn_buf_puts(c->b, "    ");
}

static void ol(C *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ol(C *c, const char *fmt, ...)
{
    ind(c);
    va_list ap;
    va_start(ap, fmt);
    orn_buf_vprintf(c->b, fmt, ap);
    va_end(ap);
    orn_buf_putc(c->b, '\n');
}

static void ice(C *c, const OrnNode *n, const char *what)
{
    if (!c->failed) orn_ice(&c->u->diags, n ? n->span : (OrnSpan){0}, "code generation: %s", what);
    c->failed = true;
}

static const char *nm(C *c, const OrnSym *s)
{
    return orn_cg_name(c->p, s);
}

/* ---------------------------------------------------------------- types */

static const char *ctype(OrnTypeKind k)
{
    switch (k) {
    case T_BOOL:
        return "bool";
    case T_I32:
        return "int32_t";
    case T_I64:
        return "int64_t";
    case T_F32:
        return "float";
    case T_F64:
        return "double";
    case T_STR:
        return "const char *";
    case T_VOID:
        return "void";
    default:
        return "int64_t";
    }
}

static const char *sfx(OrnTypeKind k)
{
    switch (k) {
    case T_I32:
        return "i32";
    case T_I64:
        return "i64";
    case T_F32:
        return "f32";
    default:
        return "f64";
    }
}

static const char *dsmt(OrnTypeKind k)
{
    switch (k) {
    case T_I32:
        return "ORN_DSM_I32";
    case T_I64:
        return "ORN_DSM_I64";
    case T_F32:
        return "ORN_DSM_F32";
    default:
        return "ORN_DSM_F64";
    }
}

static const char *rtt(OrnTypeKind k)
{
    switch (k) {
    case T_I32:
        return "ORN_RT_I32";
    case T_I64:
        return "ORN_RT_I64";
    case T_F32:
        return "ORN_RT_F32";
    default:
        return "ORN_RT_F64";
    }
}

/* Element type of an array, view or buffer. */
static OrnTypeKind elem_of(const OrnType *t)
{
    if (!t) return T_F64;
    if (t->kind == T_BUFFER) return t->target ? t->target->elem : T_F64;
    if (t->kind == T_ARRAY || t->kind == T_VIEW || t->kind == T_TYPENAME) return t->elem;
    return t->kind;
}

static OrnTypeKind kind_of(const OrnNode *e)
{
    return e && e->type ? e->type->kind : T_ERROR;
}

/* The number type of a scalar, or the element type of a view. */
static OrnTypeKind num_elem(const OrnNode *e)
{
    return e->type && e->type->kind == T_VIEW ? e->type->elem : kind_of(e);
}

static bool is_local_array(const OrnSym *s)
{
    return s && s->type && s->type->kind == T_ARRAY && !s->type->dist;
}

static bool is_buffer(const OrnSym *s)
{
    return s && s->type && s->type->kind == T_BUFFER;
}

static bool in_loop_ctx(const C *c)
{
    return c->cx == CX_BODY || c->cx == CX_CLONE || c->cx == CX_PREFETCH;
}

/* ---------------------------------------------------------------- literals */

static void put_i64(C *c, int64_t v)
{
    if (v == INT64_MIN)
        o(c, "(-INT64_C(9223372036854775807) - 1)");
    else
        o(c, "INT64_C(%lld)", (long long)v);
}

static void put_f64(C *c, double v)
{
    if (isnan(v)) {
        o(c, "__builtin_nan(\"\")");
        return;
    }
    if (isinf(v)) {
        o(c, v > 0 ? "__builtin_inf()" : "(-__builtin_inf())");
        return;
    }
    char buf[48];
    snprintf(buf, sizeof buf, "%.17g", v);
    if (!strpbrk(buf, ".e")) strcat(buf, ".0");
    o(c, v < 0 || (v == 0 && signbit(v)) ? "(%s)" : "%s", buf);
}

static void put_str(C *c, const char *s, size_t n)
{
    orn_buf_putc(c->b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '"':
            o(c, "\\\"");
            break;
        case '\\':
            o(c, "\\\\");
            break;
        case '\n':
            o(c, "\\n");
            break;
        case '\t':
            o(c, "\\t");
            break;
        case '?':
            o(c, "\\?");
            break; /* no trigraphs */
        default:
            if (ch < 32 || ch >= 127)
                o(c, "\\%03o", ch);
            else
                orn_buf_putc(c->b, (char)ch);
        }
    }
    orn_buf_putc(c->b, '"');
}

static void put_const(C *c, const OrnConstVal *v, OrnTypeKind k)
{
    switch (k) {
    case T_BOOL:
        o(c, v->b ? "true" : "false");
        break;
    case T_I32:
        o(c, "((int32_t)%lld)", (long long)v->i);
        break;
    case T_I64:
        put_i64(c, v->i);
        break;
    case T_F32:
        o(c, "((float)");
        put_f64(c, v->f);
        o(c, ")");
        break;
    case T_F64:
        put_f64(c, v->f);
        break;
    case T_STR:
        put_str(c, v->s ? v->s : "", v->slen);
        break;
    default:
        o(c, "0");
        break;
    }
}

/* ---------------------------------------------------------------- expressions */

static void ex(C *c, const OrnNode *e);
static void ex_reduce(C *c, const OrnNode *e, int bi);

static const OrnNode *arg_n(const OrnNode *call, int i)
{
    const OrnNode *a = call->u.call.args;
    for (; a && i > 0; a = a->next)
        if (a->kind != N_KWARG) i--;
    while (a && a->kind == N_KWARG) a = a->next;
    return a;
}

static const OrnNode *kwarg(const OrnNode *call, const char *name)
{
    for (const OrnNode *a = call->u.call.args; a; a = a->next)
        if (a->kind == N_KWARG && a->u.kwarg.id && strcmp(a->u.kwarg.id->s, name) == 0)
            return a->u.kwarg.value;
    return NULL;
}

/* ex converted to kind k: "((T)(e))" */
static void ex_as(C *c, const OrnNode *e, OrnTypeKind k)
{
    if (kind_of(e) == k) {
        ex(c, e);
        return;
    }
    o(c, "((%s)(", ctype(k));
    ex(c, e);
    o(c, "))");
}

/* The storage order of dist array s (analyzer/layout.h): perm[sd] is the logical dimension
 * stored as storage dimension sd; NULL when s is stored as declared. */
static const int *perm_of(const C *c, const OrnSym *s)
{
    if (!s || s->kind != SYM_DIST || !c->p->plans) return NULL;
    const OrnLayout *l = orn_layout_of(&c->p->plans->layout, s);
    return l ? l->perm : NULL;
}

/* The storage dimension of logical dimension d. */
static int sdim(const int *perm, int d)
{
    if (!perm) return d;
    for (int i = 0; i < ORN_LAYOUT_MAXDIM; i++)
        if (perm[i] == d) return i;
    return d;
}

/* The subscripts of an access to arr, in arr's storage order. */
static void ex_subs(C *c, const OrnNode *subs, const OrnSym *arr)
{
    const OrnNode *sub[ORN_LAYOUT_MAXDIM] = {NULL};
    int n = 0;
    for (const OrnNode *x = subs; x && n < ORN_LAYOUT_MAXDIM; x = x->next) sub[n++] = x;
    const int *perm = perm_of(c, arr);
    for (int i = 0; i < n; i++) {
        const OrnNode *x = sub[perm ? perm[i] : i];
        if (i) o(c, ", ");
        if (!x || x->kind == N_SLICE)
            o(c, "0");
        else
            ex(c, x);
    }
}

static void ex_key(C *c, const OrnNode *subs, const OrnSym *arr)
{
    o(c, "(const int64_t[%d]){", orn_list_len(subs));
    ex_subs(c, subs, arr);
    o(c, "}");
}

/* The extents of an array, or of a buffer's target: "d3_W->dims", "v5_a->dims". */
static void put_dims(C *c, const OrnSym *s)
{
    const OrnSym *t = is_buffer(s) ? orn_cg_buffer_target(s) : s;
    o(c, "%s->dims", t ? nm(c, t) : "NULL");
}

static int array_k(C *c, const OrnNode *e, const OrnSym *s)
{
    int k = c->loop ? orn_cg_array_index(c->loop, s) : -1;
    if (k < 0) ice(c, e, "a dist array accessed in a loop is missing from its plan");
    return k < 0 ? 0 : k;
}

static void ex_index(C *c, const OrnNode *e)
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (!s) {
        ice(c, e, "subscript of something that is not a named array");
        return;
    }
    OrnTypeKind ek = elem_of(s->type);
    if (is_local_array(s)) {
        const OrnNode *sub[4] = {NULL, NULL, NULL, NULL};
        int i = 0;
        for (const OrnNode *x = e->u.index.subs; x && i < 4; x = x->next) sub[i++] = x;
        o(c, "((%s *)%s->data)[", ctype(ek), nm(c, s));
        if (c->cx == CX_PREFETCH)
            o(c, "orn_std_arr_off_soft(%s", nm(c, s));
        else
            o(c, "orn_std_arr_off(P_, %s, %d", nm(c, s), c->line);
        for (i = 0; i < 4; i++) {
            o(c, ", ");
            if (sub[i])
                ex(c, sub[i]);
            else
                o(c, "0");
        }
        o(c, ")]");
        return;
    }
    if (in_loop_ctx(c)) {
        int k = array_k(c, e, s);
        if (c->cx != CX_PREFETCH && orn_cg_boxable(c->loop, k)) {
            int nd = orn_list_len(e->u.index.subs);
            if (c->fast)
                o(c, "((const %s *)(const void *)X%d_.base)[orn_rt_box_at(&X%d_, %d, ", ctype(ek),
                  k, k, nd);
            else
                o(c, "orn_rt_ld_%s(&X%d_, %d, ", sfx(ek), k, nd);
            ex_key(c, e->u.index.subs, s);
            o(c, c->fast ? ")]" : ")");
            return;
        }
        o(c, "%s_%s(&V_[%d], ", c->cx == CX_PREFETCH ? "orn_std_peek" : "orn_rt_get", sfx(ek), k);
        ex_key(c, e->u.index.subs, s);
        o(c, ")");
        return;
    }
    o(c, "orn_std_dget_%s(P_, %s, ", sfx(ek), nm(c, s));
    ex_key(c, e->u.index.subs, s);
    o(c, ", %d)", c->line);
}

static void ex_name(C *c, const OrnNode *e)
{
    const OrnSym *s = e->u.name.sym;
    if (!s) {
        ice(c, e, "unresolved name");
        return;
    }
    switch (s->kind) {
    case SYM_CONST:
        put_const(c, &s->cval, s->type->kind);
        return;
    case SYM_VALUE:
        o(c, "(*vp_)");
        return;
    case SYM_VAR:
        if (c->cx == CX_BODY && c->loop) {
            int i = orn_cg_acc_index(c->loop, s);
            if (i >= 0) {
                o(c, "A_[%d].%s", i, sfx(s->type->kind));
                return;
            }
        }
        break;
    default:
        break;
    }
    o(c, "%s", nm(c, s));
}

static const char *math_name(int bi)
{
    switch (bi) {
    case ORN_BI_SQRT:
        return "sqrt";
    case ORN_BI_EXP:
        return "exp";
    case ORN_BI_LOG:
        return "log";
    case ORN_BI_SIN:
        return "sin";
    case ORN_BI_COS:
        return "cos";
    case ORN_BI_TANH:
        return "tanh";
    case ORN_BI_FLOOR:
        return "floor";
    case ORN_BI_CEIL:
        return "ceil";
    default:
        return NULL;
    }
}

static void ex_print(C *c, const OrnNode *e, bool eprint)
{
    OrnBuf types;
    orn_buf_init(&types);
    for (const OrnNode *a = e->u.call.args; a; a = a->next) {
        if (a->kind == N_KWARG) continue;
        switch (kind_of(a)) {
        case T_BOOL:
            orn_buf_putc(&types, 'b');
            break;
        case T_I32:
        case T_I64:
            orn_buf_putc(&types, 'i');
            break;
        case T_F32:
            orn_buf_putc(&types, 'g');
            break;
        case T_F64:
            orn_buf_putc(&types, 'f');
            break;
        default:
            orn_buf_putc(&types, 's');
            break;
        }
    }
    o(c, "%s(P_, \"%s\"", eprint ? "orn_std_eprint" : "orn_std_print",
      types.data ? types.data : "");
    orn_buf_free(&types);
    for (const OrnNode *a = e->u.call.args; a; a = a->next) {
        if (a->kind == N_KWARG) continue;
        o(c, ", ");
        switch (kind_of(a)) {
        case T_BOOL:
            o(c, "(int)(");
            ex(c, a);
            o(c, ")");
            break;
        case T_I32:
        case T_I64:
            ex_as(c, a, T_I64);
            break;
        case T_F32:
        case T_F64:
            o(c, "(double)(");
            ex(c, a);
            o(c, ")");
            break;
        default:
            ex(c, a);
            break;
        }
    }
    o(c, ")");
}

/* printf: the format literal with %d/%i rewritten to take int64_t ("%3" PRId64). */
static void ex_printf(C *c, const OrnNode *e)
{
    const OrnNode *fmt = arg_n(e, 0);
    if (!fmt || fmt->kind != N_STR) {
        ice(c, e, "printf without a literal format");
        return;
    }
    const char *f = fmt->u.slit.s;
    size_t n = fmt->u.slit.len, start = 0;
    o(c, "orn_std_printf(P_, ");
    for (size_t i = 0; i < n; i++) {
        if (f[i] != '%') continue;
        size_t j = i + 1;
        if (j < n && f[j] == '%') {
            i = j;
            continue;
        }
        while (j < n && strchr("-+ #0", f[j])) j++;
        while (j < n && f[j] >= '0' && f[j] <= '9') j++;
        if (j < n && f[j] == '.') {
            j++;
            while (j < n && f[j] >= '0' && f[j] <= '9') j++;
        }
        if (j < n && (f[j] == 'd' || f[j] == 'i')) {
            put_str(c, f + start, j - start);
            o(c, " PRId64 ");
            start = j + 1;
        }
        i = j;
    }
    put_str(c, f + start, n - start);
    for (const OrnNode *a = fmt->next; a; a = a->next) {
        if (a->kind == N_KWARG) continue;
        o(c, ", ");
        OrnTypeKind k = kind_of(a);
        if (k == T_I32 || k == T_I64)
            ex_as(c, a, T_I64);
        else if (k == T_F32 || k == T_F64) {
            o(c, "(double)(");
            ex(c, a);
            o(c, ")");
        } else
            ex(c, a);
    }
    o(c, ")");
}

/* A whole array or a view used as a vector: an OrnStdVec initializer. */
static void vec_ctor(C *c, const OrnNode *e)
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (!s) {
        ice(c, e, "view of something that is not a named array");
        return;
    }
    if (e->kind == N_NAME) {
        if (!is_local_array(s)) ice(c, e, "whole dist array used as a view");
        o(c, "orn_std_vec_local(P_, %s, -1, 0, %d)", nm(c, s), c->line);
        return;
    }
    int dim;
    const OrnNode *fixed;
    if (!orn_cg_view_parts(e, &dim, &fixed)) {
        ice(c, e, "malformed view");
        return;
    }
    if (is_local_array(s)) {
        o(c, "orn_std_vec_local(P_, %s, %d, ", nm(c, s), dim);
    } else if (in_loop_ctx(c)) {
        int k = array_k(c, e, s);
        if (c->cx != CX_PREFETCH && orn_cg_boxable(c->loop, k))
            o(c, "orn_std_vec_box(P_, &X%d_, ", k);
        else
            o(c, "orn_std_vec_view(P_, &V_[%d], ", k);
        put_dims(c, s);
        o(c, ", %d, ", sdim(perm_of(c, s), dim));
    } else if (is_buffer(s)) {
        o(c, "orn_std_vec_buf(P_, %s, %d, ", nm(c, s), sdim(perm_of(c, s), dim));
    } else {
        o(c, "orn_std_vec_dist(P_, %s, %d, ", nm(c, s), sdim(perm_of(c, s), dim));
    }
    ex(c, fixed);
    o(c, ", %d)", c->line);
}

/* ---- view expressions */

/* Structurally equal expressions without effects (they evaluate to the same value). */
static bool same_expr(const OrnNode *a, const OrnNode *b)
{
    if (!a || !b || a->kind != b->kind) return false;
    switch (a->kind) {
    case N_INT:
        return a->u.ilit.v == b->u.ilit.v;
    case N_NAME:
        return a->u.name.sym && a->u.name.sym == b->u.name.sym;
    case N_SLICE:
        return true;
    case N_UNARY:
        return a->u.unary.op == b->u.unary.op && same_expr(a->u.unary.e, b->u.unary.e);
    case N_BINARY:
        return a->u.binary.op == b->u.binary.op && same_expr(a->u.binary.l, b->u.binary.l) &&
               same_expr(a->u.binary.r, b->u.binary.r);
    case N_INDEX: {
        if (!same_expr(a->u.index.base, b->u.index.base)) return false;
        const OrnNode *x = a->u.index.subs, *y = b->u.index.subs;
        for (; x && y; x = x->next, y = y->next)
            if (!same_expr(x, y)) return false;
        return !x && !y;
    }
    default:
        return false;
    }
}

static void vx_collect(C *c, VX *vx, const OrnNode *e)
{
    bool view = e->type && e->type->kind == T_VIEW;
    if (view && (e->kind == N_UNARY || e->kind == N_BINARY)) {
        if (e->kind == N_UNARY)
            vx_collect(c, vx, e->u.unary.e);
        else {
            vx_collect(c, vx, e->u.binary.l);
            vx_collect(c, vx, e->u.binary.r);
        }
        return;
    }
    /* views, and whole local arrays used as vectors, are view leaves */
    bool vleaf = view || (e->type && e->type->kind == T_ARRAY);
    VLeaf *arr = vleaf ? vx->views : vx->scalars;
    int *n = vleaf ? &vx->nviews : &vx->nscalars;
    if (*n >= MAXLEAF) {
        vx->overflow = true;
        ice(c, e, "view expression too large");
        return;
    }
    arr[*n].n = e;
    arr[*n].dup = false;
    if (vleaf && e->kind == N_INDEX) {
        if (vx->target && same_expr(vx->target, e)) {
            arr[*n].dup = true;
            arr[*n].id = vx->target_id;
            (*n)++;
            return;
        }
        for (int i = 0; i < *n; i++)
            if (!arr[i].dup && same_expr(arr[i].n, e)) {
                arr[*n].dup = true;
                arr[*n].id = arr[i].id;
                (*n)++;
                return;
            }
    }
    arr[*n].id = c->tmp++;
    (*n)++;
}

static const VLeaf *vx_find(const VX *vx, const OrnNode *e)
{
    for (int i = 0; i < vx->nviews; i++)
        if (vx->views[i].n == e) return &vx->views[i];
    for (int i = 0; i < vx->nscalars; i++)
        if (vx->scalars[i].n == e) return &vx->scalars[i];
    return NULL;
}

/* Declarations of the leaves: scalars evaluated once, in order; views; length checks
 * against `first` (the id of the target vector, or -1: the first view). */
static void vx_setup(C *c, const VX *vx, int first)
{
    for (int i = 0; i < vx->nscalars; i++) {
        const VLeaf *l = &vx->scalars[i];
        ind(c);
        o(c, "const %s s%d_ = ", ctype(kind_of(l->n)), l->id);
        ex(c, l->n);
        o(c, ";\n");
    }
    for (int i = 0; i < vx->nviews; i++) {
        const VLeaf *l = &vx->views[i];
        if (l->dup) continue;
        ind(c);
        o(c, "OrnStdVec w%d_ = ", l->id);
        vec_ctor(c, l->n);
        o(c, ";\n");
    }
    if (first == -2) return; /* the caller checks against its target */
    int f = first >= 0 ? first : vx->nviews ? vx->views[0].id : -1;
    for (int i = 0; i < vx->nviews; i++)
        if (vx->views[i].id != f && !vx->views[i].dup)
            ol(c, "orn_std_vec_same(&w%d_, &w%d_);", f, vx->views[i].id);
}

static OrnTypeKind leaf_elem(const OrnNode *n)
{
    return elem_of(n->type);
}

/* Element x_<xid> of a view expression; fast: through the hoisted pointers q<id>_. */
enum { EL_SLOW, EL_STRIDED, EL_UNIT };

/* Element x<xid>_ of a view expression: through the accessors (EL_SLOW), or the hoisted
 * pointers q<id>_ with strides t<id>_ (EL_STRIDED) or stride 1 (EL_UNIT). */
static void vx_elem(C *c, const VX *vx, const OrnNode *e, int fast, int xid)
{
    const VLeaf *l = vx_find(vx, e);
    if (l) {
        bool view = l >= vx->views && l < vx->views + MAXLEAF;
        if (!view)
            o(c, "s%d_", l->id);
        else if (fast == EL_UNIT)
            o(c, "q%d_[x%d_]", l->id, xid);
        else if (fast == EL_STRIDED)
            o(c, "q%d_[x%d_ * t%d_]", l->id, xid, l->id);
        else
            o(c, "orn_std_vget_%s(&w%d_, x%d_)", sfx(leaf_elem(l->n)), l->id, xid);
        return;
    }
    if (e->kind == N_UNARY) {
        o(c, "(-(");
        vx_elem(c, vx, e->u.unary.e, fast, xid);
        o(c, "))");
        return;
    }
    if (e->kind == N_BINARY) {
        static const char *ops[] = {[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/"};
        OrnOp op = e->u.binary.op;
        if (op < OP_ADD || op > OP_DIV) {
            ice(c, e, "operator in a view expression");
            return;
        }
        bool narrow = num_elem(e) == T_F32;
        o(c, "(");
        if (narrow && num_elem(e->u.binary.l) == T_F64) o(c, "(float)");
        vx_elem(c, vx, e->u.binary.l, fast, xid);
        o(c, " %s ", ops[op]);
        if (narrow && num_elem(e->u.binary.r) == T_F64) o(c, "(float)");
        vx_elem(c, vx, e->u.binary.r, fast, xid);
        o(c, ")");
        return;
    }
    ice(c, e, "unexpected node in a view expression");
}

/* In a fast branch: typed pointers and strides of the views. */
static void vx_hoist(C *c, const VX *vx)
{
    for (int i = 0; i < vx->nviews; i++) {
        const VLeaf *l = &vx->views[i];
        if (l->dup) continue;
        const char *t = ctype(leaf_elem(l->n));
        ol(c, "%s *const q%d_ = (%s *)(void *)w%d_.p;", t, l->id, t, l->id);
        ol(c, "const int64_t t%d_ = w%d_.stride;", l->id, l->id);
    }
}

static void vx_fast_cond(C *c, const VX *vx, int extra)
{
    o(c, "if (");
    bool first = true;
    if (extra >= 0) {
        o(c, "w%d_.p", extra);
        first = false;
    }
    for (int i = 0; i < vx->nviews; i++) {
        if (vx->views[i].dup) continue;
        o(c, "%sw%d_.p", first ? "" : " && ", vx->views[i].id);
        first = false;
    }
    if (first) o(c, "1");
    o(c, ") {\n");
}

/* dot/sum/norm of arrays and views. */
static void ex_reduce(C *c, const OrnNode *e, int bi)
{
    const OrnNode *a = arg_n(e, 0), *b = bi == ORN_BI_DOT ? arg_n(e, 1) : NULL;
    const OrnSym *sa = orn_cg_base_sym(a);
    const char *what = bi == ORN_BI_DOT ? "dot" : bi == ORN_BI_SUM ? "sum" : "norm";
    /* whole dist arrays: collective */
    if (a->kind == N_NAME && sa && sa->type->kind == T_ARRAY && sa->type->dist) {
        if (bi == ORN_BI_DOT) {
            const OrnSym *sb = orn_cg_base_sym(b);
            o(c, "orn_std_dist_dot(P_, %s, %s, %d)", nm(c, sa), sb ? nm(c, sb) : "NULL", c->line);
        } else {
            o(c, "orn_std_dist_%s(P_, %s, %d)", what, nm(c, sa), c->line);
        }
        return;
    }
    int id = c->tmp++;
    bool plain_a = a->kind == N_NAME || (a->kind == N_INDEX && kind_of(a) == T_VIEW);
    bool plain_b = !b || b->kind == N_NAME || (b->kind == N_INDEX && kind_of(b) == T_VIEW);
    if (plain_a && plain_b) {
        o(c, "({ OrnStdVec ra%d_ = ", id);
        vec_ctor(c, a);
        o(c, "; ");
        if (b) {
            o(c, "OrnStdVec rb%d_ = ", id);
            vec_ctor(c, b);
            o(c, "; orn_std_vec_same(&ra%d_, &rb%d_); ", id, id);
            OrnTypeKind ta = leaf_elem(a), tb = leaf_elem(b);
            if (kind_of(e) == T_F32) {
                o(c,
                  "(ra%d_.p && rb%d_.p) ? orn_std_sdot_f32((const float *)(const void *)ra%d_.p, "
                  "ra%d_.stride, (const float *)(const void *)rb%d_.p, rb%d_.stride, ra%d_.len) : "
                  "orn_std_vsdot_slow(&ra%d_, &rb%d_); })",
                  id, id, id, id, id, id, id, id, id);
                return;
            }
            o(c,
              "(ra%d_.p && rb%d_.p) ? orn_std_dot_%s_%s((const %s *)(const void *)ra%d_.p, "
              "ra%d_.stride, (const %s *)(const void *)rb%d_.p, rb%d_.stride, ra%d_.len) : "
              "orn_std_vdot_slow(&ra%d_, &rb%d_); })",
              id, id, sfx(ta), sfx(tb), ctype(ta), id, id, ctype(tb), id, id, id, id, id);
        } else {
            o(c, "orn_std_v%s(&ra%d_); })", what, id);
        }
        return;
    }
    /* general view expressions: one loop, the same partial sums */
    VX *vx = calloc(1, sizeof *vx);
    vx_collect(c, vx, a);
    if (b) vx_collect(c, vx, b);
    o(c, "({\n");
    c->ind++;
    vx_setup(c, vx, -1);
    if (!vx->nviews) ice(c, e, "reduction without a view");
    bool f32 = kind_of(e) == T_F32; /* dot of two f32 views: partial sums in f32 */
    const char *acc = f32 ? "float" : "double";
    ol(c, "%s r%d_[8] = {0, 0, 0, 0, 0, 0, 0, 0};", acc, id);
    ind(c);
    o(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++) ", id, id,
      vx->nviews ? vx->views[0].id : 0, id);
    if (bi == ORN_BI_DOT) {
        o(c, "r%d_[x%d_ & 7] += (%s)(", id, id, acc);
        vx_elem(c, vx, a, EL_SLOW, id);
        o(c, ") * (%s)(", acc);
        vx_elem(c, vx, b, EL_SLOW, id);
        o(c, ");\n");
    } else if (bi == ORN_BI_SUM) {
        o(c, "r%d_[x%d_ & 7] += (double)(", id, id);
        vx_elem(c, vx, a, EL_SLOW, id);
        o(c, ");\n");
    } else {
        o(c, "{ const double e%d_ = (double)(", id);
        vx_elem(c, vx, a, EL_SLOW, id);
        o(c, "); r%d_[x%d_ & 7] += e%d_ * e%d_; }\n", id, id, id, id);
    }
    ind(c);
    if (bi == ORN_BI_NORM)
        o(c, "sqrt(orn_std_lanes(r%d_));\n", id);
    else
        o(c, "orn_std_lanes%s(r%d_);\n", f32 ? "_f32" : "", id);
    c->ind--;
    ind(c);
    o(c, "})");
    free(vx);
}

/* matmul_into, add_outer, solve_into: one call into stdlib/blas.c. A 2-D operand is a
 * local array (OrnStdArr *); a 1-D one, a view or a local 1-D array, is an OrnStdVec
 * passed by address. */
static int operand_dims(const OrnNode *x)
{
    return x->type && x->type->kind == T_ARRAY ? x->type->ndims : 1;
}

static void blas_operand(C *c, const OrnNode *x)
{
    const OrnSym *s = orn_cg_base_sym(x);
    if (operand_dims(x) == 2) {
        if (x->kind != N_NAME || !is_local_array(s))
            ice(c, x, "matrix operand is not a local array");
        o(c, "%s", s ? nm(c, s) : "NULL");
        return;
    }
    o(c, "(const OrnStdVec[1]){");
    vec_ctor(c, x);
    o(c, "}");
}

static void ex_blas(C *c, const OrnNode *e, int bi)
{
    const OrnNode *a[3] = {arg_n(e, 0), arg_n(e, 1), arg_n(e, 2)};
    if (!a[0] || !a[1] || !a[2]) {
        ice(c, e, "linear algebra built-in without its operands");
        return;
    }
    const OrnNode *opt = kwarg(e, bi == ORN_BI_ADD_OUTER ? "scale" : "add");
    int order[3] = {0, 1, 2};
    if (bi == ORN_BI_MATMUL_INTO && operand_dims(a[0]) == 2) {
        o(c, "orn_std_blas_gemm(P_, ");
    } else if (bi == ORN_BI_MATMUL_INTO) {
        o(c, "orn_std_blas_gemv(P_, ");
        if (operand_dims(a[1]) == 1) order[1] = 2, order[2] = 1; /* x B: B' x */
    } else if (bi == ORN_BI_ADD_OUTER) {
        o(c, "orn_std_blas_ger(P_, ");
    } else {
        o(c, "orn_std_blas_solve(P_, ");
    }
    for (int i = 0; i < 3; i++) {
        if (i) o(c, ", ");
        blas_operand(c, a[order[i]]);
    }
    if (bi == ORN_BI_MATMUL_INTO && operand_dims(a[0]) == 1)
        o(c, ", %s", order[1] == 2 ? "true" : "false");
    if (bi == ORN_BI_MATMUL_INTO) {
        o(c, ", ");
        if (opt)
            ex_as(c, opt, T_BOOL);
        else
            o(c, "false");
    } else if (bi == ORN_BI_ADD_OUTER) {
        o(c, ", ");
        if (opt)
            ex_as(c, opt, T_F64);
        else
            o(c, "1.0");
    }
    o(c, ", %d)", c->line);
}

/* Extents: rows/cols/dim/nnz/len of an array (dist or local) or a view. */
static void ex_extent(C *c, const OrnNode *e, int bi)
{
    const OrnNode *a = arg_n(e, 0);
    if (bi == ORN_BI_LEN && a->kind != N_NAME) {
        /* a view or a view expression: the length of its first view */
        const OrnNode *v = a;
        while (v && v->kind != N_INDEX) {
            if (v->kind == N_UNARY)
                v = v->u.unary.e;
            else if (v->kind == N_BINARY)
                v = kind_of(v->u.binary.l) == T_VIEW ? v->u.binary.l : v->u.binary.r;
            else
                v = NULL;
        }
        int dim;
        const OrnNode *fixed;
        const OrnSym *s = orn_cg_base_sym(v);
        if (!v || !s || !orn_cg_view_parts(v, &dim, &fixed)) {
            ice(c, e, "len of an unexpected expression");
            return;
        }
        put_dims(c, s);
        o(c, "[%d]", sdim(perm_of(c, s), dim));
        return;
    }
    const OrnSym *s = orn_cg_base_sym(a);
    if (!s) {
        ice(c, e, "extent of something that is not an array");
        return;
    }
    int nd = s->type->ndims;
    const int *perm = perm_of(c, s);
    switch (bi) {
    case ORN_BI_ROWS:
    case ORN_BI_LEN:
        put_dims(c, s);
        o(c, "[%d]", sdim(perm, 0));
        break;
    case ORN_BI_COLS:
        put_dims(c, s);
        o(c, "[%d]", sdim(perm, 1));
        break;
    case ORN_BI_NNZ:
        if (is_local_array(s))
            o(c, "%s->n", nm(c, s));
        else
            o(c, "%s->nnz", nm(c, s));
        break;
    default:
        o(c, "orn_std_dim(P_, %d, ", nd);
        if (perm) {
            /* the logical extents */
            o(c, "(const int64_t[%d]){", nd);
            for (int d = 0; d < nd; d++) {
                o(c, "%s", d ? ", " : "");
                put_dims(c, s);
                o(c, "[%d]", sdim(perm, d));
            }
            o(c, "}");
        } else {
            put_dims(c, s);
        }
        o(c, ", ");
        ex(c, arg_n(e, 1));
        o(c, ", %d)", c->line);
        break;
    }
}

static bool fn_needs_ctx(C *c, const OrnSym *fs)
{
    int j = fs && fs->decl ? orn_cg_fn_index(c->p, fs->decl) : -1;
    return j >= 0 && c->p->needs_ctx[j];
}

static void ex_user_call(C *c, const OrnNode *e)
{
    const OrnSym *fs = e->u.call.sym;
    const OrnNode *fn = fs->decl;
    bool clone =
        fs->kind == SYM_FN && (c->cx == CX_BODY || c->cx == CX_CLONE) && fn_needs_ctx(c, fs);
    if (clone)
        o(c, "%s__L%d(b_, %s", nm(c, fs), c->loop->id, c->loop->uses_rng ? "rng_" : "NULL");
    else
        o(c, "%s(", nm(c, fs));
    const OrnNode *par = fn && fn->kind == N_FN ? fn->u.fn.args : NULL;
    bool first = !clone;
    for (const OrnNode *a = e->u.call.args; a; a = a->next) {
        if (a->kind == N_KWARG) continue;
        if (!first) o(c, ", ");
        first = false;
        const OrnSym *ps = par ? par->u.arg.sym : NULL;
        if (ps && ps->type)
            ex_as(c, a, ps->type->kind);
        else
            ex(c, a);
        if (par) par = par->next;
    }
    o(c, ")");
}

/* The arguments of zeros/fill/rand/randn after the extents literal, for the local and the
 * distributed constructor alike: "}, <init kind>, <fill value>, <seed>". */
static void arr_init_args(C *c, const OrnNode *call, int bi, const OrnNode *a1)
{
    static const char *const init[] = {"ORN_STD_ZEROS", "ORN_STD_FILL", "ORN_STD_RAND",
                                       "ORN_STD_RANDN"};
    int ik = bi == ORN_BI_ZEROS ? 0 : bi == ORN_BI_FILL ? 1 : bi == ORN_BI_RAND ? 2 : 3;
    o(c, "}, %s, ", init[ik]);
    if (bi == ORN_BI_FILL)
        ex_as(c, a1, T_F64);
    else
        o(c, "0.0");
    o(c, ", ");
    const OrnNode *seed = kwarg(call, "seed");
    if (seed)
        ex_as(c, seed, T_I64);
    else
        o(c, "0");
}

static void ex_call(C *c, const OrnNode *e)
{
    int bi = e->u.call.builtin;
    if (e->u.call.sym) {
        ex_user_call(c, e);
        return;
    }
    OrnTypeKind k = kind_of(e);
    const OrnNode *a0 = arg_n(e, 0), *a1 = arg_n(e, 1);
    const char *mname = math_name(bi);
    if (mname) {
        if (k == T_F32) {
            o(c, "%sf(", mname);
            ex_as(c, a0, T_F32);
        } else {
            o(c, "%s(", mname);
            ex_as(c, a0, T_F64);
        }
        o(c, ")");
        return;
    }
    bool in_body = c->cx == CX_BODY || c->cx == CX_CLONE;
    switch (bi) {
    case ORN_BI_SIGMOID:
        if (k == T_F32) {
            o(c, "(1.0f / (1.0f + expf(-");
            ex_as(c, a0, T_F32);
        } else {
            o(c, "(1.0 / (1.0 + exp(-");
            ex_as(c, a0, T_F64);
        }
        o(c, ")))");
        return;
    case ORN_BI_ABS:
        if (k == T_F32)
            o(c, "fabsf(");
        else if (k == T_F64)
            o(c, "fabs(");
        else
            o(c, "orn_std_abs_%s(", sfx(k));
        ex(c, a0);
        o(c, ")");
        return;
    case ORN_BI_POW:
        o(c, k == T_F32 ? "powf(" : "pow(");
        ex_as(c, a0, k);
        o(c, ", ");
        ex_as(c, a1, k);
        o(c, ")");
        return;
    case ORN_BI_MIN:
    case ORN_BI_MAX:
        o(c, "orn_std_%s_%s(", bi == ORN_BI_MIN ? "min" : "max", sfx(k));
        ex_as(c, a0, k);
        o(c, ", ");
        ex_as(c, a1, k);
        o(c, ")");
        return;
    case ORN_BI_DIV:
    case ORN_BI_MOD: {
        const char *f = bi == ORN_BI_DIV ? "div" : "mod";
        o(c, "((%s)", ctype(k));
        if (c->cx == CX_PREFETCH)
            o(c, "orn_std_%s_soft(", f);
        else
            o(c, "orn_std_%s(P_, ", f);
        ex_as(c, a0, T_I64);
        o(c, ", ");
        ex_as(c, a1, T_I64);
        if (c->cx == CX_PREFETCH)
            o(c, "))");
        else
            o(c, ", %d))", c->line);
        return;
    }
    case ORN_BI_I32:
    case ORN_BI_I64:
    case ORN_BI_F32:
    case ORN_BI_F64:
        o(c, "((%s)(", ctype(k));
        ex(c, a0);
        o(c, "))");
        return;
    case ORN_BI_RANDINT:
        if (in_body)
            o(c, "orn_std_rng_int(P_, rng_, ");
        else
            o(c, "orn_std_randint(P_, ");
        ex_as(c, a0, T_I64);
        o(c, ", %d)", c->line);
        return;
    case ORN_BI_RAND:
    case ORN_BI_RANDN:
        if (!a0) {
            bool n = bi == ORN_BI_RANDN;
            if (in_body)
                o(c, n ? "orn_rt_rng_normal(rng_)" : "orn_rt_rng_uniform(rng_)");
            else
                o(c, n ? "orn_std_randn(P_)" : "orn_std_rand(P_)");
            return;
        }
        break; /* array constructor: below */
    case ORN_BI_LEN:
    case ORN_BI_ROWS:
    case ORN_BI_COLS:
    case ORN_BI_DIM:
    case ORN_BI_NNZ:
        ex_extent(c, e, bi);
        return;
    case ORN_BI_WALL_TIME:
        o(c, "orn_std_wall_time()");
        return;
    case ORN_BI_PRINT:
        ex_print(c, e, false);
        return;
    case ORN_BI_EPRINT:
        ex_print(c, e, true);
        return;
    case ORN_BI_PRINTF:
        ex_printf(c, e);
        return;
    case ORN_BI_EXIT:
        o(c, "orn_std_exit(P_, ");
        ex_as(c, a0, T_I64);
        o(c, ")");
        return;
    case ORN_BI_SEED:
        o(c, "orn_std_set_seed(P_, ");
        ex_as(c, a0, T_I64);
        o(c, ")");
        return;
    case ORN_BI_LOAD_TEXT: /* collective: rank 0 reads, every rank gets the lines */
        o(c, "orn_std_load_text(P_, ");
        ex(c, a0);
        o(c, ", %d)", c->line);
        return;
    case ORN_BI_SAVE: {
        const OrnSym *s = orn_cg_base_sym(a0);
        if (is_local_array(s))
            o(c, "orn_std_arr_save(P_, %s, ", nm(c, s));
        else if (perm_of(c, s)) {
            const int *perm = perm_of(c, s);
            int nd = s->type->ndims;
            o(c, "orn_std_save_perm(P_, %s, (const int[%d]){", nm(c, s), nd);
            for (int d = 0; d < nd; d++) o(c, "%s%d", d ? ", " : "", perm[d]);
            o(c, "}, ");
        } else
            o(c, "orn_std_save(P_, %s, ", s ? nm(c, s) : "NULL");
        ex(c, a1);
        o(c, ", %d)", c->line);
        return;
    }
    case ORN_BI_SUM:
    case ORN_BI_DOT:
    case ORN_BI_NORM:
        ex_reduce(c, e, bi);
        return;
    case ORN_BI_MATMUL_INTO:
    case ORN_BI_ADD_OUTER:
    case ORN_BI_SOLVE_INTO:
        ex_blas(c, e, bi);
        return;
    default:
        break;
    }
    if (bi == ORN_BI_ZEROS || bi == ORN_BI_FILL || bi == ORN_BI_RAND || bi == ORN_BI_RANDN) {
        /* a local array */
        OrnTypeKind et = elem_of(a0->type);
        int first = bi == ORN_BI_FILL ? 2 : 1, nd = 0;
        o(c, "orn_std_arr_new(P_, %s, ", dsmt(et));
        for (const OrnNode *x = arg_n(e, first); x; x = x->next)
            if (x->kind != N_KWARG) nd++;
        o(c, "%d, (const int64_t[%d]){", nd, nd);
        bool f = true;
        for (const OrnNode *x = arg_n(e, first); x; x = x->next) {
            if (x->kind == N_KWARG) continue;
            if (!f) o(c, ", ");
            f = false;
            ex(c, x);
        }
        arr_init_args(c, e, bi, a1);
        o(c, ", %d)", c->line);
        return;
    }
    ice(c, e, "a built-in that code generation does not handle here");
}

/* Does evaluating e have an effect (or depend on one): calls of fns and externs, random
 * draws, printing, the clock? */
static bool impure(const OrnNode *e)
{
    if (!e) return false;
    switch (e->kind) {
    case N_CALL: {
        if (e->u.call.sym) return true;
        switch (e->u.call.builtin) {
        case ORN_BI_RANDINT:
        case ORN_BI_WALL_TIME:
        case ORN_BI_PRINT:
        case ORN_BI_PRINTF:
        case ORN_BI_EPRINT:
        case ORN_BI_EXIT:
        case ORN_BI_SEED:
        case ORN_BI_SAVE:
        case ORN_BI_LOAD_TEXT:
        case ORN_BI_MATMUL_INTO:
        case ORN_BI_ADD_OUTER:
        case ORN_BI_SOLVE_INTO:
            return true;
        case ORN_BI_RAND:
        case ORN_BI_RANDN:
            if (!e->u.call.args) return true;
            break;
        default:
            break;
        }
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (impure(a)) return true;
        return false;
    }
    case N_KWARG:
        return impure(e->u.kwarg.value);
    case N_UNARY:
        return impure(e->u.unary.e);
    case N_BINARY:
        return impure(e->u.binary.l) || impure(e->u.binary.r);
    case N_INDEX:
        for (const OrnNode *a = e->u.index.subs; a; a = a->next)
            if (impure(a)) return true;
        return false;
    default:
        return false;
    }
}

static bool is_constant(const OrnNode *e)
{
    return e->kind == N_INT || e->kind == N_FLOAT || e->kind == N_STR || e->kind == N_BOOL ||
           (e->kind == N_NAME && e->u.name.sym && e->u.name.sym->kind == SYM_CONST);
}

/* C leaves the order of operands and arguments unspecified; the language evaluates them
 * left to right. When an operand has an effect and another operand is not a constant,
 * evaluate the scalar operands into temporaries first, in order: "({ T q1_ = a; ... ".
 * Returns the number of substitutions pushed (0: no sequencing needed). */
static int seq_begin(C *c, const OrnNode *const *ops, int n)
{
    int nimpure = 0, nvar = 0;
    for (int i = 0; i < n; i++) {
        if (!ops[i] || ops[i]->kind == N_KWARG) continue;
        nimpure += impure(ops[i]);
        nvar += !is_constant(ops[i]);
    }
    if (!nimpure || nvar < 2) return 0;
    int pushed = 0;
    o(c, "({ ");
    for (int i = 0; i < n; i++) {
        const OrnNode *x = ops[i];
        if (!x || x->kind == N_KWARG || is_constant(x)) continue;
        OrnTypeKind k = kind_of(x);
        if (k < T_BOOL || k > T_STR || c->nsubst >= MAXLEAF) continue;
        int id = c->tmp++;
        o(c, "%s q%d_ = ", ctype(k), id);
        ex(c, x);
        o(c, "; ");
        c->subst[c->nsubst] = x;
        c->subst_id[c->nsubst++] = id;
        pushed++;
    }
    return pushed ? pushed : -1;
}

static void seq_end(C *c, int pushed)
{
    if (!pushed) return;
    o(c, "; })");
    if (pushed > 0) c->nsubst -= pushed;
}

static void ex_inner(C *c, const OrnNode *e);

static void ex(C *c, const OrnNode *e)
{
    if (!e) {
        ice(c, NULL, "missing expression");
        return;
    }
    for (int i = c->nsubst - 1; i >= 0; i--)
        if (c->subst[i] == e) {
            o(c, "q%d_", c->subst_id[i]);
            return;
        }
    int pushed = 0;
    if (e->kind == N_BINARY && e->u.binary.op != OP_AND && e->u.binary.op != OP_OR &&
        kind_of(e) != T_VIEW) {
        const OrnNode *ops[2] = {e->u.binary.l, e->u.binary.r};
        pushed = seq_begin(c, ops, 2);
    } else if (e->kind == N_CALL &&
               !(e->u.call.builtin == ORN_BI_SUM || e->u.call.builtin == ORN_BI_DOT ||
                 e->u.call.builtin == ORN_BI_NORM)) {
        const OrnNode *ops[MAXLEAF];
        int n = 0;
        for (const OrnNode *a = e->u.call.args; a && n < MAXLEAF; a = a->next)
            if (a->kind != N_KWARG) ops[n++] = a;
        pushed = seq_begin(c, ops, n);
    }
    ex_inner(c, e);
    seq_end(c, pushed);
}

static void ex_inner(C *c, const OrnNode *e)
{
    switch (e->kind) {
    case N_INT:
        put_i64(c, e->u.ilit.v);
        return;
    case N_FLOAT:
        put_f64(c, e->u.flit.v);
        return;
    case N_STR:
        put_str(c, e->u.slit.s, e->u.slit.len);
        return;
    case N_BOOL:
        o(c, e->u.blit.v ? "true" : "false");
        return;
    case N_NAME:
        ex_name(c, e);
        return;
    case N_UNARY:
        o(c, e->u.unary.op == OP_NOT ? "(!(" : "(-(");
        ex(c, e->u.unary.e);
        o(c, "))");
        return;
    case N_BINARY: {
        static const char *ops[] = {
            [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*",  [OP_DIV] = "/",
            [OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<",   [OP_LE] = "<=",
            [OP_GT] = ">",  [OP_GE] = ">=", [OP_AND] = "&&", [OP_OR] = "||"};
        OrnOp op = e->u.binary.op;
        if (kind_of(e) == T_VIEW || op < OP_ADD || op > OP_OR) {
            ice(c, e, "view arithmetic outside an element-wise context");
            return;
        }
        /* f32 op weak f64 is f32 (sema's narrow_weak): the f64 side converts first */
        bool narrow = kind_of(e) == T_F32;
        o(c, "(");
        if (narrow && kind_of(e->u.binary.l) == T_F64) o(c, "(float)");
        ex(c, e->u.binary.l);
        o(c, " %s ", ops[op]);
        if (narrow && kind_of(e->u.binary.r) == T_F64) o(c, "(float)");
        ex(c, e->u.binary.r);
        o(c, ")");
        return;
    }
    case N_CALL:
        ex_call(c, e);
        return;
    case N_INDEX:
        if (kind_of(e) == T_VIEW) {
            ice(c, e, "a view outside an element-wise context");
            return;
        }
        ex_index(c, e);
        return;
    default:
        ice(c, e, "unexpected expression node");
        return;
    }
}

/* A condition: the outermost comparison without its parentheses (clang warns about
 * "if ((a == b))"). */
static void ex_cond(C *c, const OrnNode *e)
{
    static const char *ops[] = {[OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<",   [OP_LE] = "<=",
                                [OP_GT] = ">",  [OP_GE] = ">=", [OP_AND] = "&&", [OP_OR] = "||"};
    if (e && e->kind == N_BINARY && e->u.binary.op >= OP_EQ && e->u.binary.op <= OP_OR) {
        ex(c, e->u.binary.l);
        o(c, " %s ", ops[e->u.binary.op]);
        ex(c, e->u.binary.r);
        return;
    }
    ex(c, e);
}

/* ---------------------------------------------------------------- statements */

static void st(C *c, const OrnNode *s);
static void st_list(C *c, const OrnNode *list)
{
    for (; list; list = list->next) st(c, list);
}

static void st_block(C *c, const OrnNode *blk)
{
    c->ind++;
    if (blk) st_list(c, blk->kind == N_BLOCK ? blk->u.block.stmts : blk);
    c->ind--;
}

static const char *assign_op(OrnOp op)
{
    switch (op) {
    case OP_ADD:
        return "+";
    case OP_SUB:
        return "-";
    case OP_MUL:
        return "*";
    case OP_DIV:
        return "/";
    default:
        return NULL;
    }
}

/* lhs = (T)(lhs op (rhs)), or lhs = (T)(rhs) for '=' */
static void assign_into(C *c, const char *lhs, OrnTypeKind k, OrnOp op, const OrnNode *rhs)
{
    const char *opn = assign_op(op);
    ind(c);
    if (k == T_STR || k == T_BOOL) {
        o(c, "%s = ", lhs);
        ex(c, rhs);
        o(c, ";\n");
        return;
    }
    o(c, "%s = (%s)(", lhs, ctype(k));
    if (opn) o(c, "%s %s (", lhs, opn);
    ex(c, rhs);
    o(c, opn ? "));\n" : ");\n");
}

static void st_assign_view(C *c, const OrnNode *s)
{
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    OrnOp op = s->u.assign.op;
    const OrnSym *ts = orn_cg_base_sym(tg);
    bool buf = is_buffer(ts);
    OrnTypeKind tk = elem_of(ts->type);
    const char *T = ctype(tk);
    VX *vx = calloc(1, sizeof *vx);
    int tid = c->tmp++, x = c->tmp++;
    if (!buf) {
        vx->target = tg;
        vx->target_id = tid;
    }
    vx_collect(c, vx, rhs);
    ol(c, "{");
    c->ind++;
    vx_setup(c, vx, -2); /* scalars and views; checks below */
    ind(c);
    o(c, "OrnStdVec w%d_ = ", tid);
    vec_ctor(c, tg);
    o(c, ";\n");
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup) ol(c, "orn_std_vec_same(&w%d_, &w%d_);", tid, vx->views[i].id);
    const char *opn = assign_op(op);
    if (buf) {
        ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
        c->ind++;
        ind(c);
        o(c, "orn_std_vadd_%s(&w%d_, x%d_, (%s)(%s(", sfx(tk), tid, x, T, op == OP_SUB ? "-" : "");
        vx_elem(c, vx, rhs, EL_SLOW, x);
        o(c, ")));\n");
        c->ind--;
    } else if (!orn_cg_view_fusable(tg, rhs)) {
        /* the right side reads the target across the other dimension: evaluate it first */
        OrnTypeKind rk = elem_of(rhs->type);
        if (rhs->type && rhs->type->kind != T_VIEW) rk = rhs->type->kind;
        const char *R = ctype(rk);
        ol(c, "%s *m%d_ = malloc((size_t)(w%d_.len > 0 ? w%d_.len : 1) * sizeof(%s));", R, tid, tid,
           tid, R);
        ol(c, "if (!m%d_) orn_std_die(P_, %d, \"out of memory\");", tid, c->line);
        ind(c);
        o(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++) m%d_[x%d_] = ", x, x, tid, x, tid, x);
        vx_elem(c, vx, rhs, EL_SLOW, x);
        o(c, ";\n");
        ind(c);
        o(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++) orn_std_vset_%s(&w%d_, x%d_, (%s)(",
          x, x, tid, x, sfx(tk), tid, x, T);
        if (opn) o(c, "orn_std_vget_%s(&w%d_, x%d_) %s ", sfx(tk), tid, x, opn);
        o(c, "m%d_[x%d_]));\n", tid, x);
        ol(c, "free(m%d_);", tid);
    } else {
        ind(c);
        vx_fast_cond(c, vx, tid);
        c->ind++;
        ol(c, "%s *const q%d_ = (%s *)(void *)w%d_.p;", T, tid, T, tid);
        ol(c, "const int64_t t%d_ = w%d_.stride;", tid, tid);
        vx_hoist(c, vx);
        /* unit strides: a plain loop the compiler vectorizes. Element x of the right side
         * reads element x of any view of the target's array, so no iteration depends on
         * another (cross-dimension reads were materialized above): omp simd is safe. */
        ind(c);
        o(c, "if (t%d_ == 1", tid);
        for (int i = 0; i < vx->nviews; i++)
            if (!vx->views[i].dup) o(c, " && t%d_ == 1", vx->views[i].id);
        o(c, ") {\n");
        c->ind++;
        ol(c, "_Pragma(\"omp simd\")");
        ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
        c->ind++;
        ind(c);
        o(c, "q%d_[x%d_] = (%s)(", tid, x, T);
        if (opn) o(c, "q%d_[x%d_] %s (", tid, x, opn);
        vx_elem(c, vx, rhs, EL_UNIT, x);
        o(c, opn ? "));\n" : ");\n");
        c->ind -= 2;
        ol(c, "} else {");
        c->ind++;
        ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
        c->ind++;
        ind(c);
        o(c, "q%d_[x%d_ * t%d_] = (%s)(", tid, x, tid, T);
        if (opn) o(c, "q%d_[x%d_ * t%d_] %s (", tid, x, tid, opn);
        vx_elem(c, vx, rhs, EL_STRIDED, x);
        o(c, opn ? "));\n" : ");\n");
        c->ind -= 2;
        ol(c, "}");
        c->ind--;
        ol(c, "} else {");
        c->ind++;
        ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
        c->ind++;
        ind(c);
        o(c, "orn_std_vset_%s(&w%d_, x%d_, (%s)(", sfx(tk), tid, x, T);
        if (opn) o(c, "orn_std_vget_%s(&w%d_, x%d_) %s (", sfx(tk), tid, x, opn);
        vx_elem(c, vx, rhs, EL_SLOW, x);
        o(c, opn ? ")));\n" : "));\n");
        c->ind -= 2;
        ol(c, "}");
    }
    c->ind--;
    ol(c, "}");
    free(vx);
}

static void st_assign_elem(C *c, const OrnNode *s)
{
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    OrnOp op = s->u.assign.op;
    const OrnSym *ts = orn_cg_base_sym(tg);
    if (!ts) {
        ice(c, s, "assignment to something that is not a named array");
        return;
    }
    if (kind_of(tg) == T_VIEW) {
        st_assign_view(c, s);
        return;
    }
    OrnTypeKind tk = elem_of(ts->type);
    const char *T = ctype(tk), *opn = assign_op(op);
    int id = c->tmp++;
    if (is_local_array(ts)) {
        ol(c, "{");
        c->ind++;
        ind(c);
        o(c, "%s *const e%d_ = &", T, id);
        ex_index(c, tg);
        o(c, ";\n");
        char lhs[32];
        snprintf(lhs, sizeof lhs, "*e%d_", id);
        assign_into(c, lhs, tk, op, rhs);
        c->ind--;
        ol(c, "}");
        return;
    }
    ol(c, "{");
    c->ind++;
    ind(c);
    o(c, "const int64_t kk%d_[%d] = {", id, orn_list_len(tg->u.index.subs));
    ex_subs(c, tg->u.index.subs, ts);
    o(c, "};\n");
    ind(c);
    OrnTypeKind rk = kind_of(rhs);
    o(c, "const %s r%d_ = ", ctype(rk), id);
    ex(c, rhs);
    o(c, ";\n");
    char neg[8];
    snprintf(neg, sizeof neg, "%s", op == OP_SUB ? "-" : "");
    if (in_loop_ctx(c)) {
        int k = array_k(c, tg, ts);
        int nd = orn_list_len(tg->u.index.subs);
        if (is_buffer(ts)) {
            ol(c, "orn_rt_add_%s(&V_[%d], kk%d_, (%s)(%sr%d_));", sfx(tk), k, id, T, neg, id);
        } else if (orn_cg_boxable(c->loop, k)) {
            if (c->fast)
                ol(c, "%s *const e%d_ = (%s *)(void *)X%d_.base + orn_rt_box_at(&X%d_, %d, kk%d_);",
                   T, id, T, k, k, nd, id);
            else
                ol(c, "%s *const e%d_ = orn_rt_%s_%s(&X%d_, %d, kk%d_);", T, id, opn ? "rw" : "wp",
                   sfx(tk), k, nd, id);
            if (opn)
                ol(c, "*e%d_ = (%s)(*e%d_ %s r%d_);", id, T, id, opn, id);
            else
                ol(c, "*e%d_ = (%s)r%d_;", id, T, id);
        } else if (!opn) {
            ol(c, "*(%s *)orn_rt_wptr(&V_[%d], kk%d_) = (%s)r%d_;", T, k, id, T, id);
        } else {
            ol(c, "%s *const e%d_ = (%s *)orn_std_rw(&V_[%d], kk%d_);", T, id, T, k, id);
            ol(c, "*e%d_ = (%s)(*e%d_ %s r%d_);", id, T, id, opn, id);
        }
    } else if (is_buffer(ts)) {
        ol(c, "orn_std_badd_%s(P_, %s, kk%d_, (%s)(%sr%d_), %d);", sfx(tk), nm(c, ts), id, T, neg,
           id, c->line);
    } else if (!opn) {
        ol(c, "orn_std_dset_%s(P_, %s, kk%d_, (%s)r%d_, %d);", sfx(tk), nm(c, ts), id, T, id,
           c->line);
    } else {
        ol(c,
           "orn_std_dset_%s(P_, %s, kk%d_, (%s)(orn_std_dget_%s(P_, %s, kk%d_, %d) %s r%d_), %d);",
           sfx(tk), nm(c, ts), id, T, sfx(tk), nm(c, ts), id, c->line, opn, id, c->line);
    }
    c->ind--;
    ol(c, "}");
}

static void st_assign(C *c, const OrnNode *s)
{
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    OrnOp op = s->u.assign.op;
    if (tg->kind == N_INDEX) {
        st_assign_elem(c, s);
        return;
    }
    const OrnSym *sym = tg->u.name.sym;
    if (!sym) {
        ice(c, s, "assignment to an unresolved name");
        return;
    }
    OrnTypeKind k = sym->type->kind;
    if (sym->kind == SYM_VALUE) {
        assign_into(c, "(*vp_)", k, op, rhs);
        return;
    }
    if (c->cx == CX_BODY && c->loop) {
        int i = orn_cg_acc_index(c->loop, sym);
        if (i >= 0) {
            char lhs[48];
            snprintf(lhs, sizeof lhs, "A_[%d].%s", i, sfx(k));
            assign_into(c, lhs, k, op, rhs);
            return;
        }
    }
    if (k == T_ARRAY) {
        if (orn_cg_is_static(sym)) {
            ol(c, "orn_std_arr_free(%s);", nm(c, sym));
            ind(c);
            o(c, "%s = ", nm(c, sym));
        } else {
            ind(c);
            o(c,
              "OrnStdArr *%s __attribute__((cleanup(orn_std_arr_cleanup), unused)) = ", nm(c, sym));
        }
        ex(c, rhs);
        o(c, ";\n");
        return;
    }
    if (s->u.assign.declares && !orn_cg_is_static(sym)) {
        ind(c);
        o(c, "%s %s __attribute__((unused)) = ", ctype(k), nm(c, sym));
        ex_as(c, rhs, k);
        o(c, ";\n");
        return;
    }
    assign_into(c, nm(c, sym), k, op, rhs);
}

/* Bind a loop variable: a declaration for locals, an assignment for statics. */
static void bind_var(C *c, const OrnSym *s, const char *type, const char *val)
{
    if (!s) return;
    if (orn_cg_is_static(s))
        ol(c, "%s = %s;", nm(c, s), val);
    else
        ol(c, "const %s %s __attribute__((unused)) = %s;", type, nm(c, s), val);
}

/* Open the C loop of `for v in lo:hi` (bounds evaluated once, v bound in the body); the
 * caller then emits the body and closes the loop with for_close. */
static void for_open(C *c, const OrnNode *s)
{
    int id = c->tmp++;
    ol(c, "{");
    c->ind++;
    ind(c);
    o(c, "const int64_t lo%d_ = ", id);
    ex_as(c, s->u.for_.lo, T_I64);
    o(c, ", hi%d_ = ", id);
    ex_as(c, s->u.for_.hi, T_I64);
    o(c, ";\n");
    ol(c, "for (int64_t i%d_ = lo%d_; i%d_ < hi%d_; i%d_++) {", id, id, id, id, id);
    c->ind++;
    char v[24];
    snprintf(v, sizeof v, "i%d_", id);
    bind_var(c, s->u.for_.var->u.name.sym, "int64_t", v);
    c->ind--;
}

static void for_close(C *c)
{
    ol(c, "}");
    c->ind--;
    ol(c, "}");
}

/* Index-set splitting of a loop over [lo, hi) (version.h): the range where every span's
 * key lies in its box, [f0, f1), is computed once; the loop then runs as three segments,
 * [lo, f0) and [f1, hi) with per-access tests and [f0, f1) without, in the original order.
 * Declares sg<id>_[4], the segment bounds. */
static void split_range(C *c, const OrnCgSpan *sp, int n, const char *lo, const char *hi, int id)
{
    ol(c, "int64_t f0%d_ = %s, f1%d_ = %s;", id, lo, id, hi);
    bool inv = false;
    for (int i = 0; i < n; i++) {
        if (sp[i].var) continue;
        if (!inv) {
            ind(c);
            o(c, "if (!(");
        } else {
            o(c, " &&\n");
            ind(c);
            o(c, "      ");
        }
        inv = true;
        o(c, "orn_rt_box_span(&X%d_, %d, (int64_t)(", sp[i].array, sp[i].dim);
        ex(c, sp[i].inv);
        o(c, "), (int64_t)(");
        ex(c, sp[i].inv);
        o(c, "))");
    }
    if (inv) o(c, "))\n");
    if (inv) ol(c, "    f1%d_ = f0%d_;", id, id);
    for (int i = 0; i < n; i++)
        if (sp[i].var)
            ol(c, "orn_rt_box_clip(&X%d_, %d, INT64_C(%lld), &f0%d_, &f1%d_);", sp[i].array,
               sp[i].dim, (long long)sp[i].off, id, id);
    ol(c, "if (f0%d_ > %s) f0%d_ = f1%d_ = %s;", id, hi, id, id, hi);
    ol(c, "const int64_t sg%d_[4] = {%s, f0%d_, f1%d_, %s};", id, lo, id, id, hi);
}

static bool mentions(const OrnNode *e, const OrnSym *s)
{
    if (!e) return false;
    switch (e->kind) {
    case N_NAME:
        return e->u.name.sym == s;
    case N_UNARY:
        return mentions(e->u.unary.e, s);
    case N_BINARY:
        return mentions(e->u.binary.l, s) || mentions(e->u.binary.r, s);
    case N_KWARG:
        return mentions(e->u.kwarg.value, s);
    case N_CALL:
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (mentions(a, s)) return true;
        return false;
    case N_INDEX:
        if (mentions(e->u.index.base, s)) return true;
        for (const OrnNode *a = e->u.index.subs; a; a = a->next)
            if (mentions(a, s)) return true;
        return false;
    default:
        return false;
    }
}

/* A loop reduction (docs/language.md): `for v in lo..hi` whose body is the one statement
 * `s += e` or `s -= e` into a float variable s that e does not read, e free of effects.
 * Returns that statement, or NULL. */
static const OrnNode *loop_reduction(const C *c, const OrnNode *f)
{
    const OrnNode *b = f->u.for_.body;
    const OrnNode *st = b && b->kind == N_BLOCK ? b->u.block.stmts : NULL;
    if (!st || st->next || st->kind != N_ASSIGN) return NULL;
    if (st->u.assign.op != OP_ADD && st->u.assign.op != OP_SUB) return NULL;
    const OrnNode *tg = st->u.assign.target, *rhs = st->u.assign.value;
    if (tg->kind != N_NAME || !tg->u.name.sym) return NULL;
    const OrnSym *s = tg->u.name.sym;
    if (s->kind != SYM_VAR || !s->type || (s->type->kind != T_F32 && s->type->kind != T_F64))
        return NULL;
    if (c->cx == CX_BODY && c->loop && orn_cg_acc_index(c->loop, s) >= 0) return NULL;
    if (kind_of(rhs) == T_VIEW || mentions(rhs, s) || impure(rhs)) return NULL;
    return st;
}

/* One segment [from, to) of a loop reduction: element v goes to partial (v - lo) mod 8,
 * so the partials do not depend on where the segments start (nor on data locality). The
 * middle runs eight elements at a time, which the C compiler vectorizes. */
static void reduce_segment(C *c, const OrnNode *f, const OrnNode *st, int id, const char *from,
                           const char *to)
{
    const OrnSym *v = f->u.for_.var->u.name.sym;
    const char *T = ctype(st->u.assign.target->u.name.sym->type->kind);
    char key[48];
    ol(c, "int64_t i%d_ = %s;", id, from);
    for (int part = 0; part < 3; part++) {
        if (part == 0)
            ol(c, "for (; i%d_ < %s && ((i%d_ - lo%d_) & 7); i%d_++) {", id, to, id, id, id);
        else if (part == 1)
            ol(c, "for (; i%d_ + 8 <= %s; i%d_ += 8) for (int l%d_ = 0; l%d_ < 8; l%d_++) {", id,
               to, id, id, id, id);
        else
            ol(c, "for (; i%d_ < %s; i%d_++) {", id, to, id);
        c->ind++;
        if (part == 1)
            snprintf(key, sizeof key, "i%d_ + l%d_", id, id);
        else
            snprintf(key, sizeof key, "i%d_", id);
        bind_var(c, v, "int64_t", key);
        ind(c);
        if (part == 1)
            o(c, "r%d_[l%d_] += (%s)(", id, id, T);
        else
            o(c, "r%d_[(i%d_ - lo%d_) & 7] += (%s)(", id, id, id, T);
        ex(c, st->u.assign.value);
        o(c, ");\n");
        c->ind--;
        ol(c, "}");
    }
}

static void st_for_reduce(C *c, const OrnNode *f, const OrnNode *st)
{
    const OrnSym *s = st->u.assign.target->u.name.sym;
    OrnTypeKind k = s->type->kind;
    int id = c->tmp++;
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp = 0;
    bool split = (c->cx == CX_BODY || c->cx == CX_CLONE) && !c->fast &&
                 orn_cg_for_spans(c->loop, f, sp, &nsp);
    ol(c, "{");
    c->ind++;
    ind(c);
    o(c, "const int64_t lo%d_ = ", id);
    ex_as(c, f->u.for_.lo, T_I64);
    o(c, ", hi%d_ = ", id);
    ex_as(c, f->u.for_.hi, T_I64);
    o(c, ";\n");
    ol(c, "%s r%d_[8] = {0, 0, 0, 0, 0, 0, 0, 0};", ctype(k), id);
    if (split) {
        char lo[24], hi[24];
        snprintf(lo, sizeof lo, "lo%d_", id);
        snprintf(hi, sizeof hi, "hi%d_", id);
        split_range(c, sp, nsp, lo, hi, id);
        for (int g = 0; g < 3; g++) {
            char from[24], to[24];
            snprintf(from, sizeof from, "sg%d_[%d]", id, g);
            snprintf(to, sizeof to, "sg%d_[%d]", id, g + 1);
            ol(c, "{");
            c->ind++;
            c->fast += g == 1;
            reduce_segment(c, f, st, id, from, to);
            c->fast -= g == 1;
            c->ind--;
            ol(c, "}");
        }
    } else {
        char lo[24], hi[24];
        snprintf(lo, sizeof lo, "lo%d_", id);
        snprintf(hi, sizeof hi, "hi%d_", id);
        reduce_segment(c, f, st, id, lo, hi);
    }
    char lanes[64];
    snprintf(lanes, sizeof lanes, "%s(r%d_)", k == T_F32 ? "orn_std_lanes_f32" : "orn_std_lanes",
             id);
    ind(c);
    o(c, "%s = (%s)(%s %s %s);\n", nm(c, s), ctype(k), nm(c, s),
      st->u.assign.op == OP_SUB ? "-" : "+", lanes);
    c->ind--;
    ol(c, "}");
}

/* `for v in lo..hi`. In a loop body, when every element access of the loop has a subscript
 * the loop variable moves by a constant offset or none (version.h), the loop is split: the
 * middle part, where every access is proven in its box, runs without per-access tests. */
static void st_for(C *c, const OrnNode *s)
{
    const OrnNode *red = loop_reduction(c, s);
    if (red) {
        st_for_reduce(c, s, red);
        return;
    }
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp = 0;
    if ((c->cx == CX_BODY || c->cx == CX_CLONE) && !c->fast &&
        orn_cg_for_spans(c->loop, s, sp, &nsp)) {
        int id = c->tmp++;
        ol(c, "{");
        c->ind++;
        ind(c);
        o(c, "const int64_t lo%d_ = ", id);
        ex_as(c, s->u.for_.lo, T_I64);
        o(c, ", hi%d_ = ", id);
        ex_as(c, s->u.for_.hi, T_I64);
        o(c, ";\n");
        char lo[24], hi[24], v[24];
        snprintf(lo, sizeof lo, "lo%d_", id);
        snprintf(hi, sizeof hi, "hi%d_", id);
        snprintf(v, sizeof v, "i%d_", id);
        split_range(c, sp, nsp, lo, hi, id);
        ol(c, "for (int g%d_ = 0; g%d_ < 3; g%d_++) {", id, id, id);
        c->ind++;
        for (int fast = 1; fast >= 0; fast--) {
            if (fast)
                ol(c, "if (g%d_ == 1) {", id);
            else
                ol(c, "} else {");
            c->ind++;
            ol(c, "for (int64_t i%d_ = sg%d_[g%d_]; i%d_ < sg%d_[g%d_ + 1]; i%d_++) {", id, id, id,
               id, id, id, id);
            c->ind++;
            bind_var(c, s->u.for_.var->u.name.sym, "int64_t", v);
            c->ind--;
            c->fast += fast;
            c->cloops++;
            st_block(c, s->u.for_.body);
            c->cloops--;
            c->fast -= fast;
            ol(c, "}");
            c->ind--;
        }
        ol(c, "}");
        c->ind--;
        ol(c, "}");
        c->ind--;
        ol(c, "}");
        return;
    }
    for_open(c, s);
    c->cloops++;
    st_block(c, s->u.for_.body);
    c->cloops--;
    for_close(c);
}

/* for (k, v) in view */
static void st_foreach(C *c, const OrnNode *s, bool values, const OrnBuf *pre_body)
{
    const OrnNode *it = s->u.foreach.iter;
    const OrnSym *as = orn_cg_base_sym(it), *ks = s->u.foreach.key->u.name.sym,
                 *vs = s->u.foreach.value->u.name.sym;
    if (!as) {
        ice(c, s, "for-in over something that is not a named array");
        return;
    }
    OrnTypeKind ek = elem_of(as->type);
    int id = c->tmp++, dim = 0;
    const OrnNode *fixed = NULL;
    bool view = orn_cg_view_parts(it, &dim, &fixed);
    bool sparse = as->type->sparse;
    char kv[48], vv[96];
    ol(c, "{");
    c->ind++;
    if (sparse && view && dim == 1 && in_loop_ctx(c)) {
        int k = array_k(c, it, as), nd = as->type->ndims;
        ol(c, "const int64_t *rk%d_; const void *rv%d_; int64_t rn%d_;", id, id, id);
        ind(c);
        o(c, "orn_rt_row(&V_[%d], ", k);
        ex_as(c, fixed, T_I64);
        o(c, ", &rk%d_, &rv%d_, &rn%d_);\n", id, id, id);
        ol(c, "for (int64_t j%d_ = 0; j%d_ < rn%d_; j%d_++) {", id, id, id, id);
        snprintf(kv, sizeof kv, "rk%d_[j%d_ * %d + 1]", id, id, nd);
        snprintf(vv, sizeof vv, "((const %s *)rv%d_)[j%d_]", ctype(ek), id, id);
        c->ind++;
        bind_var(c, ks, "int64_t", kv);
        if (values) bind_var(c, vs, ctype(ek), vv);
        c->ind--;
    } else {
        ind(c);
        o(c, "const OrnStdVec w%d_ = ", id);
        vec_ctor(c, it);
        o(c, ";\n");
        ol(c, "for (int64_t j%d_ = 0; j%d_ < w%d_.len; j%d_++) {", id, id, id, id);
        snprintf(kv, sizeof kv, "j%d_", id);
        snprintf(vv, sizeof vv, "orn_std_vget_%s(&w%d_, j%d_)", sfx(ek), id, id);
        c->ind++;
        if (sparse && values) {
            /* non-zeros of a sparse view read element by element */
            ol(c, "const %s z%d_ = %s;", ctype(ek), id, vv);
            ol(c, "if (z%d_ == 0) continue;", id);
            snprintf(vv, sizeof vv, "z%d_", id);
        }
        bind_var(c, ks, "int64_t", kv);
        if (values) bind_var(c, vs, ctype(ek), vv);
        c->ind--;
    }
    c->cloops++;
    if (pre_body)
        orn_buf_put(c->b, pre_body->data ? pre_body->data : "", pre_body->len);
    else
        st_block(c, s->u.foreach.body);
    c->cloops--;
    ol(c, "}");
    c->ind--;
    ol(c, "}");
}

static void st_if(C *c, const OrnNode *s, bool elif)
{
    if (!elif) ind(c);
    o(c, "if (");
    ex_cond(c, s->u.if_.cond);
    o(c, ") {\n");
    st_block(c, s->u.if_.then);
    const OrnNode *e = s->u.if_.els;
    if (!e) {
        ol(c, "}");
        return;
    }
    ind(c);
    if (e->kind == N_IF) {
        o(c, "} else ");
        st_if(c, e, true);
        return;
    }
    o(c, "} else {\n");
    st_block(c, e);
    ol(c, "}");
}

static void st_return(C *c, const OrnNode *s)
{
    const OrnNode *v = s->u.ret.value;
    if (!v) {
        ol(c, "return;");
        return;
    }
    OrnTypeKind rk = T_VOID;
    if (c->fn && c->fn->u.fn.sym) {
        const OrnNode *rt = c->fn->u.fn.ret;
        if (rt && rt->u.type.id) rk = orn_kind_from_name(rt->u.type.id->s);
    }
    ind(c);
    o(c, "return ");
    if (rk != T_VOID && rk != T_ERROR)
        ex_as(c, v, rk);
    else
        ex(c, v);
    o(c, ";\n");
}

static void st_dist(C *c, const OrnNode *s)
{
    const OrnNode *names = s->u.dist.names, *v = s->u.dist.value;
    const OrnSym *s1 = names ? names->u.name.sym : NULL;
    const OrnSym *s2 = names && names->next ? names->next->u.name.sym : NULL;
    if (!s1 || !v || v->kind != N_CALL) {
        ice(c, s, "dist declaration");
        return;
    }
    int bi = v->u.call.builtin;
    const OrnNode *a0 = arg_n(v, 0), *a1 = arg_n(v, 1);
    const char *n1 = s1->name->s;
    switch (bi) {
    case ORN_BI_LOAD_TRIPLETS:
    case ORN_BI_LOAD_DOCWORD:
        ind(c);
        o(c, "%s = orn_std_load_%s(P_, ", nm(c, s1),
          bi == ORN_BI_LOAD_DOCWORD ? "docword" : "triplets");
        ex(c, a0);
        o(c, ", \"%s\", %d);\n", n1, c->line);
        return;
    case ORN_BI_LOAD_LIBSVM:
        ind(c);
        o(c, "orn_std_load_libsvm(P_, ");
        ex(c, a0);
        o(c, ", &%s, &%s, \"%s\", \"%s\", %d);\n", nm(c, s1), s2 ? nm(c, s2) : "NULL", n1,
          s2 ? s2->name->s : "", c->line);
        return;
    case ORN_BI_LOAD: {
        const OrnType *t = s1->type;
        ind(c);
        o(c, "%s = orn_std_load(P_, ", nm(c, s1));
        ex(c, a0);
        o(c, ", %s, %d, %d, \"%s\", %d);\n", dsmt(t->elem), t->ndims, t->sparse ? 1 : 0, n1,
          c->line);
        return;
    }
    case ORN_BI_BUFFER: {
        const OrnSym *tgt = orn_cg_base_sym(a0);
        const OrnNode *ap = kwarg(v, "apply"), *fe = kwarg(v, "flush_every");
        char apply[160] = "NULL";
        if (ap && ap->u.name.sym)
            snprintf(apply, sizeof apply, "orn_apply_%s", nm(c, ap->u.name.sym));
        ind(c);
        o(c, "%s = orn_std_buffer(P_, %s, %s, ", nm(c, s1), tgt ? nm(c, tgt) : "NULL", apply);
        if (fe)
            ex_as(c, fe, T_I64);
        else
            o(c, "0");
        o(c, ", %d, %d);\n", fe ? 1 : 0, c->line);
        return;
    }
    case ORN_BI_ZEROS:
    case ORN_BI_FILL:
    case ORN_BI_RAND:
    case ORN_BI_RANDN: {
        OrnTypeKind et = elem_of(a0->type);
        int first = bi == ORN_BI_FILL ? 2 : 1, nd = 0;
        for (const OrnNode *x = arg_n(v, first); x; x = x->next)
            if (x->kind != N_KWARG) nd++;
        const int *perm = perm_of(c, s1);
        ind(c);
        o(c, "%s = orn_std_dist_new%s(P_, %s, %d, (const int64_t[%d]){", nm(c, s1),
          perm ? "_perm" : "", dsmt(et), nd, nd);
        bool f = true;
        for (const OrnNode *x = arg_n(v, first); x; x = x->next) {
            if (x->kind == N_KWARG) continue;
            if (!f) o(c, ", ");
            f = false;
            ex_as(c, x, T_I64);
        }
        arr_init_args(c, v, bi, a1);
        if (perm) {
            /* stored in another order than declared (analyzer/layout.h) */
            o(c, ", (const int[%d]){", nd);
            for (int d = 0; d < nd; d++) o(c, "%s%d", d ? ", " : "", perm[d]);
            o(c, "}");
        }
        o(c, ", \"%s\", %d);\n", n1, c->line);
        return;
    }
    default:
        ice(c, s, "dist initializer");
        return;
    }
}

static void st_parfor(C *c, const OrnNode *s)
{
    const OrnLoop *lp = s->u.parfor.info;
    if (!lp || lp->index < 0 || lp->index >= c->p->nloops) {
        ice(c, s, "parallel_for without a plan");
        return;
    }
    const OrnCgLoop *l = &c->p->loops[lp->index];
    ol(c, "{");
    c->ind++;
    ind(c);
    o(c, "OrnRtArg args_[%d] = {", l->narrays);
    for (int k = 0; k < l->narrays; k++) {
        const OrnCgArray *a = &l->arrays[k];
        o(c, "%s{.%s = %s}", k ? ", " : "", a->role == ORN_ROLE_BUFFERED ? "buffer" : "array",
          nm(c, a->sym));
    }
    o(c, "};\n");
    int na = lp->naccums;
    if (na) {
        ol(c, "OrnRtScalar acc_[%d];", na);
        for (int i = 0; i < na; i++) {
            const OrnSym *as = lp->accums[i].sym;
            ol(c, "acc_[%d].%s = %s;", i, sfx(as->type->kind), nm(c, as));
        }
    }
    char pf_name[32] = "NULL";
    if (l->prefetch) snprintf(pf_name, sizeof pf_name, "orn_prefetch_%d", l->id);
    ol(c,
       "const OrnRtLoop loop_ = {.plan = &orn_plan_%d, .args = args_, .body = orn_body_%d, "
       ".prefetch = %s, .env = NULL, .acc = %s};",
       l->id, l->id, pf_name, na ? "acc_" : "NULL");
    ol(c, "orn_std_run(P_, &loop_);");
    for (int i = 0; i < na; i++) {
        const OrnSym *as = lp->accums[i].sym;
        ol(c, "%s = acc_[%d].%s;", nm(c, as), i, sfx(as->type->kind));
    }
    c->ind--;
    ol(c, "}");
}

static void st(C *c, const OrnNode *s)
{
    if (c->failed) return;
    c->line = (int)s->span.line;
    switch (s->kind) {
    case N_EXPR:
        ind(c);
        ex(c, s->u.expr_stmt.e);
        o(c, ";\n");
        return;
    case N_ASSIGN:
        st_assign(c, s);
        return;
    case N_CONST:
    case N_PARAM:
    case N_FN:
        return;
    case N_DIST:
        st_dist(c, s);
        return;
    case N_IF:
        st_if(c, s, false);
        return;
    case N_FOR:
        st_for(c, s);
        return;
    case N_FOREACH:
        st_foreach(c, s, true, NULL);
        return;
    case N_WHILE:
        ind(c);
        o(c, "while (");
        ex_cond(c, s->u.while_.cond);
        o(c, ") {\n");
        c->cloops++;
        st_block(c, s->u.while_.body);
        c->cloops--;
        ol(c, "}");
        return;
    case N_PARFOR:
        if (c->cx != CX_TOP)
            ice(c, s, "parallel_for outside top level");
        else
            st_parfor(c, s);
        return;
    case N_BREAK:
        ol(c, "break;");
        return;
    case N_CONTINUE:
        if (c->cx == CX_PREFETCH && c->cloops == 0) {
            ol(c, "goto next_;");
            c->next_used = true;
        } else {
            ol(c, "continue;");
        }
        return;
    case N_RETURN:
        st_return(c, s);
        return;
    case N_BLOCK:
        ol(c, "{");
        st_block(c, s);
        ol(c, "}");
        return;
    default:
        ice(c, s, "unexpected statement");
        return;
    }
}

/* ---------------------------------------------------------------- prefetch slice */

static bool announce_array(C *c, const OrnSym *s)
{
    int k = c->loop ? orn_cg_array_index(c->loop, s) : -1;
    return k >= 0 && c->loop->arrays[k].announce;
}

static bool subs_tainted(C *c, const OrnNode *subs)
{
    for (; subs; subs = subs->next)
        if (subs->kind != N_SLICE && orn_cg_expr_tainted(c->loop, subs)) return true;
    return false;
}

/* Announce every read of an announced array in e whose subscripts are computable. */
static void pf_announce(C *c, const OrnNode *e)
{
    if (!e) return;
    switch (e->kind) {
    case N_UNARY:
        pf_announce(c, e->u.unary.e);
        return;
    case N_BINARY:
        pf_announce(c, e->u.binary.l);
        pf_announce(c, e->u.binary.r);
        return;
    case N_KWARG:
        pf_announce(c, e->u.kwarg.value);
        return;
    case N_CALL:
        for (const OrnNode *a = e->u.call.args; a; a = a->next) pf_announce(c, a);
        return;
    case N_INDEX: {
        for (const OrnNode *x = e->u.index.subs; x; x = x->next)
            if (x->kind != N_SLICE) pf_announce(c, x);
        const OrnSym *s = orn_cg_base_sym(e);
        if (!s || s->kind != SYM_DIST || !announce_array(c, s) || subs_tainted(c, e->u.index.subs))
            return;
        int k = orn_cg_array_index(c->loop, s), dim;
        const OrnNode *fixed;
        if (orn_cg_view_parts(e, &dim, &fixed)) {
            ind(c);
            o(c, "orn_std_vec_announce_view(&V_[%d], ", k);
            put_dims(c, s);
            o(c, ", %d, ", sdim(perm_of(c, s), dim));
            ex_as(c, fixed, T_I64);
            o(c, ");\n");
        } else {
            ind(c);
            o(c, "orn_std_announce(&V_[%d], ", k);
            ex_key(c, e->u.index.subs, s);
            o(c, ");\n");
        }
        return;
    }
    default:
        return;
    }
}

static void pf(C *c, const OrnNode *s);

static void pf_list(C *c, const OrnNode *list)
{
    for (; list; list = list->next) pf(c, list);
}

/* Emit a block's slice into a scratch buffer; returns whether anything came out. */
static bool pf_into(C *c, const OrnNode *blk, OrnBuf *tmp)
{
    OrnBuf *saved = c->b;
    c->b = tmp;
    c->ind++;
    if (blk) pf_list(c, blk->kind == N_BLOCK ? blk->u.block.stmts : blk);
    c->ind--;
    c->b = saved;
    return tmp->len > 0;
}

static bool only_jumps(const OrnBuf *b)
{
    /* a slice made only of break/continue/goto computes nothing */
    const char *p = b->data ? b->data : "";
    while (*p) {
        while (*p == ' ') p++;
        if (strncmp(p, "break;", 6) == 0)
            p += 6;
        else if (strncmp(p, "continue;", 9) == 0)
            p += 9;
        else if (strncmp(p, "goto next_;", 11) == 0)
            p += 11;
        else if (!*p)
            break;
        else
            return false;
        if (*p == '\n') p++;
    }
    return true;
}

static void pf(C *c, const OrnNode *s)
{
    if (c->failed) return;
    c->line = (int)s->span.line;
    const OrnCgLoop *l = c->loop;
    switch (s->kind) {
    case N_EXPR:
        pf_announce(c, s->u.expr_stmt.e);
        return;
    case N_ASSIGN: {
        const OrnNode *tg = s->u.assign.target;
        pf_announce(c, s->u.assign.value);
        if (tg->kind == N_INDEX) {
            for (const OrnNode *x = tg->u.index.subs; x; x = x->next)
                if (x->kind != N_SLICE) pf_announce(c, x);
            return;
        }
        const OrnSym *v = tg->u.name.sym;
        if (v && v->kind == SYM_VAR && v->parfor == l->loop->node && !orn_cg_sym_tainted(l, v) &&
            v->type->kind != T_ARRAY)
            st_assign(c, s);
        return;
    }
    case N_IF: {
        pf_announce(c, s->u.if_.cond);
        bool t = orn_cg_expr_tainted(l, s->u.if_.cond);
        OrnBuf a, b;
        orn_buf_init(&a);
        orn_buf_init(&b);
        if (t) c->pf_drop++;
        bool ha = pf_into(c, s->u.if_.then, &a);
        bool hb = s->u.if_.els && pf_into(c, s->u.if_.els, &b);
        if (t) c->pf_drop--;
        if (t) {
            /* the condition is not computable: take both branches */
            if (ha) {
                ol(c, "{");
                orn_buf_put(c->b, a.data, a.len);
                ol(c, "}");
            }
            if (hb) {
                ol(c, "{");
                orn_buf_put(c->b, b.data, b.len);
                ol(c, "}");
            }
        } else if (ha || hb) {
            ind(c);
            o(c, "if (");
            ex_cond(c, s->u.if_.cond);
            o(c, ") {\n");
            if (ha) orn_buf_put(c->b, a.data, a.len);
            if (hb) {
                ol(c, "} else {");
                orn_buf_put(c->b, b.data, b.len);
            }
            ol(c, "}");
        }
        orn_buf_free(&a);
        orn_buf_free(&b);
        return;
    }
    case N_FOR: {
        pf_announce(c, s->u.for_.lo);
        pf_announce(c, s->u.for_.hi);
        if (orn_cg_sym_tainted(l, s->u.for_.var->u.name.sym)) return;
        OrnBuf a;
        orn_buf_init(&a);
        c->cloops++;
        int saved = c->pf_drop;
        c->pf_drop = 0;
        bool h = pf_into(c, s->u.for_.body, &a) && !only_jumps(&a);
        c->pf_drop = saved;
        c->cloops--;
        if (h) {
            for_open(c, s);
            orn_buf_put(c->b, a.data, a.len);
            for_close(c);
        }
        orn_buf_free(&a);
        return;
    }
    case N_FOREACH: {
        const OrnNode *it = s->u.foreach.iter;
        pf_announce(c, it);
        if (orn_cg_sym_tainted(l, s->u.foreach.key->u.name.sym)) return;
        OrnBuf a;
        orn_buf_init(&a);
        c->cloops++;
        int saved = c->pf_drop;
        c->pf_drop = 0;
        bool h = pf_into(c, s->u.foreach.body, &a) && !only_jumps(&a);
        c->pf_drop = saved;
        c->cloops--;
        if (h) st_foreach(c, s, !orn_cg_sym_tainted(l, s->u.foreach.value->u.name.sym), &a);
        orn_buf_free(&a);
        return;
    }
    case N_WHILE:
        return;
    case N_BREAK:
    case N_CONTINUE:
        if (!c->pf_drop) st(c, s);
        return;
    case N_BLOCK: {
        OrnBuf a;
        orn_buf_init(&a);
        if (pf_into(c, s, &a)) {
            ol(c, "{");
            orn_buf_put(c->b, a.data, a.len);
            ol(c, "}");
        }
        orn_buf_free(&a);
        return;
    }
    default:
        return;
    }
}

/* ---------------------------------------------------------------- functions */

static void fn_params(C *c, const OrnNode *fn, bool first)
{
    for (const OrnNode *a = fn->u.fn.args; a; a = a->next) {
        const OrnSym *s = a->u.arg.sym;
        OrnTypeKind k = s && s->type ? s->type->kind : T_F64;
        /* a .orn fn may ignore a parameter; the generated C stays -Wextra clean */
        o(c, "%s%s %s __attribute__((unused))", first ? "" : ", ", ctype(k),
          s ? nm(c, s) : "unused_");
        first = false;
    }
    if (first) o(c, "void");
}

static OrnTypeKind fn_ret(const OrnNode *fn)
{
    const OrnNode *rt = fn->u.fn.ret;
    if (!rt || !rt->u.type.id) return T_VOID;
    OrnTypeKind k = orn_kind_from_name(rt->u.type.id->s);
    return k == T_ERROR ? T_VOID : k;
}

static void fn_signature(C *c, const OrnNode *fn, int loop_id)
{
    OrnTypeKind rk = fn_ret(fn);
    o(c, "static __attribute__((unused)) %s %s", ctype(rk), nm(c, fn->u.fn.sym));
    if (loop_id >= 0) {
        o(c,
          "__L%d(const OrnRtBlock *b_ __attribute__((unused)), "
          "OrnRtRng *rng_ __attribute__((unused))",
          loop_id);
        fn_params(c, fn, false);
    } else {
        o(c, "(");
        fn_params(c, fn, true);
    }
    o(c, ")");
}

static void fn_define(C *c, const OrnNode *fn, int loop_id)
{
    OrnBuf *saved = c->b;
    c->b = &c->decls;
    fn_signature(c, fn, loop_id);
    o(c, ";\n");
    c->b = &c->defs;
    o(c, "\n");
    fn_signature(c, fn, loop_id);
    o(c, "\n{\n");
    c->ind = 1;
    if (loop_id >= 0) {
        ol(c, "OrnRtView *const V_ __attribute__((unused)) = b_->views;");
        ol(c, "(void)rng_;");
        if (c->loop) box_prologue(c, c->loop, "    ");
    }
    const OrnNode *saved_fn = c->fn;
    c->fn = fn;
    st_list(c, fn->u.fn.body ? fn->u.fn.body->u.block.stmts : NULL);
    if (fn_ret(fn) != T_VOID) ol(c, "__builtin_unreachable();");
    c->fn = saved_fn;
    c->ind = 0;
    o(c, "}\n");
    c->b = saved;
}

static void c_function(void *st_, const OrnNode *fn)
{
    C *c = st_;
    if (fn->u.fn.is_extern || !fn->u.fn.sym) return;
    c->cx = CX_FN;
    c->loop = NULL;
    fn_define(c, fn, -1);
}

/* ---------------------------------------------------------------- loops */

static const char *strat_name(OrnStrategy s)
{
    switch (s) {
    case ORN_STRAT_1D:
        return "ORN_RT_1D";
    case ORN_STRAT_2D:
        return "ORN_RT_2D";
    case ORN_STRAT_2D_ORDERED:
        return "ORN_RT_2D_ORDERED";
    case ORN_STRAT_UNIMODULAR:
        return "ORN_RT_UNIMODULAR";
    default:
        return "ORN_RT_SERIAL";
    }
}

static const char *role_name(OrnRole r)
{
    switch (r) {
    case ORN_ROLE_PARTITIONED:
        return "ORN_RT_PARTITIONED";
    case ORN_ROLE_ROTATED:
        return "ORN_RT_ROTATED";
    case ORN_ROLE_REPLICATED:
        return "ORN_RT_REPLICATED";
    case ORN_ROLE_PREFETCHED:
        return "ORN_RT_PREFETCHED";
    case ORN_ROLE_BUFFERED:
        return "ORN_RT_BUFFERED";
    default:
        return "ORN_RT_REMOTE";
    }
}

static const char *acc_name(OrnAccKind k)
{
    switch (k) {
    case ACC_SUM:
        return "ORN_RT_ACC_SUM";
    case ACC_PROD:
        return "ORN_RT_ACC_PROD";
    case ACC_MIN:
        return "ORN_RT_ACC_MIN";
    default:
        return "ORN_RT_ACC_MAX";
    }
}

static void emit_plan(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    o(c, "\n/* parallel_for at %s:%d: %s */\n", c->p->file, l->plan->line,
      orn_plan_strategy_name(l->strategy));
    o(c, "static const OrnRtPlanArray orn_plan_arrays_%d[%d] = {\n", l->id, l->narrays);
    for (int k = 0; k < l->narrays; k++) {
        const OrnCgArray *a = &l->arrays[k];
        o(c, "    {\"%s\", %s, %d, {%d, %d, %d, %d}, %d, ", a->sym->name->s, role_name(a->role),
          a->ndim, a->key_dim[0], a->key_dim[1], a->key_dim[2], a->key_dim[3], a->read_only);
        for (int side = 0; side < 2; side++) {
            const int *w = side ? a->halo_hi : a->halo_lo;
            o(c, "%s{", side ? ", " : "");
            for (int d = 0; d < 4; d++) {
                if (w[d] == ORN_CG_HALO_ANY)
                    o(c, "%sORN_RT_HALO_ANY", d ? ", " : "");
                else
                    o(c, "%s%d", d ? ", " : "", w[d]);
            }
            o(c, "}");
        }
        o(c, "},\n");
    }
    o(c, "};\n");
    if (lp->naccums) {
        o(c, "static const OrnRtPlanAcc orn_plan_accs_%d[%d] = {\n", l->id, lp->naccums);
        for (int i = 0; i < lp->naccums; i++)
            o(c, "    {\"%s\", %s, %s},\n", lp->accums[i].sym->name->s,
              acc_name(lp->accums[i].kind), rtt(lp->accums[i].sym->type->kind));
        o(c, "};\n");
    }
    o(c, "static const OrnRtPlan orn_plan_%d = {\n", l->id);
    o(c, "    .version = ORN_RT_PLAN_VERSION,\n    .loop_id = %d,\n    .file = ", l->id);
    put_str(c, c->p->file, strlen(c->p->file));
    o(c, ",\n    .line = %d,\n    .strategy = %s,\n    .inner = %s,\n    .ordered = %d,\n",
      l->plan->line, strat_name(l->strategy), strat_name(l->inner), l->plan->ordered ? 1 : 0);
    o(c, "    .nkeys = %d,\n    .npart = %d,\n    .part_dims = {%d, %d},\n", lp->nkeys, l->npart,
      l->part_dims[0], l->part_dims[1]);
    o(c, "    .part_count = {0, 0},\n    .transform = {");
    for (int i = 0; i < 4; i++)
        o(c, "%s{%d, %d, %d, %d}", i ? ", " : "", l->transform[i][0], l->transform[i][1],
          l->transform[i][2], l->transform[i][3]);
    o(c, "},\n    .flush_every = 0,\n    .narrays = %d,\n    .arrays = orn_plan_arrays_%d,\n",
      l->narrays, l->id);
    if (lp->naccums)
        o(c, "    .naccs = %d,\n    .accs = orn_plan_accs_%d,\n", lp->naccums, l->id);
    else
        o(c, "    .naccs = 0,\n    .accs = NULL,\n");
    o(c, "};\n");
}

/* Every boxable array of the loop hoisted into a box (OrnRtBox) once per call. */
static void box_prologue(C *c, const OrnCgLoop *l, const char *indent)
{
    for (int k = 0; k < l->narrays; k++)
        if (orn_cg_boxable(l, k))
            o(c, "%sconst OrnRtBox X%d_ __attribute__((unused)) = orn_rt_box(&V_[%d]); /* %s */\n",
              indent, k, k, l->arrays[k].sym->name->s);
}

/* The loop body over the user statements, emitted into buf (fast: accesses proven). */
static void body_stmts(C *c, const OrnCgLoop *l, OrnBuf *buf, int indent, int fast)
{
    OrnBuf *saved = c->b;
    c->b = buf;
    c->ind = indent;
    c->fast += fast;
    const OrnNode *blk = l->loop->node->u.parfor.body;
    st_list(c, blk ? blk->u.block.stmts : NULL);
    c->fast -= fast;
    c->b = saved;
}

static void put_buf(C *c, const OrnBuf *b)
{
    orn_buf_put(c->b, b->data ? b->data : "", b->len);
}

/* The loop's key symbols in the runtime's key order (lower.h: kperm). */
static int runtime_keys(const OrnCgLoop *l, const OrnSym **out)
{
    const OrnSym *logical[ORN_RT_MAXDIM_CG] = {NULL};
    int n = 0;
    for (const OrnNode *k = l->loop->node->u.parfor.keys; k && n < ORN_RT_MAXDIM_CG; k = k->next)
        logical[n++] = k->u.name.sym;
    for (int r = 0; r < n; r++) out[r] = logical[l->kperm[r] < n ? l->kperm[r] : r];
    return n;
}

static bool keys_permuted(const OrnCgLoop *l)
{
    for (int r = 0; r < l->loop->nkeys; r++)
        if (l->kperm[r] != r) return true;
    return false;
}

/* Seed the iteration's random stream from its logical key (runtime keys are in kk_). */
static void rng_iter(C *c, const OrnCgLoop *l, const char *pad)
{
    int nd = l->loop->nkeys;
    if (!keys_permuted(l)) {
        o(c, "%sorn_rt_rng_iter(rng_, b_, kk_);\n", pad);
        return;
    }
    o(c, "%s{\n%s    int64_t lk_[%d];\n", pad, pad, nd);
    for (int r = 0; r < nd; r++) o(c, "%s    lk_[%d] = kk_[%d];\n", pad, l->kperm[r], r);
    o(c, "%s    orn_rt_rng_iter(rng_, b_, lk_);\n%s}\n", pad, pad);
}

/* The body of a loop over a sparse iteration space (or a transformed one: the runtime
 * lists the keys): one C loop over the block's elements. */
static void body_sparse(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    int nd = lp->nkeys;
    OrnBuf body;
    orn_buf_init(&body);
    body_stmts(c, l, &body, 2, 0);
    o(c, "    const int64_t *const keys_ = b_->keys;\n");
    o(c, "    const int64_t end_ = b_->first + b_->count;\n");
    o(c, "    for (int64_t e_ = b_->first; e_ < end_; e_++) {\n");
    o(c, "        const int64_t *const kk_ = keys_ + e_ * %d;\n", nd);
    const OrnSym *rks[ORN_RT_MAXDIM_CG];
    int nk = runtime_keys(l, rks);
    for (int d = 0; d < nk; d++)
        if (rks[d])
            o(c, "        const int64_t %s __attribute__((unused)) = kk_[%d];\n", nm(c, rks[d]), d);
    if (lp->value)
        o(c, "        %s *const vp_ __attribute__((unused)) = &vals_[e_];\n",
          ctype(elem_of(lp->space->type)));
    if (l->uses_rng) rng_iter(c, l, "        ");
    put_buf(c, &body);
    o(c, "    }\n");
    orn_buf_free(&body);
}

/* The body of a loop over a dense iteration space: the block's elements [first, first +
 * count) in row-major key order, as runs along the innermost key. Each run is a C loop
 * over that key, versioned like a `for` (version.h) when its accesses allow. */
static void body_dense(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    int nd = lp->nkeys;
    const OrnSym *keys[ORN_RT_MAXDIM_CG] = {NULL};
    runtime_keys(l, keys);
    int d;
    const OrnSym *last = keys[nd - 1];
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp = 0;
    bool versioned = last && orn_cg_range_spans(l, last, lp->node->u.parfor.body, true, sp, &nsp);
    const char *vt = lp->value ? ctype(elem_of(lp->space->type)) : NULL;
    o(c, "    if (b_->sparse) return orn_rt_body_error(rt_, \"internal error: listed keys in a "
         "dense loop\");\n");
    o(c, "    int64_t kk_[%d];\n", nd);
    o(c, "    orn_rt_block_key(b_, b_->first, kk_);\n");
    o(c, "    const int64_t end_ = b_->first + b_->count, hl_ = b_->hi[%d];\n", nd - 1);
    o(c, "    for (int64_t e_ = b_->first; e_ < end_;) {\n");
    o(c, "        const int64_t j0_ = kk_[%d];\n", nd - 1);
    o(c, "        const int64_t j1_ = end_ - e_ < hl_ - j0_ ? j0_ + (end_ - e_) : hl_;\n");
    for (d = 0; d < nd - 1; d++)
        if (keys[d])
            o(c, "        const int64_t %s __attribute__((unused)) = kk_[%d];\n", nm(c, keys[d]),
              d);
    if (vt) o(c, "        %s *const row_ = vals_ + (e_ - j0_);\n", vt);
    if (versioned) {
        c->ind = 2;
        split_range(c, sp, nsp, "j0_", "j1_", 0);
        o(c, "        for (int g_ = 0; g_ < 3; g_++) {\n");
    }
    for (int fast = versioned ? 1 : 0; fast >= 0; fast--) {
        int ind = 2;
        const char *from = "j0_", *to = "j1_";
        if (versioned) {
            o(c, fast ? "            if (g_ == 1) {\n" : "            } else {\n");
            ind = 4;
            from = "sg0_[g_]";
            to = "sg0_[g_ + 1]";
        }
        const char *pad = ind == 4 ? "                " : "        ";
        o(c, "%sfor (int64_t j_ = %s; j_ < %s; j_++) {\n", pad, from, to);
        if (last) o(c, "%s    const int64_t %s __attribute__((unused)) = j_;\n", pad, nm(c, last));
        if (vt) o(c, "%s    %s *const vp_ __attribute__((unused)) = &row_[j_];\n", pad, vt);
        if (l->uses_rng) {
            o(c, "%s    kk_[%d] = j_;\n", pad, nd - 1);
            char p2[40];
            snprintf(p2, sizeof p2, "%s    ", pad);
            rng_iter(c, l, p2);
        }
        OrnBuf body;
        orn_buf_init(&body);
        body_stmts(c, l, &body, ind + 1, fast);
        put_buf(c, &body);
        orn_buf_free(&body);
        o(c, "%s}\n", pad);
    }
    if (versioned) o(c, "            }\n        }\n");
    o(c, "        e_ += j1_ - j0_;\n");
    o(c, "        kk_[%d] = j1_;\n", nd - 1);
    o(c, "        for (int d_ = %d; d_ > 0 && kk_[d_] >= b_->hi[d_]; d_--) {\n", nd - 1);
    o(c, "            kk_[d_] = b_->lo[d_];\n");
    o(c, "            kk_[d_ - 1]++;\n");
    o(c, "        }\n");
    o(c, "    }\n");
}

static void body_fn(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    OrnTypeKind vk = lp->space ? elem_of(lp->space->type) : T_F64;
    c->cx = CX_BODY;
    c->loop = l;
    c->cloops = 0;
    c->pf_drop = 0;
    c->fast = 0;
    o(c, "\nstatic int orn_body_%d(OrnRtCtx *rt_, const OrnRtBlock *b_, void *env_)\n{\n", l->id);
    o(c, "    (void)rt_;\n    (void)env_;\n");
    o(c, "    OrnRtView *const V_ __attribute__((unused)) = b_->views;\n");
    box_prologue(c, l, "    ");
    if (lp->naccums) o(c, "    OrnRtScalar *const A_ = b_->acc;\n");
    if (lp->value) o(c, "    %s *const vals_ = (%s *)b_->vals;\n", ctype(vk), ctype(vk));
    if (l->uses_rng) o(c, "    OrnRtRng rng_s_;\n    OrnRtRng *const rng_ = &rng_s_;\n");
    bool listed = (lp->space && lp->space->type && lp->space->type->sparse) ||
                  l->strategy == ORN_STRAT_UNIMODULAR;
    if (listed)
        body_sparse(c, l);
    else
        body_dense(c, l);
    o(c, "    return 0;\n}\n");
    c->ind = 0;
}

/* The element walk of the prefetch pass. */
static void loop_fn(C *c, const OrnCgLoop *l, bool prefetch)
{
    const OrnLoop *lp = l->loop;
    int nd = lp->nkeys;
    OrnTypeKind vk = lp->space ? elem_of(lp->space->type) : T_F64;
    c->cx = prefetch ? CX_PREFETCH : CX_BODY;
    c->loop = l;
    c->cloops = 0;
    c->pf_drop = 0;
    c->next_used = false;
    OrnBuf body;
    orn_buf_init(&body);
    OrnBuf *saved = c->b;
    c->b = &body;
    c->ind = 3;
    const OrnNode *stmts = lp->node->u.parfor.body ? lp->node->u.parfor.body->u.block.stmts : NULL;
    if (prefetch)
        pf_list(c, stmts);
    else
        st_list(c, stmts);
    c->b = saved;

    o(c, "\nstatic int orn_%s_%d(OrnRtCtx *rt_, const OrnRtBlock *b_, void *env_)\n{\n",
      prefetch ? "prefetch" : "body", l->id);
    o(c, "    (void)rt_;\n    (void)env_;\n");
    o(c, "    OrnRtView *const V_ __attribute__((unused)) = b_->views;\n");
    if (!prefetch && lp->naccums) o(c, "    OrnRtScalar *const A_ = b_->acc;\n");
    if (lp->value) o(c, "    %s *const vals_ = (%s *)b_->vals;\n", ctype(vk), ctype(vk));
    if (!prefetch && l->uses_rng)
        o(c, "    OrnRtRng rng_s_;\n    OrnRtRng *const rng_ = &rng_s_;\n");
    o(c, "    int64_t kk_[%d];\n", nd);
    o(c, "    const int64_t end_ = b_->first + b_->count;\n");
    o(c, "    if (!b_->sparse) orn_rt_block_key(b_, b_->first, kk_);\n");
    o(c, "    for (int64_t e_ = b_->first; e_ < end_; e_++) {\n");
    o(c, "        if (b_->sparse)\n");
    o(c, "            for (int d_ = 0; d_ < %d; d_++) kk_[d_] = b_->keys[e_ * %d + d_];\n", nd, nd);
    o(c, "        {\n");
    const OrnSym *rks[ORN_RT_MAXDIM_CG];
    int nk = runtime_keys(l, rks);
    for (int d = 0; d < nk; d++)
        if (rks[d])
            o(c, "            const int64_t %s __attribute__((unused)) = kk_[%d];\n", nm(c, rks[d]),
              d);
    if (lp->value)
        o(c, "            %s *const vp_ __attribute__((unused)) = &vals_[e_];\n", ctype(vk));
    if (!prefetch && l->uses_rng) rng_iter(c, l, "            ");
    orn_buf_put(c->b, body.data ? body.data : "", body.len);
    o(c, "        }\n");
    if (c->next_used) o(c, "    next_:;\n");
    o(c, "        if (!b_->sparse)\n");
    o(c, "            for (int d_ = %d; d_ >= 0; d_--) {\n", nd - 1);
    o(c, "                if (++kk_[d_] < b_->hi[d_]) break;\n");
    o(c, "                kk_[d_] = b_->lo[d_];\n");
    o(c, "            }\n");
    o(c, "    }\n    return 0;\n}\n");
    orn_buf_free(&body);
    c->ind = 0;
}

static void c_loop(void *st_, const OrnCgLoop *l)
{
    C *c = st_;
    c->b = &c->defs;
    emit_plan(c, l);
    /* clones of the functions the body calls that need the loop's context */
    for (int i = 0; i < l->loop->ncallees; i++) {
        const OrnNode *fn = l->loop->callees[i];
        int j = orn_cg_fn_index(c->p, fn);
        if (j < 0 || !c->p->needs_ctx[j] || fn->u.fn.is_extern) continue;
        c->cx = CX_CLONE;
        c->loop = l;
        c->cloops = 0;
        fn_define(c, fn, l->id);
    }
    c->b = &c->defs;
    body_fn(c, l);
    if (l->prefetch) loop_fn(c, l, true);
    c->loop = NULL;
}

/* ---------------------------------------------------------------- unit */

static void preamble(C *c)
{
    const OrnCgProgram *p = c->p;
    OrnUnit *u = c->u;
    c->b = &c->pre;
    o(c, "/* Generated by orionc from %s. Do not edit. */\n", p->file);
    o(c, "#include \"orn_std.h\"\n\n");
    o(c, "static OrnStdProg orn_P;\n#define P_ (&orn_P)\n");
    o(c, "\n/* params */\n");
    int np = 0;
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s || s->kind != SYM_PARAM) continue;
        np++;
        OrnTypeKind k = s->type->kind;
        o(c, "static %s %s = ", ctype(k), nm(c, s));
        put_const(c, &s->cval, k);
        o(c, ";\n");
    }
    if (np) {
        o(c, "static const OrnStdParam orn_params_[%d] = {\n", np);
        for (int i = 0; i < u->sema.nsyms; i++) {
            const OrnSym *s = u->sema.syms[i];
            if (!s || s->kind != SYM_PARAM) continue;
            OrnTypeKind k = s->type->kind;
            const char *pt = k == T_BOOL  ? "ORN_STD_PBOOL"
                             : k == T_I64 ? "ORN_STD_PI64"
                             : k == T_F64 ? "ORN_STD_PF64"
                                          : "ORN_STD_PSTR";
            o(c, "    {\"%s\", %s, (void *)&%s},\n", s->name->s, pt, nm(c, s));
        }
        o(c, "};\n");
    }
    o(c, "\n/* top-level variables (replicated on every rank) and dist arrays */\n");
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s) continue;
        if (orn_cg_is_static(s)) {
            if (s->type->kind == T_ARRAY)
                o(c, "static OrnStdArr *%s __attribute__((unused));\n", nm(c, s));
            else if (s->type->kind >= T_BOOL && s->type->kind <= T_STR)
                o(c, "static %s %s __attribute__((unused));\n", ctype(s->type->kind), nm(c, s));
        } else if (s->kind == SYM_DIST) {
            if (is_buffer(s))
                o(c, "static OrnRtBuffer *%s __attribute__((unused));\n", nm(c, s));
            else
                o(c, "static OrnDsmArray *%s __attribute__((unused));\n", nm(c, s));
        }
    }
    o(c, "\n/* externs */\n");
    for (int i = 0; i < u->sema.nfns; i++) {
        const OrnNode *fn = u->sema.fns[i];
        if (!fn || !fn->u.fn.is_extern || !fn->u.fn.sym) continue;
        OrnTypeKind rk = fn_ret(fn);
        if (fn->u.fn.lib) {
            o(c, "static %s (*%s)(", ctype(rk), nm(c, fn->u.fn.sym));
            fn_params(c, fn, true);
            o(c, ");\n");
        } else {
            o(c, "extern %s %s(", ctype(rk), nm(c, fn->u.fn.sym));
            fn_params(c, fn, true);
            o(c, ") __asm__(\"%s\");\n", fn->u.fn.id->s);
        }
    }
    /* apply functions of buffers */
    c->b = &c->defs;
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s || !is_buffer(s) || !s->decl || s->decl->kind != N_DIST) continue;
        const OrnNode *ap = kwarg(s->decl->u.dist.value, "apply");
        const OrnSym *fs = ap ? ap->u.name.sym : NULL;
        int j = fs && fs->decl ? orn_cg_fn_index(p, fs->decl) : -1;
        if (j < 0 || c->applied[j]) continue;
        c->applied[j] = 1;
        OrnTypeKind k = elem_of(s->type);
        const char *T = ctype(k);
        o(c, "\nstatic int orn_apply_%s(void *elem, const void *delta, void *env)\n{\n", nm(c, fs));
        o(c, "    %s old, d;\n    (void)env;\n    memcpy(&old, elem, sizeof old);\n", T);
        o(c, "    memcpy(&d, delta, sizeof d);\n    old = %s(old, d);\n", nm(c, fs));
        o(c, "    memcpy(elem, &old, sizeof old);\n    return 0;\n}\n");
    }
}

static void *c_begin(const OrnCgProgram *p, OrnBuf *out)
{
    C *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->p = p;
    c->u = p->u;
    c->out = out;
    orn_buf_init(&c->pre);
    orn_buf_init(&c->decls);
    orn_buf_init(&c->defs);
    orn_buf_init(&c->mainb);
    c->applied = calloc((size_t)p->u->sema.nfns + 1, 1);
    preamble(c);
    return c;
}

static void c_toplevel(void *st_, const OrnNode *program)
{
    C *c = st_;
    const OrnUnit *u = c->u;
    c->b = &c->mainb;
    c->cx = CX_TOP;
    c->loop = NULL;
    c->fn = NULL;
    o(c, "\nint main(int argc, char **argv)\n{\n");
    int np = 0;
    for (int i = 0; i < u->sema.nsyms; i++)
        if (u->sema.syms[i] && u->sema.syms[i]->kind == SYM_PARAM) np++;
    o(c, "    orn_std_init(P_, &argc, &argv, ");
    put_str(c, c->p->file, strlen(c->p->file));
    o(c, ", %s, %d);\n", np ? "orn_params_" : "NULL", np);
    for (int i = 0; i < u->sema.nfns; i++) {
        const OrnNode *fn = u->sema.fns[i];
        if (!fn || !fn->u.fn.is_extern || !fn->u.fn.lib || !fn->u.fn.sym) continue;
        o(c, "    *(void **)(&%s) = orn_std_dlsym(P_, ", nm(c, fn->u.fn.sym));
        put_str(c, fn->u.fn.lib, strlen(fn->u.fn.lib));
        o(c, ", \"%s\", %u);\n", fn->u.fn.id->s, fn->span.line);
    }
    c->ind = 1;
    st_list(c, program ? program->u.block.stmts : NULL);
    c->ind = 0;
    o(c, "    return orn_std_finish(P_);\n}\n");
}

static bool c_end(void *st_)
{
    C *c = st_;
    bool ok = !c->failed;
    orn_buf_put(c->out, c->pre.data ? c->pre.data : "", c->pre.len);
    orn_buf_puts(c->out, "\n/* functions */\n");
    orn_buf_put(c->out, c->decls.data ? c->decls.data : "", c->decls.len);
    orn_buf_put(c->out, c->defs.data ? c->defs.data : "", c->defs.len);
    orn_buf_put(c->out, c->mainb.data ? c->mainb.data : "", c->mainb.len);
    orn_buf_free(&c->pre);
    orn_buf_free(&c->decls);
    orn_buf_free(&c->defs);
    orn_buf_free(&c->mainb);
    free(c->applied);
    free(c);
    return ok;
}

const OrnCgTarget orn_cg_target_c = {
    .name = "c",
    .begin = c_begin,
    .function = c_function,
    .loop = c_loop,
    .toplevel = c_toplevel,
    .end = c_end,
};

/* ---------------------------------------------------------------- driver */

bool orn_cg_generate(OrnUnit *u, const OrnPlanSet *plans, const OrnCgTarget *t,
                     const OrnCgOptions *opt, OrnBuf *out)
{
    OrnCgProgram p;
    if (!orn_cg_lower(u, plans, opt, &p)) {
        orn_ice(&u->diags, (OrnSpan){0}, "code generation: a parallel_for has no plan");
        return false;
    }
    void *st_ = t->begin(&p, out);
    if (!st_) return false;
    for (int i = 0; i < u->sema.nfns; i++)
        if (u->sema.fns[i]) t->function(st_, u->sema.fns[i]);
    for (int i = 0; i < p.nloops; i++) t->loop(st_, &p.loops[i]);
    t->toplevel(st_, u->program);
    bool ok = t->end(st_);
    orn_cg_lower_free(&p);
    return ok;
}
