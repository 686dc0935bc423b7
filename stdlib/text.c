/* text.c: load_text(path), the lines of a text file as a local (replicated) array of str.
 *
 * Rank 0 reads the whole file and broadcasts its bytes, so every rank holds the same lines
 * even where only rank 0 sees the file; a file that cannot be read, or that changes while
 * it is read, is an "agreed" failure (orn_std_fail): rank 0 prints "file.orn:LINE:
 * load_text: PATH: cannot open: cause" once and every rank exits 1.
 *
 * The array is an OrnStdArr of type ORN_STD_TEXT: one allocation, `data`, holds the n
 * element pointers and then the text they point into, each line NUL-terminated in place
 * (its '\n', and a '\r' just before it, overwritten). So orn_std_arr_free frees it like
 * any local array, and element reads are ((const char **)a->data)[i]. `data` always has
 * room for one pointer, set to "" for an empty file, because the prefetch pass reads
 * element 0 of an out-of-range subscript (orn_std_arr_off_soft). */
#include "orn_std.h"
#include "timeline.h"

/* Rank 0: the file's bytes in *buf (NUL-terminated) and their count, or -1 with the dsm
 * error set. The DSM reads it as the loaders read theirs: a file that changes while it is
 * read is an error, never a torn mix of two versions. */
static int64_t read_file(OrnStdProg *p, const char *path, char **buf)
{
    size_t n = 0;
    int st = orn_dsm_read_file(p->dsm, path, buf, &n);
    if (st) {
        orn_dsm_fail_ctx(p->dsm, st, "load_text");
        return -1;
    }
    return (int64_t)n;
}

OrnStdArr *orn_std_load_text(OrnStdProg *p, const char *path, int line)
{
    char *text = NULL;
    OrnTl *tl = orn_dsm_timeline(p->dsm);
    int64_t sp = orn_tl_begin(tl, ORN_TL_IO, "load_text");
    orn_tl_str(tl, sp, "path", path);
    orn_tl_int(tl, sp, "line", line);
    int64_t len = p->rank == 0 ? read_file(p, path, &text) : 0;
    int st = orn_dsm_bcast(p->dsm, &len, sizeof len, 0);
    if (st) orn_std_fail(p, st, line, 0);
    if (len < 0) orn_std_fail(p, ORN_E_IO, line, 1); /* every rank knows: exit 1 together */
    if (p->rank != 0) {
        text = malloc((size_t)len + 1);
        if (!text) orn_std_die(p, line, "load_text: %s: out of memory", path);
        text[len] = '\0';
    }
    st = orn_dsm_bcast(p->dsm, text, (size_t)len, 0);
    if (st) orn_std_fail(p, st, line, 0);
    orn_tl_end(tl, sp);

    /* lines end at '\n'; a last line without one counts; an empty file has none */
    int64_t n = 0;
    for (int64_t i = 0; i < len; i++)
        if (text[i] == '\n' || i == len - 1) n++;
    size_t head = (size_t)(n ? n : 1) * sizeof(char *);
    OrnStdArr *a = calloc(1, sizeof *a);
    char *data = malloc(head + (size_t)len + 1);
    if (!a || !data) orn_std_die(p, line, "load_text: %s: out of memory", path);
    char **lines = (char **)(void *)data;
    char *body = data + head;
    memcpy(body, text, (size_t)len + 1);
    free(text);
    lines[0] = body + len; /* "" */
    int64_t k = 0, start = 0;
    for (int64_t i = 0; i < len; i++) {
        if (body[i] != '\n' && i != len - 1) continue;
        int64_t end = body[i] == '\n' ? i : len; /* one past the line */
        if (end > start && body[end - 1] == '\r') end--;
        body[end] = '\0';
        lines[k++] = body + start;
        start = i + 1;
    }
    a->type = ORN_STD_TEXT;
    a->ndim = 1;
    a->dims[0] = n;
    a->n = n;
    a->esize = sizeof(char *);
    a->data = data;
    return a;
}
