/* sched_skew.c: a wavefront run in place over bands of the space's rows: skewed
 * (unimodular plans over dense 2-D spaces at two or more ranks), or not (2d_ordered plans
 * of the same shape: skew 0).
 *
 * A 9-point Gauss-Seidel reads its upper-right neighbour U[i - 1, j + 1]: the dependence
 * (1, -1) keeps no rectangular wavefront, and the analyzer skews the loop, y = (i, c i + j)
 * (transform [[1, 0], [c, 1]]), where a wavefront over blocks of y is legal. The general
 * unimodular schedule (sched_unimodular.c) copies the space into a sparse array keyed by y
 * and reads every neighbour through the slow path (1 s a 2048^2 sweep, C 14 ms). For this
 * transform the blocks of y are parallelograms of the space itself, and every row of one is
 * a run of consecutive elements:
 *
 *   - the space is cut into m P bands of rows, dealt cyclically, each a tile of full width;
 *   - y's second key c i + j is cut into B1 column blocks Y_0 < ... < Y_B1; block (s, t) is,
 *     for every row i of band s in turn, the run j in [Y_t - c i, Y_t+1 - c i) of row i
 *     (clipped to the row), so a block is a list of runs, each a work item of the band's
 *     tile, and runs in the transformed key order (rows ascending, then j);
 *   - block (s, t) runs at step s + t on rank s mod P, as in 2d_ordered (legal in y);
 *   - a band's view covers its tile and padding rows above and below (ghost.c): its own
 *     rows, left and right neighbours included, are loads; the first rows of the band
 *     below come at the start of the run (not yet rewritten when they are read: they lie
 *     in blocks t' >= t of band s + 1, later steps), and the last rows of the band above
 *     come after each of its blocks, the part of each row in that block
 *     (rt_ghost_skew_step_end), before any block that reads them.
 * No copy of the space, no prefetch pass, no collective per step. With c = 0 the blocks are
 * rectangles and this is 2d_ordered's wavefront over bands of full rows instead of tiles
 * (5-point Gauss-Seidel): the bands are the ones the space is made in (orn_rt_space_part),
 * so neither the first sweep nor the loops around it move the grid.
 *
 * Which loops: strategy unimodular, inner 2d_ordered over (0, 1), a transform [[1, 0],
 * [c, 1]] with c >= 1, or strategy 2d_ordered over (0, 1) reading the rows above or below;
 * a dense 2-D iteration space the loop writes, read within finite rows above and below,
 * every other array replicated; not @gpu (rt_choose_unskewed). Other unimodular plans run
 * serially at one rank, or ($ORN_UNIMODULAR) as before; other 2d_ordered plans, and all of
 * them with $ORN_GHOST=off, keep sched_2d_wavefront.c.
 *
 * Cost model (W the loop's work, B0 = m P bands, B1 column blocks, r rows per band, o a
 * work item's overhead (binding, one body call) and a step's messages):
 *     T = (B0 + B1 - 1) steps x (W / (B0 B1) + r o)
 * A band's rows cover n1 + c r of y1, so the blocks of a band are parallelograms of uneven
 * sizes (the first and last of a band are cut by the row's ends). B1 = 4 P for c >= 1,
 * measured best since the blocks run as dataflow (thirteenth session, 9-point, -n 2, best
 * of 3-4 runs; B1 = 2 P, 4 P, 6 P: 1024^2 2.26, 2.13, 2.19 ms (-n 1 3.50); 2048^2 8.38,
 * 7.75, 7.90 ms (-n 1 13.2-13.7); 4096^2 33.0, 30.7, 30.4 ms (-n 1 55.5); B1 = 3 P and 8 P
 * at 2048^2 7.75 and 8.03; uneven blocks, narrow at both ends to shorten the fill and the
 * drain, measured no better than even ones of the same count). The tenth session, before
 * the dataflow, had measured B1 = 2 P best (7.0, 5.3, 5.7, 5.8 ms for B1 = P, 2 P, 4 P,
 * 8 P) and the count flat at 2048^2 (9.0-9.3 ms for B1 = 4 to 32). B1 = P
 * for c = 0 (5-point, 2048^2, -n 2: 8.4-8.8, 4.6-4.9, 5.9-6.3, 4.8-5.2 ms for B1 = 1, 2, 3,
 * 4; -n 1 8.2): a block is then a whole half band, and the ranks' blocks of a step are of
 * equal size. m P - 1 bands instead (an odd count at -n 2: the last band, which ends a run,
 * on the rank that starts the next, so that no rank waits for the rows below at a run's
 * start) measured worse: 9-point 8.5 -> 8.9-9.7 ms, 5-point 4.6-5.2 -> 4.9-5.6 (the ranks'
 * loads then differ by a band).
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

#define RT_SKEW_MIN  (1 << 15) /* elements per block, at least */
#define RT_SKEW_MAXM 8         /* bands per rank, at most */

typedef struct Skew {
    int64_t c;     /* the transform's skew: y1 = c i + j */
    int64_t *Y;    /* B1 + 1 column block bounds in y1 */
    int64_t *runs; /* the last work list's runs, (first, count) pairs */
    int64_t cap;
} Skew;

/* The conditions shared by both forms: the plan's blocks along (0, 1) of a dense 2-D space
 * the loop writes, read within finite rows, every other array replicated, several ranks. */
static int bands_fit(const OrnRtPlan *p, int P, int whole, int sparse, int ndim)
{
    if (p->nkeys != 2 || p->npart != 2 || p->part_dims[0] != 0 || p->part_dims[1] != 1 || whole ||
        P < 2 || sparse || ndim != 2)
        return 0;
    const OrnRtPlanArray *pa = &p->arrays[0];
    if (pa->read_only || pa->role != ORN_RT_PARTITIONED) return 0;
    for (int d = 0; d < 2; d++)
        if (pa->halo_lo[d] == ORN_RT_HALO_ANY || pa->halo_hi[d] == ORN_RT_HALO_ANY) return 0;
    for (int k = 1; k < p->narrays; k++)
        if (p->arrays[k].role != ORN_RT_REPLICATED) return 0;
    return 1;
}

/* The skew of a unimodular plan [[1, 0], [c, 1]], or 0. */
static int plan_skew(const OrnRtPlan *p)
{
    if (p->strategy != ORN_RT_UNIMODULAR || p->inner != ORN_RT_2D_ORDERED ||
        p->transform[0][0] != 1 || p->transform[0][1] != 0 || p->transform[1][1] != 1 ||
        p->transform[1][0] < 1 || p->transform[1][0] > 64)
        return 0;
    return p->transform[1][0];
}

static int fits(const Exec *x)
{
    const OrnDsmArray *it = x->loop->args[0].array;
    return it && bands_fit(x->plan, x->P, x->loop->whole, it->sparse, it->ndim);
}

int rt_skew_factor(const Exec *x)
{
    return fits(x) ? plan_skew(x->plan) : 0;
}

/* A 2d_ordered plan whose space is read in the rows above or below (a plan declaring no
 * such rows keeps the tiles' wavefront and its prefetch pass, sched_2d_wavefront.c). */
int rt_rect_bands(const Exec *x)
{
    const OrnRtPlanArray *pa = &x->plan->arrays[0];
    return x->plan->strategy == ORN_RT_2D_ORDERED && !rt_ghost_off() && fits(x) &&
           pa->halo_lo[0] + pa->halo_hi[0] > 0;
}

/* Bands of a space of extents dims under plan p at P ranks; 0 when too few rows. */
static int bands_of(const OrnRtCtx *rt, const OrnRtPlan *p, int64_t P, const int64_t *dims)
{
    const OrnRtPlanArray *pa = &p->arrays[0];
    int64_t n0 = dims[0], rows = pa->halo_lo[0] + pa->halo_hi[0];
    if (rows < 1) rows = 1;
    int64_t b = p->part_count[0];
    if (b <= 0 && rt->blocks_explicit) b = (int64_t)rt->blocks_per_rank * P;
    if (b > 0) return n0 / b >= rows ? (int)b : 0; /* as set, when its bands are tall enough */
    int64_t m = dims[0] * dims[1] / (P * P * RT_SKEW_MIN);
    if (m > RT_SKEW_MAXM) m = RT_SKEW_MAXM;
    if (m < 1) m = 1;
    while (m > 1 && n0 / (m * P) < rows) m--;
    return n0 / P >= rows ? (int)(m * P) : 0;
}

int rt_skew_bands(const Exec *x)
{
    return bands_of(x->rt, x->plan, x->P, x->loop->args[0].array->dims);
}

int orn_rt_space_part(OrnRtCtx *rt, const OrnRtPlan *p, int ndim, const int64_t *dims,
                      OrnDsmPart *out)
{
    int P = orn_dsm_size(rt->dsm);
    if (!p || !bands_fit(p, P, 0, 0, ndim)) return 0;
    if (p->strategy == ORN_RT_2D_ORDERED
            ? rt_ghost_off() || p->arrays[0].halo_lo[0] + p->arrays[0].halo_hi[0] <= 0
            : !plan_skew(p) || getenv("ORN_UNIMODULAR"))
        return 0;
    int B = bands_of(rt, p, P, dims);
    int nb[ORN_DSM_MAXDIM] = {B, 1, 1, 1};
    if (!B || orn_dsm_part_init(out, ndim, nb)) return 0;
    /* as rt_partition_iter cuts a dense space: even bounds (orn_dsm_balance), owners cyclic */
    orn_dsm_bounds_uniform(out->bounds[0], dims[0], B);
    out->bounds[1][0] = 0;
    out->bounds[1][1] = dims[1];
    for (int g = 0; g < B; g++) out->owner[g] = g % P;
    return 1;
}

static int owner_cyclic(const Exec *x, const int *g)
{
    return g[0] < 0 ? 0 : g[0] % x->P;
}

static int setup(Exec *x)
{
    const OrnDsmArray *it = x->iter;
    Skew *S = orn_xcalloc(1, sizeof *S);
    x->sched_state = S;
    S->c = x->skew;
    int status = rt_partition_all(x, 1, owner_cyclic);
    if (status) return status;
    /* y1 = c i + j spans [0, c (n0 - 1) + n1): B1 column blocks of it */
    int B1 = S->c ? 4 * x->P : x->P;
    int64_t span = S->c * (it->dims[0] - 1) + it->dims[1];
    if (B1 > span) B1 = (int)span;
    S->Y = orn_xcalloc((size_t)B1 + 1, sizeof *S->Y);
    orn_dsm_bounds_uniform(S->Y, span, B1);
    x->nb[1] = B1;
    x->nsteps = (int64_t)x->nb[0] + B1 - 1;
    /* rows read above and below travel (a plan without them reads within its band) */
    status = rt_ghost_setup(x);
    /* every read beyond a band is a ghost row: no prefetch pass, no rounds */
    x->prefetch_needed = 0;
    x->rounds = 0;
    return status;
}

/* Block (s, step - s) of every band s of `rank`: one item each, its runs row by row (kept
 * in S->runs until the next call). */
static void work(Exec *x, int64_t step, int rank, WorkList *out)
{
    Skew *S = x->sched_state;
    const OrnDsmArray *it = x->iter;
    int64_t n1 = it->dims[1], rows = 0, n = 0;
    for (int64_t s = rank; s < x->nb[0]; s += x->P)
        if (step - s >= 0 && step - s < x->nb[1]) rows += it->tiles[s].hi[0] - it->tiles[s].lo[0];
    if (2 * rows > S->cap) {
        S->cap = 2 * rows;
        S->runs = orn_xrealloc(S->runs, (size_t)S->cap * sizeof *S->runs);
    }
    for (int64_t s = rank; s < x->nb[0]; s += x->P) {
        int64_t t = step - s, at = n;
        if (t < 0 || t >= x->nb[1]) continue;
        const OrnDsmTile *tl = &it->tiles[s];
        for (int64_t i = tl->lo[0]; i < tl->hi[0]; i++) {
            int64_t a = S->Y[t] - S->c * i, b = S->Y[t + 1] - S->c * i;
            if (a < 0) a = 0;
            if (b > n1) b = n1;
            if (a >= b) continue;
            S->runs[2 * n] = (i - tl->lo[0]) * n1 + a;
            S->runs[2 * n + 1] = b - a;
            n++;
        }
        if (n > at) rt_work_push_runs(out, s, S->runs + 2 * at, n - at);
    }
}

/* Dataflow between the ranks, not lockstep: a block waits only for the rows it reads
 * (those sent into its band's padding), and its own last rows go to the band below as soon
 * as it ends, not after this rank's other blocks of the step. At 2048^2, -n 2, a rank waited
 * 1.1-1.2 ms of an 8.5 ms 9-point sweep at the step boundaries, where one rank ran a whole
 * block and the other two cut ones. */
static int item_begin(Exec *x, const Work *w)
{
    return rt_ghost_arrive_tile(x, w->tile);
}

static int item_end(Exec *x, const Work *w)
{
    const Skew *S = x->sched_state;
    return rt_ghost_skew_block_end(x, w->tile, x->step - w->tile, S->Y, S->c);
}

static int step_end(Exec *x, int64_t s)
{
    const Skew *S = x->sched_state;
    return rt_ghost_skew_step_end(x, s, S->Y, S->c);
}

static int finish(Exec *x)
{
    int status = rt_ghost_arrive(x, x->nsteps);
    x->need_progress = 0;
    return status;
}

static void cleanup(Exec *x)
{
    Skew *S = x->sched_state;
    if (!S) return;
    free(S->Y);
    free(S->runs);
    free(S);
    x->sched_state = NULL;
}

/* Messages name the plan's strategy (exec.c), 2d_ordered or unimodular, not this one. */
const OrnRtSched orn_rt_sched_skew = {
    .name = "bands",
    .setup = setup,
    .step_begin = rt_step_noop,
    .step_end = step_end,
    .work = work,
    .finish = finish,
    .cleanup = cleanup,
    .step_sync = 0,
    .item_begin = item_begin,
    .item_end = item_end,
};
