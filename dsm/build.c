/* build.c: sparse arrays built straight from parsed records (the loaders' path).
 *
 * The general path (orn_dsm_from_elements) takes int64 keys and a source line per element,
 * packs them into records, exchanges them, sorts every tile by key with its tags and only
 * then compacts 2-D tiles to CSR: at its peak a rank holds the elements two or three times
 * over at 20-40 bytes each. Loaders know more: keys are non-negative and usually fit 32
 * bits, the partition is one band of dimension-0 rows per rank, and the final storage is
 * CSR. So here:
 *   - records hold 32-bit coordinates while they fit (a triplet is 12 bytes: row, column,
 *     value) and no line numbers: a duplicate key is found after the build, and the
 *     loader then parses the file again the slow way to name both lines (errors only);
 *   - records are put in destination order in place (a cycle-leader permutation) and that
 *     buffer is what is sent, in rounds whose pages are given back as they leave
 *     (exchange_rounds); this rank's own records never travel;
 *   - a tile is built by a counting pass (row lengths) and a fill pass that walks the
 *     records from the end and gives the consumed tail of their buffer back every few MB,
 *     so the records and the CSR storage do not coexist whole; rows are then sorted one
 *     by one (usually already sorted: a check), with no tile-wide sort and no tags;
 *   - docword's "count" lines stay one record (doc, word, count) until the tile is built.
 * Peak per rank: about the records (12 bytes per triplet) plus the part of the tile filled
 * so far, against about 3 x 28 bytes per element before. Sparse repartitions go the same
 * way (orn_dsm_scatter_tiles): records packed straight from the old tiles. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"
#include "dsm_int.h"

/* ---------------------------------------------------------------- records */

static size_t rec_size(const OrnDsmRecs *r, size_t cw)
{
    return (size_t)r->nk * cw + r->vsize;
}

void orn_dsm_recs_init(OrnDsmRecs *r, int nk, size_t vsize, int expand)
{
    memset(r, 0, sizeof *r);
    r->nk = nk;
    r->vsize = vsize;
    r->expand = expand;
    r->cw = 4;
    r->rec = rec_size(r, 4);
}

void orn_dsm_recs_free(OrnDsmRecs *r)
{
    free(r->buf);
    r->buf = NULL;
    r->n = r->cap = 0;
}

static inline int64_t rec_key(const char *p, size_t cw, int d)
{
    if (cw == 4) {
        uint32_t v;
        memcpy(&v, p + 4 * d, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p + 8 * d, 8);
    return v;
}

static inline void rec_set_key(char *p, size_t cw, int d, int64_t k)
{
    if (cw == 4) {
        uint32_t v = (uint32_t)k;
        memcpy(p + 4 * d, &v, 4);
    } else {
        memcpy(p + 8 * d, &k, 8);
    }
}

/* 64-bit coordinates from now on (a coordinate above UINT32_MAX turned up). */
static void widen(OrnDsmRecs *r)
{
    size_t orec = r->rec, nrec = rec_size(r, 8);
    r->buf = orn_xrealloc(r->buf, (size_t)(r->cap ? r->cap : 1) * nrec);
    for (int64_t i = r->n - 1; i >= 0; i--) { /* backwards: records only grow */
        char tmp[ORN_DSM_MAXDIM * 8 + 16];
        memcpy(tmp, r->buf + (size_t)i * orec, orec);
        char *dst = r->buf + (size_t)i * nrec;
        for (int d = 0; d < r->nk; d++) rec_set_key(dst, 8, d, rec_key(tmp, 4, d));
        memcpy(dst + (size_t)r->nk * 8, tmp + (size_t)r->nk * 4, r->vsize);
    }
    r->cw = 8;
    r->rec = nrec;
}

void orn_dsm_recs_push(OrnDsmRecs *r, const int64_t *key, const void *val)
{
    if (r->cw == 4)
        for (int d = 0; d < r->nk; d++)
            if ((uint64_t)key[d] > UINT32_MAX) {
                widen(r);
                break;
            }
    if (r->n == r->cap) {
        /* Doubling: large buffers are mmapped, so realloc moves pages (mremap), not bytes,
         * and only the pages written count towards the peak. */
        r->cap = r->cap ? 2 * r->cap : 4096;
        r->buf = orn_xrealloc(r->buf, (size_t)r->cap * r->rec);
    }
    char *p = r->buf + (size_t)r->n * r->rec;
    for (int d = 0; d < r->nk; d++) {
        rec_set_key(p, r->cw, d, key[d]);
        if (key[d] + 1 > r->ext[d]) r->ext[d] = key[d] + 1;
    }
    memcpy(p + (size_t)r->nk * r->cw, val, r->vsize);
    r->n++;
    if (r->expand) {
        uint32_t c;
        memcpy(&c, val, 4);
        r->elems += c;
        if ((int64_t)c > r->ext[r->nk]) r->ext[r->nk] = c;
    } else {
        r->elems++;
    }
}

void orn_dsm_recs_shift(OrnDsmRecs *r, int d, int64_t by)
{
    if (!r->n || !by) return;
    if (r->cw == 4 && (uint64_t)(r->ext[d] - 1 + by) > UINT32_MAX) widen(r);
    for (int64_t i = 0; i < r->n; i++) {
        char *p = r->buf + (size_t)i * r->rec;
        rec_set_key(p, r->cw, d, rec_key(p, r->cw, d) + by);
    }
    r->ext[d] += by;
}

/* Elements a record stands for. */
static inline int64_t rec_weight(const OrnDsmRecs *r, const char *p)
{
    if (!r->expand) return 1;
    uint32_t c;
    memcpy(&c, p + (size_t)r->nk * r->cw, 4);
    return c;
}

/* Whole pages of [base + page, base + upto) back to the system: storage nobody reads any
 * more inside an allocation that is freed later (free() unmaps or reuses it whole; the
 * first page, which holds malloc's header, is never touched, and what is given back reads
 * as zeros). madvise(MADV_DONTNEED), since posix_madvise's is a no-op on Linux. */
void orn_dsm_give_back_range(const void *base, size_t from, size_t upto)
{
    static uintptr_t page;
    if (!base) return;
    if (!page) page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t b = (uintptr_t)base, first = (b + page) & ~(page - 1);
    uintptr_t lo = (b + from + page - 1) & ~(page - 1);
    uintptr_t hi = (b + upto) & ~(page - 1);
    if (lo < first) lo = first;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void orn_dsm_give_back(const void *base, size_t upto)
{
    orn_dsm_give_back_range(base, 0, upto);
}

void orn_dsm_huge(const void *base, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (!base || n < ORN_DSM_HUGE_MIN) return;
    uintptr_t lo = ((uintptr_t)base + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)base + n) & ~(huge - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)base;
    (void)n;
#endif
}

void *orn_dsm_xmalloc_huge(size_t n)
{
    void *p = orn_xmalloc(n ? n : 1);
    orn_dsm_huge(p, n);
    return p;
}

/* ---------------------------------------------------------------- placement */

typedef struct Src {
    char *buf;
    int64_t n;
} Src;

static void hist_recs(int64_t *h, int64_t w, void *ud)
{
    const OrnDsmRecs *r = ud;
    for (int64_t i = 0; i < r->n; i++) {
        const char *p = r->buf + (size_t)i * r->rec;
        h[rec_key(p, r->cw, 0) / w] += rec_weight(r, p);
    }
}

/* Owner of the band holding row k (the partition cuts dimension 0 only). */
static int dest_of(const OrnDsmPart *p, int64_t k)
{
    const int64_t *b = p->bounds[0];
    int lo = 0, hi = p->nb[0];
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (b[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return p->owner[lo];
}

/* Bytes staged per round of an exchange, over all peers ($ORN_ROUND_BYTES overrides, for
 * tests) ... */
#define ROUND_BYTES ((size_t)8 << 20)
/* ... but at least this much per peer, so that many ranks do not mean many rounds. */
#define ROUND_MIN_PEER ((size_t)256 << 10)

/* Collective. Send bytes [off[q], off[q] + len[q]) of buf to rank q (q != me) and return
 * what the others send in *recv (*nrecv bytes, whole records of `rec` bytes). One
 * alltoallv of everything would hold, at its peak, the rank's records and all it receives
 * (1.5 times the records at -n 2); instead the segments go in rounds of ROUND_BYTES in all,
 * each segment from its end backwards, and pages sent are given back at once, so what
 * arrives takes the room of what left. */
static int exchange_rounds(OrnDsmCtx *ctx, const char *what, char *buf, const size_t *off,
                           const size_t *len, size_t rec, char **recv, size_t *nrecv)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    const char *env = getenv("ORN_ROUND_BYTES"); /* tests: many rounds on small data */
    size_t per_round = env && atol(env) > 0 ? (size_t)atol(env) : ROUND_BYTES;
    size_t chunk = per_round / (size_t)P;
    if (!env && chunk < ROUND_MIN_PEER) chunk = ROUND_MIN_PEER;
    chunk = chunk / rec * rec;
    if (chunk < rec) chunk = rec;
    int64_t rounds = 0;
    for (int q = 0; q < P; q++) {
        int64_t r = (int64_t)((len[q] + chunk - 1) / chunk);
        if (q != me && r > rounds) rounds = r;
    }
    status = orn_dsm_allreduce_i64(ctx, &rounds, 1, ORN_DSM_MAX);
    size_t *left = orn_xmalloc((size_t)P * sizeof *left);
    size_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    char *stage = orn_xmalloc(chunk * (size_t)P);
    char *acc = NULL;
    size_t nacc = 0, capacc = 0;
    memcpy(left, len, (size_t)P * sizeof *left);
    for (int64_t round = 0; !status && round < rounds; round++) {
        size_t at = 0;
        for (int q = 0; q < P; q++) {
            size_t c = q == me ? 0 : left[q] < chunk ? left[q] : chunk;
            left[q] -= c;
            if (c) { /* buf may be NULL when this rank sends nothing */
                memcpy(stage + at, buf + off[q] + left[q], c);
                orn_dsm_give_back_range(buf, off[q] + left[q], off[q] + len[q]);
            }
            sc[q] = c;
            at += c;
        }
        char *rb = NULL;
        status = orn_dsm_alltoallv(ctx, stage, sc, (void **)&rb, rc, what);
        if (status) break;
        size_t got = 0;
        for (int q = 0; q < P; q++) got += rc[q];
        if (nacc + got > capacc) {
            capacc = nacc + got > 2 * capacc ? nacc + got : 2 * capacc;
            acc = orn_xrealloc(acc, capacc);
        }
        if (got) memcpy(acc + nacc, rb, got);
        nacc += got;
        free(rb);
    }
    free(stage);
    free(left);
    free(sc);
    free(rc);
    if (status) {
        free(acc);
        return status;
    }
    *recv = acc;
    *nrecv = nacc;
    return ORN_OK;
}

/* Slot of destination d in a send buffer: this rank's own records first (they stay, and
 * the buffer shrinks to them), then the others' in rank order. */
static int slot_of(int d, int me)
{
    return d == me ? 0 : d < me ? d + 1 : d;
}

static int64_t dest_bucket(const char *rec, const void *ud)
{
    const void *const *x = ud;
    const OrnDsmPart *p = x[0];
    const OrnDsmRecs *r = x[1];
    const int *me = x[2];
    return slot_of(dest_of(p, rec_key(rec, r->cw, 0)), *me);
}

static void permute(char *buf, int64_t n, size_t rec, int64_t nb,
                    int64_t (*fn)(const char *, const void *), const void *ud, int64_t *start);

/* Send every record to the owner of its row: the records are put in slot order in place
 * (no second buffer), sent in rounds (exchange_rounds), and the buffer shrinks to this
 * rank's own share, which never travels; what the others send arrives in *recv. */
static int exchange(OrnDsmCtx *ctx, const OrnDsmPart *p, const OrnDsmRecs *r, Src *own, Src *recv)
{
    int P = ctx->size, me = ctx->rank;
    size_t rec = r->rec;
    int64_t *start = orn_xcalloc((size_t)P + 1, sizeof *start);
    size_t *off = orn_xcalloc((size_t)P, sizeof *off), *len = orn_xcalloc((size_t)P, sizeof *len);
    const void *ud[3] = {p, r, &me};
    permute(own->buf, own->n, rec, P, dest_bucket, ud, start);
    for (int q = 0; q < P; q++) {
        int sl = slot_of(q, me);
        off[q] = (size_t)start[sl] * rec;
        len[q] = (size_t)(start[sl + 1] - start[sl]) * rec;
    }
    char *rbuf = NULL;
    size_t nr = 0;
    int status = exchange_rounds(ctx, "load: move elements", own->buf, off, len, rec, &rbuf, &nr);
    if (!status) {
        recv->buf = rbuf;
        recv->n = (int64_t)(nr / rec);
        own->n = start[1];
        own->buf = orn_xrealloc(own->buf, (size_t)(own->n ? own->n : 1) * rec);
    }
    free(start);
    free(off);
    free(len);
    return status;
}

/* ---------------------------------------------------------------- sorting rows */

/* Sorts n records of w 64-bit words (w = 1 or 2) by their first word, stably: insertion sort
 * of runs of 16, then bottom-up merges through tmp (n w words). Not qsort: its comparator
 * call per comparison made the rows' sorts 0.4 s of loading 9M ratings in users' rows of ~90
 * items in file order (bench/forms, SGD MF). */
static void sort_words(uint64_t *a, uint64_t *tmp, int64_t n, int w)
{
    enum { RUN = 16 };
    for (int64_t lo = 0; lo < n; lo += RUN) {
        int64_t hi = lo + RUN < n ? lo + RUN : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            uint64_t k = a[i * w], v = w > 1 ? a[i * w + 1] : 0;
            int64_t j = i;
            for (; j > lo && a[(j - 1) * w] > k; j--) {
                a[j * w] = a[(j - 1) * w];
                if (w > 1) a[j * w + 1] = a[(j - 1) * w + 1];
            }
            a[j * w] = k;
            if (w > 1) a[j * w + 1] = v;
        }
    }
    uint64_t *src = a, *dst = tmp;
    for (int64_t width = RUN; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n, i = lo, j = mid, k = lo;
            while (i < mid || j < hi) {
                int64_t f = j < hi && (i >= mid || src[j * w] < src[i * w]) ? j++ : i++;
                dst[k * w] = src[f * w];
                if (w > 1) dst[k * w + 1] = src[f * w + 1];
                k++;
            }
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)n * (size_t)w * 8);
}

typedef struct Scratch {
    void *a, *b;
    size_t capa, capb;
} Scratch;

static void *scratch(void **p, size_t *cap, size_t n)
{
    if (*cap < n) {
        *cap = n > 2 * *cap ? n : 2 * *cap;
        *p = orn_xrealloc(*p, *cap);
    }
    return *p;
}

/* Sort one CSR row (columns and their values) by column; 1 if two columns are equal. */
static int sort_csr_row(int32_t *cols, char *vals, int64_t n, size_t es, Scratch *sc)
{
    int64_t i = 1;
    while (i < n && cols[i - 1] < cols[i]) i++;
    if (i >= n) return 0; /* strictly increasing: the usual case */
    if (n <= 16) {
        char v[16];
        for (i = 1; i < n; i++) {
            int32_t c = cols[i];
            memcpy(v, vals + (size_t)i * es, es);
            int64_t j = i;
            for (; j > 0 && cols[j - 1] > c; j--) {
                cols[j] = cols[j - 1];
                memcpy(vals + (size_t)j * es, vals + (size_t)(j - 1) * es, es);
            }
            cols[j] = c;
            memcpy(vals + (size_t)j * es, v, es);
        }
    } else {
        /* column and position in one word: a plain integer sort keeps it stable */
        uint64_t *idx = scratch(&sc->a, &sc->capa, (size_t)n * 16);
        char *tv = scratch(&sc->b, &sc->capb, (size_t)n * es);
        for (i = 0; i < n; i++) idx[i] = (uint64_t)(uint32_t)cols[i] << 32 | (uint64_t)i;
        sort_words(idx, idx + n, n, 1);
        for (i = 0; i < n; i++) memcpy(tv + (size_t)i * es, vals + (idx[i] & 0xffffffffu) * es, es);
        memcpy(vals, tv, (size_t)n * es);
        for (i = 0; i < n; i++) cols[i] = (int32_t)(idx[i] >> 32);
    }
    for (i = 1; i < n; i++)
        if (cols[i - 1] == cols[i]) return 1;
    return 0;
}

/* A run array's row: by (column, key 2); 1 if a pair occurs twice. */
static int sort_runs_row(int32_t *cols, int32_t *jj, char *vals, int64_t n, size_t es, Scratch *sc)
{
#define RK(i) ((uint64_t)(uint32_t)cols[i] << 32 | (uint32_t)jj[i])
    int64_t i = 1;
    while (i < n && RK(i - 1) < RK(i)) i++;
    if (i >= n) return 0;
    /* (column, key 2) and position: two words per element, sorted as 128-bit integers */
    uint64_t *idx = scratch(&sc->a, &sc->capa, (size_t)n * 32);
    char *tv = scratch(&sc->b, &sc->capb, (size_t)n * es);
    for (i = 0; i < n; i++) {
        idx[2 * i] = RK(i);
        idx[2 * i + 1] = (uint64_t)i;
    }
    sort_words(idx, idx + 2 * n, n, 2); /* stable by the first word */
    for (i = 0; i < n; i++) memcpy(tv + (size_t)i * es, vals + idx[2 * i + 1] * es, es);
    memcpy(vals, tv, (size_t)n * es);
    for (i = 0; i < n; i++) {
        cols[i] = (int32_t)(idx[2 * i] >> 32);
        jj[i] = (int32_t)(idx[2 * i] & 0xffffffffu);
    }
    for (i = 1; i < n; i++)
        if (RK(i - 1) == RK(i)) return 1;
    return 0;
#undef RK
}

/* Listed keys: rows sorted by the whole key. */
static const int64_t *g_keys;
static int g_nk;

static int cmp_key_idx(const void *a, const void *b)
{
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    int c = orn_dsm_key_cmp(g_keys + i * g_nk, g_keys + j * g_nk, g_nk);
    return c ? c : (i > j) - (i < j);
}

static int sort_key_row(int64_t *keys, char *vals, int64_t n, int nk, size_t vs, Scratch *sc)
{
    int64_t i = 1;
    while (i < n && orn_dsm_key_cmp(keys + (i - 1) * nk, keys + i * nk, nk) < 0) i++;
    if (i >= n) return 0;
    if (n > 4096) {
        orn_dsm_sort_elements(nk, vs, n, keys, vals, NULL);
    } else {
        size_t kb = (size_t)nk * 8;
        int64_t *idx = scratch(&sc->a, &sc->capa, (size_t)n * (8 + kb + vs));
        int64_t *tk = idx + n;
        char *tv = (char *)(tk + (size_t)n * (size_t)nk);
        for (i = 0; i < n; i++) idx[i] = i;
        g_keys = keys;
        g_nk = nk;
        qsort(idx, (size_t)n, sizeof *idx, cmp_key_idx);
        for (i = 0; i < n; i++) {
            memcpy(tk + i * nk, keys + idx[i] * nk, kb);
            memcpy(tv + (size_t)i * vs, vals + (size_t)idx[i] * vs, vs);
        }
        memcpy(keys, tk, (size_t)n * kb);
        memcpy(vals, tv, (size_t)n * vs);
    }
    for (i = 1; i < n; i++)
        if (!orn_dsm_key_cmp(keys + (i - 1) * nk, keys + i * nk, nk)) return 1;
    return 0;
}

/* ---------------------------------------------------------------- building a tile */

/* Records consumed between two give-backs of their buffer's tail. */
#define GIVE_BACK_BYTES ((size_t)8 << 20)

/* Tile t (a band of rows) from the records in src[0..nsrc), which are freed on the way.
 * Returns 1 if a key occurs twice. */
static int build_tile(const OrnDsmArray *a, OrnDsmTile *t, Src *src, int nsrc, const OrnDsmRecs *r,
                      int own)
{
    int64_t rows = t->hi[0] - t->lo[0], lo0 = t->lo[0];
    int nk = r->nk, nd = a->ndim, dup = 0;
    size_t es = a->esize, vs = r->vsize, rec = r->rec, cw = r->cw;
    /* CSR (2-D) or runs (docword, 3-D with key 2 implied) where the columns fit int32;
     * docword's records are (doc, word) with the count as value until expanded below,
     * a repartitioned run array's are whole keys (key 2 kept in jj until rows are sorted). */
    int fits = t->hi[1] - t->lo[1] <= INT32_MAX;
    int csr = nk == 2 && fits, runs = nk == 3 && a->runs && !r->expand && fits;
    int32_t *jj = NULL;
    int64_t *rp = orn_xcalloc((size_t)rows + 1, sizeof *rp);
    for (int s = 0; s < nsrc; s++)
        for (int64_t i = 0; i < src[s].n; i++)
            rp[rec_key(src[s].buf + (size_t)i * rec, cw, 0) - lo0 + 1]++;
    for (int64_t i = 0; i < rows; i++) rp[i + 1] += rp[i];
    int64_t m = rp[rows]; /* records */
    int32_t *cols = NULL;
    int64_t *keys = NULL;
    /* the tile's storage, streamed by every loop over it: in huge pages */
    char *vals = orn_dsm_xmalloc_huge((size_t)m * vs);
    if (csr || runs)
        cols = orn_dsm_xmalloc_huge((size_t)m * sizeof *cols);
    else
        keys = orn_dsm_xmalloc_huge((size_t)m * (size_t)nk * sizeof *keys);
    if (runs) jj = orn_xmalloc((size_t)(m ? m : 1) * sizeof *jj);
    /* Fill from the end of each source (rp[row + 1] counts down to the row's start), giving
     * back the consumed tail as it goes. */
    size_t step = GIVE_BACK_BYTES / rec + 1;
    for (int s = 0; s < nsrc; s++) {
        int64_t i = src[s].n;
        while (i > 0) {
            int64_t stop = i > (int64_t)step ? i - (int64_t)step : 0;
            for (int64_t k = i - 1; k >= stop; k--) {
                const char *p = src[s].buf + (size_t)k * rec;
                int64_t pos = --rp[rec_key(p, cw, 0) - lo0 + 1];
                if (csr || runs) {
                    cols[pos] = (int32_t)(rec_key(p, cw, 1) - t->lo[1]);
                    if (runs) jj[pos] = (int32_t)rec_key(p, cw, 2);
                } else {
                    for (int d = 0; d < nk; d++) keys[pos * nk + d] = rec_key(p, cw, d);
                }
                memcpy(vals + (size_t)pos * vs, p + (size_t)nk * cw, vs);
            }
            i = stop;
            if (i > 0 && own) src[s].buf = orn_xrealloc(src[s].buf, (size_t)i * rec);
        }
        if (own) {
            free(src[s].buf);
            src[s].buf = NULL;
        } else {
            orn_dsm_give_back(src[s].buf, (size_t)src[s].n * rec);
        }
        src[s].n = 0;
    }
    /* rp[r + 1] now holds row r's start: shift back. */
    memmove(rp, rp + 1, (size_t)rows * sizeof *rp);
    rp[rows] = m;
    Scratch sc = {0};
    for (int64_t row = 0; row < rows && !dup; row++) {
        int64_t b = rp[row], n = rp[row + 1] - b;
        if (n < 2) continue;
        dup = runs  ? sort_runs_row(cols + b, jj + b, vals + (size_t)b * vs, n, vs, &sc)
              : csr ? sort_csr_row(cols + b, vals + (size_t)b * vs, n, vs, &sc)
                    : sort_key_row(keys + b * nk, vals + (size_t)b * vs, n, nk, vs, &sc);
    }
    free(jj);
    free(sc.a);
    free(sc.b);
    if (!dup && r->expand) {
        /* (key, count) -> count elements (key, j), j = 0..count-1, value 0: as runs (one
         * column per element) or with listed keys. */
        int64_t n = 0;
        for (int64_t i = 0; i < m; i++) {
            uint32_t c;
            memcpy(&c, vals + (size_t)i * vs, 4);
            n += c;
        }
        int32_t *ec = csr ? orn_xmalloc((size_t)(n ? n : 1) * sizeof *ec) : NULL;
        int64_t *ek = csr ? NULL : orn_xmalloc((size_t)(n ? n : 1) * (size_t)nd * sizeof *ek);
        char *ev = orn_xcalloc((size_t)(n ? n : 1), es);
        int64_t at = 0, i = 0;
        for (int64_t row = 0; row < rows; row++) {
            int64_t end = rp[row + 1];
            rp[row] = at;
            for (; i < end; i++) {
                uint32_t c;
                memcpy(&c, vals + (size_t)i * vs, 4);
                for (uint32_t j = 0; j < c; j++, at++) {
                    if (csr) {
                        ec[at] = cols[i];
                    } else {
                        memcpy(ek + at * nd, keys + i * nk, (size_t)nk * sizeof *ek);
                        ek[at * nd + nk] = j;
                    }
                }
            }
        }
        rp[rows] = at;
        free(cols);
        free(keys);
        free(vals);
        cols = ec;
        keys = ek;
        vals = ev;
        m = n;
    }
    if (dup || m == 0) {
        free(rp);
        free(cols);
        free(keys);
        free(vals);
        t->n = 0;
        return dup;
    }
    t->n = m;
    t->rowptr = rp;
    t->cols = cols;
    t->keys = keys;
    t->vals = vals;
    return 0;
}

/* ---------------------------------------------------------------- the array */

int64_t orn_dsm_mem_bytes(void)
{
    int64_t mem = (int64_t)sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return mem > 0 && page > 0 && mem <= INT64_MAX / page ? mem * page : INT64_MAX;
}

int orn_dsm_rows_fit(OrnDsmCtx *ctx, const OrnDsmArray *a, const OrnDsmPart *p, const char *path)
{
    int status = ORN_OK;
    if (a->sparse && a->ndim >= 2) {
        int64_t rows = 0, mem = orn_dsm_mem_bytes();
        for (int64_t t = 0; t < p->ntiles; t++) {
            int o = p->owner[t];
            if (o != ctx->rank && o != ORN_DSM_ALL) continue;
            int g[ORN_DSM_MAXDIM];
            orn_dsm_part_unravel(p, t, g);
            int64_t n = p->bounds[0][g[0] + 1] - p->bounds[0][g[0]];
            rows = n > INT64_MAX - rows ? INT64_MAX : rows + n;
        }
        if (rows > mem / 16)
            status =
                orn_dsm_fail(ctx, ORN_E_ARG,
                             "%s%srow index %lld is too large: a sparse array of %lld rows "
                             "keeps 8 bytes a row, %lld MB here, more than half this "
                             "machine's memory (%lld MB); number the rows densely from 0",
                             path ? path : "", path ? ": " : "", (long long)(a->dims[0] - 1),
                             (long long)a->dims[0],
                             (long long)(rows > INT64_MAX / 8 ? INT64_MAX >> 20 : rows * 8 >> 20),
                             (long long)(mem >> 20));
    }
    return orn_dsm_agree(ctx, status);
}

int orn_dsm_build_sparse(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                         OrnDsmRecs *r, const char *path, OrnDsmArray **out, int *dup)
{
    OrnDsmArray *a = NULL;
    int nsrc = 1;
    *out = NULL;
    *dup = 0;
    /* One record format on every rank before records travel. */
    int64_t cw = (int64_t)r->cw;
    int status = orn_dsm_allreduce_i64(ctx, &cw, 1, ORN_DSM_MAX);
    if (status) return status;
    if ((size_t)cw != r->cw) widen(r);
    Src src[2] = {{r->buf, r->n}, {NULL, 0}};
    r->buf = NULL; /* the records are ours now: freed as the tile fills */
    r->n = r->cap = 0;
    status = orn_dsm_array_new(ctx, type, ndim, dims, 1, &a);
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_fail;
    status = orn_dsm_part_default(ctx, ndim, a->dims, &a->part);
    if (status) {
        status = orn_dsm_fail(ctx, status, "array: bad partition");
        goto fn_fail;
    }
    {
        /* balanced along dimension 0, from the records (weighted by the elements they
         * stand for) */
        OrnDsmRecs view = *r;
        view.buf = src[0].buf;
        view.n = src[0].n;
        status = orn_dsm_balance_with(ctx, a->dims[0], a->part.nb[0], a->part.bounds[0], hist_recs,
                                      &view);
        if (!status) status = orn_dsm_rows_fit(ctx, a, &a->part, path);
        if (status) goto fn_fail;
    }
    if (ctx->size > 1) {
        status = exchange(ctx, &a->part, r, &src[0], &src[1]);
        if (status) goto fn_fail;
        nsrc = 2;
    }
    orn_dsm_tiles_reset(a);
    int64_t nt = a->part.ntiles, local = 0;
    for (int64_t t = 0; t < nt; t++) {
        if (!a->tiles[t].held) continue;
        local |= build_tile(a, &a->tiles[t], src, nsrc, r, 1);
    }
    status = orn_dsm_allreduce_i64(ctx, &local, 1, ORN_DSM_MAX);
    if (status) goto fn_fail;
    a->runs = r->expand;
    if (local) {
        *dup = 1;
        orn_dsm_free(a);
        return ORN_OK;
    }
    {
        int64_t *cnt = orn_xcalloc((size_t)nt, sizeof *cnt);
        for (int64_t t = 0; t < nt; t++)
            if (a->part.owner[t] == ctx->rank) cnt[t] = a->tiles[t].n;
        status = orn_dsm_allreduce_i64(ctx, cnt, (size_t)nt, ORN_DSM_SUM);
        a->nnz = 0;
        for (int64_t t = 0; !status && t < nt; t++) {
            a->tiles[t].n = cnt[t];
            a->nnz += cnt[t];
        }
        free(cnt);
        if (status) goto fn_fail;
    }
    *out = a;
    return ORN_OK;
fn_fail:
    for (int s = 0; s < 2; s++) free(src[s].buf);
    orn_dsm_free(a);
    return status;
}

/* ---------------------------------------------------------------- repartition */

/* Put the n records of buf in bucket order in place (cycle leader: O(n), one record of
 * scratch); start[0..nb] gets the buckets' bounds. */
static void permute(char *buf, int64_t n, size_t rec, int64_t nb,
                    int64_t (*fn)(const char *, const void *), const void *ud, int64_t *start)
{
    int64_t *next = orn_xmalloc((size_t)(nb ? nb : 1) * sizeof *next);
    char tmp[ORN_DSM_MAXDIM * 8 + 16];
    memset(start, 0, ((size_t)nb + 1) * sizeof *start);
    for (int64_t i = 0; i < n; i++) start[fn(buf + (size_t)i * rec, ud) + 1]++;
    for (int64_t q = 0; q < nb; q++) start[q + 1] += start[q];
    memcpy(next, start, (size_t)nb * sizeof *next);
    for (int64_t q = 0; q < nb; q++) {
        while (next[q] < start[q + 1]) {
            char *at = buf + (size_t)next[q] * rec;
            int64_t d = fn(at, ud);
            if (d == q) {
                next[q]++;
                continue;
            }
            char *to = buf + (size_t)next[d]++ * rec;
            memcpy(tmp, to, rec);
            memcpy(to, at, rec);
            memcpy(at, tmp, rec);
        }
    }
    free(next);
}

typedef struct TileOf {
    const OrnDsmPart *p;
    const OrnDsmRecs *r;
} TileOf;

static int64_t tile_bucket(const char *rec, const void *ud)
{
    const TileOf *t = ud;
    int64_t key[ORN_DSM_MAXDIM];
    for (int d = 0; d < t->r->nk; d++) key[d] = rec_key(rec, t->r->cw, d);
    return orn_dsm_part_tile_of(t->p, key);
}

int orn_dsm_scatter_tiles(OrnDsmArray *a, const OrnDsmPart *np, OrnDsmTile *nt)
{
    OrnDsmCtx *ctx = a->ctx;
    const OrnDsmPart *op = &a->part;
    int P = ctx->size, me = ctx->rank, nd = a->ndim;
    size_t es = a->esize;
    OrnDsmRecs fmt;
    orn_dsm_recs_init(&fmt, nd, es, 0);
    for (int d = 0; d < nd; d++)
        if ((uint64_t)a->dims[d] > UINT32_MAX) {
            fmt.cw = 8;
            fmt.rec = rec_size(&fmt, 8);
        }
    size_t rec = fmt.rec;
    int64_t *start = orn_xcalloc((size_t)P + 1, sizeof *start);
    int64_t *pos = orn_xcalloc((size_t)P, sizeof *pos);
    size_t *off = orn_xcalloc((size_t)P, sizeof *off), *len = orn_xcalloc((size_t)P, sizeof *len);
    int64_t *kb = orn_xmalloc(1024 * (size_t)nd * sizeof *kb);
    char *b = NULL, *rbuf = NULL;
#define SLOT(d) slot_of(d, me)
    /* Records straight from the tiles (no int64 key list), counted then packed in slot
     * order (own first). While packing, the rows packed already go back to the system:
     * the old tiles are only freed by the caller, and nothing reads them any more. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int q = 0; q < P; q++) start[q + 1] += start[q];
            memcpy(pos, start, (size_t)P * sizeof *pos);
            b = orn_xmalloc((size_t)(start[P] ? start[P] : 1) * rec);
        }
        for (int64_t to = 0; to < op->ntiles; to++) {
            const OrnDsmTile *o = &a->tiles[to];
            if (!o->held || !o->n) continue;
            int repl = op->owner[to] == ORN_DSM_ALL;
            for (int64_t e0 = 0; e0 < o->n; e0 += 1024) {
                int64_t m = o->n - e0 < 1024 ? o->n - e0 : 1024;
                if (pass == 1 && e0 % (1 << 20) == 0) {
                    /* up to the start of e0's row: decoding runs looks back along it */
                    int64_t g = o->cols ? o->rowptr[orn_dsm_tile_row_of(o, e0)] : e0;
                    orn_dsm_give_back(o->vals, (size_t)g * es);
                    orn_dsm_give_back(o->cols, (size_t)g * sizeof *o->cols);
                    orn_dsm_give_back(o->keys, (size_t)g * (size_t)nd * sizeof *o->keys);
                }
                orn_dsm_tile_keys(a, o, e0, m, kb);
                for (int64_t i = 0; i < m; i++) {
                    const int64_t *key = kb + i * nd;
                    int d = np->owner[orn_dsm_part_tile_of(np, key)];
                    /* a replicated old tile: each rank keeps its own share only */
                    if (repl) d = d == ORN_DSM_ALL || d == me ? me : -2;
                    for (int q = 0; q < P; q++) {
                        if (d != ORN_DSM_ALL && d != q) continue;
                        if (pass == 0) {
                            start[SLOT(q) + 1]++;
                            continue;
                        }
                        char *p = b + (size_t)pos[SLOT(q)]++ * rec;
                        for (int k = 0; k < nd; k++) rec_set_key(p, fmt.cw, k, key[k]);
                        memcpy(p + (size_t)nd * fmt.cw,
                               (const char *)o->vals + (size_t)(e0 + i) * es, es);
                    }
                }
            }
        }
    }
    free(kb);
    for (int64_t to = 0; to < op->ntiles; to++) {
        const OrnDsmTile *o = &a->tiles[to];
        if (!o->held || !o->n) continue;
        orn_dsm_give_back(o->vals, (size_t)o->n * es);
        orn_dsm_give_back(o->cols, (size_t)o->n * sizeof *o->cols);
        orn_dsm_give_back(o->keys, (size_t)o->n * (size_t)nd * sizeof *o->keys);
    }
    for (int d = 0; d < P; d++) {
        off[d] = (size_t)start[SLOT(d)] * rec;
        len[d] = (size_t)(start[SLOT(d) + 1] - start[SLOT(d)]) * rec;
    }
#undef SLOT
    size_t total = 0;
    int status = exchange_rounds(ctx, "repartition", b, off, len, rec, &rbuf, &total);
    if (!status) {
        int64_t mine = start[1];
        b = orn_xrealloc(b, (size_t)(mine ? mine : 1) * rec);
        Src src[2] = {{b, mine}, {rbuf, (int64_t)(total / rec)}};
        /* Each source in new-tile order, then each held tile from its two segments. */
        int64_t nb = np->ntiles;
        int64_t *tstart[2];
        TileOf to = {np, &fmt};
        for (int s = 0; s < 2; s++) {
            tstart[s] = orn_xmalloc(((size_t)nb + 1) * sizeof *tstart[s]);
            permute(src[s].buf, src[s].n, rec, nb, tile_bucket, &to, tstart[s]);
        }
        for (int64_t t = 0; t < nb; t++) {
            if (!nt[t].held) continue;
            Src seg[2];
            for (int s = 0; s < 2; s++)
                seg[s] = (Src){src[s].buf ? src[s].buf + (size_t)tstart[s][t] * rec : NULL,
                               tstart[s][t + 1] - tstart[s][t]};
            build_tile(a, &nt[t], seg, 2, &fmt, 0);
        }
        for (int s = 0; s < 2; s++) free(tstart[s]);
        b = NULL;
        free(src[0].buf);
        free(src[1].buf);
        rbuf = NULL;
    }
    free(b);
    free(rbuf);
    free(start);
    free(pos);
    free(off);
    free(len);
    return status;
}
