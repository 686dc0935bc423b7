/* test_window.c: dense windows of prefetched arrays (runtime/window.c). A 1d loop reads a
 * 1-D and a 2-D prefetched array at scattered keys, through the boxes generated code uses
 * (orn_rt_box, orn_rt_ld_*), with a prefetch pass announcing them, and writes a sum into
 * the iteration space. Every window path must give the serial result bit for bit: the
 * default cap (copies of whole arrays), a cap of 0 (the prefetch cache), a cap of 1 KiB
 * (copies of some rows only, the rest through the cache), 2 KiB (copies that grow from
 * block to block), and no prefetch pass (on-demand reads). The arrays change between loops, so a
 * copy must not outlive its loop; 1, 2 and 5 blocks per rank exercise reuse across blocks. */
#include <stdlib.h>

#include "harness.h"

enum { N = 3000, M = 700, R = 257, C = 3 };

static void keys_of(int64_t k, int64_t *a, int64_t *r)
{
    *a = (k * M / N + (k * 7919 + 13) % 40) % M; /* near k: a block reads a few rows */
    *r = (k * k + 5 * k) % R;
}

static int body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    const OrnRtBox A = orn_rt_box(&b->views[1]), W = orn_rt_box(&b->views[2]);
    double *v = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1], a, r;
        orn_rt_block_key(b, e, k);
        keys_of(k[0], &a, &r);
        double s = orn_rt_ld_f32(&A, 1, (const int64_t[1]){a});
        s += orn_rt_ld_f32(&A, 1, (const int64_t[1]){M - 1 - a});
        for (int64_t j = 0; j < C; j++)
            s = s * 0.5 + orn_rt_ld_f64(&W, 2, (const int64_t[2]){r, j});
        v[e] = s;
    }
    return 0;
}

static int prefetch(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[1], a, r;
        orn_rt_block_key(b, e, k);
        keys_of(k[0], &a, &r);
        orn_rt_prefetch(&b->views[1], (const int64_t[1]){a});
        orn_rt_prefetch(&b->views[1], (const int64_t[1]){M - 1 - a});
        for (int64_t j = 0; j < C; j++) orn_rt_prefetch(&b->views[2], (const int64_t[2]){r, j});
    }
    return 0;
}

static void expect(const float *a, const double *w, double *out)
{
    for (int64_t k = 0; k < N; k++) {
        int64_t x, r;
        keys_of(k, &x, &r);
        double s = a[x];
        s += a[M - 1 - x];
        for (int64_t j = 0; j < C; j++) s = s * 0.5 + w[r * C + j];
        out[k] = s;
    }
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    static const OrnRtPlanArray arrays[3] = {
        {"I", ORN_RT_PARTITIONED, 1, {0, -1, -1, -1}, 0, {0}, {0}},
        {"A", ORN_RT_PREFETCHED, 1, {-1, -1, -1, -1}, 1, {0}, {0}},
        {"W", ORN_RT_PREFETCHED, 2, {-1, -1, -1, -1}, 1, {0}, {0}},
    };
    OrnRtPlan plan = {.version = ORN_RT_PLAN_VERSION,
                      .loop_id = 1,
                      .file = "test_window.c",
                      .line = 1,
                      .strategy = ORN_RT_1D,
                      .inner = ORN_RT_1D,
                      .nkeys = 1,
                      .npart = 1,
                      .narrays = 3,
                      .arrays = arrays};
    int64_t dn[1] = {N}, da[1] = {M}, dw[2] = {R, C};
    static const char *caps[5] = {"256", "0", "0.001", "0.002", "256"};
    double *want = malloc(N * sizeof *want);
    for (int rep = 0; rep < 15; rep++) {
        int mode = rep % 5, bpr = 1 + (rep / 5) % 3 * ((rep / 5) % 3); /* 1, 2, 5 */
        setenv("ORN_WINDOW_MB", caps[mode], 1);
        orn_rt_set_blocks_per_rank(t.rt, bpr);
        OrnDsmArray *I = NULL, *A = NULL, *W = NULL;
        OK(&t, orn_dsm_dense(t.dsm, ORN_DSM_F64, 1, dn, &I));
        OK(&t, orn_rt_rand_array(t.rt, ORN_DSM_F32, 1, da, 10 + (uint64_t)rep, 0, &A));
        OK(&t, orn_rt_rand_array(t.rt, ORN_DSM_F64, 2, dw, 20 + (uint64_t)rep, 1, &W));
        OrnRtArg args[3] = {{I, NULL}, {A, NULL}, {W, NULL}};
        OrnRtLoop loop = {&plan, args, body, mode == 4 ? NULL : prefetch, NULL, NULL, 0};
        for (int again = 0; again < 2; again++) {
            if (again) { /* new values: nothing may be served from the previous loop */
                OrnDsmArray *A2 = NULL;
                OK(&t, orn_rt_rand_array(t.rt, ORN_DSM_F32, 1, da, 99 + (uint64_t)rep, 0, &A2));
                int64_t n, *keys = NULL;
                void *vals = NULL;
                OK(&t, orn_dsm_gather(A2, &n, &keys, &vals));
                for (int64_t i = 0; i < n; i++) {
                    int64_t key[1] = {i};
                    OK(&t, orn_dsm_set(A, key, (float *)vals + i));
                }
                free(keys);
                free(vals);
                orn_dsm_free(A2);
            }
            OK(&t, orn_rt_run(t.rt, &loop));
            int64_t n, *keys = NULL;
            void *va = NULL, *vw = NULL, *vi = NULL;
            OK(&t, orn_dsm_gather(A, &n, &keys, &va));
            free(keys);
            OK(&t, orn_dsm_gather(W, &n, &keys, &vw));
            free(keys);
            OK(&t, orn_dsm_gather(I, &n, &keys, &vi));
            free(keys);
            expect(va, vw, want);
            CHECK(&t, n == N && !memcmp(vi, want, N * sizeof *want));
            OrnRtStats st;
            orn_rt_stats(t.rt, &st);
            CHECK(&t, t.size > 1 || (st.prefetched == 0 && st.misses == 0));
            free(va);
            free(vw);
            free(vi);
        }
        orn_dsm_free(I);
        orn_dsm_free(A);
        orn_dsm_free(W);
    }
    free(want);
    unsetenv("ORN_WINDOW_MB");
    return t_finish(&t, "test_window");
}
