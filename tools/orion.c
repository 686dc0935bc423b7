/* orion.c: the `orion` REPL and `orion run prog.orn` (docs/repl.md).
 *
 *   orion run prog.orn [--param=value ...]   run a script: one piece, then exit
 *   orion                                    read statements from stdin: prompts and line
 *                                            editing (libedit) when it is a terminal
 *
 * Under `mpirun -n N orion` rank 0 reads the input and broadcasts each complete piece (or
 * command); every rank runs it (tools/repl/session.h). Exit status: 0, 1 when the last
 * piece of a script failed, 2 for a bad command line (or what --help/--param asked for). */
#define _GNU_SOURCE /* getline, strdup */

#include <editline/readline.h>
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orn_std.h"
#include "repl/session.h"
#include "strbuf.h"

enum { MSG_QUIT, MSG_CODE, MSG_COMMAND };

/* Ctrl-C (interactive mode). While rank 0 waits for a line, it abandons the input: the
 * read in read_key fails with EINTR (the handler is installed without SA_RESTART), which
 * ends readline, and what it returns is dropped. While a piece runs, it sets the flag that
 * guarded loops poll (OrnStdProg.interrupt); a second Ctrl-C before the prompt returns
 * ends orion. A signal handler needs these at file scope. */
static volatile sig_atomic_t reading, input_cancelled;
static volatile int interrupted;

static void on_sigint(int sig)
{
    if (reading) {
        input_cancelled = 1;
        return;
    }
    if (interrupted) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    interrupted = 1;
}

/* next_line's answer when Ctrl-C abandoned the input */
static char abandoned[] = "";

/* libedit's key reader (rl_getc_function): one byte; EOF once Ctrl-C cancelled the line */
static int read_key(FILE *f)
{
    for (;;) {
        unsigned char c;
        ssize_t k = read(fileno(f), &c, 1);
        if (k == 1) return c;
        if (k < 0 && errno == EINTR && !input_cancelled) continue;
        return EOF;
    }
}

typedef struct Repl {
    OrnStdProg prog;
    OrnSession *s;
    bool timing;
    bool interactive;
    const char *path; /* "<stdin>" or "<repl>" */
    char history[4096];
    uint32_t next_line; /* line number of the next line read */
    int failed;         /* the last piece's status */
} Repl;

static const char help_text[] =
    "Statements are run as they are completed; a block continues until its `end`.\n"
    "  :help          this text\n"
    "  :explain       how the session's parallel_for loops are parallelized\n"
    "  :type EXPR     the type of an expression\n"
    "  :load FILE     run a .orn file in this session\n"
    "  :time          time each input (toggle)\n"
    "  :vars          the session's variables (values, extents), params and dist arrays\n"
    "  :quit          leave (also Ctrl-D)\n";

/* Rank 0 sends a message (kind, line, text) to every rank; every rank returns the kind
 * and has the line and the text (malloc'd). */
static int share(Repl *r, int kind, uint32_t *line, char **text, size_t *len)
{
    int64_t hdr[3] = {kind, *line, (int64_t)*len};
    if (r->prog.size == 1) return kind;
    MPI_Bcast(hdr, 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (r->prog.rank != 0) {
        *line = (uint32_t)hdr[1];
        *len = (size_t)hdr[2];
        *text = malloc(*len + 1);
        if (!*text) abort();
        (*text)[*len] = '\0';
    }
    if (hdr[2] > 0) MPI_Bcast(*text, (int)hdr[2], MPI_CHAR, 0, MPI_COMM_WORLD);
    return (int)hdr[0];
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    OrnBuf b;
    orn_buf_init(&b);
    char tmp[65536];
    for (size_t k; (k = fread(tmp, 1, sizeof tmp, f)) > 0;) orn_buf_put(&b, tmp, k);
    fclose(f);
    *len = b.len;
    orn_buf_putc(&b, '\0');
    return b.data;
}

static void run_piece(Repl *r, const char *path, const char *text, size_t len, uint32_t line)
{
    interrupted = 0;
    double t0 = orn_std_wall_time();
    r->failed = orn_session_run(r->s, path, text, len, line, 0, NULL);
    if (r->failed >= 100) {
        orn_std_finish(&r->prog);
        exit(r->failed - 100);
    }
    if (r->timing && r->prog.rank == 0) printf("time: %.3f s\n", orn_std_wall_time() - t0);
    fflush(stdout);
}

/* A command (every rank runs it; rank 0 prints). Returns false for :quit. */
static bool command(Repl *r, const char *c, uint32_t line)
{
    while (*c == ' ' || *c == '\t') c++;
    size_t n = strcspn(c, " \t\r\n");
    const char *arg = c + n;
    while (*arg == ' ' || *arg == '\t') arg++;
    char a[4096];
    snprintf(a, sizeof a, "%s", arg);
    for (size_t k = strlen(a); k > 0 && (a[k - 1] == '\n' || a[k - 1] == ' ' || a[k - 1] == '\r');)
        a[--k] = '\0';
    bool rank0 = r->prog.rank == 0;
    if (n == 5 && strncmp(c, ":quit", 5) == 0) return false;
    if (n == 5 && strncmp(c, ":help", 5) == 0) {
        if (rank0) fputs(help_text, stdout);
    } else if (n == 5 && strncmp(c, ":time", 5) == 0) {
        r->timing = !r->timing;
        if (rank0) printf("timing %s\n", r->timing ? "on" : "off");
    } else if (n == 5 && strncmp(c, ":vars", 5) == 0) {
        orn_session_vars(r->s, stdout);
    } else if (n == 8 && strncmp(c, ":explain", 8) == 0) {
        orn_session_explain(r->s, stdout);
    } else if (n == 5 && strncmp(c, ":type", 5) == 0) {
        orn_session_type(r->s, r->path, line, a, stdout);
    } else if (n == 5 && strncmp(c, ":load", 5) == 0) {
        size_t len = 0;
        char *text = read_file(a, &len);
        if (!text) {
            if (rank0) fprintf(stderr, "orion: error: cannot open '%s'\n", a);
            r->failed = 1;
        } else {
            run_piece(r, a, text, len, 1);
        }
        free(text);
    } else if (rank0) {
        fprintf(stderr, "orion: error: unknown command '%.*s' (:help lists them)\n", (int)n, c);
    }
    fflush(stdout);
    return true;
}

/* Rank 0: the next line of input, without the prompt logic of the caller; NULL at EOF. */
static char *next_line(Repl *r, bool continuation)
{
    if (r->interactive && !isatty(0)) { /* -i under mpirun: prompts, no line editing */
        fputs(continuation ? "   ...> " : "orion> ", stdout);
        fflush(stdout);
    } else if (r->interactive) {
        input_cancelled = 0;
        reading = 1;
        char *l = readline(continuation ? "   ...> " : "orion> ");
        reading = 0;
        if (input_cancelled) {
            free(l);
            fputs("^C\n", stdout);
            fflush(stdout);
            return abandoned;
        }
        if (l && *l) add_history(l);
        return l;
    }
    char *l = NULL;
    size_t cap = 0;
    ssize_t k = getline(&l, &cap, stdin);
    if (k < 0) {
        free(l);
        return NULL;
    }
    if (k > 0 && l[k - 1] == '\n') l[k - 1] = '\0';
    return l;
}

static bool blank(const char *t)
{
    for (; *t; t++) {
        if (*t == '#') return true;
        if (*t != ' ' && *t != '\t' && *t != '\r' && *t != '\n') return false;
    }
    return true;
}

/* Rank 0 reads pieces and commands and shares them; every rank runs them. */
static void loop(Repl *r)
{
    OrnBuf pend;
    orn_buf_init(&pend);
    uint32_t first = 0;
    for (;;) {
        char *text = NULL;
        size_t len = 0;
        uint32_t line = 0;
        int kind = MSG_QUIT;
        if (r->prog.rank == 0) {
            for (;;) {
                char *l = next_line(r, pend.len > 0);
                if (l == abandoned) { /* Ctrl-C: drop what was typed */
                    pend.len = 0;
                    continue;
                }
                uint32_t ln = r->next_line++;
                if (!l) {
                    kind = pend.len ? MSG_CODE : MSG_QUIT;
                    break;
                }
                if (pend.len == 0 && l[strspn(l, " \t")] == ':') {
                    kind = MSG_COMMAND, text = l, len = strlen(l), line = ln;
                    break;
                }
                if (pend.len == 0 && blank(l)) {
                    free(l);
                    continue;
                }
                if (pend.len == 0) first = ln;
                orn_buf_puts(&pend, l);
                orn_buf_putc(&pend, '\n');
                free(l);
                if (!orn_session_incomplete(pend.data, pend.len)) {
                    kind = MSG_CODE;
                    break;
                }
            }
            if (kind == MSG_CODE) {
                len = pend.len;
                text = malloc(len + 1);
                if (!text) abort();
                memcpy(text, pend.data, len);
                text[len] = '\0';
                line = first;
                pend.len = 0;
            }
        }
        kind = share(r, kind, &line, &text, &len);
        bool go = true;
        if (kind == MSG_QUIT)
            go = false;
        else if (kind == MSG_COMMAND)
            go = command(r, text, line);
        else {
            orn_session_set_echo(r->s, true); /* a typed expression shows its value */
            run_piece(r, r->path, text, len, line);
            orn_session_set_echo(r->s, false);
        }
        free(text);
        if (!go) break;
    }
    orn_buf_free(&pend);
}

static int usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [-i]       the REPL: statements from stdin, prompts and line editing on\n"
            "                     a terminal (-i: prompts anyway, e.g. under mpirun)\n"
            "       %s run prog.orn [--param=value ...]   run a script\n"
            "orion(1) and docs/repl.md describe both; :help in the REPL lists its commands.\n",
            prog, prog);
    return 2;
}

int main(int argc, char **argv)
{
    Repl r = {.next_line = 1};
    bool force_prompt = false;
    const char *script = NULL;
    int pargc = 0;
    char **pargv = NULL;
    if (argc >= 2 && strcmp(argv[1], "run") == 0) {
        if (argc < 3 || argv[2][0] == '-') return usage(stderr, argv[0]);
        script = argv[2];
        pargc = argc - 2; /* argv[2] stands in for the program name */
        pargv = argv + 2;
    } else if (argc == 2 && strcmp(argv[1], "-i") == 0) {
        force_prompt = true; /* mpirun passes stdin through a pipe */
    } else if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout, argv[0]);
        return 0;
    } else if (argc >= 2) {
        return usage(stderr, argv[0]);
    }
    int one = 1;
    char **av = argv;
    orn_std_init(&r.prog, &one, &av, script ? script : "<stdin>", NULL, 0);
    char self[4200];
    if (script) { /* --help: "usage: orion run prog.orn [--NAME=VALUE ...]" */
        snprintf(self, sizeof self, "%s run %s", argv[0], script);
        r.prog.prog = self;
    }
    r.s = orn_session_new(&r.prog, script == NULL);
    if (!r.s) return 1;
    int rc = 0;
    if (script) {
        size_t len = 0;
        char *text = read_file(script, &len);
        if (!text) {
            if (r.prog.rank == 0) fprintf(stderr, "orion: error: cannot open '%s'\n", script);
            rc = 2;
        } else {
            rc = orn_session_run(r.s, script, text, len, 1, pargc, pargv);
            rc = rc >= 100 ? rc - 100 : rc;
        }
        free(text);
    } else {
        int tty = r.prog.rank == 0 && (force_prompt || isatty(0));
        if (r.prog.size > 1) MPI_Bcast(&tty, 1, MPI_INT, 0, MPI_COMM_WORLD);
        r.interactive = tty;
        r.path = tty ? "<repl>" : "<stdin>";
        if (tty) {
            r.prog.interrupt = &interrupted;
            orn_rt_set_sliced(r.prog.rt, 1); /* loops see a Ctrl-C between slices */
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_sigint;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGINT, &sa, NULL);
        }
        if (r.interactive && r.prog.rank == 0) {
            const char *hf = getenv("ORION_HISTORY"), *home = getenv("HOME");
            if (hf && *hf)
                snprintf(r.history, sizeof r.history, "%s", hf);
            else
                snprintf(r.history, sizeof r.history, "%s/.orion_history", home ? home : ".");
            rl_catch_signals = 0; /* Ctrl-C is ours (on_sigint, read_key) */
            rl_getc_function = read_key;
            using_history();
            read_history(r.history);
            printf("orion %s: :help for help, :quit or Ctrl-D to leave\n", ORN_VERSION);
        }
        loop(&r);
        if (r.interactive && r.prog.rank == 0) write_history(r.history);
        rc = r.interactive ? 0 : r.failed != 0;
    }
    orn_session_free(r.s);
    orn_std_finish(&r.prog);
    return rc;
}
