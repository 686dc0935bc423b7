/* gpu.c: the host side of @gpu loops (orn_gpu.h, rt_gpu.h): the mode, device selection,
 * the launches of a block's schedule steps, accumulator reduction, and the fallback to the
 * CPU body (gpu_data.c has the block's data on the device and back).
 *
 * A block runs as: its keys and schedule (gpu_sched_*.c), its data in (gpu_data.c), one
 * launch per step, then the error flag and the buffer-update count come back. Nothing of the
 * host's arrays has changed yet, so
 *   - a block whose launches flagged something the device cannot do (an access outside the
 *     boxes it holds, a row it does not hold, a run-time error such as randint(0)) is run
 *     again by the CPU body, which serves the access or reports the error with its line
 *     (said once per run);
 *   - a block whose buffer updates overflowed the log runs again with a log that large
 *     (remembered per loop).
 * Otherwise what the loop wrote comes back, and the buffer and accumulator updates the device
 * recorded are applied in element order, as the CPU body makes them. Emulation
 * uses the same path with host memory as the "device", so a missing copy gives a wrong
 * result there too. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_int.h"

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
static int emu_zero(void *dst, size_t n)
{
    if (n) memset(dst, 0, n);
    return 0;
}
static const OrnGpuOps emu_ops = {emu_count, emu_select, emu_sms,  emu_alloc, emu_release,
                                  emu_copy,  emu_copy,   emu_zero, NULL,      NULL};

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
    GpuState *g = state;
    if (g) {
        gpu_res_free(g);
        free(g->caplog);
        orn_gpu_emu_free(g->warp);
    }
    free(g);
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
    const char *pipe = getenv("ORN_GPU_PIPELINE");
    g->steps_only = pipe && strcmp(pipe, "0") == 0;
    const char *prof = getenv("ORN_GPU_PROFILE");
    g->profile = prof && *prof && strcmp(prof, "0") != 0;
    const char *rc = getenv("ORN_GPU_ROWCACHE");
    g->rowcache = !rc || strcmp(rc, "0") != 0;    /* kernels built with --gpu-rowcache only */
    int lanes = b && strcmp(b, "lanes") == 0;     /* the warps' barriers dropped, not the tiles' */
    g->broken_res = b && strcmp(b, "stale") == 0; /* copies not invalidated (gpu_res.c) */
    g->broken = b && *b && strcmp(b, "0") != 0 && !lanes && !g->broken_res;
    g->shuffle = (seed && *seed ? strtoull(seed, NULL, 0) : 0x5eedULL) * 0x9e3779b97f4a7c15ULL + 1;
    int rank0 = orn_rt_rank(rt) == 0;
    if (m && strcmp(m, "off") == 0) {
        g->mode = GPU_MODE_CPU;
    } else if (m && strcmp(m, "emulate") == 0) {
        g->mode = GPU_MODE_EMULATE;
        g->ops = &emu_ops;
        g->warp = orn_gpu_emu_new(g->shuffle, lanes);
        if (!g->warp) {
            free(g);
            rt->gpu = NULL;
            return NULL;
        }
        if (rank0)
            fprintf(stderr, "orion: ORN_GPU=emulate: @gpu loops run their kernels on the host, "
                            "tiles and the lanes of warps in shuffled orders\n");
    } else {
        int n = k->dev ? k->dev->count() : 0;
        if (n <= 0) {
            g->mode = GPU_MODE_CPU;
            if (rank0)
                fprintf(stderr, "orion: no GPU found: @gpu loops run on the CPU "
                                "(ORN_GPU=emulate runs their kernels on the host)\n");
        } else {
            const char *d = getenv("ORN_GPU_DEVICE");
            int dev = d && *d ? atoi(d) : local_rank(rt) % n;
            if (k->dev->select(dev) != 0) {
                fprintf(stderr, "orion: rank %d: cannot use GPU %d; @gpu loops run on the CPU\n",
                        orn_rt_rank(rt), dev);
                g->mode = GPU_MODE_CPU;
            } else {
                g->mode = GPU_MODE_DEVICE;
                g->ops = k->dev;
            }
        }
    }
    g->sms = g->ops ? g->ops->sms() : 1;
    if (g->ops) gpu_res_init(g);
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
                  int lanes, int tiles_hint, int broken, OrnGpuSched *out)
{
    if ((plan->strategy == ORN_RT_2D || plan->strategy == ORN_RT_2D_ORDERED) && nkeys >= 2) {
        int S = tiles_hint > 0 ? tiles_hint : orn_gpu_sched_2d_tiles(n, sms, lanes);
        return orn_gpu_sched_2d(keys, n, nkeys, plan->part_dims[0], plan->part_dims[1], S, broken,
                                out);
    }
    if (plan->strategy == ORN_RT_1D && !plan->ordered)
        return orn_gpu_sched_1d(keys, n, nkeys, plan->part_dims[0], out);
    /* serial and unimodular plans: one tile, the block's elements in order */
    return orn_gpu_sched_2d(keys, n, nkeys, 0, nkeys > 1 ? 1 : 0, 1, 0, out);
}

/* ---------------------------------------------------------------- one block */

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The log capacity remembered for loop id (0: none yet). */
static int64_t *caplog_of(GpuState *g, int id)
{
    if (id < 0) return NULL;
    if (id >= g->ncaplog) {
        int n = id + 16;
        int64_t *c = realloc(g->caplog, sizeof *c * (size_t)n);
        if (!c) return NULL;
        memset(c + g->ncaplog, 0, sizeof *c * (size_t)(n - g->ncaplog));
        g->caplog = c;
        g->ncaplog = n;
    }
    return &g->caplog[id];
}

enum { RUN_OK = 0, RUN_FAIL = -1, RUN_CPU = 1, RUN_AGAIN = 2 };

/* The device's error flag, update count and step barrier of a block (one scratch slot,
 * zeroed by one copy before the launch). */
typedef struct GpuFlags {
    int err, pad;
    unsigned long long nlog;
    unsigned long long bar; /* the barrier between steps (OrnGpuArgs.bar) */
} GpuFlags;

/* Block b's keys and schedule on the device, derived from the iteration space (resident
 * while it does not change: the keys of a sparse space are its tiles'): one allocation of
 * keys (n x nk), order (n), start (ntiles + 1), tiles (ntiles), step_start (nsteps + 1).
 * *sched: the host's copy. */
static int64_t *keys_in(GpuState *g, const OrnRtBlock *b, const OrnRtPlan *plan,
                        const OrnGpuKernel *k, OrnDsmArray *it, OrnGpuSched **sched)
{
    int64_t n = b->count;
    int nk = b->ndim, valid = 0;
    int64_t tag[GPU_RES_TAG] = {2, plan->loop_id, b->block,  b->first,
                                n, g->tiles_hint, g->broken, g->sms};
    for (int d = 0; d < nk && d < 4; d++) {
        tag[8 + 2 * d] = b->lo[d];
        tag[9 + 2 * d] = b->hi[d];
    }
    void *aux = NULL;
    int64_t *dk = gpu_res_derived(g, it, tag, 0, &aux, &valid);
    if (valid) {
        *sched = aux;
        return dk;
    }
    OrnGpuSched *s = calloc(1, sizeof *s);
    int64_t *keys = malloc(sizeof *keys * (size_t)(n ? n : 1) * (size_t)nk);
    if (!s || !keys) goto fn_fail;
    for (int64_t i = 0; i < n; i++) {
        int64_t kk[ORN_RT_MAXDIM];
        orn_rt_block_key(b, b->first + i, kk);
        memcpy(keys + i * nk, kk, sizeof *keys * (size_t)nk);
    }
    if (orn_gpu_sched(plan, keys, n, nk, g->sms, k->lanes, g->tiles_hint, g->broken, s) != 0)
        goto fn_fail;
    for (int st = 0; st < s->nsteps; st++) {
        int64_t w = s->step_start[st + 1] - s->step_start[st];
        s->widest = w > s->widest ? w : s->widest;
    }
    size_t nkeys = (size_t)n * (size_t)nk, nt = (size_t)s->ntiles, ns = (size_t)s->nsteps;
    size_t words = nkeys + (size_t)n + (nt + 1) + nt + (ns + 1);
    aux = s;
    dk = gpu_res_derived(g, it, tag, sizeof *dk * words, &aux, &valid);
    if (!dk) goto fn_fail;
    s = NULL; /* the entry's now */
    OrnGpuSched *hs = aux;
    if (g->ops->put(dk, keys, sizeof *dk * nkeys) != 0 ||
        g->ops->put(dk + nkeys, hs->order, sizeof *dk * (size_t)n) != 0 ||
        g->ops->put(dk + nkeys + n, hs->start, sizeof *dk * (nt + 1)) != 0 ||
        g->ops->put(dk + nkeys + n + nt + 1, hs->tiles, sizeof *dk * nt) != 0 ||
        g->ops->put(dk + nkeys + n + 2 * nt + 1, hs->step_start, sizeof *dk * (ns + 1)) != 0)
        goto fn_fail;
    g->st_in += (int64_t)(sizeof *dk * words);
    gpu_res_filled(g, dk, it);
    free(keys);
    *sched = hs;
    return dk;
fn_fail:
    if (s) orn_gpu_sched_free(s);
    free(s);
    free(keys);
    return NULL;
}

/* $ORN_GPU_PROFILE: the band pipeline's profile of this launch (a.prof), one line on stderr:
 * the kernel's span, and where the workers' cycles went. 0, or -1 when the copy failed. */
static int print_profile(OrnRtCtx *rt, GpuState *g, const OrnRtPlan *plan, const OrnGpuArgs *a)
{
    unsigned long long q[ORN_GPU_PROF_N];
    if (gpu_get(g, q, a->prof, sizeof q) != 0) return -1;
    double total = (double)q[ORN_GPU_PROF_TOTAL], nw = (double)q[ORN_GPU_PROF_WORKERS];
    double span = q[ORN_GPU_PROF_END] > q[ORN_GPU_PROF_START]
                      ? (double)(q[ORN_GPU_PROF_END] - q[ORN_GPU_PROF_START]) * 1e-6
                      : 0.0;
    double pct[4];
    for (int k = 0; k < 4; k++) pct[k] = total > 0 ? 100.0 * (double)q[k] / total : 0.0;
    fprintf(
        stderr,
        "orion: gpu profile: rank %d: %s:%d: kernel %.3f ms, %" PRId64 " bands on %.0f "
        "workers; per worker %.0f cycles (longest %llu): waiting %.1f%%, tiles %.1f%%, "
        "publishing %.1f%%, other %.1f%%; tiles run %llu of %llu, iterations %llu; %.0f "
        "cycles per tile run, %.0f per iteration\n",
        orn_rt_rank(rt), plan->file, plan->line, span, a->bands, nw, nw > 0 ? total / nw : 0.0,
        q[ORN_GPU_PROF_MAXTOTAL], pct[ORN_GPU_PROF_WAIT], pct[ORN_GPU_PROF_TILE],
        pct[ORN_GPU_PROF_DONE], pct[ORN_GPU_PROF_OTHER], q[ORN_GPU_PROF_TILES],
        q[ORN_GPU_PROF_VISITS], q[ORN_GPU_PROF_ITERS],
        q[ORN_GPU_PROF_TILES] ? (double)q[ORN_GPU_PROF_TILE] / (double)q[ORN_GPU_PROF_TILES] : 0.0,
        q[ORN_GPU_PROF_ITERS] ? (double)q[ORN_GPU_PROF_TILE] / (double)q[ORN_GPU_PROF_ITERS] : 0.0);
    return 0;
}

/* One try at block b with a log of caplog records: RUN_OK, RUN_FAIL (reported), RUN_CPU
 * (the device flagged something: nothing changed on the host), RUN_AGAIN (*need records
 * wanted: nothing changed on the host). */
static int run_block(OrnRtCtx *rt, GpuState *g, const OrnRtBlock *b, const OrnRtPlan *plan,
                     const OrnGpuKernel *k, const OrnGpuDims *dims, const void *env, int64_t caplog,
                     int64_t *need)
{
    int64_t n = b->count;
    int nk = b->ndim, rc = RUN_FAIL, own = 0;
    GpuData gd;
    memset(&gd, 0, sizeof gd);
    OrnGpuArgs a;
    memset(&a, 0, sizeof a);
    OrnGpuSched *s = NULL;
    int64_t *host_tiles = NULL;
    OrnGpuRec *rec = NULL;
    unsigned char *acc1 = NULL;
    GpuFlags fl = {0, 0, 0, 0};
    gpu_res_begin(g);
    OrnDsmArray *it = orn_gpu_view_store(&b->views[0], NULL, 0, &own);
    if (!it) {
        orn_rt_body_error(rt, "@gpu loop at %s:%d: internal error: no iteration space", plan->file,
                          plan->line);
        return RUN_FAIL;
    }
    int64_t *dk = keys_in(g, b, plan, k, it, &s);
    if (!dk) goto fn_oom;
    a.keys = dk;
    a.order = dk + n * nk;
    a.start = a.order + n;
    a.tiles = a.start + s->ntiles + 1;
    a.step_start = a.tiles + s->ntiles;
    a.nsteps = s->nsteps;
    /* the pipeline of row bands: the device's warp kernels (a thread kernel's workers share
     * warps, whose lanes would wait on each other) */
    int piped = g->mode == GPU_MODE_DEVICE && k->lanes == 32 && s->bands > 0 && !g->steps_only;
    if (piped) {
        a.bands = s->bands;
        a.prog = gpu_res_scratch(g, GPU_SLOT_PROG, sizeof *a.prog * (size_t)s->bands);
        if (!a.prog) goto fn_oom;
        if (g->ops->zero(a.prog, sizeof *a.prog * (size_t)s->bands) != 0) goto fn_copy;
        if (g->profile) {
            unsigned long long z[ORN_GPU_PROF_N] = {0};
            z[ORN_GPU_PROF_START] = ~0ULL;
            a.prof = gpu_res_scratch(g, GPU_SLOT_PROF, sizeof z);
            if (!a.prof) goto fn_oom;
            if (g->ops->put(a.prof, z, sizeof z) != 0) goto fn_copy;
        }
    }
    a.nkeys = nk;
    a.rowcache = g->rowcache;
    a.seed = b->seed;
    a.stream = b->stream;
    a.caplog = caplog;
    GpuFlags *dfl = gpu_res_scratch(g, GPU_SLOT_FLAGS, sizeof fl);
    a.bar = &dfl->bar;
    a.log = gpu_res_scratch(g, GPU_SLOT_LOG, sizeof *a.log * (size_t)(caplog ? caplog : 1));
    if (!dfl || !a.log) goto fn_oom;
    if (g->ops->put(dfl, &fl, sizeof fl) != 0) goto fn_copy;
    a.err = &dfl->err;
    a.nlog = &dfl->nlog;
    /* the accumulators' first update per element in slots, zeroed (OrnGpuArgs.acc1) */
    int nacc = plan->naccs < 32 ? plan->naccs : 32;
    size_t nslot = (size_t)nacc * (size_t)n;
    if (nslot) {
        a.acc1 = gpu_res_scratch(g, GPU_SLOT_ACC1, nslot * 9);
        if (!a.acc1) goto fn_oom;
        a.acc1n = n;
        a.acc1k = nacc;
        if (g->ops->zero(a.acc1 + nslot * 8, nslot) != 0) goto fn_copy;
    }
    size_t vsize = b->views[0].esize;
    if (orn_gpu_data_in(g, b, plan, dims, k->rows, &a, &gd) != 0) goto fn_data;
    /* the values of a dense space live in its box when the host's do (gpu_data.c) */
    int vals_in_box = orn_gpu_vals_in_box(b, &gd);
    char *hvals = b->vals ? (char *)b->vals + b->first * (int64_t)vsize : NULL;
    if (hvals && !vals_in_box) {
        int stale = 0;
        orn_gpu_view_store(&b->views[0], hvals, vsize * (size_t)n, &own);
        if (own) {
            a.vals = gpu_res_copy(g, it, hvals, vsize * (size_t)n, NULL, &stale);
        } else if ((a.vals = gpu_res_scratch(g, GPU_SLOT_VALS, vsize * (size_t)n)) != NULL) {
            if (g->ops->put(a.vals, hvals, vsize * (size_t)n) != 0) goto fn_copy;
            g->st_in += (int64_t)(vsize * (size_t)n);
        }
        if (stale) goto fn_stale;
        if (!a.vals) goto fn_oom;
    }
    OrnGpuArgs *da = gpu_res_scratch(g, GPU_SLOT_ARGS, sizeof a);
    if (!da) goto fn_oom;
    if (g->ops->put(da, &a, sizeof a) != 0) goto fn_copy;
    /* the whole schedule in one launch; the emulation runs the steps in order, each step's
     * tiles in a seeded random order (Fisher-Yates), as the device's warps may take them */
    g->st_launch++;
    g->st_barrier += !piped && s->nsteps > 1 ? s->nsteps - 1 : 0;
    if (g->mode == GPU_MODE_DEVICE) {
        int grid = 0;
        if (k->run(da, piped ? s->bands : s->widest, env, &grid) != 0) {
            orn_rt_body_error(rt, "@gpu loop at %s:%d: the kernel launch failed", plan->file,
                              plan->line);
            goto fn_forget;
        }
    } else {
        host_tiles = malloc(sizeof *host_tiles * (size_t)(s->ntiles ? s->ntiles : 1));
        if (!host_tiles) goto fn_oom;
        for (int st = 0; st < s->nsteps; st++) {
            int64_t t0 = s->step_start[st], nt = s->step_start[st + 1] - t0;
            memcpy(host_tiles, s->tiles + t0, sizeof *host_tiles * (size_t)nt);
            for (int64_t i = nt - 1; i > 0; i--) {
                int64_t r = (int64_t)(next_rand(&g->shuffle) % (uint64_t)(i + 1));
                int64_t t = host_tiles[i];
                host_tiles[i] = host_tiles[r];
                host_tiles[r] = t;
            }
            if (nt && k->emulate(da, host_tiles, nt, env, g->warp) != 0) {
                orn_rt_body_error(rt,
                                  "@gpu loop at %s:%d: the emulated warp's lanes could not "
                                  "start",
                                  plan->file, plan->line);
                goto fn_forget;
            }
        }
    }
    /* while the kernels run, the rank's transfers move (rotated blocks for the next round,
     * replies to remote reads), as the CPU path progresses them between slices */
    while (g->ops->busy && g->ops->busy() > 0) {
        if (orn_dsm_progress(orn_rt_dsm(rt)) != ORN_OK) {
            orn_rt_body_error(rt, "%s", orn_dsm_error(orn_rt_dsm(rt)));
            goto fn_forget;
        }
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
    if (gpu_get(g, &fl, dfl, sizeof fl) != 0) goto fn_copy;
    if (a.prof && print_profile(rt, g, plan, &a) != 0) goto fn_copy;
    if (fl.err) {
        rc = RUN_CPU;
        goto fn_forget;
    }
    if ((int64_t)fl.nlog > caplog) {
        *need = (int64_t)fl.nlog;
        rc = RUN_AGAIN;
        goto fn_forget;
    }
    if (orn_gpu_data_out(g, b, plan, &a, &gd) != 0) goto fn_copy;
    if (a.vals && !plan->arrays[0].read_only) {
        if (gpu_get(g, hvals, a.vals, vsize * (size_t)n) != 0) goto fn_copy;
        g->st_out += (int64_t)(vsize * (size_t)n);
        gpu_res_wrote(g, it, hvals, vsize * (size_t)n, a.vals);
    }
    if (nslot) {
        acc1 = malloc(nslot * 9);
        if (!acc1) goto fn_oom;
        if (gpu_get(g, acc1, a.acc1, nslot * 9) != 0) goto fn_copy;
        g->st_out += (int64_t)(nslot * 9);
    }
    if (fl.nlog) {
        rec = malloc(sizeof *rec * (size_t)fl.nlog);
        if (!rec) goto fn_oom;
        if (gpu_get(g, rec, a.log, sizeof *rec * (size_t)fl.nlog) != 0) goto fn_copy;
        g->st_out += (int64_t)(sizeof *rec * (size_t)fl.nlog);
    }
    if (orn_gpu_log_apply(b, plan, rec, (int64_t)fl.nlog, n, acc1, nacc) != 0) {
        orn_rt_body_error(rt, "@gpu loop at %s:%d: internal error: bad update records", plan->file,
                          plan->line);
        goto fn_exit;
    }
    /* buffer updates (records only) changed their targets here: the device copies are stale */
    for (int j = 0; j < plan->narrays && fl.nlog; j++)
        if (plan->arrays[j].role == ORN_RT_BUFFERED && gd.store[j]) orn_dsm_touch(gd.store[j]);
    rc = RUN_OK;
    goto fn_exit;
fn_data:
    if (gd.stale) goto fn_stale;
    goto fn_oom;
fn_stale:
    orn_rt_body_error(rt, "@gpu loop at %s:%d: internal error: a stale resident copy", plan->file,
                      plan->line);
    goto fn_forget;
fn_copy:
    orn_rt_body_error(rt, "@gpu loop at %s:%d: a copy between host and GPU failed", plan->file,
                      plan->line);
    goto fn_forget;
fn_oom:
    orn_rt_body_error(rt, "@gpu loop at %s:%d: out of %s memory", plan->file, plan->line,
                      g->mode == GPU_MODE_DEVICE ? "GPU" : "host");
fn_forget:
    /* what the device wrote differs from the host now */
    orn_gpu_data_forget(g, plan, &a);
    if (a.vals && !plan->arrays[0].read_only) gpu_res_forget(g, a.vals);
fn_exit:
    orn_gpu_data_free(&gd);
    free(rec);
    free(acc1);
    free(host_tiles);
    return rc;
}

/* The arrays block b's CPU body may write (a buffer: its target) get a new generation. */
static void touch_written(const OrnRtBlock *b, const OrnRtPlan *plan)
{
    for (int j = 0; j < plan->narrays; j++) {
        int own = 0;
        OrnDsmArray *s = orn_gpu_view_store(&b->views[j], NULL, 0, &own);
        if (s && (!plan->arrays[j].read_only || plan->arrays[j].role == ORN_RT_BUFFERED))
            orn_dsm_touch(s);
    }
}

int orn_gpu_block(OrnRtCtx *rt, const OrnRtBlock *b, const OrnRtPlan *plan, const OrnGpuKernel *k,
                  const OrnGpuDims *dims, const void *env, orn_rt_body_fn cpu, void *cpu_env)
{
    GpuState *g = gpu_state(rt, k);
    if (!g) return orn_rt_body_error(rt, "out of memory");
    if (g->mode == GPU_MODE_CPU) {
        touch_written(b, plan);
        return cpu(rt, b, cpu_env);
    }
    if (b->count <= 0) return 0;
    if (plan->narrays > ORN_GPU_MAXARR || plan->naccs > ORN_GPU_MAXACC || b->ndim > ORN_GPU_MAXKEY)
        return orn_rt_body_error(rt, "@gpu loop at %s:%d: too many arrays for the GPU path",
                                 plan->file, plan->line);
    int64_t *cap = caplog_of(g, plan->loop_id);
    if (!cap) return orn_rt_body_error(rt, "out of memory");
    int logged = plan->naccs > 0; /* buffer and accumulator updates are recorded */
    for (int j = 0; j < plan->narrays; j++) logged |= plan->arrays[j].role == ORN_RT_BUFFERED;
    if (*cap == 0) *cap = logged ? 2 * b->count + 64 : 0;
    for (;;) {
        int64_t need = 0;
        int rc = run_block(rt, g, b, plan, k, dims, env, *cap, &need);
        rt->stats.gpu_in += g->st_in;
        rt->stats.gpu_out += g->st_out;
        rt->stats.gpu_resident += g->st_resident;
        rt->stats.gpu_launches += g->st_launch;
        rt->stats.gpu_syncs += g->st_sync;
        rt->stats.gpu_barriers += g->st_barrier;
        g->st_in = g->st_out = g->st_resident = 0;
        g->st_launch = g->st_sync = g->st_barrier = 0;
        if (rc == RUN_AGAIN) {
            *cap = need + need / 4;
            continue;
        }
        if (rc == RUN_CPU) {
            if (!g->said_cpu)
                fprintf(stderr,
                        "orion: rank %d: @gpu loop at %s:%d: a block ran on the CPU path (an "
                        "access or operation the GPU path cannot serve; said once)\n",
                        orn_rt_rank(rt), plan->file, plan->line);
            g->said_cpu = 1;
            touch_written(b, plan);
            return cpu(rt, b, cpu_env);
        }
        return rc == RUN_OK ? 0 : -1;
    }
}
