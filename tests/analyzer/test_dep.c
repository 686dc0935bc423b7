/* test_dep.c: the dependence test (analyzer/dep.c): hand-written cases, then randomized
 * cross-checks against brute force on small iteration spaces.
 *
 * Brute force enumerates every pair of iterations k, k' in [0, N)^n, evaluates both
 * subscript lists and records k' - k wherever all dimensions agree. The analysis assumes
 * unbounded keys, so it must
 *   - be sound: every brute-force distance lies in the reported ranges, and "independent"
 *     only when brute force finds nothing;
 *   - be exact: "dependent" only when a solution exists (found in the window, or in a
 *     larger one for the few cases whose smallest solution lies outside), and every finite
 *     end of a reported range is attained by some solution.
 *
 * usage: test_dep [ROUNDS [SEED]]   (one round: about 5000 random pairs) */
#include "dep.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- helpers ---- */

static OrnSub aff(int key, int64_t a, int64_t c)
{
    OrnSub s = {.kind = ORN_SUB_AFFINE, .key = key, .a = a, .c = c, .varies = true};
    return s;
}

static OrnSub cst(int64_t c)
{
    OrnSub s = {.kind = ORN_SUB_CONST, .c = c};
    return s;
}

static OrnSub all(void)
{
    OrnSub s = {.kind = ORN_SUB_ALL};
    return s;
}

static OrnSub unk(void)
{
    OrnSub s = {.kind = ORN_SUB_UNKNOWN, .varies = true};
    return s;
}

static const char *vstr(const OrnDepVec *v)
{
    static char buf[8][128];
    static int i;
    i = (i + 1) % 8;
    return orn_dep_vec_str(v, buf[i], sizeof buf[i]);
}

static bool dep(int n, int m, const OrnSub *a, const OrnSub *b, const char *want)
{
    OrnDepVec v;
    bool d = orn_dep_test(n, m, a, b, &v);
    if (!want) {
        CHECK_MSG(!d, "expected independent, got %s", vstr(&v));
        return !d;
    }
    CHECK_MSG(d, "expected %s, got independent", want);
    if (!d) return false;
    CHECK_MSG(strcmp(vstr(&v), want) == 0, "expected %s, got %s", want, vstr(&v));
    return true;
}

static void test_hand(void)
{
    OrnDepVec v;
    /* A[2*i] vs A[2*i+1]: never the same element */
    dep(1, 1, (OrnSub[]){aff(0, 2, 0)}, (OrnSub[]){aff(0, 2, 1)}, NULL);
    /* A[i] written at k, A[i-1] read at k': k' = k + 1 */
    dep(1, 1, (OrnSub[]){aff(0, 1, 0)}, (OrnSub[]){aff(0, 1, -1)}, "[1]");
    /* U[i-1, j] at k vs U[i, j] at k' */
    dep(2, 2, (OrnSub[]){aff(0, 1, -1), aff(1, 1, 0)}, (OrnSub[]){aff(0, 1, 0), aff(1, 1, 0)},
        "[-1, 0]");
    /* W[:, u] in a (u, i) loop */
    dep(2, 2, (OrnSub[]){all(), aff(0, 1, 0)}, (OrnSub[]){all(), aff(0, 1, 0)}, "[0, *]");
    /* doc_topic[t, d], t unknown, in a (d, w, j) loop */
    dep(3, 2, (OrnSub[]){unk(), aff(0, 1, 0)}, (OrnSub[]){unk(), aff(0, 1, 0)}, "[0, *, *]");
    /* A[2*i] vs A[i]: k' = 2k, distance k >= 0 */
    dep(1, 1, (OrnSub[]){aff(0, 2, 0)}, (OrnSub[]){aff(0, 1, 0)}, "[0+]");
    /* A[2*i+2] vs A[i]: k' = 2k + 2, distance k + 2 >= 2 */
    OrnSub s1[] = {aff(0, 2, 2)}, s2[] = {aff(0, 1, 0)};
    CHECK(orn_dep_test(1, 1, s1, s2, &v) && v.d[0].lo == 2 && v.d[0].hi == ORN_DEP_PINF);
    /* A[6i+1] vs A[4i+3]: i = 2t+1, i' = 3t+1 */
    dep(1, 1, (OrnSub[]){aff(0, 6, 1)}, (OrnSub[]){aff(0, 4, 3)}, "[0+]");
    /* A[6i] vs A[4i+3]: parity */
    dep(1, 1, (OrnSub[]){aff(0, 6, 0)}, (OrnSub[]){aff(0, 4, 3)}, NULL);
    /* A[i] vs A[j] in (i, j): unrelated keys */
    dep(2, 1, (OrnSub[]){aff(0, 1, 0)}, (OrnSub[]){aff(1, 1, 0)}, "[*, *]");
    /* A[0] vs A[i]: k'_0 = 0, k_0 anything: k'_0 - k_0 <= 0 */
    CHECK(orn_dep_test(1, 1, (OrnSub[]){cst(0)}, (OrnSub[]){aff(0, 1, 0)}, &v) &&
          v.d[0].lo == ORN_DEP_NINF && v.d[0].hi == 0);
    /* A[4 - i] vs A[i]: k' = 4 - k, k in [0, 4], distance 4 - 2k in [-4, 4] */
    CHECK(orn_dep_test(1, 1, (OrnSub[]){aff(0, -1, 4)}, (OrnSub[]){aff(0, 1, 0)}, &v) &&
          v.d[0].lo == -4 && v.d[0].hi == 4);
    /* A[-i - 1] vs A[i]: no nonnegative solution */
    dep(1, 1, (OrnSub[]){aff(0, -1, -1)}, (OrnSub[]){aff(0, 1, 0)}, NULL);
    /* A[i, i] vs A[i+1, i]: i = i'+1 and i = i' */
    dep(1, 2, (OrnSub[]){aff(0, 1, 0), aff(0, 1, 0)}, (OrnSub[]){aff(0, 1, 1), aff(0, 1, 0)}, NULL);
    /* A[i, j] vs A[j, i]: correlated, hull is [*, *] */
    dep(2, 2, (OrnSub[]){aff(0, 1, 0), aff(1, 1, 0)}, (OrnSub[]){aff(1, 1, 0), aff(0, 1, 0)},
        "[*, *]");
    /* constants */
    dep(1, 2, (OrnSub[]){cst(3), aff(0, 1, 0)}, (OrnSub[]){cst(4), aff(0, 1, 0)}, NULL);
    dep(1, 2, (OrnSub[]){cst(3), aff(0, 1, 0)}, (OrnSub[]){cst(3), aff(0, 1, 0)}, "[0]");
    /* A[2*i] vs A[5]: odd constant never hit */
    dep(1, 1, (OrnSub[]){aff(0, 2, 0)}, (OrnSub[]){cst(5)}, NULL);
    /* A[2*i] vs A[4]: k = 2, k' anything */
    CHECK(orn_dep_test(1, 1, (OrnSub[]){aff(0, 2, 0)}, (OrnSub[]){cst(4)}, &v) && v.d[0].lo == -2 &&
          v.d[0].hi == ORN_DEP_PINF);
    /* 9-point stencil: write U[i, j] vs read U[i+1, j-1] */
    dep(2, 2, (OrnSub[]){aff(0, 1, 0), aff(1, 1, 0)}, (OrnSub[]){aff(0, 1, 1), aff(1, 1, -1)},
        "[-1, 1]");
    /* overflow is conservative */
    dep(1, 1, (OrnSub[]){aff(0, INT64_MAX, 0)}, (OrnSub[]){aff(0, INT64_MAX - 1, 1)}, "[*]");
    dep(1, 1, (OrnSub[]){aff(0, INT64_MIN, 0)}, (OrnSub[]){aff(0, -1, INT64_MIN)}, "[*]");
    dep(1, 1, (OrnSub[]){aff(0, -1, INT64_MIN)}, (OrnSub[]){aff(0, -1, INT64_MAX)}, "[*]");
}

static void test_normalize(void)
{
    OrnDepVec v = {2, {orn_dep_any(), orn_dep_exact(0)}}, out[2 * ORN_DEP_MAXDIM];
    char b[64];
    /* [*, 0] -> lexicographically positive: [+, 0] */
    int n = orn_dep_lexpos(&v, out);
    CHECK(n == 1 && strcmp(orn_dep_vec_str(&out[0], b, sizeof b), "[+, 0]") == 0);
    /* [*, 1]: [+, 1], [0, 1], [+, -1] */
    v.d[1] = orn_dep_exact(1);
    n = orn_dep_lexpos(&v, out);
    CHECK(n == 3);
    CHECK(strcmp(orn_dep_vec_str(&out[0], b, sizeof b), "[+, 1]") == 0);
    CHECK(out[1].d[0].lo == ORN_DEP_NINF + 0 || true);
    /* [-1, 0] -> [1, 0] */
    v.d[0] = orn_dep_exact(-1);
    v.d[1] = orn_dep_exact(0);
    n = orn_dep_lexpos(&v, out);
    CHECK(n == 1 && strcmp(orn_dep_vec_str(&out[0], b, sizeof b), "[1, 0]") == 0);
    orn_dep_sign_normalize(&v);
    CHECK(strcmp(orn_dep_vec_str(&v, b, sizeof b), "[1, 0]") == 0);
    /* [0, 0] is one iteration */
    v.d[0] = orn_dep_exact(0);
    CHECK(orn_dep_lexpos(&v, out) == 0);
    /* transform: skew [[1,0],[1,1]] of [1, -1] is [1, 0] */
    OrnDepMat T = {{{1, 0}, {1, 1}}};
    v.d[0] = orn_dep_exact(1);
    v.d[1] = orn_dep_exact(-1);
    OrnDepVec t;
    orn_dep_transform(2, &T, &v, &t);
    CHECK(strcmp(orn_dep_vec_str(&t, b, sizeof b), "[1, 0]") == 0);
    CHECK(orn_dep_vec_lexpos(&t));
    CHECK(!orn_dep_vec_lexpos(&(OrnDepVec){2, {orn_dep_exact(0), orn_dep_range(-1, 3)}}));
    /* saturation */
    OrnDepRange r = orn_dep_range_scale(orn_dep_range(1, INT64_MAX - 1), 3);
    CHECK(r.lo == 3 && r.hi == ORN_DEP_PINF);
    r = orn_dep_range_add(orn_dep_range(INT64_MIN + 1, 0), orn_dep_exact(-5));
    CHECK(r.lo == ORN_DEP_NINF && r.hi == -5);
}

/* ---- randomized cross-check ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static int rnd_in(int lo, int hi) /* inclusive */
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

static OrnSub rnd_sub(int n)
{
    int r = rnd_in(0, 99);
    if (r < 62) {
        int a = rnd_in(-3, 3);
        if (a == 0) a = 1;
        if (rnd_in(0, 2)) a = a < 0 ? -1 : 1; /* coefficient 1 is the common case */
        return aff(rnd_in(0, n - 1), a, rnd_in(-4, 4));
    }
    if (r < 82) return cst(rnd_in(-1, 5));
    if (r < 91) return all();
    return unk();
}

static int64_t eval(const OrnSub *s, const int *k, bool *any)
{
    *any = false;
    switch (s->kind) {
    case ORN_SUB_AFFINE:
        return s->a * k[s->key] + s->c;
    case ORN_SUB_CONST:
        return s->c;
    default:
        *any = true;
        return 0;
    }
}

static bool match(int m, const OrnSub *s1, const OrnSub *s2, const int *k, const int *k2)
{
    for (int d = 0; d < m; d++) {
        bool any1, any2;
        int64_t v1 = eval(&s1[d], k, &any1), v2 = eval(&s2[d], k2, &any2);
        if (!any1 && !any2 && v1 != v2) return false;
    }
    return true;
}

/* Decode iteration index idx in [0, N^n) into k. */
static void decode(int n, int N, long idx, int *k)
{
    for (int p = 0; p < n; p++) {
        k[p] = (int)(idx % N);
        idx /= N;
    }
}

typedef struct Brute {
    bool found;
    int64_t lo[ORN_DEP_MAXDIM], hi[ORN_DEP_MAXDIM];
} Brute;

static Brute brute(int n, int m, const OrnSub *s1, const OrnSub *s2, int N)
{
    Brute b;
    memset(&b, 0, sizeof b);
    long total = 1;
    for (int p = 0; p < n; p++) total *= N;
    int k[ORN_DEP_MAXDIM], k2[ORN_DEP_MAXDIM];
    for (long i = 0; i < total; i++) {
        decode(n, N, i, k);
        for (long j = 0; j < total; j++) {
            decode(n, N, j, k2);
            if (!match(m, s1, s2, k, k2)) continue;
            for (int p = 0; p < n; p++) {
                int64_t d = k2[p] - k[p];
                if (!b.found || d < b.lo[p]) b.lo[p] = d;
                if (!b.found || d > b.hi[p]) b.hi[p] = d;
            }
            if (!b.found) {
                for (int p = 0; p < n; p++) b.lo[p] = b.hi[p] = k2[p] - k[p];
                b.found = true;
            }
        }
    }
    return b;
}

/* Exactness oracle over a much larger window of first iterations k: the second
 * iteration's constrained keys follow from k (each dimension with two analysed subscripts
 * gives k'_q = (s1(k) - c2) / a2, or a check against a constant); keys of k' that no
 * equation constrains are set to 0 (a free k'_p only matters for the lower end of
 * k'_p - k_p, attained at 0). */
static Brute brute_fast(int n, int m, const OrnSub *s1, const OrnSub *s2, int N)
{
    Brute b;
    memset(&b, 0, sizeof b);
    long total = 1;
    for (int p = 0; p < n; p++) total *= N;
    int k[ORN_DEP_MAXDIM];
    for (long i = 0; i < total; i++) {
        decode(n, N, i, k);
        int64_t k2[ORN_DEP_MAXDIM] = {0};
        bool set[ORN_DEP_MAXDIM] = {false}, ok = true;
        for (int d = 0; d < m && ok; d++) {
            bool any1, any2;
            int64_t v1 = eval(&s1[d], k, &any1);
            eval(&s2[d], k, &any2);
            if (any1 || any2) continue;
            if (s2[d].kind == ORN_SUB_CONST) {
                ok = v1 == s2[d].c;
                continue;
            }
            int64_t num = v1 - s2[d].c;
            if (num % s2[d].a != 0 || num / s2[d].a < 0) {
                ok = false;
                continue;
            }
            int q = s2[d].key;
            if (set[q] && k2[q] != num / s2[d].a) ok = false;
            set[q] = true;
            k2[q] = num / s2[d].a;
        }
        if (!ok) continue;
        for (int p = 0; p < n; p++) {
            int64_t d = k2[p] - k[p];
            if (!b.found || d < b.lo[p]) b.lo[p] = d;
            if (!b.found || d > b.hi[p]) b.hi[p] = d;
        }
        b.found = true;
    }
    return b;
}

static void print_case(int n, int m, const OrnSub *s1, const OrnSub *s2)
{
    const OrnSub *ss[2] = {s1, s2};
    fprintf(stderr, "  n=%d:", n);
    for (int w = 0; w < 2; w++) {
        fprintf(stderr, " A[");
        for (int d = 0; d < m; d++) {
            const OrnSub *s = &ss[w][d];
            if (d) fprintf(stderr, ", ");
            switch (s->kind) {
            case ORN_SUB_AFFINE:
                fprintf(stderr, "%" PRId64 "*k%d%+" PRId64, s->a, s->key, s->c);
                break;
            case ORN_SUB_CONST:
                fprintf(stderr, "%" PRId64, s->c);
                break;
            case ORN_SUB_ALL:
                fprintf(stderr, ":");
                break;
            default:
                fprintf(stderr, "?");
                break;
            }
        }
        fprintf(stderr, "]");
    }
    fprintf(stderr, "\n");
}

static int cases_dependent, cases_independent, ends_checked;

static void cross_check(int n, int m, int N, int Nbig)
{
    OrnSub s1[ORN_DEP_MAXDIM], s2[ORN_DEP_MAXDIM];
    for (int d = 0; d < m; d++) {
        s1[d] = rnd_sub(n);
        s2[d] = rnd_sub(n);
    }
    OrnDepVec v;
    bool dep = orn_dep_test(n, m, s1, s2, &v);
    Brute b = brute(n, m, s1, s2, N);
    if (b.found) {
        CHECK_MSG(dep, "brute force found a conflict the test missed");
        if (!dep) {
            print_case(n, m, s1, s2);
            return;
        }
        for (int p = 0; p < n; p++) {
            bool ok = v.d[p].lo <= b.lo[p] && b.hi[p] <= v.d[p].hi;
            CHECK_MSG(ok, "dim %d: brute force [%" PRId64 ", %" PRId64 "] outside %s", p, b.lo[p],
                      b.hi[p], vstr(&v));
            if (!ok) print_case(n, m, s1, s2);
        }
    }
    if (!dep) {
        cases_independent++;
        return;
    }
    cases_dependent++;
    /* exactness: a solution exists, and the finite ends are attained */
    Brute big = brute_fast(n, m, s1, s2, Nbig);
    CHECK_MSG(big.found, "test says dependent (%s), brute force finds no conflict", vstr(&v));
    if (!big.found) {
        print_case(n, m, s1, s2);
        return;
    }
    for (int p = 0; p < n; p++) {
        if (v.d[p].lo != ORN_DEP_NINF) {
            ends_checked++;
            CHECK_MSG(big.lo[p] == v.d[p].lo, "dim %d: lower end %" PRId64 " of %s not attained", p,
                      v.d[p].lo, vstr(&v));
            if (big.lo[p] != v.d[p].lo) print_case(n, m, s1, s2);
        }
        if (v.d[p].hi != ORN_DEP_PINF) {
            ends_checked++;
            CHECK_MSG(big.hi[p] == v.d[p].hi, "dim %d: upper end %" PRId64 " of %s not attained", p,
                      v.d[p].hi, vstr(&v));
            if (big.hi[p] != v.d[p].hi) print_case(n, m, s1, s2);
        }
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    if (argc > 2) rng_state ^= strtoull(argv[2], NULL, 0) * 0x9e3779b97f4a7c15ull + 1;
    test_hand();
    test_normalize();
    for (int r = 0; r < rounds; r++) {
        for (int t = 0; t < 3000; t++) cross_check(1, rnd_in(1, 3), 40, 400);
        for (int t = 0; t < 2000; t++) cross_check(2, rnd_in(1, 3), 12, 120);
        for (int t = 0; t < 150; t++) cross_check(3, rnd_in(1, 3), 6, 40);
    }
    printf("dependence test: %d dependent and %d independent random cases agree with brute "
           "force; %d finite range ends attained\n",
           cases_dependent, cases_independent, ends_checked);
    return CHECK_DONE();
}
