/* shm.c: memory that the ranks of a host map (dsm.h, orn_dsm_shm_map): node replicas of
 * arrays (replica.c) and the change vectors of buffer flushes (runtime/buffer.c) live in it.
 *
 * Hosts. The ranks are grouped by host (orn_dsm_hosts_set: equal hashes of the host name,
 * gathered when the context starts; $ORN_HOSTS names a host per rank instead, so that the
 * tests run "several hosts" on one machine). Each host has its objects; what a rank on
 * another host contributes reaches a host through one of its ranks (orn_dsm_taker: the
 * host's ranks in turn), by messages, and the users copy it into the object there.
 *
 * Each host's first rank creates a POSIX shared-memory object (shm_open, a name with its
 * pid, a tag and a clock reading) and the names are gathered; every rank opens and maps its
 * host's, reserves the byte ranges it will write (fallocate, so that a full /dev/shm is an
 * error now rather than a SIGBUS later) and faults them in, in parallel; every rank agrees
 * that all of this worked, then the creators unlink the names (the mappings keep the
 * objects; nothing is left behind in /dev/shm once the processes end). Where any step fails
 * on any rank -- /dev/shm is full, ranks grouped as one host cannot open its object -- the
 * context's shared memory is off (OrnDsmCtx.shm_off: the same answer on every rank, from
 * the agreement) and callers keep their private copies and messages.
 *
 * A barrier in such memory (orn_dsm_shm_barrier) is each rank's arrival number, stored with
 * release order after what it wrote for the others, and a wait until every rank of the
 * host has reached it (acquire order: what they wrote is then visible): no message, a cache
 * line each way -- the wait goes through orn_dsm_wait_for, so a rank that never arrives is
 * named by liveness, and remote reads are served meanwhile.
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

uint64_t orn_dsm_host_key(const OrnDsmCtx *ctx, uint64_t name_hash)
{
    const char *e = getenv("ORN_HOSTS"), *c = e;
    if (!e || !*e) return name_hash >> 1; /* apart from the numbers below */
    long v[ORN_DSM_HOSTS_MAX];
    int n = 0;
    for (;;) {
        char *end = NULL;
        long x = strtol(c, &end, 10);
        if (end == c || x < 0 || x > 1000000 || n == ORN_DSM_HOSTS_MAX) break;
        v[n++] = x;
        c = end;
        if (!*c) /* the rank's entry, the list taken again from its start where shorter */
            return ((uint64_t)1 << 63) | (uint64_t)v[ctx->rank % n];
        if (*c != ',') break;
        c++;
    }
    if (ctx->rank == 0)
        fprintf(stderr,
                "orion: warning: ignoring ORN_HOSTS='%.40s' (host numbers, comma-"
                "separated)\n",
                e);
    return name_hash >> 1;
}

void orn_dsm_hosts_set(OrnDsmCtx *ctx, const uint64_t *keys)
{
    int P = ctx->size;
    free(ctx->host_of);
    free(ctx->host_start);
    free(ctx->host_members);
    ctx->host_of = orn_xmalloc((size_t)P * sizeof *ctx->host_of);
    ctx->host_start = orn_xcalloc((size_t)P + 2, sizeof *ctx->host_start);
    ctx->host_members = orn_xmalloc((size_t)P * sizeof *ctx->host_members);
    ctx->nhosts = 0;
    for (int q = 0; q < P; q++) ctx->host_of[q] = -1;
    for (int q = 0; q < P; q++) /* numbered in the order of their first ranks */
        if (ctx->host_of[q] < 0) {
            for (int p = q; p < P; p++)
                if (keys[p] == keys[q]) {
                    ctx->host_of[p] = ctx->nhosts;
                    ctx->host_members[ctx->host_start[ctx->nhosts + 1]++] = p;
                }
            ctx->nhosts++;
            ctx->host_start[ctx->nhosts + 1] = ctx->host_start[ctx->nhosts];
        }
}

int orn_dsm_nhosts(const OrnDsmCtx *ctx)
{
    return ctx->host_of ? ctx->nhosts : 1;
}

int orn_dsm_host_of(const OrnDsmCtx *ctx, int q)
{
    return ctx->host_of ? ctx->host_of[q] : 0;
}

int orn_dsm_taker(const OrnDsmCtx *ctx, int q, int h)
{
    if (!ctx->host_of) return q;
    int lo = ctx->host_start[h], n = ctx->host_start[h + 1] - lo;
    return ctx->host_members[lo + q % n];
}

/* This rank's host's ranks, *n of them (this rank alone before the hosts are set). */
static const int *host_ranks(const OrnDsmCtx *ctx, int *n)
{
    if (!ctx->host_of) {
        *n = 1;
        return &ctx->rank;
    }
    int h = ctx->host_of[ctx->rank];
    *n = ctx->host_start[h + 1] - ctx->host_start[h];
    return ctx->host_members + ctx->host_start[h];
}

int orn_dsm_shm_map(OrnDsmCtx *ctx, size_t bytes, int tag, const size_t *ranges, int nranges,
                    void **out)
{
    typedef struct {
        char name[56];
        int64_t ok;
    } Name;
    int P = ctx->size, fd = -1, created = 0, nh;
    *out = NULL;
    if (ctx->shm_off || P < 2 || !bytes) return ORN_OK;
    const int *mates = host_ranks(ctx, &nh);
    int first = mates[0];
    Name *names = orn_xcalloc((size_t)P, sizeof *names), *mine = &names[ctx->rank];
    mine->ok = 1;
    if (ctx->rank == first) { /* the host's first rank creates its object */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(mine->name, sizeof mine->name, "/orn-%ld-%d-%lx", (long)getpid(), tag,
                 (unsigned long)(ts.tv_sec * 1000000000L + ts.tv_nsec));
        fd = shm_open(mine->name, O_CREAT | O_EXCL | O_RDWR, 0600);
        created = fd >= 0;
        if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) mine->ok = 0;
    }
    int status = orn_dsm_allgather_into(ctx, names, sizeof *names, "shared memory names");
    int64_t ok = names[first].ok;
    if (!status && ok && ctx->rank != first) {
        fd = shm_open(names[first].name, O_RDWR, 0);
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
    if (created) shm_unlink(mine->name); /* the host's ranks have it open, or have given up */
    free(names);
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
    int me = ctx->rank, small[64], nh;
    const int *mates = host_ranks(ctx, &nh);
    int *others = nh <= 65 ? small : orn_xmalloc((size_t)nh * sizeof *others);
    __atomic_store_n(&seq[(size_t)me * ORN_DSM_SHM_SEQ_STRIDE], k, __ATOMIC_RELEASE);
    for (int i = 0, n = 0; i < nh; i++)
        if (mates[i] != me) others[n++] = mates[i];
    Arrivals a = {seq, k, others, nh - 1};
    int status = ORN_OK;
    if (first_missing(&a) >= 0) { /* the last to arrive goes on at once */
        double t0 = orn_dsm_now();
        status = orn_dsm_wait_for(ctx, poll_arrivals, &a, others, nh - 1, what);
        ctx->sync += orn_dsm_now() - t0;
    }
    if (others != small) free(others);
    return status;
}
