/* layout.c: storage order of dense dist arrays from their accesses (layout.h). */
#include "layout.h"

#include <string.h>

#include "analyze.h"
#include "arena.h"
#include "types.h"
#include "unit.h"

enum { V_SLICE = 4, V_FOR = 2, V_KEY = 1 };

typedef struct Arr {
    int votes[ORN_LAYOUT_MAXDIM];
    bool eligible; /* created by zeros/fill/rand/randn */
    bool fixed;    /* a use that needs the declared order */
} Arr;

typedef struct Walk {
    OrnUnit *u;
    Arr *arr; /* by sym id */
    const OrnSym *forvar;
    const OrnSym *lastkey;
} Walk;

const OrnSym *orn_layout_base(const OrnSym *s)
{
    if (!s || !s->type || s->type->kind != T_BUFFER || !s->decl || s->decl->kind != N_DIST)
        return s;
    const OrnNode *v = s->decl->u.dist.value;
    if (!v || v->kind != N_CALL || !v->u.call.args || v->u.call.args->kind != N_NAME) return s;
    return v->u.call.args->u.name.sym ? v->u.call.args->u.name.sym : s;
}

static Arr *arr_of(Walk *w, const OrnSym *s)
{
    s = orn_layout_base(s);
    if (!s || s->kind != SYM_DIST || s->id < 0 || s->id >= w->u->sema.nsyms) return NULL;
    return &w->arr[s->id];
}

static bool var_form(const OrnNode *e, const OrnSym *v)
{
    if (!v || !e) return false;
    if (e->kind == N_NAME) return e->u.name.sym == v;
    if (e->kind != N_BINARY || (e->u.binary.op != OP_ADD && e->u.binary.op != OP_SUB)) return false;
    const OrnNode *a = e->u.binary.l, *b = e->u.binary.r;
    if (a->kind == N_NAME && a->u.name.sym == v) return b->kind == N_INT || b->kind == N_NAME;
    return e->u.binary.op == OP_ADD && b->kind == N_NAME && b->u.name.sym == v &&
           (a->kind == N_INT || a->kind == N_NAME);
}

static void walk(Walk *w, const OrnNode *n);

static void walk_child(const OrnNode *n, void *ud)
{
    walk(ud, n);
}

static void fix_args(Walk *w, const OrnNode *call)
{
    for (const OrnNode *a = call->u.call.args; a; a = a->next) {
        const OrnNode *x = a->kind == N_KWARG ? a->u.kwarg.value : a;
        while (x && x->kind == N_INDEX) x = x->u.index.base;
        if (x && x->kind == N_NAME) {
            Arr *r = arr_of(w, x->u.name.sym);
            if (r) r->fixed = true;
        }
    }
}

/* A whole array named as a call argument: which built-ins take it in any order. */
static bool whole_ok(int bi)
{
    switch (bi) {
    case ORN_BI_SUM:
    case ORN_BI_NORM:
    case ORN_BI_ROWS:
    case ORN_BI_COLS:
    case ORN_BI_DIM:
    case ORN_BI_NNZ:
    case ORN_BI_LEN:
    case ORN_BI_SAVE:
    case ORN_BI_PRINT: /* stdlib/show.c reads it by declared keys */
    case ORN_BI_EPRINT:
    case ORN_BI_BUFFER:
        return true;
    default:
        return false;
    }
}

static void walk(Walk *w, const OrnNode *n)
{
    if (!n) return;
    switch (n->kind) {
    case N_INDEX: {
        Arr *r = n->u.index.base->kind == N_NAME ? arr_of(w, n->u.index.base->u.name.sym) : NULL;
        if (r) {
            int d = 0;
            for (const OrnNode *x = n->u.index.subs; x && d < ORN_LAYOUT_MAXDIM; x = x->next, d++) {
                if (x->kind == N_SLICE)
                    r->votes[d] += V_SLICE;
                else if (var_form(x, w->forvar))
                    r->votes[d] += V_FOR;
                else if (!w->forvar && var_form(x, w->lastkey))
                    r->votes[d] += V_KEY;
            }
        }
        for (const OrnNode *x = n->u.index.subs; x; x = x->next) walk(w, x);
        return; /* the base is not a whole-array use */
    }
    case N_CALL: {
        int bi = n->u.call.builtin;
        if (bi == ORN_BI_MATMUL_INTO || bi == ORN_BI_ADD_OUTER || bi == ORN_BI_SOLVE_INTO)
            fix_args(w, n);
        if (bi == ORN_BI_DOT) {
            /* whole arrays pair up element by element in storage order */
            bool whole = false;
            for (const OrnNode *a = n->u.call.args; a; a = a->next) whole |= a->kind == N_NAME;
            if (whole) fix_args(w, n);
        }
        for (const OrnNode *a = n->u.call.args; a; a = a->next) {
            const OrnNode *x = a->kind == N_KWARG ? a->u.kwarg.value : a;
            if (x && x->kind == N_NAME && whole_ok(bi)) continue;
            walk(w, x);
        }
        return;
    }
    case N_NAME: {
        /* any other use of a whole array: keep its declared order */
        Arr *r = arr_of(w, n->u.name.sym);
        if (r) r->fixed = true;
        return;
    }
    case N_DIST: {
        const OrnNode *v = n->u.dist.value;
        const OrnSym *s = n->u.dist.names ? n->u.dist.names->u.name.sym : NULL;
        if (v && v->kind == N_CALL && s && s->id >= 0 && s->id < w->u->sema.nsyms) {
            int bi = v->u.call.builtin;
            bool dense_load =
                (bi == ORN_BI_LOAD && s->type && !s->type->sparse) || bi == ORN_BI_LOAD_CSV;
            w->arr[s->id].eligible = (bi == ORN_BI_ZEROS || bi == ORN_BI_FILL ||
                                      bi == ORN_BI_RAND || bi == ORN_BI_RANDN || dense_load) &&
                                     !n->u.dist.names->next;
            for (const OrnNode *a = v->u.call.args; a; a = a->next) {
                const OrnNode *x = a->kind == N_KWARG ? a->u.kwarg.value : a;
                if (bi == ORN_BI_BUFFER && x && x->kind == N_NAME) continue;
                walk(w, x);
            }
        }
        return;
    }
    case N_FOR: {
        walk(w, n->u.for_.lo);
        walk(w, n->u.for_.hi);
        const OrnSym *saved = w->forvar;
        w->forvar = n->u.for_.var->u.name.sym;
        walk(w, n->u.for_.body);
        w->forvar = saved;
        return;
    }
    case N_FN: {
        const OrnSym *sf = w->forvar, *sk = w->lastkey;
        w->forvar = w->lastkey = NULL;
        walk(w, n->u.fn.body);
        w->forvar = sf;
        w->lastkey = sk;
        return;
    }
    case N_PARFOR: {
        const OrnNode *sp = n->u.parfor.space;
        if (sp && sp->kind != N_NAME) walk(w, sp);
        const OrnNode *last = NULL;
        for (const OrnNode *k = n->u.parfor.keys; k; k = k->next) last = k;
        const OrnSym *sf = w->forvar, *sk = w->lastkey;
        w->forvar = NULL;
        /* the innermost key runs contiguously only over a dense space */
        bool dense = sp && sp->type && sp->type->kind == T_ARRAY && !sp->type->sparse;
        w->lastkey = last && dense ? last->u.name.sym : NULL;
        walk(w, n->u.parfor.body);
        w->forvar = sf;
        w->lastkey = sk;
        return;
    }
    default:
        orn_ast_each_child(n, walk_child, w);
        return;
    }
}

void orn_layout_choose(OrnUnit *u, const OrnPlanSet *ps, OrnLayoutSet *out)
{
    memset(out, 0, sizeof *out);
    int ns = u->sema.nsyms;
    if (ns <= 0 || !u->program) return;
    Walk w = {.u = u};
    w.arr = orn_arena_alloc(u->arena, (size_t)ns * sizeof *w.arr);
    memset(w.arr, 0, (size_t)ns * sizeof *w.arr);
    walk(&w, u->program);
    /* iteration spaces of ordered loops and skewed schedules keep their order: a block
     * walks its elements in storage order, which must be key order for @ordered (any
     * strategy: serial and 1d blocks too), and the wavefront and the unimodular transform
     * are expressed in declared keys */
    for (int i = 0; i < ps->nloops; i++) {
        const OrnLoopPlan *pl = &ps->loops[i];
        OrnStrategy st = pl->sched.strategy;
        if (pl->ordered || (st != ORN_STRAT_1D && st != ORN_STRAT_2D && st != ORN_STRAT_SERIAL)) {
            Arr *r = pl->loop ? arr_of(&w, pl->loop->space) : NULL;
            if (r) r->fixed = true;
        }
    }
    out->v = orn_arena_alloc(u->arena, (size_t)ns * sizeof *out->v);
    for (int id = 0; id < ns; id++) {
        const OrnSym *s = u->sema.syms[id];
        const Arr *r = &w.arr[id];
        if (!s || s->kind != SYM_DIST || !r->eligible || r->fixed || !s->type ||
            s->type->kind != T_ARRAY || s->type->sparse || s->type->ndims < 2 ||
            s->type->ndims > ORN_LAYOUT_MAXDIM)
            continue;
        int nd = s->type->ndims, best = nd - 1;
        for (int d = 0; d < nd; d++)
            if (r->votes[d] > r->votes[best]) best = d;
        if (best == nd - 1) continue;
        OrnLayout *l = &out->v[out->n++];
        memset(l, 0, sizeof *l);
        l->sym = s;
        l->ndims = nd;
        int k = 0;
        for (int d = 0; d < nd; d++)
            if (d != best) l->perm[k++] = d;
        l->perm[k] = best;
        memcpy(l->votes, r->votes, sizeof l->votes);
    }
}

const OrnLayout *orn_layout_of(const OrnLayoutSet *ls, const OrnSym *s)
{
    s = orn_layout_base(s);
    for (int i = 0; ls && i < ls->n; i++)
        if (ls->v[i].sym == s) return &ls->v[i];
    return NULL;
}
