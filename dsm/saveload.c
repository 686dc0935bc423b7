/* saveload.c: save and load of distributed arrays (text and binary).
 *
 * save: the array is copied into row bands (tile r on rank r along dimension 0), so key
 * order is rank order; each rank formats its band and streams it to rank 0, which writes
 * the file in rank order, holding one band at a time. Cost: one repartition, then
 * (P-1) (a + b bytes/P) into rank 0, sequentially.
 *
 * Binary format (native byte order, which a byte-order mark checks), little overhead:
 *   offset 0   char[8]  magic "ORNARR\r\n" (a text-mode transfer breaks it visibly)
 *          8   u32      version (1)
 *         12   u32      byte-order mark 0x01020304
 *         16   u32      element type (0 i32, 1 i64, 2 f32, 3 f64)
 *         20   u32      ndim (1..4)
 *         24   u32      sparse (0/1)
 *         28   u32      0
 *         32   i64[4]   extents (unused dimensions 1)
 *         64   i64      count of stored elements (dense: the volume)
 *         72   u64      checksum: sum over records i of FNV-1a-64(i as u64 || record)
 *         80   records: dense: the values row-major; sparse: ndim i64 key coordinates then
 *                       the value, strictly increasing keys
 * The checksum is a sum so that ranks compute it over their records independently; the
 * record index inside makes it depend on order. load() reads records in parallel (a dense
 * array: each rank its tile's rows of the default partition, straight into the tile;
 * sparse: rank r the r-th share of records) and checks magic, version, header fields, file size,
 * key bounds and order, and the checksum.
 */
#include "dsm_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"
#include "strbuf.h"

#define HEADER 80
static const char MAGIC[8] = {'O', 'R', 'N', 'A', 'R', 'R', '\r', '\n'};

typedef struct Header {
    char magic[8];
    uint32_t version, bom, type, ndim, sparse, zero;
    int64_t dims[4];
    int64_t count;
    uint64_t checksum;
} Header;
_Static_assert(sizeof(Header) == HEADER, "binary header layout");

static int is_text(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && (!strcmp(path + n - 4, ".txt") || !strcmp(path + n - 4, ".tsv"));
}

static uint64_t fnv(uint64_t index, const void *rec, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *p = (const unsigned char *)&index;
    for (size_t i = 0; i < 8; i++) h = (h ^ p[i]) * 1099511628211ULL;
    p = rec;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static int sum_u64(OrnDsmCtx *ctx, uint64_t *v)
{
    void *all = NULL;
    size_t *counts = orn_xcalloc((size_t)ctx->size, sizeof *counts);
    int status = orn_dsm_allgatherv(ctx, v, sizeof *v, &all, counts, "checksum");
    if (!status) {
        uint64_t s = 0;
        for (int p = 0; p < ctx->size; p++) s += ((uint64_t *)all)[p];
        *v = s;
    }
    free(all);
    free(counts);
    return status;
}

/* Index of the first of vals[0..n) (type t) that is not finite, or -1 (integers: -1). */
static int64_t first_nonfinite(OrnDsmType t, const void *vals, int64_t n)
{
    for (int64_t i = 0; i < n && (t == ORN_DSM_F32 || t == ORN_DSM_F64); i++) {
        double v;
        if (t == ORN_DSM_F32) {
            float x;
            memcpy(&x, (const char *)vals + (size_t)i * 4, 4);
            v = x;
        } else {
            memcpy(&v, (const char *)vals + (size_t)i * 8, 8);
        }
        if (!isfinite(v)) return i;
    }
    return -1;
}

/* The error for element `index` of the file, key `key`, value at `val` (not finite). */
static int nonfinite_error(OrnDsmCtx *ctx, const char *path, OrnDsmType t, int64_t index,
                           const int64_t *key, int nd, const void *val)
{
    double v;
    if (t == ORN_DSM_F32) {
        float x;
        memcpy(&x, val, 4);
        v = x;
    } else {
        memcpy(&v, val, 8);
    }
    char k[ORN_DSM_MAXDIM * 24 + 4];
    size_t at = 0;
    for (int d = 0; d < nd; d++)
        at += (size_t)snprintf(k + at, sizeof k - at, "%s%lld", d ? ", " : "", (long long)key[d]);
    return orn_dsm_fail(ctx, ORN_E_FORMAT,
                        "load: %s: element %lld (key (%s)) is %s, not a finite number "
                        "(allow_nonfinite = true accepts nan and inf)",
                        path, (long long)index, k,
                        isnan(v) ? "nan"
                        : v > 0  ? "inf"
                                 : "-inf");
}

static void put_value(OrnBuf *b, OrnDsmType t, const void *p)
{
    switch (t) {
    case ORN_DSM_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        orn_buf_printf(b, "%" PRId32, v);
        break;
    }
    case ORN_DSM_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        orn_buf_printf(b, "%" PRId64, v);
        break;
    }
    case ORN_DSM_F32: {
        float v;
        memcpy(&v, p, 4);
        if (v != v) /* a NaN's sign is not specified (docs/language.md): written without */
            orn_buf_printf(b, "nan");
        else
            orn_buf_printf(b, "%.9g", (double)v);
        break;
    }
    case ORN_DSM_F64: {
        double v;
        memcpy(&v, p, 8);
        if (v != v)
            orn_buf_printf(b, "nan");
        else
            orn_buf_printf(b, "%.17g", v);
        break;
    }
    }
}

/* Format this rank's band: text lines or binary records; *sum gets its checksum part. */
static void format_band(const OrnDsmArray *a, const OrnDsmTile *t, int64_t index0, int text,
                        OrnBuf *out, uint64_t *sum)
{
    int nd = a->ndim;
    size_t es = a->esize, rec = a->sparse ? (size_t)nd * 8 + es : es;
    unsigned char r[48];
    int64_t key[ORN_DSM_MAXDIM];
    memcpy(key, t->lo, sizeof key);
    *sum = 0;
    for (int64_t i = 0; i < t->n; i++) {
        int64_t kk[ORN_DSM_MAXDIM];
        if (a->sparse && t->cols) orn_dsm_tile_key(a, t, i, kk);
        const int64_t *k = a->sparse ? (t->cols ? kk : t->keys + i * nd) : key;
        const char *v = (const char *)t->vals + (size_t)i * es;
        if (text) {
            for (int d = 0; d < nd; d++) orn_buf_printf(out, "%" PRId64 " ", k[d]);
            put_value(out, a->type, v);
            orn_buf_putc(out, '\n');
        } else {
            size_t off = 0;
            if (a->sparse) {
                memcpy(r, k, (size_t)nd * 8);
                off = (size_t)nd * 8;
            }
            memcpy(r + off, v, es);
            orn_buf_put(out, (const char *)r, rec);
            *sum += fnv((uint64_t)(index0 + i), r, rec);
        }
        if (!a->sparse)
            for (int d = nd - 1; d >= 0; d--) {
                if (++key[d] < t->hi[d]) break;
                key[d] = t->lo[d];
            }
    }
}

int orn_dsm_save(OrnDsmArray *a, const char *path)
{
    OrnDsmCtx *ctx = a->ctx;
    int P = ctx->size, me = ctx->rank, text = is_text(path), status = ORN_OK;
    FILE *f = NULL;
    OrnDsmArray *c = NULL;
    OrnDsmPart p;
    OrnBuf band;
    memset(&p, 0, sizeof p);
    orn_buf_init(&band);

    if (me == 0 && !(f = fopen(path, "wb")))
        status = orn_dsm_fail_file(ctx, ORN_E_IO, "save: ", path, "cannot open for writing", errno);
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_exit;

    /* Row bands, tile r on rank r. */
    int nb[ORN_DSM_MAXDIM] = {P, 1, 1, 1};
    status = orn_dsm_copy(a, &c);
    if (!status) status = orn_dsm_part_init(&p, a->ndim, nb);
    if (status) goto fn_fail;
    for (int d = 1; d < a->ndim; d++) orn_dsm_bounds_uniform(p.bounds[d], a->dims[d], 1);
    status = orn_dsm_balance(c, 0, P, p.bounds[0]);
    if (status) goto fn_fail;
    for (int t = 0; t < P; t++) p.owner[t] = t;
    status = orn_dsm_repartition(c, &p);
    if (status) goto fn_fail;

    int64_t index0 = 0;
    for (int t = 0; t < me; t++) index0 += c->tiles[t].n;
    uint64_t sum = 0;
    format_band(c, &c->tiles[me], index0, text, &band, &sum);
    if (!text) {
        status = sum_u64(ctx, &sum);
        if (status) goto fn_fail;
    }

    if (me == 0) {
        int werr = 0;
        if (!text) {
            Header h;
            memset(&h, 0, sizeof h);
            memcpy(h.magic, MAGIC, 8);
            h.version = 1;
            h.bom = 0x01020304u;
            h.type = (uint32_t)a->type;
            h.ndim = (uint32_t)a->ndim;
            h.sparse = (uint32_t)a->sparse;
            for (int d = 0; d < 4; d++) h.dims[d] = a->dims[d];
            h.count = a->nnz;
            h.checksum = sum;
            werr |= fwrite(&h, 1, HEADER, f) != HEADER;
        }
        werr |= band.len && fwrite(band.data, 1, band.len, f) != band.len;
        for (int q = 1; q < P; q++) {
            uint64_t n = 0;
            OrnDsmReq *rq = NULL;
            status = orn_dsm_irecv(ctx, &n, sizeof n, q, ORN_TAG_STREAM, &rq);
            if (!status) status = orn_dsm_waitall(ctx, &rq, &q, 1, "save: receiving a band");
            if (status) goto fn_fail;
            char *buf = orn_xmalloc(n ? (size_t)n : 1);
            status = orn_dsm_irecv(ctx, buf, (size_t)n, q, ORN_TAG_STREAM, &rq);
            if (!status) status = orn_dsm_waitall(ctx, &rq, &q, 1, "save: receiving a band");
            if (!status && n) werr |= fwrite(buf, 1, (size_t)n, f) != n;
            free(buf);
            if (status) goto fn_fail;
        }
        werr |= fclose(f) != 0;
        f = NULL;
        if (werr)
            status =
                orn_dsm_fail(ctx, ORN_E_IO, "save: %s: write error: %s", path, strerror(errno));
    } else {
        uint64_t n = band.len;
        OrnDsmReq *rq[2] = {NULL, NULL};
        int peers[2] = {0, 0};
        status = orn_dsm_isend(ctx, &n, sizeof n, 0, ORN_TAG_STREAM, &rq[0]);
        if (!status)
            status =
                orn_dsm_isend(ctx, band.data ? band.data : "", band.len, 0, ORN_TAG_STREAM, &rq[1]);
        if (!status) status = orn_dsm_waitall(ctx, rq, peers, 2, "save: sending a band to rank 0");
        if (status) goto fn_fail;
    }
    status = orn_dsm_agree(ctx, status);
fn_exit:
    if (f) fclose(f);
    orn_buf_free(&band);
    orn_dsm_part_free(&p);
    orn_dsm_free(c);
    return status;
fn_fail:
    goto fn_exit;
}

/* A dense file straight into the default partition (one tile of dimension-0 rows per rank,
 * the partition orn_dsm_from_elements would give): each rank reads its tile's rows, which
 * are contiguous in the file, into the tile's storage. No keys, no element exchange: the
 * peak is the array itself, not several times it. Collective, agreed. */
static int load_dense(OrnDsmCtx *ctx, FILE *f, const struct stat *st, const char *path,
                      const Header *h, unsigned flags, OrnDsmArray **out)
{
    OrnDsmArray *a = NULL;
    int nd = (int)h->ndim;
    int64_t dims[ORN_DSM_MAXDIM];
    for (int d = 0; d < nd; d++) dims[d] = h->dims[d];
    int status = orn_dsm_agree(ctx, orn_dsm_dense(ctx, (OrnDsmType)h->type, nd, dims, &a));
    if (status) {
        orn_dsm_free(a);
        return orn_dsm_fail_ctx(ctx, status, "load: %s", path);
    }
    size_t es = a->esize;
    uint64_t sum = 0;
    int64_t bad = -1; /* the first element here that is not finite */
    const void *badval = NULL;
    for (int64_t t = 0; t < a->part.ntiles && !status; t++) {
        OrnDsmTile *tl = &a->tiles[t];
        if (!tl->held || !tl->n) continue;
        int64_t first = orn_dsm_ravel(a, tl->lo); /* whole rows: the tile is contiguous */
        if (fseeko(f, (off_t)(HEADER + first * (int64_t)es), SEEK_SET) != 0 ||
            fread(tl->vals, es, (size_t)tl->n, f) != (size_t)tl->n) {
            status = orn_dsm_fail(ctx, ORN_E_IO, "load: %s: read error", path);
            break;
        }
        for (int64_t i = 0; i < tl->n; i++)
            sum += fnv((uint64_t)(first + i), (const char *)tl->vals + (size_t)i * es, es);
        int64_t nf =
            flags & ORN_DSM_ALLOW_NONFINITE ? -1 : first_nonfinite(a->type, tl->vals, tl->n);
        if (nf >= 0 && (bad < 0 || first + nf < bad)) {
            bad = first + nf;
            badval = (const char *)tl->vals + (size_t)nf * es;
        }
    }
    if (!status && orn_dsm_file_changed(f, st))
        status =
            orn_dsm_fail(ctx, ORN_E_IO, "load: %s: read error: file changed while reading", path);
    status = orn_dsm_agree(ctx, status);
    if (!status) status = sum_u64(ctx, &sum);
    if (!status && sum != h->checksum)
        status =
            orn_dsm_fail(ctx, ORN_E_FORMAT, "load: %s: checksum mismatch (file corrupt)", path);
    if (!status) {
        /* the file's first element that is not finite, whichever rank read it */
        if (bad >= 0) {
            int64_t key[ORN_DSM_MAXDIM];
            orn_dsm_unravel(a, bad, key);
            status = nonfinite_error(ctx, path, a->type, bad, key, nd, badval);
        }
        status = orn_dsm_agree_at(ctx, status, bad >= 0 ? bad : INT64_MAX);
    }
    if (status) {
        orn_dsm_free(a);
        return status;
    }
    *out = a;
    return ORN_OK;
}

static int load_binary(OrnDsmCtx *ctx, const char *path, int type_hint, unsigned flags,
                       OrnDsmArray **out)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    FILE *f = fopen(path, "rb");
    Header h;
    int64_t *keys = NULL, first = 0, n = 0, bad = -1;
    char *recs = NULL, *vals = NULL;
    struct stat st;
    memset(&h, 0, sizeof h);
    memset(&st, 0, sizeof st);
    *out = NULL;

    if (!f) {
        status = orn_dsm_fail_file(ctx, ORN_E_IO, "load: ", path, "cannot open", errno);
    } else if (fstat(fileno(f), &st) != 0 || fread(&h, 1, HEADER, f) != HEADER ||
               memcmp(h.magic, MAGIC, 8) != 0) {
        status = orn_dsm_fail(ctx, ORN_E_FORMAT,
                              "load: %s: not an Orion array file (no magic "
                              "\"ORNARR\"; text files must end in .txt or .tsv)",
                              path);
    } else if (h.bom != 0x01020304u) {
        status = orn_dsm_fail(ctx, ORN_E_FORMAT,
                              "load: %s: written on a machine of the other "
                              "byte order",
                              path);
    } else if (h.version != 1) {
        status = orn_dsm_fail(ctx, ORN_E_FORMAT, "load: %s: format version %u, expected 1", path,
                              h.version);
    } else if (h.type > ORN_DSM_F64 || h.ndim < 1 || h.ndim > ORN_DSM_MAXDIM || h.sparse > 1 ||
               h.zero != 0 || h.count < 0) {
        status = orn_dsm_fail(ctx, ORN_E_FORMAT, "load: %s: corrupt header", path);
    } else if (type_hint != ORN_DSM_ANYTYPE && (uint32_t)type_hint != h.type) {
        status = orn_dsm_fail(ctx, ORN_E_ARG, "load: %s: holds %s elements, expected %s", path,
                              orn_dsm_type_name((OrnDsmType)h.type),
                              orn_dsm_type_name((OrnDsmType)type_hint));
    } else {
        int64_t vol = 1;
        for (uint32_t d = 0; d < h.ndim && !status; d++) {
            if (h.dims[d] < 0 || (h.dims[d] && vol > INT64_MAX / h.dims[d]))
                status = orn_dsm_fail(ctx, ORN_E_FORMAT, "load: %s: corrupt extents", path);
            else
                vol *= h.dims[d];
        }
        size_t es = orn_dsm_type_size((OrnDsmType)h.type);
        size_t rec = h.sparse ? h.ndim * 8 + es : es;
        if (!status && !h.sparse && h.count != vol)
            status = orn_dsm_fail(ctx, ORN_E_FORMAT,
                                  "load: %s: dense array of %lld elements "
                                  "holds %lld",
                                  path, (long long)vol, (long long)h.count);
        if (!status && h.count > (INT64_MAX - HEADER) / (int64_t)rec)
            status = orn_dsm_fail(ctx, ORN_E_FORMAT,
                                  "load: %s: %lld elements of %zu bytes: more than any file holds "
                                  "(corrupt)",
                                  path, (long long)h.count, rec);
        else if (!status && (int64_t)st.st_size != HEADER + h.count * (int64_t)rec)
            status = orn_dsm_fail(ctx, ORN_E_FORMAT,
                                  "load: %s: %lld bytes, expected %lld "
                                  "(truncated or corrupt)",
                                  path, (long long)st.st_size,
                                  (long long)(HEADER + h.count * (int64_t)rec));
    }
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_exit;

    int nd = (int)h.ndim;
    size_t es = orn_dsm_type_size((OrnDsmType)h.type), rec = h.sparse ? (size_t)nd * 8 + es : es;
    if (!h.sparse) {
        status = load_dense(ctx, f, &st, path, &h, flags, out);
        goto fn_exit;
    }
    first = (int64_t)((double)h.count * me / P);
    int64_t last = me == P - 1 ? h.count : (int64_t)((double)h.count * (me + 1) / P);
    n = last - first;
    recs = orn_xmalloc((size_t)(n ? n : 1) * rec);
    if (n && (fseeko(f, (off_t)(HEADER + first * (int64_t)rec), SEEK_SET) != 0 ||
              fread(recs, rec, (size_t)n, f) != (size_t)n))
        status = orn_dsm_fail(ctx, ORN_E_IO, "load: %s: read error", path);
    else if (orn_dsm_file_changed(f, &st))
        status =
            orn_dsm_fail(ctx, ORN_E_IO, "load: %s: read error: file changed while reading", path);
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_exit;

    uint64_t sum = 0;
    for (int64_t i = 0; i < n; i++) sum += fnv((uint64_t)(first + i), recs + (size_t)i * rec, rec);
    status = sum_u64(ctx, &sum);
    if (status) goto fn_exit;
    if (sum != h.checksum) {
        status =
            orn_dsm_fail(ctx, ORN_E_FORMAT, "load: %s: checksum mismatch (file corrupt)", path);
        goto fn_exit;
    }
    keys = orn_xmalloc((size_t)(n ? n : 1) * (size_t)nd * 8);
    vals = orn_xmalloc((size_t)(n ? n : 1) * es);
    for (int64_t i = 0; i < n; i++) {
        const char *r = recs + (size_t)i * rec;
        if (h.sparse) {
            memcpy(keys + i * nd, r, (size_t)nd * 8);
            r += (size_t)nd * 8;
        } else {
            int64_t lin = first + i;
            for (int d = nd - 1; d >= 0; d--) {
                keys[i * nd + d] = h.dims[d] ? lin % h.dims[d] : 0;
                lin = h.dims[d] ? lin / h.dims[d] : 0;
            }
        }
        memcpy(vals + (size_t)i * es, r, es);
    }
    if (h.sparse) {
        /* Strictly increasing keys, also across the boundaries between ranks. */
        for (int64_t i = 1; i < n && bad < 0; i++)
            if (orn_dsm_key_cmp(keys + (i - 1) * nd, keys + i * nd, nd) >= 0) bad = first + i;
        struct {
            int64_t has, k0[4], k1[4];
        } mine, *all = NULL;
        memset(&mine, 0, sizeof mine);
        mine.has = n > 0;
        if (n) {
            memcpy(mine.k0, keys, (size_t)nd * 8);
            memcpy(mine.k1, keys + (n - 1) * nd, (size_t)nd * 8);
        }
        size_t *counts = orn_xcalloc((size_t)P, sizeof *counts);
        status = orn_dsm_allgatherv(ctx, &mine, sizeof mine, (void **)&all, counts, "load");
        if (!status && n && bad < 0) {
            for (int q = me - 1; q >= 0; q--) {
                if (!all[q].has) continue;
                if (orn_dsm_key_cmp(all[q].k1, mine.k0, nd) >= 0) bad = first;
                break;
            }
        }
        free(all);
        free(counts);
        if (status) goto fn_exit;
        if (bad >= 0)
            status = orn_dsm_fail(ctx, ORN_E_FORMAT, "load: %s: element %lld: keys out of order",
                                  path, (long long)bad);
        status = orn_dsm_agree_at(ctx, status, bad);
        if (status) goto fn_exit;
    }
    /* the file's first element that is not finite, whichever rank read it */
    int64_t nf =
        flags & ORN_DSM_ALLOW_NONFINITE ? -1 : first_nonfinite((OrnDsmType)h.type, vals, n);
    if (nf >= 0)
        status = nonfinite_error(ctx, path, (OrnDsmType)h.type, first + nf, keys + nf * nd, nd,
                                 vals + (size_t)nf * es);
    status = orn_dsm_agree_at(ctx, status, nf >= 0 ? first + nf : INT64_MAX);
    if (status) goto fn_exit;
    status = orn_dsm_from_elements(ctx, (OrnDsmType)h.type, nd, h.dims, (int)h.sparse, n, keys,
                                   vals, NULL, path, out);
    if (status) orn_dsm_fail_ctx(ctx, status, "load: %s", path);
fn_exit:
    if (f) fclose(f);
    free(recs);
    free(keys);
    free(vals);
    return status;
}

int orn_dsm_load(OrnDsmCtx *ctx, const char *path, int type_hint, unsigned flags, OrnDsmArray **out)
{
    if (type_hint != ORN_DSM_ANYTYPE && (type_hint < ORN_DSM_I32 || type_hint > ORN_DSM_F64))
        return orn_dsm_fail(ctx, ORN_E_ARG, "load: unknown element type %d", type_hint);
    if (is_text(path)) return orn_dsm_load_text(ctx, path, type_hint, flags, out);
    return load_binary(ctx, path, type_hint, flags, out);
}
