/* layout.c: how a plan partitions its arrays: the iteration space balanced along the
 * partitioned key dimensions, every "partitioned" array aligned with it (same boundaries
 * along the dimensions its subscripts tie to those keys, same owners), "replicated" arrays
 * copied everywhere. A partition made for a plan is tagged with the plan's signature, so
 * running a loop again (an epoch) moves nothing and recomputes no histogram. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

int rt_repartition(Exec *x, OrnDsmArray *a, const OrnDsmPart *p)
{
    if (orn_dsm_part_equal(&a->part, p)) return orn_dsm_repartition(a, p); /* slots only */
    x->rt->stats.repartitioned++;
    return orn_dsm_repartition(a, p);
}

int rt_default_blocks(const Exec *x, int i)
{
    /* A unimodular plan run in place (sched_skew.c): bands of full rows. */
    if (x->bands) return i == 0 ? rt_skew_bands(x) : 1;
    int c = x->plan->part_count[i];
    if (c > 0) return c;
    /* One rank, 1d: a second block only splits (copies) the iteration space; its reason to
     * be -- a block to compute while another moves -- needs a second rank. Likewise the
     * wavefront (2d_ordered): at one rank its blocks run one after another anyway, and each
     * block edge took its neighbours' elements through the view's slow path (Gauss-Seidel
     * at 2048^2: 9.2 ms a sweep in 2 x 2 blocks, C 8.2). */
    if (x->P == 1 && (x->plan->strategy == ORN_RT_1D || x->plan->strategy == ORN_RT_2D_ORDERED) &&
        !x->rt->blocks_explicit)
        return 1;
    /* Several ranks, a wavefront whose ghost rows travel (ghost.c): m bands per rank, one
     * column block per rank, so that after the pipeline fills every rank runs one block
     * per step. */
    if (x->plan->strategy == ORN_RT_2D_ORDERED && x->P > 1 && !x->rt->blocks_explicit) {
        int bands = rt_ghost_bands(x);
        if (bands) return i == 0 ? bands : x->P;
    }
    /* One rank, a @gpu loop (whole blocks): the device schedules its block itself, and
     * every block costs a launch and the copies back of what it wrote. */
    if (x->P == 1 && x->loop->whole && !x->rt->blocks_explicit) return 1;
    return x->rt->blocks_per_rank * x->P;
}

int rt_blocks(Exec *x, int i)
{
    return rt_default_blocks(x, i) * (x->sub[i] > 1 ? x->sub[i] : 1);
}

uint64_t rt_plan_sig(const Exec *x, uint64_t salt)
{
    uint64_t v[8] = {(uint64_t)x->plan->strategy,
                     (uint64_t)x->plan->npart,
                     (uint64_t)x->kd[0],
                     (uint64_t)x->kd[1],
                     (uint64_t)x->nb[0],
                     (uint64_t)x->nb[1],
                     (uint64_t)x->P,
                     salt ^ ((uint64_t)(x->split_dim + 1) << 56) ^ ((uint64_t)x->nsplit << 40) ^
                         (uint64_t)x->part_salt};
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 8; i++) h = (h ^ v[i]) * 1099511628211ULL;
    return h | 1;
}

int rt_single_part(const OrnDsmArray *a, int owner, OrnDsmPart *out)
{
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1};
    int status = orn_dsm_part_init(out, a->ndim, nb);
    if (status) return status;
    for (int d = 0; d < a->ndim; d++) {
        out->bounds[d][0] = 0;
        out->bounds[d][1] = a->dims[d];
    }
    out->owner[0] = owner;
    return ORN_OK;
}

/* The one dimension of array pa that key kd indexes (subscript kd + c), or -1 (none, or
 * several). */
static int tied_dim(const OrnRtPlanArray *pa, int kd)
{
    int dim = -1, n = 0;
    for (int d = 0; d < pa->ndim; d++)
        if (pa->key_dim[d] == kd) {
            dim = d;
            n++;
        }
    return n == 1 ? dim : -1;
}

/* An array partitioned with this loop along key kd[i] whose boundaries the iteration
 * space may adopt: dense, cut along one dimension tied to that key into a number of tiles
 * that is a multiple of the loop's blocks, within 4x of the sub-blocks chosen (the largest
 * such array), unless the iteration space is much larger than the array. Adopting its
 * boundaries moves the iteration space once instead of the array at every run, when
 * another loop over another iteration space (SGD MF's held-out ratings) uses the same
 * array. Returns the array's dimension, or -1. */
#define RT_ADOPT_SPARSE 32
#define RT_ADOPT_RUNS   16
/* Whether the T tiles at bounds b cut where partition sp cuts dimension kd (the last
 * bounds may differ: an array longer or shorter than the space). */
static int same_cuts(const int64_t *b, const OrnDsmPart *sp, int kd, int64_t T)
{
    if (sp->nb[kd] != T) return 0;
    for (int64_t g = 1; g < T; g++)
        if (b[g] != sp->bounds[kd][g]) return 0;
    return 1;
}

static int adopt_candidate(Exec *x, int i, OrnDsmArray **out)
{
    const OrnRtPlan *p = x->plan;
    int best = -1;
    int64_t bytes = 0;
    int sub = x->sub[i] > 1 ? x->sub[i] : 1;
    int64_t base = x->nb[i] / sub;
    *out = NULL;
    if (p->strategy != ORN_RT_1D && p->strategy != ORN_RT_2D) return -1;
    for (int k = 1; k < x->n; k++) {
        const OrnRtPlanArray *pa = &p->arrays[k];
        OrnDsmArray *a = x->loop->args[k].array;
        if (pa->role != ORN_RT_PARTITIONED || !a || a->sparse || a == x->iter) continue;
        int dim = tied_dim(pa, x->kd[i]);
        if (dim < 0 || a->part.owner[0] == ORN_DSM_ALL) continue;
        int64_t T = a->part.nb[dim];
        if (T <= 1 || T % base || T / base > 4 * sub || 4 * (T / base) < sub) continue;
        int64_t b = a->nnz * (int64_t)a->esize;
        if (b > bytes) {
            bytes = b;
            best = dim;
            *out = a;
        }
    }
    /* Moving the iteration space once must be cheaper than moving the array at the next
     * few runs: a sparse element costs about RT_ADOPT_SPARSE bytes' worth of work (keys
     * decoded, sent, sorted again). PageRank's 10M edges do not follow a 4 MB vector. */
    int64_t it_bytes = x->iter->nnz * (x->iter->sparse ? RT_ADOPT_SPARSE : (int64_t)x->iter->esize);
    if (best >= 0 && it_bytes > RT_ADOPT_RUNS * bytes) {
        *out = NULL;
        return -1;
    }
    return best;
}

/* Elements of the iteration space per candidate tile along key dimension kd, summed over
 * ranks; the load of the most loaded rank against the mean. */
static int adopt_imbalance(Exec *x, int kd, const int64_t *bounds, int T, RtOwnerFn fn, int i,
                           double *out)
{
    OrnDsmArray *it = x->iter;
    int64_t *cnt = orn_xcalloc((size_t)T, sizeof *cnt);
    for (int64_t t = 0; t < it->part.ntiles; t++) {
        const OrnDsmTile *tl = &it->tiles[t];
        if (!tl->held || (it->part.owner[t] == ORN_DSM_ALL && x->me)) continue;
        int g0 = tl->hi[kd] > tl->lo[kd] ? (int)orn_dsm_last_le(bounds, T, tl->lo[kd]) : -1;
        if (g0 >= 0 && tl->hi[kd] <= bounds[g0 + 1]) {
            /* the tile within one bin: all of it there, no element visited (a space already
             * cut at these bounds) */
            cnt[g0] += tl->n;
        } else if (it->sparse && tl->cols && kd == 0) {
            /* CSR: whole rows per bin, no keys decoded */
            int g = 0;
            for (int64_t r = 0; r < tl->hi[0] - tl->lo[0]; r++) {
                while (g + 1 < T && bounds[g + 1] <= tl->lo[0] + r) g++;
                cnt[g] += tl->rowptr[r + 1] - tl->rowptr[r];
            }
        } else if (it->sparse && tl->cols) {
            for (int64_t e = 0; e < tl->n; e++)
                cnt[orn_dsm_last_le(bounds, T, tl->lo[1] + tl->cols[e])]++;
        } else if (it->sparse) {
            for (int64_t e = 0; e < tl->n; e++) {
                int64_t key[ORN_DSM_MAXDIM];
                orn_dsm_tile_key(it, tl, e, key);
                cnt[orn_dsm_last_le(bounds, T, key[kd])]++;
            }
        } else {
            int64_t other = tl->n / (tl->hi[kd] - tl->lo[kd] > 0 ? tl->hi[kd] - tl->lo[kd] : 1);
            for (int g = 0; g < T; g++) {
                int64_t lo = bounds[g] > tl->lo[kd] ? bounds[g] : tl->lo[kd];
                int64_t hi = bounds[g + 1] < tl->hi[kd] ? bounds[g + 1] : tl->hi[kd];
                if (hi > lo) cnt[g] += (hi - lo) * other;
            }
        }
    }
    int status = orn_dsm_allreduce_i64(x->dsm, cnt, (size_t)T, ORN_DSM_SUM);
    if (!status) {
        int64_t *load = orn_xcalloc((size_t)x->P, sizeof *load), total = 0, max = 0;
        for (int g = 0; g < T; g++) {
            int gg[2] = {-1, -1};
            gg[i] = g;
            int q = fn(x, gg);
            if (q >= 0 && q < x->P) load[q] += cnt[g];
            total += cnt[g];
        }
        for (int q = 0; q < x->P; q++)
            if (load[q] > max) max = load[q];
        *out = total ? (double)max * x->P / (double)total : 1.0;
        free(load);
    }
    free(cnt);
    return status;
}

/* keep_bands, a dense iteration space still in the even bands it was made with: when an
 * array partitioned with the loop is in bands per rank that another loop cut otherwise
 * (PageRank push: pr, cut by the edges' sources; next, the node loop's space, as made),
 * take the array's bands if they keep this loop balanced within 10 %: the iteration space's
 * few boundary elements move once, where the array would move at every run of both loops,
 * each move two collectives (PageRank push at -n 2: 72 elements of pr, 50-100 us per loop
 * and iteration). An iteration space another loop cut already (the pull form's acc, cut by
 * the links' destinations) keeps its bands: following would move it back and forth instead.
 * The largest such array, and not when the iteration space is much larger than it
 * (adopt_candidate). Sparse arrays too: ALS's user half runs over user_n, as made, with the
 * ratings' rows, which the loader cut into bands of equal counts; following them moves a
 * few elements of user_n, where aligning the ratings moved 9 M of them (0.14 s at -n 2, and
 * again for the items). */
static int follow_bands(Exec *x)
{
    OrnDsmArray *it = x->iter, *best = NULL;
    int kd = x->kd[0], P = x->P, bdim = -1;
    int64_t bytes = 0, *even = orn_xcalloc((size_t)P + 1, sizeof *even);
    orn_dsm_bounds_uniform(even, it->dims[kd], P);
    int as_made = 1;
    for (int g = 1; g < P; g++) as_made &= it->part.bounds[kd][g] == even[g];
    for (int k = 1; k < x->n && as_made; k++) {
        const OrnRtPlanArray *pa = &x->plan->arrays[k];
        OrnDsmArray *a = x->loop->args[k].array;
        if (pa->role != ORN_RT_PARTITIONED || !a || a == it) continue;
        int dim = tied_dim(pa, kd);
        if (dim < 0 || a->dims[dim] != it->dims[kd] || a->part.nb[dim] != P) continue;
        int same = 1, ok = 1;
        for (int d = 0; d < a->ndim; d++)
            if (d != dim && a->part.nb[d] != 1) ok = 0;
        int64_t most = 0;
        for (int g = 0; g < P && ok; g++) {
            const int64_t *b = a->part.bounds[dim];
            ok = a->part.owner[g] == g;
            same &= b[g + 1] == it->part.bounds[kd][g + 1];
            if (b[g + 1] - b[g] > most) most = b[g + 1] - b[g];
        }
        if (!ok || same || (double)most * P > 1.10 * (double)it->dims[kd]) continue;
        int64_t ab = a->nnz * (int64_t)a->esize;
        if (it->nnz * (int64_t)it->esize > RT_ADOPT_RUNS * ab || ab <= bytes) continue;
        best = a;
        bdim = dim;
        bytes = ab;
    }
    free(even);
    if (!best) return ORN_OK;
    OrnDsmPart p;
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1};
    nb[kd] = P;
    int status = orn_dsm_part_init(&p, it->ndim, nb);
    if (status) return status;
    for (int d = 0; d < it->ndim; d++) {
        p.bounds[d][0] = 0;
        p.bounds[d][1] = it->dims[d];
    }
    for (int g = 0; g <= P; g++) p.bounds[kd][g] = best->part.bounds[bdim][g];
    for (int g = 0; g < P; g++) p.owner[g] = g;
    status = rt_repartition(x, it, &p);
    orn_dsm_part_free(&p);
    return status;
}

/* A 1d loop over an iteration space already cut along its key into bands, balanced within
 * 10 %: keep those bands as the blocks. Either one band per rank in rank order (what the
 * loaders make: cutting it into 2 P blocks would move most elements between ranks, SLR's
 * first epoch at -n 2: 0.065 s of 0.12, for nothing a 1d loop needs), or m P bands dealt
 * cyclically (x->cyclic: what an in-place wavefront runs on, sched_skew.c, and what such a
 * space is made in, orn_rt_space_part; a 1d loop that sets the grid up before the sweeps
 * would otherwise move it out of them and the first sweep back). Decided from the
 * replicated partition and counts alone, so every rank agrees. */
/* Whether partition cp is bands a 1d loop keeps (keep_bands): cut along key dimension kd
 * alone into B >= P bands, B a multiple of P, one per rank in rank order or dealt
 * cyclically. */
static int kept_shape(const OrnDsmPart *cp, int ndim, int kd, int P)
{
    int B = cp->nb[kd];
    if (B < P || B % P) return 0;
    for (int d = 0; d < ndim; d++)
        if (d != kd && cp->nb[d] != 1) return 0;
    for (int g = 0; g < B; g++)
        if (cp->owner[g] != (B > P ? g % P : g)) return 0;
    return 1;
}

static int keep_bands(Exec *x, int np, RtOwnerFn fn)
{
    const OrnDsmArray *it = x->iter;
    const OrnDsmPart *cp = &it->part;
    int kd = x->kd[0], P = x->P, B = cp->nb[kd];
    if (np != 1 || P == 1 || x->plan->strategy != ORN_RT_1D || x->rt->blocks_explicit ||
        x->plan->part_count[0] > 0 || x->sub[0] > 1 || x->split_dim >= 0 || (B > P && it->sparse) ||
        !kept_shape(cp, it->ndim, kd, P))
        return 0;
    int keep_nb = x->nb[0], ok = 1;
    int64_t total = 0, most = 0, *load = orn_xcalloc((size_t)P, sizeof *load);
    x->nb[0] = B; /* the owner function reads them */
    x->cyclic = B > P;
    for (int g = 0; g < B && ok; g++) {
        int gg[2] = {g, -1}, q = B > P ? g % P : g;
        ok = fn(x, gg) == q;
        load[q] += it->tiles[g].n;
        total += it->tiles[g].n;
    }
    for (int q = 0; q < P; q++)
        if (load[q] > most) most = load[q];
    free(load);
    if (ok && total && (double)most * P > 1.10 * (double)total) ok = 0;
    if (!ok) {
        x->nb[0] = keep_nb;
        x->cyclic = 0;
    }
    return ok;
}

int rt_partition_iter(Exec *x, int np, RtOwnerFn fn)
{
    OrnDsmArray *it = x->iter;
    OrnDsmPart p;
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1}, status;
    OrnDsmArray *cand[2] = {NULL, NULL};
    int cdim[2] = {-1, -1};
    x->part_salt = 0;
    int split = x->split_dim >= 0 && x->nsplit > 1; /* for split_tag (rt_choose_blocking) */
    if (keep_bands(x, np, fn)) return it->sparse ? ORN_OK : follow_bands(x);
    for (int i = 0; i < np; i++) {
        x->nb[i] = rt_blocks(x, i);
        /* Only along the first partitioned key: 2d's ring is laid out along the second. */
        if (i == 0) cdim[i] = adopt_candidate(x, i, &cand[i]);
        if (cdim[i] >= 0) {
            /* The candidate's boundaries and tile count are part of the signature. */
            const int64_t *b = cand[i]->part.bounds[cdim[i]];
            uint64_t h = 1469598103934665603ULL;
            for (int g = 0; g <= cand[i]->part.nb[cdim[i]]; g++)
                h = (h ^ (uint64_t)b[g]) * 1099511628211ULL;
            x->part_salt ^= (int64_t)(h >> 1) + i;
        }
    }
    uint64_t sig0 = rt_plan_sig(x, 0);
    /* An earlier run with the same candidates decided: its tile counts stand. */
    if (it->part_tag == sig0 || it->part_tag == (sig0 ^ 2)) {
        if (it->part_tag == (sig0 ^ 2))
            for (int i = 0; i < np; i++)
                if (cdim[i] >= 0) {
                    int sub = x->sub[i] > 1 ? x->sub[i] : 1;
                    int64_t T = cand[i]->part.nb[cdim[i]];
                    x->sub[i] = (int)(T / (x->nb[i] / sub));
                    x->nb[i] = (int)T;
                }
        return ORN_OK;
    }
    /* A candidate that cuts where the space already is cut, decided without candidates
     * (the tag): an array an earlier run aligned with the space. The space keeps that
     * decision as it was made (SGD MF's second run: the columns' balance over 9M ratings
     * again, 15 ms). Another tag -- an earlier adoption -- decides again below. */
    if (cdim[0] >= 0 && (np < 2 || cdim[1] < 0) &&
        same_cuts(cand[0]->part.bounds[cdim[0]], &it->part, x->kd[0], cand[0]->part.nb[cdim[0]])) {
        int64_t salt = x->part_salt;
        x->part_salt = 0;
        if (it->part_tag == rt_plan_sig(x, 0)) return ORN_OK;
        x->part_salt = salt;
    }
    /* Adopt a candidate's boundaries when the load stays balanced (within 10%). */
    int adopted[2] = {0, 0}, any = 0;
    int keep_nb[2] = {x->nb[0], x->nb[1]}, keep_sub[2] = {x->sub[0], x->sub[1]};
    for (int i = 0; i < np; i++) {
        if (cdim[i] < 0) continue;
        int sub = x->sub[i] > 1 ? x->sub[i] : 1;
        int T = cand[i]->part.nb[cdim[i]];
        x->sub[i] = T / (x->nb[i] / sub);
        x->nb[i] = T;
        double imb = 1.0;
        status = adopt_imbalance(x, x->kd[i], cand[i]->part.bounds[cdim[i]], T, fn, i, &imb);
        if (status) return status;
        if (imb <= 1.10) {
            adopted[i] = 1;
            any = 1;
        } else {
            x->nb[i] = keep_nb[i];
            x->sub[i] = keep_sub[i];
        }
    }
    if (any)
        for (int i = 0; i < np; i++)
            if (!adopted[i] && cdim[i] >= 0) {
                x->nb[i] = keep_nb[i];
                x->sub[i] = keep_sub[i];
            }
    for (int i = 0; i < np; i++) nb[x->kd[i]] = x->nb[i];
    if (x->split_dim >= 0 && x->nsplit > 1) nb[x->split_dim] = x->nsplit;
    uint64_t sig = any ? sig0 ^ 2 : sig0;
    status = orn_dsm_part_init(&p, it->ndim, nb);
    if (status) return rt_fail(x, ORN_E_PLAN, "bad block counts");
    for (int d = 0; d < it->ndim && !status; d++) {
        int i = d == x->kd[0] ? 0 : np > 1 && d == x->kd[1] ? 1 : -1;
        if (i >= 0 && adopted[i]) {
            const int64_t *b = cand[i]->part.bounds[cdim[i]];
            for (int g = 0; g <= nb[d]; g++) {
                p.bounds[d][g] = b[g] < it->dims[d] ? b[g] : it->dims[d];
                if (g && p.bounds[d][g] < p.bounds[d][g - 1]) p.bounds[d][g] = p.bounds[d][g - 1];
            }
            p.bounds[d][0] = 0;
            p.bounds[d][nb[d]] = it->dims[d];
        } else if (nb[d] > 1) {
            status = orn_dsm_balance(it, d, nb[d], p.bounds[d]);
        } else {
            p.bounds[d][0] = 0;
            p.bounds[d][1] = it->dims[d];
        }
    }
    for (int64_t t = 0; t < p.ntiles && !status; t++) {
        int grid[ORN_DSM_MAXDIM], g[2] = {-1, -1};
        orn_dsm_part_unravel(&p, t, grid);
        for (int i = 0; i < np; i++) g[i] = grid[x->kd[i]];
        p.owner[t] = fn(x, g);
    }
    if (!status) status = rt_repartition(x, it, &p);
    if (!status) it->part_tag = sig;
    if (!status) it->split_tag = split ? sig : 0;
    orn_dsm_part_free(&p);
    return status;
}

int rt_aligned_part(Exec *x, OrnDsmArray *a, const int *key_dim, int np, RtOwnerFn fn,
                    OrnDsmPart *out)
{
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1}, map[ORN_DSM_MAXDIM] = {-1, -1, -1, -1};
    const OrnDsmPart *ip = &x->iter->part;
    for (int d = 0; d < a->ndim; d++)
        for (int i = 0; i < np; i++)
            if (key_dim[d] == x->kd[i]) {
                map[d] = i;
                nb[d] = ip->nb[x->kd[i]];
            }
    int status = orn_dsm_part_init(out, a->ndim, nb);
    if (status) return status;
    for (int d = 0; d < a->ndim; d++) {
        int64_t *b = out->bounds[d];
        if (map[d] < 0) {
            b[0] = 0;
            b[1] = a->dims[d];
            continue;
        }
        const int64_t *src = ip->bounds[x->kd[map[d]]];
        for (int k = 0; k < nb[d]; k++) {
            b[k] = src[k] < a->dims[d] ? src[k] : a->dims[d];
            if (k && b[k] < b[k - 1]) b[k] = b[k - 1];
        }
        b[0] = 0;
        b[nb[d]] = a->dims[d];
    }
    for (int64_t t = 0; t < out->ntiles; t++) {
        int grid[ORN_DSM_MAXDIM], g[2] = {-1, -1};
        orn_dsm_part_unravel(out, t, grid);
        for (int d = 0; d < a->ndim; d++)
            if (map[d] >= 0 && g[map[d]] < 0) g[map[d]] = grid[d];
        out->owner[t] = fn(x, g);
    }
    return ORN_OK;
}

int orn_rt_aligned_part_for(OrnRtCtx *rt, const OrnRtPlan *p, int k, const OrnDsmArray *space,
                            int ndim, const int64_t *dims, OrnDsmPart *out)
{
    int P = orn_dsm_size(rt->dsm);
    if (!space || P < 2 || !p || p->strategy != ORN_RT_1D || k < 1 || k >= p->narrays) return 0;
    const OrnRtPlanArray *pa = &p->arrays[k];
    int kd = p->part_dims[0], dim = tied_dim(pa, kd);
    if (pa->role != ORN_RT_PARTITIONED || pa->ndim != ndim || dim < 0 || kd >= space->ndim)
        return 0;
    /* the space's bands as a 1d loop keeps them (keep_bands) */
    const OrnDsmPart *sp = &space->part;
    int B = sp->nb[kd];
    if (!kept_shape(sp, space->ndim, kd, P)) return 0;
    int nb[ORN_DSM_MAXDIM] = {1, 1, 1, 1};
    nb[dim] = B;
    if (orn_dsm_part_init(out, ndim, nb)) return 0;
    for (int d = 0; d < ndim; d++) {
        out->bounds[d][0] = 0;
        out->bounds[d][1] = dims[d];
    }
    for (int g = 0; g <= B; g++) {
        int64_t b = sp->bounds[kd][g] < dims[dim] ? sp->bounds[kd][g] : dims[dim];
        out->bounds[dim][g] = g && b < out->bounds[dim][g - 1] ? out->bounds[dim][g - 1] : b;
    }
    out->bounds[dim][0] = 0;
    out->bounds[dim][B] = dims[dim];
    for (int g = 0; g < B; g++) out->owner[g] = sp->owner[g];
    return 1;
}

static int replicated(const OrnDsmArray *a)
{
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (a->part.owner[t] == ORN_DSM_ALL) return 1;
    return 0;
}

int rt_partition_args(Exec *x, int np, RtOwnerFn fn)
{
    for (int k = 1; k < x->n; k++) {
        const OrnRtPlanArray *pa = &x->plan->arrays[k];
        OrnDsmArray *a = x->loop->args[k].array;
        int role = x->views[k].role; /* serial: remote arrays move like partitioned ones */
        OrnDsmPart part;
        int status = ORN_OK;
        if (role == ORN_RT_PARTITIONED) {
            status = rt_aligned_part(x, a, pa->key_dim, np, fn, &part);
            /* a sparse array another loop's space aligns: a loop over it does not cut it
             * along a second key for the cache (rt_choose_blocking), which this loop would
             * undo, moving every element twice (ALS: the evaluation over the ratings, and
             * the user half's rows, 0.2 and 0.15 s at -n 2) */
            if (a->sparse) a->split_off = 1;
        } else if (role == ORN_RT_REPLICATED)
            status = rt_single_part(a, ORN_DSM_ALL, &part);
        else if (role == ORN_RT_REMOTE && replicated(a))
            /* a copy on every rank (replicated by an earlier loop) would take only its own
             * rank's writes: give the array owners again */
            status = orn_dsm_part_default(x->dsm, a->ndim, a->dims, &part);
        else
            continue;
        if (!status) status = rt_repartition(x, a, &part);
        orn_dsm_part_free(&part);
        if (status) return status;
    }
    return ORN_OK;
}

static int64_t array_bytes(const OrnDsmArray *a)
{
    return a->sparse ? a->nnz * (int64_t)(a->esize + 8) : a->nnz * (int64_t)a->esize;
}

/* A read-only rotated array of S bytes at P ranks. Rotating it moves (P-1)/P S into every
 * rank at every run of the loop (overlapped with computation, but again at every run); a
 * whole copy on every rank moves the same once, and later runs find it in place (its
 * partition is kept) -- at the price of S bytes per rank instead of S/P. So the copy wins
 * whenever it fits: up to replicate_max bytes ($ORN_REPLICATE_MAX, 64 MiB) the array is
 * replicated for the loop, larger ones travel. An array that a buffer of the loop updates
 * changes at its flushes, and at one rank nothing moves either way (the rotation's tiles
 * keep their cache blocking): those rotate as planned. */
void rt_choose_rotated(Exec *x)
{
    if (x->P < 2) return;
    for (int k = 1; k < x->n; k++) {
        const ViewImpl *vi = &x->vi[k];
        if (x->views[k].role != ORN_RT_ROTATED || !vi->read_only || vi->buffered) continue;
        if (array_bytes(vi->store) <= x->rt->replicate_max) x->views[k].role = ORN_RT_REPLICATED;
    }
}

/* Bytes that travel at every run of x's loop under plan p: its rotated arrays, but those
 * that rt_choose_rotated will copy once instead. */
static int64_t travelling_bytes(const Exec *x, const OrnRtPlan *p)
{
    int64_t sum = 0;
    for (int k = 1; k < p->narrays; k++) {
        if (p->arrays[k].role != ORN_RT_ROTATED) continue;
        const OrnDsmArray *a = x->loop->args[k].array;
        int buffered = 0;
        for (int j = 0; j < p->narrays; j++)
            buffered |= p->arrays[j].role == ORN_RT_BUFFERED && x->loop->args[j].buffer &&
                        x->loop->args[j].buffer->target == a;
        if (p->arrays[k].read_only && !buffered && array_bytes(a) <= x->rt->replicate_max) continue;
        sum += array_bytes(a);
    }
    return sum;
}

/* Which side rotates. A 2d plan keeps the blocks of key k0 on their ranks and rotates the
 * arrays that follow k1 alone; its legality (every dependence 0 in k0 or in k1) is
 * symmetric, so the same loop may as well keep k1 and rotate the arrays that follow k0
 * alone. The analyzer cannot choose -- array sizes are known at run time -- and keeps the
 * first key (SGD MF: W with the users stays, H with the items rotates). Per run, every rank
 * sends the travelling arrays' bytes once (sched_2d_rotation.c: R b per epoch, the
 * bandwidth bound), and how the loop was written decides which side that is: SGD MF over
 * ratings keyed (item, user) on Netflix-shaped data (480,000 users, 17,700 items) would
 * rotate W, 27 times H's bytes.
 * Cost model: the swap pays in bytes (R b per epoch) and costs in computation: the ring
 * steps follow the rotating key, so the kept side's sub-blocks are swept per step against
 * one rotating tile, and the randomly read factor stays less hot in the cache (measured,
 * 40,000 users x 60,000 items at K = 100, W instead of H rotating, 1.5 times fewer bytes:
 * computation 4 % slower over shared memory, the epoch 2 % slower there and 1.5 % faster
 * on a 1 Gbit/s link). So the sides swap only where the planned side travels at least
 * twice the other's bytes, with two ranks or more (nothing moves at one) and the swapped
 * plan passing the plan check. The choice depends on the plan and the arrays' sizes only:
 * the same on every rank and at every run. $ORN_ROTATE=planned keeps the plan's side. The
 * updates' order -- hence the results -- differ between the two sides, as between rank
 * counts; both are orders of an unordered loop. */
void rt_choose_orientation(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    if (x->P < 2 || x->rt->rotate_planned || p->strategy != ORN_RT_2D || p->npart != 2) return;
    int k0 = p->part_dims[0], k1 = p->part_dims[1], n = p->narrays;
    OrnRtPlan *s = orn_xmalloc(sizeof *s);
    OrnRtPlanArray *arr = orn_xmalloc((size_t)n * sizeof *arr);
    OrnRtPlanFacts *facts = orn_xcalloc((size_t)n, sizeof *facts);
    *s = *p;
    memcpy(arr, p->arrays, (size_t)n * sizeof *arr);
    s->arrays = arr;
    s->part_dims[0] = k1;
    s->part_dims[1] = k0;
    s->part_count[0] = p->part_count[1];
    s->part_count[1] = p->part_count[0];
    for (int k = 0; k < n; k++) {
        const OrnRtArg *g = &x->loop->args[k];
        const OrnDsmArray *a = arr[k].role == ORN_RT_BUFFERED ? g->buffer->target : g->array;
        facts[k].sparse = a->sparse;
        if (k == 0) continue;
        if (arr[k].role == ORN_RT_ROTATED)
            arr[k].role = ORN_RT_PARTITIONED;
        else if (arr[k].role == ORN_RT_PARTITIONED && rt_tied(&arr[k], k0) && !rt_tied(&arr[k], k1))
            arr[k].role = ORN_RT_ROTATED;
    }
    char msg[256];
    int swap = orn_rt_plan_check(s, facts, msg, (int)sizeof msg) < 0 &&
               2 * travelling_bytes(x, s) <= travelling_bytes(x, p);
    free(facts);
    if (!swap) {
        free(arr);
        free(s);
        return;
    }
    x->own_plan = s;
    x->own_arrays = arr;
    x->plan = s;
}

void rt_choose_unskewed(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    if (rt_rect_bands(x) && rt_skew_bands(x)) {
        x->bands = 1; /* a rectangular wavefront in place, sched_skew.c */
        return;
    }
    if (p->strategy != ORN_RT_UNIMODULAR || x->loop->whole) return;
    if (x->loop->args[0].array->sparse || (x->P > 1 && getenv("ORN_UNIMODULAR"))) return;
    x->skew = rt_skew_factor(x);
    x->bands = x->skew && rt_skew_bands(x);
    if (x->bands) return; /* in place, sched_skew.c */
    x->skew = 0;
    OrnRtPlan *s = orn_xmalloc(sizeof *s);
    *s = *p;
    s->strategy = ORN_RT_SERIAL;
    s->npart = 0;
    x->own_plan = s;
    x->plan = s;
}

int64_t rt_aligned_tile(Exec *x, int k, int64_t t)
{
    const OrnDsmArray *a = x->vi[k].store;
    const OrnRtPlanArray *pa = &x->plan->arrays[k];
    int git[ORN_DSM_MAXDIM], ga[ORN_DSM_MAXDIM];
    orn_dsm_part_unravel(&x->iter->part, t, git);
    for (int d = 0; d < a->ndim; d++)
        ga[d] = a->part.nb[d] > 1 && pa->key_dim[d] >= 0 ? git[pa->key_dim[d]] : 0;
    return orn_dsm_part_ravel(&a->part, ga);
}
