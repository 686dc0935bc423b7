/* test_progress.c: the progress line (support/progress.h) on a fake clock: when it
 * appears, how often it is redrawn, that it is erased before other output and at the end,
 * that it fits the width, nesting, and what it says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "progress.h"

typedef struct Fake {
    double t;
} Fake;

static double fake_clock(void *ud)
{
    return ((Fake *)ud)->t;
}

typedef struct Term {
    char *buf;
    size_t len;
    FILE *f;
} Term;

static OrnProgress *open_line(Term *tm, Fake *fk, int width)
{
    tm->buf = NULL;
    tm->len = 0;
    tm->f = open_memstream(&tm->buf, &tm->len);
    OrnProgressOptions o = {.out = tm->f,
                            .delay = 2.0,
                            .interval = 0.25,
                            .width = width,
                            .clock = fake_clock,
                            .clock_ud = fk};
    return orn_progress_new(&o);
}

/* What was written since the last call (the stream flushes at every draw). */
static char *take(Term *tm, size_t *from)
{
    fflush(tm->f);
    size_t n = tm->len - *from;
    char *s = malloc(n + 1);
    memcpy(s, tm->buf + *from, n);
    s[n] = '\0';
    *from = tm->len;
    return s;
}

/* The text of the last drawing in s: after the last '\r', before "\033[K". */
static void last_line(const char *s, char *out, size_t n)
{
    const char *r = strrchr(s, '\r');
    r = r ? r + 1 : s;
    const char *e = strstr(r, "\033[K");
    size_t len = e ? (size_t)(e - r) : strlen(r);
    if (len >= n) len = n - 1;
    memcpy(out, r, len);
    out[len] = '\0';
}

static void test_delay_interval_clear(void)
{
    Fake fk = {100.0};
    Term tm;
    size_t at = 0;
    char line[512];
    OrnProgress *p = open_line(&tm, &fk, 120);
    orn_progress_begin(p, "parallel_for x.orn:3", 200, ORN_PROGRESS_ITEMS);
    fk.t = 101.0;
    orn_progress_update(p, 10);
    char *s = take(&tm, &at);
    CHECK(s[0] == '\0'); /* younger than the delay: nothing */
    CHECK(!orn_progress_shown(p));
    free(s);
    fk.t = 102.0;
    orn_progress_update(p, 100);
    s = take(&tm, &at);
    CHECK(s[0] == '\r' && strstr(s, "\033[K") != NULL);
    last_line(s, line, sizeof line);
    CHECK(strcmp(line, "parallel_for x.orn:3:  50%|#####     | 100/200 [00:02<00:02, 50 it/s]") ==
          0);
    if (strcmp(line, "parallel_for x.orn:3:  50%|#####     | 100/200 [00:02<00:02, 50 it/s]"))
        fprintf(stderr, "line: '%s'\n", line);
    CHECK(orn_progress_shown(p));
    free(s);
    fk.t = 102.1; /* within the interval: no redraw */
    orn_progress_update(p, 110);
    s = take(&tm, &at);
    CHECK(s[0] == '\0');
    free(s);
    fk.t = 102.3;
    orn_progress_update(p, 115);
    s = take(&tm, &at);
    last_line(s, line, sizeof line);
    CHECK(strstr(line, " 57%|#####7    | 115/200") != NULL);
    free(s);
    /* other output: erased now, drawn again at the next update however soon */
    orn_progress_clear(p);
    s = take(&tm, &at);
    CHECK(strcmp(s, "\r\033[K") == 0);
    CHECK(!orn_progress_shown(p));
    free(s);
    orn_progress_clear(p); /* nothing shown: nothing written */
    s = take(&tm, &at);
    CHECK(s[0] == '\0');
    free(s);
    fk.t = 102.31;
    orn_progress_update(p, 116);
    s = take(&tm, &at);
    CHECK(strstr(s, "116/200") != NULL);
    free(s);
    orn_progress_end(p);
    s = take(&tm, &at);
    CHECK(strcmp(s, "\r\033[K") == 0);
    CHECK(!orn_progress_shown(p));
    free(s);
    /* a task that ends before the delay never shows */
    orn_progress_begin(p, "load(a.bin)", 0, ORN_PROGRESS_BYTES);
    fk.t = 103.0;
    orn_progress_update(p, 5);
    orn_progress_end(p);
    s = take(&tm, &at);
    CHECK(s[0] == '\0');
    free(s);
    orn_progress_free(p);
    fclose(tm.f);
    free(tm.buf);
}

static void test_units_and_unknown_total(void)
{
    Fake fk = {0};
    Term tm;
    size_t at = 0;
    char line[512];
    OrnProgress *p = open_line(&tm, &fk, 200);
    orn_progress_begin(p, "load_triplets(r.txt)", 0, ORN_PROGRESS_BYTES);
    orn_progress_total(p, 120.0 * 1048576);
    fk.t = 3.0;
    orn_progress_update(p, 54.0 * 1048576);
    char *s = take(&tm, &at);
    last_line(s, line, sizeof line);
    CHECK(strcmp(line, "load_triplets(r.txt):  45%|####5     | 54.0/120.0 MiB [00:03<00:04, "
                       "18.0 MiB/s]") == 0);
    if (strstr(line, "MiB/s]") == NULL) fprintf(stderr, "line: '%s'\n", line);
    free(s);
    orn_progress_end(p);
    free(take(&tm, &at));
    /* a while loop: a count and a rate, no fraction, no time left */
    orn_progress_begin(p, "while w.orn:7", 0, ORN_PROGRESS_ITEMS);
    fk.t = 6.0;
    orn_progress_update(p, 1500);
    s = take(&tm, &at);
    last_line(s, line, sizeof line);
    CHECK(strcmp(line, "while w.orn:7: 1.50k it [00:03, 500 it/s]") == 0);
    if (strcmp(line, "while w.orn:7: 1.50k it [00:03, 500 it/s]")) fprintf(stderr, "'%s'\n", line);
    free(s);
    orn_progress_end(p);
    free(take(&tm, &at));
    /* resumed in mid-loop: the rate counts from where the run started */
    orn_progress_begin(p, "for f.orn:2", 20, ORN_PROGRESS_ITEMS);
    orn_progress_start_at(p, 10);
    fk.t = 16.0;
    orn_progress_update(p, 15);
    s = take(&tm, &at);
    last_line(s, line, sizeof line);
    CHECK(strstr(line, "15/20 [00:10<00:10, 0.50 it/s]") != NULL);
    free(s);
    orn_progress_free(p); /* erases what is shown */
    fflush(tm.f);
    CHECK(tm.len >= 4 && strcmp(tm.buf + tm.len - 4, "\r\033[K") == 0);
    fclose(tm.f);
    free(tm.buf);
}

static void test_nesting_and_width(void)
{
    Fake fk = {0};
    Term tm;
    size_t at = 0;
    char line[512];
    OrnProgress *p = open_line(&tm, &fk, 200);
    orn_progress_begin(p, "for sgd_mf.orn:48", 20, ORN_PROGRESS_ITEMS);
    fk.t = 4.0;
    orn_progress_update(p, 4);
    orn_progress_begin(p, "parallel_for sgd_mf.orn:51", 1000, ORN_PROGRESS_ITEMS);
    fk.t = 5.0;
    orn_progress_update(p, 100);
    char *s = take(&tm, &at);
    last_line(s, line, sizeof line);
    /* the inner loop has not run for the delay yet: the outer one alone, in full */
    CHECK(strncmp(line, "for sgd_mf.orn:48:  20%|##", 26) == 0);
    CHECK(strstr(line, "parallel_for") == NULL);
    free(s);
    fk.t = 7.0;
    orn_progress_update(p, 500);
    s = take(&tm, &at);
    last_line(s, line, sizeof line);
    CHECK(strcmp(line, "for sgd_mf.orn:48: 4/20 [00:07<00:28] | parallel_for sgd_mf.orn:51:  "
                       "50%|#####     | 500/1.00k [00:03<00:03, 167 it/s]") == 0);
    if (!strstr(line, " | ")) fprintf(stderr, "'%s'\n", line);
    free(s);
    orn_progress_end(p); /* the inner ends: the line stays until the outer's next update */
    s = take(&tm, &at);
    CHECK(s[0] == '\0');
    free(s);
    orn_progress_free(p);
    fclose(tm.f);
    free(tm.buf);

    /* narrow terminals: the bar goes, then the amounts, then the outer tasks, then a cut;
     * never a line as wide as the terminal (it would wrap) */
    for (int w = 10; w <= 200; w += 7) {
        fk.t = 0;
        at = 0;
        p = open_line(&tm, &fk, w);
        orn_progress_begin(p, "for a_rather_long_name_of_a_file.orn:48", 20, ORN_PROGRESS_ITEMS);
        orn_progress_begin(p, "parallel_for a_rather_long_name_of_a_file.orn:51", 1e6,
                           ORN_PROGRESS_ITEMS);
        fk.t = 3.0;
        orn_progress_update(p, 123456);
        s = take(&tm, &at);
        last_line(s, line, sizeof line);
        CHECK(strlen(line) < (size_t)w);
        CHECK(strlen(line) > 0);
        if (getenv("SHOW")) fprintf(stderr, "%3d %s\n", w, line);
        if (w >= 150) CHECK(strstr(line, " | ") != NULL);
        if (w >= 94 && w < 143) CHECK(strncmp(line, "parallel_for a_rather", 21) == 0);
        /* the label gives way before the numbers */
        if (w >= 50) CHECK(strstr(line, "12%") && strstr(line, "[00:03<00:21, 41.2k it/s]"));
        free(s);
        orn_progress_free(p);
        fclose(tm.f);
        free(tm.buf);
    }
}

static void test_depth_and_null(void)
{
    Fake fk = {0};
    Term tm;
    size_t at = 0;
    OrnProgress *p = open_line(&tm, &fk, 300);
    for (int i = 0; i < ORN_PROGRESS_DEPTH + 2; i++) {
        char label[32];
        snprintf(label, sizeof label, "task%d", i);
        orn_progress_begin(p, label, 10, ORN_PROGRESS_ITEMS);
    }
    fk.t = 10;
    orn_progress_update(p, 3); /* a task beyond the depth: not shown, not counted */
    char *s = take(&tm, &at);
    CHECK(s[0] == '\0');
    free(s);
    for (int i = 0; i < 2; i++) orn_progress_end(p);
    orn_progress_update(p, 3);
    s = take(&tm, &at);
    CHECK(strstr(s, "task3: ") != NULL && strstr(s, "task4") == NULL);
    free(s);
    for (int i = 0; i < ORN_PROGRESS_DEPTH; i++) orn_progress_end(p);
    s = take(&tm, &at);
    CHECK(strcmp(s, "\r\033[K") == 0);
    free(s);
    orn_progress_end(p); /* one too many: nothing happens */
    /* control bytes in a label are escaped: the line cannot move the cursor */
    orn_progress_begin(p, "load(\033[2Jx\n.txt)", 0, ORN_PROGRESS_BYTES);
    fk.t = 20;
    orn_progress_update(p, 1);
    s = take(&tm, &at);
    CHECK(strstr(s, "\\x1b[2Jx\\x0a.txt") != NULL);
    CHECK(strchr(s, '\n') == NULL);
    free(s);
    orn_progress_free(p);
    fclose(tm.f);
    free(tm.buf);
    /* off: every call accepts NULL */
    orn_progress_begin(NULL, "x", 1, ORN_PROGRESS_ITEMS);
    orn_progress_total(NULL, 2);
    orn_progress_start_at(NULL, 1);
    orn_progress_update(NULL, 1);
    orn_progress_clear(NULL);
    orn_progress_end(NULL);
    orn_progress_free(NULL);
    CHECK(!orn_progress_shown(NULL));
}

int main(void)
{
    test_delay_interval_clear();
    test_units_and_unknown_total();
    test_nesting_and_width();
    test_depth_and_null();
    return check_report("test_progress");
}
