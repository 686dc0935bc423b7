/* test_analyze.c: whole programs through parse, sema and the analyzer; each loop's plan is
 * summarized in one line and compared with the expected one:
 *
 *   <strategy> dims=<partition dims> [T=<matrix>] vecs=<vectors> <array>=<role> ...
 *
 * The four shipped examples are checked from examples/ (their plans are part of the
 * contract), then small programs for each kind of loop. The golden tests under
 * tests/golden/explain* pin the full reports; this pins the decisions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "check.h"
#include "plan_rt.h"
#include "strbuf.h"
#include "unit.h"

static void summarize(OrnBuf *b, const OrnLoopPlan *p)
{
    const OrnPlanSchedule *s = &p->sched;
    orn_buf_printf(b, "%s dims=[", orn_plan_strategy_name(s->strategy));
    for (int d = 0; d < s->ndims; d++) orn_buf_printf(b, "%s%d", d ? "," : "", s->dims[d]);
    orn_buf_puts(b, "]");
    if (s->strategy == ORN_STRAT_UNIMODULAR) {
        orn_buf_printf(b, " T=[");
        for (int r = 0; r < p->nkeys; r++) {
            orn_buf_puts(b, r ? ",[" : "[");
            for (int c = 0; c < p->nkeys; c++)
                orn_buf_printf(b, "%s%d", c ? "," : "", s->T.m[r][c]);
            orn_buf_puts(b, "]");
        }
        orn_buf_printf(b, "] %s", orn_plan_strategy_name(s->inner));
    }
    orn_buf_puts(b, " vecs=");
    for (int d = 0; d < p->ndeps; d++) {
        char v[96];
        orn_buf_printf(b, "%s%s", d ? "" : "", orn_dep_vec_str(&p->deps[d].v, v, sizeof v));
    }
    if (!p->ndeps) orn_buf_puts(b, "-");
    for (int k = 0; k < p->narrays; k++) {
        orn_buf_printf(b, " %s=%s", p->arrays[k].sym->name->s,
                       orn_plan_role_name(p->arrays[k].role));
        /* a role the runtime's plan check refused: "C=replicated<partitioned" */
        if (p->choice.refused[k])
            orn_buf_printf(b, "<%s", orn_plan_role_name(p->choice.planned[k]));
    }
}

/* Every plan the analyzer emits passes the runtime's plan check (the same function
 * orn_rt_run calls), with what the analyzer knows of the arrays. */
static void check_runnable(const char *name, const OrnLoopPlan *p)
{
    OrnRole roles[64];
    OrnRtPlanArray arrays[65];
    OrnRtPlanFacts facts[65];
    char msg[256] = "";
    CHECK(p->narrays <= 64);
    if (p->narrays > 64) return;
    for (int k = 0; k < p->narrays; k++) {
        roles[k] = p->arrays[k].role;
        facts[k].sparse = p->problem.arrays[k].sparse;
        facts[k].rows = p->problem.arrays[k].rows;
    }
    OrnRtPlan rp;
    orn_plan_rt_plan(&p->problem, &p->sched, roles, arrays, &rp);
    int bad = orn_rt_plan_check(&rp, facts, msg, (int)sizeof msg);
    CHECK_MSG(bad < 0, "%s:%d: the runtime would refuse the plan: %s", name, p->line, msg);
}

static int loops_checked, warnings_seen;

/* Analyse src; expected holds one summary per loop, separated by '\n'. */
static void check_program(const char *name, const char *src, size_t len, const char *expected,
                          int want_warnings)
{
    OrnUnit *u = orn_unit_new(name, src, len, NULL);
    bool ok = orn_parse(u, false) == ORN_PARSE_OK && orn_sema(u);
    CHECK_MSG(ok, "%s: front end failed (%d errors)", name, u->diags.errors);
    if (!ok) {
        orn_unit_free(u);
        return;
    }
    OrnPlanSet ps;
    CHECK(orn_analyze(u, &ps));
    OrnBuf got;
    orn_buf_init(&got);
    for (int i = 0; i < ps.nloops; i++) {
        summarize(&got, &ps.loops[i]);
        orn_buf_putc(&got, '\n');
        check_runnable(name, &ps.loops[i]);
    }
    CHECK_MSG(strcmp(got.data ? got.data : "", expected) == 0, "%s:\nexpected:\n%sgot:\n%s", name,
              expected, got.data ? got.data : "");
    CHECK_MSG(u->diags.warnings == want_warnings, "%s: %d warnings, expected %d", name,
              u->diags.warnings, want_warnings);
    loops_checked += ps.nloops;
    warnings_seen += u->diags.warnings;
    orn_buf_free(&got);
    orn_unit_free(u);
}

static void check(const char *name, const char *src, const char *expected, int want_warnings)
{
    check_program(name, src, strlen(src), expected, want_warnings);
}

static void check_file(const char *rel, const char *expected)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ORN_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    check_program(rel, buf, n, expected, 0);
}

static void test_examples(void)
{
    check_file("examples/sgd_mf.orn",
               "1d dims=[0] vecs=- W=partitioned\n"
               "1d dims=[0] vecs=- H=partitioned\n"
               "1d dims=[0] vecs=- held_out=partitioned\n"
               "2d dims=[0,1] vecs=[0, *][*, 0] ratings=partitioned bu=partitioned "
               "bi=rotated W=partitioned H=rotated\n"
               "1d dims=[0] vecs=- held_out=partitioned bu=partitioned bi=prefetched "
               "W=partitioned H=prefetched\n");
    check_file("examples/lda.orn", "2d dims=[0,1] vecs=[0, *, *][*, 0, *] tokens=partitioned "
                                   "doc_topic=partitioned word_topic=rotated topic_delta=buffered\n"
                                   "2d dims=[0,1] vecs=[0, *, *][*, 0, *] tokens=partitioned "
                                   "doc_topic=partitioned word_topic=rotated topic_delta=buffered "
                                   "topic_count=replicated\n"
                                   "1d dims=[0] vecs=- tokens=partitioned doc_topic=partitioned "
                                   "word_topic=prefetched topic_count=replicated\n");
    check_file("examples/slr.orn",
               "1d dims=[0] vecs=- y=partitioned X=partitioned w=prefetched dw=buffered\n"
               "1d dims=[0] vecs=- yt=partitioned Xt=partitioned w=prefetched\n");
    check_file("examples/gauss_seidel.orn",
               "1d dims=[0] vecs=- U=partitioned\n"
               "2d_ordered dims=[0,1] vecs=[1, 0][0, 1] U=partitioned\n"
               "1d dims=[0] vecs=- U=partitioned\n");
}

static void test_loops(void)
{
    /* dense matrix-vector: 1d along rows */
    check("matvec",
          "dist A = rand(f64, 8, 8)\ndist x = rand(f64, 8)\ndist y = zeros(f64, 8)\n"
          "parallel_for (i, j), a in A\n    y[i] += a * x[j]\nend\n",
          "1d dims=[0] vecs=[0, *] A=partitioned y=partitioned x=replicated\n", 0);
    /* 5-point and 9-point Gauss-Seidel, ordered */
    check("gs5",
          "dist U = zeros(f64, 8, 8)\n@ordered parallel_for (i, j), u in U\n"
          "    u = U[i - 1, j] + U[i + 1, j] + U[i, j - 1] + U[i, j + 1]\nend\n",
          "2d_ordered dims=[0,1] vecs=[1, 0][0, 1] U=partitioned\n", 0);
    check("gs9",
          "dist U = zeros(f64, 8, 8)\n@ordered parallel_for (i, j), u in U\n"
          "    u = U[i-1, j-1] + U[i-1, j] + U[i-1, j+1] + U[i, j-1] + U[i, j+1] + U[i+1, j-1] "
          "+ U[i+1, j] + U[i+1, j+1]\nend\n",
          "unimodular dims=[0,1] T=[[1,0],[1,1]] 2d_ordered vecs=[1, 1][1, 0][1, -1][0, 1] "
          "U=partitioned\n",
          0);
    /* prefix sum: serial, warned, ordered or not */
    check("prefix",
          "dist A = zeros(f64, 8)\n@ordered parallel_for i, a in A\n    a += A[i - 1]\nend\n"
          "parallel_for i, a in A\n    A[i] += A[i - 1]\nend\n",
          "serial dims=[] vecs=[1] A=partitioned\nserial dims=[] vecs=[1] A=partitioned\n", 2);
    /* coefficients */
    check("coef",
          "dist A = zeros(f64, 40)\ndist B = zeros(f64, 8)\n"
          "parallel_for i, b in B\n    A[2 * i] = A[2 * i + 1] + b\nend\n"
          "parallel_for i, b in B\n    A[2 * i] = A[2 * i + 2] + b\nend\n"
          "parallel_for i, b in B\n    A[3 * i + 1] += A[6 * i]\nend\n",
          "1d dims=[0] vecs=- B=partitioned A=remote\n"
          "serial dims=[] vecs=[1] B=partitioned A=remote\n"
          "1d dims=[0] vecs=- B=partitioned A=remote\n",
          1);
    /* 3-D space with an unused key; 4-D */
    check("space3",
          "dist T = zeros(f64, 4, 4, 4)\ndist S = zeros(f64, 4)\ndist R = zeros(f64, 4)\n"
          "parallel_for (a, b, c), v in T\n    S[a] += v\n    R[b] += v\nend\n",
          "2d dims=[0,1] vecs=[0, *, *][*, 0, *] T=partitioned S=partitioned R=rotated\n", 0);
    check("space4",
          "dist T = zeros(f64, 2, 2, 2, 2)\ndist P = zeros(f64, 2, 2)\n"
          "parallel_for (a, b, c, d), t in T\n    P[c, d] += t\nend\n",
          "1d dims=[2] vecs=[*, *, 0, 0] T=partitioned P=partitioned\n", 0);
    /* write-write: a dependence ordered or not (unordered, blocks on two ranks could each
     * keep their own value of the elements they own: no serial order gives that) */
    check("ww",
          "dist M = zeros(f64, 4, 4)\ndist last = zeros(f64, 4)\n"
          "parallel_for (i, j), v in M\n    last[j] = v\nend\n"
          "@ordered parallel_for (i, j), v in M\n    last[j] = v\nend\n",
          "1d dims=[1] vecs=[*, 0] M=partitioned last=partitioned\n"
          "1d dims=[1] vecs=[+, 0] M=partitioned last=partitioned\n",
          0);
    /* unordered stencils: a wavefront (2d blocks cannot read the neighbours' elements that
     * others write: that plan aborted), and a skew to diagonals */
    check("unordered",
          "dist U = zeros(f64, 8, 8)\n"
          "parallel_for (i, j), u in U\n    u = U[i - 1, j] + U[i, j - 1]\nend\n"
          "parallel_for (i, j), u in U\n    u = U[i - 1, j - 1]\nend\n",
          "2d_ordered dims=[0,1] vecs=[1, 0][0, 1] U=partitioned\n"
          "unimodular dims=[1] T=[[1,0],[-1,1]] 1d vecs=[1, 1] U=partitioned\n",
          0);
    /* ordered MF: wavefront */
    check("ordered_mf",
          "dist R = zeros(f32, 4, 4)\ndist W = zeros(f32, 2, 4)\ndist H = zeros(f32, 2, 4)\n"
          "@ordered parallel_for (u, i), r in R\n    W[:, u] += r * H[:, i]\n"
          "    H[:, i] += r * W[:, u]\nend\n",
          "2d_ordered dims=[0,1] vecs=[0, +][+, 0] R=partitioned W=partitioned H=rotated\n", 0);
    /* a buffered update with irregular reads (SLR's shape: a sparse X; over a dense row the
     * reads of w are a range, and a small w is replicated) */
    check("buffered",
          "dist X = load_triplets(\"x\")\ndist y = zeros(f32, rows(X))\n"
          "dist w = zeros(f32, cols(X))\n"
          "dist dw = buffer(w)\nparallel_for n, label in y\n    for (f, x) in X[n, :]\n"
          "        dw[f] += x * w[f]\n    end\nend\n",
          "1d dims=[0] vecs=- y=partitioned X=partitioned dw=buffered w=prefetched\n", 0);
    /* locals followed once, not twice; calls inlined. A is written at i + 1: a block of i
     * writes its neighbour's first element, so A is remote, not partitioned with a halo
     * (halos are read-only; that plan aborted at 2 ranks) */
    check("locals",
          "dist A = zeros(f64, 10)\ndist B = zeros(f64, 8)\n"
          "parallel_for i, b in B\n    r = i + 1\n    A[r] = A[r] * b\nend\n"
          "parallel_for i, b in B\n    r = i\n    r += 1\n    A[r] = A[i] * b\nend\n",
          "1d dims=[0] vecs=- B=partitioned A=remote\n"
          "serial dims=[] vecs=[*] B=partitioned A=remote\n",
          1);
    check("calls",
          "dist R = zeros(f32, 4, 4)\ndist W = zeros(f32, 2, 4)\ndist H = zeros(f32, 2, 4)\n"
          "fn upd(a: i64, b: i64, e: f32)\n    W[:, a] += e * H[:, b]\n    H[:, b] += e * W[:, "
          "a]\nend\n"
          "parallel_for (u, i), r in R\n    upd(u, i, r)\nend\n",
          "2d dims=[0,1] vecs=[0, *][*, 0] R=partitioned W=partitioned H=rotated\n", 0);
    /* replicated: constant and invariant subscripts */
    check("replicated",
          "param p = 1\ndist X = zeros(f64, 8)\ndist c = zeros(f64, 4)\n"
          "parallel_for i, x in X\n    x = c[0] + c[p]\n    for t in 0..4\n        x += c[t]\n    "
          "end\nend\n",
          "1d dims=[0] vecs=- X=partitioned c=replicated\n", 0);
    /* a recurrence along one key keeps the other parallel */
    check("rec",
          "dist M = zeros(f64, 4, 4)\n@ordered parallel_for (i, j), v in M\n    v = M[i, j - "
          "1]\nend\n",
          "1d dims=[0] vecs=[0, 1] M=partitioned\n", 0);
}

/* Programs whose plans the runtime refused before the analyzer shared its plan check
 * (issue 9), and the two the runtime learned to run. */
static void test_runnable(void)
{
    /* edit distance: A[i - 1] stays with the rows, B[j - 1] travels down the wavefront */
    check("edit_distance",
          "dist A = zeros(i64, 8)\ndist B = zeros(i64, 6)\ndist D = zeros(i64, 9, 7)\n"
          "@ordered parallel_for (i, j), d in D\n    if i > 0 and j > 0\n        c = 1\n"
          "        if A[i - 1] == B[j - 1]\n            c = 0\n        end\n"
          "        d = min(min(D[i - 1, j] + 1, D[i, j - 1] + 1), D[i - 1, j - 1] + c)\n"
          "    end\nend\n",
          "2d_ordered dims=[0,1] vecs=[1, 0][0, 1][1, 1] D=partitioned A=partitioned "
          "B=rotated\n",
          0);
    /* SGD MF with sparse side features: G with the users, F (sparse) rotated with H */
    check("mf_side",
          "dist R = load_triplets(\"r\")\ndist G = load_triplets(\"g\")\n"
          "dist F = load_triplets(\"f\")\ndist W = zeros(f32, 4, 3)\n"
          "dist H = zeros(f32, 4, 3)\nparallel_for (u, i), r in R\n    s = 0.0\n"
          "    for (f, x) in G[u, :]\n        s += x\n    end\n"
          "    for (f, x) in F[i, :]\n        s += x\n    end\n"
          "    W[u, :] += (r - s) * H[i, :]\n    H[i, :] += (r - s) * W[u, :]\nend\n",
          "2d dims=[0,1] vecs=[0, *][*, 0] R=partitioned G=partitioned F=rotated W=partitioned "
          "H=rotated\n",
          0);
    /* a sparse rotated array read with a halo has no ghost cells: a copy; row views of a
     * prefetched sparse array cannot be served: a copy */
    check("sparse_halo",
          "dist R = load_triplets(\"r\")\ndist F = load_triplets(\"f\")\n"
          "dist W = zeros(f32, 4, 3)\ndist H = zeros(f32, 4, 3)\n"
          "parallel_for (u, i), r in R\n    s = 0.0\n    for (f, x) in F[i - 1, :]\n"
          "        s += x\n    end\n    W[u, :] += (r - s) * H[i, :]\n"
          "    H[i, :] += (r - s) * W[u, :]\nend\n"
          "dist y = zeros(f32, 4)\nparallel_for (u, i), r in R\n    s = 0.0\n"
          "    for (f, x) in F[i, :]\n        s += x\n    end\n    y[u] += s * r\nend\n",
          "2d dims=[0,1] vecs=[0, *][*, 0] R=partitioned F=replicated W=partitioned "
          "H=rotated\n"
          "1d dims=[0] vecs=[0, *] R=partitioned F=replicated y=partitioned\n",
          0);
    /* a skewed loop reading arrays aligned with its keys: they cannot stay partitioned */
    check("skew_arrays",
          "dist U = zeros(f64, 12, 12)\ndist C = zeros(f64, 12, 12)\ndist B = zeros(f64, 12)\n"
          "dist S = zeros(f64, 12, 12)\n@ordered parallel_for (i, j), u in U\n"
          "    u = U[i - 1, j + 1] + C[i, j] + B[j]\n    S[i, j] = u\nend\n",
          "unimodular dims=[1] T=[[1,0],[1,1]] 1d vecs=[1, -1] U=partitioned "
          "C=replicated<partitioned B=replicated S=remote<partitioned\n",
          0);
}

int main(void)
{
    test_examples();
    test_loops();
    test_runnable();
    printf("analyze: %d loops of whole programs have their expected plans (%d serial "
           "warnings)\n",
           loops_checked, warnings_seen);
    return CHECK_DONE();
}
