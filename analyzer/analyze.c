/* analyze.c: accesses -> dependence vectors -> schedule and roles -> notes, per loop; the
 * serial warning. See analyze.h. */
#include "analyze.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extent.h"
#include "strbuf.h"

typedef struct Builder {
    OrnUnit *u;
    OrnLoopPlan *p;
    OrnPlanNote *notes;
    int nnotes, capnotes;
} Builder;

/* ---- small text helpers ---- */

static char *arena_str(OrnUnit *u, const char *s, size_t n)
{
    return orn_arena_strndup(u->arena, s, n);
}

/* The source text of a span, on one line, shortened to at most 48 bytes. */
static const char *span_text(OrnUnit *u, OrnSpan sp)
{
    const char *t = u->src.text;
    size_t lo = sp.lo, hi = sp.hi;
    if (!t || lo > u->src.len || hi > u->src.len || hi < lo) return "?";
    size_t n = 0;
    while (lo + n < hi && t[lo + n] != '\n' && t[lo + n] != '\r') n++;
    if (n > 48) {
        char buf[64];
        memcpy(buf, t + lo, 45);
        memcpy(buf + 45, "...", 4);
        return arena_str(u, buf, 48);
    }
    return arena_str(u, t + lo, n);
}

static const char *acc_text(OrnUnit *u, const OrnAccess *a)
{
    return span_text(u, a->span);
}

static void note(Builder *b, OrnNoteKind kind, int array, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void note(Builder *b, OrnNoteKind kind, int array, const char *fmt, ...)
{
    OrnBuf t;
    orn_buf_init(&t);
    va_list ap;
    va_start(ap, fmt);
    orn_buf_vprintf(&t, fmt, ap);
    va_end(ap);
    if (b->nnotes == b->capnotes) {
        b->capnotes = b->capnotes ? 2 * b->capnotes : 16;
        b->notes = orn_xrealloc(b->notes, (size_t)b->capnotes * sizeof *b->notes);
    }
    OrnPlanNote *n = &b->notes[b->nnotes++];
    n->kind = kind;
    n->array = array;
    n->text = arena_str(b->u, t.data ? t.data : "", t.len);
    orn_buf_free(&t);
}

static const char *vec_str(OrnUnit *u, const OrnDepVec *v)
{
    char buf[96];
    orn_dep_vec_str(v, buf, sizeof buf);
    return arena_str(u, buf, strlen(buf));
}

/* Names of schedule dimensions and schedules, allocated from the unit's arena. */
static const char *dim_name(Builder *b, const OrnPlanSchedule *s, int d)
{
    char buf[64];
    orn_plan_dim_name(&b->p->problem, s, d, buf, sizeof buf);
    return arena_str(b->u, buf, strlen(buf));
}

/* "W[:, u] (line 46) and W[:, u] (line 44)" for the first pair of dependence d. */
static const char *pair_text(OrnUnit *u, const OrnLoopPlan *p, int d)
{
    const OrnLoopDep *dep = &p->deps[d];
    if (!dep->npairs) return "";
    const OrnAccess *a = &p->acc.v[dep->pairs[0].a], *b = &p->acc.v[dep->pairs[0].b];
    OrnBuf t;
    orn_buf_init(&t);
    if (a == b)
        orn_buf_printf(&t, "%s (%s, line %u) in two iterations", acc_text(u, a), orn_access_kind(a),
                       a->span.line);
    else
        orn_buf_printf(&t, "%s (%s, line %u) and %s (%s, line %u)", acc_text(u, a),
                       orn_access_kind(a), a->span.line, acc_text(u, b), orn_access_kind(b),
                       b->span.line);
    const char *r = arena_str(u, t.data, t.len);
    orn_buf_free(&t);
    return r;
}

/* ---- dependences ---- */

static void add_dep(Builder *b, const OrnDepVec *v, int i, int j)
{
    OrnLoopPlan *p = b->p;
    int k;
    for (k = 0; k < p->ndeps; k++)
        if (orn_dep_vec_equal(&p->deps[k].v, v)) break;
    if (k == p->ndeps) {
        p->deps = orn_xrealloc(p->deps, (size_t)(p->ndeps + 1) * sizeof *p->deps);
        memset(&p->deps[k], 0, sizeof p->deps[k]);
        p->deps[k].v = *v;
        p->ndeps++;
    }
    OrnLoopDep *d = &p->deps[k];
    /* the write first: "W[:, u] (write) and W[:, u] (read)" */
    if (!p->acc.v[i].ref.write && p->acc.v[j].ref.write) {
        int t = i;
        i = j;
        j = t;
    }
    d->pairs = orn_xrealloc(d->pairs, (size_t)(d->npairs + 1) * sizeof *d->pairs);
    d->pairs[d->npairs].a = i;
    d->pairs[d->npairs].b = j;
    d->npairs++;
}

static void find_deps(Builder *b)
{
    OrnLoopPlan *p = b->p;
    const OrnAccessList *acc = &p->acc;
    for (int i = 0; i < acc->n; i++) {
        for (int j = i; j < acc->n; j++) {
            const OrnDepRef *x = &acc->v[i].ref, *y = &acc->v[j].ref;
            /* Two writes of one element conflict in unordered loops too: blocks that run at
             * the same time on different ranks write remote elements in place at their
             * owner and elsewhere at the round's end, so two such elements written by two
             * ranks could keep one rank's value in one and the other's in the other, which
             * no serial order gives. Kept in one block (or one rotation step), they do. */
            if (!orn_dep_conflicts(x, y, true)) continue;
            int nsubs = x->nsubs < y->nsubs ? x->nsubs : y->nsubs;
            OrnDepVec v;
            if (!orn_dep_test(p->nkeys, nsubs, x->subs, y->subs, &v)) continue;
            if (p->ordered) {
                OrnDepVec pieces[2 * ORN_DEP_MAXDIM];
                int n = orn_dep_lexpos(&v, pieces);
                for (int k = 0; k < n; k++) add_dep(b, &pieces[k], i, j);
            } else {
                orn_dep_sign_normalize(&v);
                if (!orn_dep_vec_is_zero(&v)) add_dep(b, &v, i, j);
            }
        }
    }
    /* a write against a read first: it names the dependence in messages, and a read
     * explains it better than a second write */
    for (int k = 0; k < p->ndeps; k++) {
        OrnLoopDep *d = &p->deps[k];
        int m = 0;
        for (int q = 0; q < d->npairs; q++) {
            const OrnDepRef *x = &acc->v[d->pairs[q].a].ref, *y = &acc->v[d->pairs[q].b].ref;
            if (!(x->read || y->read)) continue;
            OrnDepPair t = d->pairs[q];
            memmove(&d->pairs[m + 1], &d->pairs[m], (size_t)(q - m) * sizeof t);
            d->pairs[m++] = t;
        }
    }
    /* move into the arena */
    OrnLoopDep *deps = orn_arena_alloc(b->u->arena, (size_t)(p->ndeps + 1) * sizeof *deps);
    for (int k = 0; k < p->ndeps; k++) {
        deps[k] = p->deps[k];
        deps[k].pairs =
            orn_arena_alloc(b->u->arena, (size_t)p->deps[k].npairs * sizeof(OrnDepPair));
        memcpy(deps[k].pairs, p->deps[k].pairs, (size_t)p->deps[k].npairs * sizeof(OrnDepPair));
        free(p->deps[k].pairs);
    }
    free(p->deps);
    p->deps = deps;
}

/* ---- arrays ---- */

static OrnSym *buffer_target(OrnSym *buf)
{
    const OrnNode *d = buf->decl;
    if (!d || d->kind != N_DIST || !d->u.dist.value || d->u.dist.value->kind != N_CALL) return NULL;
    const OrnNode *a = d->u.dist.value->u.call.args;
    return a && a->kind == N_NAME ? a->u.name.sym : NULL;
}

/* The same bound of a run-time window: the same node, or names of one symbol, or equal
 * literals (`X[i + lag]` twice: two nodes of one param). */
static bool same_bound(const OrnNode *a, const OrnNode *b)
{
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind) return false;
    if (a->kind == N_NAME) return a->u.name.sym && a->u.name.sym == b->u.name.sym;
    return a->kind == N_INT && a->u.ilit.v == b->u.ilit.v;
}

/* Per dist array, the dimensions the last loop planned so far cut (OrnPlanArray.prev_dims). */
typedef struct Cuts {
    const OrnSym **sym;
    unsigned *dims;
    int n, cap;
} Cuts;

static int cut_index(const Cuts *c, const OrnSym *s)
{
    for (int i = 0; c && i < c->n; i++)
        if (c->sym[i] == s) return i;
    return -1;
}

/* The dimensions the last loop planned cut s along; never cut by a loop yet, a loader's
 * array is in rows (bit 0), any other is made where its first loop puts it (0). */
static unsigned cut_of(const Cuts *c, const OrnSym *s)
{
    int i = cut_index(c, s);
    if (i >= 0) return c->dims[i];
    return orn_extent_from_data(s) ? 1u : 0u;
}

static void set_cut(Cuts *c, const OrnSym *s, unsigned dims)
{
    int i = cut_index(c, s);
    if (i >= 0) {
        c->dims[i] = dims;
        return;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->sym = orn_xrealloc(c->sym, (size_t)c->cap * sizeof *c->sym);
        c->dims = orn_xrealloc(c->dims, (size_t)c->cap * sizeof *c->dims);
    }
    c->sym[c->n] = s;
    c->dims[c->n++] = dims;
}

static void summarize_arrays(Builder *b, const Cuts *cuts)
{
    OrnLoopPlan *p = b->p;
    OrnUnit *u = b->u;
    p->narrays = p->acc.narrays;
    p->arrays = orn_arena_alloc(u->arena, (size_t)(p->narrays + 1) * sizeof *p->arrays);
    OrnPlanArray *infos = orn_arena_alloc(u->arena, (size_t)(p->narrays + 1) * sizeof *infos);
    for (int k = 0; k < p->narrays; k++) {
        OrnArrayPlan *ap = &p->arrays[k];
        OrnPlanArray *in = &ap->info;
        OrnSym *sym = p->acc.arrays[k];
        ap->sym = sym;
        in->name = sym->name->s;
        const OrnType *t = sym->type;
        in->is_buffer = t && t->kind == T_BUFFER;
        if (in->is_buffer) {
            ap->target = buffer_target(sym);
            t = t->target;
        }
        in->ndims = t && t->kind == T_ARRAY ? t->ndims : 1;
        in->sparse = t && t->kind == T_ARRAY && t->sparse;
        in->is_space = sym == p->loop->space;
        in->only_const = true;
        in->est_elems = orn_extent_elems(sym);
        in->within_space = !in->is_space && orn_extent_within(sym, p->loop->space);
        in->prev_dims = in->is_buffer ? 0 : cut_of(cuts, sym);
        bool first = true;
        for (int m = 0; m < ORN_DEP_MAXDIM; m++) in->key_of_dim[m] = -1;
        if (in->is_space) {
            /* every iteration owns its own element: an implicit access at the keys */
            for (int m = 0; m < in->ndims && m < p->nkeys; m++) {
                in->key_of_dim[m] = m;
                in->coef[m] = 1;
                in->halo_lo[m] = in->halo_hi[m] = 0;
                in->keys_mask |= 1u << m;
            }
            first = false;
        }
        for (int i = 0; i < p->acc.n; i++) {
            const OrnAccess *a = &p->acc.v[i];
            if (a->ref.array != k || a->buffer_update) continue;
            in->read |= a->ref.read;
            in->written |= a->ref.write;
            /* a row view X[i, :] of a sparse array: the runtime serves whole rows */
            in->rows |= in->sparse && a->ref.read && a->ref.nsubs == 2 &&
                        a->ref.subs[0].kind != ORN_SUB_ALL && a->ref.subs[1].kind == ORN_SUB_ALL;
            if (a->row_view && t && t->sparse) {
                OrnSub s0 = a->ref.nsubs ? a->ref.subs[0]
                                         : (OrnSub){.kind = ORN_SUB_UNKNOWN, .varies = true};
                int rk =
                    s0.kind == ORN_SUB_AFFINE && s0.a == 1 && s0.c == 0 && !s0.ranged ? s0.key : -1;
                in->row_key = !in->sparse_rows || in->row_key == rk ? rk : -1;
                in->sparse_rows = true;
            }
            for (int m = 0; m < in->ndims; m++) {
                OrnSub s = m < a->ref.nsubs ? a->ref.subs[m]
                                            : (OrnSub){.kind = ORN_SUB_UNKNOWN, .varies = true};
                if (s.kind != ORN_SUB_CONST || s.ranged) in->only_const = false;
                if (s.kind == ORN_SUB_UNKNOWN && s.varies) in->varying_unknown = true;
                if (s.kind == ORN_SUB_AFFINE) in->keys_mask |= 1u << s.key;
                /* k + c only: a block of k then owns a block of the dimension (the
                 * runtime's key_dim); 2*k or -k spread a block across the array. A write
                 * must stay in the block's own elements (k + 0): halos are read-only
                 * ghost cells, and a block that writes k - 1 writes its neighbour's. */
                bool aligned =
                    s.kind == ORN_SUB_AFFINE && s.a == 1 && !(a->ref.write && (s.c || s.ranged));
                int64_t shi = s.ranged ? s.c2 : s.c; /* a window: offsets [c, c2] */
                /* a window known at run time: one per dimension (the same for loop) */
                if (aligned && s.wlo && in->win_lo[m] &&
                    (!same_bound(in->win_lo[m], s.wlo) || !same_bound(in->win_hi[m], s.whi) ||
                     in->win_neg[m] != s.wneg || !same_bound(in->win_sh[m], s.wsh) ||
                     in->win_shneg[m] != s.wshneg))
                    aligned = false;
                if (aligned && s.wlo) {
                    in->win_lo[m] = s.wlo;
                    in->win_hi[m] = s.whi;
                    in->win_neg[m] = s.wneg;
                    in->win_sh[m] = s.wsh;
                    in->win_shneg[m] = s.wshneg;
                }
                if (first) {
                    if (aligned) {
                        in->key_of_dim[m] = s.key;
                        in->coef[m] = s.a;
                        in->halo_lo[m] = s.c;
                        in->halo_hi[m] = shi;
                    }
                } else if (in->key_of_dim[m] >= 0) {
                    if (!aligned || s.key != in->key_of_dim[m] || s.a != in->coef[m]) {
                        in->key_of_dim[m] = -1;
                    } else {
                        if (s.c < in->halo_lo[m]) in->halo_lo[m] = s.c;
                        if (shi > in->halo_hi[m]) in->halo_hi[m] = shi;
                    }
                }
            }
            first = false;
        }
        if (first) in->only_const = false; /* no element access (buffers) */
        /* read at keys along a dimension far longer than the space's: fetch what is read */
        for (int m = 0; m < in->ndims && !in->is_space && !in->is_buffer && !in->written; m++)
            if (in->key_of_dim[m] >= 0 &&
                orn_extent_overhangs(sym, m, p->loop->space, in->key_of_dim[m])) {
                in->key_of_dim[m] = -1;
                in->overhang = true;
            }
        if (in->is_space) {
            in->only_const = false;
            for (int m = 0; m < in->ndims && m < p->nkeys; m++)
                if (in->key_of_dim[m] != m) in->space_misaligned = true;
        }
        infos[k] = *in;
    }
    p->problem.arrays = infos;
    p->problem.narrays = p->narrays;
}

/* ---- notes ---- */

static const char *keys_tuple(Builder *b, const OrnPlanSchedule *s)
{
    OrnBuf t;
    orn_buf_init(&t);
    for (int d = 0; d < s->ndims; d++)
        orn_buf_printf(&t, "%s%s", d ? ", " : "", dim_name(b, s, d == 0 ? s->dims[0] : s->dims[1]));
    const char *r = arena_str(b->u, t.data ? t.data : "", t.len);
    orn_buf_free(&t);
    return r;
}

static const char *sched_text(Builder *b, const OrnPlanSchedule *s)
{
    char buf[160];
    orn_plan_schedule_text(&b->p->problem, s, buf, sizeof buf);
    return arena_str(b->u, buf, strlen(buf));
}

static void strategy_notes(Builder *b)
{
    OrnLoopPlan *p = b->p;
    OrnUnit *u = b->u;
    const OrnPlanSchedule *s = &p->sched;
    const char *d0 = s->ndims > 0 ? dim_name(b, s, s->dims[0]) : "";
    const char *d1 = s->ndims > 1 ? dim_name(b, s, s->dims[1]) : "";
    OrnStrategy inner = s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy;

    if (s->strategy == ORN_STRAT_UNIMODULAR) {
        OrnBuf t;
        orn_buf_init(&t);
        orn_buf_puts(&t, "[");
        for (int r = 0; r < p->nkeys; r++) {
            orn_buf_puts(&t, r ? ", [" : "[");
            for (int c = 0; c < p->nkeys; c++)
                orn_buf_printf(&t, "%s%d", c ? ", " : "", s->T.m[r][c]);
            orn_buf_puts(&t, "]");
        }
        orn_buf_puts(&t, "]");
        OrnBuf nv;
        orn_buf_init(&nv);
        for (int i = 0; i < p->ndeps; i++) {
            OrnDepVec pieces[2 * ORN_DEP_MAXDIM];
            int n = orn_plan_oriented(&p->problem, &s->T, &p->deps[i].v, pieces);
            for (int k = 0; k < n; k++)
                orn_buf_printf(&nv, "%s%s", nv.len ? ", " : "", vec_str(u, &pieces[k]));
        }
        OrnBuf coords;
        orn_buf_init(&coords);
        for (int r = 0; r < p->nkeys; r++)
            orn_buf_printf(&coords, "%s%s", r ? ", " : "", dim_name(b, s, r));
        OrnPlanSchedule in = *s;
        in.strategy = inner;
        note(b, ORN_NOTE_STRATEGY, -1,
             "unimodular: no schedule is legal in the original keys; the transform %s "
             "(new coordinates (%s)) turns the dependences into %s, and then %s is legal",
             t.data, coords.data, nv.len ? nv.data : "none", sched_text(b, &in));
        orn_buf_free(&t);
        orn_buf_free(&nv);
        orn_buf_free(&coords);
    }
    switch (inner) {
    case ORN_STRAT_1D:
        if (p->ndeps == 0)
            note(b, ORN_NOTE_STRATEGY, -1,
                 "1d along %s: no two iterations touch the same element with a write, so "
                 "blocks of %s run in parallel without communicating",
                 d0, d0);
        else
            note(b, ORN_NOTE_STRATEGY, -1,
                 "1d along %s: every dependence vector is 0 in %s, so iterations that "
                 "conflict fall in the same block of %s",
                 d0, d0, d0);
        break;
    case ORN_STRAT_2D:
        note(b, ORN_NOTE_STRATEGY, -1,
             "2d over (%s, %s): every dependence vector is 0 in %s or in %s, so blocks that "
             "run at the same time share no block of %s and no block of %s; each rank keeps "
             "its blocks of %s and the blocks of %s rotate between ranks",
             d0, d1, d0, d1, d0, d1, d0, d1);
        break;
    case ORN_STRAT_2D_ORDERED:
        note(b, ORN_NOTE_STRATEGY, -1,
             "2d_ordered over (%s, %s): every dependence goes forward (is >= 0) in both %s "
             "and %s, so blocks run as a wavefront: block (s, t) after blocks (s-1, t) and "
             "(s, t-1), each block in key order",
             d0, d1, d0, d1);
        break;
    default:
        break;
    }
    if (s->strategy == ORN_STRAT_SERIAL && p->choice.plan_refused && !p->choice.nculprits) {
        note(b, ORN_NOTE_STRATEGY, -1,
             "serial: every legal parallel schedule is one the runtime cannot run (%s)",
             p->choice.plan_refused);
    } else if (s->strategy == ORN_STRAT_SERIAL) {
        const OrnPlanChoice *c = &p->choice;
        if (c->closest >= 0 && c->nculprits > 0) {
            const OrnPlanCandidate *cl = &c->cands[c->closest];
            note(b, ORN_NOTE_STRATEGY, -1,
                 "serial: no parallel schedule keeps every dependence; the closest, %s, is "
                 "broken by %d dependence vector%s, first %s from %s",
                 sched_text(b, &cl->s), c->nculprits, c->nculprits == 1 ? "" : "s",
                 vec_str(u, &p->deps[c->culprits[0]].v), pair_text(u, p, c->culprits[0]));
        } else {
            bool placed = false; /* a candidate failed only on where the space is written */
            for (int i = 0; i < c->ncands; i++)
                placed |= !c->cands[i].legal && c->cands[i].blocker < 0;
            note(b, ORN_NOTE_STRATEGY, -1,
                 placed ? "serial: the loop writes its iteration space at elements that other "
                          "blocks of every parallel schedule hold"
                        : "serial: no parallel schedule keeps every dependence");
        }
        if (c->unimodular_tried)
            note(b, ORN_NOTE_REJECTED, -1,
                 "unimodular: none of the %d skews and interchanges tried makes a schedule "
                 "legal",
                 c->unimodular_tried);
    }
}

/* Why the candidate is illegal, in words. */
static void reject_note(Builder *b, const OrnPlanCandidate *c)
{
    OrnLoopPlan *p = b->p;
    OrnUnit *u = b->u;
    const char *d0 = dim_name(b, &c->s, c->s.dims[0]);
    const char *v = vec_str(u, &p->deps[c->blocker].v);
    const char *why = pair_text(u, p, c->blocker);
    switch (c->s.strategy) {
    case ORN_STRAT_1D:
        note(b, ORN_NOTE_REJECTED, -1, "1d along %s is illegal: dependence %s (%s) is not 0 in %s",
             d0, v, why, d0);
        break;
    case ORN_STRAT_2D: {
        const char *d1 = dim_name(b, &c->s, c->s.dims[1]);
        note(b, ORN_NOTE_REJECTED, -1,
             "2d over (%s, %s) is illegal: dependence %s (%s) is 0 in neither %s nor %s", d0, d1, v,
             why, d0, d1);
        break;
    }
    case ORN_STRAT_2D_ORDERED: {
        const char *d1 = dim_name(b, &c->s, c->s.dims[1]);
        note(b, ORN_NOTE_REJECTED, -1,
             "2d_ordered over (%s, %s) is illegal: dependence %s (%s) can go backward in %s or "
             "%s",
             d0, d1, v, why, d0, d1);
        break;
    }
    default:
        break;
    }
}

static void candidate_notes(Builder *b)
{
    OrnLoopPlan *p = b->p;
    const OrnPlanChoice *c = &p->choice;
    OrnStrategy won = p->sched.strategy;
    for (int i = 0; i < c->ncands; i++) {
        const OrnPlanCandidate *k = &c->cands[i];
        /* 2d and 2d_ordered come in both orientations; legality is the same for 2d */
        if ((k->s.strategy == ORN_STRAT_2D || k->s.strategy == ORN_STRAT_2D_ORDERED) &&
            k->s.dims[0] > k->s.dims[1] && !k->legal)
            continue;
        bool better_class =
            k->s.strategy < won ||
            (won == ORN_STRAT_UNIMODULAR && k->s.strategy == ORN_STRAT_2D_ORDERED) ||
            won == ORN_STRAT_SERIAL;
        if (!k->legal) {
            if (better_class && k->blocker >= 0) reject_note(b, k);
            continue;
        }
        if (k->refused) {
            if (better_class)
                note(b, ORN_NOTE_REJECTED, -1, "%s is legal, but the runtime cannot run it (%s)",
                     sched_text(b, &k->s), k->refused);
            continue;
        }
        if (i == c->best_cand) continue;
        if (k->s.strategy != won &&
            !(won == ORN_STRAT_UNIMODULAR && k->s.strategy == ORN_STRAT_2D_ORDERED))
            continue;
        const OrnPlanSchedule *bs = &p->sched;
        if (k->s.strategy == ORN_STRAT_2D_ORDERED && k->s.dims[0] > k->s.dims[1]) {
            /* the same wavefront, transposed: only worth a note if it differs */
            bool same = false;
            for (int j = 0; j < c->ncands; j++) {
                const OrnPlanCandidate *o = &c->cands[j];
                if (o->s.strategy == ORN_STRAT_2D_ORDERED && o->s.dims[0] == k->s.dims[1] &&
                    o->s.dims[1] == k->s.dims[0] && o->legal && o->s.cost == k->s.cost)
                    same = true;
            }
            if (same) continue;
        }
        if (k->s.cost > bs->cost) {
            char cost[256];
            orn_plan_cost_text(&p->problem, &k->s, cost, sizeof cost);
            note(b, ORN_NOTE_ALTERNATIVE, -1,
                 "%s is legal too but costs more (estimated %s; against %d)", sched_text(b, &k->s),
                 cost, bs->cost);
        } else if (k->s.strategy == ORN_STRAT_2D)
            note(b, ORN_NOTE_ALTERNATIVE, -1,
                 "%s (blocks of %s stay, blocks of %s rotate) is legal too and costs the same "
                 "(estimated %d); the first key stays, unless at run time the other side's "
                 "arrays have at most half the bytes to move",
                 sched_text(b, &k->s), dim_name(b, &k->s, k->s.dims[0]),
                 dim_name(b, &k->s, k->s.dims[1]), k->s.cost);
        else
            note(b, ORN_NOTE_ALTERNATIVE, -1,
                 "%s is legal too and costs the same (estimated %d); the first candidate in "
                 "key order wins",
                 sched_text(b, &k->s), k->s.cost);
    }
}

/* The first access of array k (non-buffer-update first), for role notes. */
static const OrnAccess *first_access(const OrnLoopPlan *p, int k, bool want_unknown)
{
    const OrnAccess *any = NULL;
    for (int i = 0; i < p->acc.n; i++) {
        const OrnAccess *a = &p->acc.v[i];
        if (a->ref.array != k) continue;
        if (!any) any = a;
        if (!want_unknown) return a;
        for (int m = 0; m < a->ref.nsubs; m++)
            if (a->ref.subs[m].kind == ORN_SUB_UNKNOWN && a->ref.subs[m].varies) return a;
    }
    return any;
}

/* a*k + c as source would write it: "i", "i-1", "2*i+1", "-i+3" */
static void put_affine(OrnBuf *t, long long a, const char *key, long long c)
{
    if (a == 1)
        orn_buf_printf(t, "%s", key);
    else if (a == -1)
        orn_buf_printf(t, "-%s", key);
    else
        orn_buf_printf(t, "%lld*%s", a, key);
    if (c) orn_buf_printf(t, "%+lld", c);
}

/* "a halo along i: i-1 .. i+1" for the partitioned dimensions of an array whose accesses
 * reach outside the elements a block owns. */
static void put_halo(OrnBuf *t, const OrnLoopPlan *p, const OrnPlanArray *in)
{
    const OrnPlanSchedule *s = &p->sched;
    for (int m = 0; m < in->ndims; m++) {
        int key = in->key_of_dim[m];
        if (key < 0 || s->transformed || !orn_plan_dim_has_halo(in, m)) continue;
        bool part = false;
        for (int d = 0; d < s->ndims; d++) part |= s->dims[d] == key;
        if (!part) continue;
        orn_buf_printf(t, "%sa halo along %s: ", t->len ? ", " : "", p->keys[key]);
        put_affine(t, in->coef[m], p->keys[key], in->halo_lo[m]);
        orn_buf_puts(t, " .. ");
        put_affine(t, in->coef[m], p->keys[key], in->halo_hi[m]);
        if (in->win_lo[m] && in->win_hi[m])
            orn_buf_printf(t, ", widened by the range of the for on line %u%s (known at run time)",
                           (unsigned)in->win_lo[m]->span.line, in->win_sh[m] ? " and shifted" : "");
        else if (in->win_lo[m])
            orn_buf_printf(t, ", shifted by a value known at run time (line %u)",
                           (unsigned)in->win_lo[m]->span.line);
    }
}

static const OrnAccess *first_write(const OrnLoopPlan *p, int k)
{
    for (int i = 0; i < p->acc.n; i++)
        if (p->acc.v[i].ref.array == k && p->acc.v[i].ref.write) return &p->acc.v[i];
    return first_access(p, k, false);
}

static void role_notes(Builder *b)
{
    OrnLoopPlan *p = b->p;
    OrnUnit *u = b->u;
    const OrnPlanSchedule *s = &p->sched;
    for (int k = 0; k < p->narrays; k++) {
        const OrnArrayPlan *ap = &p->arrays[k];
        const OrnPlanArray *in = &ap->info;
        const char *name = in->name;
        if (p->choice.refused && p->choice.refused[k]) {
            /* the runtime's plan check (runtime/plan_check.c) refused the planned role */
            note(b, ORN_NOTE_ROLE, k, "%s: %s: planned %s, which the runtime cannot run here (%s)",
                 name, orn_plan_role_name(ap->role), orn_plan_role_name(p->choice.planned[k]),
                 p->choice.refused[k]);
            continue;
        }
        switch (ap->role) {
        case ORN_ROLE_PARTITIONED:
            if (in->is_space) {
                if (s->strategy == ORN_STRAT_SERIAL)
                    note(b, ORN_NOTE_ROLE, k,
                         "%s: the iteration space; one rank runs all its iterations in key "
                         "order, with the data gathered there",
                         name);
                else {
                    OrnBuf h;
                    orn_buf_init(&h);
                    put_halo(&h, p, in);
                    const OrnAccess *x = NULL;
                    if (in->space_misaligned)
                        for (int i = 0; i < p->acc.n && !x; i++) {
                            const OrnAccess *a = &p->acc.v[i];
                            for (int m = 0; a->ref.array == k && m < a->ref.nsubs; m++)
                                if (a->ref.subs[m].kind != ORN_SUB_AFFINE ||
                                    a->ref.subs[m].key != m || a->ref.subs[m].a != 1)
                                    x = a;
                        }
                    note(b, ORN_NOTE_ROLE, k,
                         "%s: the iteration space, cut into blocks of (%s)%s%s%s%s%s", name,
                         keys_tuple(b, s), h.len ? "; read with " : "", h.len ? h.data : "",
                         x ? "; also accessed at elements of other blocks (" : "",
                         x ? acc_text(u, x) : "", x ? "), which are fetched" : "");
                    orn_buf_free(&h);
                }
                break;
            }
            {
                OrnBuf t;
                orn_buf_init(&t);
                for (int m = 0; m < in->ndims; m++) {
                    int key = in->key_of_dim[m];
                    if (key < 0) continue;
                    bool part = false;
                    for (int d = 0; d < s->ndims; d++) part |= !s->transformed && s->dims[d] == key;
                    if (s->strategy == ORN_STRAT_SERIAL) part = key == 0;
                    if (!part && !s->transformed) continue;
                    orn_buf_printf(&t, "%sdimension %d follows ", t.len ? ", " : "", m);
                    put_affine(&t, in->coef[m], p->keys[key], 0);
                }
                put_halo(&t, p, in);
                note(b, ORN_NOTE_ROLE, k, "%s: partitioned with the iteration space (%s)", name,
                     t.len ? t.data : "aligned with the partition");
                orn_buf_free(&t);
            }
            break;
        case ORN_ROLE_ROTATED: {
            int m = 0;
            for (; m < in->ndims; m++)
                if (in->key_of_dim[m] >= 0 && (s->transformed || in->key_of_dim[m] == s->dims[1]))
                    break;
            const char *d1 = dim_name(b, s, s->dims[1]);
            bool buffered = false; /* a buffer of the loop updates it: it rotates */
            for (int j = 0; j < p->narrays; j++)
                buffered |= p->arrays[j].target == p->arrays[k].sym;
            bool wave = (s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy) ==
                        ORN_STRAT_2D_ORDERED;
            note(b, ORN_NOTE_ROLE, k,
                 "%s: rotated: its dimension %d follows %s, so its blocks %s with the blocks of "
                 "%s%s",
                 name, m, d1,
                 wave ? "travel down the wavefront, from the rank of one row of blocks to the "
                        "next,"
                      : "move from rank to rank",
                 d1,
                 in->written ? ""
                 : buffered  ? "; its buffer's deltas go to the rank that holds the block, or "
                               "that receives it next, at each flush"
                             : "; it is read-only, so the runtime copies it to every rank "
                               "instead when it is at most ORN_REPLICATE_MAX bytes (64 MiB): "
                               "a copy moves once, a rotation at every run");
            break;
        }
        case ORN_ROLE_REPLICATED:
            if (in->only_const)
                note(b, ORN_NOTE_ROLE, k,
                     "%s: replicated: read-only, at constant subscripts; every rank gets a copy",
                     name);
            else if (in->sparse_rows)
                note(b, ORN_NOTE_ROLE, k,
                     "%s: replicated: read-only, its rows are iterated (%s) at rows the blocks "
                     "do not own; every rank gets a copy",
                     name, acc_text(u, first_access(p, k, false)));
            else if (in->keys_mask)
                note(b, ORN_NOTE_ROLE, k,
                     "%s: replicated: read-only, indexed by keys the blocks do not follow, so "
                     "every block reads all of it; every rank gets a copy",
                     name);
            else
                note(b, ORN_NOTE_ROLE, k,
                     "%s: replicated: read-only, at subscripts that are the same in every "
                     "iteration (%s); every rank gets a copy",
                     name, acc_text(u, first_access(p, k, false)));
            break;
        case ORN_ROLE_PREFETCHED: {
            const OrnAccess *a = first_access(p, k, true);
            if (in->varying_unknown)
                note(b, ORN_NOTE_ROLE, k,
                     "%s: prefetched: read-only, at subscripts known only at run time (%s, "
                     "line %u); each block fetches the elements it reads before it runs",
                     name, acc_text(u, a), a->span.line);
            else if (in->overhang)
                note(b, ORN_NOTE_ROLE, k,
                     "%s: prefetched: read-only, at keys (%s) along a dimension far longer than "
                     "the iteration space's; each block fetches the elements it reads rather than "
                     "cutting %s to the space's few blocks",
                     name, acc_text(u, first_access(p, k, false)), name);
            else
                note(b, ORN_NOTE_ROLE, k,
                     "%s: prefetched: read-only, indexed by keys the blocks do not follow over a "
                     "sparse iteration space; each block fetches the elements it reads",
                     name);
            break;
        }
        case ORN_ROLE_BUFFERED:
            if (ap->target)
                note(b, ORN_NOTE_ROLE, k,
                     "%s: buffered: updates to %s are collected on each rank and applied at "
                     "flushes; reads of %s may be up to one flush stale, so they create no "
                     "dependence",
                     name, ap->target->name->s, ap->target->name->s);
            else
                note(b, ORN_NOTE_ROLE, k, "%s: buffered", name);
            break;
        case ORN_ROLE_REMOTE: {
            const OrnAccess *a = first_write(p, k);
            if (s->strategy == ORN_STRAT_SERIAL)
                note(b, ORN_NOTE_ROLE, k,
                     "%s: remote: %s at elements that do not follow the first key; the rank "
                     "that runs the loop holds it while it runs",
                     name, in->read ? "read and written" : "written");
            else
                note(b, ORN_NOTE_ROLE, k,
                     "%s: remote: written at elements no block owns (%s, line %u); %s", name,
                     acc_text(u, a), a->span.line,
                     in->read ? "the elements a block reads are fetched before it runs and "
                                "its writes go to the rank that owns them"
                              : "the writes go to the rank that owns them");
            break;
        }
        }
    }
}

static const char *acc_kind_name(OrnAccKind k)
{
    switch (k) {
    case ACC_SUM:
        return "sum";
    case ACC_PROD:
        return "product";
    case ACC_MIN:
        return "min";
    case ACC_MAX:
        return "max";
    }
    return "?";
}

static void other_notes(Builder *b)
{
    OrnLoopPlan *p = b->p;
    const OrnLoop *l = p->loop;
    for (int i = 0; i < l->naccums; i++)
        note(b, ORN_NOTE_OTHER, -1,
             "%s: accumulator (%s): each rank reduces its iterations, then the ranks combine "
             "them after the loop",
             l->accums[i].sym->name->s, acc_kind_name(l->accums[i].kind));
    bool cond = false, callee = false;
    const OrnAccess *ca = NULL;
    for (int d = 0; d < p->ndeps; d++)
        for (int k = 0; k < p->deps[d].npairs; k++) {
            const OrnAccess *x = &p->acc.v[p->deps[d].pairs[k].a];
            const OrnAccess *y = &p->acc.v[p->deps[d].pairs[k].b];
            cond |= x->conditional || y->conditional;
        }
    for (int i = 0; i < p->acc.n; i++)
        if (p->acc.v[i].callee && !callee) {
            callee = true;
            ca = &p->acc.v[i];
        }
    if (cond)
        note(b, ORN_NOTE_OTHER, -1,
             "accesses under if, for or while count as if they always happen");
    if (callee)
        note(b, ORN_NOTE_OTHER, -1,
             "accesses in functions called from the body (first: %s in %s, called at line %u) "
             "are analysed as if inlined at each call",
             acc_text(b->u, ca), ca->callee->u.fn.id->s, ca->call_site.line);
    if (p->blocks_per_rank)
        note(b, ORN_NOTE_OTHER, -1,
             "partition counts are run-time parameters of the plan: by default %d x ranks "
             "blocks per partitioned dimension%s",
             p->blocks_per_rank,
             p->sched.strategy == ORN_STRAT_1D || p->sched.strategy == ORN_STRAT_2D_ORDERED
                 ? " (one block at one rank)"
                 : "");
}

/* ---- the serial warning ---- */

static bool has_unknown(const OrnAccess *a, int *m)
{
    for (int i = 0; i < a->ref.nsubs; i++)
        if (a->ref.subs[i].kind == ORN_SUB_UNKNOWN) {
            *m = i;
            return true;
        }
    return false;
}

/* What if the loop were unordered, or array `exempt` (an index in arrays, or -1) were
 * updated through a buffer? The schedule it would get, as text, or NULL if still serial. */
static const char *what_if(Builder *b, bool ordered, int exempt)
{
    OrnLoopPlan *p = b->p;
    OrnUnit *u = b->u;
    const OrnAccessList *acc = &p->acc;
    int cap = 2 * ORN_DEP_MAXDIM * (acc->n * (acc->n + 1) / 2) + 1, n = 0;
    OrnDepVec *vecs = orn_xcalloc((size_t)cap, sizeof *vecs);
    for (int i = 0; i < acc->n; i++)
        for (int j = i; j < acc->n; j++) {
            OrnDepRef x = acc->v[i].ref, y = acc->v[j].ref;
            if (x.array == exempt) x.exempt = true;
            if (y.array == exempt) y.exempt = true;
            if (!orn_dep_conflicts(&x, &y, true)) continue;
            int nsubs = x.nsubs < y.nsubs ? x.nsubs : y.nsubs;
            OrnDepVec v, pieces[2 * ORN_DEP_MAXDIM];
            if (!orn_dep_test(p->nkeys, nsubs, x.subs, y.subs, &v)) continue;
            int np = 0;
            if (ordered) {
                np = orn_dep_lexpos(&v, pieces);
            } else {
                orn_dep_sign_normalize(&v);
                if (!orn_dep_vec_is_zero(&v)) pieces[np++] = v;
            }
            for (int k = 0; k < np; k++) {
                bool dup = false;
                for (int m = 0; m < n && !dup; m++) dup = orn_dep_vec_equal(&vecs[m], &pieces[k]);
                if (!dup && n < cap) vecs[n++] = pieces[k];
            }
        }
    OrnPlanProblem pb = p->problem;
    pb.ordered = ordered;
    pb.vecs = vecs;
    pb.nvecs = n;
    /* through a buffer, the array is no longer written by the loop (every write of it is a
     * += or -=, the caller checked) */
    OrnPlanArray *arrs = NULL;
    if (exempt >= 0 && exempt < pb.narrays) {
        arrs = orn_xmalloc((size_t)pb.narrays * sizeof *arrs);
        memcpy(arrs, pb.arrays, (size_t)pb.narrays * sizeof *arrs);
        arrs[exempt].written = false;
        pb.arrays = arrs;
    }
    OrnPlanChoice c;
    orn_plan_choose(u->arena, &pb, &c);
    const char *r = NULL;
    if (c.best.strategy != ORN_STRAT_SERIAL) {
        char buf[160];
        orn_plan_schedule_text(&pb, &c.best, buf, sizeof buf);
        r = arena_str(u, buf, strlen(buf));
    }
    free(arrs);
    free(vecs);
    return r;
}

static void serial_warning(Builder *b)
{
    OrnLoopPlan *p = b->p;
    OrnUnit *u = b->u;
    const OrnPlanChoice *c = &p->choice;
    OrnDiags *dg = &u->diags;
    if (c->plan_refused && !c->nculprits) {
        orn_diag(dg, ORN_WARNING, p->loop->node->span,
                 "parallel_for runs serially: the runtime cannot run a parallel schedule of it "
                 "(%s)",
                 c->plan_refused);
        return;
    }
    if (!c->nculprits) return;
    const OrnLoopDep *d0 = &p->deps[c->culprits[0]];
    const OrnAccess *a = &p->acc.v[d0->pairs[0].a], *bb = &p->acc.v[d0->pairs[0].b];
    const OrnAccess *w = a->ref.write ? a : bb, *r = w == a ? bb : a;
    if (r != w)
        orn_diag(dg, ORN_WARNING, w->span,
                 "parallel_for runs serially: no parallel schedule keeps the dependence %s "
                 "between '%s' (%s%s) and '%s' (%s) in two iterations",
                 vec_str(u, &d0->v), acc_text(u, w), orn_access_kind(w),
                 w->via_value ? " of the value variable" : "", acc_text(u, r), orn_access_kind(r));
    else
        orn_diag(dg, ORN_WARNING, w->span,
                 "parallel_for runs serially: no parallel schedule keeps the dependence %s "
                 "between two iterations that both %s '%s'",
                 vec_str(u, &d0->v), w->ref.read ? "read and write" : "write", acc_text(u, w));
    if (r != w)
        orn_diag(dg, ORN_NOTE, r->span, "'%s' is the other access (%s)", acc_text(u, r),
                 orn_access_kind(r));
    if (w->callee)
        orn_diag(dg, ORN_NOTE, w->call_site, "the access is in '%s', called here",
                 w->callee->u.fn.id->s);
    for (int i = 1; i < c->nculprits && i < 4; i++) {
        const OrnLoopDep *d = &p->deps[c->culprits[i]];
        const OrnAccess *x = &p->acc.v[d->pairs[0].a], *y = &p->acc.v[d->pairs[0].b];
        orn_diag(dg, ORN_NOTE, x->span, "also dependence %s: '%s' (%s) and '%s' (%s)",
                 vec_str(u, &d->v), acc_text(u, x), orn_access_kind(x), acc_text(u, y),
                 orn_access_kind(y));
    }
    if (c->nculprits > 4) orn_note_plain(dg, "and %d more dependence vectors", c->nculprits - 4);
    orn_diag(dg, ORN_NOTE, p->loop->node->span.line ? p->loop->node->span : w->span,
             "the loop runs one iteration at a time, in key order");
    /* how to change it */
    int m;
    if (has_unknown(w, &m) || has_unknown(r, &m)) {
        const OrnAccess *x = has_unknown(w, &m) ? w : r;
        if (x->why_unknown[m])
            orn_note_plain(dg,
                           "the subscript '%s' of '%s' is not a*k + c in a loop key (%s), "
                           "so the access may touch any element",
                           span_text(u, x->sub_span[m]), acc_text(u, x), x->why_unknown[m]);
        else
            orn_note_plain(dg,
                           "the subscript '%s' of '%s' is not a*k + c in a loop key, so the "
                           "access may touch any element",
                           span_text(u, x->sub_span[m]), acc_text(u, x));
    }
    bool hinted = false;
    if (p->ordered) {
        const char *alt = what_if(b, false, -1);
        hinted |= alt != NULL;
        if (alt)
            orn_note_plain(dg,
                           "if any order of the iterations gives an acceptable result, remove "
                           "@ordered: the loop could then run as %s",
                           alt);
    }
    /* a buffer for the array written by += / -= (every write of it must be one) */
    const OrnAccess *x = w->ref.write ? w : r;
    bool additive =
        x->ref.write && !x->via_value && x->array->type && x->array->type->kind == T_ARRAY;
    for (int i = 0; i < p->acc.n && additive; i++) {
        const OrnAccess *y = &p->acc.v[i];
        if (y->ref.array == x->ref.array && y->ref.write && !y->additive) additive = false;
    }
    if (additive) {
        const char *alt = what_if(b, p->ordered, x->ref.array);
        const char *an = x->array->name->s;
        hinted |= alt != NULL;
        if (alt)
            orn_note_plain(dg,
                           "if reads of '%s' may lag behind its updates by up to one flush, "
                           "update it through a buffer ('dist %s_delta = buffer(%s)', then "
                           "'%s_delta[...] += ...'): the loop could then run as %s",
                           an, an, an, an, alt);
    }
    if (!hinted && !has_unknown(w, &m) && !has_unknown(r, &m))
        orn_note_plain(dg,
                       "no rewrite the compiler knows of (%sa buffer) makes this loop "
                       "parallel; run serially, it gives the right result",
                       p->ordered ? "removing @ordered, " : "");
}

/* ---- per loop ---- */

static void analyze_loop(OrnUnit *u, const OrnLoop *l, OrnLoopPlan *p, Cuts *cuts)
{
    Builder b;
    memset(&b, 0, sizeof b);
    b.u = u;
    b.p = p;
    memset(p, 0, sizeof *p);
    p->loop = l;
    p->line = (int)l->node->span.line;
    p->ordered = l->node->u.parfor.ordered;
    p->nkeys = l->nkeys;
    for (int k = 0; k < l->nkeys; k++) p->keys[k] = l->keys[k] ? l->keys[k]->name->s : "?";

    orn_access_collect(u, l, &p->acc);
    find_deps(&b);
    summarize_arrays(&b, cuts);

    OrnDepVec *vecs = orn_arena_alloc(u->arena, (size_t)(p->ndeps + 1) * sizeof *vecs);
    for (int i = 0; i < p->ndeps; i++) vecs[i] = p->deps[i].v;
    p->problem.nkeys = p->nkeys;
    for (int k = 0; k < p->nkeys; k++) p->problem.keys[k] = p->keys[k];
    p->problem.ordered = p->ordered;
    p->problem.sparse_space = l->space->type && l->space->type->sparse;
    p->problem.vecs = vecs;
    p->problem.nvecs = p->ndeps;

    orn_plan_choose(u->arena, &p->problem, &p->choice);
    p->sched = p->choice.best;
    for (int k = 0; k < p->narrays; k++) {
        p->arrays[k].role = p->choice.roles[k];
        if (p->arrays[k].role == ORN_ROLE_PARTITIONED && !p->arrays[k].info.is_buffer)
            set_cut(cuts, p->arrays[k].sym,
                    orn_plan_cut_dims(&p->problem, &p->sched, &p->arrays[k].info));
    }
    p->blocks_per_rank = p->sched.strategy == ORN_STRAT_SERIAL ? 0 : 2;

    strategy_notes(&b);
    if (p->sched.strategy != ORN_STRAT_SERIAL) {
        char cost[256];
        orn_plan_cost_text(&p->problem, &p->sched, cost, sizeof cost);
        note(&b, ORN_NOTE_STRATEGY, -1, "estimated communication cost %s", cost);
    }
    candidate_notes(&b);
    role_notes(&b);
    other_notes(&b);
    p->notes = orn_arena_alloc(u->arena, (size_t)(b.nnotes + 1) * sizeof *p->notes);
    if (b.nnotes) memcpy(p->notes, b.notes, (size_t)b.nnotes * sizeof *b.notes);
    p->nnotes = b.nnotes;
    free(b.notes);

    if (p->sched.strategy == ORN_STRAT_SERIAL) serial_warning(&b);
}

bool orn_analyze(OrnUnit *u, OrnPlanSet *out)
{
    memset(out, 0, sizeof *out);
    int n = 0;
    for (int i = 0; i < u->sema.nloops; i++) {
        const OrnLoop *l = u->sema.loops[i];
        if (l && l->space && l->nkeys >= 1 && l->nkeys <= ORN_DEP_MAXDIM) n++;
    }
    out->loops = orn_arena_alloc(u->arena, (size_t)(n + 1) * sizeof *out->loops);
    Cuts cuts = {0};
    for (int i = 0; i < u->sema.nloops; i++) {
        const OrnLoop *l = u->sema.loops[i];
        if (!l || !l->space || l->nkeys < 1 || l->nkeys > ORN_DEP_MAXDIM) continue;
        analyze_loop(u, l, &out->loops[out->nloops++], &cuts);
    }
    free(cuts.sym);
    free(cuts.dims);
    orn_layout_choose(u, out, &out->layout);
    return true;
}
