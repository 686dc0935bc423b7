/* als_ref.c: hand-written serial C ALS with the arithmetic of examples/als.orn, for
 * comparison:
 *   cc -O3 -march=native bench/als/als_ref.c -o als_ref $(pkg-config --cflags --libs openblas) -lm
 *   ./als_ref data/movielens_small.train data/movielens_small.test 10 10 0.1
 * Per user (then item): the K x K normal matrix from rank-1 updates written as loops (each
 * row a vectorized loop: what a performance-minded programmer writes for K around 10; a
 * cblas_dger call per rating took twice as long), lam * n on the diagonal, dposv.
 * Users' and items' ratings are kept as CSR by row and by column; H starts from the same
 * scale of normal noise (not the same draws as Orion's Philox stream). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dposv_(const char *, const int *, const int *, double *, const int *, double *, const int *,
            int *, size_t);

typedef struct {
    int n, *ptr, *idx;
    double *val;
} Csr;

static int load(const char *path, int **u, int **i, double **r)
{
    FILE *f = fopen(path, "r");
    if (!f) exit(1);
    int cap = 1 << 17, n = 0;
    *u = malloc(cap * sizeof **u), *i = malloc(cap * sizeof **i), *r = malloc(cap * sizeof **r);
    int a, b;
    double v;
    while (fscanf(f, "%d %d %lf", &a, &b, &v) == 3) {
        if (n == cap) {
            cap *= 2;
            *u = realloc(*u, cap * sizeof **u), *i = realloc(*i, cap * sizeof **i);
            *r = realloc(*r, cap * sizeof **r);
        }
        (*u)[n] = a, (*i)[n] = b, (*r)[n] = v, n++;
    }
    fclose(f);
    return n;
}

static Csr csr(int nr, int n, const int *row, const int *col, const double *v)
{
    Csr c = {nr, calloc(nr + 1, sizeof(int)), malloc(n * sizeof(int)), malloc(n * sizeof(double))};
    for (int k = 0; k < n; k++) c.ptr[row[k] + 1]++;
    for (int k = 0; k < nr; k++) c.ptr[k + 1] += c.ptr[k];
    int *pos = malloc(nr * sizeof(int));
    memcpy(pos, c.ptr, nr * sizeof(int));
    for (int k = 0; k < n; k++) c.idx[pos[row[k]]] = col[k], c.val[pos[row[k]]++] = v[k];
    free(pos);
    return c;
}

static void half(const Csr *c, const double *Y, double *X, int K, double lam, double mu)
{
    double *A = malloc(K * K * sizeof *A), *b = malloc(K * sizeof *b);
    int one = 1, info;
    for (int u = 0; u < c->n; u++) {
        int n = c->ptr[u + 1] - c->ptr[u];
        if (!n) continue;
        memset(A, 0, K * K * sizeof *A);
        memset(b, 0, K * sizeof *b);
        for (int p = c->ptr[u]; p < c->ptr[u + 1]; p++) {
            const double *y = Y + (size_t)c->idx[p] * K;
            for (int i = 0; i < K; i++) /* A += y y': K rows, each a vectorized loop */
                for (int j = 0; j < K; j++) A[i * K + j] += y[i] * y[j];
            for (int k = 0; k < K; k++) b[k] += (c->val[p] - mu) * y[k];
        }
        for (int k = 0; k < K; k++) A[k * K + k] += lam * n;
        dposv_("L", &K, &one, A, &K, b, &K, &info, 1);
        if (info) exit(2);
        memcpy(X + (size_t)u * K, b, K * sizeof *b);
    }
    free(A);
    free(b);
}

static double rmse(int n, const int *u, const int *i, const double *r, const double *W,
                   const double *H, int K, double mu)
{
    double se = 0;
    for (int k = 0; k < n; k++) {
        double e = r[k] - (mu + cblas_ddot(K, W + (size_t)u[k] * K, 1, H + (size_t)i[k] * K, 1));
        se += e * e;
    }
    return sqrt(se / n);
}

int main(int argc, char **argv)
{
    if (argc < 6) return 2;
    openblas_set_num_threads(1);
    int *u, *i, *tu, *ti;
    double *r, *tr;
    int n = load(argv[1], &u, &i, &r), nt = load(argv[2], &tu, &ti, &tr);
    int iters = atoi(argv[3]), K = atoi(argv[4]);
    double lam = atof(argv[5]), mu = 0;
    int nu = 0, ni = 0;
    for (int k = 0; k < n; k++)
        nu = u[k] >= nu ? u[k] + 1 : nu, ni = i[k] >= ni ? i[k] + 1 : ni, mu += r[k];
    for (int k = 0; k < nt; k++)
        nu = tu[k] >= nu ? tu[k] + 1 : nu, ni = ti[k] >= ni ? ti[k] + 1 : ni;
    mu /= n;
    Csr byu = csr(nu, n, u, i, r), byi = csr(ni, n, i, u, r);
    double *W = calloc((size_t)nu * K, sizeof *W), *H = malloc((size_t)ni * K * sizeof *H);
    srand(42);
    for (size_t k = 0; k < (size_t)ni * K; k++) {
        double a = (rand() + 1.0) / (RAND_MAX + 2.0), b = rand() / (RAND_MAX + 1.0);
        H[k] = 0.1 * sqrt(-2 * log(a)) * cos(6.283185307179586 * b);
    }
    for (int it = 0; it < iters; it++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        half(&byu, H, W, K, lam, mu);
        half(&byi, W, H, K, lam, mu);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
        printf("iteration %2d  train rmse %.4f  test rmse %.4f  %.4f s\n", it + 1,
               rmse(n, u, i, r, W, H, K, mu), rmse(nt, tu, ti, tr, W, H, K, mu), s);
    }
    return 0;
}
