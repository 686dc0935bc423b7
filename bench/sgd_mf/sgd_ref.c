/* sgd_ref.c: the hand-written serial baseline of the SGD MF benchmark.
 *
 *   sgd_ref TRAIN EPOCHS RANK [STEP LAM DECAY INIT SEED]
 *
 * The update of bench/sgd_mf/sgd_bench.orn (and examples/sgd_mf.orn) written directly in C,
 * the way one would by hand: factors stored row per user / item (contiguous), ratings
 * visited in the order of the file, scalars in double:
 *     e = r - dot(w_u, h_i);  w_u += lr (e h_i - lam w_u);  h_i += lr (e w_u - lam h_i)
 * Compiled with -O3 -march=native and reassociation allowed (bench/sgd_mf/run.sh). Prints
 * the training RMSE and seconds of each epoch, then the mean seconds per epoch. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int32_t u, i;
    float r;
} Rating;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ULL;
static double gauss(void)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        u[k] = (double)(rng >> 11) * (1.0 / 9007199254740992.0);
    }
    return sqrt(-2.0 * log(1.0 - u[0])) * cos(6.283185307179586 * u[1]);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: sgd_ref TRAIN EPOCHS RANK [STEP LAM DECAY INIT SEED]\n");
        return 2;
    }
    int epochs = atoi(argv[2]), K = atoi(argv[3]);
    double step = argc > 4 ? atof(argv[4]) : 0.02, lam = argc > 5 ? atof(argv[5]) : 0.05;
    double decay = argc > 6 ? atof(argv[6]) : 0.95, init = argc > 7 ? atof(argv[7]) : 0.1;
    if (argc > 8) rng = (uint64_t)atoll(argv[8]) | 1;
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t n = 0, cap = 1 << 20;
    Rating *R = malloc(cap * sizeof *R);
    int nu = 0, ni = 0, u, i;
    float r;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%d %d %f", &u, &i, &r) != 3) continue;
        if (n == cap) R = realloc(R, (cap *= 2) * sizeof *R);
        R[n++] = (Rating){u, i, r};
        if (u >= nu) nu = u + 1;
        if (i >= ni) ni = i + 1;
    }
    fclose(f);
    float *W = malloc(sizeof(float) * (size_t)nu * (size_t)K);
    float *H = malloc(sizeof(float) * (size_t)ni * (size_t)K);
    for (size_t x = 0; x < (size_t)nu * (size_t)K; x++) W[x] = (float)(init * gauss());
    for (size_t x = 0; x < (size_t)ni * (size_t)K; x++) H[x] = (float)(init * gauss());
    printf("sgd_ref: %d users x %d items, %zu ratings, rank %d\n", nu, ni, n, K);
    double lr = step, total = 0;
    for (int ep = 0; ep < epochs; ep++) {
        double t0 = now(), loss = 0;
        for (size_t k = 0; k < n; k++) {
            float *w = W + (size_t)R[k].u * (size_t)K, *h = H + (size_t)R[k].i * (size_t)K;
            double dot = 0;
            for (int x = 0; x < K; x++) dot += (double)w[x] * (double)h[x];
            double e = (double)R[k].r - dot;
            loss += e * e;
            for (int x = 0; x < K; x++) w[x] = (float)(w[x] + lr * (e * h[x] - lam * w[x]));
            for (int x = 0; x < K; x++) h[x] = (float)(h[x] + lr * (e * w[x] - lam * h[x]));
        }
        double secs = now() - t0;
        total += secs;
        printf("epoch %3d  train rmse %.4f  %.3f s\n", ep + 1, sqrt(loss / (double)n), secs);
        lr *= decay;
    }
    printf("sgd_ref: %.4f s per epoch\n", total / epochs);
    free(R);
    free(W);
    free(H);
    return 0;
}
