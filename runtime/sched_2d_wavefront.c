/* sched_2d_wavefront.c: the 2d_ordered strategy: 2-D blocks run as a wavefront.
 *
 * The iteration space is cut into B0 x B1 blocks along the partitioned key dimensions
 * (k0, k1). Block (s, t) runs at step s + t, on rank s mod P (rows dealt cyclically, so
 * every rank has work once the wavefront has filled). Dependence vectors of an ordered loop
 * that gets this strategy are non-negative in k0 and k1, so a block depends only on blocks
 * of earlier steps, and blocks of one anti-diagonal are independent: running steps in
 * order, and each block's elements in key order, gives exactly the result of the serial
 * loop in key order, at any rank count.
 * At two or more ranks, where the rows next to a block are all a block reads of other
 * ranks' blocks, those rows travel from block to block (ghost.c: m P bands by P column
 * blocks, messages only, no collective). Otherwise steps are separated by a collective (the
 * round's prefetch exchange, or a barrier), so that a read of another block -- through the
 * prefetch cache, or fetched on demand -- sees every write of earlier steps and none of
 * later ones.
 *
 * Arrays indexed by k0 alone (A[i] of an edit distance) are partitioned with the rows and
 * stay on their rank. Arrays indexed by k1 alone (B[j]) are rotated: column block t of such
 * an array is needed by blocks (0, t), (1, t), ... at steps t, t + 1, ..., on ranks 0, 1, ...
 * in turn, so it travels down the pipeline with the wavefront: it lives on rank 0 (its
 * home: every column block starts at row 0), and after block (s, t) the rank of row s sends
 * it to the rank of row s + 1, or home after the last row. Those blocks are written in
 * place by their block (a column's running state) and read within the column block; the
 * plan check allows a halo only for read-only dense ones, which get ghost cells before the
 * first step (halo.c). Read-only ones small enough to copy are replicated instead
 * (layout.c), and do not travel. Messages of one step go out at its end and are received
 * before the next step: every rank computes from the replicated metadata what each peer
 * sends it, and posts the receives in the sender's order.
 *
 * Cost model (N iterations, t per iteration, P ranks, B0 = B1 = B blocks, halo of H keys
 * per block, R bytes of rotated arrays in all, latency a, byte time b):
 *   T = (2B - 1) steps x [ ceil(active blocks / P) (N / B^2) t
 *                          + 4 (P-1) a + 32 H b     halo exchange (prefetch)
 *                          or ceil(log2 P) a        barrier when nothing is prefetched
 *                          + a + (R / B) b ]        column blocks down the pipeline
 * Parallel efficiency ~ B / (B + P - 1) for B0 = B1 = B and B a multiple of P. Each rotated
 * array crosses the network B times per run (the pipeline's rows, and home).
 */
#include <stdio.h>
#include <stdlib.h>

#include "arena.h"
#include "rt_int.h"

/* One column block of one rotated array in flight. */
typedef struct Msg {
    int arr;      /* index in Pipe.rot */
    int64_t tile; /* column block */
    int peer;
    OrnDsmReq *req;
    void *buf;
} Msg;

typedef struct MsgList {
    Msg *m;
    int n, cap;
} MsgList;

typedef struct Pipe {
    int nrot;
    int *rot;           /* plan indices of the rotated arrays */
    MsgList send, recv; /* of the last step: sends in flight, receives posted */
} Pipe;

static int owner_cyclic(const Exec *x, const int *g)
{
    return g[0] < 0 ? 0 : g[0] % x->P;
}

/* Column blocks live at the rank of row 0 (rank 0) between runs. */
static int owner_home(const Exec *x, const int *g)
{
    (void)x;
    (void)g;
    return 0;
}

/* Where column block t goes after row s: the rank of row s + 1, or home after the last. */
static int next_holder(const Exec *x, int64_t s)
{
    return s + 1 < x->nb[0] ? (int)((s + 1) % x->P) : owner_home(x, NULL);
}

static void push(MsgList *l, Msg m)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->m = orn_xrealloc(l->m, (size_t)l->cap * sizeof *l->m);
    }
    l->m[l->n++] = m;
}

static int setup(Exec *x)
{
    Pipe *F = orn_xcalloc(1, sizeof *F);
    x->sched_state = F;
    F->rot = orn_xcalloc((size_t)x->n, sizeof *F->rot);
    for (int k = 1; k < x->n; k++)
        if (x->views[k].role == ORN_RT_ROTATED) F->rot[F->nrot++] = k;
    int status = rt_partition_all(x, 2, owner_cyclic);
    for (int i = 0; i < F->nrot && !status; i++) {
        int k = F->rot[i];
        OrnDsmArray *a = x->loop->args[k].array;
        OrnDsmPart part;
        status = rt_aligned_part(x, a, x->plan->arrays[k].key_dim, 2, owner_home, &part);
        if (!status) status = rt_repartition(x, a, &part);
        orn_dsm_part_free(&part);
    }
    x->nsteps = (int64_t)x->nb[0] + x->nb[1] - 1;
    if (!status) status = rt_ghost_setup(x);
    if (x->ghost) {
        /* every read beyond a block is served by the travelling rows: no prefetch pass,
         * no exchange, no collective per step */
        x->prefetch_needed = 0;
        x->rounds = 0;
    } else {
        x->halo = 1;
    }
    return status;
}

/* The blocks (s, t) of step `step` that rank q runs: rows s = q, q + P, ... */
#define EACH_BLOCK(x, step, q, s, t)                                                               \
    for (int64_t s = (q), t; s < (x)->nb[0]; s += (x)->P)                                          \
        if ((t = (step)-s) >= 0 && t < (x)->nb[1])

/* After step s: send the column blocks of this rank's blocks on, and post the receives of
 * those the peers send here, in each sender's order (rows ascending, then arrays). */
static int step_end(Exec *x, int64_t step)
{
    Pipe *F = x->sched_state;
    int status = ORN_OK;
    if (!F->nrot || x->P == 1) return ORN_OK;
    RtSpan sp = rt_span_begin(x, ORN_TL_TRANSFER, "pass column blocks on");
    orn_tl_int(x->tl, sp.id, "step", step);
    EACH_BLOCK(x, step, x->me, s, t)
    {
        int to = next_holder(x, s);
        for (int i = 0; i < F->nrot && to != x->me && !status; i++) {
            /* a rotated array is cut along k1 alone: its tile t is column block t */
            OrnDsmArray *a = x->loop->args[F->rot[i]].array;
            Msg m = {i, t, to, NULL, NULL};
            size_t n;
            m.buf = orn_dsm_tile_take(a, t, &n);
            status = orn_dsm_isend(x->dsm, m.buf ? m.buf : (void *)"", n, to, ORN_TAG_RING, &m.req);
            push(&F->send, m);
        }
    }
    for (int q = 0; q < x->P && !status; q++) {
        if (q == x->me) continue;
        EACH_BLOCK(x, step, q, s, t)
        {
            if (next_holder(x, s) != x->me) continue;
            for (int i = 0; i < F->nrot && !status; i++) {
                OrnDsmArray *a = x->loop->args[F->rot[i]].array;
                size_t n = orn_dsm_tile_wire_max(a, t);
                Msg m = {i, t, q, NULL, orn_xmalloc(n ? n : 1)};
                status = orn_dsm_irecv(x->dsm, m.buf, n, q, ORN_TAG_RING, &m.req);
                push(&F->recv, m);
            }
        }
    }
    rt_span_end(x, sp, &x->rt->stats.transfer);
    x->need_progress = 1;
    return status;
}

/* Before step s (and at the end): the column blocks sent at the previous step are here. */
static int arrive(Exec *x, int64_t step)
{
    Pipe *F = x->sched_state;
    int status = ORN_OK, n = F->send.n + F->recv.n;
    if (!n) return ORN_OK;
    OrnDsmReq **reqs = orn_xmalloc((size_t)n * sizeof *reqs);
    int *peers = orn_xmalloc((size_t)n * sizeof *peers);
    for (int i = 0; i < F->recv.n; i++) {
        reqs[i] = F->recv.m[i].req;
        peers[i] = F->recv.m[i].peer;
    }
    for (int i = 0; i < F->send.n; i++) {
        reqs[F->recv.n + i] = F->send.m[i].req;
        peers[F->recv.n + i] = F->send.m[i].peer;
    }
    char what[160];
    snprintf(what, sizeof what, "2d_ordered pipeline, step %lld: column blocks of %s",
             (long long)step,
             x->plan->arrays[F->rot[0]].name ? x->plan->arrays[F->rot[0]].name : "?");
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "wait for column blocks");
    if (sp.id >= 0) {
        orn_tl_str(x->tl, sp.id, "array",
                   x->plan->arrays[F->rot[0]].name ? x->plan->arrays[F->rot[0]].name : "?");
        orn_tl_int(x->tl, sp.id, "step", step);
        if (F->recv.n) orn_tl_int(x->tl, sp.id, "peer", F->recv.m[0].peer);
    }
    status = orn_dsm_waitall(x->dsm, reqs, peers, n, what);
    rt_span_end(x, sp, &x->rt->stats.wait);
    for (int i = 0; i < F->recv.n; i++) F->recv.m[i].req = reqs[i];
    for (int i = 0; i < F->send.n; i++) F->send.m[i].req = reqs[F->recv.n + i];
    free(reqs);
    free(peers);
    for (int i = 0; i < F->recv.n && !status; i++) {
        Msg *m = &F->recv.m[i];
        OrnDsmArray *a = x->loop->args[F->rot[m->arr]].array;
        int kept = orn_dsm_tile_give(a, m->tile, m->buf);
        if (kept < 0)
            status = rt_fail(x, ORN_E_INTERNAL,
                             "2d_ordered: column block %lld of %s arrived "
                             "malformed",
                             (long long)m->tile, a->name);
        if (!kept) free(m->buf);
        m->buf = NULL;
        if (!status) status = rt_buffers_arrived(x, a, m->tile);
    }
    for (int i = 0; i < F->send.n; i++) {
        free(F->send.m[i].buf);
        F->send.m[i].buf = NULL;
    }
    if (!status) F->recv.n = F->send.n = 0;
    return status;
}

static int step_begin(Exec *x, int64_t s)
{
    int status = rt_ghost_arrive(x, s);
    return status ? status : arrive(x, s);
}

static int step_end_all(Exec *x, int64_t s)
{
    int status = rt_ghost_step_end(x, s);
    return status ? status : step_end(x, s);
}

/* Column block t at step x->step: with row s = step - t when that row is running, home
 * before its first row and after its last (the blocks of a step arrive before it runs). */
static int holder(const Exec *x, int k, int64_t t)
{
    (void)k;
    int64_t s = x->step - t;
    return s >= 0 && s < x->nb[0] ? (int)(s % x->P) : owner_home(x, NULL);
}

static int finish(Exec *x)
{
    Pipe *F = x->sched_state;
    int status = rt_ghost_arrive(x, x->nsteps);
    if (!status) status = arrive(x, x->nsteps);
    x->need_progress = 0;
    for (int i = 0; i < F->nrot && !status; i++) {
        const OrnDsmArray *a = x->loop->args[F->rot[i]].array;
        for (int64_t j = 0; j < a->part.ntiles; j++)
            if ((a->part.owner[j] == x->me) != (a->tiles[j].held != 0))
                return rt_fail(x, ORN_E_INTERNAL,
                               "2d_ordered: column block %lld of %s is not home after the loop",
                               (long long)j, a->name);
    }
    return status;
}

static void drop_all(Exec *x, MsgList *l)
{
    for (int i = 0; i < l->n; i++) {
        orn_dsm_drop(x->dsm, &l->m[i].req);
        free(l->m[i].buf);
    }
    free(l->m);
}

static void cleanup(Exec *x)
{
    Pipe *F = x->sched_state;
    if (!F) return;
    drop_all(x, &F->send);
    drop_all(x, &F->recv);
    free(F->rot);
    free(F);
    x->sched_state = NULL;
}

const OrnRtSched orn_rt_sched_2d_wavefront = {
    .name = "2d_ordered",
    .setup = setup,
    .step_begin = step_begin,
    .step_end = step_end_all,
    .work = rt_work_wavefront,
    .finish = finish,
    .cleanup = cleanup,
    .step_sync = 1,
    .holder = holder,
};
