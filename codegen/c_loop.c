/* c_loop.c: the C back end: functions and their clones, plans, loop bodies and the passes
 * of the prefetch slice over blocks (emit_c_int.h; the slice itself: c_prefetch.c). */
#include "emit_c_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void box_prologue(C *c, const OrnCgLoop *l, const char *indent);
static bool csr_walk(const OrnCgLoop *l);

/* ---------------------------------------------------------------- functions */

void cg_fn_params(C *c, const OrnNode *fn, bool first)
{
    for (const OrnNode *a = fn->u.fn.args; a; a = a->next) {
        const OrnSym *s = a->u.arg.sym;
        OrnTypeKind k = s && s->type ? s->type->kind : T_F64;
        /* a .orn fn may ignore a parameter; the generated C stays -Wextra clean */
        cg_o(c, "%s%s %s __attribute__((unused))", first ? "" : ", ", cg_ctype(k),
             s ? cg_nm(c, s) : "unused_");
        first = false;
    }
    if (first) cg_o(c, "void");
}

OrnTypeKind cg_fn_ret(const OrnNode *fn)
{
    const OrnNode *rt = fn->u.fn.ret;
    if (!rt || !rt->u.type.id) return T_VOID;
    OrnTypeKind k = orn_kind_from_name(rt->u.type.id->s);
    return k == T_ERROR ? T_VOID : k;
}

static void fn_signature(C *c, const OrnNode *fn, int loop_id)
{
    OrnTypeKind rk = cg_fn_ret(fn);
    cg_o(c, "static __attribute__((unused)) %s %s", cg_ctype(rk), cg_nm(c, fn->u.fn.sym));
    if (loop_id >= 0) {
        cg_o(c,
             "__L%d(const OrnRtBlock *b_ __attribute__((unused)), "
             "OrnRtRng *rng_ __attribute__((unused))",
             loop_id);
        cg_fn_params(c, fn, false);
    } else {
        cg_o(c, "(");
        cg_fn_params(c, fn, true);
    }
    cg_o(c, ")");
}

static void fn_define(C *c, const OrnNode *fn, int loop_id)
{
    OrnBuf *saved = c->b;
    c->b = &c->decls;
    fn_signature(c, fn, loop_id);
    cg_o(c, ";\n");
    c->b = &c->defs;
    cg_o(c, "\n");
    fn_signature(c, fn, loop_id);
    cg_o(c, "\n{\n");
    c->ind = 1;
    if (loop_id >= 0) {
        cg_ol(c, "OrnRtView *const V_ __attribute__((unused)) = b_->views;");
        cg_ol(c, "(void)rng_;");
        if (c->loop) box_prologue(c, c->loop, "    ");
    }
    const OrnNode *saved_fn = c->fn;
    c->fn = fn;
    cg_st_list(c, fn->u.fn.body ? fn->u.fn.body->u.block.stmts : NULL);
    if (cg_fn_ret(fn) != T_VOID) cg_ol(c, "__builtin_unreachable();");
    c->fn = saved_fn;
    c->ind = 0;
    cg_o(c, "}\n");
    c->b = saved;
}

void cg_c_function(void *st_, const OrnNode *fn)
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

bool cg_loop_windows(const OrnCgLoop *l)
{
    for (int k = 0; k < l->narrays; k++)
        for (int d = 0; d < ORN_DEP_MAXDIM; d++)
            if (l->arrays[k].win_lo[d]) return true;
    return false;
}

static void emit_plan(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    cg_o(c, "\n/* parallel_for at %s:%d: %s */\n", c->p->file, l->plan->line,
         orn_plan_strategy_name(l->strategy));
    /* windows known at run time: the code before each run sets their halos (c_stmt.c) */
    cg_o(c, "static %sOrnRtPlanArray orn_plan_arrays_%d[%d] = {\n",
         cg_loop_windows(l) ? "" : "const ", l->id, l->narrays);
    for (int k = 0; k < l->narrays; k++) {
        const OrnCgArray *a = &l->arrays[k];
        cg_o(c, "    {\"%s\", %s, %d, {%d, %d, %d, %d}, %d, ", a->sym->name->s, role_name(a->role),
             a->ndim, a->key_dim[0], a->key_dim[1], a->key_dim[2], a->key_dim[3], a->read_only);
        for (int side = 0; side < 2; side++) {
            const int *w = side ? a->halo_hi : a->halo_lo;
            cg_o(c, "%s{", side ? ", " : "");
            for (int d = 0; d < 4; d++) {
                if (w[d] == ORN_CG_HALO_ANY)
                    cg_o(c, "%sORN_RT_HALO_ANY", d ? ", " : "");
                else
                    cg_o(c, "%s%d", d ? ", " : "", w[d]);
            }
            cg_o(c, "}");
        }
        cg_o(c, "},\n");
    }
    cg_o(c, "};\n");
    if (lp->naccums) {
        cg_o(c, "static const OrnRtPlanAcc orn_plan_accs_%d[%d] = {\n", l->id, lp->naccums);
        for (int i = 0; i < lp->naccums; i++)
            cg_o(c, "    {\"%s\", %s, %s},\n", lp->accums[i].sym->name->s,
                 acc_name(lp->accums[i].kind), cg_rtt(lp->accums[i].sym->type->kind));
        cg_o(c, "};\n");
    }
    cg_o(c, "static const OrnRtPlan orn_plan_%d = {\n", l->id);
    cg_o(c, "    .version = ORN_RT_PLAN_VERSION,\n    .loop_id = %d,\n    .file = ", l->id);
    cg_put_str(c, c->p->file, strlen(c->p->file));
    cg_o(c, ",\n    .line = %d,\n    .strategy = %s,\n    .inner = %s,\n    .ordered = %d,\n",
         l->plan->line, strat_name(l->strategy), strat_name(l->inner), l->plan->ordered ? 1 : 0);
    cg_o(c, "    .nkeys = %d,\n    .npart = %d,\n    .part_dims = {%d, %d},\n", lp->nkeys, l->npart,
         l->part_dims[0], l->part_dims[1]);
    cg_o(c, "    .part_count = {0, 0},\n    .transform = {");
    for (int i = 0; i < 4; i++)
        cg_o(c, "%s{%d, %d, %d, %d}", i ? ", " : "", l->transform[i][0], l->transform[i][1],
             l->transform[i][2], l->transform[i][3]);
    cg_o(c, "},\n    .flush_every = 0,\n    .narrays = %d,\n    .arrays = orn_plan_arrays_%d,\n",
         l->narrays, l->id);
    if (lp->naccums)
        cg_o(c, "    .naccs = %d,\n    .accs = orn_plan_accs_%d,\n", lp->naccums, l->id);
    else
        cg_o(c, "    .naccs = 0,\n    .accs = NULL,\n");
    cg_o(c, "    .keys_unused = %d,\n", csr_walk(l) ? 1 : 0);
    cg_o(c, "};\n");
}

/* Every boxable array of the loop hoisted into a box (OrnRtBox) once per call. */
static void box_prologue(C *c, const OrnCgLoop *l, const char *indent)
{
    for (int k = 0; k < l->narrays; k++)
        if (orn_cg_boxable(l, k))
            cg_o(c,
                 "%sconst OrnRtBox X%d_ __attribute__((unused)) = orn_rt_box(&V_[%d]); /* %s */\n",
                 indent, k, k, l->arrays[k].sym->name->s);
        else if (cg_is_buffer(l->arrays[k].sym)) /* updates added in place (orn_rt_bbox) */
            cg_o(c,
                 "%sconst OrnRtBox B%d_ __attribute__((unused)) = orn_rt_bbox(&V_[%d]); /* %s */\n",
                 indent, k, k, l->arrays[k].sym->name->s);
    cg_buf_alias_prologue(c, l, indent);
}

/* The loop body over the user statements, emitted into buf (fast: accesses proven). */
/* Statements of `blk` (the loop body when NULL) into buf. */
static void stmts_of(C *c, const OrnCgLoop *l, const OrnNode *blk, OrnBuf *buf, int indent,
                     int fast)
{
    OrnBuf *saved = c->b;
    c->b = buf;
    c->ind = indent;
    c->fast += fast;
    if (!blk) blk = l->loop->node->u.parfor.body;
    cg_st_list(c, blk ? blk->u.block.stmts : NULL);
    c->fast -= fast;
    c->b = saved;
}

static void body_stmts(C *c, const OrnCgLoop *l, OrnBuf *buf, int indent, int fast)
{
    stmts_of(c, l, NULL, buf, indent, fast);
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
void cg_rng_iter(C *c, const OrnCgLoop *l, const char *pad)
{
    int nd = l->loop->nkeys;
    if (!keys_permuted(l)) {
        cg_o(c, "%sorn_rt_rng_iter(rng_, b_, kk_);\n", pad);
        return;
    }
    cg_o(c, "%s{\n%s    int64_t lk_[%d];\n", pad, pad, nd);
    for (int r = 0; r < nd; r++) cg_o(c, "%s    lk_[%d] = kk_[%d];\n", pad, l->kperm[r], r);
    cg_o(c, "%s    orn_rt_rng_iter(rng_, b_, lk_);\n%s}\n", pad, pad);
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
    cg_o(c, "    const int64_t *const keys_ = b_->keys;\n");
    cg_o(c, "    const int64_t end_ = b_->first + b_->count;\n");
    cg_o(c, "    for (int64_t e_ = b_->first; e_ < end_; e_++) {\n");
    cg_o(c, "        const int64_t *const kk_ = keys_ + e_ * %d;\n", nd);
    const OrnSym *rks[ORN_RT_MAXDIM_CG];
    int nk = runtime_keys(l, rks);
    for (int d = 0; d < nk; d++)
        if (rks[d])
            cg_o(c, "        const int64_t %s __attribute__((unused)) = kk_[%d];\n",
                 cg_nm(c, rks[d]), d);
    if (lp->value)
        cg_o(c, "        %s *const vp_ __attribute__((unused)) = &vals_[e_];\n",
             cg_ctype(cg_elem_of(lp->space->type)));
    if (l->uses_rng) cg_rng_iter(c, l, "        ");
    put_buf(c, &body);
    cg_o(c, "    }\n");
    orn_buf_free(&body);
}

/* Write the accumulator locals back to the block's partials. */
static void acc_store(C *c, const OrnCgLoop *l, const char *pad)
{
    for (int i = 0; i < l->loop->naccums; i++)
        cg_o(c, "%sA_[%d].%s = acc%d_;\n", pad, i, cg_sfx(l->loop->accums[i].sym->type->kind), i);
}

/* Whether the body walks a sparse 2-D space as CSR (plan keys_unused): the runtime then
 * decodes no keys, for the body nor for the prefetch pass (which walks CSR blocks too). */
static bool csr_walk(const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    return lp->space && lp->space->type && lp->space->type->sparse && lp->nkeys == 2 &&
           l->strategy != ORN_STRAT_UNIMODULAR;
}

/* The element loop of one row of a CSR walk: the column key, the value, the random stream
 * and the statements (emitted by stmts at the given indent, 4 spaces each). */
static void csr_elems(C *c, const OrnCgLoop *l, const OrnSym *const *rks, const char *pad, bool rng,
                      const OrnBuf *stmts)
{
    const OrnLoop *lp = l->loop;
    cg_o(c, "%sfor (; e_ < re_; e_++) {\n", pad);
    if (rks[1])
        cg_o(c, "%s    const int64_t %s __attribute__((unused)) = c0_ + cols_[e_];\n", pad,
             cg_nm(c, rks[1]));
    if (lp->value)
        cg_o(c, "%s    %s *const vp_ __attribute__((unused)) = &vals_[e_];\n", pad,
             cg_ctype(cg_elem_of(lp->space->type)));
    if (rng) {
        cg_o(c, "%s    const int64_t kk_[2] = {%s, %s};\n", pad,
             rks[0] ? cg_nm(c, rks[0]) : "b_->lo[0] + r_",
             rks[1] ? cg_nm(c, rks[1]) : "c0_ + cols_[e_]");
        char p2[40];
        snprintf(p2, sizeof p2, "%s    ", pad);
        cg_rng_iter(c, l, p2);
    }
    put_buf(c, stmts);
    cg_o(c, "%s}\n", pad);
}

/* Opens a CSR walk over the block (rt.h: rowptr, cols, row_first): row by row, the row key
 * bound once per row; rows without elements in the block are skipped. */
static void csr_open(C *c)
{
    cg_o(c, "    if (b_->cols) {\n");
    cg_o(c, "        const int64_t *const rp_ = b_->rowptr;\n");
    cg_o(c, "        const int32_t *const cols_ = b_->cols;\n");
    cg_o(c, "        const int64_t end_ = b_->first + b_->count, c0_ = b_->lo[1];\n");
    cg_o(c, "        int64_t e_ = b_->first;\n");
}

static void csr_row(C *c, const OrnSym *const *rks)
{
    cg_o(c, "        for (int64_t r_ = b_->row_first; e_ < end_; r_++) {\n");
    cg_o(c, "            const int64_t re_ = rp_[r_ + 1] < end_ ? rp_[r_ + 1] : end_;\n");
    cg_o(c, "            if (e_ == re_) continue;\n");
    if (rks[0])
        cg_o(c, "            const int64_t %s __attribute__((unused)) = b_->lo[0] + r_;\n",
             cg_nm(c, rks[0]));
}

/* Scalar replacement for a run (orn_cg_fixed_elems): the buffers' elements first, as
 * pointers into their in-place storage (orn_rt_bbox; NULL: none, or the element outside
 * it), emitted by promo_bufs, then -- once the code has tested those pointers (promo_test)
 * -- every element's pointer and its local (promo_open); promo_close stores the locals back
 * and ends the replacement. Dist arrays' elements lie in their boxes where this is used
 * (the fast version of the run). */
static void promo_bufs(C *c, const OrnCgLoop *l, const OrnCgFixed *fx, int nfx)
{
    for (int i = 0; i < nfx; i++) {
        if (!fx[i].buffer) continue;
        const OrnSym *s = l->arrays[fx[i].array].sym;
        const char *T = cg_ctype(cg_elem_of(s->type));
        int nd = orn_list_len(fx[i].access->u.index.subs);
        cg_ind(c);
        cg_o(c, "const int64_t po%d_ = orn_rt_box_off(&B%d_, %d, ", i, fx[i].array, nd);
        cg_ex_key(c, fx[i].access->u.index.subs, s);
        cg_o(c, ");\n");
        cg_ol(c,
              "%s *const pp%d_ = B%d_.base && po%d_ >= 0 ? (%s *)(void *)B%d_.base + po%d_ : "
              "NULL;",
              T, i, fx[i].array, i, T, fx[i].array, i);
    }
}

/* " && pp<i>_" for each buffer's element (nothing when there is none). */
static void promo_test(C *c, const OrnCgFixed *fx, int nfx)
{
    for (int i = 0; i < nfx; i++)
        if (fx[i].buffer) cg_o(c, " && pp%d_", i);
}

static bool promo_any_buffer(const OrnCgFixed *fx, int nfx)
{
    for (int i = 0; i < nfx; i++)
        if (fx[i].buffer) return true;
    return false;
}

static void promo_open(C *c, const OrnCgLoop *l, const OrnCgFixed *fx, int nfx)
{
    for (int i = 0; i < nfx; i++) {
        const OrnSym *s = l->arrays[fx[i].array].sym;
        const char *T = cg_ctype(cg_elem_of(s->type));
        if (!fx[i].buffer) {
            int nd = orn_list_len(fx[i].access->u.index.subs);
            cg_ind(c);
            cg_o(c, "%s *const pp%d_ = (%s *)(void *)X%d_.base + orn_rt_box_at(&X%d_, %d, ", T, i,
                 T, fx[i].array, fx[i].array, nd);
            cg_ex_key(c, fx[i].access->u.index.subs, s);
            cg_o(c, ");\n");
        }
        cg_ol(c, "%s pv%d_ = *pp%d_;", T, i, i);
        c->promo[i] = s;
        c->promo_add[i] = fx[i].buffer && fx[i].written;
    }
    c->npromo = nfx;
}

static void promo_close(C *c, const OrnCgFixed *fx, int nfx, const char *pad)
{
    for (int i = 0; i < nfx; i++)
        if (fx[i].written) cg_o(c, "%s*pp%d_ = pv%d_;\n", pad, i, i);
    c->npromo = 0;
}

/* After the statements of a CSR row's element (in body): each float element held in a local
 * for the row and updated there is pinned to its register by an empty asm, so its in-order
 * adds stay a scalar chain. gcc otherwise vectorizes the row as a fold-left reduction --
 * gathered loads and products, then the adds one lane at a time -- whose start and end per
 * row cost more than a short row's adds (PageRank's pull, 8 edges a node: 8.7 -> 6.4 ms an
 * iteration; the chain of dependent adds bounds both). */
static void promo_pin(C *c, const OrnCgLoop *l, const OrnCgFixed *fx, int nfx, OrnBuf *body)
{
    OrnBuf *saved = c->b;
    c->b = body;
    c->ind = 5;
    for (int i = 0; i < nfx; i++) {
        OrnTypeKind k = cg_elem_of(l->arrays[fx[i].array].sym->type);
        if (fx[i].written && (k == T_F32 || k == T_F64))
            cg_ol(c, "__asm__(\"\" : \"+x\"(pv%d_));", i);
    }
    c->b = saved;
}

/* An integer expression affine in the row key `row` with coefficients the same for every
 * row of a block: literals, the key, consts, params and top-level variables (which a loop
 * body never writes), +, -, negation, and products with a factor free of the key. Over the
 * block's rows its values lie between those at the first and the last row. */
static bool row_affine(const OrnNode *e, const OrnSym *row, bool *uses)
{
    switch (e->kind) {
    case N_INT:
        return true;
    case N_NAME: {
        const OrnSym *s = e->u.name.sym;
        if (s && s == row) {
            *uses = true;
            return true;
        }
        return s &&
               (s->kind == SYM_CONST || s->kind == SYM_PARAM ||
                (s->kind == SYM_VAR && s->global)) &&
               s->type && orn_type_is_integer(s->type);
    }
    case N_UNARY:
        return e->u.unary.op == OP_SUB && row_affine(e->u.unary.e, row, uses);
    case N_BINARY: {
        OrnOp op = e->u.binary.op;
        bool ul = false, ur = false;
        if (op != OP_ADD && op != OP_SUB && op != OP_MUL) return false;
        if (!row_affine(e->u.binary.l, row, &ul) || !row_affine(e->u.binary.r, row, &ur))
            return false;
        if (op == OP_MUL && ul && ur) return false;
        *uses |= ul || ur;
        return true;
    }
    default:
        return false;
    }
}

/* A row's own test of the CSR body (a span of a subscript that the column key does not
 * move) that holds for every row of a block when it holds at the block's first and last. */
static bool row_hoistable(const OrnCgSpan *sp, const OrnSym *row)
{
    bool uses = false;
    return row && !sp->var && !sp->full && !sp->range && sp->inv && row_affine(sp->inv, row, &uses);
}

/* The rows of a CSR block (body_csr): each row runs its elements without per-access tests
 * when the block's tests (cok_) and the row's own pass, else with them. `hoisted`: the
 * row's own tests affine in the row key passed for the whole block (rok_) and are left out,
 * so that the row loop holds no test that is the same for every row. */
static void csr_rows(C *c, const OrnCgLoop *l, const OrnSym *const *rks, const OrnCgSpan *sp,
                     int nsp, const OrnCgFixed *fx, int nfx, bool versioned, bool hoisted)
{
    const OrnNode *blk = l->loop->node->u.parfor.body;
    /* hoisted with no test left for a row (the caller tested cok_ too): the fast rows only */
    bool only = hoisted && !promo_any_buffer(fx, nfx);
    for (int i = 0; only && i < nsp; i++)
        if (!sp[i].var && !sp[i].full && !row_hoistable(&sp[i], rks[0])) only = false;
    csr_row(c, rks);
    for (int fast = versioned ? 1 : 0; fast >= (only ? 1 : 0); fast--) {
        const char *pad = versioned ? "                " : "            ";
        if (only) {
            cg_o(c, "            {\n");
            c->ind = 4;
            promo_open(c, l, fx, nfx);
        } else if (versioned && fast) {
            c->ind = 3;
            promo_bufs(c, l, fx, nfx);
            cg_ind(c);
            cg_o(c, "if (cok_");
            promo_test(c, fx, nfx);
            for (int i = 0; i < nsp; i++) {
                if (sp[i].var || sp[i].full || (hoisted && row_hoistable(&sp[i], rks[0]))) continue;
                cg_o(c, " &&\n");
                cg_ind(c);
                cg_o(c, "    ");
                cg_span_test(c, &sp[i]);
            }
            cg_o(c, ") {\n");
            c->ind = 4;
            promo_open(c, l, fx, nfx);
        } else if (versioned) {
            cg_o(c, "            } else {\n");
        }
        OrnBuf body;
        orn_buf_init(&body);
        if (fast) c->vfast_var = rks[1], c->vfast_body = blk, c->vfast_vv = true;
        body_stmts(c, l, &body, versioned ? 5 : 4, fast);
        if (versioned && fast && !c->cuda) promo_pin(c, l, fx, nfx, &body);
        c->vfast_var = NULL, c->vfast_varying = NULL, c->vfast_body = NULL, c->vfast_vv = false;
        csr_elems(c, l, rks, pad, l->uses_rng, &body);
        orn_buf_free(&body);
        if (versioned && fast) promo_close(c, fx, nfx, pad);
    }
    if (versioned) cg_o(c, "            }\n");
    cg_o(c, "        }\n");
}

/* The body over a CSR block: no keys decoded. Versioned like a `for` over the column key
 * (version.h): when every access's key is in its box for the block's whole column range
 * (checked once per block) and for the row (its row-invariant subscripts, once per row),
 * the row runs without per-access tests, and elements fixed for the row (`acc[d] += ...`)
 * live in locals, loaded before the row and stored after it. Blocks the runtime hands over
 * with listed keys (not CSR) take the generic walk. */
static void body_csr(C *c, const OrnCgLoop *l)
{
    const OrnSym *rks[ORN_RT_MAXDIM_CG] = {NULL};
    runtime_keys(l, rks);
    const OrnNode *blk = l->loop->node->u.parfor.body;
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp = 0;
    bool versioned = rks[1] && orn_cg_range_spans(l, rks[1], blk, true, sp, &nsp, NULL);
    /* the column range is clipped once per block, before any row's key is bound: a shift
     * (version.h: `A[k0 + k1]`, the row key k0) cannot be */
    for (int i = 0; versioned && i < nsp; i++)
        if (sp[i].var && sp[i].inv) versioned = false;
    OrnCgFixed fx[ORN_CG_MAXFIXED];
    int nfx = versioned ? orn_cg_fixed_elems(l, rks[1], blk, fx, ORN_CG_MAXFIXED) : 0;
    csr_open(c);
    bool hoist = false;
    if (versioned) {
        cg_o(c, "        int64_t cf0_ = c0_, cf1_ = b_->hi[1];\n");
        for (int i = 0; i < nsp; i++)
            if (sp[i].var) { /* an array's box or a local array's extent (version.h) */
                cg_o(c, "        ");
                cg_span_clip(c, &sp[i], "cf0_", "cf1_");
                cg_o(c, "\n");
            }
        cg_o(c, "        const int cok_ = cf0_ == c0_ && cf1_ == b_->hi[1]");
        for (int i = 0; i < nsp; i++)
            if (sp[i].full) { /* views' extents: once per block */
                cg_o(c, " &&\n            ");
                cg_span_full(c, &sp[i]);
            }
        cg_o(c, ";\n");
        /* the rows' own tests affine in the row key, once per block: at its first and last
         * rows (a row then skips them; PageRank's pull, `acc[d] += ...`: 7.0 -> 6.3 ms) */
        for (int i = 0; i < nsp; i++) hoist |= row_hoistable(&sp[i], rks[0]);
        if (hoist) {
            cg_o(c, "        int rok_ = 1;\n");
            cg_o(c, "        for (int end_r_ = 0; end_r_ < 2; end_r_++) {\n");
            cg_o(c,
                 "            const int64_t %s = end_r_ ? b_->hi[0] - 1 : b_->lo[0] + "
                 "b_->row_first;\n",
                 cg_nm(c, rks[0]));
            cg_o(c, "            rok_ = rok_");
            for (int i = 0; i < nsp; i++)
                if (row_hoistable(&sp[i], rks[0])) {
                    cg_o(c, " &&\n                   ");
                    cg_span_test(c, &sp[i]);
                }
            cg_o(c, ";\n        }\n");
        }
    }
    if (hoist) { /* the row loop unswitched on rok_ */
        cg_o(c, "        if (rok_ && cok_) {\n");
        csr_rows(c, l, rks, sp, nsp, fx, nfx, versioned, true);
        cg_o(c, "        } else {\n");
        csr_rows(c, l, rks, sp, nsp, fx, nfx, versioned, false);
        cg_o(c, "        }\n");
    } else {
        csr_rows(c, l, rks, sp, nsp, fx, nfx, versioned, false);
    }
    acc_store(c, l, "        ");
    cg_o(c, "        return 0;\n    }\n");
}

/* ---------------------------------------------------------------- accumulator lanes */

/* An expression a lane may evaluate on its own (cg_pure_expr). */
static bool lane_expr(const OrnNode *e)
{
    return cg_pure_expr(e, true, NULL, 0);
}

/* A buffer's element fixed for the run and held in a local (promo_open), which the body
 * only adds to: `dy[i] += a * x[j]` along j. Its adds take lanes as a sum accumulator's. */
static int lane_promo(const C *c, const OrnNode *tg)
{
    const OrnSym *b = tg->kind == N_INDEX ? orn_cg_base_sym(tg) : NULL;
    int i = b ? cg_promoted(c, b) : -1;
    if (i < 0 || !c->promo_add[i]) return -1;
    OrnTypeKind k = cg_elem_of(b->type);
    return k == T_F32 || k == T_F64 || k == T_I32 || k == T_I64 ? i : -1;
}

/* Statements whose only effects are the loop's accumulators, the value variable (each
 * lane its own element), scalars declared in the body and `+=` into the buffers' elements
 * held for the run (lane_promo). */
static bool lane_stmts(const C *c, const OrnCgLoop *l, const OrnNode *s)
{
    for (; s; s = s->next) {
        switch (s->kind) {
        case N_BLOCK:
            if (!lane_stmts(c, l, s->u.block.stmts)) return false;
            break;
        case N_IF:
            if (!lane_expr(s->u.if_.cond) || !lane_stmts(c, l, s->u.if_.then) ||
                (s->u.if_.els && !lane_stmts(c, l, s->u.if_.els)))
                return false;
            break;
        case N_ASSIGN: {
            const OrnNode *tg = s->u.assign.target;
            const OrnSym *sym = tg->kind == N_NAME ? tg->u.name.sym : NULL;
            if (!sym && s->u.assign.op == OP_ADD && lane_promo(c, tg) >= 0 &&
                lane_expr(s->u.assign.value)) /* a buffer is never read (sema) */
                break;
            if (!sym || !lane_expr(s->u.assign.value)) return false;
            if (sym->kind == SYM_VALUE) break;
            if (sym->kind != SYM_VAR || !sym->type || sym->type->kind == T_ARRAY) return false;
            if (orn_cg_acc_index(l, sym) < 0 &&
                (orn_cg_is_static(sym) || sym->parfor != l->loop->node))
                return false;
            break;
        }
        default:
            return false;
        }
    }
    return true;
}

/* Lanes per run: 16 when every accumulator is 4 bytes wide, else 8 (one 512-bit vector). */
static int lane_width(const C *c, const OrnCgLoop *l)
{
    for (int i = 0; i < l->loop->naccums; i++) {
        OrnTypeKind k = l->loop->accums[i].sym->type->kind;
        if (k != T_F32 && k != T_I32) return 8;
    }
    for (int i = 0; i < c->npromo; i++) {
        OrnTypeKind k = cg_elem_of(c->promo[i]->type);
        if (c->promo_add[i] && k != T_F32 && k != T_I32) return 8;
    }
    return 16;
}

/* Does the run hold a buffer's element that lanes may add to (lane_promo)? */
static bool lane_promos(const C *c)
{
    for (int i = 0; i < c->npromo; i++)
        if (c->promo_add[i]) return true;
    return false;
}

/* acc = acc OP (the lanes [lo, lo + n) of <pfx><i>_ combined as a balanced tree, left
 * halves first); kind ACC_SUM for a buffer's element (pvl) */
static void lane_tree(C *c, OrnAccKind kind, OrnTypeKind k, const char *pfx, int i, int lo, int n)
{
    if (n == 1) {
        cg_o(c, "%s%d_[%d]", pfx, i, lo);
        return;
    }
    if (kind == ACC_MIN || kind == ACC_MAX)
        cg_o(c, "orn_std_%s_%s(", kind == ACC_MIN ? "min" : "max", cg_sfx(k));
    else
        cg_o(c, "(");
    lane_tree(c, kind, k, pfx, i, lo, n / 2);
    cg_o(c, kind == ACC_SUM ? " + " : kind == ACC_PROD ? " * " : ", ");
    lane_tree(c, kind, k, pfx, i, lo + n / 2, n / 2);
    cg_o(c, ")");
}

static void elem_body(C *c, const OrnCgLoop *l, const OrnSym *last, const char *vt, const char *key,
                      const OrnNode *blk, int lvl, int fast);

/* acc = acc OP the tree of the lanes <pfx><i>_, for each sum and product accumulator and
 * (min, max) each lane's value. */
static void lanes_combine(C *c, const OrnCgLoop *l, const char *pfx, int W)
{
    const OrnLoop *lp = l->loop;
    for (int i = 0; i < lp->naccums; i++) {
        const OrnAccum *a = &lp->accums[i];
        const char *sfx = cg_sfx(a->sym->type->kind);
        cg_ind(c);
        if (a->kind == ACC_MIN || a->kind == ACC_MAX)
            cg_o(c, "acc%d_ = orn_std_%s_%s(acc%d_, ", i, a->kind == ACC_MIN ? "min" : "max", sfx,
                 i);
        else
            cg_o(c, "acc%d_ = (%s)(acc%d_ %s ", i, cg_ctype(a->sym->type->kind), i,
                 a->kind == ACC_SUM ? "+" : "*");
        lane_tree(c, a->kind, a->sym->type->kind, pfx, i, 0, W);
        cg_o(c, ");\n");
    }
}

/* Each buffer element's lanes added to it (lane_promo): pv<i>_ += the tree of pvl<i>_. */
static void lanes_promo_combine(C *c, int W)
{
    for (int i = 0; i < c->npromo; i++) {
        if (!c->promo_add[i]) continue;
        OrnTypeKind k = cg_elem_of(c->promo[i]->type);
        cg_ind(c);
        cg_o(c, "pv%d_ = (%s)(pv%d_ + ", i, cg_ctype(k), i);
        lane_tree(c, ACC_SUM, k, "pvl", i, 0, W);
        cg_o(c, ");\n");
    }
}

/* W lanes per accumulator from the identity (min/max: its value), accl<i>_ (or the run's,
 * accr<i>_). */
static void lanes_decl(C *c, const OrnCgLoop *l, const char *pfx, int W)
{
    const OrnLoop *lp = l->loop;
    for (int i = 0; i < lp->naccums; i++) {
        const OrnAccum *a = &lp->accums[i];
        OrnTypeKind k = a->sym->type->kind;
        const char *init = a->kind == ACC_SUM ? "0" : a->kind == ACC_PROD ? "1" : NULL;
        cg_ol(c, "%s %s%d_[%d];", cg_ctype(k), pfx, i, W);
        if (init)
            cg_ol(c, "for (int l_ = 0; l_ < %d; l_++) %s%d_[l_] = (%s)%s;", W, pfx, i, cg_ctype(k),
                  init);
        else
            cg_ol(c, "for (int l_ = 0; l_ < %d; l_++) %s%d_[l_] = acc%d_;", W, pfx, i, i);
    }
}

/* A run cut into segments (range versioning, an `if` split) keeps its accumulator lanes for
 * the whole run, as the documented order has it (docs/language.md section 13): iteration j
 * of the run [j0_, j1_) in lane (j - j0_) mod W up to jf_, the end of its whole groups,
 * where the run's lanes accr<i>_ are combined into the partial (once: lc_), then the rest in
 * order. Declared at the run's start (body_dense) when the loop's body takes lanes. */
static void lanes_run_open(C *c, const OrnCgLoop *l, int W)
{
    c->ind = 2;
    lanes_decl(c, l, "accr", W);
    cg_ol(c, "const int64_t jf_ = j0_ + (j1_ - j0_) / %d * %d;", W, W);
    cg_ol(c, "int lc_ = 0;");
    c->run_lanes = W;
}

/* One segment [from, to) of such a run: its first elements up to a group's start one at a
 * time in their lanes, whole groups as the `omp simd` loop, the last before jf_ one at a
 * time; the lanes combined when the segment reaches jf_; then the rest of the segment in
 * order. The segment's lanes are locals (registers) between the run's. Buffer elements'
 * lanes (lane_promos) stay the segment's own. */
static void lane_segment(C *c, const OrnCgLoop *l, const OrnSym *last, const char *vt,
                         const char *from, const char *to, const OrnNode *blk, int lvl, int fast)
{
    const OrnLoop *lp = l->loop;
    int W = c->run_lanes;
    c->ind = lvl;
    cg_ol(c, "{");
    c->ind = lvl + 1;
    for (int i = 0; i < c->npromo; i++)
        if (c->promo_add[i])
            cg_ol(c, "%s pvl%d_[%d] = {0};", cg_ctype(cg_elem_of(c->promo[i]->type)), i, W);
    for (int i = 0; i < lp->naccums; i++) {
        OrnTypeKind k = lp->accums[i].sym->type->kind;
        cg_ol(c, "%s accl%d_[%d];", cg_ctype(k), i, W);
        cg_ol(c, "for (int l_ = 0; l_ < %d; l_++) accl%d_[l_] = accr%d_[l_];", W, i, i);
    }
    cg_ol(c, "int64_t jl_ = %s;", from);
    cg_ol(c, "const int64_t je_ = %s < jf_ ? %s : jf_;", to, to);
    for (int part = 0; part < 3; part++) { /* the head, whole groups, the tail */
        bool groups = part == 1;
        c->ind = lvl + 1;
        if (part == 0)
            cg_ol(c, "for (; jl_ < je_ && (jl_ - j0_) %% %d != 0; jl_++) {", W);
        else if (groups)
            cg_ol(c, CG_UNROLL2 " for (; jl_ + %d <= je_; jl_ += %d) {", W, W);
        else
            cg_ol(c, "for (; jl_ < je_; jl_++) {");
        if (groups) {
            cg_ol(c, "    _Pragma(\"omp simd\")");
            cg_ol(c, "    for (int l_ = 0; l_ < %d; l_++) {", W);
        } else {
            cg_ol(c, "    const int l_ = (int)((jl_ - j0_) %% %d);", W);
        }
        c->lanes = true;
        elem_body(c, l, last, vt, groups ? "jl_ + l_" : "jl_", blk, lvl + (groups ? 3 : 2), fast);
        c->lanes = false;
        c->ind = lvl + 1;
        if (groups) cg_ol(c, "    }");
        cg_ol(c, "}");
    }
    for (int i = 0; i < lp->naccums; i++)
        cg_ol(c, "for (int l_ = 0; l_ < %d; l_++) accr%d_[l_] = accl%d_[l_];", W, i, i);
    lanes_promo_combine(c, W);
    cg_ol(c, "if (!lc_ && jl_ >= jf_) {");
    c->ind = lvl + 2;
    cg_ol(c, "lc_ = 1;");
    lanes_combine(c, l, "accr", W);
    c->ind = lvl + 1;
    cg_ol(c, "}");
    cg_ol(c, "for (; jl_ < %s; jl_++) {", to);
    elem_body(c, l, last, vt, "jl_", blk, lvl + 2, fast);
    c->ind = lvl + 1;
    cg_ol(c, "}");
    c->ind = lvl;
    cg_ol(c, "}");
}

/* The elements [from, to) of a dense run whose body only updates accumulators (lane_stmts):
 * W lanes, iteration j into lane (j - from) mod W for the whole W-element groups, each lane
 * its own partial from the accumulator's identity (min/max: its value), the groups as an
 * `omp simd` loop; then acc = acc OP the lanes' balanced tree, then the rest of the run
 * in order. A fixed order for the same blocks (docs/language.md, section 13: a rank's
 * accumulator partials depend on the partition), and the loop vectorizes as the
 * hand-written C with W accumulators does (one add after another was four cycles an
 * element). */
static void lane_loop(C *c, const OrnCgLoop *l, const OrnSym *last, const char *vt,
                      const char *from, const char *to, const OrnNode *blk, int lvl, int fast)
{
    if (c->run_lanes) {
        lane_segment(c, l, last, vt, from, to, blk, lvl, fast);
        return;
    }
    int W = lane_width(c, l);
    c->ind = lvl;
    cg_ol(c, "{");
    for (int i = 0; i < c->npromo; i++)
        if (c->promo_add[i])
            cg_ol(c, "    %s pvl%d_[%d] = {0};", cg_ctype(cg_elem_of(c->promo[i]->type)), i, W);
    c->ind = lvl + 1;
    lanes_decl(c, l, "accl", W);
    c->ind = lvl;
    cg_ol(c, "    int64_t jl_ = %s;", from);
    cg_ol(c, "    " CG_UNROLL2 " for (; jl_ + %d <= %s; jl_ += %d) {", W, to, W);
    cg_ol(c, "        _Pragma(\"omp simd\")");
    cg_ol(c, "        for (int l_ = 0; l_ < %d; l_++) {", W);
    c->lanes = true;
    elem_body(c, l, last, vt, "jl_ + l_", blk, lvl + 3, fast);
    c->lanes = false;
    c->ind = lvl;
    cg_ol(c, "        }");
    cg_ol(c, "    }");
    c->ind = lvl + 1;
    lanes_combine(c, l, "accl", W);
    lanes_promo_combine(c, W);
    c->ind = lvl;
    cg_ol(c, "    for (; jl_ < %s; jl_++) {", to);
    elem_body(c, l, last, vt, "jl_", blk, lvl + 2, fast);
    c->ind = lvl;
    cg_ol(c, "    }");
    cg_ol(c, "}");
}

/* One element of a dense run: the key bound to `key`, the value variable's pointer, the
 * iteration's random stream, the body, at indentation level lvl. */
static void elem_body(C *c, const OrnCgLoop *l, const OrnSym *last, const char *vt, const char *key,
                      const OrnNode *blk, int lvl, int fast)
{
    c->ind = lvl;
    if (last) cg_ol(c, "const int64_t %s __attribute__((unused)) = %s;", cg_nm(c, last), key);
    if (vt) cg_ol(c, "%s *const vp_ __attribute__((unused)) = &row_[%s];", vt, key);
    if (l->uses_rng) { /* never in lanes (elem_loop) */
        cg_ol(c, "kk_[%d] = %s;", l->loop->nkeys - 1, key);
        char pad[64];
        snprintf(pad, sizeof pad, "%*s", 4 * lvl, "");
        cg_rng_iter(c, l, pad);
    }
    OrnBuf body;
    orn_buf_init(&body);
    if (fast) c->vfast_var = last, c->vfast_body = l->loop->node->u.parfor.body, c->vfast_vv = true;
    stmts_of(c, l, blk, &body, lvl, fast);
    c->vfast_var = NULL, c->vfast_varying = NULL, c->vfast_body = NULL, c->vfast_vv = false;
    put_buf(c, &body);
    orn_buf_free(&body);
    if (c->srow_prev && !c->lanes) { /* the element the next key reads as its left neighbour */
        c->ind = lvl;
        cg_ol(c, "pv_ = *vp_;");
    }
}

/* One element loop over [from, to) of the innermost key at indentation level lvl: its
 * key, its value pointer, its random stream, the statements of blk (the body when NULL);
 * fast: the accesses are proven in their boxes (version.h). */
static void elem_loop(C *c, const OrnCgLoop *l, const OrnSym *last, const char *vt,
                      const char *from, const char *to, const OrnNode *blk, int lvl, int fast)
{
    const OrnNode *sc = c->cx == CX_BODY && !c->run_lanes ? cg_scatter_stmt(c, l, blk) : NULL;
    if (sc) {
        cg_scatter_loop(c, last, vt, from, to, sc, lvl);
        return;
    }
    if (c->run_lanes || /* the run's lanes, whose body was found to take them */
        ((l->loop->naccums > 0 || lane_promos(c)) && !l->uses_rng && !c->cuda &&
         lane_stmts(c, l, (blk ? blk : l->loop->node->u.parfor.body)->u.block.stmts))) {
        lane_loop(c, l, last, vt, from, to, blk, lvl, fast);
        return;
    }
    if (fast && !blk &&
        (cg_coljam(c, l, last, vt, from, to, lvl) || cg_keyjam(c, l, last, vt, from, to, lvl))) {
        /* whole groups of keys jammed (c_coljam.c, c_jam.c), then the rest as written */
        c->ind = lvl + 1;
        cg_ol(c, "for (int64_t j_ = jl_; j_ < %s; j_++) {", to);
        elem_body(c, l, last, vt, "j_", blk, lvl + 2, fast);
        c->ind = lvl + 1;
        cg_ol(c, "}");
        c->ind = lvl;
        cg_ol(c, "}");
        return;
    }
    c->ind = lvl;
    cg_ol(c, "for (int64_t j_ = %s; j_ < %s; j_++) {", from, to);
    elem_body(c, l, last, vt, "j_", blk, lvl + 1, fast);
    c->ind = lvl;
    cg_ol(c, "}");
}

void cg_elem_body(C *c, const OrnCgLoop *l, const OrnSym *last, const char *vt, const char *key,
                  int lvl)
{
    elem_body(c, l, last, vt, key, NULL, lvl, 1);
}

/* A bound of a split (version.h: OrnCgSplit): var = max (cmp "<") or min (">") of var and
 * e, or of e + 1 (saturating) when plus1. */
static void split_bound(C *c, const OrnNode *e, int plus1, const char *cmp, const char *var)
{
    cg_ol(c, "{");
    c->ind++;
    cg_ind(c);
    cg_o(c, "int64_t bv_ = (int64_t)(");
    cg_ex(c, e);
    cg_o(c, ");\n");
    if (plus1) cg_ol(c, "bv_ = bv_ < INT64_MAX ? bv_ + 1 : INT64_MAX;");
    cg_ol(c, "if (%s %s bv_) %s = bv_;", var, cmp, var);
    c->ind--;
    cg_ol(c, "}");
}

/* A row over [from, to) whose body is a split `if` (orn_cg_split_if), at indentation level
 * lvl (fast: the accesses are proven in their boxes, version.h): the interval where the condition
 * holds runs the `if`'s statements alone, the rest of the row as written, in key order. */
static void split_row(C *c, const OrnCgLoop *l, const OrnCgSplit *sx, const OrnSym *last,
                      const char *vt, const char *from, const char *to, int lvl, int fast)
{
    c->ind = lvl;
    cg_ol(c, "int64_t sa_ = %s, sz_ = %s;", from, from);
    cg_ind(c);
    cg_o(c, "if (%s < %s", from, to);
    for (int i = 0; i < sx->nrow; i++) {
        cg_o(c, " && (");
        cg_ex_cond(c, sx->row[i]);
        cg_o(c, ")");
    }
    cg_o(c, ") {\n");
    c->ind = lvl + 1;
    cg_ol(c, "sz_ = %s;", to);
    for (int i = 0; i < sx->nlo; i++) split_bound(c, sx->lo[i].e, sx->lo[i].plus1, "<", "sa_");
    for (int i = 0; i < sx->nhi; i++) split_bound(c, sx->hi[i].e, sx->hi[i].plus1, ">", "sz_");
    cg_ol(c, "if (sa_ > %s) sa_ = %s;", to, to);
    cg_ol(c, "if (sz_ < sa_) sz_ = sa_;");
    c->ind = lvl;
    cg_ol(c, "}");
    cg_ol(c, "const int64_t ss_[4] = {%s, sa_, sz_, %s};", from, to);
    cg_ol(c, "for (int h_ = 0; h_ < 3; h_++) {");
    c->ind = lvl + 1;
    cg_ol(c, "if (h_ != 1) {");
    elem_loop(c, l, last, vt, "ss_[h_]", "ss_[h_ + 1]", NULL, lvl + 2, fast);
    c->ind = lvl + 1;
    cg_ol(c, "} else {");
    elem_loop(c, l, last, vt, "ss_[1]", "ss_[2]", sx->then, lvl + 2, fast);
    c->ind = lvl + 1;
    cg_ol(c, "}");
    c->ind = lvl;
    cg_ol(c, "}");
}

/* A dense block's keys in the runtime's order (keys, the run's key last) and the spans of
 * its runs' versioning test (orn_cg_range_spans, bufs as there): whether the runs are
 * versioned (body_dense, pf_runs). */
static bool run_spans(const OrnCgLoop *l, const OrnSym **keys, OrnCgSpan *sp, int *nsp, bool *bufs)
{
    runtime_keys(l, keys);
    const OrnSym *last = keys[l->loop->nkeys - 1];
    *nsp = 0;
    if (bufs) *bufs = false;
    return last && orn_cg_range_spans(l, last, l->loop->node->u.parfor.body, true, sp, nsp, bufs);
}

/* The walk of a dense block in runs along the innermost key (body_dense, pf_runs): opens
 * the loop over runs at indent `in` (spaces) with the run's bounds j0_, j1_, the other keys
 * and row_ bound; runs_close moves to the next run and closes it. */
static void runs_open(C *c, const OrnSym *const *keys, int nd, const char *vt, int in)
{
    cg_o(c, "%*sint64_t kk_[%d];\n", in, "", nd);
    cg_o(c, "%*sorn_rt_block_key(b_, b_->first, kk_);\n", in, "");
    cg_o(c, "%*sconst int64_t end_ = b_->first + b_->count, hl_ = b_->hi[%d];\n", in, "", nd - 1);
    cg_o(c, "%*sfor (int64_t e_ = b_->first; e_ < end_;) {\n", in, "");
    cg_o(c, "%*s    const int64_t j0_ = kk_[%d];\n", in, "", nd - 1);
    cg_o(c, "%*s    const int64_t j1_ = end_ - e_ < hl_ - j0_ ? j0_ + (end_ - e_) : hl_;\n", in,
         "");
    for (int d = 0; d < nd - 1; d++)
        if (keys[d])
            cg_o(c, "%*s    const int64_t %s __attribute__((unused)) = kk_[%d];\n", in, "",
                 cg_nm(c, keys[d]), d);
    if (vt) cg_o(c, "%*s    %s *const row_ = vals_ + (e_ - j0_);\n", in, "", vt);
}

static void runs_close(C *c, int nd, int in)
{
    cg_o(c, "%*s    e_ += j1_ - j0_;\n", in, "");
    cg_o(c, "%*s    kk_[%d] = j1_;\n", in, "", nd - 1);
    cg_o(c, "%*s    for (int d_ = %d; d_ > 0 && kk_[d_] >= b_->hi[d_]; d_--) {\n", in, "", nd - 1);
    cg_o(c, "%*s        kk_[d_] = b_->lo[d_];\n", in, "");
    cg_o(c, "%*s        kk_[d_ - 1]++;\n", in, "");
    cg_o(c, "%*s    }\n", in, "");
    cg_o(c, "%*s}\n", in, "");
}

/* One version of a dense run's elements [from, to) (body_dense): split at an `if` on the
 * run's key, with fixed elements in locals, or plain. */
static void run_version(C *c, const OrnCgLoop *l, const OrnCgSplit *sx, bool split, bool versioned,
                        OrnCgFixed *fx, int nfx, const OrnSym *last, const char *vt,
                        const char *from, const char *to, int ind, int fast)
{
    c->srow_prev = c->srow_arr && nfx == 0 && cg_srow_carry(c, l);
    if (c->srow_prev) { /* the previous element in a register (c_srow.c) */
        c->ind = ind;
        cg_ol(c, "%s pv_ = 0;", vt);
        cg_ol(c, "if (%s < %s) pv_ = row_[%s - 1];", from, to, from);
    }
    if (split && (fast || !versioned)) {
        split_row(c, l, sx, last, vt, from, to, ind, fast);
    } else if ((fast || !versioned) && nfx > 0) {
        /* elements fixed for the run in locals (orn_cg_fixed_elems), loaded only for a
         * run that is not empty: the fast range of a row whose fixed element lies
         * outside its box (edit distance's A[i - 1] at i = 0, read only where i > 0)
         * is empty, and the element must not be read then */
        bool bufs = promo_any_buffer(fx, nfx);
        c->ind = ind;
        cg_ol(c, "if (%s < %s) {", from, to);
        c->ind = ind + 1;
        promo_bufs(c, l, fx, nfx);
        if (bufs) {
            cg_ind(c);
            cg_o(c, "if (1");
            promo_test(c, fx, nfx);
            cg_o(c, ") {\n");
            c->ind++;
        }
        promo_open(c, l, fx, nfx);
        int pl = c->ind;
        elem_loop(c, l, last, vt, from, to, NULL, pl, fast);
        char pad[64];
        snprintf(pad, sizeof pad, "%*s", 4 * pl, "");
        promo_close(c, fx, nfx, pad);
        if (bufs) {
            c->ind = pl - 1;
            cg_ol(c, "} else {");
            elem_loop(c, l, last, vt, from, to, NULL, pl, fast);
            c->ind = pl - 1;
            cg_ol(c, "}");
        }
        c->ind = ind;
        cg_ol(c, "}");
    } else {
        elem_loop(c, l, last, vt, from, to, NULL, ind, fast);
    }
    c->srow_prev = false;
}

/* The body of a loop over a dense iteration space: the block's elements [first, first +
 * count) in row-major key order, as runs along the innermost key. Each run is a C loop
 * over that key, versioned like a `for` (version.h) when its accesses allow. */
static void body_dense(C *c, const OrnCgLoop *l, bool keyed)
{
    const OrnLoop *lp = l->loop;
    int nd = lp->nkeys;
    const OrnSym *keys[ORN_RT_MAXDIM_CG] = {NULL};
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp;
    bool bufs = false;
    bool versioned = run_spans(l, keys, sp, &nsp, c->cuda ? NULL : &bufs);
    const OrnSym *last = keys[nd - 1];
    /* the buffer updates' keys get a test of their own (as a CSR row's, c_stmt.c) */
    OrnCgSpan bs[ORN_CG_MAXSPAN];
    int nb = 0, nx = 0, bid = 1 + c->tmp++; /* not 0: the run split's own sg0_ */
    c->tmp = bid + 1;
    for (int i = 0; i < nsp; i++) {
        if (sp[i].buffer)
            bs[nb++] = sp[i];
        else
            sp[nx++] = sp[i];
    }
    nsp = nx;
    bufs = bufs && nb > 0;
    const char *vt = lp->value ? cg_ctype(cg_elem_of(lp->space->type)) : NULL;
    OrnCgSplit sx;
    bool split = last && !l->uses_rng && orn_cg_split_if(l, last, lp->node->u.parfor.body, &sx);
    bool srow = versioned && cg_srow_version(c, l, last);
    bufs = bufs && !srow; /* one twin of the fast version at most */
    if (keyed)
        cg_o(c, "    if (b_->sparse) return orn_body_%d_keys(rt_, b_, env_);\n", l->id);
    else
        cg_o(c,
             "    if (b_->sparse) return orn_rt_body_error(rt_, \"internal error: listed keys in a "
             "dense loop\");\n");
    runs_open(c, keys, nd, vt, 4);
    if (srow) {
        /* the view's element at the run's first key (kk_, storage order) is row_[j0_]:
         * compared as integers, the offset may lie outside the box */
        int k = orn_cg_array_index(l, lp->space);
        cg_o(c,
             "        const int same_ = X%d_.base && (uintptr_t)X%d_.base + "
             "(uintptr_t)orn_rt_box_at(&X%d_, %d, kk_) * sizeof(%s) == (uintptr_t)(row_ + j0_);\n",
             k, k, k, nd, vt);
    }
    if (!versioned && !split) cg_scatter_rows(c, l, keys, nd, vt);
    /* ifs whose conditions hold in the fast range, narrowed to where they do (version.h) */
    OrnCgGuard gd[ORN_CG_MAXGUARD];
    const OrnNode *gifs[ORN_CG_MAXGUARD], *gkeep[ORN_CG_MAXGUARD];
    int ngifs = 0;
    int ngd = versioned && !split && !c->cuda
                  ? orn_cg_guards(l, last, lp->node->u.parfor.body, true, gd, ORN_CG_MAXGUARD, gifs,
                                  gkeep, &ngifs, ORN_CG_MAXGUARD)
                  : 0;
    if ((versioned || split) && lp->naccums > 0 && !l->uses_rng && !c->cuda && c->npromo == 0 &&
        lane_stmts(c, l, lp->node->u.parfor.body->u.block.stmts))
        lanes_run_open(c, l, lane_width(c, l));
    if (versioned) {
        c->ind = 2;
        cg_split_range_g(c, sp, nsp, gd, ngd, "j0_", "j1_", 0);
        if (bufs) cg_split_range(c, bs, nb, "j0_", "j1_", bid);
        cg_o(c, "        for (int g_ = 0; g_ < 3; g_++) {\n");
    }
    OrnCgFixed fx[ORN_CG_MAXFIXED];
    int nfx = last && !split
                  ? orn_cg_fixed_elems(l, last, lp->node->u.parfor.body, fx, ORN_CG_MAXFIXED)
                  : 0;
    if (!versioned) { /* no fast version: only buffers' elements, whose pointers are tested */
        int n = 0;
        for (int i = 0; i < nfx; i++)
            if (fx[i].buffer) fx[n++] = fx[i];
        nfx = n;
    }
    for (int fast = versioned ? 1 : 0; fast >= 0; fast--) {
        int ind = 2;
        const char *from = "j0_", *to = "j1_";
        if (versioned) {
            cg_o(c, fast ? "            if (g_ == 1) {\n" : "            } else {\n");
            ind = 4;
            from = "sg0_[g_]";
            to = "sg0_[g_ + 1]";
        }
        c->proven = fast ? gifs : NULL;
        c->proven_keep = fast ? gkeep : NULL;
        c->nproven = fast ? ngifs : 0;
        if (fast && srow) {
            c->ind = ind;
            cg_ol(c, "if (same_) {");
            c->srow_arr = lp->space;
            run_version(c, l, &sx, split, versioned, fx, nfx, last, vt, from, to, ind + 1, fast);
            c->srow_arr = NULL;
            c->ind = ind;
            cg_ol(c, "} else {");
            run_version(c, l, &sx, split, versioned, fx, nfx, last, vt, from, to, ind + 1, fast);
            c->ind = ind;
            cg_ol(c, "}");
        } else if (fast && bufs) {
            /* the fast range's buffer updates in their boxes too: added in place without a
             * test each (c->bufs_sure, c_stmt.c), as a CSR row's (column statistics through
             * two buffers, S[j] += a and Q[j] += a * a) */
            c->ind = ind;
            cg_ol(c, "if (sg%d_[1] <= %s && %s <= sg%d_[2]) {", bid, from, to, bid);
            c->bufs_sure++;
            run_version(c, l, &sx, split, versioned, fx, nfx, last, vt, from, to, ind + 1, fast);
            c->bufs_sure--;
            c->ind = ind;
            cg_ol(c, "} else {");
            run_version(c, l, &sx, split, versioned, fx, nfx, last, vt, from, to, ind + 1, fast);
            c->ind = ind;
            cg_ol(c, "}");
        } else {
            run_version(c, l, &sx, split, versioned, fx, nfx, last, vt, from, to, ind, fast);
        }
        c->proven = NULL;
        c->proven_keep = NULL;
        c->nproven = 0;
    }
    if (versioned) cg_o(c, "            }\n        }\n");
    c->run_lanes = 0;
    runs_close(c, nd, 4);
}

/* The body function, orn_body_<id>. A unimodular loop over a dense space gets two: the
 * blocks of its transformed copy list their keys (orn_body_<id>_keys, `keys`), and at one
 * rank the runtime runs it serially on the space itself, dense (rt_choose_unskewed), where
 * orn_body_<id> walks runs as any dense loop does and hands listed blocks to the other. */
static void body_fn(C *c, const OrnCgLoop *l, bool keys)
{
    const OrnLoop *lp = l->loop;
    OrnTypeKind vk = lp->space ? cg_elem_of(lp->space->type) : T_F64;
    bool sparse_space = lp->space && lp->space->type && lp->space->type->sparse;
    bool unimodular = l->strategy == ORN_STRAT_UNIMODULAR;
    c->cx = CX_BODY;
    c->loop = l;
    c->cloops = 0;
    c->pf_drop = 0;
    c->fast = 0;
    cg_o(c, "\nstatic int orn_body_%d%s(OrnRtCtx *rt_, const OrnRtBlock *b_, void *env_)\n{\n",
         l->id, keys ? "_keys" : "");
    cg_o(c, "    (void)rt_;\n    (void)env_;\n");
    cg_o(c, "    OrnRtView *const V_ __attribute__((unused)) = b_->views;\n");
    box_prologue(c, l, "    ");
    /* the outer scalars the body reads, in locals: the body cannot change them, and through
     * globals the compiler reloads them after every store it cannot tell apart (the
     * histogram's bins, converted again per element) */
    c->olocal = true;
    for (int i = 0; i < lp->nouter_reads; i++) {
        const OrnSym *s = lp->outer_reads[i];
        if (cg_outer_local(c, s))
            cg_o(c, "    const %s %s_l __attribute__((unused)) = %s;\n", cg_ctype(s->type->kind),
                 cg_nm(c, s), cg_nm(c, s));
    }
    cg_jam_prologue(c);
    if (lp->naccums) {
        /* accumulator partials live in locals (registers) during the call */
        cg_o(c, "    OrnRtScalar *const A_ = b_->acc;\n");
        for (int i = 0; i < lp->naccums; i++) {
            OrnTypeKind k = lp->accums[i].sym->type->kind;
            cg_o(c, "    %s acc%d_ = A_[%d].%s;\n", cg_ctype(k), i, i, cg_sfx(k));
        }
    }
    if (lp->value) cg_o(c, "    %s *const vals_ = (%s *)b_->vals;\n", cg_ctype(vk), cg_ctype(vk));
    if (l->uses_rng) cg_o(c, "    OrnRtRng rng_s_;\n    OrnRtRng *const rng_ = &rng_s_;\n");
    cg_arr_slots(c, l, "    ");
    bool listed = sparse_space || (unimodular && (keys || c->cuda));
    if (csr_walk(l)) body_csr(c, l);
    if (listed)
        body_sparse(c, l);
    else
        body_dense(c, l, unimodular);
    acc_store(c, l, "    ");
    cg_o(c, "    return 0;\n}\n");
    c->ind = 0;
    c->olocal = false;
    c->nslots = 0;
}

/* The prefetch pass of a dense block as the body walks it (body_dense): runs along the
 * innermost key, each cut where its boxable reads leave their boxes (version.h). In the
 * middle range every such read is local, so only the others are announced (pf_inbox): an
 * ordered stencil's pass announced four reads per element, nearly all in the block's own
 * box, and took four times the block's compute. Writes the dense branch of
 * orn_prefetch_<id> (returning from it), or nothing when the body does not allow it. */
static void pf_runs(C *c, const OrnCgLoop *l, const OrnNode *stmts, const char *vt)
{
    const OrnLoop *lp = l->loop;
    int nd = lp->nkeys;
    const OrnSym *keys[ORN_RT_MAXDIM_CG] = {NULL};
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp;
    if ((lp->space && lp->space->type && lp->space->type->sparse) ||
        l->strategy == ORN_STRAT_UNIMODULAR || !run_spans(l, keys, sp, &nsp, NULL))
        return;
    const OrnSym *last = keys[nd - 1];
    OrnBuf pb[2];
    OrnBuf *saved = c->b;
    orn_buf_init(&pb[0]);
    orn_buf_init(&pb[1]); /* the loop below may stop before the second */
    for (int in = 0; in < 2; in++) {
        c->b = &pb[in];
        c->ind = 6;
        c->pf_inbox = in;
        c->next_used = false;
        cg_pf_list(c, stmts);
        c->pf_inbox = false;
        if (c->next_used) break;
    }
    c->b = saved;
    if (!c->next_used) {
        cg_o(c, "    if (!b_->sparse) {\n");
        box_prologue(c, l, "        ");
        runs_open(c, keys, nd, vt, 8);
        c->ind = 3;
        cg_split_range(c, sp, nsp, "j0_", "j1_", 0);
        cg_o(c, "            for (int g_ = 0; g_ < 3; g_++)\n");
        cg_o(c, "                for (int64_t j_ = sg0_[g_]; j_ < sg0_[g_ + 1]; j_++) {\n");
        cg_o(c, "                    const int64_t %s __attribute__((unused)) = j_;\n",
             cg_nm(c, last));
        if (vt)
            cg_o(c, "                    %s *const vp_ __attribute__((unused)) = &row_[j_];\n", vt);
        cg_o(c, "                    if (g_ == 1) {\n");
        orn_buf_put(c->b, pb[1].data ? pb[1].data : "", pb[1].len);
        cg_o(c, "                    } else {\n");
        orn_buf_put(c->b, pb[0].data ? pb[0].data : "", pb[0].len);
        cg_o(c, "                    }\n");
        cg_o(c, "                }\n");
        runs_close(c, nd, 8);
        cg_o(c, "        return 0;\n");
        cg_o(c, "    }\n");
    }
    c->next_used = false;
    orn_buf_free(&pb[0]);
    orn_buf_free(&pb[1]);
}

/* The element walk of the prefetch pass. */
static void loop_fn(C *c, const OrnCgLoop *l, bool prefetch)
{
    const OrnLoop *lp = l->loop;
    int nd = lp->nkeys;
    OrnTypeKind vk = lp->space ? cg_elem_of(lp->space->type) : T_F64;
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
        cg_pf_list(c, stmts);
    else
        cg_st_list(c, stmts);
    c->b = saved;

    cg_o(c, "\nstatic int orn_%s_%d(OrnRtCtx *rt_, const OrnRtBlock *b_, void *env_)\n{\n",
         prefetch ? "prefetch" : "body", l->id);
    cg_o(c, "    (void)rt_;\n    (void)env_;\n");
    cg_o(c, "    OrnRtView *const V_ __attribute__((unused)) = b_->views;\n");
    if (!prefetch && lp->naccums) cg_o(c, "    OrnRtScalar *const A_ = b_->acc;\n");
    if (lp->value) cg_o(c, "    %s *const vals_ = (%s *)b_->vals;\n", cg_ctype(vk), cg_ctype(vk));
    if (!prefetch && l->uses_rng)
        cg_o(c, "    OrnRtRng rng_s_;\n    OrnRtRng *const rng_ = &rng_s_;\n");
    if (prefetch && csr_walk(l)) {
        /* CSR blocks come without keys (plan keys_unused): the same row walk as the body's,
         * where `continue` is the element loop's own */
        OrnBuf cbody;
        orn_buf_init(&cbody);
        c->b = &cbody;
        c->ind = 4;
        c->cloops = 1;
        cg_pf_list(c, stmts);
        c->cloops = 0;
        c->b = saved;
        const OrnSym *rks[ORN_RT_MAXDIM_CG] = {NULL};
        runtime_keys(l, rks);
        csr_open(c);
        csr_row(c, rks);
        csr_elems(c, l, rks, "            ", false, &cbody);
        cg_o(c, "        }\n        return 0;\n    }\n");
        orn_buf_free(&cbody);
    }
    if (prefetch && !csr_walk(l)) {
        bool used = c->next_used;
        pf_runs(c, l, stmts, lp->value ? cg_ctype(vk) : NULL);
        c->next_used = used;
    }
    cg_o(c, "    int64_t kk_[%d] = {0}; /* set per element where keys are listed */\n", nd);
    cg_o(c, "    const int64_t end_ = b_->first + b_->count;\n");
    cg_o(c, "    if (!b_->sparse) orn_rt_block_key(b_, b_->first, kk_);\n");
    cg_o(c, "    for (int64_t e_ = b_->first; e_ < end_; e_++) {\n");
    cg_o(c, "        if (b_->sparse)\n");
    cg_o(c, "            for (int d_ = 0; d_ < %d; d_++) kk_[d_] = b_->keys[e_ * %d + d_];\n", nd,
         nd);
    cg_o(c, "        {\n");
    const OrnSym *rks[ORN_RT_MAXDIM_CG];
    int nk = runtime_keys(l, rks);
    for (int d = 0; d < nk; d++)
        if (rks[d])
            cg_o(c, "            const int64_t %s __attribute__((unused)) = kk_[%d];\n",
                 cg_nm(c, rks[d]), d);
    if (lp->value)
        cg_o(c, "            %s *const vp_ __attribute__((unused)) = &vals_[e_];\n", cg_ctype(vk));
    if (!prefetch && l->uses_rng) cg_rng_iter(c, l, "            ");
    orn_buf_put(c->b, body.data ? body.data : "", body.len);
    cg_o(c, "        }\n");
    if (c->next_used) cg_o(c, "    next_:;\n");
    cg_o(c, "        if (!b_->sparse)\n");
    cg_o(c, "            for (int d_ = %d; d_ >= 0; d_--) {\n", nd - 1);
    cg_o(c, "                if (++kk_[d_] < b_->hi[d_]) break;\n");
    cg_o(c, "                kk_[d_] = b_->lo[d_];\n");
    cg_o(c, "            }\n");
    cg_o(c, "    }\n    return 0;\n}\n");
    orn_buf_free(&body);
    c->ind = 0;
}

void cg_c_loop(void *st_, const OrnCgLoop *l)
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
    if (l->strategy == ORN_STRAT_UNIMODULAR && !c->cuda &&
        !(l->loop->space && l->loop->space->type && l->loop->space->type->sparse))
        body_fn(c, l, true);
    body_fn(c, l, false);
    if (l->prefetch) loop_fn(c, l, true);
    if (cg_gpu_loop(c, l)) cg_gpu_host(c, l);
    c->loop = NULL;
}
