/* test_metrics.c: log_metric's writer (stdlib/metrics.h): CRC-32C against published
 * vectors, the Event protobufs byte for byte, the TFRecord framing, the files it writes,
 * and its errors (a directory that cannot be made, a full disk, a file too large). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "metrics.h"

static void test_crc32c(void)
{
    /* the check value of CRC-32C, and the iSCSI vectors of RFC 3720, appendix B.4 */
    CHECK(orn_metrics_crc32c(0, "123456789", 9) == 0xE3069283u);
    unsigned char b[48];
    memset(b, 0, 32);
    CHECK(orn_metrics_crc32c(0, b, 32) == 0x8A9136AAu);
    memset(b, 0xff, 32);
    CHECK(orn_metrics_crc32c(0, b, 32) == 0x62A8AB43u);
    for (int i = 0; i < 32; i++) b[i] = (unsigned char)i;
    CHECK(orn_metrics_crc32c(0, b, 32) == 0x46DD794Eu);
    for (int i = 0; i < 32; i++) b[i] = (unsigned char)(31 - i);
    CHECK(orn_metrics_crc32c(0, b, 32) == 0x113FDB5Cu);
    static const unsigned char read10[48] = {
        0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    CHECK(orn_metrics_crc32c(0, read10, 48) == 0xD9963A56u);
    CHECK(orn_metrics_crc32c(0, "", 0) == 0);
    /* continuing a CRC over pieces gives the CRC of the whole */
    CHECK(orn_metrics_crc32c(orn_metrics_crc32c(0, "12345", 5), "6789", 4) == 0xE3069283u);
    /* masked: rotated right by 15, plus 0xa282ead8 */
    uint32_t c = 0xE3069283u;
    CHECK(orn_metrics_masked_crc("123456789", 9) == ((c >> 15 | c << 17) + 0xa282ead8u));
}

static int same(const OrnBuf *b, const unsigned char *want, size_t n)
{
    return b->len == n && memcmp(b->data, want, n) == 0;
}

static void test_events(void)
{
    OrnBuf b;
    orn_buf_init(&b);
    /* Event{wall_time 1.5, file_version "brain.Event:2"} */
    orn_metrics_event(&b, 1.5, 0, NULL, 0);
    static const unsigned char first[] = {0x09, 0,    0,   0,   0,   0,   0,   0xf8,
                                          0x3f, 0x1a, 13,  'b', 'r', 'a', 'i', 'n',
                                          '.',  'E',  'v', 'e', 'n', 't', ':', '2'};
    CHECK(same(&b, first, sizeof first));
    orn_buf_clear(&b);
    /* Event{wall_time 1.5, step 3, summary{value{tag "a", simple_value 2.0}}} */
    orn_metrics_event(&b, 1.5, 3, "a", 2.0f);
    static const unsigned char scalar[] = {0x09, 0,    0,    0,    0,    0, 0, 0xf8,
                                           0x3f, 0x10, 0x03, 0x2a, 0x0a, /* summary */
                                           0x0a, 0x08,                   /* value */
                                           0x0a, 0x01, 'a',  0x15, 0,    0, 0, 0x40};
    CHECK(same(&b, scalar, sizeof scalar));
    orn_buf_clear(&b);
    /* a step of 300 is a two-byte varint; -1 takes ten bytes; a tag of 200 bytes has a
     * two-byte length, and so do the messages around it */
    char tag[201];
    memset(tag, 'x', 200);
    tag[200] = '\0';
    orn_metrics_event(&b, 0, 300, tag, 0.5f);
    CHECK(b.len == 9 + 3 + (1 + 2 + (1 + 2 + (1 + 2 + 200 + 5))));
    CHECK((unsigned char)b.data[9] == 0x10 && (unsigned char)b.data[10] == 0xac &&
          (unsigned char)b.data[11] == 0x02);
    CHECK((unsigned char)b.data[12] == 0x2a && (unsigned char)b.data[13] == 0xd3 &&
          (unsigned char)b.data[14] == 0x01); /* the summary's length, 211 */
    orn_buf_clear(&b);
    orn_metrics_event(&b, 0, -1, "t", 1.0f);
    static const unsigned char minus1[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0xff,
                                           0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK(b.len > 20 && memcmp(b.data + 9, minus1, sizeof minus1) == 0);
    /* a record: length, its masked CRC, the data, its masked CRC (little-endian) */
    OrnBuf r;
    orn_buf_init(&r);
    orn_metrics_record(&r, "abc", 3);
    CHECK(r.len == 8 + 4 + 3 + 4);
    static const unsigned char len3[8] = {3, 0, 0, 0, 0, 0, 0, 0};
    CHECK(memcmp(r.data, len3, 8) == 0);
    uint32_t lc = orn_metrics_masked_crc(len3, 8), dc = orn_metrics_masked_crc("abc", 3);
    const unsigned char *q = (const unsigned char *)r.data;
    CHECK((q[8] | q[9] << 8 | q[10] << 16 | (uint32_t)q[11] << 24) == lc);
    CHECK(memcmp(r.data + 12, "abc", 3) == 0);
    CHECK((q[15] | q[16] << 8 | q[17] << 16 | (uint32_t)q[18] << 24) == dc);
    orn_buf_free(&b);
    orn_buf_free(&r);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = malloc(1 << 20);
    *n = fread(s, 1, (1 << 20) - 1, f);
    s[*n] = '\0';
    fclose(f);
    return s;
}

/* The records of an event file: each checked (lengths, CRCs); returns how many, with the
 * data of record k (its length in *klen) copied to kdata. -1 when a record is damaged. */
static int records(const char *s, size_t n, int k, char *kdata, size_t *klen)
{
    int count = 0;
    size_t at = 0;
    while (at < n) {
        if (n - at < 12) return -1;
        const unsigned char *h = (const unsigned char *)s + at;
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--) len = len << 8 | h[i];
        uint32_t lc = h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24;
        if (lc != orn_metrics_masked_crc(h, 8) || n - at - 12 < len + 4) return -1;
        const unsigned char *d = h + 12, *t = d + len;
        uint32_t dc = t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24;
        if (dc != orn_metrics_masked_crc(d, (size_t)len)) return -1;
        if (count == k) {
            memcpy(kdata, d, (size_t)len);
            *klen = (size_t)len;
        }
        count++;
        at += 12 + (size_t)len + 4;
    }
    return count;
}

static void test_writer(const char *tmp)
{
    char dir[512], path[600], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/runs/a", tmp);
    OrnMetrics *m = NULL;
    CHECK(orn_metrics_open(dir, 1700000000.25, "host1", 42, &m, err, sizeof err) == 0);
    CHECK(m != NULL);
    snprintf(path, sizeof path, "%s/events.out.tfevents.1700000000.host1.42", dir);
    CHECK(strcmp(orn_metrics_event_path(m), path) == 0);
    CHECK(strcmp(orn_metrics_dir(m), dir) == 0);
    CHECK(orn_metrics_log(m, "loss", 0, 0.1, 1700000001.5, err, sizeof err) == 0);
    CHECK(orn_metrics_log(m, "test/acc, \"top 1\"", 7, 1.0 / 3, 1700000002.0, err, sizeof err) ==
          0);
    /* the files are flushed after every value: readable before the writer closes */
    size_t n = 0;
    char *ev = slurp(path, &n), data[4096];
    size_t dlen = 0;
    CHECK(ev && records(ev, n, 2, data, &dlen) == 3);
    OrnBuf want;
    orn_buf_init(&want);
    orn_metrics_event(&want, 1700000002.0, 7, "test/acc, \"top 1\"", (float)(1.0 / 3));
    CHECK(dlen == want.len && memcmp(data, want.data, dlen) == 0);
    orn_buf_clear(&want);
    records(ev, n, 0, data, &dlen);
    orn_metrics_event(&want, 1700000000.25, 0, NULL, 0);
    CHECK(dlen == want.len && memcmp(data, want.data, dlen) == 0);
    free(ev);
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    char *csv = slurp(path, &n);
    CHECK(csv &&
          strcmp(csv, "name,step,value,wall_time\n"
                      "loss,0,0.1,1700000001.500000\n"
                      "\"test/acc, \"\"top 1\"\"\",7,0.3333333333333333,1700000002.000000\n") == 0);
    free(csv);
    orn_metrics_close(m);

    /* a second writer in the same directory, in the same second: the CSV is continued
     * without a second header; a new event file beside the first */
    CHECK(orn_metrics_open(dir, 1700000000.75, "host1", 42, &m, err, sizeof err) == 0);
    CHECK(strstr(orn_metrics_event_path(m), ".42.1") != NULL);
    CHECK(orn_metrics_log(m, "loss", 1, -2.5e-300, 1700000003.0, err, sizeof err) == 0);
    CHECK(orn_metrics_log(m, "loss", 2, INFINITY, 1700000003.0, err, sizeof err) == 0);
    orn_metrics_close(m);
    csv = slurp(path, &n);
    CHECK(csv && strstr(csv, "name,step") == csv && strstr(csv + 1, "name,step") == NULL);
    CHECK(csv && strstr(csv, "\nloss,1,-2.5e-300,") != NULL && strstr(csv, "\nloss,2,inf,"));
    free(csv);

    /* a path through a regular file: the message names the part that failed */
    snprintf(path, sizeof path, "%s/file", tmp);
    FILE *f = fopen(path, "w");
    fclose(f);
    snprintf(dir, sizeof dir, "%s/file/runs", tmp);
    CHECK(orn_metrics_open(dir, 1, "h", 1, &m, err, sizeof err) == -1 && m == NULL);
    char want_err[800];
    snprintf(want_err, sizeof want_err, "cannot create '%s': Not a directory", path);
    CHECK(strcmp(err, want_err) == 0);
    CHECK(orn_metrics_open("", 1, "h", 1, &m, err, sizeof err) == -1);

    /* a full disk: metrics.csv is /dev/full */
    snprintf(dir, sizeof dir, "%s/full", tmp);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    if (symlink("/dev/full", path) == 0) {
        CHECK(orn_metrics_open(dir, 1, "h", 1, &m, err, sizeof err) == -1);
        snprintf(want_err, sizeof want_err, "cannot write '%s': No space left on device", path);
        CHECK(strcmp(err, want_err) == 0);
    }

    /* a write that fails in the middle of a run (a file size limit): an error naming the
     * file, then nothing more is written */
    snprintf(dir, sizeof dir, "%s/limited", tmp);
    CHECK(orn_metrics_open(dir, 1, "h", 1, &m, err, sizeof err) == 0);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
        int rc = 0, i;
        for (i = 0; i < 1000 && rc == 0; i++)
            rc = orn_metrics_log(m, "loss", i, i * 0.5, 2, err, sizeof err);
        CHECK(rc == -1);
        CHECK(strstr(err, "cannot write '") == err && strstr(err, "': File too large") != NULL);
        CHECK(orn_metrics_log(m, "loss", i, 0, 2, err, sizeof err) == 0); /* quiet: failed */
        setrlimit(RLIMIT_FSIZE, &old);
    }
    orn_metrics_close(m);
    orn_buf_free(&want);
}

int main(void)
{
    test_crc32c();
    test_events();
    char tmp[] = "/tmp/orn_test_metrics.XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_writer(tmp);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return check_report("test_metrics");
}
