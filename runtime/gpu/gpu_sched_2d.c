/* gpu_sched_2d.c: a rank's block of a 2-D loop on one GPU, as S x S tiles run as a
 * wavefront.
 *
 * Cost model. A block of n elements over keys (k0, k1) is cut into S x S tiles by ranges
 * of k0 and k1 (equal widths over the keys present). Tiles (I, J) with I + J = d share no
 * k0 and no k1 range, so no two iterations in different tiles of a step share a row or a
 * column key: step d runs its tiles at once, a thread or a warp each, iterations of a tile
 * in element (key) order. 2S - 1 steps; step d has min(d + 1, 2S - 1 - d) tiles, S at the
 * middle. Every pair of iterations that share k0 (or k1) runs in key order: in the same
 * tile in element order, in tiles (I, J) < (I, J') at steps d < d'. So the result is that
 * of the serial loop in key order exactly, for ordered and unordered loops alike (the
 * rotation order, S steps of S tiles, would need a replay of its own order to compare
 * with; the wavefront's 2S - 1 steps cost at most twice the barriers for that).
 * The whole schedule runs in one launch of a persistent kernel (orn_gpu.h): steps are
 * separated by a grid-wide barrier on the device (t_step, a few microseconds: an atomic
 * counter and a fence per thread block), not by a launch and a host wait (tens of
 * microseconds with the host in the loop, as the H100 runs before this kernel suggest:
 * docs/performance.md). Steps list only the tiles that hold elements.
 * Time ~ (2S - 1) (t_step + (n / S^2) t_iter): a step costs a barrier and the length of
 * its tiles (n / S^2 iterations on average, each a chain of dependent loads, t_iter), so
 * S* = sqrt(n t_iter / t_step), within what the device holds at once (a middle step's S
 * tiles of `lanes` threads: at most 2,048 threads per multiprocessor; a wider step only
 * gives a warp several tiles) and with tiles of at least one iteration on average
 * (S <= sqrt(n)). t_step ~ 2 us and t_iter ~ 1 us are estimates, not calibrated on a
 * device: bench/gpu/device.sh sweeps S (ORN_GPU_TILES) to check the choice. For 10 M
 * ratings, S = 2,236 (a warp kernel: at most 8,448 on 132 SMs); for 100 M, 7,071.
 * Bytes moved per update: the iteration's own key and value plus its rows, counted in
 * docs/performance.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_gpu.h"

enum { T_STEP_NS = 2000, T_ITER_NS = 1000, THREADS_PER_SM = 2048 };

int orn_gpu_sched_2d_tiles(int64_t n, int sms, int lanes)
{
    double s = sqrt((double)n * T_ITER_NS / T_STEP_NS);
    double cap = (double)sms * THREADS_PER_SM / (lanes > 0 ? lanes : 1);
    if (s > cap) s = cap;
    if (s > sqrt((double)n)) s = sqrt((double)n);
    return s < 1 ? 1 : (int)s;
}

/* Tile index of key v in [lo, hi] cut into S ranges. */
static int64_t band(int64_t v, int64_t lo, int64_t hi, int S)
{
    double w = (double)(uint64_t)(hi - lo) + 1.0;
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
    for (int64_t e = 0; e < n; e++) {
        int64_t I = band(keys[e * nkeys + d0], lo0, hi0, S);
        int64_t J = band(keys[e * nkeys + d1], lo1, hi1, S);
        tile[e] = I * S + J;
        out->start[tile[e] + 1]++;
    }
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
    free(tile);
    return 0;
fn_fail:
    free(tile);
    orn_gpu_sched_free(out);
    return -1;
}
