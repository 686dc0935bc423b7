/* timeline.h: the timeline recorder ($ORN_TIMELINE=FILE, a compiled program's
 * --timeline=FILE): what every rank spends its time on, written at the end as one Chrome
 * trace-event JSON file that Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Owns: one recorder per DSM context (NULL when off: every recording call site is then one
 * branch), its spans, their arguments and names, the alignment of the ranks' clocks, the
 * gathering of every rank's spans to rank 0 and the JSON (docs/observability.md).
 *
 * Collectives. An all-to-all exchange (every collective but broadcasts is one) is two spans:
 * a wait while the ranks exchange their sizes -- the time until the last rank arrives, where
 * a rank waits for slower ones -- then a transfer while the data moves.
 *
 * Spans. A span is an interval of one rank's main thread with a kind (its JSON "cat"), a
 * name and arguments. Spans nest: one begun inside another ends before it. The recorder keeps
 * the stack of open spans; ending a span also ends any still open inside it (marked
 * "unfinished": an error path that skipped their end). Spans of the leaf kinds -- COMPUTE,
 * TRANSFER, WAIT -- record nothing inside them: a body's on-demand reads, the messages inside a
 * collective, the requests a wait serves are theirs. So bodies cost nothing: the runtime
 * records a block as one span around its body calls.
 *
 * Bytes. A span records the bytes this rank sent and received while it was open (from the
 * DSM's traffic counters, orn_dsm_traffic in dsm.h) as its "sent" and "received" arguments when
 * they are not zero.
 *
 * Bounded memory: at most max_events spans (default 262144, $ORN_TIMELINE_MAX; about 32
 * bytes each plus 24 per argument, strings interned) per rank. Past that nothing more is
 * recorded and the file's otherData, and orn_dsm_timeline_finish, give the count dropped.
 *
 * Clocks. Each rank records CLOCK_MONOTONIC seconds. Ranks on rank 0's host share its clock
 * (offset 0); the others measure their offset against rank 0 at the start and at the end
 * (the ping-pong of the smallest round trip out of 8) and interpolate between the two.
 * $ORN_TIMELINE_CLOCK=measure measures on one host too (to test it).
 */
#ifndef ORN_DSM_TIMELINE_H
#define ORN_DSM_TIMELINE_H

#include <stdint.h>

#include "dsm.h"

typedef struct OrnTl OrnTl;

typedef enum OrnTlKind {
    ORN_TL_LOOP,     /* one run of a parallel_for */
    ORN_TL_PHASE,    /* a loop's setup (placing arrays) or finish */
    ORN_TL_COMPUTE,  /* a block's bodies, a prefetch pass (leaf) */
    ORN_TL_TRANSFER, /* moving data: a collective, an exchange, posting a message (leaf) */
    ORN_TL_WAIT,     /* blocked on a peer: a message, a barrier (leaf) */
    ORN_TL_FLUSH,    /* a buffer flush */
    ORN_TL_IO,       /* a load, a save, a checkpoint, a resume */
    ORN_TL_FLIGHT,   /* a transfer in flight (orn_tl_flight): not a span of the main thread */
    ORN_TL_NKINDS
} OrnTlKind;

/* Its JSON "cat": loop, phase, compute, transfer, wait, flush, io, flight. */
const char *orn_tl_kind_name(OrnTlKind kind);

/* Collective. Start recording on ctx into path (rank 0 creates the file now and writes it
 * at orn_dsm_timeline_finish); max_events <= 0: the default. Agreed: when rank 0 cannot
 * create the file every rank returns ORN_E_IO with the message, and nothing is recorded. */
int orn_dsm_timeline_start(OrnDsmCtx *ctx, const char *path, int64_t max_events);
/* The recorder, or NULL when off. */
OrnTl *orn_dsm_timeline(const OrnDsmCtx *ctx);
/* Collective, agreed. Stop recording, measure the clocks again, gather every rank's spans
 * to rank 0, which writes the file; *dropped: spans dropped on all ranks (rank 0; may be
 * NULL). The recorder is freed. A no-op returning ORN_OK when off. */
int orn_dsm_timeline_finish(OrnDsmCtx *ctx, int64_t *dropped);
/* Local: free the recorder without writing (an error exit; orn_dsm_ctx_free calls it). */
void orn_dsm_timeline_discard(OrnDsmCtx *ctx);

/* Recording (local). A span id is >= 0, or negative when nothing is recorded (off, inside a
 * leaf, or full); every call below accepts a negative id and then does nothing. Names and
 * keys are copied (interned). */
int64_t orn_tl_begin_(OrnTl *tl, OrnTlKind kind, const char *name);
void orn_tl_end_(OrnTl *tl, int64_t span);
void orn_tl_int_(OrnTl *tl, int64_t span, const char *key, int64_t v);
void orn_tl_num_(OrnTl *tl, int64_t span, const char *key, double v);
void orn_tl_str_(OrnTl *tl, int64_t span, const char *key, const char *v);

/* A transfer in flight from t0 to t1 (orn_dsm_now() seconds, t1 >= t0): an interval of the
 * rank's link rather than of its main thread, so it overlaps spans and other flights. It is
 * recorded whatever spans are open (a flight usually ends inside a block or a wait) and
 * written as a nestable async pair ("ph" "b" and "e", "cat" "flight", an "id" of its own)
 * of the rank's process; trace viewers draw such pairs on tracks beside the thread. The id
 * returned takes arguments as a span's. */
int64_t orn_tl_flight_(OrnTl *tl, const char *name, double t0, double t1);

static inline int64_t orn_tl_flight(OrnTl *tl, const char *name, double t0, double t1)
{
    return tl ? orn_tl_flight_(tl, name, t0, t1) : -1;
}

static inline int64_t orn_tl_begin(OrnTl *tl, OrnTlKind kind, const char *name)
{
    return tl ? orn_tl_begin_(tl, kind, name) : -1;
}
static inline void orn_tl_end(OrnTl *tl, int64_t span)
{
    if (span >= 0) orn_tl_end_(tl, span);
}
static inline void orn_tl_int(OrnTl *tl, int64_t span, const char *key, int64_t v)
{
    if (span >= 0) orn_tl_int_(tl, span, key, v);
}
static inline void orn_tl_num(OrnTl *tl, int64_t span, const char *key, double v)
{
    if (span >= 0) orn_tl_num_(tl, span, key, v);
}
static inline void orn_tl_str(OrnTl *tl, int64_t span, const char *key, const char *v)
{
    if (span >= 0) orn_tl_str_(tl, span, key, v);
}

#endif
