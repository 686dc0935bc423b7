/* rng.c: the runtime's random numbers (rt.h): the public entry points over the inline
 * Philox4x32-10 of orn_rng.h, which the kernels of @gpu loops compile too.
 *
 * A draw is a pure function of (key, counter): the key is the program seed, the counter
 * holds a draw number and a 64-bit hash of (stream, iteration key). Any rank can therefore
 * produce the numbers of any iteration, and results do not depend on how iterations are
 * spread over ranks. Dense rand/randn arrays use counter (index, 0x52414E44, 0x41525259):
 * element i is a function of (seed, i) only.
 */
#include "rt.h"

void orn_rt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    orn_rng_philox(ctr, key, out);
}

void orn_rt_rng_init(OrnRtRng *g, uint64_t seed, uint64_t stream, const int64_t *key, int nkey)
{
    orn_rng_init(g, seed, stream, key, nkey);
}

uint32_t orn_rt_rng_u32(OrnRtRng *g)
{
    return orn_rng_u32(g);
}

double orn_rt_rng_uniform(OrnRtRng *g)
{
    return orn_rng_uniform(g);
}

double orn_rt_rng_normal(OrnRtRng *g)
{
    return orn_rng_normal(g);
}

int64_t orn_rt_rng_int(OrnRtRng *g, int64_t n)
{
    return orn_rng_int(g, n);
}

double orn_rt_rand_at(uint64_t seed, int64_t index, int normal)
{
    uint32_t ctr[4] = {(uint32_t)index, (uint32_t)((uint64_t)index >> 32), 0x52414E44u,
                       0x41525259u};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, out[4];
    orn_rng_philox(ctr, key, out);
    if (!normal) return orn_rng_u53(out[0], out[1]);
    return orn_rng_box_muller(1.0 - orn_rng_u53(out[0], out[1]), orn_rng_u53(out[2], out[3]));
}
