/* gpu.c: the host side of @gpu loops (orn_gpu.h, rt_gpu.h): the mode, device selection,
 * transfers, the launch of each schedule step, accumulator reduction.
 *
 * Transfers: per block, the element keys and values and each plan array's local box go to
 * device memory and what the loop writes comes back (the box's contiguous span: its rows
 * at their strides). Emulation uses the same path with host memory as the "device", so a
 * missing copy shows up as a wrong result there too. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_gpu.h"
#include "rt_int.h"

typedef enum { MODE_CPU, MODE_EMULATE, MODE_DEVICE } Mode;

typedef struct GpuState {
    Mode mode;
    const OrnGpuOps *ops;
    int sms;
    int tiles_hint;
    int broken;
    uint64_t shuffle; /* emulation: the shuffle's state (seeded by $ORN_GPU_SEED) */
} GpuState;

/* ---------------------------------------------------------------- emulation memory */

static int emu_count(void)
{
    return 1;
}
static int emu_select(int dev)
{
    (void)dev;
    return 0;
}
static int emu_sms(void)
{
    const char *s = getenv("ORN_GPU_SMS");
    int n = s && *s ? atoi(s) : 132; /* an H100 SXM */
    return n > 0 ? n : 1;
}
static void *emu_alloc(size_t n)
{
    return malloc(n ? n : 1);
}
static void emu_release(void *p)
{
    free(p);
}
static int emu_copy(void *dst, const void *src, size_t n)
{
    if (n) memcpy(dst, src, n);
    return 0;
}
static const OrnGpuOps emu_ops = {emu_count,   emu_select, emu_sms, emu_alloc,
                                  emu_release, emu_copy,   emu_copy};

/* ---------------------------------------------------------------- mode */

static int local_rank(const OrnRtCtx *rt)
{
    static const char *const vars[] = {"MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "SLURM_LOCALID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return orn_rt_rank(rt);
}

void orn_gpu_state_free(void *state)
{
    free(state);
}

static GpuState *gpu_state(OrnRtCtx *rt, const OrnGpuKernel *k)
{
    if (rt->gpu) return rt->gpu;
    GpuState *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    rt->gpu = g;
    const char *m = getenv("ORN_GPU");
    const char *t = getenv("ORN_GPU_TILES");
    const char *b = getenv("ORN_GPU_TEST_BROKEN");
    const char *seed = getenv("ORN_GPU_SEED");
    g->tiles_hint = t && *t ? atoi(t) : 0;
    g->broken = b && *b && strcmp(b, "0") != 0;
    g->shuffle = (seed && *seed ? strtoull(seed, NULL, 0) : 0x5eedULL) * 0x9e3779b97f4a7c15ULL + 1;
    int rank0 = orn_rt_rank(rt) == 0;
    if (m && strcmp(m, "off") == 0) {
        g->mode = MODE_CPU;
    } else if (m && strcmp(m, "emulate") == 0) {
        g->mode = MODE_EMULATE;
        g->ops = &emu_ops;
        if (rank0)
            fprintf(stderr, "orion: ORN_GPU=emulate: @gpu loops run their kernels on the host, "
                            "thread blocks in a shuffled order\n");
    } else {
        int n = k->dev ? k->dev->count() : 0;
        if (n <= 0) {
            g->mode = MODE_CPU;
            if (rank0)
                fprintf(stderr, "orion: no GPU found: @gpu loops run on the CPU "
                                "(ORN_GPU=emulate runs their kernels on the host)\n");
        } else {
            const char *d = getenv("ORN_GPU_DEVICE");
            int dev = d && *d ? atoi(d) : local_rank(rt) % n;
            if (k->dev->select(dev) != 0) {
                fprintf(stderr, "orion: rank %d: cannot use GPU %d; @gpu loops run on the CPU\n",
                        orn_rt_rank(rt), dev);
                g->mode = MODE_CPU;
            } else {
                g->mode = MODE_DEVICE;
                g->ops = k->dev;
            }
        }
    }
    g->sms = g->ops ? g->ops->sms() : 1;
    return g;
}

/* ---------------------------------------------------------------- schedules */

void orn_gpu_sched_free(OrnGpuSched *s)
{
    free(s->order);
    free(s->start);
    free(s->step_start);
    free(s->tiles);
    memset(s, 0, sizeof *s);
}

int orn_gpu_sched(const OrnRtPlan *plan, const int64_t *keys, int64_t n, int nkeys, int sms,
                  int tiles_hint, int broken, OrnGpuSched *out)
{
    if ((plan->strategy == ORN_RT_2D || plan->strategy == ORN_RT_2D_ORDERED) && nkeys >= 2) {
        int S = tiles_hint > 0 ? tiles_hint : orn_gpu_sched_2d_tiles(n, sms);
        return orn_gpu_sched_2d(keys, n, nkeys, plan->part_dims[0], plan->part_dims[1], S, broken,
                                out);
    }
    if (plan->strategy == ORN_RT_1D && !plan->ordered)
        return orn_gpu_sched_1d(keys, n, nkeys, plan->part_dims[0], out);
    /* serial and unimodular plans: one tile, the block's elements in order */
    return orn_gpu_sched_2d(keys, n, nkeys, 0, nkeys > 1 ? 1 : 0, 1, 0, out);
}

/* ---------------------------------------------------------------- one block */

typedef struct Dev {
    const OrnGpuOps *ops;
    void *p[ORN_GPU_MAXARR + ORN_GPU_MAXACC + 8];
    int n;
} Dev;

static void *dev_put(Dev *d, const void *src, size_t n)
{
    void *p = d->ops->alloc(n);
    if (!p) return NULL;
    d->p[d->n++] = p;
    if (src && d->ops->put(p, src, n) != 0) return NULL;
    return p;
}

/* Elements of a box's contiguous span (0 without a dense box). */
static int64_t box_span(const OrnRtBox *x, int nd)
{
    int64_t span = 1;
    for (int d = 0; d < nd; d++) {
        if (x->n[d] == 0) return 0;
        span += (int64_t)(x->n[d] - 1) * (d == nd - 1 ? 1 : x->s[d]);
    }
    return x->base ? span : 0;
}

static void combine(OrnRtScalar *acc, int kind, int type, const char *c, int64_t i)
{
    switch (type) {
    case ORN_RT_F64: {
        double v;
        memcpy(&v, c + i * 8, 8);
        acc->f64 = kind == ORN_RT_ACC_PROD ? acc->f64 * v : acc->f64 + v;
        return;
    }
    case ORN_RT_F32: {
        float v;
        memcpy(&v, c + i * 4, 4);
        acc->f32 = kind == ORN_RT_ACC_PROD ? acc->f32 * v : acc->f32 + v;
        return;
    }
    case ORN_RT_I64: {
        int64_t v;
        memcpy(&v, c + i * 8, 8);
        acc->i64 = (int64_t)(kind == ORN_RT_ACC_PROD ? (uint64_t)acc->i64 * (uint64_t)v
                                                     : (uint64_t)acc->i64 + (uint64_t)v);
        return;
    }
    default: {
        int32_t v;
        memcpy(&v, c + i * 4, 4);
        acc->i32 = (int32_t)(kind == ORN_RT_ACC_PROD ? (uint32_t)acc->i32 * (uint32_t)v
                                                     : (uint32_t)acc->i32 + (uint32_t)v);
        return;
    }
    }
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int orn_gpu_block(OrnRtCtx *rt, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuKernel *k,
                  const OrnGpuDims *dims, const void *env, orn_rt_body_fn cpu, void *cpu_env)
{
    GpuState *g = gpu_state(rt, k);
    if (!g) return orn_rt_body_error(rt, "out of memory");
    if (g->mode == MODE_CPU) return cpu(rt, b, cpu_env);
    int64_t n = b->count;
    if (n <= 0) return 0;
    int nk = b->ndim, rc = -1;
    if (plan->narrays > ORN_GPU_MAXARR || plan->naccs > ORN_GPU_MAXACC || nk > ORN_GPU_MAXKEY)
        return orn_rt_body_error(rt, "@gpu loop at %s:%d: too many arrays for the GPU path",
                                 plan->file, plan->line);
    Dev d = {.ops = g->ops};
    OrnGpuArgs a;
    memset(&a, 0, sizeof a);
    OrnGpuSched s;
    memset(&s, 0, sizeof s);
    int64_t *keys = malloc(sizeof *keys * (size_t)n * (size_t)nk);
    int64_t *host_tiles = NULL;
    char *contrib[ORN_GPU_MAXACC] = {NULL};
    int err = 0;
    if (!keys) goto fn_oom;
    for (int64_t i = 0; i < n; i++) {
        int64_t kk[ORN_RT_MAXDIM];
        orn_rt_block_key(b, b->first + i, kk);
        memcpy(keys + i * nk, kk, sizeof *keys * (size_t)nk);
    }
    if (orn_gpu_sched(plan, keys, n, nk, g->sms, g->tiles_hint, g->broken, &s) != 0) goto fn_oom;
    int *derr = dev_put(&d, &err, sizeof err);
    char *scratch = dev_put(&d, NULL, 64);
    a.keys = dev_put(&d, keys, sizeof *keys * (size_t)n * (size_t)nk);
    a.order = dev_put(&d, s.order, sizeof *s.order * (size_t)n);
    a.start = dev_put(&d, s.start, sizeof *s.start * (size_t)(s.ntiles + 1));
    int64_t *dtiles = dev_put(&d, s.tiles, sizeof *s.tiles * (size_t)(s.ntiles ? s.ntiles : 1));
    if (!derr || !scratch || !a.keys || !a.order || !a.start || !dtiles) goto fn_oom;
    size_t vsize = b->views[0].esize;
    if (b->vals) {
        a.vals = dev_put(&d, (const char *)b->vals + b->first * (int64_t)vsize, vsize * (size_t)n);
        if (!a.vals) goto fn_oom;
    }
    for (int i = 0; i < plan->naccs; i++) {
        a.contrib[i] = dev_put(&d, NULL, k->acc_size[i] * (size_t)n);
        contrib[i] = malloc(k->acc_size[i] * (size_t)n);
        if (!a.contrib[i] || !contrib[i]) goto fn_oom;
    }
    int64_t span[ORN_GPU_MAXARR] = {0};
    for (int j = 0; j < plan->narrays; j++) {
        OrnRtView *v = &b->views[j];
        OrnRtBox x = orn_rt_box(v);
        OrnGpuBox *gb = &a.box[j];
        int nd = v->ndim > 0 ? v->ndim : 1;
        span[j] = plan->arrays[j].role == ORN_RT_BUFFERED ? 0 : box_span(&x, nd);
        for (int q = 0; q < ORN_GPU_MAXKEY; q++) {
            gb->lo[q] = x.lo[q];
            gb->n[q] = span[j] ? x.n[q] : 0;
            gb->s[q] = x.s[q];
        }
        gb->esize = v->esize;
        gb->err = derr;
        gb->scratch = scratch;
        a.dims[j] = dims[j];
        if (span[j]) {
            gb->base = dev_put(&d, x.base, v->esize * (size_t)span[j]);
            if (!gb->base) goto fn_oom;
        }
    }
    if (g->mode == MODE_EMULATE) {
        host_tiles = malloc(sizeof *host_tiles * (size_t)(s.ntiles ? s.ntiles : 1));
        if (!host_tiles) goto fn_oom;
    }
    for (int st = 0; st < s.nsteps; st++) {
        int64_t t0 = s.step_start[st], nt = s.step_start[st + 1] - t0;
        if (nt == 0) continue;
        a.tiles = dtiles + t0;
        a.ntiles = nt;
        if (host_tiles) {
            /* the step's thread blocks in a seeded random order (Fisher-Yates) */
            memcpy(host_tiles, s.tiles + t0, sizeof *host_tiles * (size_t)nt);
            for (int64_t i = nt - 1; i > 0; i--) {
                int64_t r = (int64_t)(next_rand(&g->shuffle) % (uint64_t)(i + 1));
                int64_t t = host_tiles[i];
                host_tiles[i] = host_tiles[r];
                host_tiles[r] = t;
            }
            a.host_tiles = host_tiles;
        }
        if (k->launch(&a, env, g->mode == MODE_EMULATE) != 0) {
            orn_rt_body_error(rt, "@gpu loop at %s:%d: the kernel launch failed", plan->file,
                              plan->line);
            goto fn_exit;
        }
    }
    if (g->ops->get(&err, derr, sizeof err) != 0) goto fn_copy;
    if (err) {
        orn_rt_body_error(rt,
                          "@gpu loop at %s:%d: an access outside this rank's part of an array "
                          "(an index out of range, or one the GPU path cannot serve)",
                          plan->file, plan->line);
        goto fn_exit;
    }
    for (int j = 0; j < plan->narrays; j++) {
        const OrnRtPlanArray *pa = &plan->arrays[j];
        if (!span[j] || pa->read_only || pa->role == ORN_RT_REPLICATED ||
            pa->role == ORN_RT_PREFETCHED)
            continue;
        if (g->ops->get(b->views[j].base, a.box[j].base, b->views[j].esize * (size_t)span[j]) != 0)
            goto fn_copy;
    }
    if (b->vals && !plan->arrays[0].read_only &&
        g->ops->get((char *)b->vals + b->first * (int64_t)vsize, a.vals, vsize * (size_t)n) != 0)
        goto fn_copy;
    for (int i = 0; i < plan->naccs; i++) {
        if (g->ops->get(contrib[i], a.contrib[i], k->acc_size[i] * (size_t)n) != 0) goto fn_copy;
        /* in element order, as the CPU body adds them */
        for (int64_t e = 0; e < n; e++)
            combine(&b->acc[i], plan->accs[i].kind, k->acc_kind[i], contrib[i], e);
    }
    rc = 0;
    goto fn_exit;
fn_copy:
    orn_rt_body_error(rt, "@gpu loop at %s:%d: a copy from the GPU failed", plan->file, plan->line);
    goto fn_exit;
fn_oom:
    orn_rt_body_error(rt, "@gpu loop at %s:%d: out of %s memory", plan->file, plan->line,
                      g->mode == MODE_DEVICE ? "GPU" : "host");
fn_exit:
    for (int i = 0; i < d.n; i++) d.ops->release(d.p[i]);
    for (int i = 0; i < ORN_GPU_MAXACC; i++) free(contrib[i]);
    free(host_tiles);
    free(keys);
    orn_gpu_sched_free(&s);
    return rc;
}
