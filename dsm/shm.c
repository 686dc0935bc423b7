/* shm.c: memory that every rank of the context maps (dsm.h, orn_dsm_shm_map): node
 * replicas of arrays (replica.c) and the change vectors of buffer flushes
 * (runtime/buffer.c) live in it.
 *
 * Rank 0 creates a POSIX shared-memory object (shm_open, a name with its pid, a tag and a
 * clock reading) and tells the name (bcast); every rank opens and maps it, reserves the byte
 * ranges it will write (fallocate, so that a full /dev/shm is an error now rather than a
 * SIGBUS later) and faults them in, in parallel; the ranks agree that all of this worked,
 * then rank 0 unlinks the name (the mappings keep the object; nothing is left behind in
 * /dev/shm once the processes end). Where any step fails on any rank -- ranks on different
 * hosts cannot open rank 0's object, /dev/shm is full -- the context's shared memory is off
 * (OrnDsmCtx.shm_off: the same answer on every rank, from the agreement) and callers keep
 * their private copies and messages.
 *
 * A barrier in such memory (orn_dsm_shm_barrier) is each rank's arrival number, stored with
 * release order after what it wrote for the others, and a wait until every rank's number
 * has reached it (acquire order: what they wrote is then visible): no message, a cache line
 * each way -- the wait goes through orn_dsm_wait_for, so a rank that never arrives is named
 * by liveness, and remote reads are served meanwhile.
 */
#define _GNU_SOURCE /* fallocate, MADV_POPULATE_WRITE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "dsm_int.h"

#ifndef MADV_POPULATE_READ /* Linux 5.14; older kernels say EINVAL and fault on first use */
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int orn_dsm_shm_map(OrnDsmCtx *ctx, size_t bytes, int tag, const size_t *ranges, int nranges,
                    void **out)
{
    struct {
        char name[56];
        int64_t ok;
    } msg = {{0}, 1};
    int fd = -1, created = 0;
    *out = NULL;
    if (ctx->shm_off || ctx->size < 2 || !bytes) return ORN_OK;
    if (ctx->rank == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(msg.name, sizeof msg.name, "/orn-%ld-%d-%lx", (long)getpid(), tag,
                 (unsigned long)(ts.tv_sec * 1000000000L + ts.tv_nsec));
        fd = shm_open(msg.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        created = fd >= 0;
        if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) msg.ok = 0;
    }
    int status = orn_dsm_bcast(ctx, &msg, sizeof msg, 0);
    int64_t ok = msg.ok;
    if (!status && ok && ctx->rank != 0) {
        fd = shm_open(msg.name, O_RDWR, 0);
        ok = fd >= 0;
    }
    char *base = MAP_FAILED;
    if (!status && ok) {
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ok = base != MAP_FAILED;
    }
    /* Reserve and fault in what this rank writes (its first touch, in parallel). */
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; !status && ok && i < nranges; i++) {
        size_t lo = ranges[2 * i], hi = ranges[2 * i + 1];
        if (hi <= lo) continue;
        if (fallocate(fd, 0, (off_t)lo, (off_t)(hi - lo)) != 0 && errno != EOPNOTSUPP) {
            ok = 0;
            break;
        }
        size_t plo = lo / pg * pg;
        (void)madvise(base + plo, hi - plo, MADV_POPULATE_WRITE);
    }
    if (fd >= 0) close(fd);
    if (!status) status = orn_dsm_allreduce_i64(ctx, &ok, 1, ORN_DSM_MIN);
    if (created) shm_unlink(msg.name); /* every rank has it open, or has given up */
    if (status || !ok) {
        if (base != MAP_FAILED) munmap(base, bytes);
        if (!status) ctx->shm_off = 1;
        return status;
    }
    /* Every page is there now (each rank reserved its own): map them all here at once
     * rather than fault by fault at the first reads of the others' bytes. */
    (void)madvise(base, bytes, MADV_POPULATE_READ);
    *out = base;
    return ORN_OK;
}

void orn_dsm_shm_unmap(void *base, size_t bytes)
{
    if (base) munmap(base, bytes);
}

/* orn_dsm_shm_barrier: the ranks whose arrival number is below k, found in `others` order. */
typedef struct Arrivals {
    const int64_t *seq;
    int64_t k;
    const int *others;
    int n;
} Arrivals;

static int first_missing(const Arrivals *a)
{
    for (int i = 0; i < a->n; i++)
        if (__atomic_load_n(&a->seq[(size_t)a->others[i] * ORN_DSM_SHM_SEQ_STRIDE],
                            __ATOMIC_ACQUIRE) < a->k)
            return i;
    return -1;
}

static int poll_arrivals(OrnDsmCtx *ctx, void *ud, int *pending)
{
    (void)ctx;
    *pending = first_missing(ud);
    return ORN_OK;
}

int orn_dsm_shm_barrier(OrnDsmCtx *ctx, int64_t *seq, int64_t k, const char *what)
{
    int P = ctx->size, me = ctx->rank, small[64], *others = P <= 65 ? small : NULL;
    __atomic_store_n(&seq[(size_t)me * ORN_DSM_SHM_SEQ_STRIDE], k, __ATOMIC_RELEASE);
    if (!others) others = orn_xmalloc((size_t)P * sizeof *others);
    for (int q = 0, i = 0; q < P; q++)
        if (q != me) others[i++] = q;
    Arrivals a = {seq, k, others, P - 1};
    int status = ORN_OK;
    if (first_missing(&a) >= 0) { /* the last to arrive goes on at once */
        double t0 = orn_dsm_now();
        status = orn_dsm_wait_for(ctx, poll_arrivals, &a, others, P - 1, what);
        ctx->sync += orn_dsm_now() - t0;
    }
    if (others != small) free(others);
    return status;
}
