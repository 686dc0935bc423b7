/* transport_local.c: a one-process transport (size 1, no MPI), so the DSM's logic can be
 * unit-tested without mpiexec. Sends to self are copied into a queue at once (so a send
 * always completes immediately); receives match queued messages by tag in order, as MPI.
 */
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

typedef struct Msg {
    struct Msg *next;
    int tag;
    size_t n;
    char data[];
} Msg;

struct OrnDsmReq {
    int done;
    int tag;
    void *buf;
    size_t n;
    struct OrnDsmReq *next; /* pending receives, in posting order */
};

typedef struct LocalTransport {
    OrnDsmTransport base;
    Msg *head, *tail;   /* unmatched messages */
    OrnDsmReq *pending; /* unmatched receives */
} LocalTransport;

static int local_peer(OrnDsmTransport *tp, int peer, const char *op)
{
    if (peer == 0) return ORN_OK;
    snprintf(tp->err, sizeof tp->err, "%s: no peer %d in a one-process transport", op, peer);
    return ORN_E_ARG;
}

static int deliver(LocalTransport *l, OrnDsmReq *q, const void *data, size_t n)
{
    if (n != q->n) {
        snprintf(l->base.err, sizeof l->base.err,
                 "message of %zu bytes received into a buffer of %zu", n, q->n);
        return ORN_E_INTERNAL;
    }
    if (n) memcpy(q->buf, data, n);
    q->done = 1;
    return ORN_OK;
}

static int local_isend(OrnDsmTransport *tp, const void *buf, size_t n, int peer, int tag,
                       OrnDsmReq **req)
{
    LocalTransport *l = (LocalTransport *)tp;
    int status = local_peer(tp, peer, "send");
    if (status) return status;
    /* A receive posted earlier takes the message directly. */
    for (OrnDsmReq **pp = &l->pending; *pp; pp = &(*pp)->next) {
        if ((*pp)->tag == tag) {
            OrnDsmReq *q = *pp;
            *pp = q->next;
            q->next = NULL;
            status = deliver(l, q, buf, n);
            goto done;
        }
    }
    Msg *m = orn_xmalloc(sizeof *m + n);
    m->next = NULL;
    m->tag = tag;
    m->n = n;
    if (n) memcpy(m->data, buf, n);
    if (l->tail)
        l->tail->next = m;
    else
        l->head = m;
    l->tail = m;
done:
    *req = orn_xcalloc(1, sizeof **req);
    (*req)->done = 1;
    return status;
}

static int local_irecv(OrnDsmTransport *tp, void *buf, size_t n, int peer, int tag, OrnDsmReq **req)
{
    LocalTransport *l = (LocalTransport *)tp;
    int status = local_peer(tp, peer, "receive");
    if (status) return status;
    OrnDsmReq *q = orn_xcalloc(1, sizeof *q);
    q->tag = tag;
    q->buf = buf;
    q->n = n;
    Msg *prev = NULL;
    for (Msg *m = l->head; m; prev = m, m = m->next) {
        if (m->tag == tag) {
            if (prev)
                prev->next = m->next;
            else
                l->head = m->next;
            if (l->tail == m) l->tail = prev;
            status = deliver(l, q, m->data, m->n);
            free(m);
            *req = q;
            return status;
        }
    }
    OrnDsmReq **pp = &l->pending;
    while (*pp) pp = &(*pp)->next;
    *pp = q;
    *req = q;
    return ORN_OK;
}

static int local_test(OrnDsmTransport *tp, OrnDsmReq **req, int *done)
{
    (void)tp;
    *done = !*req || (*req)->done;
    if (*req && (*req)->done) {
        free(*req);
        *req = NULL;
    }
    return ORN_OK;
}

static int local_ialltoallv(OrnDsmTransport *tp, const void *send, const int *scounts,
                            const int *sdispls, void *recv, const int *rcounts, const int *rdispls,
                            OrnDsmReq **req)
{
    (void)tp;
    (void)rcounts;
    if (scounts[0])
        memcpy((char *)recv + rdispls[0], (const char *)send + sdispls[0], (size_t)scounts[0]);
    *req = orn_xcalloc(1, sizeof **req);
    (*req)->done = 1;
    return ORN_OK;
}

static int local_iprobe(OrnDsmTransport *tp, int tag, int *found, int *peer, size_t *n)
{
    LocalTransport *l = (LocalTransport *)tp;
    *found = 0;
    for (Msg *m = l->head; m; m = m->next) {
        if (m->tag == tag) {
            *found = 1;
            *peer = 0;
            *n = m->n;
            break;
        }
    }
    return ORN_OK;
}

static void local_drop(OrnDsmTransport *tp, OrnDsmReq **req)
{
    LocalTransport *l = (LocalTransport *)tp;
    if (!*req) return;
    for (OrnDsmReq **pp = &l->pending; *pp; pp = &(*pp)->next) {
        if (*pp == *req) {
            *pp = (*req)->next;
            break;
        }
    }
    free(*req);
    *req = NULL;
}

__attribute__((noreturn)) static void local_abort(OrnDsmTransport *tp, int code)
{
    (void)tp;
    fflush(stdout);
    fflush(stderr);
    exit(code);
}

static void local_free(OrnDsmTransport *tp)
{
    LocalTransport *l = (LocalTransport *)tp;
    while (l->head) {
        Msg *m = l->head;
        l->head = m->next;
        free(m);
    }
    while (l->pending) {
        OrnDsmReq *q = l->pending;
        l->pending = q->next;
        free(q);
    }
    free(l);
}

static const OrnDsmTransportOps local_ops = {
    .name = "local",
    .isend = local_isend,
    .irecv = local_irecv,
    .test = local_test,
    .ialltoallv = local_ialltoallv,
    .iprobe = local_iprobe,
    .drop = local_drop,
    .abort = local_abort,
    .free = local_free,
};

int orn_dsm_tp_local_new(OrnDsmTransport **out)
{
    LocalTransport *l = orn_xcalloc(1, sizeof *l);
    l->base.ops = &local_ops;
    l->base.rank = 0;
    l->base.size = 1;
    *out = &l->base;
    return ORN_OK;
}
