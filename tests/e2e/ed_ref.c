/* ed_ref.c: the serial edit distance of edit_distance.orn in plain C: the program's output
 * and saved arrays must equal these byte for byte at every rank count.
 *
 *   ed_ref SEQ_A SEQ_B OUTDIR
 *
 * Reads the two sequences ("index symbol" lines), fills D in key order as the loop does,
 * with row_best / col_best (the smallest entry of each row / column) and the weighted
 * checksum, prints the program's line and writes D.txt, row_best.txt and col_best.txt in
 * save()'s text format into OUTDIR. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t *load(const char *path, int64_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    int64_t cap = 256, *v = malloc((size_t)cap * sizeof *v);
    long long i, x;
    *n = 0;
    while (fscanf(f, "%lld %lld", &i, &x) == 2) {
        if (i != *n) {
            fprintf(stderr, "ed_ref: %s: index %lld out of order\n", path, i);
            exit(2);
        }
        if (*n == cap) v = realloc(v, (size_t)(cap *= 2) * sizeof *v);
        v[(*n)++] = x;
    }
    fclose(f);
    return v;
}

static FILE *create(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    return f;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: ed_ref SEQ_A SEQ_B OUTDIR\n");
        return 2;
    }
    int64_t n, m;
    int64_t *A = load(argv[1], &n), *B = load(argv[2], &m);
    int64_t w = m + 1, *D = calloc((size_t)((n + 1) * w), sizeof *D);
    int64_t *rb = malloc((size_t)(n + 1) * sizeof *rb), *cb = malloc((size_t)w * sizeof *cb);
    for (int64_t i = 0; i <= n; i++) rb[i] = n + m;
    for (int64_t j = 0; j <= m; j++) cb[j] = n + m;
    uint64_t checksum = 0; /* i64 sums wrap */
    for (int64_t i = 0; i <= n; i++)
        for (int64_t j = 0; j <= m; j++) {
            int64_t d;
            if (i == 0)
                d = j;
            else if (j == 0)
                d = i;
            else
                d = min64(min64(D[(i - 1) * w + j] + 1, D[i * w + j - 1] + 1),
                          D[(i - 1) * w + j - 1] + (A[i - 1] == B[j - 1] ? 0 : 1));
            D[i * w + j] = d;
            rb[i] = min64(rb[i], d);
            cb[j] = min64(cb[j], d);
            checksum += (uint64_t)d * (uint64_t)((i * 31 + j * 17) % 1009 + 1);
        }
    printf("%" PRId64 " x %" PRId64 ": distance %" PRId64 ", checksum %" PRId64 "\n", n, m,
           D[n * w + m], (int64_t)checksum);
    FILE *f = create(argv[3], "D.txt");
    for (int64_t i = 0; i <= n; i++)
        for (int64_t j = 0; j <= m; j++)
            fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 "\n", i, j, D[i * w + j]);
    fclose(f);
    f = create(argv[3], "row_best.txt");
    for (int64_t i = 0; i <= n; i++) fprintf(f, "%" PRId64 " %" PRId64 "\n", i, rb[i]);
    fclose(f);
    f = create(argv[3], "col_best.txt");
    for (int64_t j = 0; j <= m; j++) fprintf(f, "%" PRId64 " %" PRId64 "\n", j, cb[j]);
    fclose(f);
    free(A);
    free(B);
    free(D);
    free(rb);
    free(cb);
    return 0;
}
