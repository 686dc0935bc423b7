/* c_expr.c: the C back end: expressions (emit_c_int.h). */
#include "emit_c_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- expressions */

const OrnNode *cg_arg_n(const OrnNode *call, int i)
{
    const OrnNode *a = call->u.call.args;
    for (; a && i > 0; a = a->next)
        if (a->kind != N_KWARG) i--;
    while (a && a->kind == N_KWARG) a = a->next;
    return a;
}

const OrnNode *cg_kwarg(const OrnNode *call, const char *name)
{
    for (const OrnNode *a = call->u.call.args; a; a = a->next)
        if (a->kind == N_KWARG && a->u.kwarg.id && strcmp(a->u.kwarg.id->s, name) == 0)
            return a->u.kwarg.value;
    return NULL;
}

/* ex converted to kind k: "((T)(e))" */
void cg_ex_as(C *c, const OrnNode *e, OrnTypeKind k)
{
    if (cg_kind_of(e) == k) {
        cg_ex(c, e);
        return;
    }
    cg_o(c, "((%s)(", cg_ctype(k));
    cg_ex(c, e);
    cg_o(c, "))");
}

/* The storage order of dist array s (analyzer/layout.h): perm[sd] is the logical dimension
 * stored as storage dimension sd; NULL when s is stored as declared. */
const int *cg_perm_of(const C *c, const OrnSym *s)
{
    if (!s || s->kind != SYM_DIST || !c->p->plans) return NULL;
    const OrnLayout *l = orn_layout_of(&c->p->plans->layout, s);
    return l ? l->perm : NULL;
}

/* The storage dimension of logical dimension d. */
int cg_sdim(const int *perm, int d)
{
    if (!perm) return d;
    for (int i = 0; i < ORN_LAYOUT_MAXDIM; i++)
        if (perm[i] == d) return i;
    return d;
}

/* The subscripts of an access to arr, in arr's storage order. */
void cg_ex_subs(C *c, const OrnNode *subs, const OrnSym *arr)
{
    const OrnNode *sub[ORN_LAYOUT_MAXDIM] = {NULL};
    int n = 0;
    for (const OrnNode *x = subs; x && n < ORN_LAYOUT_MAXDIM; x = x->next) sub[n++] = x;
    const int *perm = cg_perm_of(c, arr);
    for (int i = 0; i < n; i++) {
        const OrnNode *x = sub[perm ? perm[i] : i];
        if (i) cg_o(c, ", ");
        if (!x || x->kind == N_SLICE)
            cg_o(c, "0");
        else
            cg_ex(c, x);
    }
}

void cg_ex_key(C *c, const OrnNode *subs, const OrnSym *arr)
{
    /* CUDA is C++, which has no compound literals: a temporary that lives as long */
    cg_o(c, c->cuda ? "orn_gpu_key(OrnGpuKey{{" : "(const int64_t[%d]){", orn_list_len(subs));
    cg_ex_subs(c, subs, arr);
    cg_o(c, c->cuda ? "}})" : "}");
}

/* The extents of an array, or of a buffer's target: "d3_W->dims", "v5_a->dims". */
void cg_put_dims(C *c, const OrnSym *s)
{
    const OrnSym *t = cg_is_buffer(s) ? orn_cg_buffer_target(s) : s;
    cg_o(c, "%s->dims", t ? cg_nm(c, t) : "NULL");
}

int cg_array_k(C *c, const OrnNode *e, const OrnSym *s)
{
    int k = c->loop ? orn_cg_array_index(c->loop, s) : -1;
    if (k < 0) cg_ice(c, e, "a dist array accessed in a loop is missing from its plan");
    return k < 0 ? 0 : k;
}

/* The local holding array s's element in this run of a CSR walk, or -1. */
int cg_promoted(const C *c, const OrnSym *s)
{
    if (c->cx != CX_BODY) return -1;
    for (int i = 0; i < c->npromo; i++)
        if (c->promo[i] == s) return i;
    return -1;
}

void cg_ex_index(C *c, const OrnNode *e)
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (!s) {
        cg_ice(c, e, "subscript of something that is not a named array");
        return;
    }
    int pv = cg_promoted(c, s);
    if (pv >= 0) {
        cg_o(c, "pv%d_", pv);
        return;
    }
    if (cg_jam_elem(c, e)) return;
    OrnTypeKind ek = cg_elem_of(s->type);
    int rw = cg_row_of(c, e);
    if (rw >= 0) { /* a row pointer of the fast loop (c_for.c): the same element */
        const OrnNode *x = e->u.index.subs;
        for (int d = 0; d < c->row_last[rw] && x; d++) x = x->next;
        cg_o(c, "rp%d_[", c->row_id[rw]);
        cg_ex_as(c, x, T_I64);
        cg_o(c, "]");
        return;
    }
    if (cg_is_local_array(s)) {
        const OrnNode *sub[4] = {NULL, NULL, NULL, NULL};
        int i = 0;
        for (const OrnNode *x = e->u.index.subs; x && i < 4; x = x->next) sub[i++] = x;
        cg_o(c, "((%s *)%s->data)[", cg_ctype(ek), cg_nm(c, s));
        if (c->fast && c->cx != CX_PREFETCH &&
            orn_cg_view_proven(c->loop, c->vfast_var, c->vfast_varying, c->vfast_body, c->vfast_vv,
                               e)) {
            /* inside the range the loop's once-per-range test proved (version.h) */
            cg_o(c, "orn_std_arr_at(%s, %d", cg_nm(c, s), i);
            for (int k = 0; k < i; k++) {
                cg_o(c, ", ");
                cg_ex(c, sub[k]);
            }
            for (int k = i; k < 4; k++) cg_o(c, ", 0");
            cg_o(c, ")]");
            return;
        }
        if (c->cx == CX_PREFETCH)
            cg_o(c, "orn_std_arr_off_soft(%s", cg_nm(c, s));
        else
            cg_o(c, "orn_std_arr_off(P_, %s, %u, \"%s\"", cg_nm(c, s),
                 cg_site(c, e, s->name->s, (unsigned)c->line), s->name->s);
        for (i = 0; i < 4; i++) {
            cg_o(c, ", ");
            if (sub[i])
                cg_ex(c, sub[i]);
            else
                cg_o(c, "0");
        }
        cg_o(c, ")]");
        return;
    }
    int64_t so;
    if (c->srow_arr == s && cg_srow_read(c, e, &so)) { /* the run's own storage */
        if (so == -1 && c->srow_prev && !c->lanes)
            cg_o(c, "pv_"); /* the previous element, carried (c_srow.c) */
        else
            cg_o(c, "row_[%s + INT64_C(%lld)]", cg_nm(c, c->srow_last), (long long)so);
        return;
    }
    if (cg_in_loop_ctx(c)) {
        int k = cg_array_k(c, e, s);
        if (c->cx != CX_PREFETCH && orn_cg_boxable(c->loop, k)) {
            int nd = orn_list_len(e->u.index.subs);
            if (c->fast && c->alias_x == k + 1) { /* through the buffer's box (c_stmt.c) */
                cg_o(c, "((const %s *)(const void *)B%d_.base)[orn_rt_box_at(&B%d_, %d, ",
                     cg_ctype(ek), c->alias_b - 1, c->alias_b - 1, nd);
                c->alias_used++;
            } else if (c->fast)
                cg_o(c, "((const %s *)(const void *)X%d_.base)[orn_rt_box_at(&X%d_, %d, ",
                     cg_ctype(ek), k, k, nd);
            else
                cg_o(c, "orn_rt_ld_%s(&X%d_, ORN_RT_NDL(%d, %u), ", cg_sfx(ek), k, nd,
                     cg_site(c, e, s->name->s, e->span.line));
            cg_ex_key(c, e->u.index.subs, s);
            cg_o(c, c->fast ? ")]" : ")");
            return;
        }
        cg_o(c, "%s_%s(&V_[%d], ", c->cx == CX_PREFETCH ? "orn_std_peek" : "orn_rt_get", cg_sfx(ek),
             k);
        cg_ex_key(c, e->u.index.subs, s);
        cg_o(c, ")");
        return;
    }
    cg_o(c, "orn_std_dget_%s(P_, %s, ", cg_sfx(ek), cg_nm(c, s));
    cg_ex_key(c, e->u.index.subs, s);
    cg_o(c, ", %u)", cg_site(c, e, s->name->s, (unsigned)c->line));
}

static void ex_name(C *c, const OrnNode *e)
{
    const OrnSym *s = e->u.name.sym;
    if (!s) {
        cg_ice(c, e, "unresolved name");
        return;
    }
    switch (s->kind) {
    case SYM_CONST:
        cg_put_const(c, &s->cval, s->type->kind);
        return;
    case SYM_VALUE:
        cg_o(c, "(*vp_)");
        return;
    case SYM_VAR:
        if (c->cx == CX_BODY && c->loop) {
            int i = orn_cg_acc_index(c->loop, s);
            if (i >= 0) {
                cg_o(c, c->lanes ? "accl%d_[l_]" : "acc%d_", i);
                return;
            }
        }
        break;
    default:
        break;
    }
    cg_o(c, cg_outer_local(c, s) ? "%s_l" : "%s", cg_nm(c, s));
}

bool cg_outer_local(const C *c, const OrnSym *s)
{
    if (!c->olocal || c->cx != CX_BODY || c->cuda || !c->loop || !s->type) return false;
    if (s->kind != SYM_VAR && s->kind != SYM_PARAM && s->kind != SYM_LOOPVAR) return false;
    OrnTypeKind k = s->type->kind;
    if (k != T_I32 && k != T_I64 && k != T_F32 && k != T_F64 && k != T_BOOL) return false;
    const OrnLoop *lp = c->loop->loop;
    for (int i = 0; i < lp->nouter_reads; i++)
        if (lp->outer_reads[i] == s) return true;
    return false;
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

static bool shown(const OrnNode *a)
{
    return a->kind != N_KWARG && a->type && (a->type->kind == T_ARRAY || a->type->kind == T_VIEW);
}

/* An argument of print/eprint: its letter in orn_std_print's `types`, and its value as the
 * C type that letter stands for. */
static char print_letter(const OrnNode *a)
{
    if (shown(a)) return 'S';
    switch (cg_kind_of(a)) {
    case T_BOOL:
        return 'b';
    case T_I32:
    case T_I64:
        return 'i';
    case T_F32:
        return 'g';
    case T_F64:
        return 'f';
    default:
        return 's';
    }
}

static void print_value(C *c, const OrnNode *a)
{
    switch (print_letter(a)) {
    case 'S':
        cg_show_arg(c, a);
        break;
    case 'b':
        cg_o(c, "(int)(");
        cg_ex(c, a);
        cg_o(c, ")");
        break;
    case 'i':
        cg_ex_as(c, a, T_I64);
        break;
    case 'f':
    case 'g':
        cg_o(c, "(double)(");
        cg_ex(c, a);
        cg_o(c, ")");
        break;
    default:
        cg_ex(c, a);
        break;
    }
}

/* print/eprint. With an array or a view among the arguments (its text is a statement
 * expression), every argument goes into a temporary first, in order. */
static void ex_print(C *c, const OrnNode *e, bool eprint)
{
    static const char *const decl[] = {
        ['S'] = "char *",       ['b'] = "const int",    ['i'] = "const int64_t",
        ['f'] = "const double", ['g'] = "const double", ['s'] = "const char *"};
    bool any = false;
    OrnBuf types;
    orn_buf_init(&types);
    for (const OrnNode *a = e->u.call.args; a; a = a->next) {
        if (a->kind == N_KWARG) continue;
        any |= shown(a);
        orn_buf_putc(&types, print_letter(a));
    }
    const char *fn = eprint ? "orn_std_eprint" : "orn_std_print";
    const char *letters = types.data ? types.data : "";
    int first = c->tmp, i = 0;
    if (any) {
        for (const OrnNode *a = e->u.call.args; a; a = a->next) c->tmp++;
        cg_o(c, "({ ");
        for (const OrnNode *a = e->u.call.args; a; a = a->next, i++) {
            if (a->kind == N_KWARG) continue;
            cg_o(c, "%s pa%d_ = ", decl[(unsigned char)print_letter(a)], first + i);
            print_value(c, a);
            cg_o(c, "; ");
        }
        cg_o(c, "%s(P_, \"%s\"", fn, letters);
        i = 0;
        for (const OrnNode *a = e->u.call.args; a; a = a->next, i++)
            if (a->kind != N_KWARG) cg_o(c, ", pa%d_", first + i);
        cg_o(c, "); })");
    } else {
        cg_o(c, "%s(P_, \"%s\"", fn, letters);
        for (const OrnNode *a = e->u.call.args; a; a = a->next) {
            if (a->kind == N_KWARG) continue;
            cg_o(c, ", ");
            print_value(c, a);
        }
        cg_o(c, ")");
    }
    orn_buf_free(&types);
}

/* printf: the format literal with %d/%i rewritten to take int64_t ("%3" PRId64). */
static void ex_printf(C *c, const OrnNode *e)
{
    const OrnNode *fmt = cg_arg_n(e, 0);
    if (!fmt || fmt->kind != N_STR) {
        cg_ice(c, e, "printf without a literal format");
        return;
    }
    const char *f = fmt->u.slit.s;
    size_t n = fmt->u.slit.len, start = 0;
    cg_o(c, "orn_std_printf(P_, ");
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
            cg_put_str(c, f + start, j - start);
            cg_o(c, " PRId64 ");
            start = j + 1;
        }
        i = j;
    }
    cg_put_str(c, f + start, n - start);
    for (const OrnNode *a = fmt->next; a; a = a->next) {
        if (a->kind == N_KWARG) continue;
        cg_o(c, ", ");
        OrnTypeKind k = cg_kind_of(a);
        if (k == T_I32 || k == T_I64)
            cg_ex_as(c, a, T_I64);
        else if (k == T_F32 || k == T_F64) {
            cg_o(c, "(double)(");
            cg_ex(c, a);
            cg_o(c, ")");
        } else
            cg_ex(c, a);
    }
    cg_o(c, ")");
}

/* A whole dense 1-D dist array used as a vector (dot with a view). */
static bool dist_vec(const OrnNode *e, const OrnSym *s)
{
    return e->kind == N_NAME && s && s->type && s->type->kind == T_ARRAY && s->type->dist &&
           !s->type->sparse && s->type->ndims == 1;
}

bool cg_vec_copied(const C *c, const OrnNode *e)
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (dist_vec(e, s)) return !cg_in_loop_ctx(c);
    return e->kind == N_INDEX && s && !cg_in_loop_ctx(c) && !cg_is_local_array(s) &&
           !cg_is_buffer(s) && e->type && !e->type->sparse;
}

const char *cg_vec_scope(const C *c, const OrnNode *e)
{
    return cg_vec_copied(c, e) ? " ORN_STD_SCOPED" : "";
}

/* A whole array or a view used as a vector: an OrnStdVec initializer. */
void cg_vec_ctor(C *c, const OrnNode *e, bool copy)
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (!s) {
        cg_ice(c, e, "view of something that is not a named array");
        return;
    }
    if (dist_vec(e, s)) { /* read whole: a loop's replicated copy, or at top level a copy */
        if (cg_in_loop_ctx(c)) {
            int k = cg_array_k(c, e, s);
            cg_o(c, "orn_std_vec_view1(P_, &V_[%d], ", k);
            cg_put_dims(c, s);
            cg_o(c, "[0], %d)", c->line);
        } else {
            cg_o(c, "orn_std_vec_dist1(P_, %s, %d)", cg_nm(c, s), c->line);
        }
        return;
    }
    if (e->kind == N_NAME) {
        if (!cg_is_local_array(s)) cg_ice(c, e, "whole dist array used as a view");
        cg_o(c, "orn_std_vec_local(P_, %s, -1, 0, \"%s\", %d)", cg_nm(c, s), s->name->s, c->line);
        return;
    }
    int dim;
    const OrnNode *fixed;
    if (!orn_cg_view_parts(e, &dim, &fixed)) {
        cg_ice(c, e, "malformed view");
        return;
    }
    if (cg_is_local_array(s)) {
        cg_o(c, "orn_std_vec_local(P_, %s, %d, ", cg_nm(c, s), dim);
    } else if (cg_in_loop_ctx(c)) {
        int k = cg_array_k(c, e, s);
        if (c->cx != CX_PREFETCH && orn_cg_boxable(c->loop, k) && c->cuda &&
            c->warp == WARP_UNIFORM && k >= 0 && k < ORN_GPU_MAXARR_CG && c->rc_slot[k] >= 0)
            cg_o(c, "orn_gpu_vec_row(L_, %d, %u, &X%d_, ", c->rc_slot[k],
                 c->rc_wr >> c->rc_slot[k] & 1u, k); /* the warp's row cache (cuda_rows.c) */
        else if (c->cx != CX_PREFETCH && orn_cg_boxable(c->loop, k))
            cg_o(c, "orn_std_vec_box(P_, &X%d_, ", k);
        else
            cg_o(c, "orn_std_vec_view(P_, &V_[%d], ", k);
        cg_put_dims(c, s);
        cg_o(c, ", %d, ", cg_sdim(cg_perm_of(c, s), dim));
    } else if (cg_is_buffer(s)) {
        cg_o(c, "orn_std_vec_buf(P_, %s, %d, ", cg_nm(c, s), cg_sdim(cg_perm_of(c, s), dim));
    } else {
        cg_o(c, "orn_std_vec_dist%s(P_, %s, %d, ", copy && cg_vec_copied(c, e) ? "_in" : "",
             cg_nm(c, s), cg_sdim(cg_perm_of(c, s), dim));
    }
    cg_ex(c, fixed);
    cg_o(c, ", \"%s\", %u)", s->name->s, cg_site(c, e, s->name->s, (unsigned)c->line));
}

static int operand_dims(const OrnNode *x)
{
    return x->type && x->type->kind == T_ARRAY ? x->type->ndims : 1;
}

static void blas_operand(C *c, const OrnNode *x)
{
    const OrnSym *s = orn_cg_base_sym(x);
    if (operand_dims(x) == 2) {
        if (x->kind != N_NAME || !cg_is_local_array(s))
            cg_ice(c, x, "matrix operand is not a local array");
        cg_o(c, "%s", s ? cg_nm(c, s) : "NULL");
        return;
    }
    cg_o(c, "(const OrnStdVec[1]){");
    cg_vec_ctor(c, x, false);
    cg_o(c, "}");
}

static void ex_blas(C *c, const OrnNode *e, int bi)
{
    const OrnNode *a[3] = {cg_arg_n(e, 0), cg_arg_n(e, 1), cg_arg_n(e, 2)};
    if (!a[0] || !a[1] || !a[2]) {
        cg_ice(c, e, "linear algebra built-in without its operands");
        return;
    }
    const OrnNode *opt = cg_kwarg(e, bi == ORN_BI_ADD_OUTER ? "scale" : "add");
    int order[3] = {0, 1, 2};
    if (bi == ORN_BI_MATMUL_INTO && operand_dims(a[0]) == 2) {
        cg_o(c, "orn_std_blas_gemm(P_, ");
    } else if (bi == ORN_BI_MATMUL_INTO) {
        cg_o(c, "orn_std_blas_gemv(P_, ");
        if (operand_dims(a[1]) == 1) order[1] = 2, order[2] = 1; /* x B: B' x */
    } else if (bi == ORN_BI_ADD_OUTER) {
        cg_o(c, "orn_std_add_outer(P_, ");
    } else {
        cg_o(c, "orn_std_blas_solve(P_, ");
    }
    for (int i = 0; i < 3; i++) {
        if (i) cg_o(c, ", ");
        blas_operand(c, a[order[i]]);
    }
    if (bi == ORN_BI_MATMUL_INTO && operand_dims(a[0]) == 1)
        cg_o(c, ", %s", order[1] == 2 ? "true" : "false");
    if (bi == ORN_BI_MATMUL_INTO) {
        cg_o(c, ", ");
        if (opt)
            cg_ex_as(c, opt, T_BOOL);
        else
            cg_o(c, "false");
    } else if (bi == ORN_BI_ADD_OUTER) {
        cg_o(c, ", ");
        if (opt)
            cg_ex_as(c, opt, T_F64);
        else
            cg_o(c, "1.0");
    }
    cg_o(c, ", %d)", c->line);
}

/* Extents: rows/cols/dim/nnz/len of an array (dist or local) or a view. */
static void ex_extent(C *c, const OrnNode *e, int bi)
{
    const OrnNode *a = cg_arg_n(e, 0);
    if (bi == ORN_BI_LEN && cg_kind_of(a) == T_STR) {
        cg_o(c, "((int64_t)strlen(");
        cg_ex(c, a);
        cg_o(c, "))");
        return;
    }
    if (bi == ORN_BI_LEN && a->kind != N_NAME) {
        /* a view or a view expression: the length of its first view */
        const OrnNode *v = a;
        while (v && v->kind != N_INDEX) {
            if (v->kind == N_UNARY)
                v = v->u.unary.e;
            else if (v->kind == N_BINARY)
                v = cg_kind_of(v->u.binary.l) == T_VIEW ? v->u.binary.l : v->u.binary.r;
            else
                v = NULL;
        }
        int dim;
        const OrnNode *fixed;
        const OrnSym *s = orn_cg_base_sym(v);
        if (!v || !s || !orn_cg_view_parts(v, &dim, &fixed)) {
            cg_ice(c, e, "len of an unexpected expression");
            return;
        }
        cg_put_dims(c, s);
        cg_o(c, "[%d]", cg_sdim(cg_perm_of(c, s), dim));
        return;
    }
    const OrnSym *s = orn_cg_base_sym(a);
    if (!s) {
        cg_ice(c, e, "extent of something that is not an array");
        return;
    }
    int nd = s->type->ndims;
    const int *perm = cg_perm_of(c, s);
    switch (bi) {
    case ORN_BI_ROWS:
    case ORN_BI_LEN:
        cg_put_dims(c, s);
        cg_o(c, "[%d]", cg_sdim(perm, 0));
        break;
    case ORN_BI_COLS:
        cg_put_dims(c, s);
        cg_o(c, "[%d]", cg_sdim(perm, 1));
        break;
    case ORN_BI_NNZ:
        if (cg_is_local_array(s))
            cg_o(c, "%s->n", cg_nm(c, s));
        else
            cg_o(c, "%s->nnz", cg_nm(c, s));
        break;
    default:
        cg_o(c, "orn_std_dim(P_, %d, ", nd);
        if (perm) {
            /* the logical extents */
            cg_o(c, "(const int64_t[%d]){", nd);
            for (int d = 0; d < nd; d++) {
                cg_o(c, "%s", d ? ", " : "");
                cg_put_dims(c, s);
                cg_o(c, "[%d]", cg_sdim(perm, d));
            }
            cg_o(c, "}");
        } else {
            cg_put_dims(c, s);
        }
        cg_o(c, ", ");
        cg_ex(c, cg_arg_n(e, 1));
        cg_o(c, ", %d)", c->line);
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
        cg_o(c, "%s__L%d(b_, %s", cg_nm(c, fs), c->loop->id, c->loop->uses_rng ? "rng_" : "NULL");
    else
        cg_o(c, "%s(", cg_nm(c, fs));
    const OrnNode *par = fn && fn->kind == N_FN ? fn->u.fn.args : NULL;
    bool first = !clone;
    for (const OrnNode *a = e->u.call.args; a; a = a->next) {
        if (a->kind == N_KWARG) continue;
        if (!first) cg_o(c, ", ");
        first = false;
        const OrnSym *ps = par ? par->u.arg.sym : NULL;
        if (ps && ps->type)
            cg_ex_as(c, a, ps->type->kind);
        else
            cg_ex(c, a);
        if (par) par = par->next;
    }
    cg_o(c, ")");
}

/* The arguments of zeros/fill/rand/randn after the extents literal, for the local and the
 * distributed constructor alike: "}, <init kind>, <fill value>, <seed>". */
void cg_arr_init_args(C *c, const OrnNode *call, int bi, const OrnNode *a1)
{
    static const char *const init[] = {"ORN_STD_ZEROS", "ORN_STD_FILL", "ORN_STD_RAND",
                                       "ORN_STD_RANDN"};
    int ik = bi == ORN_BI_ZEROS ? 0 : bi == ORN_BI_FILL ? 1 : bi == ORN_BI_RAND ? 2 : 3;
    cg_o(c, "}, %s, ", init[ik]);
    if (bi == ORN_BI_FILL)
        cg_ex_as(c, a1, T_F64);
    else
        cg_o(c, "0.0");
    cg_o(c, ", ");
    const OrnNode *seed = cg_kwarg(call, "seed");
    if (seed)
        cg_ex_as(c, seed, T_I64);
    else
        cg_o(c, "0");
}

static void ex_call(C *c, const OrnNode *e)
{
    int bi = e->u.call.builtin;
    if (e->u.call.sym) {
        ex_user_call(c, e);
        return;
    }
    OrnTypeKind k = cg_kind_of(e);
    const OrnNode *a0 = cg_arg_n(e, 0), *a1 = cg_arg_n(e, 1);
    const char *mname = math_name(bi);
    if (mname) {
        if (k == T_F32) {
            cg_o(c, "%sf(", mname);
            cg_ex_as(c, a0, T_F32);
        } else {
            cg_o(c, "%s(", mname);
            cg_ex_as(c, a0, T_F64);
        }
        cg_o(c, ")");
        return;
    }
    bool in_body = c->cx == CX_BODY || c->cx == CX_CLONE;
    switch (bi) {
    case ORN_BI_SIGMOID:
        if (k == T_F32) {
            cg_o(c, "(1.0f / (1.0f + expf(-");
            cg_ex_as(c, a0, T_F32);
        } else {
            cg_o(c, "(1.0 / (1.0 + exp(-");
            cg_ex_as(c, a0, T_F64);
        }
        cg_o(c, ")))");
        return;
    case ORN_BI_ABS:
        if (k == T_F32)
            cg_o(c, "fabsf(");
        else if (k == T_F64)
            cg_o(c, "fabs(");
        else
            cg_o(c, "orn_std_abs_%s(", cg_sfx(k));
        cg_ex(c, a0);
        cg_o(c, ")");
        return;
    case ORN_BI_POW:
        cg_o(c, k == T_F32 ? "powf(" : "pow(");
        cg_ex_as(c, a0, k);
        cg_o(c, ", ");
        cg_ex_as(c, a1, k);
        cg_o(c, ")");
        return;
    case ORN_BI_MIN:
    case ORN_BI_MAX:
        for (int i = 0; i < c->nproven; i++)
            if (c->proven[i] == e && c->proven_keep && c->proven_keep[i]) {
                /* a clamp that holds its argument in this range (version.h, guards) */
                cg_ex_as(c, c->proven_keep[i], k);
                return;
            }
        cg_o(c, "orn_std_%s_%s(", bi == ORN_BI_MIN ? "min" : "max", cg_sfx(k));
        cg_ex_as(c, a0, k);
        cg_o(c, ", ");
        cg_ex_as(c, a1, k);
        cg_o(c, ")");
        return;
    case ORN_BI_DIV:
    case ORN_BI_MOD: {
        const char *f = bi == ORN_BI_DIV ? "div" : "mod";
        cg_o(c, "((%s)", cg_ctype(k));
        if (c->cx == CX_PREFETCH)
            cg_o(c, "orn_std_%s_soft(", f);
        else
            cg_o(c, "orn_std_%s(P_, ", f);
        cg_ex_as(c, a0, T_I64);
        cg_o(c, ", ");
        cg_ex_as(c, a1, T_I64);
        if (c->cx == CX_PREFETCH)
            cg_o(c, "))");
        else
            cg_o(c, ", %d))", c->line);
        return;
    }
    case ORN_BI_I32:
    case ORN_BI_I64:
    case ORN_BI_F32:
    case ORN_BI_F64:
        if (cg_kind_of(a0) == T_STR) { /* the text parsed: an error names the line */
            if (k == T_F32 || k == T_F64)
                cg_o(c, "orn_std_str_to_%s(P_, ", k == T_F32 ? "f32" : "f64");
            else
                cg_o(c, "((%s)orn_std_str_to_int(P_, ", cg_ctype(k));
            cg_ex(c, a0);
            if (k == T_F32 || k == T_F64)
                cg_o(c, ", %d)", c->line);
            else
                cg_o(c, ", %d, %d))", k == T_I32 ? 32 : 64, c->line);
            return;
        }
        cg_o(c, "((%s)(", cg_ctype(k));
        cg_ex(c, a0);
        cg_o(c, "))");
        return;
    case ORN_BI_STR:
        switch (cg_kind_of(a0)) {
        case T_STR:
            cg_ex(c, a0);
            return;
        case T_BOOL:
            cg_o(c, "((");
            cg_ex(c, a0);
            cg_o(c, ") ? \"true\" : \"false\")");
            return;
        case T_F32:
        case T_F64:
            cg_o(c, "orn_std_str_float(P_, ");
            cg_ex_as(c, a0, T_F64);
            cg_o(c, ", %d, %d)", cg_kind_of(a0) == T_F32, c->line);
            return;
        default:
            cg_o(c, "orn_std_str_i64(P_, ");
            cg_ex_as(c, a0, T_I64);
            cg_o(c, ", %d)", c->line);
            return;
        }
    case ORN_BI_RANDINT:
        if (in_body)
            cg_o(c, "orn_std_rng_int(P_, rng_, ");
        else
            cg_o(c, "orn_std_randint(P_, ");
        cg_ex_as(c, a0, T_I64);
        cg_o(c, ", %d)", c->line);
        return;
    case ORN_BI_RAND:
    case ORN_BI_RANDN:
        if (!a0) {
            bool n = bi == ORN_BI_RANDN;
            if (in_body)
                cg_o(c, n ? "orn_rt_rng_normal(rng_)" : "orn_rt_rng_uniform(rng_)");
            else
                cg_o(c, n ? "orn_std_randn(P_)" : "orn_std_rand(P_)");
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
        cg_o(c, "orn_std_wall_time()");
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
        cg_o(c, "orn_std_exit(P_, ");
        cg_ex_as(c, a0, T_I64);
        cg_o(c, ")");
        return;
    case ORN_BI_SEED:
        cg_o(c, "orn_std_set_seed(P_, ");
        cg_ex_as(c, a0, T_I64);
        cg_o(c, ")");
        return;
    case ORN_BI_LOG_METRIC:
        cg_o(c, "orn_std_log_metric(P_, ");
        cg_ex(c, a0);
        cg_o(c, ", ");
        cg_ex_as(c, a1, T_I64);
        cg_o(c, ", ");
        cg_ex_as(c, cg_arg_n(e, 2), T_F64);
        cg_o(c, ", %d)", c->line);
        return;
    case ORN_BI_LOAD_TEXT: /* collective: rank 0 reads, every rank gets the lines */
        cg_o(c, "orn_std_load_text(P_, ");
        cg_ex(c, a0);
        cg_o(c, ", %d)", c->line);
        return;
    case ORN_BI_SAVE: {
        const OrnSym *s = orn_cg_base_sym(a0);
        if (cg_is_local_array(s))
            cg_o(c, "orn_std_arr_save(P_, %s, ", cg_nm(c, s));
        else if (cg_perm_of(c, s)) {
            const int *perm = cg_perm_of(c, s);
            int nd = s->type->ndims;
            cg_o(c, "orn_std_save_perm(P_, %s, (const int[%d]){", cg_nm(c, s), nd);
            for (int d = 0; d < nd; d++) cg_o(c, "%s%d", d ? ", " : "", perm[d]);
            cg_o(c, "}, ");
        } else
            cg_o(c, "orn_std_save(P_, %s, ", s ? cg_nm(c, s) : "NULL");
        cg_ex(c, a1);
        cg_o(c, ", %d)", c->line);
        return;
    }
    case ORN_BI_SUM:
    case ORN_BI_DOT:
    case ORN_BI_NORM:
        cg_ex_reduce(c, e, bi);
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
        OrnTypeKind et = cg_elem_of(a0->type);
        int first = bi == ORN_BI_FILL ? 2 : 1, nd = 0;
        if (c->take) /* a loop body's declaration: its slot's array (cg_arr_slots) */
            cg_o(c, "orn_std_arr_take(P_, &slot%d_, %s, ", c->take->id, cg_dsmt(et));
        else
            cg_o(c, "orn_std_arr_new(P_, %s, ", cg_dsmt(et));
        c->take = NULL;
        for (const OrnNode *x = cg_arg_n(e, first); x; x = x->next)
            if (x->kind != N_KWARG) nd++;
        cg_o(c, "%d, (const int64_t[%d]){", nd, nd);
        bool f = true;
        for (const OrnNode *x = cg_arg_n(e, first); x; x = x->next) {
            if (x->kind == N_KWARG) continue;
            if (!f) cg_o(c, ", ");
            f = false;
            cg_ex(c, x);
        }
        cg_arr_init_args(c, e, bi, a1);
        cg_o(c, ", %d)", c->line);
        return;
    }
    cg_ice(c, e, "a built-in that code generation does not handle here");
}

/* Does evaluating e have an effect (or depend on one): calls of fns and externs, random
 * draws, printing, the clock? */
bool cg_impure(const OrnNode *e)
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
        case ORN_BI_LOG_METRIC:
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
            if (cg_impure(a)) return true;
        return false;
    }
    case N_KWARG:
        return cg_impure(e->u.kwarg.value);
    case N_UNARY:
        return cg_impure(e->u.unary.e);
    case N_BINARY:
        return cg_impure(e->u.binary.l) || cg_impure(e->u.binary.r);
    case N_INDEX:
        for (const OrnNode *a = e->u.index.subs; a; a = a->next)
            if (cg_impure(a)) return true;
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
        nimpure += cg_impure(ops[i]);
        nvar += !is_constant(ops[i]);
    }
    if (!nimpure || nvar < 2) return 0;
    int pushed = 0;
    cg_o(c, "({ ");
    for (int i = 0; i < n; i++) {
        const OrnNode *x = ops[i];
        if (!x || x->kind == N_KWARG || is_constant(x)) continue;
        OrnTypeKind k = cg_kind_of(x);
        if (k < T_BOOL || k > T_STR || c->nsubst >= MAXLEAF) continue;
        int id = c->tmp++;
        cg_o(c, "%s q%d_ = ", cg_ctype(k), id);
        cg_ex(c, x);
        cg_o(c, "; ");
        c->subst[c->nsubst] = x;
        c->subst_id[c->nsubst++] = id;
        pushed++;
    }
    return pushed ? pushed : -1;
}

static void seq_end(C *c, int pushed)
{
    if (!pushed) return;
    cg_o(c, "; })");
    if (pushed > 0) c->nsubst -= pushed;
}

static void ex_inner(C *c, const OrnNode *e);

static bool const_zero(const OrnNode *e)
{
    OrnConstVal v;
    if (!orn_sema_eval_const(e, &v)) return false;
    return (v.kind == T_F64 || v.kind == T_F32) ? v.f == 0.0
           : v.kind == T_BOOL                   ? !v.b
                                                : v.kind != T_STR && v.i == 0;
}

/* Which operand of a float + or - goes through orn_std_keep_* (0: none, 1: left, 2: right).
 * GCC 12's front end folds 0.0 - X to -X when X cannot be -0.0 (an integer converted,
 * fabs), at every -O level: at X = 0 that gives -0.0 where IEEE gives +0.0 (and X + 0.0 with
 * X = -(double)i, canonicalized to 0.0 - (double)i, the same). The identity call hides X
 * from that fold; inlined, it costs nothing. Only a constant zero operand triggers it. */
static int keep_side(const OrnNode *e)
{
    OrnTypeKind k = cg_kind_of(e);
    OrnOp op = e->u.binary.op;
    if ((k != T_F32 && k != T_F64) || (op != OP_ADD && op != OP_SUB)) return 0;
    /* also where the other side is constant too: a constant here (mod(100, 1)) may be a
     * call in C, which C does not fold but converts */
    if (const_zero(e->u.binary.l)) return 2;
    if (op == OP_ADD && const_zero(e->u.binary.r)) return 1;
    return 0;
}

/* One operand of a scalar binary operator: narrowed to f32 where the result is f32 and the
 * operand a weak f64, and through orn_std_keep_* where keep_side says so. */
static void operand(C *c, const OrnNode *x, bool narrow, bool keep)
{
    if (keep) cg_o(c, "orn_std_keep_%s(", narrow ? "f32" : "f64");
    if (narrow && cg_kind_of(x) == T_F64) cg_o(c, "(float)");
    cg_ex(c, x);
    if (keep) cg_o(c, ")");
}

void cg_ex(C *c, const OrnNode *e)
{
    if (!e) {
        cg_ice(c, NULL, "missing expression");
        return;
    }
    for (int i = c->nsubst - 1; i >= 0; i--)
        if (c->subst[i] == e) {
            cg_o(c, "q%d_", c->subst_id[i]);
            return;
        }
    int pushed = 0;
    if (e->kind == N_BINARY && e->u.binary.op != OP_AND && e->u.binary.op != OP_OR &&
        cg_kind_of(e) != T_VIEW) {
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
        cg_put_i64(c, e->u.ilit.v);
        return;
    case N_FLOAT:
        cg_put_f64(c, e->u.flit.v);
        return;
    case N_STR:
        cg_put_str(c, e->u.slit.s, e->u.slit.len);
        return;
    case N_BOOL:
        cg_o(c, e->u.blit.v ? "true" : "false");
        return;
    case N_NAME:
        ex_name(c, e);
        return;
    case N_UNARY:
        cg_o(c, e->u.unary.op == OP_NOT ? "(!(" : "(-(");
        cg_ex(c, e->u.unary.e);
        cg_o(c, "))");
        return;
    case N_BINARY: {
        static const char *ops[] = {
            [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*",  [OP_DIV] = "/",
            [OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<",   [OP_LE] = "<=",
            [OP_GT] = ">",  [OP_GE] = ">=", [OP_AND] = "&&", [OP_OR] = "||"};
        OrnOp op = e->u.binary.op;
        if (cg_kind_of(e->u.binary.l) == T_STR) { /* joined or compared bytewise */
            if (op == OP_ADD)
                cg_o(c, "orn_std_str_cat(P_, ");
            else
                cg_o(c, "(orn_std_str_cmp(");
            cg_ex(c, e->u.binary.l);
            cg_o(c, ", ");
            cg_ex(c, e->u.binary.r);
            if (op == OP_ADD)
                cg_o(c, ", %d)", c->line);
            else
                cg_o(c, ") %s 0)", ops[op]);
            return;
        }
        if (cg_kind_of(e) == T_VIEW || op < OP_ADD || op > OP_OR) {
            cg_ice(c, e, "view arithmetic outside an element-wise context");
            return;
        }
        /* f32 op weak f64 is f32 (sema's narrow_weak): the f64 side converts first */
        bool narrow = cg_kind_of(e) == T_F32;
        int keep = keep_side(e);
        cg_o(c, "(");
        operand(c, e->u.binary.l, narrow, keep == 1);
        cg_o(c, " %s ", ops[op]);
        operand(c, e->u.binary.r, narrow, keep == 2);
        cg_o(c, ")");
        return;
    }
    case N_CALL:
        ex_call(c, e);
        return;
    case N_INDEX:
        if (cg_kind_of(e) == T_VIEW) {
            cg_ice(c, e, "a view outside an element-wise context");
            return;
        }
        cg_ex_index(c, e);
        return;
    default:
        cg_ice(c, e, "unexpected expression node");
        return;
    }
}

/* A condition: the outermost comparison without its parentheses (clang warns about
 * "if ((a == b))"). */
void cg_ex_cond(C *c, const OrnNode *e)
{
    static const char *ops[] = {[OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<",   [OP_LE] = "<=",
                                [OP_GT] = ">",  [OP_GE] = ">=", [OP_AND] = "&&", [OP_OR] = "||"};
    if (e && e->kind == N_BINARY && e->u.binary.op >= OP_EQ && e->u.binary.op <= OP_OR &&
        cg_kind_of(e->u.binary.l) != T_STR) {
        cg_ex(c, e->u.binary.l);
        cg_o(c, " %s ", ops[e->u.binary.op]);
        cg_ex(c, e->u.binary.r);
        return;
    }
    cg_ex(c, e);
}

/* An expression free of effects (a dense run's lanes evaluate it on their own, c_loop.c,
 * c_coljam.c): constants, names, element reads (when `reads`; of none of the n arrays in
 * avoid), operators and the pure built-ins (BI_CONST), nothing that calls user code or
 * writes. */
bool cg_pure_expr(const OrnNode *e, bool reads, const OrnSym *const *avoid, int n)
{
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
    case N_NAME:
        return true;
    case N_UNARY:
        return cg_pure_expr(e->u.unary.e, reads, avoid, n);
    case N_BINARY:
        return cg_pure_expr(e->u.binary.l, reads, avoid, n) &&
               cg_pure_expr(e->u.binary.r, reads, avoid, n);
    case N_INDEX:
        if (!reads || !e->type || e->type->kind == T_VIEW) return false;
        for (const OrnNode *x = e->u.index.subs; x; x = x->next)
            if (x->kind == N_SLICE || !cg_pure_expr(x, reads, avoid, n)) return false;
        if (e->u.index.base->kind != N_NAME) return false;
        for (int i = 0; i < n; i++)
            if (avoid[i] == e->u.index.base->u.name.sym) return false;
        return true;
    case N_CALL:
        if (e->u.call.builtin < 0 || !(orn_builtins[e->u.call.builtin].flags & BI_CONST))
            return false;
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (a->kind == N_KWARG || !cg_pure_expr(a, reads, avoid, n)) return false;
        return true;
    default:
        return false;
    }
}
