/* gpu_sched_1d.c: a rank's block of a 1-D (or 1d-partitioned) loop on one GPU: a thread
 * per iteration, or per key.
 *
 * Cost model. Under the 1d strategy two iterations depend on each other only when they
 * share the partitioned key d0. Every distinct value of key d0 is a tile: its iterations
 * run in element order on one thread, and every tile runs at once in a single step (for a
 * 1-D iteration space, a thread per iteration). One launch; time ~ the longest tile plus
 * the launch latency; the block's n iterations fill ceil(tiles / 128) thread blocks of 128
 * threads (ceil(tiles / 4) for a warp per tile: orn_gpu.h). */
#include <stdlib.h>
#include <string.h>

#include "rt_gpu.h"

typedef struct {
    int64_t key, e;
} KeyElem;

static int by_key(const void *a, const void *b)
{
    const KeyElem *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->e < y->e ? -1 : x->e > y->e;
}

int orn_gpu_sched_1d(const int64_t *keys, int64_t n, int nkeys, int d0, OrnGpuSched *out)
{
    memset(out, 0, sizeof *out);
    KeyElem *ke = malloc(sizeof *ke * (size_t)(n ? n : 1));
    out->order = malloc(sizeof *out->order * (size_t)(n ? n : 1));
    out->start = malloc(sizeof *out->start * (size_t)(n + 1));
    out->tiles = malloc(sizeof *out->tiles * (size_t)(n ? n : 1));
    out->step_start = malloc(sizeof *out->step_start * 2);
    if (!ke || !out->order || !out->start || !out->tiles || !out->step_start) goto fn_fail;
    for (int64_t e = 0; e < n; e++) ke[e] = (KeyElem){keys[e * nkeys + d0], e};
    qsort(ke, (size_t)n, sizeof *ke, by_key);
    int64_t nt = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || ke[i].key != ke[i - 1].key) {
            out->start[nt] = i;
            out->tiles[nt] = nt;
            nt++;
        }
        out->order[i] = ke[i].e;
    }
    out->start[nt] = n;
    out->ntiles = nt;
    out->nsteps = 1;
    out->step_start[0] = 0;
    out->step_start[1] = nt;
    free(ke);
    return 0;
fn_fail:
    free(ke);
    orn_gpu_sched_free(out);
    return -1;
}
