/* replica.c: node replicas -- one copy of a dense array in memory the ranks of a host map.
 *
 * A loop that reads a partitioned array anywhere (a gather A[P[i], :], a pull over a graph)
 * gets a window: a row-major copy of the whole array (runtime/window.c). Made privately, that
 * copy costs each rank the array's page faults, a copy of the rows it holds and the transfer
 * of every other rank's rows through MPI: 0.09-0.5 s for a 128 MB array at -n 2, P copies on
 * the host. A node replica is made once for all of them: every rank writes the tiles it holds
 * into one POSIX shared-memory object, in parallel, and reads the others' rows where they
 * lie. On one host nothing crosses MPI but two barriers; on several (shm.c, "Hosts") each
 * host has its replica, and a rank's tiles cross to each other host once, to the rank that
 * takes them there (replica_cross).
 *
 * Which arrays: those the compiler sees a loop read at rows anywhere -- rows that depend on
 * data (A[P[i], :], the rows a sparse walk names), every row (a column view), rows that follow
 * a key the schedule does not cut -- made where the array is made (orn_dsm_replica_reserve,
 * from the generated code: codegen/c_stmt.c read_anywhere). Its page faults then belong to
 * making the array, like its tiles' (dsm/array.c alloc_dense). A loop that reads a few rows
 * at the keys it cuts (X[c, j] over a small C) keeps its window's own choice between fetching
 * them and a copy (runtime/window.c).
 *
 * Life of a replica (collective):
 *   - made by orn_dsm_replica_reserve: one object of shared memory per host (shm.c,
 *     orn_dsm_shm_map), each rank reserving and faulting in the rows of the tiles it will
 *     write (its own, and those it takes from other hosts); where that fails, replicas are
 *     off for the context and callers make their private copies.
 *   - written at the first orn_dsm_replica call, and rewritten when any rank's write
 *     generation of the array (OrnDsmArray.gen) differs from those it was written at: a
 *     barrier (no rank reads the old contents any more: every rank has left the loops that
 *     read it), each rank writes the tiles it holds (replicated tiles: the host's first
 *     rank) and those it takes from other hosts, a barrier (every row is written before
 *     anyone reads).
 *   - otherwise returned as it is: the same generations mean the same values.
 *   - unmapped when the array is freed (orn_dsm_free). The context's replicas hold at most
 *     1 GiB together ($ORN_REPLICA_MB); an array that would pass it gets none (the same on
 *     every rank, since arrays are made and freed collectively).
 * Readers may read it until they next call orn_dsm_replica for the array (or free it); they
 * never write it. With check set (the tests: $ORN_WINDOW_CHECK=1), a replica returned
 * without rewriting has this rank's rows compared with its tiles: a difference is a writer
 * of the DSM or the runtime that did not touch the array.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "dsm_int.h"

struct OrnDsmReplica {
    char *base;     /* the whole array, row-major in storage order */
    size_t bytes;   /* mapped */
    uint64_t *gens; /* every rank's generation of the array when it was written; NULL: never */
};

enum { REPLICA_MIN_DEFAULT = 1 << 20, REPLICA_MB_DEFAULT = 1024 };

/* Bytes that the context's replicas may hold together (the host's memory, not a rank's):
 * 1 GiB, or $ORN_REPLICA_MB. */
static size_t replica_cap(void)
{
    const char *e = getenv("ORN_REPLICA_MB");
    if (e && *e) {
        char *end = NULL;
        double mb = strtod(e, &end);
        if (end && *end == '\0' && mb >= 0 && mb < 1e12) return (size_t)(mb * 1048576.0);
    }
    return (size_t)REPLICA_MB_DEFAULT << 20;
}

size_t orn_dsm_replica_min(void)
{
    const char *e = getenv("ORN_REPLICA");
    if (e && (!strcmp(e, "off") || !strcmp(e, "0"))) return SIZE_MAX;
    e = getenv("ORN_REPLICA_MIN_KB"); /* tests: replicas of small arrays too */
    if (e && *e) {
        char *end = NULL;
        double kb = strtod(e, &end);
        if (end && *end == '\0' && kb >= 0 && kb < 1e12) return (size_t)(kb * 1024.0);
    }
    return REPLICA_MIN_DEFAULT;
}

/* Does this rank write tile t into its host's replica? Its owner does; a replicated tile,
 * the host's first rank. */
static int writes_tile(const OrnDsmArray *a, int64_t t)
{
    const OrnDsmCtx *ctx = a->ctx;
    const OrnDsmTile *tl = &a->tiles[t];
    int o = a->part.owner[t], me = ctx->rank;
    if (!tl->held || !tl->vals || tl->n <= 0) return 0;
    return o == me || (o == ORN_DSM_ALL && orn_dsm_taker(ctx, 0, orn_dsm_host_of(ctx, me)) == me);
}

/* Does this rank take tile t for its host from the tile's owner on another host? */
static int takes_tile(const OrnDsmArray *a, int64_t t)
{
    const OrnDsmCtx *ctx = a->ctx;
    int o = a->part.owner[t], h = orn_dsm_host_of(ctx, ctx->rank);
    return o != ORN_DSM_ALL && a->tiles[t].n > 0 && orn_dsm_host_of(ctx, o) != h &&
           orn_dsm_taker(ctx, o, h) == ctx->rank;
}

/* The bytes [*lo, *hi) of the replica that tile t's rows span. */
static void tile_span(const OrnDsmArray *a, int64_t t, size_t *lo, size_t *hi)
{
    const OrnDsmTile *tl = &a->tiles[t];
    int64_t first[ORN_DSM_MAXDIM], last[ORN_DSM_MAXDIM];
    for (int d = 0; d < a->ndim; d++) {
        first[d] = tl->lo[d];
        last[d] = tl->hi[d] - 1;
    }
    *lo = (size_t)orn_dsm_ravel(a, first) * a->esize;
    *hi = ((size_t)orn_dsm_ravel(a, last) + 1) * a->esize;
}

/* Map the object (orn_dsm_shm_map: this rank reserves the rows of the tiles it writes), or
 * leave a->replica NULL (shared memory off for the context). */
static int replica_open(OrnDsmArray *a)
{
    OrnDsmCtx *ctx = a->ctx;
    size_t bytes = (size_t)a->nnz * a->esize, *ranges = NULL;
    int n = 0;
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (writes_tile(a, t) || takes_tile(a, t)) {
            ranges = orn_xrealloc(ranges, (size_t)(n + 1) * 2 * sizeof *ranges);
            tile_span(a, t, &ranges[2 * n], &ranges[2 * n + 1]);
            n++;
        }
    void *base = NULL;
    int status = orn_dsm_shm_map(ctx, bytes, a->id, ranges, n, &base);
    free(ranges);
    if (status || !base) return status;
    a->replica = orn_xcalloc(1, sizeof *a->replica);
    a->replica->base = base;
    a->replica->bytes = bytes;
    ctx->replica_bytes += bytes;
    return ORN_OK;
}

int orn_dsm_replica_reserve(OrnDsmArray *a)
{
    OrnDsmCtx *ctx = a->ctx;
    size_t bytes = (size_t)a->nnz * a->esize, cap = replica_cap();
    if (a->replica || ctx->size < 2 || a->sparse || ctx->shm_off || !bytes ||
        bytes < orn_dsm_replica_min())
        return ORN_OK;
    /* the same on every rank, as are replica_bytes */
    if (ctx->replica_bytes > cap || bytes > cap - ctx->replica_bytes) return ORN_OK;
    return replica_open(a);
}

/* Ranks on several hosts: each rank sends the tiles it owns, packed in tile order, to the
 * rank that takes them on every other host (orn_dsm_taker), which copies them into its
 * host's replica. One exchange, point to point. */
static int replica_cross(OrnDsmArray *a, OrnDsmReplica *r)
{
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank, h = orn_dsm_host_of(ctx, me);
    size_t es = a->esize, own = 0;
    OrnDsmSwap s = orn_dsm_swap_new(P);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        int o = a->part.owner[t];
        if (o == me && a->tiles[t].n > 0) own += (size_t)a->tiles[t].n * es;
        if (takes_tile(a, t)) s.rn[o] += (size_t)a->tiles[t].n * es;
    }
    char *pack = own ? orn_xmalloc(own) : NULL, *at = pack;
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (a->part.owner[t] == me && a->tiles[t].n > 0) {
            memcpy(at, a->tiles[t].vals, (size_t)a->tiles[t].n * es);
            at += (size_t)a->tiles[t].n * es;
        }
    for (int p = 0; p < P; p++) {
        int hp = orn_dsm_host_of(ctx, p);
        if (hp != h && orn_dsm_taker(ctx, me, hp) == p) {
            s.sp[p] = pack;
            s.sn[p] = own;
        }
        if (s.rn[p]) s.rp[p] = orn_xmalloc(s.rn[p]);
    }
    int status = orn_dsm_exchange(ctx, &s, NULL, "node replica: other hosts' rows");
    for (int p = 0; p < P && !status; p++) {
        const char *from = s.rp[p];
        for (int64_t t = 0; from && t < a->part.ntiles; t++)
            if (a->part.owner[t] == p && takes_tile(a, t)) {
                orn_dsm_tile_copy(a, t, 0, a->dims[0], r->base, 0, (void *)from, 0,
                                  ORN_DSM_TO_ROWS);
                from += (size_t)a->tiles[t].n * es;
            }
    }
    for (int p = 0; p < P; p++) free(s.rp[p]);
    free(pack);
    orn_dsm_swap_free(&s);
    return status;
}

int orn_dsm_replica(OrnDsmArray *a, const uint64_t *gens, int check, const void **base)
{
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size;
    *base = NULL;
    if (!a->replica) return ORN_OK; /* none reserved: the same on every rank */
    OrnDsmReplica *r = a->replica;
    int status;
    if (r->gens && !memcmp(r->gens, gens, (size_t)P * sizeof *gens)) {
        for (int64_t t = 0; check && t < a->part.ntiles; t++)
            if (writes_tile(a, t) && orn_dsm_tile_copy(a, t, 0, a->dims[0], r->base, 0,
                                                       a->tiles[t].vals, 0, ORN_DSM_SAME_ROWS))
                return orn_dsm_fail(ctx, ORN_E_INTERNAL,
                                    "array %s: its node replica differs from the array at the "
                                    "same generations (a writer did not touch it)",
                                    a->name);
        *base = r->base;
        return ORN_OK;
    }
    status = orn_dsm_barrier(ctx); /* nobody reads the old contents any more */
    if (status) return status;
    for (int64_t t = 0; t < a->part.ntiles; t++)
        if (writes_tile(a, t))
            orn_dsm_tile_copy(a, t, 0, a->dims[0], r->base, 0, a->tiles[t].vals, 0,
                              ORN_DSM_TO_ROWS);
    if (orn_dsm_nhosts(ctx) > 1) status = replica_cross(a, r);
    if (!status) status = orn_dsm_barrier(ctx); /* every row is written */
    if (status) return status;
    if (!r->gens) r->gens = orn_xmalloc((size_t)P * sizeof *r->gens);
    memcpy(r->gens, gens, (size_t)P * sizeof *gens);
    *base = r->base;
    return ORN_OK;
}

void orn_dsm_replica_free(OrnDsmArray *a)
{
    OrnDsmReplica *r = a->replica;
    if (!r) return;
    orn_dsm_shm_unmap(r->base, r->bytes);
    a->ctx->replica_bytes -= r->bytes;
    free(r->gens);
    free(r);
    a->replica = NULL;
}
