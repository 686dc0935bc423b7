/* halo.c: ghost cells of read-only arrays in the unordered schedules (1d, 2d), and of
 * read-only rotated arrays in 2d_ordered.
 *
 * A stencil reads its neighbours: A[i - 1, j], A[i + 1, j]. When A is read-only in the
 * loop and partitioned (or rotated), the plan gives the halo widths per dimension (the
 * analyzer's offsets c of subscripts k + c), and this file makes the body's fast path
 * (OrnRtView base/lo/hi/stride) cover the block's box plus that halo:
 *
 *   - before the first step, the ghost regions start moving to every rank that will run a
 *     block needing them. Nobody writes the array during the loop, so the copies stay
 *     exact. Every rank computes the whole exchange from the replicated metadata (iteration
 *     tiles and their owners, the array's partition), so there are no requests and no
 *     sizes to exchange: an owner packs, for each destination, the regions in the order the
 *     destination enumerates them, and sends those of each of the destination's tiles as
 *     one need-ordered transfer (xferq.h), needed at that tile's place in the
 *     destination's order of blocks. A block waits only for its own tiles' regions when it
 *     is bound: the first block starts as soon as its ghost cells are in, and the others'
 *     arrive while it computes;
 *   - when a block is bound, the view of such an array covers box + halo (clamped to the
 *     array). When the halo leaves the tile along dimension 0 only (a stencil over rows)
 *     and the tile stays put, the ghost rows are written into padding rows around the
 *     tile's own storage (orn_dsm_tile_pad, once per tile and loop run) and the view is
 *     that storage: nothing of the box is copied. Otherwise the view gets a private copy
 *     of box + halo assembled from the tile and its ghost regions (one copy per array
 *     kept, rebuilt when the bound tile changes).
 *
 * Only dense arrays that no buffer of the loop updates get ghost cells; reads beyond the
 * box of the others (sparse arrays, buffers' targets, which change at every flush), and
 * reads along dimensions with ORN_RT_HALO_ANY, go through the view's slow path (prefetch
 * cache, else on demand), for which the loop keeps owners serving (Exec.remote_reads).
 * Ordered schedules (2d_ordered, unimodular) are untouched: their reads of other blocks
 * must see the writes of earlier steps and go through the cache -- except the read-only
 * rotated arrays of 2d_ordered (B[j - 1] of an edit distance), whose column blocks travel
 * down the wavefront's pipeline: they get ghost cells as in 2d (pieces from their home
 * rank, before the first step).
 *
 * Cost model (per rank: G bytes of ghost regions from other ranks, S bytes of blocks
 * bound, P ranks, latency a, byte time b, copy time c per byte, m tiles with ghosts):
 *   T = a + G1 b               before the first block: its own regions (G1 of G), the rest
 *                              (m transfers) hidden behind the blocks before theirs
 *     + G c                    ghost rows into the tiles' padding (rows only), or
 *     + (S + G) c              assembling box + halo when a block is bound (otherwise)
 * instead of one on-demand round trip (2 a + 32 b) per ghost element.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

/* A region of a ghosted array that the box + halo of tile `ta` takes from tile `u`. */
typedef struct Piece {
    int64_t ta, u;
    int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM];
    int src;          /* owner of u */
    int64_t run;      /* position in the receiving rank's order of blocks of the first block
                         that binds ta: the need of the transfer bringing it */
    size_t off;       /* in the local store (src == this rank) or in src's received block */
    const char *vals; /* row-major over the region, once the exchange is done */
} Piece;

struct RtHalo {
    int64_t wlo[ORN_DSM_MAXDIM], whi[ORN_DSM_MAXDIM]; /* widths along partitioned dims */
    Piece *pieces;                                    /* this rank's, grouped by ta */
    int64_t npieces, cappieces;
    int64_t *beg, *end;    /* per tile of the array: its pieces (none: box + halo = box) */
    unsigned char *filled; /* per tile of the array: its padding holds its ghost cells */
    int64_t cur;           /* tile whose box + halo is in box, -1 none */
    /* Ghost regions still arriving: per tile of the array, its transfers rx[rbeg..rend). */
    OrnDsmXfer **rx;
    int64_t nrx, caprx;
    int64_t *rbeg, *rend;
    int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM];
    char *box;
    size_t boxcap;
};

static int64_t box_volume(const int64_t *lo, const int64_t *hi, int nd)
{
    int64_t v = 1;
    for (int d = 0; d < nd; d++) v *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
    return v;
}

/* Copy region [lo, hi) from the row-major box [slo, shi) at src into the row-major box
 * [dlo, dhi) at dst; the region lies inside both. Runs along the last dimension are
 * contiguous on both sides. */
static void copy_region(char *dst, const int64_t *dlo, const int64_t *dhi, const char *src,
                        const int64_t *slo, const int64_t *shi, const int64_t *lo,
                        const int64_t *hi, int nd, size_t es)
{
    if (box_volume(lo, hi, nd) == 0) return;
    int64_t ds[ORN_DSM_MAXDIM], ss[ORN_DSM_MAXDIM], at[ORN_DSM_MAXDIM];
    int64_t sd = 1, sv = 1;
    for (int d = nd - 1; d >= 0; d--) {
        ds[d] = sd;
        ss[d] = sv;
        sd *= dhi[d] - dlo[d];
        sv *= shi[d] - slo[d];
    }
    size_t run = (size_t)(hi[nd - 1] - lo[nd - 1]) * es;
    for (int d = 0; d < nd; d++) at[d] = lo[d];
    for (;;) {
        int64_t od = 0, os = 0;
        for (int d = 0; d < nd; d++) {
            od += (at[d] - dlo[d]) * ds[d];
            os += (at[d] - slo[d]) * ss[d];
        }
        memcpy(dst + (size_t)od * es, src + (size_t)os * es, run);
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++at[d] < hi[d]) break;
            at[d] = lo[d];
        }
        if (d < 0) return;
    }
}

static void tile_box(const OrnDsmPart *p, int64_t t, int64_t *lo, int64_t *hi)
{
    int g[ORN_DSM_MAXDIM];
    orn_dsm_part_unravel(p, t, g);
    for (int d = 0; d < p->ndim; d++) {
        lo[d] = p->bounds[d][g[d]];
        hi[d] = p->bounds[d][g[d] + 1];
    }
}

/* Box + halo of tile ta, clamped to the array. */
static void ext_box(const RtHalo *h, const OrnDsmArray *a, int64_t ta, int64_t *lo, int64_t *hi)
{
    tile_box(&a->part, ta, lo, hi);
    for (int d = 0; d < a->ndim; d++) {
        lo[d] = lo[d] - h->wlo[d] < 0 ? 0 : lo[d] - h->wlo[d];
        hi[d] = hi[d] + h->whi[d] > a->dims[d] ? a->dims[d] : hi[d] + h->whi[d];
    }
}

/* Called for each piece a rank needs, in the order both sides enumerate them. */
typedef void (*PieceFn)(Exec *x, int k, const Piece *pc, void *ud);

/* Array tiles already visited: stamp[ta] == mark (a new mark per array per walk). */
typedef struct Seen {
    int64_t *stamp;
    int64_t mark;
} Seen;

/* The pieces of the rank that runs iteration tiles runs[0 .. nruns): for each ghosted
 * array k, for each array tile aligned with one of those (in tile order, each once), for
 * each other tile u meeting its box + halo (row-major over the grid): the intersection. */
static void each_piece(Exec *x, const int64_t *runs, int64_t nruns, Seen *seen, PieceFn fn,
                       void *ud)
{
    for (int k = 0; k < x->n; k++) {
        const RtHalo *h = x->vi[k].halo;
        if (!h) continue;
        const OrnDsmArray *a = x->vi[k].store;
        const OrnDsmPart *p = &a->part;
        int nd = a->ndim;
        int64_t mark = ++seen->mark;
        for (int64_t i = 0; i < nruns; i++) {
            int64_t ta = rt_aligned_tile(x, k, runs[i]);
            if (seen->stamp[ta] == mark) continue;
            seen->stamp[ta] = mark;
            int64_t elo[ORN_DSM_MAXDIM], ehi[ORN_DSM_MAXDIM];
            ext_box(h, a, ta, elo, ehi);
            /* grid range of the tiles meeting [elo, ehi) */
            int glo[ORN_DSM_MAXDIM], ghi[ORN_DSM_MAXDIM], g[ORN_DSM_MAXDIM];
            for (int d = 0; d < nd; d++) {
                glo[d] = p->nb[d];
                ghi[d] = -1;
                for (int j = 0; j < p->nb[d]; j++)
                    if (p->bounds[d][j] < ehi[d] && p->bounds[d][j + 1] > elo[d]) {
                        if (j < glo[d]) glo[d] = j;
                        ghi[d] = j;
                    }
                if (ghi[d] < 0) goto next_tile; /* an empty box + halo */
                g[d] = glo[d];
            }
            for (;;) {
                Piece pc;
                memset(&pc, 0, sizeof pc);
                pc.ta = ta;
                pc.run = i;
                pc.u = orn_dsm_part_ravel(p, g);
                pc.src = p->owner[pc.u];
                tile_box(p, pc.u, pc.lo, pc.hi);
                for (int d = 0; d < nd; d++) {
                    if (pc.lo[d] < elo[d]) pc.lo[d] = elo[d];
                    if (pc.hi[d] > ehi[d]) pc.hi[d] = ehi[d];
                }
                if (pc.u != ta && box_volume(pc.lo, pc.hi, nd) > 0) fn(x, k, &pc, ud);
                int d = nd - 1;
                for (; d >= 0; d--) {
                    if (++g[d] <= ghi[d]) break;
                    g[d] = glo[d];
                }
                if (d < 0) break;
            }
        next_tile:;
        }
    }
}

static size_t piece_bytes(const Exec *x, int k, const Piece *pc)
{
    const OrnDsmArray *a = x->vi[k].store;
    return (size_t)box_volume(pc->lo, pc->hi, a->ndim) * a->esize;
}

/* Receiving side: this rank's own pieces, with their offsets. */
typedef struct Mine {
    size_t *from; /* bytes expected from each rank */
    size_t local; /* bytes of pieces held here */
} Mine;

static void add_mine(Exec *x, int k, const Piece *pc, void *ud)
{
    Mine *m = ud;
    RtHalo *h = x->vi[k].halo;
    if (h->npieces == h->cappieces) {
        h->cappieces = h->cappieces ? 2 * h->cappieces : 16;
        h->pieces = orn_xrealloc(h->pieces, (size_t)h->cappieces * sizeof *h->pieces);
    }
    Piece *p = &h->pieces[h->npieces];
    *p = *pc;
    size_t n = piece_bytes(x, k, pc);
    if (pc->src == x->me) {
        p->off = m->local;
        m->local += n;
    } else {
        p->off = m->from[pc->src];
        m->from[pc->src] += n;
    }
    if (h->beg[pc->ta] == h->end[pc->ta]) h->beg[pc->ta] = h->npieces;
    h->end[pc->ta] = ++h->npieces;
}

/* Sending side: what goes to one destination, counted, then packed; each run of pieces of
 * one tile of the destination's (one array k, one tile ta) is a group, sent as one
 * transfer. */
typedef struct Group {
    size_t off, n;
    int64_t run;
} Group;
typedef struct Send {
    size_t n;
    char *buf; /* NULL while counting */
    int k;     /* the group being packed: array, tile (-1 none) */
    int64_t ta;
    Group *g; /* while packing */
    int64_t ng, capg;
} Send;

static void send_piece(Exec *x, int k, const Piece *pc, void *ud)
{
    Send *s = ud;
    if (pc->src != x->me) return;
    const OrnDsmArray *a = x->vi[k].store;
    size_t n = piece_bytes(x, k, pc);
    if (s->buf) {
        const OrnDsmTile *t = &a->tiles[pc->u];
        copy_region(s->buf + s->n, pc->lo, pc->hi, t->vals, t->lo, t->hi, pc->lo, pc->hi, a->ndim,
                    a->esize);
        if (s->ta != pc->ta || s->k != k) {
            if (s->ng == s->capg) {
                s->capg = s->capg ? 2 * s->capg : 16;
                s->g = orn_xrealloc(s->g, (size_t)s->capg * sizeof *s->g);
            }
            s->g[s->ng++] = (Group){s->n, 0, pc->run};
            s->k = k;
            s->ta = pc->ta;
        }
        s->g[s->ng - 1].n += n;
    }
    s->n += n;
}

/* Receiving side: a transfer per tile ta of array k and rank src, into ghost_recv: the
 * pieces of ta that src sends are consecutive in src's stream. */
static int post_receives(Exec *x, int k, RtHalo *h, const size_t *rpos, int64_t nruns)
{
    int P = x->P, status = ORN_OK;
    const OrnDsmArray *a = x->vi[k].store;
    int64_t nt = a->part.ntiles;
    size_t *first = orn_xmalloc((size_t)P * sizeof *first),
           *len = orn_xmalloc((size_t)P * sizeof *len);
    h->rbeg = orn_xcalloc((size_t)nt, sizeof *h->rbeg);
    h->rend = orn_xcalloc((size_t)nt, sizeof *h->rend);
    for (int64_t i = 0; i < h->npieces && !status;) {
        int64_t ta = h->pieces[i].ta, run = h->pieces[i].run, j = i;
        for (int q = 0; q < P; q++) len[q] = 0;
        for (; j < h->npieces && h->pieces[j].ta == ta; j++) {
            const Piece *pc = &h->pieces[j];
            if (pc->src == x->me) continue;
            if (!len[pc->src]) first[pc->src] = pc->off;
            len[pc->src] += piece_bytes(x, k, pc);
        }
        h->rbeg[ta] = h->nrx;
        for (int q = 0; q < P && !status; q++) {
            if (!len[q]) continue;
            if (h->nrx == h->caprx) {
                h->caprx = h->caprx ? 2 * h->caprx : 16;
                h->rx = orn_xrealloc(h->rx, (size_t)h->caprx * sizeof *h->rx);
            }
            h->rx[h->nrx] = NULL;
            status =
                orn_dsm_xrecv(x->dsm, x->ghost_recv + rpos[q] + first[q], len[q], q, ORN_TAG_HALO,
                              (double)run / (double)(nruns + 1), "ghost cells", &h->rx[h->nrx]);
            h->nrx++;
        }
        h->rend[ta] = h->nrx;
        i = j;
    }
    free(first);
    free(len);
    return status;
}

/* Widths of array k's ghost cells, or 0 when it gets none. Also says whether its reads may
 * leave its box otherwise (ORN_RT_HALO_ANY along a partitioned dimension, or a halo without
 * ghost cells). */
static int ghost_widths(const Exec *x, int k, int64_t *wlo, int64_t *whi, int *anywhere)
{
    const OrnRtPlanArray *pa = &x->plan->arrays[k];
    const ViewImpl *vi = &x->vi[k];
    const OrnDsmArray *a = vi->store;
    int any = 0, role = x->views[k].role;
    *anywhere = 0;
    if (!vi->read_only || (role != ORN_RT_PARTITIONED && role != ORN_RT_ROTATED)) return 0;
    /* Ordered schedules read other blocks of partitioned arrays through the cache, after
     * the steps that wrote them; their rotated blocks travel, so they take ghost cells. */
    if (x->plan->strategy == ORN_RT_2D_ORDERED && role != ORN_RT_ROTATED) return 0;
    for (int d = 0; d < ORN_DSM_MAXDIM; d++) wlo[d] = whi[d] = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (a->part.nb[d] <= 1) continue; /* the tile spans the dimension */
        if (pa->halo_lo[d] == ORN_RT_HALO_ANY || pa->halo_hi[d] == ORN_RT_HALO_ANY) {
            *anywhere = 1;
            continue;
        }
        wlo[d] = pa->halo_lo[d];
        whi[d] = pa->halo_hi[d];
        any |= wlo[d] > 0 || whi[d] > 0;
    }
    /* Sparse tiles are not boxes of values; an array that a buffer of this loop updates
     * changes at every flush, and copies made before the loop would go stale. Their reads
     * beyond the box take the slow path: as of the round's start, like prefetched arrays. */
    if (a->sparse || vi->buffered) {
        *anywhere |= any;
        return 0;
    }
    return any;
}

/* Whether tile ta's box + halo [lo, hi) can be the tile's own storage: it leaves the box
 * along dimension 0 only (rows before and after, which the tile's padding then holds), and
 * the tile stays where it is during the loop (partitioned, not rotated). The halo rows are
 * filled in once per tile and loop; the box itself is never copied. */
static int in_place_ok(const Exec *x, int k, int64_t ta, const int64_t *lo, const int64_t *hi)
{
    const OrnDsmArray *a = x->vi[k].store;
    const OrnDsmTile *t = &a->tiles[ta];
    if (x->plan->arrays[k].role != ORN_RT_PARTITIONED || !t->held || t->n == 0) return 0;
    for (int d = 1; d < a->ndim; d++)
        if (lo[d] != t->lo[d] || hi[d] != t->hi[d]) return 0;
    return 1;
}

/* Before any block is bound (a tile given room moves, and bodies hold pointers into the
 * tiles they run): room for the ghost rows of this rank's tiles that take them in place. */
static void pad_tiles(Exec *x)
{
    for (int k = 0; k < x->n; k++) {
        RtHalo *h = x->vi[k].halo;
        if (!h) continue;
        OrnDsmArray *a = x->vi[k].store;
        for (int64_t ta = 0; ta < a->part.ntiles; ta++) {
            if (h->beg[ta] == h->end[ta]) continue;
            int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM];
            ext_box(h, a, ta, lo, hi);
            if (in_place_ok(x, k, ta, lo, hi))
                orn_dsm_tile_pad(a, ta, a->tiles[ta].lo[0] - lo[0], hi[0] - a->tiles[ta].hi[0]);
        }
    }
}

static int pad_in_place(Exec *x, int k, RtHalo *h, int64_t ta, const int64_t *lo, const int64_t *hi)
{
    OrnDsmArray *a = x->vi[k].store;
    OrnDsmTile *t = &a->tiles[ta];
    if (!in_place_ok(x, k, ta, lo, hi) || t->pad_lo < t->lo[0] - lo[0] ||
        t->pad_hi < hi[0] - t->hi[0])
        return 0;
    if (h->filled[ta]) return 1;
    size_t row = (size_t)t->n / (size_t)(t->hi[0] - t->lo[0]) * a->esize;
    char *base = (char *)t->vals - (size_t)(t->lo[0] - lo[0]) * row;
    for (int64_t i = h->beg[ta]; i < h->end[ta]; i++) {
        const Piece *pc = &h->pieces[i];
        copy_region(base, lo, hi, pc->vals, pc->lo, pc->hi, pc->lo, pc->hi, a->ndim, a->esize);
    }
    h->filled[ta] = 1;
    return 1;
}

int rt_halo_setup(Exec *x)
{
    const OrnRtPlan *pl = x->plan;
    int P = x->P, status = ORN_OK, ghosted = 0;
    int64_t *runs = NULL, *cnt = NULL;
    Seen seen = {NULL, 0};
    size_t *sc = NULL, *rpos = NULL;
    Mine mine = {NULL, 0};
    if (pl->strategy != ORN_RT_1D && pl->strategy != ORN_RT_2D && pl->strategy != ORN_RT_2D_ORDERED)
        return ORN_OK;
    int64_t maxt = 1;
    for (int k = 0; k < x->n; k++) {
        int64_t wlo[ORN_DSM_MAXDIM], whi[ORN_DSM_MAXDIM];
        int anywhere;
        int on = ghost_widths(x, k, wlo, whi, &anywhere);
        /* Reads beyond the ghost cells are fetched from their owners, who must serve them
         * until every rank is done (barriers at the loop's start and end). */
        if (anywhere && pl->arrays[k].role == ORN_RT_PARTITIONED) x->remote_reads = 1;
        if (!on) continue;
        RtHalo *h = orn_xcalloc(1, sizeof *h);
        memcpy(h->wlo, wlo, sizeof wlo);
        memcpy(h->whi, whi, sizeof whi);
        int64_t nt = x->vi[k].store->part.ntiles;
        h->beg = orn_xcalloc((size_t)nt, sizeof *h->beg);
        h->end = orn_xcalloc((size_t)nt, sizeof *h->end);
        h->filled = orn_xcalloc((size_t)nt, 1);
        h->cur = -1;
        x->vi[k].halo = h;
        if (nt > maxt) maxt = nt;
        ghosted = 1;
    }
    if (!ghosted) return ORN_OK;

    /* Iteration tiles by the rank that runs them (1d and 2d run tile t on its owner),
     * empty tiles left out: they are never bound. */
    const OrnDsmArray *it = x->iter;
    int64_t nit = it->part.ntiles;
    cnt = orn_xcalloc((size_t)P + 1, sizeof *cnt);
    runs = orn_xmalloc((size_t)(nit ? nit : 1) * sizeof *runs);
    for (int64_t t = 0; t < nit; t++)
        if (it->tiles[t].n > 0) cnt[it->part.owner[t] + 1]++;
    for (int q = 0; q < P; q++) cnt[q + 1] += cnt[q];
    {
        int64_t *at = orn_xmalloc((size_t)P * sizeof *at);
        memcpy(at, cnt, (size_t)P * sizeof *at);
        for (int64_t t = 0; t < nit; t++)
            if (it->tiles[t].n > 0) runs[at[it->part.owner[t]]++] = t;
        free(at);
    }
    seen.stamp = orn_xcalloc((size_t)maxt, sizeof *seen.stamp);

    /* This rank's pieces, then what it sends to each peer (counted, then packed). */
    mine.from = orn_xcalloc((size_t)P, sizeof *mine.from);
    each_piece(x, runs + cnt[x->me], cnt[x->me + 1] - cnt[x->me], &seen, add_mine, &mine);
    /* Receives first, into one buffer: src's pieces at rpos[src], in src's order. */
    rpos = orn_xcalloc((size_t)P + 1, sizeof *rpos);
    for (int q = 0; q < P; q++) rpos[q + 1] = rpos[q] + (q == x->me ? 0 : mine.from[q]);
    x->ghost_recv = orn_xmalloc(rpos[P] ? rpos[P] : 1);
    for (int k = 0; k < x->n && !status; k++)
        if (x->vi[k].halo)
            status = post_receives(x, k, x->vi[k].halo, rpos, cnt[x->me + 1] - cnt[x->me]);
    if (status) goto fn_exit;
    /* What each peer needs from this rank: counted, packed, then sent a tile at a time. */
    sc = orn_xcalloc((size_t)P + 1, sizeof *sc);
    for (int q = 0; q < P; q++) {
        if (q == x->me) continue;
        Send sd = {0, NULL, -1, -1, NULL, 0, 0};
        each_piece(x, runs + cnt[q], cnt[q + 1] - cnt[q], &seen, send_piece, &sd);
        sc[q + 1] = sd.n;
    }
    for (int q = 0; q < P; q++) sc[q + 1] += sc[q];
    x->ghost_send = orn_xmalloc(sc[P] ? sc[P] : 1);
    for (int q = 0; q < P && !status; q++) {
        if (q == x->me) continue;
        Send sd = {0, x->ghost_send + sc[q], -1, -1, NULL, 0, 0};
        each_piece(x, runs + cnt[q], cnt[q + 1] - cnt[q], &seen, send_piece, &sd);
        int64_t nruns = cnt[q + 1] - cnt[q];
        for (int64_t i = 0; i < sd.ng && !status; i++) {
            if (x->nghost_sx == x->capghost_sx) {
                x->capghost_sx = x->capghost_sx ? 2 * x->capghost_sx : 16;
                x->ghost_sx =
                    orn_xrealloc(x->ghost_sx, (size_t)x->capghost_sx * sizeof *x->ghost_sx);
            }
            x->ghost_sx[x->nghost_sx] = NULL;
            status = orn_dsm_xsend(x->dsm, sd.buf + sd.g[i].off, sd.g[i].n, q, ORN_TAG_HALO,
                                   (double)sd.g[i].run / (double)(nruns + 1), "ghost cells",
                                   &x->ghost_sx[x->nghost_sx]);
            x->nghost_sx++;
        }
        free(sd.g);
    }
    if (status) goto fn_exit;
    /* ghost regions move between slices of the blocks before theirs */
    if (P > 1 && (rpos[P] || sc[P])) x->need_progress = 1;
    pad_tiles(x);
    x->ghost_local = orn_xmalloc(mine.local ? mine.local : 1);
    for (int k = 0; k < x->n; k++) {
        RtHalo *h = x->vi[k].halo;
        if (!h) continue;
        const OrnDsmArray *a = x->vi[k].store;
        for (int64_t i = 0; i < h->npieces; i++) {
            Piece *pc = &h->pieces[i];
            if (pc->src == x->me) {
                /* Copied now: a rotated tile held here leaves at the end of a step. */
                const OrnDsmTile *t = &a->tiles[pc->u];
                pc->vals = x->ghost_local + pc->off;
                copy_region(x->ghost_local + pc->off, pc->lo, pc->hi, t->vals, t->lo, t->hi, pc->lo,
                            pc->hi, a->ndim, a->esize);
            } else {
                pc->vals = x->ghost_recv + rpos[pc->src] + pc->off;
                x->rt->stats.ghosts += box_volume(pc->lo, pc->hi, a->ndim);
            }
        }
    }
fn_exit:
    free(rpos);
    free(runs);
    free(cnt);
    free(seen.stamp);
    free(sc);
    free(mine.from);
    return status;
}

int rt_halo_bind(Exec *x, int k, int64_t ta, OrnRtView *v, int *bound)
{
    RtHalo *h = x->vi[k].halo;
    *bound = 0;
    if (!h || h->beg[ta] == h->end[ta]) return ORN_OK;
    if (h->rbeg && h->rend[ta] > h->rbeg[ta]) {
        /* this tile's ghost regions from other ranks: in by now, or waited for */
        RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "wait for ghost cells");
        orn_tl_int(x->tl, sp.id, "tile", ta);
        int status = orn_dsm_xwait(x->dsm, h->rx + h->rbeg[ta], (int)(h->rend[ta] - h->rbeg[ta]),
                                   "halo: ghost cells from a neighbour");
        rt_span_end(x, sp, &x->rt->stats.wait);
        if (status) return status;
        h->rend[ta] = h->rbeg[ta];
    }
    *bound = 1;
    const OrnDsmArray *a = x->vi[k].store;
    int nd = a->ndim;
    int64_t elo[ORN_DSM_MAXDIM], ehi[ORN_DSM_MAXDIM];
    ext_box(h, a, ta, elo, ehi);
    if (pad_in_place(x, k, h, ta, elo, ehi)) {
        const OrnDsmTile *t = &a->tiles[ta];
        size_t row = (size_t)t->n / (size_t)(t->hi[0] - t->lo[0]);
        v->base = (char *)t->vals - (size_t)(t->lo[0] - elo[0]) * row * a->esize;
        int64_t s = 1;
        for (int d = ORN_RT_MAXDIM - 1; d >= 0; d--) {
            v->lo[d] = d < nd ? elo[d] : 0;
            v->hi[d] = d < nd ? ehi[d] : 0;
            v->stride[d] = d < nd ? s : 0;
            if (d < nd) s *= ehi[d] - elo[d];
        }
        return ORN_OK;
    }
    if (h->cur != ta) {
        int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM];
        ext_box(h, a, ta, lo, hi);
        size_t need = (size_t)box_volume(lo, hi, nd) * a->esize;
        if (need > h->boxcap) {
            free(h->box);
            h->box = orn_xmalloc(need);
            h->boxcap = need;
        }
        const OrnDsmTile *t = &a->tiles[ta];
        copy_region(h->box, lo, hi, t->vals, t->lo, t->hi, t->lo, t->hi, nd, a->esize);
        for (int64_t i = h->beg[ta]; i < h->end[ta]; i++) {
            const Piece *pc = &h->pieces[i];
            copy_region(h->box, lo, hi, pc->vals, pc->lo, pc->hi, pc->lo, pc->hi, nd, a->esize);
        }
        memcpy(h->lo, lo, sizeof lo);
        memcpy(h->hi, hi, sizeof hi);
        h->cur = ta;
    }
    v->base = h->box;
    int64_t s = 1;
    for (int d = ORN_RT_MAXDIM - 1; d >= 0; d--) {
        v->lo[d] = d < nd ? h->lo[d] : 0;
        v->hi[d] = d < nd ? h->hi[d] : 0;
        v->stride[d] = d < nd ? s : 0;
        if (d < nd) s *= h->hi[d] - h->lo[d];
    }
    return ORN_OK;
}

int rt_halo_drain(Exec *x)
{
    int status = orn_dsm_xwait(x->dsm, x->ghost_sx, (int)x->nghost_sx,
                               "halo: sending ghost cells to a neighbour");
    for (int k = 0; k < x->n && !status; k++) {
        RtHalo *h = x->vi[k].halo;
        if (h && h->nrx)
            status =
                orn_dsm_xwait(x->dsm, h->rx, (int)h->nrx, "halo: ghost cells from a neighbour");
    }
    return status;
}

void rt_halo_free(Exec *x)
{
    for (int k = 0; x->vi && k < x->n; k++) {
        RtHalo *h = x->vi[k].halo;
        if (!h) continue;
        for (int64_t i = 0; i < h->nrx; i++) orn_dsm_xdrop(x->dsm, &h->rx[i]);
        free(h->rx);
        free(h->rbeg);
        free(h->rend);
        free(h->pieces);
        free(h->filled);
        free(h->beg);
        free(h->end);
        free(h->box);
        free(h);
        x->vi[k].halo = NULL;
    }
    for (int64_t i = 0; i < x->nghost_sx; i++) orn_dsm_xdrop(x->dsm, &x->ghost_sx[i]);
    free(x->ghost_sx);
    x->ghost_sx = NULL;
    x->nghost_sx = x->capghost_sx = 0;
    free(x->ghost_recv);
    free(x->ghost_local);
    free(x->ghost_send);
    x->ghost_recv = x->ghost_local = x->ghost_send = NULL;
}
