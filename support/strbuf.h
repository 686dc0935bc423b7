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

/* Uses of a name on a line of source text (len bytes): `name[` (or `name(` with open '('),
 * name (nl bytes) a whole word, blanks allowed before the bracket. orn_name_use: the byte
 * offset of the nth use (0: the first), of the first where the line has fewer, or len where
 * it has none (a run-time error's caret, runtime/srcline.c). orn_name_uses_before: the uses
 * that start before byte off (which of them an access is, codegen). */
size_t orn_name_use(const char *line, size_t len, const char *name, size_t nl, char open, int nth);
int orn_name_uses_before(const char *line, size_t len, const char *name, size_t nl, char open,
                         size_t off);

#endif
