/* sgd_replay.c: the serial oracle of SGD MF for the unordered-loop check.
 *
 *   sgd_replay TRAIN TEST TRACE LINE EPOCHS RANK STEP DECAY LAM INIT SEED WOUT HOUT [BUOUT BIOUT]
 *
 * Rebuilds the program's initial factors (randn arrays are a function of the seed and the
 * element index), then for each run of the loop at source line LINE in the trace written
 * by ORN_TRACE replays the recorded blocks one after another: the ratings in the block's
 * box in key order, elements [first, first + count). The arithmetic is the generated
 * code's (f32 storage, f64 scalars, dot as eight partial sums). Writes W and H in save()'s
 * text format, to be compared byte for byte with the program's.
 * With BUOUT and BIOUT the loop is sgd_bias_trace.orn's: the biases bu (partitioned) and bi
 * (rotated) are updated through buffers. An update of an element in the block of the bias
 * that the block holds is added at once (bu[u] and bi[i] always; bi[i + 1] inside the
 * block's items); at several ranks the others (bi[i + 1] past the block) are summed per
 * rank and element in f32 in the order made, and added at the end of the round (the
 * flush) in rank order; at one rank every delta is added at once. W and H are written in
 * place as before (their blocks are exclusive). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* The bias buffers' deltas of every rank since the last flush. */
typedef struct Deltas {
    int P;
    float *bu, *bi;           /* [P][users], [P][items] */
    unsigned char *tbu, *tbi; /* touched */
} Deltas;

static void delta_add(float *d, unsigned char *t, int64_t x, float v)
{
    d[x] += v;
    t[x] = 1;
}

/* The flush: every rank's summed deltas, rank 0's first. */
static void flush(Deltas *D, float *bu, float *bi, int64_t nu, int64_t ni)
{
    for (int q = 0; q < D->P; q++) {
        for (int64_t x = 0; x < nu; x++)
            if (D->tbu[q * nu + x]) bu[x] += D->bu[q * nu + x];
        for (int64_t x = 0; x < ni; x++)
            if (D->tbi[q * ni + x]) bi[x] += D->bi[q * ni + x];
    }
    memset(D->bu, 0, sizeof(float) * (size_t)(D->P * nu));
    memset(D->bi, 0, sizeof(float) * (size_t)(D->P * ni));
    memset(D->tbu, 0, (size_t)(D->P * nu));
    memset(D->tbi, 0, (size_t)(D->P * ni));
}

static void save(const char *path, const float *a, int64_t rows, int64_t cols)
{
    FILE *f = fopen(path, "w");
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            fprintf(f, "%" PRId64 " %" PRId64 " %.9g\n", r, c, (double)a[r * cols + c]);
    fclose(f);
}

static void save1(const char *path, const float *a, int64_t n)
{
    FILE *f = fopen(path, "w");
    for (int64_t r = 0; r < n; r++) fprintf(f, "%" PRId64 " %.9g\n", r, (double)a[r]);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 14 && argc != 16) {
        fprintf(stderr, "usage: sgd_replay TRAIN TEST TRACE LINE EPOCHS RANK STEP DECAY LAM "
                        "INIT SEED WOUT HOUT [BUOUT BIOUT]\n");
        return 2;
    }
    int bias = argc == 16;
    int64_t nt, ne, nu = 0, ni = 0, ntu = 0, nti = 0;
    ReplayTrip *tr = replay_triplets(argv[1], &nt, &nu, &ni);
    free(replay_triplets(argv[2], &ne, &ntu, &nti));
    if (ntu > nu) nu = ntu;
    if (nti > ni) ni = nti;
    qsort(tr, (size_t)nt, sizeof *tr, replay_trip_order);
    int line = atoi(argv[4]), epochs = atoi(argv[5]), K = atoi(argv[6]);
    double step = atof(argv[7]), decay = atof(argv[8]), lam = atof(argv[9]), init = atof(argv[10]);
    uint64_t seed = (uint64_t)atoll(argv[11]);
    float *W = malloc(sizeof(float) * (size_t)(K * nu)),
          *H = malloc(sizeof(float) * (size_t)(K * ni));
    for (int64_t x = 0; x < K * nu; x++) {
        W[x] = (float)orn_rt_rand_at(seed, x, 1);
        W[x] = (float)init * W[x];
    }
    for (int64_t x = 0; x < K * ni; x++) {
        H[x] = (float)orn_rt_rand_at(seed + 1, x, 1);
        H[x] = (float)init * H[x];
    }
    float *bu = calloc((size_t)nu, sizeof(float)), *bi = calloc((size_t)ni, sizeof(float));
    Deltas D = {0, NULL, NULL, NULL, NULL};
    FILE *tf = fopen(argv[3], "r");
    if (!tf) {
        perror(argv[3]);
        return 2;
    }
    char buf[1024];
    double lr = step;
    int runs = 0;
    ReplayTrip **sel = malloc(sizeof *sel * (size_t)(nt ? nt : 1));
    while (fgets(buf, sizeof buf, tf)) {
        int lid, lline, ranks;
        long long run, entries;
        if (sscanf(buf, "loop %d line %d run %lld ranks %d entries %lld", &lid, &lline, &run,
                   &ranks, &entries) != 5) {
            fprintf(stderr, "sgd_replay: bad trace header: %s", buf);
            return 2;
        }
        if (bias && lline == line && D.P != ranks) {
            free(D.bu);
            free(D.bi);
            free(D.tbu);
            free(D.tbi);
            D.P = ranks;
            D.bu = calloc((size_t)(ranks * nu), sizeof(float));
            D.bi = calloc((size_t)(ranks * ni), sizeof(float));
            D.tbu = calloc((size_t)(ranks * nu), 1);
            D.tbi = calloc((size_t)(ranks * ni), 1);
        }
        long long cst = -1, crd = -1;
        for (long long k = 0; k < entries; k++) {
            long long st, rd, rk, sq, blk, first, count, lo0, hi0, lo1, hi1;
            if (!fgets(buf, sizeof buf, tf) ||
                sscanf(buf, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &st, &rd, &rk,
                       &sq, &blk, &first, &count, &lo0, &hi0, &lo1, &hi1) < 7) {
                fprintf(stderr, "sgd_replay: bad trace entry\n");
                return 2;
            }
            if (lline != line) continue;
            if (bias && ranks > 1 && (st != cst || rd != crd)) flush(&D, bu, bi, nu, ni);
            cst = st;
            crd = rd;
            int64_t m = 0;
            for (int64_t x = 0; x < nt; x++)
                if (tr[x].r >= lo0 && tr[x].r < hi0 && tr[x].c >= lo1 && tr[x].c < hi1)
                    sel[m++] = &tr[x];
            if (first + count > m) {
                fprintf(stderr, "sgd_replay: block has %lld elements, trace wants %lld..%lld\n",
                        (long long)m, first, first + count);
                return 1;
            }
            for (int64_t x = first; x < first + count; x++) {
                int64_t u = sel[x]->r, i = sel[x]->c;
                /* f32 arithmetic (docs/language.md): dot of two f32 views sums in f32,
                 * and the weak scalars lr and lam convert to f32 */
                float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                for (int f = 0; f < K; f++) s[f & 7] += W[f * nu + u] * H[f * ni + i];
                float dot = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
                float e = bias ? ((sel[x]->v - bu[u]) - bi[i]) - dot : sel[x]->v - dot;
                float flr = (float)lr, flam = (float)lam;
                if (bias) {
                    /* the deltas, from the biases as of the last flush */
                    float du = flr * (e - flam * bu[u]), di = flr * (e - flam * bi[i]);
                    float dn = (float)(lr * lam) * e;
                    /* bu[u] and bi[i] are in the blocks the block holds: at once */
                    bu[u] += du;
                    bi[i] += di;
                    if (i + 1 < ni) {
                        if (ranks == 1 || i + 1 < hi1)
                            bi[i + 1] += dn;
                        else
                            delta_add(&D.bi[rk * ni], &D.tbi[rk * ni], i + 1, dn);
                    }
                }
                for (int f = 0; f < K; f++)
                    W[f * nu + u] =
                        W[f * nu + u] + flr * ((e * H[f * ni + i]) - (flam * W[f * nu + u]));
                for (int f = 0; f < K; f++)
                    H[f * ni + i] =
                        H[f * ni + i] + flr * ((e * W[f * nu + u]) - (flam * H[f * ni + i]));
            }
        }
        if (lline == line) {
            if (bias && ranks > 1) flush(&D, bu, bi, nu, ni);
            runs++;
            lr *= decay;
        }
    }
    fclose(tf);
    if (runs != epochs) {
        fprintf(stderr, "sgd_replay: the trace has %d runs of the loop at line %d, expected %d\n",
                runs, line, epochs);
        return 1;
    }
    save(argv[12], W, K, nu);
    save(argv[13], H, K, ni);
    if (bias) {
        save1(argv[14], bu, nu);
        save1(argv[15], bi, ni);
    }
    free(D.bu);
    free(D.bi);
    free(D.tbu);
    free(D.tbi);
    free(bu);
    free(bi);
    printf("sgd_replay: %d runs replayed\n", runs);
    free(sel);
    free(W);
    free(H);
    free(tr);
    return 0;
}
