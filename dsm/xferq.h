/* xferq.h: need-ordered transfers (after TicTac, Hashemi et al., MLSys 2019): what a rank
 * sends ahead of its use is queued with the time its receiver needs it, and the rank's link
 * carries the queue in that order, a chunk at a time, while the rank computes.
 *
 * Owns: the context's queue (one per OrnDsmCtx, made at its first use): the transfers in
 * flight, their chunks posted to the transport, and the counts of what moved.
 *
 * Why a queue. A host has one link, and MPI sends what it is given in the order it is given:
 * a 4 MB rotated block posted now for a step three steps away delays the 16-byte reply a
 * peer is blocked on by the whole block (32 ms at 1 Gbit/s). Here a transfer is cut into
 * chunks, at most `window` bytes of chunks are posted at a time, and each time there is room
 * the next chunk is taken from the transfer needed soonest: an urgent transfer waits behind
 * at most a window. Small transfers (one chunk of at most ORN_XFER_SMALL bytes: requests,
 * replies) never wait for room.
 *
 * Need. A number on the receiver's schedule: the step at which it needs the data (a
 * fraction orders the blocks of a step), ORN_XFER_NOW for a receiver blocked on it. Ties go
 * in queueing order. Transfers to one peer on one tag leave in queueing order whatever their
 * need, because the receiver matches them in that order (MPI's non-overtaking rule).
 *
 * Progress. MPICH over UCX's TCP transport moves a message only inside MPI calls, on both
 * ends (a large message is a rendezvous: request, answer, data). The queue is progressed --
 * its chunks tested, which drives MPI's progress, and the next ones posted -- by
 * orn_dsm_progress(), which the runtime calls between slices of every block while transfers
 * are in flight, and by every wait (coll.c). Receives are posted whole, every chunk at once.
 *
 * Matching. A transfer of n bytes is max(1, ceil(n / chunk)) messages: chunk bytes each but
 * the last. The chunk size is the context's, agreed at its start (rank 0's); sender and
 * receiver must agree on n, peer and tag, as for one message.
 *
 * Cost model (chunk c, window W, link byte time b, round trip r, poll interval p -- the time
 * of one slice of a block -- and o, what a window's turn costs beyond its bytes: the last
 * chunk's completion reaching the sender (r / 2), the next poll (p), the next chunk's
 * rendezvous (r), and on a loaded machine the ranks' wake-ups):
 *   - an urgent transfer queued behind others starts within about W b + o, instead of
 *     behind every byte queued before it;
 *   - bulk transfers keep W b / (W b + o) of the link: W b >= 4 o for 80 %;
 *   - each chunk above MPI's eager limit costs one rendezvous, overlapped with the window's
 *     other chunks: c = W / 8.
 * Measured on the test bed (bench/xfer_order.c, 8 blocks of 4 MiB queued, docs/performance.md):
 * at 1 Gbit/s o is about 3 ms, and W = 2 MiB kept 98 % of the link with a blocked reader's
 * reply waiting 12 ms (median) instead of 286 ms behind the queued blocks (1 MiB: 77 % and
 * 8 ms; 512 KiB: 40 %). Defaults: c = 256 KiB, W = 2 MiB.
 * $ORN_XFER_CHUNK and $ORN_XFER_WINDOW (bytes; 0 chunk: transfers whole) set them.
 */
#ifndef ORN_DSM_XFERQ_H
#define ORN_DSM_XFERQ_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "dsm.h"

typedef struct OrnDsmXfer OrnDsmXfer;

#define ORN_XFER_NOW (-INFINITY)
enum { ORN_XFER_SMALL = 4096 };

/* Queue a send of n bytes at buf to peer, needed there at `need`. buf must stay valid and
 * unchanged until the transfer is done. `what` names it on the timeline and in errors
 * (copied). *out: the transfer, until orn_dsm_xtest / orn_dsm_xwait find it done or
 * orn_dsm_xdrop drops it. */
int orn_dsm_xsend(OrnDsmCtx *ctx, const void *buf, size_t n, int peer, int tag, double need,
                  const char *what, OrnDsmXfer **out);
/* As orn_dsm_xsend, to a receiver that posted `bound` bytes (n <= bound: a packed block
 * whose size the receiver knows only a bound of): bound's chunks, those past n empty. */
int orn_dsm_xsend_upto(OrnDsmCtx *ctx, const void *buf, size_t n, size_t bound, int peer, int tag,
                       double need, const char *what, OrnDsmXfer **out);
/* Post the receive of what peer's orn_dsm_xsend of n bytes on tag sends, into buf (or of
 * at most n bytes, what its orn_dsm_xsend_upto with bound n sends). */
int orn_dsm_xrecv(OrnDsmCtx *ctx, void *buf, size_t n, int peer, int tag, double need,
                  const char *what, OrnDsmXfer **out);
/* Non-blocking: *done = 1 when the transfer is complete (then it is released and *x set to
 * NULL). NULL counts as done. Progresses the queue. */
int orn_dsm_xtest(OrnDsmCtx *ctx, OrnDsmXfer **x, int *done);
/* Wait for n transfers (NULL entries skipped) while progressing the queue and serving remote
 * reads, as orn_dsm_waitall (liveness decides whether a peer is gone, never the time). On
 * failure every transfer given is dropped. */
int orn_dsm_xwait(OrnDsmCtx *ctx, OrnDsmXfer **x, int n, const char *what);
/* Release a transfer that will not be waited for (error paths): its posted chunks are
 * cancelled, its unposted ones never leave. */
void orn_dsm_xdrop(OrnDsmCtx *ctx, OrnDsmXfer **x);
/* Test the chunks in flight and post the next ones in need order (never waits). */
int orn_dsm_xprogress(OrnDsmCtx *ctx);

/* The queue's settings: chunk bytes (0: every transfer is one message) and window bytes.
 * Local; the chunk size must be the same on every rank (orn_dsm_ctx_new agrees on rank 0's
 * $ORN_XFER_CHUNK). Only between transfers: fails with ORN_E_ARG while any is queued. */
int orn_dsm_xfer_config(OrnDsmCtx *ctx, size_t chunk, size_t window);
void orn_dsm_xfer_settings(const OrnDsmCtx *ctx, size_t *chunk, size_t *window);

/* What moved through the queue on this rank since the context started. A receive is
 * "early" when it was complete before anyone waited for it: its transfer was hidden. */
typedef struct OrnDsmXferStats {
    int64_t sends, sent;        /* transfers and bytes queued to send */
    int64_t recvs, received;    /* transfers and bytes posted to receive */
    int64_t early, early_bytes; /* receives complete at their first test or wait */
    int64_t chunks;             /* messages posted for sends */
    int64_t overtakes;          /* chunks posted ahead of a transfer queued earlier */
    double busy;                /* seconds with a send chunk in flight */
} OrnDsmXferStats;
void orn_dsm_xfer_stats(const OrnDsmCtx *ctx, OrnDsmXferStats *out);

/* Local: free the queue (orn_dsm_ctx_free); transfers still in it are dropped. */
void orn_dsm_xfer_free(OrnDsmCtx *ctx);

#endif
