/* source.c: source texts, their line tables and spans.
 *
 * Offsets are uint32_t (source.h), so a source is at most UINT32_MAX - 1 bytes; the reader
 * refuses anything larger with EFBIG rather than wrapping offsets. The text may contain
 * NUL bytes: everything here works from `len`, never from strlen. */
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"

/* Largest text we accept: one below UINT32_MAX so that `len` itself is a valid offset
 * (the end-of-file span) and hi never overflows. */
#define MAX_SOURCE ((size_t)UINT32_MAX - 1)

static char *dup_path(const char *path)
{
    size_t n = strlen(path);
    char *p = orn_xmalloc(n + 1);
    memcpy(p, path, n + 1);
    return p;
}

/* Build the line table: lines[i] is the offset of the first byte of line i + 1. A text
 * ending in '\n' has a last, empty line after it (that is where an end-of-file span
 * points). */
static void build_lines(OrnSource *s)
{
    uint32_t n = 1;
    const char *t = s->text, *end = s->text + s->len;
    for (const char *q = t; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++) n++;
    s->lines = orn_xmalloc((size_t)n * sizeof *s->lines);
    s->lines[0] = 0;
    uint32_t i = 1;
    for (const char *q = t; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++)
        s->lines[i++] = (uint32_t)(q - t) + 1;
    s->nlines = n;
}

/* Takes ownership of `text` (heap, len + 1 bytes, NUL-terminated). */
static void init_owned(OrnSource *s, const char *path, char *text, size_t len)
{
    s->path = dup_path(path ? path : "<input>");
    s->text = text;
    s->len = len;
    build_lines(s);
}

void orn_source_init(OrnSource *s, const char *path, const char *text, size_t len)
{
    /* source.h gives no way to fail here; a text too large for 32-bit offsets (never a
     * real script) is cut rather than corrupting every span after 4 GiB. */
    if (len > MAX_SOURCE) len = MAX_SOURCE;
    char *copy = orn_xmalloc(len + 1);
    if (len) memcpy(copy, text, len);
    copy[len] = 0;
    init_owned(s, path, copy, len);
}

void orn_source_free(OrnSource *s)
{
    if (!s) return;
    free((void *)s->path);
    free((void *)s->text);
    free(s->lines);
    memset(s, 0, sizeof *s);
}

int orn_source_read_file(OrnSource *s, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    /* The size is only a hint (pipes and /proc files report 0): read until EOF. */
    size_t cap = 4096;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        if ((unsigned long long)st.st_size > MAX_SOURCE) {
            fclose(f);
            errno = EFBIG;
            return -1;
        }
        cap = (size_t)st.st_size + 2; /* + NUL, + room to see EOF without growing */
    }
    char *buf = orn_xmalloc(cap);
    size_t len = 0;
    for (;;) {
        if (cap - len < 2) {
            if (cap > MAX_SOURCE) {
                free(buf);
                fclose(f);
                errno = EFBIG;
                return -1;
            }
            cap = cap * 2 > MAX_SOURCE + 2 ? MAX_SOURCE + 2 : cap * 2;
            buf = orn_xrealloc(buf, cap);
        }
        size_t n = fread(buf + len, 1, cap - 1 - len, f);
        len += n;
        if (n == 0) break;
    }
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return -1;
    }
    if (len > MAX_SOURCE) {
        free(buf);
        errno = EFBIG;
        return -1;
    }
    buf[len] = 0;
    init_owned(s, path, buf, len);
    return 0;
}

OrnSpan orn_source_span(const OrnSource *s, uint32_t lo, uint32_t hi)
{
    if (lo > s->len) lo = (uint32_t)s->len;
    if (hi < lo) hi = lo;
    if (hi > s->len) hi = (uint32_t)s->len;
    /* The last line whose start is <= lo. */
    uint32_t a = 0, b = s->nlines;
    while (b - a > 1) {
        uint32_t m = a + (b - a) / 2;
        if (s->lines[m] <= lo)
            a = m;
        else
            b = m;
    }
    return (OrnSpan){.lo = lo, .hi = hi, .line = a + 1, .col = lo - s->lines[a] + 1};
}

const char *orn_source_line(const OrnSource *s, uint32_t line, size_t *len)
{
    if (line == 0 || line > s->nlines) {
        *len = 0;
        return s->text + s->len;
    }
    const char *start = s->text + s->lines[line - 1];
    const char *end = line < s->nlines ? s->text + s->lines[line] - 1 : s->text + s->len;
    /* A CRLF file's lines end in '\r': not part of what the user sees. */
    if (end > start && end[-1] == '\r') end--;
    *len = (size_t)(end - start);
    return start;
}

OrnSpan orn_span_join(OrnSpan a, OrnSpan b)
{
    OrnSpan r = a.lo <= b.lo ? a : b;
    r.hi = a.hi > b.hi ? a.hi : b.hi;
    return r;
}
