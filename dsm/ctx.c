/* ctx.c: the DSM context: transport, error message, timeout, array registry. */
#include "dsm_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "progress.h"
#include "strbuf.h"
#include "xferq.h"

int orn_dsm_ctx_new(OrnDsmTransport *tp, OrnDsmCtx **out)
{
    OrnDsmCtx *ctx = orn_xcalloc(1, sizeof *ctx);
    ctx->tp = tp;
    ctx->rank = tp->rank;
    ctx->size = tp->size;
    ctx->err_rank = ctx->rank;
    if (gethostname(ctx->host, sizeof ctx->host - 1) != 0)
        snprintf(ctx->host, sizeof ctx->host, "?");
    const char *env = getenv("ORN_TIMEOUT");
    if (env && *env) {
        char *end = NULL;
        double t = strtod(env, &end);
        if (end && *end == '\0' && t > 0) ctx->timeout = t;
    }
    double limit = 10.0;
    env = getenv("ORN_LIVENESS");
    if (env && *env) {
        char *end = NULL;
        double t = strtod(env, &end);
        if (!strcmp(env, "off") || (end && *end == '\0' && t == 0))
            limit = 0;
        else if (end && *end == '\0' && t > 0 && isfinite(t))
            limit = t;
        else if (ctx->rank == 0)
            fprintf(stderr, "orion: warning: ignoring ORN_LIVENESS='%.40s' (seconds or off)\n",
                    env);
    }
    if (ctx->size > 1 && limit > 0) orn_live_start(ctx, limit, &ctx->live);
    int status = orn_dsm_xfer_init(ctx);
    if (!status) status = orn_dsm_wait_setup(ctx);
    if (status) {
        fprintf(stderr, "orion: %s\n", ctx->err);
        ctx->tp = NULL; /* the caller's still */
        orn_dsm_ctx_free(ctx);
        *out = NULL;
        return status;
    }
    *out = ctx;
    return ORN_OK;
}

void orn_dsm_ctx_free(OrnDsmCtx *ctx)
{
    if (!ctx) return;
    orn_dsm_timeline_discard(ctx);
    orn_dsm_quiesce(ctx);
    orn_dsm_pass_free(ctx);
    orn_live_stop(ctx->live);
    ctx->live = NULL;
    orn_dsm_serve_free(ctx);
    orn_dsm_xfer_free(ctx); /* after the service's, which are in it */
    free(ctx->reg);
    free(ctx->host_of);
    free(ctx->host_start);
    free(ctx->host_members);
    if (ctx->tp) ctx->tp->ops->free(ctx->tp);
    free(ctx);
}

int orn_dsm_rank(const OrnDsmCtx *ctx)
{
    return ctx->rank;
}

int orn_dsm_size(const OrnDsmCtx *ctx)
{
    return ctx->size;
}

OrnDsmTransport *orn_dsm_transport(OrnDsmCtx *ctx)
{
    return ctx->tp;
}

void orn_dsm_set_timeout(OrnDsmCtx *ctx, double seconds)
{
    if (seconds > 0) ctx->timeout = seconds;
}

double orn_dsm_timeout(const OrnDsmCtx *ctx)
{
    return ctx->timeout;
}

const char *orn_dsm_error(const OrnDsmCtx *ctx)
{
    return ctx->err;
}

OrnStatus orn_dsm_error_code(const OrnDsmCtx *ctx)
{
    return (OrnStatus)ctx->errcode;
}

/* Messages may quote bytes of input files and paths: they are kept escaped (control
 * characters and malformed UTF-8 as \xNN, strbuf.h), so what reaches a terminal is text. */
static void set_error_lines(OrnDsmCtx *ctx, int code, const char *msg, size_t n, const char *lines)
{
    OrnBuf b;
    orn_buf_init(&b);
    orn_buf_escaped(&b, msg, n);
    for (const char *l = lines; l && *l;) { /* line breaks kept, nothing else */
        size_t k = strcspn(l, "\n");
        orn_buf_escaped(&b, l, k);
        l += k;
        if (*l == '\n') orn_buf_putc(&b, *l++);
    }
    size_t len = b.len < sizeof ctx->err - 1 ? b.len : sizeof ctx->err - 1;
    while (len < b.len && len && (b.data[len] & 0xC0) == 0x80) len--; /* whole characters */
    if (len) memcpy(ctx->err, b.data, len);
    ctx->err[len] = '\0';
    orn_buf_free(&b);
    ctx->errcode = code;
}

static void set_error(OrnDsmCtx *ctx, int code, const char *msg, size_t n)
{
    set_error_lines(ctx, code, msg, n, NULL);
}

int orn_dsm_fail(OrnDsmCtx *ctx, int code, const char *fmt, ...)
{
    char msg[sizeof ctx->err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    set_error(ctx, code, msg, strlen(msg));
    ctx->err_rank = ctx->rank;
    return code;
}

int orn_dsm_fail_lines(OrnDsmCtx *ctx, int code, const char *lines, const char *fmt, ...)
{
    char msg[sizeof ctx->err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    set_error_lines(ctx, code, msg, strlen(msg), lines);
    ctx->err_rank = ctx->rank;
    return code;
}

int orn_dsm_fail_ctx(OrnDsmCtx *ctx, int code, const char *fmt, ...)
{
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* "prefix: old", unless old already starts with that prefix (a save error from the
     * DSM says "save: ..." and the program adds "save" again: never "save: save: ...") */
    size_t pl = strlen(prefix);
    OrnBuf b;
    orn_buf_init(&b);
    if (!(strncmp(ctx->err, prefix, pl) == 0 && ctx->err[pl] == ':')) {
        orn_buf_put(&b, prefix, pl);
        orn_buf_puts(&b, ": ");
    }
    if (!ctx->err[0]) ctx->err_rank = ctx->rank; /* else: context for the same error */
    /* the old message is escaped already: its line breaks (an excerpt's) stay */
    char old[sizeof ctx->err];
    memcpy(old, ctx->err, sizeof old);
    set_error_lines(ctx, code, b.data, b.len, old);
    orn_buf_free(&b);
    return code;
}

void orn_dsm_clear_error(OrnDsmCtx *ctx)
{
    ctx->err[0] = '\0';
    ctx->errcode = ORN_OK;
    ctx->err_rank = ctx->rank;
}

int orn_dsm_error_rank(const OrnDsmCtx *ctx)
{
    return ctx->err_rank;
}

const char *orn_dsm_host(const OrnDsmCtx *ctx)
{
    return ctx->host;
}

int orn_dsm_fail_file(OrnDsmCtx *ctx, int code, const char *prefix, const char *path,
                      const char *what, int err)
{
    if (ctx->size > 1)
        return orn_dsm_fail(ctx, code, "%s%s: %s on host %s: %s", prefix, path, what, ctx->host,
                            strerror(err));
    return orn_dsm_fail(ctx, code, "%s%s: %s: %s", prefix, path, what, strerror(err));
}

void orn_dsm_set_progress_line(OrnDsmCtx *ctx, struct OrnProgress *p)
{
    ctx->progress = p;
}

struct OrnProgress *orn_dsm_progress_line(const OrnDsmCtx *ctx)
{
    return ctx->progress;
}

void orn_dsm_die(OrnDsmCtx *ctx, int exit_code)
{
    orn_live_failing(ctx->live);
    orn_progress_clear(ctx->progress);
    fflush(stdout);
    fprintf(stderr, "orion: rank %d: %s\n", ctx->rank, ctx->err[0] ? ctx->err : "failed");
    fflush(stderr);
    ctx->tp->ops->abort(ctx->tp, exit_code ? exit_code : 1);
}

void orn_dsm_die_alike(OrnDsmCtx *ctx, int exit_code)
{
    if (ctx->rank != 0 && ctx->size > 1) {
        orn_live_failing(ctx->live);
        orn_progress_clear(ctx->progress);
        fflush(stdout);
        struct timespec grace = {ORN_DSM_DIE_GRACE, 0}; /* rank 0's abort ends it sooner */
        nanosleep(&grace, NULL);
    }
    orn_dsm_die(ctx, exit_code);
}

int orn_dsm_agree(OrnDsmCtx *ctx, int status)
{
    return orn_dsm_agree_at(ctx, status, 0);
}

int orn_dsm_agree_at(OrnDsmCtx *ctx, int status, int64_t order)
{
    int P = ctx->size, rc, first = -1, code = ORN_OK;
    struct {
        int64_t order;
        int32_t status, pad;
    } mine = {order, status, 0}, s;
    void *all = NULL;
    size_t *counts = orn_xcalloc((size_t)P, sizeof *counts);
    char msg[sizeof ctx->err];
    rc = orn_dsm_allgatherv(ctx, &mine, sizeof mine, &all, counts, "agreement on status");
    if (rc) goto fn_exit;
    int64_t best = 0;
    for (int p = 0; p < P; p++) {
        memcpy(&s, (char *)all + (size_t)p * sizeof s, sizeof s);
        if (s.status != ORN_OK && (first < 0 || s.order < best)) {
            first = p;
            code = s.status;
            best = s.order;
        }
    }
    if (first < 0) {
        rc = ORN_OK;
        goto fn_exit;
    }
    memcpy(msg, ctx->err, sizeof msg);
    rc = orn_dsm_bcast(ctx, msg, sizeof msg, first);
    if (rc) goto fn_exit;
    msg[sizeof msg - 1] = '\0';
    memcpy(ctx->err, msg, sizeof msg);
    ctx->errcode = code;
    ctx->err_rank = first;
    rc = code;
fn_exit:
    free(all);
    free(counts);
    return rc;
}

size_t orn_dsm_type_size(OrnDsmType t)
{
    return (t == ORN_DSM_I32 || t == ORN_DSM_F32) ? 4 : 8;
}

const char *orn_dsm_type_name(OrnDsmType t)
{
    switch (t) {
    case ORN_DSM_I32:
        return "i32";
    case ORN_DSM_I64:
        return "i64";
    case ORN_DSM_F32:
        return "f32";
    case ORN_DSM_F64:
        return "f64";
    }
    return "?";
}

OrnDsmArray *orn_dsm_lookup(OrnDsmCtx *ctx, int id)
{
    if (id < 0 || id >= ctx->nreg) return NULL;
    return ctx->reg[id];
}

void orn_dsm_touch(OrnDsmArray *a)
{
    a->gen = ++a->ctx->gen_clock;
}
