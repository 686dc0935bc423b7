/* diag.c: the diagnostic sink (docs/language.md section 11).
 *
 * Output is always text, whatever the source holds: the echoed source line shows control
 * characters and bytes that are not valid UTF-8 as '?', so a NUL or a stray 0xff in a
 * script cannot corrupt a terminal or a golden file. Valid UTF-8 (inside strings and
 * comments) is echoed as is and counts as one column in the caret line. Each diagnostic
 * is built in a buffer and written with one fwrite so concurrent writers do not interleave
 * within a diagnostic. */
#include "diag.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* Lines longer than this are shown as a window around the caret. */
enum { WIDE_LINE = 400, WINDOW_BEFORE = 80, WINDOW_LEN = 240, GUTTER_MIN = 5 };

void orn_diags_init(OrnDiags *d, const OrnSource *src, FILE *out)
{
    memset(d, 0, sizeof *d);
    d->src = src;
    d->out = out;
    d->max_errors = 20;
}

/* Length of the valid UTF-8 sequence that starts at s[0] (s[0] >= 0x80), or 0 if the
 * bytes are not one (overlong forms, surrogates and code points above U+10FFFF are not). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

/* Append n bytes of s, with control characters and invalid UTF-8 replaced by '?'. Tabs
 * are kept when keep_tabs (source lines), else shown as '?' too. */
static void put_text(OrnBuf *b, const char *s, size_t n, bool keep_tabs)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c >= 0x80) {
            size_t k = utf8_len(u + i, n - i);
            if (k) {
                orn_buf_put(b, s + i, k);
                i += k;
                continue;
            }
            orn_buf_putc(b, '?');
        } else if (c == '\t' && keep_tabs) {
            orn_buf_putc(b, '\t');
        } else if (c < 0x20 || c == 0x7f) {
            orn_buf_putc(b, '?');
        } else {
            orn_buf_putc(b, (char)c);
        }
        i++;
    }
}

static int ndigits(uint32_t v)
{
    int n = 1;
    while (v >= 10) v /= 10, n++;
    return n;
}

/* The source line of span, then the caret line: '^' under span.lo, '~' under the rest of
 * the span on that line. Padding copies the tabs of the source line so the caret lines up
 * whatever the tab width. */
static void put_snippet(OrnBuf *b, const OrnSource *src, OrnSpan span, int32_t shift)
{
    if (!src || span.line == 0 || span.line > src->nlines) return;
    size_t len;
    const char *text = orn_source_line(src, span.line, &len);
    const unsigned char *u = (const unsigned char *)text;
    size_t start = src->lines[span.line - 1];

    /* Caret range [c0, c1) relative to the line. A span whose offsets do not fall on its
     * own line (a caller built it by hand) falls back to its column. */
    size_t c0;
    if (span.lo >= start && span.lo <= start + len)
        c0 = span.lo - start;
    else
        c0 = span.col > 0 && span.col - 1 <= len ? span.col - 1 : len;
    size_t c1 = span.hi > start + c0 ? span.hi - start : c0;
    if (c1 > len) c1 = len;

    size_t w0 = 0, w1 = len;
    if (len > WIDE_LINE) {
        w0 = c0 > WINDOW_BEFORE ? c0 - WINDOW_BEFORE : 0;
        while (w0 > 0 && (u[w0] & 0xc0) == 0x80) w0--; /* not inside a UTF-8 sequence */
        w1 = w0 + WINDOW_LEN < len ? w0 + WINDOW_LEN : len;
        while (w1 < len && (u[w1] & 0xc0) == 0x80) w1++;
        if (c1 > w1) c1 = w1;
    }

    uint32_t shown = (uint32_t)((int64_t)span.line + shift);
    int width = ndigits(shown);
    if (width < GUTTER_MIN) width = GUTTER_MIN;
    OrnBuf mark;
    orn_buf_init(&mark);
    orn_buf_printf(b, "%*u | ", width, shown);
    orn_buf_printf(&mark, "%*s | ", width, "");
    if (w0 > 0) {
        orn_buf_puts(b, "...");
        orn_buf_puts(&mark, "   ");
    }
    bool caret = false;
    for (size_t i = w0; i < w1;) {
        size_t k = 1;
        if (u[i] >= 0x80) {
            size_t n = utf8_len(u + i, w1 - i);
            if (n) k = n;
        }
        put_text(b, text + i, k, true);
        if (i + k <= c0)
            orn_buf_putc(&mark, u[i] == '\t' ? '\t' : ' ');
        else if (!caret)
            orn_buf_putc(&mark, '^'), caret = true;
        else if (i < c1)
            orn_buf_putc(&mark, '~');
        i += k;
    }
    if (!caret) orn_buf_putc(&mark, '^'); /* the span starts at the end of the line */
    if (w1 < len) orn_buf_puts(b, "...");
    orn_buf_putc(b, '\n');
    orn_buf_put(b, mark.data, mark.len);
    orn_buf_putc(b, '\n');
    orn_buf_free(&mark);
}

static void emit(OrnDiags *d, const char *severity, OrnSpan span, bool located, const char *suffix,
                 const char *fmt, va_list ap)
{
    OrnBuf msg, b;
    orn_buf_init(&msg);
    orn_buf_init(&b);
    orn_buf_vprintf(&msg, fmt, ap);
    if (located && d->src && span.line > 0)
        orn_buf_printf(&b, "%s:%u:%u: ", d->src->path,
                       (uint32_t)((int64_t)span.line + d->line_shift), span.col);
    orn_buf_printf(&b, "%s: ", severity);
    put_text(&b, msg.data ? msg.data : "", msg.len, false);
    orn_buf_puts(&b, suffix);
    orn_buf_putc(&b, '\n');
    if (located) put_snippet(&b, d->src, span, d->line_shift);
    fwrite(b.data, 1, b.len, d->out);
    fflush(d->out);
    orn_buf_free(&msg);
    orn_buf_free(&b);
}

void orn_vdiag(OrnDiags *d, OrnDiagKind kind, OrnSpan span, const char *fmt, va_list ap)
{
    if (kind == ORN_NOTE) {
        if (!d->suppressed && d->out) emit(d, "note", span, true, "", fmt, ap);
        return;
    }
    if (kind == ORN_ERROR)
        d->errors++;
    else
        d->warnings++;
    /* Past the limit everything is dropped (counted, not printed); the limit message is
     * printed once, when the first error over the limit arrives. */
    if (d->max_errors > 0 && d->errors > d->max_errors) {
        if (kind == ORN_ERROR && d->errors == d->max_errors + 1 && d->out) {
            fputs("error: too many errors emitted, stopping now\n", d->out);
            fflush(d->out);
        }
        d->suppressed = true;
        return;
    }
    /* a warning about text the REPL accepted before: said then already */
    d->suppressed = kind == ORN_WARNING && span.line > 0 && span.lo < d->quiet_before;
    if (!d->out || d->suppressed) return;
    /* -Werror: the warning is printed as an error (still counted as a warning, which
     * orn_diags_failed turns into failure) and says why it is one. */
    bool as_error = kind == ORN_ERROR || d->werror;
    emit(d, as_error ? "error" : "warning", span, true,
         kind == ORN_WARNING && d->werror ? " [-Werror]" : "", fmt, ap);
}

void orn_diag(OrnDiags *d, OrnDiagKind kind, OrnSpan span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    orn_vdiag(d, kind, span, fmt, ap);
    va_end(ap);
}

void orn_note_plain(OrnDiags *d, const char *fmt, ...)
{
    if (d->suppressed || !d->out) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, "note", (OrnSpan){0}, false, "", fmt, ap);
    va_end(ap);
}

void orn_ice(OrnDiags *d, OrnSpan span, const char *fmt, ...)
{
    d->errors++;
    d->ices++;
    if (!d->out) return;
    /* Never suppressed: an internal error must be visible even past the error limit. */
    va_list ap;
    va_start(ap, fmt);
    emit(d, "internal compiler error", span, true, "", fmt, ap);
    va_end(ap);
}

bool orn_diags_failed(const OrnDiags *d)
{
    return d->errors > 0 || (d->werror && d->warnings > 0);
}

int orn_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 62 || lb > 62) return 99;
    int row[64], prev[64];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, row, (lb + 1) * sizeof *row);
    }
    return prev[lb];
}

const char *orn_keyword_like(const char *w)
{
    static const char *const kw[] = {"parallel_for", "for",   "while",  "if",     "elif",
                                     "else",         "fn",    "return", "break",  "continue",
                                     "const",        "param", "dist",   "extern", "end"};
    /* other languages' words for ours, which no edit distance finds */
    static const char *const alias[][2] = {
        {"function", "fn"}, {"def", "fn"}, {"func", "fn"}, {"elseif", "elif"}, {"elsif", "elif"}};
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(w, alias[i][0]) == 0) return alias[i][1];
    const char *best = NULL;
    int bd = 3, bl = 99;
    size_t lw = strlen(w);
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
        int d = orn_edit_distance(w, kw[i]);
        int l = abs((int)strlen(kw[i]) - (int)lw);
        if (d > 0 && d <= 2 && (size_t)d < lw && (d < bd || (d == bd && l < bl))) {
            best = kw[i];
            bd = d;
            bl = l;
        }
    }
    return best;
}
