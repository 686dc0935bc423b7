/* version.c: which `for` loops of a loop body get a once-per-range bounds test (version.h). */
#include "version.h"

#include <stdlib.h>
#include <string.h>

#include "sema.h"
#include "types.h"

enum { MAXASSIGNED = 256 };

typedef struct Walk {
    const OrnCgLoop *l;
    const OrnSym *var; /* the for loop's variable */
    const OrnSym *assigned[MAXASSIGNED];
    int nassigns[MAXASSIGNED];       /* assignments to assigned[i] in the body */
    const OrnNode *def[MAXASSIGNED]; /* the value of the `=` that declares it there, or NULL */
    int nassigned;
    OrnCgSpan *spans;
    int nspans;
    bool value_varies;     /* the parallel_for's value variable changes with the loop variable */
    bool whole;            /* the range is versioned whole (no segments): break is fine */
    const OrnSym *varying; /* a scalar that changes with the variable (a for-in's value) */
    bool boxed;            /* some access addresses a boxable array */
    int depth;             /* loops open inside the analysed one */
    /* the `for` loops open around the current node inside the analysed body whose bounds
     * are invariant: their variables range over [lo, hi) (range spans) */
    const OrnNode *nest[8];
    int nnest;
    const OrnNode *probe; /* an access whose qualification is asked for (the _proven calls) */
    bool probe_ok;
    bool ok;
    bool bufs;   /* buffer keys listed too (orn_cg_foreach_spans) */
    bool bufbad; /* a buffer key of none of the forms: buffer spans dropped */
} Walk;

bool orn_cg_boxable(const OrnCgLoop *l, int k)
{
    if (k < 0 || k >= l->narrays) return false;
    const OrnCgArray *a = &l->arrays[k];
    return a->role != ORN_ROLE_BUFFERED && a->sym && a->sym->type &&
           a->sym->type->kind == T_ARRAY && a->sym->type->dist && !a->sym->type->sparse;
}

/* s is written in the body; by `as` (an N_ASSIGN), or otherwise (a loop variable). */
static void note_assign(Walk *w, const OrnSym *s, const OrnNode *as)
{
    if (!s) return;
    const OrnNode *def = as && as->u.assign.op == OP_NONE && s->kind == SYM_VAR && s->decl == as
                             ? as->u.assign.value
                             : NULL;
    for (int i = 0; i < w->nassigned; i++)
        if (w->assigned[i] == s) {
            w->nassigns[i]++;
            w->def[i] = NULL;
            return;
        }
    if (w->nassigned == MAXASSIGNED) {
        w->ok = false;
        return;
    }
    w->nassigns[w->nassigned] = 1;
    w->def[w->nassigned] = def;
    w->assigned[w->nassigned++] = s;
}

static void note_assigned(Walk *w, const OrnSym *s)
{
    note_assign(w, s, NULL);
}

static bool is_assigned(const Walk *w, const OrnSym *s)
{
    for (int i = 0; i < w->nassigned; i++)
        if (w->assigned[i] == s) return true;
    return false;
}

/* Pass 1: every scalar the body writes (variables, the value variable, loop variables of
 * nested loops). */
static void collect_assigned(const OrnNode *n, void *ud)
{
    Walk *w = ud;
    switch (n->kind) {
    case N_ASSIGN:
        if (n->u.assign.target->kind == N_NAME) note_assign(w, n->u.assign.target->u.name.sym, n);
        break;
    case N_FOR:
        note_assigned(w, n->u.for_.var->u.name.sym);
        break;
    case N_FOREACH:
        note_assigned(w, n->u.foreach.key->u.name.sym);
        note_assigned(w, n->u.foreach.value->u.name.sym);
        break;
    default:
        break;
    }
    orn_ast_each_child(n, collect_assigned, ud);
}

static bool int_const(const OrnNode *e, int64_t *v)
{
    if (e->kind == N_INT) {
        *v = e->u.ilit.v;
        return true;
    }
    if (e->kind == N_NAME && e->u.name.sym && e->u.name.sym->kind == SYM_CONST &&
        e->u.name.sym->cval.kind == T_I64) {
        *v = e->u.name.sym->cval.i;
        return true;
    }
    return false;
}

/* A variable that the body declares by its only assignment, `x = e`, stands for e: block
 * scoping runs the definition before every use, in every iteration, and e's variables are
 * the loop's, nested loops' (in scope only where their iteration is), invariant ones, or
 * such definitions in turn (`rr = r + dr` ... `img[rr, cc]`). Returns e, followed through
 * such variables, or the name itself. */
static const OrnNode *subst(const Walk *w, const OrnNode *e)
{
    for (int depth = 0; depth < 16 && e->kind == N_NAME && e->u.name.sym; depth++) {
        int i = 0;
        while (i < w->nassigned && w->assigned[i] != e->u.name.sym) i++;
        if (i == w->nassigned || w->nassigns[i] != 1 || !w->def[i]) return e;
        e = w->def[i];
    }
    return e;
}

static bool is_var(const Walk *w, const OrnNode *e)
{
    return e->kind == N_NAME && e->u.name.sym == w->var;
}

/* v, v + c, c + v, v - c */
static bool var_form(const Walk *w, const OrnNode *e, int64_t *off)
{
    if (is_var(w, e)) {
        *off = 0;
        return true;
    }
    if (e->kind != N_BINARY) return false;
    const OrnNode *a = e->u.binary.l, *b = e->u.binary.r;
    int64_t c;
    if (e->u.binary.op == OP_ADD) {
        if (is_var(w, a) && int_const(b, &c)) {
            *off = c;
            return true;
        }
        if (is_var(w, b) && int_const(a, &c)) {
            *off = c;
            return true;
        }
    } else if (e->u.binary.op == OP_SUB && is_var(w, a) && int_const(b, &c) && c != INT64_MIN) {
        *off = -c;
        return true;
    }
    return false;
}

/* A subscript as a sum of terms: the loop variable (nvar: its coefficient), at most one
 * variable of a nested loop on the stack (nest, its sign), and integer constants (c). */
typedef struct Lin {
    int nvar;
    const OrnNode *nest;
    int nsign;
    const OrnNode *inv; /* one invariant term, added (`i` in `i + a - 1`) */
    int64_t c;
    bool bad;
} Lin;

static bool invariant(const Walk *w, const OrnNode *e);

static void lin(const Walk *w, const OrnNode *e, int sign, Lin *L, int depth)
{
    int64_t v;
    if (L->bad) return;
    if (depth > 16) {
        L->bad = true;
        return;
    }
    if (int_const(e, &v)) {
        if (v == INT64_MIN || __builtin_add_overflow(L->c, sign * v, &L->c)) L->bad = true;
        return;
    }
    if (is_var(w, e)) {
        L->nvar += sign;
        return;
    }
    if (e->kind != N_INT && invariant(w, e)) {
        if (L->inv || sign < 0) L->bad = true;
        L->inv = e;
        return;
    }
    switch (e->kind) {
    case N_NAME:
        if (subst(w, e) != e) {
            lin(w, subst(w, e), sign, L, depth + 1);
            return;
        }
        for (int i = w->nnest - 1; i >= 0; i--)
            if (e->u.name.sym && w->nest[i]->u.for_.var->u.name.sym == e->u.name.sym) {
                if (L->nest) break;
                L->nest = w->nest[i];
                L->nsign = sign;
                return;
            }
        L->bad = true;
        return;
    case N_UNARY:
        if (e->u.unary.op == OP_NEG) {
            lin(w, e->u.unary.e, -sign, L, depth + 1);
            return;
        }
        break;
    case N_BINARY:
        if (e->u.binary.op == OP_ADD || e->u.binary.op == OP_SUB) {
            lin(w, e->u.binary.l, sign, L, depth + 1);
            lin(w, e->u.binary.r, e->u.binary.op == OP_ADD ? sign : -sign, L, depth + 1);
            return;
        }
        break;
    default:
        break;
    }
    L->bad = true;
}

/* var + n + c, var - n + c (a window, version.h); without var, base + n + c or base - n + c
 * with base invariant: a nested loop's range from an invariant start (`G[i + a - 1, j]`
 * in the loop over j). */
static bool window_form(const Walk *w, const OrnNode *e, OrnCgSpan *sp)
{
    Lin L = {0};
    lin(w, e, 1, &L, 0);
    if (!L.bad && !L.nest && L.nvar == 1 && !L.inv && L.c != INT64_MIN) {
        sp->var = true; /* var + c through definitions (`j = i + 1` ... `A[j]`) */
        sp->off = L.c;
        return true;
    }
    if (!L.bad && !L.nest && L.nvar == 1 && L.inv && L.c != INT64_MIN) {
        sp->var = true; /* var + base + c: a shift known at run time (`i + lag`) */
        sp->inv = L.inv;
        sp->off = L.c;
        return true;
    }
    /* a nested loop's variable n: var + n + c (a window; var + sh + n + c, a window moved
     * by an invariant shift sh: `i + kw - 1 - k`), or base + n + c (a range) */
    if (L.bad || !L.nest || L.c == INT64_MIN || L.nvar < 0 || L.nvar > 1) return false;
    sp->var = L.nvar == 1;
    sp->range = true;
    sp->inv = L.inv;
    sp->neg = L.nsign < 0;
    sp->rlo = L.nest->u.for_.lo;
    sp->rhi = L.nest->u.for_.hi;
    sp->off = L.c;
    return true;
}

static bool invariant(const Walk *w, const OrnNode *e);
static bool probe_walk(const OrnCgLoop *l, const OrnSym *var, const OrnSym *varying,
                       const OrnNode *body, bool value_varies, const OrnNode *probe);

/* A subscript's span: the loop variable plus an offset, an invariant, or a nested loop's
 * variable plus an offset (its whole range). False: none of these. */
static bool classify(const Walk *w, const OrnNode *x, OrnCgSpan *sp)
{
    int64_t off;
    x = subst(w, x);
    if (var_form(w, x, &off) && off != INT64_MIN) {
        sp->var = true;
        sp->off = off;
        return true;
    }
    if (invariant(w, x)) {
        sp->inv = x;
        return true;
    }
    return window_form(w, x, sp);
}

/* An expression with the same value at every iteration of the loop, free of side effects. */
static bool invariant(const Walk *w, const OrnNode *e)
{
    switch (e->kind) {
    case N_INT:
    case N_BOOL:
        return true;
    case N_NAME: {
        const OrnSym *s = e->u.name.sym;
        if (!s || s == w->var) return false;
        switch (s->kind) {
        case SYM_CONST:
        case SYM_PARAM:
        case SYM_KEY:
            return true;
        case SYM_VALUE:
            return !w->value_varies && !is_assigned(w, s);
        case SYM_VAR:
        case SYM_ARG:
        case SYM_LOOPVAR:
            return !is_assigned(w, s);
        default:
            return false;
        }
    }
    case N_UNARY:
        return invariant(w, e->u.unary.e);
    case N_BINARY:
        return invariant(w, e->u.binary.l) && invariant(w, e->u.binary.r);
    case N_CALL:
        switch (e->u.call.builtin) {
        case ORN_BI_MIN:
        case ORN_BI_MAX:
        case ORN_BI_DIV:
        case ORN_BI_MOD:
        case ORN_BI_I64:
        case ORN_BI_I32:
            for (const OrnNode *a = e->u.call.args; a; a = a->next)
                if (a->kind == N_KWARG || !invariant(w, a)) return false;
            return true;
        case ORN_BI_ROWS:
        case ORN_BI_COLS:
        case ORN_BI_DIM:
        case ORN_BI_LEN: { /* an array's extents never change -- but one the body makes
                            * (a local array assigned there) is not there before it */
            const OrnNode *a = e->u.call.args;
            if (!a || a->kind != N_NAME || !a->type || a->type->kind != T_ARRAY) return false;
            if (a->u.name.sym && is_assigned(w, a->u.name.sym)) return false;
            return !a->next ||
                   (a->next->kind != N_KWARG && !a->next->next && invariant(w, a->next));
        }
        default:
            return false;
        }
    default:
        return false;
    }
}

static bool same(const OrnNode *a, const OrnNode *b)
{
    if (a == b) return true;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case N_INT:
        return a->u.ilit.v == b->u.ilit.v;
    case N_NAME:
        return a->u.name.sym == b->u.name.sym;
    case N_UNARY:
        return a->u.unary.op == b->u.unary.op && same(a->u.unary.e, b->u.unary.e);
    case N_BINARY:
        return a->u.binary.op == b->u.binary.op && same(a->u.binary.l, b->u.binary.l) &&
               same(a->u.binary.r, b->u.binary.r);
    default:
        return false;
    }
}

static void add_span(Walk *w, const OrnCgSpan *s)
{
    for (int i = 0; i < w->nspans; i++) {
        const OrnCgSpan *t = &w->spans[i];
        if (t->array != s->array || t->local != s->local || t->dim != s->dim || t->var != s->var ||
            t->full != s->full || t->range != s->range || t->buffer != s->buffer)
            continue;
        if (s->full) return;
        if (s->range ? t->off == s->off && t->neg == s->neg && same(t->rlo, s->rlo) &&
                           same(t->rhi, s->rhi) &&
                           (t->inv == s->inv || (t->inv && s->inv && same(t->inv, s->inv)))
            : s->var ? t->off == s->off &&
                           (t->inv == s->inv || (t->inv && s->inv && same(t->inv, s->inv)))
                     : same(t->inv, s->inv))
            return;
    }
    if (w->nspans == ORN_CG_MAXSPAN) {
        w->ok = false;
        return;
    }
    w->spans[w->nspans++] = *s;
}

static bool local_array(const OrnSym *s)
{
    return s && (s->kind == SYM_VAR || s->kind == SYM_ARG) && s->type && s->type->kind == T_ARRAY &&
           !s->type->dist;
}

/* The spans of an access to a local array, all of them or none (false: left checked). */
static bool local_spans(const Walk *w, const OrnNode *e, OrnCgSpan *sp, int *n)
{
    const OrnSym *s = orn_cg_base_sym(e);
    *n = 0;
    if (!local_array(s) || is_assigned(w, s) || !e->type || e->type->kind == T_VIEW) return false;
    int d = 0;
    for (const OrnNode *x = e->u.index.subs; x; x = x->next, d++) {
        if (d == 4 || x->kind == N_SLICE) return false;
        OrnCgSpan t = {.array = -1, .local = s, .dim = d};
        if (!classify(w, x, &t)) return false;
        sp[(*n)++] = t;
    }
    return *n > 0;
}

/* The storage dimension of logical dimension d of plan array k. */
static int storage_dim(const OrnCgLoop *l, int k, int d)
{
    const int *perm = l->arrays[k].perm;
    int sd = d;
    for (int i = 0; i < ORN_DEP_MAXDIM; i++)
        if (perm[i] == d) sd = i;
    return sd;
}

/* The two spans of a view W[s, :] (or W[:, s]) of a boxable 2-D dist array: its fixed
 * subscript's, and the whole extent along ':'. False: the view keeps its checked path. */
static bool view_spans(const Walk *w, const OrnNode *e, OrnCgSpan sp[2])
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (!s || s->kind != SYM_DIST || !s->type || s->type->ndims != 2 || e->kind != N_INDEX)
        return false;
    int k = orn_cg_array_index(w->l, s);
    if (!orn_cg_boxable(w->l, k)) return false;
    const OrnNode *x0 = e->u.index.subs, *x1 = x0 ? x0->next : NULL;
    if (!x1 || x1->next || (x0->kind == N_SLICE) == (x1->kind == N_SLICE)) return false;
    int dslice = x0->kind == N_SLICE ? 0 : 1;
    const OrnNode *fx = dslice == 0 ? x1 : x0;
    OrnCgSpan f = {.array = k, .dim = storage_dim(w->l, k, 1 - dslice)};
    if (!classify(w, fx, &f)) return false;
    sp[0] = f;
    sp[1] = (OrnCgSpan){.array = k, .dim = storage_dim(w->l, k, dslice), .full = true};
    return true;
}

/* An element of a buffer (an update: loop bodies only add to buffers): its keys' spans,
 * else the buffer spans are dropped (w->bufbad) and its updates keep their test. */
static void buffer_access(Walk *w, const OrnNode *e, int k)
{
    OrnCgSpan sp[ORN_DEP_MAXDIM];
    int n = 0;
    for (const OrnNode *x = e->u.index.subs; x; x = x->next, n++) {
        if (n == ORN_DEP_MAXDIM || x->kind == N_SLICE) {
            w->bufbad = true;
            return;
        }
        sp[n] = (OrnCgSpan){.array = k, .dim = storage_dim(w->l, k, n), .buffer = true};
        if (!classify(w, x, &sp[n])) {
            w->bufbad = true;
            return;
        }
    }
    if (w->nspans + n > ORN_CG_MAXSPAN) {
        w->bufbad = true;
        return;
    }
    for (int i = 0; i < n; i++) add_span(w, &sp[i]);
    w->boxed = true; /* its box (B<k>_) is tested too: worth a version of its own */
}

/* A clamp the analyzer proved (access.h, OrnClamp) lies between its key and its inner
 * expression, so their two spans cover it: returns the inner expression (clamps nested in
 * it stripped too: min(max(r + dr, 0), h - 1) gives r + dr) and the key's name, or NULL. */
static const OrnNode *unclamp(const Walk *w, const OrnNode *x, const OrnNode **key)
{
    const OrnAccessList *acc = &w->l->plan->acc;
    const OrnNode *in = NULL;
    int k = -1;
    for (int depth = 0; depth < 8; depth++) {
        x = subst(w, x);
        int i = 0;
        while (i < acc->nclamps && acc->clamps[i].call != x) i++;
        if (i == acc->nclamps || (k >= 0 && acc->clamps[i].key != k)) break;
        k = acc->clamps[i].key;
        in = x = acc->clamps[i].inner;
    }
    if (!in) return NULL;
    const OrnNode *kn = w->l->loop->node->u.parfor.keys;
    for (int i = 0; kn && i < k; i++) kn = kn->next;
    *key = kn;
    return kn ? in : NULL;
}

static void access(Walk *w, const OrnNode *e)
{
    const OrnSym *s = orn_cg_base_sym(e);
    if (local_array(s)) {
        OrnCgSpan sp[4];
        int n;
        if (!local_spans(w, e, sp, &n)) return;
        for (int i = 0; i < n; i++) add_span(w, &sp[i]);
        w->boxed = true;
        if (e == w->probe) w->probe_ok = true;
        return;
    }
    if (!s || s->kind != SYM_DIST || !e->type) return;
    if (e->type->kind == T_VIEW) {
        OrnCgSpan sp[2];
        if (view_spans(w, e, sp)) {
            add_span(w, &sp[0]);
            add_span(w, &sp[1]);
            w->boxed = true;
            if (e == w->probe) w->probe_ok = true;
        }
        return;
    }
    int k = orn_cg_array_index(w->l, s);
    if (w->bufs && k >= 0 && w->l->arrays[k].role == ORN_ROLE_BUFFERED) {
        buffer_access(w, e, k);
        return;
    }
    if (!orn_cg_boxable(w->l, k)) return; /* served by the view's own path either way */
    const int *perm = w->l->arrays[k].perm;
    int d = 0;
    for (const OrnNode *x = e->u.index.subs; x; x = x->next, d++) {
        int sd = d; /* the storage dimension of logical dimension d */
        for (int i = 0; i < ORN_DEP_MAXDIM; i++)
            if (perm[i] == d) sd = i;
        OrnCgSpan sp = {.array = k, .dim = sd}, ks = sp;
        if (x->kind == N_SLICE) return; /* a view: its own fast path */
        const OrnNode *key = NULL, *in = unclamp(w, x, &key);
        if (in && (!classify(w, key, &ks) || !classify(w, in, &sp))) in = NULL;
        if (!in && !classify(w, x, &sp)) {
            w->ok = false;
            return;
        }
        if (in) add_span(w, &ks);
        add_span(w, &sp);
    }
    w->boxed = true;
}

/* A nested `for` whose bounds are invariant goes on the nest stack (its variable's range is
 * known); whether it did. */
static bool push_nest(Walk *w, const OrnNode *f)
{
    if (w->nnest == 8 || !invariant(w, f->u.for_.lo) || !invariant(w, f->u.for_.hi)) return false;
    w->nest[w->nnest++] = f;
    return true;
}

/* Pass 2: every element access, and anything that rules versioning out. */
static void check(const OrnNode *n, void *ud)
{
    Walk *w = ud;
    if (!w->ok) return;
    switch (n->kind) {
    case N_CALL:
        if (n->u.call.sym && n->u.call.sym->kind == SYM_FN) {
            w->ok = false; /* a clone may address the loop's arrays */
            return;
        }
        break;
    case N_INDEX:
        access(w, n);
        break;
    case N_PARFOR:
        w->ok = false;
        return;
    case N_BREAK:
        /* a split loop runs as segments: a break of this loop would end only one */
        if (w->depth == 0 && !w->whole) w->ok = false;
        return;
    case N_FOR: {
        /* a nested loop with invariant bounds: its variable's range is known */
        bool push = push_nest(w, n);
        w->depth++;
        orn_ast_each_child(n, check, ud);
        w->depth--;
        if (push) w->nnest--;
        return;
    }
    case N_FOREACH:
    case N_WHILE:
        w->depth++;
        orn_ast_each_child(n, check, ud);
        w->depth--;
        return;
    default:
        break;
    }
    orn_ast_each_child(n, check, ud);
}

/* The walk of the loop over var with this body: spans listed into spans (at most
 * ORN_CG_MAXSPAN), whole: a break is allowed, probe: an access asked about. Whether the
 * loop qualifies (every access of a boxable array has a span). */
static bool walk_loop(Walk *w, const OrnNode *body)
{
    if (!w->l || !w->var || !body) return false;
    note_assigned(w, w->varying);
    orn_ast_each_child(body, collect_assigned, w);
    if (!w->ok || is_assigned(w, w->var)) return false;
    orn_ast_each_child(body, check, w);
    return w->ok && w->boxed;
}

bool orn_cg_range_spans(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body,
                        bool value_varies, OrnCgSpan *spans, int *nspans, bool *bufs)
{
    Walk w = {.l = l,
              .var = var,
              .spans = spans,
              .value_varies = value_varies,
              .ok = true,
              .bufs = bufs != NULL};
    if (bufs) *bufs = false;
    bool ok = walk_loop(&w, body);
    *nspans = 0;
    if (!ok) return false;
    bool any = false;
    for (int i = 0; i < w.nspans; i++) {
        any |= spans[i].buffer;
        if (!spans[i].buffer || !w.bufbad) spans[(*nspans)++] = spans[i];
    }
    if (bufs) *bufs = any && !w.bufbad;
    return true;
}

/* Whether access `probe` qualifies in the walk of the loop over var with this body (the
 * same walk that listed the spans the emitted test checks, nested loops included). */
static bool probe_walk(const OrnCgLoop *l, const OrnSym *var, const OrnSym *varying,
                       const OrnNode *body, bool value_varies, const OrnNode *probe)
{
    OrnCgSpan spans[ORN_CG_MAXSPAN];
    Walk w = {.l = l,
              .var = var,
              .varying = varying,
              .spans = spans,
              .value_varies = value_varies,
              .whole = true,
              .probe = probe,
              .ok = true};
    return probe && (walk_loop(&w, body), w.probe_ok);
}

bool orn_cg_view_proven(const OrnCgLoop *l, const OrnSym *var, const OrnSym *varying,
                        const OrnNode *body, bool value_varies, const OrnNode *view)
{
    return probe_walk(l, var, varying, body, value_varies, view);
}

bool orn_cg_foreach_spans(const OrnCgLoop *l, const OrnNode *foreach_stmt, OrnCgSpan *spans,
                          int *nspans, bool *bufs)
{
    *nspans = 0;
    if (bufs) *bufs = false;
    if (foreach_stmt->kind != N_FOREACH) return false;
    Walk w = {.l = l,
              .var = foreach_stmt->u.foreach.key->u.name.sym,
              .varying = foreach_stmt->u.foreach.value->u.name.sym,
              .spans = spans,
              .ok = true,
              .bufs = bufs != NULL};
    if (!walk_loop(&w, foreach_stmt->u.foreach.body)) return false;
    int n = 0;
    bool any = false;
    for (int i = 0; i < w.nspans; i++) {
        any |= spans[i].buffer;
        if (!spans[i].buffer || !w.bufbad) spans[n++] = spans[i];
    }
    if (bufs) *bufs = any && !w.bufbad;
    *nspans = n;
    return true;
}

bool orn_cg_for_spans_whole(const OrnCgLoop *l, const OrnNode *for_stmt, OrnCgSpan *spans,
                            int *nspans)
{
    *nspans = 0;
    if (for_stmt->kind != N_FOR) return false;
    Walk w = {
        .l = l, .var = for_stmt->u.for_.var->u.name.sym, .spans = spans, .ok = true, .whole = true};
    if (!walk_loop(&w, for_stmt->u.for_.body)) return false;
    *nspans = w.nspans;
    return true;
}

bool orn_cg_for_spans(const OrnCgLoop *l, const OrnNode *for_stmt, OrnCgSpan *spans, int *nspans)
{
    *nspans = 0;
    if (for_stmt->kind != N_FOR) return false;
    return orn_cg_range_spans(l, for_stmt->u.for_.var->u.name.sym, for_stmt->u.for_.body, false,
                              spans, nspans, NULL);
}

/* ---------------------------------------------------------------- fixed elements */

typedef struct Fixed {
    Walk w;
    OrnCgFixed *out;
    int n, max;
    bool bad[ORN_CG_MAXFIXED * 4]; /* by plan array index, up to the limit below */
    int narr;
} Fixed;

static void fixed_visit(const OrnNode *n, void *ud);

static int fixed_slot(Fixed *f, int k)
{
    for (int i = 0; i < f->n; i++)
        if (f->out[i].array == k) return i;
    return -1;
}

/* A name of a boxable dist array anywhere but as the base of an element access (a whole
 * array or view passed on, iterated): its elements are out of reach of the analysis. */
static void fixed_bad(Fixed *f, const OrnSym *s)
{
    int k = s ? orn_cg_array_index(f->w.l, s) : -1;
    if (k >= 0 && k < f->narr) f->bad[k] = true;
}

/* Any use of dist array s rules out the buffers that update it: their element in a local
 * would hide updates from a read of s that sees them in place. */
static void fixed_target_used(Fixed *f, const OrnSym *s)
{
    for (int j = 0; j < f->narr; j++)
        if (f->w.l->arrays[j].target == s) f->bad[j] = true;
}

/* op: the assignment's operator when written (a buffer element takes only += and -=). */
static void fixed_access(Fixed *f, const OrnNode *e, bool written, OrnOp op)
{
    const OrnNode *base = e->u.index.base;
    const OrnSym *s = base->kind == N_NAME ? base->u.name.sym : NULL;
    if (!s || s->kind != SYM_DIST) {
        orn_ast_each_child(e, fixed_visit, f);
        return;
    }
    fixed_target_used(f, s);
    int k = orn_cg_array_index(f->w.l, s);
    for (const OrnNode *x = e->u.index.subs; x; x = x->next) fixed_visit(x, f);
    bool buf = k > 0 && k < f->narr && f->w.l->arrays[k].role == ORN_ROLE_BUFFERED && written &&
               (op == OP_ADD || op == OP_SUB);
    if (k <= 0 || k >= f->narr || !(buf || orn_cg_boxable(f->w.l, k)) || !e->type ||
        e->type->kind == T_VIEW) {
        if (k > 0 && k < f->narr) f->bad[k] = true;
        return;
    }
    for (const OrnNode *x = e->u.index.subs; x; x = x->next)
        if (x->kind == N_SLICE || !invariant(&f->w, x)) {
            f->bad[k] = true;
            return;
        }
    int i = fixed_slot(f, k);
    if (i < 0) {
        if (f->n == f->max) {
            f->bad[k] = true;
            return;
        }
        i = f->n++;
        f->out[i] = (OrnCgFixed){.array = k, .access = e, .written = false, .buffer = buf};
    } else {
        const OrnNode *a = f->out[i].access->u.index.subs, *b = e->u.index.subs;
        for (; a && b; a = a->next, b = b->next)
            if (!same(a, b)) break;
        if (a || b) f->bad[k] = true;
    }
    f->out[i].written |= written;
}

static void fixed_visit(const OrnNode *n, void *ud)
{
    Fixed *f = ud;
    if (!f->w.ok) return;
    switch (n->kind) {
    case N_CALL:
        if (n->u.call.sym && n->u.call.sym->kind == SYM_FN) {
            f->w.ok = false; /* a clone may address the loop's arrays */
            return;
        }
        break;
    case N_PARFOR:
        f->w.ok = false;
        return;
    case N_NAME:
        if (n->u.name.sym && n->u.name.sym->kind == SYM_DIST) {
            fixed_bad(f, n->u.name.sym);
            fixed_target_used(f, n->u.name.sym);
        }
        return;
    case N_INDEX:
        fixed_access(f, n, false, OP_NONE);
        return;
    case N_ASSIGN:
        if (n->u.assign.target->kind == N_INDEX) {
            fixed_access(f, n->u.assign.target, true, n->u.assign.op);
            fixed_visit(n->u.assign.value, f);
            return;
        }
        break;
    default:
        break;
    }
    orn_ast_each_child(n, fixed_visit, ud);
}

/* A read-only element of plan array k may be loaded once for the run unless a buffer of
 * the loop updates k, whose adds may land in k's storage during the run (the held block at
 * several ranks, the target itself at one rank). */
static bool read_fixed(const OrnCgLoop *l, int k)
{
    if (l->arrays[k].role == ORN_ROLE_BUFFERED) return false;
    for (int j = 0; j < l->narrays; j++)
        if (l->arrays[j].target == l->arrays[k].sym) return false;
    return true;
}

int orn_cg_fixed_elems(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, OrnCgFixed *out,
                       int max)
{
    if (!l || !var || !body) return 0;
    Fixed *f = calloc(1, sizeof *f);
    if (!f) return 0;
    f->w = (Walk){.l = l, .var = var, .value_varies = true, .ok = true};
    f->out = out;
    f->max = max < ORN_CG_MAXFIXED ? max : ORN_CG_MAXFIXED;
    f->narr = l->narrays < ORN_CG_MAXFIXED * 4 ? l->narrays : ORN_CG_MAXFIXED * 4;
    orn_ast_each_child(body, collect_assigned, &f->w);
    if (f->w.ok && !is_assigned(&f->w, var)) orn_ast_each_child(body, fixed_visit, f);
    int n = 0;
    if (f->w.ok)
        for (int i = 0; i < f->n; i++)
            if (!f->bad[out[i].array] && (out[i].written || read_fixed(l, out[i].array)))
                out[n++] = out[i];
    free(f);
    return n;
}

/* ---------------------------------------------------------------- index-set splitting */

/* Free of division (which could trap where the `and` would not have evaluated it). */
static bool no_division(const OrnNode *e)
{
    switch (e->kind) {
    case N_UNARY:
        return no_division(e->u.unary.e);
    case N_BINARY:
        return e->u.binary.op != OP_DIV && no_division(e->u.binary.l) && no_division(e->u.binary.r);
    case N_CALL:
        if (e->u.call.builtin == ORN_BI_DIV || e->u.call.builtin == ORN_BI_MOD) return false;
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (!no_division(a)) return false;
        return true;
    default:
        return true;
    }
}

static bool int_typed(const OrnNode *e)
{
    return e->type && (e->type->kind == T_I64 || e->type->kind == T_I32);
}

static bool split_term(const Walk *w, const OrnNode *t, OrnCgSplit *s)
{
    if (t->kind == N_BINARY && t->u.binary.op == OP_AND)
        return split_term(w, t->u.binary.l, s) && split_term(w, t->u.binary.r, s);
    if (invariant(w, t) && no_division(t)) {
        if (s->nrow == ORN_CG_MAXBOUND) return false;
        s->row[s->nrow++] = t;
        return true;
    }
    if (t->kind != N_BINARY) return false;
    OrnOp op = t->u.binary.op;
    const OrnNode *a = t->u.binary.l, *b = t->u.binary.r;
    if (is_var(w, b)) { /* e OP var: var (mirrored OP) e */
        const OrnNode *x = a;
        a = b;
        b = x;
        op = op == OP_LT   ? OP_GT
             : op == OP_LE ? OP_GE
             : op == OP_GT ? OP_LT
             : op == OP_GE ? OP_LE
                           : op;
    }
    if (!is_var(w, a) || !int_typed(a) || !int_typed(b) || !invariant(w, b) || !no_division(b))
        return false;
    if (op == OP_GT || op == OP_GE) {
        if (s->nlo == ORN_CG_MAXBOUND) return false;
        s->lo[s->nlo].e = b;
        s->lo[s->nlo++].plus1 = op == OP_GT;
        return true;
    }
    if (op == OP_LT || op == OP_LE) {
        if (s->nhi == ORN_CG_MAXBOUND) return false;
        s->hi[s->nhi].e = b;
        s->hi[s->nhi++].plus1 = op == OP_LE;
        return true;
    }
    return false;
}

bool orn_cg_split_if(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, OrnCgSplit *out)
{
    memset(out, 0, sizeof *out);
    const OrnNode *st = body && body->kind == N_BLOCK ? body->u.block.stmts : NULL;
    if (!l || !var || !st || st->next || st->kind != N_IF || st->u.if_.els) return false;
    Walk w = {.l = l, .var = var, .value_varies = true, .ok = true};
    orn_ast_each_child(body, collect_assigned, &w);
    if (!w.ok || is_assigned(&w, var)) return false;
    if (!split_term(&w, st->u.if_.cond, out) || out->nlo + out->nhi == 0) return false;
    out->then = st->u.if_.then;
    return true;
}

/* ---------------------------------------------------------------- guards (version.h) */

static bool guard_cmp(const Walk *w, const OrnNode *a, OrnOp op, const OrnNode *b, OrnCgGuard *out,
                      int *n, int max);

typedef struct Guards {
    Walk w;
    OrnCgGuard *g;
    int ng, maxg;
    const OrnNode **ifs, **keep;
    int nifs, maxifs;
} Guards;

/* min(A, B) or max(A, B) (either order) of integers, B invariant: A, else NULL. */
static const OrnNode *clamp_arg(const Walk *w, const OrnNode *e, const OrnNode **bound)
{
    if (e->kind != N_CALL || !int_typed(e) ||
        (e->u.call.builtin != ORN_BI_MIN && e->u.call.builtin != ORN_BI_MAX))
        return NULL;
    const OrnNode *a = e->u.call.args, *b = a ? a->next : NULL;
    if (!b || b->next) return NULL;
    if (invariant(w, a) && !invariant(w, b)) {
        const OrnNode *x = a;
        a = b;
        b = x;
    }
    /* both invariant (a narrowed for's `max(0, 1)`): one value for the whole run, nothing
     * to guard -- a guard would only drop the fast range where it differs from A */
    if (!invariant(w, b) || !no_division(b) || invariant(w, a)) return NULL;
    *bound = b;
    return a;
}

/* A clamp `min(A, U)` is A where A <= U, `max(A, L)` where A >= L; nested ones
 * (min(max(r + dr, 0), h - 1)) compare the innermost A, the others being A there too. */
static bool guard_clamp(Guards *gs, const OrnNode *e)
{
    const OrnNode *b, *a = clamp_arg(&gs->w, e, &b), *inner = a, *b2;
    if (!a) return false;
    for (int depth = 0; depth < 8; depth++) {
        const OrnNode *x = clamp_arg(&gs->w, subst(&gs->w, inner), &b2);
        if (!x) break;
        inner = x;
    }
    return guard_cmp(&gs->w, inner, e->u.call.builtin == ORN_BI_MIN ? OP_LE : OP_GE, b, gs->g,
                     &gs->ng, gs->maxg) &&
           (gs->keep[gs->nifs] = a, true);
}

static OrnOp mirror(OrnOp op)
{
    return op == OP_LT   ? OP_GT
           : op == OP_LE ? OP_GE
           : op == OP_GT ? OP_LT
           : op == OP_GE ? OP_LE
                         : op;
}

/* The guards of one comparison term (appended to out[*n]); false: not of the form. */
static bool guard_term(const Walk *w, const OrnNode *t, OrnCgGuard *out, int *n, int max)
{
    if (t->kind == N_BINARY && t->u.binary.op == OP_AND)
        return guard_term(w, t->u.binary.l, out, n, max) &&
               guard_term(w, t->u.binary.r, out, n, max);
    if (t->kind != N_BINARY || *n == max) return false;
    OrnOp op = t->u.binary.op;
    if (op != OP_LT && op != OP_LE && op != OP_GT && op != OP_GE) return false;
    return guard_cmp(w, t->u.binary.l, op, t->u.binary.r, out, n, max);
}

/* A OP B as a guard (version.h). */
static bool guard_cmp(const Walk *w, const OrnNode *a, OrnOp op, const OrnNode *b, OrnCgGuard *out,
                      int *n, int max)
{
    if (*n == max || !int_typed(a) || !int_typed(b)) return false;
    if (invariant(w, a) && !invariant(w, b)) { /* B OP A: A (mirrored OP) B */
        const OrnNode *x = a;
        a = b;
        b = x;
        op = mirror(op);
    }
    if (!invariant(w, b) || !no_division(b)) return false;
    Lin L = {0};
    lin(w, a, 1, &L, 0);
    if (L.bad || L.nvar < 0 || L.nvar > 1 || L.c == INT64_MIN) return false;
    if (L.inv && !no_division(L.inv)) return false;
    OrnCgGuard g = {.b = b, .inv = L.inv, .nsign = L.nsign ? L.nsign : 1, .c = L.c, .op = op};
    if (L.nest) {
        g.rlo = L.nest->u.for_.lo;
        g.rhi = L.nest->u.for_.hi;
    }
    g.kind = !L.nvar ? 2 : (op == OP_GT || op == OP_GE) ? 0 : 1;
    out[(*n)++] = g;
    return true;
}

static void guards_visit(const OrnNode *n, void *ud)
{
    Guards *gs = ud;
    Walk *w = &gs->w;
    if (n->kind == N_IF && gs->nifs < gs->maxifs) {
        int ng = gs->ng;
        gs->keep[gs->nifs] = NULL;
        if (guard_term(w, n->u.if_.cond, gs->g, &gs->ng, gs->maxg))
            gs->ifs[gs->nifs++] = n;
        else
            gs->ng = ng;
    }
    if (n->kind == N_CALL && gs->nifs < gs->maxifs) {
        int ng = gs->ng;
        if (guard_clamp(gs, n))
            gs->ifs[gs->nifs++] = n;
        else
            gs->ng = ng;
    }
    if (n->kind == N_FOR) {
        bool push = push_nest(w, n);
        orn_ast_each_child(n, guards_visit, ud);
        if (push) w->nnest--;
        return;
    }
    if (n->kind == N_PARFOR) return;
    orn_ast_each_child(n, guards_visit, ud);
}

int orn_cg_guards(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, bool value_varies,
                  OrnCgGuard *g, int maxg, const OrnNode **ifs, const OrnNode **keep, int *nifs,
                  int maxifs)
{
    Guards gs = {.w = {.l = l, .var = var, .value_varies = value_varies, .ok = true},
                 .g = g,
                 .maxg = maxg,
                 .ifs = ifs,
                 .keep = keep,
                 .maxifs = maxifs};
    *nifs = 0;
    if (!l || !var || !body) return 0;
    orn_ast_each_child(body, collect_assigned, &gs.w);
    if (!gs.w.ok || is_assigned(&gs.w, var)) return 0;
    orn_ast_each_child(body, guards_visit, &gs);
    *nifs = gs.nifs;
    return gs.ng;
}

/* ---------------------------------------------------------------- row pointers */

typedef struct Rows {
    Walk w;
    OrnCgRow *out;
    int n, max;
} Rows;

static bool same_row(const OrnCgRow *a, const OrnCgRow *b)
{
    const OrnNode *x = a->access->u.index.subs, *y = b->access->u.index.subs;
    if (orn_cg_base_sym(a->access) != orn_cg_base_sym(b->access) || a->last != b->last)
        return false;
    for (int d = 0; x && y; x = x->next, y = y->next, d++)
        if (d != a->last && !same(x, y)) return false;
    return !x && !y;
}

static void rows_access(Rows *r, const OrnNode *e)
{
    const OrnSym *s = orn_cg_base_sym(e);
    int nd = 0, k = -1;
    bool buffer = false;
    int64_t roff = 0;
    for (const OrnNode *x = e->u.index.subs; x; x = x->next, nd++)
        if (x->kind == N_SLICE || nd == 4) return;
    if (!nd || r->n == r->max) return;
    int last = nd - 1;
    if (local_array(s)) {
        if (is_assigned(&r->w, s)) return;
    } else if (s && s->kind == SYM_DIST) {
        k = orn_cg_array_index(r->w.l, s);
        buffer = k >= 0 && r->w.l->arrays[k].role == ORN_ROLE_BUFFERED;
        if (!buffer && !orn_cg_boxable(r->w.l, k)) return;
        for (int d = 0; d < nd; d++)
            if (storage_dim(r->w.l, k, d) == nd - 1) last = d;
    } else {
        return;
    }
    int d = 0;
    for (const OrnNode *x = e->u.index.subs; x; x = x->next, d++) {
        if (d == last ? !var_form(&r->w, x, &roff) || roff == INT64_MIN
                      : !invariant(&r->w, x) || !no_division(x))
            return;
    }
    OrnCgRow row = {
        .access = e, .array = k, .last = last, .group = r->n, .buffer = buffer, .off = roff};
    for (int i = 0; i < r->n; i++)
        if (r->out[i].group == i && same_row(&r->out[i], &row)) row.group = i;
    r->out[r->n++] = row;
}

static void rows_visit(const OrnNode *n, void *ud)
{
    Rows *r = ud;
    if (n->kind == N_INDEX && n->type && n->type->kind != T_VIEW) {
        rows_access(r, n);
        return; /* subscripts with reads of their own are not invariant */
    }
    orn_ast_each_child(n, rows_visit, ud);
}

int orn_cg_rows(const OrnCgLoop *l, const OrnSym *var, const OrnNode *body, OrnCgRow *out, int max)
{
    Rows r = {.w = {.l = l, .var = var, .ok = true}, .out = out, .max = max};
    if (!l || !var || !body) return 0;
    orn_ast_each_child(body, collect_assigned, &r.w);
    if (!r.w.ok || is_assigned(&r.w, var)) return 0;
    orn_ast_each_child(body, rows_visit, &r);
    return r.n;
}
