/* matvec_ref.c: hand-written serial C baseline of the matrix-vector forms (matvec_row,
 * matvec_view, matvec_foreach, matvec_col, matvec_elem), of column sums (colsum), of row
 * second differences (rowdiff) and of rows gathered by a permutation (gather_view,
 * gather_row; bench/forms/run.sh).
 *
 *   matvec_ref DATA ITERS [colsum|rowdiff|gather]
 *
 * DATA: a dense f64 (N, M) array in Orion's binary format (bench/forms/gen_dense.c). y = A x
 * with x[j] = 1 / (j + 1), ITERS times: A row-major, each y[i] a dot product with 8 partial
 * sums (vectorized without -ffast-math). Prints "bench: S s/iter  yy X" (dot(y, y)).
 * colsum: s[j] = the sum of column j, rows in order (gcc vectorizes along j and jams two
 * rows); prints "bench: S s/iter  ss X" (dot(s, s)).
 * rowdiff: y[i] = the sum over j in 1..M-2 of (a[j-1] - 2 a[j] + a[j+1])^2, the interior
 * only, 8 partial sums; prints "bench: S s/iter  yy X" (dot(y, y)).
 * gather: y[i] = the dot product of row p[i] with x, p[i] = (1237 i + 11) mod N (a
 * permutation for N a power of two), 8 partial sums; prints "bench: S s/iter  yy X". */
#include "../common/bench.h"

int main(int argc, char **argv)
{
    if (argc < 3 || (argc > 3 && strcmp(argv[3], "colsum") && strcmp(argv[3], "rowdiff") &&
                     strcmp(argv[3], "gather"))) {
        fprintf(stderr, "usage: matvec_ref DATA ITERS [colsum|rowdiff|gather]\n");
        return 2;
    }
    int iters = atoi(argv[2]), rowdiff = argc > 3 && !strcmp(argv[3], "rowdiff"),
        gather = argc > 3 && !strcmp(argv[3], "gather"), colsum = argc > 3 && !rowdiff && !gather;
    size_t len;
    char *blk, *buf = bench_slurp_at(argv[1], &len, 80, &blk); /* the elements on a cache line */
    int64_t n, m;
    uint32_t type;
    memcpy(&type, buf + 16, 4);
    memcpy(&n, buf + 32, 8);
    memcpy(&m, buf + 40, 8);
    if (memcmp(buf, "ORNARR", 6) || type != 3 || len != 80 + (size_t)(n * m) * 8) {
        fprintf(stderr, "%s: not a dense f64 Orion array of the expected size\n", argv[1]);
        return 1;
    }
    const double *A = (const double *)(buf + 80);
    double *x = bench_xmalloc((size_t)m * 8), *y = bench_xmalloc((size_t)n * 8);
    for (int64_t j = 0; j < m; j++) x[j] = 1.0 / (double)(j + 1);
    double total = 0;
    double *s = bench_xmalloc((size_t)m * 8);
    int64_t *p = bench_xmalloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) p[i] = (i * 1237 + 11) % n;
    for (int it = 0; it < iters; it++) {
        double t0 = bench_now();
        if (colsum) {
            memset(s, 0, (size_t)m * 8);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++) s[j] += A[i * m + j];
        }
        for (int64_t i = 0; i < n && rowdiff; i++) {
            const double *a = A + i * m;
            double acc[8] = {0};
            int64_t j = 1;
            for (; j + 8 <= m - 1; j += 8)
#pragma omp simd /* lanes across l (gcc otherwise vectorizes across j: 1.4x slower) */
                for (int l = 0; l < 8; l++) {
                    double d = a[j + l - 1] - 2.0 * a[j + l] + a[j + l + 1];
                    acc[l] += d * d;
                }
            for (; j < m - 1; j++) {
                double d = a[j - 1] - 2.0 * a[j] + a[j + 1];
                acc[(j - 1) % 8] += d * d;
            }
            y[i] =
                ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        }
        for (int64_t i = 0; i < n && !colsum && !rowdiff; i++) {
            const double *a = A + (gather ? p[i] : i) * m;
            double acc[8] = {0};
            int64_t j = 0;
            for (; j + 8 <= m; j += 8)
#pragma omp simd
                for (int l = 0; l < 8; l++) acc[l] += a[j + l] * x[j + l];
            for (; j < m; j++) acc[j % 8] += a[j] * x[j];
            y[i] =
                ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        }
        double secs = bench_now() - t0;
        total += secs;
        printf("iteration %3d  %.3f s\n", it + 1, secs);
    }
    const double *out = colsum ? s : y; /* the figure: dot(y, y), or dot(s, s) */
    double oo = 0;
    for (int64_t i = 0; i < (colsum ? m : n); i++) oo += out[i] * out[i];
    printf("bench: %.6f s/iter  %s %.12e\n", total / iters, colsum ? "ss" : "yy", oo);
    free(blk), free(x), free(y), free(s), free(p);
    return 0;
}
