/* test_local.c: unit tests of the DSM and runtime logic in one process, without MPI (the
 * local transport): Philox known answers, random streams, partitions, collectives, a
 * loader, save/load, and loops of each strategy on a single rank; the loaders' fast
 * decimal reading against strtof / strtod. */
#include <math.h>

#include "dsm_int.h"
#include "harness.h"
#include "transport.h"

static void test_philox(TestEnv *t)
{
    /* Random123 tests/kat_vectors, "philox4x32 10" lines: ctr[4] key[2] -> out[4]. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        orn_rt_philox4x32_10(&kat[i][0], &kat[i][4], out);
        CHECK(t, !memcmp(out, &kat[i][6], sizeof out));
    }
    /* Streams: deterministic, in range, roughly right moments. */
    double s = 0, s2 = 0;
    int64_t hist[7] = {0};
    for (int64_t i = 0; i < 20000; i++) {
        int64_t key[2] = {i, 3};
        OrnRtRng g, h;
        orn_rt_rng_init(&g, 42, 7, key, 2);
        orn_rt_rng_init(&h, 42, 7, key, 2);
        double u = orn_rt_rng_uniform(&g), z = orn_rt_rng_normal(&g);
        CHECK(t, u == orn_rt_rng_uniform(&h) && z == orn_rt_rng_normal(&h));
        CHECK(t, u >= 0.0 && u < 1.0);
        s += z;
        s2 += z * z;
        int64_t r = orn_rt_rng_int(&g, 7);
        CHECK(t, r >= 0 && r < 7);
        hist[r]++;
    }
    CHECK(t, fabs(s / 20000) < 0.05 && fabs(s2 / 20000 - 1.0) < 0.05);
    for (int r = 0; r < 7; r++) CHECK(t, hist[r] > 2500 && hist[r] < 3200);
    /* Different keys, streams and seeds differ. */
    int64_t k1[1] = {1}, k2[1] = {2};
    OrnRtRng a, b, c, d;
    orn_rt_rng_init(&a, 1, 1, k1, 1);
    orn_rt_rng_init(&b, 1, 1, k2, 1);
    orn_rt_rng_init(&c, 1, 2, k1, 1);
    orn_rt_rng_init(&d, 2, 1, k1, 1);
    uint32_t x = orn_rt_rng_u32(&a);
    CHECK(t, x != orn_rt_rng_u32(&b) && x != orn_rt_rng_u32(&c) && x != orn_rt_rng_u32(&d));
    CHECK(t, orn_rt_rand_at(5, 123, 0) == orn_rt_rand_at(5, 123, 0));
    CHECK(t, orn_rt_rand_at(5, 123, 0) != orn_rt_rand_at(5, 124, 0));
}

static void test_partition(TestEnv *t)
{
    OrnDsmPart p;
    int nb[3] = {3, 1, 4};
    OK(t, orn_dsm_part_init(&p, 3, nb));
    CHECK(t, p.ntiles == 12);
    orn_dsm_bounds_uniform(p.bounds[0], 10, 3);
    orn_dsm_bounds_uniform(p.bounds[1], 5, 1);
    orn_dsm_bounds_uniform(p.bounds[2], 2, 4); /* empty tiles: 0 0 1 1 2 */
    CHECK(t, p.bounds[0][1] == 3 && p.bounds[0][2] == 6 && p.bounds[0][3] == 10);
    CHECK(t, p.bounds[2][1] == 0 && p.bounds[2][2] == 1 && p.bounds[2][4] == 2);
    for (int64_t i = 0; i < 10; i++)
        for (int64_t k = 0; k < 2; k++) {
            int64_t key[3] = {i, 4, k};
            int64_t tl = orn_dsm_part_tile_of(&p, key);
            int g[3];
            orn_dsm_part_unravel(&p, tl, g);
            CHECK(t, orn_dsm_part_ravel(&p, g) == tl);
            CHECK(t, p.bounds[0][g[0]] <= i && i < p.bounds[0][g[0] + 1]);
            CHECK(t, p.bounds[2][g[2]] <= k && k < p.bounds[2][g[2] + 1]);
        }
    OrnDsmPart q;
    OK(t, orn_dsm_part_copy(&q, &p));
    CHECK(t, orn_dsm_part_equal(&p, &q));
    q.owner[3] = 1;
    CHECK(t, !orn_dsm_part_equal(&p, &q));
    orn_dsm_part_free(&p);
    orn_dsm_part_free(&q);
}

static void test_coll(TestEnv *t)
{
    char msg[5] = "abcd";
    size_t sc[1] = {5}, rc[1];
    void *r = NULL;
    OK(t, orn_dsm_alltoallv(t->dsm, msg, sc, &r, rc, "test"));
    CHECK(t, rc[0] == 5 && !memcmp(r, "abcd", 5));
    free(r);
    OK(t, orn_dsm_barrier(t->dsm));
    int64_t v[2] = {3, -4};
    OK(t, orn_dsm_allreduce_i64(t->dsm, v, 2, ORN_DSM_MAX));
    CHECK(t, v[0] == 3 && v[1] == -4);
    /* self messages through the local transport, matched by tag in order */
    OrnDsmReq *q[3] = {NULL, NULL, NULL};
    int a = 1, b = 2, x = 0, y = 0;
    OK(t, orn_dsm_isend(t->dsm, &a, sizeof a, 0, ORN_TAG_TEST, &q[0]));
    OK(t, orn_dsm_isend(t->dsm, &b, sizeof b, 0, ORN_TAG_TEST, &q[1]));
    OK(t, orn_dsm_irecv(t->dsm, &x, sizeof x, 0, ORN_TAG_TEST, &q[2]));
    OK(t, orn_dsm_waitall(t->dsm, q, NULL, 3, "self"));
    OK(t, orn_dsm_irecv(t->dsm, &y, sizeof y, 0, ORN_TAG_TEST, &q[0]));
    OK(t, orn_dsm_waitall(t->dsm, q, NULL, 1, "self"));
    CHECK(t, x == 1 && y == 2);
    CHECK(t, orn_dsm_isend(t->dsm, &a, sizeof a, 1, ORN_TAG_TEST, &q[0]) == ORN_E_ARG);
    /* A receive nobody sends: the timeout names the operation. */
    orn_dsm_set_timeout(t->dsm, 0.05);
    OK(t, orn_dsm_irecv(t->dsm, &x, sizeof x, 0, ORN_TAG_TEST + 1, &q[0]));
    int peer = 0;
    CHECK(t, orn_dsm_waitall(t->dsm, q, &peer, 1, "a lonely receive") == ORN_E_TIMEOUT);
    CHECK(t, strstr(orn_dsm_error(t->dsm), "waiting for peer 0 (a lonely receive)"));
    orn_dsm_set_timeout(t->dsm, 60);
}

static int sum_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    (void)rt;
    (void)env;
    OrnRtView *H = &b->views[1];
    const float *v = b->vals;
    for (int64_t e = b->first; e < b->first + b->count; e++) {
        int64_t k[2];
        orn_rt_block_key(b, e, k);
        int64_t hk[1] = {k[1]};
        float *h = orn_rt_wptr(H, hk);
        *h += v[e];
        b->acc[0].f64 += v[e];
    }
    return 0;
}

static void test_loops(TestEnv *t)
{
    char path[512];
    t_path(t, path, sizeof path, "local.triplets");
    t_write_file(t, path, "0 1 1.5\n# c\n2 0 2\n1 1 0.25\n3 3 4\n");
    OrnDsmArray *R = NULL, *H = NULL;
    OK(t, orn_dsm_load_triplets(t->dsm, path, 0, &R));
    CHECK(t, R->nnz == 4 && R->dims[0] == 4 && R->dims[1] == 4);
    int64_t hd[1] = {4};
    static const OrnRtPlanArray arrays[2] = {
        {"R", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}},
        {"H", ORN_RT_ROTATED, 1, {1, -1, -1, -1}, 0, {0}, {0}}};
    static const OrnRtPlanAcc accs[1] = {{"s", ORN_RT_ACC_SUM, ORN_RT_F64}};
    OrnRtStrategy strategies[4] = {ORN_RT_2D, ORN_RT_2D_ORDERED, ORN_RT_1D, ORN_RT_SERIAL};
    for (int s = 0; s < 4; s++) {
        OK(t, orn_dsm_dense(t->dsm, ORN_DSM_F32, 1, hd, &H));
        OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                          1,
                          "local",
                          1,
                          strategies[s],
                          strategies[s],
                          0,
                          2,
                          2,
                          {0, 1},
                          {0, 0},
                          {{0}},
                          0,
                          2,
                          arrays,
                          1,
                          accs,
                          0};
        OrnRtPlanArray a2[2] = {arrays[0], arrays[1]};
        if (s >= 1) a2[1].role = s == 1 ? ORN_RT_REMOTE : ORN_RT_PARTITIONED;
        if (s == 2) {
            plan.npart = 1;
            plan.part_dims[0] = 1;
        }
        if (s == 3) plan.npart = 0;
        plan.arrays = a2;
        OrnRtArg args[2] = {{R, NULL}, {H, NULL}};
        OrnRtScalar acc[1] = {{.f64 = 0}};
        OrnRtLoop loop = {&plan, args, sum_body, NULL, NULL, acc, 0};
        OK(t, orn_rt_run(t->rt, &loop));
        CHECK(t, acc[0].f64 == 7.75);
        int64_t n, *k;
        void *v;
        OK(t, orn_dsm_gather(H, &n, &k, &v));
        float *h = v;
        CHECK(t, h[0] == 2.0f && h[1] == 1.75f && h[2] == 0.0f && h[3] == 4.0f);
        free(v);
        orn_dsm_free(H);
    }
    /* save/load in one process */
    char bin[512];
    snprintf(bin, sizeof bin, "%s/local.np1.bin", t->dir);
    OK(t, orn_dsm_save(R, bin));
    OrnDsmArray *R2 = NULL;
    OK(t, orn_dsm_load(t->dsm, bin, ORN_DSM_F32, 0, &R2));
    double d1, d2;
    OK(t, orn_dsm_dot(R, R, &d1));
    OK(t, orn_dsm_dot(R2, R2, &d2));
    CHECK(t, d1 == d2 && R2->nnz == 4);
    orn_dsm_free(R2);
    orn_dsm_free(R);
}

/* orn_rt_box_clip_win: the values v of [lo, hi) kept are exactly those, in one interval,
 * for which every v + s * n + off (n in [nlo, nhi)) lies in the box; an empty window clips
 * nothing; offsets beyond +-2^62 keep nothing. Brute force over small boxes and windows. */
static void test_clip_win(TestEnv *t)
{
    OrnRtBox x;
    memset(&x, 0, sizeof x);
    int bad = 0;
    for (int64_t blo = -3; blo <= 3; blo += 3)
        for (uint64_t bn = 0; bn <= 6; bn += 3)
            for (int64_t nlo = -3; nlo <= 3; nlo++)
                for (int64_t nhi = nlo - 1; nhi <= nlo + 4; nhi++)
                    for (int neg = 0; neg < 2; neg++)
                        for (int64_t off = -2; off <= 2; off += 2) {
                            x.lo[0] = blo;
                            x.n[0] = bn;
                            int64_t lo = -12, hi = 12, f0 = lo, f1 = hi;
                            orn_rt_box_clip_win(&x, 0, nlo, nhi, neg, off, &f0, &f1);
                            bad += f0 > f1 || (f0 < f1 && (f0 < lo || f1 > hi));
                            for (int64_t v = lo; v < hi; v++) {
                                int in = 1;
                                for (int64_t m = nlo; m < nhi; m++) {
                                    int64_t key = v + (neg ? -m : m) + off;
                                    in &= key >= blo && key < blo + (int64_t)bn;
                                }
                                bad += in != (v >= f0 && v < f1);
                            }
                        }
    CHECK(t, bad == 0);
    /* orn_rt_win_halo: the smallest widths that hold every offset c + w (both sides) */
    for (int64_t nlo = -4; nlo <= 4; nlo++)
        for (int64_t nhi = nlo - 1; nhi <= nlo + 5; nhi++)
            for (int neg = 0; neg < 2; neg++)
                for (int64_t c = -3; c <= 3; c++) {
                    int64_t need_lo = c < 0 ? -c : 0, need_hi = c > 0 ? c : 0;
                    for (int64_t m = nlo; m < nhi; m++) {
                        int64_t o = c + (neg ? -m : m);
                        if (-o > need_lo) need_lo = -o;
                        if (o > need_hi) need_hi = o;
                    }
                    bad += orn_rt_win_halo(nlo, nhi, neg, c, 0) != need_lo ||
                           orn_rt_win_halo(nlo, nhi, neg, c, 1) != need_hi;
                }
    CHECK(t, bad == 0);
    /* shifts (a window of one value): the same answers as the window [v, v + 1) */
    for (int64_t v = -5; v <= 5; v++)
        for (int64_t c = -3; c <= 3; c++) {
            bad += orn_rt_shift_halo(v, 0, c, 0) != orn_rt_win_halo(v, v + 1, 0, c, 0) ||
                   orn_rt_shift_halo(v, 0, c, 1) != orn_rt_win_halo(v, v + 1, 0, c, 1);
            x.lo[0] = 2;
            x.n[0] = 6;
            int64_t a0 = -12, a1 = 12, b0 = -12, b1 = 12;
            orn_rt_box_clip_shift(&x, 0, v, c, &a0, &a1);
            orn_rt_box_clip_win(&x, 0, v, v + 1, 0, c, &b0, &b1);
            bad += a0 != b0 || a1 != b1;
        }
    CHECK(t, bad == 0);
    /* a window moved by a shift known at run time (X[i + sh - k]): the offsets sh +- c,
     * saturated, and a window clipped with them is the window clipped at offset sh + c */
    const int64_t big = INT64_C(1) << 62;
    bad += orn_rt_shift_sat(5, 0, -1) != 4 || orn_rt_shift_sat(5, 1, -1) != -6 ||
           orn_rt_shift_sat(INT64_MAX, 0, 3) != big || orn_rt_shift_sat(INT64_MIN, 0, -3) != -big ||
           orn_rt_shift_sat(INT64_MIN, 1, 0) != big || orn_rt_shift_sat(0, 0, INT64_MIN) != -big;
    for (int64_t sh = -4; sh <= 4; sh++)
        for (int64_t c = -2; c <= 2; c++) {
            x.lo[0] = -1;
            x.n[0] = 7;
            int64_t a0 = -12, a1 = 12, b0 = -12, b1 = 12;
            orn_rt_box_clip_win(&x, 0, 0, 3, 1, orn_rt_shift_sat(sh, 0, c), &a0, &a1);
            orn_rt_box_clip_win(&x, 0, 0, 3, 1, sh + c, &b0, &b1);
            bad += a0 != b0 || a1 != b1;
        }
    x.lo[0] = 0;
    x.n[0] = 100;
    int64_t g0 = 0, g1 = 50; /* a shift beyond the saturation clips everything away */
    orn_rt_box_clip_win(&x, 0, 0, 3, 0, orn_rt_shift_sat(INT64_MAX, 0, 0), &g0, &g1);
    bad += g0 != g1;
    CHECK(t, bad == 0);
    int64_t f0 = 0, f1 = 50;
    orn_rt_box_clip_win(&x, 0, 0, INT64_MAX, 0, 0, &f0, &f1);
    CHECK(t, f0 == f1);
}

/* orn_dsm_fast_real (dsm/loader.c) against strtof and strtod: 400,000 strings from a
 * grammar of decimals (sign, 0 to 24 digits with leading zeros, a point, 0 to 24 fraction
 * digits, an exponent of 0 to 3 digits, a stray character now and then). Where the fast
 * path takes a string, strtof / strtod must read all of it and give the same bits; the
 * fast path must take most of the plain ones (else this tests nothing). */
static void test_fast_real(TestEnv *t)
{
    uint64_t z = 12345;
    int took = 0, plain = 0, bad = 0;
    for (int k = 0; k < 400000; k++) {
        char s[96];
        size_t n = 0;
#define RND(m) ((z = z * 6364136223846793005ULL + 1442695040888963407ULL), (int)((z >> 33) % (m)))
        int r = RND(8);
        if (r == 0) s[n++] = '-';
        if (r == 1) s[n++] = '+';
        int lead = RND(4) == 0 ? RND(4) : 0, id = RND(4) == 0 ? RND(25) : RND(4);
        int fd = RND(3) == 0 ? RND(25) : RND(9), dot = RND(6) != 0;
        for (int i = 0; i < lead; i++) s[n++] = '0';
        for (int i = 0; i < id; i++) s[n++] = (char)('0' + RND(10));
        if (dot) s[n++] = '.';
        for (int i = 0; i < fd && dot; i++) s[n++] = (char)('0' + RND(10));
        if (RND(4) == 0) {
            s[n++] = RND(2) ? 'e' : 'E';
            int es = RND(3);
            if (es == 1) s[n++] = '-';
            if (es == 2) s[n++] = '+';
            int ed = RND(4);
            for (int i = 0; i < ed; i++) s[n++] = (char)('0' + RND(i == 0 ? 4 : 10));
        }
        if (RND(50) == 0) {
            int at = RND((int)n + 1);
            s[at] = "x.e-+ a"[RND(7)];
        }
#undef RND
        s[n] = '\0';
        plain += n < 12 && !strpbrk(s, "eExa ");
        for (int f32 = 0; f32 < 2; f32++) {
            char got[8];
            if (!orn_dsm_fast_real(s, n, f32, got)) continue;
            took += f32;
            char *end;
            if (f32) {
                float want = strtof(s, &end);
                bad += *end != '\0' || memcmp(got, &want, sizeof want) != 0;
            } else {
                double want = strtod(s, &end);
                bad += *end != '\0' || memcmp(got, &want, sizeof want) != 0;
            }
            if (bad == 1) fprintf(stderr, "fast_real: '%s' (f32 %d) differs\n", s, f32), bad++;
        }
    }
    CHECK(t, bad == 0);
    CHECK(t, took > plain / 2);
    /* edge cases: signs of zero, bounds of the fast path, forms it leaves to strtof */
    float f;
    double d;
    CHECK(t, orn_dsm_fast_real("-0.0", 4, 1, &f) && f == 0 && signbit(f));
    CHECK(t, orn_dsm_fast_real("16777216", 8, 1, &f) && f == 16777216.0f);
    CHECK(t, !orn_dsm_fast_real("16777217", 8, 1, &f)); /* beyond 2^24: strtof rounds it */
    CHECK(t, orn_dsm_fast_real("1e22", 4, 0, &d) && d == 1e22);
    CHECK(t, !orn_dsm_fast_real("1e23", 4, 0, &d));
    CHECK(t, orn_dsm_fast_real(".5", 2, 1, &f) && f == 0.5f);
    CHECK(t, orn_dsm_fast_real("5.", 2, 0, &d) && d == 5.0);
    const char *no[] = {"", ".", "-", "1e", "1e+", "1.2.3", "0x10", "inf", "nan", " 1", "1 "};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CHECK(t, !orn_dsm_fast_real(no[i], strlen(no[i]), 0, &d));
}

int main(int argc, char **argv)
{
    TestEnv t;
    memset(&t, 0, sizeof t);
    if (orn_rt_init_local(&t.rt) != ORN_OK) return 1;
    t.dsm = orn_rt_dsm(t.rt);
    t.rank = 0;
    t.size = 1;
    t.dir = argc > 1 ? argv[1] : ".";
    test_philox(&t);
    test_partition(&t);
    test_coll(&t);
    test_loops(&t);
    test_clip_win(&t);
    test_fast_real(&t);
    printf("test_local: %d checks passed\n", t.checks);
    orn_rt_finalize(t.rt);
    return 0;
}
