/* c_for.c: the C back end: `for` loops in loop bodies, split by index set and as loop
 * reductions (version.h, emit_c_int.h). */
#include "emit_c_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The box a span's key must lie in: the array's (X<k>_), or the one its buffer's updates go
 * to in place (B<k>_). */
static char box_of(const OrnCgSpan *sp)
{
    return sp->buffer ? 'B' : 'X';
}

/* A view's whole extent along storage dimension sp->dim lies in its box (version.h). */
void cg_span_full(C *c, const OrnCgSpan *sp)
{
    cg_o(c, "orn_rt_box_full(&%c%d_, %d, ", box_of(sp), sp->array, sp->dim);
    cg_put_dims(c, c->loop->arrays[sp->array].sym);
    cg_o(c, "[%d])", sp->dim);
}

/* The test of a span that is not the loop variable's (version.h): an invariant subscript,
 * a view's whole extent, or a nested loop's range [lo + off, hi - 1 + off] (none when
 * the nested loop runs no iteration). */
void cg_span_test(C *c, const OrnCgSpan *sp)
{
    if (sp->full) {
        cg_span_full(c, sp);
        return;
    }
    if (sp->range) {
        /* the subscript's values: base + n + off for n over [rlo, rhi) (base: sp->inv, or
         * none), or base - n + off (neg): its least and greatest (ends 0 and 1) */
        cg_o(c, "((int64_t)(");
        cg_ex(c, sp->rlo);
        cg_o(c, ") >= (int64_t)(");
        cg_ex(c, sp->rhi);
        cg_o(c, ") || ");
        for (int end = 0; end < 2; end++) {
            if (sp->local)
                cg_o(c, "%sorn_std_arr_span(%s, %d, ", end ? " && " : "(", cg_nm(c, sp->local),
                     sp->dim);
            else if (!end)
                cg_o(c, "orn_rt_box_span(&%c%d_, %d, ", box_of(sp), sp->array, sp->dim);
            if (sp->inv) {
                cg_o(c, "(int64_t)(");
                cg_ex(c, sp->inv);
                cg_o(c, ") + ");
            }
            /* +: rlo + off, rhi - 1 + off; -: off - (rhi - 1), off - rlo */
            bool hi = sp->neg ? !end : end;
            cg_o(c, "%s(int64_t)(", sp->neg ? "-" : "");
            cg_ex(c, hi ? sp->rhi : sp->rlo);
            cg_o(c, ") + INT64_C(%lld)", (long long)(sp->off + (sp->neg ? hi : -hi)));
            if (sp->local)
                cg_o(c, ")%s", end ? ")" : "");
            else
                cg_o(c, "%s", end ? ")" : ", ");
        }
        cg_o(c, ")");
        return;
    }
    if (sp->local) {
        cg_o(c, "orn_std_arr_span(%s, %d, (int64_t)(", cg_nm(c, sp->local), sp->dim);
        cg_ex(c, sp->inv);
        cg_o(c, "))");
        return;
    }
    cg_o(c, "orn_rt_box_span(&%c%d_, %d, (int64_t)(", box_of(sp), sp->array, sp->dim);
    cg_ex(c, sp->inv);
    cg_o(c, "), (int64_t)(");
    cg_ex(c, sp->inv);
    cg_o(c, "))");
}

/* Narrow [f0, f1) to the values of the loop variable for which a `var` span's key lies in
 * its box (or its local array): `v + off`, or a window's both ends (version.h). */
void cg_span_clip(C *c, const OrnCgSpan *sp, const char *f0, const char *f1)
{
    if (sp->inv && !sp->range) { /* v + sh + off, sh invariant (a shift, version.h) */
        if (sp->local)
            cg_o(c, "orn_std_arr_clip_shift(%s, %d, (int64_t)(", cg_nm(c, sp->local), sp->dim);
        else
            cg_o(c, "orn_rt_box_clip_shift(&%c%d_, %d, (int64_t)(", box_of(sp), sp->array, sp->dim);
        cg_ex(c, sp->inv);
        cg_o(c, "), INT64_C(%lld), &%s, &%s);", (long long)sp->off, f0, f1);
        return;
    }
    if (sp->local)
        cg_o(c, "orn_std_arr_clip%s(%s, %d, ", sp->range ? "_win" : "", cg_nm(c, sp->local),
             sp->dim);
    else
        cg_o(c, "orn_rt_box_clip%s(&%c%d_, %d, ", sp->range ? "_win" : "", box_of(sp), sp->array,
             sp->dim);
    if (sp->range) {
        cg_o(c, "(int64_t)(");
        cg_ex(c, sp->rlo);
        cg_o(c, "), (int64_t)(");
        cg_ex(c, sp->rhi);
        cg_o(c, "), %d, ", sp->neg ? 1 : 0);
    }
    if (sp->range && sp->inv) { /* var + sh + n + off: the window moved by sh (version.h) */
        cg_o(c, "orn_rt_shift_sat((int64_t)(");
        cg_ex(c, sp->inv);
        cg_o(c, "), 0, INT64_C(%lld)), &%s, &%s);", (long long)sp->off, f0, f1);
        return;
    }
    cg_o(c, "INT64_C(%lld), &%s, &%s);", (long long)sp->off, f0, f1);
}

/* Index-set splitting of a loop over [lo, hi) (version.h): the range where every span's
 * key lies in its box, [f0, f1), is computed once; the loop then runs as three segments,
 * [lo, f0) and [f1, hi) with per-access tests and [f0, f1) without, in the original order.
 * Declares sg<id>_[4], the segment bounds. */
/* One end of n's range in a guard (version.h): its least value (`least`) or its greatest. */
static void guard_ext(C *c, const OrnCgGuard *g, bool least)
{
    if (!g->rlo) {
        cg_o(c, "INT64_C(0)");
        return;
    }
    if ((g->nsign > 0) == least) {
        cg_o(c, "%s(int64_t)(", g->nsign > 0 ? "" : "-");
        cg_ex_as(c, g->rlo, T_I64);
        cg_o(c, ")");
    } else {
        cg_o(c, "%s((int64_t)(", g->nsign > 0 ? "" : "-");
        cg_ex_as(c, g->rhi, T_I64);
        cg_o(c, ") - 1)");
    }
}

/* A guard's A without var at n's extreme for its comparison, saturated (orn_rt_shift_sat). */
static void guard_a(C *c, const OrnCgGuard *g, bool least)
{
    cg_o(c, "orn_rt_shift_sat(");
    guard_ext(c, g, least);
    cg_o(c, ", 0, orn_rt_shift_sat(");
    if (g->inv) {
        cg_o(c, "(int64_t)(");
        cg_ex_as(c, g->inv, T_I64);
        cg_o(c, ")");
    } else {
        cg_o(c, "INT64_C(0)");
    }
    cg_o(c, ", 0, INT64_C(%lld)))", (long long)g->c);
}

/* Narrow [f0, f1) to where every guard holds (version.h). */
static void guard_clips(C *c, const OrnCgGuard *g, int ng, const char *f0, const char *f1)
{
    for (int i = 0; i < ng; i++) {
        bool ge = g[i].op == OP_GT || g[i].op == OP_GE;
        bool strict = g[i].op == OP_GT || g[i].op == OP_LT;
        cg_ind(c);
        if (g[i].kind == 2) {
            cg_o(c, "if (!(");
            guard_a(c, &g[i], ge);
            cg_o(c, " %s (int64_t)(", ge ? (strict ? ">" : ">=") : (strict ? "<" : "<="));
            cg_ex_as(c, g[i].b, T_I64);
            cg_o(c, "))) %s = %s;\n", f1, f0);
            continue;
        }
        /* var >= B - A(least) (+1 when >); var < B - A(greatest) (+1 when <=) */
        cg_o(c, "{ const int64_t q_ = orn_rt_shift_sat(");
        guard_a(c, &g[i], ge);
        cg_o(c, ", 1, orn_rt_shift_sat((int64_t)(");
        cg_ex_as(c, g[i].b, T_I64);
        cg_o(c, "), 0, INT64_C(%d))); ", (g[i].kind == 0) == strict ? 1 : 0);
        if (g[i].kind == 0)
            cg_o(c, "if (%s < q_) %s = q_; }\n", f0, f0);
        else
            cg_o(c, "if (%s > q_) %s = q_; }\n", f1, f1);
    }
}

void cg_split_range(C *c, const OrnCgSpan *sp, int n, const char *lo, const char *hi, int id)
{
    cg_split_range_g(c, sp, n, NULL, 0, lo, hi, id);
}

void cg_split_range_g(C *c, const OrnCgSpan *sp, int n, const OrnCgGuard *g, int ng, const char *lo,
                      const char *hi, int id)
{
    cg_ol(c, "int64_t f0%d_ = %s, f1%d_ = %s;", id, lo, id, hi);
    bool inv = false;
    for (int i = 0; i < n; i++) {
        if (sp[i].var) continue;
        if (!inv) {
            cg_ind(c);
            cg_o(c, "if (!(");
        } else {
            cg_o(c, " &&\n");
            cg_ind(c);
            cg_o(c, "      ");
        }
        inv = true;
        cg_span_test(c, &sp[i]);
    }
    if (inv) cg_o(c, "))\n");
    if (inv) cg_ol(c, "    f1%d_ = f0%d_;", id, id);
    char f0[32], f1[32];
    snprintf(f0, sizeof f0, "f0%d_", id);
    snprintf(f1, sizeof f1, "f1%d_", id);
    for (int i = 0; i < n; i++)
        if (sp[i].var) {
            cg_ind(c);
            cg_span_clip(c, &sp[i], f0, f1);
            cg_o(c, "\n");
        }
    guard_clips(c, g, ng, f0, f1);
    cg_ol(c, "if (f0%d_ > %s) f0%d_ = f1%d_ = %s;", id, hi, id, id, hi);
    if (ng) cg_ol(c, "if (f1%d_ < f0%d_) f1%d_ = f0%d_;", id, id, id, id); /* a guard raised f0 */
    cg_ol(c, "const int64_t sg%d_[4] = {%s, f0%d_, f1%d_, %s};", id, lo, id, id, hi);
}

bool cg_mentions(const OrnNode *e, const OrnSym *s)
{
    if (!e) return false;
    switch (e->kind) {
    case N_NAME:
        return e->u.name.sym == s;
    case N_UNARY:
        return cg_mentions(e->u.unary.e, s);
    case N_BINARY:
        return cg_mentions(e->u.binary.l, s) || cg_mentions(e->u.binary.r, s);
    case N_KWARG:
        return cg_mentions(e->u.kwarg.value, s);
    case N_CALL:
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (cg_mentions(a, s)) return true;
        return false;
    case N_INDEX:
        if (cg_mentions(e->u.index.base, s)) return true;
        for (const OrnNode *a = e->u.index.subs; a; a = a->next)
            if (cg_mentions(a, s)) return true;
        return false;
    default:
        return false;
    }
}

/* ---- row pointers (version.h, orn_cg_rows) */

int cg_row_of(const C *c, const OrnNode *e)
{
    for (int i = c->nrows - 1; i >= 0; i--)
        if (c->rows[i] == e) return i;
    return -1;
}

/* `T *const rp<id>_ = <base> + <offset of the access with its last subscript 0>;`, for a
 * buffer NULL unless its box holds the row's keys for var in [from, to). */
static void row_decl(C *c, const OrnCgRow *r, int id, const char *from, const char *to)
{
    const OrnNode *e = r->access;
    const OrnSym *s = orn_cg_base_sym(e);
    const char *T = cg_ctype(cg_elem_of(s->type));
    const OrnNode *sub[4] = {NULL, NULL, NULL, NULL};
    int nd = 0;
    for (const OrnNode *x = e->u.index.subs; x && nd < 4; x = x->next) sub[nd++] = x;
    cg_ind(c);
    if (r->array < 0) {
        cg_o(c, "%s *const rp%d_ __attribute__((unused)) = (%s *)%s->data + orn_std_arr_at(%s, %d",
             T, id, T, cg_nm(c, s), cg_nm(c, s), nd);
        for (int d = 0; d < 4; d++) {
            cg_o(c, ", ");
            if (d < nd && d != r->last)
                cg_ex_as(c, sub[d], T_I64);
            else
                cg_o(c, "0");
        }
        cg_o(c, ");\n");
        return;
    }
    const int *perm = cg_perm_of(c, s);
    char bx[24];
    snprintf(bx, sizeof bx, "%s%d_", r->buffer ? "B" : "X", r->array);
    cg_o(c, "%s *const rp%d_ __attribute__((unused)) = ", T, id);
    if (r->buffer) {
        /* in place only where the buffer's box is not empty; the row's keys in it */
        cg_o(c, "%s.base", bx);
        for (int i = 0; i < nd; i++) {
            int d = perm ? perm[i] : i;
            cg_o(c, " && ");
            if (d != r->last) {
                cg_o(c, "orn_rt_box_span(&%s, %d, ", bx, i);
                cg_ex_as(c, sub[d], T_I64);
                cg_o(c, ", ");
                cg_ex_as(c, sub[d], T_I64);
                cg_o(c, ")");
            } else {
                cg_o(c,
                     "(%s >= %s || orn_rt_box_span(&%s, %d, %s + INT64_C(%lld), %s - 1 + "
                     "INT64_C(%lld)))",
                     from, to, bx, i, from, (long long)r->off, to, (long long)r->off);
            }
        }
        cg_o(c, " ? ");
    }
    cg_o(c, "(%s *)(void *)%s.base + orn_rt_box_at(&%s, %d, (const int64_t[%d]){", T, bx, bx, nd,
         nd);
    for (int i = 0; i < nd; i++) {
        int d = perm ? perm[i] : i;
        if (i) cg_o(c, ", ");
        if (d == r->last)
            cg_o(c, "0");
        else
            cg_ex_as(c, sub[d], T_I64);
    }
    cg_o(c, "})%s;\n", r->buffer ? " : NULL" : "");
}

int cg_rows_open(C *c, const OrnSym *var, const OrnNode *body, const char *from, const char *to)
{
    if (!c->fast || c->cuda || c->warp != WARP_NONE || c->loop == NULL ||
        (c->cx != CX_BODY && c->cx != CX_CLONE))
        return 0;
    OrnCgRow r[ORN_CG_MAXROWS];
    int n = orn_cg_rows(c->loop, var, body, r, ORN_CG_MAXROWS), ids[ORN_CG_MAXROWS], pushed = 0;
    for (int i = 0; i < n; i++) {
        ids[i] = -1;
        const OrnSym *s = orn_cg_base_sym(r[i].access);
        if (c->nrows == ORN_CG_MAXROWS * 4 || cg_promoted(c, s) >= 0) continue;
        /* addressed without a test where the per-access emitter would (cg_ex_index) */
        if (r[i].array < 0 && !orn_cg_view_proven(c->loop, c->vfast_var, c->vfast_varying,
                                                  c->vfast_body, c->vfast_vv, r[i].access))
            continue;
        /* the storage order the per-access emitters use (cg_ex_subs) stores `last` last */
        const int *perm = cg_perm_of(c, s);
        int nd = orn_list_len(r[i].access->u.index.subs);
        if (r[i].array >= 0 && (perm ? perm[nd - 1] : nd - 1) != r[i].last) continue;
        int g = r[i].group;
        if (g == i || ids[g] < 0) {
            ids[i] = c->tmp++;
            row_decl(c, &r[i], ids[i], from, to);
        } else {
            ids[i] = ids[g];
        }
        c->rows[c->nrows] = r[i].access;
        c->row_id[c->nrows] = ids[i];
        c->row_last[c->nrows] = r[i].last;
        c->row_buf[c->nrows] = r[i].buffer;
        c->row_sure[c->nrows] = false;
        c->row_tmp[c->nrows] = -1;
        c->nrows++;
        pushed++;
    }
    return pushed;
}

void cg_rows_close(C *c, int n)
{
    c->nrows -= n;
}

/* The last n rows' buffer pointers (NULL where the buffer does not add in place): their
 * test, "rpA_ && rpB_", into cond; false when there is none. */
static bool buffer_rows(const C *c, int n, char *cond, size_t size)
{
    size_t len = 0;
    cond[0] = 0;
    for (int i = c->nrows - n; i < c->nrows; i++) {
        if (!c->row_buf[i]) continue;
        bool seen = false;
        for (int j = c->nrows - n; j < i; j++)
            seen |= c->row_buf[j] && c->row_id[j] == c->row_id[i];
        if (seen) continue;
        int w = snprintf(cond + len, size - len, "%srp%d_", len ? " && " : "", c->row_id[i]);
        if (w < 0 || (size_t)w >= size - len) return false;
        len += (size_t)w;
    }
    return len > 0;
}

/* Emits a loop whose last n rows are open: where some are a buffer's (a pointer tested per
 * update), twice, under one test of them all -- the version where they all add in place
 * updates without a branch, so the compiler vectorizes it as the hand-written loop; the
 * other keeps the per-update test. */
static void rows_versions(C *c, int n, void (*emit)(C *c, const void *ud), const void *ud)
{
    char cond[512];
    if (!buffer_rows(c, n, cond, sizeof cond)) {
        emit(c, ud);
        return;
    }
    cg_ol(c, "if (%s) {", cond);
    c->ind++;
    for (int i = c->nrows - n; i < c->nrows; i++) c->row_sure[i] = c->row_buf[i];
    emit(c, ud);
    for (int i = c->nrows - n; i < c->nrows; i++) c->row_sure[i] = false;
    c->ind--;
    cg_ol(c, "} else {");
    c->ind++;
    emit(c, ud);
    c->ind--;
    cg_ol(c, "}");
}

/* A temporary of a loop reduction: `t = e` declaring a scalar local of the body (so it is
 * not read after the loop), e free of effects. */
static bool reduction_temp(const OrnNode *st)
{
    if (st->kind != N_ASSIGN || st->u.assign.op != OP_NONE || !st->u.assign.declares) return false;
    const OrnNode *tg = st->u.assign.target, *rhs = st->u.assign.value;
    if (tg->kind != N_NAME || !tg->u.name.sym || tg->u.name.sym->kind != SYM_VAR) return false;
    OrnTypeKind k = tg->u.name.sym->type->kind;
    if (k != T_I32 && k != T_I64 && k != T_F32 && k != T_F64 && k != T_BOOL) return false;
    return cg_kind_of(rhs) != T_VIEW && !cg_impure(rhs);
}

enum { MAXTEMPS = 32 };

static bool is_temp(const OrnSym *s, const OrnSym *const *temps, int nt)
{
    for (int i = 0; i < nt; i++)
        if (temps[i] == s) return true;
    return false;
}

/* An update of temporaries: `t op= e` or `t = e` to a temporary declared before it in the
 * body, or an `if` whose condition and branches are such (no declarations inside), all
 * free of effects (LDA's `if t == old: nt -= 1`). Whether s is read is checked by the
 * caller. */
static bool temp_update(const OrnNode *st, const OrnSym *const *temps, int nt)
{
    if (st->kind == N_ASSIGN) {
        const OrnNode *tg = st->u.assign.target;
        return !st->u.assign.declares && tg->kind == N_NAME && is_temp(tg->u.name.sym, temps, nt) &&
               cg_kind_of(st->u.assign.value) != T_VIEW && !cg_impure(st->u.assign.value);
    }
    if (st->kind != N_IF || cg_impure(st->u.if_.cond)) return false;
    const OrnNode *th = st->u.if_.then, *el = st->u.if_.els;
    for (const OrnNode *t = th && th->kind == N_BLOCK ? th->u.block.stmts : NULL; t; t = t->next)
        if (!temp_update(t, temps, nt)) return false;
    if (!el) return true;
    if (el->kind == N_IF) return temp_update(el, temps, nt);
    for (const OrnNode *t = el->kind == N_BLOCK ? el->u.block.stmts : NULL; t; t = t->next)
        if (!temp_update(t, temps, nt)) return false;
    return true;
}

/* Does statement st (a temporary or a temp_update) read s? */
static bool stmt_mentions(const OrnNode *st, const OrnSym *s)
{
    if (!st) return false;
    if (st->kind == N_ASSIGN) return cg_mentions(st->u.assign.value, s);
    if (st->kind == N_BLOCK) {
        for (const OrnNode *t = st->u.block.stmts; t; t = t->next)
            if (stmt_mentions(t, s)) return true;
        return false;
    }
    if (st->kind != N_IF) return true;
    return cg_mentions(st->u.if_.cond, s) || stmt_mentions(st->u.if_.then, s) ||
           stmt_mentions(st->u.if_.els, s);
}

/* A loop reduction (docs/language.md): `for v in lo..hi` whose body is zero or more
 * temporaries (reduction_temp) and updates of them (temp_update), and then `s += e` or
 * `s -= e` into a float variable s that neither e nor a temporary reads, e free of
 * effects. Returns that last statement, or NULL. The temporaries are computed in order in
 * every iteration, as written; only the additions into s are regrouped. */
static const OrnNode *loop_reduction(const C *c, const OrnNode *f)
{
    const OrnNode *b = f->u.for_.body;
    const OrnNode *first = b && b->kind == N_BLOCK ? b->u.block.stmts : NULL;
    const OrnNode *st = first;
    const OrnSym *temps[MAXTEMPS];
    int nt = 0;
    for (; st && st->next; st = st->next) {
        if (reduction_temp(st) && nt < MAXTEMPS) {
            temps[nt++] = st->u.assign.target->u.name.sym;
            continue;
        }
        if (!temp_update(st, temps, nt)) return NULL;
    }
    if (!st || st->kind != N_ASSIGN) return NULL;
    if (st->u.assign.op != OP_ADD && st->u.assign.op != OP_SUB) return NULL;
    const OrnNode *tg = st->u.assign.target, *rhs = st->u.assign.value;
    if (tg->kind != N_NAME || !tg->u.name.sym) return NULL;
    const OrnSym *s = tg->u.name.sym;
    if (s->kind != SYM_VAR || !s->type || (s->type->kind != T_F32 && s->type->kind != T_F64))
        return NULL;
    if (c->cx == CX_BODY && c->loop && orn_cg_acc_index(c->loop, s) >= 0) return NULL;
    if (cg_kind_of(rhs) == T_VIEW || cg_mentions(rhs, s) || cg_impure(rhs)) return NULL;
    if (is_temp(s, temps, nt)) return NULL;
    for (const OrnNode *t = first; t != st; t = t->next)
        if (stmt_mentions(t, s)) return NULL;
    return st;
}

bool cg_for_is_reduction(const C *c, const OrnNode *f)
{
    return loop_reduction(c, f) != NULL;
}

/* One segment [from, to) of a loop reduction: element v goes to partial (v - lo) mod L
 * (16 for f32, 8 otherwise: 64 bytes of partials), so the partials do not depend on where
 * the segments start (nor on data locality). The middle runs L elements at a time, which
 * the C compiler vectorizes. */
static int reduce_lanes(const OrnNode *st)
{
    return st->u.assign.target->u.name.sym->type->kind == T_F32 ? 16 : 8; /* orn_std.h */
}

/* The same segment in a warp kernel (cuda_warp.c): lane l adds the elements of partial l mod L,
 * in order, into its r<id>_. */
static void reduce_segment_lanes(C *c, const OrnNode *f, const OrnNode *st, int id,
                                 const char *from, const char *to)
{
    const char *T = cg_ctype(st->u.assign.target->u.name.sym->type->kind);
    int L = reduce_lanes(st);
    char lo[24];
    snprintf(lo, sizeof lo, "lo%d_", id);
    if (strcmp(from, lo) == 0)
        cg_ol(c, "for (int64_t i%d_ = %s + (L_.lane & %d); i%d_ < %s; i%d_ += %d) {", id, from,
              L - 1, id, to, id, L);
    else
        cg_ol(c, "for (int64_t i%d_ = %s + ((lo%d_ - %s + L_.lane) & %d); i%d_ < %s; i%d_ += %d) {",
              id, from, id, from, L - 1, id, to, id, L);
    c->ind++;
    c->warp = WARP_SPLIT;
    char key[24];
    snprintf(key, sizeof key, "i%d_", id);
    cg_bind_var(c, f->u.for_.var->u.name.sym, "int64_t", key);
    for (const OrnNode *t = f->u.for_.body->u.block.stmts; t != st; t = t->next) cg_st(c, t);
    cg_ind(c);
    cg_o(c, "r%d_ += (%s)(", id, T);
    int line = c->line;
    c->line = (int)st->span.line; /* its errors name its line, not the for's */
    cg_ex(c, st->u.assign.value);
    c->line = line;
    cg_o(c, ");\n");
    c->warp = WARP_UNIFORM;
    c->ind--;
    cg_ol(c, "}");
}

/* The statement of one element v of a loop reduction (bound to key): its temporaries, then
 * the add into its partial (partial: the C expression of its index). In a jam's vector code
 * (c_jam.c), for each of the W values of the outer variable, the vector loop innermost. */
static void reduce_elem(C *c, const OrnNode *f, const OrnNode *st, int id, const char *key,
                        const char *partial)
{
    const char *T = cg_ctype(st->u.assign.target->u.name.sym->type->kind);
    const CgJam *j = c->jam && c->jam->nest ? c->jam : NULL;
    cg_bind_var(c, f->u.for_.var->u.name.sym, "int64_t", key);
    if (j) cg_jam_vec_open(c, id);
    for (const OrnNode *t = f->u.for_.body->u.block.stmts; t != st; t = t->next) cg_st(c, t);
    cg_ind(c);
    if (j && !partial) /* reduce_jam_regs: the element's vector */
        cg_o(c, "t%d_[cc%d_] = (%s)(", id, id, T);
    else if (j)
        cg_o(c, "r%d_[%s][cc%d_] += (%s)(", id, partial, id, T);
    else
        cg_o(c, "r%d_[%s] += (%s)(", id, partial, T);
    int line = c->line;
    c->line = (int)st->span.line; /* its errors name its line, not the for's */
    cg_ex(c, st->u.assign.value);
    c->line = line;
    cg_o(c, ");\n");
    if (j) {
        c->ind--;
        cg_ol(c, "}");
    }
}

static void reduce_segment(C *c, const OrnNode *f, const OrnNode *st, int id, const char *from,
                           const char *to)
{
    if (c->warp == WARP_UNIFORM) {
        reduce_segment_lanes(c, f, st, id, from, to);
        return;
    }
    const OrnSym *v = f->u.for_.var->u.name.sym;
    int L = reduce_lanes(st);
    bool jam = c->jam && c->jam->nest;
    char key[48], partial[48];
    int nrows = cg_rows_open(c, v, f->u.for_.body, from, to);
    cg_ol(c, "int64_t i%d_ = %s;", id, from);
    for (int part = 0; part < 3; part++) {
        if (part == 0)
            cg_ol(c, "for (; i%d_ < %s && ((i%d_ - lo%d_) & %d); i%d_++) {", id, to, id, id, L - 1,
                  id);
        else if (part == 1) /* omp simd: a body gcc would unroll whole is vectorized instead
                             * (in a jam, the loop over the outer variable's vector is); two
                             * blocks an iteration (CG_UNROLL2) */
            cg_ol(c,
                  "%sfor (; i%d_ + %d <= %s; i%d_ += %d)%s for (int l%d_ = 0; l%d_ < %d; l%d_++) {",
                  c->cuda || jam ? "" : CG_UNROLL2 " ", id, L, to, id, L,
                  c->cuda || jam ? "" : " _Pragma(\"omp simd\")", id, id, L, id);
        else
            cg_ol(c, "for (; i%d_ < %s; i%d_++) {", id, to, id);
        c->ind++;
        if (part == 1) {
            snprintf(key, sizeof key, "i%d_ + l%d_", id, id);
            snprintf(partial, sizeof partial, "l%d_", id);
        } else {
            snprintf(key, sizeof key, "i%d_", id);
            snprintf(partial, sizeof partial, "(i%d_ - lo%d_) & %d", id, id, L - 1);
        }
        reduce_elem(c, f, st, id, key, partial);
        c->ind--;
        cg_ol(c, "}");
    }
    cg_rows_close(c, nrows);
}

/* One term of the jam's loop reduction, element i<id>_ + q, into the H vectors dst<h>. */
static void jam_term(C *c, const OrnNode *f, const OrnNode *st, int id, int q, int H,
                     const char *dst, bool add)
{
    const CgJam *j = c->jam;
    char key[48];
    cg_ol(c, "%s t%d_[%d];", cg_ctype(st->u.assign.target->u.name.sym->type->kind), id, j->W);
    snprintf(key, sizeof key, "i%d_ + %d", id, q);
    reduce_elem(c, f, st, id, key, NULL);
    for (int h = 0; h < H; h++) {
        cg_ol(c, "jv%d_ tv%d_%d_;", id, id, h);
        cg_ol(c, "__builtin_memcpy(&tv%d_%d_, t%d_ + %d, sizeof tv%d_%d_);", id, h, id,
              h * j->W / H, id, h);
        cg_ol(c, "%s%d_ %s= tv%d_%d_;", dst, h, add ? "+" : "", id, h);
    }
}

/* The tree of partials [a, a + size) when each holds one term (a loop no longer than the
 * partials), made as the terms come, into dst<h>: the left half's tree, then, where the
 * loop reaches the right half, that half's tree added to it. The additions of tree_regs
 * (c_jam.c) with the pruning of cg_jam_tree_regs -- a partial the loop does not reach is -0,
 * and x + -0 is x -- but each pair is added as soon as both halves exist, so that a few
 * vectors are live instead of every partial (conv1d's window of 9: 18 registers of
 * products, spilled, for 16 keys). The caller has tested that term a exists. */
static void jam_stream_tree(C *c, const OrnNode *f, const OrnNode *st, int id, int H, int a,
                            int size, const char *dst)
{
    if (size == 1) {
        cg_ol(c, "{");
        c->ind++;
        jam_term(c, f, st, id, a, H, dst, false);
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    jam_stream_tree(c, f, st, id, H, a, size / 2, dst);
    cg_ol(c, "if (i%d_ + %d < hi%d_) {", id, a + size / 2, id);
    c->ind++;
    char sub[32];
    snprintf(sub, sizeof sub, "u%d_%d_", id, c->tmp++);
    cg_ind(c);
    cg_o(c, "jv%d_", id);
    for (int h = 0; h < H; h++) cg_o(c, "%s %s%d_", h ? "," : "", sub, h);
    cg_o(c, ";\n");
    jam_stream_tree(c, f, st, id, H, a + size / 2, size / 2, sub);
    for (int h = 0; h < H; h++) cg_ol(c, "%s%d_ = %s%d_ + %s%d_;", dst, h, dst, h, sub, h);
    c->ind--;
    cg_ol(c, "}");
}

/* A loop reduction in a jam's vector code (c_jam.c) whose accesses are all proven: its L
 * partials of the W values kept as L x H vectors in registers (the memory form's r[L][W],
 * read and written at a partial chosen at run time, stays in memory: 2.9 -> 1.0 ms for
 * conv1d). Groups of L elements, element lo + q + L m into partial q, m ascending: the same
 * adds in the same order. Each element's W values go through a small array the C compiler
 * keeps in registers (the vector loop writes it, H loads of a vector each read it), and the
 * sums go out through the jam's array, which the vector loop after them reads. A vector is
 * as wide as the compiler's own (OrnCgOptions.vec_bytes, probed with the flags the C is
 * compiled with): a load of two narrower stores, or a store narrower than the load that
 * reads it, cannot be forwarded from the store buffer, a stall of about 15 cycles per
 * element (conv1d at 7.7x plain C with 64-byte loads of 32-byte stores on a Xeon whose
 * compiler prefers 256-bit vectors; 1.7x with 32-byte stores read by 64-byte loads on an
 * EPYC whose compiler prefers 512 bits).
 *
 * The partials start at -0, not +0, and the first group assigns them: -0 + x is x for every
 * x, so that saves an add per partial. A sum from -0 differs from the same adds from +0 in
 * the sign of a zero only (from +0 a partial is never -0; from -0 it is when every value
 * added was -0), and so does every sum of the tree; the tree's result plus +0 is then the
 * result from +0, bit for bit. The tree is cg_jam_tree_regs's, lane by lane, into the
 * jam's sums. */
static void reduce_jam_regs(C *c, const OrnNode *f, const OrnNode *st, int id)
{
    const CgJam *j = c->jam;
    OrnTypeKind k = st->u.assign.target->u.name.sym->type->kind;
    const char *T = cg_ctype(k);
    int L = reduce_lanes(st), W = j->W, es = k == T_F32 ? 4 : 8;
    int vb = c->p->vec_bytes, H = W * es > vb ? W * es / vb : 1; /* vectors of the W values */
    char lo[24], hi[24], top[24];
    snprintf(lo, sizeof lo, "lo%d_", id);
    snprintf(hi, sizeof hi, "hi%d_", id);
    snprintf(top, sizeof top, "s%d_", id);
    cg_ol(c, "typedef %s jv%d_ __attribute__((vector_size(%d)));", T, id, W * es / H);
    cg_ind(c);
    cg_o(c, "const jv%d_ nz%d_ = {", id, id);
    for (int e = 0; e < W / H; e++) cg_o(c, "%s-0.0%s", e ? ", " : "", k == T_F32 ? "f" : "");
    cg_o(c, "};\n");
    int nrows = cg_rows_open(c, f->u.for_.var->u.name.sym, f->u.for_.body, lo, hi);
    cg_ol(c, "int64_t i%d_ = lo%d_;", id, id);
    /* A loop no longer than the partials (a window): each partial one term, the tree made
     * as they come (jam_stream_tree); the same bits as the partials' tree below. */
    cg_ol(c, "if (hi%d_ - lo%d_ <= %d) {", id, id, L);
    c->ind++;
    cg_ind(c);
    cg_o(c, "jv%d_", id);
    for (int h = 0; h < H; h++) cg_o(c, "%s s%d_%d_ = nz%d_", h ? "," : "", id, h, id);
    cg_o(c, ";\n");
    cg_ol(c, "if (i%d_ < hi%d_) {", id, id);
    c->ind++;
    jam_stream_tree(c, f, st, id, H, 0, L, top);
    c->ind--;
    cg_ol(c, "}");
    for (int h = 0; h < H; h++) {
        char v[32];
        snprintf(v, sizeof v, "s%d_%d_", id, h);
        cg_jam_store_sum(c, id, v, h * W / H);
    }
    c->ind--;
    cg_ol(c, "} else {");
    c->ind++;
    cg_ind(c);
    cg_o(c, "jv%d_", id);
    for (int q = 0; q < L; q++)
        for (int h = 0; h < H; h++)
            cg_o(c, "%s p%d_%d_%d_ = nz%d_", q || h ? "," : "", id, q, h, id);
    cg_o(c, ";\n");
    for (int first = 1; first >= 0; first--) {
        if (first)
            cg_ol(c, "if (i%d_ < hi%d_) {", id, id);
        else
            cg_ol(c, "for (i%d_ += %d; i%d_ < hi%d_; i%d_ += %d) {", id, L, id, id, id, L);
        c->ind++;
        for (int q = 0; q < L; q++) {
            if (q)
                cg_ol(c, "if (i%d_ + %d < hi%d_) {", id, q, id);
            else
                cg_ol(c, "{");
            c->ind++;
            char pq[32];
            snprintf(pq, sizeof pq, "p%d_%d_", id, q);
            jam_term(c, f, st, id, q, H, pq, !first);
            c->ind--;
            cg_ol(c, "}");
        }
        c->ind--;
        cg_ol(c, "}");
    }
    for (int h = 0; h < H; h++) cg_jam_tree_regs(c, id, L, h, h * W / H);
    c->ind--;
    cg_ol(c, "}");
    cg_rows_close(c, nrows);
}

static void st_for_reduce(C *c, const OrnNode *f, const OrnNode *st)
{
    const OrnSym *s = st->u.assign.target->u.name.sym;
    OrnTypeKind k = s->type->kind;
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp = 0;
    bool split = (c->cx == CX_BODY || c->cx == CX_CLONE) && !c->fast &&
                 orn_cg_for_spans(c->loop, f, sp, &nsp);
    int id = cg_for_bounds(c, f);
    bool warp = c->warp == WARP_UNIFORM; /* a partial per lane (reduce_segment_lanes) */
    bool jam = c->jam && c->jam->nest;
    if (jam && !split && !c->cuda) {
        reduce_jam_regs(c, f, st, id);
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    if (warp)
        cg_ol(c, "%s r%d_ = 0;", cg_ctype(k), id);
    else if (jam)
        cg_ol(c, "%s r%d_[%d][%d] = {{0}};", cg_ctype(k), id, reduce_lanes(st), c->jam->W);
    else
        cg_ol(c, "%s r%d_[%d] = {0};", cg_ctype(k), id, reduce_lanes(st));
    if (split) {
        char lo[24], hi[24];
        snprintf(lo, sizeof lo, "lo%d_", id);
        snprintf(hi, sizeof hi, "hi%d_", id);
        cg_split_range(c, sp, nsp, lo, hi, id);
        /* The usual case, the whole range proven: its fast segment alone (a short loop --
         * k-means' 16 dimensions -- then pays no edge segments' loop tests). */
        cg_ol(c, "if (sg%d_[1] == sg%d_[0] && sg%d_[2] == sg%d_[3]) {", id, id, id, id);
        for (int g = -1; g < 3; g++) {
            char from[24], to[24];
            int fast = g < 0 || g == 1;
            snprintf(from, sizeof from, g < 0 ? "lo%d_" : "sg%d_[%d]", id, g);
            snprintf(to, sizeof to, g < 0 ? "hi%d_" : "sg%d_[%d]", id, g + 1);
            if (g == 0) cg_ol(c, "} else {");
            cg_ol(c, "{");
            c->ind++;
            const OrnSym *vv = c->vfast_var, *vy = c->vfast_varying;
            const OrnNode *vb = c->vfast_body;
            bool vvv = c->vfast_vv;
            if (fast) {
                c->vfast_var = f->u.for_.var->u.name.sym;
                c->vfast_varying = NULL;
                c->vfast_body = f->u.for_.body;
                c->vfast_vv = false;
            }
            c->fast += fast;
            reduce_segment(c, f, st, id, from, to);
            c->fast -= fast;
            c->vfast_var = vv, c->vfast_varying = vy, c->vfast_body = vb, c->vfast_vv = vvv;
            c->ind--;
            cg_ol(c, "}");
        }
        cg_ol(c, "}");
    } else {
        char lo[24], hi[24];
        snprintf(lo, sizeof lo, "lo%d_", id);
        snprintf(hi, sizeof hi, "hi%d_", id);
        reduce_segment(c, f, st, id, lo, hi);
    }
    if (jam) {
        cg_jam_tree(c, id, reduce_lanes(st));
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    /* f32: when the trip count leaves a tail, its partials were just stored one by one, and
     * the tail form of the tree reads them one by one (orn_std.h: no store-forward stall). */
    char lanes[160];
    if (warp)
        snprintf(lanes, sizeof lanes, "orn_gpu_lanes%s(L_, r%d_)", k == T_F32 ? "_f32" : "", id);
    else if (k == T_F32)
        snprintf(lanes, sizeof lanes,
                 "((hi%d_ - lo%d_) & 15 ? orn_std_lanes_f32_tail(r%d_) : orn_std_lanes_f32(r%d_))",
                 id, id, id, id);
    else
        snprintf(lanes, sizeof lanes, "orn_std_lanes(r%d_)", id);
    cg_ind(c);
    cg_o(c, "%s = (%s)(%s %s %s);\n", cg_nm(c, s), cg_ctype(k), cg_nm(c, s),
         st->u.assign.op == OP_SUB ? "-" : "+", lanes);
    c->ind--;
    cg_ol(c, "}");
}

void cg_loop_body(C *c, const OrnSym *var, const OrnNode *body, int fast)
{
    cg_loop_body_in(c, var, NULL, body, fast);
}

void cg_loop_body_in(C *c, const OrnSym *var, const OrnSym *varying, const OrnNode *body, int fast)
{
    const OrnSym *vv = c->vfast_var, *vy = c->vfast_varying;
    const OrnNode *vb = c->vfast_body;
    bool vvv = c->vfast_vv;
    if (fast) c->vfast_var = var, c->vfast_varying = varying, c->vfast_body = body;
    if (fast) c->vfast_vv = false;
    c->fast += fast;
    c->cloops++;
    cg_st_block(c, body);
    c->cloops--;
    c->vfast_var = vv, c->vfast_varying = vy, c->vfast_body = vb, c->vfast_vv = vvv;
    c->fast -= fast;
}

typedef struct SegFor {
    const OrnNode *s;
    int id;
    bool whole;
    int fast;
    const char *v;
} SegFor;

/* The loop of one segment of a versioned `for` (versioned_for). */
static void seg_for(C *c, const void *ud)
{
    const SegFor *f = ud;
    int id = f->id;
    if (f->whole)
        cg_ol(c, "for (int64_t i%d_ = lo%d_; i%d_ < hi%d_; i%d_++) {", id, id, id, id, id);
    else
        cg_ol(c, "for (int64_t i%d_ = sg%d_[g%d_]; i%d_ < sg%d_[g%d_ + 1]; i%d_++) {", id, id, id,
              id, id, id, id);
    c->ind++;
    cg_bind_var(c, f->s->u.for_.var->u.name.sym, "int64_t", f->v);
    c->ind--;
    cg_loop_body(c, f->s->u.for_.var->u.name.sym, f->s->u.for_.body, f->fast);
    cg_ol(c, "}");
}

/* A `for` versioned by its spans' test (version.h): as three segments, the middle one
 * fast, or -- a loop that may break -- whole, the fast version when the test proves the
 * whole range and the checked one otherwise. */
static void versioned_for(C *c, const OrnNode *s, const OrnCgSpan *sp, int nsp, bool whole)
{
    int id = cg_for_bounds(c, s);
    char lo[24], hi[24], v[24];
    snprintf(lo, sizeof lo, "lo%d_", id);
    snprintf(hi, sizeof hi, "hi%d_", id);
    snprintf(v, sizeof v, "i%d_", id);
    cg_split_range(c, sp, nsp, lo, hi, id);
    if (!whole) {
        cg_ol(c, "for (int g%d_ = 0; g%d_ < 3; g%d_++) {", id, id, id);
        c->ind++;
    }
    for (int fast = 1; fast >= 0; fast--) {
        if (!fast)
            cg_ol(c, "} else {");
        else if (whole)
            cg_ol(c, "if (sg%d_[1] == lo%d_ && sg%d_[2] == hi%d_) {", id, id, id, id);
        else
            cg_ol(c, "if (g%d_ == 1) {", id);
        c->ind++;
        int nrows = 0;
        if (fast) { /* the rows under the fast body's context (cg_loop_body) */
            const OrnSym *vv = c->vfast_var, *vy = c->vfast_varying;
            const OrnNode *vb = c->vfast_body;
            bool vvv = c->vfast_vv;
            c->vfast_var = s->u.for_.var->u.name.sym, c->vfast_varying = NULL;
            c->vfast_body = s->u.for_.body, c->vfast_vv = false;
            c->fast++;
            char from[40], to[40];
            snprintf(from, sizeof from, whole ? "lo%d_" : "sg%d_[1]", id);
            snprintf(to, sizeof to, whole ? "hi%d_" : "sg%d_[2]", id);
            nrows = cg_rows_open(c, s->u.for_.var->u.name.sym, s->u.for_.body, from, to);
            c->fast--;
            c->vfast_var = vv, c->vfast_varying = vy, c->vfast_body = vb, c->vfast_vv = vvv;
        }
        SegFor sf = {s, id, whole, fast, v};
        rows_versions(c, nrows, seg_for, &sf);
        cg_rows_close(c, nrows);
        c->ind--;
    }
    cg_ol(c, "}");
    if (!whole) {
        c->ind--;
        cg_ol(c, "}");
    }
    c->ind--;
    cg_ol(c, "}");
}

/* Some span is a local array's that the loop body makes (its extents are unknown before
 * the body runs, so no test of the enclosing range covers it). */
static bool local_span(const OrnCgSpan *sp, int nsp)
{
    for (int i = 0; i < nsp; i++)
        if (sp[i].local && sp[i].local->parfor) return true;
    return false;
}

typedef struct FastFor {
    const OrnNode *s;
    int id;
} FastFor;

/* The loop of a `for` inside a proven range (cg_st_for). */
static void fast_for(C *c, const void *ud)
{
    const FastFor *f = ud;
    cg_for_head(c, f->s, f->id);
    c->cloops++;
    cg_st_block(c, f->s->u.for_.body);
    c->cloops--;
    cg_ol(c, "}"); /* the loop; its bounds' block closes after the versions */
}

/* `for v in lo..hi`. In a loop body, when every element access of the loop has a subscript
 * the loop variable moves by a constant offset or none (version.h), the loop is split: the
 * middle part, where every access is proven in its box, runs without per-access tests. */
void cg_st_for(C *c, const OrnNode *s)
{
    if (cg_jam_sum(c, s) || cg_jam_for(c, s)) return;
    const OrnNode *red = loop_reduction(c, s);
    if (red) {
        st_for_reduce(c, s, red);
        return;
    }
    OrnCgSpan sp[ORN_CG_MAXSPAN];
    int nsp = 0;
    bool body = c->cx == CX_BODY || c->cx == CX_CLONE;
    if (body && orn_cg_for_spans(c->loop, s, sp, &nsp) && (!c->fast || local_span(sp, nsp))) {
        /* inside a proven range too, where a local array the body makes (its extent unknown
         * to the range's test) is read at the loop variable: softmax's scores z[k] */
        versioned_for(c, s, sp, nsp, false);
        return;
    }
    if (body && !c->fast && orn_cg_for_spans_whole(c->loop, s, sp, &nsp)) {
        versioned_for(c, s, sp, nsp, true); /* it may break */
        return;
    }
    if (body && c->fast) { /* inside a proven range: row pointers before the loop */
        int id = cg_for_bounds(c, s);
        char lo[24], hi[24];
        snprintf(lo, sizeof lo, "lo%d_", id);
        snprintf(hi, sizeof hi, "hi%d_", id);
        int nrows = cg_rows_open(c, s->u.for_.var->u.name.sym, s->u.for_.body, lo, hi);
        FastFor ff = {s, id};
        rows_versions(c, nrows, fast_for, &ff);
        cg_rows_close(c, nrows);
        c->ind--;
        cg_ol(c, "}");
        return;
    }
    cg_for_open(c, s);
    c->cloops++;
    cg_st_block(c, s->u.for_.body);
    c->cloops--;
    cg_for_close(c);
}
