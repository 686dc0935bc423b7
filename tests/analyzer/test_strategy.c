/* test_strategy.c: schedule choice (analyzer/strategy.c, strat_*.c) on hand-built
 * problems, then a randomized end-to-end check: random accesses -> dependence vectors ->
 * chosen schedule, verified against every conflicting pair of concrete iterations in a
 * small window, with the blocks the schedule would really form.
 *
 * usage: test_strategy [LOOPS [SEED]]   (3000 random loops by default) */
#include "strategy.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static OrnArena *arena;

/* ---- hand-built problems ---- */

#define ANY   orn_dep_any()
#define EX(v) orn_dep_exact(v)
#define POS   orn_dep_range(1, ORN_DEP_PINF)

static OrnPlanArray arr(const char *name, int ndims, bool r, bool w, int k0, int k1)
{
    OrnPlanArray a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.ndims = ndims;
    a.read = r;
    a.written = w;
    a.key_of_dim[0] = k0;
    a.key_of_dim[1] = k1;
    a.coef[0] = a.coef[1] = 1;
    if (k0 >= 0) a.keys_mask |= 1u << k0;
    if (k1 >= 0) a.keys_mask |= 1u << k1;
    return a;
}

static OrnPlanChoice choose(int nkeys, bool ordered, const OrnDepVec *v, int nv,
                            const OrnPlanArray *a, int na)
{
    OrnPlanProblem pb;
    memset(&pb, 0, sizeof pb);
    static const char *names[] = {"i", "j", "k", "l"};
    pb.nkeys = nkeys;
    for (int p = 0; p < nkeys; p++) pb.keys[p] = names[p];
    pb.ordered = ordered;
    pb.vecs = v;
    pb.nvecs = nv;
    pb.arrays = a;
    pb.narrays = na;
    OrnPlanChoice c;
    orn_plan_choose(arena, &pb, &c);
    return c;
}

static void test_hand(void)
{
    /* SGD MF: W[:, u], H[:, i] read and written; (u, i) loop */
    {
        OrnDepVec v[] = {{2, {EX(0), ANY}}, {2, {ANY, EX(0)}}};
        OrnPlanArray a[] = {arr("ratings", 2, true, false, 0, 1), arr("W", 2, true, true, -1, 0),
                            arr("H", 2, true, true, -1, 1)};
        a[0].is_space = true;
        OrnPlanChoice c = choose(2, false, v, 2, a, 3);
        CHECK(c.best.strategy == ORN_STRAT_2D && c.best.dims[0] == 0 && c.best.dims[1] == 1);
        CHECK(c.roles[0] == ORN_ROLE_PARTITIONED && c.roles[1] == ORN_ROLE_PARTITIONED &&
              c.roles[2] == ORN_ROLE_ROTATED);
    }
    /* SGD MF where only H is written: keep H, rotate W? Both indexed; cost ties, so the
     * first key stays. The same loop ordered: 2d_ordered. */
    {
        OrnDepVec v[] = {{2, {EX(0), ANY}}, {2, {ANY, EX(0)}}};
        OrnPlanChoice c = choose(2, true, v, 2, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_2D_ORDERED);
    }
    /* LDA: (d, w, j) with [0, *, *] and [*, 0, *] */
    {
        OrnDepVec v[] = {{3, {EX(0), ANY, ANY}}, {3, {ANY, EX(0), ANY}}};
        OrnPlanArray a[] = {arr("doc_topic", 2, true, true, -1, 0),
                            arr("word_topic", 2, true, true, -1, 1)};
        OrnPlanChoice c = choose(3, false, v, 2, a, 2);
        CHECK(c.best.strategy == ORN_STRAT_2D && c.best.dims[0] == 0 && c.best.dims[1] == 1);
        CHECK(c.roles[0] == ORN_ROLE_PARTITIONED && c.roles[1] == ORN_ROLE_ROTATED);
    }
    /* matrix-vector y[i] += A[i, j] * x[j]: [0, *] -> 1d along i, x replicated */
    {
        OrnDepVec v[] = {{2, {EX(0), ANY}}};
        OrnPlanArray a[] = {arr("A", 2, true, false, 0, 1), arr("y", 1, true, true, 0, -1),
                            arr("x", 1, true, false, 1, -1)};
        a[0].is_space = true;
        OrnPlanChoice c = choose(2, false, v, 1, a, 3);
        CHECK(c.best.strategy == ORN_STRAT_1D && c.best.dims[0] == 0);
        CHECK(c.roles[1] == ORN_ROLE_PARTITIONED && c.roles[2] == ORN_ROLE_REPLICATED);
    }
    /* 5-point Gauss-Seidel, ordered: (1, 0), (0, 1) -> 2d_ordered */
    {
        OrnDepVec v[] = {{2, {EX(1), EX(0)}}, {2, {EX(0), EX(1)}}};
        OrnPlanChoice c = choose(2, true, v, 2, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_2D_ORDERED && c.best.dims[0] == 0 &&
              c.best.dims[1] == 1);
        /* unordered, the same vectors allow rotation */
        c = choose(2, false, v, 2, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_2D);
    }
    /* 9-point Gauss-Seidel, ordered: skew [[1, 0], [1, 1]], then 2d_ordered */
    {
        OrnDepVec v[] = {
            {2, {EX(1), EX(1)}}, {2, {EX(1), EX(0)}}, {2, {EX(1), EX(-1)}}, {2, {EX(0), EX(1)}}};
        OrnPlanChoice c = choose(2, true, v, 4, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_UNIMODULAR && c.best.inner == ORN_STRAT_2D_ORDERED);
        CHECK(c.best.T.m[0][0] == 1 && c.best.T.m[0][1] == 0 && c.best.T.m[1][0] == 1 &&
              c.best.T.m[1][1] == 1);
        CHECK(c.unimodular_tried > 0);
    }
    /* prefix sum, ordered: (1) -> serial, the vector is the culprit */
    {
        OrnDepVec v[] = {{1, {EX(1)}}};
        OrnPlanChoice c = choose(1, true, v, 1, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_SERIAL && c.nculprits == 1 && c.culprits[0] == 0);
        c = choose(1, false, v, 1, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_SERIAL);
    }
    /* unordered diagonal dependence (1, 1): partition along i - j */
    {
        OrnDepVec v[] = {{2, {EX(1), EX(1)}}};
        OrnPlanChoice c = choose(2, false, v, 1, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_UNIMODULAR && c.best.inner == ORN_STRAT_1D);
        char buf[32];
        OrnPlanProblem pb = {2, {"i", "j"}, false, false, v, 1, NULL, 0};
        const char *name = orn_plan_dim_name(&pb, &c.best, c.best.dims[0], buf, sizeof buf);
        CHECK_MSG(strcmp(name, "i-j") == 0 || strcmp(name, "j-i") == 0, "%s", name);
    }
    /* the runtime's plan check: a sparse array read by rows that no key follows is
     * replicated, not prefetched; one that is also written (remote) has no role that the
     * runtime runs in a parallel schedule, so the loop is serial, saying why */
    {
        OrnPlanArray a[] = {arr("R", 2, true, false, 0, 1), arr("X", 2, true, false, -1, -1)};
        a[0].is_space = true;
        a[1].sparse = a[1].rows = a[1].varying_unknown = true;
        OrnPlanChoice c = choose(2, false, NULL, 0, a, 2);
        CHECK(c.best.strategy == ORN_STRAT_1D && c.roles[1] == ORN_ROLE_REPLICATED);
        CHECK(c.planned[1] == ORN_ROLE_PREFETCHED && c.refused[1] &&
              strstr(c.refused[1], "row views of a sparse array"));
        a[1].written = true;
        c = choose(2, false, NULL, 0, a, 2);
        CHECK(c.best.strategy == ORN_STRAT_SERIAL && c.plan_refused &&
              strstr(c.plan_refused, "array X: row views of a sparse array"));
        CHECK(c.cands[0].legal && c.cands[0].refused && !c.refused[1]);
    }
    /* no dependences: 1d along the first key; ordered too */
    {
        OrnPlanChoice c = choose(3, true, NULL, 0, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_1D && c.best.dims[0] == 0);
    }
    /* ordered [*, 1] (A[j] written, A[j-1] read in an (i, j) loop): the oriented pieces
     * [+, 1], [0, 1], [+, -1] are all nonnegative after the skew (i, i + j) */
    {
        OrnDepVec v[] = {{2, {ANY, EX(1)}}};
        OrnPlanChoice c = choose(2, true, v, 1, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_UNIMODULAR && c.best.inner == ORN_STRAT_2D_ORDERED);
        /* [*, *] ordered is serial */
        OrnDepVec w[] = {{2, {ANY, ANY}}};
        c = choose(2, true, w, 1, NULL, 0);
        CHECK(c.best.strategy == ORN_STRAT_SERIAL && c.nculprits == 1);
    }
    /* 1d prefers the dimension that keeps written data partitioned */
    {
        OrnPlanArray a[] = {arr("rowmax", 1, false, true, 1, -1)};
        OrnPlanChoice c = choose(2, false, NULL, 0, a, 1);
        CHECK(c.best.strategy == ORN_STRAT_1D && c.best.dims[0] == 1);
        CHECK(c.roles[0] == ORN_ROLE_PARTITIONED);
    }
}

/* ---- randomized end-to-end check ---- */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static int rnd_in(int lo, int hi)
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

/* structured: subscripts mostly key + small offset, or ':' (stencils, factor models) */
static bool structured;

static OrnSub rnd_sub(int n)
{
    int r = rnd_in(0, 99);
    if (structured) r = r < 85 ? 0 : r < 93 ? 95 : 90;
    OrnSub s;
    memset(&s, 0, sizeof s);
    if (r < 75) {
        s.kind = ORN_SUB_AFFINE;
        s.key = rnd_in(0, n - 1);
        s.a = structured || rnd_in(0, 5) ? 1 : rnd_in(0, 1) ? 2 : -1;
        s.c = structured && rnd_in(0, 9) < 7 ? 0 : rnd_in(0, 2) ? rnd_in(-1, 1) : rnd_in(-2, 2);
    } else if (r < 88) {
        s.kind = ORN_SUB_CONST;
        s.c = rnd_in(0, 2);
    } else if (r < 94) {
        s.kind = ORN_SUB_ALL;
    } else {
        s.kind = ORN_SUB_UNKNOWN;
        s.varies = true;
    }
    return s;
}

enum { MAXREF = 8, MAXVEC = 64 };

typedef struct Problem {
    int nkeys;
    bool ordered;
    OrnDepRef refs[MAXREF];
    int nrefs;
    OrnDepVec vecs[MAXVEC];
    int nvecs;
} Problem;

static void gen(Problem *P)
{
    memset(P, 0, sizeof *P);
    P->nkeys = rnd_in(1, 3);
    P->ordered = rnd_in(0, 1);
    int narrays = rnd_in(1, 2);
    int ndims[2] = {rnd_in(1, 2), rnd_in(1, 2)};
    int dimkey[2][2];
    for (int a = 0; a < 2; a++)
        for (int d = 0; d < 2; d++) dimkey[a][d] = rnd_in(0, P->nkeys - 1);
    P->nrefs = rnd_in(1, 5);
    for (int i = 0; i < P->nrefs; i++) {
        OrnDepRef *r = &P->refs[i];
        r->array = rnd_in(0, narrays - 1);
        int f = rnd_in(0, 2);
        r->read = f != 1;
        r->write = f != 0;
        r->nsubs = ndims[r->array];
        for (int d = 0; d < r->nsubs; d++) {
            r->subs[d] = rnd_sub(P->nkeys);
            /* structured: each array dimension follows one key, as real loops do */
            if (structured && r->subs[d].kind == ORN_SUB_AFFINE)
                r->subs[d].key = dimkey[r->array][d];
        }
    }
    /* the analysis, as analyze.c does it */
    for (int i = 0; i < P->nrefs; i++)
        for (int j = i; j < P->nrefs; j++) {
            if (!orn_dep_conflicts(&P->refs[i], &P->refs[j], P->ordered)) continue;
            OrnDepVec v;
            if (!orn_dep_test(P->nkeys, P->refs[i].nsubs, P->refs[i].subs, P->refs[j].subs, &v))
                continue;
            orn_dep_sign_normalize(&v);
            if (orn_dep_vec_is_zero(&v)) continue;
            bool dup = false;
            for (int k = 0; k < P->nvecs; k++) dup |= orn_dep_vec_equal(&P->vecs[k], &v);
            if (!dup && P->nvecs < MAXVEC) P->vecs[P->nvecs++] = v;
        }
}

static int64_t eval(const OrnSub *s, const int *k, bool *any)
{
    *any = s->kind == ORN_SUB_ALL || s->kind == ORN_SUB_UNKNOWN;
    return s->kind == ORN_SUB_AFFINE ? s->a * k[s->key] + s->c : s->c;
}

static bool same_element(const OrnDepRef *a, const OrnDepRef *b, const int *k, const int *k2)
{
    for (int d = 0; d < a->nsubs; d++) {
        bool any1, any2;
        int64_t v1 = eval(&a->subs[d], k, &any1), v2 = eval(&b->subs[d], k2, &any2);
        if (!any1 && !any2 && v1 != v2) return false;
    }
    return true;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* -1, 0, 1: lexicographic comparison of T k and T k2 */
static int lexcmp_t(const OrnDepMat *T, int n, const int *k, const int *k2)
{
    for (int r = 0; r < n; r++) {
        int64_t a = 0, b = 0;
        for (int c = 0; c < n; c++) {
            a += (int64_t)T->m[r][c] * k[c];
            b += (int64_t)T->m[r][c] * k2[c];
        }
        if (a != b) return a < b ? -1 : 1;
    }
    return 0;
}

static int64_t block(const OrnDepMat *T, int n, int d, const int *k, int bs)
{
    int64_t x = 0;
    for (int c = 0; c < n; c++) x += (int64_t)T->m[d][c] * k[c];
    return floordiv(x, bs);
}

static int strat_count[5], checked_pairs;

/* Does the schedule keep the conflict between e and l (e before l in key order)? */
static bool keeps(const OrnPlanSchedule *s, bool ordered, int n, const int *e, const int *l, int bs)
{
    OrnStrategy st = s->strategy == ORN_STRAT_UNIMODULAR ? s->inner : s->strategy;
    const OrnDepMat *T = &s->T;
    if (st == ORN_STRAT_SERIAL) return true;
    int p = s->dims[0], q = s->dims[1];
    int64_t bep = block(T, n, p, e, bs), blp = block(T, n, p, l, bs);
    /* inside a block, iterations run in lexicographic order of T k */
    bool inner_ok = !ordered || lexcmp_t(T, n, e, l) < 0;
    if (st == ORN_STRAT_1D) return bep == blp && inner_ok;
    int64_t beq = block(T, n, q, e, bs), blq = block(T, n, q, l, bs);
    if (st == ORN_STRAT_2D) return bep == blp || beq == blq;
    /* wavefront: the same block (in order), or l's block after e's in both dimensions;
     * unordered loops accept either direction */
    if (bep == blp && beq == blq) return ordered ? inner_ok : true;
    if (blp >= bep && blq >= beq) return true;
    return !ordered && blp <= bep && blq <= beq;
}

static void verify(const Problem *P, const OrnPlanChoice *c, int N)
{
    int n = P->nkeys;
    long total = 1;
    for (int p = 0; p < n; p++) total *= N;
    int k[4], k2[4];
    for (int bs = 1; bs <= 2; bs++) {
        for (long a = 0; a < total; a++) {
            long x = a;
            for (int p = 0; p < n; p++) k[p] = (int)(x % N), x /= N;
            for (long b = a + 1; b < total; b++) {
                long y = b;
                for (int p = 0; p < n; p++) k2[p] = (int)(y % N), y /= N;
                /* k and k2 in key (lexicographic, key 0 most significant) order */
                const int *e = k, *l = k2;
                for (int p = 0; p < n; p++)
                    if (k[p] != k2[p]) {
                        if (k[p] > k2[p]) e = k2, l = k;
                        break;
                    }
                bool conflict = false;
                for (int i = 0; i < P->nrefs && !conflict; i++)
                    for (int j = 0; j < P->nrefs && !conflict; j++)
                        conflict = orn_dep_conflicts(&P->refs[i], &P->refs[j], P->ordered) &&
                                   same_element(&P->refs[i], &P->refs[j], e, l);
                if (!conflict) continue;
                checked_pairs++;
                if (!keeps(&c->best, P->ordered, n, e, l, bs)) {
                    CHECK_MSG(false,
                              "%s schedule breaks the conflict between (%d,%d,%d) and "
                              "(%d,%d,%d), block size %d",
                              orn_plan_strategy_name(c->best.strategy), e[0], n > 1 ? e[1] : 0,
                              n > 2 ? e[2] : 0, l[0], n > 1 ? l[1] : 0, n > 2 ? l[2] : 0, bs);
                    return;
                }
            }
        }
    }
}

static void test_random(int rounds)
{
    for (int t = 0; t < rounds; t++) {
        Problem P;
        structured = t % 2;
        gen(&P);
        OrnPlanProblem pb;
        memset(&pb, 0, sizeof pb);
        static const char *names[] = {"i", "j", "k", "l"};
        pb.nkeys = P.nkeys;
        for (int p = 0; p < P.nkeys; p++) pb.keys[p] = names[p];
        pb.ordered = P.ordered;
        pb.vecs = P.vecs;
        pb.nvecs = P.nvecs;
        OrnPlanChoice c;
        orn_plan_choose(arena, &pb, &c);
        strat_count[c.best.strategy]++;
        int fails = check_failures;
        verify(&P, &c, P.nkeys == 1 ? 24 : P.nkeys == 2 ? 9 : 5);
        if (check_failures != fails) {
            char buf[128];
            fprintf(stderr, "  keys %d, %s; vectors:", P.nkeys,
                    P.ordered ? "ordered" : "unordered");
            for (int i = 0; i < P.nvecs; i++)
                fprintf(stderr, " %s", orn_dep_vec_str(&P.vecs[i], buf, sizeof buf));
            fprintf(stderr, "\n");
        }
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3000;
    if (argc > 2) rng_state ^= strtoull(argv[2], NULL, 0) * 0x9e3779b97f4a7c15ull + 1;
    arena = orn_arena_new();
    test_hand();
    test_random(rounds);
    printf("strategies: %d random loops (1d %d, 2d %d, 2d_ordered %d, unimodular %d, serial "
           "%d), %d conflicting iteration pairs checked against their schedules\n",
           rounds, strat_count[0], strat_count[1], strat_count[2], strat_count[3], strat_count[4],
           checked_pairs);
    orn_arena_free(arena);
    return CHECK_DONE();
}
