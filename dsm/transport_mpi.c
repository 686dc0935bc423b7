/* transport_mpi.c: the MPI back end of the transport -- the only file that includes mpi.h.
 *
 * All traffic runs on a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN, so an MPI
 * failure comes back as a status with MPI's own message instead of killing the job
 * silently. Transfers above 1 GiB are split into several MPI messages of MPI_BYTE (MPI
 * counts are int); both sides split the same way since they agree on the size.
 *
 * TCP segments. UCX's TCP transport (MPICH's ch4:ucx between hosts without RDMA) sends and
 * receives in segments of 8 KiB by default: a system call per 8 KiB on both ends. The
 * runtime's bulk traffic is need-ordered chunks of 256 KiB (xferq.h), so unless the user
 * set them, UCX_TCP_TX_SEG_SIZE and UCX_TCP_RX_SEG_SIZE are raised to that before MPI
 * starts: a chunk moves in one segment. On the test bed (docs/performance.md) this took
 * the 2-D rotation's epoch from 1.28-1.32 to 1.21-1.25 times its compute-only time (3
 * hosts, 1 Gbit/s, bench_rotation's default shape). Other transports ignore them.
 */
#include "transport.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"

#define CHUNK ((size_t)1 << 30)

typedef struct MpiTransport {
    OrnDsmTransport base;
    MPI_Comm comm;
    int finalize; /* we initialized MPI */
} MpiTransport;

struct OrnDsmReq {
    int n;
    MPI_Request r[]; /* n requests, one per chunk */
};

static int mpi_fail(OrnDsmTransport *tp, int rc, const char *op, int peer)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    if (peer >= 0)
        snprintf(tp->err, sizeof tp->err, "%s with peer %d: %.200s", op, peer, msg);
    else
        snprintf(tp->err, sizeof tp->err, "%s: %.200s", op, msg);
    return ORN_E_MPI;
}

static OrnDsmReq *req_new(size_t n)
{
    size_t k = n == 0 ? 1 : (n + CHUNK - 1) / CHUNK;
    OrnDsmReq *q = orn_xmalloc(sizeof *q + k * sizeof(MPI_Request));
    q->n = (int)k;
    for (size_t i = 0; i < k; i++) q->r[i] = MPI_REQUEST_NULL;
    return q;
}

static void mpi_drop(OrnDsmTransport *tp, OrnDsmReq **req)
{
    (void)tp;
    if (!*req) return;
    for (int i = 0; i < (*req)->n; i++) {
        if ((*req)->r[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&(*req)->r[i]);
            MPI_Request_free(&(*req)->r[i]);
        }
    }
    free(*req);
    *req = NULL;
}

static int mpi_isend(OrnDsmTransport *tp, const void *buf, size_t n, int peer, int tag,
                     OrnDsmReq **req)
{
    MpiTransport *m = (MpiTransport *)tp;
    OrnDsmReq *q = req_new(n);
    for (int i = 0; i < q->n; i++) {
        size_t off = (size_t)i * CHUNK, len = n - off < CHUNK ? n - off : CHUNK;
        if (n == 0) len = 0;
        int rc =
            MPI_Isend((const char *)buf + off, (int)len, MPI_BYTE, peer, tag, m->comm, &q->r[i]);
        if (rc != MPI_SUCCESS) {
            mpi_drop(tp, &q);
            return mpi_fail(tp, rc, "MPI_Isend", peer);
        }
    }
    *req = q;
    return ORN_OK;
}

static int mpi_irecv(OrnDsmTransport *tp, void *buf, size_t n, int peer, int tag, OrnDsmReq **req)
{
    MpiTransport *m = (MpiTransport *)tp;
    OrnDsmReq *q = req_new(n);
    for (int i = 0; i < q->n; i++) {
        size_t off = (size_t)i * CHUNK, len = n - off < CHUNK ? n - off : CHUNK;
        if (n == 0) len = 0;
        int rc = MPI_Irecv((char *)buf + off, (int)len, MPI_BYTE, peer, tag, m->comm, &q->r[i]);
        if (rc != MPI_SUCCESS) {
            mpi_drop(tp, &q);
            return mpi_fail(tp, rc, "MPI_Irecv", peer);
        }
    }
    *req = q;
    return ORN_OK;
}

static int mpi_test(OrnDsmTransport *tp, OrnDsmReq **req, int *done)
{
    OrnDsmReq *q = *req;
    *done = 0;
    if (!q) {
        *done = 1;
        return ORN_OK;
    }
    int flag = 0;
    MPI_Status st[4];
    MPI_Status *sts = q->n <= 4 ? st : orn_xmalloc((size_t)q->n * sizeof *sts);
    int rc = MPI_Testall(q->n, q->r, &flag, sts);
    if (rc == MPI_ERR_IN_STATUS) /* the failed request's own error (a truncation, say) */
        for (int i = 0; i < q->n; i++)
            if (sts[i].MPI_ERROR != MPI_SUCCESS && sts[i].MPI_ERROR != MPI_ERR_PENDING) {
                rc = sts[i].MPI_ERROR;
                break;
            }
    if (sts != st) free(sts);
    if (rc != MPI_SUCCESS) return mpi_fail(tp, rc, "MPI_Testall", -1);
    if (flag) {
        free(q);
        *req = NULL;
        *done = 1;
    }
    return ORN_OK;
}

static int mpi_ialltoallv(OrnDsmTransport *tp, const void *send, const int *scounts,
                          const int *sdispls, void *recv, const int *rcounts, const int *rdispls,
                          OrnDsmReq **req)
{
    MpiTransport *m = (MpiTransport *)tp;
    OrnDsmReq *q = req_new(0);
    int rc = MPI_Ialltoallv(send, scounts, sdispls, MPI_BYTE, recv, rcounts, rdispls, MPI_BYTE,
                            m->comm, &q->r[0]);
    if (rc != MPI_SUCCESS) {
        free(q);
        return mpi_fail(tp, rc, "MPI_Ialltoallv", -1);
    }
    *req = q;
    return ORN_OK;
}

static int mpi_iprobe(OrnDsmTransport *tp, int tag, int *found, int *peer, size_t *n)
{
    MpiTransport *m = (MpiTransport *)tp;
    MPI_Status st;
    int flag = 0;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, tag, m->comm, &flag, &st);
    if (rc != MPI_SUCCESS) return mpi_fail(tp, rc, "MPI_Iprobe", -1);
    *found = flag;
    if (flag) {
        int count = 0;
        rc = MPI_Get_count(&st, MPI_BYTE, &count);
        if (rc != MPI_SUCCESS) return mpi_fail(tp, rc, "MPI_Get_count", st.MPI_SOURCE);
        *peer = st.MPI_SOURCE;
        *n = (size_t)count;
    }
    return ORN_OK;
}

__attribute__((noreturn)) static void mpi_abort(OrnDsmTransport *tp, int code)
{
    MpiTransport *m = (MpiTransport *)tp;
    int size = 0;
    fflush(stdout);
    fflush(stderr);
    /* Alone, there is nobody to stop: leave with the code, without MPICH's "application
     * called MPI_Abort" line after the program's message (and, like MPI_Abort, without
     * atexit handlers). Finalize first (from the thread that initialized MPI, the only one
     * allowed to): a process that ends without it closes its PMI socket unannounced, and
     * Hydra then sometimes reports the provisional status it stored for that case, printing
     * "BAD TERMINATION ... Hangup (signal 1)" on stdout (about 1 run in 50). */
    if (m->comm != MPI_COMM_NULL && MPI_Comm_size(m->comm, &size) == MPI_SUCCESS && size == 1) {
        int main_thread = 0;
        if (MPI_Is_thread_main(&main_thread) == MPI_SUCCESS && main_thread) MPI_Finalize();
        _exit(code);
    }
    /* Give the process manager a moment to forward what we just printed: MPI_Abort kills
     * the other ranks and the forwarding proxies at once, which can drop the message. */
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    /* The program's message is out; MPICH's own line ("Abort(1) on node 0 (rank 0 in comm
     * 0): application called MPI_Abort ...") would only repeat it, less clearly: it goes to
     * /dev/null. The exit code still reaches mpiexec. */
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    /* MPI_COMM_WORLD: MPICH then aborts through the process manager at once; aborting on
     * the duplicate first tries to quiesce it, which spins while a peer is not progressing
     * (exactly the situation of a timeout). */
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* not reached */
}

static void mpi_free(OrnDsmTransport *tp)
{
    MpiTransport *m = (MpiTransport *)tp;
    if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
    if (m->finalize) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin) MPI_Finalize();
    }
    free(m);
}

static const OrnDsmTransportOps mpi_ops = {
    .name = "mpi",
    .isend = mpi_isend,
    .irecv = mpi_irecv,
    .test = mpi_test,
    .ialltoallv = mpi_ialltoallv,
    .iprobe = mpi_iprobe,
    .drop = mpi_drop,
    .abort = mpi_abort,
    .free = mpi_free,
};

int orn_dsm_tp_mpi_new(int *argc, char ***argv, OrnDsmTransport **out)
{
    MpiTransport *m = orn_xcalloc(1, sizeof *m);
    int status = ORN_OK, inited = 0, rc;
    m->base.ops = &mpi_ops;
    m->comm = MPI_COMM_NULL;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided = 0;
        setenv("UCX_TCP_TX_SEG_SIZE", "256k", 0);
        setenv("UCX_TCP_RX_SEG_SIZE", "256k", 0);
        rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) {
            status = mpi_fail(&m->base, rc, "MPI_Init_thread", -1);
            goto fn_fail;
        }
        m->finalize = 1;
    }
    /* Errors on the world communicator during setup also come back to us. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
    if (rc != MPI_SUCCESS) {
        status = mpi_fail(&m->base, rc, "MPI_Comm_dup", -1);
        goto fn_fail;
    }
    rc = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(m->comm, &m->base.rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(m->comm, &m->base.size);
    if (rc != MPI_SUCCESS) {
        status = mpi_fail(&m->base, rc, "MPI_Comm_set_errhandler", -1);
        goto fn_fail;
    }
    *out = &m->base;
fn_exit:
    return status;
fn_fail:
    fprintf(stderr, "orion: %s\n", m->base.err);
    mpi_free(&m->base);
    *out = NULL;
    goto fn_exit;
}
