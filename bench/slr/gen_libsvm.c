/* gen_libsvm.c: synthetic sparse binary classification data for the SLR workload.
 *
 *   gen_libsvm SAMPLES FEATURES NNZ_PER_ROW SEED TRAIN TEST
 *
 * Each sample has NNZ_PER_ROW distinct features, feature f drawn with density falling as
 * 1/sqrt(f) (f = FEATURES * u^2: a few common features, a long tail), value uniform in
 * (0, 1]. Truth weights w* ~ N(0, 1); label +1 when x . w* + N(0, 0.5^2) > 0, else -1.
 * TRAIN gets SAMPLES rows, TEST SAMPLES/10 more. libsvm format, 1-based feature ids in
 * increasing order. Deterministic for a given SEED. */
#include "../common/bench.h"

static int cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void write_rows(FILE *f, int64_t rows, int64_t nf, int z, const float *w)
{
    int32_t *idx = bench_xmalloc((size_t)z * 4);
    for (int64_t r = 0; r < rows; r++) {
        int m = 0;
        while (m < z) {
            double u = bench_uniform();
            int32_t c = (int32_t)((double)nf * u * u);
            int dup = 0;
            for (int x = 0; x < m; x++) dup |= idx[x] == c;
            if (!dup) idx[m++] = c;
        }
        qsort(idx, (size_t)z, 4, cmp);
        float val[256];
        double s = 0.5 * bench_gauss();
        for (int x = 0; x < m && x < 256; x++) {
            val[x] = (float)(1.0 - bench_uniform());
            val[x] = (float)(int)(val[x] * 1000 + 0.5) / 1000.0f; /* what %.3g prints */
            if (val[x] == 0) val[x] = 0.001f;
            s += val[x] * w[idx[x]];
        }
        fputs(s > 0 ? "+1" : "-1", f);
        for (int x = 0; x < m; x++) fprintf(f, " %d:%.3g", idx[x] + 1, val[x]);
        fputc('\n', f);
    }
    free(idx);
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: gen_libsvm SAMPLES FEATURES NNZ_PER_ROW SEED TRAIN TEST\n");
        return 2;
    }
    int64_t n = atoll(argv[1]), nf = atoll(argv[2]);
    int z = atoi(argv[3]);
    bench_rng = (uint64_t)atoll(argv[4]);
    if (n < 1 || nf < 1 || z < 1 || z > 256 || z > nf / 4) return 2;
    float *w = bench_xmalloc((size_t)nf * 4);
    for (int64_t f = 0; f < nf; f++) w[f] = (float)bench_gauss();
    FILE *tr = fopen(argv[5], "w"), *te = fopen(argv[6], "w");
    if (!tr || !te) {
        perror("gen_libsvm");
        free(w);
        return 1;
    }
    write_rows(tr, n, nf, z, w);
    write_rows(te, n / 10 > 0 ? n / 10 : 1, nf, z, w);
    free(w);
    if (fclose(tr) || fclose(te)) return 1;
    return 0;
}
