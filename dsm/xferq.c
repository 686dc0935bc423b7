/* xferq.c: need-ordered transfers (xferq.h): the context's queue, its chunks and their
 * progress.
 *
 * The queue is one list in queueing order (sends and receives; receives only wait there to
 * be tested). Posting picks, each time the window has room, the send with the smallest
 * (need, queueing order) among the eligible ones -- those with no earlier transfer to the
 * same peer on the same tag still holding unposted chunks -- and posts its next chunk.
 * Transfers are few (a loop's blocks in flight, a reply or two), so a scan is enough.
 *
 * Invariants: inflight is the bytes of send chunks posted and not yet found complete; a
 * transfer's chunks are posted in order, chunk i at offset i * chunk; a transfer is
 * finished when all its chunks are complete, and leaves the list when its owner tests or
 * waits for it then (or drops it).
 */
#include "xferq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "dsm_int.h"

enum { DEFAULT_CHUNK = 256 << 10, DEFAULT_WINDOW = 8 * DEFAULT_CHUNK };

struct OrnDsmXfer {
    OrnDsmXfer *next; /* the queue, in queueing order */
    int send, peer, tag;
    int nchunk, posted, ndone; /* chunks in all, posted, complete */
    int finished, looked;      /* every chunk complete; tested or waited for once */
    char *buf;
    size_t n;            /* bytes (a send's chunks may be those of a larger bound) */
    size_t chunk;        /* the chunk size when it was queued; 0: one message */
    double need, t0, t1; /* queued, found complete (orn_dsm_now) */
    int64_t seq;
    OrnDsmReq **req; /* per chunk, NULL once complete */
    char what[64];
};

typedef struct XferQ {
    OrnDsmXfer *head, *tail;
    size_t inflight;
    int64_t seq;
    double busy_since; /* when inflight last became non-zero */
    int progressing;   /* re-entrancy guard */
    OrnDsmXferStats st;
} XferQ;

static XferQ *queue(OrnDsmCtx *ctx)
{
    if (!ctx->xq) ctx->xq = orn_xcalloc(1, sizeof *ctx->xq);
    return ctx->xq;
}

/* Chunk i of x: chunk bytes at offset i * chunk, clipped to n (empty past n). */
static size_t chunk_len(const OrnDsmXfer *x, int i)
{
    if (x->nchunk == 1) return x->n;
    size_t off = (size_t)i * x->chunk;
    if (off >= x->n) return 0;
    return x->n - off < x->chunk ? x->n - off : x->chunk;
}

static char *chunk_at(const OrnDsmXfer *x, int i)
{
    return chunk_len(x, i) ? x->buf + (size_t)i * x->chunk : x->buf;
}

static OrnDsmXfer *xfer_new(OrnDsmCtx *ctx, int send, void *buf, size_t n, size_t bound, int peer,
                            int tag, double need, const char *what)
{
    XferQ *q = queue(ctx);
    OrnDsmXfer *x = orn_xcalloc(1, sizeof *x);
    x->send = send;
    x->peer = peer;
    x->tag = tag;
    x->buf = buf;
    x->n = n;
    x->need = need;
    x->seq = q->seq++;
    x->t0 = orn_dsm_now();
    x->chunk = ctx->xchunk;
    x->nchunk = x->chunk && bound > x->chunk ? (int)((bound + x->chunk - 1) / x->chunk) : 1;
    x->req = orn_xcalloc((size_t)x->nchunk, sizeof *x->req);
    snprintf(x->what, sizeof x->what, "%s", what ? what : "transfer");
    if (q->tail)
        q->tail->next = x;
    else
        q->head = x;
    q->tail = x;
    return x;
}

static void unlink_xfer(XferQ *q, OrnDsmXfer *x)
{
    OrnDsmXfer *prev = NULL;
    for (OrnDsmXfer *y = q->head; y; prev = y, y = y->next) {
        if (y != x) continue;
        if (prev)
            prev->next = x->next;
        else
            q->head = x->next;
        if (q->tail == x) q->tail = prev;
        return;
    }
}

static void xfer_free(OrnDsmCtx *ctx, OrnDsmXfer *x)
{
    XferQ *q = ctx->xq;
    for (int i = 0; i < x->nchunk; i++) {
        if (!x->req[i]) continue;
        if (x->send && q) q->inflight -= chunk_len(x, i);
        orn_dsm_drop(ctx, &x->req[i]);
    }
    if (q) unlink_xfer(q, x);
    free(x->req);
    free(x);
}

/* The transfer's last chunk is complete: recorded on the timeline as a flight. */
static void finished(OrnDsmCtx *ctx, OrnDsmXfer *x)
{
    x->finished = 1;
    x->t1 = orn_dsm_now();
    int64_t id = orn_tl_flight(ctx->tl, x->what, x->t0, x->t1);
    if (id < 0) return;
    orn_tl_str(ctx->tl, id, "dir", x->send ? "send" : "receive");
    orn_tl_int(ctx->tl, id, "peer", x->peer);
    orn_tl_int(ctx->tl, id, "bytes", (int64_t)x->n);
    if (x->need > -1e300) orn_tl_num(ctx->tl, id, "need", x->need);
}

/* Test x's posted chunks that are not complete yet. */
static int test_chunks(OrnDsmCtx *ctx, XferQ *q, OrnDsmXfer *x)
{
    for (int i = x->ndone; i < x->posted; i++) {
        if (!x->req[i]) continue;
        int done = 0;
        int status = orn_dsm_test(ctx, &x->req[i], &done);
        if (status) return status;
        if (!done) continue;
        if (x->send) {
            q->inflight -= chunk_len(x, i);
            if (!q->inflight) q->st.busy += orn_dsm_now() - q->busy_since;
        }
    }
    while (x->ndone < x->posted && !x->req[x->ndone]) x->ndone++;
    if (x->ndone == x->nchunk && !x->finished) finished(ctx, x);
    return ORN_OK;
}

/* May x post its next chunk: no earlier transfer on its (peer, tag) has chunks to post. */
static int eligible(const XferQ *q, const OrnDsmXfer *x)
{
    for (const OrnDsmXfer *y = q->head; y && y != x; y = y->next)
        if (y->send && y->peer == x->peer && y->tag == x->tag && y->posted < y->nchunk) return 0;
    return 1;
}

static int post_chunk(OrnDsmCtx *ctx, XferQ *q, OrnDsmXfer *x)
{
    int i = x->posted;
    size_t len = chunk_len(x, i);
    int status = orn_dsm_isend(ctx, chunk_at(x, i), len, x->peer, x->tag, &x->req[i]);
    if (status) return status;
    /* the bytes were counted when the transfer was queued */
    if (x->peer != ctx->rank) ctx->sent -= (int64_t)len;
    if (!q->inflight) q->busy_since = orn_dsm_now();
    q->inflight += len;
    x->posted++;
    q->st.chunks++;
    for (const OrnDsmXfer *y = q->head; y && y != x; y = y->next)
        if (y->send && y->posted < y->nchunk) {
            q->st.overtakes++;
            break;
        }
    return ORN_OK;
}

/* Post chunks while the window has room: small transfers at once, then the rest in need
 * order. */
static int post_ready(OrnDsmCtx *ctx, XferQ *q)
{
    int status;
    for (OrnDsmXfer *x = q->head; x; x = x->next)
        if (x->send && x->nchunk == 1 && x->n <= ORN_XFER_SMALL && !x->posted && eligible(q, x)) {
            status = post_chunk(ctx, q, x);
            if (status) return status;
        }
    for (;;) {
        OrnDsmXfer *best = NULL;
        for (OrnDsmXfer *x = q->head; x; x = x->next) {
            if (!x->send || x->posted == x->nchunk || !eligible(q, x)) continue;
            if (!best || x->need < best->need) best = x; /* ties: queueing order */
        }
        if (!best) return ORN_OK;
        size_t len = chunk_len(best, best->posted);
        if (q->inflight > 0 && q->inflight + len > ctx->xwindow) return ORN_OK;
        status = post_chunk(ctx, q, best);
        if (status) return status;
    }
}

int orn_dsm_xprogress(OrnDsmCtx *ctx)
{
    XferQ *q = ctx->xq;
    if (!q || !q->head || q->progressing) return ORN_OK;
    q->progressing = 1;
    int status = ORN_OK;
    for (OrnDsmXfer *x = q->head; x && !status; x = x->next)
        if (!x->finished) status = test_chunks(ctx, q, x);
    if (!status) status = post_ready(ctx, q);
    q->progressing = 0;
    return status;
}

int orn_dsm_xsend(OrnDsmCtx *ctx, const void *buf, size_t n, int peer, int tag, double need,
                  const char *what, OrnDsmXfer **out)
{
    return orn_dsm_xsend_upto(ctx, buf, n, n, peer, tag, need, what, out);
}

int orn_dsm_xsend_upto(OrnDsmCtx *ctx, const void *buf, size_t n, size_t bound, int peer, int tag,
                       double need, const char *what, OrnDsmXfer **out)
{
    if (peer < 0 || peer >= ctx->size)
        return orn_dsm_fail(ctx, ORN_E_ARG, "%s: no rank %d", what ? what : "send", peer);
    if (n > bound)
        return orn_dsm_fail(ctx, ORN_E_INTERNAL, "%s: %zu bytes for a receiver of %zu",
                            what ? what : "send", n, bound);
    OrnDsmXfer *x = xfer_new(ctx, 1, (void *)(uintptr_t)buf, n, bound, peer, tag, need, what);
    XferQ *q = ctx->xq;
    q->st.sends++;
    q->st.sent += (int64_t)n;
    if (peer != ctx->rank) ctx->sent += (int64_t)n;
    *out = x;
    int status = orn_dsm_xprogress(ctx);
    if (status) orn_dsm_xdrop(ctx, out);
    return status;
}

int orn_dsm_xrecv(OrnDsmCtx *ctx, void *buf, size_t n, int peer, int tag, double need,
                  const char *what, OrnDsmXfer **out)
{
    if (peer < 0 || peer >= ctx->size)
        return orn_dsm_fail(ctx, ORN_E_ARG, "%s: no rank %d", what ? what : "receive", peer);
    OrnDsmXfer *x = xfer_new(ctx, 0, buf, n, n, peer, tag, need, what);
    XferQ *q = ctx->xq;
    q->st.recvs++;
    q->st.received += (int64_t)n;
    *out = x;
    for (int i = 0; i < x->nchunk; i++) {
        size_t len = chunk_len(x, i);
        int status = orn_dsm_irecv(ctx, chunk_at(x, i), len, peer, tag, &x->req[i]);
        if (status) {
            orn_dsm_xdrop(ctx, out);
            return status;
        }
        x->posted++;
    }
    return ORN_OK;
}

/* The owner looks at x for the first time: a receive already complete was hidden. */
static void look(XferQ *q, OrnDsmXfer *x)
{
    if (x->looked) return;
    x->looked = 1;
    if (!x->send && x->finished) {
        q->st.early++;
        q->st.early_bytes += (int64_t)x->n;
    }
}

int orn_dsm_xtest(OrnDsmCtx *ctx, OrnDsmXfer **x, int *done)
{
    *done = 1;
    if (!*x) return ORN_OK;
    XferQ *q = ctx->xq;
    int status = orn_dsm_xprogress(ctx);
    if (status) return status;
    look(q, *x);
    *done = (*x)->finished;
    if (*done) {
        xfer_free(ctx, *x);
        *x = NULL;
    }
    return ORN_OK;
}

typedef struct XPoll {
    OrnDsmXfer **x;
    int n;
} XPoll;

static int poll_xfers(OrnDsmCtx *ctx, void *ud, int *pending)
{
    XPoll *p = ud;
    int status = orn_dsm_xprogress(ctx);
    if (status) return status;
    for (int i = 0; i < p->n; i++) {
        if (!p->x[i]) continue;
        if (!p->x[i]->finished) {
            if (*pending < 0) *pending = i;
            continue;
        }
        xfer_free(ctx, p->x[i]);
        p->x[i] = NULL;
    }
    return ORN_OK;
}

int orn_dsm_xwait(OrnDsmCtx *ctx, OrnDsmXfer **x, int n, const char *what)
{
    int *peers = orn_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *peers);
    int status = ORN_OK, any = 0;
    /* complete ones before the first poll were hidden behind what ran before */
    status = orn_dsm_xprogress(ctx);
    for (int i = 0; i < n; i++) {
        peers[i] = x[i] ? x[i]->peer : 0;
        if (x[i]) {
            look(ctx->xq, x[i]);
            any = 1;
        }
    }
    if (!status && any) {
        XPoll p = {x, n};
        status = orn_dsm_wait_for(ctx, poll_xfers, &p, peers, n, what);
    }
    if (status)
        for (int i = 0; i < n; i++) orn_dsm_xdrop(ctx, &x[i]);
    free(peers);
    return status;
}

void orn_dsm_xdrop(OrnDsmCtx *ctx, OrnDsmXfer **x)
{
    if (!*x) return;
    xfer_free(ctx, *x);
    *x = NULL;
}

int orn_dsm_xfer_config(OrnDsmCtx *ctx, size_t chunk, size_t window)
{
    ctx->xchunk = chunk;
    ctx->xwindow = window ? window : DEFAULT_WINDOW;
    return ORN_OK;
}

void orn_dsm_xfer_settings(const OrnDsmCtx *ctx, size_t *chunk, size_t *window)
{
    *chunk = ctx->xchunk;
    *window = ctx->xwindow;
}

void orn_dsm_xfer_stats(const OrnDsmCtx *ctx, OrnDsmXferStats *out)
{
    if (ctx->xq) {
        *out = ctx->xq->st;
        if (ctx->xq->inflight) out->busy += orn_dsm_now() - ctx->xq->busy_since;
    } else {
        memset(out, 0, sizeof *out);
    }
}

void orn_dsm_xfer_free(OrnDsmCtx *ctx)
{
    XferQ *q = ctx->xq;
    if (!q) return;
    while (q->head) xfer_free(ctx, q->head);
    free(q);
    ctx->xq = NULL;
}

static size_t env_bytes(const char *name, size_t dflt, int warn)
{
    const char *env = getenv(name);
    if (!env || !*env) return dflt;
    char *end = NULL;
    unsigned long long v = strtoull(env, &end, 10);
    if (end && *end == '\0' && env[0] != '-') return (size_t)v;
    if (warn) fprintf(stderr, "orion: warning: ignoring %s='%.40s' (bytes)\n", name, env);
    return dflt;
}

int orn_dsm_xfer_init(OrnDsmCtx *ctx)
{
    uint64_t chunk = env_bytes("ORN_XFER_CHUNK", DEFAULT_CHUNK, ctx->rank == 0);
    ctx->xwindow = env_bytes("ORN_XFER_WINDOW", DEFAULT_WINDOW, ctx->rank == 0);
    if (!ctx->xwindow) ctx->xwindow = DEFAULT_WINDOW;
    int status = ctx->size > 1 ? orn_dsm_bcast(ctx, &chunk, sizeof chunk, 0) : ORN_OK;
    ctx->xchunk = (size_t)chunk;
    return status;
}
