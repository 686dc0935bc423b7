/* loader.c: parallel text loaders (triplets, libsvm, docword).
 *
 * Each rank reads one byte range of the file: [S r / P, S (r+1) / P) moved forward to the
 * next line start, so every line belongs to exactly one rank; it reads the range in 4 MB
 * chunks (never whole) and parses each line into a compact record (dsm/build.c), which
 * build.c then sends to its owner and places straight into the tiles. Line numbers are
 * global: rank r's first line is 1 + the lines in the ranges of ranks < r, known once every
 * rank has counted its own (an allgather after the parse), so a malformed line is kept
 * aside and parsed again with its global number for the message; the first malformed line
 * of the file wins the error (orn_dsm_agree_at with the line number), so the message is
 * the same at any rank count. A duplicate key (found while tiles are built) sends the file
 * through a second parse that keeps every element's line (Elems, orn_dsm_from_elements),
 * for the message naming both lines.
 *
 * Cost (S bytes, E elements): S / P parsing per rank, one allgather of line counts and a
 * few small allreduces (extents), and records of about 12 bytes moving once, E (1 - 1/P)
 * of them.
 */
#include "dsm_int.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "progress.h"

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

int orn_dsm_file_changed(FILE *f, const struct stat *st)
{
    struct stat now;
    if (fstat(fileno(f), &now) != 0) return 1;
    return now.st_size != st->st_size || now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != st->st_mtim.tv_nsec;
}

#define CHANGED "file changed while reading"

/* Collective. Every rank must see the file at the same size, or the byte ranges would not
 * tile it: a file replaced while the ranks opened it. */
static int same_size(OrnDsmCtx *ctx, const char *path, int64_t size)
{
    int64_t v[2] = {size, -size};
    int status = orn_dsm_allreduce_i64(ctx, v, 2, ORN_DSM_MAX);
    if (!status && v[0] != -v[1])
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s (ranks saw %lld and %lld bytes)",
                              path, CHANGED, (long long)-v[1], (long long)v[0]);
    return status;
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
        status = orn_dsm_fail_file(ctx, ORN_E_IO, "", path, "cannot open", errno);
    else if (fstat(fileno(f), &st) != 0)
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: is a directory", path);
    status = orn_dsm_agree(ctx, status);
    if (!status) status = same_size(ctx, path, (int64_t)st.st_size);
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
                                  ferror(f) ? strerror(errno) : CHANGED);
        else if (orn_dsm_file_changed(f, &st))
            status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path, CHANGED);
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

int orn_dsm_read_file(OrnDsmCtx *ctx, const char *path, char **buf, size_t *len)
{
    struct stat st;
    char *b = NULL;
    size_t n = 0;
    int status = ORN_OK;
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return orn_dsm_fail_file(ctx, ORN_E_IO, "", path, "cannot open", errno);
    if (fstat(fileno(f), &st) != 0) {
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: %s", path, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: is a directory", path);
    } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
        /* exactly the size it had when opened, as the loaders read their ranges */
        n = (size_t)st.st_size;
        b = malloc(n + 1);
        if (!b)
            status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: out of memory", path);
        else if (fread(b, 1, n, f) != n)
            status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path,
                                  ferror(f) ? strerror(errno) : CHANGED);
        else if (getc(f) != EOF || orn_dsm_file_changed(f, &st))
            status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path, CHANGED);
    } else {
        /* a pipe, a device, an empty file or one whose size says nothing (/proc): read to
         * the end */
        size_t cap = 0;
        for (;;) {
            if (n + 4096 + 1 > cap) {
                cap = cap ? 2 * cap : 65536;
                char *nb = realloc(b, cap);
                if (!nb) {
                    status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: out of memory", path);
                    break;
                }
                b = nb;
            }
            size_t got = fread(b + n, 1, cap - 1 - n, f);
            n += got;
            if (got == 0) break;
        }
        if (!status && ferror(f))
            status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path, strerror(errno));
    }
    fclose(f);
    if (status) {
        free(b);
        return status;
    }
    if (!b) b = orn_xmalloc(1);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return ORN_OK;
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

/* Field parses: P_OK, or why not. */
enum { P_OK = 0, P_BAD = -1, P_BIG = -2, P_SMALL = -3, P_NONFINITE = -4 };

/* The largest key coordinate: the extent (largest + 1) must fit in int64. */
#define INDEX_MAX (INT64_MAX - 1)

/* A non-negative decimal integer up to INDEX_MAX (P_BIG above it). */
static int parse_index(Field f, int64_t *out)
{
    if (f.n == 0) return P_BAD;
    int64_t v = 0;
    int big = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (f.s[i] < '0' || f.s[i] > '9') return P_BAD;
        int d = f.s[i] - '0';
        if (big || v > (INDEX_MAX - d) / 10)
            big = 1;
        else
            v = v * 10 + d;
    }
    if (big) return P_BIG;
    *out = v;
    return P_OK;
}

/* A decimal integer with an optional sign, within [lo, hi] (P_BIG, P_SMALL outside). */
static int parse_int(Field f, int64_t lo, int64_t hi, int64_t *out)
{
    char buf[32];
    size_t i = f.n && (f.s[0] == '-' || f.s[0] == '+');
    if (i == f.n) return P_BAD;
    for (size_t k = i; k < f.n; k++)
        if (f.s[k] < '0' || f.s[k] > '9') return P_BAD;
    size_t z = i; /* leading zeros do not count */
    while (z + 1 < f.n && f.s[z] == '0') z++;
    if (f.n - z > 20) return f.s[0] == '-' ? P_SMALL : P_BIG; /* more digits than any int64 */
    memcpy(buf, f.s, i);
    memcpy(buf + i, f.s + z, f.n - z);
    buf[i + f.n - z] = '\0';
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if ((errno == ERANGE && v > 0) || v > hi) return P_BIG;
    if ((errno == ERANGE && v < 0) || v < lo) return P_SMALL;
    *out = v;
    return P_OK;
}

/* Clinger's fast path: a decimal w x 10^e whose digits w are exact in the type (w <= 2^24
 * for f32, 2^53 for f64) and whose power of ten is too (|e| <= 10, 22) is one IEEE multiply
 * or divide of two exact operands, so correctly rounded: the bits strtof / strtod return,
 * in the type itself (f32 in float arithmetic: rounding to double first could round twice).
 * Needs arithmetic in the types' own precision (FLT_EVAL_METHOD 0, as on x86-64 and
 * AArch64) in the default rounding mode. */
int orn_dsm_fast_real(const char *s, size_t n, int f32, void *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    static const float p10f[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
    static const double p10d[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    int neg = 0, nd = 0, digits = 0, e = 0;
    uint64_t w = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    for (int frac = 0;; i++) {
        if (i < n && s[i] == '.' && !frac) {
            frac = 1;
            continue;
        }
        if (i >= n || s[i] < '0' || s[i] > '9') break;
        digits++;
        e -= frac;
        if (w == 0 && s[i] == '0') continue; /* leading zeros */
        if (++nd > 19) return 0;             /* w could overflow */
        w = w * 10 + (uint64_t)(s[i] - '0');
    }
    if (!digits) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int eneg = 0, x = 0;
        if (++i < n && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
        if (i >= n || s[i] < '0' || s[i] > '9') return 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (x < 100000) x = x * 10 + (s[i] - '0');
        e += eneg ? -x : x;
    }
    if (i != n) return 0;
    if (f32) {
        if (w > ((uint64_t)1 << 24) || e < -10 || e > 10) return 0;
        float v = (float)w;
        v = e < 0 ? v / p10f[-e] : v * p10f[e];
        if (neg) v = -v;
        memcpy(out, &v, sizeof v);
    } else {
        if (w > ((uint64_t)1 << 53) || e < -22 || e > 22) return 0;
        double v = (double)w;
        v = e < 0 ? v / p10d[-e] : v * p10d[e];
        if (neg) v = -v;
        memcpy(out, &v, sizeof v);
    }
    return 1;
#else
    (void)s, (void)n, (void)f32, (void)out;
    return 0;
#endif
}

/* A float of type t (ORN_DSM_F32 or F64) into *out (a float or a double). Not finite --
 * nan, inf, or a number beyond the type's range -- is P_NONFINITE or P_BIG unless
 * ORN_DSM_ALLOW_NONFINITE is in flags (values below the smallest subnormal round to zero,
 * as strtod rounds them). */
static int parse_real(Field f, OrnDsmType t, unsigned flags, void *out)
{
    char buf[128];
    if (f.n == 0 || f.n >= sizeof buf) return P_BAD;
    if (orn_dsm_fast_real(f.s, f.n, t == ORN_DSM_F32, out)) return P_OK; /* finite */
    memcpy(buf, f.s, f.n);
    buf[f.n] = '\0';
    char *end = NULL;
    double v;
    if (t == ORN_DSM_F32) {
        float x = strtof(buf, &end);
        memcpy(out, &x, sizeof x);
        v = x;
    } else {
        v = strtod(buf, &end);
        memcpy(out, &v, sizeof v);
    }
    if (*end || end == buf) return P_BAD;
    if (isfinite(v) || (flags & ORN_DSM_ALLOW_NONFINITE)) return P_OK;
    /* digits that overflowed, or the words nan and inf */
    const char *d = buf + (buf[0] == '-' || buf[0] == '+');
    return (*d >= '0' && *d <= '9') || *d == '.' ? P_BIG : P_NONFINITE;
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

/* The error for a number that parse_int or parse_real refused (callers say what they
 * expected of a malformed one themselves): `what` names the field ("value", "label"), t
 * is its type. */
static int bad_number(OrnDsmCtx *ctx, const char *path, int64_t no, const char *what, Field f,
                      int r, OrnDsmType t)
{
    char sb[48];
    const char *ty = orn_dsm_type_name(t);
    show(f, sb, sizeof sb);
    switch (r) {
    case P_NONFINITE:
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s:%lld: %s '%s' is not a finite number (allow_nonfinite = true "
                            "accepts nan and inf)",
                            path, (long long)no, what, sb);
    case P_BIG:
    case P_SMALL:
        if (t == ORN_DSM_F32 || t == ORN_DSM_F64)
            return orn_dsm_fail(ctx, ORN_E_PARSE,
                                "%s:%lld: %s '%s' overflows %s (largest magnitude %s; "
                                "allow_nonfinite = true loads it as infinity)",
                                path, (long long)no, what, sb, ty,
                                t == ORN_DSM_F32 ? "3.40282347e+38" : "1.7976931348623157e+308");
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: %s '%s' is too large%s for %s (%s)", path,
                            (long long)no, what, sb, r == P_BIG ? "" : " in magnitude", ty,
                            t == ORN_DSM_I32 ? "-2147483648 to 2147483647"
                                             : "-9223372036854775808 to 9223372036854775807");
    default:
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: %s '%s' is not a valid %s", path,
                            (long long)no, what, sb, ty);
    }
}

/* The error for a key coordinate that parse_index refused: `what` names it ("row index"). */
static int bad_index(OrnDsmCtx *ctx, const char *path, int64_t no, const char *what, Field f, int r)
{
    char sb[48];
    show(f, sb, sizeof sb);
    if (r == P_BIG)
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: %s '%s' is too large (at most %lld)", path,
                            (long long)no, what, sb, (long long)INDEX_MAX);
    return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: expected a non-negative integer %s, found '%s'",
                        path, (long long)no, what, sb);
}

/* Growable element list with a source line per element (load_text, and the loaders' second
 * parse after a duplicate key, which needs both lines for its message). */
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

/* The same for parsed records (build.c): ndim extents, the elements they stand for. */
static int rec_extents(OrnDsmCtx *ctx, const OrnDsmRecs *r, int ndim, int64_t *dims, int64_t *total)
{
    int64_t v[ORN_DSM_MAXDIM + 1] = {0};
    for (int d = 0; d < ndim; d++) v[d] = r->ext[d];
    int status = orn_dsm_allreduce_i64(ctx, v, (size_t)ndim, ORN_DSM_MAX);
    if (status) return status;
    int64_t n = r->elems;
    status = orn_dsm_allreduce_i64(ctx, &n, 1, ORN_DSM_SUM);
    if (status) return status;
    for (int d = 0; d < ndim; d++) dims[d] = v[d];
    *total = n;
    return ORN_OK;
}

/* A sparse array keeps 8 bytes a row (CSR offsets), all of them on the rank whose block
 * holds the rows past the data: a stray row index (99999999999999) would ask for more than
 * the machine has. Checked from the extent alike on every rank (so rank 0 reports it once),
 * naming the line with the largest row index (`line`: this rank's, or -1). Collective. */
static int rows_fit(OrnDsmCtx *ctx, const char *path, int64_t rows, int64_t line)
{
    int64_t v[2] = {line, -orn_dsm_mem_bytes()}; /* the first such line; the least memory */
    int status = orn_dsm_allreduce_i64(ctx, v, 2, ORN_DSM_MAX);
    if (status || rows <= -v[1] / 16) return status;
    return orn_dsm_fail(ctx, ORN_E_PARSE,
                        "%s:%lld: row index %lld is too large: a sparse array of %lld rows keeps "
                        "8 bytes a row, %lld MB, more than half this machine's memory (%lld MB); "
                        "number the rows densely from 0",
                        path, (long long)v[0], (long long)(rows - 1), (long long)rows,
                        (long long)(rows > INT64_MAX / 8 ? INT64_MAX >> 20 : rows * 8 >> 20),
                        (long long)(-v[1] >> 20));
}

/* ---------------------------------------------------------------- streaming lines */

/* The loaders read their byte range in chunks instead of whole: the text of a 250 MB file
 * would otherwise sit next to the parsed elements at -n 1. */
#define CHUNK ((size_t)4 << 20)

typedef struct Reader {
    const char *path;
    FILE *f;
    int64_t start, pos, end; /* this rank's byte range [start, end); next offset to read */
    char *buf;
    size_t cap, at, len; /* unparsed bytes: buf[at..len) */
    int64_t no;          /* lines returned so far */
    int err;             /* errno of a failed read; -1: the file changed */
    struct stat st;      /* the file when it was opened */
    OrnProgress *pr;     /* the progress line (rank 0 on a terminal), or NULL */
} Reader;

/* The progress line counts the file's bytes: this rank's share of its range, scaled to
 * the whole file (the ranks read their ranges side by side). */
static void reader_progress(const Reader *rd)
{
    double range = (double)(rd->end - rd->start), size = (double)rd->st.st_size;
    orn_progress_update(rd->pr, range > 0 ? size * (double)(rd->pos - rd->start) / range : size);
}

/* Collective, agreed: open the file and find this rank's lines (as orn_dsm_read_range). */
static int reader_open(OrnDsmCtx *ctx, const char *path, Reader *rd)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    struct stat st;
    memset(rd, 0, sizeof *rd);
    memset(&st, 0, sizeof st);
    rd->path = path;
    rd->f = fopen(path, "rb");
    if (!rd->f)
        status = orn_dsm_fail_file(ctx, ORN_E_IO, "", path, "cannot open", errno);
    else if (fstat(fileno(rd->f), &st) != 0)
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: cannot read: is a directory", path);
    status = orn_dsm_agree(ctx, status);
    rd->st = st;
    if (!status) status = same_size(ctx, path, (int64_t)st.st_size);
    if (!status) {
        int64_t size = (int64_t)st.st_size, start = 0, end = size;
        int64_t raw0 = (int64_t)((double)size * me / P),
                raw1 = (int64_t)((double)size * (me + 1) / P);
        if (me == P - 1) raw1 = size;
        if (line_start(rd->f, raw0, size, &start) != 0 ||
            (me < P - 1 && line_start(rd->f, raw1, size, &end) != 0))
            status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path, strerror(errno));
        rd->start = rd->pos = start;
        rd->end = end < start ? start : end;
        rd->pr = ctx->progress;
        orn_progress_total(rd->pr, (double)size);
        status = orn_dsm_agree(ctx, status);
    }
    if (status && rd->f) {
        fclose(rd->f);
        rd->f = NULL;
    }
    return status;
}

/* Back to the first line, buffer given back (it is refilled on demand). */
static void reader_rewind(Reader *rd)
{
    free(rd->buf);
    rd->buf = NULL;
    rd->cap = rd->at = rd->len = 0;
    rd->pos = rd->start;
    rd->no = 0;
    rd->err = 0;
}

static void reader_close(Reader *rd)
{
    reader_rewind(rd);
    if (rd->f) fclose(rd->f);
    rd->f = NULL;
}

/* Next line [*ls, *le) without its newline and a trailing '\r'; 0 at the end. */
static int reader_line(Reader *rd, const char **ls, const char **le)
{
    for (;;) {
        /* no buffer yet before the first read (NULL + 0 is undefined behaviour) */
        char *s = rd->buf ? rd->buf + rd->at : NULL,
             *nl = rd->len > rd->at ? memchr(s, '\n', rd->len - rd->at) : NULL;
        if (nl || rd->pos >= rd->end || rd->err) {
            if (!nl && rd->at >= rd->len) return 0;
            char *e = nl ? nl : rd->buf + rd->len;
            rd->at = (size_t)(nl ? nl + 1 - rd->buf : e - rd->buf);
            if (e > s && e[-1] == '\r') e--;
            *ls = s;
            *le = e;
            rd->no++;
            return 1;
        }
        /* keep the partial line, read the next chunk after it */
        size_t keep = rd->len - rd->at;
        if (keep) memmove(rd->buf, rd->buf + rd->at, keep);
        rd->at = 0;
        rd->len = keep;
        if (rd->cap < keep + CHUNK) {
            rd->cap = keep + CHUNK;
            rd->buf = orn_xrealloc(rd->buf, rd->cap);
        }
        size_t want = (size_t)(rd->end - rd->pos) < CHUNK ? (size_t)(rd->end - rd->pos) : CHUNK;
        ssize_t got = pread(fileno(rd->f), rd->buf + keep, want, (off_t)rd->pos);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            rd->err = got < 0 ? errno : -1;
            continue;
        }
        rd->pos += got;
        rd->len += (size_t)got;
        if (rd->pr) reader_progress(rd);
    }
}

/* Where parsed lines go: compact records (the fast path), or elements with their line
 * numbers (the second parse after a duplicate key). Either may be NULL. */
typedef struct Sink {
    OrnDsmRecs *recs;
    Elems *el;
    Elems *ys;        /* libsvm: the labels */
    int64_t samples;  /* libsvm: data lines so far */
    Field *f;         /* libsvm: room for a line's fields */
    unsigned flags;   /* ORN_DSM_ALLOW_NONFINITE */
    int64_t row_line; /* records: the line (this rank's count from 0) of the largest row index */
} Sink;

static void sink_push(Sink *k, const int64_t *key, const void *val, int64_t no)
{
    if (k->recs) {
        if (key[0] + 1 > k->recs->ext[0]) k->row_line = no;
        orn_dsm_recs_push(k->recs, key, val);
    }
    if (k->el) elems_push(k->el, key, val, no);
}

/* Check and push one data line (number `no` for messages); a status. */
typedef int (*LineFn)(OrnDsmCtx *ctx, const char *path, int64_t no, const char *s, const char *e,
                      Sink *k);

/* Collective, agreed. Parse this rank's lines with fn, numbered base + their index in the
 * range. Line numbers are global: the first line of rank r is 1 + the lines of ranks < r,
 * known only once every rank has counted its own, so a malformed line is kept aside and
 * parsed again with its global number for the message; the file's first malformed line
 * wins (orn_dsm_agree_at). *line0: the global number of this rank's first line. */
static int scan(OrnDsmCtx *ctx, Reader *rd, LineFn fn, Sink *k, int64_t base, int64_t *line0)
{
    const char *path = rd->path, *s, *e;
    int status = ORN_OK;
    int64_t bad = -1;
    char *copy = NULL;
    size_t clen = 0;
    while (reader_line(rd, &s, &e)) {
        if (skip_line(s, e)) continue;
        if (fn(ctx, path, base + rd->no - 1, s, e, k) != ORN_OK) {
            bad = rd->no - 1;
            clen = (size_t)(e - s);
            copy = orn_xmalloc(clen + 1);
            memcpy(copy, s, clen);
            break;
        }
    }
    if (bad < 0 && !rd->err && orn_dsm_file_changed(rd->f, &rd->st)) rd->err = -1;
    if (bad < 0 && rd->err)
        status = orn_dsm_fail(ctx, ORN_E_IO, "%s: read error: %s", path,
                              rd->err > 0 ? strerror(rd->err) : CHANGED);
    /* Exclusive scan of line counts. */
    void *all = NULL;
    size_t *counts = orn_xcalloc((size_t)ctx->size, sizeof *counts);
    int64_t nl = rd->no, first = 1;
    int st = orn_dsm_allgatherv(ctx, &nl, sizeof nl, &all, counts, "line numbering");
    if (!st)
        for (int p = 0; p < ctx->rank; p++) first += ((int64_t *)all)[p];
    free(all);
    free(counts);
    if (st) {
        free(copy);
        return st;
    }
    *line0 = first;
    if (bad >= 0) {
        Sink none = {.f = k->f, .flags = k->flags};
        status = fn(ctx, path, first + bad, copy, copy + clen, &none);
    }
    free(copy);
    return orn_dsm_agree_at(ctx, status, bad >= 0 ? first + bad : INT64_MAX);
}

/* ---------------------------------------------------------------- three-field lines */

static int three_fields(OrnDsmCtx *ctx, const char *path, int64_t no, const char *s, const char *e,
                        const char *what, Field *f)
{
    int nf = split(s, e, f, 4);
    if (nf != 3)
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: expected 3 fields '%s', found %d", path,
                            (long long)no, what, nf);
    return ORN_OK;
}

/* The loaders of files whose data lines have three fields each, `what` naming them in
 * messages ("row col value"): an ndim-D sparse array of `type` from what `fn` pushes
 * (expand: records (key..., count) standing for count elements, build.c). */
static int load_rows(OrnDsmCtx *ctx, const char *path, const char *what, OrnDsmType type, int ndim,
                     int expand, unsigned flags, LineFn fn, OrnDsmArray **out)
{
    Reader rd;
    OrnDsmRecs recs;
    size_t es = orn_dsm_type_size(type);
    int64_t line0 = 0, dims[ORN_DSM_MAXDIM], total = 0;
    int dup = 0;
    *out = NULL;
    int status = reader_open(ctx, path, &rd);
    if (status) return status;
    orn_dsm_recs_init(&recs, expand ? ndim - 1 : ndim, expand ? 4 : es, expand);
    Sink k = {.recs = &recs, .flags = flags};
    status = scan(ctx, &rd, fn, &k, 0, &line0);
    free(rd.buf); /* the chunk buffer, while the array is built */
    rd.buf = NULL;
    rd.cap = 0;
    if (!status) status = rec_extents(ctx, &recs, ndim, dims, &total);
    if (!status && total == 0)
        status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s: expected lines '%s', found none", path, what);
    if (!status) /* this rank's line when it holds the largest row index */
        status = rows_fit(ctx, path, dims[0],
                          recs.n && recs.ext[0] == dims[0] ? line0 + k.row_line : -1);
    if (!status) status = orn_dsm_build_sparse(ctx, type, ndim, dims, &recs, path, out, &dup);
    if (!status && dup) {
        /* A key twice (every rank knows): parse again keeping each element's line, and let
         * the general path name the two lines. Errors only, so speed does not matter. */
        Elems el = {.ndim = ndim, .esize = es};
        Sink k2 = {.el = &el, .flags = flags};
        reader_rewind(&rd);
        status = scan(ctx, &rd, fn, &k2, line0, &line0);
        if (!status)
            status = orn_dsm_from_elements_owned(ctx, type, ndim, dims, 1, el.n, &el.keys,
                                                 (void **)&el.vals, &el.lines, path, out);
        elems_free(&el);
    }
    orn_dsm_recs_free(&recs);
    reader_close(&rd);
    return status;
}

/* ---------------------------------------------------------------- triplets */

static int triplet_line(OrnDsmCtx *ctx, const char *path, int64_t no, const char *s, const char *e,
                        Sink *k)
{
    char sb[48];
    Field f[4];
    int64_t key[2];
    float v;
    int status = three_fields(ctx, path, no, s, e, "row col value", f);
    if (status) return status;
    int r;
    if ((r = parse_index(f[0], &key[0]))) return bad_index(ctx, path, no, "row index", f[0], r);
    if ((r = parse_index(f[1], &key[1]))) return bad_index(ctx, path, no, "column index", f[1], r);
    if ((r = parse_real(f[2], ORN_DSM_F32, k->flags, &v)) == P_BAD)
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: expected a number as value, found '%s'",
                            path, (long long)no, show(f[2], sb, sizeof sb));
    if (r) return bad_number(ctx, path, no, "value", f[2], r, ORN_DSM_F32);
    sink_push(k, key, &v, no);
    return ORN_OK;
}

int orn_dsm_load_triplets(OrnDsmCtx *ctx, const char *path, unsigned flags, OrnDsmArray **out)
{
    return load_rows(ctx, path, "row col value", ORN_DSM_F32, 2, 0, flags, triplet_line, out);
}

/* ---------------------------------------------------------------- docword */

/* One element (doc, word, k) per occurrence k of the word, value 0: one record (doc, word,
 * count) on the fast path. */
static int docword_line(OrnDsmCtx *ctx, const char *path, int64_t no, const char *s, const char *e,
                        Sink *k)
{
    char sb[48];
    Field f[4];
    int64_t key[3], count = 0;
    int status = three_fields(ctx, path, no, s, e, "doc word count", f);
    if (status) return status;
    int r;
    if ((r = parse_index(f[0], &key[0]))) return bad_index(ctx, path, no, "document id", f[0], r);
    if ((r = parse_index(f[1], &key[1]))) return bad_index(ctx, path, no, "word id", f[1], r);
    /* j = 0..count-1 must fit int32 (a run array's third key, build.c) */
    r = parse_index(f[2], &count);
    if (r == P_BIG || (!r && count > (int64_t)1 << 31))
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: count '%s' is too large (at most %lld)",
                            path, (long long)no, show(f[2], sb, sizeof sb), (long long)1 << 31);
    if (r || count < 1)
        return orn_dsm_fail(ctx, ORN_E_PARSE,
                            "%s:%lld: expected a positive integer count, found '%s'", path,
                            (long long)no, show(f[2], sb, sizeof sb));
    if (k->recs) {
        uint32_t c = (uint32_t)count;
        orn_dsm_recs_push(k->recs, key, &c);
    }
    if (k->el) {
        int32_t zero = 0;
        for (key[2] = 0; key[2] < count; key[2]++) elems_push(k->el, key, &zero, no);
    }
    return ORN_OK;
}

int orn_dsm_load_docword(OrnDsmCtx *ctx, const char *path, OrnDsmArray **out)
{
    return load_rows(ctx, path, "doc word count", ORN_DSM_I32, 3, 1, 0, docword_line, out);
}

/* ---------------------------------------------------------------- libsvm */

/* Sample numbers are local here (k->samples) and made global after the scan. */
static int libsvm_line(OrnDsmCtx *ctx, const char *path, int64_t no, const char *s, const char *e,
                       Sink *k)
{
    char sb[48];
    Field *f = k->f;
    int nf = split(s, e, f, MAXFIELDS);
    float label;
    if (nf > MAXFIELDS)
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: more than %d features on one line", path,
                            (long long)no, MAXFIELDS - 1);
    int r = parse_real(f[0], ORN_DSM_F32, k->flags, &label);
    if (r == P_BAD)
        return orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: expected a numeric label, found '%s'", path,
                            (long long)no, show(f[0], sb, sizeof sb));
    if (r) return bad_number(ctx, path, no, "label", f[0], r, ORN_DSM_F32);
    int64_t prev = 0;
    for (int j = 1; j < nf; j++) {
        const char *colon = memchr(f[j].s, ':', f[j].n);
        int64_t idx = 0;
        float v;
        Field fi = {f[j].s, colon ? (size_t)(colon - f[j].s) : 0}, fv = {NULL, 0};
        if (colon) fv = (Field){colon + 1, f[j].n - fi.n - 1};
        int ri = colon ? parse_index(fi, &idx) : P_BAD;
        if (ri == P_BIG) return bad_index(ctx, path, no, "feature index", fi, ri);
        int rv = ri || idx < 1 ? P_BAD : parse_real(fv, ORN_DSM_F32, k->flags, &v);
        if (rv == P_BAD)
            return orn_dsm_fail(ctx, ORN_E_PARSE,
                                "%s:%lld: expected 'index:value' with an integer index >= 1, "
                                "found '%s'",
                                path, (long long)no, show(f[j], sb, sizeof sb));
        if (rv) return bad_number(ctx, path, no, "feature value", fv, rv, ORN_DSM_F32);
        if (idx <= prev)
            return orn_dsm_fail(ctx, ORN_E_PARSE,
                                "%s:%lld: expected feature indices in increasing order, "
                                "found %lld after %lld",
                                path, (long long)no, (long long)idx, (long long)prev);
        int64_t key[2] = {k->samples, idx - 1};
        sink_push(k, key, &v, no);
        prev = idx;
    }
    if (k->ys) elems_push(k->ys, &k->samples, &label, no);
    k->samples++;
    return ORN_OK;
}

int orn_dsm_load_libsvm(OrnDsmCtx *ctx, const char *path, unsigned flags, OrnDsmArray **X,
                        OrnDsmArray **y)
{
    Reader rd;
    OrnDsmRecs xs;
    Elems ys = {.ndim = 1, .esize = 4};
    int64_t line0 = 0, dims[2], total = 0, nsamples = 0, base = 0;
    int dup = 0;
    *X = *y = NULL;
    int status = reader_open(ctx, path, &rd);
    if (status) return status;
    orn_dsm_recs_init(&xs, 2, 4, 0);
    Sink k = {.recs = &xs, .ys = &ys, .f = orn_xmalloc(MAXFIELDS * sizeof(Field)), .flags = flags};
    status = scan(ctx, &rd, libsvm_line, &k, 0, &line0);
    free(k.f);
    reader_close(&rd);
    if (status) goto fn_exit;
    /* Global sample numbers: exclusive scan of data-line counts. */
    {
        void *all = NULL;
        size_t *counts = orn_xcalloc((size_t)ctx->size, sizeof *counts);
        status =
            orn_dsm_allgatherv(ctx, &k.samples, sizeof k.samples, &all, counts, "sample numbering");
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
    orn_dsm_recs_shift(&xs, 0, base);
    for (int64_t i = 0; i < ys.n; i++) ys.keys[i] += base;
    status = rec_extents(ctx, &xs, 2, dims, &total);
    if (status) goto fn_exit;
    if (nsamples == 0) {
        status = orn_dsm_fail(ctx, ORN_E_PARSE,
                              "%s: expected lines 'label index:value ...', "
                              "found none",
                              path);
        goto fn_exit;
    }
    dims[0] = nsamples;
    /* Each line is its own row with increasing columns: no key can occur twice. */
    status = orn_dsm_build_sparse(ctx, ORN_DSM_F32, 2, dims, &xs, path, X, &dup);
    if (!status && dup) status = orn_dsm_fail(ctx, ORN_E_INTERNAL, "%s: duplicate features", path);
    if (status) goto fn_exit;
    free(ys.lines); /* labels: one per sample, none twice */
    ys.lines = NULL;
    status = orn_dsm_from_elements(ctx, ORN_DSM_F32, 1, &nsamples, 0, ys.n, ys.keys, ys.vals, NULL,
                                   path, y);
    if (status) {
        orn_dsm_free(*X);
        *X = NULL;
    }
fn_exit:
    orn_dsm_recs_free(&xs);
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

int orn_dsm_load_text(OrnDsmCtx *ctx, const char *path, int type_hint, unsigned flags,
                      OrnDsmArray **out)
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
        for (int d = 0; d < nd && !status; d++) {
            int rk = parse_index(f[d], &key[d]);
            if (rk == P_BAD && (memchr(f[d].s, '.', f[d].n) || memchr(f[d].s, ',', f[d].n) ||
                                memchr(f[d].s, '-', f[d].n)))
                status = orn_dsm_fail(ctx, ORN_E_PARSE,
                                      "%s:%lld: expected a non-negative integer key coordinate, "
                                      "found '%s' (load reads 'key... value' lines, as save "
                                      "writes them; a matrix with a row per line: load_csv(path))",
                                      path, (long long)no, show(f[d], sb, sizeof sb));
            else if (rk)
                status = bad_index(ctx, path, no, "key coordinate", f[d], rk);
        }
        if (status) break;
        Field fv = f[nd];
        int bad = P_OK;
        switch (type_hint) {
        case ORN_DSM_F32:
        case ORN_DSM_F64:
            bad = parse_real(fv, (OrnDsmType)type_hint, flags, v);
            break;
        case ORN_DSM_I32: {
            int64_t x = 0;
            bad = parse_int(fv, INT32_MIN, INT32_MAX, &x);
            int32_t y = (int32_t)x;
            memcpy(v, &y, 4);
            break;
        }
        case ORN_DSM_I64: {
            int64_t x = 0;
            bad = parse_int(fv, INT64_MIN, INT64_MAX, &x);
            memcpy(v, &x, 8);
            break;
        }
        default: {
            /* i64 if every value is an integer that fits, else f64 */
            int64_t i = 0;
            bad = parse_real(fv, ORN_DSM_F64, flags, v);
            if (!bad && !parse_int(fv, INT64_MIN, INT64_MAX, &i))
                memcpy(v + 8, &i, 8);
            else
                all_int = 0;
        }
        }
        if (bad == P_BAD) {
            status = orn_dsm_fail(
                ctx, ORN_E_PARSE, "%s:%lld: expected a %s value, found '%s'", path, (long long)no,
                type_hint == ORN_DSM_ANYTYPE ? "numeric" : orn_dsm_type_name(type_hint),
                show(fv, sb, sizeof sb));
            break;
        }
        if (bad) {
            status = bad_number(ctx, path, no, "value", fv, bad,
                                type_hint == ORN_DSM_ANYTYPE ? ORN_DSM_F64 : (OrnDsmType)type_hint);
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

/* ---------------------------------------------------------------- csv: a matrix by rows */

/* Split a CSV line: fields apart by a comma (spaces and tabs around it ignored) or, in a
 * line without commas, by spaces and tabs; a field in double quotes loses them. Returns
 * the field count (capped at max); *empty: a field between two commas is empty. */
static int csv_split(const char *s, const char *e, Field *f, int max, int *empty)
{
    int n = 0, comma = memchr(s, ',', (size_t)(e - s)) != NULL;
    *empty = 0;
    for (;;) {
        while (s < e && is_space(*s)) s++;
        if (s == e && (!comma || n == 0)) break;
        const char *b = s;
        while (s < e && (comma ? *s != ',' : !is_space(*s))) s++;
        const char *t = s;
        while (t > b && is_space(t[-1])) t--;
        if (t - b >= 2 && *b == '"' && t[-1] == '"') b++, t--;
        if (t == b) *empty = 1;
        if (n < max) f[n] = (Field){b, (size_t)(t - b)};
        n++;
        if (!comma) continue;
        if (s == e) break;
        s++; /* past the comma: a field follows, even an empty last one */
    }
    return n;
}

static int csv_value(Field fv, OrnDsmType type, unsigned flags, void *v)
{
    if (type == ORN_DSM_F32 || type == ORN_DSM_F64) return parse_real(fv, type, flags, v);
    int64_t x = 0;
    int bad = parse_int(fv, type == ORN_DSM_I32 ? INT32_MIN : INT64_MIN,
                        type == ORN_DSM_I32 ? INT32_MAX : INT64_MAX, &x);
    if (type == ORN_DSM_I32) {
        int32_t y = (int32_t)x;
        memcpy(v, &y, 4);
    } else {
        memcpy(v, &x, 8);
    }
    return bad;
}

int orn_dsm_load_csv(OrnDsmCtx *ctx, const char *path, OrnDsmType type, int header, unsigned flags,
                     OrnDsmArray **out)
{
    OrnDsmRange r;
    char sb[48];
    *out = NULL;
    int status = orn_dsm_read_range(ctx, path, &r);
    if (status) return status;
    /* a byte-order mark before the first line (spreadsheets write one): not data */
    size_t bom = r.line0 == 1 && r.len >= 3 && memcmp(r.buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    /* the header: the file's first line that is not blank or a comment */
    int64_t head = INT64_MAX;
    if (header) {
        Lines it = {r.buf + bom, r.buf + r.len, r.line0};
        const char *s, *e;
        int64_t no;
        while (next_line(&it, &s, &e, &no))
            if (!skip_line(s, e)) {
                head = no;
                break;
            }
        status = orn_dsm_allreduce_i64(ctx, &head, 1, ORN_DSM_MIN);
        if (status) {
            free(r.buf);
            return status;
        }
    }
    size_t es = orn_dsm_type_size(type);
    Elems el = {.ndim = 2, .esize = es};
    Field *f = orn_xmalloc(MAXFIELDS * sizeof *f);
    int64_t rows = 0, ncols = -1, first = -1, errline = INT64_MAX, no;
    Lines it = {r.buf + bom, r.buf + r.len, r.line0};
    const char *s, *e;
    /* the width: the file's first data line's, which every line must have */
    {
        int64_t mine[2] = {INT64_MAX, -1}, *all = NULL;
        int empty;
        while (next_line(&it, &s, &e, &no))
            if (!skip_line(s, e) && no != head) {
                mine[0] = no;
                mine[1] = csv_split(s, e, f, MAXFIELDS, &empty);
                break;
            }
        size_t *counts = orn_xcalloc((size_t)ctx->size, sizeof *counts);
        status = orn_dsm_allgatherv(ctx, mine, sizeof mine, (void **)&all, counts, "load_csv");
        for (int p = 0; !status && p < ctx->size; p++)
            if (all[2 * p] < INT64_MAX && ncols < 0) first = all[2 * p], ncols = all[2 * p + 1];
        free(all);
        free(counts);
        it = (Lines){r.buf + bom, r.buf + r.len, r.line0};
    }
    while (!status && ncols >= 0 && next_line(&it, &s, &e, &no)) {
        if (skip_line(s, e) || no == head) continue;
        int empty = 0, nf = csv_split(s, e, f, MAXFIELDS, &empty);
        errline = no;
        if (nf > MAXFIELDS) {
            status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: more than %d values on one line",
                                  path, (long long)no, MAXFIELDS);
            break;
        }
        if (empty) {
            status = orn_dsm_fail(ctx, ORN_E_PARSE, "%s:%lld: an empty field (a missing value)",
                                  path, (long long)no);
            break;
        }
        if (nf != ncols) {
            status = orn_dsm_fail(ctx, ORN_E_PARSE,
                                  "%s:%lld: expected %lld values, as on line %lld, found %d", path,
                                  (long long)no, (long long)ncols, (long long)first, nf);
            break;
        }
        for (int j = 0; j < nf && !status; j++) {
            unsigned char v[8] = {0};
            int bad = csv_value(f[j], type, flags, v);
            if (bad == P_BAD)
                status = orn_dsm_fail(
                    ctx, ORN_E_PARSE, "%s:%lld: expected an %s value in column %d, found '%s'%s",
                    path, (long long)no, orn_dsm_type_name(type), j, show(f[j], sb, sizeof sb),
                    no == first && ctx->rank == 0 && !header
                        ? " (a header line? load_csv(path, header = true))"
                        : "");
            else if (bad)
                status = bad_number(ctx, path, no, "value", f[j], bad, type);
            else
                elems_push(&el, (int64_t[2]){rows, j}, v, no);
        }
        rows++;
    }
    free(f);
    free(r.buf);
    status = orn_dsm_agree_at(ctx, status, status ? errline : INT64_MAX);
    /* every rank's rows: the row numbers */
    int64_t *all = NULL, base = 0, total = 0;
    size_t *counts = orn_xcalloc((size_t)ctx->size, sizeof *counts);
    if (!status)
        status = orn_dsm_allgatherv(ctx, &rows, sizeof rows, (void **)&all, counts, "load_csv");
    free(counts);
    for (int p = 0; !status && p < ctx->size; p++) {
        if (p < ctx->rank) base += all[p];
        total += all[p];
    }
    free(all);
    if (!status && total == 0)
        status = orn_dsm_fail(ctx, ORN_E_PARSE,
                              "%s: expected lines of numbers apart by commas or spaces, found "
                              "none",
                              path);
    if (!status) {
        for (int64_t i = 0; i < el.n; i++) el.keys[2 * i] += base;
        int64_t dims[2] = {total, ncols};
        status = orn_dsm_from_elements(ctx, type, 2, dims, 0, el.n, el.keys, el.vals, el.lines,
                                       path, out);
    }
    elems_free(&el);
    return status;
}
