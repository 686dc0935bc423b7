/* gen_mf.c: Netflix-shaped synthetic ratings for the GPU benchmark (bench/gpu/device.sh),
 * written in parts so that many processes make a large set at once.
 *
 *   gen_mf USERS ITEMS RATINGS SEED PART NPARTS TRAIN TEST TRAIN_BIN [SKEW]
 *
 * Part PART of NPARTS makes the ratings of users [PART U / NPARTS, (PART + 1) U / NPARTS).
 * Shape: a user's count is RATINGS / USERS times a log-normal factor (sigma 1, mean 1,
 * at most ITEMS / 2), items drawn with a popularity skew (item = ITEMS x^SKEW for uniform x,
 * SKEW 2 by default: item 0 then has about 0.6% of the ratings; SKEW 1: uniform items;
 * distinct per user), as Netflix's ratings are long-tailed on both sides. Truth: factors of
 * rank 10 drawn N(0, 1/sqrt(10)) from (SEED, user or item, k), so every part agrees on the
 * items; rating = 3 + signal + N(0, 0.25^2), clamped to [1, 5]. A tenth of the ratings,
 * chosen by a hash of (SEED, user, item), go to TEST. Output: "user item rating" lines
 * (load_triplets), and TRAIN_BIN the training ratings as cuMF_SGD reads them (int32 user, int32
 * item, float rating, no header). Deterministic for a given SEED and NPARTS. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RANK = 10 };

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
    *s = mix(*s);
    return ((double)(*s >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double gauss(uint64_t *s)
{
    double u = uniform(s), v = uniform(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static void factor(uint64_t seed, uint64_t who, float *f)
{
    uint64_t s = mix(seed ^ mix(who));
    for (int k = 0; k < RANK; k++) f[k] = (float)(gauss(&s) / sqrt((double)RANK));
}

int main(int argc, char **argv)
{
    if (argc != 10 && argc != 11) {
        fprintf(stderr, "usage: gen_mf USERS ITEMS RATINGS SEED PART NPARTS TRAIN TEST "
                        "TRAIN_BIN [SKEW]\n");
        return 2;
    }
    double skew = argc == 11 ? atof(argv[10]) : 2.0;
    int64_t U = atoll(argv[1]), I = atoll(argv[2]), R = atoll(argv[3]);
    uint64_t seed = strtoull(argv[4], NULL, 0);
    int64_t part = atoll(argv[5]), np = atoll(argv[6]);
    if (U < 1 || I < 2 || R < 1 || np < 1 || part < 0 || part >= np || !(skew >= 1 && skew <= 8)) {
        fprintf(stderr, "gen_mf: bad sizes\n");
        return 2;
    }
    FILE *tr = fopen(argv[7], "w"), *te = fopen(argv[8], "w"), *bin = fopen(argv[9], "wb");
    float *items = malloc(sizeof *items * (size_t)I * RANK);
    unsigned char *seen = calloc((size_t)I, 1);
    int32_t *picked = malloc(sizeof *picked * (size_t)I);
    if (!tr || !te || !bin || !items || !seen || !picked) {
        fprintf(stderr, "gen_mf: cannot open the outputs or out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < I; i++) factor(seed, (uint64_t)(U + i), items + i * RANK);
    double mean = (double)R / (double)U;
    for (int64_t u = part * U / np; u < (part + 1) * U / np; u++) {
        uint64_t s = mix(seed * 31 + (uint64_t)u);
        float fu[RANK];
        factor(seed, (uint64_t)u, fu);
        double c = mean * exp(gauss(&s) - 0.5);
        int64_t n = (int64_t)(c + uniform(&s));
        if (n > I / 2) n = I / 2;
        for (int64_t j = 0; j < n; j++) {
            int64_t i;
            do {
                double x = uniform(&s);
                i = (int64_t)((double)I * (skew == 2.0 ? x * x : pow(x, skew)));
                if (i >= I) i = I - 1;
            } while (seen[i]);
            seen[i] = 1;
            picked[j] = (int32_t)i;
            double sig = 0;
            for (int k = 0; k < RANK; k++) sig += (double)fu[k] * items[i * RANK + k];
            double r = 3.0 + sig + 0.25 * gauss(&s);
            r = r < 1 ? 1 : r > 5 ? 5 : r;
            float rf = (float)r;
            if (mix(seed ^ mix((uint64_t)u * (uint64_t)I + (uint64_t)i)) % 10 == 0) {
                fprintf(te, "%" PRId64 " %" PRId64 " %.4f\n", u, i, r);
            } else {
                int32_t rec[2] = {(int32_t)u, (int32_t)i};
                fprintf(tr, "%" PRId64 " %" PRId64 " %.4f\n", u, i, r);
                fwrite(rec, sizeof rec, 1, bin);
                fwrite(&rf, sizeof rf, 1, bin);
            }
        }
        for (int64_t j = 0; j < n; j++) seen[picked[j]] = 0;
    }
    int bad = ferror(tr) | ferror(te) | ferror(bin);
    bad |= fclose(tr) | fclose(te) | fclose(bin);
    free(items);
    free(seen);
    free(picked);
    if (bad) {
        fprintf(stderr, "gen_mf: a write failed\n");
        return 1;
    }
    return 0;
}
