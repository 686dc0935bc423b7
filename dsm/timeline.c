/* timeline.c: the timeline recorder (timeline.h): spans in memory per rank, clock offsets
 * against rank 0, and the Chrome trace-event JSON that rank 0 writes at the end.
 *
 * Cost when on: a span is two clock reads, a name interned (a hash of a short string), a
 * slot in a growing array and a push on the stack of open spans; arguments are appended to
 * a pool. Nothing is formatted until the end: then each rank formats its own spans (its
 * clock offset applied) and sends the text to rank 0, one rank at a time, which appends it
 * to the file: rank 0 never holds more than its own text and one other rank's.
 */
#include "timeline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "dsm_int.h"
#include "strbuf.h"

enum {
    TL_DEFAULT_MAX = 262144,
    TL_MAX_DEPTH = 64,
    TL_PINGS = 8,
    TL_STR_MAX = 16 << 20, /* bytes of interned strings */
};

#define F_UNFINISHED 1u
#define F_FLIGHT     2u /* orn_tl_flight: an async pair, not a span */

typedef struct TlEvent {
    double t0, t1;
    uint32_t name;
    uint32_t args; /* head of its argument list: index + 1 into the pool, 0 none */
    uint8_t kind, flags;
} TlEvent;

enum { A_INT, A_NUM, A_STR };
typedef struct TlArg {
    uint32_t key, next; /* next: index + 1, 0 none (the list is newest first) */
    uint32_t type;
    union {
        int64_t i;
        double f;
        uint32_t s;
    } v;
} TlArg;

typedef struct TlOpen {
    int64_t id;
    int64_t sent0, recv0;
} TlOpen;

struct OrnTl {
    OrnDsmCtx *ctx;
    FILE *f; /* rank 0 */
    TlEvent *ev;
    int64_t n, cap, max;
    TlArg *arg;
    int64_t narg, caparg, maxarg;
    /* interned strings: pool of NUL-terminated strings, open-addressed table of offsets + 1 */
    char *str;
    size_t nstr, capstr;
    uint32_t *tab;
    size_t captab, ntab;
    uint32_t empty; /* "" */
    TlOpen stack[TL_MAX_DEPTH];
    int depth;
    int leaves; /* open leaf spans: nothing is recorded while > 0 */
    int64_t dropped, dropped_args;
    /* clocks: rank 0's time = local + offset; offsets at the start and at the end */
    double start, off0, rtt0;
    double t0_rank0; /* rank 0's clock at the start: ts 0 of the file */
    int measured;
    char host[256];
};

const char *orn_tl_kind_name(OrnTlKind kind)
{
    static const char *const names[ORN_TL_NKINDS] = {"loop", "phase", "compute", "transfer",
                                                     "wait", "flush", "io",      "flight"};
    return (int)kind >= 0 && kind < ORN_TL_NKINDS ? names[kind] : "?";
}

static int is_leaf(int kind)
{
    return kind == ORN_TL_COMPUTE || kind == ORN_TL_TRANSFER || kind == ORN_TL_WAIT;
}

/* ---------------------------------------------------------------- strings */

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void tab_place(OrnTl *tl, uint32_t off1)
{
    size_t mask = tl->captab - 1;
    size_t i = (size_t)fnv(tl->str + off1 - 1) & mask;
    while (tl->tab[i]) i = (i + 1) & mask;
    tl->tab[i] = off1;
}

static uint32_t intern(OrnTl *tl, const char *s)
{
    if (!s) s = "";
    if (2 * (tl->ntab + 1) > tl->captab) {
        uint32_t *old = tl->tab;
        size_t oldcap = tl->captab;
        tl->captab = oldcap ? 2 * oldcap : 256;
        tl->tab = orn_xcalloc(tl->captab, sizeof *tl->tab);
        for (size_t i = 0; i < oldcap; i++)
            if (old[i]) tab_place(tl, old[i]);
        free(old);
    }
    size_t mask = tl->captab - 1;
    size_t i = (size_t)fnv(s) & mask;
    for (; tl->tab[i]; i = (i + 1) & mask)
        if (strcmp(tl->str + tl->tab[i] - 1, s) == 0) return tl->tab[i] - 1;
    size_t len = strlen(s) + 1;
    if (tl->nstr + len > TL_STR_MAX) return tl->empty; /* full: the name is lost, not the span */
    if (tl->nstr + len > tl->capstr) {
        while (tl->nstr + len > tl->capstr) tl->capstr = tl->capstr ? 2 * tl->capstr : 4096;
        tl->str = orn_xrealloc(tl->str, tl->capstr);
    }
    uint32_t off = (uint32_t)tl->nstr;
    memcpy(tl->str + off, s, len);
    tl->nstr += len;
    tl->tab[i] = off + 1;
    tl->ntab++;
    return off;
}

/* ---------------------------------------------------------------- recording */

/* The next event (tl->n < tl->max), named, without arguments. */
static int64_t new_event(OrnTl *tl, const char *name)
{
    if (tl->n == tl->cap) {
        tl->cap = tl->cap ? 2 * tl->cap : 1024;
        if (tl->cap > tl->max) tl->cap = tl->max;
        tl->ev = orn_xrealloc(tl->ev, (size_t)tl->cap * sizeof *tl->ev);
    }
    int64_t id = tl->n++;
    tl->ev[id].name = intern(tl, name);
    tl->ev[id].args = 0;
    return id;
}

int64_t orn_tl_begin_(OrnTl *tl, OrnTlKind kind, const char *name)
{
    if (tl->leaves > 0) return -2;
    if (tl->n >= tl->max || tl->depth >= TL_MAX_DEPTH) {
        tl->dropped++;
        return -1;
    }
    int64_t id = new_event(tl, name);
    TlEvent *e = &tl->ev[id];
    e->kind = (uint8_t)kind;
    e->flags = 0;
    e->t1 = -1;
    TlOpen *o = &tl->stack[tl->depth++];
    o->id = id;
    o->sent0 = tl->ctx->sent;
    o->recv0 = tl->ctx->recv;
    if (is_leaf(kind)) tl->leaves++;
    e->t0 = orn_dsm_now(); /* last: the span's time is its own */
    return id;
}

int64_t orn_tl_flight_(OrnTl *tl, const char *name, double t0, double t1)
{
    if (tl->n >= tl->max) {
        tl->dropped++;
        return -1;
    }
    int64_t id = new_event(tl, name);
    TlEvent *e = &tl->ev[id];
    e->kind = (uint8_t)ORN_TL_FLIGHT;
    e->flags = F_FLIGHT;
    e->t0 = t0;
    e->t1 = t1 > t0 ? t1 : t0;
    return id;
}

static TlArg *new_arg(OrnTl *tl, int64_t span, const char *key)
{
    if (span < 0 || span >= tl->n) return NULL;
    if (tl->narg >= tl->maxarg) {
        tl->dropped_args++;
        return NULL;
    }
    if (tl->narg == tl->caparg) {
        tl->caparg = tl->caparg ? 2 * tl->caparg : 1024;
        tl->arg = orn_xrealloc(tl->arg, (size_t)tl->caparg * sizeof *tl->arg);
    }
    TlEvent *e = &tl->ev[span];
    TlArg *a = &tl->arg[tl->narg++];
    a->key = intern(tl, key);
    a->next = e->args;
    e->args = (uint32_t)tl->narg;
    return a;
}

void orn_tl_int_(OrnTl *tl, int64_t span, const char *key, int64_t v)
{
    TlArg *a = new_arg(tl, span, key);
    if (!a) return;
    a->type = A_INT;
    a->v.i = v;
}

void orn_tl_num_(OrnTl *tl, int64_t span, const char *key, double v)
{
    TlArg *a = new_arg(tl, span, key);
    if (!a) return;
    a->type = A_NUM;
    a->v.f = v;
}

void orn_tl_str_(OrnTl *tl, int64_t span, const char *key, const char *v)
{
    TlArg *a = new_arg(tl, span, key);
    if (!a) return;
    a->type = A_STR;
    a->v.s = intern(tl, v);
}

/* Close the top of the stack at time t. */
static void pop(OrnTl *tl, double t, unsigned flags)
{
    TlOpen *o = &tl->stack[--tl->depth];
    TlEvent *e = &tl->ev[o->id];
    e->t1 = t;
    e->flags |= (uint8_t)flags;
    if (is_leaf(e->kind)) tl->leaves--;
    if (e->kind != ORN_TL_COMPUTE && e->kind != ORN_TL_WAIT) {
        int64_t s = tl->ctx->sent - o->sent0, r = tl->ctx->recv - o->recv0;
        if (s) orn_tl_int_(tl, o->id, "sent", s);
        if (r) orn_tl_int_(tl, o->id, "received", r);
    }
}

void orn_tl_end_(OrnTl *tl, int64_t span)
{
    double t = orn_dsm_now();
    int at = tl->depth - 1;
    while (at >= 0 && tl->stack[at].id != span) at--;
    if (at < 0) return; /* ended already (an outer span's end closed it) */
    while (tl->depth - 1 > at) pop(tl, t, F_UNFINISHED);
    pop(tl, t, 0);
}

/* ---------------------------------------------------------------- the context's side */

OrnTl *orn_dsm_timeline(const OrnDsmCtx *ctx)
{
    return ctx->tl;
}

void orn_dsm_traffic(const OrnDsmCtx *ctx, OrnDsmTraffic *out)
{
    out->sent = ctx->sent;
    out->received = ctx->recv;
    out->sync = ctx->sync;
}

static void tl_free(OrnTl *tl)
{
    if (!tl) return;
    if (tl->f) fclose(tl->f);
    free(tl->ev);
    free(tl->arg);
    free(tl->str);
    free(tl->tab);
    free(tl);
}

void orn_dsm_timeline_discard(OrnDsmCtx *ctx)
{
    tl_free(ctx->tl);
    ctx->tl = NULL;
}

/* Collective: this rank's offset to rank 0's clock (rank 0's time = local + *off) from the
 * ping-pong with the smallest round trip (*rtt); 0 for rank 0 and, unless `measure`, for
 * ranks on rank 0's host (one clock). Every rank takes part, so that rank 0 knows whom to
 * answer: ranks that need no measurement send nothing. */
static int measure_clock(OrnDsmCtx *ctx, int measure, double *off, double *rtt)
{
    int P = ctx->size, me = ctx->rank, status = ORN_OK;
    *off = 0;
    *rtt = 0;
    if (P == 1) return ORN_OK;
    int64_t *need = orn_xcalloc((size_t)P, sizeof *need);
    need[me] = me > 0 && measure;
    status = orn_dsm_allreduce_i64(ctx, need, (size_t)P, ORN_DSM_SUM);
    for (int r = 1; r < P && !status; r++) {
        if (!need[r] || (me != 0 && me != r)) continue;
        int peer = me == 0 ? r : 0;
        double best = INFINITY;
        for (int k = 0; k < TL_PINGS && !status; k++) {
            OrnDsmReq *rq[2] = {NULL, NULL};
            int peers[2] = {peer, peer};
            double t1 = orn_dsm_now(), theirs = 0, mine = 0;
            if (me == 0) {
                status = orn_dsm_irecv(ctx, &theirs, sizeof theirs, r, ORN_TAG_CLOCK, &rq[0]);
                if (!status) status = orn_dsm_waitall(ctx, rq, peers, 1, "timeline: clock ping");
                mine = orn_dsm_now();
                if (!status)
                    status = orn_dsm_isend(ctx, &mine, sizeof mine, r, ORN_TAG_CLOCK, &rq[1]);
                if (!status)
                    status = orn_dsm_waitall(ctx, &rq[1], peers, 1, "timeline: clock reply");
            } else {
                status = orn_dsm_irecv(ctx, &theirs, sizeof theirs, 0, ORN_TAG_CLOCK, &rq[0]);
                if (!status) status = orn_dsm_isend(ctx, &t1, sizeof t1, 0, ORN_TAG_CLOCK, &rq[1]);
                if (!status) status = orn_dsm_waitall(ctx, rq, peers, 2, "timeline: clock ping");
                double t4 = orn_dsm_now();
                if (!status && t4 - t1 < best) {
                    best = t4 - t1;
                    *off = theirs - 0.5 * (t1 + t4);
                    *rtt = best;
                }
            }
            orn_dsm_drop(ctx, &rq[0]);
            orn_dsm_drop(ctx, &rq[1]);
        }
    }
    free(need);
    return status;
}

static int same_host_as_rank0(OrnDsmCtx *ctx, const char *host, int *same)
{
    char h0[256];
    memset(h0, 0, sizeof h0);
    if (ctx->rank == 0) snprintf(h0, sizeof h0, "%s", host);
    int status = orn_dsm_bcast(ctx, h0, sizeof h0, 0);
    h0[sizeof h0 - 1] = '\0';
    *same = strcmp(h0, host) == 0;
    return status;
}

int orn_dsm_timeline_start(OrnDsmCtx *ctx, const char *path, int64_t max_events)
{
    int status = ORN_OK;
    if (ctx->tl) return orn_dsm_fail(ctx, ORN_E_ARG, "timeline: already recording");
    OrnTl *tl = orn_xcalloc(1, sizeof *tl);
    tl->ctx = ctx;
    tl->max = max_events > 0 ? max_events : TL_DEFAULT_MAX;
    tl->maxarg = 4 * tl->max;
    tl->empty = intern(tl, "");
    if (gethostname(tl->host, sizeof tl->host - 1) != 0) snprintf(tl->host, sizeof tl->host, "?");
    if (ctx->rank == 0) {
        tl->f = fopen(path, "w");
        if (!tl->f)
            status = orn_dsm_fail(ctx, ORN_E_IO, "timeline: %s: cannot write: %s", path,
                                  strerror(errno));
    }
    status = orn_dsm_agree(ctx, status);
    int same = 1;
    if (!status) status = same_host_as_rank0(ctx, tl->host, &same);
    const char *how = getenv("ORN_TIMELINE_CLOCK");
    tl->measured = !same || (how && strcmp(how, "measure") == 0);
    if (!status) status = orn_dsm_barrier(ctx);
    if (!status) status = measure_clock(ctx, tl->measured, &tl->off0, &tl->rtt0);
    tl->start = orn_dsm_now();
    tl->t0_rank0 = tl->start;
    if (!status) status = orn_dsm_bcast(ctx, &tl->t0_rank0, sizeof tl->t0_rank0, 0);
    if (status) {
        tl_free(tl);
        return status;
    }
    ctx->tl = tl;
    return ORN_OK;
}

/* ---------------------------------------------------------------- writing */

typedef struct Clock {
    double start, off0, end, off1, base; /* base: rank 0's time at ts 0 */
} Clock;

/* Microseconds since ts 0 of local time t: the offset interpolated between the two
 * measurements, nanoseconds rounded (a child's rounded start and end stay inside its
 * parent's). */
static double ts_us(const Clock *c, double t)
{
    double off = c->off0;
    if (c->end > c->start) off += (c->off1 - c->off0) * (t - c->start) / (c->end - c->start);
    return (double)llround((t + off - c->base) * 1e9) / 1000.0;
}

static void json_str(OrnBuf *b, const char *s)
{
    OrnBuf e; /* printable: control bytes and malformed UTF-8 as \xNN (strbuf.h) */
    orn_buf_init(&e);
    orn_buf_escaped(&e, s, strlen(s));
    orn_buf_json_str(b, e.data ? e.data : "", e.len);
    orn_buf_free(&e);
}

static void put_args(OrnBuf *b, const OrnTl *tl, const TlEvent *e)
{
    uint32_t idx[64];
    int n = 0;
    for (uint32_t a = e->args; a && n < 64; a = tl->arg[a - 1].next) idx[n++] = a - 1;
    if (!n && !(e->flags & F_UNFINISHED)) return;
    orn_buf_puts(b, ",\"args\":{");
    int first = 1;
    for (int i = n - 1; i >= 0; i--) { /* oldest first */
        const TlArg *a = &tl->arg[idx[i]];
        if (!first) orn_buf_putc(b, ',');
        first = 0;
        json_str(b, tl->str + a->key);
        orn_buf_putc(b, ':');
        if (a->type == A_INT)
            orn_buf_printf(b, "%lld", (long long)a->v.i);
        else if (a->type == A_NUM && isfinite(a->v.f))
            orn_buf_printf(b, "%.9g", a->v.f);
        else if (a->type == A_NUM)
            orn_buf_puts(b, "null");
        else
            json_str(b, tl->str + a->v.s);
    }
    if (e->flags & F_UNFINISHED) orn_buf_printf(b, "%s\"unfinished\":true", first ? "" : ",");
    orn_buf_putc(b, '}');
}

/* This rank's part of traceEvents: its process's metadata, then its spans (each element
 * preceded by ",\n" but rank 0's first). Rank r is process r + 1 and its main thread r + 1:
 * Perfetto treats pid 0 as the kernel's idle process. */
static void format_rank(const OrnTl *tl, const Clock *c, OrnBuf *b)
{
    int r = tl->ctx->rank, id = r + 1;
    char name[400];
    snprintf(name, sizeof name, "rank %d (%s, pid %ld)", r, tl->host, (long)getpid());
    orn_buf_printf(b,
                   "%s{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_name\",\"args\":{"
                   "\"name\":",
                   r ? ",\n" : "", id, id);
    json_str(b, name);
    orn_buf_puts(b, "}}");
    orn_buf_printf(b,
                   ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_sort_index\","
                   "\"args\":{\"sort_index\":%d}}",
                   id, id, r);
    orn_buf_printf(b,
                   ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\","
                   "\"args\":{\"name\":\"rank %d\"}}",
                   id, id, r);
    orn_buf_printf(b,
                   ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_labels\","
                   "\"args\":{\"labels\":",
                   id, id);
    snprintf(name, sizeof name, "clock offset %.3f us (%s), %lld spans dropped", c->off0 * 1e6,
             tl->measured ? "measured" : "same host as rank 0", (long long)tl->dropped);
    json_str(b, name);
    orn_buf_puts(b, "}}");
    for (int64_t i = 0; i < tl->n; i++) {
        const TlEvent *e = &tl->ev[i];
        if (e->t1 < 0) continue; /* never ended (recording stopped first) */
        double a = ts_us(c, e->t0), z = ts_us(c, e->t1);
        if (e->flags & F_FLIGHT) {
            /* a nestable async pair: its own id, its arguments on the begin */
            for (int end = 0; end < 2; end++) {
                orn_buf_puts(b, ",\n{\"name\":");
                json_str(b, tl->str + e->name);
                orn_buf_printf(b,
                               ",\"cat\":\"flight\",\"ph\":\"%s\",\"id\":\"%d.%lld\",\"pid\":%d,"
                               "\"tid\":%d,\"ts\":%.3f",
                               end ? "e" : "b", id, (long long)i, id, id, end ? z : a);
                if (!end) put_args(b, tl, e);
                orn_buf_putc(b, '}');
            }
            continue;
        }
        orn_buf_puts(b, ",\n{\"name\":");
        json_str(b, tl->str + e->name);
        orn_buf_printf(
            b, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
            orn_tl_kind_name((OrnTlKind)e->kind), id, id, a, z - a);
        put_args(b, tl, e);
        orn_buf_putc(b, '}');
    }
}

/* Rank 0: receive rank r's text (its size first) and append it to the file. */
static int receive_part(OrnDsmCtx *ctx, int r, FILE *f)
{
    uint64_t n = 0;
    OrnDsmReq *rq = NULL;
    int status = orn_dsm_irecv(ctx, &n, sizeof n, r, ORN_TAG_TIMELINE, &rq);
    if (!status) status = orn_dsm_waitall(ctx, &rq, &r, 1, "timeline: size of a rank's spans");
    if (status) return status;
    char *buf = orn_xmalloc(n ? (size_t)n : 1);
    status = orn_dsm_irecv(ctx, buf, (size_t)n, r, ORN_TAG_TIMELINE, &rq);
    if (!status) status = orn_dsm_waitall(ctx, &rq, &r, 1, "timeline: a rank's spans");
    if (!status && f && n) fwrite(buf, 1, (size_t)n, f);
    free(buf);
    return status;
}

int orn_dsm_timeline_finish(OrnDsmCtx *ctx, int64_t *dropped)
{
    OrnTl *tl = ctx->tl;
    int status = ORN_OK, wstatus = ORN_OK;
    if (dropped) *dropped = 0;
    if (!tl) return ORN_OK;
    ctx->tl = NULL; /* nothing below is recorded */
    double now = orn_dsm_now();
    while (tl->depth > 0) pop(tl, now, F_UNFINISHED);
    Clock c = {tl->start, tl->off0, 0, 0, tl->t0_rank0};
    double rtt1 = 0;
    status = orn_dsm_barrier(ctx);
    if (!status) status = measure_clock(ctx, tl->measured, &c.off1, &rtt1);
    c.end = orn_dsm_now();
    if (!tl->measured) c.off1 = c.off0;
    int64_t lost[2] = {tl->dropped, tl->dropped_args};
    if (!status) status = orn_dsm_allreduce_i64(ctx, lost, 2, ORN_DSM_SUM);
    OrnBuf b;
    orn_buf_init(&b);
    if (!status) format_rank(tl, &c, &b);
    if (!status && ctx->rank == 0) {
        FILE *f = tl->f;
        fputs("{\"traceEvents\":[\n", f);
        fwrite(b.data ? b.data : "", 1, b.len, f);
        for (int r = 1; r < ctx->size && !status; r++) status = receive_part(ctx, r, f);
        fprintf(f,
                "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"producer\":\"orion "
                "timeline\",\"ranks\":%d,\"dropped_spans\":%lld,\"dropped_args\":%lld}}\n",
                ctx->size, (long long)lost[0], (long long)lost[1]);
        int bad = ferror(f);
        tl->f = NULL;
        if (fclose(f) != 0 || bad)
            wstatus = orn_dsm_fail(ctx, ORN_E_IO, "timeline: cannot write the file: %s",
                                   strerror(errno ? errno : EIO));
    } else if (!status) {
        uint64_t n = b.len;
        OrnDsmReq *rq[2] = {NULL, NULL};
        int peers[2] = {0, 0};
        status = orn_dsm_isend(ctx, &n, sizeof n, 0, ORN_TAG_TIMELINE, &rq[0]);
        if (!status)
            status = orn_dsm_isend(ctx, b.data ? b.data : "", b.len, 0, ORN_TAG_TIMELINE, &rq[1]);
        if (!status)
            status = orn_dsm_waitall(ctx, rq, peers, 2, "timeline: sending this rank's spans");
        orn_dsm_drop(ctx, &rq[0]);
        orn_dsm_drop(ctx, &rq[1]);
    }
    orn_buf_free(&b);
    tl_free(tl);
    if (status) return status;
    if (dropped) *dropped = lost[0];
    return orn_dsm_agree(ctx, wstatus);
}
