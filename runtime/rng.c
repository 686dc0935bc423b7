/* rng.c: counter-based random numbers: Philox4x32-10 (Salmon et al., SC 2011).
 *
 * A draw is a pure function of (key, counter): the key is the program seed, the counter
 * holds a draw number and a 64-bit hash of (stream, iteration key). Any rank can therefore
 * produce the numbers of any iteration, and results do not depend on how iterations are
 * spread over ranks. Dense rand/randn arrays use counter (index, 0x52414E44, 0x41525259):
 * element i is a function of (seed, i) only.
 */
#include "rt.h"

#include <math.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

void orn_rt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo(PHILOX_M0, c0, &hi0, &lo0);
        mulhilo(PHILOX_M1, c2, &hi1, &lo1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* splitmix64's finalizer: a bijective mix of 64 bits. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void orn_rt_rng_init(OrnRtRng *g, uint64_t seed, uint64_t stream, const int64_t *key, int nkey)
{
    uint64_t h = mix64(stream);
    for (int d = 0; d < nkey; d++) h = mix64(h ^ (uint64_t)key[d]);
    g->key[0] = (uint32_t)seed;
    g->key[1] = (uint32_t)(seed >> 32);
    g->ctr[0] = g->ctr[1] = 0;
    g->ctr[2] = (uint32_t)h;
    g->ctr[3] = (uint32_t)(h >> 32);
    g->avail = 0;
}

uint32_t orn_rt_rng_u32(OrnRtRng *g)
{
    if (g->avail == 0) {
        orn_rt_philox4x32_10(g->ctr, g->key, g->out);
        if (++g->ctr[0] == 0) g->ctr[1]++;
        g->avail = 4;
    }
    return g->out[4 - g->avail--];
}

static double u53(uint32_t hi, uint32_t lo)
{
    uint64_t x = ((uint64_t)hi << 32) | lo;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

double orn_rt_rng_uniform(OrnRtRng *g)
{
    uint32_t hi = orn_rt_rng_u32(g);
    uint32_t lo = orn_rt_rng_u32(g);
    return u53(hi, lo);
}

static double box_muller(double u1, double u2)
{
    /* u1 in (0, 1] so the logarithm is finite. */
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925286766559 * u2);
}

double orn_rt_rng_normal(OrnRtRng *g)
{
    double u1 = 1.0 - orn_rt_rng_uniform(g);
    double u2 = orn_rt_rng_uniform(g);
    return box_muller(u1, u2);
}

int64_t orn_rt_rng_int(OrnRtRng *g, int64_t n)
{
    if (n <= 1) return 0;
    uint64_t un = (uint64_t)n, limit = UINT64_MAX - UINT64_MAX % un;
    for (;;) {
        uint64_t hi = orn_rt_rng_u32(g), lo = orn_rt_rng_u32(g);
        uint64_t r = (hi << 32) | lo;
        if (r < limit) return (int64_t)(r % un);
    }
}

double orn_rt_rand_at(uint64_t seed, int64_t index, int normal)
{
    uint32_t ctr[4] = {(uint32_t)index, (uint32_t)((uint64_t)index >> 32), 0x52414E44u,
                       0x41525259u};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, out[4];
    orn_rt_philox4x32_10(ctr, key, out);
    if (!normal) return u53(out[0], out[1]);
    return box_muller(1.0 - u53(out[0], out[1]), u53(out[2], out[3]));
}
