/* std.c: the program context of generated programs: start and end, errors, exit(), the
 * program random stream, externs from shared libraries, running loops, the ORN_TRACE
 * dump, and the timeline and statistics switched on from the command line or the
 * environment (printed and written at the end). */
#include "orn_std.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <time.h>

#include "monitor.h"
#include "params.h"
#include "progress.h"
#include "timeline.h"

/* The program stream is stream 2^64-1: loops use (loop_id << 32 | run), which never
 * reaches it. */
#define PROGRAM_STREAM UINT64_MAX

/* Defined in blas.c, which (with OpenBLAS) is linked only into programs that use the
 * dense linear algebra built-ins. */
#pragma weak orn_std_blas_init

static void init_rng(OrnStdProg *p)
{
    orn_rt_rng_init(&p->rng, orn_rt_seed(p->rt), PROGRAM_STREAM, NULL, 0);
}

static void open_trace(OrnStdProg *p)
{
    const char *path = getenv("ORN_TRACE");
    if (!path || !*path) return;
    orn_rt_set_trace(p->rt, 1);
    if (p->rank != 0) return;
    p->trace = fopen(path, "w");
    if (!p->trace) fprintf(stderr, "orion: rank 0: cannot write the trace to '%s'\n", path);
}

/* srun started this process as one of N > 1 tasks, but gave it no process-management
 * interface (no PMI_* or PMIX_* in the environment: `srun --mpi=none`, often the default),
 * so MPI sees a job of one rank: each task would run the whole program alone. Returns N
 * then, else 0. */
static long srun_alone(void)
{
    const char *n = getenv("SLURM_STEP_NUM_TASKS");
    long tasks = n ? strtol(n, NULL, 10) : 0;
    if (tasks < 2) return 0;
    static const char *const pmi[] = {"PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_PORT", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof pmi / sizeof pmi[0]; i++)
        if (getenv(pmi[i])) return 0;
    return tasks;
}

void orn_std_init(OrnStdProg *p, int *argc, char ***argv, const char *file,
                  const OrnStdParam *params, int nparams)
{
    memset(p, 0, sizeof *p);
    p->resume_at = -1;
    p->file = file;
    p->prog = *argc > 0 ? (*argv)[0] : "prog";
    int status = orn_rt_init(argc, argv, &p->rt);
    if (status || !p->rt) {
        fprintf(stderr, "orion: cannot start the runtime (MPI): status %d\n", status);
        exit(1);
    }
    p->dsm = orn_rt_dsm(p->rt);
    p->rank = orn_rt_rank(p->rt);
    p->size = orn_rt_size(p->rt);
    long alone = p->size == 1 ? srun_alone() : 0;
    if (alone) { /* exit 2: the command line that started it is wrong (docs/cluster.md) */
        const char *id = getenv("SLURM_PROCID");
        if (!id || strcmp(id, "0") == 0)
            fprintf(stderr,
                    "orion: error: srun started %ld tasks, but MPI sees each one alone (1 "
                    "rank): MPICH's ranks need a process-management interface, srun "
                    "--mpi=pmi2\n",
                    alone);
        fflush(stderr);
        orn_rt_finalize(p->rt);
        exit(2);
    }
    int rc = orn_std_parse_params(p, *argc, *argv, params, nparams);
    if (rc < 0) rc = orn_std_observe(p);
    if (rc >= 0) {
        fflush(stdout);
        fflush(stderr);
        free(p->given);
        orn_rt_finalize(p->rt);
        exit(rc);
    }
    init_rng(p);
    open_trace(p);
    if (orn_std_blas_init) orn_std_blas_init();
}

int orn_std_observe(OrnStdProg *p)
{
    const char *st = getenv("ORN_STATS");
    if (st && *st && strcmp(st, "0") != 0) {
        p->summary = 1;
        p->stats = strcmp(st, "runs") == 0;
    }
    if (p->summary) orn_rt_set_loop_summary(p->rt, 1);
    if (!p->timeline) {
        const char *path = getenv("ORN_TIMELINE");
        if (path && *path) p->timeline = path;
    }
    if (p->timeline && !orn_dsm_timeline(p->dsm)) {
        const char *max = getenv("ORN_TIMELINE_MAX");
        if (orn_dsm_timeline_start(p->dsm, p->timeline, max && *max ? atoll(max) : 0)) {
            if (p->rank == 0) fprintf(stderr, "%s: error: %s\n", p->prog, orn_dsm_error(p->dsm));
            fflush(stderr);
            orn_dsm_clear_error(p->dsm);
            p->timeline = NULL;
            return 2;
        }
    }
    return orn_std_monitor_start(p);
}

/* "12.3 MiB" */
static void fmt_bytes(char *buf, size_t n, int64_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, u++;
    if (u == 0)
        snprintf(buf, n, "%" PRId64 " B", b);
    else
        snprintf(buf, n, "%.1f %s", v, unit[u]);
}

static const char *strategy_name(int s)
{
    static const char *const strat[] = {"1d", "2d", "2d_ordered", "unimodular", "serial"};
    return s >= 0 && s <= ORN_RT_SERIAL ? strat[s] : "?";
}

/* --stats / $ORN_STATS: one line per parallel_for source location (rank 0). */
static void print_summary(OrnStdProg *p)
{
    OrnRtLoopSummary *s = NULL;
    int n = 0;
    if (orn_rt_loop_summary(p->rt, &s, &n)) {
        if (p->rank == 0)
            fprintf(stderr, "orion: stats: cannot gather the summary: %s\n", orn_rt_error(p->rt));
        orn_dsm_clear_error(p->dsm);
        return;
    }
    if (p->rank != 0) return;
    char lab[300], sent[32], recv[32];
    int w = 4;
    for (int i = 0; i < n; i++) {
        const char *base = strrchr(s[i].file, '/');
        int l = snprintf(lab, sizeof lab, "%s:%d", base ? base + 1 : s[i].file, s[i].line);
        if (l > w) w = l < 60 ? l : 60;
    }
    fprintf(stderr, "orion: stats: %d parallel_for location%s, %d rank%s\n", n, n == 1 ? "" : "s",
            p->size, p->size == 1 ? "" : "s");
    fprintf(stderr, "  %-*s  %-10s %6s %11s %11s %11s %11s %11s %10s %10s %9s\n", w, "loop",
            "strategy", "runs", "time s", "compute s", "wait s", "transfer s", "other s", "sent",
            "received", "imbalance");
    for (int i = 0; i < n; i++) {
        const OrnRtLoopSummary *e = &s[i];
        const char *base = strrchr(e->file, '/');
        snprintf(lab, sizeof lab, "%s:%d", base ? base + 1 : e->file, e->line);
        fmt_bytes(sent, sizeof sent, e->sent);
        fmt_bytes(recv, sizeof recv, e->received);
        double other = e->time - e->compute - e->wait - e->transfer;
        char imb[16] = "-";
        if (e->imbalance > 0) snprintf(imb, sizeof imb, "%.2f", e->imbalance);
        fprintf(stderr,
                "  %-*s  %-10s %6" PRId64 " %11.6f %11.6f %11.6f %11.6f %11.6f %10s %10s %9s\n", w,
                lab, strategy_name(e->strategy), e->runs, e->time, e->compute, e->wait, e->transfer,
                other > 0 ? other : 0.0, sent, recv, imb);
    }
    fprintf(stderr, "  (seconds summed over runs, mean over ranks; bytes between ranks, all "
                    "ranks together; imbalance: the busiest rank's compute over the mean)\n");
    fflush(stderr);
    free(s);
}

/* Collective: the timeline written and the summary printed, when they are on. */
static void finish_observers(OrnStdProg *p)
{
    if (p->timeline) {
        int64_t dropped = 0;
        int st = orn_dsm_timeline_finish(p->dsm, &dropped);
        if (p->rank == 0) {
            if (st)
                fprintf(stderr, "orion: %s\n", orn_dsm_error(p->dsm));
            else if (dropped)
                fprintf(stderr,
                        "orion: timeline: %s written without %" PRId64
                        " spans that did not fit (raise ORN_TIMELINE_MAX)\n",
                        p->timeline, dropped);
            fflush(stderr);
        }
        orn_dsm_clear_error(p->dsm);
        p->timeline = NULL;
    }
    if (p->summary) print_summary(p);
    p->summary = 0;
}

int orn_std_finish(OrnStdProg *p)
{
    orn_std_settle(p);
    orn_std_monitor_end(p);
    fflush(stdout);
    finish_observers(p);
    if (p->trace) fclose(p->trace);
    p->trace = NULL;
    orn_std_ckpt_free(p);
    free(p->given);
    p->given = NULL;
    for (int i = 0; i < ORN_STD_JAM_SLOTS; i++) {
        free(p->jam[i]);
        p->jam[i] = NULL;
        p->jam_cap[i] = 0;
    }
    for (int64_t i = 0; i < p->nstrs; i++) free(p->strs[i]);
    free(p->strs);
    p->strs = NULL;
    p->nstrs = p->capstrs = 0;
    orn_rt_finalize(p->rt);
    p->rt = NULL;
    return 0;
}

void orn_std_exit(OrnStdProg *p, int64_t code)
{
    orn_std_finish(p);
    exit((int)(code & 0xff));
}

void orn_std_set_source(OrnStdProg *p, const char *text)
{
    p->src = text;
    orn_rt_set_source(p->rt, text);
}

static void die_msg(OrnStdProg *p, int line, const char *name, const char *msg) ORN_STD_NORETURN;

void orn_std_die(OrnStdProg *p, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    die_msg(p, line, NULL, msg);
}

void orn_std_die_at(OrnStdProg *p, int site, const char *name, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    die_msg(p, site, name, msg);
}

static void die_msg(OrnStdProg *p, int site, const char *name, const char *msg)
{
    char src[400], col[24] = "";
    int at = orn_rt_src_excerpt(p->src, site, name, src, sizeof src);
    int line = ORN_RT_SITE_LINE(site);
    if (name && at > 0) snprintf(col, sizeof col, ":%d", at); /* "LINE:COL: message" */
    if (p->body_jb) { /* the REPL, in a loop body: the runtime agrees on it (run_guarded) */
        orn_dsm_fail_lines(p->dsm, ORN_E_BODY, src, "%s:%d%s: %s", p->file, line, col, msg);
        longjmp(*(jmp_buf *)p->body_jb, 1);
    }
    if (p->recover && !p->in_loop) { /* the REPL: back to the prompt */
        orn_progress_clear(p->progress);
        fflush(stdout);
        if (p->rank == 0) /* top-level code fails on every rank alike */
            fprintf(stderr, "orion: rank %d: %s:%d%s: %s%s\n", p->rank, p->file, line, col, msg,
                    src);
        fflush(stderr);
        longjmp(*(jmp_buf *)p->recover, 1);
    }
    orn_dsm_fail_lines(p->dsm, ORN_E_BODY, src, "%s:%d%s: %s", p->file, line, col, msg);
    if (!p->in_loop) orn_dsm_die_alike(p->dsm, 1); /* top level: every rank meets it */
    orn_rt_die(p->rt);
}

void orn_std_fail(OrnStdProg *p, int status, int site, int agreed)
{
    int line = ORN_RT_SITE_LINE(site);
    const char *msg = orn_dsm_error(p->dsm);
    if (!msg || !*msg) msg = "failed";
    if (agreed || (p->recover && p->size == 1)) {
        orn_progress_clear(p->progress);
        fflush(stdout);
        /* the rank it happened on (an agreement hands every rank the failing one's message),
         * and the statement's line unless the message shows one already */
        char src[400] = "";
        if (!strchr(msg, '\n')) orn_rt_src_excerpt(p->src, site, NULL, src, sizeof src);
        if (p->rank == 0)
            fprintf(stderr, "orion: rank %d: %s:%d: %s%s\n", orn_dsm_error_rank(p->dsm), p->file,
                    line, msg, src);
        fflush(stderr);
        orn_dsm_clear_error(p->dsm);
        if (p->recover) longjmp(*(jmp_buf *)p->recover, 1);
        orn_std_exit(p, 1);
    }
    orn_dsm_fail_ctx(p->dsm, status ? status : ORN_E_INTERNAL, "%s:%d", p->file, line);
    orn_rt_die(p->rt);
}

/* ---------------------------------------------------------------- random numbers */

void orn_std_set_seed(OrnStdProg *p, int64_t seed)
{
    orn_rt_set_seed(p->rt, (uint64_t)seed);
    init_rng(p);
}

double orn_std_rand(OrnStdProg *p)
{
    return orn_rt_rng_uniform(&p->rng);
}

double orn_std_randn(OrnStdProg *p)
{
    return orn_rt_rng_normal(&p->rng);
}

int64_t orn_std_randint(OrnStdProg *p, int64_t n, int line)
{
    return orn_std_rng_int(p, &p->rng, n, line);
}

int64_t orn_std_rng_int(OrnStdProg *p, OrnRtRng *g, int64_t n, int line)
{
    if (n <= 0)
        orn_std_die_at(p, line, "randint(", "randint(%" PRId64 "): the bound must be positive", n);
    return orn_rt_rng_int(g, n);
}

double orn_std_wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- externs */

void *orn_std_extern(OrnStdProg *p, const char *lib, const char *name, int line)
{
    if (p->extern_failed) return NULL; /* the first failure is the one reported */
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    char on[300] = "";
    if (p->size > 1) snprintf(on, sizeof on, " on host %s", orn_dsm_host(p->dsm));
    if (!h) {
        const char *e = dlerror();
        orn_dsm_fail(p->dsm, ORN_E_IO, "%s:%d: extern fn '%s': cannot load '%s'%s: %s", p->file,
                     line, name, lib, on, e ? e : "?");
        p->extern_failed = 1;
        return NULL;
    }
    dlerror();
    void *f = dlsym(h, name);
    if (!f) {
        const char *e = dlerror();
        orn_dsm_fail(p->dsm, ORN_E_IO, "%s:%d: extern fn '%s': no such symbol in '%s'%s%s%s",
                     p->file, line, name, lib, on, e ? ": " : "", e ? e : "");
        p->extern_failed = 1;
    }
    return f;
}

void orn_std_externs_agreed(OrnStdProg *p)
{
    int failed = p->extern_failed;
    p->extern_failed = 0;
    if (!orn_dsm_agree(p->dsm, failed ? ORN_E_IO : ORN_OK)) return;
    orn_progress_clear(p->progress);
    fflush(stdout);
    if (p->rank == 0)
        fprintf(stderr, "orion: rank %d: %s\n", orn_dsm_error_rank(p->dsm), orn_dsm_error(p->dsm));
    fflush(stderr);
    orn_dsm_clear_error(p->dsm);
    if (p->recover) longjmp(*(jmp_buf *)p->recover, 1);
    orn_std_exit(p, 1);
}

/* ---------------------------------------------------------------- loops */

static void dump_trace(OrnStdProg *p, const OrnRtLoop *loop)
{
    int64_t n = 0;
    const OrnRtTraceEntry *t = orn_rt_trace(p->rt, &n);
    const OrnRtPlan *pl = loop->plan;
    OrnRtStats st;
    orn_rt_stats(p->rt, &st);
    fprintf(p->trace, "loop %d line %d run %" PRId64 " ranks %d entries %" PRId64 " strategy %s\n",
            pl->loop_id, pl->line, p->runs, p->size, n,
            st.in_place ? "unimodular_in_place" : strategy_name((int)st.strategy));
    for (int64_t i = 0; i < n; i++) {
        fprintf(p->trace, "%" PRId64 " %" PRId64 " %d %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64,
                t[i].step, t[i].round, (int)t[i].rank, t[i].seq, t[i].block, t[i].first,
                t[i].count);
        for (int d = 0; d < pl->nkeys; d++)
            fprintf(p->trace, " %" PRId64 " %" PRId64, t[i].lo[d], t[i].hi[d]);
        fputc('\n', p->trace);
    }
    fflush(p->trace);
}

/* $ORN_STATS=runs: one line per loop run and rank. */
static void print_stats(OrnStdProg *p, const OrnRtLoop *loop, const OrnRtStats *sp)
{
    const OrnRtPlan *pl = loop->plan;
    OrnRtStats s = *sp;
    char grid[96] = "", sub[96] = "", gpu[224] = "", rot[48] = "", fused[48] = "";
    if (s.fused) snprintf(fused, sizeof fused, ", fused %" PRId64, s.fused);
    char kept[96] = "";
    size_t kn = 0;
    if (s.kept) kn += (size_t)snprintf(kept, sizeof kept, ", kept %" PRId64, s.kept);
    if (s.shared) snprintf(kept + kn, sizeof kept - kn, ", shared %" PRId64, s.shared);
    if (pl->strategy == ORN_RT_2D && s.rotated_key >= 0)
        snprintf(rot, sizeof rot, ", key %" PRId64 " rotates", s.rotated_key);
    if (s.gpu_in || s.gpu_out || s.gpu_resident || s.gpu_launches)
        snprintf(gpu, sizeof gpu,
                 ", gpu in %" PRId64 " B, out %" PRId64 " B, resident %" PRId64
                 " B, gpu launches %" PRId64 ", syncs %" PRId64 ", device barriers %" PRId64,
                 s.gpu_in, s.gpu_out, s.gpu_resident, s.gpu_launches, s.gpu_syncs, s.gpu_barriers);
    size_t g = 0, u = 0;
    for (int d = 0; d < pl->nkeys && s.grid[0]; d++) {
        g += (size_t)snprintf(grid + g, sizeof grid - g, "%s%" PRId64, d ? "x" : "", s.grid[d]);
        u += (size_t)snprintf(sub + u, sizeof sub - u, "%s%" PRId64, d ? "x" : "",
                              s.sub[d] ? s.sub[d] : 1);
    }
    fprintf(stderr,
            "orion: stats: rank %d: %s:%d (%s) run %" PRId64
            ": %.6f s (bodies %.6f, wait %.6f, flush %.6f, transfer %.6f)"
            ", steps %" PRId64 ", rounds %" PRId64 ", blocks %" PRId64 ", tiles %s"
            "%s, sub-blocks %s per block (L2 %" PRId64 " B, working set %" PRId64 " B)"
            ", prefetched %" PRId64 ", misses %" PRId64 ", flushed %" PRId64
            ", repartitioned %" PRId64 ", ghosts %" PRId64 ", ghost rows %" PRId64
            ", replicated %" PRId64 " (%" PRId64 " B), sent %" PRId64 " B, received %" PRId64
            " B, early %" PRId64 "%s%s%s\n",
            p->rank, pl->file ? pl->file : "?", pl->line, strategy_name((int)s.strategy), p->runs,
            s.total, s.compute, s.wait, s.flush, s.transfer, s.steps, s.rounds, s.blocks,
            *grid ? grid : "-", rot, *sub ? sub : "-", s.cache_bytes, s.ws_bytes, s.prefetched,
            s.misses, s.flushed, s.repartitioned, s.ghosts, s.ghost_rows, s.replicated,
            s.replica_bytes, s.sent, s.received, s.early, gpu, fused, kept);
}

/* The REPL's loops: a body that fails (orn_std_die) returns here, and the failure goes to
 * the runtime as the body's error, which contains it (orn_rt_set_contain, runtime/
 * contain.c): the rank runs the rest of its schedule without bodies, every rank learns of
 * it, and the loop returns the lowest failing rank's error on every rank. An index out of
 * range that the runtime finds itself takes the same way. */
typedef struct Guard {
    const OrnRtLoop *loop;
    OrnStdProg *p;
    jmp_buf jb;
} Guard;

static int guarded_body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    Guard *g = env;
    if (g->p->interrupt && *g->p->interrupt)
        return orn_rt_body_error(rt, "%s:%d: interrupted",
                                 g->loop->plan->file ? g->loop->plan->file : "?",
                                 g->loop->plan->line);
    if (setjmp(g->jb)) { /* orn_std_die recorded the message */
        g->p->body_jb = NULL;
        return ORN_E_BODY;
    }
    g->p->body_jb = &g->jb;
    int rc = g->loop->body(rt, b, g->loop->env);
    g->p->body_jb = NULL;
    return rc;
}

static int guarded_prefetch(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    Guard *g = env;
    if (setjmp(g->jb)) {
        g->p->body_jb = NULL;
        return ORN_E_BODY;
    }
    g->p->body_jb = &g->jb;
    int rc = g->loop->prefetch(rt, b, g->loop->env);
    g->p->body_jb = NULL;
    return rc;
}

static int run_guarded(OrnStdProg *p, const OrnRtLoop *loop)
{
    Guard g = {.loop = loop, .p = p};
    OrnRtLoop l = *loop;
    l.body = guarded_body;
    l.prefetch = loop->prefetch ? guarded_prefetch : NULL;
    l.env = &g;
    p->in_loop = 1;
    orn_rt_set_contain(p->rt, 1);
    int status = orn_rt_run(p->rt, &l);
    orn_rt_set_contain(p->rt, 0);
    p->in_loop = 0;
    if (status && orn_rt_agreed(p->rt)) { /* every rank failed alike: rank 0 says it once */
        orn_progress_clear(p->progress);
        fflush(stdout);
        if (p->rank == 0)
            fprintf(stderr, "orion: rank %d: %s\n", orn_rt_error_rank(p->rt), orn_rt_error(p->rt));
        fflush(stderr);
        orn_dsm_clear_error(p->dsm);
        longjmp(*(jmp_buf *)p->recover, 1);
    }
    return status; /* 0, or the ranks no longer agree: the caller ends the job */
}

void orn_std_run(OrnStdProg *p, const OrnRtLoop *loop)
{
    int status;
    if (p->recover) {
        status = run_guarded(p, loop);
    } else {
        p->in_loop = 1;
        status = orn_rt_run(p->rt, loop);
        p->in_loop = 0;
    }
    if (status) orn_rt_die(p->rt);
    orn_std_passed(p, 1);
    if (p->trace) dump_trace(p, loop);
    if (p->stats) {
        OrnRtStats s;
        orn_rt_stats(p->rt, &s);
        print_stats(p, loop, &s);
    }
    p->runs++;
}

void orn_std_run_pair(OrnStdProg *p, const OrnRtLoop *a, const OrnRtLoop *b)
{
    /* the REPL's contained errors and traces see each loop run alone */
    if (p->recover || p->trace) {
        orn_std_run(p, a);
        orn_std_run(p, b);
        return;
    }
    p->in_loop = 1;
    int status = orn_rt_run_pair(p->rt, a, b);
    p->in_loop = 0;
    if (status) orn_rt_die(p->rt);
    orn_std_passed(p, 2);
    if (p->stats) {
        OrnRtStats s;
        orn_rt_pair_stats(p->rt, &s);
        print_stats(p, a, &s);
        orn_rt_stats(p->rt, &s);
        p->runs++;
        print_stats(p, b, &s);
        p->runs++;
    } else
        p->runs += 2;
}
