/* strbuf.c: growable strings. */
#include "strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

void orn_buf_init(OrnBuf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void orn_buf_free(OrnBuf *b)
{
    free(b->data);
    orn_buf_init(b);
}

void orn_buf_clear(OrnBuf *b)
{
    b->len = 0;
    if (b->cap) b->data[0] = 0;
}

static void reserve(OrnBuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    b->data = orn_xrealloc(b->data, cap);
    b->cap = cap;
}

void orn_buf_put(OrnBuf *b, const char *s, size_t n)
{
    reserve(b, n);
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void orn_buf_putc(OrnBuf *b, char c)
{
    orn_buf_put(b, &c, 1);
}

void orn_buf_puts(OrnBuf *b, const char *s)
{
    orn_buf_put(b, s, strlen(s));
}

void orn_buf_vprintf(OrnBuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void orn_buf_printf(OrnBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    orn_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void orn_buf_json_str(OrnBuf *b, const char *s, size_t n)
{
    orn_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            orn_buf_puts(b, "\\\"");
            break;
        case '\\':
            orn_buf_puts(b, "\\\\");
            break;
        case '\n':
            orn_buf_puts(b, "\\n");
            break;
        case '\t':
            orn_buf_puts(b, "\\t");
            break;
        case '\r':
            orn_buf_puts(b, "\\r");
            break;
        default:
            if (c < 0x20)
                orn_buf_printf(b, "\\u%04x", c);
            else
                orn_buf_putc(b, (char)c);
        }
    }
    orn_buf_putc(b, '"');
}

/* Length of the well-formed UTF-8 sequence of a printable character at s[0..n), or 0
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    uint32_t cp = len == 2 ? (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3Fu)
                  : len == 3
                      ? (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3Fu)
                      : 0x10000; /* astral: never a control */
    if (cp < 0xA0) return 0;     /* C1 controls */
    if (cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
        (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029)
        return 0; /* bidirectional controls, line and paragraph separators */
    return len;
}

void orn_buf_escaped(OrnBuf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t k = c >= 0x20 && c < 0x7F ? 1 : c >= 0x80 ? utf8_printable(p + i, n - i) : 0;
        if (k) {
            orn_buf_put(b, s + i, k);
            i += k;
        } else {
            orn_buf_printf(b, "\\x%02x", c);
            i++;
        }
    }
}

static int ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* Is there a use of name at byte i of line? */
static int name_use_at(const char *p, size_t len, size_t i, const char *name, size_t nl, char open)
{
    if (!nl || i + nl > len || memcmp(p + i, name, nl) != 0 || (i > 0 && ident_char(p[i - 1])))
        return 0;
    size_t j = i + nl;
    while (j < len && p[j] == ' ') j++;
    return j < len && p[j] == open;
}

size_t orn_name_use(const char *line, size_t len, const char *name, size_t nl, char open, int nth)
{
    size_t first = len;
    int k = 0;
    for (size_t i = 0; i + nl <= len; i++) {
        if (!name_use_at(line, len, i, name, nl, open)) continue;
        if (k++ == nth) return i;
        if (first == len) first = i;
    }
    return first;
}

int orn_name_uses_before(const char *line, size_t len, const char *name, size_t nl, char open,
                         size_t off)
{
    int k = 0;
    for (size_t i = 0; i < off && i + nl <= len; i++)
        k += name_use_at(line, len, i, name, nl, open);
    return k;
}
