/* sgd_side_replay.c: the serial oracle of SGD MF with sparse side features (sgd_side.orn).
 *
 *   sgd_side_replay TRAIN UFEAT IFEAT TRACE LINE EPOCHS RANK STEP LAM INIT SEED WOUT HOUT
 *
 * Rebuilds the program's initial arrays (rand/randn arrays are a function of the seed and
 * the element index), then replays every run of the loop at source line LINE in the trace
 * written by ORN_TRACE: the recorded blocks one after another, each the ratings in its box
 * in key order, elements [first, first + count). The arithmetic is the generated code's:
 * f32 storage; side(u, i) summed in f32 over G's row u then F's row i, in column order;
 * the dot of two f32 rows as sixteen partial sums (element x to partial x mod 16) combined
 * pairwise; the weak scalars step and lam converted to f32. Writes W and H in save()'s
 * text format, to be compared byte for byte with the program's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

typedef ReplayTrip Trip;

/* Row offsets of a key-sorted triplet list with nr rows. */
static int64_t *row_index(const Trip *t, int64_t n, int64_t nr)
{
    int64_t *rp = calloc((size_t)nr + 1, sizeof *rp);
    for (int64_t x = 0; x < n; x++) rp[t[x].r + 1]++;
    for (int64_t r = 0; r < nr; r++) rp[r + 1] += rp[r];
    return rp;
}

/* Side features of one row: sum of x * weight[f] in column order, in f32. */
static float side_sum(float s, const Trip *t, const int64_t *rp, int64_t nr, int64_t r,
                      const float *weight)
{
    if (r >= nr) return s;
    for (int64_t x = rp[r]; x < rp[r + 1]; x++) s = s + t[x].v * weight[t[x].c];
    return s;
}

static float sdot(const float *a, const float *b, int64_t n)
{
    float s[16] = {0};
    for (int64_t x = 0; x < n; x++) s[x & 15] += a[x] * b[x];
    return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
           (((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])));
}

static void save(const Replay *rp, const char *path, const float *a, int64_t rows, int64_t cols)
{
    FILE *f = fopen(path, "w");
    if (!f) replay_die(rp, "cannot write %s", path);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            fprintf(f, "%" PRId64 " %" PRId64 " %.9g\n", r, c, (double)a[r * cols + c]);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 14) {
        fprintf(stderr, "usage: sgd_side_replay TRAIN UFEAT IFEAT TRACE LINE EPOCHS RANK STEP "
                        "LAM INIT SEED WOUT HOUT\n");
        return 2;
    }
    int64_t nt, ng, nf, nu = 0, ni = 0, gr = 0, gc = 0, fr = 0, fc = 0;
    Trip *tr = replay_triplets(argv[1], &nt, &nu, &ni);
    Trip *G = replay_triplets(argv[2], &ng, &gr, &gc), *F = replay_triplets(argv[3], &nf, &fr, &fc);
    qsort(tr, (size_t)nt, sizeof *tr, replay_trip_order);
    qsort(G, (size_t)ng, sizeof *G, replay_trip_order);
    qsort(F, (size_t)nf, sizeof *F, replay_trip_order);
    if (gr > nu) nu = gr;
    if (fr > ni) ni = fr;
    int64_t *grp = row_index(G, ng, gr), *frp = row_index(F, nf, fr);
    int line = atoi(argv[5]), epochs = atoi(argv[6]), K = atoi(argv[7]);
    float step = (float)atof(argv[8]), lam = (float)atof(argv[9]);
    double init = atof(argv[10]);
    uint64_t seed = (uint64_t)atoll(argv[11]);
    float *W = malloc(sizeof(float) * (size_t)(K * nu)),
          *H = malloc(sizeof(float) * (size_t)(K * ni));
    float *cu = malloc(sizeof(float) * (size_t)(gc ? gc : 1)),
          *ci = malloc(sizeof(float) * (size_t)(fc ? fc : 1));
    for (int64_t x = 0; x < K * nu; x++) W[x] = (float)init * (float)orn_rt_rand_at(seed, x, 1);
    for (int64_t x = 0; x < K * ni; x++) H[x] = (float)init * (float)orn_rt_rand_at(seed + 1, x, 1);
    for (int64_t x = 0; x < gc; x++) cu[x] = (float)orn_rt_rand_at(seed + 2, x, 0);
    for (int64_t x = 0; x < fc; x++) ci[x] = (float)orn_rt_rand_at(seed + 3, x, 0);

    Replay rp;
    ReplayLoop l = {0};
    replay_open(&rp, "sgd_side_replay", argv[4]);
    const Trip **sel = malloc(sizeof *sel * (size_t)(nt ? nt : 1));
    int runs = 0;
    while (replay_next(&rp, 2, &l)) {
        if (l.line != line) continue;
        runs++;
        for (int64_t k = 0; k < l.n; k++) {
            const ReplayEntry *e = &l.e[k];
            int64_t m = 0;
            for (int64_t x = 0; x < nt; x++)
                if (tr[x].r >= e->lo[0] && tr[x].r < e->hi[0] && tr[x].c >= e->lo[1] &&
                    tr[x].c < e->hi[1])
                    sel[m++] = &tr[x];
            if (e->first + e->count > m)
                replay_die(&rp,
                           "block has %" PRId64 " elements, the trace wants %" PRId64 "..%" PRId64,
                           m, e->first, e->first + e->count);
            for (int64_t x = e->first; x < e->first + e->count; x++) {
                int64_t u = sel[x]->r, i = sel[x]->c;
                float *w = &W[u * K], *h = &H[i * K];
                float side = side_sum(side_sum(0.0f, G, grp, gr, u, cu), F, frp, fr, i, ci);
                float err = sel[x]->v - (side + sdot(w, h, K));
                for (int f = 0; f < K; f++) w[f] = w[f] + step * ((err * h[f]) - (lam * w[f]));
                for (int f = 0; f < K; f++) h[f] = h[f] + step * ((err * w[f]) - (lam * h[f]));
            }
        }
    }
    replay_close(&rp);
    free(l.e);
    if (runs != epochs)
        replay_die(&rp, "the trace has %d runs of the loop at line %d, expected %d", runs, line,
                   epochs);
    save(&rp, argv[12], W, nu, K);
    save(&rp, argv[13], H, ni, K);
    printf("sgd_side_replay: %d runs replayed\n", runs);
    free(sel);
    free(W);
    free(H);
    free(cu);
    free(ci);
    free(grp);
    free(frp);
    free(tr);
    free(G);
    free(F);
    return 0;
}
