/* show.c: the text `print` and `eprint` write for an array or a view (orn_std.h).
 *
 * Dense: brackets nested by dimension, elements separated by ", ", rows of a matrix one per
 * line, blocks of higher dimensions apart by a blank line -- numpy's layout, with elements
 * as `print` writes scalars (floats in their shortest exact form). An array of more than
 * ORN_STD_SHOW_MAX elements is summarized: each dimension longer than 2 * EDGE shows its
 * first and last EDGE indices around "...". Sparse (stored elements only): `{key: value,
 * ...}` in key order, a key of several dimensions as `(i, j)`, summarized the same way by
 * the number of stored elements. Only the elements shown are read: a summary of a large
 * `dist` array costs a few reads, not a copy. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "orn_std.h"
#include "strbuf.h"

enum { EDGE = 3 };

static size_t tsize(int type)
{
    return type == ORN_DSM_I32 || type == ORN_DSM_F32 ? 4 : 8;
}

void orn_std_fmt_elem(char *buf, size_t size, int type, const void *v)
{
    switch (type) {
    case ORN_DSM_I32: {
        int32_t x;
        memcpy(&x, v, sizeof x);
        snprintf(buf, size, "%" PRId32, x);
        break;
    }
    case ORN_DSM_I64: {
        int64_t x;
        memcpy(&x, v, sizeof x);
        snprintf(buf, size, "%" PRId64, x);
        break;
    }
    case ORN_DSM_F32: {
        float x;
        memcpy(&x, v, sizeof x);
        orn_std_fmt_float(buf, size, x, 1);
        break;
    }
    default: {
        double x;
        memcpy(&x, v, sizeof x);
        orn_std_fmt_float(buf, size, x, 0);
        break;
    }
    }
}

static void put_elem(OrnBuf *b, int type, const void *v)
{
    char buf[64];
    orn_std_fmt_elem(buf, sizeof buf, type, v);
    orn_buf_puts(b, buf);
}

/* The indices shown along each dimension: all, or the first and last EDGE when the array is
 * summarized and the dimension is longer than 2 * EDGE. */
typedef struct Shown {
    int ndim;
    int64_t n[ORN_DSM_MAXDIM];    /* indices shown per dimension */
    int64_t *idx[ORN_DSM_MAXDIM]; /* those indices */
    bool gap[ORN_DSM_MAXDIM];     /* "..." after the first EDGE */
} Shown;

/* The shown indices of an array of these extents (the array exists, so their product
 * fits); returns the number of elements shown. */
static int64_t shown_init(Shown *s, int ndim, const int64_t *dims)
{
    int64_t volume = 1, count = 1;
    for (int d = 0; d < ndim; d++) volume *= dims[d];
    bool summarize = volume > ORN_STD_SHOW_MAX;
    s->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        s->gap[d] = summarize && dims[d] > 2 * EDGE;
        s->n[d] = s->gap[d] ? 2 * EDGE : dims[d];
        s->idx[d] = orn_xmalloc((size_t)(s->n[d] ? s->n[d] : 1) * sizeof(int64_t));
        for (int64_t i = 0; i < s->n[d]; i++)
            s->idx[d][i] = s->gap[d] && i >= EDGE ? dims[d] - 2 * EDGE + i : i;
        count *= s->n[d];
    }
    return count;
}

static void shown_free(Shown *s)
{
    for (int d = 0; d < s->ndim; d++) free(s->idx[d]);
}

/* After an item of dimension d: ", " in a row; ",", a newline per dimension below and the
 * indent of the next block otherwise. */
static void put_sep(OrnBuf *b, const Shown *s, int d)
{
    orn_buf_putc(b, ',');
    if (d == s->ndim - 1) {
        orn_buf_putc(b, ' ');
        return;
    }
    for (int e = d; e < s->ndim - 1; e++) orn_buf_putc(b, '\n');
    for (int e = 0; e <= d; e++) orn_buf_putc(b, ' ');
}

/* Writes the block of dimension d whose first shown element is vals[at]; `stride` elements
 * of vals per index of dimension d. Elements are right-aligned to `width` (0: none). */
static void put_block(OrnBuf *b, const Shown *s, int type, const char *vals, int64_t at, int d,
                      int width)
{
    int nd = s->ndim < ORN_DSM_MAXDIM ? s->ndim : ORN_DSM_MAXDIM; /* (bounds for the compiler) */
    if (d < 0 || d >= nd) return;
    int64_t stride = 1;
    for (int e = d + 1; e < nd; e++) stride *= s->n[e];
    orn_buf_putc(b, '[');
    for (int64_t i = 0; i < s->n[d]; i++) {
        if (i > 0) put_sep(b, s, d);
        if (s->gap[d] && i == EDGE) {
            orn_buf_puts(b, "...");
            put_sep(b, s, d);
        }
        const char *v = vals + (size_t)(at + i * stride) * tsize(type);
        if (d == s->ndim - 1) {
            OrnBuf el;
            orn_buf_init(&el);
            put_elem(&el, type, v);
            for (int w = (int)el.len; w < width; w++) orn_buf_putc(b, ' ');
            orn_buf_put(b, el.data, el.len);
            orn_buf_free(&el);
        } else {
            put_block(b, s, type, vals, at + i * stride, d + 1, width);
        }
    }
    orn_buf_putc(b, ']');
}

/* The text of the shown elements (row-major over the shown indices). */
static char *dense_text(const Shown *s, int type, const void *vals, int64_t count)
{
    OrnBuf b;
    orn_buf_init(&b);
    int width = 0;
    if (s->ndim > 1) /* a matrix's columns line up */
        for (int64_t i = 0; i < count; i++) {
            orn_buf_clear(&b);
            put_elem(&b, type, (const char *)vals + (size_t)i * tsize(type));
            if ((int)b.len > width) width = (int)b.len;
        }
    orn_buf_clear(&b);
    put_block(&b, s, type, vals, 0, 0, width);
    char *r = orn_xmalloc(b.len + 1);
    memcpy(r, b.data, b.len);
    r[b.len] = 0;
    orn_buf_free(&b);
    return r;
}

static char *sparse_text(int type, int ndim, int64_t total, int64_t n, const int64_t *keys,
                         const void *vals)
{
    OrnBuf b;
    orn_buf_init(&b);
    orn_buf_putc(&b, '{');
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) orn_buf_puts(&b, ", ");
        if (total > n && i == n / 2) orn_buf_puts(&b, "..., ");
        if (ndim > 1) orn_buf_putc(&b, '(');
        for (int d = 0; d < ndim; d++)
            orn_buf_printf(&b, "%s%" PRId64, d ? ", " : "", keys[i * ndim + d]);
        if (ndim > 1) orn_buf_putc(&b, ')');
        orn_buf_puts(&b, ": ");
        put_elem(&b, type, (const char *)vals + (size_t)i * tsize(type));
    }
    orn_buf_putc(&b, '}');
    char *r = orn_xmalloc(b.len + 1);
    memcpy(r, b.data ? b.data : "", b.len);
    r[b.len] = 0;
    orn_buf_free(&b);
    return r;
}

char *orn_std_show_dist(OrnStdProg *p, OrnDsmArray *a, int line)
{
    int nd = a->ndim;
    if (a->sparse) {
        int64_t total = 0, n = 0, *keys = NULL;
        void *vals = NULL;
        int st = orn_dsm_sparse_ends(a, -1, 0, ORN_STD_SHOW_MAX, EDGE, &total, &n, &keys, &vals);
        if (st) orn_std_fail(p, st, line, 0);
        char *r = sparse_text((int)a->type, nd, total, n, keys, vals);
        free(keys);
        free(vals);
        return r;
    }
    int64_t dims[ORN_DSM_MAXDIM]; /* declared */
    for (int s = 0; s < nd; s++) dims[orn_dsm_decl_dim(a, s)] = a->dims[s];
    Shown sh;
    int64_t count = shown_init(&sh, nd, dims);
    int64_t *keys = orn_xmalloc((size_t)(count ? count : 1) * (size_t)nd * sizeof *keys);
    for (int64_t i = 0; i < count; i++) {
        int64_t r = i, decl[ORN_DSM_MAXDIM];
        for (int d = nd - 1; d >= 0; d--) {
            decl[d] = sh.idx[d][r % sh.n[d]];
            r /= sh.n[d];
        }
        for (int s = 0; s < nd; s++) keys[i * nd + s] = decl[orn_dsm_decl_dim(a, s)];
    }
    void *vals = orn_xmalloc((size_t)(count ? count : 1) * a->esize);
    int st = orn_dsm_get_many(a, count, keys, vals);
    free(keys);
    if (st) {
        free(vals);
        shown_free(&sh);
        orn_std_fail(p, st, line, 0);
    }
    char *r = dense_text(&sh, (int)a->type, vals, count);
    free(vals);
    shown_free(&sh);
    return r;
}

char *orn_std_show_line(OrnStdProg *p, OrnDsmArray *a, int dim, int64_t fixed, int line)
{
    int other = 1 - dim;
    int64_t extent = a->dims[0];
    for (int s = 0; s < a->ndim; s++)
        if (orn_dsm_decl_dim(a, s) == other) extent = a->dims[s];
    if (fixed < 0 || fixed >= extent) orn_std_vec_bad_index(p, a->name, fixed, other, extent, line);
    int64_t total = 0, n = 0, *keys = NULL;
    void *vals = NULL;
    int st = orn_dsm_sparse_ends(a, dim, fixed, ORN_STD_SHOW_MAX, EDGE, &total, &n, &keys, &vals);
    if (st) orn_std_fail(p, st, line, 0);
    for (int64_t i = 0; i < n; i++) keys[i] = keys[i * 2 + dim]; /* the key along the line */
    char *r = sparse_text((int)a->type, 1, total, n, keys, vals);
    free(keys);
    free(vals);
    return r;
}

char *orn_std_show_arr(const OrnStdArr *a)
{
    Shown sh;
    int64_t count = shown_init(&sh, a->ndim, a->dims);
    size_t es = a->esize;
    char *vals = orn_xmalloc((size_t)(count ? count : 1) * es);
    for (int64_t i = 0; i < count; i++) {
        int64_t r = i, lin = 0, mul = 1;
        for (int d = a->ndim - 1; d >= 0; d--) {
            lin += sh.idx[d][r % sh.n[d]] * mul;
            mul *= a->dims[d];
            r /= sh.n[d];
        }
        memcpy(vals + (size_t)i * es, (const char *)a->data + (size_t)lin * es, es);
    }
    char *r = dense_text(&sh, a->type, vals, count);
    free(vals);
    shown_free(&sh);
    return r;
}

char *orn_std_show_vals(int type, const void *vals, int64_t n)
{
    Shown sh;
    int64_t count = shown_init(&sh, 1, &n);
    size_t es = tsize(type);
    char *pick = orn_xmalloc((size_t)(count ? count : 1) * es);
    for (int64_t i = 0; i < count; i++)
        memcpy(pick + (size_t)i * es, (const char *)vals + (size_t)sh.idx[0][i] * es, es);
    char *r = dense_text(&sh, type, pick, count);
    free(pick);
    shown_free(&sh);
    return r;
}
