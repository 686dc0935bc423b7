/* gen_ratings.c: synthetic ratings for the SGD MF benchmark and tests.
 *
 *   gen_ratings USERS ITEMS RATINGS RANK SEED TRAIN TEST
 *
 * Truth: user and item factors drawn N(0, 1/sqrt(RANK)) so a rating's signal has unit
 * variance; rating = 3 + signal + N(0, 0.25^2) noise. (user, item) pairs are distinct,
 * drawn uniformly; every 10th rating goes to TEST. Output: "user item rating" lines,
 * 0-based, the format of load_triplets. Deterministic for a given SEED (splitmix64). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state;

static uint64_t next(void)
{
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double uniform(void)
{
    return (double)(next() >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
    double u1 = 1.0 - uniform(), u2 = uniform();
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: gen_ratings USERS ITEMS RATINGS RANK SEED TRAIN TEST\n");
        return 2;
    }
    int64_t nu = atoll(argv[1]), ni = atoll(argv[2]), nr = atoll(argv[3]);
    int k = atoi(argv[4]);
    state = (uint64_t)atoll(argv[5]);
    if (nu <= 0 || ni <= 0 || nr <= 0 || k <= 0 || nr > nu * ni / 2) {
        fprintf(stderr, "gen_ratings: bad sizes (at most USERS*ITEMS/2 ratings)\n");
        return 2;
    }
    double sd = 1.0 / sqrt(sqrt((double)k));
    double *U = malloc(sizeof(double) * (size_t)(nu * k)),
           *V = malloc(sizeof(double) * (size_t)(ni * k));
    for (int64_t x = 0; x < nu * k; x++) U[x] = sd * gauss();
    for (int64_t x = 0; x < ni * k; x++) V[x] = sd * gauss();
    /* distinct pairs: a hash set of linear indices */
    int64_t cap = 1;
    while (cap < 2 * nr) cap <<= 1;
    int64_t *set = malloc(sizeof(int64_t) * (size_t)cap);
    memset(set, 0xff, sizeof(int64_t) * (size_t)cap);
    FILE *tr = fopen(argv[6], "w"), *te = fopen(argv[7], "w");
    if (!tr || !te || !U || !V || !set) {
        fprintf(stderr, "gen_ratings: cannot write output\n");
        return 1;
    }
    for (int64_t n = 0; n < nr;) {
        int64_t u = (int64_t)(next() % (uint64_t)nu), i = (int64_t)(next() % (uint64_t)ni);
        int64_t lin = u * ni + i;
        uint64_t h = (uint64_t)lin * 0x9E3779B97F4A7C15ULL;
        int64_t s = (int64_t)(h >> 11) & (cap - 1);
        while (set[s] >= 0 && set[s] != lin) s = (s + 1) & (cap - 1);
        if (set[s] == lin) continue;
        set[s] = lin;
        double r = 3.0 + 0.25 * gauss();
        for (int f = 0; f < k; f++) r += U[u * k + f] * V[i * k + f];
        fprintf(n % 10 == 9 ? te : tr, "%" PRId64 " %" PRId64 " %.4f\n", u, i, r);
        n++;
    }
    fclose(tr);
    fclose(te);
    free(U);
    free(V);
    free(set);
    return 0;
}
