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
