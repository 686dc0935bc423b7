/* c_coljam.c: the C back end: a dense run whose body is one `for` adding into buffers at
 * the `for`'s variable, W keys of the run at a time (unroll and jam).
 *
 * A matrix-vector product in column form is the model:
 *
 *     parallel_for j, xj in x
 *         for i in 0..n
 *             dy[i] += A[i, j] * xj
 *         end
 *     end
 *
 * Written key by key, every column reads and writes the whole of dy's row once: two loads
 * and a store per element of A, where the C a performance-minded person writes (or gcc's
 * own unroll-and-jam makes of it, when it can see that the arrays do not overlap) keeps
 * dy[i] in a register across W columns: for i, dy[i] += A[i, j] xj; dy[i] += A[i, j+1]
 * xj+1; ... (4096^2 f64 at -n 1: 5.0 -> 3.6 ms, the row-form C 4.4).
 *
 * Every element of a buffer's target receives the same adds in the same order: the run's
 * keys ascending for each i, as the keys' serial order gives them, because every update of
 * the body is at the same subscript i + k, so the W keys' updates of one element all happen
 * at one i, lane after lane (the same bits). The body qualifies when it is that `for`,
 * after at most 8 declarations of scalars of the body from effect-free expressions
 * (`a = xj * s`: evaluated for each key before the `for`, kept as pl<w>_<k>_ and bound
 * again in its key's statements), its bounds read neither the key, the value nor those
 * scalars, and its statements are `B[i + k] += e` or
 * `-= e` into one-dimensional buffers, one k for them all, no two buffers of one target, e
 * free of effects and reading no buffer's target; no expression of them calls `div`, `mod`,
 * `i32` or `i64` (which can fail: the first error must stay the serial loop's); no random
 * draws, accumulators or promoted
 * elements. Only the fast range of a run whose buffer updates were proven in their boxes
 * (c->bufs_sure) is jammed; the keys left over after the last whole group of W run as written. */
#include "emit_c_int.h"

#include <stdio.h>

enum { COLJAM_W = 4, COLJAM_MAXPRE = 8 };

/* e calls none of the built-ins that can fail (`div` and `mod` by zero, a float converted
 * to an integer out of range): a key's statements run before an earlier key's adds are
 * done, so the first error, where there is one, stays the serial loop's. */
static bool no_trap(const OrnNode *e)
{
    switch (e->kind) {
    case N_UNARY:
        return no_trap(e->u.unary.e);
    case N_BINARY:
        return no_trap(e->u.binary.l) && no_trap(e->u.binary.r);
    case N_INDEX:
        for (const OrnNode *x = e->u.index.subs; x; x = x->next)
            if (!no_trap(x)) return false;
        return true;
    case N_CALL:
        if (e->u.call.builtin == ORN_BI_DIV || e->u.call.builtin == ORN_BI_MOD ||
            e->u.call.builtin == ORN_BI_I32 || e->u.call.builtin == ORN_BI_I64)
            return false;
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (!no_trap(a)) return false;
        return true;
    default:
        return true;
    }
}

/* The scalar a statement before the `for` declares (`a = e`, its first assignment), else
 * NULL. */
static const OrnSym *prelude_sym(const OrnNode *s)
{
    if (s->kind != N_ASSIGN || s->u.assign.op != OP_NONE || !s->u.assign.declares ||
        s->u.assign.target->kind != N_NAME)
        return NULL;
    return s->u.assign.target->u.name.sym;
}

/* The run's `for`, when the body of loop l qualifies (the file's comment), else NULL. */
static const OrnNode *jam_for(const C *c, const OrnCgLoop *l, const OrnSym *key, int64_t *off)
{
    const OrnLoop *lp = l->loop;
    if (!c->bufs_sure || c->cuda || c->warp != WARP_NONE || c->lanes || !key || l->uses_rng ||
        lp->naccums > 0 || c->npromo > 0 || c->srow_arr)
        return NULL;
    const OrnNode *f = lp->node->u.parfor.body ? lp->node->u.parfor.body->u.block.stmts : NULL;
    while (f && f->next) f = f->next;
    if (!f || f->kind != N_FOR || !f->u.for_.body) return NULL;
    const OrnSym *v = f->u.for_.var->u.name.sym, *val = lp->value;
    for (int b = 0; b < 2; b++) {
        const OrnNode *e = b ? f->u.for_.hi : f->u.for_.lo;
        if (!cg_pure_expr(e, false, NULL, 0) || cg_mentions(e, key) || (val && cg_mentions(e, val)))
            return NULL;
        for (const OrnNode *p = lp->node->u.parfor.body->u.block.stmts; p != f; p = p->next)
            if (cg_mentions(e, prelude_sym(p))) return NULL;
    }
    const OrnSym *tgt[16];
    int nt = 0;
    bool first = true;
    int64_t k0 = 0;
    const OrnNode *s = f->u.for_.body->u.block.stmts;
    if (!s) return NULL;
    for (; s; s = s->next) {
        if (s->kind != N_ASSIGN || (s->u.assign.op != OP_ADD && s->u.assign.op != OP_SUB) ||
            nt == 16)
            return NULL;
        const OrnNode *tg = s->u.assign.target;
        const OrnSym *b = tg->kind == N_INDEX ? orn_cg_base_sym(tg) : NULL;
        if (!b || !cg_is_buffer(b) || cg_promoted(c, b) >= 0) return NULL;
        const OrnNode *sub = tg->u.index.subs;
        int64_t k;
        if (!sub || sub->next || !cg_var_off(sub, v, &k) || (!first && k != k0)) return NULL;
        OrnTypeKind ek = cg_elem_of(b->type);
        if (ek != T_F32 && ek != T_F64 && ek != T_I32 && ek != T_I64) return NULL;
        first = false;
        k0 = k;
        /* two buffers of one target would hold one element in two locals */
        const OrnSym *t = orn_cg_buffer_target(b);
        for (const OrnNode *p = f->u.for_.body->u.block.stmts; p != s; p = p->next)
            if (orn_cg_base_sym(p->u.assign.target) != b &&
                orn_cg_buffer_target(orn_cg_base_sym(p->u.assign.target)) == t)
                return NULL;
        tgt[nt++] = t;
    }
    for (s = f->u.for_.body->u.block.stmts; s; s = s->next)
        if (!cg_pure_expr(s->u.assign.value, true, tgt, nt) || !no_trap(s->u.assign.value))
            return NULL;
    /* the statements before the `for`: scalars of the body declared once each, from
     * effect-free expressions that read no buffer's target */
    int np = 0;
    for (s = lp->node->u.parfor.body->u.block.stmts; s != f; s = s->next, np++) {
        const OrnSym *ps = prelude_sym(s);
        OrnTypeKind pk = ps && ps->type ? ps->type->kind : T_VOID;
        if (!ps || np == COLJAM_MAXPRE || orn_cg_is_static(ps) ||
            (pk != T_F32 && pk != T_F64 && pk != T_I32 && pk != T_I64 && pk != T_BOOL) ||
            !cg_pure_expr(s->u.assign.value, true, tgt, nt) || !no_trap(s->u.assign.value))
            return NULL;
    }
    *off = k0;
    return f;
}

/* The C type of a buffer row's elements. */
static const char *row_type(const OrnNode *access)
{
    return cg_ctype(cg_elem_of(orn_cg_base_sym(access)->type));
}

/* Opens the block of key w of a group: the key and its value bound, and the scalars the
 * statements pre (up to f) declare: evaluated and kept as pl<w>_<k>_ (first), or bound
 * again from those. */
static void key_open(C *c, const OrnSym *key, const char *vt, int w, const OrnNode *pre,
                     const OrnNode *f, bool first)
{
    cg_ol(c, "{");
    c->ind++;
    cg_ol(c, "const int64_t %s __attribute__((unused)) = jl_ + %d;", cg_nm(c, key), w);
    if (vt) cg_ol(c, "%s *const vp_ __attribute__((unused)) = &vl%d_;", vt, w);
    int k = 0;
    for (const OrnNode *p = pre; p != f; p = p->next, k++) {
        const OrnSym *ps = prelude_sym(p);
        const char *T = cg_ctype(ps->type->kind);
        if (first) {
            cg_st(c, p);
            cg_ol(c, "const %s pl%d_%d_ = %s;", T, w, k, cg_nm(c, ps));
        } else {
            cg_ol(c, "const %s %s __attribute__((unused)) = pl%d_%d_;", T, cg_nm(c, ps), w, k);
        }
    }
}

/* Emits the whole groups of W keys of [from, to) of the fast range (elem_loop, fast) at
 * indentation lvl, leaving the first key after them in jl_ for the caller's loop over the
 * rest (and its closing brace); false, and nothing written, when the body does not qualify. */
bool cg_coljam(C *c, const OrnCgLoop *l, const OrnSym *key, const char *vt, const char *from,
               const char *to, int lvl)
{
    int64_t off;
    const OrnNode *f = jam_for(c, l, key, &off);
    if (!f) return false;
    /* the context elem_body gives a fast range's statements */
    c->fast++;
    c->vfast_var = key, c->vfast_varying = NULL;
    c->vfast_body = l->loop->node->u.parfor.body, c->vfast_vv = true;
    const OrnSym *var = f->u.for_.var->u.name.sym;
    int W = COLJAM_W;
    c->ind = lvl;
    cg_ol(c, "{");
    cg_ol(c, "    int64_t jl_ = %s;", from);
    cg_ol(c, "    for (; jl_ + %d <= %s; jl_ += %d) {", W, to, W);
    c->ind = lvl + 2;
    /* each key's value in a local: read through vp_ as in elem_body, but gcc sees that the
     * buffer's stores cannot change it */
    for (int w = 0; vt && w < W; w++) cg_ol(c, "%s vl%d_ = row_[jl_ + %d];", vt, w, w);
    int id = cg_for_bounds(c, f);
    char lo[24], hi[24];
    snprintf(lo, sizeof lo, "lo%d_", id);
    snprintf(hi, sizeof hi, "hi%d_", id);
    /* each key's rows before the `for`, in nested blocks that bind the key (their names
     * differ, so the innermost block sees them all) */
    struct {
        const OrnNode *access;
        int id, last;
        bool buf;
    } rows[COLJAM_W][ORN_CG_MAXROWS];
    int nr[COLJAM_W];
    const OrnNode *pre = l->loop->node->u.parfor.body->u.block.stmts;
    for (int w = 0; w < W; w++) {
        key_open(c, key, vt, w, pre, f, true);
        nr[w] = cg_rows_open(c, var, f->u.for_.body, lo, hi);
        for (int r = 0; r < nr[w]; r++) {
            int at = c->nrows - nr[w] + r;
            rows[w][r].access = c->rows[at];
            rows[w][r].id = c->row_id[at];
            rows[w][r].last = c->row_last[at];
            rows[w][r].buf = c->row_buf[at];
            /* a buffer's row does not read the key: one pointer for all W keys, so that gcc
             * tests the stores against each key's loads only */
            if (w > 0 && rows[w][r].buf && r < nr[0] && rows[0][r].access == rows[w][r].access)
                rows[w][r].id = rows[0][r].id;
        }
        cg_rows_close(c, nr[w]);
    }
    cg_for_head(c, f, id);
    c->ind++;
    /* each buffer's element in a local across the W keys' adds (their order unchanged) */
    const char *iv = cg_nm(c, var);
    for (int r = 0; r < nr[0]; r++)
        if (rows[0][r].buf)
            cg_ol(c, "%s bt%d_ = rp%d_[%s + INT64_C(%lld)];", row_type(rows[0][r].access),
                  rows[0][r].id, rows[0][r].id, iv, (long long)off);
    for (int w = 0; w < W; w++) {
        key_open(c, key, vt, w, pre, f, false);
        /* the key's rows; the buffers' in place, proven by the run's test (c->bufs_sure) */
        for (int r = 0; r < nr[w]; r++) {
            int at = c->nrows++;
            c->rows[at] = rows[w][r].access;
            c->row_id[at] = rows[w][r].id;
            c->row_last[at] = rows[w][r].last;
            c->row_buf[at] = rows[w][r].buf;
            c->row_sure[at] = rows[w][r].buf;
            c->row_tmp[at] = rows[w][r].buf ? rows[w][r].id : -1;
        }
        c->cloops++;
        cg_st_block(c, f->u.for_.body);
        c->cloops--;
        for (int r = c->nrows - nr[w]; r < c->nrows; r++) c->row_sure[r] = false;
        cg_rows_close(c, nr[w]);
        c->ind--;
        cg_ol(c, "}");
    }
    for (int r = 0; r < nr[0]; r++)
        if (rows[0][r].buf)
            cg_ol(c, "rp%d_[%s + INT64_C(%lld)] = bt%d_;", rows[0][r].id, iv, (long long)off,
                  rows[0][r].id);
    c->ind--;
    cg_ol(c, "}"); /* the `for` */
    for (int w = 0; w < W; w++) {
        c->ind--;
        cg_ol(c, "}");
    }
    c->ind--;
    cg_ol(c, "}"); /* its bounds */
    c->ind = lvl;
    cg_ol(c, "    }");
    c->vfast_var = NULL, c->vfast_body = NULL, c->vfast_vv = false;
    c->fast--;
    return true;
}
