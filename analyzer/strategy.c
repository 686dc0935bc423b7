/* strategy.c: enumerate the candidate schedules, keep the legal ones, pick the best, assign
 * array roles; the serial fallback.
 *
 * Serial: one rank runs every iteration in key order, with the iteration space and the
 * arrays it writes gathered there. Always legal. Cost model: ORN_COST_BASE_SERIAL =
 * 1000, and arrays it writes are written remotely: it is the last resort, and the compiler
 * warns when it is chosen, naming the dependences that broke the closest parallel
 * candidate. */
#include "strategy_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_rt.h"

const char *orn_plan_strategy_name(OrnStrategy s)
{
    switch (s) {
    case ORN_STRAT_1D:
        return "1d";
    case ORN_STRAT_2D:
        return "2d";
    case ORN_STRAT_2D_ORDERED:
        return "2d_ordered";
    case ORN_STRAT_UNIMODULAR:
        return "unimodular";
    case ORN_STRAT_SERIAL:
        return "serial";
    }
    return "?";
}

const char *orn_plan_role_name(OrnRole r)
{
    switch (r) {
    case ORN_ROLE_PARTITIONED:
        return "partitioned";
    case ORN_ROLE_ROTATED:
        return "rotated";
    case ORN_ROLE_REPLICATED:
        return "replicated";
    case ORN_ROLE_PREFETCHED:
        return "prefetched";
    case ORN_ROLE_BUFFERED:
        return "buffered";
    case ORN_ROLE_REMOTE:
        return "remote";
    }
    return "?";
}

void orn_plan_identity(OrnDepMat *T)
{
    memset(T, 0, sizeof *T);
    for (int i = 0; i < ORN_DEP_MAXDIM; i++) T->m[i][i] = 1;
}

int orn_plan_oriented(const OrnPlanProblem *pb, const OrnDepMat *T, const OrnDepVec *v,
                      OrnDepVec *out)
{
    int n = orn_dep_lexpos(v, out);
    for (int i = 0; i < n; i++) orn_dep_transform(pb->nkeys, T, &out[i], &out[i]);
    return n;
}

/* Keys that row d of the schedule's coordinates mentions. */
static unsigned row_keys(const OrnPlanProblem *pb, const OrnPlanSchedule *s, int d)
{
    if (!s->transformed) return 1u << d;
    unsigned m = 0;
    for (int c = 0; c < pb->nkeys; c++)
        if (s->T.m[d][c]) m |= 1u << c;
    return m;
}

static unsigned aligned_mask(const OrnPlanArray *a)
{
    unsigned m = 0;
    for (int d = 0; d < a->ndims; d++)
        if (a->key_of_dim[d] >= 0) m |= 1u << a->key_of_dim[d];
    return m;
}

static bool uses_rotation(const OrnPlanSchedule *s)
{
    OrnStrategy st = s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy;
    return st == ORN_STRAT_2D || st == ORN_STRAT_2D_ORDERED;
}

static OrnRole role_of_any(const OrnPlanProblem *pb, const OrnPlanSchedule *s,
                           const OrnPlanArray *a);
static bool has_halo(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnPlanArray *a);

/* 1d and 2d blocks read elements of other blocks only where nobody writes them during the
 * loop (ghost cells of read-only arrays): an array written in the loop and read at k + c
 * (c != 0) along a cut dimension cannot be held there by blocks. Wavefronts and skewed
 * schedules read anywhere (their steps separate writers from readers). */
static bool written_halo(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnPlanArray *a)
{
    OrnStrategy st = s->strategy;
    if (!a->written || (st != ORN_STRAT_1D && st != ORN_STRAT_2D)) return false;
    return has_halo(pb, s, a);
}

/* A sparse array whose rows are iterated keeps whole rows in a block only when it is cut
 * along dimension 0 by the key of the rows iterated (A[k, :]); else every rank gets a copy
 * (or, written, it is remote). */
static OrnRole role_of(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnPlanArray *a)
{
    OrnRole r = role_of_any(pb, s, a);
    if (!a->sparse_rows || a->is_space || (r != ORN_ROLE_PARTITIONED && r != ORN_ROLE_ROTATED))
        return r;
    if (a->row_key >= 0 && a->key_of_dim[0] == a->row_key && a->halo_lo[0] == 0 &&
        a->halo_hi[0] == 0)
        return r;
    return a->written ? ORN_ROLE_REMOTE : ORN_ROLE_REPLICATED;
}

static OrnRole role_of_any(const OrnPlanProblem *pb, const OrnPlanSchedule *s,
                           const OrnPlanArray *a)
{
    if (a->is_buffer) return ORN_ROLE_BUFFERED;
    if (a->is_space) return ORN_ROLE_PARTITIONED;
    unsigned am = written_halo(pb, s, a) ? 0 : aligned_mask(a);
    /* serial: one rank runs everything; arrays that follow the first key are gathered
     * with the iteration space (the runtime treats every array of a serial loop so) */
    unsigned stay = s->strategy == ORN_STRAT_SERIAL ? 1u : row_keys(pb, s, s->dims[0]);
    if ((am & stay) == stay) return ORN_ROLE_PARTITIONED;
    if (s->strategy != ORN_STRAT_SERIAL && uses_rotation(s)) {
        unsigned move = row_keys(pb, s, s->dims[1]);
        if ((am & move) == move) return ORN_ROLE_ROTATED;
    }
    return orn_plan_unaligned_role(pb, a);
}

OrnRole orn_plan_unaligned_role(const OrnPlanProblem *pb, const OrnPlanArray *a)
{
    if (a->written) return ORN_ROLE_REMOTE;
    if (a->only_const) return ORN_ROLE_REPLICATED;
    /* rows of a sparse array at rows the blocks do not own: a copy on every rank */
    if (a->sparse_rows) return ORN_ROLE_REPLICATED;
    if (a->varying_unknown || a->overhang) return ORN_ROLE_PREFETCHED;
    /* indexed by keys the blocks do not follow: a dense space reads all of it */
    if (a->keys_mask) return pb->sparse_space ? ORN_ROLE_PREFETCHED : ORN_ROLE_REPLICATED;
    return ORN_ROLE_REPLICATED;
}

bool orn_plan_roles(const OrnPlanProblem *pb, const OrnPlanSchedule *s, OrnRole *out)
{
    for (int i = 0; i < pb->narrays; i++) out[i] = role_of(pb, s, &pb->arrays[i]);
    return orn_plan_rt_runnable(pb, s, out, NULL, NULL);
}

bool orn_plan_runnable(const OrnPlanProblem *pb, const OrnPlanSchedule *s)
{
    OrnRole *r = orn_xmalloc((size_t)(pb->narrays + 1) * sizeof *r);
    bool ok = orn_plan_roles(pb, s, r);
    free(r);
    return ok;
}

/* A partitioned array reads a halo when a partition key's dimension has offsets. */
bool orn_plan_dim_has_halo(const OrnPlanArray *a, int m)
{
    /* a block [lo, hi] of the key owns elements a*lo .. a*hi + |a| - 1 of the dimension */
    long long span = a->coef[m] < 0 ? -a->coef[m] : a->coef[m];
    return a->win_lo[m] || a->halo_lo[m] < 0 || a->halo_hi[m] > span - 1;
}

static bool has_halo(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnPlanArray *a)
{
    if (s->strategy == ORN_STRAT_SERIAL) return false;
    unsigned part = 0;
    for (int d = 0; d < s->ndims; d++) part |= row_keys(pb, s, s->dims[d]);
    for (int m = 0; m < a->ndims; m++)
        if (a->key_of_dim[m] >= 0 && (part >> a->key_of_dim[m] & 1u) && orn_plan_dim_has_halo(a, m))
            return true;
    return false;
}

static int base_cost(const OrnPlanSchedule *s, const char **what)
{
    OrnStrategy st = s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy;
    switch (st) {
    case ORN_STRAT_1D:
        *what = NULL;
        return ORN_COST_BASE_1D;
    case ORN_STRAT_2D:
        *what = "synchronised rotation steps";
        return ORN_COST_BASE_2D;
    case ORN_STRAT_2D_ORDERED:
        *what = "wavefront fill and drain";
        return ORN_COST_BASE_WAVEFRONT;
    default:
        *what = "one iteration at a time";
        return ORN_COST_BASE_SERIAL;
    }
}

static bool small(const OrnPlanArray *a)
{
    return (a->est_elems >= 0 && a->est_elems <= ORN_EXTENT_SMALL) || a->within_space;
}

unsigned orn_plan_cut_dims(const OrnPlanProblem *pb, const OrnPlanSchedule *s,
                           const OrnPlanArray *a)
{
    (void)pb;
    if (s->strategy != ORN_STRAT_1D || s->transformed) return 0;
    unsigned m = 0;
    for (int d = 0; d < a->ndims; d++)
        if (a->key_of_dim[d] == s->dims[0]) m |= 1u << d;
    return m;
}

/* Whether partitioning a under s moves it from the cut of the loop before (strategy_int.h). */
static bool repartitions(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnPlanArray *a)
{
    if (!a->prev_dims || small(a) || a->is_buffer) return false;
    unsigned now = orn_plan_cut_dims(pb, s, a);
    return now && now != a->prev_dims;
}

static int role_cost(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnPlanArray *a,
                     OrnRole r)
{
    switch (r) {
    case ORN_ROLE_PARTITIONED: {
        int c = a->space_misaligned ? ORN_COST_PREFETCHED : has_halo(pb, s, a) ? ORN_COST_HALO : 0;
        return c + (repartitions(pb, s, a) ? ORN_COST_REPARTITION : 0);
    }
    case ORN_ROLE_ROTATED:
        return small(a) ? ORN_COST_SMALL : ORN_COST_ROTATED;
    case ORN_ROLE_REPLICATED:
        return small(a) ? ORN_COST_SMALL : ORN_COST_REPLICATED;
    case ORN_ROLE_PREFETCHED:
        return small(a) ? ORN_COST_SMALL : ORN_COST_PREFETCHED;
    case ORN_ROLE_BUFFERED:
        return ORN_COST_BUFFERED;
    case ORN_ROLE_REMOTE:
        return ORN_COST_REMOTE;
    }
    return 0;
}

static int cost_of(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnRole *roles)
{
    const char *what;
    int cost = base_cost(s, &what);
    if (s->strategy == ORN_STRAT_UNIMODULAR) cost += ORN_COST_BASE_TRANSFORM;
    for (int i = 0; i < pb->narrays; i++) cost += role_cost(pb, s, &pb->arrays[i], roles[i]);
    return cost;
}

int orn_plan_cost(const OrnPlanProblem *pb, const OrnPlanSchedule *s)
{
    OrnRole *roles = orn_xmalloc((size_t)(pb->narrays + 1) * sizeof *roles);
    orn_plan_roles(pb, s, roles);
    int cost = cost_of(pb, s, roles);
    free(roles);
    return cost;
}

void orn_plan_cost_text(const OrnPlanProblem *pb, const OrnPlanSchedule *s, char *buf, int size)
{
    const char *what;
    int base = base_cost(s, &what);
    OrnRole *roles = orn_xmalloc((size_t)(pb->narrays + 1) * sizeof *roles);
    orn_plan_roles(pb, s, roles);
    int len = snprintf(buf, (size_t)size, "%d", cost_of(pb, s, roles));
    const char *sep = ": ";
    for (int i = 0; i < pb->narrays && len < size; i++) {
        const OrnPlanArray *a = &pb->arrays[i];
        OrnRole r = roles[i];
        int c = role_cost(pb, s, a, r);
        if (!c) continue;
        bool moved = r == ORN_ROLE_PARTITIONED && repartitions(pb, s, a);
        bool discounted =
            (r == ORN_ROLE_REPLICATED || r == ORN_ROLE_PREFETCHED || r == ORN_ROLE_ROTATED) &&
            small(a);
        const char *how = r != ORN_ROLE_PARTITIONED                ? (discounted ? " (small)" : "")
                          : a->space_misaligned                    ? " and read across blocks"
                          : c > (moved ? ORN_COST_REPARTITION : 0) ? " with a halo"
                                                                   : "";
        len += snprintf(buf + len, (size_t)(size - len), "%s%s %s%s%s %d", sep, a->name,
                        orn_plan_role_name(r), how,
                        moved ? ", moved from the last loop's partition" : "", c);
        sep = ", ";
    }
    if (base && len < size)
        len += snprintf(buf + len, (size_t)(size - len), "%s%d for %s", sep, base, what),
            sep = ", ";
    if (s->strategy == ORN_STRAT_UNIMODULAR && len < size)
        len += snprintf(buf + len, (size_t)(size - len), "%s%d for the transformed blocks", sep,
                        ORN_COST_BASE_TRANSFORM),
            sep = ", ";
    if (sep[0] == ':' && len < size) snprintf(buf + len, (size_t)(size - len), " (nothing moves)");
    free(roles);
}

const char *orn_plan_schedule_text(const OrnPlanProblem *pb, const OrnPlanSchedule *s, char *buf,
                                   int size)
{
    char d0[64], d1[64];
    OrnStrategy st = s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy;
    if (s->strategy == ORN_STRAT_SERIAL || s->ndims == 0) {
        snprintf(buf, (size_t)size, "serial");
        return buf;
    }
    orn_plan_dim_name(pb, s, s->dims[0], d0, sizeof d0);
    if (st == ORN_STRAT_1D)
        snprintf(buf, (size_t)size, "%s1d along %s",
                 s->strategy == ORN_STRAT_UNIMODULAR ? "unimodular, then " : "", d0);
    else
        snprintf(buf, (size_t)size, "%s%s over (%s, %s)",
                 s->strategy == ORN_STRAT_UNIMODULAR ? "unimodular, then " : "",
                 orn_plan_strategy_name(st), d0,
                 orn_plan_dim_name(pb, s, s->dims[1], d1, sizeof d1));
    return buf;
}

const char *orn_plan_dim_name(const OrnPlanProblem *pb, const OrnPlanSchedule *s, int d, char *buf,
                              int size)
{
    if (!s->transformed) {
        snprintf(buf, (size_t)size, "%s", pb->keys[d]);
        return buf;
    }
    /* positive terms first: "j-i", "i+j", "2*i-j" */
    int len = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < pb->nkeys && len < size; c++) {
            int f = s->T.m[d][c];
            if (!f || (pass == 0) != (f > 0)) continue;
            const char *sign = f < 0 ? "-" : len ? "+" : "";
            int af = f < 0 ? -f : f;
            if (af == 1)
                len += snprintf(buf + len, (size_t)(size - len), "%s%s", sign, pb->keys[c]);
            else
                len += snprintf(buf + len, (size_t)(size - len), "%s%d*%s", sign, af, pb->keys[c]);
        }
    return buf;
}

static const char *arena_copy(OrnArena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = orn_arena_alloc(a, n);
    memcpy(p, s, n);
    return p;
}

/* Why the plan check refuses schedule s whatever the roles, or NULL when it runs. */
static const char *refusal(OrnArena *a, const OrnPlanProblem *pb, const OrnPlanSchedule *s)
{
    OrnRole *r = orn_xmalloc((size_t)(pb->narrays + 1) * sizeof *r);
    char why[ORN_PLAN_WHY];
    for (int k = 0; k < pb->narrays; k++) r[k] = role_of(pb, s, &pb->arrays[k]);
    bool ok = orn_plan_rt_runnable(pb, s, r, NULL, why);
    free(r);
    return ok ? NULL : arena_copy(a, why);
}

/* Blocks hold their own part of the iteration space, so a loop that writes the space may
 * cut it only along dimensions that every access subscripts by the dimension's own key,
 * k + c (writes k + 0): otherwise a block writes elements another block holds (the
 * runtime refuses that as a plan violation) or reads them while they are written. */
static bool space_fits(const OrnPlanProblem *pb, const OrnPlanSchedule *s)
{
    unsigned part = 0;
    for (int d = 0; d < s->ndims; d++) part |= row_keys(pb, s, s->dims[d]);
    for (int i = 0; i < pb->narrays; i++) {
        const OrnPlanArray *a = &pb->arrays[i];
        /* rows iterated: whole rows in a block, so cut along dimension 0 only, and only
         * when the rows iterated are the iteration's own (A[k0, :]) */
        if (a->is_space && a->sparse_rows && (part & ~(a->row_key == 0 ? 1u : 0u))) return false;
        if (a->is_space && written_halo(pb, s, a)) return false;
        if (!a->is_space || !a->written) continue;
        for (int m = 0; m < a->ndims; m++)
            if ((part >> m & 1u) && a->key_of_dim[m] != m) return false;
    }
    return true;
}

/* A candidate legal for the dependences but not for the space's placement: illegal, with
 * no dependence to blame (and never the closest one for the serial warning). */
static void require_fit(const OrnPlanProblem *pb, OrnPlanCandidate *c)
{
    if (!c->legal || space_fits(pb, &c->s)) return;
    c->legal = false;
    c->blocker = -1;
    c->nviolations = pb->nvecs + 1;
}

static OrnPlanSchedule plain(OrnStrategy st, int p, int q)
{
    OrnPlanSchedule s;
    memset(&s, 0, sizeof s);
    s.strategy = st;
    s.inner = st;
    s.dims[0] = p;
    s.dims[1] = q;
    s.ndims = st == ORN_STRAT_1D ? 1 : 2;
    orn_plan_identity(&s.T);
    return s;
}

void orn_plan_choose(OrnArena *a, const OrnPlanProblem *pb, OrnPlanChoice *out)
{
    memset(out, 0, sizeof *out);
    int n = pb->nkeys;
    OrnDepMat I;
    orn_plan_identity(&I);

    /* every plain candidate, in order of preference */
    int maxc = n + 2 * n * n;
    out->cands = orn_arena_alloc(a, (size_t)maxc * sizeof *out->cands);
    for (int p = 0; p < n; p++) {
        OrnPlanCandidate *c = &out->cands[out->ncands++];
        c->s = plain(ORN_STRAT_1D, p, -1);
        c->legal = orn_plan_1d_legal(pb, &I, p, &c->blocker, &c->nviolations);
        require_fit(pb, c);
    }
    if (!pb->ordered)
        for (int p = 0; p < n; p++)
            for (int q = 0; q < n; q++) {
                if (p == q) continue;
                OrnPlanCandidate *c = &out->cands[out->ncands++];
                c->s = plain(ORN_STRAT_2D, p, q);
                c->legal = orn_plan_2d_legal(pb, &I, p, q, &c->blocker, &c->nviolations);
                require_fit(pb, c);
            }
    for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++) {
            if (p == q) continue;
            OrnPlanCandidate *c = &out->cands[out->ncands++];
            c->s = plain(ORN_STRAT_2D_ORDERED, p, q);
            c->legal = orn_plan_wavefront_legal(pb, &I, p, q, &c->blocker, &c->nviolations);
            require_fit(pb, c);
        }

    out->best_cand = -1;
    out->closest = -1;
    for (int i = 0; i < out->ncands; i++) {
        OrnPlanCandidate *c = &out->cands[i];
        if (!c->legal) continue;
        /* a legal schedule the runtime cannot run whatever the roles is not a candidate */
        c->refused = refusal(a, pb, &c->s);
        if (c->refused) continue;
        c->s.cost = orn_plan_cost(pb, &c->s);
        if (out->best_cand < 0) {
            out->best_cand = i;
            continue;
        }
        const OrnPlanCandidate *b = &out->cands[out->best_cand];
        if (c->s.strategy < b->s.strategy ||
            (c->s.strategy == b->s.strategy && c->s.cost < b->s.cost))
            out->best_cand = i;
    }

    /* 1d and 2d run every block at once; a wavefront and a transformed schedule compete on
     * cost (a skew that allows 1d beats a plain wavefront) */
    OrnPlanSchedule uni;
    bool have_uni = false;
    if (out->best_cand < 0 || out->cands[out->best_cand].s.strategy == ORN_STRAT_2D_ORDERED)
        have_uni =
            orn_plan_unimodular_search(pb, &uni, &out->unimodular_tried) && space_fits(pb, &uni);
    if (have_uni && (out->best_cand < 0 || uni.cost < out->cands[out->best_cand].s.cost)) {
        out->best = uni;
        out->best_cand = -1;
    } else if (out->best_cand >= 0) {
        out->best = out->cands[out->best_cand].s;
    } else {
        out->best = plain(ORN_STRAT_SERIAL, -1, -1);
        out->best.ndims = 0;
        out->best.cost = orn_plan_cost(pb, &out->best);
        for (int i = 0; i < out->ncands && !out->plan_refused; i++)
            out->plan_refused = out->cands[i].refused;
        /* the closest candidate: fewest violating vectors, earliest on ties */
        for (int i = 0; i < out->ncands; i++)
            if (out->closest < 0 ||
                out->cands[i].nviolations < out->cands[out->closest].nviolations)
                out->closest = i;
        if (out->closest >= 0) {
            const OrnPlanCandidate *c = &out->cands[out->closest];
            out->culprits = orn_arena_alloc(a, (size_t)(pb->nvecs + 1) * sizeof(int));
            for (int i = 0; i < pb->nvecs; i++) {
                OrnPlanProblem one = *pb;
                one.vecs = &pb->vecs[i];
                one.nvecs = 1;
                bool ok;
                if (c->s.strategy == ORN_STRAT_1D)
                    ok = orn_plan_1d_legal(&one, &I, c->s.dims[0], NULL, NULL);
                else if (c->s.strategy == ORN_STRAT_2D)
                    ok = orn_plan_2d_legal(&one, &I, c->s.dims[0], c->s.dims[1], NULL, NULL);
                else
                    ok = orn_plan_wavefront_legal(&one, &I, c->s.dims[0], c->s.dims[1], NULL, NULL);
                if (!ok) out->culprits[out->nculprits++] = i;
            }
        }
    }
    int na = pb->narrays;
    out->roles = orn_arena_alloc(a, (size_t)(na + 1) * sizeof *out->roles);
    out->planned = orn_arena_alloc(a, (size_t)(na + 1) * sizeof *out->planned);
    out->refused = orn_arena_alloc(a, (size_t)(na + 1) * sizeof *out->refused);
    char(*why)[ORN_PLAN_WHY] = orn_xmalloc((size_t)(na + 1) * sizeof *why);
    char plan_why[ORN_PLAN_WHY];
    for (int k = 0; k < na; k++)
        out->planned[k] = out->roles[k] = role_of(pb, &out->best, &pb->arrays[k]);
    if (!orn_plan_rt_runnable(pb, &out->best, out->roles, why, plan_why)) {
        /* only a plan the strategies did not mean to make (every candidate is checked
         * above); serial runs everything */
        out->plan_refused = arena_copy(a, plan_why);
        out->best = plain(ORN_STRAT_SERIAL, -1, -1);
        out->best.ndims = 0;
        out->best.cost = orn_plan_cost(pb, &out->best);
        out->best_cand = -1;
        for (int k = 0; k < na; k++)
            out->planned[k] = out->roles[k] = role_of(pb, &out->best, &pb->arrays[k]);
        orn_plan_rt_runnable(pb, &out->best, out->roles, why, NULL);
    }
    for (int k = 0; k < na; k++) out->refused[k] = why[k][0] ? arena_copy(a, why[k]) : NULL;
    free(why);
}
