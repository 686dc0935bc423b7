/* coll.c: waiting with timeouts, and the collectives, built on the transport's
 * point-to-point operations.
 *
 * Every wait goes through orn_dsm_waitall(): it polls test() and, between polls, serves
 * remote reads (fetch.c), so a rank that waits never blocks a peer that needs it. Where a
 * host's ranks have a core each (orn_dsm_wait_setup) it polls without pause for its first
 * SPIN_FIRST_S; then, and from the start where ranks outnumber cores (a spin would steal
 * the core of the rank we wait for), it backs off from sched_yield() to short sleeps, and
 * after the context's timeout fails naming the peer and the operation.
 *
 * Collectives start with point-to-point messages so that a wait for a rank that never
 * arrives knows which peer it is waiting for. Cost models (P ranks, message latency a,
 * per-byte time b):
 *   alltoallv:   sizes by direct messages with every peer ((P-1) a; a rank that never
 *                arrives is named by the timeout), then the data by MPI_Ialltoallv
 *                (MPICH's pairwise/scattered algorithms, ~ (P-1) a + b * bytes), or by
 *                direct messages when a block exceeds int counts.
 *   allgatherv:  sizes by direct messages, then every block from its rank to everyone,
 *                direct messages into place: 2 (P-1) a + b (P-1) n.
 *   allreduce, allgather_into (sizes the same everywhere): one round of direct messages,
 *                (P-1) (a + b n); the slices exchanges of buffer flushes likewise, and
 *                orn_dsm_exchange (sizes both sides know: a flush to owners' tiles).
 *   barrier:     dissemination, ceil(log2 P) rounds of one message: ceil(log2 P) a.
 *   bcast:       root sends to each peer: (P-1) (a + b n) at the root.
 * Reductions gather every rank's contribution and combine them in rank order on every
 * rank, so the result is bit-identical everywhere and from run to run.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "dsm_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "xferq.h"

double orn_dsm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int orn_dsm_tp_fail(OrnDsmCtx *ctx, int status, const char *what)
{
    return orn_dsm_fail(ctx, status, "%s: %s", what, ctx->tp->err);
}

int orn_dsm_isend(OrnDsmCtx *ctx, const void *buf, size_t n, int peer, int tag, OrnDsmReq **req)
{
    int status = ctx->tp->ops->isend(ctx->tp, buf, n, peer, tag, req);
    if (status) return orn_dsm_tp_fail(ctx, status, "send");
    if (peer != ctx->rank) ctx->sent += (int64_t)n;
    return ORN_OK;
}

int orn_dsm_irecv(OrnDsmCtx *ctx, void *buf, size_t n, int peer, int tag, OrnDsmReq **req)
{
    int status = ctx->tp->ops->irecv(ctx->tp, buf, n, peer, tag, req);
    if (status) return orn_dsm_tp_fail(ctx, status, "receive");
    if (peer != ctx->rank) ctx->recv += (int64_t)n;
    return ORN_OK;
}

int orn_dsm_test(OrnDsmCtx *ctx, OrnDsmReq **req, int *done)
{
    int status = ctx->tp->ops->test(ctx->tp, req, done);
    if (status) return orn_dsm_tp_fail(ctx, status, "test");
    return ORN_OK;
}

void orn_dsm_drop(OrnDsmCtx *ctx, OrnDsmReq **req)
{
    ctx->tp->ops->drop(ctx->tp, req);
}

/* Between polls of a wait that has lasted `waited` seconds: the core given up with
 * sched_yield for the first SPIN_S (a block's or a replica's transfer between ranks on
 * one machine completes within that, and each side's progress moves the other's: a rank
 * asleep for the timer's slack, 50 us and more, stalled PageRank's 1 MB replica exchange to
 * 0.47 ms), then sleeps of 8 us doubling to 256 us, which give the core away when ranks
 * outnumber cores or a peer is slow. */
#define SPIN_S 1e-3
/* A wait's first seconds of polling without giving the core away (OrnDsmCtx.spin): a
 * sched_yield costs more than a message between two ranks of a host takes (an exchange of
 * 640 bytes at -n 2: 0.78 us with it, 0.39 without; MPI's own 0.2), and softmax's flushes
 * wait so 7,813 times an epoch. */
#define SPIN_FIRST_S 10e-6
static void backoff(const OrnDsmCtx *ctx, int *sleeps, double waited)
{
    if (ctx->spin && waited < SPIN_FIRST_S) return;
    if (waited < SPIN_S) {
        sched_yield();
        return;
    }
    int shift = (*sleeps)++ / 16;
    long ns = 8000L << (shift > 5 ? 5 : shift);
    struct timespec ts = {0, ns};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Each rank's host (a hash of its name) and CPUs (its affinity mask), gathered: the hosts
 * that shared memory groups ranks by (orn_dsm_hosts_set), and a rank may spin in its waits
 * when its host's ranks are no more than the CPUs they may run on together. $ORN_WAIT_SPIN=0 or 1
 * decides instead (the exchange still takes place). */
int orn_dsm_wait_setup(OrnDsmCtx *ctx)
{
    typedef struct {
        uint64_t host, key; /* the name's hash; the host key (orn_dsm_host_key) */
        cpu_set_t cpus;
    } Where;
    int P = ctx->size, local = 0, status = ORN_OK;
    Where *all = orn_xcalloc((size_t)P, sizeof *all), *me = &all[ctx->rank];
    me->host = 1469598103934665603ULL; /* FNV-1a */
    for (const char *c = ctx->host; *c; c++)
        me->host = (me->host ^ (unsigned char)*c) * 1099511628211ULL;
    me->key = orn_dsm_host_key(ctx, me->host);
    if (sched_getaffinity(0, sizeof me->cpus, &me->cpus) != 0) CPU_ZERO(&me->cpus);
    if (P > 1) status = orn_dsm_allgather_into(ctx, all, sizeof *all, "hosts and CPUs");
    if (!status) {
        uint64_t *keys = orn_xmalloc((size_t)P * sizeof *keys);
        for (int q = 0; q < P; q++) keys[q] = all[q].key;
        orn_dsm_hosts_set(ctx, keys);
        free(keys);
    }
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (int q = 0; q < P && !status; q++)
        if (all[q].host == me->host) {
            local++;
            CPU_OR(&cpus, &cpus, &all[q].cpus);
        }
    ctx->spin = !status && local <= CPU_COUNT(&cpus);
    const char *env = getenv("ORN_WAIT_SPIN"); /* after the exchange: every rank takes part */
    if (env && (!strcmp(env, "0") || !strcmp(env, "1"))) ctx->spin = env[0] == '1';
    free(all);
    return status;
}

int orn_dsm_wait_for(OrnDsmCtx *ctx, OrnDsmPollFn poll, void *ud, const int *peers, int n,
                     const char *what)
{
    int status = ORN_OK, sleeps = 0;
    int64_t span = orn_tl_begin(ctx->tl, ORN_TL_WAIT, what);
    if (span >= 0 && peers && n > 0) {
        int one = 1;
        for (int i = 1; i < n; i++) one &= peers[i] == peers[0];
        if (one)
            orn_tl_int(ctx->tl, span, "peer", peers[0]);
        else
            orn_tl_str(ctx->tl, span, "peer", "several");
    }
    double start = orn_dsm_now();
    OrnLiveWait outer = orn_live_enter(ctx->live, what, peers, n);
    for (;;) {
        int pending = -1;
        status = poll(ctx, ud, &pending);
        if (status) goto fn_exit;
        if (pending < 0) break;
        /* others' reads are answered, and queued transfers move, while this rank waits */
        status = orn_dsm_serve(ctx);
        if (!status) status = orn_dsm_xprogress(ctx);
        if (status) goto fn_exit;
        double waited = orn_dsm_now() - start;
        if (ctx->timeout > 0 && waited > ctx->timeout) {
            if (peers && pending < n)
                status = orn_dsm_fail(ctx, ORN_E_TIMEOUT,
                                      "timed out after %.3g s waiting for peer %d (%s)", waited,
                                      peers[pending], what);
            else
                status = orn_dsm_fail(ctx, ORN_E_TIMEOUT, "timed out after %.3g s waiting (%s)",
                                      waited, what);
            goto fn_exit;
        }
        backoff(ctx, &sleeps, waited);
    }
fn_exit:
    orn_live_restore(ctx->live, outer);
    orn_tl_end(ctx->tl, span);
    return status;
}

typedef struct ReqPoll {
    OrnDsmReq **reqs;
    int n;
    const char *what;
} ReqPoll;

static int poll_reqs(OrnDsmCtx *ctx, void *ud, int *pending)
{
    ReqPoll *rp = ud;
    for (int i = 0; i < rp->n; i++) {
        if (!rp->reqs[i]) continue;
        int done = 0;
        int status = ctx->tp->ops->test(ctx->tp, &rp->reqs[i], &done);
        if (status) return orn_dsm_fail(ctx, status, "%s: %s", rp->what, ctx->tp->err);
        if (!done && *pending < 0) *pending = i;
    }
    return ORN_OK;
}

int orn_dsm_waitall(OrnDsmCtx *ctx, OrnDsmReq **reqs, const int *peers, int n, const char *what)
{
    ReqPoll rp = {reqs, n, what};
    int status = orn_dsm_wait_for(ctx, poll_reqs, &rp, peers, n, what);
    if (status)
        for (int i = 0; i < n; i++) orn_dsm_drop(ctx, &reqs[i]);
    return status;
}

/* Bytes of an MPI all-to-all to and from the other ranks (orn_dsm_traffic). */
static void count_traffic(OrnDsmCtx *ctx, const int *scounts, const int *rcounts)
{
    for (int p = 0; p < ctx->size; p++)
        if (p != ctx->rank) {
            ctx->sent += scounts[p];
            ctx->recv += rcounts[p];
        }
}

int orn_dsm_alltoallv(OrnDsmCtx *ctx, const void *send, const size_t *scounts, void **recv,
                      size_t *rcounts, const char *what)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK, nr = 0;
    OrnDsmReq **reqs = orn_xcalloc(2 * (size_t)P, sizeof *reqs);
    int *peers = orn_xcalloc(2 * (size_t)P, sizeof *peers);
    uint64_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    size_t *soff = orn_xcalloc((size_t)P + 1, sizeof *soff);
    char *rbuf = NULL;
    char whatbuf[160];
    *recv = NULL;

    for (int p = 0; p < P; p++) {
        sc[p] = scounts[p];
        soff[p + 1] = soff[p] + scounts[p];
    }
    /* Sizes: done when the last rank has arrived (a wait), then the data (a transfer). */
    double t0 = orn_dsm_now();
    snprintf(whatbuf, sizeof whatbuf, "%s: waiting for all ranks", what);
    int64_t span = orn_tl_begin(ctx->tl, ORN_TL_WAIT, whatbuf);
    orn_tl_str(ctx->tl, span, "peer", "all");
    snprintf(whatbuf, sizeof whatbuf, "%s: exchange of sizes", what);
    for (int p = 0; p < P; p++) {
        if (p == me) continue;
        peers[nr] = p;
        status = orn_dsm_irecv(ctx, &rc[p], sizeof rc[p], p, ORN_TAG_COUNTS, &reqs[nr++]);
        if (status) goto fn_fail;
    }
    for (int p = 0; p < P; p++) {
        if (p == me) continue;
        peers[nr] = p;
        status = orn_dsm_isend(ctx, &sc[p], sizeof sc[p], p, ORN_TAG_COUNTS, &reqs[nr++]);
        if (status) goto fn_fail;
    }
    rc[me] = sc[me];
    status = orn_dsm_waitall(ctx, reqs, peers, nr, whatbuf);
    orn_tl_end(ctx->tl, span);
    ctx->sync += orn_dsm_now() - t0;
    span = orn_tl_begin(ctx->tl, ORN_TL_TRANSFER, what);
    orn_tl_str(ctx->tl, span, "peer", "all");
    if (status) goto fn_fail;

    /* Data. Every rank has reached this exchange (the sizes came from all of them), so a
     * collective cannot hang on a missing peer: use MPI's MPI_Ialltoallv when the sizes
     * fit its int counts, polled like everything else. */
    size_t total = 0, stotal = soff[P];
    for (int p = 0; p < P; p++) total += (size_t)rc[p];
    rbuf = orn_xmalloc(total ? total : 1);
    orn_dsm_huge(rbuf, total); /* a repartition's megabytes: 2 MiB page faults */
    snprintf(whatbuf, sizeof whatbuf, "%s: exchange of data", what);
    nr = 0;
    if (total <= INT_MAX && stotal <= INT_MAX) {
        int *ic = orn_xmalloc(4 * (size_t)P * sizeof *ic);
        int *isc = ic, *isd = ic + P, *irc = ic + 2 * P, *ird = ic + 3 * P;
        size_t off = 0;
        for (int p = 0; p < P; p++) {
            isc[p] = (int)sc[p];
            isd[p] = (int)soff[p];
            irc[p] = (int)rc[p];
            ird[p] = (int)off;
            rcounts[p] = (size_t)rc[p];
            off += (size_t)rc[p];
        }
        OrnDsmReq *req = NULL;
        status = ctx->tp->ops->ialltoallv(ctx->tp, send ? send : (const void *)"", isc, isd, rbuf,
                                          irc, ird, &req);
        if (status) {
            status = orn_dsm_tp_fail(ctx, status, whatbuf);
        } else {
            count_traffic(ctx, isc, irc);
            status = orn_dsm_waitall(ctx, &req, NULL, 1, whatbuf);
        }
        free(ic);
        if (status) goto fn_fail;
        *recv = rbuf;
        rbuf = NULL;
        goto fn_exit;
    }
    size_t off = 0;
    for (int p = 0; p < P; p++) {
        rcounts[p] = (size_t)rc[p];
        if (p == me) {
            if (rc[p]) memcpy(rbuf + off, (const char *)send + soff[p], (size_t)rc[p]);
        } else if (rc[p]) {
            peers[nr] = p;
            status = orn_dsm_irecv(ctx, rbuf + off, (size_t)rc[p], p, ORN_TAG_DATA, &reqs[nr++]);
            if (status) goto fn_fail;
        }
        off += (size_t)rc[p];
    }
    for (int p = 0; p < P; p++) {
        if (p == me || !sc[p]) continue;
        peers[nr] = p;
        status = orn_dsm_isend(ctx, (const char *)send + soff[p], (size_t)sc[p], p, ORN_TAG_DATA,
                               &reqs[nr++]);
        if (status) goto fn_fail;
    }
    status = orn_dsm_waitall(ctx, reqs, peers, nr, whatbuf);
    if (status) goto fn_fail;
    *recv = rbuf;
    rbuf = NULL;
fn_exit:
    orn_tl_end(ctx->tl, span);
    free(rbuf);
    free(reqs);
    free(peers);
    free(sc);
    free(rc);
    free(soff);
    return status;
fn_fail:
    for (int i = 0; i < nr; i++) orn_dsm_drop(ctx, &reqs[i]);
    goto fn_exit;
}

/* orn_dsm_exchange, orn_dsm_scatter_slices, orn_dsm_gather_slices and
 * orn_dsm_allgather_into (transport.h): point to point with every peer, receives posted
 * first, each rank starting with its next neighbour up, so that no rank is every rank's first
 * peer; empty parts send nothing; `own` (if any) is copied while the parts travel. `wait`: a few
 * bytes a rank (sizes, an allreduce), the time is waiting for the last rank to arrive, recorded as
 * such (a wait span, OrnDsmCtx.sync). */
static int exchange(OrnDsmCtx *ctx, const void *const *sp, const size_t *sn, void *const *rp,
                    const size_t *rn, const OrnDsmPiece *own, int wait, const char *what)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK, nr = 0;
    OrnDsmReq **reqs = orn_xcalloc(2 * (size_t)P, sizeof *reqs);
    int *peers = orn_xcalloc(2 * (size_t)P, sizeof *peers);
    double t0 = orn_dsm_now();
    int64_t span = orn_tl_begin(ctx->tl, wait ? ORN_TL_WAIT : ORN_TL_TRANSFER, what);
    orn_tl_str(ctx->tl, span, "peer", "all");
    for (int k = 1; k < P && !status; k++) {
        int p = (me + k) % P;
        if (!rn[p]) continue;
        peers[nr] = p;
        status = orn_dsm_irecv(ctx, rp[p], rn[p], p, ORN_TAG_DATA, &reqs[nr++]);
    }
    for (int k = 1; k < P && !status; k++) {
        int p = (me + P - k) % P;
        if (!sn[p]) continue;
        peers[nr] = p;
        status = orn_dsm_isend(ctx, sp[p], sn[p], p, ORN_TAG_DATA, &reqs[nr++]);
    }
    if (!status && own && own->n) memcpy(own->to, own->from, own->n); /* while they travel */
    if (!status)
        status = orn_dsm_waitall(ctx, reqs, peers, nr, what);
    else
        for (int i = 0; i < nr; i++) orn_dsm_drop(ctx, &reqs[i]);
    orn_tl_end(ctx->tl, span);
    if (wait) ctx->sync += orn_dsm_now() - t0;
    free(reqs);
    free(peers);
    return status;
}

OrnDsmSwap orn_dsm_swap_new(int P)
{
    /* P send and P receive pointers, then P send and P receive sizes */
    void **blk = orn_xcalloc(2 * (size_t)P, sizeof(void *) + sizeof(size_t));
    OrnDsmSwap s = {(const void **)blk, blk + P, (size_t *)(blk + 2 * (size_t)P), NULL};
    s.rn = s.sn + P;
    return s;
}

void orn_dsm_swap_free(OrnDsmSwap *s)
{
    free(s->sp);
    *s = (OrnDsmSwap){0};
}

int orn_dsm_exchange(OrnDsmCtx *ctx, const OrnDsmSwap *s, const OrnDsmPiece *own, const char *what)
{
    return exchange(ctx, s->sp, s->sn, s->rp, s->rn, own, 0, what);
}

/* The slices' parts as exchange()'s: scatter sends this rank's bytes of p's slice of `mine`
 * and receives q's bytes of its own slice at buf + q * (its slice's size), its own copied
 * there; gather sends its slice of buf and receives p's into its place in buf. */
static int slices_exchange(OrnDsmCtx *ctx, const size_t *off, const char *mine, char *buf,
                           int scatter, int wait, const char *what)
{
    int P = ctx->size, me = ctx->rank;
    OrnDsmSwap s = orn_dsm_swap_new(P);
    size_t own = off[me + 1] - off[me];
    for (int p = 0; p < P; p++) {
        s.sn[p] = scatter ? off[p + 1] - off[p] : own;
        s.sp[p] = scatter ? mine + off[p] : buf + off[me];
        s.rn[p] = scatter ? own : off[p + 1] - off[p];
        s.rp[p] = scatter ? buf + (size_t)p * own : buf + off[p];
    }
    OrnDsmPiece self = {buf + (size_t)me * own, scatter ? mine + off[me] : NULL, scatter ? own : 0};
    int status = exchange(ctx, s.sp, s.sn, s.rp, s.rn, &self, wait, what);
    orn_dsm_swap_free(&s);
    return status;
}

/* Every rank's n bytes at buf + rank * n to every rank (the same n everywhere). */
static int gather_equal(OrnDsmCtx *ctx, void *buf, size_t n, int wait, const char *what)
{
    size_t *off = orn_xmalloc(((size_t)ctx->size + 1) * sizeof *off);
    for (int q = 0; q <= ctx->size; q++) off[q] = (size_t)q * n;
    int status = slices_exchange(ctx, off, NULL, buf, 0, wait, what);
    free(off);
    return status;
}

int orn_dsm_scatter_slices(OrnDsmCtx *ctx, const void *mine, const size_t *off, void *into,
                           const char *what)
{
    return slices_exchange(ctx, off, mine, into, 1, 0, what);
}

int orn_dsm_gather_slices(OrnDsmCtx *ctx, void *buf, const size_t *off, const char *what)
{
    return slices_exchange(ctx, off, NULL, buf, 0, 0, what);
}

/* The sizes first (a wait: every rank has arrived when they are in), then every part from
 * its rank into its place in the result: point to point, nothing copied but the rank's
 * own part. */
int orn_dsm_allgatherv(OrnDsmCtx *ctx, const void *send, size_t n, void **recv, size_t *counts,
                       const char *what)
{
    int P = ctx->size, me = ctx->rank;
    uint64_t *sz = orn_xcalloc((size_t)P, sizeof *sz);
    size_t *off = orn_xcalloc((size_t)P + 1, sizeof *off);
    char whatbuf[160];
    *recv = NULL;
    sz[me] = n;
    snprintf(whatbuf, sizeof whatbuf, "%s: waiting for all ranks", what);
    int status = gather_equal(ctx, sz, sizeof *sz, 1, whatbuf);
    if (!status) {
        for (int p = 0; p < P; p++) {
            counts[p] = (size_t)sz[p];
            off[p + 1] = off[p] + counts[p];
        }
        char *rbuf = orn_xmalloc(off[P] ? off[P] : 1);
        orn_dsm_huge(rbuf, off[P]); /* a repartition's megabytes: 2 MiB page faults */
        if (n) memcpy(rbuf + off[me], send, n);
        status = orn_dsm_gather_slices(ctx, rbuf, off, what);
        if (status)
            free(rbuf);
        else
            *recv = rbuf;
    }
    free(sz);
    free(off);
    return status;
}

int orn_dsm_allgather_into(OrnDsmCtx *ctx, void *buf, size_t n, const char *what)
{
    return gather_equal(ctx, buf, n, 0, what);
}

int orn_dsm_barrier(OrnDsmCtx *ctx)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    char token = 0, in = 0;
    int64_t span = P > 1 ? orn_tl_begin(ctx->tl, ORN_TL_WAIT, "barrier") : -1;
    double t0 = orn_dsm_now();
    for (int k = 1; k < P; k *= 2) {
        OrnDsmReq *reqs[2] = {NULL, NULL};
        int peers[2] = {(me - k + P) % P, (me + k) % P};
        status = orn_dsm_irecv(ctx, &in, 1, peers[0], ORN_TAG_BARRIER, &reqs[0]);
        if (!status) status = orn_dsm_isend(ctx, &token, 1, peers[1], ORN_TAG_BARRIER, &reqs[1]);
        if (!status) status = orn_dsm_waitall(ctx, reqs, peers, 2, "barrier");
        if (status) {
            orn_dsm_drop(ctx, &reqs[0]);
            orn_dsm_drop(ctx, &reqs[1]);
            break;
        }
    }
    orn_tl_end(ctx->tl, span);
    ctx->sync += orn_dsm_now() - t0;
    return status;
}

/* Rank 0: one pass told by `peer` (its number: messages of a pair and tag come in order). */
static int take_pass(OrnDsmCtx *ctx, int peer, const char *what)
{
    int64_t seq = 0;
    OrnDsmReq *req = NULL;
    int status = orn_dsm_irecv(ctx, &seq, sizeof seq, peer, ORN_TAG_PASS, &req);
    if (!status) status = orn_dsm_waitall(ctx, &req, &peer, 1, what);
    if (!status) ctx->passed[peer] = seq;
    return status;
}

int orn_dsm_pass(OrnDsmCtx *ctx, int64_t n)
{
    int status = ORN_OK;
    if (ctx->size == 1) return ORN_OK;
    int64_t seq = ctx->passes += n;
    if (ctx->rank == 0) { /* the passes that came, without waiting: a bounded queue */
        if (!ctx->passed) ctx->passed = orn_xcalloc((size_t)ctx->size, sizeof *ctx->passed);
        for (int found = 1; found && !status;) {
            int peer = -1;
            size_t bytes = 0;
            status = ctx->tp->ops->iprobe(ctx->tp, ORN_TAG_PASS, &found, &peer, &bytes);
            if (status) return orn_dsm_tp_fail(ctx, status, "looking for passes");
            if (found) status = take_pass(ctx, peer, "a pass");
        }
        return status;
    }
    int slot = (int)(seq % ORN_DSM_PASS_RING), root = 0;
    if (ctx->pass_req[slot])
        status = orn_dsm_waitall(ctx, &ctx->pass_req[slot], &root, 1, "telling rank 0 of a pass");
    if (status) return status;
    ctx->pass_seq[slot] = seq;
    return orn_dsm_isend(ctx, &ctx->pass_seq[slot], sizeof seq, 0, ORN_TAG_PASS,
                         &ctx->pass_req[slot]);
}

int orn_dsm_settle(OrnDsmCtx *ctx, const char *what)
{
    int status = ORN_OK;
    if (ctx->rank != 0 || !ctx->passed) return ORN_OK;
    for (int p = 1; p < ctx->size && !status; p++)
        while (ctx->passed[p] < ctx->passes && !status) status = take_pass(ctx, p, what);
    return status;
}

void orn_dsm_pass_free(OrnDsmCtx *ctx)
{
    int root = 0;
    for (int i = 0; i < ORN_DSM_PASS_RING; i++)
        if (ctx->pass_req[i] && orn_dsm_waitall(ctx, &ctx->pass_req[i], &root, 1, "a pass"))
            orn_dsm_drop(ctx, &ctx->pass_req[i]);
    free(ctx->passed);
    ctx->passed = NULL;
}

int orn_dsm_bcast(OrnDsmCtx *ctx, void *buf, size_t n, int root)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK, nr = 0;
    if (P == 1 || n == 0) return ORN_OK;
    OrnDsmReq **reqs = orn_xcalloc((size_t)P, sizeof *reqs);
    int *peers = orn_xcalloc((size_t)P, sizeof *peers);
    int64_t span = orn_tl_begin(ctx->tl, ORN_TL_TRANSFER, "broadcast");
    orn_tl_int(ctx->tl, span, "root", root);
    if (me == root) {
        for (int p = 0; p < P; p++) {
            if (p == me) continue;
            peers[nr] = p;
            status = orn_dsm_isend(ctx, buf, n, p, ORN_TAG_DATA, &reqs[nr++]);
            if (status) break;
        }
    } else {
        peers[0] = root;
        status = orn_dsm_irecv(ctx, buf, n, root, ORN_TAG_DATA, &reqs[nr++]);
    }
    if (!status) status = orn_dsm_waitall(ctx, reqs, peers, nr, "broadcast");
    orn_tl_end(ctx->tl, span);
    for (int i = 0; i < nr; i++) orn_dsm_drop(ctx, &reqs[i]);
    free(reqs);
    free(peers);
    return status;
}

int orn_dsm_allreduce_i64(OrnDsmCtx *ctx, int64_t *v, size_t n, int op)
{
    int P = ctx->size;
    int64_t *all = orn_xmalloc((size_t)P * n * sizeof *v + 1);
    memcpy(all + (size_t)ctx->rank * n, v, n * sizeof *v);
    int status = gather_equal(ctx, all, n * sizeof *v, 1, "allreduce: waiting for all ranks");
    if (!status) {
        const int64_t *a = all;
        for (size_t i = 0; i < n; i++) {
            int64_t x = a[i];
            for (int p = 1; p < P; p++) {
                int64_t y = a[(size_t)p * n + i];
                if (op == ORN_DSM_SUM)
                    x += y;
                else if (op == ORN_DSM_MIN)
                    x = y < x ? y : x;
                else
                    x = y > x ? y : x;
            }
            v[i] = x;
        }
    }
    free(all);
    return status;
}

int orn_dsm_allreduce_f64(OrnDsmCtx *ctx, double *v, size_t n, int op)
{
    int P = ctx->size;
    double *all = orn_xmalloc((size_t)P * n * sizeof *v + 1);
    memcpy(all + (size_t)ctx->rank * n, v, n * sizeof *v);
    int status = gather_equal(ctx, all, n * sizeof *v, 1, "allreduce: waiting for all ranks");
    if (!status) {
        const double *a = all;
        for (size_t i = 0; i < n; i++) {
            double x = a[i];
            for (int p = 1; p < P; p++) {
                double y = a[(size_t)p * n + i];
                if (op == ORN_DSM_SUM)
                    x += y;
                else if (op == ORN_DSM_MIN)
                    x = fmin(x, y);
                else
                    x = fmax(x, y);
            }
            v[i] = x;
        }
    }
    free(all);
    return status;
}
