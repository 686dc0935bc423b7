/* test_xferq.c: the need-ordered transfer queue (dsm/xferq.h) in one process, over a link
 * that the test drives: a transport whose sends complete only when the test (or, in
 * "auto" mode, every test() call) lets the oldest posted send through, as a FIFO link
 * would. Checks the order in which chunks are handed to the transport: the soonest-needed
 * transfer first, small ones at once, the window respected, one peer and tag in queueing
 * order; that the bytes arrive intact; that waits progress the queue; and that receives
 * complete before their first wait count as hidden. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "dsm.h"
#include "transport.h"
#include "xferq.h"

static int checks, failed;
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failed++;                                                                              \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------- a driven FIFO link */

struct OrnDsmReq {
    int send, done, tag;
    const void *sbuf;
    void *rbuf;
    size_t n;
    struct OrnDsmReq *next; /* sends: the link, in posting order; receives: posted ones */
};

typedef struct Msg {
    struct Msg *next;
    int tag;
    size_t n;
    char data[];
} Msg;

typedef struct Link {
    OrnDsmTransport base;
    OrnDsmReq *wire;  /* sends posted, not yet through */
    OrnDsmReq *recvs; /* receives posted, not yet matched */
    Msg *unexpected;  /* arrived before their receive */
    int log_tag[64];  /* each send posted: its tag and size */
    size_t log_n[64];
    int nlog;
    int auto_drain;   /* every test() lets one send through */
    int64_t released; /* completed requests freed */
} Link;

static void deliver(Link *l, int tag, const void *data, size_t n)
{
    for (OrnDsmReq **pp = &l->recvs; *pp; pp = &(*pp)->next) {
        OrnDsmReq *r = *pp;
        if (r->tag != tag) continue;
        CHECK(r->n == n);
        memcpy(r->rbuf, data, n < r->n ? n : r->n);
        r->done = 1;
        *pp = r->next;
        return;
    }
    Msg *m = orn_xmalloc(sizeof *m + n);
    m->next = NULL;
    m->tag = tag;
    m->n = n;
    memcpy(m->data, data, n);
    Msg **pp = &l->unexpected;
    while (*pp) pp = &(*pp)->next;
    *pp = m;
}

/* Let the k oldest sends on the wire through. */
static void drain(Link *l, int k)
{
    while (k-- > 0 && l->wire) {
        OrnDsmReq *s = l->wire;
        l->wire = s->next;
        deliver(l, s->tag, s->sbuf, s->n);
        s->done = 1;
    }
}

static int link_isend(OrnDsmTransport *tp, const void *buf, size_t n, int peer, int tag,
                      OrnDsmReq **req)
{
    Link *l = (Link *)tp;
    (void)peer;
    OrnDsmReq *q = orn_xcalloc(1, sizeof *q);
    q->send = 1;
    q->tag = tag;
    q->sbuf = buf;
    q->n = n;
    OrnDsmReq **pp = &l->wire;
    while (*pp) pp = &(*pp)->next;
    *pp = q;
    if (l->nlog < 64) {
        l->log_tag[l->nlog] = tag;
        l->log_n[l->nlog++] = n;
    }
    *req = q;
    return ORN_OK;
}

static int link_irecv(OrnDsmTransport *tp, void *buf, size_t n, int peer, int tag, OrnDsmReq **req)
{
    Link *l = (Link *)tp;
    (void)peer;
    OrnDsmReq *q = orn_xcalloc(1, sizeof *q);
    q->tag = tag;
    q->rbuf = buf;
    q->n = n;
    *req = q;
    for (Msg **pp = &l->unexpected; *pp; pp = &(*pp)->next) {
        Msg *m = *pp;
        if (m->tag != tag) continue;
        CHECK(m->n == n);
        memcpy(buf, m->data, n < m->n ? n : m->n);
        q->done = 1;
        *pp = m->next;
        free(m);
        return ORN_OK;
    }
    OrnDsmReq **pp = &l->recvs;
    while (*pp) pp = &(*pp)->next;
    *pp = q;
    return ORN_OK;
}

static int link_test(OrnDsmTransport *tp, OrnDsmReq **req, int *done)
{
    Link *l = (Link *)tp;
    if (l->auto_drain) drain(l, 1);
    *done = !*req || (*req)->done;
    if (*req && (*req)->done) {
        free(*req);
        *req = NULL;
        l->released++;
    }
    return ORN_OK;
}

static int link_iprobe(OrnDsmTransport *tp, int tag, int *found, int *peer, size_t *n)
{
    (void)tp;
    (void)tag;
    (void)peer;
    (void)n;
    *found = 0;
    return ORN_OK;
}

static void unlink_req(OrnDsmReq **list, OrnDsmReq *q)
{
    for (OrnDsmReq **pp = list; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            return;
        }
}

static void link_drop(OrnDsmTransport *tp, OrnDsmReq **req)
{
    Link *l = (Link *)tp;
    if (!*req) return;
    unlink_req(&l->wire, *req);
    unlink_req(&l->recvs, *req);
    free(*req);
    *req = NULL;
}

__attribute__((noreturn)) static void link_abort(OrnDsmTransport *tp, int code)
{
    (void)tp;
    exit(code);
}

static void link_free(OrnDsmTransport *tp)
{
    Link *l = (Link *)tp;
    while (l->unexpected) {
        Msg *m = l->unexpected;
        l->unexpected = m->next;
        free(m);
    }
    free(l);
}

static const OrnDsmTransportOps link_ops = {
    .name = "test link",
    .isend = link_isend,
    .irecv = link_irecv,
    .test = link_test,
    .iprobe = link_iprobe,
    .drop = link_drop,
    .abort = link_abort,
    .free = link_free,
};

/* ---------------------------------------------------------------- tests */

static void fill(char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) b[i] = (char)(seed * 31 + (int)(i % 251));
}

static int logged(const Link *l, int i, int tag, size_t n)
{
    return i < l->nlog && l->log_tag[i] == tag && l->log_n[i] == n;
}

/* Four transfers on a link of two 8 KiB chunks: the order of the chunks posted. */
#define KB 8192
static void test_order(OrnDsmCtx *ctx, Link *l)
{
    enum { A = 10, B = 11, C = 12 };
    static char a[4 * KB], b[3 * KB], c[16], d[2 * KB];
    static char ra[4 * KB], rb[3 * KB], rc[16], rd[2 * KB];
    fill(a, sizeof a, 1);
    fill(b, sizeof b, 2);
    fill(c, sizeof c, 3);
    fill(d, sizeof d, 4);
    CHECK(orn_dsm_xfer_config(ctx, KB, 2 * KB) == ORN_OK);
    OrnDsmXfer *xa = NULL, *xb = NULL, *xc = NULL, *xd = NULL, *r[4] = {NULL, NULL, NULL, NULL};
    /* needed at step 5: the window (two chunks) fills with it */
    CHECK(orn_dsm_xsend(ctx, a, sizeof a, 0, A, 5.0, "a", &xa) == ORN_OK);
    CHECK(l->nlog == 2 && logged(l, 0, A, KB) && logged(l, 1, A, KB));
    /* needed sooner, at step 3: waits for room */
    CHECK(orn_dsm_xsend(ctx, b, sizeof b, 0, B, 3.0, "b", &xb) == ORN_OK);
    CHECK(l->nlog == 2);
    /* small and needed now: goes at once, window or not */
    CHECK(orn_dsm_xsend(ctx, c, sizeof c, 0, C, ORN_XFER_NOW, "c", &xc) == ORN_OK);
    CHECK(l->nlog == 3 && logged(l, 2, C, 16));
    /* needed soonest (step 1), but behind a on the same peer and tag */
    CHECK(orn_dsm_xsend(ctx, d, sizeof d, 0, A, 1.0, "d", &xd) == ORN_OK);
    CHECK(l->nlog == 3);
    /* a new chunk size applies to transfers queued later: a, b and d keep theirs */
    CHECK(orn_dsm_xfer_config(ctx, KB / 2, 2 * KB) == ORN_OK);
    CHECK(orn_dsm_xprogress(ctx) == ORN_OK && l->nlog == 3);
    CHECK(orn_dsm_xfer_config(ctx, KB, 2 * KB) == ORN_OK);
    /* receives, posted whole: a before d on tag A */
    CHECK(orn_dsm_xrecv(ctx, ra, sizeof ra, 0, A, 5.0, "a", &r[0]) == ORN_OK);
    CHECK(orn_dsm_xrecv(ctx, rb, sizeof rb, 0, B, 3.0, "b", &r[1]) == ORN_OK);
    CHECK(orn_dsm_xrecv(ctx, rc, sizeof rc, 0, C, ORN_XFER_NOW, "c", &r[2]) == ORN_OK);
    CHECK(orn_dsm_xrecv(ctx, rd, sizeof rd, 0, A, 1.0, "d", &r[3]) == ORN_OK);
    int done = 0;
    CHECK(orn_dsm_xtest(ctx, &xc, &done) == ORN_OK && !done); /* still on the wire */
    /* the link lets a's two chunks and c through: b (step 3) before the rest of a (step 5) */
    drain(l, 3);
    CHECK(orn_dsm_xtest(ctx, &xc, &done) == ORN_OK && done && xc == NULL);
    CHECK(l->nlog == 5 && logged(l, 3, B, KB) && logged(l, 4, B, KB));
    drain(l, 2);
    CHECK(orn_dsm_xprogress(ctx) == ORN_OK);
    CHECK(l->nlog == 7 && logged(l, 5, B, KB) && logged(l, 6, A, KB));
    CHECK(orn_dsm_xtest(ctx, &xb, &done) == ORN_OK && !done);
    drain(l, 2);
    CHECK(orn_dsm_xprogress(ctx) == ORN_OK);
    /* a's last chunk, then d, free to go once a is all posted */
    CHECK(l->nlog == 9 && logged(l, 7, A, KB) && logged(l, 8, A, KB));
    CHECK(orn_dsm_xtest(ctx, &xb, &done) == ORN_OK && done);
    drain(l, 2);
    CHECK(orn_dsm_xprogress(ctx) == ORN_OK);
    CHECK(l->nlog == 10 && logged(l, 9, A, KB));
    drain(l, 10);
    /* everything arrived intact; a and d each matched their own receive */
    CHECK(orn_dsm_xwait(ctx, r, 4, "test receives") == ORN_OK);
    CHECK(orn_dsm_xwait(ctx, &xa, 1, "test a") == ORN_OK && xa == NULL);
    CHECK(orn_dsm_xwait(ctx, &xd, 1, "test d") == ORN_OK && xd == NULL);
    CHECK(!memcmp(a, ra, sizeof a) && !memcmp(b, rb, sizeof b) && !memcmp(c, rc, sizeof c) &&
          !memcmp(d, rd, sizeof d));
    OrnDsmXferStats st;
    orn_dsm_xfer_stats(ctx, &st);
    CHECK(st.sends == 4 && st.sent == 9 * KB + 16);
    CHECK(st.recvs == 4 && st.chunks == 10);
    /* c (needed now) passed a; b passed a three times: four chunks went ahead of a queued
     * earlier one */
    CHECK(st.overtakes == 4);
    /* every receive was complete when first waited for */
    CHECK(st.early == 4 && st.early_bytes == st.sent);
}

/* Waits progress the queue: with the link moving one send per poll, a transfer of eight
 * chunks through a window of two completes inside orn_dsm_xwait; a receive waited for
 * before it arrived is not counted as hidden. */
static void test_wait(OrnDsmCtx *ctx, Link *l)
{
    static char s[8 * KB], r[8 * KB];
    fill(s, sizeof s, 7);
    OrnDsmXferStats st0, st1;
    orn_dsm_xfer_stats(ctx, &st0);
    CHECK(orn_dsm_xfer_config(ctx, KB, 2 * KB) == ORN_OK);
    OrnDsmXfer *x[2] = {NULL, NULL};
    CHECK(orn_dsm_xrecv(ctx, r, sizeof r, 0, 20, 2.0, "r", &x[0]) == ORN_OK);
    CHECK(orn_dsm_xsend(ctx, s, sizeof s, 0, 20, 2.0, "s", &x[1]) == ORN_OK);
    int nlog = l->nlog;
    CHECK(nlog >= 2);
    l->auto_drain = 1;
    CHECK(orn_dsm_xwait(ctx, x, 2, "test wait") == ORN_OK);
    l->auto_drain = 0;
    CHECK(x[0] == NULL && x[1] == NULL && !memcmp(s, r, sizeof s));
    orn_dsm_xfer_stats(ctx, &st1);
    CHECK(st1.chunks - st0.chunks == 8 && st1.early == st0.early);
    /* a transfer of one message when chunks are off */
    CHECK(orn_dsm_xfer_config(ctx, 0, 0) == ORN_OK);
    size_t chunk, window;
    orn_dsm_xfer_settings(ctx, &chunk, &window);
    CHECK(chunk == 0 && window > 0);
    CHECK(orn_dsm_xsend(ctx, s, sizeof s, 0, 21, 1.0, "whole", &x[1]) == ORN_OK);
    CHECK(l->nlog > 0 && l->log_n[l->nlog - 1] == sizeof s);
    CHECK(orn_dsm_xrecv(ctx, r, sizeof r, 0, 21, 1.0, "whole", &x[0]) == ORN_OK);
    /* dropping cancels: nothing is left on the wire or posted */
    orn_dsm_xdrop(ctx, &x[0]);
    orn_dsm_xdrop(ctx, &x[1]);
    CHECK(x[0] == NULL && x[1] == NULL && l->wire == NULL && l->recvs == NULL);
}

int main(void)
{
    Link *l = orn_xcalloc(1, sizeof *l);
    l->base.ops = &link_ops;
    l->base.rank = 0;
    l->base.size = 1;
    OrnDsmCtx *ctx = NULL;
    if (orn_dsm_ctx_new(&l->base, &ctx) != ORN_OK) return 1;
    test_order(ctx, l);
    test_wait(ctx, l);
    orn_dsm_ctx_free(ctx);
    if (failed) {
        fprintf(stderr, "test_xferq: %d of %d checks failed\n", failed, checks);
        return 1;
    }
    printf("test_xferq: %d checks passed\n", checks);
    return 0;
}
