/* replay.h: what the serial replay oracles of compiled programs share (lda_replay.c,
 * slr_replay.c, sgd_replay.c, sgd_side_replay.c): reading triplet files, reading the block order
 * that a program run with ORN_TRACE=path wrote, the random stream of each loop run, and writing
 * arrays in save()'s text format.
 *
 * The trace (stdlib/std.c, dump_trace) holds, per loop run, a header
 *     loop ID line LINE run N ranks P entries M
 * then M entries "step round rank seq block first count lo0 hi0 lo1 hi1 ...", sorted by
 * (step, round, rank, seq): the order to replay in. A round ends at a buffer flush (every
 * rank's deltas summed per key in the order it made them, applied by the owner in
 * source-rank order); blocks of one round are independent. The runtime gives a loop run
 * the stream (loop_id << 32) | n, n counting earlier runs of that loop id
 * (runtime/exec.c, next_stream), and accumulator partials are per block of the iteration
 * space, combined in block order starting from the value before the loop. */
#ifndef ORN_E2E_REPLAY_H
#define ORN_E2E_REPLAY_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* A "row col value" text file (load_triplets' format; '#' lines skipped) as triplets in
 * file order; *nr and *nc are raised to cover its keys (callers start them at 0). */
typedef struct ReplayTrip {
    int64_t r, c;
    float v;
} ReplayTrip;

static inline ReplayTrip *replay_triplets(const char *path, int64_t *n, int64_t *nr, int64_t *nc)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1024;
    ReplayTrip *v = malloc(cap * sizeof *v);
    char line[512];
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        long long r, c;
        double x;
        if (line[0] == '#' || sscanf(line, "%lld %lld %lf", &r, &c, &x) != 3) continue;
        if ((size_t)*n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
        v[*n] = (ReplayTrip){r, c, (float)x};
        if (r + 1 > *nr) *nr = r + 1;
        if (c + 1 > *nc) *nc = c + 1;
        (*n)++;
    }
    fclose(f);
    return v;
}

/* qsort order of triplets: by row, then by column. */
static inline int replay_trip_order(const void *a, const void *b)
{
    const ReplayTrip *x = a, *y = b;
    if (x->r != y->r) return x->r < y->r ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

typedef struct ReplayEntry {
    int64_t step, round, block, first, count;
    int rank;
    int64_t lo[ORN_RT_MAXDIM], hi[ORN_RT_MAXDIM];
} ReplayEntry;

typedef struct ReplayLoop {
    int id, line;
    uint64_t stream; /* the run's random stream */
    int64_t n;       /* entries */
    ReplayEntry *e;
    int nranks;      /* ranks of the run (P) */
    int64_t nblocks; /* largest block number + 1 */
} ReplayLoop;

typedef struct Replay {
    const char *prog; /* for messages */
    FILE *f;
    int64_t runs[64]; /* runs so far per loop id */
} Replay;

static inline void replay_die(const Replay *r, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
static inline void replay_die(const Replay *r, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", r->prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static inline void replay_open(Replay *r, const char *prog, const char *path)
{
    memset(r, 0, sizeof *r);
    r->prog = prog;
    r->f = fopen(path, "r");
    if (!r->f) replay_die(r, "cannot open the trace %s", path);
}

static inline void replay_close(Replay *r)
{
    fclose(r->f);
}

/* The next loop run of the trace into *l (nkeys: the loop's key count, the same for every
 * loop of the programs replayed here); 0 at the end of the file. */
static inline int replay_next(Replay *r, int nkeys, ReplayLoop *l)
{
    char buf[1024];
    long long run, n;
    int id, line, ranks;
    free(l->e);
    memset(l, 0, sizeof *l);
    if (!fgets(buf, sizeof buf, r->f)) return 0;
    if (sscanf(buf, "loop %d line %d run %lld ranks %d entries %lld", &id, &line, &run, &ranks,
               &n) != 5 ||
        id < 0 || id >= 64 || n < 0 || ranks < 1)
        replay_die(r, "bad trace header: %s", buf);
    l->id = id;
    l->line = line;
    l->nranks = ranks;
    l->stream = ((uint64_t)(uint32_t)id << 32) | (uint32_t)r->runs[id]++;
    l->n = n;
    l->e = calloc((size_t)(n ? n : 1), sizeof *l->e);
    for (int64_t k = 0; k < n; k++) {
        ReplayEntry *e = &l->e[k];
        long long v[7 + 2 * ORN_RT_MAXDIM];
        int want = 7 + 2 * nkeys, got = 0, off = 0, used;
        if (!fgets(buf, sizeof buf, r->f)) replay_die(r, "the trace ends inside loop %d", id);
        while (got < want && sscanf(buf + off, "%lld%n", &v[got], &used) == 1) {
            off += used;
            got++;
        }
        if (got != want) replay_die(r, "bad trace entry (%d fields, want %d): %s", got, want, buf);
        e->step = v[0];
        e->round = v[1];
        e->rank = (int)v[2];
        e->block = v[4];
        e->first = v[5];
        e->count = v[6];
        for (int d = 0; d < nkeys; d++) {
            e->lo[d] = v[7 + 2 * d];
            e->hi[d] = v[8 + 2 * d];
        }
        if (e->rank < 0 || e->block < 0 || e->first < 0 || e->count < 0)
            replay_die(r, "bad trace entry: %s", buf);
        if (e->rank >= l->nranks) replay_die(r, "trace entry of rank %d of %d", e->rank, l->nranks);
        if (e->block + 1 > l->nblocks) l->nblocks = e->block + 1;
    }
    return 1;
}

/* Entry k ends its round (the next entry, if any, belongs to another one). */
static inline int replay_round_ends(const ReplayLoop *l, int64_t k)
{
    return k + 1 == l->n || l->e[k + 1].step != l->e[k].step || l->e[k + 1].round != l->e[k].round;
}

static inline FILE *replay_create(const Replay *r, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) replay_die(r, "cannot write %s", path);
    return f;
}

#endif
