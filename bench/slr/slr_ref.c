/* slr_ref.c: hand-written serial C baseline of the SLR workload (bench/run.sh).
 *
 *   slr_ref TRAIN TEST EPOCHS [STEP LAM]
 *
 * Sparse logistic regression by SGD, the algorithm of bench/slr/slr.orn: per sample,
 * z = x . w, p = sigmoid(z), log-loss accumulated, then w[f] -= step (g x_f + lam w[f]) over
 * the sample's features. Samples in CSR (int32 feature ids, float values), float weights,
 * z and the sigmoid in float (the .orn program's `z = 0.0` is f32 by float inference: its
 * updates are f32 products), the loss in double, as in the .orn program. The serial loop
 * applies each update at once (as the .orn program does at one rank). Prints "bench: S s/iter
 * test_accuracy X", and with $SLR_CURVE=1 after every epoch "curve EPOCH SECONDS LOGLOSS
 * ACCURACY" (training seconds so far, evaluation excluded), as bench/slr/slr.orn --curve. */
#include "../common/bench.h"

typedef struct {
    int64_t n, nnz, nf;
    int64_t *start;
    int32_t *col;
    float *val, *label;
} Csr;

static void read_libsvm(const char *path, Csr *m)
{
    char *buf = bench_slurp(path, NULL), *p = buf;
    size_t cr = 1 << 16, cz = 1 << 20;
    m->n = m->nnz = 0;
    m->start = bench_xmalloc(cr * 8), m->label = bench_xmalloc(cr * 4);
    m->col = bench_xmalloc(cz * 4), m->val = bench_xmalloc(cz * 4);
    m->start[0] = 0;
    while ((p = bench_line(p))) {
        char *e;
        float lab = strtof(p, &e);
        p = e;
        for (;;) {
            p = bench_skip(p);
            if (*p == '\n' || !*p) break;
            long f = strtol(p, &e, 10);
            if (*e != ':') {
                fprintf(stderr, "%s: malformed line\n", path);
                exit(1);
            }
            float v = strtof(e + 1, &e);
            p = e;
            if ((size_t)m->nnz == cz) {
                cz *= 2;
                m->col = realloc(m->col, cz * 4), m->val = realloc(m->val, cz * 4);
            }
            m->col[m->nnz] = (int32_t)(f - 1), m->val[m->nnz++] = v;
            if (f > m->nf) m->nf = f;
        }
        if ((size_t)m->n + 2 >= cr) {
            cr *= 2;
            m->start = realloc(m->start, cr * 8), m->label = realloc(m->label, cr * 4);
        }
        m->label[m->n++] = lab;
        m->start[m->n] = m->nnz;
    }
    free(buf);
}

/* The share of T's samples whose sign of x . w matches the label's. */
static double accuracy(const Csr *T, const float *w)
{
    int64_t correct = 0;
    for (int64_t s = 0; s < T->n; s++) {
        float z = 0;
        for (int64_t x = T->start[s]; x < T->start[s + 1]; x++) z += T->val[x] * w[T->col[x]];
        correct += (z > 0) == (T->label[s] > 0);
    }
    return (double)correct / (double)T->n;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: slr_ref TRAIN TEST EPOCHS [STEP LAM]\n");
        return 2;
    }
    int epochs = atoi(argv[3]);
    double step = argc > 4 ? atof(argv[4]) : 0.05, lam = argc > 5 ? atof(argv[5]) : 0.0001;
    Csr X = {0}, T = {0};
    read_libsvm(argv[1], &X);
    read_libsvm(argv[2], &T);
    int64_t nf = X.nf > T.nf ? X.nf : T.nf;
    float *w = calloc((size_t)nf, sizeof *w);
    printf("slr_ref: %lld samples, %lld features, %lld non-zeros\n", (long long)X.n, (long long)nf,
           (long long)X.nnz);
    double total = 0;
    const char *cv = getenv("SLR_CURVE");
    int curve = cv && *cv == '1';
    for (int ep = 0; ep < epochs; ep++) {
        double t0 = bench_now(), loss = 0;
        for (int64_t s = 0; s < X.n; s++) {
            const int32_t *c = X.col + X.start[s];
            const float *v = X.val + X.start[s];
            int64_t m = X.start[s + 1] - X.start[s];
            float z = 0;
            for (int64_t x = 0; x < m; x++) z += v[x] * w[c[x]];
            float p = 1.0f / (1.0f + expf(-z));
            double target = X.label[s] > 0 ? 1.0 : 0.0;
            loss += -(target * logf(p + 1e-12f) + (1.0 - target) * logf(1.0f - p + 1e-12f));
            double g = p - target;
            for (int64_t x = 0; x < m; x++) w[c[x]] -= (float)(step * (g * v[x] + lam * w[c[x]]));
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("epoch %3d  log-loss %.4f  %.3f s\n", ep + 1, loss / (double)X.n, secs);
        if (curve)
            printf("curve %d %.6f %.4f %.6f\n", ep + 1, total, loss / (double)X.n, accuracy(&T, w));
    }
    printf("bench: %.6f s/iter  test_accuracy %.6f\n", total / epochs, accuracy(&T, w));
    return 0;
}
