/* c_prefetch.c: the C back end's prefetch slice: the statements of a loop body reduced to
 * what decides which elements it reads, each read announced (orn_std_announce_n) instead
 * of made (emit_c_int.h, cg_pf_list; the passes that walk blocks are in c_loop.c). */
#include "emit_c_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        for (int i = 0; i < c->npf_rows; i++)
            if (c->pf_rows[i] == e) return; /* its row is announced (row_walk) */
        const OrnSym *s = orn_cg_base_sym(e);
        if (!s || s->kind != SYM_DIST || !announce_array(c, s) || subs_tainted(c, e->u.index.subs))
            return;
        int k = orn_cg_array_index(c->loop, s), dim;
        const OrnNode *fixed;
        if (c->pf_inbox && orn_cg_boxable(c->loop, k) && !orn_cg_view_parts(e, &dim, &fixed))
            return; /* local: the runtime would ignore it */
        if (orn_cg_view_parts(e, &dim, &fixed)) {
            cg_ind(c);
            cg_o(c, "orn_std_vec_announce_view(&V_[%d], ", k);
            cg_put_dims(c, s);
            cg_o(c, ", %d, ", cg_sdim(cg_perm_of(c, s), dim));
            cg_ex_as(c, fixed, T_I64);
            cg_o(c, ");\n");
        } else {
            cg_ind(c);
            cg_o(c, "orn_std_announce_n(&V_[%d], %d, ", k, orn_list_len(e->u.index.subs));
            cg_ex_key(c, e->u.index.subs, s);
            cg_o(c, ");\n");
        }
        return;
    }
    default:
        return;
    }
}

static void pf(C *c, const OrnNode *s);

/* A walk along a row: `for j in 0..cols(X)` (`rows(X)`) -- what `for (j, a) in X[e, :]`
 * becomes (lang/sema_rewrite.c) -- reading X[e, j] (X[j, e]) with e fixed for the loop.
 * Each such read's row is announced once before the loop, as a view's, not element by
 * element (256 announcements a row made the prefetch pass 2.2x the view form's), and the
 * reads are listed in c->pf_rows for pf_announce to pass over. */
typedef struct RowWalk {
    C *c;
    const OrnSym *var, *arr;
    int dim; /* the dimension j walks */
    const OrnNode *body;
} RowWalk;

static void assigned_visit(const OrnNode *n, void *ud)
{
    const OrnSym **s = ud;
    if (*s && n->kind == N_ASSIGN && n->u.assign.target->kind == N_NAME &&
        n->u.assign.target->u.name.sym == *s)
        *s = NULL;
    if (*s && ((n->kind == N_FOR && n->u.for_.var->u.name.sym == *s) ||
               (n->kind == N_FOREACH &&
                (n->u.foreach.key->u.name.sym == *s || n->u.foreach.value->u.name.sym == *s))))
        *s = NULL; /* a nested loop's variable: not even declared before the loop */
    orn_ast_each_child(n, assigned_visit, ud);
}

/* e reads only names the loop body does not assign (nor run as a nested loop's variable),
 * nor the loop variable itself */
static bool fixed_in(const RowWalk *w, const OrnNode *e)
{
    if (!e) return true;
    if (e->kind == N_NAME) {
        const OrnSym *s = e->u.name.sym;
        if (!s || s == w->var) return false;
        const OrnSym *t = s;
        orn_ast_each_child(w->body, assigned_visit, &t);
        return t != NULL;
    }
    if (e->kind == N_UNARY) return fixed_in(w, e->u.unary.e);
    if (e->kind == N_BINARY) return fixed_in(w, e->u.binary.l) && fixed_in(w, e->u.binary.r);
    if (e->kind == N_INT) return true;
    return false;
}

static void row_visit(const OrnNode *n, void *ud)
{
    RowWalk *w = ud;
    C *c = w->c;
    if (n->kind == N_INDEX && orn_cg_base_sym(n) == w->arr && c->npf_rows < 8) {
        const OrnNode *x0 = n->u.index.subs, *x1 = x0 ? x0->next : NULL;
        const OrnNode *j = w->dim == 1 ? x1 : x0, *e = w->dim == 1 ? x0 : x1;
        if (x1 && !x1->next && j->kind == N_NAME && j->u.name.sym == w->var && e->kind != N_SLICE &&
            fixed_in(w, e) && !orn_cg_expr_tainted(c->loop, e)) {
            int k = orn_cg_array_index(c->loop, w->arr);
            pf_announce(c, e);
            cg_ind(c);
            cg_o(c, "orn_std_vec_announce_view(&V_[%d], ", k);
            cg_put_dims(c, w->arr);
            cg_o(c, ", %d, ", cg_sdim(cg_perm_of(c, w->arr), w->dim));
            cg_ex_as(c, e, T_I64);
            cg_o(c, ");\n");
            c->pf_rows[c->npf_rows++] = n;
            return;
        }
    }
    orn_ast_each_child(n, row_visit, ud);
}

static void row_walk(C *c, const OrnNode *f)
{
    const OrnNode *lo = f->u.for_.lo, *hi = f->u.for_.hi, *a = NULL;
    int bi = hi && hi->kind == N_CALL ? hi->u.call.builtin : -1;
    if (lo->kind != N_INT || lo->u.ilit.v != 0 || (bi != ORN_BI_ROWS && bi != ORN_BI_COLS)) return;
    a = hi->u.call.args;
    const OrnSym *arr = a && a->kind == N_NAME ? a->u.name.sym : NULL;
    if (!arr || arr->kind != SYM_DIST || !arr->type || arr->type->ndims != 2 || arr->type->sparse ||
        !announce_array(c, arr))
        return;
    RowWalk w = {c, f->u.for_.var->u.name.sym, arr, bi == ORN_BI_COLS ? 1 : 0, f->u.for_.body};
    orn_ast_each_child(f->u.for_.body, row_visit, &w);
}

void cg_pf_list(C *c, const OrnNode *list)
{
    for (; list; list = list->next) pf(c, list);
}

/* Emit a block's slice into a scratch buffer; returns whether anything came out. */
static bool pf_into(C *c, const OrnNode *blk, OrnBuf *tmp)
{
    OrnBuf *saved = c->b;
    c->b = tmp;
    c->ind++;
    if (blk) cg_pf_list(c, blk->kind == N_BLOCK ? blk->u.block.stmts : blk);
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
            cg_st_assign(c, s);
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
                cg_ol(c, "{");
                orn_buf_put(c->b, a.data, a.len);
                cg_ol(c, "}");
            }
            if (hb) {
                cg_ol(c, "{");
                orn_buf_put(c->b, b.data, b.len);
                cg_ol(c, "}");
            }
        } else if (ha || hb) {
            cg_ind(c);
            cg_o(c, "if (");
            cg_ex_cond(c, s->u.if_.cond);
            cg_o(c, ") {\n");
            if (ha) orn_buf_put(c->b, a.data, a.len);
            if (hb) {
                cg_ol(c, "} else {");
                orn_buf_put(c->b, b.data, b.len);
            }
            cg_ol(c, "}");
        }
        orn_buf_free(&a);
        orn_buf_free(&b);
        return;
    }
    case N_FOR: {
        pf_announce(c, s->u.for_.lo);
        pf_announce(c, s->u.for_.hi);
        if (orn_cg_sym_tainted(l, s->u.for_.var->u.name.sym)) return;
        row_walk(c, s);
        OrnBuf a;
        orn_buf_init(&a);
        c->cloops++;
        int saved = c->pf_drop;
        c->pf_drop = 0;
        bool h = pf_into(c, s->u.for_.body, &a) && !only_jumps(&a);
        c->pf_drop = saved;
        c->cloops--;
        if (h) {
            cg_for_open(c, s);
            orn_buf_put(c->b, a.data, a.len);
            cg_for_close(c);
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
        if (h) cg_st_foreach(c, s, !orn_cg_sym_tainted(l, s->u.foreach.value->u.name.sym), &a);
        orn_buf_free(&a);
        return;
    }
    case N_WHILE:
        return;
    case N_BREAK:
    case N_CONTINUE:
        if (!c->pf_drop) cg_st(c, s);
        return;
    case N_BLOCK: {
        OrnBuf a;
        orn_buf_init(&a);
        if (pf_into(c, s, &a)) {
            cg_ol(c, "{");
            orn_buf_put(c->b, a.data, a.len);
            cg_ol(c, "}");
        }
        orn_buf_free(&a);
        return;
    }
    default:
        return;
    }
}
