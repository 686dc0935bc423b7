/* c_stmt.c: the C back end: statements (emit_c_int.h). */
#include "emit_c_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- statements */

void cg_st_list(C *c, const OrnNode *list)
{
    for (; list; list = list->next) cg_st(c, list);
}

void cg_st_block(C *c, const OrnNode *blk)
{
    c->ind++;
    cg_warp_block_begin(c);
    if (blk) cg_st_list(c, blk->kind == N_BLOCK ? blk->u.block.stmts : blk);
    cg_warp_block_end(c);
    c->ind--;
}

const char *cg_assign_op(OrnOp op)
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
    const char *opn = cg_assign_op(op);
    cg_ind(c);
    if (k == T_STR && op == OP_ADD) { /* s += t joins */
        cg_o(c, "%s = orn_std_str_cat(P_, %s, ", lhs, lhs);
        cg_ex(c, rhs);
        cg_o(c, ", %d);\n", c->line);
        return;
    }
    if (k == T_STR || k == T_BOOL) {
        cg_o(c, "%s = ", lhs);
        cg_ex(c, rhs);
        cg_o(c, ";\n");
        return;
    }
    cg_o(c, "%s = (%s)(", lhs, cg_ctype(k));
    if (opn) cg_o(c, "%s %s (", lhs, opn);
    cg_ex(c, rhs);
    cg_o(c, opn ? "));\n" : ");\n");
}

/* CUDA: an update of accumulator i (`x += e`, `x *= e`, `x = min(x, e)`, ...) is recorded
 * for the host, which applies it in element order (runtime/gpu/gpu_data.c): its operand e,
 * converted as the CPU body's `x op e` converts it (decltype of the operation) and widened
 * exactly to double or int64_t; the host's operation in the wider type, rounded to x's type,
 * is the CPU body's. */
static void acc_record(C *c, int i, const OrnSym *acc, OrnOp op, const OrnNode *rhs)
{
    OrnTypeKind k = acc->type->kind;
    bool fl = k == T_F32 || k == T_F64;
    const OrnNode *e = rhs;
    int second = 0;
    char conv[64];
    snprintf(conv, sizeof conv, "(%s)0", cg_ctype(k));
    if (op == OP_NONE) { /* min / max: the other argument, as the call converts it */
        const OrnNode *a0 = cg_arg_n(rhs, 0);
        second = !(a0 && a0->kind == N_NAME && a0->u.name.sym == acc);
        e = cg_arg_n(rhs, second ? 0 : 1);
        snprintf(conv, sizeof conv, "(%s)0", cg_ctype(cg_kind_of(rhs))); /* the call's type */
    }
    int id = c->tmp++;
    cg_ol(c, "{");
    c->ind++;
    cg_ind(c);
    cg_o(c, "const auto r%d_ = (", id);
    cg_ex(c, e);
    cg_o(c, ");\n");
    cg_ol(c, "orn_gpu_acc_%s(a_, &lc_, %d, %d, (%s)(decltype(%s + r%d_))r%d_);", fl ? "f" : "i", i,
          second, fl ? "double" : "int64_t", conv, id, id);
    c->ind--;
    cg_ol(c, "}");
}

/* The subscript of access e that indexes its row pointer c->rows[rw] (c_for.c). */
static const OrnNode *row_sub(const C *c, const OrnNode *e, int rw)
{
    const OrnNode *x = e->u.index.subs;
    for (int d = 0; d < c->row_last[rw] && x; d++) x = x->next;
    return x;
}

/* The boxable view of the target of loop l's buffer view kb, or -1. */
static int buf_target_view(const OrnCgLoop *l, int kb)
{
    const OrnSym *t = l->arrays[kb].target;
    for (int k = 0; t && k < l->narrays; k++)
        if (l->arrays[k].sym == t && orn_cg_boxable(l, k)) return k;
    return -1;
}

void cg_buf_alias_prologue(C *c, const OrnCgLoop *l, const char *indent)
{
    for (int k = 0; k < l->narrays; k++) {
        int kt = cg_is_buffer(l->arrays[k].sym) ? buf_target_view(l, k) : -1;
        if (kt >= 0)
            cg_o(c,
                 "%sconst int bs%d_ __attribute__((unused)) = orn_rt_box_same(&B%d_, &X%d_, %d);\n",
                 indent, k, k, kt, l->arrays[kt].ndim);
    }
}

static void st_assign_elem(C *c, const OrnNode *s)
{
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    OrnOp op = s->u.assign.op;
    const OrnSym *ts = orn_cg_base_sym(tg);
    if (!ts) {
        cg_ice(c, s, "assignment to something that is not a named array");
        return;
    }
    if (cg_kind_of(tg) == T_VIEW) {
        cg_st_assign_view(c, s);
        return;
    }
    OrnTypeKind tk = cg_elem_of(ts->type);
    const char *T = cg_ctype(tk), *opn = cg_assign_op(op);
    int id = c->tmp++;
    int pv = cg_promoted(c, ts);
    if (pv >= 0) {
        /* the element lives in a local for this run (c_loop.c, body_csr): same temporaries
         * and conversions as the store below */
        cg_ol(c, "{");
        c->ind++;
        cg_ind(c);
        cg_o(c, "const %s r%d_ = ", cg_ctype(cg_kind_of(rhs)), id);
        cg_ex(c, rhs);
        cg_o(c, ";\n");
        if (cg_is_buffer(ts) && c->lanes && c->promo_add[pv]) /* c_loop.c, lane_loop */
            cg_ol(c, "pvl%d_[l_] += (%s)(r%d_);", pv, T, id);
        else if (cg_is_buffer(ts)) /* as orn_rt_bbadd_: the delta in the element type, added */
            cg_ol(c, "pv%d_ += (%s)(%sr%d_);", pv, T, op == OP_SUB ? "-" : "", id);
        else if (opn)
            cg_ol(c, "pv%d_ = (%s)(pv%d_ %s r%d_);", pv, T, pv, opn, id);
        else
            cg_ol(c, "pv%d_ = (%s)r%d_;", pv, T, id);
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    if (cg_is_local_array(ts)) {
        cg_ol(c, "{");
        c->ind++;
        cg_ind(c);
        cg_o(c, "%s *const e%d_ = &", T, id);
        cg_ex_index(c, tg);
        cg_o(c, ";\n");
        char lhs[32];
        snprintf(lhs, sizeof lhs, "*e%d_", id);
        assign_into(c, lhs, tk, op, rhs);
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    cg_ol(c, "{");
    c->ind++;
    cg_ind(c);
    cg_o(c, "const int64_t kk%d_[%d] = {", id, orn_list_len(tg->u.index.subs));
    cg_ex_subs(c, tg->u.index.subs, ts);
    cg_o(c, "};\n");
    /* a warp kernel: lane 0 writes, its right side evaluated there when it can be (cuda_warp.c) */
    bool lane0 = c->warp == WARP_UNIFORM && !cg_is_buffer(ts);
    bool rhs_all = !lane0 || !cg_warp_lane0(c, rhs);
    OrnTypeKind rk = cg_kind_of(rhs);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && lane0) {
            cg_warp_mid(c);
            cg_ol(c, "if (L_.lane == 0) {");
            c->ind++;
        }
        if (rhs_all != (pass == 0)) continue;
        cg_ind(c);
        cg_o(c, "const %s r%d_ = ", cg_ctype(rk), id);
        cg_ex(c, rhs);
        cg_o(c, ";\n");
    }
    char neg[8];
    snprintf(neg, sizeof neg, "%s", op == OP_SUB ? "-" : "");
    if (cg_in_loop_ctx(c)) {
        int k = cg_array_k(c, tg, ts);
        int nd = orn_list_len(tg->u.index.subs);
        if (cg_is_buffer(ts) && c->cuda) { /* recorded, applied on the host (cuda_gpu.c) */
            cg_ol(c, "orn_gpu_badd_%s(a_, &lc_, %d, %d, kk%d_, (%s)(%sr%d_));", cg_sfx(tk), k, nd,
                  id, T, neg, id);
        } else if (cg_is_buffer(ts) && (c->cx == CX_BODY || c->cx == CX_CLONE)) {
            int rw = cg_row_of(c, tg);
            bool sure = rw >= 0 && c->row_sure[rw]; /* a version that tested it (c_for.c) */
            if (rw >= 0 && c->row_tmp[rw] >= 0) {   /* its element in a local (c_coljam.c) */
                cg_ol(c, "bt%d_ += (%s)(%sr%d_);", c->row_tmp[rw], T, neg, id);
                cg_ol(c, "(void)kk%d_;", id);
            } else if (rw >= 0) { /* the fast loop's row in place (c_for.c), when there is one */
                cg_ind(c);
                if (sure)
                    cg_o(c, "rp%d_[", c->row_id[rw]);
                else
                    cg_o(c, "if (rp%d_) rp%d_[", c->row_id[rw], c->row_id[rw]);
                cg_ex_as(c, row_sub(c, tg, rw), T_I64);
                cg_o(c, "] += (%s)(%sr%d_);\n", T, neg, id);
                cg_ind(c);
                cg_o(c, sure ? "(void)kk%d_;\n" : "else ", id);
            } else {
                cg_ind(c);
            }
            if (!sure && rw < 0 && c->bufs_sure) /* its key tested (foreach_csr_versioned) */
                cg_o(
                    c,
                    "((%s *)(void *)B%d_.base)[orn_rt_box_at(&B%d_, %d, kk%d_)] += (%s)(%sr%d_);\n",
                    T, k, k, nd, id, T, neg, id);
            else if (!sure)
                cg_o(c,
                     "orn_rt_bbadd_%s(&B%d_, &V_[%d], ORN_RT_NDL(%d, %u), kk%d_, (%s)(%sr%d_));\n",
                     cg_sfx(tk), k, k, nd, cg_site(c, tg, ts->name->s, tg->span.line), id, T, neg,
                     id);
        } else if (cg_is_buffer(ts)) {
            cg_ol(c, "orn_rt_badd_%s(&V_[%d], ORN_RT_NDL(%d, %u), kk%d_, (%s)(%sr%d_));",
                  cg_sfx(tk), k, nd, cg_site(c, tg, ts->name->s, tg->span.line), id, T, neg, id);
        } else if (orn_cg_boxable(c->loop, k)) {
            int rw = c->fast ? cg_row_of(c, tg) : -1;
            if (rw >= 0) { /* the fast loop's row (c_for.c) */
                cg_ind(c);
                cg_o(c, "%s *const e%d_ = rp%d_ + ", T, id, c->row_id[rw]);
                cg_ex_as(c, row_sub(c, tg, rw), T_I64);
                cg_o(c, ";\n");
                cg_ol(c, "(void)kk%d_;", id);
            } else if (c->fast)
                cg_ol(c,
                      "%s *const e%d_ = (%s *)(void *)X%d_.base + orn_rt_box_at(&X%d_, %d, kk%d_);",
                      T, id, T, k, k, nd, id);
            else
                cg_ol(c, "%s *const e%d_ = orn_rt_%s_%s(&X%d_, ORN_RT_NDL(%d, %u), kk%d_);", T, id,
                      opn ? "rw" : "wp", cg_sfx(tk), k, nd,
                      cg_site(c, tg, ts->name->s, tg->span.line), id);
            if (opn)
                cg_ol(c, "*e%d_ = (%s)(*e%d_ %s r%d_);", id, T, id, opn, id);
            else
                cg_ol(c, "*e%d_ = (%s)r%d_;", id, T, id);
        } else if (!opn) {
            cg_ol(c, "*(%s *)orn_rt_wptr(&V_[%d], kk%d_) = (%s)r%d_;", T, k, id, T, id);
        } else {
            cg_ol(c, "%s *const e%d_ = (%s *)orn_std_rw(&V_[%d], kk%d_);", T, id, T, k, id);
            cg_ol(c, "*e%d_ = (%s)(*e%d_ %s r%d_);", id, T, id, opn, id);
        }
    } else {
        /* top level: the site names the target's occurrence on the line, for the caret */
        unsigned site = cg_site(c, tg, ts->name->s, (unsigned)c->line);
        if (cg_is_buffer(ts))
            cg_ol(c, "orn_std_badd_%s(P_, %s, kk%d_, (%s)(%sr%d_), %u);", cg_sfx(tk), cg_nm(c, ts),
                  id, T, neg, id, site);
        else if (!opn)
            cg_ol(c, "orn_std_dset_%s(P_, %s, kk%d_, (%s)r%d_, %u);", cg_sfx(tk), cg_nm(c, ts), id,
                  T, id, site);
        else
            cg_ol(c,
                  "orn_std_dset_%s(P_, %s, kk%d_, (%s)(orn_std_dget_%s(P_, %s, kk%d_, %u) %s "
                  "r%d_), %u);",
                  cg_sfx(tk), cg_nm(c, ts), id, T, cg_sfx(tk), cg_nm(c, ts), id, site, opn, id,
                  site);
    }
    if (lane0) {
        c->ind--;
        cg_ol(c, "}");
    }
    c->ind--;
    cg_ol(c, "}");
}

/* The iteration's value `v op= e` in a warp kernel: by lane 0 (cuda_warp.c). */
static void assign_value_lane0(C *c, OrnTypeKind k, OrnOp op, const OrnNode *rhs)
{
    if (cg_warp_lane0(c, rhs)) {
        cg_warp_mid(c);
        cg_ol(c, "if (L_.lane == 0) {");
        c->ind++;
        assign_into(c, "(*vp_)", k, op, rhs);
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    int id = c->tmp++;
    const char *opn = cg_assign_op(op);
    cg_ol(c, "{");
    c->ind++;
    cg_ind(c);
    cg_o(c, "const auto r%d_ = (", id);
    cg_ex(c, rhs);
    cg_o(c, ");\n");
    cg_warp_mid(c);
    if (k == T_STR || k == T_BOOL)
        cg_ol(c, "if (L_.lane == 0) (*vp_) = r%d_;", id);
    else if (opn)
        cg_ol(c, "if (L_.lane == 0) (*vp_) = (%s)((*vp_) %s (r%d_));", cg_ctype(k), opn, id);
    else
        cg_ol(c, "if (L_.lane == 0) (*vp_) = (%s)(r%d_);", cg_ctype(k), id);
    c->ind--;
    cg_ol(c, "}");
}

/* zeros, fill, rand or randn: a local array's constructor */
static bool is_ctor(const OrnNode *e)
{
    int bi = e && e->kind == N_CALL ? e->u.call.builtin : -1;
    return bi == ORN_BI_ZEROS || bi == ORN_BI_FILL || bi == ORN_BI_RAND || bi == ORN_BI_RANDN;
}

void cg_st_assign(C *c, const OrnNode *s)
{
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    OrnOp op = s->u.assign.op;
    if (tg->kind == N_INDEX) {
        st_assign_elem(c, s);
        return;
    }
    const OrnSym *sym = tg->u.name.sym;
    if (!sym) {
        cg_ice(c, s, "assignment to an unresolved name");
        return;
    }
    OrnTypeKind k = sym->type->kind;
    if (sym->kind == SYM_VALUE && c->warp == WARP_UNIFORM) {
        assign_value_lane0(c, k, op, rhs);
        return;
    }
    if (sym->kind == SYM_VALUE) {
        assign_into(c, "(*vp_)", k, op, rhs);
        return;
    }
    if (c->cx == CX_BODY && c->loop) {
        int i = orn_cg_acc_index(c->loop, sym);
        if (i >= 0 && c->cuda) {
            acc_record(c, i, sym, op, rhs);
            return;
        }
        if (i >= 0) {
            char lhs[48];
            snprintf(lhs, sizeof lhs, c->lanes ? "accl%d_[l_]" : "acc%d_", i);
            assign_into(c, lhs, k, op, rhs);
            return;
        }
    }
    if (k == T_ARRAY) {
        if (orn_cg_is_static(sym)) {
            cg_ol(c, "orn_std_arr_free(%s);", cg_nm(c, sym));
            cg_ind(c);
            cg_o(c, "%s = ", cg_nm(c, sym));
        } else {
            cg_ind(c);
            cg_o(c, "OrnStdArr *%s __attribute__((cleanup(orn_std_arr_cleanup), unused)) = ",
                 cg_nm(c, sym));
            for (int i = 0; i < c->nslots; i++)
                if (c->slots[i] == sym && is_ctor(rhs)) c->take = sym;
        }
        cg_ex(c, rhs);
        c->take = NULL;
        cg_o(c, ";\n");
        return;
    }
    if (s->u.assign.declares && !orn_cg_is_static(sym)) {
        cg_ind(c);
        cg_o(c, "%s %s __attribute__((unused)) = ", cg_ctype(k), cg_nm(c, sym));
        cg_ex_as(c, rhs, k);
        cg_o(c, ";\n");
        return;
    }
    assign_into(c, cg_nm(c, sym), k, op, rhs);
}

/* Bind a loop variable: a declaration for locals, an assignment for statics. */
void cg_bind_var(C *c, const OrnSym *s, const char *type, const char *val)
{
    if (!s) return;
    if (orn_cg_is_static(s))
        cg_ol(c, "%s = %s;", cg_nm(c, s), val);
    else
        cg_ol(c, "const %s %s __attribute__((unused)) = %s;", type, cg_nm(c, s), val);
}

/* Open a block with the bounds of `for v in lo:hi` evaluated once, as lo<id>_ and hi<id>_;
 * returns id. */
/* Open the C loop of `for v in lo:hi` (bounds evaluated once, v bound in the body); the
 * caller then emits the body and closes the loop with cg_for_close. */
int cg_for_bounds(C *c, const OrnNode *s)
{
    int id = c->tmp++;
    cg_ol(c, "{");
    c->ind++;
    if (cg_jam_chunk(c, s, id)) return id; /* a jam's outer loop: one chunk (c_jam.c) */
    cg_ind(c);
    cg_o(c, "const int64_t lo%d_ = ", id);
    cg_ex_as(c, s->u.for_.lo, T_I64);
    cg_o(c, ", hi%d_ = ", id);
    cg_ex_as(c, s->u.for_.hi, T_I64);
    cg_o(c, ";\n");
    return id;
}

void cg_for_open(C *c, const OrnNode *s)
{
    cg_for_head(c, s, cg_for_bounds(c, s));
}

void cg_for_head(C *c, const OrnNode *s, int id)
{
    cg_ol(c, "for (int64_t i%d_ = lo%d_; i%d_ < hi%d_; i%d_++) {", id, id, id, id, id);
    c->ind++;
    char v[24];
    snprintf(v, sizeof v, "i%d_", id);
    cg_bind_var(c, s->u.for_.var->u.name.sym, "int64_t", v);
    c->ind--;
}

void cg_for_close(C *c)
{
    cg_ol(c, "}");
    c->ind--;
    cg_ol(c, "}");
}

/* Row `fixed` of the 2-D sparse view k: rc/ro (CSR columns in place) or rk (decoded keys),
 * rv, rn (orn_rt_row_csr). */
static void row_csr_call(C *c, int k, const OrnNode *fixed, int id)
{
    cg_ol(c,
          "const int32_t *rc%d_; int64_t ro%d_; const int64_t *rk%d_; const void *rv%d_; "
          "int64_t rn%d_;",
          id, id, id, id, id);
    cg_ind(c);
    cg_o(c, "orn_rt_row_csr(&V_[%d], ", k);
    cg_ex_as(c, fixed, T_I64);
    cg_o(c, ", &rc%d_, &ro%d_, &rk%d_, &rv%d_, &rn%d_);\n", id, id, id, id, id);
}

static void csr_row_for(C *c, const OrnNode *s, bool values, OrnTypeKind ek, int id, int fast,
                        int sure);

/* One version of a CSR row's loop (foreach_csr_versioned): fast, the columns in place and
 * the accesses proven in their boxes; sure, the buffer updates' keys too. Where the body
 * then reads a buffer's target through its box and the buffer adds in place into that
 * target's storage (one rank: bs<k>_, cg_buf_alias_prologue), a version of its own reads
 * the target through the buffer's box (c->alias_x): the compiler sees one pointer, and
 * `dw[f] -= step * (g * x + lam * w[f])` loads w[f] once, as hand-written C does (SLR:
 * 10% of an epoch). */
static void csr_row_loop(C *c, const OrnNode *s, bool values, OrnTypeKind ek, int id, int fast,
                         int sure)
{
    const OrnCgLoop *l = c->loop;
    for (int kb = 0; fast && sure && l && !c->cuda && !c->alias_b && kb < l->narrays; kb++) {
        int kt = cg_is_buffer(l->arrays[kb].sym) ? buf_target_view(l, kb) : -1;
        if (kt < 0) continue;
        OrnBuf via, *saved = c->b;
        orn_buf_init(&via);
        c->b = &via;
        c->alias_x = kt + 1, c->alias_b = kb + 1, c->alias_used = 0;
        c->ind += 2;
        csr_row_for(c, s, values, ek, id, fast, sure);
        c->ind -= 2;
        c->alias_x = c->alias_b = 0;
        c->b = saved;
        if (c->alias_used) {
            /* likely: without the hint gcc lays the rows out so that they run 10% slower */
            c->ind++;
            cg_ol(c, "if (__builtin_expect(bs%d_, 1)) {", kb);
            orn_buf_put(c->b, via.data ? via.data : "", via.len);
            cg_ol(c, "} else {");
            c->ind++;
            csr_row_for(c, s, values, ek, id, fast, sure);
            c->ind--;
            cg_ol(c, "}");
            c->ind--;
            orn_buf_free(&via);
            return;
        }
        orn_buf_free(&via);
    }
    csr_row_for(c, s, values, ek, id, fast, sure);
}

static void csr_row_for(C *c, const OrnNode *s, bool values, OrnTypeKind ek, int id, int fast,
                        int sure)
{
    const OrnSym *ks = s->u.foreach.key->u.name.sym, *vs = s->u.foreach.value->u.name.sym;
    char kv[112], vv[112];
    c->ind++;
    if (fast) cg_gather_prefetch(c, s->u.foreach.body, ks, id, true);
    cg_ol(c, "for (int64_t j%d_ = 0; j%d_ < rn%d_; j%d_++) {", id, id, id, id);
    if (fast)
        snprintf(kv, sizeof kv, "ro%d_ + rc%d_[j%d_]", id, id, id);
    else
        snprintf(kv, sizeof kv, "(rc%d_ ? ro%d_ + rc%d_[j%d_] : rk%d_[j%d_ * 2 + 1])", id, id, id,
                 id, id, id);
    snprintf(vv, sizeof vv, "((const %s *)rv%d_)[j%d_]", cg_ctype(ek), id, id);
    c->ind++;
    if (fast) cg_gather_prefetch(c, s->u.foreach.body, ks, id, false);
    cg_bind_var(c, ks, "int64_t", kv);
    if (values) cg_bind_var(c, vs, cg_ctype(ek), vv);
    c->ind--;
    c->bufs_sure += sure;
    cg_loop_body_in(c, ks, vs, s->u.foreach.body, fast);
    c->bufs_sure -= sure;
    cg_ol(c, "}");
    c->ind--;
}

/* for (k, v) in X[i, :] over a CSR tile, when every access of the body has a subscript k
 * + c or an invariant one (version.h): one test per row -- the tile's column range
 * [lo[1], hi[1]) moved by each offset lies in each box -- then the row runs without
 * per-access tests (SLR's w[f]: a load per non-zero). Rows of other tiles take the checked
 * version. The buffer updates' keys (spans marked `buffer`, when bufs) have a test of their
 * own: where it holds too the row adds in place without a test each (SLR's dw[f]); where
 * it does not -- the buffer's box empty, its keys listed -- the row still reads without
 * tests. */
static void foreach_csr_versioned(C *c, const OrnNode *s, bool values, int k, const OrnNode *fixed,
                                  OrnTypeKind ek, int id, const OrnCgSpan *sp, int nsp, bool bufs)
{
    OrnCgSpan xs[ORN_CG_MAXSPAN], bs[ORN_CG_MAXSPAN];
    int nx = 0, nb = 0, bid = c->tmp++;
    for (int i = 0; i < nsp; i++) {
        if (sp[i].buffer)
            bs[nb++] = sp[i];
        else
            xs[nx++] = sp[i];
    }
    bufs = bufs && nb > 0;
    char lo[32], hi[32];
    row_csr_call(c, k, fixed, id);
    snprintf(lo, sizeof lo, "V_[%d].lo[1]", k);
    snprintf(hi, sizeof hi, "V_[%d].hi[1]", k);
    cg_split_range(c, xs, nx, lo, hi, id);
    if (bufs) cg_split_range(c, bs, nb, lo, hi, bid);
    cg_ol(c, "if (rc%d_ && sg%d_[1] == sg%d_[0] && sg%d_[2] == sg%d_[3]) {", id, id, id, id, id);
    if (bufs) {
        c->ind++;
        /* likely: with csr_row_loop's hint, gcc's layout of SLR's rows runs 0.0525 s an
         * epoch; without either 0.057 (the same hint on the test above makes ALS 12% slower) */
        cg_ol(c, "if (__builtin_expect(sg%d_[1] == sg%d_[0] && sg%d_[2] == sg%d_[3], 1)) {", bid,
              bid, bid, bid);
        csr_row_loop(c, s, values, ek, id, 1, 1);
        cg_ol(c, "} else {");
        csr_row_loop(c, s, values, ek, id, 1, 0);
        cg_ol(c, "}");
        c->ind--;
    } else {
        csr_row_loop(c, s, values, ek, id, 1, 0);
    }
    cg_ol(c, "} else {");
    csr_row_loop(c, s, values, ek, id, 0, 0);
    cg_ol(c, "}");
}

static void slot_visit(const OrnNode *n, void *ud)
{
    C *c = ud;
    if (n->kind == N_ASSIGN && n->u.assign.declares && n->u.assign.op == OP_NONE &&
        is_ctor(n->u.assign.value) && n->u.assign.target->kind == N_NAME &&
        c->nslots < (int)(sizeof c->slots / sizeof c->slots[0])) {
        const OrnSym *s = n->u.assign.target->u.name.sym;
        if (s && s->type && s->type->kind == T_ARRAY && !s->type->dist && !s->fn &&
            !orn_cg_is_static(s))
            c->slots[c->nslots++] = s;
    }
    orn_ast_each_child(n, slot_visit, ud);
}

void cg_arr_slots(C *c, const OrnCgLoop *l, const char *pad)
{
    c->nslots = 0;
    c->take = NULL;
    const OrnNode *body = l->loop->node->u.parfor.body;
    if (body && !c->cuda) orn_ast_each_child(body, slot_visit, c);
    for (int i = 0; i < c->nslots; i++)
        cg_o(c,
             "%sOrnStdArr *slot%d_ __attribute__((cleanup(orn_std_arr_cleanup), unused)) = NULL;\n",
             pad, c->slots[i]->id);
}

/* for (k, v) in view */
void cg_st_foreach(C *c, const OrnNode *s, bool values, const OrnBuf *pre_body)
{
    const OrnNode *it = s->u.foreach.iter;
    const OrnSym *as = orn_cg_base_sym(it), *ks = s->u.foreach.key->u.name.sym,
                 *vs = s->u.foreach.value->u.name.sym;
    if (!as) {
        cg_ice(c, s, "for-in over something that is not a named array");
        return;
    }
    OrnTypeKind ek = cg_elem_of(as->type);
    int id = c->tmp++, dim = 0;
    const OrnNode *fixed = NULL;
    bool view = orn_cg_view_parts(it, &dim, &fixed);
    bool sparse = as->type->sparse;
    char kv[112], vv[112];
    cg_ol(c, "{");
    c->ind++;
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp = 0;
    bool bufs = false;
    if (sparse && view && dim == 1 && cg_in_loop_ctx(c) && as->type->ndims == 2 && !pre_body &&
        (c->cx == CX_BODY || c->cx == CX_CLONE) && !c->fast &&
        orn_cg_foreach_spans(c->loop, s, sp, &nsp, c->cuda ? NULL : &bufs)) {
        foreach_csr_versioned(c, s, values, cg_array_k(c, it, as), fixed, ek, id, sp, nsp, bufs);
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    if (sparse && view && dim == 1 && cg_in_loop_ctx(c)) {
        int k = cg_array_k(c, it, as), nd = as->type->ndims;
        if (nd == 2) {
            /* CSR tiles: the row's columns in place (gcc unswitches the loop on rc) */
            row_csr_call(c, k, fixed, id);
            snprintf(kv, sizeof kv, "(rc%d_ ? ro%d_ + rc%d_[j%d_] : rk%d_[j%d_ * 2 + 1])", id, id,
                     id, id, id, id);
        } else {
            cg_ol(c, "const int64_t *rk%d_; const void *rv%d_; int64_t rn%d_;", id, id, id);
            cg_ind(c);
            cg_o(c, "orn_rt_row(&V_[%d], ", k);
            cg_ex_as(c, fixed, T_I64);
            cg_o(c, ", &rk%d_, &rv%d_, &rn%d_);\n", id, id, id);
            snprintf(kv, sizeof kv, "rk%d_[j%d_ * %d + 1]", id, id, nd);
        }
        cg_ol(c, "for (int64_t j%d_ = 0; j%d_ < rn%d_; j%d_++) {", id, id, id, id);
        snprintf(vv, sizeof vv, "((const %s *)rv%d_)[j%d_]", cg_ctype(ek), id, id);
        c->ind++;
        cg_bind_var(c, ks, "int64_t", kv);
        if (values) cg_bind_var(c, vs, cg_ctype(ek), vv);
        c->ind--;
    } else {
        /* a top-level view of a dense dist array read whole first (orn_std_vec_dist_in)
         * unless the body may write a dist array: then element by element as it goes */
        bool copy = !pre_body && cg_vec_copied(c, it), wr = false;
        if (copy) wr = cg_may_write(s->u.foreach.body);
        copy = copy && !wr;
        cg_ind(c);
        cg_o(c, "const OrnStdVec w%d_%s = ", id, copy ? cg_vec_scope(c, it) : "");
        cg_vec_ctor(c, it, copy);
        cg_o(c, ";\n");
        cg_ol(c, "for (int64_t j%d_ = 0; j%d_ < w%d_.len; j%d_++) {", id, id, id, id);
        snprintf(kv, sizeof kv, "j%d_", id);
        snprintf(vv, sizeof vv, "orn_std_vget_%s(&w%d_, j%d_)", cg_sfx(ek), id, id);
        c->ind++;
        if (sparse && values) {
            /* non-zeros of a sparse view read element by element */
            cg_ol(c, "const %s z%d_ = %s;", cg_ctype(ek), id, vv);
            cg_ol(c, "if (z%d_ == 0) continue;", id);
            snprintf(vv, sizeof vv, "z%d_", id);
        }
        cg_bind_var(c, ks, "int64_t", kv);
        if (values) cg_bind_var(c, vs, cg_ctype(ek), vv);
        c->ind--;
    }
    c->cloops++;
    if (pre_body)
        orn_buf_put(c->b, pre_body->data ? pre_body->data : "", pre_body->len);
    else
        cg_st_block(c, s->u.foreach.body);
    c->cloops--;
    cg_ol(c, "}");
    c->ind--;
    cg_ol(c, "}");
}

static void st_if(C *c, const OrnNode *s, bool elif)
{
    for (int i = 0; i < c->nproven; i++)
        if (c->proven[i] == s) { /* its condition holds here (version.h, guards) */
            if (elif)
                cg_o(c, "if (1) {\n");
            else
                cg_ol(c, "{");
            cg_st_block(c, s->u.if_.then);
            cg_ol(c, "}");
            return;
        }
    if (!elif) cg_ind(c);
    cg_o(c, "if (");
    cg_ex_cond(c, s->u.if_.cond);
    cg_o(c, ") {\n");
    cg_st_block(c, s->u.if_.then);
    const OrnNode *e = s->u.if_.els;
    if (!e) {
        cg_ol(c, "}");
        return;
    }
    cg_ind(c);
    if (e->kind == N_IF) {
        cg_o(c, "} else ");
        st_if(c, e, true);
        return;
    }
    cg_o(c, "} else {\n");
    cg_st_block(c, e);
    cg_ol(c, "}");
}

static void st_return(C *c, const OrnNode *s)
{
    const OrnNode *v = s->u.ret.value;
    if (!v) {
        cg_ol(c, "return;");
        return;
    }
    OrnTypeKind rk = T_VOID;
    if (c->fn && c->fn->u.fn.sym) {
        const OrnNode *rt = c->fn->u.fn.ret;
        if (rt && rt->u.type.id) rk = orn_kind_from_name(rt->u.type.id->s);
    }
    cg_ind(c);
    cg_o(c, "return ");
    if (rk != T_VOID && rk != T_ERROR)
        cg_ex_as(c, v, rk);
    else
        cg_ex(c, v);
    cg_o(c, ";\n");
}

/* A loader's allow_nonfinite = e: its value, or false when not given. */
static void cg_allow(C *c, const OrnNode *e)
{
    if (e)
        cg_ex_as(c, e, T_BOOL);
    else
        cg_o(c, "false");
}

/* The loop a dist array is made for: the first parallel_for (source order) that places it
 * otherwise than in bands along its key -- as its iteration space, when that loop is a
 * wavefront (2d_ordered or unimodular; *k = 0); as an array aligned with the iteration
 * space of a 1d loop (*k its index there) -- or NULL. The runtime then makes the array in
 * the bands that loop will run on (orn_rt_space_part), or aligned with that loop's space
 * as the space lies when the array is made (orn_rt_aligned_part_for), so that the loop's
 * first run moves nothing; where it cannot tell, the default. A placement, never a
 * meaning: any partition gives the same results. */
static const OrnCgLoop *made_for(const C *c, const OrnSym *s, int *k)
{
    for (int i = 0; i < c->p->nloops; i++) {
        const OrnCgLoop *l = &c->p->loops[i];
        if (!l->plan || !l->narrays) continue;
        if (l->arrays[0].sym == s) {
            if (l->strategy == ORN_STRAT_1D || l->strategy == ORN_STRAT_SERIAL) continue;
            if (l->strategy != ORN_STRAT_2D_ORDERED && l->strategy != ORN_STRAT_UNIMODULAR)
                return NULL;
            *k = 0;
            return cg_gpu_loop(c, l) ? NULL : l;
        }
        int a = orn_cg_array_index(l, s);
        if (a <= 0 || l->arrays[a].role != ORN_ROLE_PARTITIONED) continue;
        if (l->strategy != ORN_STRAT_1D || l->arrays[0].sym->kind != SYM_DIST || cg_gpu_loop(c, l))
            return NULL;
        *k = a;
        return l;
    }
    return NULL;
}

/* Does access v of loop l read rows of its array (storage dimension 0, logical dimension
 * d0) anywhere, not within a block's keys: rows that depend on data (A[P[i], j]), every
 * row (a column view A[:, j]), or rows following a key the schedule does not cut (pr[s]
 * over links keyed (d, s) cut along d)? */
static bool rows_anywhere(const OrnCgLoop *l, const OrnAccess *v, int d0)
{
    if (d0 >= v->ref.nsubs) return false;
    const OrnSub *sub = &v->ref.subs[d0];
    if (sub->kind == ORN_SUB_ALL || (sub->kind == ORN_SUB_UNKNOWN && sub->varies)) return true;
    const OrnPlanSchedule *sc = &l->plan->sched;
    if (sub->kind != ORN_SUB_AFFINE || sub->ranged || sc->transformed) return false;
    for (int i = 0; i < sc->ndims && i < 2; i++)
        if (sc->dims[i] == sub->key) return false;
    return true;
}

/* A CPU loop reads dense dist array s at rows that depend on data, as a prefetched array
 * that nothing else in that loop writes or buffers: its node replica is then made with it
 * (orn_std_dist_replica, dsm/replica.c), so that the loop's first run only copies into it.
 * Loops reading a few rows at affine subscripts leave the choice to their windows. */
static bool read_anywhere(const C *c, const OrnSym *s)
{
    if (!s->type || s->type->sparse) return false;
    for (int i = 0; i < c->p->nloops; i++) {
        const OrnCgLoop *l = &c->p->loops[i];
        if (!l->plan || l->strategy == ORN_STRAT_SERIAL || cg_gpu_loop(c, l)) continue;
        int pref = -1;
        bool other = false;
        for (int k = 0; k < l->narrays; k++) {
            const OrnCgArray *a = &l->arrays[k];
            if (k > 0 && a->sym == s && a->role == ORN_ROLE_PREFETCHED && a->read_only)
                pref = k;
            else if (a->sym == s || a->target == s)
                other = true;
        }
        if (pref < 0 || other) continue;
        const OrnAccessList *acc = &l->plan->acc;
        for (int j = 0; j < acc->n; j++)
            if (acc->v[j].array == s && rows_anywhere(l, &acc->v[j], l->arrays[pref].perm[0]))
                return true;
    }
    return false;
}

static void st_dist_make(C *c, const OrnNode *s);

static void st_dist(C *c, const OrnNode *s)
{
    st_dist_make(c, s);
    const OrnNode *names = s->u.dist.names, *v = s->u.dist.value;
    const OrnSym *s1 = names ? names->u.name.sym : NULL;
    if (!s1 || !v || v->kind != N_CALL) return;
    int bi = v->u.call.builtin;
    if ((bi == ORN_BI_LOAD || bi == ORN_BI_LOAD_CSV || bi == ORN_BI_ZEROS || bi == ORN_BI_FILL ||
         bi == ORN_BI_RAND || bi == ORN_BI_RANDN) &&
        read_anywhere(c, s1))
        cg_ol(c, "orn_std_dist_replica(P_, %s, %d);", cg_nm(c, s1), c->line);
}

static void st_dist_make(C *c, const OrnNode *s)
{
    const OrnNode *names = s->u.dist.names, *v = s->u.dist.value;
    const OrnSym *s1 = names ? names->u.name.sym : NULL;
    const OrnSym *s2 = names && names->next ? names->next->u.name.sym : NULL;
    if (!s1 || !v || v->kind != N_CALL) {
        cg_ice(c, s, "dist declaration");
        return;
    }
    int bi = v->u.call.builtin;
    const OrnNode *a0 = cg_arg_n(v, 0), *a1 = cg_arg_n(v, 1);
    const char *n1 = s1->name->s;
    /* the loaders' option: false unless given */
    const OrnNode *anf = cg_kwarg(v, "allow_nonfinite");
    switch (bi) {
    case ORN_BI_LOAD_DOCWORD:
        cg_ind(c);
        cg_o(c, "%s = orn_std_load_docword(P_, ", cg_nm(c, s1));
        cg_ex(c, a0);
        cg_o(c, ", \"%s\", %d);\n", n1, c->line);
        return;
    case ORN_BI_LOAD_TRIPLETS:
        cg_ind(c);
        cg_o(c, "%s = orn_std_load_triplets(P_, ", cg_nm(c, s1));
        cg_ex(c, a0);
        cg_o(c, ", ");
        cg_allow(c, anf);
        cg_o(c, ", \"%s\", %d);\n", n1, c->line);
        return;
    case ORN_BI_LOAD_LIBSVM:
        cg_ind(c);
        cg_o(c, "orn_std_load_libsvm(P_, ");
        cg_ex(c, a0);
        cg_o(c, ", ");
        cg_allow(c, anf);
        cg_o(c, ", &%s, &%s, \"%s\", \"%s\", %d);\n", cg_nm(c, s1), s2 ? cg_nm(c, s2) : "NULL", n1,
             s2 ? s2->name->s : "", c->line);
        return;
    case ORN_BI_LOAD_CSV: {
        const int *perm = cg_perm_of(c, s1);
        cg_ind(c);
        cg_o(c, "%s = orn_std_load_csv(P_, ", cg_nm(c, s1));
        cg_ex(c, a0);
        cg_o(c, ", %s, ", cg_dsmt(s1->type->elem));
        cg_allow(c, cg_kwarg(v, "header"));
        cg_o(c, ", ");
        cg_allow(c, anf);
        if (perm)
            cg_o(c, ", (const int[2]){%d, %d}", perm[0], perm[1]);
        else
            cg_o(c, ", NULL");
        cg_o(c, ", \"%s\", %d);\n", n1, c->line);
        return;
    }
    case ORN_BI_LOAD: {
        const OrnType *t = s1->type;
        const int *perm = cg_perm_of(c, s1);
        cg_ind(c);
        cg_o(c, "%s = orn_std_load%s(P_, ", cg_nm(c, s1), perm ? "_perm" : "");
        cg_ex(c, a0);
        if (perm) {
            cg_o(c, ", %s, %d, ", cg_dsmt(t->elem), t->ndims);
            cg_allow(c, anf);
            cg_o(c, ", (const int[%d]){", t->ndims);
            for (int d = 0; d < t->ndims; d++) cg_o(c, "%s%d", d ? ", " : "", perm[d]);
            cg_o(c, "}");
        } else {
            cg_o(c, ", %s, %d, %d, ", cg_dsmt(t->elem), t->ndims, t->sparse ? 1 : 0);
            cg_allow(c, anf);
        }
        cg_o(c, ", \"%s\", %d);\n", n1, c->line);
        return;
    }
    case ORN_BI_BUFFER: {
        const OrnSym *tgt = orn_cg_base_sym(a0);
        const OrnNode *ap = cg_kwarg(v, "apply"), *fe = cg_kwarg(v, "flush_every"),
                      *bu = cg_kwarg(v, "budget"), *sa = cg_kwarg(v, "staleness_aware");
        char apply[160] = "NULL";
        if (ap && ap->u.name.sym)
            snprintf(apply, sizeof apply, "orn_apply_%s", cg_nm(c, ap->u.name.sym));
        cg_ind(c);
        cg_o(c, "%s = orn_std_buffer(P_, %s, %s, ", cg_nm(c, s1), tgt ? cg_nm(c, tgt) : "NULL",
             apply);
        if (fe)
            cg_ex_as(c, fe, T_I64);
        else
            cg_o(c, "0");
        cg_o(c, ", %d, ", fe ? 1 : 0);
        if (bu)
            cg_ex_as(c, bu, T_F64);
        else
            cg_o(c, "0");
        cg_o(c, ", ");
        if (sa)
            cg_ex(c, sa);
        else
            cg_o(c, "0");
        cg_o(c, ", %d);\n", c->line);
        return;
    }
    case ORN_BI_ZEROS:
    case ORN_BI_FILL:
    case ORN_BI_RAND:
    case ORN_BI_RANDN: {
        OrnTypeKind et = cg_elem_of(a0->type);
        int first = bi == ORN_BI_FILL ? 2 : 1, nd = 0;
        for (const OrnNode *x = cg_arg_n(v, first); x; x = x->next)
            if (x->kind != N_KWARG) nd++;
        const int *perm = cg_perm_of(c, s1);
        int k = 0;
        const OrnCgLoop *lf =
            perm || bi == ORN_BI_RAND || bi == ORN_BI_RANDN ? NULL : made_for(c, s1, &k);
        char hint[160] = "";
        if (lf)
            snprintf(hint, sizeof hint, "_for(P_, &orn_plan_%d, %d, %s, ", lf->id, k,
                     k ? cg_nm(c, lf->arrays[0].sym) : "NULL");
        cg_ind(c);
        cg_o(c, "%s = orn_std_dist_new%s%s, %d, (const int64_t[%d]){", cg_nm(c, s1),
             lf     ? hint
             : perm ? "_perm(P_, "
                    : "(P_, ",
             cg_dsmt(et), nd, nd);
        bool f = true;
        for (const OrnNode *x = cg_arg_n(v, first); x; x = x->next) {
            if (x->kind == N_KWARG) continue;
            if (!f) cg_o(c, ", ");
            f = false;
            cg_ex_as(c, x, T_I64);
        }
        cg_arr_init_args(c, v, bi, a1);
        if (perm) {
            /* stored in another order than declared (analyzer/layout.h) */
            cg_o(c, ", (const int[%d]){", nd);
            for (int d = 0; d < nd; d++) cg_o(c, "%s%d", d ? ", " : "", perm[d]);
            cg_o(c, "}");
        }
        cg_o(c, ", \"%s\", %d);\n", n1, c->line);
        return;
    }
    default:
        cg_ice(c, s, "dist initializer");
        return;
    }
}

/* The loop descriptor loop<sfx>_ of parallel_for s (its arguments args<sfx>_, its
 * accumulators' values acc_). NULL when s has no plan. */
static const OrnLoop *parfor_decl(C *c, const OrnNode *s, const char *sfx)
{
    const OrnLoop *lp = s->u.parfor.info;
    if (!lp || lp->index < 0 || lp->index >= c->p->nloops) {
        cg_ice(c, s, "parallel_for without a plan");
        return NULL;
    }
    const OrnCgLoop *l = &c->p->loops[lp->index];
    cg_ind(c);
    cg_o(c, "OrnRtArg args%s_[%d] = {", sfx, l->narrays);
    for (int k = 0; k < l->narrays; k++) {
        const OrnCgArray *a = &l->arrays[k];
        cg_o(c, "%s{.%s = %s}", k ? ", " : "", a->role == ORN_ROLE_BUFFERED ? "buffer" : "array",
             cg_nm(c, a->sym));
    }
    cg_o(c, "};\n");
    int na = lp->naccums;
    if (na) {
        cg_ol(c, "OrnRtScalar acc_[%d];", na);
        for (int i = 0; i < na; i++) {
            const OrnSym *as = lp->accums[i].sym;
            cg_ol(c, "acc_[%d].%s = %s;", i, cg_sfx(as->type->kind), cg_nm(c, as));
        }
    }
    /* halos of windows known at run time (lower.h): from their bounds' values now */
    for (int k = 0; k < l->narrays; k++)
        for (int d = 0; d < l->arrays[k].ndim && d < ORN_DEP_MAXDIM; d++) {
            const OrnCgArray *a = &l->arrays[k];
            if (!a->win_lo[d]) continue;
            for (int hi = 0; hi < 2; hi++) {
                cg_ind(c);
                cg_o(c, "orn_plan_arrays_%d[%d].halo_%s[%d] = orn_rt_%s_halo((int64_t)(", l->id, k,
                     hi ? "hi" : "lo", d, a->win_hi[d] ? "win" : "shift");
                cg_ex(c, a->win_lo[d]);
                if (a->win_hi[d]) { /* a for's range; else a shift (lower.h) */
                    cg_o(c, "), (int64_t)(");
                    cg_ex(c, a->win_hi[d]);
                }
                cg_o(c, "), %d, ", a->win_neg[d] ? 1 : 0);
                long long cst = hi ? a->win_c_hi[d] : a->win_c_lo[d];
                if (a->win_sh[d]) { /* the window moved by a shift (lower.h) */
                    cg_o(c, "orn_rt_shift_sat((int64_t)(");
                    cg_ex(c, a->win_sh[d]);
                    cg_o(c, "), %d, INT64_C(%lld))", a->win_shneg[d] ? 1 : 0, cst);
                } else {
                    cg_o(c, "INT64_C(%lld)", cst);
                }
                cg_o(c, ", %d);\n", hi);
            }
        }
    char pf_name[32] = "NULL";
    if (l->prefetch) snprintf(pf_name, sizeof pf_name, "orn_prefetch_%d", l->id);
    bool gpu = cg_gpu_loop(c, l); /* whole pieces of blocks: rt.h, OrnRtLoop.whole */
    cg_ol(c,
          "const OrnRtLoop loop%s_ = {.plan = &orn_plan_%d, .args = args%s_, .body = "
          "orn_%sbody_%d, .prefetch = %s, .env = NULL, .acc = %s%s};",
          sfx, l->id, sfx, gpu ? "g" : "", l->id, pf_name, na ? "acc_" : "NULL",
          gpu ? ", .whole = 1" : "");
    return lp;
}

static void any_impure(const OrnNode *n, void *ud)
{
    bool *bad = ud;
    if (*bad) return;
    if (n->kind == N_CALL && cg_impure(n)) {
        *bad = true;
        return;
    }
    orn_ast_each_child(n, any_impure, ud);
}

/* Can parallel_for s run with the one after it as a pair (orn_rt_run_pair: the runtime
 * fuses two stencil sweeps, runtime/fuse.c)? Both 1d without accumulators, prefetching or
 * device bodies, and neither body has an effect whose order would show (output, calls,
 * random draws): fused, the second loop's iterations interleave with the first's. The
 * runtime checks the rest. */
static bool pairs_with_next(C *c, const OrnNode *s)
{
    const OrnNode *t = s->next;
    if (!t || t->kind != N_PARFOR) return false;
    const OrnNode *both[2] = {s, t};
    for (int i = 0; i < 2; i++) {
        const OrnLoop *lp = both[i]->u.parfor.info;
        if (!lp || lp->index < 0 || lp->index >= c->p->nloops || lp->naccums) return false;
        const OrnCgLoop *l = &c->p->loops[lp->index];
        if (l->strategy != ORN_STRAT_1D || l->prefetch || l->uses_rng || cg_gpu_loop(c, l))
            return false;
        bool bad = false;
        any_impure(both[i]->u.parfor.body, &bad);
        if (bad) return false;
    }
    return true;
}

static void st_parfor(C *c, const OrnNode *s)
{
    if (c->paired == s) { /* written with the loop before it */
        c->paired = NULL;
        return;
    }
    cg_ol(c, "{");
    c->ind++;
    if (pairs_with_next(c, s)) {
        parfor_decl(c, s, "");
        parfor_decl(c, s->next, "2");
        cg_ol(c, "orn_std_run_pair(P_, &loop_, &loop2_);");
        c->paired = s->next;
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    const OrnLoop *lp = parfor_decl(c, s, "");
    if (lp) {
        cg_ol(c, "orn_std_run(P_, &loop_);");
        for (int i = 0; i < lp->naccums; i++) {
            const OrnSym *as = lp->accums[i].sym;
            cg_ol(c, "%s = acc_[%d].%s;", cg_nm(c, as), i, cg_sfx(as->type->kind));
        }
    }
    c->ind--;
    cg_ol(c, "}");
}

void cg_st(C *c, const OrnNode *s)
{
    if (c->warp == WARP_UNIFORM && !c->failed)
        cg_warp_st(c, s);
    else
        cg_st_plain(c, s);
}

void cg_st_plain(C *c, const OrnNode *s)
{
    if (c->failed) return;
    c->line = (int)s->span.line;
    switch (s->kind) {
    case N_EXPR: /* (void): a value left unused is the program's choice, not a warning */
        cg_ind(c);
        cg_o(c, "(void)(");
        cg_ex(c, s->u.expr_stmt.e);
        cg_o(c, ");\n");
        return;
    case N_ASSIGN:
        cg_st_assign(c, s);
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
    case N_FOR: {
        bool held = cg_hold_open(c, s);
        cg_st_for(c, s);
        cg_hold_close(c, held);
        return;
    }
    case N_FOREACH: {
        bool held = cg_hold_open(c, s);
        cg_st_foreach(c, s, true, NULL);
        cg_hold_close(c, held);
        return;
    }
    case N_WHILE: {
        bool held = cg_hold_open(c, s);
        cg_ind(c);
        cg_o(c, "while (");
        cg_ex_cond(c, s->u.while_.cond);
        cg_o(c, ") {\n");
        c->cloops++;
        cg_st_block(c, s->u.while_.body);
        c->cloops--;
        cg_ol(c, "}");
        cg_hold_close(c, held);
        return;
    }
    case N_PARFOR:
        if (c->cx != CX_TOP)
            cg_ice(c, s, "parallel_for outside top level");
        else
            st_parfor(c, s);
        return;
    case N_BREAK:
        cg_ol(c, "break;");
        return;
    case N_CONTINUE:
        if (c->cx == CX_PREFETCH && c->cloops == 0) {
            cg_ol(c, "goto next_;");
            c->next_used = true;
        } else if (c->cuda && c->cloops == 0) {
            cg_ol(c, "return;"); /* the next iteration: the element function's caller's */
        } else {
            cg_ol(c, "continue;");
        }
        return;
    case N_RETURN:
        st_return(c, s);
        return;
    case N_BLOCK:
        cg_ol(c, "{");
        cg_st_block(c, s);
        cg_ol(c, "}");
        return;
    default:
        cg_ice(c, s, "unexpected statement");
        return;
    }
}
