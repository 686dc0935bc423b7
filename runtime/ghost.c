/* ghost.c: ghost rows that travel down a wavefront (2d_ordered at two or more ranks).
 *
 * An ordered stencil reads the rows next to its element: Gauss-Seidel's U[i - 1, j] and
 * U[i + 1, j], an edit distance's D[i - 1, j - 1]. In 2d_ordered the iteration space is cut
 * into bands of rows (key k0, dealt cyclically to the ranks) and column blocks (k1), and
 * block (s, t) runs at step s + t. Reads of a band's own rows are reads of tiles this rank
 * holds. The only rows a block reads from other ranks are the last rows of the band above
 * (written one step earlier, by the block above) and the first rows of the band below (not
 * yet rewritten in this run: the serial loop reads them before it rewrites them too). So
 * instead of a prefetch pass, an exchange and a collective per step, those rows travel:
 *
 *   - at the start of the run, every band's first hd rows go to the rank of the band above,
 *     into the bottom padding rows of its tiles (orn_dsm_tile_pad); for an array the loop
 *     only reads, its last hu rows also go to the rank of the band below, into the top
 *     padding;
 *   - after block (s, t), the last hu rows of its tile of every array the loop writes go to
 *     the rank of band s + 1, into the top padding of tile (s + 1, t), which block
 *     (s + 1, t) reads at the next step.
 * Rows are sent from and received into the tiles' storage in place: no packing, no copies.
 *
 * The view of such an array covers the block's tile and its padding rows, so the body reads
 * the rows above and below as loads. A read across a column edge (another tile of the band,
 * held here) or into another tile's padding (a diagonal neighbour) takes the view's slow
 * path, which rt_ghost_read serves without a cache; anything else there is a plan
 * violation, reported. The steps need no collective: a rank waits only for the rows it
 * reads next (and the rotated column blocks, sched_2d_wavefront.c).
 *
 * Which loops: 2d_ordered at two or more ranks, not @gpu, whose every view is rotated,
 * replicated, or partitioned; partitioned arrays read beyond their block are dense with
 * bounded halos, cut along k0 at their dimension 0 (and along k1 too when the loop writes
 * them), and the bands are at least hu + hd rows tall. The dependence vectors of a
 * 2d_ordered loop are non-negative, so a written array's rows above a block are read at the
 * block's columns and those left of it (sent earlier) and its rows below are read before
 * they are rewritten: the rows sent are exactly the values the serial loop reads. Writes
 * never land in the padding: the analyzer cuts an array along a key only when every write
 * there is at the key itself (k + 0, analyzer/analyze.c), so a written ghost array is
 * written within its block. Other loops keep the prefetch pass ($ORN_GHOST=off forces
 * that, for comparisons).
 *
 * Cost model (W the loop's work, B0 = m P bands, B1 = P column blocks, o a step's overhead:
 * a block's setup and a message of hu rows, latency a + bytes b):
 *     T = (m P + P - 1) (W / (m P^2) + o)
 * The pipeline fills and drains in P - 1 steps, so m is as large as keeps a block at
 * RT_GHOST_MIN elements or more (o small beside it), at most RT_GHOST_MAXM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

#define RT_GHOST_MIN  (1 << 15) /* elements per block, at least */
#define RT_GHOST_MAXM 8         /* bands per rank, at most */

typedef struct GArr {
    int k;                    /* plan array */
    int written;              /* the loop writes it: its rows travel after every block */
    int64_t hu, hd;           /* rows above / below its block that the body reads */
    unsigned char *top, *bot; /* per tile of the array: the padding holds this run's rows */
} GArr;

typedef struct GMsg {
    OrnDsmReq *req;
    int peer;
    int ga;       /* receive: the array (index in RtGhost.a), -1 for a send */
    int64_t tile; /* receive: the tile whose padding it fills */
    int top;      /* receive: top padding (else bottom) */
} GMsg;

struct RtGhost {
    GArr *a;
    int na;
    GMsg *m; /* in flight: the start's messages, then those of the last step */
    int nm, capm;
};

/* View k's rows above / below a block (*hu, *hd): 1 when it reads beyond its block, 0 when
 * it does not, -1 when it does in a way the travelling rows do not serve. */
static int ghost_rows(const Exec *x, int k, int64_t *hu, int64_t *hd)
{
    const OrnRtPlanArray *pa = &x->plan->arrays[k];
    int beyond = 0, col = 0;
    *hu = *hd = 0;
    for (int d = 0; d < pa->ndim; d++) {
        if (pa->halo_lo[d] == ORN_RT_HALO_ANY || pa->halo_hi[d] == ORN_RT_HALO_ANY) return -1;
        beyond |= pa->halo_lo[d] || pa->halo_hi[d];
        col |= d > 0 && pa->key_dim[d] == x->kd[1];
    }
    if (!beyond) return 0;
    if (pa->key_dim[0] != x->kd[0] || (!pa->read_only && !col)) return -1;
    *hu = pa->halo_lo[0];
    *hd = pa->halo_hi[0];
    return 1;
}

/* Whether some other view of array k's store is written in the loop. */
static int store_written(const Exec *x, int k)
{
    const OrnDsmArray *s = x->loop->args[k].array;
    for (int j = 0; j < x->n; j++)
        if (x->loop->args[j].array == s && !x->plan->arrays[j].read_only) return 1;
    return 0;
}

int rt_ghost_off(void)
{
    const char *e = getenv("ORN_GHOST");
    return e && !strcmp(e, "off");
}

/* The plan allows travelling rows: the rows a band must have (hu + hd, at least 1), or 0. */
static int64_t plan_rows(const Exec *x)
{
    const OrnRtPlan *p = x->plan;
    if ((p->strategy != ORN_RT_2D_ORDERED && !x->bands) || p->npart != 2 || x->P < 2 ||
        x->loop->whole || x->iter != x->loop->args[0].array)
        return 0;
    if (rt_ghost_off()) return 0;
    int64_t rows = 0;
    int any = 0;
    for (int k = 0; k < x->n; k++) {
        const OrnRtPlanArray *pa = &p->arrays[k];
        if (pa->role == ORN_RT_ROTATED || pa->role == ORN_RT_REPLICATED) continue;
        if (pa->role != ORN_RT_PARTITIONED) return 0;
        const OrnDsmArray *s = x->loop->args[k].array;
        int64_t hu, hd;
        int r = ghost_rows(x, k, &hu, &hd);
        if (r < 0 || (r && (!s || s->sparse))) return 0;
        if (!r) continue;
        /* every view of its store is partitioned (and gets the same rows) */
        for (int j = 0; j < x->n; j++)
            if (j != k && x->loop->args[j].array == s && p->arrays[j].role != ORN_RT_PARTITIONED)
                return 0;
        any = 1;
        if (hu + hd > rows) rows = hu + hd;
    }
    return any ? (rows > 1 ? rows : 1) : 0;
}

int rt_ghost_bands(const Exec *x)
{
    int64_t rows = plan_rows(x);
    if (!rows) return 0;
    const OrnDsmArray *it = x->iter;
    int64_t n0 = it->dims[x->kd[0]], vol = 1, P = x->P;
    for (int d = 0; d < it->ndim; d++) vol *= it->dims[d];
    int64_t m = vol / (P * P * RT_GHOST_MIN);
    if (m > RT_GHOST_MAXM) m = RT_GHOST_MAXM;
    if (m < 1) m = 1;
    while (m > 1 && n0 / (m * P) < rows) m--;
    return n0 / P >= rows && it->dims[x->kd[1]] >= P ? (int)(m * P) : 0;
}

static size_t row_bytes(const OrnDsmArray *a, const OrnDsmTile *t)
{
    int64_t h = t->hi[0] - t->lo[0];
    return h > 0 ? (size_t)(t->n / h) * a->esize : 0;
}

/* The tile of array a one band above (dg = -1) or below (+1) tile t, or -1. */
static int64_t next_band(const OrnDsmArray *a, int64_t t, int dg)
{
    int g[ORN_DSM_MAXDIM];
    orn_dsm_part_unravel(&a->part, t, g);
    g[0] += dg;
    return g[0] >= 0 && g[0] < a->part.nb[0] ? orn_dsm_part_ravel(&a->part, g) : -1;
}

static GMsg *msg_add(RtGhost *G)
{
    if (G->nm == G->capm) {
        G->capm = G->capm ? 2 * G->capm : 32;
        G->m = orn_xrealloc(G->m, (size_t)G->capm * sizeof *G->m);
    }
    GMsg *m = &G->m[G->nm++];
    memset(m, 0, sizeof *m);
    m->ga = -1;
    return m;
}

/* Rows [r0, r0 + nr) of tile t (held here) to `to`. */
static int send_rows(Exec *x, RtGhost *G, const OrnDsmArray *a, int64_t t, int64_t r0, int64_t nr,
                     int to)
{
    const OrnDsmTile *tl = &a->tiles[t];
    size_t rb = row_bytes(a, tl);
    if (!rb || nr <= 0) return ORN_OK;
    GMsg *m = msg_add(G);
    m->peer = to;
    return orn_dsm_isend(x->dsm, (const char *)tl->vals + (size_t)r0 * rb, (size_t)nr * rb, to,
                         ORN_TAG_GHOST, &m->req);
}

/* The top (nr rows before the box) or bottom padding of tile t (held here) from `from`. */
static int recv_rows(Exec *x, RtGhost *G, int ga, int64_t t, int top, int64_t nr, int from)
{
    const OrnDsmArray *a = x->vi[G->a[ga].k].store;
    const OrnDsmTile *tl = &a->tiles[t];
    size_t rb = row_bytes(a, tl);
    if (!rb || nr <= 0) return ORN_OK;
    GMsg *m = msg_add(G);
    m->peer = from;
    m->ga = ga;
    m->tile = t;
    m->top = top;
    char *at = top ? (char *)tl->vals - (size_t)nr * rb
                   : (char *)tl->vals + (size_t)(tl->hi[0] - tl->lo[0]) * rb;
    x->rt->stats.ghost_rows += (int64_t)((size_t)nr * rb / a->esize);
    return orn_dsm_irecv(x->dsm, at, (size_t)nr * rb, from, ORN_TAG_GHOST, &m->req);
}

/* Messages of the start, in one order on every rank (arrays, then tiles of the sender):
 * pairs of ranks match them in order. */
static int start_messages(Exec *x, RtGhost *G)
{
    int status = ORN_OK;
    for (int ga = 0; ga < G->na && !status; ga++) {
        const GArr *g = &G->a[ga];
        const OrnDsmArray *a = x->vi[g->k].store;
        for (int up = 1; up >= 0 && !status; up--) {
            int64_t nr = up ? g->hd : g->hu; /* up: first rows to the band above */
            if (!nr || (!up && g->written)) continue;
            for (int64_t t = 0; t < a->part.ntiles && !status; t++) {
                int64_t u = next_band(a, t, up ? -1 : 1);
                if (u < 0) continue;
                int from = a->part.owner[t], to = a->part.owner[u];
                const OrnDsmTile *tl = &a->tiles[t];
                if (from == x->me && to == x->me) {
                    size_t rb = row_bytes(a, tl);
                    const OrnDsmTile *ul = &a->tiles[u];
                    char *dst = up ? (char *)ul->vals + (size_t)(ul->hi[0] - ul->lo[0]) * rb
                                   : (char *)ul->vals - (size_t)nr * rb;
                    const char *src =
                        up ? (const char *)tl->vals
                           : (const char *)tl->vals + (size_t)(tl->hi[0] - tl->lo[0] - nr) * rb;
                    if (rb) memcpy(dst, src, (size_t)nr * rb);
                    (up ? G->a[ga].bot : G->a[ga].top)[u] = 1;
                } else if (from == x->me) {
                    int64_t r0 = up ? 0 : tl->hi[0] - tl->lo[0] - nr;
                    status = send_rows(x, G, a, t, r0, nr, to);
                } else if (to == x->me) {
                    status = recv_rows(x, G, ga, u, !up, nr, from);
                }
            }
        }
    }
    return status;
}

int rt_ghost_setup(Exec *x)
{
    int64_t rows = plan_rows(x);
    if (!rows) return ORN_OK;
    /* The bands as cut: tall enough for the rows read above and below. */
    for (int k = 0; k < x->n; k++) {
        int64_t hu, hd;
        if (ghost_rows(x, k, &hu, &hd) != 1) continue;
        const OrnDsmArray *a = x->vi[k].store;
        for (int i = 0; i < a->part.nb[0]; i++)
            if (a->part.bounds[0][i + 1] - a->part.bounds[0][i] < hu + hd) return ORN_OK;
    }
    RtGhost *G = orn_xcalloc(1, sizeof *G);
    G->a = orn_xcalloc((size_t)x->n, sizeof *G->a);
    for (int k = 0; k < x->n; k++) {
        int64_t hu, hd;
        if (ghost_rows(x, k, &hu, &hd) != 1) continue;
        OrnDsmArray *a = x->vi[k].store;
        GArr *g = &G->a[G->na++];
        g->k = k;
        g->written = store_written(x, k);
        g->hu = hu;
        g->hd = hd;
        g->top = orn_xcalloc((size_t)a->part.ntiles, 1);
        g->bot = orn_xcalloc((size_t)a->part.ntiles, 1);
        x->vi[k].ghost = 1;
        /* room for the rows (before any block is bound: a padded tile may move) */
        for (int64_t t = 0; t < a->part.ntiles; t++)
            if (a->tiles[t].held)
                orn_dsm_tile_pad(a, t, next_band(a, t, -1) >= 0 ? hu : 0,
                                 next_band(a, t, 1) >= 0 ? hd : 0);
    }
    x->ghost = G;
    RtSpan sp = rt_span_begin(x, ORN_TL_TRANSFER, "ghost rows: start");
    int status = start_messages(x, G);
    rt_span_end(x, sp, &x->rt->stats.transfer);
    return status;
}

int rt_ghost_bind(Exec *x, int k, int64_t ta, OrnRtView *v)
{
    if (!x->ghost || !x->vi[k].ghost) return 0;
    const RtGhost *G = x->ghost;
    const GArr *g = G->a;
    while (g->k != k) g++;
    const OrnDsmArray *a = x->vi[k].store;
    const OrnDsmTile *t = &a->tiles[ta];
    int64_t up = next_band(a, ta, -1) >= 0 ? g->hu : 0, down = next_band(a, ta, 1) >= 0 ? g->hd : 0;
    rt_box_view(v, a, ta);
    if (!v->base || t->hi[0] <= t->lo[0]) return 1;
    v->base = (char *)v->base - (size_t)up * row_bytes(a, t);
    v->lo[0] -= up;
    v->hi[0] += down;
    return 1;
}

int rt_ghost_read(ViewImpl *vi, const int64_t *key, void *out)
{
    Exec *x = vi->x;
    const RtGhost *G = x->ghost;
    const OrnDsmArray *a = vi->store;
    if (!G || vi->tile < 0) return 0;
    const GArr *g = G->a;
    while (g->k != vi->k) g++;
    /* the band of the bound block: its tiles, held here, and their padding rows */
    const OrnDsmTile *b = &a->tiles[vi->tile];
    int64_t r = key[0], row[ORN_DSM_MAXDIM] = {0};
    memcpy(row, key, (size_t)a->ndim * sizeof *row);
    int top = r < b->lo[0], bottom = r >= b->hi[0];
    if ((top && r < b->lo[0] - g->hu) || (bottom && r >= b->hi[0] + g->hd)) return 0;
    row[0] = top ? b->lo[0] : bottom ? b->hi[0] - 1 : r;
    int64_t t = orn_dsm_part_tile_of(&a->part, row);
    const OrnDsmTile *tl = &a->tiles[t];
    if (!tl->held || (top && !g->top[t]) || (bottom && !g->bot[t])) return 0;
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++) off = off * (tl->hi[d] - tl->lo[d]) + (key[d] - tl->lo[d]);
    memcpy(out, (const char *)tl->vals + off * (int64_t)a->esize, a->esize);
    return 1;
}

/* After step `step`: the last rows of this rank's blocks of the step go to the band below,
 * and the receives of those the peers send here are posted (in the senders' order). */
int rt_ghost_step_end(Exec *x, int64_t step)
{
    RtGhost *G = x->ghost;
    int status = ORN_OK;
    if (!G) return ORN_OK;
    const OrnDsmArray *it = x->iter;
    for (int64_t s = 0; s + 1 < x->nb[0] && !status; s++) {
        int64_t tb = step - s;
        if (tb < 0 || tb >= x->nb[1]) continue;
        int grid[ORN_DSM_MAXDIM] = {0, 0, 0, 0};
        grid[x->kd[0]] = (int)s;
        grid[x->kd[1]] = (int)tb;
        int64_t ti = orn_dsm_part_ravel(&it->part, grid);
        for (int ga = 0; ga < G->na && !status; ga++) {
            const GArr *g = &G->a[ga];
            if (!g->written || !g->hu) continue;
            OrnDsmArray *a = x->vi[g->k].store;
            int64_t t = rt_aligned_tile(x, g->k, ti), u = next_band(a, t, 1);
            if (u < 0) continue;
            int from = a->part.owner[t], to = a->part.owner[u];
            if (from != x->me && to != x->me) continue;
            const OrnDsmTile *tl = &a->tiles[t];
            if (from == x->me && to == x->me) {
                size_t rb = row_bytes(a, tl);
                if (rb)
                    memcpy((char *)a->tiles[u].vals - (size_t)g->hu * rb,
                           (const char *)tl->vals + (size_t)(tl->hi[0] - tl->lo[0] - g->hu) * rb,
                           (size_t)g->hu * rb);
                G->a[ga].top[u] = 1;
            } else if (from == x->me) {
                status = send_rows(x, G, a, t, tl->hi[0] - tl->lo[0] - g->hu, g->hu, to);
            } else {
                status = recv_rows(x, G, ga, u, 1, g->hu, from);
            }
        }
    }
    if (G->nm) x->need_progress = 1;
    return status;
}

/* sched_skew.c: the part of row r of band s (its tile s) in block (s, t): j in
 * [Y_t - c r, Y_t+1 - c r), clipped to the row; 0 when empty. */
static int64_t skew_part(const OrnDsmArray *a, const int64_t *Y, int64_t c, int64_t t, int64_t r,
                         int64_t *lo)
{
    int64_t n1 = a->dims[1], b = Y[t] - c * r, e = Y[t + 1] - c * r;
    if (b < 0) b = 0;
    if (e > n1) e = n1;
    *lo = b;
    return e > b ? e - b : 0;
}

/* Where row r of the band above goes in tile ul's top padding, at column lo (a row of n1
 * elements of es bytes). */
static char *top_pad_at(const OrnDsmTile *ul, int64_t r, int64_t lo, int64_t n1, size_t es)
{
    return (char *)ul->vals - (size_t)((ul->lo[0] - r) * n1 - lo) * es;
}

/* sched_skew.c, after this rank's block (s, t): the part of each of band s's last hu rows in
 * the block goes into the top padding of band s + 1, sent at once (the rank of band s + 1
 * may be waiting for it while this rank runs its other blocks of the step). */
int rt_ghost_skew_block_end(Exec *x, int64_t s, int64_t t, const int64_t *Y, int64_t c)
{
    RtGhost *G = x->ghost;
    if (!G || !G->a[0].hu || s + 1 >= x->nb[0]) return ORN_OK;
    const GArr *g = &G->a[0];
    OrnDsmArray *a = x->vi[g->k].store;
    int from = a->part.owner[s], to = a->part.owner[s + 1], status = ORN_OK;
    if (from != x->me) return ORN_OK;
    const OrnDsmTile *tl = &a->tiles[s], *ul = &a->tiles[s + 1];
    size_t es = a->esize;
    int64_t n1 = a->dims[1];
    for (int64_t r = tl->hi[0] - g->hu; r < tl->hi[0] && !status; r++) {
        int64_t lo, n = skew_part(a, Y, c, t, r, &lo);
        if (!n) continue;
        const char *src = (const char *)tl->vals + (size_t)((r - tl->lo[0]) * n1 + lo) * es;
        if (to == x->me) { /* row r of band s in band s + 1's top padding */
            memcpy(top_pad_at(ul, r, lo, n1, es), src, (size_t)n * es);
            G->a[0].top[s + 1] = 1;
        } else {
            GMsg *m = msg_add(G);
            m->peer = to;
            status = orn_dsm_isend(x->dsm, src, (size_t)n * es, to, ORN_TAG_GHOST, &m->req);
        }
    }
    if (G->nm) x->need_progress = 1;
    return status;
}

/* sched_skew.c, after step `step`: the receives of the parts the peers' blocks of the step
 * send here (rt_ghost_skew_block_end), posted in the senders' order (bands ascending, then
 * rows), which is the order each sender sends them in. */
int rt_ghost_skew_step_end(Exec *x, int64_t step, const int64_t *Y, int64_t c)
{
    RtGhost *G = x->ghost;
    int status = ORN_OK;
    if (!G || !G->a[0].hu) return ORN_OK;
    const GArr *g = &G->a[0];
    OrnDsmArray *a = x->vi[g->k].store;
    int64_t n1 = a->dims[1];
    size_t es = a->esize;
    for (int64_t s = 0; s + 1 < x->nb[0] && !status; s++) {
        int64_t t = step - s;
        if (t < 0 || t >= x->nb[1]) continue;
        int from = a->part.owner[s], to = a->part.owner[s + 1];
        if (from == x->me || to != x->me) continue;
        const OrnDsmTile *tl = &a->tiles[s], *ul = &a->tiles[s + 1];
        for (int64_t r = tl->hi[0] - g->hu; r < tl->hi[0] && !status; r++) {
            int64_t lo, n = skew_part(a, Y, c, t, r, &lo);
            if (!n) continue;
            GMsg *m = msg_add(G);
            m->peer = from;
            m->ga = 0;
            m->tile = s + 1;
            m->top = 1;
            x->rt->stats.ghost_rows += n;
            status = orn_dsm_irecv(x->dsm, top_pad_at(ul, r, lo, n1, es), (size_t)n * es, from,
                                   ORN_TAG_GHOST, &m->req);
        }
    }
    if (G->nm) x->need_progress = 1;
    return status;
}

/* Whether wait_msgs(.., tile) waits for message m. */
static int msg_wanted(const GMsg *m, int64_t tile)
{
    return tile < 0 || (m->ga >= 0 && m->tile == tile);
}

/* Wait for the messages in flight -- all of them (tile < 0), or the receives into tile
 * `tile`'s padding -- mark the rows received and drop those messages from the list, keeping
 * its order. */
static int wait_msgs(Exec *x, int64_t step, int64_t tile)
{
    RtGhost *G = x->ghost;
    if (!G || !G->nm) return ORN_OK;
    int want = 0;
    for (int i = 0; i < G->nm; i++) want += msg_wanted(&G->m[i], tile);
    if (!want) return ORN_OK;
    OrnDsmReq **reqs = orn_xmalloc((size_t)want * sizeof *reqs);
    int *peers = orn_xmalloc((size_t)want * sizeof *peers);
    int *at = orn_xmalloc((size_t)want * sizeof *at), n = 0;
    for (int i = 0; i < G->nm; i++)
        if (msg_wanted(&G->m[i], tile)) {
            reqs[n] = G->m[i].req;
            peers[n] = G->m[i].peer;
            at[n++] = i;
        }
    char what[96];
    snprintf(what, sizeof what, "wavefront, step %lld: ghost rows", (long long)step);
    RtSpan sp = rt_span_begin(x, ORN_TL_WAIT, "wait for ghost rows");
    orn_tl_int(x->tl, sp.id, "step", step);
    int status = orn_dsm_waitall(x->dsm, reqs, peers, n, what);
    rt_span_end(x, sp, &x->rt->stats.wait);
    for (int j = 0; j < n; j++) {
        GMsg *m = &G->m[at[j]];
        m->req = reqs[j];
        if (!status && m->ga >= 0) (m->top ? G->a[m->ga].top : G->a[m->ga].bot)[m->tile] = 1;
    }
    if (!status) {
        int k = 0;
        for (int i = 0, j = 0; i < G->nm; i++) {
            if (j < n && at[j] == i) {
                j++;
                continue;
            }
            G->m[k++] = G->m[i];
        }
        G->nm = k;
    }
    free(reqs);
    free(peers);
    free(at);
    return status;
}

/* Before step `step` (and at the end): the rows in flight are in, and marked. */
int rt_ghost_arrive(Exec *x, int64_t step)
{
    return wait_msgs(x, step, -1);
}

/* Before a block of tile `tile` (sched_skew.c): the rows in flight into its padding are in,
 * and marked; the other messages stay in flight. */
int rt_ghost_arrive_tile(Exec *x, int64_t tile)
{
    return wait_msgs(x, x->step, tile);
}

void rt_ghost_free(Exec *x)
{
    RtGhost *G = x->ghost;
    if (!G) return;
    for (int i = 0; i < G->nm; i++) orn_dsm_drop(x->dsm, &G->m[i].req);
    for (int i = 0; i < G->na; i++) {
        free(G->a[i].top);
        free(G->a[i].bot);
    }
    free(G->a);
    free(G->m);
    free(G);
    x->ghost = NULL;
}
