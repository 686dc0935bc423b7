/* monitor.c: what a user watches while a job runs (docs/observability.md): log_metric's
 * CSV and TensorBoard files in --logdir=DIR / $ORN_LOGDIR (metrics.h), and rank 0's
 * progress line for loads and loops (support/progress.h), which the DSM's loaders and the
 * runtime reach through the DSM context.
 *
 * Where the progress line goes. On stderr when rank 0's stderr is a terminal (a plain
 * ./prog, orion run). MPICH's mpiexec (hydra) hands every rank pipes instead, through its
 * proxy process, and forwards stdout and stderr separately: a line drawn on stderr and a
 * print that follows on stdout can reach the terminal in either order. So under a local
 * mpiexec whose own stdout and stderr are one terminal, rank 0 draws on its stdout: the
 * same pipe as the program's prints, so they stay in order. Anything else (output
 * redirected, a pipe, a remote launch) shows no line; $ORN_PROGRESS=1 draws it on stderr
 * all the same, $ORN_PROGRESS=0 and --quiet never. */
#include "monitor.h"

#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "progress.h"

/* ---------------------------------------------------------------- the progress line */

/* /proc/PID/comm is one of names (NULL-terminated) */
static int comm_is(long pid, const char *const *names)
{
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    for (int i = 0; names[i]; i++)
        if (strcmp(comm, names[i]) == 0) return 1;
    return 0;
}

static long parent_of(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *r = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    long ppid = -1;
    char state;
    if (!r || sscanf(r + 1, " %c %ld", &state, &ppid) != 2) return -1;
    return ppid;
}

/* The terminal that fd of process pid writes to ("/dev/pts/3"), read from the link in
 * /proc without opening it (opening some devices has effects); 0 when it is none. */
static int fd_terminal(long pid, int fd, char *dev, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", pid, fd);
    ssize_t len = readlink(path, dev, n - 1);
    if (len <= 0) return 0;
    dev[len] = '\0';
    return strncmp(dev, "/dev/pts/", 9) == 0 ||
           (strncmp(dev, "/dev/tty", 8) == 0 && dev[8] != '\0');
}

/* Rank 0's stream for the line, or NULL (the top of this file says why). */
static FILE *line_stream(void)
{
    static const char *const proxy[] = {"hydra_pmi_proxy", NULL};
    static const char *const launcher[] = {"mpiexec", "mpiexec.hydra", "mpirun", NULL};
    if (isatty(STDERR_FILENO)) return stderr;
    long pp = (long)getppid(), lp = pp > 1 && comm_is(pp, proxy) ? parent_of(pp) : -1;
    char out[256], err[256];
    if (lp > 1 && comm_is(lp, launcher) && fd_terminal(lp, 1, out, sizeof out) &&
        fd_terminal(lp, 2, err, sizeof err) && strcmp(out, err) == 0)
        return stdout;
    return NULL;
}

static double env_seconds(const char *name, double dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end = NULL;
    double s = strtod(v, &end);
    return end && *end == '\0' && s >= 0 && s < 1e9 ? s : dflt;
}

static void progress_setup(OrnStdProg *p)
{
    const char *mode = getenv("ORN_PROGRESS");
    int off =
        p->quiet || p->rank != 0 || (mode && (strcmp(mode, "0") == 0 || strcmp(mode, "off") == 0));
    int force = mode && (strcmp(mode, "1") == 0 || strcmp(mode, "on") == 0);
    FILE *out = off ? NULL : force && !isatty(STDERR_FILENO) ? stderr : line_stream();
    if (!out) {
        orn_std_monitor_end_progress(p);
        return;
    }
    if (p->progress) return;
    OrnProgressOptions o = {
        .out = out, .delay = env_seconds("ORN_PROGRESS_DELAY", 2.0), .interval = 0.25};
    p->progress = orn_progress_new(&o);
    orn_dsm_set_progress_line(p->dsm, p->progress);
}

void orn_std_monitor_end_progress(OrnStdProg *p)
{
    if (!p->progress) return;
    orn_dsm_set_progress_line(p->dsm, NULL);
    orn_progress_free(p->progress);
    p->progress = NULL;
    p->point_task = 0;
}

/* A top-level loop (a safe point's) is a task from its first iteration to its end; its
 * loads and parallel_for runs nest in it. */
void orn_std_point_progress(OrnStdProg *p, int k, int64_t lo, int64_t hi, int64_t i)
{
    if (p->point_task != k + 1) {
        orn_std_point_end(p, p->point_task - 1);
        const int *lines = p->state && k < p->state->npoints ? p->state->lines : NULL;
        const char *base = strrchr(p->file, '/');
        char label[160];
        snprintf(label, sizeof label, "%s %s:%d", hi > lo ? "for" : "while",
                 base ? base + 1 : p->file, lines ? lines[k] : 0);
        orn_progress_begin(p->progress, label, hi > lo ? (double)(hi - lo) : 0, ORN_PROGRESS_ITEMS);
        orn_progress_start_at(p->progress, (double)(i - lo)); /* resumed in mid-loop */
        p->point_task = k + 1;
    }
    orn_progress_update(p->progress, (double)(i - lo));
}

void orn_std_point_end(OrnStdProg *p, int k)
{
    if (k < 0 || p->point_task != k + 1) return;
    orn_progress_end(p->progress);
    p->point_task = 0;
}

/* ---------------------------------------------------------------- metrics */

static double unix_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Collective, agreed: rank 0 opens the writer; 2 when it cannot (rank 0 has said why). */
static int metrics_setup(OrnStdProg *p)
{
    const char *what = "--logdir";
    if (!p->logdir) {
        const char *d = getenv("ORN_LOGDIR");
        if (d && *d) p->logdir = d, what = "ORN_LOGDIR";
    }
    if (p->metrics) { /* the REPL's second look (orion run prog --logdir=DIR) */
        if (p->logdir && strcmp(p->logdir, orn_metrics_dir(p->metrics)) == 0) return -1;
        orn_metrics_close(p->metrics);
        p->metrics = NULL;
    }
    if (!p->logdir) return -1;
    int st = ORN_OK;
    char err[4200] = "";
    if (p->rank == 0) {
        char host[256] = "";
        if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
        if (orn_metrics_open(p->logdir, unix_time(), host, (long)getpid(), &p->metrics, err,
                             sizeof err))
            st = ORN_E_IO;
    }
    if (orn_dsm_agree(p->dsm, st)) {
        if (p->rank == 0) fprintf(stderr, "%s: error: %s: %s\n", p->prog, what, err);
        fflush(stderr);
        orn_dsm_clear_error(p->dsm);
        p->logdir = NULL;
        return 2;
    }
    return -1;
}

void orn_std_settle(OrnStdProg *p)
{
    if (p->rank == 0 && orn_dsm_settle(p->dsm, "every rank past the last parallel_for"))
        orn_dsm_die(p->dsm, 1);
}

void orn_std_passed(OrnStdProg *p, int loops)
{
    if (orn_dsm_pass(p->dsm, loops)) orn_dsm_die(p->dsm, 1);
}

void orn_std_log_metric(OrnStdProg *p, const char *name, int64_t step, double value, int line)
{
    if (!name || !*name) orn_std_die(p, line, "log_metric: the name is empty");
    if (p->rank != 0 || !p->metrics) return;
    orn_std_settle(p);
    char err[4200];
    if (orn_metrics_log(p->metrics, name, step, value, unix_time(), err, sizeof err)) {
        orn_progress_clear(p->progress);
        fflush(stdout);
        fprintf(stderr,
                "orion: rank 0: %s:%d: log_metric: %s; no more metrics are written this run\n",
                p->file, line, err);
        fflush(stderr);
    }
}

/* ---------------------------------------------------------------- start and end */

int orn_std_monitor_start(OrnStdProg *p)
{
    int rc = metrics_setup(p);
    progress_setup(p);
    return rc;
}

void orn_std_monitor_end(OrnStdProg *p)
{
    orn_std_monitor_end_progress(p);
    orn_metrics_close(p->metrics);
    p->metrics = NULL;
}
