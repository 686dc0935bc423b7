/* strbuf.c: growable strings. */
#include "strbuf.h"

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
