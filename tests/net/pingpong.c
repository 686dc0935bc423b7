/* pingpong: what the links between MPI ranks deliver (the test bed's check that a profile
 * is applied; docs/testbed.md). Rank 0 measures against every other rank in turn:
 *   latency    half the median round trip of an 8-byte message (ROUNDS round trips)
 *   bandwidth  MIB MiB sent one way in messages of 1 MiB, then an 8-byte answer; the
 *              best of 3 tries
 * Receives wait as Orion's runtime does (orn_dsm_waitall, dsm/coll.c): they poll, yielding
 * the core, then sleeping from 8 to 256 us between polls, instead of spinning on a core. (With a
 * delay line instead of tc netem, ranks that spin on every core of a loaded machine delay their own
 * packets.) Usage: pingpong [ROUNDS [MIB]]   (defaults 200 and 32). Prints one line per peer: peer
 * R host H latency_us X bandwidth_gbit Y */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CHUNK = 1 << 20 };

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* wait_recv: MPI_Recv that waits as orn_dsm_waitall does (its backoff, dsm/coll.c) */
static void wait_recv(void *buf, int n, int from, int tag)
{
    MPI_Request r;
    MPI_Irecv(buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r);
    for (int polls = 0;; polls++) {
        int done = 0;
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done) return;
        if (polls < 64) {
            sched_yield();
            continue;
        }
        int shift = (polls - 64) / 16;
        struct timespec ts = {0, 8000L << (shift > 5 ? 5 : shift)};
        nanosleep(&ts, NULL);
    }
}

/* one peer's measurement from rank 0's side; the peer echoes */
static void measure(int me, int peer, int rounds, int mib, char *buf, double *rtt)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int other = me == 0 ? peer : 0;
    for (int i = 0; i < rounds; i++) {
        double t0 = MPI_Wtime();
        if (me == 0) {
            MPI_Send(buf, 8, MPI_BYTE, other, 0, w);
            wait_recv(buf, 8, other, 0);
            rtt[i] = MPI_Wtime() - t0;
        } else {
            wait_recv(buf, 8, other, 0);
            MPI_Send(buf, 8, MPI_BYTE, other, 0, w);
        }
    }
    double best = 0;
    for (int t = 0; t < 3; t++) {
        double t0 = MPI_Wtime();
        for (int m = 0; m < mib; m++) {
            if (me == 0)
                MPI_Send(buf, CHUNK, MPI_BYTE, other, 1, w);
            else
                wait_recv(buf, CHUNK, other, 1);
        }
        if (me == 0)
            wait_recv(buf, 8, other, 2);
        else
            MPI_Send(buf, 8, MPI_BYTE, other, 2, w);
        double gbit = (double)mib * CHUNK * 8 / (MPI_Wtime() - t0) / 1e9;
        if (gbit > best) best = gbit;
    }
    if (me != 0) return;
    char host[256] = "?";
    wait_recv(host, sizeof host, other, 3);
    qsort(rtt, (size_t)rounds, sizeof *rtt, cmp_dbl);
    printf("peer %d host %s latency_us %.1f bandwidth_gbit %.3f\n", peer, host,
           rtt[rounds / 2] / 2 * 1e6, best);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int rounds = argc > 1 ? atoi(argv[1]) : 200, mib = argc > 2 ? atoi(argv[2]) : 32;
    if (rounds < 1 || mib < 1) {
        if (me == 0) fprintf(stderr, "usage: pingpong [ROUNDS [MIB]]\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc(CHUNK, 1);
    double *rtt = calloc((size_t)rounds, sizeof *rtt);
    if (!buf || !rtt) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int peer = 1; peer < np; peer++) {
        if (me == 0 || me == peer) measure(me, peer, rounds, mib, buf, rtt);
        if (me == peer) {
            char host[256] = "?";
            gethostname(host, sizeof host - 1);
            MPI_Send(host, sizeof host, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);
    free(rtt);
    /* MPICH 4.0 over UCX's tcp transport can hang in MPI_Finalize: a rank that arrives
     * while UCX traffic is still in flight waits in its endpoints' flush for peers that have
     * left for the process manager's barrier (docs/testbed.md). Let the traffic settle. */
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec settle = {0, 200 * 1000 * 1000};
    nanosleep(&settle, NULL);
    MPI_Finalize();
    return 0;
}
