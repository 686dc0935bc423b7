/* c_view.c: the C back end: view expressions and reductions (emit_c_int.h). */
#include "emit_c_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void cg_vx_collect(C *c, VX *vx, const OrnNode *e)
{
    bool view = e->type && e->type->kind == T_VIEW;
    if (view && (e->kind == N_UNARY || e->kind == N_BINARY)) {
        if (e->kind == N_UNARY)
            cg_vx_collect(c, vx, e->u.unary.e);
        else {
            cg_vx_collect(c, vx, e->u.binary.l);
            cg_vx_collect(c, vx, e->u.binary.r);
        }
        return;
    }
    /* views, and whole local arrays used as vectors, are view leaves */
    bool vleaf = view || (e->type && e->type->kind == T_ARRAY);
    VLeaf *arr = vleaf ? vx->views : vx->scalars;
    int *n = vleaf ? &vx->nviews : &vx->nscalars;
    if (*n >= MAXLEAF) {
        vx->overflow = true;
        cg_ice(c, e, "view expression too large");
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

/* A local array, or a view of one, as q<id>_ (typed pointer), t<id>_ (stride) and n<id>_
 * (length): its storage is always there, the fixed subscript checked by the inline
 * constructor (orn_std_vec_local), whose descriptor the compiler then drops. */
static void local_decl(C *c, const OrnNode *e, int id)
{
    const char *T = cg_ctype(cg_elem_of(e->type));
    cg_ind(c);
    cg_o(c, "const OrnStdVec w%d_ = ", id);
    cg_vec_ctor(c, e, false); /* a local array's */
    cg_o(c, ";\n");
    cg_ol(c, "%s *const q%d_ = (%s *)(void *)w%d_.p;", T, id, T, id);
    cg_ol(c, "const int64_t t%d_ = w%d_.stride, n%d_ = w%d_.len;", id, id, id, id);
}

static void leaf_decl(C *c, const OrnNode *e, int id)
{
    if (cg_view_fast(c, e))
        cg_view_decl(c, e, id);
    else
        local_decl(c, e, id);
}

bool cg_leaf_fast(const C *c, const OrnNode *e)
{
    if (cg_view_fast(c, e)) return true;
    if (!e || c->cuda || c->warp != WARP_NONE || c->cx == CX_PREFETCH || !e->type) return false;
    const OrnSym *s = orn_cg_base_sym(e);
    if (!s || !cg_is_local_array(s)) return false;
    return (e->kind == N_NAME && e->type->kind == T_ARRAY) ||
           (e->kind == N_INDEX && e->type->kind == T_VIEW);
}

void cg_vx_decls(C *c, const VX *vx, bool fast)
{
    int i = 0, j = 0;
    while (i < vx->nscalars || j < vx->nviews) {
        if (j < vx->nviews && vx->views[j].dup) {
            j++;
            continue;
        }
        if (i < vx->nscalars && (j == vx->nviews || vx->scalars[i].id < vx->views[j].id)) {
            const VLeaf *l = &vx->scalars[i++];
            cg_ind(c);
            cg_o(c, "const %s s%d_ = ", cg_ctype(cg_kind_of(l->n)), l->id);
            cg_ex(c, l->n);
            cg_o(c, ";\n");
            continue;
        }
        const VLeaf *l = &vx->views[j++];
        if (cg_jam_leaf(c, l->n)) continue; /* read from its transposed copy (c_jam.c) */
        if (fast) {
            leaf_decl(c, l->n, l->id);
            continue;
        }
        cg_ind(c);
        cg_o(c, "OrnStdVec w%d_%s = ", l->id, cg_vec_scope(c, l->n));
        cg_vec_ctor(c, l->n, true);
        cg_o(c, ";\n");
    }
}

/* Declarations of the leaves (cg_vx_decls); length checks against `first` (the id of the
 * target vector, or -1: the first view). */
void cg_vx_setup(C *c, const VX *vx, int first)
{
    cg_vx_decls(c, vx, false);
    if (first == -2) return; /* the caller checks against its target */
    int f = first >= 0 ? first : vx->nviews ? vx->views[0].id : -1;
    for (int i = 0; i < vx->nviews; i++)
        if (vx->views[i].id != f && !vx->views[i].dup)
            cg_ol(c, "orn_std_vec_same(&w%d_, &w%d_);", f, vx->views[i].id);
}

static OrnTypeKind leaf_elem(const OrnNode *n)
{
    return cg_elem_of(n->type);
}

/* One element's term of a view reduction into partial `part` (a statement): dot's product,
 * sum's element, norm's square, the elements read as `fast` says (cg_vx_elem). */
static void reduce_elem(C *c, const VX *vx, const OrnNode *a, const OrnNode *b, int bi,
                        const char *acc, const char *part, int fast, int id)
{
    cg_ind(c);
    if (bi == ORN_BI_DOT) {
        cg_o(c, "%s += (%s)(", part, acc);
        cg_vx_elem(c, vx, a, fast, id);
        cg_o(c, ") * (%s)(", acc);
        cg_vx_elem(c, vx, b, fast, id);
        cg_o(c, ");\n");
    } else if (bi == ORN_BI_SUM) {
        cg_o(c, "%s += (double)(", part);
        cg_vx_elem(c, vx, a, fast, id);
        cg_o(c, ");\n");
    } else {
        cg_o(c, "{ const double e%d_ = (double)(", id);
        cg_vx_elem(c, vx, a, fast, id);
        cg_o(c, "); %s += e%d_ * e%d_; }\n", part, id, id);
    }
}

/* Element x<xid>_ of a view expression: through the accessors (EL_SLOW), or the hoisted
 * pointers q<id>_ with strides t<id>_ (EL_STRIDED) or stride 1 (EL_UNIT). */
void cg_vx_elem(C *c, const VX *vx, const OrnNode *e, int fast, int xid)
{
    const VLeaf *l = vx_find(vx, e);
    if (l) {
        bool view = l >= vx->views && l < vx->views + MAXLEAF;
        if (view && cg_jam_leaf(c, l->n)) {
            char x[24];
            snprintf(x, sizeof x, "x%d_", xid);
            cg_jam_leaf_elem(c, l->n, x);
        } else if (!view)
            cg_o(c, "s%d_", l->id);
        else if (fast == EL_UNIT)
            cg_o(c, "q%d_[x%d_]", l->id, xid);
        else if (fast == EL_STRIDED)
            cg_o(c, "q%d_[x%d_ * t%d_]", l->id, xid, l->id);
        else
            cg_o(c, "orn_std_vget_%s(&w%d_, x%d_)", cg_sfx(leaf_elem(l->n)), l->id, xid);
        return;
    }
    if (e->kind == N_UNARY) {
        cg_o(c, "(-(");
        cg_vx_elem(c, vx, e->u.unary.e, fast, xid);
        cg_o(c, "))");
        return;
    }
    if (e->kind == N_BINARY) {
        static const char *ops[] = {[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/"};
        OrnOp op = e->u.binary.op;
        if (op < OP_ADD || op > OP_DIV) {
            cg_ice(c, e, "operator in a view expression");
            return;
        }
        bool narrow = cg_num_elem(e) == T_F32;
        cg_o(c, "(");
        if (narrow && cg_num_elem(e->u.binary.l) == T_F64) cg_o(c, "(float)");
        cg_vx_elem(c, vx, e->u.binary.l, fast, xid);
        cg_o(c, " %s ", ops[op]);
        if (narrow && cg_num_elem(e->u.binary.r) == T_F64) cg_o(c, "(float)");
        cg_vx_elem(c, vx, e->u.binary.r, fast, xid);
        cg_o(c, ")");
        return;
    }
    cg_ice(c, e, "unexpected node in a view expression");
}

/* In a fast branch: typed pointers and strides of the views. */
void cg_vx_hoist(C *c, const VX *vx)
{
    for (int i = 0; i < vx->nviews; i++) {
        const VLeaf *l = &vx->views[i];
        if (l->dup) continue;
        const char *t = cg_ctype(leaf_elem(l->n));
        cg_ol(c, "%s *const q%d_ = (%s *)(void *)w%d_.p;", t, l->id, t, l->id);
        cg_ol(c, "const int64_t t%d_ = w%d_.stride;", l->id, l->id);
    }
}

void cg_vx_fast_cond(C *c, const VX *vx, int extra)
{
    cg_o(c, "if (");
    bool first = true;
    if (extra >= 0) {
        cg_o(c, "w%d_.p", extra);
        first = false;
    }
    for (int i = 0; i < vx->nviews; i++) {
        if (vx->views[i].dup) continue;
        cg_o(c, "%sw%d_.p", first ? "" : " && ", vx->views[i].id);
        first = false;
    }
    if (first) cg_o(c, "1");
    cg_o(c, ") {\n");
}

/* `if (t<extra>_ == 1 && t<id>_ == 1 ...) {` over the views' hoisted strides (extra < 0:
 * the views' only): the unit-stride version of a fast loop. */
void cg_vx_unit_cond(C *c, const VX *vx, int extra)
{
    cg_ind(c);
    cg_o(c, "if (");
    int n = 0;
    if (extra >= 0) cg_o(c, "t%d_ == 1", extra), n++;
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup) cg_o(c, "%st%d_ == 1", n++ ? " && " : "", vx->views[i].id);
    if (!n) cg_o(c, "1");
    cg_o(c, ") {\n");
}

/* ---- views proven in their boxes (version.h: orn_cg_view_proven) */

bool cg_view_fast(const C *c, const OrnNode *e)
{
    if (!c->fast || c->cuda || c->cx == CX_PREFETCH || !c->vfast_var || !cg_in_loop_ctx(c) || !e ||
        e->kind != N_INDEX || !e->type || e->type->kind != T_VIEW)
        return false;
    const OrnSym *s = orn_cg_base_sym(e);
    if (!s || cg_is_local_array(s) || cg_is_buffer(s)) return false;
    return orn_cg_view_proven(c->loop, c->vfast_var, c->vfast_varying, c->vfast_body, c->vfast_vv,
                              e);
}

/* The storage dimension of a proven view's ':' and its plan array. */
static int view_sdim(C *c, const OrnNode *e, int *k, const OrnNode **fixed)
{
    const OrnSym *s = orn_cg_base_sym(e);
    int dim = 0;
    orn_cg_view_parts(e, &dim, fixed);
    *k = cg_array_k(c, e, s);
    return cg_sdim(cg_perm_of(c, s), dim);
}

/* Declares q<id>_ (typed pointer to element 0), t<id>_ (stride in elements) and n<id>_
 * (length) of a proven view: the box's storage addressed directly, no descriptor. */
void cg_view_decl(C *c, const OrnNode *e, int id)
{
    const OrnSym *s = orn_cg_base_sym(e);
    const OrnNode *fixed = NULL;
    int k = 0, sd = view_sdim(c, e, &k, &fixed);
    const char *T = cg_ctype(cg_elem_of(s->type));
    cg_ind(c);
    cg_o(c,
         "%s *const q%d_ = (%s *)(void *)X%d_.base + orn_rt_box_at(&X%d_, 2, (const int64_t[2]){",
         T, id, T, k, k);
    if (sd == 0) cg_o(c, "0, ");
    cg_ex_as(c, fixed, T_I64);
    if (sd == 1) cg_o(c, ", 0");
    cg_o(c, "});\n");
    cg_ind(c);
    if (sd == 1)
        cg_o(c, "const int64_t t%d_ = 1, n%d_ = ", id, id);
    else
        cg_o(c, "const int64_t t%d_ = X%d_.s[0], n%d_ = ", id, k, id);
    cg_put_dims(c, s);
    cg_o(c, "[%d];\n", sd);
}

/* dot of two fast leaves (proven views, local arrays): pointers, strides and one length
 * test. */
static bool reduce_fast(C *c, const OrnNode *e, const OrnNode *a, const OrnNode *b)
{
    if (!b || !cg_leaf_fast(c, a) || !cg_leaf_fast(c, b)) return false;
    OrnTypeKind ta = leaf_elem(a), tb = leaf_elem(b);
    int ia = c->tmp++, ib = c->tmp++;
    cg_o(c, "({\n");
    c->ind++;
    leaf_decl(c, a, ia);
    leaf_decl(c, b, ib);
    cg_ol(c, "if (n%d_ != n%d_) orn_std_len_mismatch(P_, n%d_, n%d_, %d);", ia, ib, ia, ib,
          c->line);
    cg_ind(c);
    if (cg_kind_of(e) == T_F32)
        cg_o(c, "orn_std_sdot_f32(q%d_, t%d_, q%d_, t%d_, n%d_);\n", ia, ia, ib, ib, ia);
    else
        cg_o(c, "orn_std_dot_%s_%s(q%d_, t%d_, q%d_, t%d_, n%d_);\n", cg_sfx(ta), cg_sfx(tb), ia,
             ia, ib, ib, ia);
    c->ind--;
    cg_ind(c);
    cg_o(c, "})");
    return true;
}

/* The loops of a reduction whose views are addressed by pointers (cg_vx_hoist or the
 * fast leaves) over len elements (a C expression): at unit strides blocks of `lanes`
 * elements whose element l goes to partial l (the compiler vectorizes them), then the
 * tail; else strided. Element x goes to partial x mod lanes, in order: the same bits. */
static void reduce_loops(C *c, const VX *vx, const OrnNode *a, const OrnNode *b, int bi,
                         const char *acc, int lanes, int id, const char *len)
{
    char part[32];
    cg_vx_unit_cond(c, vx, -1);
    c->ind++;
    cg_ol(c, "int64_t b%d_ = 0;", id);
    cg_ol(c, "%sfor (; b%d_ + %d <= %s; b%d_ += %d)", c->cuda ? "" : CG_UNROLL2 " ", id, lanes, len,
          id, lanes);
    c->ind++;
    if (!c->cuda) cg_ol(c, "_Pragma(\"omp simd\")"); /* as a loop reduction's lanes (c_for.c) */
    cg_ol(c, "for (int l%d_ = 0; l%d_ < %d; l%d_++) {", id, id, lanes, id);
    c->ind++;
    cg_ol(c, "const int64_t x%d_ = b%d_ + l%d_;", id, id, id);
    snprintf(part, sizeof part, "r%d_[l%d_]", id, id);
    reduce_elem(c, vx, a, b, bi, acc, part, EL_UNIT, id);
    c->ind--;
    cg_ol(c, "}");
    c->ind--;
    cg_ol(c, "for (int64_t x%d_ = b%d_; x%d_ < %s; x%d_++)", id, id, id, len, id);
    c->ind++;
    snprintf(part, sizeof part, "r%d_[x%d_ & %d]", id, id, lanes - 1);
    reduce_elem(c, vx, a, b, bi, acc, part, EL_UNIT, id);
    c->ind -= 2;
    cg_ol(c, "} else {");
    c->ind++;
    cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < %s; x%d_++)", id, id, len, id);
    c->ind++;
    reduce_elem(c, vx, a, b, bi, acc, part, EL_STRIDED, id);
    c->ind -= 2;
    cg_ol(c, "}");
}

/* A reduction over a view expression whose every view leaf is fast (cg_leaf_fast): the
 * leaves as pointers, strides and lengths (no descriptors), one length test per leaf, then
 * the general path's loops -- blocks of `lanes` at unit strides, the tail, or strided --
 * with element x into partial x mod lanes: the same bits. */
static bool reduce_vx_fast(C *c, const VX *vx, const OrnNode *e, const OrnNode *a, const OrnNode *b,
                           int bi, int id)
{
    if (c->warp != WARP_NONE || !vx->nviews) return false;
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup && !cg_leaf_fast(c, vx->views[i].n)) return false;
    bool f32 = cg_kind_of(e) == T_F32; /* as the general path: partial sums in f32 */
    const char *acc = f32 ? "float" : "double";
    int lanes = f32 ? 16 : 8;
    int f = vx->views[0].id;
    cg_vx_decls(c, vx, true);
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup && vx->views[i].id != f)
            cg_ol(c, "if (n%d_ != n%d_) orn_std_len_mismatch(P_, n%d_, n%d_, %d);", f,
                  vx->views[i].id, f, vx->views[i].id, c->line);
    cg_ol(c, "%s r%d_[%d] = {0};", acc, id, lanes);
    char len[32];
    snprintf(len, sizeof len, "n%d_", f);
    reduce_loops(c, vx, a, b, bi, acc, lanes, id, len);
    cg_ind(c);
    if (bi == ORN_BI_NORM)
        cg_o(c, "sqrt(orn_std_lanes(r%d_));\n", id);
    else
        cg_o(c, "orn_std_lanes%s(r%d_);\n", f32 ? "_f32" : "", id);
    return true;
}

/* dot/sum/norm of arrays and views. */
void cg_ex_reduce(C *c, const OrnNode *e, int bi)
{
    if (cg_jam_value(c, e)) return; /* computed before the loop around it (c_jam.c) */
    const OrnNode *a = cg_arg_n(e, 0), *b = bi == ORN_BI_DOT ? cg_arg_n(e, 1) : NULL;
    const OrnSym *sa = orn_cg_base_sym(a);
    const char *what = bi == ORN_BI_DOT ? "dot" : bi == ORN_BI_SUM ? "sum" : "norm";
    /* whole dist arrays: collective (a dot of one with a view reads it as a vector) */
    const OrnSym *sb = b ? orn_cg_base_sym(b) : NULL;
    bool whole_b = !b || (b->kind == N_NAME && sb && sb->type->kind == T_ARRAY && sb->type->dist);
    if (a->kind == N_NAME && sa && sa->type->kind == T_ARRAY && sa->type->dist && whole_b) {
        if (bi == ORN_BI_DOT) {
            cg_o(c, "orn_std_dist_dot(P_, %s, %s, %d)", cg_nm(c, sa), sb ? cg_nm(c, sb) : "NULL",
                 c->line);
        } else {
            cg_o(c, "orn_std_dist_%s(P_, %s, %d)", what, cg_nm(c, sa), c->line);
        }
        return;
    }
    int id = c->tmp++;
    bool plain_a = a->kind == N_NAME || (a->kind == N_INDEX && cg_kind_of(a) == T_VIEW);
    bool plain_b = !b || b->kind == N_NAME || (b->kind == N_INDEX && cg_kind_of(b) == T_VIEW);
    if (bi == ORN_BI_DOT && reduce_fast(c, e, a, b)) return;
    bool warp = c->warp == WARP_UNIFORM; /* split across the lanes (cuda_warp.c) */
    if (warp && bi == ORN_BI_DOT && plain_a && plain_b) {
        cg_o(c, "({ OrnStdVec ra%d_ = ", id);
        cg_vec_ctor(c, a, false); /* a warp kernel's: in a loop body */
        cg_o(c, "; OrnStdVec rb%d_ = ", id);
        cg_vec_ctor(c, b, false);
        cg_o(c, "; orn_std_vec_same(&ra%d_, &rb%d_); ", id, id);
        OrnTypeKind ta = leaf_elem(a), tb = leaf_elem(b);
        if (cg_kind_of(e) == T_F32)
            cg_o(c, "orn_gpu_sdot_f32(L_, ");
        else
            cg_o(c, "orn_gpu_dot_%s_%s(L_, ", cg_sfx(ta), cg_sfx(tb));
        cg_o(c,
             "(const %s *)(const void *)ra%d_.p, ra%d_.stride, (const %s *)(const void *)rb%d_.p, "
             "rb%d_.stride, ra%d_.len); })",
             cg_ctype(ta), id, id, cg_ctype(tb), id, id, id);
        return;
    }
    if (plain_a && plain_b) {
        cg_o(c, "({ OrnStdVec ra%d_%s = ", id, cg_vec_scope(c, a));
        cg_vec_ctor(c, a, true);
        cg_o(c, "; ");
        if (b) {
            cg_o(c, "OrnStdVec rb%d_%s = ", id, cg_vec_scope(c, b));
            cg_vec_ctor(c, b, true);
            cg_o(c, "; orn_std_vec_same(&ra%d_, &rb%d_); ", id, id);
            OrnTypeKind ta = leaf_elem(a), tb = leaf_elem(b);
            if (cg_kind_of(e) == T_F32) {
                cg_o(
                    c,
                    "(ra%d_.p && rb%d_.p) ? orn_std_sdot_f32((const float *)(const void *)ra%d_.p, "
                    "ra%d_.stride, (const float *)(const void *)rb%d_.p, rb%d_.stride, ra%d_.len) "
                    ": "
                    "orn_std_vsdot_slow(&ra%d_, &rb%d_); })",
                    id, id, id, id, id, id, id, id, id);
                return;
            }
            cg_o(c,
                 "(ra%d_.p && rb%d_.p) ? orn_std_dot_%s_%s((const %s *)(const void *)ra%d_.p, "
                 "ra%d_.stride, (const %s *)(const void *)rb%d_.p, rb%d_.stride, ra%d_.len) : "
                 "orn_std_vdot_slow(&ra%d_, &rb%d_); })",
                 id, id, cg_sfx(ta), cg_sfx(tb), cg_ctype(ta), id, id, cg_ctype(tb), id, id, id, id,
                 id);
        } else {
            cg_o(c, "orn_std_v%s(&ra%d_); })", what, id);
        }
        return;
    }
    /* general view expressions: one loop, the same partial sums */
    VX *vx = calloc(1, sizeof *vx);
    cg_vx_collect(c, vx, a);
    if (b) cg_vx_collect(c, vx, b);
    cg_o(c, "({\n");
    c->ind++;
    if (reduce_vx_fast(c, vx, e, a, b, bi, id)) {
        c->ind--;
        cg_ind(c);
        cg_o(c, "})");
        free(vx);
        return;
    }
    cg_vx_setup(c, vx, -1);
    if (!vx->nviews) cg_ice(c, e, "reduction without a view");
    bool f32 = cg_kind_of(e) == T_F32; /* dot of two f32 views: partial sums in f32 */
    const char *acc = f32 ? "float" : "double";
    int lanes = f32 ? 16 : 8; /* orn_std_lanes_f32 / orn_std_lanes */
    int wid = vx->nviews ? vx->views[0].id : 0;
    char part[32]; /* the partial sum element x goes to */
    if (warp) {
        /* lane l: partial l mod lanes, the host's elements in the host's order */
        cg_ol(c, "%s r%d_ = 0;", acc, id);
        cg_ol(c, "for (int64_t x%d_ = L_.lane & %d; x%d_ < w%d_.len; x%d_ += %d)", id, lanes - 1,
              id, wid, id, lanes);
        snprintf(part, sizeof part, "r%d_", id);
        c->warp = WARP_SPLIT;
    } else {
        cg_ol(c, "%s r%d_[%d] = {0};", acc, id, lanes);
        /* every view in its box: pointers, and with unit strides blocks of `lanes` elements
         * whose element l goes to partial l (the compiler vectorizes them), then the tail;
         * element x still goes to partial x mod lanes, in order: the same bits */
        cg_ind(c);
        cg_vx_fast_cond(c, vx, -1);
        c->ind++;
        cg_vx_hoist(c, vx);
        char len[32];
        snprintf(len, sizeof len, "w%d_.len", wid);
        reduce_loops(c, vx, a, b, bi, acc, lanes, id, len);
        snprintf(part, sizeof part, "r%d_[x%d_ & %d]", id, id, lanes - 1);
        c->ind--;
        cg_ol(c, "} else {");
        c->ind++;
        cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", id, id, wid, id);
    }
    c->ind++;
    reduce_elem(c, vx, a, b, bi, acc, part, EL_SLOW, id);
    c->ind--;
    if (!warp) {
        c->ind--;
        cg_ol(c, "}");
    }
    if (warp) c->warp = WARP_UNIFORM;
    const char *tree = warp ? "orn_gpu_lanes" : "orn_std_lanes", *lane = warp ? "L_, " : "";
    cg_ind(c);
    if (bi == ORN_BI_NORM)
        cg_o(c, "sqrt(%s(%sr%d_));\n", tree, lane, id);
    else
        cg_o(c, "%s%s(%sr%d_);\n", tree, f32 ? "_f32" : "", lane, id);
    c->ind--;
    cg_ind(c);
    cg_o(c, "})");
    free(vx);
}

/* The text of an array or a view for print/eprint (stdlib/show.c): a new string. Views are
 * evaluated into a row of their element type, element by element, then shown; the stored
 * elements of a sparse dist array's row or column are picked where they lie. */
void cg_show_arg(C *c, const OrnNode *e)
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (e->type->kind == T_ARRAY) {
        if (cg_is_local_array(s))
            cg_o(c, "orn_std_show_arr(%s)", cg_nm(c, s));
        else
            cg_o(c, "orn_std_show_dist(P_, %s, %d)", cg_nm(c, s), c->line);
        return;
    }
    if (e->type->sparse) {
        int dim = 0;
        const OrnNode *fixed = NULL;
        if (!orn_cg_view_parts(e, &dim, &fixed) || cg_is_local_array(s)) {
            cg_ice(c, e, "sparse view to print");
            return;
        }
        cg_o(c, "orn_std_show_line(P_, %s, %d, ", cg_nm(c, s), dim);
        cg_ex_as(c, fixed, T_I64);
        cg_o(c, ", %u)", cg_site(c, e, s->name->s, (unsigned)c->line));
        return;
    }
    OrnTypeKind ek = cg_elem_of(e->type);
    const char *T = cg_ctype(ek);
    VX *vx = calloc(1, sizeof *vx);
    int id = c->tmp++, x = c->tmp++;
    cg_vx_collect(c, vx, e);
    cg_o(c, "({\n");
    c->ind++;
    cg_vx_setup(c, vx, -1);
    if (!vx->nviews) cg_ice(c, e, "view to print without a view");
    int wid = vx->nviews ? vx->views[0].id : 0;
    cg_ol(c, "%s *m%d_ = malloc((size_t)(w%d_.len > 0 ? w%d_.len : 1) * sizeof(%s));", T, id, wid,
          wid, T);
    cg_ol(c, "if (!m%d_) orn_std_die(P_, %d, \"out of memory\");", id, c->line);
    cg_ind(c);
    cg_o(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++) m%d_[x%d_] = (%s)(", x, x, wid, x, id,
         x, T);
    cg_vx_elem(c, vx, e, EL_SLOW, x);
    cg_o(c, ");\n");
    cg_ol(c, "char *s%d_ = orn_std_show_vals(%s, m%d_, w%d_.len);", id, cg_dsmt(ek), id, wid);
    cg_ol(c, "free(m%d_);", id);
    cg_ol(c, "s%d_;", id);
    c->ind--;
    cg_ind(c);
    cg_o(c, "})");
    free(vx);
}

bool cg_jam_dot_ready(C *c, const OrnNode *call)
{
    VX *vx = calloc(1, sizeof *vx);
    if (!vx) return false;
    const OrnNode *a = cg_arg_n(call, 0), *b = cg_arg_n(call, 1);
    cg_vx_collect(c, vx, a);
    cg_vx_collect(c, vx, b);
    bool ok = !vx->overflow && vx->nviews > 0;
    for (int i = 0; ok && i < vx->nviews; i++) /* the jam's rows, local arrays' views, are */
        if (!vx->views[i].dup && !cg_leaf_fast(c, vx->views[i].n)) ok = false;
    free(vx);
    return ok;
}

/* The dot jam's nest for the W values of the outer variable from cb<jam id>_ (c_jam.c):
 * the operands' leaves as pointers, one length test, then element x into partial x mod L of
 * each value -- the order of dot (docs/language.md, section 13) -- the vector over the
 * values innermost, and the tree. */
void cg_jam_dot_nest(C *c, const CgJam *j)
{
    const OrnNode *a = cg_arg_n(j->dot, 0), *b = cg_arg_n(j->dot, 1);
    VX *vx = calloc(1, sizeof *vx);
    if (!vx) {
        cg_ice(c, j->dot, "out of memory");
        return;
    }
    int line = c->line;
    c->line = (int)j->red->span.line;
    cg_vx_collect(c, vx, a);
    cg_vx_collect(c, vx, b);
    int id = c->tmp++, L = j->L;
    const char *acc = L == 16 ? "float" : "double";
    cg_ol(c, "{");
    c->ind++;
    cg_vx_decls(c, vx, true);
    /* the length: every leaf's (a transposed array's row: its columns) */
    char first[64] = "";
    for (int i = 0; i < vx->nviews; i++) {
        const VLeaf *l = &vx->views[i];
        if (l->dup) continue;
        char n[64];
        if (cg_jam_leaf(c, l->n))
            snprintf(n, sizeof n, "%s->dims[1]", cg_nm(c, orn_cg_base_sym(l->n)));
        else
            snprintf(n, sizeof n, "n%d_", l->id);
        if (!first[0])
            snprintf(first, sizeof first, "%s", n);
        else
            cg_ol(c, "if (%s != %s) orn_std_len_mismatch(P_, %s, %s, %d);", first, n, first, n,
                  c->line);
    }
    cg_ol(c, "%s r%d_[%d][%d] = {{0}};", acc, id, L, j->W);
    cg_ol(c, "int64_t b%d_ = 0;", id);
    char part[48];
    for (int tail = 0; tail < 2; tail++) {
        if (!tail) {
            cg_ol(c, "for (; b%d_ + %d <= %s; b%d_ += %d) for (int l%d_ = 0; l%d_ < %d; l%d_++) {",
                  id, L, first, id, L, id, id, L, id);
            c->ind++;
            cg_ol(c, "const int64_t x%d_ = b%d_ + l%d_;", id, id, id);
            snprintf(part, sizeof part, "r%d_[l%d_][cc%d_]", id, id, id);
        } else {
            cg_ol(c, "for (int64_t x%d_ = b%d_; x%d_ < %s; x%d_++) {", id, id, id, first, id);
            c->ind++;
            snprintf(part, sizeof part, "r%d_[x%d_ & %d][cc%d_]", id, id, L - 1, id);
        }
        cg_jam_vec_open(c, id);
        reduce_elem(c, vx, a, b, ORN_BI_DOT, acc, part, EL_STRIDED, id);
        c->ind--;
        cg_ol(c, "}");
        c->ind--;
        cg_ol(c, "}");
    }
    cg_jam_tree(c, id, L);
    c->ind--;
    cg_ol(c, "}");
    c->line = line;
    free(vx);
}

/* matmul_into, add_outer, solve_into: one call into stdlib/blas.c. A 2-D operand is a
 * local array (OrnStdArr *); a 1-D one, a view or a local 1-D array, is an OrnStdVec
 * passed by address. */
