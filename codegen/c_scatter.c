/* c_scatter.c: the C back end: a dense run whose body is one keyed add into a buffer (a
 * histogram, column sums), its keys computed a chunk at a time and its adds in place when
 * they lie in the buffer's box (emit_c_int.h). */
#include "emit_c_int.h"

#include <stdint.h>
#include <stdio.h>

/* An expression the key pass may evaluate ahead of the adds (cg_scatter_loop): a lane's
 * without element reads, which could see an earlier element's add. */
static bool scatter_expr(const OrnNode *e)
{
    return cg_pure_expr(e, false, NULL, 0);
}

/* A run's body that is one `B[e] += d` or `-= d` into a one-dimensional buffer B, e and d
 * scatter_expr (a histogram: `H[i64(v * bins)] += 1`): the statement, else NULL. */
const OrnNode *cg_scatter_stmt(C *c, const OrnCgLoop *l, const OrnNode *blk)
{
    const OrnNode *s = (blk ? blk : l->loop->node->u.parfor.body)->u.block.stmts;
    if (!s || s->next || s->kind != N_ASSIGN || l->uses_rng || c->cuda || c->lanes) return NULL;
    if (s->u.assign.op != OP_ADD && s->u.assign.op != OP_SUB) return NULL;
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    const OrnSym *b = tg->kind == N_INDEX ? orn_cg_base_sym(tg) : NULL;
    if (!b || !cg_is_buffer(b) || cg_promoted(c, b) >= 0 || cg_row_of(c, tg) >= 0) return NULL;
    const OrnNode *sub = tg->u.index.subs;
    if (!sub || sub->next || sub->kind == N_SLICE || !scatter_expr(sub) || !scatter_expr(rhs))
        return NULL;
    OrnTypeKind k = cg_elem_of(b->type), rk = cg_kind_of(rhs);
    bool num = (k == T_I32 || k == T_I64 || k == T_F32 || k == T_F64) &&
               (rk == T_I32 || rk == T_I64 || rk == T_F32 || rk == T_F64);
    return num ? s : NULL;
}

/* Bind one element of a dense run for an expression: its key and value pointer. */
static void scatter_bind(C *c, const OrnSym *last, const char *vt)
{
    if (last) cg_ol(c, "const int64_t %s __attribute__((unused)) = j_;", cg_nm(c, last));
    if (vt) cg_ol(c, "%s *const vp_ __attribute__((unused)) = &row_[j_];", vt);
}

/* The elements [from, to) of a run whose body is one keyed add into a buffer (cg_scatter_stmt),
 * SCATTER_CHUNK at a time: first every key of the chunk, with their least and greatest (an
 * `omp simd` pass), then, when both lie in the buffer's box, every add in place without a
 * test per element, else each through orn_rt_bbadd_ as written. The same keys, deltas and
 * adds in the same order; only the keys of a chunk are computed before its adds, which
 * read nothing the adds write (scatter_expr). A histogram's loop was a compare and a
 * branch more per element than C's. The in-box adds are unrolled 8 times. */
#define SCATTER_CHUNK 256
/* B's box offsets o0_, o1_ of the consecutive keys kl_ = from + off .. kh_ = to - 1 + off
 * of a run (cg_scatter_loop, cg_scatter_rows): -1 where the key lies outside. */
static void scatter_ends(C *c, int k, const char *from, const char *to, int64_t off)
{
    cg_ol(c, "const int64_t kl_ = %s + INT64_C(%lld), kh_ = %s - 1 + INT64_C(%lld);", from,
          (long long)off, to, (long long)off);
    cg_ol(c,
          "const int64_t o0_ = orn_rt_box_off(&B%d_, 1, &kl_), o1_ = orn_rt_box_off(&B%d_, 1, "
          "&kh_);",
          k, k);
}

/* hb_, where B's element of key x is hb_[x], from the offset o0_ of key `lo` (the address
 * computed as an integer: hb_ itself may lie outside the box). */
static void scatter_base(C *c, int k, const char *T, const char *lo)
{
    cg_ol(c,
          "%s *const hb_ = (%s *)(void *)((uintptr_t)B%d_.base + (uintptr_t)(o0_ - %s) * "
          "sizeof(%s));",
          T, T, k, lo, T);
}

/* The adds of one of cg_scatter_loop's ranges, [from, to): when the keys' least (`lo`, a
 * variable) and greatest lie in B's box (o0_ and o1_ not negative), each in place at
 * hb_[KEY] (`fast`, a C expression of j_), unrolled when `unroll`; else each through
 * orn_rt_bbadd_ at the key `slow` (a pointer expression; NULL: the subscript evaluated again). */
static void scatter_adds(C *c, const OrnSym *last, const char *vt, const char *from, const char *to,
                         const OrnNode *s, const char *lo, const char *fast, const char *slow,
                         bool unroll, int lvl)
{
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    const OrnSym *b = orn_cg_base_sym(tg);
    int k = cg_array_k(c, tg, b);
    OrnTypeKind tk = cg_elem_of(b->type);
    const char *T = cg_ctype(tk), *rt = cg_ctype(cg_kind_of(rhs));
    const char *neg = s->u.assign.op == OP_SUB ? "-" : "";
    for (int in = 1; in >= 0; in--) {
        c->ind = lvl;
        if (in) {
            cg_ol(c, "if (o0_ >= 0 && o1_ >= 0) {");
            c->ind = lvl + 1;
            scatter_base(c, k, T, lo);
        } else {
            cg_ol(c, "} else {");
        }
        c->ind = lvl + 1;
        /* unrolled: the adds are a load and a read-modify-write each, and the loop's own
         * increment, compare and branch were a third of the pass (histogram 1.15 -> 1.0) */
        if (in && unroll) cg_ol(c, "_Pragma(\"GCC unroll 8\")");
        cg_ol(c, "for (int64_t j_ = %s; j_ < %s; j_++) {", from, to);
        c->ind = lvl + 2;
        scatter_bind(c, last, vt);
        cg_ind(c);
        cg_o(c, "const %s r_ = ", rt);
        cg_ex(c, rhs);
        cg_o(c, ";\n");
        if (in) {
            cg_ol(c, "hb_[%s] += (%s)(%sr_);", fast, T, neg);
        } else {
            if (!slow) {
                cg_ind(c);
                cg_o(c, "const int64_t k_ = ");
                cg_ex_subs(c, tg->u.index.subs, b);
                cg_o(c, ";\n");
            }
            cg_ol(c, "orn_rt_bbadd_%s(&B%d_, &V_[%d], ORN_RT_NDL(1, %u), %s, (%s)(%sr_));",
                  cg_sfx(tk), k, k, cg_site(c, tg, b->name->s, tg->span.line), slow ? slow : "&k_",
                  T, neg);
        }
        c->ind = lvl + 1;
        cg_ol(c, "}");
    }
    c->ind = lvl;
    cg_ol(c, "}");
}

void cg_scatter_loop(C *c, const OrnSym *last, const char *vt, const char *from, const char *to,
                     const OrnNode *s, int lvl)
{
    const OrnNode *tg = s->u.assign.target;
    const OrnSym *b = orn_cg_base_sym(tg);
    int k = cg_array_k(c, tg, b);
    int64_t off;
    if (last && cg_var_off(tg->u.index.subs, last, &off)) {
        /* the run's own key plus a constant, `S[j + off] += d` (column sums of a matrix
         * through a buffer): the run's keys are consecutive, so its first and last key bound
         * them all, and the in-box adds are a plain loop gcc vectorizes (it checks at run
         * time that B's elements and the run's do not overlap). Through the key pass's list
         * of keys it was a scalar add per element, 2.5 times C's time. */
        char fast[64];
        snprintf(fast, sizeof fast, "j_ + INT64_C(%lld)", (long long)off);
        c->ind = lvl;
        cg_ol(c, "if (%s < %s) {", from, to);
        c->ind = lvl + 1;
        scatter_ends(c, k, from, to, off);
        scatter_adds(c, last, vt, from, to, s, "kl_", fast, NULL, false, lvl + 1);
        c->ind = lvl;
        cg_ol(c, "}");
        return;
    }
    c->ind = lvl;
    cg_ol(c, "for (int64_t jc_ = %s; jc_ < %s;) {", from, to);
    c->ind = lvl + 1;
    cg_ol(c, "const int64_t je_ = %s - jc_ < %d ? %s : jc_ + %d;", to, SCATTER_CHUNK, to,
          SCATTER_CHUNK);
    cg_ol(c, "int64_t ks_[%d], kmin_ = INT64_MAX, kmax_ = INT64_MIN;", SCATTER_CHUNK);
    cg_ol(c, "_Pragma(\"omp simd reduction(min:kmin_) reduction(max:kmax_)\")");
    cg_ol(c, "for (int64_t j_ = jc_; j_ < je_; j_++) {");
    c->ind = lvl + 2;
    scatter_bind(c, last, vt);
    cg_ind(c);
    cg_o(c, "const int64_t k_ = ");
    cg_ex_subs(c, tg->u.index.subs, b);
    cg_o(c, ";\n");
    cg_ol(c, "ks_[j_ - jc_] = k_;");
    cg_ol(c, "kmin_ = k_ < kmin_ ? k_ : kmin_;");
    cg_ol(c, "kmax_ = k_ > kmax_ ? k_ : kmax_;");
    c->ind = lvl + 1;
    cg_ol(c, "}");
    cg_ol(c,
          "const int64_t o0_ = orn_rt_box_off(&B%d_, 1, &kmin_), o1_ = orn_rt_box_off(&B%d_, 1, "
          "&kmax_);",
          k, k);
    scatter_adds(c, last, vt, "jc_", "je_", s, "kmin_", "ks_[j_ - jc_]", "&ks_[j_ - jc_]", true,
                 lvl + 1);
    c->ind = lvl + 1;
    cg_ol(c, "jc_ = je_;");
    c->ind = lvl;
    cg_ol(c, "}");
}

/* A dense space of two or more keys whose body is cg_scatter_loop's statement keyed by the
 * run's own key plus a constant (column sums, `S[j] += A[i, j]`): two whole rows at a time,
 * each element of B getting the first row's delta and then the second's -- the same adds
 * in the same order, with B's elements loaded and stored once for both rows (as gcc's
 * unroll-and-jam does for the C loop: column sums 4.6 -> 3.6 ms, C 3.7-4.5). The delta reads no
 * element (scatter_expr) and B is not the space (one dimension against two or more), so nothing the
 * first row's adds write is read by the second's. Rows whose keys leave B's box, and the rest of
 * the block, go on as runs. */
void cg_scatter_rows(C *c, const OrnCgLoop *l, const OrnSym *const *keys, int nd, const char *vt)
{
    if (nd < 2) return;
    const OrnSym *last = keys[nd - 1], *row = keys[nd - 2];
    const OrnNode *s = c->cx == CX_BODY && last ? cg_scatter_stmt(c, l, NULL) : NULL;
    int64_t off;
    if (!s || !cg_var_off(s->u.assign.target->u.index.subs, last, &off)) return;
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    const OrnSym *b = orn_cg_base_sym(tg);
    int k = cg_array_k(c, tg, b);
    const char *T = cg_ctype(cg_elem_of(b->type)), *rt = cg_ctype(cg_kind_of(rhs));
    const char *neg = s->u.assign.op == OP_SUB ? "-" : "";
    int r = nd - 2;
    c->ind = 2;
    cg_ol(c,
          "if (j0_ == b_->lo[%d] && j1_ == hl_ && j1_ > j0_ && end_ - e_ >= 2 * (hl_ - j0_) && "
          "kk_[%d] + 1 < b_->hi[%d]) {",
          nd - 1, r, r);
    c->ind = 3;
    scatter_ends(c, k, "j0_", "j1_", off);
    cg_ol(c, "if (o0_ >= 0 && o1_ >= 0) {");
    c->ind = 4;
    scatter_base(c, k, T, "kl_");
    cg_ol(c, "const int64_t w_ = hl_ - j0_;");
    cg_ol(c, "for (int64_t j_ = j0_; j_ < j1_; j_++) {");
    for (int h = 0; h < 2; h++) {
        c->ind = 5;
        cg_ol(c, "%s r%d_;", rt, h);
        cg_ol(c, "{");
        c->ind = 6;
        if (h && row)
            cg_ol(c, "const int64_t %s __attribute__((unused)) = kk_[%d] + 1;", cg_nm(c, row), r);
        cg_ol(c, "const int64_t %s __attribute__((unused)) = j_;", cg_nm(c, last));
        if (vt)
            cg_ol(c, "%s *const vp_ __attribute__((unused)) = &row_[j_%s];", vt, h ? " + w_" : "");
        cg_ind(c);
        cg_o(c, "r%d_ = ", h);
        cg_ex(c, rhs);
        cg_o(c, ";\n");
        c->ind = 5;
        cg_ol(c, "}");
    }
    cg_ol(c, "%s t_ = hb_[j_ + INT64_C(%lld)];", T, (long long)off);
    cg_ol(c, "t_ += (%s)(%sr0_);", T, neg);
    cg_ol(c, "t_ += (%s)(%sr1_);", T, neg);
    cg_ol(c, "hb_[j_ + INT64_C(%lld)] = t_;", (long long)off);
    c->ind = 4;
    cg_ol(c, "}");
    cg_ol(c, "e_ += 2 * w_;");
    cg_ol(c, "kk_[%d] += 2;", r);
    cg_ol(c, "for (int d_ = %d; d_ > 0 && kk_[d_] >= b_->hi[d_]; d_--) {", r);
    cg_ol(c, "    kk_[d_] = b_->lo[d_];");
    cg_ol(c, "    kk_[d_ - 1]++;");
    cg_ol(c, "}");
    cg_ol(c, "continue;");
    c->ind = 3;
    cg_ol(c, "}");
    c->ind = 2;
    cg_ol(c, "}");
}
