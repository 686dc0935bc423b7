/* source.h: one source text and its spans.
 *
 * A span is a half-open byte range [lo, hi) of the source plus the 1-based line and column
 * (in bytes) of lo. Spans are small values, copied freely. */
#ifndef ORN_SOURCE_H
#define ORN_SOURCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct OrnSpan {
    uint32_t lo, hi;
    uint32_t line, col;
} OrnSpan;

typedef struct OrnSource {
    const char *path; /* as given by the user, for messages */
    const char *text; /* the bytes, NUL-terminated (text[len] == 0) */
    size_t len;
    uint32_t *lines; /* byte offset of the start of each line; heap */
    uint32_t nlines;
} OrnSource;

/* Copies text (it may contain NULs; len bytes are used). */
void orn_source_init(OrnSource *s, const char *path, const char *text, size_t len);
void orn_source_free(OrnSource *s);
/* Read a whole file; returns 0, or -1 with errno set. */
int orn_source_read_file(OrnSource *s, const char *path);
/* The span of bytes [lo, hi) with line and column filled in. */
OrnSpan orn_source_span(const OrnSource *s, uint32_t lo, uint32_t hi);
/* The text of 1-based line `line` without its newline. */
const char *orn_source_line(const OrnSource *s, uint32_t line, size_t *len);
/* A span covering both a and b. */
OrnSpan orn_span_join(OrnSpan a, OrnSpan b);

#endif
