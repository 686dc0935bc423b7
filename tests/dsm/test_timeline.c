/* test_timeline.c: the timeline recorder (dsm/timeline.h) at 1 to 4 ranks: off by default;
 * spans nest, leaves record nothing inside them, ending a span ends what an error left open
 * inside it; transfer spans carry the bytes that moved; a full recorder drops spans and says
 * how many; clocks measured against rank 0; the file rank 0 writes holds every rank. A
 * second run (CMake) checks the file with scripts/trace_check.py. */
#include <stdint.h>

#include "harness.h"
#include "timeline.h"
#include "transport.h"

/* The whole file (rank 0), NUL-terminated. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what)) n++;
    return n;
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    char path[512];
    t_path(&t, path, sizeof path, "timeline.json");
    CHECK(&t, orn_dsm_timeline(t.dsm) == NULL); /* off unless started */
    /* one clock per host: measured anyway, to test the ping-pong */
    setenv("ORN_TIMELINE_CLOCK", "measure", 1);
    enum { MAX = 40 };
    OK(&t, orn_dsm_timeline_start(t.dsm, path, MAX));
    OrnTl *tl = orn_dsm_timeline(t.dsm);
    CHECK(&t, tl != NULL);
    CHECK(&t, orn_dsm_timeline_start(t.dsm, path, MAX) == ORN_E_ARG); /* once */
    orn_dsm_clear_error(t.dsm);

    /* nesting, leaves, an inner span left open */
    int64_t loop = orn_tl_begin(tl, ORN_TL_LOOP, "outer loop");
    CHECK(&t, loop >= 0);
    orn_tl_str(tl, loop, "strategy", "test");
    int64_t leaf = orn_tl_begin(tl, ORN_TL_COMPUTE, "a leaf");
    CHECK(&t, leaf >= 0);
    int64_t muted = orn_tl_begin(tl, ORN_TL_TRANSFER, "inside the leaf");
    CHECK(&t, muted < 0);
    orn_tl_end(tl, muted);
    orn_tl_end(tl, leaf);
    int64_t phase = orn_tl_begin(tl, ORN_TL_PHASE, "a phase");
    int64_t open = orn_tl_begin(tl, ORN_TL_WAIT, "left open");
    CHECK(&t, phase >= 0 && open >= 0);
    orn_tl_end(tl, phase); /* ends "left open" too, marked unfinished */
    orn_tl_end(tl, open);  /* ended already: nothing */
    int64_t after = orn_tl_begin(tl, ORN_TL_COMPUTE, "after");
    CHECK(&t, after >= 0); /* nothing is left muted */
    orn_tl_end(tl, after);

    /* bytes: a ring exchange of 1000 bytes inside a transfer span */
    OrnDsmTraffic a, b;
    orn_dsm_traffic(t.dsm, &a);
    int64_t xfer = orn_tl_begin(tl, ORN_TL_TRANSFER, "ring");
    orn_tl_int(tl, xfer, "peer", (t.rank + 1) % t.size);
    char out[1000], in[1000];
    memset(out, t.rank, sizeof out);
    if (t.size > 1) {
        OrnDsmReq *rq[2] = {NULL, NULL};
        int peers[2] = {(t.rank + t.size - 1) % t.size, (t.rank + 1) % t.size};
        OK(&t, orn_dsm_irecv(t.dsm, in, sizeof in, peers[0], ORN_TAG_TEST, &rq[0]));
        OK(&t, orn_dsm_isend(t.dsm, out, sizeof out, peers[1], ORN_TAG_TEST, &rq[1]));
        OK(&t, orn_dsm_waitall(t.dsm, rq, peers, 2, "test ring"));
        CHECK(&t, in[0] == (char)peers[0]);
    }
    orn_tl_end(tl, xfer);
    orn_dsm_traffic(t.dsm, &b);
    CHECK(&t, b.sent - a.sent == (t.size > 1 ? 1000 : 0));
    CHECK(&t, b.received - a.received == (t.size > 1 ? 1000 : 0));
    /* a collective records a wait (for all ranks) and a transfer; sync time is counted */
    int64_t v = t.rank;
    OK(&t, orn_dsm_allreduce_i64(t.dsm, &v, 1, ORN_DSM_SUM));
    CHECK(&t, v == (int64_t)t.size * (t.size - 1) / 2);
    orn_dsm_traffic(t.dsm, &a);
    CHECK(&t, a.sync >= b.sync);
    orn_tl_end(tl, loop);

    /* full: the rest is dropped; rank r drops r + 1 more than it has room for */
    int64_t got = 0, dropped = 0;
    for (int i = 0; i < MAX + t.rank + 1; i++) {
        int64_t s = orn_tl_begin(tl, ORN_TL_COMPUTE, "filler");
        if (s >= 0)
            got++;
        else
            dropped++;
        orn_tl_end(tl, s);
    }
    CHECK(&t, got > 0 && dropped > 0);
    int64_t all_dropped = -1;
    OK(&t, orn_dsm_timeline_finish(t.dsm, &all_dropped));
    CHECK(&t, orn_dsm_timeline(t.dsm) == NULL);
    int64_t sum = dropped;
    OK(&t, orn_dsm_allreduce_i64(t.dsm, &sum, 1, ORN_DSM_SUM));
    if (t.rank == 0) {
        CHECK(&t, all_dropped == sum);
        char *s = slurp(path);
        CHECK(&t, s != NULL);
        CHECK(&t, !strncmp(s, "{\"traceEvents\":[", 16));
        CHECK(&t, strstr(s, "\"displayTimeUnit\":\"ms\"") != NULL);
        CHECK(&t, count(s, "\"name\":\"process_name\"") == t.size);
        for (int r = 0; r < t.size; r++) {
            char want[64];
            snprintf(want, sizeof want, "\"args\":{\"name\":\"rank %d (", r);
            CHECK(&t, strstr(s, want) != NULL);
        }
        CHECK(&t, count(s, "\"name\":\"outer loop\"") == t.size);
        CHECK(&t, count(s, "\"name\":\"inside the leaf\"") == 0);
        CHECK(&t, count(s, "\"unfinished\":true") == t.size);
        CHECK(&t,
              count(s, "\"name\":\"allreduce: waiting for all ranks\",\"cat\":\"wait\"") == t.size);
        /* an allreduce is one exchange of a few bytes: all of it waiting for the last rank */
        CHECK(&t, count(s, "\"name\":\"allreduce\",\"cat\":\"transfer\"") == 0);
        if (t.size > 1) CHECK(&t, count(s, "\"sent\":1000,\"received\":1000") >= t.size);
        if (t.size > 1) CHECK(&t, strstr(s, "(measured)") != NULL);
        char want[64];
        snprintf(want, sizeof want, "\"dropped_spans\":%lld", (long long)sum);
        CHECK(&t, strstr(s, want) != NULL);
        free(s);
    }
    /* a file that cannot be written: refused on every rank, nothing recorded */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/t.json", t.dir);
    CHECK(&t, orn_dsm_timeline_start(t.dsm, bad, 0) == ORN_E_IO);
    CHECK(&t, strstr(orn_dsm_error(t.dsm), "cannot write") != NULL);
    CHECK(&t, orn_dsm_timeline(t.dsm) == NULL);
    orn_dsm_clear_error(t.dsm);
    OK(&t, orn_dsm_timeline_finish(t.dsm, NULL)); /* off: nothing to do */
    return t_finish(&t, "test_timeline");
}
