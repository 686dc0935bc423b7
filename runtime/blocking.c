/* blocking.c: cache blocking of the unordered schedules (1d, 2d) at every rank count, and
 * whole copies of small prefetched arrays.
 *
 * Sub-blocks. A rank's blocks are cut further into sub-blocks sized to the L2 cache, and
 * the sub-blocks are tiles of the iteration space's partition like any other: they are
 * balanced by the same histogram, held by the block's owner, run one after another in
 * row-major order of the sub-grid, and recorded in the trace with their boxes, so the
 * serial replay of the trace still reproduces the result. Partitioned arrays are aligned
 * with them (W's rows of a sub-block); in 2d the rotated arrays travel in sub-blocks.
 *
 *   - A sparse iteration space with two or more keys (SGD MF's ratings) gets a
 *     LIBMF/FPSGD grid: along each blocked key k the rows of the arrays that key indexes
 *     (W[u, :] and bu[u] for u; H[i, :] and bi[i] for i) take S_k bytes per key value, and
 *     a sub-block covers E_k / n_k values of an extent E_k, so n_k = ceil(E_k S_k / B_k)
 *     sub-blocks (of the whole extent). A 2-D (CSR) space is walked row by row: its
 *     column side is read in random order and gets B = C/2 (half of the L2 cache C, the
 *     rest for the streamed elements); its row side streams and only has to survive until
 *     the band's next tile, B = 2 C. Other spaces keep both sides in C/2 (C/4 each).
 *   - A dense iteration space (a stencil) is cut along its innermost blocked key when one
 *     row band of the arrays it indexes (rows x (1 + halo) x element size) exceeds C/2.
 *     Along the column key of a CSR space (2-D sparse), every tile gives each row one
 *     more segment; tiles there are capped where segments would get too short to pay
 *     (csr_column_tiles).
 *   - Sub-blocks keep at least RT_SUB_MIN elements; at most RT_SUB_MAX tiles per key.
 * In 2d the blocked keys are the two partitioned ones: n_k becomes the number of tiles
 * rounded up to a multiple of the default block count (blocks_per_rank x P), so the rank
 * bands and the ring are unchanged. In 1d the partitioned key is sub-blocked the same way,
 * and one further key (the one whose rows take most bytes) is cut into n_k tiles when the
 * iteration space may be split there: its halo along that dimension is 0, or it is a
 * read-only dense array (ghost cells, halo.c). Ordered schedules are left alone.
 * Rounds (prefetching, buffers) still cover whole blocks: rt_tile_group. A 2d loop with
 * rounds is not sub-blocked along its rotating key (every sub-block there would be a step).
 *
 * $ORN_SUBBLOCK=RxC (orn_rt_set_subblock) fixes the sub-blocks per block (R along the
 * first partitioned key, C along the second one or, in 1d, the split key); =off disables
 * them. $ORN_CACHE_BYTES overrides the L2 size.
 *
 * Replicas. A prefetched dense array whose size is at most replicate_max (64 MiB, or
 * $ORN_REPLICATE_MAX) is copied whole to every rank once per loop (one allgather of
 * the tiles) instead of being fetched key by key per round: reads are then loads on the
 * fast path, and a loop whose only remote reads were those needs no prefetch pass, no
 * rounds and no barriers. A replica of at least 1 MiB that no view of the loop writes is
 * kept among the spares at the loop's end with every rank's write generation of the array
 * at its start; the next loop agrees on the generations first (keep_agree: one all-gather
 * of P + 1 words per such array) and, where every rank keeps a copy of the current ones,
 * uses it without a transfer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "rt_int.h"

#define RT_SUB_MIN 1024 /* elements per sub-block, at least */
#define RT_SUB_MAX 4096 /* tiles per key dimension, at most */

static int64_t parse_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (v <= 0) return 0;
    if (*end == 'K' || *end == 'k') v *= 1024;
    if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
    return (int64_t)v;
}

int64_t rt_cache_size(void)
{
    const char *env = getenv("ORN_CACHE_BYTES");
    if (env && parse_size(env) > 0) return parse_size(env);
#ifdef _SC_LEVEL2_CACHE_SIZE
    long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (v > 0) return v;
#endif
    for (int i = 0; i < 8; i++) {
        char path[96], buf[32];
        int level = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fgets(buf, sizeof buf, f)) level = atoi(buf);
        fclose(f);
        if (level != 2) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (!f) break;
        int64_t sz = fgets(buf, sizeof buf, f) ? parse_size(buf) : 0;
        fclose(f);
        if (sz > 0) return sz;
    }
    return 1 << 20;
}

/* Bytes of the arrays' rows per value of key `key` (arrays not tied to `other`). */
static int64_t side_bytes(const Exec *x, int key, int other)
{
    int64_t sum = 0;
    for (int k = 1; k < x->n; k++) {
        const OrnRtPlanArray *pa = &x->plan->arrays[k];
        const OrnDsmArray *a = x->vi[k].store;
        if (pa->role == ORN_RT_BUFFERED || pa->role == ORN_RT_REMOTE) continue;
        if (!rt_tied(pa, key) || (other >= 0 && rt_tied(pa, other))) continue;
        int64_t b = (int64_t)a->esize;
        for (int d = 0; d < a->ndim; d++)
            if (pa->key_dim[d] != key) b *= a->dims[d] > 0 ? a->dims[d] : 1;
        if (a->sparse) b = (int64_t)a->esize * 3; /* ~nnz per value unknown: small */
        sum += b;
    }
    return sum;
}

/* May the iteration space (alone: other arrays are aligned along partitioned keys only) be
 * cut along key dimension d in a 1d loop? */
static int splittable(const Exec *x, int d)
{
    const OrnRtPlanArray *pa = &x->plan->arrays[0];
    if (pa->halo_lo[d] == 0 && pa->halo_hi[d] == 0) return 1;
    if (pa->halo_lo[d] == ORN_RT_HALO_ANY || pa->halo_hi[d] == ORN_RT_HALO_ANY) return 0;
    return x->vi[0].read_only && !x->vi[0].buffered && !x->iter->sparse;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : 1;
}

static int64_t clamp_tiles(int64_t n, int64_t extent)
{
    if (n > RT_SUB_MAX) n = RT_SUB_MAX;
    if (n > extent) n = extent;
    return n < 1 ? 1 : n;
}

/* Tiles along the column key of a 2-D sparse (CSR) iteration space worth having. Each
 * tile along it costs every row a segment of its own: a rowptr entry and the row's setup
 * (RT_SEG_BYTES), plus the row side's bytes sr touched again; what a tile buys is that the
 * column side's rows (sc bytes per element) come from cache. Tiles are allowed while an
 * average row segment touches at least twice as many column-side bytes as it costs:
 * PageRank's edges (10 per row, 4-byte ranks) stay whole rows, SGD MF's ratings (~100 per
 * user, rows of K floats) still get their grid. */
#define RT_SEG_BYTES 16
static int64_t csr_column_tiles(int64_t nnz, int64_t rows, int64_t sc, int64_t sr)
{
    if (rows <= 0 || sc <= 0) return 1;
    double cap = (double)nnz * (double)sc / ((double)rows * 2.0 * (double)(RT_SEG_BYTES + sr));
    return cap < 1 ? 1 : cap > RT_SUB_MAX ? RT_SUB_MAX : (int64_t)cap;
}

void rt_choose_blocking(Exec *x, int np)
{
    const OrnRtPlan *p = x->plan;
    const OrnDsmArray *it = x->iter;
    const OrnRtCtx *rt = x->rt;
    x->sub[0] = x->sub[1] = 1;
    x->split_dim = -1;
    x->nsplit = 1;
    x->ws_bytes = 0;
    if (rt->sub_mode == 0 || np < 1 || (p->nkeys < 2 && rt->sub_mode != 1)) return;
    /* @gpu loops (whole blocks): the device tiles each block itself, and every block costs
     * its own copies and launches (on an H100, SGD MF at K = 128 on 10 M ratings without
     * an accumulator: 140 sub-blocks 1.03 s per epoch, one block 0.11 s). $ORN_SUBBLOCK
     * still applies. */
    if (x->loop->whole && rt->sub_mode != 1) return;
    int k0 = x->kd[0], k1 = -1;
    int rotate = np == 2;
    /* A 1d cut along a second key that another loop undid since this loop made it (the
     * array keeps the partition's tag after the cut, layout.c): ALS's evaluation over the
     * ratings cut them by item for the cache, its user half wanted them by user rows only,
     * and each of the two moved all 9 M ratings again at every run (0.35-0.5 s at -n 2).
     * Such cuts are off for that array from then on -- and with them the row bands, which
     * only pay for revisits (below) -- the same on every rank (the same loops ran). */
    OrnDsmArray *ia = x->iter;
    if (!rotate && ia->split_tag && ia->part_tag != ia->split_tag) ia->split_off = 1;
    if (rotate) {
        k1 = x->kd[1];
    } else if (!ia->split_off) {
        /* 1d: the key whose rows take most bytes, among those the iteration space may be
         * cut along. */
        int64_t best = -1;
        for (int d = 0; d < p->nkeys; d++) {
            if (d == k0 || !splittable(x, d)) continue;
            int64_t b = it->sparse ? side_bytes(x, d, k0) : (int64_t)it->dims[d];
            if (b > best) {
                best = b;
                k1 = d;
            }
        }
    }
    int64_t B0 = rt_default_blocks(x, 0), B1 = rotate ? rt_default_blocks(x, 1) : 1;
    int64_t n0 = B0, n1 = B1; /* tiles along k0, k1 */
    int64_t e0 = it->dims[k0], e1 = k1 >= 0 ? it->dims[k1] : 1;
    int64_t C = rt->cache_bytes > 0 ? rt->cache_bytes : (1 << 20);
    int64_t nnz = it->nnz;
    if (rt->sub_mode == 1) {
        n0 = B0 * rt->sub_fixed[0];
        if (k1 >= 0) n1 = B1 * rt->sub_fixed[1];
    } else if (it->sparse) {
        int64_t s0 = side_bytes(x, k0, k1), s1 = k1 >= 0 ? side_bytes(x, k1, k0) : 0;
        int64_t budget = C / 2;
        int64_t b0 = s1 > 0 ? budget / 2 : budget, b1 = s0 > 0 ? budget / 2 : budget;
        if (it->ndim == 2 && k1 >= 0) {
            /* A CSR walk goes row by row: the row side's rows (W[u, :]) are touched by
             * consecutive elements and stream; only the column side's (H[i, :]) are read
             * in random order and must stay in the cache, so they get the half of it, and
             * a band of rows need only survive (in L2 and L3) until the sub-grid row's
             * next tile: 2 C. MF (L2 1 MiB): 20 x 16 tiles at one rank, 0.42 -> 0.37
             * s/epoch against 154 x 32 with C/4 per side. */
            int64_t *brow = k0 == 0 ? &b0 : &b1, *bcol = k0 == 0 ? &b1 : &b0;
            *brow = 2 * C;
            *bcol = C / 2;
        }
        if (s0 > 0) n0 = ceil_div(e0 * s0, b0);
        if (s1 > 0) n1 = ceil_div(e1 * s1, b1);
        /* A CSR space visits each row once per tile along its column key: cap those tiles
         * where row segments would get too short to pay for themselves. */
        if (it->ndim == 2 && (k0 == 1 || k1 == 1)) {
            int64_t sc = side_bytes(x, 1, 0), sr = side_bytes(x, 0, 1);
            int64_t cap = csr_column_tiles(nnz, it->dims[0], sc, sr);
            if (k0 == 1 && n0 > cap) n0 = cap;
            if (k1 == 1 && n1 > cap) n1 = cap;
        }
        /* Enough elements per sub-block to pay for binding it. */
        while (n0 * n1 > 1 && nnz / (n0 * n1) < RT_SUB_MIN) {
            if (n0 >= n1 && n0 > 1)
                n0 = (n0 + 1) / 2;
            else
                n1 = (n1 + 1) / 2;
        }
        /* A 1d CSR walk goes row by row: bands of rows only help when each is revisited,
         * once per tile along the columns. Without column tiles the rows' arrays stream
         * anyway, and cutting bands would only copy the iteration space (PageRank's edges:
         * 0.08 s per run at -n 1). */
        if (!rotate && it->ndim == 2 && k0 == 0 && n1 <= 1) n0 = B0;
        x->ws_bytes = s0 * ceil_div(e0, n0 > B0 ? n0 : B0) + s1 * ceil_div(e1, n1 > B1 ? n1 : B1);
    } else if (k1 >= 0) {
        /* Dense: one row band along k1 of every array indexed by both keys. */
        int64_t row = 0;
        for (int k = 0; k < x->n; k++) {
            const OrnRtPlanArray *pa = &p->arrays[k];
            if (!rt_tied(pa, k0) || !rt_tied(pa, k1)) continue;
            int64_t lines = 1;
            for (int d = 0; d < pa->ndim; d++)
                if (pa->key_dim[d] == k0 && pa->halo_lo[d] >= 0 && pa->halo_hi[d] >= 0)
                    lines += pa->halo_lo[d] + pa->halo_hi[d];
            row += (int64_t)x->vi[k].store->esize * e1 * lines;
        }
        if (row > C / 2) n1 = ceil_div(row, C / 2);
        x->ws_bytes = row / (n1 > 0 ? n1 : 1);
    }
    n0 = clamp_tiles(n0, e0);
    n1 = k1 >= 0 ? clamp_tiles(n1, e1) : 1;
    x->sub[0] = (int)(n0 > B0 ? ceil_div(n0, B0) : 1);
    if (rotate) {
        /* Rounds cover blocks; along the rotating key every sub-block is a step. */
        x->sub[1] = x->rounds && rt->sub_mode != 1 ? 1 : (int)(n1 > B1 ? ceil_div(n1, B1) : 1);
    } else if (k1 >= 0 && n1 > 1) {
        x->split_dim = k1;
        x->nsplit = (int)n1;
    }
}

int64_t rt_tile_group(const Exec *x, int64_t tile)
{
    int grid[ORN_DSM_MAXDIM];
    const OrnDsmPart *p = &x->iter->part;
    if (x->plan->npart < 1 || x->plan->strategy == ORN_RT_UNIMODULAR ||
        x->plan->strategy == ORN_RT_SERIAL)
        return tile;
    orn_dsm_part_unravel(p, tile, grid);
    int64_t g = 0;
    for (int i = 0; i < x->plan->npart && i < 2; i++) {
        int s = x->sub[i] > 1 ? x->sub[i] : 1;
        int nbc = (p->nb[x->kd[i]] + s - 1) / s;
        g = g * nbc + grid[x->kd[i]] / s;
    }
    return g;
}

/* ---------------------------------------------------------------- replicas */

/* Whether a tile's box is one run of the row-major array: extent 1 in the leading
 * dimensions, everything in the trailing ones (every 1-D tile). */
static int tile_is_run(const OrnDsmArray *a, const OrnDsmTile *tl)
{
    int d = a->ndim - 1;
    while (d > 0 && tl->lo[d] == 0 && tl->hi[d] == a->dims[d]) d--;
    for (int e = 0; e < d; e++)
        if (tl->hi[e] - tl->lo[e] != 1) return 0;
    return 1;
}

/* The whole of a into copy, when every tile is a run of it and there are few: each owner
 * sends its tiles straight from their storage to the other ranks, which receive them
 * straight into place (no packing, no receive buffer, no unpacking: PageRank's 4 MB
 * contrib at -n 2 moved 14 MB through memory the other way). Returns -1 when the tiles do
 * not allow it, else a status. The tiles travel as need-ordered transfers (xferq.h),
 * needed before the first block, and are waited for at the end of the loop's setup
 * (rt_replica_ready): meanwhile the rank places its other arrays. Matching: both sides
 * enumerate the tiles in tile order, one tag of their own (no collective of the setup
 * meanwhile can take a tile's message), and transfers to one peer on one tag leave in
 * queueing order. */
static int replicate_direct(Exec *x, const OrnDsmArray *a, char *copy)
{
    int P = x->P, me = x->me, status = ORN_OK;
    int64_t nt = a->part.ntiles, nmsg = 0;
    for (int64_t t = 0; t < nt; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        if (tl->n > 0 && !tile_is_run(a, tl)) return -1;
        if (tl->n > 0 && a->part.owner[t] != ORN_DSM_ALL)
            nmsg += a->part.owner[t] == me ? P - 1 : 1;
    }
    if (nt > 16 * (int64_t)P) return -1; /* many small tiles: one packed exchange is cheaper */
    x->replica_x =
        orn_xrealloc(x->replica_x, (size_t)(x->nreplica_x + nmsg + 1) * sizeof *x->replica_x);
    OrnDsmXfer **xs = x->replica_x + x->nreplica_x;
    int64_t nr = 0;
    int64_t at[ORN_DSM_MAXDIM];
    RtSpan sp = rt_span_begin(x, ORN_TL_TRANSFER, "replica");
    for (int64_t t = 0; t < nt && !status; t++) { /* receives first */
        const OrnDsmTile *tl = &a->tiles[t];
        int o = a->part.owner[t];
        if (tl->n == 0 || o == ORN_DSM_ALL || o == me) continue;
        for (int d = 0; d < a->ndim; d++) at[d] = tl->lo[d];
        xs[nr] = NULL;
        status = orn_dsm_xrecv(x->dsm, copy + (size_t)orn_dsm_ravel(a, at) * a->esize,
                               (size_t)tl->n * a->esize, o, ORN_TAG_REPLICA, 0.0, "replica tile",
                               &xs[nr]);
        nr++;
    }
    for (int64_t t = 0; t < nt && !status; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        int o = a->part.owner[t];
        if (tl->n == 0 || !(o == ORN_DSM_ALL || o == me) || !tl->held) continue;
        for (int d = 0; d < a->ndim; d++) at[d] = tl->lo[d];
        memcpy(copy + (size_t)orn_dsm_ravel(a, at) * a->esize, tl->vals, (size_t)tl->n * a->esize);
        for (int k = 1; k < P && o == me && !status; k++) {
            int q = (me + k) % P;
            xs[nr] = NULL;
            status = orn_dsm_xsend(x->dsm, tl->vals, (size_t)tl->n * a->esize, q, ORN_TAG_REPLICA,
                                   0.0, "replica tile", &xs[nr]);
            nr++;
        }
    }
    x->nreplica_x += nr;
    rt_span_end(x, sp, NULL);
    return status;
}

int rt_replica_ready(Exec *x)
{
    if (!x->nreplica_x) return ORN_OK;
    /* a part of the loop's setup, whose time is counted as the setup's */
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "wait for replica tiles");
    int status = orn_dsm_xwait(x->dsm, x->replica_x, (int)x->nreplica_x, "replica");
    rt_span_end(x, sp, NULL);
    x->nreplica_x = 0;
    return status;
}

/* Whether view k's array gets a replica that may be kept between runs: at several ranks,
 * dense, at least RT_KEEP_MIN bytes (a smaller one is copied as fast as agreed on), no buffer
 * of the loop updating it and no view of the loop writing it (its generation must say what
 * the copy holds), the first view of its array. The plan and the sizes decide: the same on
 * every rank. */
#define RT_KEEP_MIN (1 << 20)
static int keepable(const Exec *x, int k)
{
    const ViewImpl *vi = &x->vi[k];
    const OrnDsmArray *a = vi->store;
    if (x->P == 1 || x->views[k].role != ORN_RT_PREFETCHED || !a || a->sparse || vi->xform)
        return 0;
    int64_t bytes = a->nnz * (int64_t)a->esize;
    if (bytes < RT_KEEP_MIN || bytes > x->rt->replicate_max) return 0;
    for (int j = 0; j < x->n; j++) {
        if (x->vi[j].store != a) continue;
        if (j < k && x->views[j].role == ORN_RT_PREFETCHED) return 0;
        if (!x->vi[j].read_only || x->vi[j].buf || x->vi[j].buffered) return 0;
    }
    return 1;
}

/* Collective: every rank's generation of each keepable array and the generations of the copy
 * of it that rank keeps (none: zeros); where every rank keeps one of the current
 * generations, each takes its own back as the loop's replica, with no transfer. */
static int keep_agree(Exec *x)
{
    int P = x->P, nc = 0, status = ORN_OK;
    for (int k = 1; k < x->n; k++) nc += keepable(x, k);
    if (!nc) return ORN_OK; /* most loops: nothing allocated, nothing sent */
    int *ks = orn_xmalloc((size_t)nc * sizeof *ks); /* the keepable views, in order */
    for (int k = 1, c = 0; k < x->n; k++)
        if (keepable(x, k)) ks[c++] = k;
    size_t per = (size_t)nc * (size_t)(P + 1); /* entries a rank contributes */
    uint64_t *g = orn_xcalloc((size_t)P * per, sizeof *g);
    for (int c = 0; c < nc; c++) {
        int k = ks[c];
        uint64_t *e = g + (size_t)x->me * per + (size_t)c * (size_t)(P + 1);
        e[0] = x->vi[k].store->gen;
        const uint64_t *kept = rt_spare_peek(x->rt, x->vi[k].store->id);
        if (kept) memcpy(e + 1, kept, (size_t)P * sizeof *kept);
    }
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "generations of kept replicas");
    status = orn_dsm_allgather_into(x->dsm, g, per * sizeof *g, "generations of kept replicas");
    rt_span_end(x, sp, &x->rt->stats.wait);
    if (!status) {
        x->replica_gens = orn_xcalloc((size_t)x->n, sizeof *x->replica_gens);
        if (!x->replica) x->replica = orn_xcalloc((size_t)x->n, sizeof *x->replica);
    }
    int check = x->rt->window_check;
    for (int c = 0; c < nc && !status; c++) {
        int k = ks[c];
        uint64_t *G = orn_xmalloc((size_t)P * sizeof *G);
        int all = 1;
        for (int r = 0; r < P; r++) G[r] = g[(size_t)r * per + (size_t)c * (size_t)(P + 1)];
        for (int r = 0; r < P; r++)
            all &= !memcmp(g + (size_t)r * per + (size_t)c * (size_t)(P + 1) + 1, G,
                           (size_t)P * sizeof *G);
        x->replica_gens[k] = G;
        /* One copy for every rank of the host where it can be (dsm/replica.c): the
         * array's own, not given back or kept after the run. */
        const void *rep = NULL;
        if ((status = orn_dsm_replica(x->vi[k].store, G, check, &rep))) break;
        if (rep) {
            if (!x->replica_borrowed)
                x->replica_borrowed = orn_xcalloc((size_t)x->n, sizeof *x->replica_borrowed);
            x->replica[k] = (char *)rep;
            x->replica_borrowed[k] = 1;
            x->rt->stats.shared += x->vi[k].store->nnz;
            continue;
        }
        if (!all) continue;
        const OrnDsmArray *a = x->vi[k].store;
        size_t size = 0;
        char *p = rt_spare_find(x->rt, a->id, G, P, &size);
        if (!p || size < (size_t)a->nnz * a->esize)
            status = rt_fail(x, ORN_E_INTERNAL,
                             "array %s: the replica kept from an earlier run "
                             "is gone",
                             x->plan->arrays[k].name);
        x->replica[k] = p;
        x->rt->stats.kept += a->nnz;
    }
    free(g);
    free(ks);
    return status;
}

int rt_replicate_prefetched(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    int remote = 0, status = ORN_OK;
    x->prefetch_needed = 1;
    if (p->strategy != ORN_RT_1D && p->strategy != ORN_RT_2D) return ORN_OK;
    for (int d = 0; d < p->arrays[0].ndim; d++)
        if (p->arrays[0].halo_lo[d] != 0 || p->arrays[0].halo_hi[d] != 0) remote = 1;
    if ((status = keep_agree(x))) return status;
    for (int k = 1; k < x->n; k++) {
        OrnRtView *v = &x->views[k];
        ViewImpl *vi = &x->vi[k];
        OrnDsmArray *a = vi->store;
        const OrnRtPlanArray *pa = &p->arrays[k];
        if (v->role == ORN_RT_REMOTE) remote = 1;
        /* A prefetch pass may also announce reads beyond a block's box. */
        for (int d = 0; d < pa->ndim; d++)
            if ((v->role == ORN_RT_PARTITIONED || v->role == ORN_RT_ROTATED) &&
                (pa->halo_lo[d] != 0 || pa->halo_hi[d] != 0))
                remote = 1;
        if (v->role != ORN_RT_PREFETCHED) continue;
        int64_t vol = 1;
        for (int d = 0; d < a->ndim; d++) vol *= a->dims[d];
        /* A buffer's target: its copy takes every rank's deltas at each flush (buffer.c);
         * at one rank the buffer adds to the target itself, which reads must then see. */
        if (a->sparse || (vi->buffered && x->P == 1) || vi->xform ||
            vol * (int64_t)a->esize > x->rt->replicate_max) {
            remote = 1;
            continue;
        }
        if (!x->replica) x->replica = orn_xcalloc((size_t)x->n, sizeof *x->replica);
        if (x->replica[k]) { /* kept from an earlier run (keep_agree) */
            x->rt->stats.replicated++;
            continue;
        }
        int same = -1; /* one copy per array: a buffer's deltas reach all of its views */
        for (int j = 1; j < k; j++)
            if (x->replica[j] && x->vi[j].store == a) same = j;
        if (same >= 0) {
            x->replica[k] = x->replica[same];
            continue;
        }
        /* One rank holding the whole array as one tile, which no view of this loop writes:
         * the tile is the copy (PageRank's 4 MB pr at -n 1: no allocation, page faults and
         * memcpy per iteration). */
        const OrnDsmTile *t0 = a->part.ntiles == 1 ? &a->tiles[0] : NULL;
        int whole = x->P == 1 && t0 && t0->held && t0->vals && t0->n == vol;
        for (int d = 0; whole && d < a->ndim; d++)
            whole = t0->lo[d] == 0 && t0->hi[d] == a->dims[d];
        for (int j = 1; whole && j < x->n; j++)
            if (j != k && x->vi[j].store == a && x->views[j].role != ORN_RT_PREFETCHED) whole = 0;
        if (whole) {
            if (!x->replica_borrowed)
                x->replica_borrowed = orn_xcalloc((size_t)x->n, sizeof *x->replica_borrowed);
            x->replica[k] = t0->vals;
            x->replica_borrowed[k] = 1;
            x->rt->stats.replicated++;
            continue;
        }
        char *copy = rt_spare_take(x->rt, (size_t)(vol ? vol : 1) * a->esize);
        if (x->P > 1) {
            status = replicate_direct(x, a, copy);
            /* Its tiles must stay put while they are sent: the wait moves to the end of the
             * setup only when no other view of the loop (which the schedule may move) shows
             * the array. */
            int alone = 1;
            for (int j = 0; j < x->n; j++) alone &= j == k || x->vi[j].store != a;
            if (status == ORN_OK && !alone) status = rt_replica_ready(x);
            if (status >= 0) {
                x->replica[k] = copy;
                x->rt->stats.replicated++;
                x->rt->stats.replica_bytes += vol * (int64_t)a->esize;
                if (status) return status;
                continue;
            }
            status = ORN_OK;
        }
        status = orn_dsm_read_whole(a, copy); /* one allgather of the tiles */
        x->replica[k] = copy;
        x->rt->stats.replicated++;
        x->rt->stats.replica_bytes += vol * (int64_t)a->esize;
        if (status) return status;
    }
    x->prefetch_needed = remote;
    return ORN_OK;
}

void rt_replica_bind(Exec *x, int k, OrnRtView *v)
{
    const OrnDsmArray *a = x->vi[k].store;
    v->base = x->replica[k];
    int64_t s = 1;
    for (int d = ORN_RT_MAXDIM - 1; d >= 0; d--) {
        v->lo[d] = 0;
        v->hi[d] = d < a->ndim ? a->dims[d] : 0;
        v->stride[d] = d < a->ndim ? s : 0;
        if (d < a->ndim) s *= a->dims[d];
    }
}

void rt_replica_writeback(Exec *x, int k)
{
    OrnDsmArray *a = x->vi[k].store;
    orn_dsm_touch(a);
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        if (tl->held && tl->n)
            orn_dsm_tile_copy(a, t, 0, a->dims[0], x->replica[k], 0, tl->vals, 0,
                              ORN_DSM_FROM_ROWS);
    }
}

/* Take spare i out of the spares (what it held is forgotten). */
static void *spare_out(OrnRtCtx *rt, int i)
{
    void *p = rt->spare[i].p;
    rt->spare[i].p = NULL;
    free(rt->spare[i].gens);
    rt->spare[i].gens = NULL;
    rt->spare[i].array = -1;
    return p;
}

static void spare_clear(OrnRtCtx *rt, int i)
{
    free(spare_out(rt, i));
}

void *rt_spare_take(OrnRtCtx *rt, size_t size)
{
    int best = -1; /* the smallest that fits, holding nothing if one does */
    for (int i = 0; i < RT_SPARES; i++) {
        if (!rt->spare[i].p || rt->spare[i].size < size) continue;
        int better = best < 0 || (rt->spare[i].gens == NULL) > (rt->spare[best].gens == NULL) ||
                     ((rt->spare[i].gens == NULL) == (rt->spare[best].gens == NULL) &&
                      rt->spare[i].size < rt->spare[best].size);
        if (better) best = i;
    }
    if (best < 0) {
        void *p = orn_xmalloc(size);
        orn_dsm_huge(p, size); /* a fresh copy: 2 MiB page faults, not 4 KiB */
        return p;
    }
    return spare_out(rt, best);
}

void rt_spare_keep(OrnRtCtx *rt, void *p, size_t size, size_t limit, int array,
                   const uint64_t *gens, int P)
{
    size_t held = 0;
    int slot = -1;
    for (int i = 0; i < RT_SPARES; i++) {
        if (gens && rt->spare[i].gens && rt->spare[i].array == array) spare_clear(rt, i); /* old */
        held += rt->spare[i].p ? rt->spare[i].size : 0;
        if (!rt->spare[i].p && slot < 0) slot = i;
    }
    /* over the limit: spares that hold nothing go first, then other arrays' copies */
    for (int pass = 0; pass < 2 && (slot < 0 || held + size > limit); pass++)
        for (int i = 0; i < RT_SPARES && (slot < 0 || held + size > limit); i++) {
            if (!rt->spare[i].p || (pass == 0 && rt->spare[i].gens) || !gens) continue;
            held -= rt->spare[i].size;
            spare_clear(rt, i);
            if (slot < 0) slot = i;
        }
    if (slot < 0 || held + size > limit) {
        free(p);
        return;
    }
    rt->spare[slot].p = p;
    rt->spare[slot].size = size;
    rt->spare[slot].array = gens ? array : -1;
    rt->spare[slot].gens = NULL;
    if (gens) {
        rt->spare[slot].gens = orn_xmalloc((size_t)P * sizeof *gens);
        memcpy(rt->spare[slot].gens, gens, (size_t)P * sizeof *gens);
    }
}

void rt_spare_give(OrnRtCtx *rt, void *p, size_t size, size_t limit)
{
    rt_spare_keep(rt, p, size, limit, -1, NULL, 0);
}

void *rt_spare_find(OrnRtCtx *rt, int array, const uint64_t *gens, int P, size_t *size)
{
    for (int i = 0; i < RT_SPARES; i++)
        if (rt->spare[i].p && rt->spare[i].gens && rt->spare[i].array == array &&
            !memcmp(rt->spare[i].gens, gens, (size_t)P * sizeof *gens)) {
            *size = rt->spare[i].size;
            return spare_out(rt, i);
        }
    return NULL;
}

const uint64_t *rt_spare_peek(const OrnRtCtx *rt, int array)
{
    for (int i = 0; i < RT_SPARES; i++)
        if (rt->spare[i].p && rt->spare[i].gens && rt->spare[i].array == array)
            return rt->spare[i].gens;
    return NULL;
}

void rt_spare_free(OrnRtCtx *rt)
{
    for (int i = 0; i < RT_SPARES; i++) spare_clear(rt, i);
}

void rt_replica_free(Exec *x)
{
    /* transfers into or out of the copies and tiles stop first */
    for (int64_t i = 0; i < x->nreplica_x; i++) orn_dsm_xdrop(x->dsm, &x->replica_x[i]);
    free(x->replica_x);
    x->replica_x = NULL;
    x->nreplica_x = 0;
    if (!x->replica) return;
    for (int k = 0; k < x->n; k++) {
        int shared = 0;
        for (int j = 0; j < k; j++) shared |= x->replica[j] == x->replica[k];
        if (shared || (x->replica_borrowed && x->replica_borrowed[k]) || !x->replica[k]) continue;
        const OrnDsmArray *a = x->vi[k].store;
        int64_t vol = 1;
        for (int d = 0; d < a->ndim; d++) vol *= a->dims[d];
        if (x->replica_gens && x->replica_gens[k])
            rt_spare_keep(x->rt, x->replica[k], (size_t)(vol ? vol : 1) * a->esize,
                          (size_t)x->rt->replicate_max, a->id, x->replica_gens[k], x->P);
        else
            rt_spare_give(x->rt, x->replica[k], (size_t)(vol ? vol : 1) * a->esize,
                          (size_t)x->rt->replicate_max);
    }
    for (int k = 0; x->replica_gens && k < x->n; k++) free(x->replica_gens[k]);
    free(x->replica_gens);
    x->replica_gens = NULL;
    free(x->replica);
    free(x->replica_borrowed);
    x->replica = NULL;
    x->replica_borrowed = NULL;
}
