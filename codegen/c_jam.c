/* c_jam.c: the C back end: a loop reduction inside an outer `for`, computed for a vector of
 * the outer loop's values at once (emit_c_int.h, CgJam).
 *
 * k-means' distance loop is the model:
 *
 *     for c in 0..k
 *         dd = 0.0
 *         for j in 0..d            # a loop reduction (docs/language.md, section 13)
 *             t = X[i, j] - C[c, j]
 *             dd += t * t
 *         end
 *         if dd < best ...
 *     end
 *
 * Written as is, every (point, centre) pair ends its eight (sixteen) partials in a tree of
 * seven (fifteen) dependent adds, and the hand-written C it is measured against instead
 * keeps one sum per centre, vectorized across the centres. When the inner reduction reads
 * nothing the outer body assigns, its sums depend on the outer variable alone: they are
 * computed before the outer loop for W values of c at a time (64 bytes of the
 * sum's type), partial l of centre c in r[l][c - cb], so the partials, the tree and the
 * order of every addition stay exactly those of the loop reduction (the same bits), and
 * the outer loop then reads sum c at the reduction's place. The elements `C[c + k0, j + k1]`
 * of a top-level local array (which no parallel_for body writes), or of a dist array the loop
 * replicates (its box as a local array, orn_std_box_arr: `dist C = zeros(f64, k, d)` as a
 * newcomer writes the centres), are read from a transposed copy made once per body call
 * (orn_std_jam_snap; rows padded by W, so the last vector reads padding rather than past the
 * end), unit stride in c.
 *
 * The outer loop qualifies when its bounds are free of effects; the reduction (not inside
 * an `if` or a nested loop of the outer body) has bounds and terms that read neither c
 * (other than as its value and in such elements) nor anything the outer body assigns or
 * writes, no integer division; the outer body has no break, continue or return, and its
 * other statements have no effects (no calls of user functions, no random draws). At run
 * time the outer loop runs at least 4 values and every element read lies inside its array,
 * or the loop runs as written. A loop of more than 1024 values runs in chunks of 1024: the
 * sums of a chunk, then the outer loop's iterations of that chunk.
 *
 * The same jam serves a dense run's keys (cg_keyjam, at the end): a loop reduction of the
 * body of `parallel_for i, y in Y` reading `X[i + k]` (conv1d) is computed for W keys of the
 * run's fast range at once, then each key's statements read their sums. */
#include "emit_c_int.h"

#include <stdio.h>
#include <string.h>

enum { JAM_MINC = 4, JAM_MAXC = 1024, MAXSYMS = 64 };

/* e is v, v + K, K + v or v - K (K an integer literal): *off = the offset. */
bool cg_var_off(const OrnNode *e, const OrnSym *v, int64_t *off)
{
    if (e->kind == N_NAME) {
        *off = 0;
        return e->u.name.sym == v;
    }
    if (e->kind != N_BINARY || (e->u.binary.op != OP_ADD && e->u.binary.op != OP_SUB)) return false;
    const OrnNode *l = e->u.binary.l, *r = e->u.binary.r;
    if (l->kind == N_NAME && l->u.name.sym == v && r->kind == N_INT) {
        *off = e->u.binary.op == OP_ADD ? r->u.ilit.v : -r->u.ilit.v;
        return true;
    }
    if (e->u.binary.op == OP_ADD && r->kind == N_NAME && r->u.name.sym == v && l->kind == N_INT) {
        *off = l->u.ilit.v;
        return true;
    }
    return false;
}

typedef struct Scan {
    const OrnSym *set[MAXSYMS]; /* what the outer body assigns or writes */
    int nset;
    bool bad;
} Scan;

static void add_sym(Scan *sc, const OrnSym *s)
{
    if (!s) return;
    for (int i = 0; i < sc->nset; i++)
        if (sc->set[i] == s) return;
    if (sc->nset == MAXSYMS)
        sc->bad = true;
    else
        sc->set[sc->nset++] = s;
}

static void assigned_list(Scan *sc, const OrnNode *st);

/* The names statement st (of the outer body, not the reduction) assigns or writes; bad on
 * control flow out of the outer loop's iteration or an effect. */
static void assigned(Scan *sc, const OrnNode *st)
{
    switch (st->kind) {
    case N_ASSIGN: {
        const OrnNode *tg = st->u.assign.target;
        add_sym(sc, orn_cg_base_sym(tg));
        if (cg_impure(st->u.assign.value) || (tg->kind == N_INDEX && cg_impure(tg))) sc->bad = true;
        return;
    }
    case N_EXPR:
        if (cg_impure(st->u.expr_stmt.e)) sc->bad = true;
        return;
    case N_IF:
        if (cg_impure(st->u.if_.cond)) sc->bad = true;
        assigned_list(sc, st->u.if_.then->u.block.stmts);
        if (st->u.if_.els && st->u.if_.els->kind == N_IF)
            assigned(sc, st->u.if_.els); /* elif */
        else if (st->u.if_.els)
            assigned_list(sc, st->u.if_.els->u.block.stmts);
        return;
    case N_BLOCK:
        assigned_list(sc, st->u.block.stmts);
        return;
    case N_FOR:
        add_sym(sc, st->u.for_.var->u.name.sym);
        if (cg_impure(st->u.for_.lo) || cg_impure(st->u.for_.hi)) sc->bad = true;
        assigned_list(sc, st->u.for_.body->u.block.stmts);
        return;
    case N_CONST:
    case N_PARAM:
    case N_FN:
        return;
    default: /* while, foreach, break, continue, return */
        sc->bad = true;
        return;
    }
}

static void assigned_list(Scan *sc, const OrnNode *st)
{
    for (; st && !sc->bad; st = st->next) assigned(sc, st);
}

/* Free of integer division (a lane past the outer loop's end computes with a value of c
 * the loop never takes: that must not trap). */
static bool no_int_division(const OrnNode *e)
{
    if (!e) return true;
    switch (e->kind) {
    case N_UNARY:
        return no_int_division(e->u.unary.e);
    case N_BINARY:
        if (e->u.binary.op == OP_DIV && cg_kind_of(e) != T_F32 && cg_kind_of(e) != T_F64)
            return false;
        return no_int_division(e->u.binary.l) && no_int_division(e->u.binary.r);
    case N_CALL:
        if (e->u.call.builtin == ORN_BI_DIV || e->u.call.builtin == ORN_BI_MOD) return false;
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (!no_int_division(a)) return false;
        return true;
    case N_KWARG:
        return no_int_division(e->u.kwarg.value);
    case N_INDEX:
        for (const OrnNode *a = e->u.index.subs; a; a = a->next)
            if (!no_int_division(a)) return false;
        return true;
    default:
        return true;
    }
}

/* Record access arr[var + k0, j + k1] (row: arr[var + k0, :]) of array s. */
static bool add_acc(CgJam *j, const OrnSym *s, int64_t k0, int64_t k1, bool row)
{
    if (k0 < -(1 << 20) || k0 > (1 << 20) || k1 < -(1 << 20) || k1 > (1 << 20)) return false;
    int a = 0;
    while (a < j->narr && j->arr[a] != s) a++;
    if (a == j->narr) {
        if (j->narr == ORN_CG_MAXJAMARR) return false;
        j->arr[j->narr++] = s;
    }
    for (int x = 0; x < j->nacc; x++)
        if (j->acc[x].arr == a && j->acc[x].k0 == k0 && j->acc[x].k1 == k1 && j->acc[x].row == row)
            return true;
    if (j->nacc == ORN_CG_MAXJAMACC) return false;
    j->acc[j->nacc].arr = a;
    j->acc[j->nacc].k0 = k0;
    j->acc[j->nacc].k1 = k1;
    j->acc[j->nacc].row = row;
    j->nacc++;
    return true;
}

/* The plan index of dist array s when the loop replicates it (read-only: every block holds
 * all of it), else -1. */
static int jam_dist(const CgJam *j, const OrnSym *s)
{
    if (!s || s->kind != SYM_DIST || !j->loop) return -1;
    int k = orn_cg_array_index(j->loop, s);
    return k >= 0 && j->loop->arrays[k].role == ORN_ROLE_REPLICATED ? k : -1;
}

/* A 2-D float array the loop body cannot write: a top-level local array (docs/language.md),
 * or a dist array the loop replicates (read through orn_std_box_arr). */
static bool jam_array(const CgJam *j, const OrnSym *s)
{
    if (!s || !s->type || s->type->kind != T_ARRAY || s->type->ndims != 2 ||
        (s->type->elem != T_F32 && s->type->elem != T_F64))
        return false;
    if (s->type->dist) return !s->type->sparse && jam_dist(j, s) >= 0;
    return cg_is_local_array(s) && s->global && !s->parfor;
}

/* The local array (an OrnStdArr *) that jam array a is read through. */
static void jam_arr_name(C *c, const CgJam *j, int a, char *buf, size_t size)
{
    if (jam_dist(j, j->arr[a]) >= 0)
        snprintf(buf, size, "(&ja%d_%d_)", j->site, a);
    else
        snprintf(buf, size, "%s", cg_nm(c, j->arr[a]));
}

/* The elements of e that depend on c: each must be C[c + k0, j + k1] of a top-level 2-D
 * local float array (recorded in j); anything else that reads c, other than c itself, rules
 * the jam out. */
static bool jam_reads(CgJam *j, const OrnNode *e, const OrnSym *jv)
{
    if (!e || !cg_mentions(e, j->var)) return true;
    switch (e->kind) {
    case N_NAME:
        return true;
    case N_UNARY:
        return jam_reads(j, e->u.unary.e, jv);
    case N_BINARY:
        return jam_reads(j, e->u.binary.l, jv) && jam_reads(j, e->u.binary.r, jv);
    case N_KWARG:
        return jam_reads(j, e->u.kwarg.value, jv);
    case N_CALL:
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (!jam_reads(j, a, jv)) return false;
        return true;
    case N_INDEX: {
        const OrnSym *s = orn_cg_base_sym(e);
        if (cg_kind_of(e) == T_VIEW || !jam_array(j, s)) return false;
        const OrnNode *s0 = e->u.index.subs, *s1 = s0 ? s0->next : NULL;
        int64_t k0, k1;
        if (!s1 || s1->next || !cg_var_off(s0, j->var, &k0) || !cg_var_off(s1, jv, &k1))
            return false;
        return add_acc(j, s, k0, k1, false);
    }
    default:
        return false;
    }
}

static bool reads_set(const Scan *sc, const OrnNode *e)
{
    for (int i = 0; i < sc->nset; i++)
        if (cg_mentions(e, sc->set[i])) return true;
    return false;
}

static bool stmt_exprs_ok(CgJam *j, const Scan *sc, const OrnNode *st, const OrnSym *jv);

static bool stmts_exprs_ok(CgJam *j, const Scan *sc, const OrnNode *st, const OrnSym *jv)
{
    for (; st; st = st->next)
        if (!stmt_exprs_ok(j, sc, st, jv)) return false;
    return true;
}

static bool expr_ok(CgJam *j, const Scan *sc, const OrnNode *e, const OrnSym *jv)
{
    return !reads_set(sc, e) && no_int_division(e) && jam_reads(j, e, jv);
}

/* A statement of reduction f before its last (a temporary or an update of one, c_for.c):
 * its expressions read neither what the outer body assigns nor c other than as jam_reads
 * allows. */
static bool stmt_exprs_ok(CgJam *j, const Scan *sc, const OrnNode *st, const OrnSym *jv)
{
    switch (st->kind) {
    case N_ASSIGN:
        return expr_ok(j, sc, st->u.assign.value, jv);
    case N_IF:
        if (!expr_ok(j, sc, st->u.if_.cond, jv) ||
            !stmts_exprs_ok(j, sc, st->u.if_.then->u.block.stmts, jv))
            return false;
        if (st->u.if_.els && st->u.if_.els->kind == N_IF)
            return stmt_exprs_ok(j, sc, st->u.if_.els, jv); /* elif */
        return !st->u.if_.els || stmts_exprs_ok(j, sc, st->u.if_.els->u.block.stmts, jv);
    default:
        return false;
    }
}

/* An operand of dot (a view expression): its leaves that read the outer variable must be
 * rows arr[var + k0, :] of top-level local arrays (recorded); scalars must not read it. */
static bool dot_leaves(CgJam *j, const OrnNode *e)
{
    if (!cg_mentions(e, j->var)) return true;
    switch (e->kind) {
    case N_UNARY:
        return e->u.unary.op == OP_NEG && dot_leaves(j, e->u.unary.e);
    case N_BINARY:
        return e->u.binary.op >= OP_ADD && e->u.binary.op <= OP_DIV &&
               dot_leaves(j, e->u.binary.l) && dot_leaves(j, e->u.binary.r);
    case N_INDEX: {
        const OrnSym *s = orn_cg_base_sym(e);
        if (cg_kind_of(e) != T_VIEW || !jam_array(j, s)) return false;
        const OrnNode *s0 = e->u.index.subs, *s1 = s0 ? s0->next : NULL;
        int64_t k0;
        if (!s1 || s1->next || s1->kind != N_SLICE || !cg_var_off(s0, j->var, &k0)) return false;
        return add_acc(j, s, k0, 0, true);
    }
    default:
        return false;
    }
}

/* `s = dot(a, b)` (or +=, -=) into a float scalar: the call. */
static const OrnNode *dot_stmt(const OrnNode *st)
{
    if (st->kind != N_ASSIGN) return NULL;
    const OrnNode *tg = st->u.assign.target, *v = st->u.assign.value;
    if (tg->kind != N_NAME || !tg->u.name.sym || tg->u.name.sym->kind != SYM_VAR) return NULL;
    OrnTypeKind k = tg->u.name.sym->type->kind;
    if ((k != T_F32 && k != T_F64) || v->kind != N_CALL || v->u.call.builtin != ORN_BI_DOT)
        return NULL;
    const OrnNode *a = v->u.call.args, *b = a ? a->next : NULL;
    if (!b || b->next || a->kind == N_KWARG || b->kind == N_KWARG) return NULL;
    if (cg_kind_of(a) != T_VIEW && !(a->kind == N_NAME && cg_is_local_array(a->u.name.sym)))
        return NULL;
    if (cg_kind_of(b) != T_VIEW && !(b->kind == N_NAME && cg_is_local_array(b->u.name.sym)))
        return NULL;
    return v;
}

/* The outer body's `s = dot(a, b)` whose rows of c are transposed arrays' (dot_leaves). */
static bool match_dot(const OrnNode *body, CgJam *j)
{
    for (const OrnNode *st = body->u.block.stmts; st; st = st->next) {
        const OrnNode *call = dot_stmt(st);
        if (!call || !cg_mentions(call, j->var)) continue;
        Scan sc = {.nset = 0, .bad = false};
        for (const OrnNode *t = body->u.block.stmts; t; t = t->next)
            assigned(&sc, t); /* st too: its target, and whether the call has effects */
        if (sc.bad || reads_set(&sc, call) || !no_int_division(call)) return false;
        const OrnNode *a = call->u.call.args;
        if (!dot_leaves(j, a) || !dot_leaves(j, a->next) || j->narr == 0) return false;
        j->dot = call;
        j->red = st;
        j->sum = st->u.assign.target->u.name.sym;
        OrnTypeKind k = cg_kind_of(call);
        j->W = k == T_F32 ? 16 : 8;
        j->L = k == T_F32 ? 16 : 8;
        return true;
    }
    return false;
}

bool cg_jam_match(const C *c, const OrnNode *f, CgJam *j)
{
    memset(j, 0, sizeof *j);
    j->loop = c->loop;
    if (c->cx != CX_BODY || c->cuda || c->warp != WARP_NONE || !c->loop || f->kind != N_FOR)
        return false;
    if (cg_impure(f->u.for_.lo) || cg_impure(f->u.for_.hi)) return false;
    if (!no_int_division(f->u.for_.lo) || !no_int_division(f->u.for_.hi)) return false;
    const OrnNode *body = f->u.for_.body;
    const OrnSym *cv = f->u.for_.var->u.name.sym;
    if (!cv || orn_cg_is_static(cv) || !body || body->kind != N_BLOCK) return false;
    j->outer = f;
    j->var = cv;
    /* the reduction: a statement of the outer body */
    for (const OrnNode *st = body->u.block.stmts; st; st = st->next)
        if (st->kind == N_FOR && cg_for_is_reduction(c, st)) {
            j->red_for = st;
            break;
        }
    if (!j->red_for) return match_dot(body, j);
    const OrnNode *rf = j->red_for;
    const OrnNode *last = rf->u.for_.body->u.block.stmts;
    while (last->next) last = last->next;
    j->red = last;
    j->sum = last->u.assign.target->u.name.sym;
    /* what the rest of the outer body assigns */
    Scan sc = {.nset = 0, .bad = false};
    add_sym(&sc, cv);
    for (const OrnNode *st = body->u.block.stmts; st; st = st->next)
        if (st != rf) assigned(&sc, st);
    if (sc.bad) return false;
    const OrnSym *jv = rf->u.for_.var->u.name.sym;
    /* its bounds read neither c nor what the body assigns; its terms read c only as c and
     * in the elements above */
    if (reads_set(&sc, rf->u.for_.lo) || reads_set(&sc, rf->u.for_.hi) ||
        !no_int_division(rf->u.for_.lo) || !no_int_division(rf->u.for_.hi) ||
        cg_impure(rf->u.for_.lo) || cg_impure(rf->u.for_.hi))
        return false;
    Scan nc = sc; /* c itself is allowed in the terms */
    for (int i = 0; i < nc.nset; i++)
        if (nc.set[i] == cv) nc.set[i] = nc.set[--nc.nset];
    if (!expr_ok(j, &nc, last->u.assign.value, jv)) return false;
    for (const OrnNode *st = rf->u.for_.body->u.block.stmts; st != last; st = st->next)
        if (!stmt_exprs_ok(j, &nc, st, jv)) return false; /* the temporaries */
    if (j->narr == 0) return false; /* nothing to transpose: the reduction is not the cost */
    OrnTypeKind k = j->sum->type->kind;
    j->W = k == T_F32 ? 16 : 8;
    j->L = k == T_F32 ? 16 : 8;
    return true;
}

/* ---------------------------------------------------------------- the body's snapshots */

/* The jams in the subtree of n (orn_ast_each_child), in source order (cg_jam_prologue). */
static void scan_sites(const OrnNode *n, void *ud)
{
    C *c = ud;
    CgJam j;
    if (n->kind == N_FOR && c->njam < ORN_CG_MAXJAM && cg_jam_match(c, n, &j)) {
        int site = c->njam++;
        c->jam_site[site] = n;
        for (int a = 0; a < j.narr; a++) {
            cg_o(c, "    const %s *jt%d_%d_ __attribute__((unused)) = NULL;\n",
                 cg_ctype(j.arr[a]->type->elem), site, a);
            int k = jam_dist(&j, j.arr[a]);
            if (k >= 0)
                cg_o(c,
                     "    const OrnStdArr ja%d_%d_ __attribute__((unused)) = "
                     "orn_std_box_arr(&X%d_, %s, sizeof(%s));\n",
                     site, a, k, j.arr[a]->type->elem == T_F32 ? "ORN_DSM_F32" : "ORN_DSM_F64",
                     cg_ctype(j.arr[a]->type->elem));
        }
    }
    orn_ast_each_child(n, scan_sites, c);
}

void cg_jam_prologue(C *c)
{
    c->njam = 0;
    c->jam = NULL;
    c->jam_off = NULL;
    const OrnNode *b = c->loop->loop->node->u.parfor.body;
    if (b) scan_sites(b, c);
}

/* ---------------------------------------------------------------- emission */

/* The test that the elements of every access lie inside its array for c in [jlo, jhi) and
 * the reduction's range. */
static void range_test(C *c, const CgJam *j, int id)
{
    const OrnNode *rf = j->red_for;
    for (int x = 0; x < j->nacc; x++) {
        char a[64];
        jam_arr_name(c, j, j->acc[x].arr, a, sizeof a);
        long long k0 = (long long)j->acc[x].k0, k1 = (long long)j->acc[x].k1;
        cg_o(c, " &&\n");
        cg_ind(c);
        cg_o(c,
             "    orn_std_arr_span(%s, 0, lo%d_ + INT64_C(%lld)) && "
             "orn_std_arr_span(%s, 0, hi%d_ - 1 + INT64_C(%lld))",
             a, id, k0, a, id, k0);
        if (j->acc[x].row) continue; /* a whole row */
        cg_o(c, " &&\n");
        cg_ind(c);
        cg_o(c, "    ((int64_t)(");
        cg_ex_as(c, rf->u.for_.lo, T_I64);
        cg_o(c, ") >= (int64_t)(");
        cg_ex_as(c, rf->u.for_.hi, T_I64);
        cg_o(c, ") || (orn_std_arr_span(%s, 1, (int64_t)(", a);
        cg_ex_as(c, rf->u.for_.lo, T_I64);
        cg_o(c, ") + INT64_C(%lld)) && orn_std_arr_span(%s, 1, (int64_t)(", k1, a);
        cg_ex_as(c, rf->u.for_.hi, T_I64);
        cg_o(c, ") - 1 + INT64_C(%lld))))", k1);
    }
}

bool cg_jam_for(C *c, const OrnNode *f)
{
    if (c->jam || c->jam_off == f || c->cx != CX_BODY) return false;
    int site = -1;
    for (int i = 0; i < c->njam; i++)
        if (c->jam_site[i] == f) site = i;
    if (site < 0) return false;
    CgJam j;
    if (!cg_jam_match(c, f, &j) || (j.dot && !cg_jam_dot_ready(c, j.dot))) return false;
    j.site = site;
    OrnTypeKind k = j.sum->type->kind;
    const char *T = cg_ctype(k);
    int id = j.id = cg_for_bounds(c, f); /* lo<id>_, hi<id>_: the outer loop's range */
    cg_ol(c, "/* the reduction's sums for %d values of %s at once (c_jam.c) */", j.W,
          j.var->name->s);
    cg_ol(c, "const int jok%d_ = hi%d_ - lo%d_ >= %d;", id, id, id, JAM_MINC);
    for (int a = 0; a < j.narr; a++) {
        char an[64];
        jam_arr_name(c, &j, a, an, sizeof an);
        cg_ol(c,
              "if (jok%d_ && !jt%d_%d_) jt%d_%d_ = (const %s *)orn_std_jam_snap(P_, %s, %d, %d);",
              id, site, a, site, a, cg_ctype(j.arr[a]->type->elem), an, site * ORN_CG_MAXJAMARR + a,
              j.W);
    }
    cg_ind(c);
    cg_o(c, "if (jok%d_", id);
    for (int a = 0; a < j.narr; a++) cg_o(c, " && jt%d_%d_", site, a);
    range_test(c, &j, id);
    cg_o(c, ") {\n");
    c->ind++;
    for (int a = 0; a < j.narr; a++) {
        char an[64];
        jam_arr_name(c, &j, a, an, sizeof an);
        cg_ol(c, "const int64_t jr%d_%d_ __attribute__((unused)) = %s->dims[0] + %d;", site, a, an,
              j.W);
    }
    /* chunks of JAM_MAXC values: their sums, then the outer loop over them (cg_for_bounds) */
    cg_ol(c, "for (int64_t ql%d_ = lo%d_; ql%d_ < hi%d_; ql%d_ += %d) {", id, id, id, id, id,
          JAM_MAXC);
    c->ind++;
    cg_ol(c, "const int64_t qh%d_ = hi%d_ - ql%d_ < %d ? hi%d_ : ql%d_ + %d;", id, id, id, JAM_MAXC,
          id, id, JAM_MAXC);
    cg_ol(c, "%s jd%d_[%d];", T, id, JAM_MAXC);
    cg_ol(c, "for (int64_t cb%d_ = ql%d_; cb%d_ < qh%d_; cb%d_ += %d) {", id, id, id, id, id, j.W);
    c->ind++;
    char cb[24];
    snprintf(cb, sizeof cb, "cb%d_", id);
    cg_bind_var(c, j.var, "int64_t", cb); /* the reduction's span tests: the first value */
    j.nest = true;
    c->jam = &j;
    if (j.dot)
        cg_jam_dot_nest(c, &j);
    else
        cg_st_for(c, j.red_for);
    j.nest = false;
    c->ind--;
    cg_ol(c, "}");
    cg_st_for(c, f); /* the outer loop on the chunk, the reduction replaced by its sum */
    c->jam = NULL;
    c->ind--;
    cg_ol(c, "}");
    c->ind--;
    cg_ol(c, "} else {");
    c->ind++;
    c->jam_off = f;
    cg_st_for(c, f);
    c->jam_off = NULL;
    c->ind--;
    cg_ol(c, "}");
    c->ind--;
    cg_ol(c, "}");
    return !c->failed;
}

bool cg_jam_chunk(C *c, const OrnNode *f, int id)
{
    const CgJam *j = c->jam;
    if (!j || j->nest || f != j->outer) return false;
    cg_ol(c, "const int64_t lo%d_ = ql%d_, hi%d_ = qh%d_;", id, j->id, id, j->id);
    return true;
}

bool cg_jam_sum(C *c, const OrnNode *f)
{
    const CgJam *j = c->jam;
    if (!j || j->nest || f != j->red_for) return false;
    const char *s = cg_nm(c, j->sum);
    cg_ind(c);
    cg_o(c, "%s = (%s)(%s %s jd%d_[", s, cg_ctype(j->sum->type->kind), s,
         j->red->u.assign.op == OP_SUB ? "-" : "+", j->id);
    cg_o(c, "%s - ql%d_]);\n", cg_nm(c, j->var), j->id);
    return true;
}

bool cg_jam_elem(C *c, const OrnNode *e)
{
    const CgJam *j = c->jam;
    if (!j || !j->nest) return false;
    const OrnSym *s = orn_cg_base_sym(e);
    for (int a = 0; a < j->narr; a++) {
        if (j->arr[a] != s) continue;
        const OrnNode *s0 = e->u.index.subs, *s1 = s0->next;
        cg_o(c, "jt%d_%d_[(int64_t)(", j->site, a);
        cg_ex_as(c, s1, T_I64);
        cg_o(c, ") * jr%d_%d_ + (int64_t)(", j->site, a);
        cg_ex_as(c, s0, T_I64);
        cg_o(c, ")]");
        return true;
    }
    return false;
}

void cg_jam_tree(C *c, int id, int L)
{
    const CgJam *j = c->jam;
    cg_ol(c, "for (int cc%d_ = 0; cc%d_ < %d; cc%d_++)", id, id, j->W, id);
    cg_ind(c);
    cg_o(c, "    jd%d_[cb%d_ - ql%d_ + cc%d_] = ", j->id, j->id, j->id, id);
    for (int h = 0; h < L / 8; h++) { /* f32: two eight-trees, the first eight's first */
        int b = h * 8;
        cg_o(c,
             "%s((r%d_[%d][cc%d_] + r%d_[%d][cc%d_]) + (r%d_[%d][cc%d_] + r%d_[%d][cc%d_])) + "
             "((r%d_[%d][cc%d_] + r%d_[%d][cc%d_]) + (r%d_[%d][cc%d_] + r%d_[%d][cc%d_]))%s",
             L > 8 ? (h ? " + (" : "(") : "", id, b, id, id, b + 1, id, id, b + 2, id, id, b + 3,
             id, id, b + 4, id, id, b + 5, id, id, b + 6, id, id, b + 7, id, L > 8 ? ")" : "");
    }
    cg_o(c, ";\n");
}

/* The balanced tree, in order, of partials [a, a + size) of the first m (the others are
 * -0, left out: x + -0 is x exactly). */
static void tree_regs(C *c, int id, int h, int a, int size, int m)
{
    if (size == 1) {
        cg_o(c, "p%d_%d_%d_", id, a, h);
        return;
    }
    if (a + size / 2 >= m) {
        tree_regs(c, id, h, a, size / 2, m);
        return;
    }
    cg_o(c, "(");
    tree_regs(c, id, h, a, size / 2, m);
    cg_o(c, " + ");
    tree_regs(c, id, h, a + size / 2, size / 2, m);
    cg_o(c, ")");
}

void cg_jam_tree_regs(C *c, int id, int L, int h, int at)
{
    cg_ol(c, "{");
    c->ind++;
    /* fewer iterations than partials (a window of 9 under 16 partials): only the tree of
     * those that took values (the others are still -0), the same bits at up to half the
     * adds */
    cg_ol(c, "const int64_t m%d_ = hi%d_ - lo%d_ < %d ? hi%d_ - lo%d_ : %d;", id, id, id, L, id, id,
          L);
    cg_ol(c, "jv%d_ s%d_;", id, id);
    cg_ol(c, "switch (m%d_ > 0 ? m%d_ : 0) {", id, id);
    cg_ol(c, "case 0: s%d_ = nz%d_; break;", id, id);
    for (int m = 1; m <= L; m++) {
        cg_ind(c);
        if (m < L)
            cg_o(c, "case %d: s%d_ = ", m, id);
        else
            cg_o(c, "default: s%d_ = ", id);
        tree_regs(c, id, h, 0, L, m);
        cg_o(c, "; break;\n");
    }
    cg_ol(c, "}");
    char v[24];
    snprintf(v, sizeof v, "s%d_", id);
    cg_jam_store_sum(c, id, v, at);
    c->ind--;
    cg_ol(c, "}");
}

void cg_jam_store_sum(C *c, int id, const char *v, int at)
{
    const CgJam *j = c->jam;
    cg_ol(c, "%s += (jv%d_){0}; /* the sums from -0 as from +0 (reduce_jam_regs) */", v, id);
    cg_ol(c, "__builtin_memcpy(&jd%d_[cb%d_ - ql%d_ + %d], &%s, sizeof %s);", j->id, j->id, j->id,
          at, v, v);
}

void cg_jam_vec_open(C *c, int id)
{
    const CgJam *j = c->jam;
    cg_ol(c, "_Pragma(\"omp simd\") for (int64_t cc%d_ = 0; cc%d_ < %d; cc%d_++) {", id, id, j->W,
          id);
    c->ind++;
    char cv[48];
    snprintf(cv, sizeof cv, "cb%d_ + cc%d_", j->id, id);
    cg_bind_var(c, j->var, "int64_t", cv);
}

bool cg_jam_value(C *c, const OrnNode *e)
{
    const CgJam *j = c->jam;
    if (!j || j->nest || e != j->dot) return false;
    cg_o(c, "jd%d_[%s - ql%d_]", j->id, cg_nm(c, j->var), j->id);
    return true;
}

bool cg_jam_leaf(const C *c, const OrnNode *e)
{
    const CgJam *j = c->jam;
    if (!j || !j->nest || !j->dot || e->kind != N_INDEX) return false;
    const OrnSym *s = orn_cg_base_sym(e);
    for (int a = 0; a < j->narr; a++)
        if (j->arr[a] == s) return true;
    return false;
}

void cg_jam_leaf_elem(C *c, const OrnNode *e, const char *x)
{
    const CgJam *j = c->jam;
    const OrnSym *s = orn_cg_base_sym(e);
    int a = 0;
    while (j->arr[a] != s) a++;
    cg_o(c, "jt%d_%d_[(int64_t)(%s) * jr%d_%d_ + (int64_t)(", j->site, a, x, j->site, a);
    cg_ex_as(c, e->u.index.subs, T_I64);
    cg_o(c, ")]");
}

/* ---------------------------------------------------------------- a dense run's keys */

/* e is key, key + x, x + key or key - x with x free of key: unit stride across the keys. */
static bool key_lin(const OrnNode *e, const OrnSym *key)
{
    if (e->kind == N_NAME) return e->u.name.sym == key;
    if (e->kind != N_BINARY || (e->u.binary.op != OP_ADD && e->u.binary.op != OP_SUB)) return false;
    const OrnNode *l = e->u.binary.l, *r = e->u.binary.r;
    if (cg_mentions(r, key))
        return e->u.binary.op == OP_ADD && !cg_mentions(l, key) && key_lin(r, key);
    return key_lin(l, key);
}

/* A term of the reduction computed for W keys ahead of their statements (cg_keyjam): no
 * operation that can fail (the first error must stay the serial loop's): no integer
 * division, only the math built-ins, every element read addressed without a test in the fast
 * range (a dist array through its box, a local array covered by the run's test); no views;
 * an element read that reads the key holds it in its unit-stride subscript as key_lin, so
 * the W keys' reads are one vector load (*nk counts them). */
static bool key_term(const C *c, const OrnNode *e, const OrnSym *key, int *nk)
{
    if (!e) return true;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
    case N_NAME:
        return true;
    case N_UNARY:
        return key_term(c, e->u.unary.e, key, nk);
    case N_BINARY:
        if (e->u.binary.op == OP_DIV && cg_kind_of(e) != T_F32 && cg_kind_of(e) != T_F64)
            return false;
        return key_term(c, e->u.binary.l, key, nk) && key_term(c, e->u.binary.r, key, nk);
    case N_CALL:
        switch (e->u.call.sym ? -1 : e->u.call.builtin) {
        case ORN_BI_SQRT:
        case ORN_BI_EXP:
        case ORN_BI_LOG:
        case ORN_BI_ABS:
        case ORN_BI_POW:
        case ORN_BI_SIN:
        case ORN_BI_COS:
        case ORN_BI_TANH:
        case ORN_BI_FLOOR:
        case ORN_BI_CEIL:
        case ORN_BI_MIN:
        case ORN_BI_MAX:
        case ORN_BI_SIGMOID:
        case ORN_BI_F32:
        case ORN_BI_F64:
            break;
        default:
            return false;
        }
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (!key_term(c, a, key, nk)) return false;
        return true;
    case N_INDEX: {
        const OrnSym *s = orn_cg_base_sym(e);
        if (!s || cg_kind_of(e) == T_VIEW || cg_promoted(c, s) >= 0) return false;
        if (cg_is_local_array(s)) {
            if (!orn_cg_view_proven(c->loop, key, NULL, c->loop->loop->node->u.parfor.body, true,
                                    e))
                return false;
        } else {
            int k = orn_cg_array_index(c->loop, s);
            if (k < 0 || !orn_cg_boxable(c->loop, k) || cg_is_buffer(s)) return false;
        }
        const int *perm = cg_perm_of(c, s);
        int nd = orn_list_len(e->u.index.subs), d = 0;
        int last = perm ? perm[nd - 1] : nd - 1;
        bool reads = false;
        for (const OrnNode *x = e->u.index.subs; x; x = x->next, d++) {
            if (!key_term(c, x, key, nk)) return false;
            if (!cg_mentions(x, key)) continue;
            if (d != last || !key_lin(x, key)) return false;
            reads = true;
        }
        *nk += reads;
        return true;
    }
    default:
        return false;
    }
}

/* The reduction's statements before its last (temporaries, c_for.c): key_term's rules, and
 * nothing the rest of the body assigns. */
static bool key_stmt(const C *c, const Scan *sc, const OrnNode *st, const OrnSym *key, int *nk)
{
    switch (st->kind) {
    case N_ASSIGN:
        return !reads_set(sc, st->u.assign.value) && key_term(c, st->u.assign.value, key, nk);
    case N_IF:
        if (reads_set(sc, st->u.if_.cond) || !key_term(c, st->u.if_.cond, key, nk)) return false;
        for (const OrnNode *t = st->u.if_.then->u.block.stmts; t; t = t->next)
            if (!key_stmt(c, sc, t, key, nk)) return false;
        if (st->u.if_.els && st->u.if_.els->kind == N_IF)
            return key_stmt(c, sc, st->u.if_.els, key, nk);
        for (const OrnNode *t = st->u.if_.els ? st->u.if_.els->u.block.stmts : NULL; t; t = t->next)
            if (!key_stmt(c, sc, t, key, nk)) return false;
        return true;
    default:
        return false;
    }
}

/* Whether the body of dense loop l (key: its innermost key) has a loop reduction the jam of
 * its keys computes ahead (cg_keyjam): j filled. */
static bool keyjam_match(const C *c, const OrnCgLoop *l, const OrnSym *key, CgJam *j)
{
    memset(j, 0, sizeof *j);
    const OrnLoop *lp = l->loop;
    if (c->cx != CX_BODY || c->cuda || c->warp != WARP_NONE || c->lanes || c->jam || !key ||
        l->uses_rng || lp->naccums > 0 || c->npromo > 0 || !lp->node->u.parfor.body)
        return false;
    const OrnNode *body = lp->node->u.parfor.body;
    for (const OrnNode *st = body->u.block.stmts; st; st = st->next)
        if (st->kind == N_FOR && cg_for_is_reduction(c, st)) {
            j->red_for = st;
            break;
        }
    const OrnNode *rf = j->red_for;
    if (!rf) return false;
    /* what the rest of the body assigns or writes (a buffer: its target too), the key, the
     * value and the space: the reduction reads none of them but the key */
    Scan sc = {.nset = 0, .bad = false};
    add_sym(&sc, key);
    add_sym(&sc, lp->value);
    add_sym(&sc, lp->space);
    for (const OrnNode *st = body->u.block.stmts; st; st = st->next)
        if (st != rf) assigned(&sc, st);
    for (int i = 0, n = sc.nset; i < n; i++)
        if (cg_is_buffer(sc.set[i])) add_sym(&sc, orn_cg_buffer_target(sc.set[i]));
    if (sc.bad) return false;
    /* the same range for every key */
    int nk = 0;
    if (reads_set(&sc, rf->u.for_.lo) || reads_set(&sc, rf->u.for_.hi) ||
        !key_term(c, rf->u.for_.lo, key, &nk) || !key_term(c, rf->u.for_.hi, key, &nk))
        return false;
    Scan nc = sc; /* the key itself is allowed in the terms */
    nc.set[0] = nc.set[--nc.nset];
    const OrnNode *last = rf->u.for_.body->u.block.stmts;
    while (last->next) last = last->next;
    if (reads_set(&nc, last->u.assign.value) || !key_term(c, last->u.assign.value, key, &nk))
        return false;
    for (const OrnNode *st = rf->u.for_.body->u.block.stmts; st != last; st = st->next)
        if (!key_stmt(c, &nc, st, key, &nk)) return false;
    if (nk == 0) return false; /* nothing differs across the keys' vector */
    j->red = last;
    j->sum = last->u.assign.target->u.name.sym;
    j->var = key;
    j->W = j->L = j->sum->type->kind == T_F32 ? 16 : 8;
    return true;
}

bool cg_keyjam(C *c, const OrnCgLoop *l, const OrnSym *key, const char *vt, const char *from,
               const char *to, int lvl)
{
    CgJam j;
    if (!keyjam_match(c, l, key, &j)) return false;
    int id = j.id = c->tmp++;
    c->ind = lvl;
    cg_ol(c, "{");
    cg_ol(c, "    int64_t jl_ = %s;", from);
    cg_ol(c, "    for (; jl_ + %d <= %s; jl_ += %d) {", j.W, to, j.W);
    c->ind = lvl + 2;
    cg_ol(c, "/* the reduction's sums for %d keys at once (c_jam.c) */", j.W);
    cg_ol(c, "const int64_t ql%d_ = jl_, cb%d_ = jl_;", id, id);
    cg_ol(c, "%s jd%d_[%d];", cg_ctype(j.sum->type->kind), id, j.W);
    cg_ol(c, "{");
    c->ind++;
    char cb[24];
    snprintf(cb, sizeof cb, "cb%d_", id);
    cg_bind_var(c, key, "int64_t", cb);
    /* the fast range's context, as elem_body gives it (c_loop.c) */
    c->fast++;
    c->vfast_var = key, c->vfast_varying = NULL;
    c->vfast_body = l->loop->node->u.parfor.body, c->vfast_vv = true;
    j.nest = true;
    c->jam = &j;
    c->cloops++;
    cg_st_for(c, j.red_for);
    c->cloops--;
    c->vfast_var = NULL, c->vfast_body = NULL, c->vfast_vv = false;
    c->fast--;
    c->ind--;
    cg_ol(c, "}");
    /* each key's statements, the reduction replaced by its sum (cg_jam_sum) */
    j.nest = false;
    cg_ol(c, "for (int64_t j_ = jl_; j_ < jl_ + %d; j_++) {", j.W);
    cg_elem_body(c, l, key, vt, "j_", lvl + 3);
    c->jam = NULL;
    c->ind = lvl + 2;
    cg_ol(c, "}");
    c->ind = lvl;
    cg_ol(c, "    }");
    return !c->failed;
}
