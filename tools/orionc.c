/* orionc.c: the compiler driver (docs/language.md section 10).
 *
 * Exit codes: 0 success (warnings allowed), 1 compile errors, 2 bad usage (unknown option,
 * missing or unreadable input), 3 internal compiler error. --check and --explain also run
 * the analyzer (a loop that must run serially is a warning). Without a mode option orionc
 * compiles: front end, analyzer, C code generation (codegen/), then the system C compiler
 * (cc_driver.c); --emit=c stops after generating the C. --gpu also writes the kernels of
 * @gpu loops (codegen/cuda/emit_cuda.c) and builds them with nvcc; --emit=cuda prints them. */
#define _XOPEN_SOURCE 700 /* sigaltstack */

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "ast.h"
#include "cc_driver.h"
#include "emit.h"
#include "explain.h"
#include "sema.h"
#include "source.h"
#include "unit.h"

#ifndef ORN_VERSION
#define ORN_VERSION "0.1.0"
#endif

enum { EXIT_OK = 0, EXIT_COMPILE = 1, EXIT_USAGE = 2, EXIT_ICE = 3 };

typedef enum {
    MODE_NONE, /* compile to an executable */
    MODE_CHECK,
    MODE_AST,
    MODE_EXPLAIN,
    MODE_EXPLAIN_JSON,
    MODE_EMIT_C,
    MODE_EMIT_CUDA
} Mode;

static const char usage_text[] =
    "usage: orionc [options] FILE.orn\n"
    "\n"
    "  --check         parse and analyse FILE, report diagnostics, produce nothing\n"
    "  --emit=ast      print the syntax tree of FILE (to -o OUT if given)\n"
    "  --explain       report how each parallel_for is parallelized, and why\n"
    "  --explain=json  the same report as one JSON object (to -o OUT if given)\n"
    "  --emit=c        print the generated C (to -o OUT if given)\n"
    "  --emit=cuda     print the CUDA kernels of the @gpu loops (to -o OUT if given)\n"
    "  --gpu           run @gpu loop bodies on the GPU: builds their kernels with nvcc\n"
    "                  (ORN_NVCC, or nvcc on PATH); ORN_GPU=off|emulate at run time\n"
    "  --gpu-rowcache  --gpu, and warp kernels keep their keys' rows in shared memory\n"
    "                  (off by default: measured slower; ORN_GPU_ROWCACHE=0 at run time)\n"
    "  -o OUT          output file; without a mode option above, the executable\n"
    "                  (default: FILE without .orn)\n"
    "  -O0 -O1 -O2 -O3 optimization of the generated C (default -O3)\n"
    "  -g              debug information (use -O0 -g for debugging)\n"
    "  --layout=declared  store every dist array in its declared (row-major) order instead\n"
    "                  of the order chosen from its accesses (--layout=auto, the default)\n"
    "  -march=CPU      target CPU of the generated code (default: native, this machine)\n"
    "  --keep-c        keep the generated C next to the executable, as OUT.c\n"
    "  -lNAME -LDIR    libraries for extern fns, passed to the linker; the program finds\n"
    "                  shared libraries in each -L directory at run time (an rpath)\n"
    "  --no-rpath      do not add the -L directories to the program's run-time path\n"
    "  -Wl,ARG[,ARG]   pass the ARGs to the linker (as cc does)\n"
    "  -Werror         treat warnings as errors\n"
    "  --help          show this help\n"
    "  --version       show the version\n"
    "\n"
    "FILE may be '-' for standard input. Run a program with: mpirun -n N ./prog\n"
    "\n"
    "Environment: ORN_CC (the C compiler), ORN_CFLAGS (more C flags), ORN_NVCC,\n"
    "ORN_NVCC_ARCH, ORN_NVCC_CCBIN (--gpu), TMPDIR. orionc finds the runtime relative\n"
    "to itself, in the lib/ and include/ folders beside its bin/. See orionc(1).\n"
    "\n"
    "Exit codes: 0 success, 1 compile errors, 2 bad usage, 3 internal compiler error.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("orionc: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(see 'orionc --help')\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/* A crash is a compiler bug: say so and exit 3 rather than die with a bare signal.
 * Sanitizer builds keep their own handlers, whose reports are worth more. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORN_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ORN_ASAN 1
#endif

#ifndef ORN_ASAN
static void on_crash(int sig)
{
    static const char msg[] = "orionc: internal compiler error: crashed (signal ";
    char num[4] = {(char)('0' + sig / 10 % 10), (char)('0' + sig % 10), ')', '\n'};
    ssize_t r = write(2, msg, sizeof msg - 1);
    r = write(2, sig >= 10 ? num : num + 1, sig >= 10 ? 4 : 3);
    (void)r;
    _exit(EXIT_ICE);
}

static void install_crash_handlers(void)
{
    /* An alternate stack so that a stack overflow is reported too. */
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}
#else
static void install_crash_handlers(void) {}
#endif

/* Write len bytes of data to the file `output`, or to stdout when it is NULL. Returns an
 * exit code: EXIT_OK, or EXIT_USAGE after saying why the file could not be written. */
static int write_output(const char *output, const char *data, size_t len)
{
    FILE *out = output ? fopen(output, "w") : stdout;
    if (!out) {
        fprintf(stderr, "orionc: error: cannot write '%s': %s\n", output, strerror(errno));
        return EXIT_USAGE;
    }
    size_t put = len ? fwrite(data, 1, len, out) : 0;
    int closed = out != stdout ? fclose(out) : fflush(out);
    if (put != len || closed != 0) {
        fprintf(stderr, "orionc: error: cannot write '%s': %s\n", output ? output : "<stdout>",
                strerror(errno));
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The linker found no definition of `symbol`. When it is one of the program's extern fns
 * (without a library name), report that at the declaration, as a compile error. */
static bool undefined_extern(void *ud, const char *symbol)
{
    OrnUnit *u = ud;
    for (int i = 0; i < u->sema.nfns; i++) {
        const OrnNode *fn = u->sema.fns[i];
        if (!fn->u.fn.is_extern || fn->u.fn.lib || strcmp(fn->u.fn.id->s, symbol) != 0) continue;
        orn_diag(&u->diags, ORN_ERROR, fn->u.fn.id_span,
                 "extern fn '%s' is not defined by the C library, libm or a library given "
                 "with -l",
                 symbol);
        orn_note_plain(&u->diags,
                       "give the library that defines it with '-lNAME' (and '-LDIR'), or "
                       "name it in the declaration: extern \"libNAME.so\" fn %s(...)",
                       symbol);
        return true;
    }
    return false;
}

/* The driver proper; extra and cflags have room for argc entries each (main owns them, so
 * every early return releases them). */
static int run(int argc, char **argv, const char **extra, const char **cflags)
{
    Mode mode = MODE_NONE;
    bool declared_layout = false; /* --layout=declared: store every array as declared */
    const char *input = NULL, *output = NULL;
    bool werror = false, options_done = false, gpu = false, rowcache = false;
    char nvcc[4096] = "";
    OrnCcOptions cc = {0};
    cc.extra = extra;
    cc.cflags = cflags;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
            if (input) return usage_error("more than one input file ('%s' and '%s')", input, a);
            input = a;
        } else if (strcmp(a, "--") == 0) {
            options_done = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("orionc %s\n", ORN_VERSION);
            return EXIT_OK;
        } else if (strcmp(a, "--check") == 0 || strcmp(a, "--emit=ast") == 0) {
            Mode m = a[2] == 'c' ? MODE_CHECK : MODE_AST;
            if (mode == MODE_EXPLAIN || mode == MODE_EXPLAIN_JSON)
                return usage_error("'%s' cannot be combined with another output mode", a);
            if (mode != MODE_NONE && mode != m)
                return usage_error("'--check' and '--emit=ast' cannot be combined");
            mode = m;
        } else if (strcmp(a, "-Werror") == 0) {
            werror = true;
        } else if (strcmp(a, "-o") == 0) {
            if (i + 1 >= argc) return usage_error("'-o' needs a file name");
            output = argv[++i];
        } else if (strncmp(a, "-o", 2) == 0 && a[2]) {
            output = a + 2;
        } else if (strcmp(a, "--explain") == 0 || strcmp(a, "--explain=json") == 0) {
            Mode m = a[9] ? MODE_EXPLAIN_JSON : MODE_EXPLAIN;
            if (mode != MODE_NONE && mode != m)
                return usage_error("'%s' cannot be combined with another output mode", a);
            mode = m;
        } else if (strcmp(a, "--emit=c") == 0 || strcmp(a, "--emit=cuda") == 0) {
            Mode m = a[8] ? MODE_EMIT_CUDA : MODE_EMIT_C;
            if (mode != MODE_NONE && mode != m)
                return usage_error("'%s' cannot be combined with another output mode", a);
            mode = m;
        } else if (strcmp(a, "-O0") == 0 || strcmp(a, "-O1") == 0 || strcmp(a, "-O2") == 0 ||
                   strcmp(a, "-O3") == 0) {
            cc.opt = a;
        } else if (strcmp(a, "--layout=declared") == 0) {
            declared_layout = true;
        } else if (strcmp(a, "--layout=auto") == 0) {
            declared_layout = false;
        } else if (strcmp(a, "-g") == 0) {
            cc.debug = true;
        } else if (strcmp(a, "--keep-c") == 0) {
            cc.keep_c = true;
        } else if ((strncmp(a, "-l", 2) == 0 || strncmp(a, "-L", 2) == 0) && a[2]) {
            extra[cc.nextra++] = a;
        } else if (strncmp(a, "-Wl,", 4) == 0 && a[4]) {
            extra[cc.nextra++] = a;
        } else if (strcmp(a, "--no-rpath") == 0) {
            cc.no_rpath = true;
        } else if ((strncmp(a, "-march=", 7) == 0 || strncmp(a, "-mtune=", 7) == 0) && a[7]) {
            cflags[cc.ncflags++] = a;
        } else if (strcmp(a, "--gpu") == 0) {
            gpu = true;
        } else if (strcmp(a, "--gpu-rowcache") == 0) {
            gpu = rowcache = true;
        } else if (strncmp(a, "--emit=", 7) == 0) {
            return usage_error("unknown output kind '%s' (expected --emit=ast, --emit=c or "
                               "--emit=cuda)",
                               a + 7);
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (!input) return usage_error("no input file");
    if (mode == MODE_EMIT_CUDA) gpu = true;
    if (gpu && mode == MODE_NONE && !orn_cc_find_nvcc(nvcc, sizeof nvcc)) {
        fprintf(
            stderr,
            "orionc: error: --gpu needs the CUDA compiler nvcc, and %s\n"
            "  install the CUDA toolkit (12 or later: "
            "https://developer.nvidia.com/cuda-downloads,\n"
            "  or the distribution's nvidia-cuda-toolkit package), then put its bin directory on\n"
            "  PATH or set ORN_NVCC=/path/to/nvcc; without --gpu, @gpu loops run on the CPU\n",
            getenv("ORN_NVCC") ? "ORN_NVCC does not name an executable"
                               : "none was found (not at build time, not on PATH)");
        return EXIT_USAGE;
    }
    if (mode == MODE_CHECK && output) return usage_error("'-o' is not used with '--check'");
    char default_out[4096];
    if (mode == MODE_NONE && !output) {
        /* FILE without its directory and .orn */
        const char *base = strrchr(input, '/');
        base = base ? base + 1 : input;
        if (strcmp(input, "-") == 0) base = "a.out";
        size_t n = strlen(base);
        if (n > 4 && strcmp(base + n - 4, ".orn") == 0) n -= 4;
        snprintf(default_out, sizeof default_out, "%.*s", (int)n, base);
        if (strcmp(default_out, base) == 0 && strcmp(base, "a.out") != 0)
            return usage_error("give the executable's name with -o (the input has no .orn "
                               "extension)");
        output = default_out;
    }

    install_crash_handlers();

    OrnSource src;
    bool from_stdin = strcmp(input, "-") == 0;
    if (orn_source_read_file(&src, from_stdin ? "/dev/stdin" : input) != 0) {
        fprintf(stderr, "orionc: error: cannot open '%s': %s\n", input, strerror(errno));
        return EXIT_USAGE;
    }
    OrnUnit *u = orn_unit_new(from_stdin ? "<stdin>" : input, src.text, src.len, stderr);
    orn_source_free(&src);
    u->diags.werror = werror;

    int rc = EXIT_OK;
    OrnParseStatus st = orn_parse(u, false);
    if (st == ORN_PARSE_OK) {
        if (mode == MODE_CHECK) {
            OrnPlanSet plans;
            if (orn_sema(u)) orn_analyze(u, &plans);
        } else if (mode == MODE_EXPLAIN || mode == MODE_EXPLAIN_JSON) {
            OrnPlanSet plans;
            if (orn_sema(u) && orn_analyze(u, &plans)) {
                if (declared_layout) plans.layout.n = 0;
                OrnBuf report;
                orn_buf_init(&report);
                if (mode == MODE_EXPLAIN)
                    orn_explain_text(&report, u, &plans);
                else
                    orn_explain_json(&report, u, &plans);
                rc = write_output(output, report.data, report.len);
                orn_buf_free(&report);
            }
        } else if (mode == MODE_NONE || mode == MODE_EMIT_C || mode == MODE_EMIT_CUDA) {
            OrnPlanSet plans;
            if (orn_sema(u) && orn_analyze(u, &plans) && !orn_diags_failed(&u->diags)) {
                if (declared_layout) plans.layout.n = 0;
                OrnBuf code;
                orn_buf_init(&code);
                OrnBuf cu;
                orn_buf_init(&cu);
                OrnCgOptions copt = {.file = u->src.path, .gpu = gpu, .gpu_rowcache = rowcache};
                if (mode != MODE_EMIT_CUDA) copt.vec_bytes = orn_cc_vector_bytes(&cc);
                if (!orn_cg_generate(u, &plans, &orn_cg_target_c, &copt, &code) ||
                    (gpu && !orn_cg_generate(u, &plans, &orn_cg_target_cuda, &copt, &cu))) {
                    rc = EXIT_ICE;
                } else if (mode == MODE_EMIT_CUDA) {
                    rc = write_output(output, cu.data ? cu.data : "", cu.len);
                } else if (mode == MODE_NONE) {
                    cc.on_undefined = undefined_extern;
                    cc.ud = u;
                    if (gpu) {
                        cc.cu = cu.data ? cu.data : "";
                        cc.cu_len = cu.len;
                        cc.nvcc = nvcc;
                    }
                    rc = orn_cc_build(code.data ? code.data : "", code.len, output, &cc);
                } else {
                    rc = write_output(output, code.data, code.len);
                }
                orn_buf_free(&code);
                orn_buf_free(&cu);
            }
        } else {
            char *dump = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&dump, &len);
            if (!mem) {
                fprintf(stderr, "orionc: error: out of memory\n");
                rc = EXIT_ICE;
            } else {
                orn_ast_dump(mem, u->program);
                fclose(mem);
                rc = write_output(output, dump, len);
            }
            free(dump);
        }
    }
    if (u->diags.ices > 0)
        rc = EXIT_ICE;
    else if (rc == EXIT_OK && orn_diags_failed(&u->diags))
        rc = EXIT_COMPILE;
    orn_unit_free(u);
    return rc;
}

int main(int argc, char **argv)
{
    const char **extra = calloc((size_t)argc + 1, sizeof *extra);
    const char **cflags = calloc((size_t)argc + 1, sizeof *cflags);
    if (!extra || !cflags) {
        fputs("orionc: error: out of memory\n", stderr);
        return EXIT_ICE;
    }
    int rc = run(argc, argv, extra, cflags);
    free(extra);
    free(cflags);
    return rc;
}
