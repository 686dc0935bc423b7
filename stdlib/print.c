/* print.c: print, printf and eprint for generated programs. print and printf write on
 * rank 0 only; eprint on every rank, to stderr, prefixed "[rank R] ". Output is flushed
 * after every call so that progress lines appear as they happen under mpirun; rank 0's
 * progress line (monitor.c) is erased first, so the two never share a line. */
#include <stdarg.h>
#include <stdlib.h>

#include "monitor.h"
#include "orn_std.h"
#include "progress.h"

void orn_std_fmt_float(char *buf, size_t size, double v, int is_f32)
{
    if (isnan(v)) {
        snprintf(buf, size, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
        return;
    }
    /* the fewest significant digits that read back exactly */
    int max = is_f32 ? 8 : 16, p = 0;
    char e[64];
    for (p = 0; p <= max; p++) {
        snprintf(e, sizeof e, "%.*e", p, v);
        if (is_f32 ? strtof(e, NULL) == (float)v : strtod(e, NULL) == v) break;
    }
    if (p > max) p = max;
    const char *ep = strchr(e, 'e');
    int exp10 = ep ? atoi(ep + 1) : 0;
    /* positional notation for moderate exponents, as Python and Julia print floats */
    if (exp10 >= -4 && exp10 < 16) {
        int decimals = p - exp10 > 0 ? p - exp10 : 0;
        snprintf(buf, size, "%.*f", decimals, v);
        if (!strchr(buf, '.')) {
            size_t n = strlen(buf);
            if (n + 2 < size) memcpy(buf + n, ".0", 3);
        }
    } else {
        snprintf(buf, size, "%s", e);
    }
}

/* Returns the number of lines written (the newline at the end, and those in strings). With
 * f NULL it writes nothing: the arguments are only taken, and the strings it owns freed. */
static int64_t put_args(FILE *f, const char *types, va_list ap)
{
    int64_t lines = 1;
    char buf[64];
    for (const char *t = types; *t; t++) {
        const char *piece = "";
        char *owned = NULL;
        switch (*t) {
        case 'b':
            piece = va_arg(ap, int) ? "true" : "false";
            break;
        case 'i':
            snprintf(buf, sizeof buf, "%" PRId64, va_arg(ap, int64_t));
            piece = buf;
            break;
        case 'f':
        case 'g':
            orn_std_fmt_float(buf, sizeof buf, va_arg(ap, double), *t == 'g');
            piece = buf;
            break;
        case 's':
            piece = va_arg(ap, const char *);
            break;
        case 'S':
            piece = owned = va_arg(ap, char *);
            break;
        default:
            break;
        }
        for (const char *c = strchr(piece, '\n'); c; c = strchr(c + 1, '\n')) lines++;
        if (f) {
            if (t != types) fputc(' ', f);
            fputs(piece, f);
        }
        free(owned);
    }
    if (f) fputc('\n', f);
    return lines;
}

void orn_std_print(OrnStdProg *p, const char *types, ...)
{
    if (p->rank != 0) {
        if (strchr(types, 'S')) { /* the arrays' texts, made on every rank */
            va_list ap;
            va_start(ap, types);
            put_args(NULL, types, ap);
            va_end(ap);
        }
        return;
    }
    orn_std_settle(p);
    orn_progress_clear(p->progress);
    va_list ap;
    va_start(ap, types);
    p->out_lines += put_args(stdout, types, ap);
    va_end(ap);
    fflush(stdout);
}

void orn_std_eprint(OrnStdProg *p, const char *types, ...)
{
    va_list ap;
    orn_progress_clear(p->progress);
    /* the whole line in one write, so that ranks' lines do not interleave */
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    FILE *f = m ? m : stderr;
    va_start(ap, types);
    fprintf(f, "[rank %d] ", p->rank);
    put_args(f, types, ap);
    va_end(ap);
    if (m) {
        fclose(m);
        fwrite(line, 1, len, stderr);
        free(line);
    }
    fflush(stderr);
}

void orn_std_printf(OrnStdProg *p, const char *fmt, ...)
{
    if (p->rank != 0) return;
    orn_std_settle(p);
    /* formatted first, so that its lines can be counted (checkpoints record them) */
    char small[1024], *out = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof small && (out = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(out, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    size_t len = out ? (size_t)n : sizeof small - 1;
    if (!out) out = small;
    for (size_t i = 0; i < len; i++) p->out_lines += out[i] == '\n';
    orn_progress_clear(p->progress);
    fwrite(out, 1, len, stdout);
    if (out != small) free(out);
    fflush(stdout);
}
