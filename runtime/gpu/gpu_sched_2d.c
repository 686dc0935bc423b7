/* gpu_sched_2d.c: a rank's block of a 2-D loop on one GPU, as S x S tiles run as a
 * wavefront.
 *
 * Cost model. A block of n elements over keys (k0, k1) is cut into S row bands by k0 and S
 * column bands by k1, each band a range of keys holding about n / S elements (cut at the
 * quantiles of each key's element counts, so that long-tailed keys -- a few items with most
 * of the ratings -- do not make one band, and every tile of it, many times the others; a
 * key with more than n / S elements is a band of its own). Tile (I, J) is row band I and
 * column band J. Two iterations in different tiles share no k0 unless the tiles share I,
 * and no k1 unless they share J. Tile (I, J) runs after (I - 1, J) and (I, J - 1), its
 * iterations in element (key) order: every pair of iterations that share k0 (or k1) then
 * runs in key order, so the result is that of the serial loop in key order exactly, for
 * ordered and unordered loops alike.
 * On the device that order is a pipeline, not a sequence of grid-wide steps: worker I (a
 * warp) owns row band I and walks its tiles J = 0, 1, ..., S - 1, starting tile (I, J) when
 * worker I - 1 has published that it finished (I - 1, J) (a counter per band, a fence
 * before it is raised: orn_gpu_band_wait / orn_gpu_band_done in orn_gpu_dev.cuh). No
 * grid-wide barrier: a long tile delays only the workers below it, and the delays of
 * different tiles overlap instead of each step waiting for its longest tile (with
 * power-law data the longest tile of a step is many times the mean). With more bands than
 * resident workers, worker w takes bands w, w + nw, ... in turn (each waits only on a lower
 * band, so the lowest unfinished band always runs). The same order as steps -- the
 * anti-diagonals I + J = d, 2S - 1 of them -- is what the emulation runs, tiles of a step
 * in a seeded shuffled order, and what a schedule without counters (kernels of a thread
 * per tile) runs with a grid-wide barrier between steps.
 * Time ~ (2S - 1) (t_hop + (n / S^2) t_iter): the pipeline is 2S - 1 tiles deep, a tile
 * costs a hand-over (a counter seen across the device, t_hop) and n / S^2 iterations on
 * average, each a chain of dependent loads (t_iter); so S* = sqrt(n t_iter / t_hop), at
 * most the workers the device holds at once (an estimate of 1,024 resident threads per
 * multiprocessor: a second round of bands waits for the first) and at least one iteration
 * per tile on average (S <= sqrt(n)). Whatever S, every iteration of one key k1 runs one
 * after another: the most frequent column key bounds the run from below (its count times
 * t_iter), which no schedule that keeps the serial result can beat. t_hop ~ 1 us and
 * t_iter ~ 1 us are estimates: bench/gpu/device.sh sweeps S (ORN_GPU_TILES) to check.
 * Bytes moved per update: the iteration's own key and value plus its rows, counted in
 * docs/performance.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_gpu.h"

enum { T_HOP_NS = 1000, T_ITER_NS = 1000, THREADS_PER_SM = 1024 };

int orn_gpu_sched_2d_tiles(int64_t n, int sms, int lanes)
{
    double s = sqrt((double)n * T_ITER_NS / T_HOP_NS);
    double cap = (double)sms * THREADS_PER_SM / (lanes > 0 ? lanes : 1);
    if (s > cap) s = cap;
    if (s > sqrt((double)n)) s = sqrt((double)n);
    return s < 1 ? 1 : (int)s;
}

/* Key ranges wider than this many elements per key are cut by width, not by counts. */
enum { COUNT_SPAN = 4 };

/* Band of every key of dimension d: bands[v - lo] for v in [lo, hi], cut at the quantiles
 * of the keys' element counts (band = the elements before key v, times S / n); NULL when
 * the range is too sparse to count (then: equal widths) or out of memory. */
static int *bands_of(const int64_t *keys, int64_t n, int nkeys, int d, int64_t lo, int64_t hi,
                     int S)
{
    if (n == 0) return NULL; /* (no keys: lo > hi) */
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    if (span > (uint64_t)n * COUNT_SPAN + 1024) return NULL;
    int64_t *cnt = calloc((size_t)span, sizeof *cnt);
    int *band = malloc(sizeof *band * (size_t)span);
    if (!cnt || !band) {
        free(cnt);
        free(band);
        return NULL;
    }
    for (int64_t e = 0; e < n; e++) cnt[keys[e * nkeys + d] - lo]++;
    int64_t before = 0;
    for (uint64_t v = 0; v < span; v++) {
        int64_t b = (int64_t)((double)before * S / (double)n);
        band[v] = (int)(b < S ? b : S - 1);
        before += cnt[v];
    }
    free(cnt);
    return band;
}

/* Tile index of key v in [lo, hi] cut into S ranges of equal width. */
static int64_t band(int64_t v, int64_t lo, int64_t hi, int S)
{
    double w = (double)((uint64_t)hi - (uint64_t)lo) + 1.0;
    int64_t t = (int64_t)((double)(uint64_t)(v - lo) / w * S);
    return t < S ? t : S - 1;
}

int orn_gpu_sched_2d(const int64_t *keys, int64_t n, int nkeys, int d0, int d1, int S, int broken,
                     OrnGpuSched *out)
{
    memset(out, 0, sizeof *out);
    if (S < 1) S = 1;
    int64_t lo0 = INT64_MAX, hi0 = INT64_MIN, lo1 = INT64_MAX, hi1 = INT64_MIN;
    for (int64_t e = 0; e < n; e++) {
        int64_t a = keys[e * nkeys + d0], b = keys[e * nkeys + d1];
        lo0 = a < lo0 ? a : lo0;
        hi0 = a > hi0 ? a : hi0;
        lo1 = b < lo1 ? b : lo1;
        hi1 = b > hi1 ? b : hi1;
    }
    int64_t nt = (int64_t)S * S;
    int nsteps = broken ? S : 2 * S - 1;
    int64_t *tile = malloc(sizeof *tile * (size_t)(n ? n : 1));
    out->order = malloc(sizeof *out->order * (size_t)(n ? n : 1));
    out->start = calloc((size_t)nt + 1, sizeof *out->start);
    out->tiles = malloc(sizeof *out->tiles * (size_t)nt);
    out->step_start = calloc((size_t)nsteps + 1, sizeof *out->step_start);
    if (!tile || !out->order || !out->start || !out->tiles || !out->step_start) goto fn_fail;
    /* counting sort by tile, stable: a tile's elements stay in element order */
    int *b0 = bands_of(keys, n, nkeys, d0, lo0, hi0, S);
    int *b1 = bands_of(keys, n, nkeys, d1, lo1, hi1, S);
    for (int64_t e = 0; e < n; e++) {
        int64_t v = keys[e * nkeys + d0], u = keys[e * nkeys + d1];
        int64_t I = b0 ? b0[v - lo0] : band(v, lo0, hi0, S);
        int64_t J = b1 ? b1[u - lo1] : band(u, lo1, hi1, S);
        tile[e] = I * S + J;
        out->start[tile[e] + 1]++;
    }
    free(b0);
    free(b1);
    for (int64_t t = 0; t < nt; t++) out->start[t + 1] += out->start[t];
    {
        int64_t *fill = malloc(sizeof *fill * (size_t)nt);
        if (!fill) goto fn_fail;
        memcpy(fill, out->start, sizeof *fill * (size_t)nt);
        for (int64_t e = 0; e < n; e++) out->order[fill[tile[e]]++] = e;
        free(fill);
    }
    /* steps: the anti-diagonals I + J = d; broken: the row bands I (tiles sharing k0 ranges
     * at once: wrong, for the test that the shuffled emulation catches it) */
    int64_t m = 0;
    for (int d = 0; d < nsteps; d++) {
        out->step_start[d] = m;
        for (int I = 0; I < S; I++) {
            if (broken) {
                if (I != d) continue;
                for (int J = 0; J < S; J++) out->tiles[m++] = (int64_t)I * S + J;
                continue;
            }
            int J = d - I;
            int64_t t = (int64_t)I * S + J;
            if (J >= 0 && J < S && out->start[t + 1] > out->start[t]) out->tiles[m++] = t;
        }
    }
    out->step_start[nsteps] = m;
    out->ntiles = nt;
    out->nsteps = nsteps;
    out->bands = broken || S < 2 ? 0 : S;
    free(tile);
    return 0;
fn_fail:
    free(tile);
    orn_gpu_sched_free(out);
    return -1;
}
