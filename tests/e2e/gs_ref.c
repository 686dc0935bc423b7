/* gs_ref.c: the serial Gauss-Seidel of examples/gauss_seidel.orn in plain C: the grid the
 * compiled program saves must equal this one byte for byte at every rank count.
 *
 *   gs_ref N SWEEPS OUT.txt
 *
 * Same arithmetic: 0.25 * (((up + down) + left) + right) in row-major order, boundary 1 on
 * the top row; the output is save()'s text format (%.17g for f64). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: gs_ref N SWEEPS OUT\n");
        return 2;
    }
    long n = atol(argv[1]), sweeps = atol(argv[2]);
    double *u = calloc((size_t)(n * n), sizeof *u);
    if (!u) return 1;
    for (long j = 0; j < n; j++) u[j] = 1.0;
    for (long s = 0; s < sweeps; s++)
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                       u[i * n + j + 1]);
    FILE *f = fopen(argv[3], "w");
    if (!f) return 1;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) fprintf(f, "%ld %ld %.17g\n", i, j, u[i * n + j]);
    fclose(f);
    free(u);
    return 0;
}
