/* rt_int.h: private to runtime/: the context, the state of one loop execution (Exec), the
 * schedule interface, and helpers shared by the schedules. */
#ifndef ORN_RT_INT_H
#define ORN_RT_INT_H

#include <stdint.h>

#include "rt.h"
#include "timeline.h"
#include "transport.h"
#include "xferq.h"

/* ---------------------------------------------------------------- int64 -> value map */

/* Open addressing, linear probing, keys >= 0 (-1 marks empty), values of vsize bytes.
 * Values live in chunks that never move, so a value pointer stays valid until the map is
 * cleared (bodies may hold pointers from orn_rt_wptr while the cache grows). */
#define RT_MAP_CHUNK 1024
typedef struct RtMap {
    int64_t cap, n;
    int64_t *keys; /* cap slots */
    int64_t *slot; /* cap slots: value index */
    char **chunks; /* values: index i at chunks[i / RT_MAP_CHUNK] */
    int64_t nchunks;
    size_t vsize;
} RtMap;
void rt_map_init(RtMap *m, size_t vsize);
void rt_map_free(RtMap *m);
void rt_map_clear(RtMap *m);
void *rt_map_find(const RtMap *m, int64_t key);
void *rt_map_insert(RtMap *m, int64_t key, int *created); /* zero-filled when created */

/* ---------------------------------------------------------------- context */

typedef struct LoopCount {
    int loop_id;
    int64_t count;
} LoopCount;

/* window.c: a view whose first exchange in the last run of its loop copied the whole array
 * (no buffer updates it): the next run copies it without a prefetch pass. */
typedef struct RtWinHint {
    int loop_id, k, array_id;
    int64_t nnz;
} RtWinHint;

/* One parallel_for source location's runs, summed on this rank (orn_rt_loop_summary). */
typedef struct RtLoopSum {
    char *file;
    int line, loop_id, strategy;
    int64_t runs;
    double total, compute, wait, transfer;
    int64_t sent, received;
} RtLoopSum;

#define RT_SPARES 4
struct OrnRtCtx {
    OrnDsmCtx *dsm;
    uint64_t seed;
    int blocks_per_rank;
    int blocks_explicit;   /* set by $ORN_BLOCKS_PER_RANK or orn_rt_set_blocks_per_rank */
    int sub_mode;          /* sub-blocks: -1 automatic, 0 off, 1 fixed (sub_fixed) */
    int sub_fixed[2];      /* ORN_SUBBLOCK=RxC */
    int64_t cache_bytes;   /* L2 per core (blocking.c) */
    int64_t replicate_max; /* prefetched arrays up to this many bytes are copied whole */
    int64_t held_max;      /* held arrays of top-level loops, the same ($ORN_HELD_MAX) */
    int rotate_planned;    /* $ORN_ROTATE=planned: 2d loops rotate the side their plan names */
    int window_check;      /* $ORN_WINDOW_CHECK=1: a copy kept from an earlier run, or a node
                            * replica returned unchanged, is fetched or compared again (tests) */
    int64_t slices_bytes;  /* $ORN_FLUSH_SLICES: flushes of copies go by slices from this many
                            * bytes of changes times (2P - 3) (buffer.c, sum_changes) */
    int flush_shm;         /* sliced flushes of small copies through shared memory where the
                            * ranks share a host ($ORN_FLUSH_SHM=0: by messages) */
    int64_t slice;
    int sliced;  /* orn_rt_set_sliced: bodies always run a slice at a time */
    int contain; /* orn_rt_set_contain: body errors are agreed, not fatal (contain.c) */
    int agreed;  /* the last orn_rt_run failed with a contained, agreed error */
    int trace_on;
    int nocomm;
    OrnRtTraceEntry *trace;
    int64_t ntrace;
    OrnRtStats stats;
    LoopCount *loops; /* invocations per loop id (random streams) */
    int nloops, caploops;
    RtWinHint *win_hints; /* window.c */
    int nwin_hints, capwin_hints;
    void *gpu;       /* @gpu loops' state (gpu.c), created at the first one */
    int summary_on;  /* orn_rt_set_loop_summary: runs are summed per source location */
    double link_bw;  /* managed buffers: the link's bytes/s and one-way latency in seconds, */
    double link_lat; /* probed at first use (managed.c) */
    RtLoopSum *sums;
    int nsums, capsums;
    int fuse_off;          /* $ORN_FUSE=0: orn_rt_run_pair runs its loops one after the other */
    struct RtFuse *fuse;   /* the pair being run (fuse.c), or NULL */
    const char *src;       /* the program's source text for run-time errors (srcline.c), or NULL */
    OrnRtStats pair_stats; /* the first loop's, after orn_rt_run_pair */
    /* whole copies of prefetched arrays and windows' copies kept between loop runs
     * (blocking.c, rt_spare_take): a fresh copy per run paid its page faults every time
     * (PageRank's 2 MB pr at -n 2; a window's 128 MB copy: clearing its pages was 44% of the
     * run) */
    struct {
        void *p;
        size_t size;
        /* what it holds, when it was kept as a whole copy (rt_spare_keep): the array's
         * values at these generations of its storage on every rank; array -1: nothing */
        int array;
        uint64_t *gens;
    } spare[RT_SPARES];
};

struct OrnRtBuffer {
    OrnRtCtx *rt;
    OrnDsmArray *target;
    orn_rt_apply_fn apply;
    void *env;
    int64_t flush_every;
    RtMap deltas;         /* linear key -> summed delta (target's element type) */
    int dense;            /* deltas live in dd instead (a dense target up to ORN_RT_DENSE_DELTAS) */
    OrnRtDeltas dd;       /* the dense store (rt.h) */
    int direct;           /* during a loop at one rank: updates applied at once */
    char *replica;        /* during a loop: the ranks' whole copy of the target its reads use
                             (blocking.c), kept equal to the target at every flush; or NULL */
    int64_t most_touched; /* keys the busiest rank sent at the last flush (same everywhere) */
    char *snap;           /* small targets with a copy: the copy as of the last flush; a flush
                             then sends each rank's whole copy - snap (no keys listed) */
    char *mine;           /* with snap: this rank's copy - snap at a flush */
    char *xbuf;           /* the exchange of whole change vectors (buffer.c, sum_changes);
                             freed at the loop's end */
    char *shm;            /* change vectors shared by the host's ranks (buffer.c, shm_prepare):
                             NULL, or shm_bytes mapped for the buffer's life */
    size_t shm_bytes, shm_stride;
    int shm_tried, shm_P, shm_sets;
    int64_t shm_k;        /* the last barrier's number */
    uint64_t shm_turn;    /* whole vectors: flushes so far (the set of slots is its parity) */
    double budget;        /* managed communication: fraction of the link (0: off; managed.h) */
    int stale_aware;      /* exchanged changes scaled by their staleness (managed.h) */
    int owners_dense;     /* flushes send owners dense slices, and updates in loops skip
                             listing touched keys (buffer.c, flush_dense_owners) */
    int owners_checked;   /* this loop run's first flush has made that choice */
    int owners_known;     /* some flush has measured that choice (the guess below is out) */
    int owners_guess;     /* owners_dense was guessed at this run's start, before any flush
                             measured it: the first flush checks it */
    struct RtManaged *mg; /* during a loop: managed state (managed.c), or NULL */
    int mg_lag;           /* managed: the lag in sub-rounds chosen at the last flush (0: none) */
    /* The adaptive flush interval (exec.c, adapt_interval): kept from run to run */
    int64_t interval;     /* iterations per rank between flushes, 0 before the first run */
    int count_changes;    /* this loop's flushes count the elements below */
    int64_t changed;      /* elements the last flush changed (same count on every rank) */
    int64_t shared;       /* of them, those that two or more ranks changed */
    int averaging;        /* the interval is at its floor and still too long: the flushes
                             average what several ranks changed (as stale_aware) */
    unsigned char *marks; /* records flushes: ranks per element, for the counts */
    int32_t *nchg;        /* records flushes while averaging: ranks per element (0 between) */
    /* A target whose tiles travel during the loop (rotated by a 2-D schedule): the rank
     * each tile's deltas go to at the next flush (Exec fills it from the schedule's
     * `holder`), NULL otherwise (the owners). A delta that arrives for a tile not installed
     * yet waits in `pending` until the tile arrives (rt_buffer_arrived). */
    int *route;
    char *pending; /* records (tile, linear key, delta: 24 bytes), in arrival order */
    size_t npending, cappending;
};
int rt_buffer_add_lin(OrnRtBuffer *b, int64_t lin, const void *delta);
/* *elem += *delta in the target's type (an update added where it lives). */
void rt_buffer_add_at(OrnRtBuffer *b, void *elem, const void *delta);
/* A loop that updates b begins (P ranks) / ends: at one rank, with the default apply, its
 * updates go to the target at once (dd.direct when the target is one held dense tile, the
 * element's storage otherwise); everywhere else they wait for the flush. iters: the loop's
 * iterations over all ranks (the same everywhere), for the first choice of flush
 * (flush_dense_owners). */
void rt_buffer_loop_begin(OrnRtBuffer *b, int P, int64_t iters);
/* Before the loop places its arrays: at one rank, a default-apply buffer's dense target is
 * gathered into one tile (local), which loop_begin then adds into directly. */
int rt_buffer_prepare(OrnRtBuffer *b, int P);
void rt_buffer_loop_end(OrnRtBuffer *b);
/* Every rank holds a whole copy of b's target for this loop (blocking.c), which its reads
 * use: flushes go to every copy; with the default apply and a dense store each rank's
 * updates also go to its own copy at once (OrnRtDeltas.direct, rt.h). Collective: sets up
 * managed communication where the buffer asks for it (managed.h). */
int rt_buffer_set_replica(OrnRtBuffer *b, char *copy, int P);
/* dst[i] = apply(dst[i], d[i]) for each of n elements whose change d[i] is not +0. */
int rt_buffer_add_changes(OrnRtBuffer *b, char *dst, const char *d, int64_t n);
/* Staleness-aware add (the snapshot and dense flushes, managed.c's flush): dst[i] += sum over
 * the P changes d[q][i] of d[q][i] / (ranks whose d[q][i] is not +0), in rank order; n
 * elements of a float type, changes `stride` bytes apart. */
void rt_stale_add(int type, char *dst, const char *d, size_t stride, int P, int64_t n);
/* The dense store generated bodies add into inline, or NULL (the view's add). */
OrnRtDeltas *rt_buffer_inline(OrnRtBuffer *b);
/* Tile `tile` of b's target was installed on this rank: the deltas that waited for it are
 * added, in the order they arrived. */
int rt_buffer_arrived(OrnRtBuffer *b, int64_t tile);

/* ---------------------------------------------------------------- one loop execution */

typedef struct Exec Exec;
typedef struct RtFuse RtFuse;

typedef struct Work {
    int64_t tile; /* tile of the iteration store */
    int64_t first, count;
    /* Or runs of the tile: nruns (first, count) pairs, count their total (sched_skew.c: a
     * parallelogram, a run per row), bound once and run in order; the schedule owns them. */
    const int64_t *runs;
    int64_t nruns;
} Work;
/* The block a tile belongs to: sub-blocks (blocking.c) are tiles too, grouped into the
 * schedule's blocks; a round without flush_every covers one block. */
int64_t rt_tile_group(const Exec *x, int64_t tile);

typedef struct WorkList {
    Work *w;
    int64_t n, cap;
} WorkList;
void rt_work_push(WorkList *l, int64_t tile, int64_t first, int64_t count);
/* One item of nruns (first, count) runs of the tile (Work.runs: the caller keeps them). */
void rt_work_push_runs(WorkList *l, int64_t tile, const int64_t *runs, int64_t nruns);

/* Ghost cells of one read-only array (halo.c). */
typedef struct RtHalo RtHalo;
typedef struct RtGhost RtGhost;
/* Dense window of a prefetched or remote array (window.c). */
typedef struct RtWindow RtWindow;

/* State behind one view (OrnRtView.impl). */
typedef struct ViewImpl {
    Exec *x;
    int k;              /* plan array index */
    int read_only;      /* the plan says the body never writes it */
    int buffered;       /* a buffer of this loop updates it at flushes */
    RtHalo *halo;       /* 1d/2d, read-only, dense: box + halo copies; else NULL */
    OrnDsmArray *store; /* where the values live (unimodular: the transformed copy) */
    OrnRtBuffer *buf;
    int held_view; /* a buffer whose updates of its target's block held by the current block
                      go there at once (OrnRtDeltas.held): the target's view, else -1 */
    int64_t tile;  /* tile of `store` bound for the current block, -1 none */
    RtMap cache;   /* linear key of store -> CacheEnt */
    int64_t *req;  /* keys announced by the prefetch pass, not yet fetched */
    int64_t nreq, capreq;
    int64_t *dirty; /* remote role: keys written this round (in the cache) */
    int64_t ndirty, capdirty;
    int64_t *rowkeys[2]; /* row views of CSR tiles: decoded keys (two rows at a time) */
    int64_t caprow[2];
    int rowflip;
    int xform; /* keys are mapped: key' = T key - off (unimodular) */
    int T[ORN_RT_MAXDIM][ORN_RT_MAXDIM];
    int64_t off[ORN_RT_MAXDIM];
    unsigned char scratch[16];
    RtWindow *win; /* window.c: dense box of a prefetched / remote array, or NULL */
    int ghost;     /* ghost.c: its rows above and below the block travel (x->ghost) */
} ViewImpl;

typedef struct CacheEnt {
    unsigned char val[8];
    unsigned char state; /* 1 announced, 2 present */
    unsigned char found;
    unsigned char dirty;
    unsigned char pad[5];
} CacheEnt;

typedef struct OrnRtSched OrnRtSched;

/* The runtime's own hot loops over a buffer's elements (a flush's changes: buffer.c),
 * built for the machine that runs them: the library is compiled for any x86-64 (SSE2),
 * while the generated code gets -march=native. One clone per vector width, chosen at load
 * time (ifunc). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(ORN_NO_CLONES)
#define RT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RT_CLONES
#endif

struct Exec {
    OrnRtCtx *rt;
    OrnDsmCtx *dsm;
    const OrnRtLoop *loop;
    const OrnRtPlan *plan; /* the loop's plan, or own_plan (rt_choose_orientation) */
    OrnRtPlan *own_plan;   /* the plan with its 2d sides swapped, and its arrays; or NULL */
    OrnRtPlanArray *own_arrays;
    const OrnRtSched *sched;
    int P, me;
    OrnDsmArray *iter; /* the iteration store: args[0].array, or a transformed copy */
    const int64_t *(*iter_keys)(Exec *x, int64_t tile); /* unimodular: original keys */
    OrnRtView *views;
    ViewImpl *vi;
    int n;      /* plan->narrays */
    int halo;   /* reads outside the block go through the cache (ordered schedules) */
    int rounds; /* prefetch exchanges / buffer flushes per round */
    int64_t flush_every;
    int adapt; /* flush_every is chosen anew after every flush (exec.c, adapt_interval) */
    int64_t nsteps;
    int kd[2];            /* partitioned key dimensions */
    int nb[2];            /* tiles along them (blocks x sub-blocks) */
    int sub[2];           /* sub-blocks per block along them (blocking.c), 0 = 1 */
    int split_dim;        /* 1d: a further key dimension cut into sub-blocks, -1 none */
    int nsplit;           /* tiles along split_dim */
    int64_t ws_bytes;     /* estimated working set of one sub-block */
    int64_t part_salt;    /* rt_plan_sig salt: adopted boundaries (layout.c) */
    int need_progress;    /* transfers in flight: poll between slices */
    int in_prefetch;      /* running the prefetch pass */
    int remote_reads;     /* bodies may read other ranks' data on demand */
    int skip_prefetch;    /* window.c: no key can be announced (all data local everywhere) */
    int status;           /* first error raised inside a body's slow path */
    int body_code;        /* contain: this rank's first body error (contain.c), or 0 */
    char *body_msg;       /* its message */
    int body_skip;        /* contain: no more bodies (this rank, or every rank, failed) */
    OrnRtScalar *accpart; /* per iteration tile: naccs partials */
    unsigned char *accused;
    OrnRtTraceEntry *tr;
    int64_t ntr, captr, seq;
    int64_t step, round;
    uint64_t stream;
    OrnRtStats stats;
    void *sched_state;
    char *ghost_recv, *ghost_local; /* ghost regions from other ranks / from tiles held here */
    char *ghost_send;               /* ghost regions for other ranks, in flight (halo.c) */
    OrnDsmXfer **ghost_sx;          /* their transfers */
    int64_t nghost_sx, capghost_sx;
    int prefetch_needed; /* some prefetched or remote array is not served from a replica */
    int64_t *keybuf;     /* keys of the current slice of a CSR iteration tile */
    int64_t capkeybuf;
    char **replica; /* per plan array: a whole copy of a prefetched array (blocking.c), or NULL */
    unsigned char *replica_borrowed; /* per plan array: the copy is the array's own tile */
    /* per plan array: every rank's write generation of the array at the loop's start, when
     * its copy may be kept for later runs (blocking.c, keep_agree), else NULL */
    uint64_t **replica_gens;
    OrnTl *tl;                /* the timeline recorder (dsm/timeline.h), NULL when off */
    struct OrnProgress *pr;   /* the progress line (loop_progress.c), NULL when off */
    int64_t pr_done, pr_mine; /* elements of this rank's work done so far, and in all */
    double pr_scale;          /* the loop's elements over this rank's */
    OrnDsmXfer **replica_x;   /* the copies' tiles in flight (blocking.c) */
    int64_t nreplica_x;
    RtFuse *fuse;   /* fuse.c: the pair this loop belongs to, or NULL */
    int fuse_phase; /* 1: the pair's first loop (the second follows it), 2: the second */
    RtGhost *ghost; /* ghost.c: 2d_ordered's travelling ghost rows, or NULL */
    int bands;      /* sched_skew.c runs the loop in place, over bands of the space's rows */
    int cyclic;     /* 1d: the space's bands are kept as dealt cyclically (layout.c) */
    int64_t skew;   /* and its blocks' skew: y1 = skew i + j (unimodular), 0 (2d_ordered) */
};

/* blocking.c: a buffer of at least `size` bytes for a whole copy or a window's copy (a
 * spare kept from an earlier run, else a new one, advised into huge pages); give it back
 * after the run (kept while the spares stay within limit bytes -- replicate_max for
 * replicas, the window cap for windows -- else freed); free every spare. */
void *rt_spare_take(OrnRtCtx *rt, size_t size);
void rt_spare_give(OrnRtCtx *rt, void *p, size_t size, size_t limit);
/* Give back a whole row-major copy of array `array` made while its storage was at
 * generation gens[r] on rank r (P of them): rt_spare_find takes it again while they are
 * still the same (spares holding nothing go first when over the limit). */
void rt_spare_keep(OrnRtCtx *rt, void *p, size_t size, size_t limit, int array,
                   const uint64_t *gens, int P);
void *rt_spare_find(OrnRtCtx *rt, int array, const uint64_t *gens, int P, size_t *size);
/* The generations of the kept copy of `array` (NULL: none), left among the spares. */
const uint64_t *rt_spare_peek(const OrnRtCtx *rt, int array);
void rt_spare_free(OrnRtCtx *rt);

/* exec.c: v's box, storage and strides: tile t of a (a dense tile's row-major box; a
 * sparse one's CSR rows). */
void rt_box_view(OrnRtView *v, const OrnDsmArray *a, int64_t t);

/* fuse.c: two stencil sweeps as one pass (orn_rt_run_pair). The phase of loop l in pair F
 * (0 when F is NULL or l is not in it). */
int rt_fuse_phase(const RtFuse *F, const OrnRtLoop *l);
/* Phase 1, after the schedule's setup: B's views and the per-tile state. */
int rt_fuse_begin(Exec *x);
/* Phase 1: elements per body call on tile t (whole rows). */
int64_t rt_fuse_chunk(const OrnDsmTile *t);
/* Phase 1: A's body ran elements [f0, f1) of the bound tile; B's rows follow. */
int rt_fuse_after(Exec *x, int64_t tile, int64_t f0, int64_t f1);
/* Phase 2: the first element at or after f of [f, e) of tile t that phase 1 left (e when
 * none), and in *pend the end of the run of such elements from there. */
int64_t rt_fuse_skip(const Exec *x, const OrnDsmTile *t, int64_t f, int64_t e, int64_t *pend);

/* contain.c: body errors contained (orn_rt_set_contain, rt.h). */
/* A body error (its message in the DSM context): returns non-zero when it is contained --
 * recorded, the rank calls no more bodies -- and 0 when it must end the loop. */
int rt_body_contain(Exec *x, int code);
/* Collective, after every step but the last: whether any rank failed; then none runs
 * bodies any more. */
int rt_body_step_agree(Exec *x);
/* Collective, at the loop's end: the lowest failing rank's error on every rank, or OK. */
int rt_body_agree(Exec *x);
/* Tile `tile` of array a (rotated) was installed here: the buffers of x's loop that update
 * a add the deltas that waited for it (rt_buffer_arrived). */
int rt_buffers_arrived(Exec *x, const OrnDsmArray *a, int64_t tile);

struct OrnRtSched {
    const char *name;
    /* Partition the arrays, set x->nsteps and schedule state. */
    int (*setup)(Exec *x);
    /* Before / after the computation of step s (e.g. receive / send rotated blocks). */
    int (*step_begin)(Exec *x, int64_t s);
    int (*step_end)(Exec *x, int64_t s);
    /* The work of `rank` at step s, for any rank (every rank can compute anyone's work:
     * the round counts of a step are then known without messages). */
    void (*work)(Exec *x, int64_t s, int rank, WorkList *out);
    int (*finish)(Exec *x);
    void (*cleanup)(Exec *x);
    int step_sync; /* steps must not overlap between ranks (wavefronts) */
    /* Optional, steps without rounds: before / after each of this rank's work items (an
     * in-place wavefront waits for the rows an item reads, and sends those it wrote). */
    int (*item_begin)(Exec *x, const Work *w);
    int (*item_end)(Exec *x, const Work *w);
    /* Schedules that move rotated arrays: the rank that holds tile `tile` of view k's
     * array at the current step's flushes, or that installs it next (a buffer's deltas
     * for it go there); NULL where tiles stay with their owners. */
    int (*holder)(const Exec *x, int k, int64_t tile);
};

extern const OrnRtSched orn_rt_sched_serial;
extern const OrnRtSched orn_rt_sched_1d;
extern const OrnRtSched orn_rt_sched_2d_rotation;
extern const OrnRtSched orn_rt_sched_2d_wavefront;
extern const OrnRtSched orn_rt_sched_unimodular;
extern const OrnRtSched orn_rt_sched_skew;
/* sched_skew.c: the skew c of a unimodular plan that runs in place (a skewed wavefront over
 * the space's own rows), else 0; its bands (blocks along dimension 0), 0 when too few rows. */
int rt_skew_factor(const Exec *x);
int rt_skew_bands(const Exec *x);
/* Whether a 2d_ordered plan runs there too (rectangular blocks, skew 0): the same loops,
 * with ghost rows on ($ORN_GHOST). */
int rt_rect_bands(const Exec *x);

/* ---------------------------------------------------------------- layout helpers */

/* Owner of a block from its indices along the partitioned key dimensions (g[i] = -1 when
 * the array does not follow part dimension i). */
typedef int (*RtOwnerFn)(const Exec *x, const int *g);

/* Partition the iteration space (args[0]) along x->kd[0..np) into x->nb blocks, balanced,
 * owners by fn; reuses the current partition when the same plan made it. */
int rt_partition_iter(Exec *x, int np, RtOwnerFn fn);
/* The partition of array a aligned with the iteration space (same boundaries along dims
 * mapped by key_dim to partitioned key dimensions), owners by fn. */
int rt_aligned_part(Exec *x, OrnDsmArray *a, const int *key_dim, int np, RtOwnerFn fn,
                    OrnDsmPart *out);
/* Repartition every non-iteration argument for its role in this run (x->views[k].role):
 * PARTITIONED aligned (fn), REPLICATED everywhere; ROTATED arrays are left to the schedule. */
int rt_partition_args(Exec *x, int np, RtOwnerFn fn);
/* Before the schedule's setup: read-only rotated arrays small enough to copy are
 * replicated for this run instead (x->views[k].role; the cost model is in layout.c). */
void rt_choose_rotated(Exec *x);
/* Whether plan array pa has a dimension indexed by loop key `key`. */
static inline int rt_tied(const OrnRtPlanArray *pa, int key)
{
    for (int d = 0; d < pa->ndim; d++)
        if (pa->key_dim[d] == key) return 1;
    return 0;
}
/* Which side of a 2d loop rotates (layout.c): may point x->plan at a copy with the sides
 * swapped (x->own_plan). Before the views are made. */
void rt_choose_orientation(Exec *x);
/* A unimodular plan over a dense space: its transformed order is there to let several
 * ranks' blocks run at once, but the transformed copy reads every neighbour through the
 * slow path (9-point Gauss-Seidel at 2048^2: 1.03 s a sweep at one rank, 0.85 s at two; C
 * 12 ms). The loop's own key order (the order its result must equal) is as legal, and runs
 * on the iteration space in place, on the fast paths, at rank 0 (serial: 8.4 ms). Points
 * x->plan at a serial copy (x->own_plan); sparse spaces, and $ORN_UNIMODULAR set at two
 * ranks or more, keep the plan. */
void rt_choose_unskewed(Exec *x);
/* One tile held by every rank / by `rank`. */
int rt_single_part(const OrnDsmArray *a, int owner, OrnDsmPart *out);
/* The tile of array k aligned with iteration tile t. */
int64_t rt_aligned_tile(Exec *x, int k, int64_t t);
/* Repartition (a no-op when equal), counted in the loop's statistics. */
int rt_repartition(Exec *x, OrnDsmArray *a, const OrnDsmPart *p);
/* Blocks per partitioned dimension i for this run. */
int rt_blocks(Exec *x, int i);
/* Blocks along partitioned key i before sub-blocking: the plan's count, else
 * blocks_per_rank x P (1 for a 1d loop at one rank unless set explicitly). */
int rt_default_blocks(const Exec *x, int i);
uint64_t rt_plan_sig(const Exec *x, uint64_t salt);

/* ---------------------------------------------------------------- halo.c */

/* Collective, after the schedule's setup: ghost cells of read-only partitioned and rotated
 * arrays in 1d and 2d loops, exchanged once. Sets x->remote_reads when some read-only array
 * may be read beyond them (sparse, or ORN_RT_HALO_ANY). */
int rt_halo_setup(Exec *x);
/* Point view v of array k at box + halo of its tile ta (*bound = 1), after waiting for the
 * ghost regions still arriving; *bound = 0 when box + halo is just the tile. */
int rt_halo_bind(Exec *x, int k, int64_t ta, OrnRtView *v, int *bound);
/* After the last step: every ghost transfer, sent or received, is complete. */
int rt_halo_drain(Exec *x);
void rt_halo_free(Exec *x);

/* ---------------------------------------------------------------- ghost.c */

/* Bands (blocks along k0) of a 2d_ordered loop whose ghost rows can travel (then P column
 * blocks), from the plan and the sizes; 0 when they cannot. */
int rt_ghost_bands(const Exec *x);
/* $ORN_GHOST=off: travelling rows (and the in-place wavefronts) off, for comparisons. */
int rt_ghost_off(void);
/* The wavefront's setup, after partitioning: x->ghost when the rows travel (tiles padded,
 * the start's rows in flight), else nothing. */
int rt_ghost_setup(Exec *x);
/* bind(): view k over tile ta and its padding rows; 0 when k's rows do not travel. */
int rt_ghost_bind(Exec *x, int k, int64_t ta, OrnRtView *v);
/* The slow path of a ghost view: key (store coordinates) from the bound block's band, its
 * tiles and padding rows, into out; 0 when it is not there. */
int rt_ghost_read(ViewImpl *vi, const int64_t *key, void *out);
/* After step s: this rank's blocks' last rows sent on, the peers' posted; before step s
 * (and at the end): those in flight are in. */
int rt_ghost_step_end(Exec *x, int64_t s);
/* The same for sched_skew.c: the parts of the band's last rows in the block (y1 bounds Y). */
int rt_ghost_skew_step_end(Exec *x, int64_t s, const int64_t *Y, int64_t c);
/* sched_skew.c: after this rank's block (s, t), its part of band s's last rows to band
 * s + 1 at once (rt_ghost_skew_step_end then only posts the receives); before a block of
 * tile `tile`, the rows in flight into that tile's padding. */
int rt_ghost_skew_block_end(Exec *x, int64_t s, int64_t t, const int64_t *Y, int64_t c);
int rt_ghost_arrive_tile(Exec *x, int64_t tile);
int rt_ghost_arrive(Exec *x, int64_t s);
void rt_ghost_free(Exec *x);

/* ---------------------------------------------------------------- blocking.c */

/* L2 size per core: $ORN_CACHE_BYTES, sysconf, sysfs, else 1 MiB. */
int64_t rt_cache_size(void);
/* Before partitioning (1d: np = 1, 2d: np = 2): choose sub-blocks (x->sub, x->split_dim,
 * x->nsplit) from the arrays' sizes and the cache, or from $ORN_SUBBLOCK. */
void rt_choose_blocking(Exec *x, int np);
/* Collective, before the schedule's setup: prefetched dense arrays small enough are copied
 * whole to every rank (one allgather per loop) and served from the copy on the fast path;
 * sets x->prefetch_needed when some prefetched or remote array is not. */
int rt_replicate_prefetched(Exec *x);
/* The end of the loop's setup: the copies' tiles from other ranks are in. */
int rt_replica_ready(Exec *x);
void rt_replica_bind(Exec *x, int k, OrnRtView *v);
/* The held tiles of view k's array from its copy: a buffer's target at the end of a
 * loop in which only the copies took its deltas (buffer.c). */
void rt_replica_writeback(Exec *x, int k);
void rt_replica_free(Exec *x);
/* ---------------------------------------------------------------- window.c */

/* After rt_halo_setup: windows of prefetched / remote views, x->skip_prefetch. */
void rt_window_setup(Exec *x);
/* bind(): give view k its window's box; 0 when it has none. */
int rt_window_bind(Exec *x, int k, OrnRtView *v);
/* op_prefetch, key outside the view's box: record it; 0 when the view does not take it. */
int rt_window_announce(ViewImpl *vi, const int64_t *key);
/* Whether this round's prefetch pass can announce anything. */
int rt_window_pass_needed(Exec *x);
/* Start of the exchange: per view, a copy over the announced rows (its remote tiles' rows
 * listed for the fetch as ranges) or the announced keys into the prefetch cache. */
void rt_window_plan(Exec *x);
/* The ranges the view's copy still needs (n of them, NULL when none), valid until
 * rt_window_fill. */
const OrnDsmRun *rt_window_ranges(ViewImpl *vi, int64_t *n);
/* After the fetch of those ranges: the copy complete (under $ORN_WINDOW_CHECK=1 compared
 * with the copy kept from an earlier run that it would have reused: a difference fails). */
int rt_window_fill(Exec *x, int k);
/* Collective, at the loop's start (in place of the barrier before remote reads): every
 * rank's generations of the arrays whose whole copies may be kept between runs; copies
 * kept from an earlier run whose arrays are at the same generations on every rank serve
 * again without a fetch. */
int rt_window_agree(Exec *x);
/* After buffer flushes: drop copies of arrays a buffer updates. */
void rt_window_flushed(Exec *x);
void rt_window_free(Exec *x);

/* exec.c: pieces shared by the schedules */
/* rt_partition_iter, then rt_partition_args with the same owners. */
int rt_partition_all(Exec *x, int np, RtOwnerFn fn);
/* step_begin / step_end of schedules with nothing to do around a step. */
int rt_step_noop(Exec *x, int64_t s);
/* finish of schedules that leave the data where it is. */
int rt_finish_noop(Exec *x);
/* Work: every iteration tile that `rank` owns, whole. */
void rt_work_owned(Exec *x, int rank, WorkList *out);
/* Work: the blocks (b0, b1) of anti-diagonal b0 + b1 = s whose rows b0 are dealt to `rank`
 * cyclically (b0 = rank, rank + P, ...), whole. */
void rt_work_wavefront(Exec *x, int64_t s, int rank, WorkList *out);

/* loop_progress.c: the loop on the progress line when this rank shows one (x->pr; every
 * call does nothing otherwise): begin (after the plan is valid), total (after the
 * schedule's setup: this rank's work over all steps), update (extra: elements of the
 * current block done beyond x->pr_done), end (always, once begun). */
void rt_progress_begin(Exec *x);
void rt_progress_total(Exec *x);
void rt_progress_update(Exec *x, int64_t extra);
void rt_progress_end(Exec *x);
static inline void rt_progress_tick(Exec *x, int64_t extra)
{
    if (x->pr) rt_progress_update(x, extra);
}

/* exec.c */
int rt_fail(Exec *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* rt_fail with a source excerpt after the message (orn_dsm_fail_lines) */
int rt_fail_lines(Exec *x, int code, const char *lines, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An array role's name, for messages ("partitioned", "prefetched", ...). */
const char *rt_role_name(int r);
/* The slow paths of a body's views (view_slow.c): what exec.c binds every view to. */
extern const OrnRtViewOps rt_view_ops;
double rt_now(void);

/* A timed part of a loop: its seconds go to a statistic (stat, may be NULL) and, with the
 * timeline on, it is a span (dsm/timeline.h). Boundaries of blocks, rounds and steps only:
 * never inside bodies. */
typedef struct RtSpan {
    double t0, sync0;
    int64_t id;
} RtSpan;
static inline RtSpan rt_span_begin(const Exec *x, OrnTlKind kind, const char *name)
{
    RtSpan s = {rt_now(), 0, orn_tl_begin(x->tl, kind, name)};
    return s;
}
static inline void rt_span_end(const Exec *x, RtSpan s, double *stat)
{
    if (stat) *stat += rt_now() - s.t0;
    orn_tl_end(x->tl, s.id);
}
/* A part of a loop that exchanges data through collectives: a phase on the timeline (the
 * collectives' waits and transfers show inside it; name NULL: no span); its seconds go to
 * *stat, except those its collectives spent waiting for every rank to arrive, which are
 * waiting (stats.wait). */
RtSpan rt_xfer_begin(const Exec *x, const char *name);
void rt_xfer_end(Exec *x, RtSpan s, double *stat);
/* Collective: a barrier, counted as waiting. */
int rt_barrier(Exec *x);

#endif
