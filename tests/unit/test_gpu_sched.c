/* test_gpu_sched.c: the 2-D GPU schedule (runtime/gpu/gpu_sched_2d.c) on long-tailed keys.
 *
 * Checks, for keys drawn the way bench/gpu/gen_mf.c draws items (a few keys with most of
 * the elements) and S from 1 to 64:
 *   - every element is in exactly one tile, a tile's elements in element order;
 *   - tile (I, J)'s keys: row band I and column band J are ranges of keys, monotone in the
 *     key (what makes the wavefront the serial loop in key order);
 *   - the steps are the anti-diagonals: the tiles of a step share no row and no column band,
 *     and every non-empty tile is in the step I + J;
 *   - bands are cut at the count quantiles: a band of several keys holds at most about
 *     n / S elements plus its last key's count, and a key with more than n / S elements is
 *     a band of its own;
 *   - `bands` is S for the wavefront (the device's band pipeline) and 0 for the broken
 *     schedule of the tests. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rt_gpu.h"

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

enum { ROWS = 300, COLS = 200 };

static void check_schedule(const int64_t *keys, int64_t n, int S)
{
    OrnGpuSched s;
    CHECK(orn_gpu_sched_2d(keys, n, 2, 0, 1, S, 0, &s) == 0);
    CHECK(s.ntiles == (int64_t)S * S);
    CHECK(s.nsteps == 2 * S - 1);
    CHECK(s.bands == (S > 1 ? S : 0));
    /* tile of every element; element order inside tiles */
    int64_t *tile_of = malloc(sizeof *tile_of * (size_t)n);
    for (int64_t e = 0; e < n; e++) tile_of[e] = -1;
    for (int64_t t = 0; t < s.ntiles; t++)
        for (int64_t i = s.start[t]; i < s.start[t + 1]; i++) {
            int64_t e = s.order[i];
            CHECK(e >= 0 && e < n && tile_of[e] == -1);
            tile_of[e] = t;
            if (i > s.start[t]) CHECK(s.order[i - 1] < e);
        }
    for (int64_t e = 0; e < n; e++) CHECK(tile_of[e] >= 0);
    /* bands monotone in the key, one band per key */
    int rowband[ROWS], colband[COLS];
    int64_t rowcnt[ROWS] = {0}, colcnt[COLS] = {0};
    for (int k = 0; k < ROWS; k++) rowband[k] = -1;
    for (int k = 0; k < COLS; k++) colband[k] = -1;
    for (int64_t e = 0; e < n; e++) {
        int I = (int)(tile_of[e] / S), J = (int)(tile_of[e] % S);
        int64_t r = keys[2 * e], c = keys[2 * e + 1];
        CHECK(rowband[r] == -1 || rowband[r] == I);
        CHECK(colband[c] == -1 || colband[c] == J);
        rowband[r] = I;
        colband[c] = J;
        rowcnt[r]++;
        colcnt[c]++;
    }
    int last = -1;
    for (int k = 0; k < COLS; k++) {
        if (colband[k] < 0) continue;
        CHECK(colband[k] >= last);
        last = colband[k];
    }
    last = -1;
    for (int k = 0; k < ROWS; k++) {
        if (rowband[k] < 0) continue;
        CHECK(rowband[k] >= last);
        last = rowband[k];
    }
    /* quantile cuts of the column key */
    int64_t *bandcnt = calloc((size_t)S, sizeof *bandcnt);
    int64_t *bandmax = calloc((size_t)S, sizeof *bandmax);
    int *bandkeys = calloc((size_t)S, sizeof *bandkeys);
    for (int k = 0; k < COLS; k++) {
        if (colband[k] < 0) continue;
        bandcnt[colband[k]] += colcnt[k];
        bandkeys[colband[k]]++;
        if (colcnt[k] > bandmax[colband[k]]) bandmax[colband[k]] = colcnt[k];
        if (S > 1 && colcnt[k] * S > n) {
            for (int j = 0; j < COLS; j++)
                if (j != k && colband[j] >= 0) CHECK(colband[j] != colband[k]);
        }
    }
    for (int b = 0; b < S; b++)
        if (bandkeys[b] > 1) CHECK(bandcnt[b] <= n / S + 1 + bandmax[b]);
    /* steps: the anti-diagonals, tiles of a step disjoint in both bands */
    char *inrow = calloc((size_t)S, 1), *incol = calloc((size_t)S, 1);
    int64_t listed = 0;
    for (int d = 0; d < s.nsteps; d++) {
        memset(inrow, 0, (size_t)S);
        memset(incol, 0, (size_t)S);
        for (int64_t i = s.step_start[d]; i < s.step_start[d + 1]; i++) {
            int64_t t = s.tiles[i];
            int I = (int)(t / S), J = (int)(t % S);
            CHECK(I + J == d);
            CHECK(!inrow[I] && !incol[J]);
            inrow[I] = incol[J] = 1;
            CHECK(s.start[t + 1] > s.start[t]);
            listed++;
        }
    }
    int64_t nonempty = 0;
    for (int64_t t = 0; t < s.ntiles; t++) nonempty += s.start[t + 1] > s.start[t];
    CHECK(listed == nonempty);
    free(inrow);
    free(incol);
    free(bandcnt);
    free(bandmax);
    free(bandkeys);
    free(tile_of);
    orn_gpu_sched_free(&s);
}

int main(void)
{
    uint64_t seed = 7;
    int64_t n = 20000;
    int64_t *keys = malloc(sizeof *keys * (size_t)n * 2);
    for (int64_t e = 0; e < n; e++) {
        double x = (double)(next(&seed) >> 11) / 9007199254740992.0;
        double y = (double)(next(&seed) >> 11) / 9007199254740992.0;
        keys[2 * e] = (int64_t)(ROWS * y);
        keys[2 * e + 1] = (int64_t)(COLS * x * x * x); /* key 0 holds ~17% */
    }
    for (int S = 1; S <= 64; S = S < 4 ? S + 1 : S * 2) check_schedule(keys, n, S);
    /* the broken schedule: no band pipeline */
    OrnGpuSched b;
    CHECK(orn_gpu_sched_2d(keys, n, 2, 0, 1, 8, 1, &b) == 0);
    CHECK(b.bands == 0);
    orn_gpu_sched_free(&b);
    /* no elements */
    OrnGpuSched z;
    CHECK(orn_gpu_sched_2d(keys, 0, 2, 0, 1, 4, 0, &z) == 0);
    CHECK(z.step_start[z.nsteps] == 0);
    orn_gpu_sched_free(&z);
    free(keys);
    return check_report("test_gpu_sched");
}
