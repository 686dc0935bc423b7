/* sched_2d_rotation.c: the 2d strategy: 2-D blocks, rotated arrays passed around a ring.
 *
 * The iteration space is cut into B0 x B1 blocks along the partitioned key dimensions
 * (k0, k1). Rank r owns the rows of blocks [r B0 / P, (r+1) B0 / P) and the partitioned
 * arrays tied to k0 (W in SGD MF) for those rows. The rotated arrays (H) are cut into B1
 * blocks along k1; each rank starts with L = ceil(B1 / P) ring slots holding its share.
 * At step s (cycle c = s / L, slot k = s mod L) every rank runs its rows against the block
 * in slot k, then sends that block to rank r+1 and posts the receive of the block that
 * rank r-1 is finishing into slot k, needed L steps later. After P L steps every block has
 * visited every rank once and is back home. Two ranks never hold the same block, and rows
 * are disjoint, so concurrent blocks are independent (dependence vectors (0, *), (*, 0)).
 *
 * A block of a dense array travels as its values (the buffer itself, no copy); a block of a
 * sparse one (read-only sparse side features F[i, :] too large to copy, layout.c) as one
 * packed message of its CSR rows or keys and values (dsm/wire.c), unpacked on arrival.
 *
 * Overlap: a block sent at step s is needed at step s + L, so with B1 >= 2P (L >= 2) its
 * transfer has L - 1 steps of computation to hide behind. Blocks are need-ordered
 * transfers (dsm/xferq.h) with need s + L: the link carries them in the order the next
 * rank uses them, after what is needed sooner (a reader blocked on a remote read, ghost
 * cells of the first blocks), in chunks, a window at a time. MPICH over UCX's TCP moves a
 * message only inside MPI calls, on both ends (on the test bed, a 32 MiB transfer during
 * 650 ms of computation without a call had not moved at all; with a poll every 0.5 ms it
 * was through when the computation ended: bench/xfer_order.c), so while transfers are in
 * flight the driver runs each block in slices of `slice` elements and polls between them
 * (orn_dsm_progress), and every wait progresses the queue.
 *
 * Cost model (N iterations, t per iteration, P ranks, R bytes of rotated arrays, L ring
 * slots per rank, a block of S = R / (P L) bytes, latency a, link byte time b, o the cost
 * of a step beyond its compute -- a wait, a bind, a send posted):
 *   T = P L steps x max( N t / (P^2 L) + o,  a + S b )  +  (a + S b) for the last return
 * Bandwidth bound: a rank sends P L blocks of R / (P L) bytes per epoch, R whatever the
 * blocking, so the communication hides only when
 *       N t / P  >=  R b        (per rank: compute >= bytes on its link)
 * and no block size or depth helps below it: the epoch is then at least R b. For SGD MF (R
 * = 4 K items bytes of H) that is N / items >= 4 K P b / t ratings per item: at K = 100,
 * P = 3, b = 11 ns (the slow profile's measured 0.7 Gbit/s) and t = 190 ns of processor
 * time per rating (measured on the test bed's machine, -O2), 66 ratings per item. Netflix
 * has 5,600, MovieLens-20M 740 (the link then takes a tenth of the compute or less);
 * bench_rotation's default problem has 67: at the bound.
 * Depth: L sets the unhidden tail a + S b = a + R b / (P L), at most 1 / (P L) of a
 * compute-bound epoch, the slack for a late neighbour (L - 1 steps) and the per-step cost
 * P L o. The cache blocking's sub-blocks along k1 (blocking.c: every sub-block is a step)
 * make L = 2 x sub-blocks, so where blocks are larger than a cache L >= 4: 16 for R = 24 MB
 * at K = 100 (0.5 MB blocks, a 6 ms tail at 0.7 Gbit/s against an epoch of 0.3 s of
 * processor time). The depth is not chosen from measured link and compute rates: that
 * would change the order of the updates, and with it the results, from one run to the
 * next, for a tail of a few per cent at most once blocks outgrow the cache.
 * Memory: 2 rotated blocks per slot (one in flight, one arriving).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"
#include "xferq.h"

typedef struct Ring {
    int L;
    int nrot;
    int *rot;              /* plan indices of the rotated arrays */
    int64_t *start, *cnt;  /* per rank: first block and number of blocks at home */
    OrnDsmXfer **rx, **sx; /* [slot * nrot + i]: need-ordered transfers (xferq.h) */
    void **rbuf, **sbuf;
    size_t *rbufcap;
    int64_t *rblock; /* block arriving into each slot, -1 none */
    void **scratch;  /* nocomm: a stand-in block per dense rotated array (sparse ones travel) */
    int comm;        /* some blocks travel (P > 1, and not nocomm or a sparse array) */
    /* Buffers whose sends completed, reused for receives: a fresh allocation per step
     * would page-fault through every block it receives. */
    void **pool;
    size_t *poolcap, *sbufcap;
    int npool, cappool;
} Ring;

static void *pool_get(Ring *R, size_t n, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < R->npool; i++)
        if (R->poolcap[i] >= n && (best < 0 || R->poolcap[i] < R->poolcap[best])) best = i;
    if (best < 0) {
        *cap = n;
        return orn_xmalloc(n ? n : 1);
    }
    void *p = R->pool[best];
    *cap = R->poolcap[best];
    R->pool[best] = R->pool[--R->npool];
    R->poolcap[best] = R->poolcap[R->npool];
    return p;
}

static void pool_put(Ring *R, void *p, size_t cap)
{
    if (!p) return;
    if (R->npool == R->cappool) {
        R->cappool = R->cappool ? 2 * R->cappool : 8;
        R->pool = orn_xrealloc(R->pool, (size_t)R->cappool * sizeof *R->pool);
        R->poolcap = orn_xrealloc(R->poolcap, (size_t)R->cappool * sizeof *R->poolcap);
    }
    R->pool[R->npool] = p;
    R->poolcap[R->npool++] = cap;
}

static int rowrank(const Exec *x, const int *g)
{
    int sub = x->sub[0] > 1 ? x->sub[0] : 1; /* sub-blocks of a block stay together */
    return g[0] < 0 ? -1 : (int)((int64_t)(g[0] / sub) * x->P / (x->nb[0] / sub));
}

static int ring_home(const Exec *x, const int *g)
{
    const Ring *R = x->sched_state;
    if (g[1] < 0) return 0;
    for (int q = 0; q < x->P; q++)
        if (g[1] >= R->start[q] && g[1] < R->start[q] + R->cnt[q]) return q;
    return 0;
}

/* Block in slot k of rank r during cycle c. */
static int64_t held_block(const Ring *R, int P, int r, int64_t c, int k)
{
    int q = (int)(((r - c) % P + P) % P);
    return k < R->cnt[q] ? R->start[q] + k : -1;
}

/* The bytes a receiver allows for block j (a dense block's values, a sparse one packed). */
static size_t block_bytes(const OrnDsmArray *a, int64_t j)
{
    return orn_dsm_tile_wire_max(a, j);
}

/* The first rotated array's name (the timeline's arguments). */
static const char *rot_name(const Exec *x, const Ring *R)
{
    const char *nm = x->plan->arrays[R->rot[0]].name;
    return nm ? nm : x->loop->args[R->rot[0]].array->name;
}

/* Rotated array i moves at every step (not a nocomm stand-in). */
static int travels(const Ring *R, int i)
{
    return !R->scratch || !R->scratch[i];
}

/* A received block into its tile: the buffer becomes a dense tile's storage, or goes back to
 * the pool once a sparse one is unpacked. */
static int install(Exec *x, Ring *R, int i, int64_t j, size_t at)
{
    OrnDsmArray *a = x->loop->args[R->rot[i]].array;
    int kept = orn_dsm_tile_give(a, j, R->rbuf[at]);
    if (kept < 0)
        return rt_fail(x, ORN_E_INTERNAL, "2d: block %lld of %s arrived malformed", (long long)j,
                       a->name);
    if (!kept) pool_put(R, R->rbuf[at], R->rbufcap[at]);
    R->rbuf[at] = NULL;
    return rt_buffers_arrived(x, a, j);
}

/* Block j of a rotated array at step x->step: with rank home + c during cycle c, worked on
 * at step c L + (its slot); the rank of the first such step not before this one holds it
 * now or installs it next, and after the last cycle it goes home. */
static int holder(const Exec *x, int k, int64_t j)
{
    const Ring *R = x->sched_state;
    const OrnDsmArray *a = x->loop->args[k].array;
    int home = a->part.owner[j];
    int64_t slot = j - R->start[home], c = 0;
    if (x->step > slot) c = (x->step - slot + R->L - 1) / R->L;
    return c >= x->P ? home : (int)((home + c) % x->P);
}

static int setup(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    int P = x->P, status;
    Ring *R = orn_xcalloc(1, sizeof *R);
    x->sched_state = R;
    rt_choose_blocking(x, 2);
    x->nb[0] = rt_blocks(x, 0);
    x->nb[1] = rt_blocks(x, 1);
    R->start = orn_xcalloc((size_t)P, sizeof *R->start);
    R->cnt = orn_xcalloc((size_t)P, sizeof *R->cnt);
    R->L = 0;
    for (int q = 0; q < P; q++) {
        R->start[q] = (int64_t)q * x->nb[1] / P;
        R->cnt[q] = (int64_t)(q + 1) * x->nb[1] / P - R->start[q];
        if (R->cnt[q] > R->L) R->L = (int)R->cnt[q];
    }
    R->rot = orn_xcalloc((size_t)x->n, sizeof *R->rot);
    /* The plan check (plan_check.c) made sure every rotated array follows k1 alone. */
    for (int k = 1; k < x->n; k++)
        if (x->views[k].role == ORN_RT_ROTATED) R->rot[R->nrot++] = k;
    status = rt_partition_all(x, 2, rowrank);
    for (int i = 0; i < R->nrot && !status; i++) {
        int k = R->rot[i];
        OrnDsmArray *a = x->loop->args[k].array;
        OrnDsmPart part;
        status = rt_aligned_part(x, a, p->arrays[k].key_dim, 2, ring_home, &part);
        if (!status) {
            for (int64_t j = 0; j < part.ntiles; j++) {
                int q = part.owner[j];
                part.slot[j] = (int)(j - R->start[q]);
            }
            status = rt_repartition(x, a, &part);
        }
        orn_dsm_part_free(&part);
        /* Rotated blocks' storage travels and is freed as a whole: no padding (halo.c). */
        for (int64_t j = 0; !status && j < a->part.ntiles; j++) orn_dsm_tile_unpad(a, j);
    }
    if (status) return status;
    size_t ns = (size_t)R->L * (size_t)(R->nrot ? R->nrot : 1);
    R->rx = orn_xcalloc(ns, sizeof *R->rx);
    R->sx = orn_xcalloc(ns, sizeof *R->sx);
    R->rbuf = orn_xcalloc(ns, sizeof *R->rbuf);
    R->sbuf = orn_xcalloc(ns, sizeof *R->sbuf);
    R->sbufcap = orn_xcalloc(ns, sizeof *R->sbufcap);
    R->rbufcap = orn_xcalloc(ns, sizeof *R->rbufcap);
    R->rblock = orn_xcalloc((size_t)R->L, sizeof *R->rblock);
    for (int k = 0; k < R->L; k++) R->rblock[k] = -1;
    if (P > 1 && x->rt->nocomm) {
        /* Compute-only runs keep dense blocks put (a stand-in of the largest size); a sparse
         * block's rows must be real, so those travel anyway. */
        R->scratch = orn_xcalloc((size_t)(R->nrot ? R->nrot : 1), sizeof *R->scratch);
        for (int i = 0; i < R->nrot; i++) {
            const OrnDsmArray *a = x->loop->args[R->rot[i]].array;
            if (a->sparse) continue;
            size_t m = 1;
            for (int64_t j = 0; j < a->part.ntiles; j++)
                if (block_bytes(a, j) > m) m = block_bytes(a, j);
            R->scratch[i] = orn_xcalloc(m, 1);
        }
    }
    for (int i = 0; i < R->nrot; i++) R->comm |= P > 1 && travels(R, i);
    x->nsteps = (int64_t)P * R->L;
    return ORN_OK;
}

static int step_begin(Exec *x, int64_t s)
{
    Ring *R = x->sched_state;
    int64_t c = s / R->L;
    int k = (int)(s % R->L);
    int64_t j = held_block(R, x->P, x->me, c, k);
    if (j < 0 || c == 0 || x->P == 1) return ORN_OK;
    for (int i = 0; i < R->nrot && R->scratch; i++) {
        if (travels(R, i)) continue;
        OrnDsmArray *a = x->loop->args[R->rot[i]].array;
        OrnDsmTile *t = &a->tiles[j];
        t->vals = R->scratch[i];
        t->held = 1;
        orn_dsm_touch(a);
    }
    if (!R->comm) return ORN_OK;
    int prev = (x->me - 1 + x->P) % x->P;
    char what[160];
    snprintf(what, sizeof what,
             "2-D rotation, step %lld: rotated block %lld of %s from the "
             "previous rank",
             (long long)s, (long long)j,
             x->plan->arrays[R->rot[0]].name ? x->plan->arrays[R->rot[0]].name
                                             : x->loop->args[R->rot[0]].array->name);
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "wait for a rotated block");
    if (sp.id >= 0) {
        orn_tl_str(x->tl, sp.id, "array", rot_name(x, R));
        orn_tl_int(x->tl, sp.id, "block", j);
        orn_tl_int(x->tl, sp.id, "peer", prev);
    }
    int status = orn_dsm_xwait(x->dsm, &R->rx[(size_t)k * R->nrot], R->nrot, what);
    rt_span_end(x, sp, &x->rt->stats.wait);
    for (int i = 0; i < R->nrot && !status; i++)
        if (travels(R, i)) status = install(x, R, i, j, (size_t)k * R->nrot + i);
    if (status) return status;
    R->rblock[k] = -1;
    return ORN_OK;
}

static int step_end(Exec *x, int64_t s)
{
    Ring *R = x->sched_state;
    int64_t c = s / R->L;
    int k = (int)(s % R->L), P = x->P, status = ORN_OK;
    int64_t j = held_block(R, P, x->me, c, k);
    if (P == 1) return ORN_OK;
    if (c > 0 && j >= 0)
        for (int i = 0; i < R->nrot && R->scratch; i++) {
            if (travels(R, i)) continue;
            OrnDsmTile *t = &x->loop->args[R->rot[i]].array->tiles[j];
            t->vals = NULL;
            t->held = 0;
        }
    if (!R->comm) return ORN_OK;
    int next = (x->me + 1) % P, prev = (x->me - 1 + P) % P;
    if (j >= 0) {
        /* The slot's previous send (L steps ago) must be done before its buffer goes. */
        RtSpan sw = rt_span_begin(x, ORN_TL_WAIT, "wait for a send to complete");
        orn_tl_int(x->tl, sw.id, "peer", next);
        status = orn_dsm_xwait(x->dsm, &R->sx[(size_t)k * R->nrot], R->nrot,
                               "2-D rotation: sending a rotated block to the next rank");
        rt_span_end(x, sw, &x->rt->stats.wait);
        if (status) return status;
        RtSpan sp = rt_span_begin(x, ORN_TL_TRANSFER, "send a rotated block");
        if (sp.id >= 0) {
            orn_tl_str(x->tl, sp.id, "array", rot_name(x, R));
            orn_tl_int(x->tl, sp.id, "block", j);
            orn_tl_int(x->tl, sp.id, "peer", next);
        }
        for (int i = 0; i < R->nrot; i++) {
            if (!travels(R, i)) continue;
            size_t at = (size_t)k * R->nrot + i;
            pool_put(R, R->sbuf[at], R->sbufcap[at]);
            OrnDsmArray *a = x->loop->args[R->rot[i]].array;
            R->sbuf[at] = orn_dsm_tile_take(a, j, &R->sbufcap[at]);
            /* the next rank computes on it L steps from now; it allows block_bytes (a packed
             * sparse block can be smaller) */
            status = orn_dsm_xsend_upto(x->dsm, R->sbuf[at] ? R->sbuf[at] : (void *)"",
                                        R->sbufcap[at], block_bytes(a, j), next, ORN_TAG_RING,
                                        (double)(s + R->L), "rotated block", &R->sx[at]);
            if (status) return status;
        }
        rt_span_end(x, sp, &x->rt->stats.transfer);
    }
    /* What rank r-1 finished at this step arrives into this slot for the next cycle
     * (cycle P brings every block home). */
    int64_t jn = held_block(R, P, x->me, c + 1, k);
    if (jn >= 0) {
        RtSpan sp = rt_span_begin(x, ORN_TL_TRANSFER, "post the receive of a rotated block");
        if (sp.id >= 0) {
            orn_tl_str(x->tl, sp.id, "array", rot_name(x, R));
            orn_tl_int(x->tl, sp.id, "block", jn);
            orn_tl_int(x->tl, sp.id, "peer", prev);
        }
        for (int i = 0; i < R->nrot; i++) {
            if (!travels(R, i)) continue;
            size_t at = (size_t)k * R->nrot + i;
            OrnDsmArray *a = x->loop->args[R->rot[i]].array;
            size_t n = block_bytes(a, jn);
            R->rbuf[at] = pool_get(R, n, &R->rbufcap[at]);
            status = orn_dsm_xrecv(x->dsm, R->rbuf[at], n, prev, ORN_TAG_RING, (double)(s + R->L),
                                   "rotated block", &R->rx[at]);
            if (status) return status;
        }
        rt_span_end(x, sp, &x->rt->stats.transfer);
        R->rblock[k] = jn;
    }
    x->need_progress = 1;
    return ORN_OK;
}

static int finish(Exec *x)
{
    Ring *R = x->sched_state;
    int status = ORN_OK;
    if (!R->comm) return ORN_OK;
    size_t ns = (size_t)R->L * (size_t)R->nrot;
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "wait for the rotated blocks to come home");
    orn_tl_str(x->tl, sp.id, "peer", "previous and next");
    status = orn_dsm_xwait(x->dsm, R->sx, (int)ns, "2-D rotation: sending rotated blocks home");
    if (!status)
        status = orn_dsm_xwait(x->dsm, R->rx, (int)ns,
                               "2-D rotation: receiving this rank's rotated blocks back");
    rt_span_end(x, sp, &x->rt->stats.wait);
    if (status) return status;
    for (int k = 0; k < R->L; k++) {
        int64_t j = R->rblock[k];
        for (int i = 0; i < R->nrot; i++) {
            size_t at = (size_t)k * R->nrot + i;
            free(R->sbuf[at]);
            R->sbuf[at] = NULL;
            R->sbufcap[at] = 0;
            if (j >= 0 && travels(R, i)) status = install(x, R, i, j, at);
            if (status) return status;
        }
        R->rblock[k] = -1;
    }
    x->need_progress = 0;
    /* Every block is home again. */
    for (int i = 0; i < R->nrot; i++) {
        const OrnDsmArray *a = x->loop->args[R->rot[i]].array;
        for (int64_t j = 0; j < a->part.ntiles; j++)
            if ((a->part.owner[j] == x->me) != (a->tiles[j].held != 0))
                return rt_fail(x, ORN_E_INTERNAL,
                               "2d: block %lld of %s is not home after the "
                               "rotation",
                               (long long)j, a->name);
    }
    return ORN_OK;
}

static void cleanup(Exec *x)
{
    Ring *R = x->sched_state;
    if (!R) return;
    size_t ns = (size_t)R->L * (size_t)(R->nrot ? R->nrot : 1);
    for (size_t i = 0; R->rx && i < ns; i++) {
        orn_dsm_xdrop(x->dsm, &R->rx[i]);
        orn_dsm_xdrop(x->dsm, &R->sx[i]);
        free(R->rbuf[i]);
        free(R->sbuf[i]);
    }
    if (R->scratch) {
        /* Tiles that still point at scratch space (an error mid-step) let go of it. */
        for (int i = 0; i < R->nrot; i++) {
            OrnDsmArray *a = x->loop->args[R->rot[i]].array;
            for (int64_t j = 0; j < a->part.ntiles && R->scratch[i]; j++)
                if (a->tiles[j].vals == R->scratch[i]) {
                    a->tiles[j].vals = NULL;
                    a->tiles[j].held = 0;
                }
            free(R->scratch[i]);
        }
        free(R->scratch);
    }
    for (int i = 0; i < R->npool; i++) free(R->pool[i]);
    free(R->pool);
    free(R->poolcap);
    free(R->sbufcap);
    free(R->rbufcap);
    free(R->rx);
    free(R->sx);
    free(R->rbuf);
    free(R->sbuf);
    free(R->rblock);
    free(R->rot);
    free(R->start);
    free(R->cnt);
    free(R);
    x->sched_state = NULL;
}

static void work(Exec *x, int64_t s, int rank, WorkList *out)
{
    const Ring *R = x->sched_state;
    const OrnDsmArray *it = x->iter;
    int64_t j = held_block(R, x->P, rank, s / R->L, (int)(s % R->L));
    if (j < 0) return;
    for (int b0 = 0; b0 < x->nb[0]; b0++) {
        int g[2] = {b0, -1};
        if (rowrank(x, g) != rank) continue;
        int grid[ORN_DSM_MAXDIM] = {0, 0, 0, 0};
        grid[x->kd[0]] = b0;
        grid[x->kd[1]] = (int)j;
        int64_t t = orn_dsm_part_ravel(&it->part, grid);
        rt_work_push(out, t, 0, it->tiles[t].n);
    }
}

const OrnRtSched orn_rt_sched_2d_rotation = {
    .name = "2d",
    .setup = setup,
    .step_begin = step_begin,
    .step_end = step_end,
    .work = work,
    .finish = finish,
    .cleanup = cleanup,
    .step_sync = 0,
    .holder = holder,
};
