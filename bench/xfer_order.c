/* xfer_order.c: does a reader blocked on a remote read wait behind blocks queued for later?
 * (need-ordered transfers, dsm/xferq.h; issue 12 item 4). Needs 2 ranks; on the test bed,
 * 2 hosts (bench/net_rotation.sh runs it).
 *
 * Rank 0 queues NB blocks of MB MiB to rank 1, needed at steps 1..NB (as a 2-D rotation's
 * blocks are), and then computes: it polls (orn_dsm_progress: serves remote reads, moves its
 * queue) every POLL microseconds of busy work until the blocks are through. Meanwhile rank
 * 1, until its last block is in, reads elements of an array that rank 0 owns, one on-demand
 * read at a time with POLL microseconds of work between them (orn_dsm_fetch_one: a 16-byte
 * request, a 16-byte reply that leaves on rank 0's link, busy with the blocks). Three ways
 * of sending the blocks, each run in turn REPS times:
 *   queue  need-ordered transfers in chunks (the context's settings, 256 KiB chunks in a
 *          1 MiB window by default): the reply waits behind at most the window;
 *   whole  the same queue without chunks: each block is one message, posted when the
 *          previous one is through; the reply waits behind at most one block;
 *   fifo   every block posted to MPI at once (orn_dsm_isend, as before the queue): the reply
 *          waits behind whatever is queued ahead of it in MPI and the kernel.
 * Prints per way the reads made while blocks were arriving, their median, 90th percentile
 * and largest latency, and the blocks' transfer time (MiB/s).
 *
 * Then: do bytes move while ranks compute? Rank 0 queues one transfer of NB * MB MiB to rank
 * 1, and both compute for COMPUTE ms, polling every POLL us (as the runtime does between
 * slices of a block) or not at all; then rank 1 waits for the transfer. Prints the wait after
 * the computation (0: it all moved during it) against the time the transfer takes alone.
 *
 *   mpiexec -n 2 build/release/bench/bench_xfer_order [--blocks=8] [--mb=4] [--poll=500]
 *                                                      [--reps=3] [--compute=MS]
 * --compute defaults to twice the time the transfer takes alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsm.h"
#include "rt.h"
#include "transport.h"
#include "xferq.h"

enum { TAG_BLOCK = ORN_TAG_TEST + 1 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(OrnRtCtx *rt, int status)
{
    if (status) orn_rt_die(rt);
}

static int64_t opt(int argc, char **argv, const char *name, int64_t dflt)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], name, n) && argv[i][n] == '=')
            return strtoll(argv[i] + n + 1, NULL, 10);
    return dflt;
}

/* Busy work for about `us` microseconds (a block's slice of computation). */
static double spin(double us)
{
    double t = now(), x = 1.0;
    while ((now() - t) * 1e6 < us)
        for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

typedef struct Way {
    const char *name;
    size_t chunk; /* 0: whole; (size_t)-1: fifo, no queue */
} Way;

/* One run of one way: rank 1's read latencies (seconds) into lat, the blocks' time. */
static void run(OrnRtCtx *rt, OrnDsmArray *A, const Way *w, int nb, size_t bytes, double poll_us,
                char *sbuf, char *rbuf, double *lat, int maxlat, int *nlat, double *tblocks)
{
    OrnDsmCtx *dsm = orn_rt_dsm(rt);
    int me = orn_rt_rank(rt);
    size_t chunk0, window0;
    orn_dsm_xfer_settings(dsm, &chunk0, &window0);
    if (w->chunk != (size_t)-1) die(rt, orn_dsm_xfer_config(dsm, w->chunk ? chunk0 : 0, window0));
    OrnDsmXfer **x = calloc((size_t)nb, sizeof *x);
    OrnDsmReq **q = calloc((size_t)nb, sizeof *q);
    int *peers = calloc((size_t)nb, sizeof *peers);
    int peer = 1 - me;
    for (int b = 0; b < nb; b++) peers[b] = peer;
    die(rt, orn_dsm_barrier(dsm));
    double t0 = now();
    if (me == 1) {
        for (int b = 0; b < nb; b++) {
            char *at = rbuf + (size_t)b * bytes;
            if (w->chunk == (size_t)-1)
                die(rt, orn_dsm_irecv(dsm, at, bytes, 0, TAG_BLOCK, &q[b]));
            else
                die(rt, orn_dsm_xrecv(dsm, at, bytes, 0, TAG_BLOCK, b + 1, "block", &x[b]));
        }
        /* while the blocks are on their way, read rank 0's elements one at a time */
        *nlat = 0;
        for (int i = 0;; i++) {
            int all = 1;
            for (int b = 0; b < nb; b++) {
                int done = 0;
                if (w->chunk == (size_t)-1)
                    die(rt, orn_dsm_test(dsm, &q[b], &done));
                else
                    die(rt, orn_dsm_xtest(dsm, &x[b], &done));
                all &= done;
            }
            if (all) break;
            double v;
            int found;
            double r0 = now();
            die(rt, orn_dsm_fetch_one(A, i % 64, &v, &found));
            if (*nlat < maxlat) lat[(*nlat)++] = now() - r0;
            spin(poll_us);
        }
    } else {
        for (int b = 0; b < nb; b++) {
            char *at = sbuf + (size_t)b * bytes;
            if (w->chunk == (size_t)-1)
                die(rt, orn_dsm_isend(dsm, at, bytes, 1, TAG_BLOCK, &q[b]));
            else
                die(rt, orn_dsm_xsend(dsm, at, bytes, 1, TAG_BLOCK, b + 1, "block", &x[b]));
        }
        /* compute, polling between slices, until the blocks are through */
        for (;;) {
            spin(poll_us);
            die(rt, orn_dsm_progress(dsm));
            int all = 1;
            for (int b = 0; b < nb; b++) {
                int done = 0;
                if (w->chunk == (size_t)-1)
                    die(rt, orn_dsm_test(dsm, &q[b], &done));
                else
                    die(rt, orn_dsm_xtest(dsm, &x[b], &done));
                all &= done;
            }
            if (all) break;
        }
    }
    *tblocks = now() - t0;
    /* rank 0 serves the last reads in the barrier */
    die(rt, orn_dsm_barrier(dsm));
    die(rt, orn_dsm_xfer_config(dsm, chunk0, window0));
    free(x);
    free(q);
    free(peers);
}

/* One transfer of `bytes` from rank 0 to rank 1 while both compute `ms` milliseconds, polling
 * every poll_us (0: never); returns rank 1's wait afterwards (seconds; rank 0: 0). */
static double moved_during(OrnRtCtx *rt, char *sbuf, char *rbuf, size_t bytes, double ms,
                           double poll_us)
{
    OrnDsmCtx *dsm = orn_rt_dsm(rt);
    int me = orn_rt_rank(rt);
    OrnDsmXfer *x = NULL;
    die(rt, orn_dsm_barrier(dsm));
    if (me == 0)
        die(rt, orn_dsm_xsend(dsm, sbuf, bytes, 1, TAG_BLOCK, 1.0, "block", &x));
    else
        die(rt, orn_dsm_xrecv(dsm, rbuf, bytes, 0, TAG_BLOCK, 1.0, "block", &x));
    double t0 = now();
    while ((now() - t0) * 1e3 < ms) {
        spin(poll_us > 0 ? poll_us : 1000);
        if (poll_us > 0) die(rt, orn_dsm_progress(dsm));
    }
    double w0 = now();
    die(rt, orn_dsm_xwait(dsm, &x, 1, "block"));
    double waited = now() - w0;
    die(rt, orn_dsm_barrier(dsm));
    return me == 1 ? waited : 0;
}

int main(int argc, char **argv)
{
    OrnRtCtx *rt = NULL;
    if (orn_rt_init(&argc, &argv, &rt) != ORN_OK) return 1;
    OrnDsmCtx *dsm = orn_rt_dsm(rt);
    int me = orn_rt_rank(rt), P = orn_rt_size(rt);
    int nb = (int)opt(argc, argv, "--blocks", 8), reads = 4096;
    int reps = (int)opt(argc, argv, "--reps", 3);
    size_t bytes = (size_t)opt(argc, argv, "--mb", 4) << 20;
    double poll_us = (double)opt(argc, argv, "--poll", 500);
    if (P != 2) {
        if (me == 0) fprintf(stderr, "bench_xfer_order: needs 2 ranks\n");
        orn_rt_finalize(rt);
        return 2;
    }
    /* 64 elements, all on rank 0 (the default partition of 128 over 2 ranks) */
    int64_t dims[1] = {128};
    OrnDsmArray *A = NULL;
    die(rt, orn_dsm_dense(dsm, ORN_DSM_F64, 1, dims, &A));
    char *sbuf = malloc((size_t)nb * bytes), *rbuf = malloc((size_t)nb * bytes);
    memset(sbuf, 7, (size_t)nb * bytes);
    memset(rbuf, 0, (size_t)nb * bytes);
    double *lat = calloc((size_t)reads, sizeof *lat);
    int nall[3] = {0, 0, 0};
    static const Way ways[3] = {{"queue", 1}, {"whole", 0}, {"fifo", (size_t)-1}};
    double best[3] = {1e30, 1e30, 1e30};
    double *all[3];
    for (int w = 0; w < 3; w++) all[w] = calloc((size_t)reads * (size_t)reps, sizeof *all[w]);
    for (int r = 0; r < reps; r++)
        for (int w = 0; w < 3; w++) {
            double tb = 0;
            int nlat = 0;
            run(rt, A, &ways[w], nb, bytes, poll_us, sbuf, rbuf, lat, reads, &nlat, &tb);
            if (me == 1) memcpy(all[w] + nall[w], lat, (size_t)nlat * sizeof *lat);
            nall[w] += nlat;
            if (tb < best[w]) best[w] = tb;
        }
    if (me == 1) {
        size_t c, win;
        orn_dsm_xfer_settings(dsm, &c, &win);
        printf("xfer_order: %d blocks of %zu MiB queued from rank 0 to rank 1, on-demand reads by "
               "rank 1 from rank 0 while they arrive, %g us of work between polls, %d runs each; "
               "chunk %zu KiB, window %zu KiB\n",
               nb, bytes >> 20, poll_us, reps, c >> 10, win >> 10);
        for (int w = 0; w < 3; w++) {
            size_t n = (size_t)nall[w];
            if (!n) continue;
            qsort(all[w], n, sizeof *all[w], cmp_d);
            printf("  %-5s %4zu reads, latency median %7.2f ms  90%% %7.2f ms  max %7.2f ms   "
                   "blocks %.3f s (%.0f MiB/s)\n",
                   ways[w].name, n, 1e3 * all[w][n / 2], 1e3 * all[w][n * 9 / 10],
                   1e3 * all[w][n - 1], best[w], (double)nb * (double)(bytes >> 20) / best[w]);
        }
        fflush(stdout);
    }
    /* bytes moving during computation, with and without polls */
    size_t total = (size_t)nb * bytes;
    double alone = moved_during(rt, sbuf, rbuf, total, 0, 0);
    double ms = (double)opt(argc, argv, "--compute", 0);
    if (ms <= 0) ms = 2e3 * alone + 20;
    double with = 1e30, without = 1e30;
    for (int r = 0; r < reps; r++) {
        double a = moved_during(rt, sbuf, rbuf, total, ms, poll_us);
        double b = moved_during(rt, sbuf, rbuf, total, ms, 0);
        if (a < with) with = a;
        if (b < without) without = b;
    }
    if (me == 1) {
        printf("  one transfer of %zu MiB while both ranks compute %.0f ms (alone it takes %.1f "
               "ms): waited %.1f ms after the computation with polls every %g us, %.1f ms "
               "without polls (best of %d)\n",
               total >> 20, ms, 1e3 * alone, 1e3 * with, poll_us, 1e3 * without, reps);
        fflush(stdout);
    }
    for (int w = 0; w < 3; w++) free(all[w]);
    free(lat);
    free(sbuf);
    free(rbuf);
    orn_dsm_free(A);
    orn_rt_finalize(rt);
    return 0;
}
