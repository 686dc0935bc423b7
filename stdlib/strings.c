/* strings.c: the strings a program builds with `+` and str(x) (orn_std.h). Each is a new
 * allocation recorded in the program context and freed by orn_std_finish: strings are
 * immutable and assignment shares them, so no single variable owns one. Sema allows these
 * operations only outside parallel_for, so a loop body never makes one per iteration. */
#include "orn_std.h"

static const char *keep(OrnStdProg *p, char *s, int line)
{
    if (!s) orn_std_die(p, line, "out of memory building a string");
    if (p->nstrs == p->capstrs) {
        int64_t cap = p->capstrs ? 2 * p->capstrs : 64;
        char **n = realloc(p->strs, (size_t)cap * sizeof *n);
        if (!n) {
            free(s);
            orn_std_die(p, line, "out of memory building a string");
        }
        p->strs = n;
        p->capstrs = cap;
    }
    p->strs[p->nstrs++] = s;
    return s;
}

const char *orn_std_str_cat(OrnStdProg *p, const char *a, const char *b, int line)
{
    if (!a) a = "";
    if (!b) b = "";
    size_t na = strlen(a), nb = strlen(b);
    char *s = malloc(na + nb + 1);
    if (s) {
        memcpy(s, a, na);
        memcpy(s + na, b, nb + 1);
    }
    return keep(p, s, line);
}

const char *orn_std_str_i64(OrnStdProg *p, int64_t v, int line)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return keep(p, strdup(buf), line);
}

const char *orn_std_str_float(OrnStdProg *p, double v, int is_f32, int line)
{
    char buf[64];
    orn_std_fmt_float(buf, sizeof buf, v, is_f32);
    return keep(p, strdup(buf), line);
}

/* ---------------------------------------------------------------- numbers from text */

static int blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The text as a message shows it: quoted, cut at 40 bytes. */
static void die_parse(OrnStdProg *p, const char *conv, const char *s, const char *why, int line)
{
    size_t n = strlen(s);
    orn_std_die(p, line, "%s(\"%.40s%s\"): %s", conv, s, n > 40 ? "..." : "", why);
}

int64_t orn_std_str_to_int(OrnStdProg *p, const char *s, int bits, int line)
{
    const char *conv = bits == 32 ? "i32" : "i64";
    if (!s) s = "";
    const char *q = s;
    while (blank(*q)) q++;
    int neg = *q == '-';
    if (*q == '-' || *q == '+') q++;
    if (*q < '0' || *q > '9') die_parse(p, conv, s, "not an integer", line);
    uint64_t v = 0, lim = bits == 32 ? (uint64_t)INT32_MAX + neg : (uint64_t)INT64_MAX + neg;
    for (; *q >= '0' && *q <= '9'; q++) {
        unsigned d = (unsigned)(*q - '0');
        if (v > (lim - d) / 10) die_parse(p, conv, s, "out of range", line);
        v = v * 10 + d;
    }
    while (blank(*q)) q++;
    if (*q) die_parse(p, conv, s, "not an integer", line);
    return neg ? (int64_t)(0 - v) : (int64_t)v;
}

/* A float read by strtof (is_f32: rounded once, to f32, and exact as a double) or strtod,
 * with nothing but blanks after it. */
static double str_to_float(OrnStdProg *p, const char *s, int is_f32, int line)
{
    if (!s) s = "";
    char *end;
    double v = is_f32 ? (double)strtof(s, &end) : strtod(s, &end);
    const char *q = end;
    while (blank(*q)) q++;
    if (end == s || *q) die_parse(p, is_f32 ? "f32" : "f64", s, "not a number", line);
    return v;
}

float orn_std_str_to_f32(OrnStdProg *p, const char *s, int line)
{
    return (float)str_to_float(p, s, 1, line);
}

double orn_std_str_to_f64(OrnStdProg *p, const char *s, int line)
{
    return str_to_float(p, s, 0, line);
}
