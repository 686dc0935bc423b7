/* orn_rng.h: counter-based random numbers, Philox4x32-10 (Salmon et al., SC 2011), as inline
 * functions that the runtime (rng.c, the public orn_rt_rng_* of rt.h) and the kernels of
 * @gpu loops (orn_gpu_dev.cuh, which defines ORN_RNG_FN as __host__ __device__) compile
 * alike: one definition, so a draw on the device is the host's draw.
 *
 * A draw is a pure function of (key, counter): the key is the program seed, the counter
 * holds a draw number and a 64-bit hash of (stream, iteration key). Uniform and integer
 * draws are integer arithmetic and one exact conversion, bit-identical everywhere; normal
 * draws use log, cos and sqrt (a device's libm may differ from the C library's in the last
 * bit). */
#ifndef ORN_RNG_H
#define ORN_RNG_H

#include <math.h>
#include <stdint.h>

#ifndef ORN_RNG_FN
#define ORN_RNG_FN static inline
#endif

typedef struct OrnRtRng {
    uint32_t key[2];
    uint32_t ctr[4];
    uint32_t out[4];
    int avail;
} OrnRtRng;

ORN_RNG_FN void orn_rng_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* splitmix64's finalizer: a bijective mix of 64 bits. */
ORN_RNG_FN uint64_t orn_rng_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

ORN_RNG_FN void orn_rng_init(OrnRtRng *g, uint64_t seed, uint64_t stream, const int64_t *key,
                             int nkey)
{
    uint64_t h = orn_rng_mix64(stream);
    for (int d = 0; d < nkey; d++) h = orn_rng_mix64(h ^ (uint64_t)key[d]);
    g->key[0] = (uint32_t)seed;
    g->key[1] = (uint32_t)(seed >> 32);
    g->ctr[0] = g->ctr[1] = 0;
    g->ctr[2] = (uint32_t)h;
    g->ctr[3] = (uint32_t)(h >> 32);
    g->avail = 0;
}

ORN_RNG_FN uint32_t orn_rng_u32(OrnRtRng *g)
{
    if (g->avail == 0) {
        orn_rng_philox(g->ctr, g->key, g->out);
        if (++g->ctr[0] == 0) g->ctr[1]++;
        g->avail = 4;
    }
    return g->out[4 - g->avail--];
}

ORN_RNG_FN double orn_rng_u53(uint32_t hi, uint32_t lo)
{
    uint64_t x = ((uint64_t)hi << 32) | lo;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

ORN_RNG_FN double orn_rng_uniform(OrnRtRng *g)
{
    uint32_t hi = orn_rng_u32(g);
    uint32_t lo = orn_rng_u32(g);
    return orn_rng_u53(hi, lo);
}

ORN_RNG_FN double orn_rng_box_muller(double u1, double u2)
{
    /* u1 in (0, 1] so the logarithm is finite. */
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925286766559 * u2);
}

ORN_RNG_FN double orn_rng_normal(OrnRtRng *g)
{
    double u1 = 1.0 - orn_rng_uniform(g);
    double u2 = orn_rng_uniform(g);
    return orn_rng_box_muller(u1, u2);
}

/* Uniform in 0..n-1, unbiased (rejection); 0 for n <= 1. */
ORN_RNG_FN int64_t orn_rng_int(OrnRtRng *g, int64_t n)
{
    if (n <= 1) return 0;
    uint64_t un = (uint64_t)n, limit = UINT64_MAX - UINT64_MAX % un;
    for (;;) {
        uint64_t hi = orn_rng_u32(g), lo = orn_rng_u32(g);
        uint64_t r = (hi << 32) | lo;
        if (r < limit) return (int64_t)(r % un);
    }
}

#endif
