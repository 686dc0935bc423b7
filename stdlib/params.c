/* params.c: --name=value parsing and --help for generated programs (docs/language.md,
 * section 4, "param"). A value must parse completely as the param's type: integers in
 * decimal (underscores between digits allowed, as in the language) within the range of
 * int (i64), floats as strtod reads them but finite (nan, inf and overflow are refused),
 * bools as true/false, strings as given. Refused values are quoted escaped. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>

#include "strbuf.h"

static const char *type_name(OrnStdParamType t)
{
    switch (t) {
    case ORN_STD_PBOOL:
        return "bool";
    case ORN_STD_PI64:
        return "int";
    case ORN_STD_PF64:
        return "float";
    case ORN_STD_PSTR:
        return "str";
    }
    return "?";
}

static void print_value(FILE *f, const OrnStdParam *q)
{
    char buf[64];
    switch (q->type) {
    case ORN_STD_PBOOL:
        fputs(*(const bool *)q->addr ? "true" : "false", f);
        break;
    case ORN_STD_PI64:
        fprintf(f, "%" PRId64, *(const int64_t *)q->addr);
        break;
    case ORN_STD_PF64:
        orn_std_fmt_float(buf, sizeof buf, *(const double *)q->addr, 0);
        fputs(buf, f);
        break;
    case ORN_STD_PSTR:
        fprintf(f, "\"%s\"", *(const char *const *)q->addr);
        break;
    }
}

static void help(const OrnStdProg *p, const OrnStdParam *params, int n)
{
    printf("usage: %s [--NAME=VALUE ...]\n", p->prog);
    printf("Compiled from %s by orionc. Run it under MPI with: mpirun -n N %s ...\n", p->file,
           p->prog);
    printf(
        "\nrun-time flags:\n"
        "  --checkpoint=DIR          write checkpoints into DIR at the start of iterations of\n"
        "                            top-level loops; SIGTERM or SIGINT writes one and exits %d\n"
        "  --checkpoint-every=SECS   at most one checkpoint per SECS seconds (default 300;\n"
        "                            0: at every iteration)\n"
        "  --resume=DIR              continue from the newest complete checkpoint in DIR\n"
        "  --timeline=FILE           write a timeline of every rank (Chrome trace-event JSON:\n"
        "                            open it in ui.perfetto.dev or chrome://tracing); also\n"
        "                            $ORN_TIMELINE=FILE\n"
        "  --stats                   print a summary per parallel_for at the end (time, compute,\n"
        "                            wait, bytes, imbalance) on stderr; also $ORN_STATS=1\n"
        "  --logdir=DIR              log_metric writes DIR/metrics.csv and a TensorBoard event\n"
        "                            file (tensorboard --logdir DIR); also $ORN_LOGDIR=DIR;\n"
        "                            without either, log_metric writes nothing\n"
        "  --quiet                   no progress line (rank 0 shows one on a terminal for\n"
        "                            loads and loops that run for more than 2 seconds)\n"
        "  (a flag's value may also be the next argument: --logdir DIR)\n"
        "\nenvironment (every rank must see the same values; docs/runtime.md, settings):\n"
        "  ORN_TIMELINE, ORN_STATS   as --timeline and --stats\n"
        "  ORN_LOGDIR=DIR            as --logdir\n"
        "  ORN_PROGRESS=0|1          never / always show the progress line (default: when the\n"
        "                            output is a terminal)\n"
        "  ORN_PROGRESS_DELAY=SECS   seconds a load or loop runs before it shows (default 2)\n"
        "  ORN_LIVENESS=SECS|off     silence before a peer counts as lost (default 10)\n"
        "  ORN_TIMEOUT=SECS          hard limit on one wait (debugging; default none)\n"
        "  ORN_BLOCKS_PER_RANK=K     blocks per rank and partitioned dimension (default 2)\n"
        "  ORN_SUBBLOCK=RxC|off      cache sub-blocks per block (default: from the L2 size)\n"
        "  ORN_CACHE_BYTES=N         the L2 size sub-blocks are cut for\n"
        "  ORN_REPLICATE_MAX=BYTES   prefetched arrays up to this size are copied whole (64 MiB)\n"
        "  ORN_HELD_MAX=BYTES        arrays top-level loops read, the same (64 MiB)\n"
        "  ORN_TRACE=FILE            record the block order (serial replays)\n"
        "  ORN_GPU=off|emulate       @gpu loops on the CPU, or emulated on the host (--gpu)\n",
        ORN_STD_EXIT_CHECKPOINTED);
    if (n == 0) {
        printf("\nThis program has no params.\n");
        fflush(stdout);
        return;
    }
    printf("\nparams (name, type, default):\n");
    int w = 0;
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(params[i].name);
        if (l > w) w = l;
    }
    int vw = 0; /* the defaults' column, so the comments line up */
    for (int i = 0; i < n; i++) {
        char buf[64];
        FILE *f = fmemopen(buf, sizeof buf, "w");
        if (!f) continue;
        print_value(f, &params[i]);
        long l = ftell(f);
        fclose(f);
        if (l > vw && l < 40) vw = (int)l;
    }
    for (int i = 0; i < n; i++) {
        printf("  --%-*s  %-5s  ", w, params[i].name, type_name(params[i].type));
        char buf[64] = "";
        FILE *f = fmemopen(buf, sizeof buf, "w");
        long l = 0;
        if (f) {
            print_value(f, &params[i]);
            l = ftell(f);
            fclose(f);
        }
        if (params[i].doc && f && l < (long)sizeof buf)
            printf("%-*s  %s", vw, buf, params[i].doc);
        else
            print_value(stdout, &params[i]);
        putchar('\n');
    }
    fflush(stdout);
}

/* Why a value was refused: malformed, or a number out of range, or not finite. */
enum { V_OK = 0, V_BAD, V_BIG, V_SMALL, V_NONFINITE };

static int parse_i64(const char *s, int64_t *out)
{
    char digits[32];
    size_t n = 0, nd = 0;
    const char *c = s;
    if (*c == '+' || *c == '-') digits[n++] = *c++;
    if (!(*c >= '0' && *c <= '9')) return V_BAD;
    for (; *c; c++) {
        if (*c == '_' && c[1] >= '0' && c[1] <= '9' && c[-1] >= '0' && c[-1] <= '9') continue;
        if (!(*c >= '0' && *c <= '9')) return V_BAD;
        if (nd == 0 && *c == '0' && c[1] >= '0' && c[1] <= '9') continue; /* leading zeros */
        if (n + 1 < sizeof digits) digits[n] = *c;
        n++, nd++;
    }
    if (n + 1 > sizeof digits) return s[0] == '-' ? V_SMALL : V_BIG; /* digits only: range */
    digits[n] = '\0';
    errno = 0;
    long long v = strtoll(digits, NULL, 10);
    if (errno == ERANGE) return v < 0 ? V_SMALL : V_BIG;
    *out = (int64_t)v;
    return V_OK;
}

static int parse_f64(const char *s, double *out)
{
    if (!*s) return V_BAD;
    char *end = NULL;
    double v = strtod(s, &end);
    if (!end || *end || end == s || isspace((unsigned char)*s)) return V_BAD;
    if (!isfinite(v)) {
        /* digits that overflowed, or the words nan and inf */
        const char *d = s + (*s == '-' || *s == '+');
        return (*d >= '0' && *d <= '9') || *d == '.' ? V_BIG : V_NONFINITE;
    }
    *out = v;
    return V_OK;
}

/* Edit distance between a[0..n) and b (NUL-terminated), or more than 2 when it exceeds 2:
 * enough to suggest the param a user probably meant. */
static size_t near(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b);
    if (n > 32 || m > 32 || (n > m ? n - m : m - n) > 2) return 3;
    size_t row[33];
    for (size_t j = 0; j <= m; j++) row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

/* rank 0 reports; every rank returns 2. a and b come from the command line: they are
 * printed escaped (control characters and malformed UTF-8 as \xNN). */
static int bad(const OrnStdProg *p, const char *fmt, const char *a, const char *b)
{
    if (p->rank == 0) {
        OrnBuf ea, eb;
        orn_buf_init(&ea);
        orn_buf_init(&eb);
        orn_buf_escaped(&ea, a, strlen(a));
        orn_buf_escaped(&eb, b, strlen(b));
        fprintf(stderr, "%s: error: ", p->prog);
        fprintf(stderr, fmt, ea.data ? ea.data : "", eb.data ? eb.data : "");
        fprintf(stderr, "\n(see '%s --help')\n", p->prog);
        fflush(stderr);
        orn_buf_free(&ea);
        orn_buf_free(&eb);
    }
    return 2;
}

/* What a refused value of param q should have been. */
static const char *expected(const OrnStdParam *q, int why)
{
    switch (why) {
    case V_BIG:
        return q->type == ORN_STD_PI64 ? "too large for an int (at most 9223372036854775807)"
                                       : "too large for a float (largest magnitude "
                                         "1.7976931348623157e+308)";
    case V_SMALL:
        return "too large in magnitude for an int (at least -9223372036854775808)";
    case V_NONFINITE:
        return "expected a finite number (nan and inf are not accepted)";
    default:
        return q->type == ORN_STD_PBOOL  ? "expected true or false"
               : q->type == ORN_STD_PI64 ? "expected an integer"
                                         : "expected a number";
    }
}

/* The run-time flags (not params) at argv[*i]: 1 when it is one (parsed into p, or *rc = 2
 * after a bad value), 0 otherwise. A flag's value follows '=' or is the next argument
 * (--logdir runs/a), which *i then moves past. */
static int runtime_flag(OrnStdProg *p, int argc, char **argv, int *i, int *rc)
{
    static const char *const flags[] = {"--checkpoint", "--checkpoint-every", "--resume",
                                        "--timeline", "--logdir"};
    static const char *const forms[] = {"--checkpoint=DIR", "--checkpoint-every=SECONDS",
                                        "--resume=DIR", "--timeline=FILE", "--logdir=DIR"};
    static const char *const switches[] = {"--stats", "--quiet"};
    const char *a = argv[*i];
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(switches[k]);
        if (strncmp(a, switches[k], n) != 0 || (a[n] != '=' && a[n] != '\0')) continue;
        if (a[n] == '=')
            *rc = bad(p, "%s takes no value: %s", switches[k], a);
        else if (k == 0)
            p->summary = 1;
        else
            p->quiet = 1;
        return 1;
    }
    for (int k = 0; k < 5; k++) {
        size_t n = strlen(flags[k]);
        if (strncmp(a, flags[k], n) != 0 || (a[n] != '=' && a[n] != '\0')) continue;
        const char *v = a[n] == '=' ? a + n + 1 : NULL;
        if (!v && *i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) v = argv[++*i];
        if (!v || !*v) {
            *rc = bad(p, "%s needs a value: %s", flags[k], forms[k]);
            return 1;
        }
        if (k == 0) p->ckpt_dir = v;
        if (k == 2) p->resume_dir = v;
        if (k == 3) p->timeline = v;
        if (k == 4) p->logdir = v;
        if (k == 1 && (parse_f64(v, &p->ckpt_every) != V_OK || !(p->ckpt_every >= 0)))
            *rc = bad(p,
                      "invalid value '%.80s' for --checkpoint-every: expected a number of "
                      "seconds >= 0%s",
                      v, "");
        return 1;
    }
    return 0;
}

int orn_std_parse_params(OrnStdProg *p, int argc, char **argv, const OrnStdParam *params,
                         int nparams)
{
    p->params = params;
    p->nparams = nparams;
    free(p->given); /* a REPL module parses its params again */
    p->given = calloc((size_t)nparams + 1, 1);
    p->ckpt_every = 300;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (p->rank == 0) help(p, params, nparams);
            return 0;
        }
    for (int i = 1; i < argc; i++) {
        int rc = -1;
        if (runtime_flag(p, argc, argv, &i, &rc)) {
            if (rc >= 0) return rc;
            continue;
        }
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || !a[2])
            return bad(p, "unexpected argument '%s'%s: params are given as --NAME=VALUE", a, "");
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        const OrnStdParam *q = NULL;
        for (int k = 0; k < nparams && !q; k++)
            if (strlen(params[k].name) == nl && strncmp(params[k].name, name, nl) == 0)
                q = &params[k];
        if (!q) {
            char nm[128], hint[160] = "";
            snprintf(nm, sizeof nm, "%.*s", (int)(nl < 100 ? nl : 100), name);
            size_t best = 3;
            for (int k = 0; k < nparams; k++) {
                size_t d = near(name, nl, params[k].name);
                if (d < best) {
                    best = d;
                    snprintf(hint, sizeof hint, " (did you mean '--%s'?)", params[k].name);
                }
            }
            if (!nparams) snprintf(hint, sizeof hint, " (this program has no params)");
            return bad(p, "unknown param '--%s'%s", nm, hint);
        }
        if (!eq) return bad(p, "param '--%s' needs a value: --%s=VALUE", q->name, q->name);
        if (p->given) p->given[q - params] = 1;
        const char *v = eq + 1;
        int why = V_OK;
        switch (q->type) {
        case ORN_STD_PBOOL:
            if (strcmp(v, "true") == 0)
                *(bool *)q->addr = true;
            else if (strcmp(v, "false") == 0)
                *(bool *)q->addr = false;
            else
                why = V_BAD;
            break;
        case ORN_STD_PI64:
            why = parse_i64(v, (int64_t *)q->addr);
            break;
        case ORN_STD_PF64:
            why = parse_f64(v, (double *)q->addr);
            break;
        case ORN_STD_PSTR:
            *(const char **)q->addr = v;
            break;
        }
        if (why != V_OK) {
            char val[84], msg[200];
            snprintf(val, sizeof val, "%.80s%s", v, strlen(v) > 80 ? "..." : "");
            snprintf(msg, sizeof msg, "invalid value '%%s' for param '--%s': %s", q->name,
                     expected(q, why));
            return bad(p, msg, val, "");
        }
    }
    return -1;
}
