/* rt.h: the Orion runtime: executes plans (runtime/plan.h) on distributed arrays (dsm/).
 *
 * Generated code (and tests, and later the REPL and the CUDA back end) call this API:
 *   - orn_rt_init() / orn_rt_finalize(): one context per process, MPI underneath;
 *   - arrays: the DSM's constructors and loaders, plus rand/randn here;
 *   - orn_rt_run(): one parallel_for: a plan, an argument per plan array, a body function
 *     called per block of iterations, an optional prefetch function, accumulators;
 *   - inside bodies: views (fast element access), buffer deltas, random streams.
 * All state lives in the OrnRtCtx; no globals. Functions return OrnStatus (dsm.h); after a
 * failed collective call generated code calls orn_rt_die(), which prints
 * "orion: rank R: <operation>: <cause>" and takes every rank down.
 */
#ifndef ORN_RT_H
#define ORN_RT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dsm.h"
#include "orn_rng.h"
#include "plan.h"

typedef struct OrnRtCtx OrnRtCtx;
typedef struct OrnRtBuffer OrnRtBuffer;
typedef struct OrnRtView OrnRtView;
typedef struct OrnRtBlock OrnRtBlock;

/* ---------------------------------------------------------------- context */

/* MPI underneath (initializes MPI unless the caller did). */
int orn_rt_init(int *argc, char ***argv, OrnRtCtx **out);
/* One process, no MPI (unit tests of runtime logic). */
int orn_rt_init_local(OrnRtCtx **out);
/* Frees the context; finalizes MPI if orn_rt_init initialized it. */
void orn_rt_finalize(OrnRtCtx *rt);
OrnDsmCtx *orn_rt_dsm(OrnRtCtx *rt);
int orn_rt_rank(const OrnRtCtx *rt);
int orn_rt_size(const OrnRtCtx *rt);
const char *orn_rt_error(const OrnRtCtx *rt);
/* Print "orion: rank R: <message>" and end the job on every rank with exit code 1. */
void orn_rt_die(OrnRtCtx *rt) __attribute__((noreturn));

/* Settings (every rank must use the same ones). */
void orn_rt_set_seed(OrnRtCtx *rt, uint64_t seed); /* default 0 */
uint64_t orn_rt_seed(const OrnRtCtx *rt);
void orn_rt_set_blocks_per_rank(OrnRtCtx *rt, int k);  /* default 2, $ORN_BLOCKS_PER_RANK */
void orn_rt_set_timeout(OrnRtCtx *rt, double seconds); /* default 60, $ORN_TIMEOUT */
/* Cache blocking of 1d and 2d loops (docs/runtime.md, section 7): each block is cut into
 * r x c sub-blocks; r, c < 0: chosen from the arrays' sizes and the L2 cache (default);
 * 0: off. $ORN_SUBBLOCK=RxC / auto / off. */
void orn_rt_set_subblock(OrnRtCtx *rt, int r, int c);
void orn_rt_set_trace(OrnRtCtx *rt, int on);           /* record block order */
void orn_rt_set_slice(OrnRtCtx *rt, int64_t elements); /* progress granularity, 4096 */
/* Call bodies a slice at a time on every block, not only where progress needs it (the
 * REPL: a Ctrl-C is seen between slices). The same iterations in the same order. */
void orn_rt_set_sliced(OrnRtCtx *rt, int on);
/* Prefetched arrays up to this many bytes are copied whole to every rank before a loop
 * (default 64 MiB, $ORN_REPLICATE_MAX; 0: never). Same value on every rank. */
void orn_rt_set_replicate_max(OrnRtCtx *rt, int64_t bytes);
/* Top-level loops' held arrays up to this many bytes are read through whole copies
 * (dsm/held.c; default 64 MiB, $ORN_HELD_MAX; 0: never). */
int64_t orn_rt_held_max(const OrnRtCtx *rt);
/* Collective. Where loops will read dense a whole from every rank (the compiler knows it),
 * make its node replica now (orn_dsm_replica_reserve) if a loop's copy of it could be one:
 * several ranks, a within the window cap or replicate_max. */
int orn_rt_replica_reserve(OrnRtCtx *rt, OrnDsmArray *a);
/* Benchmarks only: 2-D rotation keeps every block where it is instead of sending it, so a
 * run measures computation alone (results are meaningless). */
void orn_rt_set_nocomm(OrnRtCtx *rt, int on);

/* Local. The context's state that decides results, for checkpoints: the seed, the
 * settings that shape blocks and copies (blocks per rank, sub-blocks, the L2 size,
 * replicate_max, slice), the run count of every loop id (random streams), then every array
 * (orn_dsm_snap_write). Read back at resume, into a context without arrays, on the same
 * rank of the same rank count: the settings of the written run win over this run's. */
int orn_rt_snap_write(OrnRtCtx *rt, const OrnDsmIo *io);
int orn_rt_snap_read(OrnRtCtx *rt, const OrnDsmIo *io);

/* ---------------------------------------------------------------- arrays */

/* Collective. Dense arrays of uniform [0, 1) (normal = 0) or standard normal (normal = 1)
 * values: element i (row-major index) is f(seed, i) from Philox4x32-10, so the contents do
 * not depend on the number of ranks. Integer types get floor(2^31 u) / normal rounded. */
int orn_rt_rand_array(OrnRtCtx *rt, OrnDsmType type, int ndim, const int64_t *dims, uint64_t seed,
                      int normal, OrnDsmArray **out);
/* The partition that plan p's loop will cut a dense array of extents dims into, when it is
 * the loop's iteration space and the loop runs in place over bands of its rows at this rank
 * count (a wavefront, sched_skew.c): fills *out (orn_dsm_part_free it) and returns 1; else 0.
 * An array made so (orn_dsm_dense_part) does not move at the loop's first run. */
int orn_rt_space_part(OrnRtCtx *rt, const OrnRtPlan *p, int ndim, const int64_t *dims,
                      OrnDsmPart *out);
/* The partition that plan p's loop (1d) will align a dense array of extents dims with, when
 * the array is its k-th array (partitioned) and the loop keeps its iteration space `space`
 * cut as it is now (bands along the loop's key: layout.c, keep_bands): the space's bands
 * along the array's dimension tied to that key, with their owners. Returns 1 and fills
 * *out, else 0 (space NULL, one rank, or a space or plan it does not apply to). */
int orn_rt_aligned_part_for(OrnRtCtx *rt, const OrnRtPlan *p, int k, const OrnDsmArray *space,
                            int ndim, const int64_t *dims, OrnDsmPart *out);

/* ---------------------------------------------------------------- buffers */

/* apply(elem, delta, env): combine a delta into an element in place (both of the target's
 * element type); NULL means elem += delta. */
typedef int (*orn_rt_apply_fn)(void *elem, const void *delta, void *env);
/* A write buffer for `target`: deltas are summed per key on the rank that makes them and
 * sent to the owners at flushes, where apply() combines them into the target in source-rank
 * order. flush_every: iterations per rank between flushes (0 = at the end of each block). */
int orn_rt_buffer_new(OrnRtCtx *rt, OrnDsmArray *target, orn_rt_apply_fn apply, void *env,
                      int64_t flush_every, OrnRtBuffer **out);
void orn_rt_buffer_free(OrnRtBuffer *b);
OrnDsmArray *orn_rt_buffer_target(OrnRtBuffer *b);
int64_t orn_rt_buffer_flush_every(const OrnRtBuffer *b);
/* buffer(A, budget = f): managed communication (runtime/managed.h): between flushes each
 * rank sends its largest relative changes to the other ranks within the fraction f (0 < f
 * <= 1) of the link's bandwidth; 0 turns it off (the default). */
int orn_rt_buffer_set_budget(OrnRtBuffer *b, double budget);
/* buffer(A, staleness_aware = true): each exchanged change of an element is divided by the
 * number of ranks that changed it in the same exchange (managed.h). */
void orn_rt_buffer_set_staleness_aware(OrnRtBuffer *b, int on);
/* What a checkpoint keeps of a buffer besides its target (stdlib/ckpt_state.c): its settings
 * and the adaptive flush interval's state, which carries from one loop run to the next. */
typedef struct OrnRtBufferState {
    int64_t flush_every, interval;
    double budget;
    int32_t stale_aware, averaging;
} OrnRtBufferState;
void orn_rt_buffer_state(const OrnRtBuffer *b, OrnRtBufferState *s);
/* A buffer made by orn_rt_buffer_new with s->flush_every takes the rest of s back. */
int orn_rt_buffer_restore(OrnRtBuffer *b, const OrnRtBufferState *s);
/* Outside loops: add a delta (local) and flush (collective). */
int orn_rt_buffer_add(OrnRtBuffer *b, const int64_t *key, const void *delta);
int orn_rt_buffer_flush(OrnRtBuffer *b);

/* ---------------------------------------------------------------- loops */

typedef union OrnRtScalar {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
} OrnRtScalar;

/* Slow paths of a view. The runtime installs its own; a serial oracle may install others. */
typedef struct OrnRtViewOps {
    /* A read the fast path could not serve (outside the dense box, or sparse). */
    void (*read)(OrnRtView *v, const int64_t *key, void *out);
    /* A pointer for writing an element outside the dense box (normally a plan violation:
     * the runtime records an error and returns scratch space). */
    void *(*write)(OrnRtView *v, const int64_t *key);
    /* Buffers: add a delta. */
    void (*add)(OrnRtView *v, const int64_t *key, const void *delta);
    /* Prefetch pass: announce a read. */
    void (*prefetch)(OrnRtView *v, const int64_t *key);
    /* Row i (dimension 0) of a sparse array: its keys (ndim each) and values. */
    void (*row)(OrnRtView *v, int64_t i, const int64_t **keys, const void **vals, int64_t *n);
} OrnRtViewOps;

/* How a body sees one array during one block. The dense fast path: an element whose key
 * lies in [lo, hi) is at base + sum((key[d] - lo[d]) * stride[d]) * esize. */
/* The dense delta store of a buffer whose target is dense and small enough (buffer.c):
 * deltas summed by the target's linear (storage row-major) key, and the keys touched since
 * the last flush, in first-touch order. Generated bodies add into it inline
 * (orn_rt_badd_*); a flush sends the touched keys and clears them. At one rank, a buffer
 * with the default apply adds each update to the target at once (direct, no collect: the
 * loop is then the serial loop exactly, and a flush has nothing to do). At several ranks,
 * when every rank has a copy of the target, each rank's updates go to its own copy at once
 * (its reads see them); the flush adds every rank's change to its copy (copy - orig, or
 * copy - the last flush's snapshot) in rank order, so all copies agree again (buffer.c). */
typedef struct OrnRtDeltas {
    char *direct;        /* where updates are added at once (row-major, whole): the target
                            at one rank, this rank's copy of it at several; or NULL (then
                            they are summed in base) */
    int collect;         /* touched keys are listed (seen, touched) for the flush */
    char *orig;          /* with direct and collect: each touched element's value before
                            its first update since the flush */
    char *base;          /* volume elements of the target's type */
    unsigned char *seen; /* volume flags: key touched since the last flush */
    int64_t *touched;
    int64_t n, cap;
    int64_t dims[ORN_RT_MAXDIM];
    int ndim;
    /* At several ranks, with the default apply: the block of the target that the current
     * block of work holds (the target partitioned or rotated with it, read by no other
     * rank), where updates are added at once: key - hlo inside hn, at held + offset . hs
     * elements. NULL otherwise. */
    char *held;
    int64_t hlo[ORN_RT_MAXDIM], hn[ORN_RT_MAXDIM], hs[ORN_RT_MAXDIM];
} OrnRtDeltas;
/* Room for one more touched key (out of line: rare). */
void orn_rt_deltas_grow(OrnRtDeltas *q);

struct OrnRtView {
    char *base; /* dense local box, or NULL */
    int64_t lo[ORN_RT_MAXDIM], hi[ORN_RT_MAXDIM];
    int64_t stride[ORN_RT_MAXDIM]; /* in elements */
    int ndim;
    int type; /* OrnRtType */
    size_t esize;
    int role; /* OrnRtRole */
    const OrnRtViewOps *ops;
    void *impl;          /* owner of the ops' state */
    OrnRtDeltas *deltas; /* buffers with a dense delta store, in bodies; NULL otherwise */
    /* A 2-D sparse view bound to a CSR tile: rows [rlo, rlo + rn) of dimension 0, row r's
     * elements at rowptr[r - rlo] .. rowptr[r - rlo + 1], their columns clo + cols[e] and
     * values rvals[e]; cols is NULL otherwise (row views then decode keys: orn_rt_row). */
    const int64_t *rowptr;
    const int32_t *cols;
    const char *rvals;
    int64_t rlo, rn, clo;
    int line; /* source site of the access the slow path serves (ORN_RT_SITE), 0 unknown */
};

/* One call of a body: run elements [first, first + count) of a block, in key order. */
struct OrnRtBlock {
    int ndim;   /* number of loop keys */
    int sparse; /* elements listed in keys[] (sparse iteration space, or unimodular) */
    int64_t lo[ORN_RT_MAXDIM], hi[ORN_RT_MAXDIM]; /* dense: the box, row-major */
    int64_t first, count;
    const int64_t *keys;   /* sparse: keys of element e at keys[e * ndim ...] */
    void *vals;            /* element e's value (dense: row-major in the box) */
    OrnRtView *views;      /* views[k] for the plan's array k; views[0] the iteration space */
    OrnRtScalar *acc;      /* this block's accumulator partials, in the plan's order */
    uint64_t seed, stream; /* random streams: see orn_rt_rng_init() */
    int64_t block;         /* block number (tile of the iteration space) */
    /* CSR blocks (a sparse 2-D iteration space, plan->keys_unused set; NULL otherwise):
     * row r (key 0 = lo[0] + r, 0 <= r < hi[0] - lo[0]) holds the elements
     * [rowptr[r], rowptr[r + 1]); element e has key 1 = lo[1] + cols[e]; row_first is the
     * row of element `first`. Elements e index vals, cols and rowptr alike:
     *     int64_t r = b->row_first;
     *     for (int64_t e = b->first; e < b->first + b->count; e++) {
     *         while (b->rowptr[r + 1] <= e) r++;
     *         int64_t u = b->lo[0] + r, i = b->lo[1] + b->cols[e]; ...
     */
    const int64_t *rowptr;
    const int32_t *cols;
    int64_t row_first;
};

typedef int (*orn_rt_body_fn)(OrnRtCtx *rt, const OrnRtBlock *b, void *env);
/* A prefetch pass: for the same block, call orn_rt_prefetch() for every key the body will
 * read from a prefetched array (or, in ordered loops, outside its block). */
typedef int (*orn_rt_prefetch_fn)(OrnRtCtx *rt, const OrnRtBlock *b, void *env);

/* One argument per plan array: the array, or for ORN_RT_BUFFERED the buffer. */
typedef struct OrnRtArg {
    OrnDsmArray *array;
    OrnRtBuffer *buffer;
} OrnRtArg;

typedef struct OrnRtLoop {
    const OrnRtPlan *plan;
    OrnRtArg *args; /* plan->narrays */
    orn_rt_body_fn body;
    orn_rt_prefetch_fn prefetch; /* may be NULL */
    void *env;
    OrnRtScalar *acc; /* plan->naccs: the values before the loop in, reduced values out */
    /* Call the body once per piece of a block that the trace records (a block, or its share
     * of a round), never in slices: the GPU path of @gpu loops (rt_gpu.h), whose calls are
     * its launches and whose buffer updates apply at the end of each call. */
    int whole;
} OrnRtLoop;

/* Collective: run a parallel_for. */
int orn_rt_run(OrnRtCtx *rt, const OrnRtLoop *loop);
/* Collective: run a then b, two consecutive parallel_for loops: as one pass over the data
 * where their plans allow it (a double-buffered stencil's two sweeps, b's rows following
 * a's a few rows behind: fuse.c), else one after the other. The same results either way;
 * $ORN_FUSE=0 always runs them one after the other. */
int orn_rt_run_pair(OrnRtCtx *rt, const OrnRtLoop *a, const OrnRtLoop *b);
/* Contained body errors (the REPL; off by default, where compiled programs end the job at
 * the first one): an error inside a body -- an index out of range that a view's slow path
 * finds, a body that returns non-zero (orn_rt_body_error) -- does not end the loop on its
 * rank. The rank keeps its first such error, calls no more bodies and runs the rest of its
 * schedule (every transfer and collective as planned, so no rank waits on it); at the end
 * of each step the ranks learn whether any failed (an allreduce: no timeout decides), and
 * from then on none calls bodies. orn_rt_run then returns the error on every rank, with
 * the lowest failing rank's message (orn_rt_error; orn_rt_error_rank names the rank), and
 * orn_rt_agreed() is 1. Accumulators are not reduced into loop->acc. Every rank must use
 * the same setting. */
void orn_rt_set_contain(OrnRtCtx *rt, int on);
/* The program's source text (the generated program passes its .orn, kept for the run):
 * run-time errors that name a line then show it with a caret (srcline.c). NULL: none. */
void orn_rt_set_source(OrnRtCtx *rt, const char *text);
/* The line of site (ORN_RT_SITE; a plain 1-based line is a site) in src as the compiler's
 * diagnostics show one, "\n   12 | text" and "\n      |   ^~" under the site's `name[` on
 * it (its occurrence, the first where there are fewer; name as a whole word; `name(` when
 * name ends in "("), or under the line's text when name is NULL or not there, written to
 * buf (at most n bytes, the line cut at 160 characters). Returns the caret's column
 * (1-based); 0 when name is not on the line (the caret then underlines the line's text),
 * and 0 with buf "" when src is NULL or has no such line or the line is blank. */
int orn_rt_src_excerpt(const char *src, int site, const char *name, char *buf, size_t n);
/* After orn_rt_run failed: 1 when every rank returned the same failure (a contained body
 * error), so the program may go on; 0 when the ranks no longer agree (orn_rt_die). */
int orn_rt_agreed(const OrnRtCtx *rt);
/* The rank whose failure orn_rt_error describes (this rank, or the agreed failing one). */
int orn_rt_error_rank(const OrnRtCtx *rt);
/* Inside a body: report a failure (the body then returns non-zero). */
int orn_rt_body_error(OrnRtCtx *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The order in which the last loop ran its blocks (when tracing is on), on every rank:
 * sorted by (step, round, rank, sequence). Concurrent blocks share a step; a round ends at
 * a buffer flush. lo/hi: the block's box (transformed keys for unimodular loops). */
typedef struct OrnRtTraceEntry {
    int64_t step, round;
    int32_t rank, pad;
    int64_t seq;
    int64_t block, first, count;
    int64_t lo[ORN_RT_MAXDIM], hi[ORN_RT_MAXDIM];
} OrnRtTraceEntry;
const OrnRtTraceEntry *orn_rt_trace(const OrnRtCtx *rt, int64_t *n);

/* Statistics of the last loop on this rank. The seconds of compute, wait, flush and
 * transfer are disjoint parts of total. */
typedef struct OrnRtStats {
    double total;   /* seconds in orn_rt_run */
    double compute; /* seconds in bodies */
    /* seconds blocked on peers: rotated blocks, barriers, collectives waiting for the last
     * rank to arrive (orn_dsm_traffic's sync) */
    double wait;
    double flush; /* seconds in buffer flushes (waiting for the slowest rank: in wait) */
    /* seconds moving data outside flushes: placing the arrays before the steps (partitions,
     * repartitions, ghost cells, copies), posting rotated blocks, prefetch exchanges, remote
     * writes, accumulators (their waits for the slowest rank: in wait) */
    double transfer;
    int64_t sent, received; /* bytes to and from other ranks during the loop */
    int64_t steps, rounds, blocks;
    int64_t prefetched;    /* keys fetched in bulk */
    int64_t kept;          /* elements read from copies kept from an earlier run, not fetched */
    int64_t shared;        /* elements read from node replicas (dsm/replica.c), not copied */
    int64_t misses;        /* keys fetched on demand */
    int64_t flushed;       /* buffer deltas sent */
    int64_t early;         /* buffer deltas sent between flushes (managed buffers) */
    int64_t repartitioned; /* arrays moved to a new partition before the loop */
    int64_t ghosts;        /* halo elements of read-only arrays received before the loop */
    int64_t ghost_rows;    /* elements of rows received down 2d_ordered's wavefront (ghost.c) */
    int64_t strategy;      /* the OrnRtStrategy it ran as: the plan's, or serial for a
                              unimodular plan over a dense space (rt_choose_unskewed) */
    int64_t in_place;      /* a unimodular plan ran in place, a skewed wavefront over the space's
                              own rows (sched_skew.c): trace blocks are of the space, not of
                              the transformed keys */
    /* Cache blocking: tiles of the iteration space per key dimension (blocks x sub-blocks),
     * sub-blocks per block along each key dimension, the L2 size used and the estimated
     * working set (bytes of rows) of one sub-block; 0 where the loop is not blocked. */
    int64_t grid[ORN_RT_MAXDIM], sub[ORN_RT_MAXDIM];
    int64_t cache_bytes, ws_bytes;
    /* 2d: the key whose arrays rotated (rt_choose_orientation may swap the plan's sides);
     * -1 otherwise */
    int64_t rotated_key;
    int64_t replicated;    /* prefetched arrays copied whole to every rank before the loop */
    int64_t replica_bytes; /* their size */
    /* @gpu loops: bytes copied to the GPU, from it, and found there already (resident);
     * kernel launches, host-device synchronizations (copies back, each waiting for the
     * device) and grid-wide barriers between schedule steps on the device */
    int64_t gpu_in, gpu_out, gpu_resident;
    int64_t gpu_launches, gpu_syncs, gpu_barriers;
    /* the second loop of a fused pair (orn_rt_run_pair): its elements computed in the first
     * loop's pass; the first loop's bodies time includes them */
    int64_t fused;
} OrnRtStats;
/* The last loop run's statistics; after orn_rt_run_pair, the second loop's. */
void orn_rt_stats(const OrnRtCtx *rt, OrnRtStats *out);
/* After orn_rt_run_pair: the first loop's statistics. */
void orn_rt_pair_stats(const OrnRtCtx *rt, OrnRtStats *out);

/* The per-loop summary ($ORN_STATS=1, a compiled program's --stats): while on, every rank
 * sums the statistics of each parallel_for source location over its runs. */
void orn_rt_set_loop_summary(OrnRtCtx *rt, int on);
typedef struct OrnRtLoopSummary {
    const char *file; /* valid until the context is finalized */
    int line, loop_id;
    int strategy; /* OrnRtStrategy */
    int64_t runs;
    /* seconds over all runs, the mean over ranks (OrnRtStats; transfer includes flush) */
    double time, compute, wait, transfer;
    double compute_max;     /* the busiest rank's compute seconds */
    int64_t sent, received; /* bytes between ranks, all ranks together */
    double imbalance;       /* compute_max / mean compute (1: balanced); 0 without compute */
} OrnRtLoopSummary;
/* Collective: every rank's sums gathered, one entry per location in the order of their
 * first runs. Rank 0 gets them (*out, free() it; *n); the others get *out = NULL, *n = 0. */
int orn_rt_loop_summary(OrnRtCtx *rt, OrnRtLoopSummary **out, int *n);

/* ---------------------------------------------------------------- inside bodies */

/* Key of element e of a block. */
void orn_rt_block_key_csr(const OrnRtBlock *b, int64_t e, int64_t *key);
static inline void orn_rt_block_key(const OrnRtBlock *b, int64_t e, int64_t *key)
{
    if (b->cols) {
        orn_rt_block_key_csr(b, e, key);
        return;
    }
    if (b->sparse) {
        for (int d = 0; d < b->ndim; d++) key[d] = b->keys[e * b->ndim + d];
        return;
    }
    for (int d = b->ndim - 1; d >= 0; d--) {
        int64_t w = b->hi[d] - b->lo[d];
        key[d] = b->lo[d] + e % w;
        e /= w;
    }
}

/* Pointer into the dense local box, or NULL when the key is outside it. */
static inline void *orn_rt_local(const OrnRtView *v, const int64_t *key)
{
    if (!v->base) return NULL;
    int64_t off = 0;
    for (int d = 0; d < v->ndim; d++) {
        if (key[d] < v->lo[d] || key[d] >= v->hi[d]) return NULL;
        off += (key[d] - v->lo[d]) * v->stride[d];
    }
    return v->base + (size_t)off * v->esize;
}

/* Read an element into out (esize bytes): local box, else the slow path (cache, on-demand
 * fetch, sparse lookup). */
static inline void orn_rt_read(OrnRtView *v, const int64_t *key, void *out)
{
    const void *p = orn_rt_local(v, key);
    if (p)
        memcpy(out, p, v->esize);
    else
        v->ops->read(v, key, out);
}

/* Pointer for writing (and reading back) an element of the local box. */
static inline void *orn_rt_wptr(OrnRtView *v, const int64_t *key)
{
    void *p = orn_rt_local(v, key);
    return p ? p : v->ops->write(v, key);
}

static inline void orn_rt_add(OrnRtView *v, const int64_t *key, const void *delta)
{
    v->ops->add(v, key, delta);
}

static inline void orn_rt_prefetch(OrnRtView *v, const int64_t *key)
{
    v->ops->prefetch(v, key);
}

static inline void orn_rt_row(OrnRtView *v, int64_t i, const int64_t **keys, const void **vals,
                              int64_t *n)
{
    v->ops->row(v, i, keys, vals, n);
}
/* Row i of a 2-D sparse view as generated row loops walk it: a CSR tile's columns in place
 * (element j's column is *coff + (*cols)[j], no keys decoded), else *cols = NULL and the
 * decoded keys of orn_rt_row (column of element j: (*keys)[2 j + 1]). */
static inline __attribute__((always_inline)) void
orn_rt_row_csr(OrnRtView *v, int64_t i, const int32_t **cols, int64_t *coff, const int64_t **keys,
               const void **vals, int64_t *n)
{
    uint64_t r = (uint64_t)i - (uint64_t)v->rlo;
    if (v->cols && r < (uint64_t)v->rn) {
        int64_t b = v->rowptr[r];
        *cols = v->cols + b;
        *coff = v->clo;
        *keys = NULL;
        *vals = v->rvals + (size_t)b * v->esize;
        *n = v->rowptr[r + 1] - b;
        return;
    }
    *cols = NULL;
    *coff = 0;
    orn_rt_row(v, i, keys, vals, n);
}

/* A view's dense box hoisted into locals: what generated bodies address elements through.
 * Built once per body call (orn_rt_box); element k of an nd-dimensional array is then
 * base[sum((key[d] - lo[d]) * s[d])] when every (key[d] - lo[d]) < n[d] (unsigned), with
 * s[nd - 1] == 1: the last dimension of a dense box is always unit stride (a contract
 * every view the runtime builds keeps). n is 0 when the view has no dense box, so every
 * access then takes the view's slow path. */
typedef struct OrnRtBox {
    char *base;
    int64_t lo[ORN_RT_MAXDIM];
    uint64_t n[ORN_RT_MAXDIM];
    int64_t s[ORN_RT_MAXDIM];
    OrnRtView *v;
} OrnRtBox;

static inline OrnRtBox orn_rt_box(OrnRtView *v)
{
    OrnRtBox x;
    x.base = v->base;
    x.v = v;
    for (int d = 0; d < ORN_RT_MAXDIM; d++) {
        x.lo[d] = v->lo[d];
        x.n[d] = v->base && v->hi[d] > v->lo[d] ? (uint64_t)(v->hi[d] - v->lo[d]) : 0;
        x.s[d] = v->stride[d];
    }
    return x;
}

/* A buffer's box for one body call: the storage its updates are added to in place when
 * they need nothing else (deltas->direct without listing: one rank, or a small target's
 * copy), the whole target row-major; empty otherwise (orn_rt_badd_ then). */
static inline OrnRtBox orn_rt_bbox(OrnRtView *v)
{
    OrnRtBox x;
    const OrnRtDeltas *q = v->deltas;
    x.v = v;
    if (q && q->held) { /* the held block: adds in place there, the rest through badd */
        x.base = q->held;
        for (int d = 0; d < ORN_RT_MAXDIM; d++) {
            x.lo[d] = d < q->ndim ? q->hlo[d] : 0;
            x.n[d] = d < q->ndim ? (uint64_t)q->hn[d] : 0;
            x.s[d] = d < q->ndim ? q->hs[d] : 0;
        }
        return x;
    }
    int on = q && !q->collect; /* no keys to list: adds into the target, its copy or the store */
    x.base = on ? (q->direct ? q->direct : q->base) : NULL;
    int64_t s = 1;
    for (int d = ORN_RT_MAXDIM - 1; d >= 0; d--) {
        x.lo[d] = 0;
        x.n[d] = on && d < q->ndim ? (uint64_t)q->dims[d] : 0;
        x.s[d] = s;
        if (on && d < q->ndim) s *= q->dims[d];
    }
    return x;
}

/* Addressing in a box (orn_rt_box_off, _at, _span, _full, _clip): orn_box.h, which the
 * kernels of @gpu loops compile too. */
#define ORN_BOX_FN        static inline __attribute__((always_inline))
#define ORN_BOX_LIKELY(c) __builtin_expect((c), 1)
#include "orn_box.h"

/* Whether gathers from the box are worth prefetching: it spans at least ORN_RT_PF_MIN bytes,
 * more than stays in a core's L2 beside the walk's own data (SLR's 400 KB weights: 1-2%
 * slower with prefetches, ALS's 1.6 MB item factors: 7% faster). */
#define ORN_RT_PF_MIN ((uint64_t)1 << 20)
static inline int orn_rt_box_gather_far(const OrnRtBox *x, int nd, size_t esize)
{
    return x->n[0] * (nd == 1 ? 1 : (uint64_t)x->s[0]) * esize >= ORN_RT_PF_MIN;
}

/* Prefetch, for reading, what a gather at `key` is about to touch: element key of a 1-D box,
 * or row key (dimension 0) of a 2-D one -- its held part, at most ORN_RT_PF_LINES cache
 * lines. A hint: a key outside the box gives an address the prefetch never faults on.
 * Generated sparse walks call it for the entry a few ahead (codegen/c_gather.c). */
#define ORN_RT_PF_LINES 4
static inline __attribute__((always_inline)) void orn_rt_box_prefetch(const OrnRtBox *x, int nd,
                                                                      int64_t key, size_t esize)
{
    uint64_t r = (uint64_t)key - (uint64_t)x->lo[0];
    uintptr_t a = (uintptr_t)x->base + (uintptr_t)(r * (nd == 1 ? 1 : (uint64_t)x->s[0]) * esize);
    uintptr_t e = a + (nd == 1 ? esize : x->n[1] * esize);
    for (int i = 0; i < ORN_RT_PF_LINES && a < e; i++, a = (a | 63) + 1)
        __builtin_prefetch((const void *)a);
}

/* The views' slow paths with the key passed by value (out of line, cold): an inline fast
 * path that passed a key array would make the compiler store the key to memory at every
 * access, slow path taken or not. nd <= 4, or ORN_RT_NDL(nd, line) (orn_box.h): the line
 * goes to the view (OrnRtView.line) for messages. Unused components are ignored. */
void orn_rt_slow_read(OrnRtView *v, int nd, int64_t k0, int64_t k1, int64_t k2, int64_t k3,
                      void *out) __attribute__((cold));
void *orn_rt_slow_write(OrnRtView *v, int nd, int64_t k0, int64_t k1, int64_t k2, int64_t k3,
                        int keep) __attribute__((cold));
void orn_rt_slow_add(OrnRtView *v, int nd, int64_t k0, int64_t k1, int64_t k2, int64_t k3,
                     const void *delta) __attribute__((cold));
#define ORN_RT_KEY4(nd, key)                                                                       \
    (key)[0], ORN_RT_ND(nd) > 1 ? (key)[1] : 0, ORN_RT_ND(nd) > 2 ? (key)[2] : 0,                  \
        ORN_RT_ND(nd) > 3 ? (key)[3] : 0

/* Offset in elements of key (nd subscripts) in the held block of q (OrnRtDeltas.held), or
 * -1 when there is none or the key lies outside it. */
static inline __attribute__((always_inline)) int64_t orn_rt_held_off(const OrnRtDeltas *q, int nd,
                                                                     const int64_t *key)
{
    if (!q->held) return -1;
    int64_t o = 0;
    int in = 1;
    for (int i = 0; i < nd; i++) {
        uint64_t r = (uint64_t)(key[i] - q->hlo[i]);
        in &= r < (uint64_t)q->hn[i];
        o += (int64_t)r * q->hs[i];
    }
    return in ? o : -1;
}

#define ORN_RT_TYPED(T, name)                                                                      \
    static inline __attribute__((always_inline))                                                   \
    T orn_rt_ld_##name(const OrnRtBox *x, int nd, const int64_t *key)                              \
    {                                                                                              \
        int64_t o;                                                                                 \
        if (ORN_BOX_LIKELY(orn_rt_box_find(x, nd, key, &o)))                                       \
            return ((const T *)(const void *)x->base)[o];                                          \
        T r;                                                                                       \
        orn_rt_slow_read(x->v, nd, ORN_RT_KEY4(nd, key), &r);                                      \
        return r;                                                                                  \
    }                                                                                              \
    static inline __attribute__((always_inline))                                                   \
    T *orn_rt_wp_##name(const OrnRtBox *x, int nd, const int64_t *key)                             \
    {                                                                                              \
        int64_t o;                                                                                 \
        if (ORN_BOX_LIKELY(orn_rt_box_find(x, nd, key, &o))) return (T *)(void *)x->base + o;      \
        return (T *)orn_rt_slow_write(x->v, nd, ORN_RT_KEY4(nd, key), 0);                          \
    }                                                                                              \
    static inline __attribute__((always_inline))                                                   \
    T *orn_rt_rw_##name(const OrnRtBox *x, int nd, const int64_t *key)                             \
    {                                                                                              \
        int64_t o;                                                                                 \
        if (ORN_BOX_LIKELY(orn_rt_box_find(x, nd, key, &o))) return (T *)(void *)x->base + o;      \
        return (T *)orn_rt_slow_write(x->v, nd, ORN_RT_KEY4(nd, key), 1);                          \
    }                                                                                              \
    /* A buffer delta: into the dense store inline, else through the view's add. */                \
    static inline __attribute__((always_inline)) void orn_rt_badd_##name(OrnRtView *v, int nd,     \
                                                                         const int64_t *key, T d)  \
    {                                                                                              \
        OrnRtDeltas *q = v->deltas;                                                                \
        if (__builtin_expect(q != NULL, 1)) {                                                      \
            int64_t o = orn_rt_held_off(q, ORN_RT_ND(nd), key);                                    \
            if (o >= 0) {                                                                          \
                ((T *)(void *)q->held)[o] += d;                                                    \
                return;                                                                            \
            }                                                                                      \
            uint64_t lin = 0;                                                                      \
            int in = 1;                                                                            \
            for (int i = 0; i < ORN_RT_ND(nd); i++) {                                              \
                in &= (uint64_t)key[i] < (uint64_t)q->dims[i];                                     \
                lin = lin * (uint64_t)q->dims[i] + (uint64_t)key[i];                               \
            }                                                                                      \
            if (__builtin_expect(in, 1)) {                                                         \
                T *dir = (T *)(void *)q->direct;                                                   \
                if (q->collect && !q->seen[lin]) {                                                 \
                    if (q->n == q->cap) orn_rt_deltas_grow(q);                                     \
                    q->seen[lin] = 1;                                                              \
                    q->touched[q->n++] = (int64_t)lin;                                             \
                    if (dir) ((T *)(void *)q->orig)[lin] = dir[lin];                               \
                }                                                                                  \
                if (dir)                                                                           \
                    dir[lin] += d;                                                                 \
                else                                                                               \
                    ((T *)(void *)q->base)[lin] += d;                                              \
                return;                                                                            \
            }                                                                                      \
        }                                                                                          \
        orn_rt_slow_add(v, nd, ORN_RT_KEY4(nd, key), &d);                                          \
    }                                                                                              \
    /* A buffer delta through the buffer's hoisted box (orn_rt_bbox): an add in place, else        \
     * as orn_rt_badd_. */                                                                         \
    static inline __attribute__((always_inline)) void orn_rt_bbadd_##name(                         \
        const OrnRtBox *x, OrnRtView *v, int nd, const int64_t *key, T d)                          \
    {                                                                                              \
        int64_t o;                                                                                 \
        if (ORN_BOX_LIKELY(orn_rt_box_find(x, nd, key, &o))) {                                     \
            ((T *)(void *)x->base)[o] += d;                                                        \
            return;                                                                                \
        }                                                                                          \
        orn_rt_badd_##name(v, nd, key, d);                                                         \
    }                                                                                              \
    static inline T orn_rt_get_##name(OrnRtView *v, const int64_t *key)                            \
    {                                                                                              \
        T x;                                                                                       \
        orn_rt_read(v, key, &x);                                                                   \
        return x;                                                                                  \
    }                                                                                              \
    static inline void orn_rt_add_##name(OrnRtView *v, const int64_t *key, T d)                    \
    {                                                                                              \
        v->ops->add(v, key, &d);                                                                   \
    }
ORN_RT_TYPED(int32_t, i32)
ORN_RT_TYPED(int64_t, i64)
ORN_RT_TYPED(float, f32)
ORN_RT_TYPED(double, f64)
#undef ORN_RT_TYPED

/* ---------------------------------------------------------------- random streams */

/* Counter-based streams (Philox4x32-10): a draw depends only on (seed, stream, key,
 * draw number), never on ranks or scheduling. Inside a loop use the block's seed and
 * stream (the stream is derived from the plan's loop_id and how many times the loop ran)
 * and the iteration's key. */
/* OrnRtRng: orn_rng.h (shared with the kernels of @gpu loops). */

void orn_rt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
void orn_rt_rng_init(OrnRtRng *g, uint64_t seed, uint64_t stream, const int64_t *key, int nkey);
static inline void orn_rt_rng_iter(OrnRtRng *g, const OrnRtBlock *b, const int64_t *key)
{
    orn_rt_rng_init(g, b->seed, b->stream, key, b->ndim);
}
uint32_t orn_rt_rng_u32(OrnRtRng *g);
double orn_rt_rng_uniform(OrnRtRng *g);         /* [0, 1), 53 bits */
double orn_rt_rng_normal(OrnRtRng *g);          /* standard normal (Box-Muller) */
int64_t orn_rt_rng_int(OrnRtRng *g, int64_t n); /* uniform in 0..n-1 (n >= 1), unbiased */
/* Element `index` (row-major) of a rand / randn array of this type and seed, stored at out. */
void orn_rt_rand_elem(OrnDsmType type, uint64_t seed, int64_t index, int normal, void *out);
/* Element `index` of a rand (normal = 0) / randn (normal = 1) array with this seed. */
double orn_rt_rand_at(uint64_t seed, int64_t index, int normal);

#endif
