/* c_vassign.c: the C back end: assignments to views and buffer adds through views
 * (`W[u, :] = ...`, `dW[u, :] += ...`; emit_c_int.h): fused element loops over the view's
 * run, unit-stride or strided, the warp kernels' lanes, and buffer adds in place or a run at
 * a time where the target's storage allows. */
#include "emit_c_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A warp kernel's view assignment works on this many elements of a lane at a time (a row
 * of 128 in one pass of 32 lanes). */
enum { LANE_CHUNK = 4 };

/* One element of a fused view assignment: `q[x] = (T)(q[x] op (rhs))`, unit or strided. */
static void vx_store(C *c, const VX *vx, const OrnNode *rhs, int tid, int x, const char *T,
                     const char *opn, int unit)
{
    const char *el = unit ? "q%d_[x%d_]" : "q%d_[x%d_ * t%d_]";
    cg_ind(c);
    cg_o(c, el, tid, x, tid);
    cg_o(c, " = (%s)(", T);
    if (opn) {
        cg_o(c, el, tid, x, tid);
        cg_o(c, " %s (", opn);
    }
    cg_vx_elem(c, vx, rhs, unit ? EL_UNIT : EL_STRIDED, x);
    cg_o(c, opn ? "));\n" : ");\n");
}

/* A view assignment whose target and views are all proven in their boxes (version.h): the
 * storage addressed as pointers and strides, one length test per view, and the fused loop
 * (unit strides: a loop the compiler vectorizes). */
static bool assign_view_fast(C *c, const VX *vx, const OrnNode *tg, const OrnNode *rhs, int tid,
                             int x, OrnOp op, OrnTypeKind tk)
{
    if (!orn_cg_view_fusable(tg, rhs) || !cg_view_fast(c, tg)) return false;
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup && !cg_view_fast(c, vx->views[i].n)) return false;
    const char *T = cg_ctype(tk), *opn = cg_assign_op(op);
    cg_ol(c, "{");
    c->ind++;
    cg_view_decl(c, tg, tid); /* the target's subscripts first: left to right */
    cg_vx_decls(c, vx, true);
    for (int i = 0; i < vx->nviews; i++) {
        const VLeaf *l = &vx->views[i];
        if (!l->dup)
            cg_ol(c, "if (n%d_ != n%d_) orn_std_len_mismatch(P_, n%d_, n%d_, %d);", tid, l->id, tid,
                  l->id, c->line);
    }
    cg_vx_unit_cond(c, vx, tid);
    for (int unit = 1; unit >= 0; unit--) {
        if (!unit) cg_ol(c, "} else {");
        c->ind++;
        if (unit) cg_ol(c, "_Pragma(\"omp simd\")");
        cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < n%d_; x%d_++)", x, x, tid, x);
        c->ind++;
        vx_store(c, vx, rhs, tid, x, T, opn, unit);
        c->ind -= 2;
    }
    cg_ol(c, "}");
    c->ind--;
    cg_ol(c, "}");
    return true;
}

/* The opening of a view assignment: the target's vector (its subscripts first: left to
 * right), the right side's scalars and views, and each view's length against the target's. */
static void open_view_assign(C *c, const VX *vx, const OrnNode *tg, int tid)
{
    cg_ind(c);
    cg_o(c, "OrnStdVec w%d_%s = ", tid, cg_vec_scope(c, tg));
    cg_vec_ctor(c, tg, true);
    cg_o(c, ";\n");
    cg_vx_setup(c, vx, -2);
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup) cg_ol(c, "orn_std_vec_same(&w%d_, &w%d_);", tid, vx->views[i].id);
}

/* `B[r, :] += e` (or -=) one element at a time through the view (orn_std_vadd_). */
static void buffer_add_each(C *c, const VX *vx, const OrnNode *rhs, int tid, int x, OrnOp op,
                            OrnTypeKind tk)
{
    cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
    cg_ind(c);
    cg_o(c, "    orn_std_vadd_%s(&w%d_, x%d_, (%s)(%s(", cg_sfx(tk), tid, x, cg_ctype(tk),
         op == OP_SUB ? "-" : "");
    cg_vx_elem(c, vx, rhs, EL_SLOW, x);
    cg_o(c, ")));\n");
}

/* The test that a buffer row lies in the box of the buffer's in-place adds, B<k>_: the
 * row's first and last keys (storage dimension sdim along the row, osdim the other, at key
 * `key`; len elements; all C expressions), o0<tid>_ the first one's offset, and the start
 * of the condition `if (len > 0 && both in the box`, for the caller to go on with. */
static void row_in_box(C *c, int tid, int k, const char *sdim, const char *osdim, const char *len,
                       const char *key)
{
    cg_ol(c, "int64_t b0%d_[2], b1%d_[2];", tid, tid);
    cg_ol(c, "b0%d_[%s] = 0, b1%d_[%s] = %s - 1;", tid, sdim, tid, sdim, len);
    cg_ol(c, "b0%d_[%s] = b1%d_[%s] = %s;", tid, osdim, tid, osdim, key);
    cg_ol(c, "const int64_t o0%d_ = orn_rt_box_off(&B%d_, 2, b0%d_);", tid, k, tid);
    cg_ind(c);
    cg_o(c, "if (%s > 0 && o0%d_ >= 0 && orn_rt_box_off(&B%d_, 2, b1%d_) >= 0", len, tid, k, tid);
}

/* The adds of a buffer row found in place in the box B<k>_ at offset o0<tid>_, the row's
 * stride B<k>_.s[sdim] (sdim a C expression), over len elements (a C expression): at unit
 * strides a loop the compiler vectorizes, else strided. */
static void inplace_adds(C *c, const VX *vx, const OrnNode *rhs, int tid, int x, int k,
                         const char *sdim, const char *len, const char *T, const char *neg)
{
    cg_ol(c, "%s *const q%d_ = (%s *)(void *)B%d_.base + o0%d_;", T, tid, T, k, tid);
    cg_ol(c, "const int64_t t%d_ = B%d_.s[%s];", tid, k, sdim);
    cg_vx_unit_cond(c, vx, tid);
    for (int unit = 1; unit >= 0; unit--) {
        if (!unit) cg_ol(c, "} else {");
        c->ind++;
        cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < %s; x%d_++)", x, x, len, x);
        cg_ind(c);
        if (unit)
            cg_o(c, "    q%d_[x%d_] += (%s)(%s(", tid, x, T, neg);
        else
            cg_o(c, "    q%d_[x%d_ * t%d_] += (%s)(%s(", tid, x, tid, T, neg);
        cg_vx_elem(c, vx, rhs, unit ? EL_UNIT : EL_STRIDED, x);
        cg_o(c, "));\n");
        c->ind--;
    }
    cg_ol(c, "}");
}

/* `B[r, :] += e` (or -=) into a buffer in a loop body: where the buffer's updates go in place
 * (its hoisted box B<k>_, orn_rt_bbox: the target, the rank's copy or the dense store) and
 * the whole row lies in it, and every view of e is in its box, a strided loop adding into
 * that storage (unit strides: a loop the compiler vectorizes); else an add per element
 * (orn_std_vadd_). The same additions, element by element, either way. */
static void buffer_view_add(C *c, const VX *vx, const OrnNode *tg, const OrnNode *rhs, int tid,
                            int x, OrnOp op, OrnTypeKind tk)
{
    const char *T = cg_ctype(tk), *neg = op == OP_SUB ? "-" : "";
    int k = cg_array_k(c, tg, orn_cg_base_sym(tg));
    char len[32], sdim[32], osdim[32], key[64];
    snprintf(len, sizeof len, "w%d_.len", tid);
    snprintf(sdim, sizeof sdim, "w%d_.dim", tid);
    snprintf(osdim, sizeof osdim, "1 - w%d_.dim", tid);
    snprintf(key, sizeof key, "w%d_.key[1 - w%d_.dim]", tid, tid);
    row_in_box(c, tid, k, sdim, osdim, len, key);
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup) cg_o(c, " && w%d_.p", vx->views[i].id);
    cg_o(c, ") {\n");
    c->ind++;
    cg_vx_hoist(c, vx);
    inplace_adds(c, vx, rhs, tid, x, k, sdim, len, T, neg);
    c->ind--;
    cg_ol(c, "} else {");
    c->ind++;
    buffer_add_each(c, vx, rhs, tid, x, op, tk);
    c->ind--;
    cg_ol(c, "}");
}

/* `B[r, :] += e` (or -=) into a buffer in a loop body where every view of e is a fast leaf
 * (a view proven in its box, a local array: cg_leaf_fast): the leaves as pointers, the
 * target's row located in the buffer's hoisted box B<k>_ by its fixed subscript -- no
 * descriptor is built per element of the loop around it (dense logistic regression's
 * `dg[0, :] += err * X[i, :]`, per sample). Where the row is not all in the box or a length
 * differs, the target's vector and an add per element, as buffer_view_add's, which reports
 * a subscript out of range, then a length, as before. The fixed subscript is pure: it is
 * evaluated again there. */
static bool buffer_view_add_fast(C *c, const VX *vx, const OrnNode *tg, const OrnNode *rhs, int tid,
                                 int x, OrnOp op, OrnTypeKind tk)
{
    const OrnSym *s = orn_cg_base_sym(tg);
    int dim = 0;
    const OrnNode *fixed = NULL;
    if (c->cuda || c->warp != WARP_NONE || !vx->nviews || !s || !s->type || s->type->ndims != 2 ||
        !orn_cg_view_parts(tg, &dim, &fixed) || !fixed || cg_impure(fixed))
        return false;
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup &&
            (cg_jam_leaf(c, vx->views[i].n) || !cg_leaf_fast(c, vx->views[i].n)))
            return false;
    const char *T = cg_ctype(tk), *neg = op == OP_SUB ? "-" : "";
    int k = cg_array_k(c, tg, s), sd = cg_sdim(cg_perm_of(c, s), dim);
    cg_ol(c, "{");
    c->ind++;
    cg_ind(c);
    cg_o(c, "const int64_t f%d_ = ", tid); /* the target's subscripts first: left to right */
    cg_ex_as(c, fixed, T_I64);
    cg_o(c, ";\n");
    cg_ind(c);
    cg_o(c, "const int64_t n%d_ = ", tid);
    cg_put_dims(c, s);
    cg_o(c, "[%d];\n", sd);
    cg_vx_decls(c, vx, true);
    char len[32], sdim[32], osdim[32], key[32];
    snprintf(len, sizeof len, "n%d_", tid);
    snprintf(sdim, sizeof sdim, "%d", sd);
    snprintf(osdim, sizeof osdim, "%d", 1 - sd);
    snprintf(key, sizeof key, "f%d_", tid);
    row_in_box(c, tid, k, sdim, osdim, len, key);
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup) cg_o(c, " && n%d_ == n%d_", vx->views[i].id, tid);
    cg_o(c, ") {\n");
    c->ind++;
    inplace_adds(c, vx, rhs, tid, x, k, sdim, len, T, neg);
    c->ind--;
    cg_ol(c, "} else {");
    c->ind++;
    cg_ind(c);
    cg_o(c, "OrnStdVec w%d_ = ", tid);
    cg_vec_ctor(c, tg, false);
    cg_o(c, ";\n");
    for (int i = 0; i < vx->nviews; i++)
        if (!vx->views[i].dup)
            cg_ol(c, "if (w%d_.len != n%d_) orn_std_len_mismatch(P_, w%d_.len, n%d_, %d);", tid,
                  vx->views[i].id, tid, vx->views[i].id, c->line);
    cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
    cg_ind(c);
    cg_o(c, "    orn_std_vadd_%s(&w%d_, x%d_, (%s)(%s(", cg_sfx(tk), tid, x, T, neg);
    cg_vx_elem(c, vx, rhs, EL_STRIDED, x);
    cg_o(c, ")));\n");
    c->ind--;
    cg_ol(c, "}");
    c->ind--;
    cg_ol(c, "}");
    return true;
}

/* A view assignment in a warp kernel (cuda_warp.c): the leaves on every lane, then element x
 * on lane x mod 32, with the host's arithmetic, LANE_CHUNK elements of a lane at a time. On the
 * device a view's pointer is never NULL (an access outside the box goes to scratch), so there is no
 * slow version. */
static void assign_view_lanes(C *c, const VX *vx, const OrnNode *tg, const OrnNode *rhs, int tid,
                              int x, OrnOp op, OrnTypeKind tk)
{
    const char *T = cg_ctype(tk), *opn = cg_assign_op(op);
    cg_ol(c, "{");
    c->ind++;
    open_view_assign(c, vx, tg, tid);
    cg_ol(c, "%s *const q%d_ = (%s *)(void *)w%d_.p;", T, tid, T, tid);
    cg_ol(c, "const int64_t t%d_ = w%d_.stride;", tid, tid);
    cg_vx_hoist(c, vx);
    cg_warp_mid(c);
    c->warp = WARP_SPLIT;
    /* LANE_CHUNK elements per lane at a time: all their reads, then all their writes, with
     * no branch between (the tail one element at a time). The view is fusable (element x
     * reads element x of the target and of the other views, and views of one array along
     * one dimension share no address at different x), so this is the element-by-element
     * loop's result; the reads of a chunk are in flight together where a store between them
     * would otherwise make each wait for the one before. */
    int y = c->tmp++;
    cg_ol(c, "int64_t x%d_ = L_.lane;", x);
    cg_ol(c, "for (; x%d_ + 32 * %d < w%d_.len; x%d_ += 32 * %d) {", x, LANE_CHUNK - 1, tid, x,
          LANE_CHUNK);
    c->ind++;
    cg_ol(c, "%s v%d_[%d];", T, x, LANE_CHUNK);
    for (int u = 0; u < LANE_CHUNK; u++) {
        cg_ol(c, "{");
        c->ind++;
        cg_ol(c, "const int64_t x%d_ = x%d_ + %d;", y, x, 32 * u);
        cg_ind(c);
        cg_o(c, "v%d_[%d] = (%s)(", x, u, T);
        if (opn) cg_o(c, "q%d_[x%d_ * t%d_] %s (", tid, y, tid, opn);
        cg_vx_elem(c, vx, rhs, EL_STRIDED, y);
        cg_o(c, opn ? "));\n" : ");\n");
        c->ind--;
        cg_ol(c, "}");
    }
    for (int u = 0; u < LANE_CHUNK; u++)
        cg_ol(c, "q%d_[(x%d_ + %d) * t%d_] = v%d_[%d];", tid, x, 32 * u, tid, x, u);
    c->ind--;
    cg_ol(c, "}");
    cg_ol(c, "for (; x%d_ < w%d_.len; x%d_ += 32)", x, tid, x);
    c->ind++;
    vx_store(c, vx, rhs, tid, x, T, opn, 0);
    c->ind--;
    c->warp = WARP_UNIFORM;
    c->ind--;
    cg_ol(c, "}");
}

void cg_st_assign_view(C *c, const OrnNode *s)
{
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    OrnOp op = s->u.assign.op;
    const OrnSym *ts = orn_cg_base_sym(tg);
    bool buf = cg_is_buffer(ts);
    OrnTypeKind tk = cg_elem_of(ts->type);
    const char *T = cg_ctype(tk);
    VX *vx = calloc(1, sizeof *vx);
    int tid = c->tmp++, x = c->tmp++;
    if (!buf) {
        vx->target = tg;
        vx->target_id = tid;
    }
    cg_vx_collect(c, vx, rhs);
    if (!buf && assign_view_fast(c, vx, tg, rhs, tid, x, op, tk)) {
        free(vx);
        return;
    }
    if (buf && (c->cx == CX_BODY || c->cx == CX_CLONE) &&
        buffer_view_add_fast(c, vx, tg, rhs, tid, x, op, tk)) {
        free(vx);
        return;
    }
    if (c->warp == WARP_UNIFORM && cg_warp_view_split(c, s)) {
        assign_view_lanes(c, vx, tg, rhs, tid, x, op, tk);
        free(vx);
        return;
    }
    bool lane0 = c->warp == WARP_UNIFORM && !buf; /* not fusable: lane 0 does it all */
    if (lane0) {
        cg_warp_mid(c);
        cg_ol(c, "if (L_.lane == 0) {");
        c->ind++;
    }
    cg_ol(c, "{");
    c->ind++;
    open_view_assign(c, vx, tg, tid);
    const char *opn = cg_assign_op(op);
    if (buf && !c->cuda && (c->cx == CX_BODY || c->cx == CX_CLONE)) {
        buffer_view_add(c, vx, tg, rhs, tid, x, op, tk);
    } else if (buf) {
        buffer_add_each(c, vx, rhs, tid, x, op, tk);
    } else if (!orn_cg_view_fusable(tg, rhs)) {
        /* the right side reads the target across the other dimension: evaluate it first */
        OrnTypeKind rk = cg_elem_of(rhs->type);
        if (rhs->type && rhs->type->kind != T_VIEW) rk = rhs->type->kind;
        const char *R = cg_ctype(rk);
        cg_ol(c, "%s *m%d_ = malloc((size_t)(w%d_.len > 0 ? w%d_.len : 1) * sizeof(%s));", R, tid,
              tid, tid, R);
        cg_ol(c, "if (!m%d_) orn_std_die(P_, %d, \"out of memory\");", tid, c->line);
        cg_ind(c);
        cg_o(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++) m%d_[x%d_] = ", x, x, tid, x, tid,
             x);
        cg_vx_elem(c, vx, rhs, EL_SLOW, x);
        cg_o(c, ";\n");
        cg_ind(c);
        cg_o(c,
             "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++) orn_std_vset_%s(&w%d_, x%d_, (%s)(",
             x, x, tid, x, cg_sfx(tk), tid, x, T);
        if (opn) cg_o(c, "orn_std_vget_%s(&w%d_, x%d_) %s ", cg_sfx(tk), tid, x, opn);
        cg_o(c, "m%d_[x%d_]));\n", tid, x);
        cg_ol(c, "free(m%d_);", tid);
    } else {
        cg_ind(c);
        cg_vx_fast_cond(c, vx, tid);
        c->ind++;
        cg_ol(c, "%s *const q%d_ = (%s *)(void *)w%d_.p;", T, tid, T, tid);
        cg_ol(c, "const int64_t t%d_ = w%d_.stride;", tid, tid);
        cg_vx_hoist(c, vx);
        /* unit strides: a plain loop the compiler vectorizes. Element x of the right side
         * reads element x of any view of the target's array, so no iteration depends on
         * another (cross-dimension reads were materialized above): omp simd is safe. */
        cg_vx_unit_cond(c, vx, tid);
        c->ind++;
        cg_ol(c, "_Pragma(\"omp simd\")");
        cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
        c->ind++;
        vx_store(c, vx, rhs, tid, x, T, opn, 1);
        c->ind -= 2;
        cg_ol(c, "} else {");
        c->ind++;
        cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
        c->ind++;
        vx_store(c, vx, rhs, tid, x, T, opn, 0);
        c->ind -= 2;
        cg_ol(c, "}");
        c->ind--;
        cg_ol(c, "} else {");
        c->ind++;
        cg_ol(c, "for (int64_t x%d_ = 0; x%d_ < w%d_.len; x%d_++)", x, x, tid, x);
        c->ind++;
        cg_ind(c);
        cg_o(c, "orn_std_vset_%s(&w%d_, x%d_, (%s)(", cg_sfx(tk), tid, x, T);
        if (opn) cg_o(c, "orn_std_vget_%s(&w%d_, x%d_) %s (", cg_sfx(tk), tid, x, opn);
        cg_vx_elem(c, vx, rhs, EL_SLOW, x);
        cg_o(c, opn ? ")));\n" : "));\n");
        c->ind -= 2;
        cg_ol(c, "}");
    }
    if (!buf && cg_vec_copied(c, tg)) cg_ol(c, "orn_std_vec_store(&w%d_);", tid);
    c->ind--;
    cg_ol(c, "}");
    if (lane0) {
        c->ind--;
        cg_ol(c, "}");
    }
    free(vx);
}
