/* metrics.c: the CSV and TensorBoard writer of log_metric (metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct OrnMetrics {
    char *dir, *csv_path, *ev_path;
    FILE *csv, *ev;
    int failed;
    OrnBuf data, rec; /* an event's bytes, and its record */
};

/* ---------------------------------------------------------------- encoding */

uint32_t orn_metrics_crc32c(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

uint32_t orn_metrics_masked_crc(const void *data, size_t n)
{
    uint32_t c = orn_metrics_crc32c(0, data, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void put_le(OrnBuf *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) orn_buf_putc(b, (char)(v >> (8 * i) & 0xff));
}

static void put_varint(OrnBuf *b, uint64_t v)
{
    while (v >= 0x80) {
        orn_buf_putc(b, (char)((v & 0x7f) | 0x80));
        v >>= 7;
    }
    orn_buf_putc(b, (char)v);
}

/* Protocol buffers' wire types */
enum { VARINT = 0, FIXED64 = 1, BYTES = 2, FIXED32 = 5 };

static void put_key(OrnBuf *b, int field, int wire)
{
    put_varint(b, (uint64_t)(field << 3 | wire));
}

static void put_bytes(OrnBuf *b, int field, const void *s, size_t n)
{
    put_key(b, field, BYTES);
    put_varint(b, n);
    orn_buf_put(b, s, n);
}

void orn_metrics_event(OrnBuf *b, double wall, int64_t step, const char *tag, float value)
{
    uint64_t w;
    memcpy(&w, &wall, sizeof w);
    put_key(b, 1, FIXED64); /* Event.wall_time */
    put_le(b, w, 8);
    if (!tag) {
        static const char version[] = "brain.Event:2";
        put_bytes(b, 3, version, sizeof version - 1); /* Event.file_version */
        return;
    }
    put_key(b, 2, VARINT); /* Event.step (int64: negative as 10 bytes) */
    put_varint(b, (uint64_t)step);
    OrnBuf val, sum;
    orn_buf_init(&val);
    orn_buf_init(&sum);
    put_bytes(&val, 1, tag, strlen(tag)); /* Summary.Value.tag */
    uint32_t f;
    memcpy(&f, &value, sizeof f);
    put_key(&val, 2, FIXED32); /* Summary.Value.simple_value */
    put_le(&val, f, 4);
    put_bytes(&sum, 1, val.data, val.len); /* Summary.value */
    put_bytes(b, 5, sum.data, sum.len);    /* Event.summary */
    orn_buf_free(&val);
    orn_buf_free(&sum);
}

void orn_metrics_record(OrnBuf *b, const void *data, size_t n)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    orn_buf_put(b, (const char *)len, 8);
    put_le(b, orn_metrics_masked_crc(len, 8), 4);
    orn_buf_put(b, data, n);
    put_le(b, orn_metrics_masked_crc(data, n), 4);
}

/* ---------------------------------------------------------------- files */

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir), m = strlen(name);
    char *s = malloc(n + m + 2);
    if (!s) abort();
    memcpy(s, dir, n);
    s[n] = '/';
    memcpy(s + n + 1, name, m + 1);
    return s;
}

/* mkdir -p: 0, or -1 with errno and the path that failed in bad. */
static int make_dirs(const char *dir, char *bad, size_t badlen)
{
    size_t n = strlen(dir);
    char *p = malloc(n + 1);
    if (!p) abort();
    memcpy(p, dir, n + 1);
    int rc = 0;
    for (size_t i = 1; i <= n && !rc; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = -1;
        else if (stat(p, &st) != 0)
            rc = -1;
        else if (!S_ISDIR(st.st_mode))
            rc = -1, errno = ENOTDIR;
        if (rc) {
            int e = errno;
            snprintf(bad, badlen, "%s", p);
            errno = e;
        }
        p[i] = c;
    }
    free(p);
    return rc;
}

static int fail(char *err, size_t errlen, const char *what, const char *path, int e)
{
    snprintf(err, errlen, "%s '%s': %s", what, path, strerror(e ? e : EIO));
    return -1;
}

/* Write the bytes and flush: 0, or -1 with errno. */
static int put_flush(FILE *f, const void *s, size_t n)
{
    errno = 0;
    if (n && fwrite(s, 1, n, f) != n) return -1;
    return fflush(f) == 0 ? 0 : -1;
}

int orn_metrics_open(const char *dir, double wall, const char *host, long pid, OrnMetrics **out,
                     char *err, size_t errlen)
{
    *out = NULL;
    char bad[4096];
    if (!dir || !*dir) {
        snprintf(err, errlen, "the log directory is empty");
        return -1;
    }
    if (make_dirs(dir, bad, sizeof bad)) return fail(err, errlen, "cannot create", bad, errno);
    OrnMetrics *m = calloc(1, sizeof *m);
    if (!m) abort();
    orn_buf_init(&m->data);
    orn_buf_init(&m->rec);
    m->dir = strdup(dir);
    if (!m->dir) abort();
    m->csv_path = join(dir, "metrics.csv");
    m->csv = fopen(m->csv_path, "a");
    struct stat st;
    if (!m->csv || fstat(fileno(m->csv), &st) != 0) {
        fail(err, errlen, "cannot write", m->csv_path, errno);
        goto fn_fail;
    }
    if (st.st_size == 0 && put_flush(m->csv, "name,step,value,wall_time\n", 26)) {
        fail(err, errlen, "cannot write", m->csv_path, errno);
        goto fn_fail;
    }
    /* a new event file: never one that exists (another run's, started in the same second) */
    char name[512];
    int fd = -1;
    for (int k = 0; k < 100 && fd < 0; k++) {
        int n = snprintf(name, sizeof name, "events.out.tfevents.%lld.%s.%ld", (long long)wall,
                         host && *host ? host : "localhost", pid);
        if (k && n > 0 && (size_t)n < sizeof name)
            snprintf(name + n, sizeof name - (size_t)n, ".%d", k);
        free(m->ev_path);
        m->ev_path = join(dir, name);
        fd = open(m->ev_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0 || !(m->ev = fdopen(fd, "w"))) {
        fail(err, errlen, "cannot write", m->ev_path, errno);
        if (fd >= 0) close(fd);
        goto fn_fail;
    }
    orn_metrics_event(&m->data, wall, 0, NULL, 0);
    orn_metrics_record(&m->rec, m->data.data, m->data.len);
    if (put_flush(m->ev, m->rec.data, m->rec.len)) {
        fail(err, errlen, "cannot write", m->ev_path, errno);
        goto fn_fail;
    }
    *out = m;
    return 0;
fn_fail:
    orn_metrics_close(m);
    return -1;
}

/* The fewest significant digits that read back as v ("0.1", not "0.10000000000000001"). */
static void fmt_value(char *buf, size_t n, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (!isfinite(v) || strtod(buf, NULL) == v) return;
    }
}

static void csv_field(OrnBuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        orn_buf_puts(b, s);
        return;
    }
    orn_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"') orn_buf_putc(b, '"');
        orn_buf_putc(b, *s);
    }
    orn_buf_putc(b, '"');
}

int orn_metrics_log(OrnMetrics *m, const char *name, int64_t step, double value, double wall,
                    char *err, size_t errlen)
{
    if (!m || m->failed) return 0;
    char num[40];
    orn_buf_clear(&m->data);
    csv_field(&m->data, name);
    fmt_value(num, sizeof num, value);
    orn_buf_printf(&m->data, ",%lld,%s,%.6f\n", (long long)step, num, wall);
    if (put_flush(m->csv, m->data.data, m->data.len)) {
        m->failed = 1;
        return fail(err, errlen, "cannot write", m->csv_path, errno);
    }
    orn_buf_clear(&m->data);
    orn_buf_clear(&m->rec);
    orn_metrics_event(&m->data, wall, step, name, (float)value);
    orn_metrics_record(&m->rec, m->data.data, m->data.len);
    if (put_flush(m->ev, m->rec.data, m->rec.len)) {
        m->failed = 1;
        return fail(err, errlen, "cannot write", m->ev_path, errno);
    }
    return 0;
}

const char *orn_metrics_dir(const OrnMetrics *m)
{
    return m ? m->dir : NULL;
}

const char *orn_metrics_event_path(const OrnMetrics *m)
{
    return m ? m->ev_path : NULL;
}

void orn_metrics_close(OrnMetrics *m)
{
    if (!m) return;
    if (m->csv) fclose(m->csv);
    if (m->ev) fclose(m->ev);
    free(m->dir);
    free(m->csv_path);
    free(m->ev_path);
    orn_buf_free(&m->data);
    orn_buf_free(&m->rec);
    free(m);
}
