/* fetch.c: remote reads: bulk fetch (collective) and on-demand fetch with its service.
 *
 * Bulk fetch: the requests of a rank are grouped per owner, sent in one message each, and
 * answered in one message each: an alltoallv and point-to-point replies, 4 (P-1) a + b (16
 * B per element request + 16 B per reply; 32 B per range request + its bytes). Keys and
 * ranges owned locally (or replicated) are answered without messages.
 *
 * On-demand fetch: one request and one reply (2 a + 32 b), answered by the owner whenever
 * it serves: in every wait loop (coll.c) and in orn_dsm_progress(). A rank that waits for
 * a reply serves others meanwhile, so two ranks fetching from each other cannot deadlock.
 * Replies are in flight in ctx->svc until their sends complete.
 *
 * Need order (xferq.h): requests, their replies and the bulk fetch's replies have a reader
 * blocked on them, so they are queued as needed now (ORN_XFER_NOW): on a link that also
 * carries blocks for later steps (a 2-D rotation), they wait behind at most the queue's
 * window of those, not behind every block queued before them.
 *
 * Messages: to each owner, a header {int64 element requests, int64 range requests}, the
 * element requests {int32 array id, int32 0, int64 linear key}, the range requests {int32
 * array id, int32 0, int64 tile, int64 offset, int64 count}; back, per element request
 * {8 value bytes, uint8 found, uint8 error, 6 pad}, then each range's bytes. A range is a run
 * of a dense tile's storage (a window's rows, runtime/window.c): its elements cost a memcpy
 * on each side and their bytes on the wire, against a lookup and 32 bytes each as keys.
 */
#include "dsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "xferq.h"

typedef struct Req {
    int32_t id, pad;
    int64_t lin;
} Req;

typedef struct Rep {
    unsigned char val[8];
    unsigned char found, error, pad[6];
} Rep;

/* The last array and tile a loop of requests touched: consecutive requests mostly hit the
 * same ones (requests are grouped per owner, windows ask for whole ranges), which then cost
 * an unravel and a box test instead of a registry lookup and a tile search. */
typedef struct Memo {
    int id, ok; /* ok: the array's volume fits linear keys */
    OrnDsmArray *a;
    int64_t vol, rowsz; /* rowsz: elements per index of dimension 0 */
    int64_t t;          /* the last tile */
    int64_t llo, lhi;   /* its linear keys when it spans every dimension but 0, else empty */
} Memo;
#define MEMO_INIT                                                                                  \
    {                                                                                              \
        0, 0, NULL, 0, 1, -1, 0, 0                                                                 \
    }

/* The array of id and the tile holding lin (-1: no such array, or lin outside it). key is
 * lin unraveled when *have_key (a hit in the last tile's linear range needs none). */
static int64_t memo_tile(OrnDsmCtx *ctx, Memo *m, int id, int64_t lin, int64_t *key, int *have_key)
{
    *have_key = 0;
    if (!m->a || m->id != id) {
        m->id = id;
        m->a = orn_dsm_lookup(ctx, id);
        m->t = -1;
        m->llo = m->lhi = 0;
        m->vol = m->rowsz = 1;
        m->ok = m->a && orn_dsm_linear_ok(m->a);
        if (m->ok)
            for (int d = 0; d < m->a->ndim; d++) {
                m->vol *= m->a->dims[d];
                if (d) m->rowsz *= m->a->dims[d];
            }
        else
            m->vol = 0;
    }
    OrnDsmArray *a = m->a;
    if (!a || lin < 0 || lin >= m->vol) return -1;
    if (lin >= m->llo && lin < m->lhi) return m->t;
    orn_dsm_unravel(a, lin, key);
    *have_key = 1;
    if (m->t >= 0) {
        const OrnDsmTile *tl = &a->tiles[m->t];
        int in = 1;
        for (int d = 0; d < a->ndim; d++) in &= key[d] >= tl->lo[d] && key[d] < tl->hi[d];
        if (in) return m->t;
    }
    int64_t t = m->t = orn_dsm_part_tile_of(&a->part, key);
    const OrnDsmTile *tl = &a->tiles[t];
    int rows = 1;
    for (int d = 1; d < a->ndim; d++) rows &= tl->lo[d] == 0 && tl->hi[d] == a->dims[d];
    m->llo = rows ? tl->lo[0] * m->rowsz : 0;
    m->lhi = rows ? tl->hi[0] * m->rowsz : 0;
    return t;
}

/* Answer one request from local storage. */
static void answer_m(OrnDsmCtx *ctx, Memo *m, const Req *q, Rep *r)
{
    memset(r, 0, sizeof *r);
    int64_t key[ORN_DSM_MAXDIM];
    int have;
    int64_t t = memo_tile(ctx, m, q->id, q->lin, key, &have);
    if (t < 0) {
        r->error = 1;
        return;
    }
    OrnDsmArray *a = m->a;
    const OrnDsmTile *tl = &a->tiles[t];
    if (!tl->held) {
        r->error = 2;
        return;
    }
    if (!a->sparse && q->lin >= m->llo && q->lin < m->lhi) {
        memcpy(r->val, (const char *)tl->vals + (size_t)(q->lin - m->llo) * a->esize, a->esize);
        r->found = 1;
        return;
    }
    if (!have) orn_dsm_unravel(a, q->lin, key);
    if (a->sparse) {
        void *p = orn_dsm_local_ptr(a, key);
        if (p) {
            memcpy(r->val, p, a->esize);
            r->found = 1;
        }
        return;
    }
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++) off = off * (tl->hi[d] - tl->lo[d]) + (key[d] - tl->lo[d]);
    memcpy(r->val, (const char *)tl->vals + (size_t)off * a->esize, a->esize);
    r->found = 1;
}

static void answer(OrnDsmCtx *ctx, const Req *q, Rep *r)
{
    Memo m = MEMO_INIT;
    answer_m(ctx, &m, q, r);
}

/* *owner is written on every path (-1 on failure), so callers need not initialize it. */
static int owner_m(OrnDsmCtx *ctx, Memo *m, int id, int64_t lin, int *owner)
{
    int64_t key[ORN_DSM_MAXDIM];
    int have;
    *owner = -1;
    int64_t t = memo_tile(ctx, m, id, lin, key, &have);
    if (!m->a) return orn_dsm_fail(ctx, ORN_E_INTERNAL, "fetch: no array with id %d", id);
    if (!m->ok)
        return orn_dsm_fail(ctx, ORN_E_ARG, "fetch: %s is too large for remote reads by index",
                            m->a->name);
    if (t < 0)
        return orn_dsm_fail(ctx, ORN_E_INTERNAL, "fetch: key %lld outside array %s", (long long)lin,
                            m->a->name);
    int o = m->a->part.owner[t];
    *owner = o == ORN_DSM_ALL ? ctx->rank : o;
    return ORN_OK;
}

static int owner_of(OrnDsmCtx *ctx, int id, int64_t lin, int *owner)
{
    Memo m = MEMO_INIT;
    return owner_m(ctx, &m, id, lin, owner);
}

/* A range request: elements [off, off + n) of tile `tile` of array id (dense), answered
 * with their bytes. */
typedef struct RReq {
    int32_t id, pad;
    int64_t tile, off, n;
} RReq;

/* What a bulk request message to one owner holds, ahead of its requests. */
typedef struct Hdr {
    int64_t nelem, nrange;
} Hdr;

/* A range of at least this many bytes travels as a message of its own, sent from the
 * tile's storage and received into its destination (no copy on either side); smaller ones
 * are packed behind the element replies. */
#define RANGE_DIRECT ((size_t)64 << 10)

/* The tile storage a range request names, or NULL when it is not one held here. */
static const char *range_src(OrnDsmCtx *ctx, const RReq *q, size_t *es)
{
    OrnDsmArray *a = orn_dsm_lookup(ctx, q->id);
    if (!a || a->sparse || q->tile < 0 || q->tile >= a->part.ntiles) return NULL;
    const OrnDsmTile *tl = &a->tiles[q->tile];
    if (!tl->held || !tl->vals || q->off < 0 || q->n < 0 || q->off > tl->n - q->n) return NULL;
    *es = a->esize;
    return (const char *)tl->vals + (size_t)q->off * a->esize;
}

/* One message of the replies: to or from peer, n bytes at buf. */
typedef struct Msg {
    int peer;
    char *buf;
    size_t n;
} Msg;

typedef struct Msgs {
    Msg *m;
    int64_t n, cap;
} Msgs;

static void msg_add(Msgs *l, int peer, const void *buf, size_t n)
{
    if (!n) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->m = orn_xrealloc(l->m, (size_t)l->cap * sizeof *l->m);
    }
    l->m[l->n++] = (Msg){peer, (char *)buf, n};
}

/* The bulk fetch's replies, point to point, queued as needed now: the messages of each
 * list in their order (per peer, the order both sides derive from the requests). */
static int reply_exchange(OrnDsmCtx *ctx, const Msgs *recv, const Msgs *send)
{
    int status = ORN_OK;
    int64_t nx = 0;
    OrnDsmXfer **x = orn_xcalloc((size_t)(recv->n + send->n + 1), sizeof *x);
    for (int64_t i = 0; i < recv->n && !status; i++)
        status = orn_dsm_xrecv(ctx, recv->m[i].buf, recv->m[i].n, recv->m[i].peer, ORN_TAG_BULK_REP,
                               ORN_XFER_NOW, "prefetch replies", &x[nx++]);
    for (int64_t i = 0; i < send->n && !status; i++)
        status = orn_dsm_xsend(ctx, send->m[i].buf, send->m[i].n, send->m[i].peer, ORN_TAG_BULK_REP,
                               ORN_XFER_NOW, "prefetch replies", &x[nx++]);
    if (!status)
        status = orn_dsm_xwait(ctx, x, (int)nx, "prefetch replies");
    else
        for (int64_t i = 0; i < nx; i++) orn_dsm_xdrop(ctx, &x[i]);
    free(x);
    return status;
}

/* Owner of a range request's tile (this rank for a replicated one), or -1. */
static int range_owner(OrnDsmCtx *ctx, const OrnDsmRun *r)
{
    OrnDsmArray *a = orn_dsm_lookup(ctx, r->array);
    if (!a || a->sparse || r->tile < 0 || r->tile >= a->part.ntiles) return -1;
    int o = a->part.owner[r->tile];
    return o == ORN_DSM_ALL ? ctx->rank : o;
}

/* Owner side: the answers to requester p's message at q (header h): its element replies and
 * small ranges packed at *out (advanced), its large ranges queued in big. */
static int answer_msg(OrnDsmCtx *ctx, Memo *memo, int p, const Hdr *h, const char *q, char **out,
                      Msgs *big)
{
    for (int64_t i = 0; i < h->nelem; i++, q += sizeof(Req), *out += sizeof(Rep)) {
        Req rq;
        Rep rp;
        memcpy(&rq, q, sizeof rq);
        answer_m(ctx, memo, &rq, &rp);
        if (rp.error)
            return orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                "prefetch: asked for key %lld of array %d, not held here",
                                (long long)rq.lin, rq.id);
        memcpy(*out, &rp, sizeof rp);
    }
    for (int64_t i = 0; i < h->nrange; i++, q += sizeof(RReq)) {
        RReq rq;
        memcpy(&rq, q, sizeof rq);
        size_t es;
        const char *src = range_src(ctx, &rq, &es);
        if (!src)
            return orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                "prefetch: asked for elements %lld..%lld of tile %lld of array "
                                "%d, not held here",
                                (long long)rq.off, (long long)(rq.off + rq.n), (long long)rq.tile,
                                rq.id);
        size_t b = (size_t)rq.n * es;
        if (b >= RANGE_DIRECT) {
            msg_add(big, p, src, b);
        } else {
            memcpy(*out, src, b);
            *out += b;
        }
    }
    return ORN_OK;
}

/* Bytes of the packed reply to a message with h's requests (its range requests at rq). */
static size_t packed_bytes(OrnDsmCtx *ctx, const Hdr *h, const RReq *rq)
{
    size_t b = (size_t)h->nelem * sizeof(Rep);
    for (int64_t i = 0; i < h->nrange; i++) {
        OrnDsmArray *a = orn_dsm_lookup(ctx, rq[i].id);
        size_t r = a ? (size_t)rq[i].n * a->esize : 0;
        if (r < RANGE_DIRECT) b += r;
    }
    return b;
}

int orn_dsm_fetch_bulk(OrnDsmCtx *ctx, OrnDsmFetch *f)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    Hdr *h = orn_xcalloc((size_t)P, sizeof *h);
    size_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    size_t *pos = orn_xcalloc((size_t)P + 1, sizeof *pos);
    size_t *roff = orn_xcalloc((size_t)P + 1, sizeof *roff);
    int *dest = orn_xmalloc((size_t)(f->n ? f->n : 1) * sizeof *dest);
    int *rdest = orn_xmalloc((size_t)(f->nranges ? f->nranges : 1) * sizeof *rdest);
    size_t *rb = orn_xmalloc((size_t)(f->nranges ? f->nranges : 1) * sizeof *rb); /* bytes */
    char *sreq = NULL, *rreq = NULL, *srep = NULL, *rrep = NULL;
    Msgs recv = {0}, send = {0};

    Memo memo = MEMO_INIT;
    for (int64_t i = 0; i < f->n; i++) {
        status = owner_m(ctx, &memo, f->array[i], f->lin[i], &dest[i]);
        if (status) goto fn_exit;
        if (dest[i] != me) h[dest[i]].nelem++;
    }
    for (int64_t i = 0; i < f->nranges; i++) {
        const OrnDsmRun *r = &f->ranges[i];
        rdest[i] = range_owner(ctx, r);
        if (rdest[i] < 0) {
            status = orn_dsm_fail(ctx, ORN_E_INTERNAL, "fetch: no dense tile %lld of array %d",
                                  (long long)r->tile, r->array);
            goto fn_exit;
        }
        rb[i] = (size_t)r->n * orn_dsm_lookup(ctx, r->array)->esize;
        if (rdest[i] != me) h[rdest[i]].nrange++;
    }
    for (int p = 0; p < P; p++) {
        if (h[p].nelem || h[p].nrange)
            sc[p] =
                sizeof(Hdr) + (size_t)h[p].nelem * sizeof(Req) + (size_t)h[p].nrange * sizeof(RReq);
        pos[p + 1] = pos[p] + sc[p];
    }
    sreq = orn_xmalloc(pos[P] ? pos[P] : 1);
    {
        size_t *ea = orn_xmalloc((size_t)P * sizeof *ea), *ra = orn_xmalloc((size_t)P * sizeof *ra);
        for (int p = 0; p < P; p++) {
            if (!sc[p]) continue;
            memcpy(sreq + pos[p], &h[p], sizeof(Hdr));
            ea[p] = pos[p] + sizeof(Hdr);
            ra[p] = ea[p] + (size_t)h[p].nelem * sizeof(Req);
        }
        for (int64_t i = 0; i < f->n && !status; i++) {
            Req q = {f->array[i], 0, f->lin[i]};
            if (dest[i] != me) {
                memcpy(sreq + ea[dest[i]], &q, sizeof q);
                ea[dest[i]] += sizeof q;
                continue;
            }
            Rep r;
            answer_m(ctx, &memo, &q, &r);
            if (r.error) {
                status = orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                      "fetch: local read of key %lld of array %d failed",
                                      (long long)f->lin[i], f->array[i]);
                break;
            }
            memcpy((char *)f->vals + (size_t)i * f->stride, r.val,
                   orn_dsm_lookup(ctx, f->array[i])->esize);
            f->found[i] = r.found;
        }
        for (int64_t i = 0; i < f->nranges && !status; i++) {
            const OrnDsmRun *r = &f->ranges[i];
            RReq q = {r->array, 0, r->tile, r->off, r->n};
            if (rdest[i] != me) {
                memcpy(sreq + ra[rdest[i]], &q, sizeof q);
                ra[rdest[i]] += sizeof q;
                continue;
            }
            size_t es;
            const char *src = range_src(ctx, &q, &es);
            if (!src) {
                status = orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                      "fetch: local read of tile %lld of array %d failed",
                                      (long long)r->tile, r->array);
                break;
            }
            memcpy(r->dst, src, (size_t)r->n * es);
        }
        free(ea);
        free(ra);
        if (status) goto fn_exit;
    }
    status = orn_dsm_alltoallv(ctx, sreq, sc, (void **)&rreq, rc, "prefetch requests");
    if (status) goto fn_exit;
    /* Owner: answer in the order received, per requester its packed reply (element replies,
     * then small ranges) and then its large ranges, each a message from the tile. */
    {
        size_t in = 0, tot = 0, *soff = orn_xcalloc((size_t)P + 1, sizeof *soff);
        for (int p = 0; p < P && !status; p++) {
            size_t b = 0;
            if (rc[p]) {
                Hdr hp;
                memcpy(&hp, rreq + in, sizeof hp);
                if (hp.nelem < 0 || hp.nrange < 0 ||
                    rc[p] != sizeof(Hdr) + (size_t)hp.nelem * sizeof(Req) +
                                 (size_t)hp.nrange * sizeof(RReq))
                    status = orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                          "prefetch: a malformed request from rank %d", p);
                else
                    b = packed_bytes(
                        ctx, &hp,
                        (const RReq *)(rreq + in + sizeof(Hdr) + (size_t)hp.nelem * sizeof(Req)));
            }
            soff[p] = tot;
            tot += b;
            in += rc[p];
        }
        soff[P] = tot;
        if (!status) srep = orn_xmalloc(tot ? tot : 1);
        in = 0;
        for (int p = 0; p < P && !status; p++) {
            if (!rc[p]) continue;
            Hdr hp;
            memcpy(&hp, rreq + in, sizeof hp);
            char *out = srep + soff[p];
            Msgs big = {0};
            status = answer_msg(ctx, &memo, p, &hp, rreq + in + sizeof(Hdr), &out, &big);
            msg_add(&send, p, srep + soff[p], soff[p + 1] - soff[p]);
            for (int64_t i = 0; i < big.n; i++) msg_add(&send, p, big.m[i].buf, big.m[i].n);
            free(big.m);
            in += rc[p];
        }
        free(soff);
        if (status) goto fn_exit;
    }
    /* Requester: from each owner p the packed reply, then our large ranges from p in the
     * order of our requests, each straight into its destination. */
    {
        for (int p = 0; p < P; p++) roff[p + 1] = roff[p] + (size_t)h[p].nelem * sizeof(Rep);
        size_t *small = orn_xcalloc((size_t)P, sizeof *small);
        for (int64_t i = 0; i < f->nranges; i++) {
            size_t b = rb[i];
            if (rdest[i] != me && b < RANGE_DIRECT) small[rdest[i]] += b;
        }
        size_t tot = 0;
        for (int p = 0; p < P; p++) {
            roff[p] = tot;
            tot += (size_t)h[p].nelem * sizeof(Rep) + small[p];
        }
        roff[P] = tot;
        free(small);
        rrep = orn_xmalloc(tot ? tot : 1);
        for (int p = 0; p < P; p++) {
            if (p == me || !sc[p]) continue;
            msg_add(&recv, p, rrep + roff[p], roff[p + 1] - roff[p]);
            for (int64_t i = 0; i < f->nranges; i++) {
                size_t b = rb[i];
                if (rdest[i] == p && b >= RANGE_DIRECT) msg_add(&recv, p, f->ranges[i].dst, b);
            }
        }
    }
    status = reply_exchange(ctx, &recv, &send);
    if (status) goto fn_exit;
    /* From owner p's packed reply: element replies in the order of our element requests to
     * p, then our small ranges' bytes in the order of our range requests to p. */
    {
        size_t *at = orn_xmalloc((size_t)P * sizeof *at);
        memcpy(at, roff, (size_t)P * sizeof *at);
        for (int64_t i = 0; i < f->n; i++) {
            if (dest[i] == me) continue;
            Rep r;
            memcpy(&r, rrep + at[dest[i]], sizeof r);
            at[dest[i]] += sizeof r;
            memcpy((char *)f->vals + (size_t)i * f->stride, r.val,
                   orn_dsm_lookup(ctx, f->array[i])->esize);
            f->found[i] = r.found;
        }
        for (int64_t i = 0; i < f->nranges; i++) {
            const OrnDsmRun *r = &f->ranges[i];
            size_t b = rb[i];
            if (rdest[i] == me || b >= RANGE_DIRECT) continue;
            memcpy(r->dst, rrep + at[rdest[i]], b);
            at[rdest[i]] += b;
        }
        free(at);
    }
fn_exit:
    free(h);
    free(sc);
    free(rc);
    free(pos);
    free(roff);
    free(dest);
    free(rdest);
    free(rb);
    free(sreq);
    free(rreq);
    free(srep);
    free(rrep);
    free(recv.m);
    free(send.m);
    return status;
}

int orn_dsm_fetch_one(OrnDsmArray *a, int64_t lin, void *out, int *found)
{
    OrnDsmCtx *ctx = a->ctx;
    int owner, status = owner_of(ctx, a->id, lin, &owner);
    if (status) return status;
    Req q = {a->id, 0, lin};
    Rep r;
    if (owner == ctx->rank) {
        answer(ctx, &q, &r);
    } else {
        OrnDsmXfer *x[2] = {NULL, NULL};
        char what[96];
        snprintf(what, sizeof what, "on-demand read of %s", a->name);
        status =
            orn_dsm_xrecv(ctx, &r, sizeof r, owner, ORN_TAG_SVC_REP, ORN_XFER_NOW, what, &x[0]);
        if (!status)
            status =
                orn_dsm_xsend(ctx, &q, sizeof q, owner, ORN_TAG_SVC_REQ, ORN_XFER_NOW, what, &x[1]);
        if (!status) status = orn_dsm_xwait(ctx, x, 2, what);
        if (status) {
            orn_dsm_xdrop(ctx, &x[0]);
            orn_dsm_xdrop(ctx, &x[1]);
            return status;
        }
    }
    if (r.error)
        return orn_dsm_fail(ctx, ORN_E_INTERNAL,
                            "on-demand read of %s key %lld: rank %d "
                            "does not hold it",
                            a->name, (long long)lin, owner);
    memcpy(out, r.val, a->esize);
    *found = r.found;
    return ORN_OK;
}

int orn_dsm_serve(OrnDsmCtx *ctx)
{
    int status = ORN_OK;
    if (ctx->serving) return ORN_OK;
    ctx->serving = 1;
    /* Retire replies whose sends completed. */
    for (int i = 0; i < ctx->nsvc;) {
        int done = 0;
        status = orn_dsm_xtest(ctx, &ctx->svc[i].x, &done);
        if (status) goto fn_exit;
        if (done) {
            free(ctx->svc[i].buf);
            ctx->svc[i] = ctx->svc[--ctx->nsvc];
        } else {
            i++;
        }
    }
    for (int k = 0; k < 64; k++) {
        int found = 0, peer = -1;
        size_t n = 0;
        status = ctx->tp->ops->iprobe(ctx->tp, ORN_TAG_SVC_REQ, &found, &peer, &n);
        if (status) {
            status = orn_dsm_tp_fail(ctx, status, "serving remote reads");
            goto fn_exit;
        }
        if (!found) break;
        if (n != sizeof(Req)) {
            status =
                orn_dsm_fail(ctx, ORN_E_INTERNAL, "service: request of %zu bytes from %d", n, peer);
            goto fn_exit;
        }
        Req q;
        OrnDsmReq *rq = NULL;
        status = orn_dsm_irecv(ctx, &q, sizeof q, peer, ORN_TAG_SVC_REQ, &rq);
        if (!status) status = orn_dsm_waitall(ctx, &rq, &peer, 1, "service request");
        if (status) goto fn_exit;
        Rep *r = orn_xmalloc(sizeof *r);
        answer(ctx, &q, r);
        if (ctx->nsvc == ctx->capsvc) {
            ctx->capsvc = ctx->capsvc ? 2 * ctx->capsvc : 8;
            ctx->svc = orn_xrealloc(ctx->svc, (size_t)ctx->capsvc * sizeof *ctx->svc);
        }
        SvcReply *s = &ctx->svc[ctx->nsvc++];
        s->buf = r;
        s->x = NULL;
        status = orn_dsm_xsend(ctx, r, sizeof *r, peer, ORN_TAG_SVC_REP, ORN_XFER_NOW,
                               "reply to a remote read", &s->x);
        if (status) goto fn_exit;
    }
fn_exit:
    ctx->serving = 0;
    return status;
}

int orn_dsm_quiesce(OrnDsmCtx *ctx)
{
    int status = ORN_OK;
    while (ctx->nsvc && !status) {
        OrnDsmXfer *x = ctx->svc[ctx->nsvc - 1].x;
        ctx->svc[ctx->nsvc - 1].x = NULL;
        status = orn_dsm_xwait(ctx, &x, 1, "finishing replies to remote reads");
        free(ctx->svc[--ctx->nsvc].buf);
    }
    return status;
}

void orn_dsm_serve_free(OrnDsmCtx *ctx)
{
    for (int i = 0; i < ctx->nsvc; i++) {
        orn_dsm_xdrop(ctx, &ctx->svc[i].x);
        free(ctx->svc[i].buf);
    }
    free(ctx->svc);
    ctx->svc = NULL;
    ctx->nsvc = ctx->capsvc = 0;
}

int orn_dsm_progress(OrnDsmCtx *ctx)
{
    int status = orn_dsm_serve(ctx);
    return status ? status : orn_dsm_xprogress(ctx);
}
