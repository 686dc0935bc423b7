/* progress.c: the progress line (progress.h). */
#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "strbuf.h"

typedef struct Task {
    char *label;
    double total, done, t0;
    double base; /* done at t0 */
    OrnProgressUnit unit;
} Task;

struct OrnProgress {
    OrnProgressOptions o;
    Task t[ORN_PROGRESS_DEPTH];
    int depth;
    int over;    /* tasks begun beyond ORN_PROGRESS_DEPTH: not shown */
    int shown;   /* the line is on the terminal */
    double next; /* no drawing before this time */
    OrnBuf line;
};

static double now(const OrnProgress *p)
{
    if (p->o.clock) return p->o.clock(p->o.clock_ud);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

OrnProgress *orn_progress_new(const OrnProgressOptions *o)
{
    OrnProgress *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->o = *o;
    if (!p->o.out) p->o.out = stderr;
    if (!(p->o.delay >= 0)) p->o.delay = 0;
    if (!(p->o.interval >= 0)) p->o.interval = 0;
    orn_buf_init(&p->line);
    return p;
}

void orn_progress_free(OrnProgress *p)
{
    if (!p) return;
    orn_progress_clear(p);
    for (int i = 0; i < p->depth; i++) free(p->t[i].label);
    orn_buf_free(&p->line);
    free(p);
}

void orn_progress_begin(OrnProgress *p, const char *label, double total, OrnProgressUnit unit)
{
    if (!p) return;
    if (p->depth == ORN_PROGRESS_DEPTH) {
        p->over++;
        return;
    }
    OrnBuf b;
    orn_buf_init(&b);
    orn_buf_escaped(&b, label ? label : "", label ? strlen(label) : 0);
    Task *t = &p->t[p->depth++];
    t->label = b.data ? b.data : calloc(1, 1);
    t->total = total;
    t->done = t->base = 0;
    t->unit = unit;
    t->t0 = now(p);
    if (p->depth == 1) p->next = t->t0 + p->o.delay;
}

void orn_progress_total(OrnProgress *p, double total)
{
    if (p && !p->over && p->depth) p->t[p->depth - 1].total = total;
}

void orn_progress_start_at(OrnProgress *p, double done)
{
    if (p && !p->over && p->depth) p->t[p->depth - 1].base = p->t[p->depth - 1].done = done;
}

/* ---------------------------------------------------------------- formatting */

/* 3 significant digits with a k, M, G, T suffix: "532", "12.3k", "1.21M". */
static void put_count(OrnBuf *b, double v)
{
    static const char suffix[] = " kMGT";
    int s = 0;
    while (v >= 999.5 && s < 4) v /= 1000, s++;
    if (s == 0 && v == (double)(int64_t)v)
        orn_buf_printf(b, "%lld", (long long)v);
    else
        orn_buf_printf(b, v < 9.995 ? "%.2f" : v < 99.95 ? "%.1f" : "%.0f", v);
    if (s) orn_buf_putc(b, suffix[s]);
}

/* A number of bytes in the unit that suits `scale`: 1024^u (u > 0: one decimal). */
static int byte_unit(double scale)
{
    int u = 0;
    while (scale >= 1023.95 && u < 4) scale /= 1024, u++;
    return u;
}

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};

static void put_bytes(OrnBuf *b, double v, int u)
{
    for (int i = 0; i < u; i++) v /= 1024;
    orn_buf_printf(b, u ? "%.1f" : "%.0f", v);
}

/* "54.0 MiB", "1.21M"; with a total: "54.0/120.0 MiB", "45.0k/1.21M" */
static void put_amount(OrnBuf *b, double v, double total, OrnProgressUnit unit)
{
    if (unit == ORN_PROGRESS_BYTES) {
        int u = byte_unit(total > v ? total : v);
        put_bytes(b, v, u);
        if (total > 0) {
            orn_buf_putc(b, '/');
            put_bytes(b, total, u);
        }
        orn_buf_printf(b, " %s", byte_units[u]);
        return;
    }
    put_count(b, v);
    if (total > 0) {
        orn_buf_putc(b, '/');
        put_count(b, total);
    }
}

/* "00:03", "1:02:03" */
static void put_time(OrnBuf *b, double s)
{
    long long t = s > 0 && s < 1e9 ? (long long)(s + 0.5) : 0;
    if (t >= 3600)
        orn_buf_printf(b, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
    else
        orn_buf_printf(b, "%02lld:%02lld", t / 60, t % 60);
}

/* One task: the innermost with all that fits (level 0: everything, 1: without the bar,
 * 2: without the amounts, 3: and the label's end only), the outer ones as "label:
 * done/total [elapsed<left]". */
static void put_task(OrnBuf *b, const Task *t, double at, int full, int level, size_t keep)
{
    double el = at - t->t0, done = t->done, total = t->total;
    double rate = el > 0 && done > t->base ? (done - t->base) / el : 0;
    size_t n = strlen(t->label);
    if (level < 3 || n <= keep) {
        orn_buf_printf(b, "%s: ", t->label);
    } else { /* "...file.orn:51: ", cut at a UTF-8 boundary */
        size_t from = n - (keep > 3 ? keep - 3 : 0);
        while (from < n && ((unsigned char)t->label[from] & 0xC0) == 0x80) from++;
        orn_buf_printf(b, "...%s: ", t->label + from);
    }
    if (!full) {
        put_amount(b, done, total, t->unit);
        orn_buf_puts(b, " [");
        put_time(b, el);
        if (total > 0 && rate > 0 && done <= total) {
            orn_buf_putc(b, '<');
            put_time(b, (total - done) / rate);
        }
        orn_buf_putc(b, ']');
        return;
    }
    if (total > 0) {
        double f = done / total;
        f = f < 0 ? 0 : f > 1 ? 1 : f;
        int cells = (int)(f * 100 + 1e-9), fill = cells / 10;
        orn_buf_printf(b, "%3d%%", cells);
        if (level == 0) {
            orn_buf_putc(b, '|');
            for (int i = 0; i < 10; i++)
                orn_buf_putc(b, i < fill                      ? '#'
                                : i == fill && cells % 10 > 0 ? (char)('0' + cells % 10)
                                                              : ' ');
            orn_buf_putc(b, '|');
        }
    }
    if (total <= 0) {
        put_amount(b, done, total, t->unit);
        if (t->unit == ORN_PROGRESS_ITEMS) orn_buf_puts(b, " it");
    } else if (level < 2) {
        orn_buf_putc(b, ' ');
        put_amount(b, done, total, t->unit);
    }
    orn_buf_puts(b, " [");
    put_time(b, el);
    if (total > 0) {
        orn_buf_putc(b, '<');
        if (rate > 0 && done <= total)
            put_time(b, (total - done) / rate);
        else
            orn_buf_puts(b, "?");
    }
    orn_buf_puts(b, ", ");
    if (rate <= 0)
        orn_buf_puts(b, t->unit == ORN_PROGRESS_BYTES ? "? B/s]" : "? it/s]");
    else if (t->unit == ORN_PROGRESS_BYTES) {
        int u = byte_unit(rate);
        put_bytes(b, rate, u);
        orn_buf_printf(b, " %s/s]", byte_units[u]);
    } else {
        put_count(b, rate);
        orn_buf_puts(b, " it/s]");
    }
}

static int columns(const OrnProgress *p)
{
    if (p->o.width > 0) return p->o.width;
    struct winsize ws;
    if (ioctl(fileno(p->o.out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

/* The tasks that have run `delay` seconds, in a line that fits: the innermost loses its
 * bar, then its amounts; then the outermost tasks are left out; then the innermost's label
 * loses its beginning; then the rest is cut (at a UTF-8 boundary). */
static void compose(OrnProgress *p, double at, int width)
{
    int last = 0; /* tasks [first, last) are shown */
    while (last < p->depth && at - p->t[last].t0 >= p->o.delay) last++;
    for (int first = 0; first < last; first++)
        for (int level = 0; level < 3; level++) {
            orn_buf_clear(&p->line);
            for (int i = first; i < last; i++) {
                if (i > first) orn_buf_puts(&p->line, " | ");
                put_task(&p->line, &p->t[i], at, i == last - 1, level, 0);
            }
            if (p->line.len < (size_t)width) return;
        }
    if (last > 0) { /* the innermost alone, its label shortened to what is left */
        size_t lab = strlen(p->t[last - 1].label);
        size_t rest = p->line.len - lab, room = (size_t)width - 1;
        if (rest + 6 <= room) {
            orn_buf_clear(&p->line);
            put_task(&p->line, &p->t[last - 1], at, 1, 3, room - rest);
            if (p->line.len < (size_t)width) return;
        }
    }
    size_t n = width > 1 ? (size_t)width - 1 : 1;
    while (n > 0 && n < p->line.len && ((unsigned char)p->line.data[n] & 0xC0) == 0x80) n--;
    if (n < p->line.len) {
        p->line.len = n;
        p->line.data[n] = '\0';
    }
}

void orn_progress_update(OrnProgress *p, double done)
{
    if (!p || p->over || !p->depth) return;
    p->t[p->depth - 1].done = done;
    double at = now(p);
    if (at < p->next) return;
    if (at - p->t[0].t0 < p->o.delay) {
        p->next = p->t[0].t0 + p->o.delay;
        return;
    }
    compose(p, at, columns(p));
    fputc('\r', p->o.out);
    fwrite(p->line.data ? p->line.data : "", 1, p->line.len, p->o.out);
    fputs("\033[K", p->o.out); /* erase what a longer line left */
    fflush(p->o.out);
    p->shown = 1;
    p->next = at + p->o.interval;
}

void orn_progress_clear(OrnProgress *p)
{
    if (!p) return;
    if (p->shown) {
        fputs("\r\033[K", p->o.out);
        fflush(p->o.out);
        p->shown = 0;
    }
    if (p->depth) {
        double at = now(p), due = p->t[0].t0 + p->o.delay;
        p->next = at > due ? at : due;
    }
}

void orn_progress_end(OrnProgress *p)
{
    if (!p) return;
    if (p->over) {
        p->over--;
        return;
    }
    if (!p->depth) return;
    free(p->t[--p->depth].label);
    if (!p->depth) orn_progress_clear(p);
}

int orn_progress_shown(const OrnProgress *p)
{
    return p && p->shown;
}
