/* rotation_overlap.c: does the 2-D rotation hide its communication behind computation?
 *
 * SGD matrix factorization on synthetic ratings (strategy 2d: ratings in 2-D blocks; the
 * plan keeps W partitioned with the users and rotates H around the ring of ranks, and the
 * runtime rotates W instead where it is the smaller factor -- more items than users --
 * unless $ORN_ROTATE=planned), timed per epoch two ways, alternating so that machine noise
 * hits both alike:
 *   rotation      the real schedule: the rotated factor's blocks travel (non-blocking
 *                 sends and receives, polled between slices of each block);
 *   compute-only  the same blocks in the same order with the transfers switched off
 *                 (orn_rt_set_nocomm: blocks stay put; the numbers are meaningless, the
 *                 work is the same).
 * It prints the median time per epoch of each and their ratio; it never asserts on timings.
 * With the rotation it also prints the bytes rank 0 sent per epoch and the share of the
 * blocks it received that were complete before it needed them (hidden: xferq.h).
 *
 *   mpiexec -n 2 build/bench/bench_rotation [--users=N] [--items=N] [--per-user=N] [--k=N]
 *           [--epochs=N] [--blocks-per-rank=N] [--slice=N] [--compare] [--timeline=FILE]
 * On the test bed (3 hosts, docs/testbed.md): bench/net_rotation.sh.
 * --compare also runs with one block per rank and dimension (L = 1): the block a rank needs
 * next is the one just being sent, so nothing can be overlapped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsm.h"
#include "rt.h"
#include "timeline.h"
#include "xferq.h"

typedef struct Opt {
    int64_t users, items, per_user;
    int k, epochs, bpr, compare;
    int64_t slice;
    const char *timeline;
} Opt;

/* What one measurement found (medians over epochs; bytes and counts per rotation epoch). */
typedef struct Result {
    double with, without, wait;
    double cwith, cwithout;  /* rank 0's seconds computing (blocks), per epoch */
    double uwith, uwithout;  /* rank 0's processor seconds (user + system), per epoch */
    int64_t steps, tiles1;   /* ring steps per epoch; tiles along the rotated key (blocks x
                                sub-blocks) */
    int rotated;             /* the key whose factor rotated: 1 items (H), 0 users (W) */
    int64_t grid[2], sub[2]; /* tiles and sub-blocks per block along users, items */
    double sent;             /* bytes rank 0 sent */
    double early; /* share of the bytes rank 0 received that had arrived before it waited */
} Result;

typedef struct Env {
    float lr, lam;
    int k;
} Env;

/* The loop body as generated code would write it: W[u, :] and H[i, :] are contiguous rows
 * of the blocks this rank holds (base pointer + offset). */
static int mf_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    const Env *E = env;
    const OrnRtView *W = &b->views[1], *H = &b->views[2];
    float *wb = (float *)W->base, *hb = (float *)H->base;
    const int64_t wlo = W->lo[0], hlo = H->lo[0], sw = W->stride[0], sh = H->stride[0];
    const float *r = b->vals;
    const int K = E->k;
    double loss = 0;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        float *w = wb + (b->keys[2 * e] - wlo) * sw, *h = hb + (b->keys[2 * e + 1] - hlo) * sh;
        float pred = 0;
        for (int q = 0; q < K; q++) pred += w[q] * h[q];
        float err = r[e] - pred;
        loss += (double)err * err;
        for (int q = 0; q < K; q++) {
            float wq = w[q], hq = h[q];
            w[q] = wq + E->lr * (err * hq - E->lam * wq);
            h[q] = hq + E->lr * (err * wq - E->lam * hq);
        }
    }
    b->acc[0].f64 += loss;
    return 0;
}

/* This process's processor time, user and system. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(OrnRtCtx *rt, int status)
{
    if (status) orn_rt_die(rt);
}

/* Median seconds per epoch with and without transfers, for one block count. */
static void measure(OrnRtCtx *rt, const Opt *o, int bpr, OrnDsmArray *R, OrnDsmArray *W,
                    OrnDsmArray *H, Result *res)
{
    static const OrnRtPlanArray arrays[3] = {
        {"ratings", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}},
        {"W", ORN_RT_PARTITIONED, 2, {0, -1, -1, -1}, 0, {0}, {0}},
        {"H", ORN_RT_ROTATED, 2, {1, -1, -1, -1}, 0, {0}, {0}},
    };
    static const OrnRtPlanAcc accs[1] = {{"loss", ORN_RT_ACC_SUM, ORN_RT_F64}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      1,
                      "rotation_overlap.c",
                      1,
                      ORN_RT_2D,
                      ORN_RT_2D,
                      0,
                      2,
                      2,
                      {0, 1},
                      {0, 0},
                      {{0}},
                      0,
                      3,
                      arrays,
                      1,
                      accs,
                      0};
    orn_rt_set_blocks_per_rank(rt, bpr);
    Env env = {0.005f, 0.01f, o->k};
    OrnRtArg args[3] = {{R, NULL}, {W, NULL}, {H, NULL}};
    double *t_with = calloc((size_t)o->epochs, sizeof *t_with);
    double *t_without = calloc((size_t)o->epochs, sizeof *t_without);
    double waited = 0, sent = 0, cw = 0, cwo = 0, uw = 0, uwo = 0;
    OrnDsmXferStats x0 = {0}, x1 = {0};
    /* One warm-up epoch of each: partitions are made once and reused afterwards. */
    for (int e = -1; e < o->epochs; e++) {
        for (int mode = 0; mode < 2; mode++) {
            OrnRtScalar acc[1] = {{.f64 = 0}};
            OrnRtLoop loop = {&plan, args, mf_body, NULL, &env, acc, 0};
            orn_rt_set_nocomm(rt, mode == 1);
            die(rt, orn_dsm_barrier(orn_rt_dsm(rt)));
            if (e == 0 && mode == 0) orn_dsm_xfer_stats(orn_rt_dsm(rt), &x0);
            double u0 = cpu_seconds();
            die(rt, orn_rt_run(rt, &loop));
            double u = cpu_seconds() - u0;
            OrnRtStats st;
            orn_rt_stats(rt, &st);
            /* The epoch takes as long as its slowest rank. */
            double t = st.total;
            die(rt, orn_dsm_allreduce_f64(orn_rt_dsm(rt), &t, 1, ORN_DSM_MAX));
            if (e < 0) continue;
            if (mode == 0) {
                t_with[e] = t;
                waited += st.wait;
                cw += st.compute;
                uw += u;
                res->steps = st.steps;
                res->rotated = (int)st.rotated_key;
                res->tiles1 = st.grid[res->rotated == 0 ? 0 : 1];
                for (int d = 0; d < 2; d++) res->grid[d] = st.grid[d], res->sub[d] = st.sub[d];
                sent += (double)st.sent;
                orn_dsm_xfer_stats(orn_rt_dsm(rt), &x1);
            } else {
                t_without[e] = t;
                cwo += st.compute;
                uwo += u;
            }
        }
    }
    orn_rt_set_nocomm(rt, 0);
    res->with = median(t_with, o->epochs);
    res->without = median(t_without, o->epochs);
    res->wait = waited / o->epochs;
    res->sent = sent / o->epochs;
    res->cwith = cw / o->epochs;
    res->cwithout = cwo / o->epochs;
    res->uwith = uw / o->epochs;
    res->uwithout = uwo / o->epochs;
    int64_t got = x1.received - x0.received;
    res->early = got > 0 ? (double)(x1.early_bytes - x0.early_bytes) / (double)got : 1.0;
    free(t_with);
    free(t_without);
}

static int64_t opt_int(const char *arg, const char *name, int64_t cur)
{
    size_t n = strlen(name);
    if (!strncmp(arg, name, n) && arg[n] == '=') return strtoll(arg + n + 1, NULL, 10);
    return cur;
}

int main(int argc, char **argv)
{
    OrnRtCtx *rt = NULL;
    if (orn_rt_init(&argc, &argv, &rt) != ORN_OK) return 1;
    OrnDsmCtx *dsm = orn_rt_dsm(rt);
    int me = orn_rt_rank(rt), P = orn_rt_size(rt);
    Opt o = {40000, 60000, 100, 32, 7, 2, 0, 4096, NULL};
    for (int i = 1; i < argc; i++) {
        o.users = opt_int(argv[i], "--users", o.users);
        o.items = opt_int(argv[i], "--items", o.items);
        o.per_user = opt_int(argv[i], "--per-user", o.per_user);
        o.k = (int)opt_int(argv[i], "--k", o.k);
        o.epochs = (int)opt_int(argv[i], "--epochs", o.epochs);
        o.bpr = (int)opt_int(argv[i], "--blocks-per-rank", o.bpr);
        o.slice = opt_int(argv[i], "--slice", o.slice);
        if (!strncmp(argv[i], "--timeline=", 11)) o.timeline = argv[i] + 11;
        if (!strcmp(argv[i], "--compare")) o.compare = 1;
    }
    if (o.per_user >= o.items) o.per_user = o.items - 1;
    orn_rt_set_slice(rt, o.slice);

    /* Ratings: user u rates per_user items (u * 7919 + j * 104729) mod items (distinct:
     * 104729 is prime; items must not be a multiple of it). Rank r makes users r, r+P, ... */
    int64_t mine = 0;
    for (int64_t u = me; u < o.users; u += P) mine += o.per_user;
    int64_t *keys = malloc((size_t)(mine ? mine : 1) * 16);
    float *vals = malloc((size_t)(mine ? mine : 1) * 4);
    int64_t n = 0;
    for (int64_t u = me; u < o.users; u += P)
        for (int64_t j = 0; j < o.per_user; j++) {
            keys[2 * n] = u;
            keys[2 * n + 1] = (u * 7919 + j * 104729) % o.items;
            vals[n++] = 1.0f + (float)((u * 31 + j * 17) % 9) * 0.5f;
        }
    int64_t rdims[2] = {o.users, o.items}, wdims[2] = {o.users, o.k}, hdims[2] = {o.items, o.k};
    OrnDsmArray *R = NULL, *W = NULL, *H = NULL;
    die(rt, orn_dsm_from_elements(dsm, ORN_DSM_F32, 2, rdims, 1, n, keys, vals, NULL, NULL, &R));
    free(keys);
    free(vals);
    die(rt, orn_rt_rand_array(rt, ORN_DSM_F32, 2, wdims, 1, 0, &W));
    die(rt, orn_rt_rand_array(rt, ORN_DSM_F32, 2, hdims, 2, 0, &H));

    if (o.timeline) die(rt, orn_dsm_timeline_start(dsm, o.timeline, 0));
    Result res;
    measure(rt, &o, o.bpr, R, W, H, &res);
    int64_t nb1 = (int64_t)o.bpr * P;
    /* The runtime rotates the smaller factor (layout.c; $ORN_ROTATE=planned: H) */
    int64_t rows = res.rotated == 0 ? o.users : o.items;
    double block_mb = (double)rows / (double)nb1 * o.k * 4 / 1e6;
    if (me == 0) {
        printf("rotation_overlap: %d ranks, %lld users x %lld items, %lld ratings, K = %d\n", P,
               (long long)o.users, (long long)o.items, (long long)R->nnz, o.k);
        printf("  %s rotates: %d blocks of %.2f MB (%lld tiles of %.2f MB with sub-blocks), %lld "
               "ring steps per epoch (%lld slots per rank), each block moves %d times per epoch\n",
               res.rotated == 0 ? "W" : "H", (int)nb1, block_mb, (long long)res.tiles1,
               (double)rows / (double)(res.tiles1 ? res.tiles1 : 1) * o.k * 4 / 1e6,
               (long long)res.steps, (long long)(res.steps / P), P);
        printf("  tiles %lld x %lld (users x items), sub-blocks per block %lld x %lld\n",
               (long long)res.grid[0], (long long)res.grid[1], (long long)res.sub[0],
               (long long)res.sub[1]);
        printf("  blocks per rank %d:\n", o.bpr);
        printf("    compute-only   %.4f s/epoch (median of %d)\n", res.without, o.epochs);
        printf("    rotation       %.4f s/epoch (median of %d), waiting for blocks %.4f s\n",
               res.with, o.epochs, res.wait);
        printf("    sent by rank 0 %.2f MB/epoch, received before needed %.0f %%\n", res.sent / 1e6,
               100 * res.early);
        printf("    rank 0 computing %.4f s/epoch in rotation, %.4f s in compute-only; processor "
               "%.4f s and %.4f s\n",
               res.cwith, res.cwithout, res.uwith, res.uwithout);
        printf("    ratio rotation / compute-only = %.3f\n", res.with / res.without);
        fflush(stdout);
    }
    if (o.compare) {
        measure(rt, &o, 1, R, W, H, &res);
        if (me == 0) {
            printf("  blocks per rank 1 (L = 1, no overlap possible):\n");
            printf("    compute-only   %.4f s/epoch\n", res.without);
            printf("    rotation       %.4f s/epoch, waiting for blocks %.4f s\n", res.with,
                   res.wait);
            printf("    ratio rotation / compute-only = %.3f\n", res.with / res.without);
        }
    }
    if (o.timeline) die(rt, orn_dsm_timeline_finish(dsm, NULL));
    orn_dsm_free(R);
    orn_dsm_free(W);
    orn_dsm_free(H);
    orn_rt_finalize(rt);
    return 0;
}
