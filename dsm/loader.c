/* loader.c: parallel text loaders (triplets, libsvm, docword).
 *
 * Each rank reads one byte range of the file: [S r / P, S (r+1) / P) moved forward to the
 * next line start, so every line belongs to exactly one rank. Line numbers are global:
 * rank r's first line is 1 + the number of newlines in the ranges of ranks < r (an
 * exclusive scan). Each rank parses its lines; the first malformed line of the file wins
 * the error (orn_dsm_agree_at with the line number), so the message is the same at any
 * rank count. Elements then go to their owners with one alltoallv (orn_dsm_from_elements).
 *
 * Cost (S bytes, E elements): S / P parsing per rank, one exscan and a few small
 * allreduces (extents), and one alltoallv moving about E (1 - 1/P) records.
 */
#include "dsm_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"

/* ---------------------------------------------------------------- byte ranges */

/* Offset of the first line that starts at or after `raw` (size if none). */
static int line_start(FILE *f, int64_t raw, int64_t size, int64_t *out)
{
    if (raw <= 0) {
        *out = 0;
        return 0;
    }
    if (fseeko(f, (off_t)(raw - 1), SEEK_SET) != 0) return -1;
    int64_t pos = raw - 1;
    int c;
    while ((c = getc(f)) != EOF) {
        pos++;
        if (c == '\n') {
            *out = pos;
            return 0;
        }
    }
    if (ferror(f)) return -1;
    *out = size;
    return 0;
}

int orn_dsm_read_range(OrnDsmCtx *ctx, const char *path, OrnDsmRange *r)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    FILE *f = NULL;
    memset(r, 0, sizeof *r);
    struct stat st;
    memset(&st, 0, sizeof st);
    f = fopen(path, "rb");
    if (!f)
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot open: %s", path, strerror(errno));
    else if (fstat(fileno(f), &st) != 0)
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: is a directory", path);
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_exit;
    int64_t size = (int64_t)st.st_size, start = 0, end = size;
    int64_t raw0 = (int64_t)((double)size * me / P), raw1 = (int64_t)((double)size * (me + 1) / P);
    if (me == P - 1) raw1 = size;
    if (line_start(f, raw0, size, &start) != 0 ||
        (me < P - 1 && line_start(f, raw1, size, &end) != 0)) {
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path, strerror(errno));
    } else {
        if (end < start) end = start;
        r->len = (size_t)(end - start);
        r->buf = orn_xmalloc(r->len + 1);
        if (r->len &&
            (fseeko(f, (off_t)start, SEEK_SET) != 0 || fread(r->buf, 1, r->len, f) != r->len))
            status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path,
                                  ferror(f) ? strerror(errno) : "file changed while reading");
        r->buf[r->len] = '\0';
    }
    status = orn_dsm_agree(ctx, status);
    if (status) goto fn_exit;
    int64_t nl = 0;
    for (size_t i = 0; i < r->len; i++) nl += r->buf[i] == '\n';
    r->nlines = nl + (r->len && r->buf[r->len - 1] != '\n');
    /* Exclusive scan of newline counts. */
    {
        void *all = NULL;
        size_t *counts = orn_xcalloc((size_t)P, sizeof *counts);
        status = orn_dsm_allgatherv(ctx, &nl, sizeof nl, &all, counts, "line numbering");
        if (!status) {
            r->line0 = 1;
            for (int p = 0; p < me; p++) r->line0 += ((int64_t *)all)[p];
        }
        free(all);
        free(counts);
    }
fn_exit:
    if (f) fclose(f);
    if (status) {
        free(r->buf);
        r->buf = NULL;
    }
    return status;
}

/* ---------------------------------------------------------------- lines and fields */

typedef struct Lines {
    const char *p, *end;
    int64_t no; /* number of the next line */
} Lines;

typedef struct Field {
    const char *s;
    size_t n;
} Field;

#define MAXFIELDS 4096

/* Next line [*ls, *le) without its newline and a trailing '\r'. */
static int next_line(Lines *it, const char **ls, const char **le, int64_t *no)
{
    if (it->p >= it->end) return 0;
    const char *s = it->p, *nl = memchr(s, '\n', (size_t)(it->end - s));
    const char *e = nl ? nl : it->end;
    it->p = nl ? nl + 1 : it->end;
    if (e > s && e[-1] == '\r') e--;
    *ls = s;
    *le = e;
    *no = it->no++;
    return 1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Blank or comment line. */
static int skip_line(const char *s, const char *e)
{
    while (s < e && is_space(*s)) s++;
    return s == e || *s == '#';
}

/* Split on spaces/tabs; returns the field count (capped at max). */
static int split(const char *s, const char *e, Field *f, int max)
{
    int n = 0;
    for (;;) {
        while (s < e && is_space(*s)) s++;
        if (s == e) break;
        const char *b = s;
        while (s < e && !is_space(*s)) s++;
        if (n < max) f[n] = (Field){b, (size_t)(s - b)};
        n++;
    }
    return n;
}

static int parse_index(Field f, int64_t *out)
{
    if (f.n == 0 || f.n > 18) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (f.s[i] < '0' || f.s[i] > '9') return -1;
        v = v * 10 + (f.s[i] - '0');
    }
    *out = v;
    return 0;
}

static int parse_int(Field f, int64_t *out)
{
    char buf[32];
    if (f.n == 0 || f.n >= sizeof buf) return -1;
    memcpy(buf, f.s, f.n);
    buf[f.n] = '\0';
    for (size_t i = 0; i < f.n; i++)
        if (!((buf[i] >= '0' && buf[i] <= '9') || (i == 0 && (buf[i] == '-' || buf[i] == '+'))))
            return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int parse_f64(Field f, double *out)
{
    char buf[128];
    if (f.n == 0 || f.n >= sizeof buf) return -1;
    memcpy(buf, f.s, f.n);
    buf[f.n] = '\0';
    char *end = NULL;
    *out = strtod(buf, &end);
    return *end ? -1 : 0;
}

static int parse_f32(Field f, float *out)
{
    char buf[128];
    if (f.n == 0 || f.n >= sizeof buf) return -1;
    memcpy(buf, f.s, f.n);
    buf[f.n] = '\0';
    char *end = NULL;
    *out = strtof(buf, &end);
    return *end ? -1 : 0;
}

/* Quote a field for a message (at most 40 bytes). */
static const char *show(Field f, char *buf, size_t n)
{
    size_t k = f.n < 40 ? f.n : 40;
    if (k + 4 > n) k = n - 4;
    memcpy(buf, f.s, k);
    strcpy(buf + k, f.n > k ? "..." : "");
    return buf;
}

/* Growable element list built while parsing. */
typedef struct Elems {
    int ndim;
    size_t esize;
    int64_t n, cap;
    int64_t *keys, *lines;
    char *vals;
} Elems;

static void elems_push(Elems *e, const int64_t *key, const void *val, int64_t line)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 1024;
        e->keys = orn_xrealloc(e->keys, (size_t)e->cap * (size_t)e->ndim * 8);
        e->lines = orn_xrealloc(e->lines, (size_t)e->cap * 8);
        e->vals = orn_xrealloc(e->vals, (size_t)e->cap * e->esize);
    }
    memcpy(e->keys + e->n * e->ndim, key, (size_t)e->ndim * 8);
    memcpy(e->vals + (size_t)e->n * e->esize, val, e->esize);
    e->lines[e->n++] = line;
}

static void elems_free(Elems *e)
{
    free(e->keys);
    free(e->lines);
    free(e->vals);
}

/* Extents: max + 1 of each coordinate over all ranks; total element count. */
static int extents(OrnDsmCtx *ctx, const Elems *e, int64_t *dims, int64_t *total)
{
    int64_t v[ORN_DSM_MAXDIM + 1] = {0};
    for (int64_t i = 0; i < e->n; i++)
        for (int d = 0; d < e->ndim; d++)
            if (e->keys[i * e->ndim + d] + 1 > v[d]) v[d] = e->keys[i * e->ndim + d] + 1;
    int status = orn_dsm_allreduce_i64(ctx, v, (size_t)e->ndim, ORN_DSM_MAX);
    if (status) return status;
    int64_t n = e->n;
    status = orn_dsm_allreduce_i64(ctx, &n, 1, ORN_DSM_SUM);
    if (status) return status;
    for (int d = 0; d < e->ndim; d++) dims[d] = v[d];
    *total = n;
    return ORN_OK;
}

/* ---------------------------------------------------------------- three-field lines */

/* Check the three fields of data line `no` and push its elements into el; a status. */
typedef int (*RowFn)(OrnDsmCtx *ctx, const char *path, int64_t no, const Field *f, Elems *el);

/* The loaders of files whose data lines have three fields each, `what` naming them in
 * messages ("row col value"): an ndim-D sparse array of `type` from the elements that
 * `row` pushes. */
static int load_rows(OrnDsmCtx *ctx, const char *path, const char *what, OrnDsmType type, int ndim,
                     RowFn row, OrnDsmArray **out)
{
    OrnDsmRange r;
    Elems el = {.ndim = ndim, .esize = orn_dsm_type_size(type)};
    int64_t errline = 0, dims[ORN_DSM_MAXDIM], total = 0;
    *out = NULL;
    int status = orn_dsm_read_range(ctx, path, &r);
    if (status) return status;
    /* Most lines hold one element: size the arrays once instead of doubling them. */
    int64_t nl = 1;
    for (const char *c = r.buf; (c = memchr(c, '\n', (size_t)(r.buf + r.len - c))) != NULL; c++)
        nl++;
    el.cap = nl;
    el.keys = orn_xmalloc((size_t)nl * (size_t)ndim * 8);
    el.lines = orn_xmalloc((size_t)nl * 8);
    el.vals = orn_xmalloc((size_t)nl * el.esize);
    Lines it = {r.buf, r.buf + r.len, r.line0};
    const char *s, *e;
    int64_t no;
    while (!status && next_line(&it, &s, &e, &no)) {
        if (skip_line(s, e)) continue;
        Field f[4];
        int nf = split(s, e, f, 4);
        errline = no;
        if (nf != 3)
            status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: expected 3 fields '%s', found %d",
                                  path, (long long)no, what, nf);
        else
            status = row(ctx, path, no, f, &el);
    }
    free(r.buf);
    status = orn_dsm_agree_at(ctx, status, errline);
    if (!status) status = extents(ctx, &el, dims, &total);
    if (!status && total == 0)
        status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s: expected lines '%s', found none", path, what);
    if (!status)
        status = orn_dsm_from_elements_owned(ctx, type, ndim, dims, 1, el.n, &el.keys,
                                             (void **)&el.vals, &el.lines, path, out);
    elems_free(&el);
    return status;
}

/* ---------------------------------------------------------------- triplets */

static int triplet_row(OrnDsmCtx *ctx, const char *path, int64_t no, const Field *f, Elems *el)
{
    char sb[48];
    int64_t key[2];
    float v;
    if (parse_index(f[0], &key[0]))
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s:%lld: expected a non-negative integer row index, found '%s'", path,
                            (long long)no, show(f[0], sb, sizeof sb));
    if (parse_index(f[1], &key[1]))
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s:%lld: expected a non-negative integer column index, found '%s'",
                            path, (long long)no, show(f[1], sb, sizeof sb));
    if (parse_f32(f[2], &v))
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: expected a number as value, found '%s'",
                            path, (long long)no, show(f[2], sb, sizeof sb));
    elems_push(el, key, &v, no);
    return ORN_OK;
}

int orn_dsm_load_triplets(OrnDsmCtx *ctx, const char *path, OrnDsmArray **out)
{
    return load_rows(ctx, path, "row col value", ORN_DSM_F32, 2, triplet_row, out);
}

/* ---------------------------------------------------------------- docword */

/* One element (doc, word, k) per occurrence k of the word, value 0. */
static int docword_row(OrnDsmCtx *ctx, const char *path, int64_t no, const Field *f, Elems *el)
{
    char sb[48];
    int64_t key[3], count = 0;
    if (parse_index(f[0], &key[0]))
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s:%lld: expected a non-negative integer document id, found '%s'",
                            path, (long long)no, show(f[0], sb, sizeof sb));
    if (parse_index(f[1], &key[1]))
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s:%lld: expected a non-negative integer word id, found '%s'", path,
                            (long long)no, show(f[1], sb, sizeof sb));
    if (parse_index(f[2], &count) || count < 1 || count > (int64_t)1 << 31)
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s:%lld: expected a positive integer count, found '%s'", path,
                            (long long)no, show(f[2], sb, sizeof sb));
    int32_t zero = 0;
    for (key[2] = 0; key[2] < count; key[2]++) elems_push(el, key, &zero, no);
    return ORN_OK;
}

int orn_dsm_load_docword(OrnDsmCtx *ctx, const char *path, OrnDsmArray **out)
{
    return load_rows(ctx, path, "doc word count", ORN_DSM_I32, 3, docword_row, out);
}

/* ---------------------------------------------------------------- libsvm */

int orn_dsm_load_libsvm(OrnDsmCtx *ctx, const char *path, OrnDsmArray **X, OrnDsmArray **y)
{
    OrnDsmRange r;
    Elems xs = {.ndim = 2, .esize = 4}, ys = {.ndim = 1, .esize = 4};
    int64_t errline = 0, dims[2], total = 0, nsamples = 0, base = 0;
    char sb[48];
    Field *f = orn_xmalloc(MAXFIELDS * sizeof *f);
    *X = *y = NULL;
    int status = orn_dsm_read_range(ctx, path, &r);
    if (status) {
        free(f);
        return status;
    }
    Lines it = {r.buf, r.buf + r.len, r.line0};
    const char *s, *e;
    int64_t no, sample = 0; /* local sample number; made global below */
    while (!status && next_line(&it, &s, &e, &no)) {
        if (skip_line(s, e)) continue;
        errline = no;
        int nf = split(s, e, f, MAXFIELDS);
        float label;
        if (nf > MAXFIELDS) {
            status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: more than %d features on one line",
                                  path, (long long)no, MAXFIELDS - 1);
            break;
        }
        if (parse_f32(f[0], &label)) {
            status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: expected a numeric label, found '%s'",
                                  path, (long long)no, show(f[0], sb, sizeof sb));
            break;
        }
        int64_t prev = 0;
        for (int k = 1; k < nf && !status; k++) {
            const char *colon = memchr(f[k].s, ':', f[k].n);
            int64_t idx = 0;
            float v;
            if (!colon || parse_index((Field){f[k].s, (size_t)(colon - f[k].s)}, &idx) || idx < 1 ||
                parse_f32((Field){colon + 1, f[k].n - (size_t)(colon - f[k].s) - 1}, &v)) {
                status = orn_dsm_fail(ctx, ORN_E_PARSE,
                                      "%s:%lld: expected 'index:value' with an integer index >= 1, "
                                      "found '%s'",
                                      path, (long long)no, show(f[k], sb, sizeof sb));
            } else if (idx <= prev) {
                status = orn_dsm_fail(ctx, ORN_E_PARSE,
                                      "%s:%lld: expected feature indices in increasing order, "
                                      "found %lld after %lld",
                                      path, (long long)no, (long long)idx, (long long)prev);
            } else {
                int64_t key[2] = {sample, idx - 1};
                elems_push(&xs, key, &v, no);
                prev = idx;
            }
        }
        if (!status) elems_push(&ys, &sample, &label, no);
        sample++;
    }
    free(r.buf);
    free(f);
    status = orn_dsm_agree_at(ctx, status, errline);
    if (status) goto fn_exit;
    /* Global sample numbers: exclusive scan of data-line counts. */
    {
        void *all = NULL;
        size_t *counts = orn_xcalloc((size_t)ctx->size, sizeof *counts);
        status = orn_dsm_allgatherv(ctx, &sample, sizeof sample, &all, counts, "sample numbering");
        if (!status) {
            for (int p = 0; p < ctx->size; p++) {
                int64_t c = ((int64_t *)all)[p];
                if (p < ctx->rank) base += c;
                nsamples += c;
            }
        }
        free(all);
        free(counts);
        if (status) goto fn_exit;
    }
    for (int64_t i = 0; i < xs.n; i++) xs.keys[2 * i] += base;
    for (int64_t i = 0; i < ys.n; i++) ys.keys[i] += base;
    status = extents(ctx, &xs, dims, &total);
    if (status) goto fn_exit;
    if (nsamples == 0) {
        status = orn_dsm_fail(ctx, ORN_E_PARSE,
                              "%s: expected lines 'label index:value ...', "
                              "found none",
                              path);
        goto fn_exit;
    }
    dims[0] = nsamples;
    status = orn_dsm_from_elements_owned(ctx, ORN_DSM_F32, 2, dims, 1, xs.n, &xs.keys,
                                         (void **)&xs.vals, &xs.lines, path, X);
    if (status) goto fn_exit;
    status = orn_dsm_from_elements(ctx, ORN_DSM_F32, 1, &nsamples, 0, ys.n, ys.keys, ys.vals,
                                   ys.lines, path, y);
    if (status) {
        orn_dsm_free(*X);
        *X = NULL;
    }
fn_exit:
    elems_free(&xs);
    elems_free(&ys);
    return status;
}

/* ---------------------------------------------------------------- text load */

/* Field count of the first data line of this range (0 if none). */
static int first_fields(const OrnDsmRange *r)
{
    Lines it = {r->buf, r->buf + r->len, r->line0};
    const char *s, *e;
    int64_t no;
    Field f[8];
    while (next_line(&it, &s, &e, &no))
        if (!skip_line(s, e)) return split(s, e, f, 8);
    return 0;
}

static int all_digits(Field f)
{
    size_t i = (f.n && (f.s[0] == '-' || f.s[0] == '+')) ? 1 : 0;
    if (i == f.n) return 0;
    for (; i < f.n; i++)
        if (f.s[i] < '0' || f.s[i] > '9') return 0;
    return 1;
}

int orn_dsm_load_text(OrnDsmCtx *ctx, const char *path, int type_hint, OrnDsmArray **out)
{
    OrnDsmRange r;
    int64_t errline = 0, dims[ORN_DSM_MAXDIM], total = 0;
    char sb[48];
    *out = NULL;
    int status = orn_dsm_read_range(ctx, path, &r);
    if (status) return status;
    /* The field count of the file's first data line decides the dimensionality. */
    int nf0 = 0;
    {
        int mine = first_fields(&r);
        void *all = NULL;
        size_t *counts = orn_xcalloc((size_t)ctx->size, sizeof *counts);
        status = orn_dsm_allgatherv(ctx, &mine, sizeof mine, &all, counts, "text load");
        for (int p = 0; !status && p < ctx->size && !nf0; p++) nf0 = ((int *)all)[p];
        free(all);
        free(counts);
        if (status) {
            free(r.buf);
            return status;
        }
    }
    if (nf0 == 0) {
        free(r.buf);
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s: expected lines 'key... value', found none",
                            path);
    }
    if (nf0 < 2 || nf0 > ORN_DSM_MAXDIM + 1) {
        free(r.buf);
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s: expected 2 to %d fields per line (1 to %d key coordinates and a "
                            "value), found %d",
                            path, ORN_DSM_MAXDIM + 1, ORN_DSM_MAXDIM, nf0);
    }
    int nd = nf0 - 1;
    /* Values kept both ways until the type is known. */
    Elems el = {.ndim = nd, .esize = 16};
    int all_int = 1;
    Lines it = {r.buf, r.buf + r.len, r.line0};
    const char *s, *e;
    int64_t no;
    while (!status && next_line(&it, &s, &e, &no)) {
        if (skip_line(s, e)) continue;
        Field f[ORN_DSM_MAXDIM + 2];
        int nf = split(s, e, f, ORN_DSM_MAXDIM + 2);
        int64_t key[ORN_DSM_MAXDIM];
        unsigned char v[16] = {0};
        errline = no;
        if (nf != nf0) {
            status = orn_dsm_fail(ctx, ORN_E_PARSE,
                                  "%s:%lld: expected %d fields (%d key "
                                  "coordinates and a value), found %d",
                                  path, (long long)no, nf0, nd, nf);
            break;
        }
        for (int d = 0; d < nd && !status; d++)
            if (parse_index(f[d], &key[d]))
                status = orn_dsm_fail(ctx, ORN_E_PARSE,
                                      "%s:%lld: expected a non-negative integer "
                                      "key coordinate, found '%s'",
                                      path, (long long)no, show(f[d], sb, sizeof sb));
        if (status) break;
        Field fv = f[nd];
        int bad = 0;
        switch (type_hint) {
        case ORN_DSM_F32: {
            float x = 0;
            bad = parse_f32(fv, &x);
            memcpy(v, &x, 4);
            break;
        }
        case ORN_DSM_F64: {
            double x = 0;
            bad = parse_f64(fv, &x);
            memcpy(v, &x, 8);
            break;
        }
        case ORN_DSM_I32: {
            int64_t x = 0;
            bad = parse_int(fv, &x) || x < INT32_MIN || x > INT32_MAX;
            int32_t y = (int32_t)x;
            memcpy(v, &y, 4);
            break;
        }
        case ORN_DSM_I64: {
            int64_t x = 0;
            bad = parse_int(fv, &x);
            memcpy(v, &x, 8);
            break;
        }
        default: {
            double x = 0;
            int64_t i = 0;
            bad = parse_f64(fv, &x);
            if (all_digits(fv) && !parse_int(fv, &i))
                memcpy(v + 8, &i, 8);
            else
                all_int = 0;
            memcpy(v, &x, 8);
        }
        }
        if (bad) {
            status = orn_dsm_fail(
                ctx, ORN_E_PARSE, "%s:%lld: expected a %s value, found '%s'", path, (long long)no,
                type_hint == ORN_DSM_ANYTYPE ? "numeric" : orn_dsm_type_name(type_hint),
                show(fv, sb, sizeof sb));
            break;
        }
        elems_push(&el, key, v, no);
    }
    free(r.buf);
    status = orn_dsm_agree_at(ctx, status, errline);
    if (!status) status = extents(ctx, &el, dims, &total);
    int type = type_hint;
    if (!status && type == ORN_DSM_ANYTYPE) {
        int64_t ai = all_int;
        status = orn_dsm_allreduce_i64(ctx, &ai, 1, ORN_DSM_MIN);
        type = ai ? ORN_DSM_I64 : ORN_DSM_F64;
    }
    if (!status) {
        /* Compact the values to the element type. */
        size_t es = orn_dsm_type_size((OrnDsmType)type);
        char *vals = orn_xmalloc((size_t)(el.n ? el.n : 1) * es);
        for (int64_t i = 0; i < el.n; i++) {
            const char *src = el.vals + (size_t)i * 16;
            if (type_hint == ORN_DSM_ANYTYPE && type == ORN_DSM_I64) src += 8;
            memcpy(vals + (size_t)i * es, src, es);
        }
        int64_t vol = 1;
        int dense = 1;
        for (int d = 0; d < nd; d++) {
            if (dims[d] && vol > INT64_MAX / dims[d])
                dense = 0;
            else
                vol *= dims[d];
        }
        dense = dense && vol == total;
        status = orn_dsm_from_elements(ctx, (OrnDsmType)type, nd, dims, !dense, el.n, el.keys, vals,
                                       el.lines, path, out);
        free(vals);
    }
    elems_free(&el);
    return status;
}
