/* transport.h: the narrow interface through which the DSM and the runtime reach MPI.
 *
 * A transport is a table of a few point-to-point operations and one collective
 * (QBE-style struct of function pointers). Two back ends: transport_mpi.c (the only file of the
 * project that includes <mpi.h>) and transport_local.c (one process, no MPI: unit tests of the
 * DSM's logic run without mpiexec). Everything else -- collectives, timeouts, the on-demand fetch
 * service -- is built on these operations in coll.c and fetch.c, so it is the same code on both.
 *
 * Every protocol has its own tag (ORN_TAG_*). Messages between a pair of ranks with the
 * same tag are matched in order (MPI's non-overtaking rule), which the collectives rely on:
 * all ranks call them in the same order.
 */
#ifndef ORN_DSM_TRANSPORT_H
#define ORN_DSM_TRANSPORT_H

#include <stddef.h>

#include "dsm.h"

typedef struct OrnDsmReq OrnDsmReq;

typedef struct OrnDsmTransportOps {
    const char *name;
    /* Start a transfer of n bytes (any n, also 0 and above INT_MAX). */
    int (*isend)(OrnDsmTransport *tp, const void *buf, size_t n, int peer, int tag,
                 OrnDsmReq **req);
    int (*irecv)(OrnDsmTransport *tp, void *buf, size_t n, int peer, int tag, OrnDsmReq **req);
    /* *done = 1 when complete; then the request is released and *req set to NULL. */
    int (*test)(OrnDsmTransport *tp, OrnDsmReq **req, int *done);
    /* Start an all-to-all exchange of bytes (MPI_Ialltoallv): rank p's block goes from
     * send + sdispls[p] (scounts[p] bytes) and lands at recv + rdispls[p] (rcounts[p]).
     * Counts and displacements must fit in int (callers fall back to point-to-point
     * messages otherwise); the request completes through test(). */
    int (*ialltoallv)(OrnDsmTransport *tp, const void *send, const int *scounts, const int *sdispls,
                      void *recv, const int *rcounts, const int *rdispls, OrnDsmReq **req);
    /* Is a message with `tag` from any peer waiting? Gives its source and size. */
    int (*iprobe)(OrnDsmTransport *tp, int tag, int *found, int *peer, size_t *n);
    /* Release a request that will never be waited for (error paths). */
    void (*drop)(OrnDsmTransport *tp, OrnDsmReq **req);
    /* End the whole job (all ranks) with this exit code. */
    void (*abort)(OrnDsmTransport *tp, int code) __attribute__((noreturn));
    void (*free)(OrnDsmTransport *tp);
} OrnDsmTransportOps;

struct OrnDsmTransport {
    const OrnDsmTransportOps *ops;
    int rank, size;
    char err[256]; /* cause of the last failed operation */
};

/* MPI back end: initializes MPI if nobody has (MPI_Init_thread, FUNNELED), duplicates
 * MPI_COMM_WORLD and sets MPI_ERRORS_RETURN on the duplicate; free() finalizes MPI if it
 * initialized it. A plain ./prog (no mpiexec) is an MPI singleton of size 1. */
int orn_dsm_tp_mpi_new(int *argc, char ***argv, OrnDsmTransport **out);
/* One process, size 1, no MPI. */
int orn_dsm_tp_local_new(OrnDsmTransport **out);

/* Protocol tags. */
enum {
    ORN_TAG_COUNTS = 1, /* collectives: sizes */
    ORN_TAG_DATA,       /* collectives: payload */
    ORN_TAG_BARRIER,
    ORN_TAG_SVC_REQ,  /* on-demand fetch: request */
    ORN_TAG_SVC_REP,  /* on-demand fetch: reply */
    ORN_TAG_RING,     /* 2-D rotation: rotated blocks */
    ORN_TAG_STREAM,   /* save: rank-ordered streams to rank 0 */
    ORN_TAG_CLOCK,    /* timeline: clock offsets against rank 0 */
    ORN_TAG_TIMELINE, /* timeline: every rank's spans to rank 0 */
    ORN_TAG_MANAGED,  /* managed buffers (runtime/managed.c): messages between flushes */
    ORN_TAG_BULK_REP, /* bulk fetch: replies (fetch.c) */
    ORN_TAG_HALO,     /* ghost cells (runtime/halo.c) */
    ORN_TAG_GHOST,    /* 2d_ordered's travelling ghost rows (runtime/ghost.c) */
    ORN_TAG_PASS,     /* passes told to rank 0 (coll.c, orn_dsm_pass) */
    ORN_TAG_REPLICA,  /* a loop's copies of prefetched arrays (runtime/blocking.c): in flight
                       * while the rank's setup goes on through collectives, so never on
                       * theirs (a chunk's receive would match a collective's message) */
    ORN_TAG_TEST = 64
};

/* ---- context-level operations (coll.c): timeouts, error messages, service ---- */

/* Point to point through the context: errors are recorded in the context. */
int orn_dsm_isend(OrnDsmCtx *ctx, const void *buf, size_t n, int peer, int tag, OrnDsmReq **req);
int orn_dsm_irecv(OrnDsmCtx *ctx, void *buf, size_t n, int peer, int tag, OrnDsmReq **req);
/* Non-blocking check of one request (NULL counts as done). */
int orn_dsm_test(OrnDsmCtx *ctx, OrnDsmReq **req, int *done);
/* Wait for n requests (NULL entries are skipped) while serving remote reads. Polls with
 * test() and short sleeps (never spins hard: ranks may outnumber cores). After the
 * context's timeout it fails with "timed out after S s waiting for peer P (what)". */
int orn_dsm_waitall(OrnDsmCtx *ctx, OrnDsmReq **reqs, const int *peers, int n, const char *what);
void orn_dsm_drop(OrnDsmCtx *ctx, OrnDsmReq **req);

/* Collective exchange: rank r sends scounts[p] bytes at offset sum(scounts[<p]) of send
 * to rank p; receives into a new buffer (*recv, free()) with rcounts[p] bytes from p. */
int orn_dsm_alltoallv(OrnDsmCtx *ctx, const void *send, const size_t *scounts, void **recv,
                      size_t *rcounts, const char *what);
/* Collective: every rank contributes n bytes (n may differ); every rank receives all, in
 * rank order, in a new buffer (*recv), with counts[p]. */
int orn_dsm_allgatherv(OrnDsmCtx *ctx, const void *send, size_t n, void **recv, size_t *counts,
                       const char *what);
/* Collective, in place: every rank contributes the n bytes at buf + rank * n (the same n on
 * every rank: no exchange of sizes) and receives every other rank's into its place in buf
 * (P * n bytes, the caller's: no allocation, no copy of its own block). Point to point with
 * each peer, so a missing one is named; over shared memory about half the time of MPI's
 * all-to-all, which also copies the rank's own block. */
int orn_dsm_allgather_into(OrnDsmCtx *ctx, void *buf, size_t n, const char *what);
/* Bytes copied from one place to another: a rank's own part of an exchange. */
typedef struct OrnDsmPiece {
    void *to;
    const void *from;
    size_t n;
} OrnDsmPiece;
/* What one rank sends to and receives from each of P ranks in one exchange: sn[p] bytes at
 * sp[p] to rank p, rn[p] bytes from p at rp[p] (a size of 0: nothing; the rank's own entries
 * unused). orn_dsm_swap_new gives it all zero, in one allocation; orn_dsm_swap_free frees
 * that (never the data). */
typedef struct OrnDsmSwap {
    const void **sp;
    void **rp;
    size_t *sn, *rn;
} OrnDsmSwap;
OrnDsmSwap orn_dsm_swap_new(int P);
void orn_dsm_swap_free(OrnDsmSwap *s);
/* Collective, the sizes known on both sides (nothing is exchanged but the data): every rank
 * sends and receives what its `s` says, and copies `own` (may be NULL) while they travel.
 * Point to point with each peer (as orn_dsm_allgather_into): no pass of packing where the
 * parts lie in place, and a missing peer named. */
int orn_dsm_exchange(OrnDsmCtx *ctx, const OrnDsmSwap *s, const OrnDsmPiece *own, const char *what);
/* The two halves of an allreduce by slices (a reduce-scatter, then an allgather), for a
 * vector of off[P] bytes cut into P slices, rank r's [off[r], off[r+1]) (P + 1 offsets, the
 * same on every rank). Collective: scatter gives rank r, from every rank q, q's bytes of r's
 * slice of its vector `mine`, at into + q * (off[r+1] - off[r]) (its own copied there);
 * gather sends rank r's slice of buf to every rank and receives each other rank's slice
 * into its place in buf. Point to point, as orn_dsm_allgather_into: (P - 1) / P of the
 * vector each way, not P - 1 times it. */
int orn_dsm_scatter_slices(OrnDsmCtx *ctx, const void *mine, const size_t *off, void *into,
                           const char *what);
int orn_dsm_gather_slices(OrnDsmCtx *ctx, void *buf, const size_t *off, const char *what);

#endif
