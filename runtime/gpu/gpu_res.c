/* gpu_res.c: device copies that outlive a block (gpu_int.h, "Residency").
 *
 * Every device allocation of the GPU path is an entry here, found again by what it holds:
 *   - a copy of host bytes of an array's storage (a box, a block's values, CSR rows): valid
 *     while the array's write generation (OrnDsmArray.gen) is the one it was copied at. The
 *     DSM and the runtime give an array a new generation whenever its storage here may have
 *     changed or moved (dsm.h), so a hit needs no look at the host's bytes: an array the host
 *     does not touch is uploaded once and stays;
 *   - derived data (a block's keys and schedule, CSR row offsets): identified by a tag,
 *     valid at the generation of the array it was derived from;
 *   - scratch (the arguments, the error flag, the update log, halo copies): a numbered slot
 *     reused by every block, grown when too small.
 * What a block writes on the device is copied back at its end (gpu_data.c), so host and
 * device agree again and the entry stays valid; other copies overlapping the bytes written
 * are dropped (gpu_res_wrote). A block that does not finish (it runs on the CPU path, or
 * again with a larger log) leaves its written copies different from the host's: dropped.
 *
 * Entries used by the running block are never evicted; others go least recently used
 * first when the budget ($ORN_GPU_RESIDENT bytes, default 1 GiB emulated, 3/4 of the
 * device's free memory) or the device runs out. $ORN_GPU_CHECK=1 compares every hit with
 * the host's bytes and fails the loop on a difference: the tests run with it, so a writer
 * that forgot to touch an array is caught where the emulation runs. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

typedef struct GpuRes {
    int kind; /* GPU_RES_FREE, _COPY, _DERIVED, _SCRATCH */
    const OrnDsmArray *arr;
    const void *host;
    int64_t tag[GPU_RES_TAG];
    uint64_t gen;   /* arr's generation it holds (0: holds nothing valid) */
    void *dev;      /* device memory */
    size_t cap;     /* bytes allocated */
    size_t bytes;   /* bytes it holds */
    uint64_t stamp; /* the block that used it last */
    void *aux;      /* derived: host data that goes with it, freed with it */
} GpuRes;

enum { GPU_RES_FREE, GPU_RES_COPY, GPU_RES_DERIVED, GPU_RES_SCRATCH };

static size_t env_bytes(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end && (*end == 'k' || *end == 'K')) v *= 1024.0;
    if (end && (*end == 'm' || *end == 'M')) v *= 1024.0 * 1024.0;
    if (end && (*end == 'g' || *end == 'G')) v *= 1024.0 * 1024.0 * 1024.0;
    return v > 0 ? (size_t)v : dflt;
}

void gpu_res_init(GpuState *g)
{
    size_t dflt = (size_t)1 << 30;
    if (g->mode == GPU_MODE_DEVICE && g->ops->mem_free) dflt = g->ops->mem_free() / 4 * 3;
    g->res_limit = env_bytes("ORN_GPU_RESIDENT", dflt);
    const char *c = getenv("ORN_GPU_CHECK");
    g->res_check = c && *c && strcmp(c, "0") != 0;
}

/* Release entry r: its slot is free for the next entry (entries never move but in add). */
static void drop(GpuState *g, GpuRes *r)
{
    if (r->dev) g->ops->release(r->dev);
    if (r->aux) orn_gpu_sched_free(r->aux);
    free(r->aux);
    g->res_bytes -= r->cap;
    memset(r, 0, sizeof *r);
    r->kind = GPU_RES_FREE;
}

void gpu_res_free(GpuState *g)
{
    for (int i = 0; i < g->nres; i++)
        if (g->res[i].kind != GPU_RES_FREE) drop(g, &g->res[i]);
    free(g->res);
    g->res = NULL;
    g->nres = g->capres = 0;
}

void gpu_res_begin(GpuState *g)
{
    g->res_stamp++;
}

/* Evict the least recently used entry not in use by this block; 0 when there is none. */
static int evict_one(GpuState *g)
{
    GpuRes *victim = NULL;
    for (int i = 0; i < g->nres; i++) {
        GpuRes *r = &g->res[i];
        if (r->kind != GPU_RES_FREE && r->dev && r->stamp != g->res_stamp &&
            (!victim || r->stamp < victim->stamp))
            victim = r;
    }
    if (!victim) return 0;
    drop(g, victim);
    return 1;
}

/* Device memory of at least n bytes for entry r, evicting while over the budget or out of
 * device memory. 0, or -1. */
static int alloc_for(GpuState *g, GpuRes *r, size_t n)
{
    size_t want = n ? n : 1;
    r->stamp = g->res_stamp; /* in use: not a victim of its own allocation */
    if (r->dev && r->cap >= want) return 0;
    if (r->dev) {
        g->ops->release(r->dev);
        g->res_bytes -= r->cap;
        r->dev = NULL;
        r->cap = 0;
    }
    for (;;) {
        if (g->res_bytes + want <= g->res_limit) {
            void *p = g->ops->alloc(want);
            if (p) {
                r->dev = p;
                r->cap = want;
                g->res_bytes += want;
                return 0;
            }
        }
        if (!evict_one(g)) {
            /* nothing left to evict: over the budget is allowed, out of memory is not */
            void *p = g->res_bytes + want > g->res_limit ? g->ops->alloc(want) : NULL;
            if (!p) return -1;
            r->dev = p;
            r->cap = want;
            g->res_bytes += want;
            return 0;
        }
    }
}

static GpuRes *find(GpuState *g, int kind, const OrnDsmArray *arr, const void *host,
                    const int64_t *tag)
{
    for (int i = 0; i < g->nres; i++) {
        GpuRes *r = &g->res[i];
        if (r->kind == kind && r->arr == arr && r->host == host &&
            !memcmp(r->tag, tag, sizeof r->tag))
            return r;
    }
    return NULL;
}

static GpuRes *add(GpuState *g, int kind, const OrnDsmArray *arr, const void *host,
                   const int64_t *tag)
{
    GpuRes *r = NULL;
    for (int i = 0; i < g->nres && !r; i++)
        if (g->res[i].kind == GPU_RES_FREE) r = &g->res[i];
    if (!r && g->nres == g->capres) {
        int n = g->capres ? 2 * g->capres : 32;
        GpuRes *e = realloc(g->res, sizeof *e * (size_t)n);
        if (!e) return NULL;
        g->res = e;
        g->capres = n;
    }
    if (!r) r = &g->res[g->nres++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->arr = arr;
    r->host = host;
    memcpy(r->tag, tag, sizeof r->tag);
    return r;
}

/* $ORN_GPU_CHECK: the resident copy r must equal the host's bytes. */
static int check_hit(GpuState *g, const GpuRes *r, const void *host)
{
    if (!g->res_check) return 0;
    char *tmp = malloc(r->bytes ? r->bytes : 1);
    if (!tmp) return 0;
    int bad = gpu_get(g, tmp, r->dev, r->bytes) != 0 || memcmp(tmp, host, r->bytes) != 0;
    free(tmp);
    if (bad)
        fprintf(stderr,
                "orion: internal error: the GPU's resident copy of %s (%zu bytes) differs from "
                "the host's at the same write generation (ORN_GPU_CHECK)\n",
                r->arr ? r->arr->name : "?", r->bytes);
    return bad;
}

void *gpu_res_copy(GpuState *g, const OrnDsmArray *arr, const void *host, size_t bytes,
                   const int64_t *tag, int *stale)
{
    static const int64_t none[GPU_RES_TAG];
    const void *id = tag ? NULL : host; /* a tagged copy is found by its tag */
    *stale = 0;
    GpuRes *r = find(g, GPU_RES_COPY, arr, id, tag ? tag : none);
    if (r && r->gen == arr->gen && r->bytes == bytes && r->dev) {
        r->stamp = g->res_stamp;
        g->st_resident += (int64_t)bytes;
        if (check_hit(g, r, host)) {
            *stale = 1;
            return NULL;
        }
        return r->dev;
    }
    if (!r && !(r = add(g, GPU_RES_COPY, arr, id, tag ? tag : none))) return NULL;
    if (alloc_for(g, r, bytes) != 0) return NULL;
    r->gen = 0;
    r->bytes = bytes;
    if (bytes && g->ops->put(r->dev, host, bytes) != 0) return NULL;
    r->gen = arr->gen;
    g->st_in += (int64_t)bytes;
    return r->dev;
}

void *gpu_res_derived(GpuState *g, const OrnDsmArray *arr, const int64_t *tag, size_t bytes,
                      void **aux, int *valid)
{
    GpuRes *r = find(g, GPU_RES_DERIVED, arr, NULL, tag);
    *valid = 0;
    if (r && r->gen == arr->gen && r->dev && (!bytes || r->bytes == bytes)) {
        r->stamp = g->res_stamp;
        *valid = 1;
        if (aux) *aux = r->aux;
        return r->dev;
    }
    if (!bytes) return NULL;
    if (!r && !(r = add(g, GPU_RES_DERIVED, arr, NULL, tag))) return NULL;
    if (alloc_for(g, r, bytes) != 0) return NULL;
    if (r->aux) orn_gpu_sched_free(r->aux);
    free(r->aux);
    r->aux = aux ? *aux : NULL; /* the caller's, owned by the entry from now on */
    r->gen = 0;                 /* valid once filled: gpu_res_filled */
    r->bytes = bytes;
    return r->dev;
}

void gpu_res_filled(GpuState *g, const void *dev, const OrnDsmArray *arr)
{
    for (int i = 0; i < g->nres; i++)
        if (g->res[i].dev == dev) g->res[i].gen = arr->gen;
}

void *gpu_res_scratch(GpuState *g, int slot, size_t bytes)
{
    int64_t tag[GPU_RES_TAG] = {slot};
    GpuRes *r = find(g, GPU_RES_SCRATCH, NULL, NULL, tag);
    if (!r && !(r = add(g, GPU_RES_SCRATCH, NULL, NULL, tag))) return NULL;
    if (alloc_for(g, r, bytes) != 0) return NULL;
    r->stamp = g->res_stamp;
    r->bytes = bytes;
    return r->dev;
}

void gpu_res_wrote(GpuState *g, const OrnDsmArray *arr, const void *host, size_t bytes,
                   const void *dev)
{
    const char *lo = host, *hi = lo + bytes;
    for (int i = 0; i < g->nres && !g->broken_res; i++) {
        GpuRes *r = &g->res[i];
        if (r->kind != GPU_RES_COPY || r->arr != arr || r->dev == dev) continue;
        const char *a = r->host;
        if (!a || (a < hi && lo < a + r->bytes)) r->gen = 0; /* tagged: a copy of any part */
    }
}

void gpu_res_forget(GpuState *g, const void *dev)
{
    for (int i = 0; i < g->nres; i++)
        if (g->res[i].dev == dev) g->res[i].gen = 0;
}
