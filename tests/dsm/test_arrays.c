/* test_arrays.c: distributed arrays against serial expectations, at any rank count:
 * creation, rand/randn independent of the rank count, repartition between dense and sparse
 * partitions (1-D, 2-D, replicated), histogram balancing of power-law data, single-element
 * access, reductions, remote reads, agreed errors; the slices exchanges of buffer flushes. */
#include <math.h>

#include "harness.h"
#include "transport.h"

/* A deterministic generator for test data (independent of ranks). */
static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Repartition 3-D array a into `grid` tiles: every tile replicated when g is 0, else tile k
 * owned by rank (k * spread + g) mod P. */
static void regrid(TestEnv *t, OrnDsmArray *a, const int grid[3], int64_t g, int64_t spread)
{
    OrnDsmPart p;
    OK(t, orn_dsm_part_init(&p, 3, grid));
    for (int d = 0; d < 3; d++) orn_dsm_bounds_uniform(p.bounds[d], a->dims[d], grid[d]);
    for (int64_t k = 0; k < p.ntiles; k++)
        p.owner[k] = g == 0 ? ORN_DSM_ALL : (int)((k * spread + g) % (int64_t)t->size);
    OK(t, orn_dsm_repartition(a, &p));
    orn_dsm_part_free(&p);
}

static void test_dense(TestEnv *t)
{
    int64_t dims[3] = {7, 5, 3};
    OrnDsmArray *a = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 3, dims, 42, 1, &a));
    int64_t n = 0, *keys = NULL;
    void *vals = NULL;
    OK(t, orn_dsm_gather(a, &n, &keys, &vals));
    CHECK(t, n == 105 && keys == NULL);
    for (int64_t i = 0; i < n; i++) {
        double want = orn_rt_rand_at(42, i, 1);
        CHECK(t, memcmp(&((double *)vals)[i], &want, 8) == 0);
    }
    free(vals);

    /* Repartition through several grids, replicated included; contents never change. */
    int grids[][3] = {{1, 1, 1}, {3, 2, 1}, {1, 4, 2}, {7, 1, 3}, {2, 2, 2}};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        regrid(t, a, grids[g], (int64_t)g, 7);
        OK(t, orn_dsm_gather(a, &n, &keys, &vals));
        for (int64_t i = 0; i < n; i++) {
            double want = orn_rt_rand_at(42, i, 1);
            CHECK(t, memcmp(&((double *)vals)[i], &want, 8) == 0);
        }
        free(vals);
        /* Single-element reads agree everywhere. */
        int64_t key[3] = {6, 4, 2};
        double v;
        OK(t, orn_dsm_get(a, key, &v));
        double want = orn_rt_rand_at(42, 104, 1);
        CHECK(t, v == want);
    }
    /* set, sum, norm */
    int64_t key[3] = {3, 2, 1};
    double nine = 9.0, sum = 0, ser = 0;
    OK(t, orn_dsm_set(a, key, &nine));
    OK(t, orn_dsm_sum(a, &sum));
    for (int64_t i = 0; i < 105; i++)
        ser += i == (3 * 5 + 2) * 3 + 1 ? 9.0 : orn_rt_rand_at(42, i, 1);
    CHECK(t, fabs(sum - ser) < 1e-9);
    double nrm = 0;
    OK(t, orn_dsm_norm(a, &nrm));
    CHECK(t, nrm > 9.0);
    orn_dsm_free(a);

    /* Integer fill, dot of differently partitioned arrays. */
    int64_t d1[1] = {1000};
    OrnDsmArray *x = NULL, *y = NULL;
    OK(t, orn_dsm_dense(t->dsm, ORN_DSM_I64, 1, d1, &x));
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 1, d1, 3, 0, &y));
    int64_t two = 2;
    OK(t, orn_dsm_fill(x, &two));
    OrnDsmPart p;
    int nb[1] = {5};
    OK(t, orn_dsm_part_init(&p, 1, nb));
    orn_dsm_bounds_uniform(p.bounds[0], 1000, 5);
    for (int k = 0; k < 5; k++) p.owner[k] = (t->size - 1 - k % t->size);
    OK(t, orn_dsm_repartition(y, &p));
    orn_dsm_part_free(&p);
    double dot = 0, want = 0;
    OK(t, orn_dsm_dot(x, y, &dot));
    for (int64_t i = 0; i < 1000; i++) want += 2.0 * (double)(float)orn_rt_rand_at(3, i, 0);
    CHECK(t, fabs(dot - want) < 1e-6 * fabs(want));
    orn_dsm_free(x);
    orn_dsm_free(y);
}

/* Elements of a sparse 2-D test matrix; rank r contributes every P-th of them. */
static void sparse_elems(TestEnv *t, int64_t rows, int64_t cols, int64_t want, int64_t *n,
                         int64_t **keys, float **vals)
{
    *keys = malloc((size_t)want * 2 * 8);
    *vals = malloc((size_t)want * 4);
    int64_t m = 0;
    for (int64_t i = 0; i < want; i++) {
        if (i % t->size != t->rank) continue;
        /* distinct keys: a bijection of i into the rows x cols box */
        int64_t lin = (int64_t)((uint64_t)(i * 7919) % (uint64_t)(rows * cols));
        (*keys)[2 * m] = lin / cols;
        (*keys)[2 * m + 1] = lin % cols;
        (*vals)[m++] = (float)(mix((uint64_t)i) % 1000) / 7.0f;
    }
    *n = m;
}

static void test_sparse(TestEnv *t)
{
    int64_t dims[2] = {53, 61}, n, *keys;
    float *vals;
    sparse_elems(t, 53, 61, 900, &n, &keys, &vals);
    OrnDsmArray *a = NULL;
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, n, keys, vals, NULL, NULL, &a));
    CHECK(t, a->nnz == 900);
    free(keys);
    free(vals);
    int64_t gn, *gk;
    void *gv;
    OK(t, orn_dsm_gather(a, &gn, &gk, &gv));
    CHECK(t, gn == 900);
    for (int64_t i = 1; i < gn; i++)
        CHECK(t, gk[2 * (i - 1)] < gk[2 * i] ||
                     (gk[2 * (i - 1)] == gk[2 * i] && gk[2 * (i - 1) + 1] < gk[2 * i + 1]));
    /* 2-D balanced repartition keeps contents. */
    OrnDsmPart p;
    int nb[2] = {2 * t->size, 3};
    OK(t, orn_dsm_part_init(&p, 2, nb));
    OK(t, orn_dsm_balance(a, 0, nb[0], p.bounds[0]));
    OK(t, orn_dsm_balance(a, 1, nb[1], p.bounds[1]));
    for (int64_t k = 0; k < p.ntiles; k++) p.owner[k] = (int)(k % t->size);
    OK(t, orn_dsm_repartition(a, &p));
    orn_dsm_part_free(&p);
    int64_t hn, *hk;
    void *hv;
    OK(t, orn_dsm_gather(a, &hn, &hk, &hv));
    CHECK(t, hn == gn && !memcmp(hk, gk, (size_t)gn * 16) && !memcmp(hv, gv, (size_t)gn * 4));
    /* Remote reads: bulk and on demand, absent keys read 0 with found = 0. */
    int ids[4] = {a->id, a->id, a->id, a->id};
    int64_t lins[4] = {gk[0] * 61 + gk[1], gk[2 * 450] * 61 + gk[2 * 450 + 1],
                       gk[2 * 899] * 61 + gk[2 * 899 + 1], 0};
    /* key (0, 0) is absent unless the generator produced it */
    int absent_ok = !(gk[0] == 0 && gk[1] == 0);
    float out[4 * 2];
    unsigned char found[4];
    OrnDsmFetch f = {4, ids, lins, out, 8, found, 0, NULL};
    OK(t, orn_dsm_fetch_bulk(t->dsm, &f));
    CHECK(t, found[0] && out[0] == ((float *)gv)[0]);
    CHECK(t, found[1] && out[2] == ((float *)gv)[450]);
    CHECK(t, found[2] && out[4] == ((float *)gv)[899]);
    if (absent_ok) CHECK(t, !found[3] && out[6] == 0.0f);
    float one;
    int fnd;
    OK(t, orn_dsm_fetch_one(a, lins[1], &one, &fnd));
    CHECK(t, fnd && one == ((float *)gv)[450]);
    OK(t, orn_dsm_barrier(t->dsm)); /* owners serve while they wait here */
    /* write_elements: every rank rewrites its share of elements. */
    int64_t wn = 0, *wk = malloc((size_t)gn * 16);
    float *wv = malloc((size_t)gn * 4);
    for (int64_t i = t->rank; i < gn; i += t->size) {
        wk[2 * wn] = gk[2 * i];
        wk[2 * wn + 1] = gk[2 * i + 1];
        wv[wn++] = (float)i;
    }
    OK(t, orn_dsm_write_elements(a, wn, wk, wv));
    free(hk);
    free(hv);
    OK(t, orn_dsm_gather(a, &hn, &hk, &hv));
    for (int64_t i = 0; i < hn; i++) CHECK(t, ((float *)hv)[i] == (float)i);
    free(wk);
    free(wv);
    free(hk);
    free(hv);
    free(gk);
    free(gv);
    orn_dsm_free(a);

    /* Duplicates: an agreed error naming the key (and lines when given). */
    int64_t dk[4] = {1, 2, 1, 2}, lines[2] = {10 + t->rank, 20 + t->rank};
    float dv[2] = {1, 2};
    int64_t m = t->rank == 0 ? 2 : 0;
    int st =
        orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, m, dk, dv, lines, "dup.txt", &a);
    CHECK(t, st == ORN_E_PARSE);
    CHECK(t,
          strcmp(orn_dsm_error(t->dsm), "dup.txt:20: duplicate key (1, 2), first on line 10") == 0);
    int64_t bad[2] = {53, 0};
    m = t->rank == t->size - 1 ? 1 : 0;
    st = orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, m, bad, dv, NULL, NULL, &a);
    CHECK(t, st == ORN_E_RANGE && strstr(orn_dsm_error(t->dsm), "(53, 0) outside"));
    /* Dense from elements: a missing element is an error. */
    int64_t d1[1] = {4}, k1[3] = {0, 1, 3};
    float v1[3] = {1, 2, 3};
    m = t->rank == 0 ? 3 : 0;
    st = orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 1, d1, 0, m, k1, v1, NULL, NULL, &a);
    CHECK(t, st == ORN_E_ARG && strstr(orn_dsm_error(t->dsm), "no value for element (2)"));

    /* Lines only where there are elements: a rank that read no line of a small file passes
     * none, and the records must still have the same size on every rank (found by the
     * differential tests: the values arrived as line numbers). */
    int64_t lk[6] = {0, 1, 2, 2, 50, 3}, ll[3] = {1, 2, 3}, ln;
    float lv[3] = {1.5f, 2.5f, 3.5f};
    m = t->rank == t->size - 1 ? 3 : 0;
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, m, lk, lv, m ? ll : NULL, "l.txt",
                                &a));
    OK(t, orn_dsm_gather(a, &ln, &gk, &gv));
    CHECK(t, ln == 3);
    for (int64_t i = 0; i < ln && i < 3; i++)
        CHECK(t, gk[2 * i] == lk[2 * i] && gk[2 * i + 1] == lk[2 * i + 1] &&
                     ((float *)gv)[i] == lv[i]);
    free(gk);
    free(gv);
    orn_dsm_free(a);
}

/* Power-law degrees: rows with Zipf-like counts; balanced blocks hold about N / B each. */
static void test_balance(TestEnv *t)
{
    const int64_t rows = 4000, cols = 3000;
    int64_t cap = 0, n = 0, total = 0, maxrow = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t deg = 1 + (int64_t)(600.0 / pow((double)(r % 997 + 1), 0.9));
        total += deg;
        if (deg > maxrow) maxrow = deg;
        if (r % t->size == t->rank) cap += deg;
    }
    int64_t *keys = malloc((size_t)(cap ? cap : 1) * 16);
    float *vals = malloc((size_t)(cap ? cap : 1) * 4);
    for (int64_t r = t->rank; r < rows; r += t->size) {
        int64_t deg = 1 + (int64_t)(600.0 / pow((double)(r % 997 + 1), 0.9));
        for (int64_t j = 0; j < deg; j++) { /* distinct columns: 37 is prime to cols */
            keys[2 * n] = r;
            keys[2 * n + 1] = (j * 37 + r) % cols;
            vals[n++] = 1.0f;
        }
    }
    int64_t dims[2] = {rows, cols};
    OrnDsmArray *a = NULL;
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, dims, 1, n, keys, vals, NULL, NULL, &a));
    CHECK(t, a->nnz == total);
    free(keys);
    free(vals);
    for (int nbk = 2; nbk <= 8; nbk *= 2) {
        int nb[2] = {nbk * t->size, nbk * t->size};
        OrnDsmPart p;
        OK(t, orn_dsm_part_init(&p, 2, nb));
        OK(t, orn_dsm_balance(a, 0, nb[0], p.bounds[0]));
        OK(t, orn_dsm_balance(a, 1, nb[1], p.bounds[1]));
        for (int64_t k = 0; k < p.ntiles; k++) p.owner[k] = (int)(k % t->size);
        OK(t, orn_dsm_repartition(a, &p));
        orn_dsm_part_free(&p);
        /* Row bands: each within one heaviest row of the average. */
        for (int b = 0; b < nb[0]; b++) {
            int64_t c = 0;
            for (int b1 = 0; b1 < nb[1]; b1++) c += a->tiles[b * nb[1] + b1].n;
            double avg = (double)total / nb[0];
            CHECK(t, fabs((double)c - avg) <= (double)maxrow + 1);
        }
        /* Column bands: columns are spread evenly, so within 15 %. */
        for (int b1 = 0; b1 < nb[1]; b1++) {
            int64_t c = 0;
            for (int b = 0; b < nb[0]; b++) c += a->tiles[b * nb[1] + b1].n;
            double avg = (double)total / nb[1];
            CHECK(t, fabs((double)c - avg) <= 0.15 * avg);
        }
        /* An unbalanced (uniform) cut of the rows is much worse: the test means something. */
        if (nbk == 2 && t->rank == 0) {
            int64_t worst = 0;
            for (int b = 0; b < nb[0]; b++) {
                int64_t c = 0;
                for (int b1 = 0; b1 < nb[1]; b1++) c += a->tiles[b * nb[1] + b1].n;
                if (c > worst) worst = c;
            }
            printf("balance: %d row blocks, largest %lld, average %.0f, heaviest row %lld\n", nb[0],
                   (long long)worst, (double)total / nb[0], (long long)maxrow);
        }
    }
    orn_dsm_free(a);
}

/* The address of element k (1-D) in this rank's storage, or NULL. */
static const char *elem_at(const OrnDsmArray *a, int64_t k)
{
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        if (tl->held && tl->vals && k >= tl->lo[0] && k < tl->hi[0])
            return (const char *)tl->vals + (size_t)(k - tl->lo[0]) * a->esize;
    }
    return NULL;
}

/* Band boundaries moved by a few elements (dsm/array.c, keep_storage): the contents stay
 * right, and a band that stays on its rank keeps its storage (the element in its middle at
 * the same address) where the move fits the tile's room; moves beyond the room, and rows of
 * a 2-D array, keep their contents; bands cut in two (2 P bands dealt cyclically) keep no
 * storage (the old allocation would mostly idle: peak memory). */
static void test_shift(TestEnv *t)
{
    int P = t->size;
    int64_t n = 100000;
    OrnDsmArray *a = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 1, &n, 77, 1, &a));
    struct {
        int64_t shift;
        int bands, keep;
    } moves[] = {{0, 1, 1}, {3, 1, 1}, {-5, 1, 1}, {0, 1, 1}, {9000, 1, 0}, {0, 2, 0}, {7, 2, 1}};
    for (size_t m = 0; m < sizeof moves / sizeof moves[0]; m++) {
        int B = moves[m].bands * P;
        OrnDsmPart p;
        OK(t, orn_dsm_part_init(&p, 1, &B));
        orn_dsm_bounds_uniform(p.bounds[0], n, B);
        for (int g = 1; g < B; g++) p.bounds[0][g] += moves[m].shift;
        for (int g = 0; g < B; g++) p.owner[g] = g % P;
        /* the middle of this rank's first band, before and after */
        int64_t mid = (p.bounds[0][t->rank] + p.bounds[0][t->rank + 1]) / 2;
        const char *before = elem_at(a, mid);
        int same_shape = a->part.nb[0] == B;
        OK(t, orn_dsm_repartition(a, &p));
        orn_dsm_part_free(&p);
        if (moves[m].keep && same_shape) CHECK(t, before && elem_at(a, mid) == before);
        /* a band cut into two keeps no storage: most of the old allocation would idle */
        if (!same_shape && B == 2 * P) CHECK(t, elem_at(a, mid) != before);
        int64_t got = 0, *keys = NULL;
        void *vals = NULL;
        OK(t, orn_dsm_gather(a, &got, &keys, &vals));
        CHECK(t, got == n);
        for (int64_t i = 0; i < got; i++) {
            double want = orn_rt_rand_at(77, i, 1);
            CHECK(t, memcmp(&((double *)vals)[i], &want, 8) == 0);
        }
        free(vals);
    }
    orn_dsm_free(a);

    /* rows of a 2-D array: 2000 x 7 f32 in P row bands, moved by 2 rows */
    int64_t dims[2] = {2000, 7};
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 2, dims, 78, 0, &a));
    for (int r = 0; r < 2; r++) {
        int nb[2] = {P, 1};
        OrnDsmPart p;
        OK(t, orn_dsm_part_init(&p, 2, nb));
        orn_dsm_bounds_uniform(p.bounds[0], dims[0], P);
        orn_dsm_bounds_uniform(p.bounds[1], dims[1], 1);
        for (int g = 1; g < P; g++) p.bounds[0][g] += 2 * r;
        for (int g = 0; g < P; g++) p.owner[g] = g;
        OK(t, orn_dsm_repartition(a, &p));
        orn_dsm_part_free(&p);
        int64_t got = 0, *keys = NULL;
        void *vals = NULL;
        OK(t, orn_dsm_gather(a, &got, &keys, &vals));
        for (int64_t i = 0; i < got; i++) {
            float want = (float)orn_rt_rand_at(78, i, 0);
            CHECK(t, memcmp(&((float *)vals)[i], &want, 4) == 0);
        }
        free(vals);
    }
    orn_dsm_free(a);
}

/* Node replicas (dsm/replica.c): the whole array row-major, as the gather sees it, through
 * grids whose tiles cut rows or are replicated and whose owners are not in rank order;
 * rewritten after an element changed; returned as it is, and checked against the tiles, at
 * unchanged generations. One rank: none. */
static void test_replica(TestEnv *t)
{
    setenv("ORN_REPLICA_MIN_KB", "0", 1);
    int64_t dims[3] = {9, 6, 4};
    int grids[][3] = {{1, 1, 1}, {3, 2, 1}, {2, 3, 2}, {9, 1, 1}};
    uint64_t *gens = calloc((size_t)t->size, sizeof *gens);
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        OrnDsmArray *a = NULL;
        OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 3, dims, 7, 1, &a));
        regrid(t, a, grids[g], (int64_t)g, 5);
        const void *last = NULL;
        if (g != 1) OK(t, orn_dsm_replica_reserve(a)); /* grid 1: none made, none served */
        for (int round = 0; round < 3; round++) {
            gens[t->rank] = a->gen;
            OK(t, orn_dsm_allgather_into(t->dsm, gens, sizeof *gens, "generations"));
            const void *rep = NULL;
            OK(t, orn_dsm_replica(a, gens, 1, &rep));
            if (t->size == 1 || g == 1) {
                CHECK(t, rep == NULL);
                break;
            }
            CHECK(t, rep != NULL && (round == 0 || rep == last));
            last = rep;
            int64_t n = 0, *keys = NULL;
            void *vals = NULL;
            OK(t, orn_dsm_gather(a, &n, &keys, &vals));
            CHECK(t, n == 9 * 6 * 4 && memcmp(rep, vals, (size_t)n * 8) == 0);
            free(vals);
            if (round == 0) { /* one element changes: its owner's generation too */
                int64_t key[3] = {4, 5, 3};
                double v = -2.5;
                OK(t, orn_dsm_set(a, key, &v));
            }
        }
        orn_dsm_free(a);
    }
    free(gens);
    unsetenv("ORN_REPLICA_MIN_KB");
}

/* orn_dsm_scatter_slices and orn_dsm_gather_slices (dsm/transport.h) on vectors cut
 * unevenly, with empty slices (more ranks than bytes, a rank with none) and zero bytes:
 * after the scatter every rank holds each rank's bytes of its own slice, in rank order;
 * after the gather every rank holds every rank's slice of the vector where it belongs. Byte
 * b of rank q's vector is a function of (q, b), so a slice from the wrong rank, offset or
 * slot is caught. */
static void test_slices(TestEnv *t)
{
    int P = t->size, me = t->rank;
    size_t lens[] = {0, 3, 1000, 65537};
    for (size_t c = 0; c < sizeof lens / sizeof *lens; c++)
        for (int cut = 0; cut < 3; cut++) {
            size_t n = lens[c], *off = malloc(((size_t)P + 1) * sizeof *off);
            for (int q = 0; q <= P; q++) /* even; everything on the last rank; skewed */
                off[q] = cut == 0   ? n * (size_t)q / (size_t)P
                         : cut == 1 ? (q == P ? n : 0)
                                    : n * (size_t)q * (size_t)q / ((size_t)P * (size_t)P);
            char *mine = malloc(n + 1), *into = malloc((size_t)P * (n + 1)), *vec = malloc(n + 1);
            for (size_t b = 0; b < n; b++)
                mine[b] = (char)(mix((uint64_t)me * 1000003u + b) & 0xff);
            size_t sb = off[me + 1] - off[me];
            OK(t, orn_dsm_scatter_slices(t->dsm, mine, off, into, "test slices"));
            int good = 1;
            for (int q = 0; q < P; q++)
                for (size_t b = 0; b < sb; b++)
                    good &= into[(size_t)q * sb + b] ==
                            (char)(mix((uint64_t)q * 1000003u + off[me] + b) & 0xff);
            CHECK(t, good);
            /* each rank's slice of the vector: the byte's owner rank's value */
            memset(vec, 0x5a, n + 1);
            for (size_t b = off[me]; b < off[me + 1]; b++)
                vec[b] = (char)(mix((uint64_t)(me + 7) * 1000003u + b) & 0xff);
            OK(t, orn_dsm_gather_slices(t->dsm, vec, off, "test slices"));
            good = vec[n] == 0x5a;
            for (int q = 0; q < P; q++)
                for (size_t b = off[q]; b < off[q + 1]; b++)
                    good &= vec[b] == (char)(mix((uint64_t)(q + 7) * 1000003u + b) & 0xff);
            CHECK(t, good);
            free(off);
            free(mine);
            free(into);
            free(vec);
        }
}

/* Lines of a dense 2-D array for top-level views (orn_dsm_read_line, orn_dsm_write_line):
 * every row and column read whole against the gathered array, under 1-D, 2-D, scattered
 * and replicated grids; a line written back (each rank its own elements) then read by
 * gather. */
/* A 9 x 7 array cut by grid g of six: grid 5 replicated, else tile k at rank (k * m + g)
 * mod P. */
#define NGRIDS 6
static void grid_part(TestEnv *t, OrnDsmArray *a, int g, int m)
{
    static const int grids[NGRIDS][2] = {{1, 1}, {3, 1}, {1, 4}, {3, 2}, {9, 7}, {2, 3}};
    OrnDsmPart p;
    OK(t, orn_dsm_part_init(&p, 2, grids[g]));
    for (int d = 0; d < 2; d++) orn_dsm_bounds_uniform(p.bounds[d], a->dims[d], grids[g][d]);
    for (int64_t k = 0; k < p.ntiles; k++)
        p.owner[k] = g == 5 ? ORN_DSM_ALL : (int)((k * m + g) % (int64_t)t->size);
    OK(t, orn_dsm_repartition(a, &p));
    orn_dsm_part_free(&p);
}

static void test_lines(TestEnv *t)
{
    int64_t dims[2] = {9, 7};
    OrnDsmArray *a = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F32, 2, dims, 7, 1, &a));
    for (int g = 0; g < NGRIDS; g++) {
        grid_part(t, a, g, 5);
        int64_t n = 0, *keys = NULL;
        void *vals = NULL;
        OK(t, orn_dsm_gather(a, &n, &keys, &vals));
        const float *all = vals;
        float line[9];
        for (int dim = 0; dim < 2; dim++)
            for (int64_t f = 0; f < dims[1 - dim]; f++) {
                memset(line, 0xff, sizeof line);
                OK(t, orn_dsm_read_line(a, dim, f, line));
                for (int64_t x = 0; x < dims[dim]; x++)
                    CHECK(t, line[x] == (dim == 1 ? all[f * 7 + x] : all[x * 7 + f]));
            }
        free(vals);
        /* row 4 and column 2 rewritten (the same values on every rank) */
        float row[7], col[9];
        for (int x = 0; x < 7; x++) row[x] = (float)(g * 100 + x);
        for (int x = 0; x < 9; x++) col[x] = (float)(g * 1000 + x);
        OK(t, orn_dsm_write_line(a, 1, 4, row));
        OK(t, orn_dsm_write_line(a, 0, 2, col));
        OK(t, orn_dsm_gather(a, &n, &keys, &vals));
        all = vals;
        for (int x = 0; x < 7; x++) CHECK(t, all[4 * 7 + x] == (x == 2 ? col[4] : row[x]));
        for (int x = 0; x < 9; x++) CHECK(t, all[x * 7 + 2] == col[x]);
        free(vals);
    }
    CHECK(t, orn_dsm_read_line(a, 0, 7, NULL) == ORN_E_ARG); /* no column 7 */
    orn_dsm_clear_error(t->dsm);
    orn_dsm_free(a);
}

/* Whole copies (held.c): read_whole equals the gathered array on every grid; held reads
 * are served from a copy made at the same read on every rank (at one rank: never), equal
 * to the array, rows and columns too; no copy above the hold's limit; none after the
 * release. */
static void test_held(TestEnv *t)
{
    int64_t dims[2] = {9, 7};
    OrnDsmArray *a = NULL;
    OK(t, orn_rt_rand_array(t->rt, ORN_DSM_F64, 2, dims, 11, 1, &a));
    for (int g = 0; g < NGRIDS; g++) {
        grid_part(t, a, g, 3);
        int64_t n = 0, *keys = NULL;
        void *vals = NULL;
        OK(t, orn_dsm_gather(a, &n, &keys, &vals));
        const double *all = vals;
        double whole[63], line[9];
        memset(whole, 0xff, sizeof whole);
        OK(t, orn_dsm_read_whole(a, whole));
        CHECK(t, !memcmp(whole, all, sizeof whole));
        for (int limit = 0; limit < 2; limit++) {
            orn_dsm_hold(a, limit ? 63 * sizeof(double) : 63 * sizeof(double) - 1);
            orn_dsm_hold(a, 0); /* nested: the outer hold's limit stays */
            for (int64_t i = 0; i < 63; i++) {
                int64_t key[2] = {(i * 5) % 9, (i * 3) % 7};
                double x = -1.0;
                OK(t, orn_dsm_get(a, key, &x));
                CHECK(t, x == all[key[0] * 7 + key[1]]);
                int copied = a->held_copy != NULL;
                CHECK(t, copied == (limit && t->size > 1 && g != 5 && i >= 15));
            }
            for (int dim = 0; dim < 2; dim++)
                for (int64_t f = 0; f < dims[1 - dim]; f++) {
                    OK(t, orn_dsm_read_line(a, dim, f, line));
                    for (int64_t x = 0; x < dims[dim]; x++)
                        CHECK(t, line[x] == (dim == 1 ? all[f * 7 + x] : all[x * 7 + f]));
                }
            orn_dsm_release(a);
            CHECK(t, a->held == 1);
            orn_dsm_release(a);
            CHECK(t, a->held == 0 && a->held_copy == NULL);
        }
        free(vals);
        free(keys);
    }
    orn_dsm_free(a);
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    test_dense(&t);
    test_sparse(&t);
    test_balance(&t);
    test_shift(&t);
    test_replica(&t);
    test_slices(&t);
    test_lines(&t);
    test_held(&t);
    return t_finish(&t, "test_arrays");
}
