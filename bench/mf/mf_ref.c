/* mf_ref.c: hand-written serial C baseline of the SGD MF workloads (bench/run.sh).
 *
 *   mf_ref TRAIN TEST EPOCHS RANK [STEP LAM DECAY INIT SEED GRID]
 *
 * The update of bench/mf/mf_*.orn, written as a performance-minded person writes it in
 * C: float factors stored one contiguous row of RANK floats per user and per item, float
 * arithmetic, and the training ratings visited in a GRID x GRID block order, as LIBMF /
 * FPSGD do (Zhuang et al., RecSys 2013): users and items are cut into GRID ranges, the
 * ratings bucketed by (user range, item range) once before training and sorted by user
 * inside a block, and each epoch walks the blocks row by row, so a block's item factors
 * stay in L2 while its ratings stream. Per rating, in that order:
 *     e = r - w_u . h_i;  w_u += lr (e h_i - lam w_u);  h_i += lr (e w_u - lam h_i)
 * the dot product in float with 16 partial sums (vectorizes without -ffast-math).
 * GRID defaults to 20 (0: choose from the L2 size). Prints per-epoch train RMSE and seconds,
 * then "bench: S s/iter  test_rmse X" (training seconds per epoch, evaluation excluded). */
#include "../common/bench.h"

typedef struct {
    int32_t u, i;
    float r;
} Rating;

static Rating *read_triplets(const char *path, size_t *n, int *nu, int *ni)
{
    char *buf = bench_slurp(path, NULL), *p = buf;
    size_t cap = 1 << 16, k = 0;
    Rating *R = bench_xmalloc(cap * sizeof *R);
    while ((p = bench_line(p))) {
        char *e;
        long u = strtol(p, &e, 10);
        long i = strtol(e, &e, 10);
        float r = strtof(e, &e);
        if (e == p) {
            fprintf(stderr, "%s: malformed line\n", path);
            exit(1);
        }
        p = e;
        if (k == cap) R = realloc(R, (cap *= 2) * sizeof *R);
        R[k++] = (Rating){(int32_t)u, (int32_t)i, r};
        if (u >= *nu) *nu = (int)u + 1;
        if (i >= *ni) *ni = (int)i + 1;
    }
    free(buf);
    *n = k;
    return R;
}

static int by_user(const void *a, const void *b)
{
    const Rating *x = a, *y = b;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static inline float dotf(const float *restrict a, const float *restrict b, int K)
{
    float acc[16] = {0};
    int x = 0;
    for (; x + 16 <= K; x += 16)
        for (int l = 0; l < 16; l++) acc[l] += a[x + l] * b[x + l];
    for (; x < K; x++) acc[x & 15] += a[x] * b[x];
    float s = 0;
    for (int l = 0; l < 16; l++) s += acc[l];
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: mf_ref TRAIN TEST EPOCHS RANK [STEP LAM DECAY INIT SEED GRID]\n");
        return 2;
    }
    int epochs = atoi(argv[3]), K = atoi(argv[4]);
    float step = argc > 5 ? strtof(argv[5], NULL) : 0.01f;
    float lam = argc > 6 ? strtof(argv[6], NULL) : 0.05f;
    float decay = argc > 7 ? strtof(argv[7], NULL) : 0.95f;
    float init = argc > 8 ? strtof(argv[8], NULL) : 0.1f;
    if (argc > 9) bench_rng = (uint64_t)atoll(argv[9]);
    int grid = argc > 10 ? atoi(argv[10]) : 20;
    size_t n = 0, nt = 0;
    int nu = 0, ni = 0;
    Rating *R = read_triplets(argv[1], &n, &nu, &ni);
    Rating *T = read_triplets(argv[2], &nt, &nu, &ni);
    if (grid <= 0) {
        /* item factors of one block in half of L2 */
        long l2 = 1 << 20;
        grid = (int)((size_t)ni * (size_t)K * 4 / (size_t)(l2 / 2)) + 1;
    }
    if (grid > nu) grid = nu;
    if (grid > ni) grid = ni;
    /* bucket the ratings by block, then sort each block by user */
    size_t nb = (size_t)grid * (size_t)grid;
    size_t *start = calloc(nb + 1, sizeof *start);
    int64_t ub = (nu + grid - 1) / grid, ib = (ni + grid - 1) / grid;
    for (size_t k = 0; k < n; k++) start[(size_t)(R[k].u / ub * grid + R[k].i / ib) + 1]++;
    for (size_t b = 0; b < nb; b++) start[b + 1] += start[b];
    Rating *B = bench_xmalloc(n * sizeof *B);
    size_t *fill = bench_xmalloc(nb * sizeof *fill);
    memcpy(fill, start, nb * sizeof *fill);
    for (size_t k = 0; k < n; k++) B[fill[R[k].u / ub * grid + R[k].i / ib]++] = R[k];
    for (size_t b = 0; b < nb; b++)
        qsort(B + start[b], start[b + 1] - start[b], sizeof *B, by_user);
    free(R);
    free(fill);

    float *W = bench_xmalloc(sizeof(float) * (size_t)nu * (size_t)K);
    float *H = bench_xmalloc(sizeof(float) * (size_t)ni * (size_t)K);
    for (size_t x = 0; x < (size_t)nu * (size_t)K; x++) W[x] = (float)(init * bench_gauss());
    for (size_t x = 0; x < (size_t)ni * (size_t)K; x++) H[x] = (float)(init * bench_gauss());
    printf("mf_ref: %d users x %d items, %zu ratings, rank %d, %dx%d blocks\n", nu, ni, n, K, grid,
           grid);
    float lr = step;
    double total = 0;
    for (int ep = 0; ep < epochs; ep++) {
        double t0 = bench_now(), loss = 0;
        for (size_t b = 0; b < nb; b++) {
            float bl = 0;
            for (size_t k = start[b]; k < start[b + 1]; k++) {
                float *restrict w = W + (size_t)B[k].u * (size_t)K;
                float *restrict h = H + (size_t)B[k].i * (size_t)K;
                float e = B[k].r - dotf(w, h, K);
                bl += e * e;
                for (int x = 0; x < K; x++) w[x] += lr * (e * h[x] - lam * w[x]);
                for (int x = 0; x < K; x++) h[x] += lr * (e * w[x] - lam * h[x]);
            }
            loss += bl;
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("epoch %3d  train rmse %.4f  %.3f s\n", ep + 1, sqrt(loss / (double)n), secs);
        lr *= decay;
    }
    double se = 0;
    for (size_t k = 0; k < nt; k++) {
        float e = T[k].r - dotf(W + (size_t)T[k].u * (size_t)K, H + (size_t)T[k].i * (size_t)K, K);
        se += (double)e * e;
    }
    printf("bench: %.6f s/iter  test_rmse %.6f\n", total / epochs, sqrt(se / (double)nt));
    free(B);
    free(T);
    free(start);
    free(W);
    free(H);
    return 0;
}
