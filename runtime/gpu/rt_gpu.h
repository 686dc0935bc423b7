/* rt_gpu.h: the host side of @gpu loops (orn_gpu.h has the model): what the host C of an
 * `orionc --gpu` program calls, and the GPU schedules inside a block (one file each,
 * cost model on top: gpu_sched_2d.c, gpu_sched_1d.c). */
#ifndef ORN_RT_GPU_H
#define ORN_RT_GPU_H

#include "orn_gpu.h"
#include "rt.h"

/* Run block b of a @gpu loop: with its kernels k (env: the body's outer scalars, dims: the
 * global extents of the plan's arrays), or through the CPU body `cpu` when the GPU path is
 * off (ORN_GPU=off, or no device and no emulation) or when the device flagged something it
 * cannot do in this block (said once). Returns the body's convention: 0, or non-zero after
 * orn_rt_body_error(). */
int orn_gpu_block(OrnRtCtx *rt, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuKernel *k,
                  const OrnGpuDims *dims, const void *env, orn_rt_body_fn cpu, void *cpu_env);

/* A schedule of one block's elements on the GPU: tiles of elements that run in order on
 * one thread (or one warp: orn_gpu.h), grouped in steps whose tiles run at once. */
typedef struct OrnGpuSched {
    int64_t ntiles;
    int64_t *order; /* n elements, grouped by tile */
    int64_t *start; /* ntiles + 1 */
    int nsteps;
    int64_t *step_start; /* nsteps + 1: step s runs tiles[step_start[s] .. step_start[s+1]) */
    int64_t *tiles;      /* ntiles, grouped by step */
    int64_t widest;      /* the most tiles of a step (the persistent kernel's grid) */
    /* > 0: the tiles are S x S bands, tile (I, J) = I S + J, each after (I - 1, J) and
     * (I, J - 1) (gpu_sched_2d.c): the device may run them as a pipeline of row bands
     * instead of steps (OrnGpuArgs.bands) */
    int64_t bands;
} OrnGpuSched;

/* The schedule of n elements (keys: nkeys each, runtime order) for plan, on a device with
 * sms multiprocessors, for a kernel of `lanes` threads per tile; tiles_hint > 0 overrides the cost
 * model's tile count per dimension
 * ($ORN_GPU_TILES). broken: the deliberately wrong 2-D schedule of the test that shows the
 * shuffled emulation catching it ($ORN_GPU_TEST_BROKEN). Returns 0, or -1 out of memory. */
int orn_gpu_sched(const OrnRtPlan *plan, const int64_t *keys, int64_t n, int nkeys, int sms,
                  int lanes, int tiles_hint, int broken, OrnGpuSched *out);
void orn_gpu_sched_free(OrnGpuSched *s);

/* The schedules (gpu_sched_2d.c, gpu_sched_1d.c); tile assignment and steps. */
int orn_gpu_sched_2d(const int64_t *keys, int64_t n, int nkeys, int d0, int d1, int S, int broken,
                     OrnGpuSched *out);
int orn_gpu_sched_1d(const int64_t *keys, int64_t n, int nkeys, int d0, OrnGpuSched *out);
/* The 2-D cost model: tiles per dimension for n elements on sms multiprocessors, tiles of
 * `lanes` threads. */
int orn_gpu_sched_2d_tiles(int64_t n, int sms, int lanes);

/* Free the GPU state of a runtime context (rt.c's finalize). */
void orn_gpu_state_free(void *state);

#endif
