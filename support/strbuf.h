/* strbuf.h: a growable byte string on the heap (for diagnostics, dumps, JSON, codegen). */
#ifndef ORN_STRBUF_H
#define ORN_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct OrnBuf {
    char *data; /* always NUL-terminated when cap > 0 */
    size_t len, cap;
} OrnBuf;

void orn_buf_init(OrnBuf *b);
void orn_buf_free(OrnBuf *b);
void orn_buf_clear(OrnBuf *b);
void orn_buf_putc(OrnBuf *b, char c);
void orn_buf_put(OrnBuf *b, const char *s, size_t n);
void orn_buf_puts(OrnBuf *b, const char *s);
void orn_buf_printf(OrnBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void orn_buf_vprintf(OrnBuf *b, const char *fmt, va_list ap);
/* Append s as a JSON string literal, quotes included. */
void orn_buf_json_str(OrnBuf *b, const char *s, size_t n);
/* Append s for a message on a terminal: printable ASCII and well-formed UTF-8 as they are,
 * every other byte (control characters, DEL, C1 controls, bidirectional overrides, bytes
 * of malformed UTF-8) as \xNN. Idempotent: escaping escaped text changes nothing. */
void orn_buf_escaped(OrnBuf *b, const char *s, size_t n);

#endif
