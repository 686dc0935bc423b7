/* access.c: collect and classify the dist accesses of a parallel_for (see access.h). */
#include "access.h"

#include "extent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_INLINE = 8,  /* call depth analysed with bound parameters */
    MAX_FOLLOW = 16, /* definitions followed through variables */
};

/* The widest window of offsets kept as a range (a halo); wider ones are unknown. */
#define ORN_WINDOW_MAX (INT64_C(1) << 20)

/* One inlined call: the callee's parameters bound to the classified arguments. */
typedef struct Frame {
    const OrnNode *fn; /* N_FN */
    OrnSym *params[16];
    OrnSub args[16];
    int nparams;
    bool generic; /* parameters unknown (recursion or depth limit) */
} Frame;

typedef struct Ctx {
    OrnUnit *u;
    const OrnLoop *loop;
    /* per symbol id: assignments anywhere in the program, and the value of the only one */
    int *nassign;
    const OrnNode **def;
    /* output */
    OrnAccess *v;
    int n, cap;
    OrnSym **arrays;
    int narrays, caparrays;
    /* where we are */
    int cond;        /* open if/for/while around the current statement */
    const char *why; /* the first reason a subscript being classified is unknown */
    Frame frames[MAX_INLINE + 2];
    int nframes;
    OrnSpan call_site;
    const OrnNode *row_iter; /* the iterator of the for (k, v) in ... being walked */
    OrnClamp *clamps;        /* proven clamps (access.h) */
    int nclamps, capclamps;
} Ctx;

const char *orn_access_kind(const OrnAccess *a)
{
    if (a->buffer_update) return "update (buffer)";
    if (a->ref.read && a->ref.write) return "read and write";
    return a->ref.write ? "write" : "read";
}

/* ---- definitions of variables ---- */

static void count_assigns(Ctx *c, const OrnNode *n);

static void count_list(Ctx *c, const OrnNode *list)
{
    for (const OrnNode *s = list; s; s = s->next) count_assigns(c, s);
}

/* Every N_ASSIGN whose target is a name, anywhere (statements only hold assignments). */
static void count_assigns(Ctx *c, const OrnNode *n)
{
    if (!n) return;
    switch (n->kind) {
    case N_BLOCK:
        count_list(c, n->u.block.stmts);
        break;
    case N_ASSIGN: {
        const OrnNode *t = n->u.assign.target;
        if (t && t->kind == N_NAME && t->u.name.sym) {
            int id = t->u.name.sym->id;
            if (id >= 0 && id < c->u->sema.nsyms) {
                c->nassign[id]++;
                c->def[id] = n->u.assign.op == OP_NONE ? n->u.assign.value : NULL;
            }
        }
        break;
    }
    case N_IF:
        count_assigns(c, n->u.if_.then);
        count_assigns(c, n->u.if_.els);
        break;
    case N_FOR:
        count_assigns(c, n->u.for_.body);
        break;
    case N_FOREACH:
        count_assigns(c, n->u.foreach.body);
        break;
    case N_WHILE:
        count_assigns(c, n->u.while_.body);
        break;
    case N_PARFOR:
        count_assigns(c, n->u.parfor.body);
        break;
    case N_FN:
        count_assigns(c, n->u.fn.body);
        break;
    default:
        break;
    }
}

/* ---- subscript classification ---- */

static OrnSub unknown(bool varies)
{
    OrnSub s;
    memset(&s, 0, sizeof s);
    s.kind = ORN_SUB_UNKNOWN;
    s.varies = varies;
    return s;
}

static OrnSub constant(int64_t v)
{
    OrnSub s;
    memset(&s, 0, sizeof s);
    s.kind = ORN_SUB_CONST;
    s.c = v;
    return s;
}

static OrnSub affine(int key, int64_t a, int64_t c)
{
    if (a == 0) return constant(c);
    OrnSub s;
    memset(&s, 0, sizeof s);
    s.kind = ORN_SUB_AFFINE;
    s.key = key;
    s.a = a;
    s.c = c;
    s.varies = true;
    return s;
}

/* c any of [lo, hi] (a window's offsets, lo < hi). */
static OrnSub constant_range(int64_t lo, int64_t hi)
{
    OrnSub s = constant(lo);
    s.ranged = true;
    s.c2 = hi;
    return s;
}

static int64_t hi_of(OrnSub s)
{
    return s.ranged ? s.c2 : s.c;
}

/* Does the sub vary between iterations? */
static bool sub_varies(OrnSub s)
{
    return s.kind == ORN_SUB_AFFINE || (s.kind == ORN_SUB_UNKNOWN && s.varies);
}

static bool in_loop(const Ctx *c, const OrnSym *sym)
{
    return sym->parfor == c->loop->node;
}

static Frame *frame(Ctx *c)
{
    return c->nframes ? &c->frames[c->nframes - 1] : NULL;
}

static OrnSub classify(Ctx *c, const OrnNode *e, int depth);
static bool invariant(Ctx *c, const OrnNode *e, int depth);

/* Unknown, and why (the first reason found while classifying one subscript wins). */
static OrnSub unknown_why(Ctx *c, bool varies, const char *fmt, const char *name)
{
    if (!c->why) {
        char buf[160];
        snprintf(buf, sizeof buf, fmt, name);
        c->why = orn_arena_strndup(c->u->arena, buf, strlen(buf));
    }
    return unknown(varies);
}

/* An integer expression the code before a parallel_for can evaluate with the value it has
 * in every iteration: literals, consts, params and top-level variables (which no loop body
 * assigns), with + - * and negation. */
static bool run_site_expr(const Ctx *c, const OrnNode *e, int depth)
{
    if (!e || depth > MAX_FOLLOW || !e->type || (e->type->kind != T_I64 && e->type->kind != T_I32))
        return false;
    switch (e->kind) {
    case N_INT:
        return true;
    case N_NAME: {
        const OrnSym *s = e->u.name.sym;
        if (!s) return false;
        if (s->kind == SYM_PARAM || s->kind == SYM_CONST) return true;
        return s->kind == SYM_VAR && !s->fn && !s->parfor && !in_loop(c, s);
    }
    case N_UNARY:
        return e->u.unary.op == OP_NEG && run_site_expr(c, e->u.unary.e, depth + 1);
    case N_BINARY:
        return (e->u.binary.op == OP_ADD || e->u.binary.op == OP_SUB || e->u.binary.op == OP_MUL) &&
               run_site_expr(c, e->u.binary.l, depth + 1) &&
               run_site_expr(c, e->u.binary.r, depth + 1);
    default:
        return false;
    }
}

/* ---- clamped subscripts: min(max(k + c, 0), n - 1) ---- */

static bool int_type(const OrnType *t)
{
    return t && (t->kind == T_I32 || t->kind == T_I64);
}

/* What an extent expression stands for: an expression over literals, consts and params, or
 * dimension `dim` of a dist array whose constructor gives no expression (read from data). */
typedef struct Extent {
    const OrnNode *e;
    const OrnSym *arr;
    int dim;
} Extent;

static Extent canon(const Ctx *c, const OrnNode *e, int depth);

static Extent dim_extent(const Ctx *c, const OrnSym *a, int d, int depth)
{
    const OrnNode *x = orn_extent_arg(a, d);
    return x ? canon(c, x, depth + 1) : (Extent){NULL, a, d};
}

/* Through top-level variables assigned once and rows/cols/dim of dist arrays. */
static Extent canon(const Ctx *c, const OrnNode *e, int depth)
{
    Extent x = {e, NULL, 0};
    if (!e || depth > MAX_FOLLOW) return x;
    if (e->kind == N_NAME && e->u.name.sym) {
        const OrnSym *s = e->u.name.sym;
        if (s->kind == SYM_VAR && s->global && !s->fn && !in_loop(c, s) && s->id >= 0 &&
            s->id < c->u->sema.nsyms && c->nassign[s->id] == 1 && c->def[s->id])
            return canon(c, c->def[s->id], depth + 1);
        return x;
    }
    if (e->kind != N_CALL) return x;
    int bi = e->u.call.builtin, d = bi == ORN_BI_ROWS ? 0 : bi == ORN_BI_COLS ? 1 : -1;
    const OrnNode *a = e->u.call.args;
    OrnConstVal dv;
    if (bi == ORN_BI_DIM && a && a->next && orn_sema_eval_const(a->next, &dv) &&
        (dv.kind == T_I64 || dv.kind == T_I32))
        d = (int)dv.i;
    if (d < 0 || !a || a->kind != N_NAME || !a->u.name.sym || a->u.name.sym->kind != SYM_DIST)
        return x;
    return dim_extent(c, a->u.name.sym, d, depth);
}

static bool fold_int(const OrnNode *e, int64_t *v)
{
    OrnConstVal cv;
    if (!e || !int_type(e->type) || !orn_sema_eval_const(e, &cv) ||
        (cv.kind != T_I64 && cv.kind != T_I32))
        return false;
    *v = cv.i;
    return true;
}

/* x and y are the same value: the same array dimension, equal constants, the same const or
 * param, or the same operation on such. */
static bool same_extent(const Ctx *c, Extent x, Extent y, int depth)
{
    if (depth > MAX_FOLLOW) return false;
    if (x.arr || y.arr) return x.arr == y.arr && x.dim == y.dim;
    int64_t a, b;
    if (fold_int(x.e, &a) && fold_int(y.e, &b)) return a == b;
    if (!x.e || !y.e || x.e->kind != y.e->kind) return false;
    if (x.e->kind == N_NAME) {
        const OrnSym *s = x.e->u.name.sym;
        return s && s == y.e->u.name.sym && (s->kind == SYM_PARAM || s->kind == SYM_CONST);
    }
    if (x.e->kind == N_BINARY)
        return x.e->u.binary.op == y.e->u.binary.op &&
               same_extent(c, canon(c, x.e->u.binary.l, 0), canon(c, y.e->u.binary.l, 0),
                           depth + 1) &&
               same_extent(c, canon(c, x.e->u.binary.r, 0), canon(c, y.e->u.binary.r, 0),
                           depth + 1);
    return false;
}

/* Is `bound` at least the last value of key k (its dimension's extent minus one)? */
static bool covers_last_key(const Ctx *c, const OrnNode *bound, int k)
{
    const OrnSym *sp = c->loop->space;
    if (!sp || k < 0 || k >= c->loop->nkeys) return false;
    Extent n = dim_extent(c, sp, k, 0), u = canon(c, bound, 0);
    int64_t nv, uv, m;
    if (!n.arr && fold_int(n.e, &nv) && fold_int(u.e, &uv)) return uv >= nv - 1;
    if (same_extent(c, u, n, 0)) return true; /* min(x, n): an index of n is out of range */
    if (u.e && u.e->kind == N_BINARY && u.e->u.binary.op == OP_SUB &&
        fold_int(u.e->u.binary.r, &m) && m <= 1)
        return same_extent(c, canon(c, u.e->u.binary.l, 0), n, 0);
    return false;
}

static void note_clamp(Ctx *c, const OrnNode *call, const OrnNode *inner, int key)
{
    for (int i = 0; i < c->nclamps; i++)
        if (c->clamps[i].call == call) return;
    if (c->nclamps == c->capclamps) {
        int cap = c->capclamps ? 2 * c->capclamps : 8;
        OrnClamp *v = orn_arena_alloc(c->u->arena, (size_t)cap * sizeof *v);
        if (c->nclamps) memcpy(v, c->clamps, (size_t)c->nclamps * sizeof *v);
        c->clamps = v;
        c->capclamps = cap;
    }
    c->clamps[c->nclamps++] = (OrnClamp){call, inner, key};
}

/* min(w, U) with U >= the last key, max(w, L) with L <= 0 (either order), w = k + [lo, hi]:
 * the result lies between k and w, so within k + [min(lo, 0), max(hi, 0)]: a window that
 * halos serve (`min(max(r + dr, 0), h - 1)`, clamped to the edge). Else unknown. */
static OrnSub clamp(Ctx *c, const OrnNode *e, int depth)
{
    int bi = e->u.call.builtin;
    const OrnNode *a = e->u.call.args, *b = a ? a->next : NULL;
    if (!a || !b || b->next) return unknown(true);
    for (int side = 0; side < 2; side++) {
        const OrnNode *wn = side ? b : a, *bound = side ? a : b;
        int64_t l;
        if (bi == ORN_BI_MAX && !(fold_int(bound, &l) && l <= 0)) continue;
        const char *saved = c->why;
        OrnSub w = classify(c, wn, depth + 1);
        if (w.kind != ORN_SUB_AFFINE || w.a != 1 || w.wlo || w.wsh) {
            c->why = saved;
            continue;
        }
        if (bi == ORN_BI_MIN && !covers_last_key(c, bound, w.key)) continue;
        int64_t lo = w.c < 0 ? w.c : 0, hi = hi_of(w) > 0 ? hi_of(w) : 0;
        if (!c->nframes) note_clamp(c, e, wn, w.key);
        OrnSub s = affine(w.key, 1, lo);
        s.ranged = hi != lo;
        s.c2 = hi;
        return s;
    }
    return unknown(true);
}

/* A bound the range of a for never crosses: lo (hi) itself, or where it is max(a, b)
 * (min(a, b), as lang/sema_rewrite.c narrows a range to a test's), whichever of a and b
 * folds or is known at the run site: a range as wide or wider, the same windows. */
static const OrnNode *loose(const Ctx *c, const OrnNode *e, int bi)
{
    OrnConstVal cv;
    for (int depth = 0; depth < MAX_FOLLOW && e && e->kind == N_CALL && e->u.call.builtin == bi &&
                        !orn_sema_eval_const(e, &cv);
         depth++) {
        const OrnNode *a = e->u.call.args, *b = a ? a->next : NULL;
        if (!b || b->next) break;
        bool ka = orn_sema_eval_const(a, &cv) || run_site_expr(c, a, 0) ||
                  (a->kind == N_CALL && a->u.call.builtin == bi);
        bool kb = orn_sema_eval_const(b, &cv) || run_site_expr(c, b, 0);
        if (!ka && !kb) break;
        e = ka ? a : b;
    }
    return e;
}

/* A variable: follow a single '=' definition; else what its declaration says. */
static OrnSub classify_name(Ctx *c, const OrnSym *sym, int depth)
{
    switch (sym->kind) {
    case SYM_KEY:
        if (in_loop(c, sym) && sym->key_index >= 0 && sym->key_index < c->loop->nkeys)
            return affine(sym->key_index, 1, 0);
        return unknown(true);
    case SYM_ARG: {
        Frame *f = frame(c);
        if (f && !f->generic)
            for (int i = 0; i < f->nparams; i++)
                if (f->params[i] == sym) return f->args[i];
        return unknown_why(c, true, "'%s' is a parameter of a recursive call", sym->name->s);
    }
    case SYM_VAR: {
        int id = sym->id;
        if (id >= 0 && id < c->u->sema.nsyms && c->nassign[id] == 1 && c->def[id])
            return classify(c, c->def[id], depth + 1);
        /* assigned again: outer variables cannot change inside the loop (only
         * accumulators, which cannot be read), so they are invariant */
        bool outer = !in_loop(c, sym) && !sym->fn;
        if (outer)
            return unknown_why(c, false,
                               "'%s' is a variable: the same element in every "
                               "iteration, but not known at compile time",
                               sym->name->s);
        return unknown_why(c, true,
                           "'%s' is assigned more than once, so its value is not "
                           "followed",
                           sym->name->s);
    }
    case SYM_PARAM:
        return unknown_why(c, false, "'%s' is a run-time param, not a compile-time const",
                           sym->name->s);
    case SYM_CONST:
        return unknown(false); /* a non-integer const */
    case SYM_VALUE:
        return unknown_why(c, true, "'%s' is the loop's value, known only at run time",
                           sym->name->s);
    case SYM_LOOPVAR: {
        const OrnNode *d = sym->decl;
        bool outer = !in_loop(c, sym) && !sym->fn;
        if (outer)
            return unknown_why(c, false, "'%s' is a for-variable of an enclosing loop",
                               sym->name->s);
        /* for t in lo..hi with invariant bounds ranges over the same values in every
         * iteration */
        if (d && d->kind == N_FOR && d->u.for_.var && d->u.for_.var->u.name.sym == sym) {
            const OrnNode *flo = loose(c, d->u.for_.lo, ORN_BI_MAX),
                          *fhi = loose(c, d->u.for_.hi, ORN_BI_MIN);
            /* constant bounds: a window of offsets (`i + k`, k in 0..9: i + [0, 8]) */
            OrnConstVal lo, hi;
            if (orn_sema_eval_const(flo, &lo) && orn_sema_eval_const(fhi, &hi) &&
                (lo.kind == T_I64 || lo.kind == T_I32) && (hi.kind == T_I64 || hi.kind == T_I32) &&
                lo.i < hi.i && hi.i - lo.i <= ORN_WINDOW_MAX)
                return hi.i - lo.i == 1 ? constant(lo.i) : constant_range(lo.i, hi.i - 1);
            if (run_site_expr(c, flo, 0) && run_site_expr(c, fhi, 0)) {
                OrnSub w = constant(0);
                w.ranged = true;
                w.wlo = flo;
                w.whi = fhi;
                return w;
            }
            bool inv = invariant(c, flo, depth + 1) && invariant(c, fhi, depth + 1);
            return unknown_why(c, !inv,
                               inv ? "'%s' runs over a range, the same in every iteration"
                                   : "'%s' runs over a range that depends on the iteration",
                               sym->name->s);
        }
        return unknown_why(c, true, "'%s' runs over the entries of a view (data)", sym->name->s);
    }
    default:
        return unknown_why(c, true, "'%s' is not a loop key", sym->name->s);
    }
}

/* A run-time window plus or minus a key or a constant (access.h): `i + k`, `i - k + 1`; a
 * window plus or minus a shift known at run time (`i + kw - 1 - k`): at most one of each. */
static OrnSub combine_window(OrnOp op, OrnSub l, OrnSub r)
{
    bool varies = sub_varies(l) || sub_varies(r);
    if (op != OP_ADD && op != OP_SUB) return unknown(varies);
    if (l.kind == ORN_SUB_AFFINE && r.kind == ORN_SUB_AFFINE) return unknown(true);
    /* a constant-range window (no wlo) does not combine with a run-time one */
    if ((l.ranged && !l.wlo) || (r.ranged && !r.wlo)) return unknown(varies);
    bool lw = l.wlo && l.whi, rw = r.wlo && r.whi, ls = l.wlo && !l.whi, rs = r.wlo && !r.whi;
    if (lw + rw > 1 || ls + rs + (l.wsh != NULL) + (r.wsh != NULL) > 1) return unknown(varies);
    int64_t la = l.kind == ORN_SUB_AFFINE ? l.a : 0, ra = r.kind == ORN_SUB_AFFINE ? r.a : 0, a, cc;
    bool ovf = op == OP_SUB
                   ? __builtin_sub_overflow(la, ra, &a) || __builtin_sub_overflow(l.c, r.c, &cc)
                   : __builtin_add_overflow(la, ra, &a) || __builtin_add_overflow(l.c, r.c, &cc);
    if (ovf) return unknown(varies);
    OrnSub s = a ? affine(l.kind == ORN_SUB_AFFINE ? l.key : r.key, a, cc) : constant(cc);
    s.ranged = true;
    s.c2 = cc;
    bool rn = op == OP_SUB; /* r's terms are negated: c - k reverses a window */
    const OrnSub *w = lw ? &l : rw ? &r : NULL, *sh = ls ? &l : rs ? &r : NULL;
    if (w) {
        s.wlo = w->wlo;
        s.whi = w->whi;
        s.wneg = w->wneg != (w == &r && rn);
        if (w->wsh) {
            s.wsh = w->wsh;
            s.wshneg = w->wshneg != (w == &r && rn);
        }
    }
    if (sh && w) {
        s.wsh = sh->wlo;
        s.wshneg = sh->wneg != (sh == &r && rn);
    } else if (sh) {
        s.wlo = sh->wlo;
        s.wneg = sh->wneg != (sh == &r && rn);
    }
    return s;
}

/* Windows in a sum or a product: the hull of the offsets (access.h). */
static OrnSub combine_ranged(OrnOp op, OrnSub l, OrnSub r)
{
    bool varies = sub_varies(l) || sub_varies(r);
    int64_t lo, hi;
    if (l.wlo || r.wlo) return combine_window(op, l, r);
    if (op == OP_ADD || op == OP_SUB) {
        if (l.kind == ORN_SUB_AFFINE && r.kind == ORN_SUB_AFFINE) return unknown(true);
        int64_t la = l.kind == ORN_SUB_AFFINE ? l.a : 0, ra = r.kind == ORN_SUB_AFFINE ? r.a : 0, a;
        int key = l.kind == ORN_SUB_AFFINE ? l.key : r.key;
        bool ovf = op == OP_ADD ? __builtin_add_overflow(la, ra, &a) ||
                                      __builtin_add_overflow(l.c, r.c, &lo) ||
                                      __builtin_add_overflow(hi_of(l), hi_of(r), &hi)
                                : __builtin_sub_overflow(la, ra, &a) ||
                                      __builtin_sub_overflow(l.c, hi_of(r), &lo) ||
                                      __builtin_sub_overflow(hi_of(l), r.c, &hi);
        if (ovf || hi - lo > ORN_WINDOW_MAX) return unknown(varies);
        OrnSub s = a ? affine(key, a, lo) : constant(lo);
        s.ranged = hi != lo;
        s.c2 = hi;
        return s;
    }
    if (op == OP_MUL) {
        /* a window times an integer constant (not two windows, nor a key times a window) */
        OrnSub w = l.ranged ? l : r, f = l.ranged ? r : l;
        if (f.kind != ORN_SUB_CONST || f.ranged) return unknown(varies);
        int64_t a = 0, x, y;
        if (__builtin_mul_overflow(w.c, f.c, &x) || __builtin_mul_overflow(w.c2, f.c, &y) ||
            (w.kind == ORN_SUB_AFFINE && __builtin_mul_overflow(w.a, f.c, &a)))
            return unknown(varies);
        lo = x < y ? x : y, hi = x < y ? y : x;
        if (f.c == 0) return constant(0);
        if (hi - lo > ORN_WINDOW_MAX) return unknown(varies);
        OrnSub s = w.kind == ORN_SUB_AFFINE ? affine(w.key, a, lo) : constant(lo);
        s.ranged = hi != lo;
        s.c2 = hi;
        return s;
    }
    return unknown(varies);
}

static OrnSub combine(OrnOp op, OrnSub l, OrnSub r)
{
    bool ovf = false;
    int64_t a = 0, cc = 0;
    if (l.kind == ORN_SUB_UNKNOWN || r.kind == ORN_SUB_UNKNOWN || l.kind == ORN_SUB_ALL ||
        r.kind == ORN_SUB_ALL)
        return unknown(sub_varies(l) || sub_varies(r));
    if (l.ranged || r.ranged) return combine_ranged(op, l, r);
    if (op == OP_ADD || op == OP_SUB) {
        int64_t ra = r.kind == ORN_SUB_AFFINE ? r.a : 0;
        int64_t la = l.kind == ORN_SUB_AFFINE ? l.a : 0;
        if (l.kind == ORN_SUB_AFFINE && r.kind == ORN_SUB_AFFINE && l.key != r.key)
            return unknown(true); /* two keys: not a*k + c (the caller says why) */
        ovf |=
            op == OP_ADD ? __builtin_add_overflow(la, ra, &a) : __builtin_sub_overflow(la, ra, &a);
        ovf |= op == OP_ADD ? __builtin_add_overflow(l.c, r.c, &cc)
                            : __builtin_sub_overflow(l.c, r.c, &cc);
        if (ovf) return unknown(true);
        int key = l.kind == ORN_SUB_AFFINE ? l.key : r.key;
        return (l.kind == ORN_SUB_AFFINE || r.kind == ORN_SUB_AFFINE) ? affine(key, a, cc)
                                                                      : constant(cc);
    }
    if (op == OP_MUL) {
        if (l.kind == ORN_SUB_AFFINE && r.kind == ORN_SUB_AFFINE) return unknown(true);
        OrnSub k = l.kind == ORN_SUB_AFFINE ? l : r, f = l.kind == ORN_SUB_AFFINE ? r : l;
        if (k.kind == ORN_SUB_CONST) {
            if (__builtin_mul_overflow(k.c, f.c, &cc)) return unknown(false);
            return constant(cc);
        }
        ovf |= __builtin_mul_overflow(k.a, f.c, &a);
        ovf |= __builtin_mul_overflow(k.c, f.c, &cc);
        if (ovf) return unknown(true);
        return affine(k.key, a, cc);
    }
    return unknown(sub_varies(l) || sub_varies(r));
}

static OrnSub classify(Ctx *c, const OrnNode *e, int depth)
{
    if (!e || depth > MAX_FOLLOW) return unknown(true);
    if (e->kind == N_SLICE) {
        OrnSub s = unknown(false);
        s.kind = ORN_SUB_ALL;
        return s;
    }
    OrnConstVal cv;
    if (int_type(e->type) && orn_sema_eval_const(e, &cv) && (cv.kind == T_I64 || cv.kind == T_I32))
        return constant(cv.i);
    switch (e->kind) {
    case N_INT:
        return constant(e->u.ilit.v);
    case N_NAME: {
        if (!e->u.name.sym) return unknown(true);
        OrnSub s = classify_name(c, e->u.name.sym, depth);
        /* a param or top-level variable: a shift known at run time (a window of one) */
        if (s.kind == ORN_SUB_UNKNOWN && !s.varies && run_site_expr(c, e, 0)) {
            s = constant(0);
            s.ranged = true;
            s.wlo = e;
        }
        return s;
    }
    case N_UNARY:
        if (e->u.unary.op == OP_NEG)
            return combine(OP_SUB, constant(0), classify(c, e->u.unary.e, depth + 1));
        break;
    case N_BINARY: {
        OrnOp op = e->u.binary.op;
        if ((op == OP_ADD || op == OP_SUB || op == OP_MUL) && int_type(e->type)) {
            OrnSub l = classify(c, e->u.binary.l, depth + 1);
            OrnSub r = classify(c, e->u.binary.r, depth + 1);
            OrnSub s = combine(op, l, r);
            if (s.kind == ORN_SUB_UNKNOWN && l.kind == ORN_SUB_AFFINE && r.kind == ORN_SUB_AFFINE)
                unknown_why(c, true, "%s",
                            op == OP_MUL ? "it multiplies keys" : "it combines two different keys");
            return s;
        }
        break;
    }
    case N_CALL:
        if ((e->u.call.builtin == ORN_BI_MIN || e->u.call.builtin == ORN_BI_MAX) &&
            int_type(e->type)) {
            OrnSub s = clamp(c, e, depth);
            if (s.kind != ORN_SUB_UNKNOWN) return s;
        }
        /* i64(x), i32(x) of an integer are x */
        if ((e->u.call.builtin == ORN_BI_I64 || e->u.call.builtin == ORN_BI_I32) &&
            e->u.call.args && !e->u.call.args->next && int_type(e->u.call.args->type))
            return classify(c, e->u.call.args, depth + 1);
        break;
    default:
        break;
    }
    bool inv = invariant(c, e, depth + 1);
    if (e->kind == N_INDEX) return unknown_why(c, !inv, "%s", "it is read from an array");
    if (e->kind == N_CALL)
        return unknown_why(c, !inv, "it is the result of '%s(...)'",
                           e->u.call.id ? e->u.call.id->s : "a call");
    return unknown_why(c, !inv, "%s", "it is not of the form a*k + c");
}

/* Loop-invariant: the same value in every iteration of the parallel_for. */
static bool invariant(Ctx *c, const OrnNode *e, int depth)
{
    if (!e) return true;
    if (depth > MAX_FOLLOW) return false;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_STR:
    case N_BOOL:
        return true;
    case N_NAME: {
        const OrnSym *sym = e->u.name.sym;
        if (!sym) return false;
        if (sym->kind == SYM_DIST) return true; /* the array itself (rows(A) ...) */
        if (sym->kind == SYM_FN || sym->kind == SYM_EXTERN) return true;
        return !sub_varies(classify_name(c, sym, depth));
    }
    case N_UNARY:
        return invariant(c, e->u.unary.e, depth + 1);
    case N_BINARY:
        return invariant(c, e->u.binary.l, depth + 1) && invariant(c, e->u.binary.r, depth + 1);
    case N_KWARG:
        return invariant(c, e->u.kwarg.value, depth + 1);
    case N_CALL: {
        int bi = e->u.call.builtin;
        bool pure = bi >= 0 &&
                    ((orn_builtins[bi].flags & BI_CONST) || bi == ORN_BI_ROWS ||
                     bi == ORN_BI_COLS || bi == ORN_BI_DIM || bi == ORN_BI_NNZ || bi == ORN_BI_LEN);
        if (!pure) return false; /* random draws, user functions, element reads */
        for (const OrnNode *a = e->u.call.args; a; a = a->next)
            if (!invariant(c, a, depth + 1)) return false;
        return true;
    }
    case N_INDEX: {
        /* an element of an outer local array (replicated, read-only in the loop) */
        const OrnNode *b = e->u.index.base;
        if (!b || b->kind != N_NAME || !b->u.name.sym) return false;
        const OrnSym *sym = b->u.name.sym;
        if (sym->kind == SYM_DIST || in_loop(c, sym) || sym->fn) return false;
        for (const OrnNode *s = e->u.index.subs; s; s = s->next)
            if (s->kind != N_SLICE && !invariant(c, s, depth + 1)) return false;
        return true;
    }
    default:
        return false;
    }
}

/* ---- recording accesses ---- */

static int array_index(Ctx *c, OrnSym *sym)
{
    for (int i = 0; i < c->narrays; i++)
        if (c->arrays[i] == sym) return i;
    if (c->narrays == c->caparrays) {
        c->caparrays = c->caparrays ? 2 * c->caparrays : 8;
        c->arrays = orn_xrealloc(c->arrays, (size_t)c->caparrays * sizeof *c->arrays);
    }
    c->arrays[c->narrays] = sym;
    return c->narrays++;
}

static OrnAccess *new_access(Ctx *c, OrnSym *array, OrnSpan span)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->v = orn_xrealloc(c->v, (size_t)c->cap * sizeof *c->v);
    }
    OrnAccess *a = &c->v[c->n++];
    memset(a, 0, sizeof *a);
    a->array = array;
    a->ref.array = array_index(c, array);
    a->span = span;
    a->conditional = c->cond > 0;
    Frame *f = frame(c);
    if (f) {
        a->callee = f->fn;
        a->call_site = c->call_site;
    }
    return a;
}

static int ndims_of(const OrnSym *sym)
{
    const OrnType *t = sym->type;
    if (t && t->kind == T_BUFFER) t = t->target;
    return t && t->kind == T_ARRAY ? t->ndims : 1;
}

/* A[subs] read and/or written. */
static void record_index(Ctx *c, const OrnNode *ix, bool read, bool write)
{
    OrnSym *sym = ix->u.index.base->u.name.sym;
    OrnAccess *a = new_access(c, sym, ix->span);
    a->ref.read = read;
    a->ref.write = write;
    a->buffer_update = sym->type && sym->type->kind == T_BUFFER;
    a->ref.exempt = a->buffer_update;
    a->row_view = ix == c->row_iter;
    int m = 0;
    for (const OrnNode *s = ix->u.index.subs; s && m < ORN_DEP_MAXDIM; s = s->next, m++) {
        c->why = NULL;
        a->ref.subs[m] = classify(c, s, 0);
        a->sub_span[m] = s->span;
        if (a->ref.subs[m].kind == ORN_SUB_UNKNOWN) a->why_unknown[m] = c->why;
    }
    a->ref.nsubs = m;
}

static void record_value(Ctx *c, const OrnNode *name, bool read, bool write)
{
    OrnAccess *a = new_access(c, c->loop->space, name->span);
    a->ref.read = read;
    a->ref.write = write;
    a->via_value = true;
    a->ref.nsubs = c->loop->nkeys;
    for (int p = 0; p < c->loop->nkeys; p++) {
        a->ref.subs[p] = affine(p, 1, 0);
        a->sub_span[p] = name->span;
    }
}

static void record_whole(Ctx *c, const OrnNode *name)
{
    OrnAccess *a = new_access(c, name->u.name.sym, name->span);
    a->ref.read = true;
    a->whole = true;
    a->ref.nsubs = ndims_of(name->u.name.sym);
    for (int m = 0; m < a->ref.nsubs; m++) {
        a->ref.subs[m].kind = ORN_SUB_ALL;
        a->sub_span[m] = name->span;
    }
}

static bool is_dist_name(const OrnNode *e)
{
    return e && e->kind == N_NAME && e->u.name.sym && e->u.name.sym->kind == SYM_DIST;
}

static bool is_dist_index(const OrnNode *e)
{
    return e && e->kind == N_INDEX && is_dist_name(e->u.index.base);
}

/* ---- the walk ---- */

static void walk_expr(Ctx *c, const OrnNode *e);
static void walk_stmts(Ctx *c, const OrnNode *list);

static void walk_subs(Ctx *c, const OrnNode *ix)
{
    for (const OrnNode *s = ix->u.index.subs; s; s = s->next) walk_expr(c, s);
}

static bool on_stack(const Ctx *c, const OrnNode *fn, bool *generic)
{
    for (int i = 0; i < c->nframes; i++)
        if (c->frames[i].fn == fn) {
            if (c->frames[i].generic) *generic = true;
            return true;
        }
    return false;
}

/* A user function called from the body: its accesses, as if inlined here. */
static void inline_call(Ctx *c, const OrnNode *call)
{
    const OrnSym *fs = call->u.call.sym;
    const OrnNode *fn = fs ? fs->decl : NULL;
    if (!fn || fn->kind != N_FN || fn->u.fn.is_extern || !fn->u.fn.body) return;
    bool generic_seen = false;
    bool recursive = on_stack(c, fn, &generic_seen);
    if (generic_seen) return; /* an activation with unknown parameters covers this one */
    if (c->nframes >= MAX_INLINE + 1) return;
    bool generic = recursive || c->nframes >= MAX_INLINE;

    Frame nf;
    memset(&nf, 0, sizeof nf);
    nf.fn = fn;
    nf.generic = generic;
    const OrnNode *arg = call->u.call.args;
    for (const OrnNode *p = fn->u.fn.args; p && nf.nparams < 16; p = p->next) {
        nf.params[nf.nparams] = p->u.arg.sym;
        nf.args[nf.nparams] = arg && arg->kind != N_KWARG ? classify(c, arg, 0) : unknown(true);
        nf.nparams++;
        if (arg) arg = arg->next;
    }
    OrnSpan saved_site = c->call_site;
    if (c->nframes == 0) c->call_site = call->span;
    c->frames[c->nframes++] = nf;
    int saved_cond = c->cond;
    walk_stmts(c, fn->u.fn.body->kind == N_BLOCK ? fn->u.fn.body->u.block.stmts : fn->u.fn.body);
    c->cond = saved_cond;
    c->nframes--;
    c->call_site = saved_site;
}

static void walk_call(Ctx *c, const OrnNode *e)
{
    int bi = e->u.call.builtin;
    bool meta = bi == ORN_BI_ROWS || bi == ORN_BI_COLS || bi == ORN_BI_DIM || bi == ORN_BI_NNZ ||
                bi == ORN_BI_LEN;
    /* matmul_into(C, ...), solve_into(x, ...): the first argument is written (it reads it
     * too when matmul_into adds); add_outer's is a local matrix */
    bool writes_first = bi == ORN_BI_MATMUL_INTO || bi == ORN_BI_SOLVE_INTO;
    for (const OrnNode *a = e->u.call.args; a; a = a->next) {
        const OrnNode *x = a->kind == N_KWARG ? a->u.kwarg.value : a;
        if (writes_first && a == e->u.call.args && is_dist_index(x)) {
            record_index(c, x, bi == ORN_BI_MATMUL_INTO, true);
            walk_subs(c, x);
        } else if (is_dist_name(x)) {
            /* extents read no elements; anything else reads the whole array */
            if (!meta) record_whole(c, x);
        } else if (meta && is_dist_index(x)) {
            walk_subs(c, x); /* len(A[:, j]): the length only */
        } else {
            walk_expr(c, x);
        }
    }
    if (bi < 0) inline_call(c, e);
}

static void walk_expr(Ctx *c, const OrnNode *e)
{
    if (!e) return;
    switch (e->kind) {
    case N_NAME: {
        const OrnSym *sym = e->u.name.sym;
        if (!sym) return;
        if (sym->kind == SYM_VALUE && sym == c->loop->value && c->nframes == 0)
            record_value(c, e, true, false);
        else if (sym->kind == SYM_DIST)
            record_whole(c, e); /* a bare array where a value is used: all of it */
        return;
    }
    case N_INDEX:
        if (is_dist_index(e)) {
            record_index(c, e, true, false);
            walk_subs(c, e);
        } else {
            walk_expr(c, e->u.index.base);
            walk_subs(c, e);
        }
        return;
    case N_UNARY:
        walk_expr(c, e->u.unary.e);
        return;
    case N_BINARY:
        walk_expr(c, e->u.binary.l);
        walk_expr(c, e->u.binary.r);
        return;
    case N_CALL:
        walk_call(c, e);
        return;
    case N_KWARG:
        walk_expr(c, e->u.kwarg.value);
        return;
    default:
        return;
    }
}

static void walk_assign(Ctx *c, const OrnNode *n)
{
    const OrnNode *t = n->u.assign.target;
    bool compound = n->u.assign.op != OP_NONE;
    /* the target is recorded first, so arrays are listed in the order they are written in
     * the source (a compound assignment reads the target before the value anyway) */
    if (!t) {
        walk_expr(c, n->u.assign.value);
        return;
    }
    if (t->kind == N_NAME) {
        const OrnSym *sym = t->u.name.sym;
        if (sym && sym->kind == SYM_VALUE && sym == c->loop->value && c->nframes == 0)
            record_value(c, t, compound, true);
    } else if (t->kind == N_INDEX) {
        if (is_dist_index(t)) {
            record_index(c, t, compound, true);
            c->v[c->n - 1].additive = n->u.assign.op == OP_ADD || n->u.assign.op == OP_SUB;
        } else
            walk_expr(c, t->u.index.base);
        walk_subs(c, t);
    }
    walk_expr(c, n->u.assign.value);
}

static void walk_stmt(Ctx *c, const OrnNode *s)
{
    switch (s->kind) {
    case N_EXPR:
        walk_expr(c, s->u.expr_stmt.e);
        break;
    case N_ASSIGN:
        walk_assign(c, s);
        break;
    case N_BLOCK:
        walk_stmts(c, s->u.block.stmts);
        break;
    case N_IF:
        walk_expr(c, s->u.if_.cond);
        c->cond++;
        if (s->u.if_.then) walk_stmt(c, s->u.if_.then);
        if (s->u.if_.els) walk_stmt(c, s->u.if_.els);
        c->cond--;
        break;
    case N_FOR:
        walk_expr(c, s->u.for_.lo);
        walk_expr(c, s->u.for_.hi);
        c->cond++;
        if (s->u.for_.body) walk_stmt(c, s->u.for_.body);
        c->cond--;
        break;
    case N_FOREACH: {
        const OrnNode *saved = c->row_iter;
        c->row_iter = s->u.foreach.iter;
        walk_expr(c, s->u.foreach.iter);
        c->row_iter = saved;
        c->cond++;
        if (s->u.foreach.body) walk_stmt(c, s->u.foreach.body);
        c->cond--;
        break;
    }
    case N_WHILE:
        c->cond++;
        walk_expr(c, s->u.while_.cond);
        if (s->u.while_.body) walk_stmt(c, s->u.while_.body);
        c->cond--;
        break;
    case N_RETURN:
        walk_expr(c, s->u.ret.value);
        break;
    default:
        break;
    }
}

static void walk_stmts(Ctx *c, const OrnNode *list)
{
    for (const OrnNode *s = list; s; s = s->next) walk_stmt(c, s);
}

void orn_access_collect(OrnUnit *u, const OrnLoop *loop, OrnAccessList *out)
{
    Ctx c;
    memset(&c, 0, sizeof c);
    c.u = u;
    c.loop = loop;
    size_t nsyms = (size_t)(u->sema.nsyms > 0 ? u->sema.nsyms : 1);
    c.nassign = orn_xcalloc(nsyms, sizeof *c.nassign);
    c.def = orn_xcalloc(nsyms, sizeof *c.def);
    count_assigns(&c, u->program);
    if (loop->space) array_index(&c, loop->space);
    const OrnNode *body = loop->node->u.parfor.body;
    if (body) walk_stmt(&c, body);

    out->n = c.n;
    out->v = orn_arena_alloc(u->arena, (size_t)(c.n ? c.n : 1) * sizeof *out->v);
    if (c.n) memcpy(out->v, c.v, (size_t)c.n * sizeof *c.v);
    out->narrays = c.narrays;
    out->arrays = orn_arena_alloc(u->arena, (size_t)(c.narrays ? c.narrays : 1) * sizeof(OrnSym *));
    if (c.narrays) memcpy(out->arrays, c.arrays, (size_t)c.narrays * sizeof(OrnSym *));
    out->clamps = c.clamps; /* arena */
    out->nclamps = c.nclamps;
    free(c.v);
    free(c.arrays);
    free(c.nassign);
    free(c.def);
}
