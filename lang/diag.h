/* diag.h: the one diagnostic sink.
 *
 * Diagnostics are printed as they are reported, clang style:
 *   file:line:col: error: message
 *      14 |         loss = e * e
 *         |         ^~~~
 * A note reported right after an error or warning belongs to it. After `max_errors` errors
 * a final "too many errors" is printed and further diagnostics are dropped (the count still
 * grows, so callers can stop). Library code never exits. */
#ifndef ORN_DIAG_H
#define ORN_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "source.h"

typedef enum { ORN_ERROR, ORN_WARNING, ORN_NOTE } OrnDiagKind;

typedef struct OrnDiags {
    const OrnSource *src;
    FILE *out; /* where diagnostics go (stderr by default); NULL: count only */
    int errors, warnings;
    int ices;              /* internal compiler errors (also counted in errors): exit 3 */
    int max_errors;        /* 20 by default */
    bool werror;           /* warnings count as errors */
    bool suppressed;       /* the last error/warning was dropped: drop its notes too */
    int32_t line_shift;    /* added to the line numbers shown (the REPL: a file's text placed
                              after the session's) */
    uint32_t quiet_before; /* warnings (and their notes) at bytes before this are counted,
                              not printed (the REPL: text it accepted before) */
} OrnDiags;

void orn_diags_init(OrnDiags *d, const OrnSource *src, FILE *out);
void orn_diag(OrnDiags *d, OrnDiagKind kind, OrnSpan span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void orn_vdiag(OrnDiags *d, OrnDiagKind kind, OrnSpan span, const char *fmt, va_list ap);
/* A note with no location (printed as "note: ..."). */
void orn_note_plain(OrnDiags *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An internal compiler error at span: reported as "internal compiler error: ..." and
 * counted as an error. Callers then unwind; the driver exits 3. */
void orn_ice(OrnDiags *d, OrnSpan span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool orn_diags_failed(const OrnDiags *d); /* errors > 0, or warnings > 0 with werror */
/* Levenshtein distance of two names ("did you mean" hints); 99 for names over 62 bytes. */
int orn_edit_distance(const char *a, const char *b);
/* The statement keyword `word` looks like a misspelling of (edit distance 1 or 2, fewer
 * edits than the word has bytes: "parallel_fro", "whiel", "retrun"), or NULL. The parser
 * and sema use it for "unknown statement 'X': did you mean 'Y'?". */
const char *orn_keyword_like(const char *word);

#endif
