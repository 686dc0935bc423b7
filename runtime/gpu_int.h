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
    int broken;
    uint64_t shuffle; /* emulation: the shuffle's state (seeded by $ORN_GPU_SEED) */
    OrnGpuWarp *warp; /* emulation: the lanes of warp kernels (gpu_emu.c) */
    int said_cpu;     /* a block ran on the CPU path: said once */
    /* buffer-update log records a block of loop id may need (the most seen), by loop id */
    int64_t *caplog;
    int ncaplog;
} GpuState;

/* The emulation's warp (gpu_emu.c): lane orders from seed; nosync: __syncwarp does nothing
 * (ORN_GPU_TEST_BROKEN=lanes). NULL out of memory. Its lane threads start at its first
 * warp launch. */
OrnGpuWarp *orn_gpu_emu_new(uint64_t seed, int nosync);
void orn_gpu_emu_free(OrnGpuWarp *w);

/* Device memory of one block's launches, released together. */
enum { GPU_MAXALLOC = 4 * ORN_GPU_MAXARR + ORN_GPU_MAXACC + 16 };
typedef struct GpuMem {
    const OrnGpuOps *ops;
    void *p[GPU_MAXALLOC];
    int n;
} GpuMem;

/* Allocate n bytes of device memory, filled from src when src is not NULL. */
void *orn_gpu_put(GpuMem *m, const void *src, size_t n);
void orn_gpu_mem_free(GpuMem *m);

/* A block's data on the device (gpu_data.c): each plan array's box, extended by its halo
 * where the view does not cover it (a private host copy: the view's box, the rest read
 * through the view's slow path), and the CSR rows of 2-D sparse arrays. */
typedef struct GpuData {
    int64_t span[ORN_GPU_MAXARR]; /* elements of each device box (0: none) */
    char *ext[ORN_GPU_MAXARR];    /* host copy of an extended box, or NULL */
    int64_t elo[ORN_GPU_MAXARR][ORN_GPU_MAXKEY], en[ORN_GPU_MAXARR][ORN_GPU_MAXKEY];
} GpuData;

/* Fill a->box, a->dims and a->view for block b (rows: the arrays whose CSR rows the body
 * walks, OrnGpuKernel.rows); 0, or -1 out of memory. */
int orn_gpu_data_in(GpuMem *m, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuDims *dims,
                    uint32_t rows, OrnGpuArgs *a, GpuData *gd);
/* Whether block b's values are the storage of the iteration space's view, which the device
 * then holds as its box (a dense space bound in place): its values are addressed there. */
int orn_gpu_vals_in_box(const OrnRtBlock *b, const GpuData *gd);
/* Copy what the loop wrote back into the views; 0, or -1 when a copy failed. */
int orn_gpu_data_out(const GpuMem *m, const OrnRtBlock *b, const OrnRtPlan *plan,
                     const OrnGpuArgs *a, const GpuData *gd);
void orn_gpu_data_free(GpuData *gd);
/* Apply the n update records of a block (host memory) in element order, each element's in
 * its order, as the CPU body makes them: buffers through its buffer calls, accumulators into
 * the block's partials. 0, or -1 (out of memory, or records that do not fit the block: an
 * internal error). */
int orn_gpu_log_apply(const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuRec *rec, int64_t n,
                      int64_t nelem);

#endif
