/* mf_rmse.c: the test RMSE of a cuMF_SGD (LIBMF-format) model, for bench/gpu/device.sh.
 *
 *   mf_rmse MODEL TEST
 *
 * MODEL: int32 0, int32 m, int32 n, int32 k, float b, then P (m x k floats) and Q (n x k),
 * as cuMF_SGD's save_model writes it; TEST: "user item rating" lines. A rating is predicted
 * as P[u] . Q[i] (cuMF_SGD's model has no biases); a user or item outside the model counts
 * with prediction b. Prints "test rmse R (N ratings)". */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mf_rmse MODEL TEST\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb"), *t = fopen(argv[2], "r");
    if (!f || !t) {
        fprintf(stderr, "mf_rmse: cannot open %s\n", !f ? argv[1] : argv[2]);
        return 1;
    }
    int32_t h[4];
    float b;
    if (fread(h, sizeof h, 1, f) != 1 || fread(&b, sizeof b, 1, f) != 1 || h[1] < 0 || h[2] < 0 ||
        h[3] < 1) {
        fprintf(stderr, "mf_rmse: %s: not a model\n", argv[1]);
        return 1;
    }
    int64_t m = h[1], n = h[2], k = h[3];
    float *P = malloc(sizeof *P * (size_t)(m * k + 1)),
          *Q = malloc(sizeof *Q * (size_t)(n * k + 1));
    if (!P || !Q || fread(P, sizeof *P, (size_t)(m * k), f) != (size_t)(m * k) ||
        fread(Q, sizeof *Q, (size_t)(n * k), f) != (size_t)(n * k)) {
        fprintf(stderr, "mf_rmse: %s: short model\n", argv[1]);
        return 1;
    }
    double se = 0;
    int64_t cnt = 0, u, i, line = 0;
    double r;
    int got;
    while ((got = fscanf(t, "%" SCNd64 " %" SCNd64 " %lf", &u, &i, &r)) == 3) {
        line++;
        double p = b;
        if (u >= 0 && u < m && i >= 0 && i < n) {
            p = 0;
            for (int64_t q = 0; q < k; q++) p += (double)P[u * k + q] * Q[i * k + q];
        }
        se += (r - p) * (r - p);
        cnt++;
    }
    if (got != EOF) {
        fprintf(stderr, "mf_rmse: %s:%" PRId64 ": not 'user item rating'\n", argv[2], line + 1);
        return 1;
    }
    printf("test rmse %.4f (%" PRId64 " ratings)\n", cnt ? sqrt(se / (double)cnt) : 0.0, cnt);
    free(P);
    free(Q);
    fclose(f);
    fclose(t);
    return 0;
}
