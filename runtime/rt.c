/* rt.c: the runtime context (settings, loop counters, trace, statistics), rand/randn
 * arrays, and the small hash map the caches and buffers use. */
#include "rt_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_gpu.h"

/* ---------------------------------------------------------------- map */

void rt_map_init(RtMap *m, size_t vsize)
{
    memset(m, 0, sizeof *m);
    m->vsize = vsize;
}

void rt_map_free(RtMap *m)
{
    free(m->keys);
    free(m->slot);
    for (int64_t c = 0; c < m->nchunks; c++) free(m->chunks[c]);
    free(m->chunks);
    memset(m, 0, sizeof *m);
}

void rt_map_clear(RtMap *m)
{
    if (m->n == 0) return;
    for (int64_t i = 0; i < m->cap; i++) m->keys[i] = -1;
    m->n = 0;
}

static uint64_t hash64(int64_t k)
{
    uint64_t z = (uint64_t)k * 0x9E3779B97F4A7C15ULL;
    return z ^ (z >> 29);
}

static char *map_val(const RtMap *m, int64_t i)
{
    return m->chunks[i / RT_MAP_CHUNK] + (size_t)(i % RT_MAP_CHUNK) * m->vsize;
}

void *rt_map_find(const RtMap *m, int64_t key)
{
    if (!m->cap) return NULL;
    uint64_t mask = (uint64_t)m->cap - 1;
    for (uint64_t i = hash64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) return map_val(m, m->slot[i]);
        if (m->keys[i] < 0) return NULL;
    }
}

static void map_place(RtMap *m, int64_t key, int64_t slot)
{
    uint64_t mask = (uint64_t)m->cap - 1;
    uint64_t i = hash64(key) & mask;
    while (m->keys[i] >= 0) i = (i + 1) & mask;
    m->keys[i] = key;
    m->slot[i] = slot;
}

static void map_grow(RtMap *m)
{
    int64_t oldcap = m->cap, *ok = m->keys, *os = m->slot;
    m->cap = oldcap ? 2 * oldcap : 64;
    m->keys = orn_xmalloc((size_t)m->cap * sizeof *m->keys);
    m->slot = orn_xmalloc((size_t)m->cap * sizeof *m->slot);
    for (int64_t i = 0; i < m->cap; i++) m->keys[i] = -1;
    for (int64_t i = 0; i < oldcap; i++)
        if (ok[i] >= 0) map_place(m, ok[i], os[i]);
    free(ok);
    free(os);
}

void *rt_map_insert(RtMap *m, int64_t key, int *created)
{
    void *v = rt_map_find(m, key);
    if (v) {
        *created = 0;
        return v;
    }
    if (2 * (m->n + 1) > m->cap) map_grow(m);
    int64_t idx = m->n++;
    if (idx / RT_MAP_CHUNK >= m->nchunks) {
        m->chunks = orn_xrealloc(m->chunks, (size_t)(m->nchunks + 1) * sizeof *m->chunks);
        m->chunks[m->nchunks++] = orn_xmalloc((size_t)RT_MAP_CHUNK * m->vsize);
    }
    map_place(m, key, idx);
    v = map_val(m, idx);
    memset(v, 0, m->vsize);
    *created = 1;
    return v;
}

/* ---------------------------------------------------------------- context */

static OrnRtCtx *ctx_new(OrnDsmCtx *dsm)
{
    OrnRtCtx *rt = orn_xcalloc(1, sizeof *rt);
    rt->dsm = dsm;
    rt->blocks_per_rank = 2;
    rt->slice = 4096;
    const char *env = getenv("ORN_BLOCKS_PER_RANK");
    if (env && *env) {
        int k = atoi(env);
        if (k >= 1 && k <= 1024) rt->blocks_per_rank = k, rt->blocks_explicit = 1;
    }
    rt->sub_mode = -1;
    rt->cache_bytes = rt_cache_size();
    rt->replicate_max = (int64_t)64 << 20;
    env = getenv("ORN_REPLICATE_MAX");
    if (env && *env) rt->replicate_max = atoll(env);
    rt->held_max = (int64_t)64 << 20;
    env = getenv("ORN_HELD_MAX");
    if (env && *env) rt->held_max = atoll(env);
    env = getenv("ORN_ROTATE");
    rt->rotate_planned = env && !strcmp(env, "planned");
    env = getenv("ORN_WINDOW_CHECK");
    rt->window_check = env && !strcmp(env, "1");
    rt->slices_bytes = (int64_t)48 << 10;
    env = getenv("ORN_FLUSH_SLICES");
    if (env && *env) rt->slices_bytes = atoll(env);
    env = getenv("ORN_FLUSH_SHM");
    rt->flush_shm = !(env && !strcmp(env, "0"));
    env = getenv("ORN_FUSE");
    rt->fuse_off = env && !strcmp(env, "0");
    env = getenv("ORN_SUBBLOCK");
    if (env && *env) {
        int r = 0, c = 0;
        if (!strcmp(env, "off") || !strcmp(env, "0"))
            rt->sub_mode = 0;
        else if (sscanf(env, "%dx%d", &r, &c) == 2 && r >= 1 && c >= 1 && r <= 4096 && c <= 4096)
            orn_rt_set_subblock(rt, r, c);
    }
    return rt;
}

int orn_rt_init(int *argc, char ***argv, OrnRtCtx **out)
{
    OrnDsmTransport *tp = NULL;
    OrnDsmCtx *dsm = NULL;
    *out = NULL;
    int status = orn_dsm_tp_mpi_new(argc, argv, &tp);
    if (status) return status;
    status = orn_dsm_ctx_new(tp, &dsm);
    if (status) {
        tp->ops->free(tp);
        return status;
    }
    *out = ctx_new(dsm);
    return ORN_OK;
}

int orn_rt_init_local(OrnRtCtx **out)
{
    OrnDsmTransport *tp = NULL;
    OrnDsmCtx *dsm = NULL;
    int status = orn_dsm_tp_local_new(&tp);
    if (!status) status = orn_dsm_ctx_new(tp, &dsm);
    if (status) return status;
    *out = ctx_new(dsm);
    return ORN_OK;
}

void orn_rt_finalize(OrnRtCtx *rt)
{
    if (!rt) return;
    free(rt->trace);
    free(rt->loops);
    free(rt->win_hints);
    for (int i = 0; i < rt->nsums; i++) free(rt->sums[i].file);
    free(rt->sums);
    orn_gpu_state_free(rt->gpu);
    rt_spare_free(rt);
    orn_dsm_ctx_free(rt->dsm);
    free(rt);
}

OrnDsmCtx *orn_rt_dsm(OrnRtCtx *rt)
{
    return rt->dsm;
}

int orn_rt_rank(const OrnRtCtx *rt)
{
    return orn_dsm_rank(rt->dsm);
}

int orn_rt_size(const OrnRtCtx *rt)
{
    return orn_dsm_size(rt->dsm);
}

const char *orn_rt_error(const OrnRtCtx *rt)
{
    return orn_dsm_error(rt->dsm);
}

void orn_rt_die(OrnRtCtx *rt)
{
    orn_dsm_die(rt->dsm, 1);
}

void orn_rt_set_seed(OrnRtCtx *rt, uint64_t seed)
{
    rt->seed = seed;
}

uint64_t orn_rt_seed(const OrnRtCtx *rt)
{
    return rt->seed;
}

void orn_rt_set_blocks_per_rank(OrnRtCtx *rt, int k)
{
    if (k >= 1) rt->blocks_per_rank = k, rt->blocks_explicit = 1;
}

void orn_rt_set_subblock(OrnRtCtx *rt, int r, int c)
{
    if (r < 0 || c < 0) {
        rt->sub_mode = -1;
    } else if (r == 0 || c == 0) {
        rt->sub_mode = 0;
    } else {
        rt->sub_mode = 1;
        rt->sub_fixed[0] = r;
        rt->sub_fixed[1] = c;
    }
}

void orn_rt_set_timeout(OrnRtCtx *rt, double seconds)
{
    orn_dsm_set_timeout(rt->dsm, seconds);
}

void orn_rt_set_trace(OrnRtCtx *rt, int on)
{
    rt->trace_on = on;
}

void orn_rt_set_slice(OrnRtCtx *rt, int64_t elements)
{
    if (elements >= 1) rt->slice = elements;
}

void orn_rt_set_sliced(OrnRtCtx *rt, int on)
{
    rt->sliced = on != 0;
}

void orn_rt_set_replicate_max(OrnRtCtx *rt, int64_t bytes)
{
    if (bytes >= 0) rt->replicate_max = bytes;
}

int64_t orn_rt_held_max(const OrnRtCtx *rt)
{
    return rt->held_max > 0 ? rt->held_max : 0;
}

void orn_rt_set_nocomm(OrnRtCtx *rt, int on)
{
    rt->nocomm = on;
}

/* ---------------------------------------------------------------- snapshots */

#define RT_SNAP_MAGIC 0x53535452u /* "RTSS" */

typedef struct RtSnap {
    uint32_t magic, nloops;
    uint64_t seed;
    int32_t blocks_per_rank, blocks_explicit, sub_mode, sub_fixed[2], nocomm;
    int64_t cache_bytes, replicate_max, slice;
} RtSnap;
_Static_assert(sizeof(RtSnap) == 64, "no padding in the runtime's snapshot");

int orn_rt_snap_write(OrnRtCtx *rt, const OrnDsmIo *io)
{
    RtSnap s;
    memset(&s, 0, sizeof s);
    s.magic = RT_SNAP_MAGIC;
    s.nloops = (uint32_t)rt->nloops;
    s.seed = rt->seed;
    s.blocks_per_rank = rt->blocks_per_rank;
    s.blocks_explicit = rt->blocks_explicit;
    s.sub_mode = rt->sub_mode;
    s.sub_fixed[0] = rt->sub_fixed[0];
    s.sub_fixed[1] = rt->sub_fixed[1];
    s.nocomm = rt->nocomm;
    s.cache_bytes = rt->cache_bytes;
    s.replicate_max = rt->replicate_max;
    s.slice = rt->slice;
    int rc = io->put(io->ud, &s, sizeof s);
    for (int i = 0; i < rt->nloops && !rc; i++) {
        int64_t pair[2] = {rt->loops[i].loop_id, rt->loops[i].count};
        rc = io->put(io->ud, pair, sizeof pair);
    }
    if (rc) return orn_dsm_fail(rt->dsm, ORN_E_IO, "snapshot: cannot write the runtime's state");
    return orn_dsm_snap_write(rt->dsm, io);
}

int orn_rt_snap_read(OrnRtCtx *rt, const OrnDsmIo *io)
{
    RtSnap s;
    if (io->get(io->ud, &s, sizeof s) || s.magic != RT_SNAP_MAGIC || s.nloops > (1u << 24))
        return orn_dsm_fail(rt->dsm, ORN_E_FORMAT, "snapshot: not a runtime snapshot");
    LoopCount *loops = orn_xmalloc((size_t)(s.nloops ? s.nloops : 1) * sizeof *loops);
    for (uint32_t i = 0; i < s.nloops; i++) {
        int64_t pair[2];
        if (io->get(io->ud, pair, sizeof pair)) {
            free(loops);
            return orn_dsm_fail(rt->dsm, ORN_E_FORMAT, "snapshot: truncated runtime state");
        }
        loops[i] = (LoopCount){(int)pair[0], pair[1]};
    }
    free(rt->loops);
    rt->loops = loops;
    rt->caploops = (int)(s.nloops ? s.nloops : 1);
    rt->nloops = (int)s.nloops;
    rt->seed = s.seed;
    rt->blocks_per_rank = s.blocks_per_rank;
    rt->blocks_explicit = s.blocks_explicit;
    rt->sub_mode = s.sub_mode;
    rt->sub_fixed[0] = s.sub_fixed[0];
    rt->sub_fixed[1] = s.sub_fixed[1];
    rt->nocomm = s.nocomm;
    rt->cache_bytes = s.cache_bytes;
    rt->replicate_max = s.replicate_max;
    rt->slice = s.slice;
    return orn_dsm_snap_read(rt->dsm, io);
}

const OrnRtTraceEntry *orn_rt_trace(const OrnRtCtx *rt, int64_t *n)
{
    *n = rt->ntrace;
    return rt->trace;
}

void orn_rt_stats(const OrnRtCtx *rt, OrnRtStats *out)
{
    *out = rt->stats;
}

void orn_rt_pair_stats(const OrnRtCtx *rt, OrnRtStats *out)
{
    *out = rt->pair_stats;
}

/* ---------------------------------------------------------------- per-loop summary */

void orn_rt_set_loop_summary(OrnRtCtx *rt, int on)
{
    rt->summary_on = on != 0;
}

enum { SUM_FIELDS = 9 }; /* line, loop_id, runs, total, compute, wait, transfer, sent, received */

int orn_rt_loop_summary(OrnRtCtx *rt, OrnRtLoopSummary **out, int *n)
{
    OrnDsmCtx *dsm = rt->dsm;
    int P = orn_dsm_size(dsm), me = orn_dsm_rank(dsm), m = rt->nsums;
    *out = NULL;
    *n = 0;
    /* every rank's sums to rank 0, as doubles (byte counts stay exact below 2^53) */
    size_t bytes = (size_t)m * SUM_FIELDS * sizeof(double);
    double *mine = orn_xmalloc(bytes ? bytes : 1), *all = NULL;
    for (int i = 0; i < m; i++) {
        const RtLoopSum *e = &rt->sums[i];
        double *v = mine + (size_t)i * SUM_FIELDS;
        v[0] = e->line;
        v[1] = e->loop_id;
        v[2] = (double)e->runs;
        v[3] = e->total;
        v[4] = e->compute;
        v[5] = e->wait;
        v[6] = e->transfer;
        v[7] = (double)e->sent;
        v[8] = (double)e->received;
    }
    size_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    sc[0] = bytes;
    int status = orn_dsm_alltoallv(dsm, mine, sc, (void **)&all, rc, "loop summary");
    if (status || me != 0) goto fn_exit;
    OrnRtLoopSummary *s = orn_xcalloc((size_t)(m ? m : 1), sizeof *s);
    double *cmax = orn_xcalloc((size_t)(m ? m : 1), sizeof *cmax);
    for (int i = 0; i < m; i++) {
        s[i].file = rt->sums[i].file;
        s[i].line = rt->sums[i].line;
        s[i].loop_id = rt->sums[i].loop_id;
        s[i].strategy = rt->sums[i].strategy;
        s[i].runs = rt->sums[i].runs;
    }
    size_t off = 0;
    for (int q = 0; q < P; q++) {
        const double *v = (const double *)(void *)((char *)all + off);
        int k = (int)(rc[q] / (SUM_FIELDS * sizeof(double)));
        off += rc[q];
        for (int j = 0; j < k; j++, v += SUM_FIELDS) {
            /* the same locations in the same order everywhere (loops are collective);
             * matched by line and loop id all the same */
            int i = j < m && s[j].line == (int)v[0] && s[j].loop_id == (int)v[1] ? j : -1;
            for (int t = 0; t < m && i < 0; t++)
                if (s[t].line == (int)v[0] && s[t].loop_id == (int)v[1]) i = t;
            if (i < 0) continue;
            s[i].time += v[3] / P;
            s[i].compute += v[4] / P;
            s[i].wait += v[5] / P;
            s[i].transfer += v[6] / P;
            s[i].sent += (int64_t)v[7];
            s[i].received += (int64_t)v[8];
            if (v[4] > cmax[i]) cmax[i] = v[4];
        }
    }
    for (int i = 0; i < m; i++) {
        s[i].compute_max = cmax[i];
        s[i].imbalance = s[i].compute > 0 ? cmax[i] / s[i].compute : 0;
    }
    free(cmax);
    *out = s;
    *n = m;
fn_exit:
    free(mine);
    free(all);
    free(sc);
    free(rc);
    return status;
}

int orn_rt_body_error(OrnRtCtx *rt, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return orn_dsm_fail(rt->dsm, ORN_E_BODY, "%s", msg);
}

/* ---------------------------------------------------------------- rand / randn arrays */

typedef struct RandInit {
    uint64_t seed;
    int normal;
    OrnDsmType type;
} RandInit;

static void rand_elem(int64_t index, void *out, void *ud)
{
    const RandInit *r = ud;
    orn_rt_rand_elem(r->type, r->seed, index, r->normal, out);
}

void orn_rt_rand_elem(OrnDsmType type, uint64_t seed, int64_t index, int normal, void *out)
{
    double v = orn_rt_rand_at(seed, index, normal);
    switch (type) {
    case ORN_DSM_F32: {
        float f = (float)v;
        memcpy(out, &f, 4);
        break;
    }
    case ORN_DSM_F64:
        memcpy(out, &v, 8);
        break;
    case ORN_DSM_I32: {
        int32_t i = normal ? (int32_t)lround(v) : (int32_t)floor(v * 2147483648.0);
        memcpy(out, &i, 4);
        break;
    }
    case ORN_DSM_I64: {
        int64_t i = normal ? (int64_t)llround(v) : (int64_t)floor(v * 2147483648.0);
        memcpy(out, &i, 8);
        break;
    }
    }
}

int orn_rt_rand_array(OrnRtCtx *rt, OrnDsmType type, int ndim, const int64_t *dims, uint64_t seed,
                      int normal, OrnDsmArray **out)
{
    int status = orn_dsm_dense(rt->dsm, type, ndim, dims, out);
    if (status) return status;
    RandInit r = {seed, normal, type};
    return orn_dsm_init(*out, rand_elem, &r);
}
