/* fetch.c: remote reads: bulk fetch (collective) and on-demand fetch with its service.
 *
 * Bulk fetch: the requests of a rank are grouped per owner, sent in one message each, and
 * answered in one message each: two alltoallv, 4 (P-1) a + b (16 B per request + 16 B per
 * reply). Keys owned locally (or replicated) are answered without messages.
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
 * Messages: request {int32 array id, int32 0, int64 linear key}; reply {8 value bytes,
 * uint8 found, uint8 error, 6 pad}.
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

/* The bulk fetch's replies: to each rank p the replies to the rc[p] bytes of requests it
 * sent (in srep, in rank order), from each owner p the replies to ours (at[p] .. at[p + 1]
 * of rrep). */
static int reply_exchange(OrnDsmCtx *ctx, const Rep *srep, const size_t *rc, Rep *rrep,
                          const size_t *at)
{
    int P = ctx->size, me = ctx->rank, nx = 0, status = ORN_OK;
    OrnDsmXfer **x = orn_xcalloc(2 * (size_t)P, sizeof *x);
    for (int p = 0; p < P && !status; p++)
        if (p != me && at[p + 1] > at[p])
            status = orn_dsm_xrecv(ctx, rrep + at[p], (at[p + 1] - at[p]) * sizeof(Rep), p,
                                   ORN_TAG_BULK_REP, ORN_XFER_NOW, "prefetch replies", &x[nx++]);
    size_t off = 0;
    for (int p = 0; p < P && !status; p++) {
        size_t n = rc[p] / sizeof(Req);
        if (p != me && n)
            status = orn_dsm_xsend(ctx, srep + off, n * sizeof(Rep), p, ORN_TAG_BULK_REP,
                                   ORN_XFER_NOW, "prefetch replies", &x[nx++]);
        off += n;
    }
    if (!status)
        status = orn_dsm_xwait(ctx, x, nx, "prefetch replies");
    else
        for (int i = 0; i < nx; i++) orn_dsm_xdrop(ctx, &x[i]);
    free(x);
    return status;
}

int orn_dsm_fetch_bulk(OrnDsmCtx *ctx, OrnDsmFetch *f)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    size_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    size_t *pos = orn_xcalloc((size_t)P + 1, sizeof *pos);
    int *dest = orn_xmalloc((size_t)(f->n ? f->n : 1) * sizeof *dest);
    Req *sreq = NULL, *rreq = NULL;
    Rep *srep = NULL, *rrep = NULL;

    Memo memo = MEMO_INIT;
    for (int64_t i = 0; i < f->n; i++) {
        status = owner_m(ctx, &memo, f->array[i], f->lin[i], &dest[i]);
        if (status) goto fn_exit;
        if (dest[i] != me) sc[dest[i]] += sizeof(Req);
    }
    for (int p = 0; p < P; p++) pos[p + 1] = pos[p] + sc[p];
    sreq = orn_xmalloc(pos[P] ? pos[P] : 1);
    {
        size_t *at = orn_xmalloc((size_t)P * sizeof *at);
        memcpy(at, pos, (size_t)P * sizeof *at);
        for (int64_t i = 0; i < f->n; i++) {
            if (dest[i] == me) {
                Req q = {f->array[i], 0, f->lin[i]};
                Rep r;
                answer_m(ctx, &memo, &q, &r);
                if (r.error) {
                    status = orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                          "fetch: local read of key %lld of array %d failed",
                                          (long long)f->lin[i], f->array[i]);
                    free(at);
                    goto fn_exit;
                }
                OrnDsmArray *a = orn_dsm_lookup(ctx, f->array[i]);
                memcpy((char *)f->vals + (size_t)i * f->stride, r.val, a->esize);
                f->found[i] = r.found;
                continue;
            }
            Req *q = (Req *)((char *)sreq + at[dest[i]]);
            q->id = f->array[i];
            q->pad = 0;
            q->lin = f->lin[i];
            at[dest[i]] += sizeof(Req);
        }
        free(at);
    }
    status = orn_dsm_alltoallv(ctx, sreq, sc, (void **)&rreq, rc, "prefetch requests");
    if (status) goto fn_exit;
    /* Answer in the order received; replies go back with the same counts. */
    size_t nin = 0;
    for (int p = 0; p < P; p++) nin += rc[p] / sizeof(Req);
    srep = orn_xmalloc((nin ? nin : 1) * sizeof *srep);
    for (size_t i = 0; i < nin; i++) {
        answer_m(ctx, &memo, &rreq[i], &srep[i]);
        if (srep[i].error) {
            status = orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                  "prefetch: asked for key %lld of array %d, not held here",
                                  (long long)rreq[i].lin, rreq[i].id);
            goto fn_exit;
        }
    }
    /* Replies: every rank knows how many it sends (requests received) and receives (requests
     * sent), so they go point to point, queued as needed now. */
    {
        size_t *at = orn_xcalloc((size_t)P + 1, sizeof *at);
        for (int p = 0; p < P; p++) at[p + 1] = at[p] + sc[p] / sizeof(Req);
        rrep = orn_xmalloc((at[P] ? at[P] : 1) * sizeof *rrep);
        status = reply_exchange(ctx, srep, rc, rrep, at);
        /* Replies from owner p are in the order of our requests to p. */
        for (int64_t i = 0; i < f->n && !status; i++) {
            if (dest[i] == me) continue;
            const Rep *r = &rrep[at[dest[i]]++];
            OrnDsmArray *a = orn_dsm_lookup(ctx, f->array[i]);
            memcpy((char *)f->vals + (size_t)i * f->stride, r->val, a->esize);
            f->found[i] = r->found;
        }
        free(at);
    }
fn_exit:
    free(sc);
    free(rc);
    free(pos);
    free(dest);
    free(sreq);
    free(rreq);
    free(srep);
    free(rrep);
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
