/* session.c: one `orion` session (session.h). */
#define _GNU_SOURCE /* RTLD_NOLOAD-free dlopen, mkdir */

#include "session.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze.h"
#include "cc_driver.h"
#include "emit.h"
#include "eval.h"
#include "explain.h"
#include "orn_config.h"
#include "strbuf.h"
#include "unit.h"

typedef int (*OrnModuleEntry)(OrnStdProg *, OrnStdSlots *, int, char **);

struct OrnSession {
    OrnStdProg *p;
    bool declared_layout;
    OrnBuf acc; /* the text accepted so far */
    uint32_t acc_lines;
    OrnStdSlots *slots;
    const char *path; /* the path of the last piece run */
    bool evaluate;    /* simple pieces by the evaluator (eval.h); $ORN_REPL_COMPILE=1: never */
    bool echo;        /* orn_session_set_echo */
    char **keep;      /* file names the loaded modules' messages point to */
    int nkeep;
    char cache[4000];
    int vec_bytes; /* the modules' vector bytes (OrnCgOptions), rank 0's; 0: not yet probed */
};

static uint32_t count_lines(const char *t, size_t n)
{
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) k += t[i] == '\n';
    return k;
}

static void mkdirs(char *path)
{
    for (char *q = path + 1; *q; q++) {
        if (*q != '/') continue;
        *q = '\0';
        mkdir(path, 0755);
        *q = '/';
    }
    mkdir(path, 0755);
}

OrnSession *orn_session_new(OrnStdProg *p, bool declared_layout)
{
    OrnSession *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->p = p;
    s->declared_layout = declared_layout;
    orn_buf_init(&s->acc);
    s->slots = orn_std_slots_new();
    s->path = "<repl>";
    const char *nc = getenv("ORN_REPL_COMPILE");
    s->evaluate = !(nc && *nc && strcmp(nc, "0") != 0);
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (x && *x)
        snprintf(s->cache, sizeof s->cache, "%s/orion", x);
    else
        snprintf(s->cache, sizeof s->cache, "%s/.cache/orion", h && *h ? h : "/tmp");
    if (p->rank == 0) mkdirs(s->cache);
    return s;
}

void orn_session_free(OrnSession *s)
{
    if (!s) return;
    orn_buf_free(&s->acc);
    orn_std_slots_free(s->slots);
    for (int i = 0; i < s->nkeep; i++) free(s->keep[i]);
    free(s->keep);
    free(s);
}

bool orn_session_incomplete(const char *text, size_t len)
{
    OrnUnit *u = orn_unit_new("<input>", text, len, NULL);
    bool inc = orn_parse(u, true) == ORN_PARSE_INCOMPLETE;
    orn_unit_free(u);
    return inc;
}

static const char *keep_name(OrnSession *s, const char *path)
{
    for (int i = 0; i < s->nkeep; i++)
        if (strcmp(s->keep[i], path) == 0) return s->keep[i];
    char **k = realloc(s->keep, (size_t)(s->nkeep + 1) * sizeof *k);
    if (!k) abort();
    s->keep = k;
    s->keep[s->nkeep] = strdup(path);
    if (!s->keep[s->nkeep]) abort();
    return s->keep[s->nkeep++];
}

static const char *keep_str(void *ud, const char *str)
{
    return keep_name(ud, str);
}

/* FNV-1a, 64 bits, over the module's C text and what else decides the object. */
static uint64_t fnv(uint64_t h, const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)t[i]) * 1099511628211u;
    return h;
}

/* The shared object of `code`: from the cache, or compiled into it (rank 0). Every rank
 * returns the same verdict: 0 with the path in `so`, else non-zero (reported). */
static int build(OrnSession *s, const OrnBuf *code, char *so, size_t size)
{
    static const char stamp[] = ORN_CC " " __DATE__ " " __TIME__;
    uint64_t h = fnv(1469598103934665603u, stamp, sizeof stamp);
    h = fnv(h, code->data ? code->data : "", code->len);
    const char *ef = getenv("ORN_CFLAGS");
    if (ef) h = fnv(h, ef, strlen(ef));
    snprintf(so, size, "%s/%016llx.so", s->cache, (unsigned long long)h);
    int rc = 0;
    if (s->p->rank == 0 && access(so, R_OK) != 0) {
        char tmp[4400];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", so, (long)getpid());
        OrnCcOptions cc = {.shared = true};
        rc = orn_cc_build(code->data ? code->data : "", code->len, tmp, &cc);
        if (rc == 0 && rename(tmp, so) != 0) {
            fprintf(stderr, "orion: error: cannot write '%s': %s\n", so, strerror(errno));
            rc = 2;
        }
        if (rc) unlink(tmp);
    }
    rc = orn_dsm_agree(s->p->dsm, rc ? ORN_E_INTERNAL : ORN_OK);
    if (rc) orn_dsm_clear_error(s->p->dsm);
    return rc;
}

/* Parse and check text (the accepted text, then the new piece at combined line l0, shown
 * as line `line` of path). NULL after an error (reported on rank 0). */
static OrnUnit *check(OrnSession *s, const char *path, const OrnBuf *text, uint32_t l0,
                      uint32_t line, uint32_t from, OrnPlanSet *plans, FILE *diag)
{
    OrnUnit *u =
        orn_unit_new(path, text->data ? text->data : "", text->len, s->p->rank == 0 ? diag : NULL);
    u->diags.line_shift = (int32_t)line - (int32_t)l0;
    u->diags.quiet_before = from;
    if (orn_parse(u, false) != ORN_PARSE_OK || !orn_sema(u) || !orn_analyze(u, plans) ||
        orn_diags_failed(&u->diags)) {
        orn_unit_free(u);
        return NULL;
    }
    if (s->declared_layout) plans->layout.n = 0;
    return u;
}

/* The accepted text, padded with newlines so that a piece shown from line `line` starts at
 * that line when it can, then the piece; *l0: the combined line where the piece starts. */
static void combine(OrnSession *s, OrnBuf *t, const char *text, size_t len, uint32_t line,
                    uint32_t *l0)
{
    orn_buf_init(t);
    orn_buf_put(t, s->acc.data ? s->acc.data : "", s->acc.len);
    uint32_t n = s->acc_lines;
    while (n + 1 < line) orn_buf_putc(t, '\n'), n++;
    *l0 = n + 1;
    orn_buf_put(t, text, len);
    if (len == 0 || text[len - 1] != '\n') orn_buf_putc(t, '\n');
}

void orn_session_set_echo(OrnSession *s, bool on)
{
    s->echo = on;
}

/* A piece that is one expression statement of a printable value (a scalar, an array, a
 * view) becomes print(expr): the call is made here, as sema would have typed it, so spans
 * and messages stay the expression's own. */
static void echo_piece(OrnUnit *u, uint32_t from)
{
    OrnNode *one = NULL;
    int n = 0;
    for (OrnNode *st = u->program->u.block.stmts; st; st = st->next)
        if (st->span.lo >= from) one = st, n++;
    if (n != 1 || one->kind != N_EXPR || !one->u.expr_stmt.e->type) return;
    OrnNode *e = one->u.expr_stmt.e;
    if (!orn_sema_printable(e)) return;
    OrnNode *call = orn_node_new(u, N_CALL, e->span);
    call->u.call.id = orn_intern_cstr(u->names, "print");
    call->u.call.id_span = e->span;
    call->u.call.args = e;
    call->u.call.builtin = ORN_BI_PRINT;
    call->u.call.sym = NULL;
    call->type = orn_type_scalar(u->types, T_VOID);
    e->next = NULL;
    one->u.expr_stmt.e = call;
}

static bool has_statements(const OrnUnit *u, uint32_t from)
{
    for (const OrnNode *st = u->program ? u->program->u.block.stmts : NULL; st; st = st->next)
        if (st->span.lo >= from) return true;
    return false;
}

int orn_session_run(OrnSession *s, const char *path, const char *text, size_t len, uint32_t line,
                    int argc, char **argv)
{
    OrnBuf t, code;
    uint32_t l0;
    combine(s, &t, text, len, line, &l0);
    uint32_t from = (uint32_t)(t.len - len - (len == 0 || text[len - 1] != '\n'));
    orn_buf_init(&code);
    OrnPlanSet plans;
    int rc = 1;
    OrnUnit *u = check(s, path, &t, l0, line, from, &plans, stderr);
    if (!u) goto fn_exit;
    /* run-time errors show the line they name: the session's text, where its lines are the
     * ones shown (a piece that could not start at its own line: none) */
    orn_std_set_source(s->p, l0 == line ? t.data : NULL);
    if (s->echo && argc == 0) echo_piece(u, from);
    if (argc == 0 && has_statements(u, from) && s->evaluate && orn_eval_supported(u, from)) {
        s->p->file = keep_name(s, path);
        s->path = s->p->file;
        rc = orn_eval_run(s->p, s->slots, u, from, keep_str, s);
    } else if (has_statements(u, from) || argc > 0) {
        const char *file = keep_name(s, path);
        if (!s->vec_bytes) { /* rank 0's compiler builds every rank's modules */
            OrnCcOptions cc = {.shared = true};
            int v = s->p->rank == 0 ? orn_cc_vector_bytes(&cc) : 0;
            if (orn_dsm_bcast(s->p->dsm, &v, sizeof v, 0) == ORN_OK) s->vec_bytes = v;
        }
        OrnCgOptions copt = {.file = file, .module = true, .from = from, .vec_bytes = s->vec_bytes};
        if (!orn_cg_generate(u, &plans, &orn_cg_target_c, &copt, &code)) goto fn_fail;
        char so[4300];
        if (build(s, &code, so, sizeof so)) goto fn_fail;
        void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        OrnModuleEntry entry = h ? (OrnModuleEntry)(uintptr_t)dlsym(h, "orn_module_entry") : NULL;
        if (!entry) {
            const char *e = dlerror();
            fprintf(stderr, "orion: rank %d: cannot load '%s': %s\n", s->p->rank, so, e ? e : "?");
        }
        /* every rank runs the piece or none does (a rank without the cache folder) */
        if (orn_dsm_agree(s->p->dsm, entry ? ORN_OK : ORN_E_INTERNAL)) {
            orn_dsm_clear_error(s->p->dsm);
            goto fn_fail; /* a handle stays open: its strings may be in use */
        }
        s->p->file = file;
        s->path = file;
        rc = entry(s->p, s->slots, argc, argv);
        fflush(stdout);
        if (rc >= 100 || rc == 2) { /* --help, a bad --param, an extern: not taken */
            rc = rc == 2 ? 1 : rc;
            goto fn_exit;
        }
    } else {
        rc = 0;
    }
    /* accepted (also after a run-time error: what it defined before that stays defined) */
    orn_buf_free(&s->acc);
    s->acc = t;
    orn_buf_init(&t);
    s->acc_lines = count_lines(s->acc.data, s->acc.len);
fn_exit:
    orn_std_set_source(s->p, s->acc.data);
    if (u) orn_unit_free(u);
    orn_buf_free(&code);
    orn_buf_free(&t);
    return rc;
fn_fail:
    rc = 1;
    goto fn_exit;
}

void orn_session_explain(OrnSession *s, FILE *out)
{
    OrnPlanSet plans;
    OrnUnit *u = check(s, s->path, &s->acc, 1, 1, (uint32_t)s->acc.len, &plans, NULL);
    if (!u) return;
    OrnBuf r;
    orn_buf_init(&r);
    orn_explain_text(&r, u, &plans);
    /* the last loop's report: its lines from the last one that is not indented */
    const char *t = r.data ? r.data : "", *last = NULL;
    for (const char *q = t; *q; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : q + strlen(q))
        if (*q != ' ' && *q != '\n' && strstr(q, "parallel_for") == strchr(q, ' ') + 1) last = q;
    if (s->p->rank == 0 && last) fputs(last, out);
    if (s->p->rank == 0 && !last) fputs("no parallel_for yet\n", out);
    orn_buf_free(&r);
    orn_unit_free(u);
}

void orn_session_type(OrnSession *s, const char *path, uint32_t line, const char *expr, FILE *out)
{
    OrnBuf t;
    uint32_t l0;
    combine(s, &t, expr, strlen(expr), line, &l0);
    /* no line shift: the session's lines as they are (a note at a declaration), the
     * expression at `line` where the session's text leaves room for it (else the line
     * after the text) */
    OrnUnit *u = orn_unit_new(path, t.data, t.len, s->p->rank == 0 ? stderr : NULL);
    if (orn_parse(u, false) == ORN_PARSE_OK && orn_sema(u)) {
        const OrnNode *last = NULL;
        for (const OrnNode *st = u->program->u.block.stmts; st; st = st->next) last = st;
        if (s->p->rank == 0 && last && last->kind == N_EXPR && last->u.expr_stmt.e->type)
            fprintf(out, "%s\n", orn_type_str(u->types, last->u.expr_stmt.e->type));
        else if (s->p->rank == 0)
            fprintf(out, "(not an expression)\n");
    }
    orn_unit_free(u);
    orn_buf_free(&t);
}

/* What :vars shows after a variable's type: a scalar's value, an array's extents. */
static void var_value(FILE *out, const char *type, const void *val, size_t size)
{
    static const char *const num[] = {"i32", "i64", "f32", "f64"}; /* OrnDsmType's order */
    char buf[64];
    if (!val) return;
    for (int k = ORN_DSM_I32; k <= ORN_DSM_F64; k++)
        if (strcmp(type, num[k]) == 0 && size == orn_dsm_type_size((OrnDsmType)k)) {
            orn_std_fmt_elem(buf, sizeof buf, k, val);
            fprintf(out, " = %s", buf);
            return;
        }
    if (strncmp(type, "dist ", 5) == 0 && size == sizeof(OrnDsmArray *)) {
        const OrnDsmArray *a;
        memcpy(&a, val, sizeof a);
        if (!a) return;
        int64_t dims[ORN_DSM_MAXDIM] = {0}; /* as declared */
        for (int d = 0; d < a->ndim; d++) dims[orn_dsm_decl_dim(a, d)] = a->dims[d];
        fputs(" (", out);
        for (int d = 0; d < a->ndim; d++) fprintf(out, "%s%" PRId64, d ? " x " : "", dims[d]);
        if (a->sparse) fprintf(out, ", %" PRId64 " stored", a->nnz);
        fputs(")", out);
    } else if (strncmp(type, "local ", 6) == 0 && size == sizeof(OrnStdArr *)) {
        const OrnStdArr *a;
        memcpy(&a, val, sizeof a);
        if (!a) return;
        fputs(" (", out);
        for (int d = 0; d < a->ndim; d++) fprintf(out, "%s%" PRId64, d ? " x " : "", a->dims[d]);
        fputs(strstr(type, "str[") ? " lines)" : ")", out);
    } else if (strcmp(type, "bool") == 0 && size == sizeof(bool)) {
        bool v;
        memcpy(&v, val, sizeof v);
        fprintf(out, " = %s", v ? "true" : "false");
    } else if (strcmp(type, "str") == 0 && size == sizeof(const char *)) {
        const char *v;
        memcpy(&v, val, sizeof v);
        if (v && strlen(v) <= 60 && !strpbrk(v, "\n\r\t\""))
            fprintf(out, " = \"%s\"", v);
        else if (v)
            fprintf(out, " (%zu bytes)", strlen(v));
    }
}

void orn_session_vars(OrnSession *s, FILE *out)
{
    if (s->p->rank != 0) return;
    const char *type, *key;
    for (int i = 0; (key = orn_std_slot_at(s->slots, i, &type)) != NULL; i++) {
        const char *at = strchr(key, '@');
        size_t size = 0;
        const void *val = orn_std_slot_val(s->slots, i, &size);
        fprintf(out, "%.*s: %s", (int)(at ? at - key : (long)strlen(key)), key, type);
        var_value(out, type, val, size);
        fputc('\n', out);
    }
}
