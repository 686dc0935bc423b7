/* managed.h: managed communication for buffers (buffer(A, budget = f), issue 12), private to
 * runtime/.
 *
 * Between the guaranteed flushes a rank sends its largest relative changes of a buffer's
 * target to every other rank, within a bandwidth budget, and applies the others' at fixed
 * points of its own iteration count. Applies to a buffer with the default apply whose f32 or
 * f64 target every rank holds as a whole copy of at most RT_SNAPSHOT_MAX bytes during the loop
 * (the snapshot flush of buffer.c); anything else flushes as before.
 *
 * Schedule. Each round (flush_every iterations of a rank's work, or a block) is cut into m
 * sub-rounds of equal shares of that rank's iterations ($ORN_MANAGED_SUBROUNDS, default 8).
 * At boundary j (after sub-round j, j = 0 .. m-2) a rank
 *   - sends message j (when j + L <= m - 2): its unsent changes ranked by
 *     |change| / (|value| + eps), the k largest, to every other rank (non-blocking);
 *   - applies message j - L (when j >= L) of every rank, its own included, in rank order,
 *     waiting for it if it has not arrived (a liveness-aware wait: orn_dsm_waitall).
 * L is the lag: the sub-rounds a message has to arrive, chosen at every flush alike on every
 * rank as the link's latency over the fastest rank's sub-round, at least 1 (the buffer's
 * first round measures only and sends nothing; L > m - 2 sends nothing); $ORN_MANAGED_LAG
 * fixes it. The round ends with the guaranteed flush of what is left unsent (the exchange of
 * flush_snapshot); no message is in flight then. Every element of every copy is therefore
 * the same function of the ranks' updates at every run: results depend on the rank count,
 * the seed, the lags and the message sizes k only.
 *
 * Values. G (the buffer's snap) is the value every rank agrees on: the last flush plus the
 * messages applied since, in the same order everywhere. R (ref) is this rank's copy less its
 * unsent changes: a rank's unsent change is copy - R. Sending sets R = copy at the sent
 * elements; applying another rank's entry adds it to G, to the copy and to R; the flush adds
 * everyone's copy - R to G in rank order and sets copy = R = G. Reads of the copy thus see
 * the rank's own updates at once and the others' sent ones a lag after they were sent, and
 * never miss a delta older than one flush interval: the staleness bound of buffers holds.
 *
 * Budget. k = budget x B x t / ((P - 1) x e) entries per message, where t is the sub-round's
 * seconds just measured, e = 4 + element size the bytes of one entry, and B the link's
 * bandwidth, measured once per context by a probe (a ring exchange of two sizes, the minimum
 * over ranks; $ORN_LINK_BW bytes/s and $ORN_LINK_LATENCY s set it instead). L and k depend
 * on timing: $ORN_MANAGED_LAG and $ORN_MANAGED_ENTRIES fix them, and then two runs with the
 * same rank count and seed are bit-identical.
 *
 * Staleness-aware scaling (buffer(A, staleness_aware = true)): every exchanged change of an
 * element -- a message's entry, a flush's copy - R -- is divided by the number of ranks that
 * changed the element in the same exchange (each computed its change from the same value, so
 * each is stale by the others' changes): a change no other rank made concurrently is applied
 * whole, one all P ranks made is averaged. */
#ifndef ORN_RT_MANAGED_H
#define ORN_RT_MANAGED_H

#include "rt_int.h"

typedef struct RtManaged RtManaged;

/* Collective (every rank sets up the same buffers in the same order): managed state for b
 * in this loop, or NULL when b flushes as before (budget 0, one rank, a custom apply, an
 * integer target, no small copy). Runs the bandwidth probe at the context's first use. */
int rt_managed_new(OrnRtBuffer *b, int P, RtManaged **out);
void rt_managed_free(RtManaged *m);
/* Sub-rounds per round (m). */
int rt_managed_subrounds(const RtManaged *m);
/* A round of `subrounds` sub-rounds begins (the same for every managed buffer of the loop:
 * the least of their rt_managed_subrounds). */
void rt_managed_round_begin(RtManaged *m, int subrounds);
/* Boundary j of the current round (after its sub-round j, 0 <= j <= m - 2); every rank calls
 * every boundary of every round, with or without work. */
int rt_managed_boundary(OrnRtBuffer *b, int j);
/* The guaranteed flush at the round's end (replaces buffer.c's flush_snapshot). */
int rt_managed_flush(OrnRtBuffer *b);

#endif
