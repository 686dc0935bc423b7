/* live.h: is every peer still there? Liveness by heartbeats, never by how long a wait takes.
 *
 * Each rank runs one monitor thread. It keeps a TCP connection to every peer (the higher
 * rank connects to the lower one's listening port; ports and addresses are exchanged once
 * with an allgather at start) and sends a 16-byte heartbeat on each of them every interval.
 * The main thread takes no part, so a rank that computes for hours, saves a huge file or runs
 * a long serial loop keeps beating and is never taken for dead. A peer is lost when
 *   - its connection closes without a goodbye: the process died (the kernel closes a dead
 *     process's sockets at once, so `kill -9` is seen within milliseconds), or
 *   - nothing arrived from it for `limit` seconds: the process is stopped (SIGSTOP, a
 *     debugger) or its host or link is gone.
 * The monitor then prints one line naming the lost rank by rank, host and pid, with what
 * this rank's main thread was waiting in, and ends this process with ORN_EXIT_PEER; the
 * process manager ends the rest of the job. A monitor that finds its own loop stalled for
 * longer than half the limit (this process was stopped and continued) forgives the silence
 * it could not have heard.
 *
 * No MPI is used by the thread (MPI stays MPI_THREAD_FUNNELED), and MPI could not tell a
 * stopped peer from a slow one anyway. Settings: $ORN_LIVENESS, the limit in seconds
 * (default 10; 0 or "off" disables the monitor). */
#ifndef ORN_DSM_LIVE_H
#define ORN_DSM_LIVE_H

#include "dsm.h"

/* Exit code of a process that ends because it lost a peer. */
#define ORN_EXIT_PEER 4

typedef struct OrnLive OrnLive;

/* Collective over ctx (one allgather): start the monitor with `limit` seconds of allowed
 * silence. A rank that cannot set up its sockets warns once on stderr and runs
 * unmonitored (*out = NULL); that is never an error. */
void orn_live_start(OrnDsmCtx *ctx, double limit, OrnLive **out);

/* The main thread waits in `what` for the n ranks in peers (may be NULL); both stay valid
 * until the matching orn_live_restore(). The monitor names the wait when it reports a
 * loss. Waits nest (a wait serves remote reads, which wait): enter returns the outer wait,
 * restore puts it back. lv may be NULL (no monitor). */
typedef struct OrnLiveWait {
    const char *what;
    const int *peers;
    int n;
} OrnLiveWait;
OrnLiveWait orn_live_enter(OrnLive *lv, const char *what, const int *peers, int n);
void orn_live_restore(OrnLive *lv, OrnLiveWait outer);

/* This rank is failing and about to abort the job: peers are told, so that they wait for
 * the abort quietly instead of reporting this rank as lost. */
void orn_live_failing(OrnLive *lv);

/* Say goodbye to every peer (a later close is expected) and stop the thread. */
void orn_live_stop(OrnLive *lv);

#endif
