/* lower.c: the target-independent part of code generation (lower.h): names, storage,
 * loop plans in the runtime's terms, loop contexts of functions, the prefetch slice and
 * the fusion test of view assignments. Every back end reads these facts; none of this
 * writes text. */
#include "lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "plan_rt.h"
#include "strbuf.h"

/* ---------------------------------------------------------------- walking */

typedef bool (*VisitFn)(const OrnNode *n, void *ud); /* false: do not descend */

static void walk(const OrnNode *n, VisitFn f, void *ud);

typedef struct Walk {
    VisitFn f;
    void *ud;
} Walk;

static void walk_child(const OrnNode *child, void *ud)
{
    Walk *w = ud;
    walk(child, w->f, w->ud);
}

/* Visit n, then (when f says so) its subtree, in source order. */
static void walk(const OrnNode *n, VisitFn f, void *ud)
{
    if (!n || !f(n, ud)) return;
    Walk w = {f, ud};
    orn_ast_each_child(n, walk_child, &w);
}

/* ---------------------------------------------------------------- symbols */

OrnSym *orn_cg_base_sym(const OrnNode *e)
{
    if (!e) return NULL;
    if (e->kind == N_NAME) return e->u.name.sym;
    if (e->kind == N_INDEX && e->u.index.base && e->u.index.base->kind == N_NAME)
        return e->u.index.base->u.name.sym;
    return NULL;
}

OrnSym *orn_cg_buffer_target(const OrnSym *buf)
{
    const OrnNode *d = buf ? buf->decl : NULL;
    if (!d || d->kind != N_DIST || !d->u.dist.value || d->u.dist.value->kind != N_CALL) return NULL;
    const OrnNode *a = d->u.dist.value->u.call.args;
    return a && a->kind == N_NAME ? a->u.name.sym : NULL;
}

bool orn_cg_is_static(const OrnSym *s)
{
    return s && (s->kind == SYM_VAR || s->kind == SYM_LOOPVAR) && !s->fn && !s->parfor;
}

const char *orn_cg_name(const OrnCgProgram *p, const OrnSym *s)
{
    if (!s || s->id < 0 || s->id >= p->u->sema.nsyms) return "orn_bad_symbol";
    return p->names[s->id];
}

int orn_cg_fn_index(const OrnCgProgram *p, const OrnNode *fn)
{
    for (int i = 0; i < p->u->sema.nfns; i++)
        if (p->u->sema.fns[i] == fn) return i;
    return -1;
}

int orn_cg_array_index(const OrnCgLoop *l, const OrnSym *s)
{
    for (int k = 0; k < l->narrays; k++)
        if (l->arrays[k].sym == s) return k;
    return -1;
}

int orn_cg_acc_index(const OrnCgLoop *l, const OrnSym *s)
{
    for (int i = 0; i < l->loop->naccums; i++)
        if (l->loop->accums[i].sym == s) return i;
    return -1;
}

bool orn_cg_view_parts(const OrnNode *e, int *dim, const OrnNode **fixed)
{
    if (!e || e->kind != N_INDEX) return false;
    int i = 0, d = -1;
    const OrnNode *fx = NULL;
    for (const OrnNode *s = e->u.index.subs; s; s = s->next, i++) {
        if (s->kind == N_SLICE)
            d = i;
        else
            fx = s;
    }
    if (d < 0 || i != 2) return false;
    *dim = d;
    *fixed = fx;
    return true;
}

static void make_names(OrnCgProgram *p)
{
    OrnUnit *u = p->u;
    p->names = orn_arena_alloc(u->arena, (size_t)(u->sema.nsyms + 1) * sizeof *p->names);
    OrnBuf b;
    orn_buf_init(&b);
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s) continue;
        const char *pre = "v";
        switch (s->kind) {
        case SYM_PARAM:
            pre = "p";
            break;
        case SYM_DIST:
            pre = s->type && s->type->kind == T_BUFFER ? "b" : "d";
            break;
        case SYM_FN:
            pre = "f";
            break;
        case SYM_EXTERN:
            pre = "x";
            break;
        case SYM_ARG:
            pre = "a";
            break;
        case SYM_KEY:
            pre = "k";
            break;
        case SYM_CONST:
            pre = "c";
            break;
        default:
            break;
        }
        orn_buf_clear(&b);
        orn_buf_printf(&b, "%s%d_%s", pre, s->id, s->name ? s->name->s : "anon");
        p->names[i] = orn_arena_strndup(u->arena, b.data, b.len);
    }
    orn_buf_free(&b);
}

/* ---------------------------------------------------------------- functions */

typedef struct FnScan {
    bool dist, rng;
    const OrnNode **calls;
    int ncalls, cap;
} FnScan;

static bool is_scalar_draw(const OrnNode *n)
{
    if (n->kind != N_CALL) return false;
    int bi = n->u.call.builtin;
    if (bi == ORN_BI_RANDINT) return true;
    return (bi == ORN_BI_RAND || bi == ORN_BI_RANDN) && !n->u.call.args;
}

static bool scan_fn(const OrnNode *n, void *ud)
{
    FnScan *s = ud;
    if (n->kind == N_INDEX) {
        const OrnSym *b = orn_cg_base_sym(n);
        if (b && b->kind == SYM_DIST) s->dist = true;
    }
    if (is_scalar_draw(n)) s->rng = true;
    if (n->kind == N_CALL && n->u.call.sym && n->u.call.sym->kind == SYM_FN &&
        n->u.call.sym->decl) {
        if (s->ncalls == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 8;
            s->calls = orn_xrealloc(s->calls, (size_t)s->cap * sizeof *s->calls);
        }
        s->calls[s->ncalls++] = n->u.call.sym->decl;
    }
    return true;
}

static void fn_contexts(OrnCgProgram *p)
{
    OrnUnit *u = p->u;
    int n = u->sema.nfns;
    p->needs_ctx = orn_arena_alloc(u->arena, (size_t)n + 1);
    p->uses_rng = orn_arena_alloc(u->arena, (size_t)n + 1);
    FnScan *sc = calloc((size_t)n + 1, sizeof *sc);
    for (int i = 0; i < n; i++) {
        const OrnNode *f = u->sema.fns[i];
        if (f && !f->u.fn.is_extern) walk(f->u.fn.body, scan_fn, &sc[i]);
        p->needs_ctx[i] = sc[i].dist || sc[i].rng;
        p->uses_rng[i] = sc[i].rng;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++)
            for (int c = 0; c < sc[i].ncalls; c++) {
                int j = orn_cg_fn_index(p, sc[i].calls[c]);
                if (j < 0) continue;
                if (p->needs_ctx[j] && !p->needs_ctx[i]) p->needs_ctx[i] = 1, changed = true;
                if (p->uses_rng[j] && !p->uses_rng[i]) p->uses_rng[i] = 1, changed = true;
            }
    }
    for (int i = 0; i < n; i++) free(sc[i].calls);
    free(sc);
}

/* ---------------------------------------------------------------- prefetch taint */

static bool tainted_sym(const OrnCgLoop *l, const OrnSym *s)
{
    return s && l->tainted[s->id];
}

bool orn_cg_sym_tainted(const OrnCgLoop *l, const OrnSym *s)
{
    return tainted_sym(l, s);
}

static bool any_tainted(const OrnCgLoop *l, const OrnNode *list)
{
    for (; list; list = list->next)
        if (list->kind != N_SLICE && orn_cg_expr_tainted(l, list)) return true;
    return false;
}

bool orn_cg_expr_tainted(const OrnCgLoop *l, const OrnNode *e)
{
    if (!e) return false;
    switch (e->kind) {
    case N_NAME: {
        const OrnSym *s = e->u.name.sym;
        if (!s) return true;
        if (s->kind == SYM_VAR && orn_cg_acc_index(l, s) >= 0) return true;
        return tainted_sym(l, s);
    }
    case N_UNARY:
        return orn_cg_expr_tainted(l, e->u.unary.e);
    case N_BINARY:
        return orn_cg_expr_tainted(l, e->u.binary.l) || orn_cg_expr_tainted(l, e->u.binary.r);
    case N_KWARG:
        return orn_cg_expr_tainted(l, e->u.kwarg.value);
    case N_CALL: {
        if (e->u.call.sym) return true; /* user fns and externs: side effects, dist reads */
        int bi = e->u.call.builtin;
        if (is_scalar_draw(e) || bi == ORN_BI_WALL_TIME) return true;
        /* extents only: known, except those of the body's own local arrays, which the
         * prefetch pass does not build */
        if (bi == ORN_BI_ROWS || bi == ORN_BI_COLS || bi == ORN_BI_NNZ || bi == ORN_BI_LEN)
            return tainted_sym(l, orn_cg_base_sym(e->u.call.args));
        if (bi == ORN_BI_DIM)
            return tainted_sym(l, orn_cg_base_sym(e->u.call.args)) ||
                   orn_cg_expr_tainted(l, e->u.call.args->next);
        return any_tainted(l, e->u.call.args);
    }
    case N_INDEX: {
        const OrnSym *b = orn_cg_base_sym(e);
        if (!b || tainted_sym(l, b)) return true;
        if (b->kind == SYM_DIST) {
            int k = orn_cg_array_index(l, b);
            if (k < 0 || !l->arrays[k].peek) return true;
        }
        return any_tainted(l, e->u.index.subs);
    }
    default:
        return false;
    }
}

static bool mark(OrnCgLoop *l, const OrnSym *s)
{
    if (!s || l->tainted[s->id]) return false;
    l->tainted[s->id] = 1;
    return true;
}

/* Can the prefetch pass read the values of `for (k, v) in iter`? */
static bool foreach_values_ok(const OrnCgLoop *l, const OrnNode *iter)
{
    const OrnSym *b = orn_cg_base_sym(iter);
    if (!b) return false;
    if (b->kind != SYM_DIST) return true; /* local arrays */
    int k = orn_cg_array_index(l, b), dim;
    const OrnNode *fixed;
    if (k < 0) return false;
    const OrnCgArray *a = &l->arrays[k];
    if (a->peek) return true;
    return b->type->sparse && orn_cg_view_parts(iter, &dim, &fixed) && dim == 1 &&
           (a->role == ORN_ROLE_PARTITIONED || a->role == ORN_ROLE_ROTATED ||
            a->role == ORN_ROLE_REPLICATED);
}

static bool taint_stmts(OrnCgLoop *l, const OrnNode *list, bool under);

static bool taint_stmt(OrnCgLoop *l, const OrnNode *s, bool under)
{
    bool ch = false;
    switch (s->kind) {
    case N_ASSIGN: {
        const OrnNode *tg = s->u.assign.target;
        if (tg->kind != N_NAME) break;
        const OrnSym *v = tg->u.name.sym;
        if (!v || v->parfor != l->loop->node || v->kind != SYM_VAR) break;
        /* the prefetch pass builds no local arrays (c_loop.c, pf): what reads one of the
         * body's is not computable there */
        if (under || (v->type && v->type->kind == T_ARRAY) ||
            orn_cg_expr_tainted(l, s->u.assign.value))
            ch |= mark(l, v);
        break;
    }
    case N_IF: {
        bool t = under || orn_cg_expr_tainted(l, s->u.if_.cond);
        ch |= taint_stmt(l, s->u.if_.then, t);
        if (s->u.if_.els) ch |= taint_stmt(l, s->u.if_.els, t);
        break;
    }
    case N_FOR: {
        bool t =
            under || orn_cg_expr_tainted(l, s->u.for_.lo) || orn_cg_expr_tainted(l, s->u.for_.hi);
        if (t) ch |= mark(l, s->u.for_.var->u.name.sym);
        ch |= taint_stmt(l, s->u.for_.body, t);
        break;
    }
    case N_FOREACH: {
        const OrnNode *it = s->u.foreach.iter;
        bool t = under || (it->kind == N_INDEX ? any_tainted(l, it->u.index.subs) ||
                                                     tainted_sym(l, orn_cg_base_sym(it))
                                               : tainted_sym(l, orn_cg_base_sym(it)));
        if (t) ch |= mark(l, s->u.foreach.key->u.name.sym);
        if (t || !foreach_values_ok(l, it)) ch |= mark(l, s->u.foreach.value->u.name.sym);
        ch |= taint_stmt(l, s->u.foreach.body, t);
        break;
    }
    case N_WHILE:
        ch |= taint_stmt(l, s->u.while_.body, true);
        break;
    case N_BLOCK:
        ch |= taint_stmts(l, s->u.block.stmts, under);
        break;
    default:
        break;
    }
    return ch;
}

static bool taint_stmts(OrnCgLoop *l, const OrnNode *list, bool under)
{
    bool ch = false;
    for (; list; list = list->next) ch |= taint_stmt(l, list, under);
    return ch;
}

/* ---------------------------------------------------------------- loops */

static bool scan_rng(const OrnNode *n, void *ud)
{
    if (is_scalar_draw(n)) *(bool *)ud = true;
    return true;
}

/* Does some access of plan array k read across a partitioned key's block boundary? */
static bool has_halo(const OrnLoopPlan *pl, int k)
{
    const OrnPlanArray *in = &pl->arrays[k].info;
    for (int m = 0; m < in->ndims; m++)
        if (in->key_of_dim[m] >= 0 && orn_plan_dim_has_halo(in, m)) return true;
    return in->space_misaligned;
}

/* Can a read of array a leave the box + halo that the runtime gives a block? Only along
 * dimensions the schedule cuts: where a halo is "anywhere", or any halo of an array without
 * ghost cells (sparse, or updated by a buffer of the loop at its flushes). */
static bool reads_beyond_halo(const OrnPlanSchedule *s, const OrnCgArray *a, bool no_ghosts)
{
    for (int d = 0; d < a->ndim && d < ORN_DEP_MAXDIM; d++) {
        bool cut = false;
        for (int i = 0; i < s->ndims && i < 2; i++) cut |= a->key_dim[d] == s->dims[i];
        if (!cut) continue;
        if (a->halo_lo[d] == ORN_CG_HALO_ANY || a->halo_hi[d] == ORN_CG_HALO_ANY) return true;
        if (no_ghosts && (a->halo_lo[d] > 0 || a->halo_hi[d] > 0)) return true;
    }
    return false;
}

/* The plan so far speaks of logical dimensions and keys; the runtime sees storage order
 * (analyzer/layout.h). Permute every array's key_dim and halo widths into its storage
 * dimensions, and map keys to the runtime's keys: the storage dimensions of the space. */
static void to_storage_order(const OrnCgProgram *p, OrnCgLoop *l)
{
    int rk[ORN_DEP_MAXDIM]; /* logical key -> runtime key */
    for (int r = 0; r < ORN_DEP_MAXDIM; r++) l->kperm[r] = rk[r] = r;
    for (int k = 0; k < l->narrays; k++) {
        OrnCgArray *a = &l->arrays[k];
        for (int d = 0; d < ORN_DEP_MAXDIM; d++) a->perm[d] = d;
        const OrnLayout *lay = orn_layout_of(&p->plans->layout, a->target ? a->target : a->sym);
        if (lay && lay->ndims == a->ndim)
            for (int d = 0; d < a->ndim; d++) a->perm[d] = lay->perm[d];
    }
    if (l->narrays > 0) {
        const OrnCgArray *sp = &l->arrays[0];
        for (int r = 0; r < sp->ndim && r < l->loop->nkeys; r++) {
            l->kperm[r] = sp->perm[r];
            rk[sp->perm[r]] = r;
        }
    }
    for (int i = 0; i < l->npart; i++) l->part_dims[i] = rk[l->part_dims[i]];
    for (int k = 0; k < l->narrays; k++) {
        OrnCgArray *a = &l->arrays[k];
        int kd[ORN_DEP_MAXDIM], lo[ORN_DEP_MAXDIM], hi[ORN_DEP_MAXDIM];
        OrnCgArray w = *a; /* the windows, in declared order */
        memcpy(kd, a->key_dim, sizeof kd);
        memcpy(lo, a->halo_lo, sizeof lo);
        memcpy(hi, a->halo_hi, sizeof hi);
        for (int s = 0; s < a->ndim && s < ORN_DEP_MAXDIM; s++) {
            int d = a->perm[s];
            a->key_dim[s] = kd[d] >= 0 ? rk[kd[d]] : -1;
            a->halo_lo[s] = lo[d];
            a->halo_hi[s] = hi[d];
            a->win_lo[s] = w.win_lo[d];
            a->win_hi[s] = w.win_hi[d];
            a->win_neg[s] = w.win_neg[d];
            a->win_c_lo[s] = w.win_c_lo[d];
            a->win_c_hi[s] = w.win_c_hi[d];
            a->win_sh[s] = w.win_sh[d];
            a->win_shneg[s] = w.win_shneg[d];
        }
    }
}

/* The plan as emitted, in storage order, passes the runtime's plan check as the analyzer's
 * did in declared order (a verifier: the check's rules do not depend on the order). */
static bool verify_plan(OrnCgProgram *p, const OrnCgLoop *l)
{
    const OrnLoopPlan *pl = l->plan;
    OrnRtPlanArray *arrays = orn_xcalloc((size_t)l->narrays + 1, sizeof *arrays);
    OrnRtPlanFacts *facts = orn_xcalloc((size_t)l->narrays + 1, sizeof *facts);
    OrnRtPlan rp;
    memset(&rp, 0, sizeof rp);
    rp.version = ORN_RT_PLAN_VERSION;
    rp.strategy = (OrnRtStrategy)l->strategy;
    rp.inner = (OrnRtStrategy)l->inner;
    rp.ordered = pl->ordered;
    rp.nkeys = l->loop->nkeys;
    rp.npart = l->npart;
    for (int i = 0; i < l->npart; i++) rp.part_dims[i] = l->part_dims[i];
    for (int i = 0; i < ORN_RT_MAXDIM && i < ORN_DEP_MAXDIM; i++)
        for (int j = 0; j < ORN_RT_MAXDIM && j < ORN_DEP_MAXDIM; j++)
            rp.transform[i][j] = l->transform[i][j];
    for (int k = 0; k < l->narrays; k++) {
        const OrnCgArray *a = &l->arrays[k];
        OrnRtPlanArray *r = &arrays[k];
        r->name = a->sym->name->s;
        r->role = (OrnRtRole)a->role;
        r->ndim = a->ndim;
        for (int d = 0; d < ORN_RT_MAXDIM && d < ORN_DEP_MAXDIM; d++) {
            r->key_dim[d] = a->key_dim[d];
            r->halo_lo[d] = a->halo_lo[d];
            r->halo_hi[d] = a->halo_hi[d];
        }
        r->read_only = a->read_only;
        facts[k].sparse = pl->problem.arrays[k].sparse;
        facts[k].rows = pl->problem.arrays[k].rows;
    }
    rp.narrays = l->narrays;
    rp.arrays = arrays;
    char msg[ORN_PLAN_WHY];
    bool ok = orn_rt_plan_check(&rp, facts, msg, (int)sizeof msg) < 0;
    if (!ok)
        orn_ice(&p->u->diags, l->loop->node->span,
                "code generation: the plan of this parallel_for fails the runtime's plan check "
                "in storage order: %s",
                msg);
    free(arrays);
    free(facts);
    return ok;
}

static void lower_loop(OrnCgProgram *p, const OrnLoopPlan *pl, OrnCgLoop *l)
{
    OrnUnit *u = p->u;
    const OrnPlanSchedule *s = &pl->sched;
    memset(l, 0, sizeof *l);
    l->id = pl->loop->index;
    l->loop = pl->loop;
    l->plan = pl;
    l->strategy = s->strategy;
    l->inner = s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy;
    if (s->strategy != ORN_STRAT_SERIAL) {
        l->npart = s->ndims > 2 ? 2 : s->ndims;
        for (int i = 0; i < l->npart; i++) l->part_dims[i] = s->dims[i];
    }
    for (int i = 0; i < ORN_DEP_MAXDIM; i++)
        for (int j = 0; j < ORN_DEP_MAXDIM; j++)
            l->transform[i][j] = s->transformed ? s->T.m[i][j] : i == j;
    l->narrays = pl->narrays;
    l->arrays = orn_arena_alloc(u->arena, (size_t)(pl->narrays + 1) * sizeof *l->arrays);
    for (int k = 0; k < pl->narrays; k++) {
        const OrnArrayPlan *ap = &pl->arrays[k];
        OrnCgArray *a = &l->arrays[k];
        memset(a, 0, sizeof *a);
        a->sym = ap->sym;
        a->target = ap->target ? ap->target : NULL;
        if (a->sym && a->sym->type && a->sym->type->kind == T_BUFFER && !a->target)
            a->target = orn_cg_buffer_target(a->sym);
        a->role = ap->role;
        const OrnType *t = a->target ? a->target->type : a->sym->type;
        a->ndim = t && t->kind == T_ARRAY ? t->ndims : ap->info.ndims;
        /* key_dim, halo widths and read_only as the analyzer checked them (plan_rt.h) */
        OrnRtPlanArray ra;
        orn_plan_rt_array(&pl->problem, k, ap->role, &ra);
        for (int d = 0; d < ORN_DEP_MAXDIM; d++) {
            a->key_dim[d] = d < ORN_RT_MAXDIM ? ra.key_dim[d] : -1;
            a->halo_lo[d] = d < ORN_RT_MAXDIM ? ra.halo_lo[d] : 0;
            a->halo_hi[d] = d < ORN_RT_MAXDIM ? ra.halo_hi[d] : 0;
        }
        a->read_only = ra.read_only != 0;
        const OrnPlanArray *in = &pl->problem.arrays[k];
        for (int d = 0; d < in->ndims && d < ORN_DEP_MAXDIM; d++)
            if (in->win_lo[d] && a->key_dim[d] >= 0 && a->halo_lo[d] != ORN_CG_HALO_ANY) {
                a->win_lo[d] = in->win_lo[d];
                a->win_hi[d] = in->win_hi[d];
                a->win_neg[d] = in->win_neg[d];
                a->win_c_lo[d] = in->halo_lo[d];
                a->win_c_hi[d] = in->halo_hi[d];
                a->win_sh[d] = in->win_sh[d];
                a->win_shneg[d] = in->win_shneg[d];
            }
        bool sparse = t && t->sparse, buffered = false;
        for (int j = 0; j < pl->narrays; j++) {
            const OrnArrayPlan *bj = &pl->arrays[j];
            if (bj->role != ORN_ROLE_BUFFERED) continue;
            buffered |= (bj->target ? bj->target : orn_cg_buffer_target(bj->sym)) == ap->sym;
        }
        /* In 1d and 2d loops the runtime copies the halo of a read-only partitioned array
         * into each block's view before the loop (ghost cells; not for sparse arrays, nor
         * for arrays a buffer of the loop updates), and fetches any other element of it
         * from its owner. Reads beyond the ghost cells are announced, so that they arrive
         * in bulk instead of one by one. Ordered schedules (2d_ordered, unimodular) read
         * other blocks through the cache, after the steps that wrote them: those reads are
         * announced. */
        bool ghosts = a->read_only && ap->role == ORN_ROLE_PARTITIONED &&
                      (s->strategy == ORN_STRAT_1D || s->strategy == ORN_STRAT_2D);
        a->announce =
            ap->role == ORN_ROLE_PREFETCHED ||
            (ap->role == ORN_ROLE_REMOTE && ap->info.read && s->strategy != ORN_STRAT_SERIAL) ||
            (ghosts ? ap->info.read && reads_beyond_halo(s, a, sparse || buffered)
                    : pl->ordered && s->strategy != ORN_STRAT_SERIAL &&
                          ap->role == ORN_ROLE_PARTITIONED && ap->info.read && has_halo(pl, k));
        a->peek = !sparse && !a->announce &&
                  (ap->role == ORN_ROLE_PARTITIONED || ap->role == ORN_ROLE_ROTATED ||
                   ap->role == ORN_ROLE_REPLICATED);
        if (a->announce) l->prefetch = true;
    }
    to_storage_order(p, l);
    bool rng = false;
    walk(l->loop->node->u.parfor.body, scan_rng, &rng);
    for (int i = 0; i < l->loop->ncallees; i++) {
        int j = orn_cg_fn_index(p, l->loop->callees[i]);
        if (j >= 0 && p->uses_rng[j]) rng = true;
    }
    l->uses_rng = rng;
    l->tainted = orn_arena_alloc(u->arena, (size_t)u->sema.nsyms + 1);
    if (l->prefetch)
        while (taint_stmts(l, l->loop->node->u.parfor.body->u.block.stmts, false)) {
        }
}

/* ---------------------------------------------------------------- views */

static bool crosses(const OrnNode *e, const OrnSym *arr, int dim)
{
    if (!e || !e->type || e->type->kind != T_VIEW) return false;
    switch (e->kind) {
    case N_INDEX: {
        int d;
        const OrnNode *fx;
        return orn_cg_base_sym(e) == arr && orn_cg_view_parts(e, &d, &fx) && d != dim;
    }
    case N_UNARY:
        return crosses(e->u.unary.e, arr, dim);
    case N_BINARY:
        return crosses(e->u.binary.l, arr, dim) || crosses(e->u.binary.r, arr, dim);
    default:
        return false;
    }
}

bool orn_cg_view_fusable(const OrnNode *target, const OrnNode *rhs)
{
    int dim;
    const OrnNode *fx;
    if (!orn_cg_view_parts(target, &dim, &fx)) return true;
    return !crosses(rhs, orn_cg_base_sym(target), dim);
}

/* ---------------------------------------------------------------- entry */

bool orn_cg_lower(OrnUnit *u, const OrnPlanSet *plans, const OrnCgOptions *opt, OrnCgProgram *out)
{
    memset(out, 0, sizeof *out);
    out->u = u;
    out->plans = plans;
    out->file = opt && opt->file ? opt->file : u->src.path;
    out->gpu = opt && opt->gpu;
    out->gpu_rowcache = opt && opt->gpu && opt->gpu_rowcache;
    out->module = opt && opt->module;
    out->vec_bytes = opt && opt->vec_bytes >= 16 && opt->vec_bytes <= 64 ? opt->vec_bytes : 32;
    out->from = opt ? opt->from : 0;
    make_names(out);
    fn_contexts(out);
    out->nloops = u->sema.nloops;
    out->loops = orn_arena_alloc(u->arena, (size_t)(out->nloops + 1) * sizeof *out->loops);
    for (int i = 0; i < plans->nloops; i++) {
        const OrnLoopPlan *pl = &plans->loops[i];
        int id = pl->loop ? pl->loop->index : -1;
        if (id < 0 || id >= out->nloops) return false;
        lower_loop(out, pl, &out->loops[id]);
        if (!verify_plan(out, &out->loops[id])) return false;
    }
    for (int i = 0; i < out->nloops; i++)
        if (!out->loops[i].loop) return false;
    return true;
}

void orn_cg_lower_free(OrnCgProgram *p)
{
    (void)p; /* everything lives in the unit's arena */
}
