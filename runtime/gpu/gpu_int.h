/* gpu_int.h: private to the GPU path (gpu.c: mode, devices, the driver of a block's
 * launches; gpu_data.c: the block's data on the device and back). */
#ifndef ORN_GPU_INT_H
#define ORN_GPU_INT_H

#include "rt_gpu.h"
#include "rt_int.h"

typedef enum { GPU_MODE_CPU, GPU_MODE_EMULATE, GPU_MODE_DEVICE } GpuMode;

typedef struct GpuState {
    GpuMode mode;
    const OrnGpuOps *ops;
    int sms;
    int tiles_hint;
    int steps_only;   /* $ORN_GPU_PIPELINE=0: 2-D wavefronts of warps keep the barrier steps */
    int profile;      /* $ORN_GPU_PROFILE=1: a band pipeline's profile per run (stderr) */
    int rowcache;     /* warp kernels' row cache (OrnGpuArgs.rowcache): $ORN_GPU_ROWCACHE != 0 */
    int broken;       /* $ORN_GPU_TEST_BROKEN: a wrong 2-D schedule (gpu_sched_2d.c) */
    int broken_res;   /* $ORN_GPU_TEST_BROKEN=stale: written arrays keep their other copies */
    uint64_t shuffle; /* emulation: the shuffle's state (seeded by $ORN_GPU_SEED) */
    OrnGpuWarp *warp; /* emulation: the lanes of warp kernels (gpu_emu.c) */
    int said_cpu;     /* a block ran on the CPU path: said once */
    /* buffer-update log records a block of loop id may need (the most seen), by loop id */
    int64_t *caplog;
    int ncaplog;
    /* device memory that outlives a block (gpu_res.c) */
    struct GpuRes *res;
    int nres, capres;
    size_t res_bytes, res_limit;
    uint64_t res_stamp; /* blocks run so far: an entry's last use */
    int res_check;      /* $ORN_GPU_CHECK: compare every resident copy used with the host */
    /* bytes copied to the device, from it, and used where they were; kernel launches,
     * host-device synchronizations (copies back, each waiting for the device) and barriers
     * between steps on the device (the loop's stats) */
    int64_t st_in, st_out, st_resident;
    int64_t st_launch, st_sync, st_barrier;
} GpuState;

/* A copy from the device: the host waits for what the device was given before (a
 * synchronization, counted). 0, or -1 when it failed. */
static inline int gpu_get(GpuState *g, void *dst, const void *src, size_t n)
{
    g->st_sync++;
    return g->ops->get(dst, src, n);
}

/* The emulation's warp (gpu_emu.c): lane orders from seed; nosync: __syncwarp does nothing
 * (ORN_GPU_TEST_BROKEN=lanes). NULL out of memory. Its lanes' stacks are made at its first
 * warp launch. */
OrnGpuWarp *orn_gpu_emu_new(uint64_t seed, int nosync);
void orn_gpu_emu_free(OrnGpuWarp *w);

/* ---------------------------------------------------------------- residency (gpu_res.c) */

enum { GPU_RES_TAG = 16 };
void gpu_res_init(GpuState *g);
void gpu_res_free(GpuState *g);
/* A new block: entries it uses are safe from eviction until the next. */
void gpu_res_begin(GpuState *g);
/* Device memory holding host[0, bytes) of arr's storage as of arr's generation: the resident
 * copy, or a new one uploaded. The copy is found again by its host address, or with tag (not
 * NULL) by the tag: bytes that live elsewhere each time but hold the same part of the array
 * (a whole copy made for a loop). NULL out of memory, or with *stale set when $ORN_GPU_CHECK
 * found the resident copy different from the host (said). */
void *gpu_res_copy(GpuState *g, const OrnDsmArray *arr, const void *host, size_t bytes,
                   const int64_t *tag, int *stale);
/* Device memory for data derived from arr (keys, schedules, row offsets) that tag
 * identifies: when it holds them as of arr's generation, *valid is set (and *aux, if aux, is
 * the host data stored with it); otherwise, with bytes 0, NULL; else bytes of memory that the
 * caller fills, giving the entry *aux (an OrnGpuSched, or NULL; not taken when NULL is
 * returned), and marks filled with gpu_res_filled. NULL out of memory. */
void *gpu_res_derived(GpuState *g, const OrnDsmArray *arr, const int64_t *tag, size_t bytes,
                      void **aux, int *valid);
void gpu_res_filled(GpuState *g, const void *dev, const OrnDsmArray *arr);
/* Scratch device memory of at least bytes, slot reused by every block. NULL out of memory. */
void *gpu_res_scratch(GpuState *g, int slot, size_t bytes);
/* The block wrote the copy at dev and host[0, bytes) of arr now equals it (copied back):
 * other copies of arr overlapping those bytes, and tagged copies of arr, are stale. */
void gpu_res_wrote(GpuState *g, const OrnDsmArray *arr, const void *host, size_t bytes,
                   const void *dev);
/* The copy at dev no longer equals the host's (a block wrote it and did not finish). */
void gpu_res_forget(GpuState *g, const void *dev);

/* Scratch slots of a block's device memory (gpu_res_scratch). */
enum {
    GPU_SLOT_ARGS,
    GPU_SLOT_FLAGS,
    GPU_SLOT_LOG,
    GPU_SLOT_EMPTY,
    GPU_SLOT_ACC1,                          /* the accumulators' slots (OrnGpuArgs.acc1) */
    GPU_SLOT_PROG,                          /* the row bands' counters (OrnGpuArgs.prog) */
    GPU_SLOT_PROF,                          /* the pipeline's profile (OrnGpuArgs.prof) */
    GPU_SLOT_BOX = 16,                      /* + plan array: a box not in the array's storage */
    GPU_SLOT_EXT = 16 + ORN_GPU_MAXARR,     /* + plan array: box + halo, assembled */
    GPU_SLOT_VALS = 16 + 2 * ORN_GPU_MAXARR /* a block's values not in the array's storage */
};

/* A block's data on the device (gpu_data.c): each plan array's box, extended by its halo
 * where the view does not cover it (a private host copy: the view's box, the rest read
 * through the view's slow path), and the CSR rows of 2-D sparse arrays. */
typedef struct GpuData {
    int64_t span[ORN_GPU_MAXARR]; /* elements of each device box (0: none) */
    char *ext[ORN_GPU_MAXARR];    /* host copy of an extended box, or NULL */
    int64_t elo[ORN_GPU_MAXARR][ORN_GPU_MAXKEY], en[ORN_GPU_MAXARR][ORN_GPU_MAXKEY];
    OrnDsmArray *store[ORN_GPU_MAXARR]; /* where each plan array's values live */
    int stale;                          /* $ORN_GPU_CHECK found a stale resident copy */
} GpuData;

/* The array whose storage view v shows, and whether host[0, bytes) lies in the storage of
 * the tile bound (then a resident copy of it stays valid at the array's generation). */
OrnDsmArray *orn_gpu_view_store(const OrnRtView *v, const void *host, size_t bytes, int *own);

/* Fill a->box, a->dims and a->view for block b (rows: the arrays whose CSR rows the body
 * walks, OrnGpuKernel.rows); 0, or -1 out of memory (or gd->stale). */
int orn_gpu_data_in(GpuState *g, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuDims *dims,
                    uint32_t rows, OrnGpuArgs *a, GpuData *gd);
/* Whether block b's values are the storage of the iteration space's view, which the device
 * then holds as its box (a dense space bound in place): its values are addressed there. */
int orn_gpu_vals_in_box(const OrnRtBlock *b, const GpuData *gd);
/* Copy what the loop wrote back into the views; 0, or -1 when a copy failed. */
int orn_gpu_data_out(GpuState *g, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuArgs *a,
                     const GpuData *gd);
/* The block did not finish: forget the device copies it may have written. */
void orn_gpu_data_forget(GpuState *g, const OrnRtPlan *plan, const OrnGpuArgs *a);
void orn_gpu_data_free(GpuData *gd);
/* Apply the n update records of a block (host memory) in element order, each element's in
 * its order, as the CPU body makes them: buffers through its buffer calls, accumulators into
 * the block's partials. 0, or -1 (out of memory, or records that do not fit the block: an
 * internal error). acc1 (or NULL): the slots of the first nacc accumulators' first update
 * per element (OrnGpuArgs.acc1, copied back), each applied before the element's records. */
int orn_gpu_log_apply(const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuRec *rec, int64_t n,
                      int64_t nelem, const unsigned char *acc1, int nacc);

#endif
