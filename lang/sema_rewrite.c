/* sema_rewrite.c: the three loops sema rewrites into the forms the later passes know best
 * (docs/language.md section 13). Each node is rewritten in place, so the rewrites are
 * idempotent across sema's float-inference runs.
 *
 * 1. `for (k, v) in` a dense view or a local 1-D array is a counted loop:
 *
 *     for (k, v) in X[e, :]        ->   for k in 0..cols(X)
 *         body                             v = X[e, k]      (v read-only, as before)
 *     end                                  body
 *                                      end
 *
 * (`X[:, e]`: rows(X) and X[k, e]; a local 1-D array x: len(x) and x[k].) One form for the
 * analyzer and both code generators: the element reads get the direct addressing, range
 * versioning and loop reductions of a counted loop, and a sum over a row is the same loop
 * reduction whichever way the row is written.
 *
 * A dist array's view is rewritten inside a parallel_for body only (at top level a view is
 * fetched once, its elements one by one would each be collective), and a sparse array's
 * never (its foreach visits the stored entries). The subscript e is evaluated again in every
 * iteration, so the rewrite needs e to give the same value each time: it reads literals,
 * keys, loop variables, consts, params, variables the body does not assign and elements of
 * arrays it does not write, through arithmetic, the pure built-ins and extents only.
 *
 * 2. A `for` whose body is one `if` without elif or else, its condition comparisons of the
 * loop variable (plus a constant) with bounds joined by `and`, is the `for` over the range
 * where the condition holds, its body the if's:
 *
 *     for j in 0..w                      ->   for j in max(0, 1)..min(w, w - 1)
 *         if j > 0 and j < w - 1                  body
 *             body                           end
 *         end
 *     end
 *
 * The same iterations run; a reduction in the body becomes a loop reduction of the range
 * (as the C a programmer writes for a stencil's interior). The bounds are evaluated once,
 * before the loop, so they must be the same in every iteration and unable to fail: the
 * stable subscripts of 1. without element reads, div or mod.
 *
 * 3. An element read that is a subscript and the same in every iteration of a `for` whose
 * body is one update of a scalar is read once, before the loop:
 *
 *     for j in lo..hi                    ->   if lo < hi
 *         s += A[P[i], j] * x[j]                  row = P[i]       (a name no source has)
 *     end                                         for j in lo..hi
 *                                                     s += A[row, j] * x[j]
 *                                                 end
 *                                             end
 *
 * so the row is one subscript the loop does not change and the loop gets the direct
 * addressing, versions and loop reduction of `A[r, j]` (4x faster for a gathered row). The
 * same statements run with the same values, and the same errors: the read happens in the
 * first iteration anyway (the loop runs at least once; lo and hi cannot fail, as 2.'s
 * bounds), not under the right side of `and` / `or`, and its value cannot change in the
 * loop (P and i are stable as 1.'s subscript). What the statement evaluates before it that
 * can fail (`x[j]` in `s += x[j] * A[P[i], j]`) is evaluated first, at j = lo, into a
 * temporary nobody reads (a probe), so a failing program still fails there first: probes
 * read only local arrays and call only the pure built-ins (anything else before the read
 * keeps the loop as written). Inside parallel_for bodies
 * only, as 1. */
#include <stdio.h>
#include <string.h>

#include "sema_int.h"

/* What the body may change: a variable `id` it assigns (`id = ...`, `id op= ...`), an array
 * `id` whose elements it assigns, and any array when it updates a buffer (its target may
 * be `id`) or calls a user fn or extern (which may write arrays). A fn cannot assign its
 * caller's variables. */
typedef struct Scan {
    Sema *s;
    const OrnName *id;
    bool elems; /* look for element assignments `id[...] = ...` too */
    bool hit;
} Scan;

static void scan(const OrnNode *n, void *ud)
{
    Scan *sc = ud;
    const OrnNode *t = n->kind == N_ASSIGN ? n->u.assign.target : NULL;
    if (t && t->kind == N_NAME && t->u.name.id == sc->id) sc->hit = true;
    if (sc->elems && t && t->kind == N_INDEX && t->u.index.base &&
        t->u.index.base->kind == N_NAME) {
        const OrnName *b = t->u.index.base->u.name.id;
        const OrnSym *y = b ? orn_sema_lookup(sc->s, b) : NULL;
        if (b == sc->id || (y && y->type && y->type->kind == T_BUFFER)) sc->hit = true;
    }
    if (sc->elems && n->kind == N_CALL && orn_sema_builtin_of(n->u.call.id) < 0) sc->hit = true;
    orn_ast_each_child(n, scan, ud);
}

static bool assigned_in(Sema *s, const OrnNode *body, const OrnName *id, bool elems)
{
    Scan sc = {s, id, elems, false};
    scan(body, &sc);
    return sc.hit;
}

static bool stable(Sema *s, const OrnNode *e, const OrnNode *body, const OrnName *k,
                   const OrnName *v, bool strict)
{
    if (!e) return false;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
        return true;
    case N_NAME: {
        const OrnSym *y = e->u.name.sym;
        if (!y || e->u.name.id == k || e->u.name.id == v) return false;
        switch (y->kind) {
        case SYM_KEY:
        case SYM_LOOPVAR:
        case SYM_CONST:
        case SYM_PARAM:
            return true;
        case SYM_VAR:
        case SYM_ARG:
        case SYM_VALUE:
            return y->readonly_value || !assigned_in(s, body, e->u.name.id, false);
        default:
            return false;
        }
    }
    case N_UNARY:
        return stable(s, e->u.unary.e, body, k, v, strict);
    case N_BINARY:
        return stable(s, e->u.binary.l, body, k, v, strict) &&
               stable(s, e->u.binary.r, body, k, v, strict);
    case N_INDEX: {
        /* an element of an array the body does not write (nor, through a call, may) */
        const OrnNode *b = e->u.index.base;
        const OrnSym *y = b && b->kind == N_NAME ? b->u.name.sym : NULL;
        if (strict || !y || !y->type || y->type->kind != T_ARRAY || b->u.name.id == k ||
            b->u.name.id == v || assigned_in(s, body, b->u.name.id, true))
            return false;
        for (const OrnNode *x = e->u.index.subs; x; x = x->next)
            if (!stable(s, x, body, k, v, strict)) return false;
        return true;
    }
    case N_CALL: {
        int bi = e->u.call.builtin;
        bool extent = bi == ORN_BI_ROWS || bi == ORN_BI_COLS || bi == ORN_BI_DIM ||
                      bi == ORN_BI_LEN || bi == ORN_BI_NNZ;
        if (bi < 0 || bi >= ORN_BI__COUNT || (!extent && !(orn_builtins[bi].flags & BI_CONST)) ||
            (strict && (bi == ORN_BI_DIV || bi == ORN_BI_MOD)))
            return false;
        for (const OrnNode *a = e->u.call.args; a; a = a->next) {
            const OrnSym *y = a->kind == N_NAME ? a->u.name.sym : NULL;
            bool whole = extent && y && y->type && y->type->kind == T_ARRAY; /* fixed extents */
            if (!whole && !stable(s, a, body, k, v, strict)) return false;
        }
        return true;
    }
    default:
        return false;
    }
}

static OrnNode *name_node(Sema *s, const OrnName *id, OrnSpan span)
{
    OrnNode *n = orn_node_new(s->u, N_NAME, span);
    n->u.name.id = id;
    return n;
}

bool orn_sema_foreach_as_for(Sema *s, OrnNode *n, const OrnType *t)
{
    OrnNode *it = n->u.foreach.iter, *key = n->u.foreach.key, *val = n->u.foreach.value;
    OrnNode *body = n->u.foreach.body;
    if (!it || !key || !val || !body || key->kind != N_NAME || val->kind != N_NAME) return false;
    const OrnNode *base = it->kind == N_INDEX ? it->u.index.base : it;
    if (!base || base->kind != N_NAME || !base->u.name.sym) return false;
    const OrnSym *as = base->u.name.sym;
    const OrnType *at = as->type;
    if (!at || at->kind != T_ARRAY || at->sparse || orn_type_is_str_array(at)) return false;
    if (at->dist && (!s->loop || s->fn)) return false;
    const OrnName *kid = key->u.name.id, *vid = val->u.name.id, *aid = base->u.name.id;
    /* names already in scope: the foreach's own path reports the redeclaration */
    if (!kid || !vid || kid == vid || orn_sema_lookup(s, kid) || orn_sema_lookup(s, vid))
        return false;
    OrnNode *fixed = NULL;
    int slice = -1;
    const char *extent;
    if (t->kind == T_VIEW && it->kind == N_INDEX && at->ndims == 2) {
        int i = 0;
        for (OrnNode *sub = it->u.index.subs; sub; sub = sub->next, i++) {
            if (sub->kind == N_SLICE)
                slice = i;
            else
                fixed = sub;
        }
        if (i != 2 || slice < 0 || !stable(s, fixed, body, kid, vid, false)) return false;
        extent = slice == 1 ? "cols" : "rows";
    } else if (t->kind == T_ARRAY && !at->dist && at->ndims == 1 && it->kind == N_NAME) {
        extent = "len";
    } else {
        return false;
    }

    OrnSpan sp = it->span;
    OrnNode *hi = orn_node_new(s->u, N_CALL, sp);
    hi->u.call.id = orn_intern_cstr(s->u->names, extent);
    hi->u.call.id_span = sp;
    hi->u.call.args = name_node(s, aid, base->span);
    hi->u.call.builtin = -1;

    OrnNode *elem = orn_node_new(s->u, N_INDEX, sp);
    elem->u.index.base = name_node(s, aid, base->span);
    OrnNode *k = name_node(s, kid, key->span);
    if (slice < 0) {
        elem->u.index.subs = k;
    } else {
        OrnNode *f = fixed;
        f->next = NULL;
        if (slice == 1) {
            f->next = k;
            elem->u.index.subs = f;
        } else {
            k->next = f;
            elem->u.index.subs = k;
        }
    }
    OrnNode *bind = orn_node_new(s->u, N_ASSIGN, val->span);
    bind->u.assign.op = OP_NONE;
    bind->u.assign.target = val;
    bind->u.assign.value = elem;
    bind->u.assign.binds_value = true;
    if (body->kind == N_BLOCK) {
        bind->next = body->u.block.stmts;
        body->u.block.stmts = bind;
    } else {
        OrnNode *b = orn_node_new(s->u, N_BLOCK, body->span);
        bind->next = body;
        b->u.block.stmts = bind;
        body = b;
    }

    OrnNode *lo = orn_node_new(s->u, N_INT, sp);
    lo->u.ilit.v = 0;
    n->kind = N_FOR;
    n->u.for_.var = key;
    n->u.for_.lo = lo;
    n->u.for_.hi = hi;
    n->u.for_.body = body;
    return true;
}

/* j, j + c, c + j, j - c (c an integer literal or const): the offset c, or false */
static bool var_plus(const OrnNode *e, const OrnSym *j, int64_t *c)
{
    OrnConstVal cv;
    if (e->kind == N_NAME) {
        *c = 0;
        return e->u.name.sym == j;
    }
    if (e->kind != N_BINARY || (e->u.binary.op != OP_ADD && e->u.binary.op != OP_SUB)) return false;
    const OrnNode *a = e->u.binary.l, *b = e->u.binary.r;
    if (e->u.binary.op == OP_ADD && b->kind == N_NAME && b->u.name.sym == j) {
        const OrnNode *x = a;
        a = b;
        b = x;
    }
    if (a->kind != N_NAME || a->u.name.sym != j || !orn_sema_eval_const(b, &cv) ||
        (cv.kind != T_I64 && cv.kind != T_I32) || cv.i == INT64_MIN || cv.i > INT64_MAX / 2 ||
        cv.i < -INT64_MAX / 2)
        return false;
    *c = e->u.binary.op == OP_SUB ? -cv.i : cv.i;
    return true;
}

static OrnNode *plus_const(Sema *s, OrnNode *e, int64_t c)
{
    if (!c) return e;
    OrnNode *k = orn_node_new(s->u, N_INT, e->span), *b = orn_node_new(s->u, N_BINARY, e->span);
    k->u.ilit.v = c < 0 ? -c : c;
    b->u.binary.op = c < 0 ? OP_SUB : OP_ADD;
    b->u.binary.l = e;
    b->u.binary.r = k;
    return b;
}

static OrnNode *extreme(Sema *s, const char *f, OrnNode *a, OrnNode *b)
{
    OrnNode *call = orn_node_new(s->u, N_CALL, b->span);
    call->u.call.id = orn_intern_cstr(s->u->names, f);
    call->u.call.id_span = b->span;
    call->u.call.builtin = -1;
    a->next = b;
    b->next = NULL;
    call->u.call.args = a;
    return call;
}

/* One comparison of the condition as a bound of j: e, plus off, from below or above. */
typedef struct Bound {
    OrnNode *e;
    int64_t off;
    bool lower;
} Bound;
enum { MAXBOUND = 8 };

/* The terms of cond (comparisons joined by `and`) as bounds of j. */
static bool bounds(Sema *s, const OrnNode *cond, const OrnNode *body, const OrnSym *j, Bound *bd,
                   int *n)
{
    if (!cond || cond->kind != N_BINARY) return false;
    OrnOp op = cond->u.binary.op;
    if (op == OP_AND)
        return bounds(s, cond->u.binary.l, body, j, bd, n) &&
               bounds(s, cond->u.binary.r, body, j, bd, n);
    if (*n == MAXBOUND || (op != OP_LT && op != OP_LE && op != OP_GT && op != OP_GE)) return false;
    OrnNode *a = cond->u.binary.l, *b = cond->u.binary.r;
    int64_t c;
    if (!var_plus(a, j, &c)) { /* e OP j + c: j + c (mirrored OP) e */
        OrnNode *x = a;
        a = b;
        b = x;
        op = op == OP_LT ? OP_GT : op == OP_LE ? OP_GE : op == OP_GT ? OP_LT : OP_LE;
        if (!var_plus(a, j, &c)) return false;
    }
    if (!b->type || !orn_type_is_integer(b->type) || !stable(s, b, body, j->name, NULL, true))
        return false;
    /* j + c >= b: j >= b - c (> : from b - c + 1); j + c < b: j < b - c (<= : b - c + 1) */
    bd[(*n)++] = (Bound){b, -c + (op == OP_GT || op == OP_LE ? 1 : 0), op == OP_GE || op == OP_GT};
    return true;
}

void orn_sema_for_narrow(Sema *s, OrnNode *n)
{
    OrnNode *body = n->u.for_.body, *var = n->u.for_.var;
    const OrnSym *j = var && var->kind == N_NAME ? var->u.name.sym : NULL;
    if (!j || !body || body->kind != N_BLOCK) return;
    OrnNode *st = body->u.block.stmts;
    if (!st || st->next || st->kind != N_IF || st->u.if_.els || !st->u.if_.then) return;
    const OrnNode *cond = st->u.if_.cond;
    if (!cond->type || cond->type->kind != T_BOOL) return;
    Bound bd[MAXBOUND];
    int nb = 0;
    if (!bounds(s, cond, body, j, bd, &nb)) return;
    OrnNode *lo = n->u.for_.lo, *hi = n->u.for_.hi;
    for (int i = 0; i < nb; i++) {
        OrnNode *x = plus_const(s, bd[i].e, bd[i].off);
        if (bd[i].lower)
            lo = extreme(s, "max", lo, x);
        else
            hi = extreme(s, "min", hi, x);
    }
    orn_sema_expr(s, lo);
    orn_sema_expr(s, hi);
    n->u.for_.lo = lo;
    n->u.for_.hi = hi;
    n->u.for_.body = st->u.if_.then;
}

static OrnNode *copy_at(Sema *s, const OrnNode *e, const OrnName *var, const OrnNode *lo);

/* A copy of a bound of 2.'s kind (literals, names, operators, calls of them). */
static OrnNode *copy_bound(Sema *s, const OrnNode *e)
{
    return copy_at(s, e, NULL, NULL);
}

/* Whether e (a bound) is made of nodes copy_bound copies, none of them able to fail. */
static bool copyable(const OrnNode *e)
{
    switch (e->kind) {
    case N_INT:
    case N_NAME:
        return true;
    case N_UNARY:
        return copyable(e->u.unary.e);
    case N_BINARY:
        return e->u.binary.op != OP_DIV && copyable(e->u.binary.l) && copyable(e->u.binary.r);
    case N_CALL:
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (a->kind == N_KWARG || !copyable(a)) return false;
        return true;
    default:
        return false;
    }
}

typedef struct Mention {
    const OrnName *id;
    bool hit;
} Mention;

static void mention(const OrnNode *n, void *ud)
{
    Mention *m = ud;
    if (n->kind == N_NAME && n->u.name.id == m->id) m->hit = true;
    orn_ast_each_child(n, mention, ud);
}

/* 3.'s search, in the order the statement evaluates (left to right, subscripts before the
 * read): the first integer element read that is a whole subscript and stable (the row),
 * and the whole subtrees evaluated before it that may fail (element reads, calls, integer
 * division): the probes, each re-evaluated before the loop at v = lo so that it fails there,
 * first, as in the loop's first iteration. A probe must be able to run twice: it reads only
 * local arrays (a dist array's read would add an access the analyzer sees) and calls only
 * the pure built-ins. A read under the right side of `and` / `or` may not run at all: no
 * row there. */
#define HOIST_PROBES 8
typedef struct Hoist {
    Sema *s;
    const OrnNode *body;
    const OrnName *var;
    const OrnNode *read, *parent;
    const OrnNode *probe[HOIST_PROBES];
    int nprobe;
    bool bad;
} Hoist;

/* Whether e may fail when evaluated. */
static bool fallible(const OrnNode *e)
{
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
    case N_NAME:
        return false;
    case N_UNARY:
        return fallible(e->u.unary.e);
    case N_BINARY:
        return e->u.binary.op == OP_DIV || fallible(e->u.binary.l) || fallible(e->u.binary.r);
    default:
        return true;
    }
}

/* Whether e can be evaluated again, before the loop, with the same effects (none) and
 * the same failures: literals, names, operators, reads of local arrays, pure built-ins. */
static bool probeable(const OrnNode *e)
{
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
    case N_NAME:
        return true;
    case N_UNARY:
        return probeable(e->u.unary.e);
    case N_BINARY:
        return probeable(e->u.binary.l) && probeable(e->u.binary.r);
    case N_INDEX: {
        const OrnNode *b = e->u.index.base;
        const OrnSym *y = b && b->kind == N_NAME ? b->u.name.sym : NULL;
        if (!y || !y->type || y->type->kind != T_ARRAY || y->type->dist) return false;
        for (const OrnNode *x = e->u.index.subs; x; x = x->next)
            if (x->kind == N_SLICE || !probeable(x)) return false;
        return true;
    }
    case N_CALL: {
        int bi = e->u.call.builtin;
        if (bi < 0 || bi >= ORN_BI__COUNT || !(orn_builtins[bi].flags & BI_CONST)) return false;
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (a->kind == N_KWARG || !probeable(a)) return false;
        return true;
    }
    default:
        return false;
    }
}

/* The whole subtrees es[0..n) (in evaluation order) are evaluated before the row's path
 * goes on, so before everything the deeper levels found: those of them that may fail go
 * in front of the probes. */
static void hoist_before(Hoist *h, const OrnNode *const *es, int n)
{
    const OrnNode *add[HOIST_PROBES];
    int na = 0;
    for (int i = 0; i < n && !h->bad; i++) {
        const OrnNode *e = es[i];
        if (!fallible(e)) continue;
        const OrnType *t = e->type;
        if (na + h->nprobe == HOIST_PROBES || !probeable(e) || !t || t->kind == T_ARRAY ||
            t->kind == T_VIEW || t->kind == T_ERROR)
            h->bad = true;
        else
            add[na++] = e;
    }
    if (h->bad || na == 0) return;
    memmove(h->probe + na, h->probe, (size_t)h->nprobe * sizeof h->probe[0]);
    memcpy(h->probe, add, (size_t)na * sizeof add[0]);
    h->nprobe += na;
}

static bool row_read(Hoist *h, const OrnNode *e)
{
    if (e->kind != N_INDEX || !e->type || !orn_type_is_integer(e->type)) return false;
    const OrnNode *b = e->u.index.base;
    const OrnSym *y = b && b->kind == N_NAME ? b->u.name.sym : NULL;
    return y && y->type && y->type->kind == T_ARRAY && !y->type->sparse &&
           stable(h->s, e, h->body, h->var, NULL, false);
}

/* Whether the row is in e (then h->read, h->parent and the probes before it are set). */
static bool hoist_find(Hoist *h, const OrnNode *e)
{
    switch (e->kind) {
    case N_UNARY:
        return hoist_find(h, e->u.unary.e);
    case N_BINARY: {
        if (hoist_find(h, e->u.binary.l)) return true;
        if (e->u.binary.op == OP_AND || e->u.binary.op == OP_OR) return false;
        if (!hoist_find(h, e->u.binary.r)) return false;
        hoist_before(h, (const OrnNode *const *)&e->u.binary.l, 1);
        return true;
    }
    case N_INDEX: {
        const OrnNode *sub[8];
        int ns = 0;
        for (const OrnNode *x = e->u.index.subs; x && ns < 8; x = x->next) {
            bool found = false;
            if (row_read(h, x)) {
                h->read = x;
                h->parent = e;
                found = true;
            } else {
                found = hoist_find(h, x);
            }
            if (found) {
                hoist_before(h, sub, ns);
                return true;
            }
            sub[ns++] = x;
        }
        return false;
    }
    default:
        return false;
    }
}

/* A copy of e (sema's results cleared: the next walk finds them again), with the loop
 * variable `var`, if any, replaced by a copy of lo (a probe's). */
static OrnNode *copy_at(Sema *s, const OrnNode *e, const OrnName *var, const OrnNode *lo)
{
    if (var && e->kind == N_NAME && e->u.name.id == var) {
        OrnNode *c = copy_bound(s, lo);
        c->span = e->span;
        return c;
    }
    OrnNode *c = orn_node_new(s->u, e->kind, e->span);
    c->u = e->u;
    c->next = NULL;
    switch (e->kind) {
    case N_NAME:
        c->u.name.sym = NULL;
        break;
    case N_UNARY:
        c->u.unary.e = copy_at(s, e->u.unary.e, var, lo);
        break;
    case N_BINARY:
        c->u.binary.l = copy_at(s, e->u.binary.l, var, lo);
        c->u.binary.r = copy_at(s, e->u.binary.r, var, lo);
        break;
    case N_INDEX: {
        c->u.index.base = copy_at(s, e->u.index.base, var, lo);
        OrnNode **tail = &c->u.index.subs;
        *tail = NULL;
        for (const OrnNode *x = e->u.index.subs; x; x = x->next) {
            *tail = copy_at(s, x, var, lo);
            tail = &(*tail)->next;
        }
        break;
    }
    case N_CALL: {
        OrnNode **tail = &c->u.call.args;
        *tail = NULL;
        c->u.call.builtin = -1;
        c->u.call.sym = NULL;
        for (const OrnNode *a = e->u.call.args; a; a = a->next) {
            *tail = copy_at(s, a, var, lo);
            tail = &(*tail)->next;
        }
        break;
    }
    default:
        break;
    }
    return c;
}

/* A name for a temporary of 3. that neither the body nor the scope uses, or NULL. */
static const OrnName *fresh(Sema *s, const OrnNode *body, const char *what, OrnSpan at)
{
    char nm[64];
    snprintf(nm, sizeof nm, "%s_of_line%u_col%u", what, at.line, at.col);
    const OrnName *id = orn_intern_cstr(s->u->names, nm);
    Mention m = {id, false};
    mention(body, &m);
    return m.hit || orn_sema_lookup(s, id) ? NULL : id;
}

void orn_sema_for_hoist(Sema *s, OrnNode *n)
{
    OrnNode *body = n->u.for_.body, *var = n->u.for_.var, *lo = n->u.for_.lo, *hi = n->u.for_.hi;
    if (!s->loop || s->fn || !var || var->kind != N_NAME || !body || body->kind != N_BLOCK || !lo ||
        !hi)
        return;
    OrnNode *st = body->u.block.stmts;
    if (!st || st->next || st->kind != N_ASSIGN || !st->u.assign.target ||
        st->u.assign.target->kind != N_NAME || !st->u.assign.value)
        return;
    Hoist h = {.s = s, .body = body, .var = var->u.name.id};
    if (!hoist_find(&h, st->u.assign.value) || h.bad) return;
    if (!stable(s, lo, body, var->u.name.id, NULL, true) ||
        !stable(s, hi, body, var->u.name.id, NULL, true) || !copyable(lo) || !copyable(hi))
        return;
    const OrnNode *r = h.read;
    /* the temporaries: names the program does not use here */
    const OrnName *tid = fresh(s, body, "row", r->span), *pid[HOIST_PROBES];
    if (!tid) return;
    for (int i = 0; i < h.nprobe; i++)
        if (!(pid[i] = fresh(s, body, "probe", h.probe[i]->span))) return;

    /* the read moves into the declaration; the subscript becomes the temporary */
    OrnNode *read = NULL;
    for (OrnNode **x = (OrnNode **)&((OrnNode *)h.parent)->u.index.subs; *x; x = &(*x)->next) {
        if (*x != r) continue;
        read = *x;
        OrnNode *t = name_node(s, tid, r->span);
        t->next = read->next;
        *x = t;
        read->next = NULL;
        break;
    }
    if (!read) return;
    OrnNode *then = orn_node_new(s->u, N_BLOCK, n->span);
    OrnNode **tail = &then->u.block.stmts;
    for (int i = 0; i < h.nprobe; i++) { /* what the first iteration evaluates before it */
        OrnNode *pr = orn_node_new(s->u, N_ASSIGN, h.probe[i]->span);
        pr->u.assign.op = OP_NONE;
        pr->u.assign.target = name_node(s, pid[i], h.probe[i]->span);
        pr->u.assign.value = copy_at(s, h.probe[i], var->u.name.id, lo);
        *tail = pr;
        tail = &pr->next;
    }
    OrnNode *decl = orn_node_new(s->u, N_ASSIGN, read->span);
    decl->u.assign.op = OP_NONE;
    decl->u.assign.target = name_node(s, tid, read->span);
    decl->u.assign.value = read;
    *tail = decl;
    OrnNode *loop = orn_node_new(s->u, N_FOR, n->span);
    loop->u.for_ = n->u.for_;
    decl->next = loop;
    OrnNode *cond = orn_node_new(s->u, N_BINARY, n->span);
    cond->u.binary.op = OP_LT;
    cond->u.binary.l = copy_bound(s, lo);
    cond->u.binary.r = copy_bound(s, hi);
    OrnNode *next = n->next;
    n->kind = N_IF;
    memset(&n->u, 0, sizeof n->u);
    n->u.if_.cond = cond;
    n->u.if_.then = then;
    n->u.if_.els = NULL;
    n->next = next;
}
