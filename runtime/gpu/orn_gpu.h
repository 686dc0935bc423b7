/* orn_gpu.h: the GPU path of @gpu loops (docs/runtime.md, "GPU loop bodies").
 *
 * orionc --gpu compiles each @gpu loop body twice: into the host C as usual (the CPU
 * path), and into a CUDA file as a `__host__ __device__` element function with a kernel and
 * a launcher (codegen/cuda/emit_cuda.c). The runtime's schedules hand blocks to the body as
 * always (whole pieces of blocks, never slices: rt.h, OrnRtLoop.whole); the host C's body of
 * a @gpu loop calls orn_gpu_block(), which
 *   - picks the mode once per run: ORN_GPU=off (CPU path), ORN_GPU=emulate (the kernels run
 *     on the host), else the device when one is present (the CPU path otherwise, said once);
 *   - copies the block's element keys and values, each array's local box (with its halo
 *     where the view lacks it) and the rows of sparse arrays the body walks to device memory
 *     (in emulation: separate host memory behind the same copies);
 *   - splits the block into tiles with the loop's GPU schedule (gpu_sched_2d.c,
 *     gpu_sched_1d.c), grouped in steps: the tiles of one step share no key any iteration
 *     depends on, so they run at once;
 *   - runs the whole schedule in one launch of a persistent kernel: a grid the device holds
 *     at once (a cooperative launch) walks the steps, each warp (or thread) taking the
 *     step's tiles w, w + nw, ..., with a grid-wide barrier between steps on the device
 *     (orn_gpu_grid_sync), or, for a 2-D wavefront run by warps, each warp a row band's
 *     tiles in order, a tile starting when the band above has finished the tile above it
 *     (counters: OrnGpuArgs.bands): no host round trip inside a block; in emulation the
 *     steps run in order on the host, each step's tiles in a seeded shuffled order;
 *   - copies back what the loop writes and applies the buffer and accumulator updates the
 *     device recorded (OrnGpuRec) in element order (no float atomics): a call's buffer
 *     updates take effect at its end, its accumulator updates are the CPU body's;
 *   - runs the block on the CPU body instead when the device flagged something it cannot do
 *     (nothing on the host has changed by then).
 *
 * This header is plain C that nvcc also compiles: the generated .cu and the host C share
 * the argument block (OrnGpuArgs) and the kernel descriptor (OrnGpuKernel). */
#ifndef ORN_GPU_H
#define ORN_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { ORN_GPU_MAXARR = 16, ORN_GPU_MAXACC = 8, ORN_GPU_MAXKEY = 4 };

/* An array's local box in device memory (the layout of rt.h's OrnRtBox without its view,
 * plus where a kernel reports an access outside the box). */
typedef struct OrnGpuBox {
    char *base;
    int64_t lo[ORN_GPU_MAXKEY];
    uint64_t n[ORN_GPU_MAXKEY];
    int64_t s[ORN_GPU_MAXKEY];
    size_t esize;
    int *err;      /* device: set to 1 by an access outside the box */
    char *scratch; /* device: where such an access goes instead */
} OrnGpuBox;

/* An array's global extents (what views need: len = dims[':' dimension]). */
typedef struct OrnGpuDims {
    int64_t dims[ORN_GPU_MAXKEY];
} OrnGpuDims;

/* What a body reads of plan array k besides its box (V_[k] in generated code): the view's
 * key range, and for a 2-D sparse array its rows in CSR form -- rows [rlo, rlo + rn), row
 * r's elements at rowptr[r - rlo] .. rowptr[r - rlo + 1], columns clo + cols[e], values
 * rvals[e] (cols NULL: no rows on the device) -- as rt.h's OrnRtView has them. */
typedef struct OrnGpuView {
    int64_t lo[ORN_GPU_MAXKEY], hi[ORN_GPU_MAXKEY];
    const int64_t *rowptr;
    const int32_t *cols;
    const char *rvals;
    int64_t rlo, rn, clo;
    size_t esize;
    int *err; /* the block's error flag (OrnGpuArgs.err) */
} OrnGpuView;

/* One update made on the device, recorded instead of applied: element elem's seq-th update
 *   - of plan array arr >= 0 (a buffer: `dw[f] -= ...`) at key by delta d (the buffer's
 *     element type, bytes), or
 *   - of accumulator -1 - arr by operand d: a double for float accumulators, an int64_t for
 *     integer ones, already converted as the CPU body's `acc op e` converts e; for min and
 *     max key[0] is 1 when the accumulator is the second argument (`x = min(e, x)`).
 * The host applies the records after the launch, in element order and each element's in its
 * order, as the CPU body makes them (gpu_data.c): the same operations in the same order. */
typedef struct OrnGpuRec {
    int64_t elem;
    int32_t seq, arr;
    int64_t key[ORN_GPU_MAXKEY];
    unsigned char d[8];
} OrnGpuRec;

/* The arguments of a block's launches, in device memory (one copy per block; every pointer
 * is device memory). */
typedef struct OrnGpuArgs {
    OrnGpuBox box[ORN_GPU_MAXARR]; /* plan array k's local box */
    OrnGpuDims dims[ORN_GPU_MAXARR];
    OrnGpuView view[ORN_GPU_MAXARR];
    const int64_t *keys; /* element i's keys at keys[i * nkeys], runtime key order */
    int nkeys;
    char *vals;            /* element i's value */
    const int64_t *order;  /* elements grouped by tile */
    const int64_t *start;  /* tile t: order[start[t] .. start[t + 1]) */
    uint64_t seed, stream; /* the block's random streams (rt.h, orn_rng.h) */
    int *err;       /* set to 1 by whatever the device cannot do: the block then runs on the CPU */
    OrnGpuRec *log; /* buffer and accumulator updates: caplog records, *nlog used (or wanted) */
    unsigned long long *nlog;
    int64_t caplog;
    /* Each element's first update of accumulator i < acc1k, in slots instead of records:
     * its operand at acc1[(i acc1n + e) 8], and at acc1[acc1k acc1n 8 + i acc1n + e] 0 (no
     * update), 1 (an update) or 2 (the accumulator was min's or max's second argument);
     * zeroed before the launches. NULL: every update is a record. */
    unsigned char *acc1;
    int64_t acc1n;
    int acc1k;
    /* The schedule's steps (device memory, with keys and order): step s runs the tiles
     * tiles[step_start[s] .. step_start[s + 1]); the grid-wide barrier between steps counts
     * arrivals in *bar (zeroed before the launch: after step s every block has added s). */
    int nsteps;
    const int64_t *step_start;
    const int64_t *tiles;
    unsigned long long *bar;
    /* bands > 0 (a 2-D wavefront on a warp kernel): instead of the steps, worker w (a warp)
     * runs row bands w, w + nw, ..., each band I's tiles (I, 0 .. bands - 1) in order, tile
     * (I, J) when prog[I - 1] > J; after it, prog[I] = J + 1 (prog: bands counters, zeroed
     * before the launch). The same order as the steps, with no grid-wide barrier. */
    int64_t bands;
    unsigned long long *prog;
    /* $ORN_GPU_PROFILE (a band pipeline on the device): where the band workers' time goes,
     * summed over workers at prof[ORN_GPU_PROF_*] (zeroed before the launch, but
     * ORN_GPU_PROF_START at all ones); NULL: not measured. */
    unsigned long long *prof;
    int rowcache; /* warp kernels built with orionc --gpu-rowcache keep rows in their row
                   * cache (OrnGpuRowCache) unless $ORN_GPU_ROWCACHE=0 */
    int pad_;
} OrnGpuArgs;

/* The profile of a band pipeline's launch (OrnGpuArgs.prof). Lane 0 of each worker reads its
 * multiprocessor's cycle counter (clock64) around each part of its walk, so every cycle of
 * the walk falls in one part: WAIT for the band above, TILE (running a tile's iterations),
 * DONE (publishing the band's progress: fence and counter), OTHER (the walk's own loads and
 * branches). TOTAL sums the workers' walks, MAXTOTAL is the longest; TILES counts tiles run,
 * VISITS tiles visited (empty ones too), ITERS iterations, WORKERS the warps that walked a
 * band; START and END are the earliest start and latest end on the device's global
 * nanosecond timer (the kernel's span). */
enum {
    ORN_GPU_PROF_WAIT,
    ORN_GPU_PROF_TILE,
    ORN_GPU_PROF_DONE,
    ORN_GPU_PROF_OTHER,
    ORN_GPU_PROF_TOTAL,
    ORN_GPU_PROF_MAXTOTAL,
    ORN_GPU_PROF_TILES,
    ORN_GPU_PROF_VISITS,
    ORN_GPU_PROF_ITERS,
    ORN_GPU_PROF_WORKERS,
    ORN_GPU_PROF_START,
    ORN_GPU_PROF_END,
    ORN_GPU_PROF_N
};

/* Device memory and devices: the CUDA runtime in the generated .cu (orn_gpu_cuda_ops), or
 * host memory for the emulation (gpu.c). */
typedef struct OrnGpuOps {
    int (*count)(void); /* devices present */
    int (*select)(int dev);
    int (*sms)(void); /* multiprocessors of the selected device */
    void *(*alloc)(size_t n);
    void (*release)(void *p);
    int (*put)(void *dst, const void *src, size_t n); /* host to device */
    int (*get)(void *dst, const void *src, size_t n); /* device to host */
    int (*zero)(void *dst, size_t n);                 /* device memory to 0, before launches */
    size_t (*mem_free)(void);                         /* free device memory (bytes) */
    /* 1 while launched kernels still run, 0 when they are done (or failed: the next copy
     * out says so); NULL when launches return done (the emulation) */
    int (*busy)(void);
} OrnGpuOps;

/* Warps. A loop body with view work (element-wise view statements, dot, loop reductions)
 * runs a tile per warp: the 32 lanes run the same iteration, the body's scalar code on every
 * lane, the view loops split across the lanes, its shared writes made by lane 0, with
 * __syncwarp() between (codegen/cuda/cuda_warp.c). OrnGpuLane is what the body knows of its warp:
 * its lane, its row cache, and in the emulation the warp it belongs to (NULL on the
 * device). */
typedef struct OrnGpuWarp OrnGpuWarp;

/* The row cache of a warp kernel (codegen/cuda/cuda_rows.c, orn_gpu_vec_row): a body whose
 * every access to a 2-D array is the row view A[k, :] of one loop key k keeps that row in
 * the warp's shared memory while consecutive iterations of its tile have the same k (SGD
 * MF's H[i, :] along a tile of one item): the iteration reads and writes the copy, and the
 * row goes back to global memory (when the loop writes the array) when the key changes and
 * at the end of the tile, before the tile is published. Sound because a tile's rows of such
 * an array are the tile's alone while it runs (what the schedule guarantees for written
 * arrays) or never written (read-only ones). Each lane keeps its own tag (the row's address
 * in global memory, NULL: empty) and length, so that the lanes' decisions need no exchange;
 * the bytes are shared, with warp barriers around their copies. Rows over
 * ORN_GPU_RC_BYTES, or not contiguous, are not cached. */
enum { ORN_GPU_RC_BYTES = 2048, ORN_GPU_RC_SLOTS = 2 };
typedef struct OrnGpuRowCache {
    char *tag[32];
    uint32_t words[32];
    uint32_t buf[ORN_GPU_RC_BYTES / 4];
} OrnGpuRowCache;

typedef struct OrnGpuLane {
    OrnGpuWarp *warp;
    unsigned lane;
    OrnGpuRowCache *rc; /* the warp's row cache (ORN_GPU_RC_SLOTS of them), or NULL: none */
} OrnGpuLane;

/* A tile's iterations in order, as one lane of its warp (generated: orn_gpu_tile_N). */
typedef void (*OrnGpuTileFn)(const OrnGpuArgs *a, const void *env, int64_t tile, OrnGpuLane l);

/* The emulation of warps (ORN_GPU=emulate; gpu_emu.c): each tile runs as 32 fibers, one
 * per lane, of which one runs at a time; between two of the warp's sync points
 * (orn_gpu_emu_sync, orn_gpu_emu_shfl) each lane runs once, in an order shuffled by the
 * seed. Runs tiles[0 .. nt) one after another; 0, or -1 when the lanes' stacks could not
 * be made. */
int orn_gpu_emu_tiles(OrnGpuWarp *w, OrnGpuTileFn fn, const OrnGpuArgs *a, const void *env,
                      const int64_t *tiles, int64_t nt);
/* __syncwarp() of lane `lane`: it waits until every lane of the warp has reached a sync
 * point (a lane that returned counts as there). */
void orn_gpu_emu_sync(OrnGpuWarp *w, unsigned lane);
/* __shfl_xor_sync(full mask, v, mask) of lane `lane`: v of lane lane ^ mask, exchanged at a
 * sync point. */
uint64_t orn_gpu_emu_shfl(OrnGpuWarp *w, unsigned lane, uint64_t v, unsigned mask);

/* A @gpu loop's compiled kernels (generated .cu: orn_gpu_kernel_N). */
typedef struct OrnGpuKernel {
    int loop_id;
    int nkeys;
    int naccs;
    uint32_t rows; /* bit k: the body walks rows of plan array k (their CSR form goes along) */
    size_t env_size;
    int lanes; /* threads per tile: 32 (a warp, lanes across view elements) or 1 */
    /* The device: run the block's whole schedule (a: the arguments in device memory, with
     * its steps; widest: the most tiles of a step) in one launch of the persistent kernel,
     * whose grid is what the device holds at once, at most one warp (thread) per tile of the
     * widest step. Returns 0, or non-zero when the launch failed (said); *grid: the thread
     * blocks launched. */
    int (*run)(const OrnGpuArgs *a, int64_t widest, const void *env, int *grid);
    /* The emulation: the ntiles tiles of one step on the host, in the order of tiles (host
     * memory), warps through emu. Returns 0, or non-zero when the lanes could not start. */
    int (*emulate)(const OrnGpuArgs *a, const int64_t *tiles, int64_t ntiles, const void *env,
                   OrnGpuWarp *emu);
    const OrnGpuOps *dev; /* the CUDA runtime */
} OrnGpuKernel;

#ifdef __cplusplus
}
#endif

#endif
