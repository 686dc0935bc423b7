/* cc_driver.c: compile generated C with the system C compiler (see cc_driver.h).
 *
 * The runtime's headers and static libraries are found relative to the folder of the
 * running executable (ORN_REL_INCDIR, ORN_REL_LIBDIR from orn_config.h; /proc/self/exe):
 * bin/ -> include/orion and LIBDIR/orion installed (LIBDIR: lib or lib/<triplet>), tools/
 * -> the same folders of the build tree. So the binary holds no path of the tree it was
 * built in, and an installation can be moved whole.
 *
 * The C file goes to OUT.c with --keep-c, else to a temporary file that is removed after
 * a successful compile. $ORN_CC replaces the compiler and $ORN_CFLAGS (split at spaces)
 * adds flags, for tests and experiments. If the compiler fails on generated code, that is
 * a bug in orionc: the file is kept and named in the message, and orionc exits 3. */
#define _XOPEN_SOURCE   700
#define _DEFAULT_SOURCE /* mkstemps */

#include "cc_driver.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "orn_config.h"
#include "strbuf.h"

enum { MAXARGS = 256 };

static int write_file(const char *path, const char *c, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    size_t w = fwrite(c, 1, n, f);
    if (fclose(f) != 0 || w != n) return -1;
    return 0;
}

static void push(const char **argv, int *argc, const char *a)
{
    if (*argc < MAXARGS - 1) argv[(*argc)++] = a;
}

/* Run argv; its exit status, 127 when it could not be started, 128+ for a signal. With
 * `err`, the command's stderr is collected there instead of passing through. */
static int run(const char *const *argv, OrnBuf *err)
{
    fflush(stdout);
    fflush(stderr);
    int fds[2] = {-1, -1};
    if (err && pipe(fds) != 0) err = NULL;
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "orionc: error: cannot start the C compiler: %s\n", strerror(errno));
        if (err) close(fds[0]), close(fds[1]);
        return 127;
    }
    if (pid == 0) {
        if (err) {
            dup2(fds[1], 2);
            close(fds[0]);
            close(fds[1]);
        }
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "orionc: error: cannot run the C compiler '%s': %s\n", argv[0],
                strerror(errno));
        _exit(127);
    }
    if (err) {
        close(fds[1]);
        char buf[4096];
        for (ssize_t k; (k = read(fds[0], buf, sizeof buf)) != 0;) {
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) break;
            orn_buf_put(err, buf, (size_t)k);
        }
        close(fds[0]);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Hand each symbol of the linker's "undefined reference to `sym'" lines (GNU ld and lld
 * both say so) to o->on_undefined, once each. Returns the number it reported itself. */
static int report_undefined(const char *log, const OrnCcOptions *o)
{
    if (!o->on_undefined) return 0;
    int reported = 0;
    static const char key[] = "undefined reference to ";
    char seen[2048] = "\n";
    for (const char *p = log; (p = strstr(p, key)) != NULL;) {
        p += sizeof key - 1;
        if (*p == '`' || *p == '\'' || (unsigned char)*p == 0xe2) { /* ` ' or a UTF-8 quote */
            while (*p && *p != '_' && !(*p >= 'A' && *p <= 'Z') && !(*p >= 'a' && *p <= 'z')) p++;
        }
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (n == 0 || n > 200) continue;
        char sym[256], tag[260];
        snprintf(sym, sizeof sym, "%.*s", (int)n, p);
        snprintf(tag, sizeof tag, "\n%s\n", sym);
        if (strstr(seen, tag)) continue;
        if (strlen(seen) + n + 2 < sizeof seen) {
            strcat(seen, sym);
            strcat(seen, "\n");
        }
        if (o->on_undefined(o->ud, sym)) reported++;
    }
    return reported;
}

/* The runtime's folder `rel` (relative to the running executable's folder), resolved into
 * out. False, after saying what is missing, when `probe` is not in it: an installation
 * moved in part, or an orionc copied without its runtime. */
static bool runtime_dir(const char *rel, const char *probe, char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0 || (size_t)k >= sizeof exe - 1) {
        fprintf(stderr, "orionc: error: cannot find the running executable (/proc/self/exe): %s\n",
                k < 0 ? strerror(errno) : "path too long");
        return false;
    }
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    char dir[2 * PATH_MAX], file[3 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", exe, rel);
    char *real = realpath(dir, NULL);
    snprintf(file, sizeof file, "%s/%s", real ? real : dir, probe);
    bool ok = real && strlen(real) < n && access(file, R_OK) == 0;
    if (ok)
        snprintf(out, n, "%s", real);
    else
        fprintf(stderr,
                "orionc: error: the Orion runtime is missing: cannot read '%s'\n"
                "  (it is found relative to the executable, in %s; install Orion whole with\n"
                "  'cmake --install' or its .deb package, and move an installation whole)\n",
                file, exe);
    free(real);
    return ok;
}

static bool executable(const char *p)
{
    return p && *p && access(p, X_OK) == 0;
}

bool orn_cc_find_nvcc(char *buf, size_t n)
{
    const char *e = getenv("ORN_NVCC");
    if (e) {
        snprintf(buf, n, "%s", e);
        return executable(e);
    }
    if (executable(ORN_NVCC_CONFIGURED)) {
        snprintf(buf, n, "%s", ORN_NVCC_CONFIGURED);
        return true;
    }
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t len = strcspn(p, ":");
        snprintf(buf, n, "%.*s/nvcc", (int)len, p);
        if (len && executable(buf)) return true;
        p += len;
        if (*p == ':') p++;
    }
    return false;
}

/* Compile the --gpu kernels into obj: native code for sm_80 and sm_90 and PTX for later
 * GPUs ($ORN_NVCC_ARCH replaces that list, e.g. "-arch=sm_80"), arithmetic as the host C's
 * (no contraction). Returns the command's status (127: could not run). */
static int nvcc_compile(const OrnCcOptions *o, const char *rtinc, const char *cu, const char *obj)
{
    static const char *const inc[] = {ORN_INCLUDE_FLAGS NULL};
    const char *argv[MAXARGS];
    int argc = 0;
    push(argv, &argc, o->nvcc);
    push(argv, &argc, o->opt ? o->opt : "-O3");
    if (o->debug) push(argv, &argc, "-g");
    push(argv, &argc, "--fmad=false");
    push(argv, &argc, "-Xcompiler");
    push(argv, &argc, "-ffp-contract=off,-fwrapv,-fno-math-errno,-Wno-overflow,-Wno-div-by-zero");
    push(argv, &argc, "-Wno-deprecated-gpu-targets");
    /* the language's arithmetic, not the user's business: integer constants that wrap (#61),
     * a division by a constant zero (#39) */
    push(argv, &argc, "--diag-suppress=61,39");
    char *arch = NULL;
    const char *ea = getenv("ORN_NVCC_ARCH");
    if (ea && *ea) {
        arch = strdup(ea);
        for (char *t = arch ? strtok(arch, " \t") : NULL; t; t = strtok(NULL, " \t"))
            push(argv, &argc, t);
    } else {
        push(argv, &argc, "-gencode=arch=compute_80,code=sm_80");
        push(argv, &argc, "-gencode=arch=compute_90,code=[sm_90,compute_90]");
    }
    const char *ccbin = getenv("ORN_NVCC_CCBIN");
    if (ccbin && *ccbin) {
        push(argv, &argc, "-ccbin");
        push(argv, &argc, ccbin);
    }
    push(argv, &argc, rtinc);
    for (int i = 0; inc[i]; i++) push(argv, &argc, inc[i]);
    push(argv, &argc, "-x");
    push(argv, &argc, "cu");
    push(argv, &argc, "-c");
    push(argv, &argc, cu);
    push(argv, &argc, "-o");
    push(argv, &argc, obj);
    argv[argc] = NULL;
    int rc = run(argv, NULL);
    free(arch);
    return rc;
}

/* The compiler and the flags of a compile of generated C (into argv from *argc on; rtinc:
 * the runtime's -I, or NULL): -O3 and the machine's own instruction set by default, so
 * that loops vectorize as the hand-written C a performance-minded person compiles with
 * -O3 -march=native; then the options' flags and $ORN_CFLAGS (split at spaces, *extra
 * holds them: free it). Returns the compiler. */
static const char *compile_flags(const OrnCcOptions *o, const char *rtinc, const char **argv,
                                 int *argc, char **extra)
{
    static const char *const base[] = {ORN_CC_FLAGS ORN_EXTRA_CC_FLAGS ORN_SANITIZE_FLAGS NULL};
    static const char *const inc[] = {ORN_INCLUDE_FLAGS NULL};
    const char *cc = getenv("ORN_CC");
    cc = cc && *cc ? cc : ORN_CC;
    push(argv, argc, cc);
    push(argv, argc, o->opt ? o->opt : "-O3");
    if (o->debug) push(argv, argc, "-g");
    for (int i = 0; base[i]; i++) push(argv, argc, base[i]);
    /* Integer constants that wrap (the language's -fwrapv arithmetic: i32(2147483647) +
     * i32(5)), a float divided by an integer constant 0 (IEEE: an infinity) and an integer
     * constant that a float cannot hold exactly are the language's arithmetic: the
     * compiler's warnings about them would reach the user. The
     * flags of the compiler that runs, also where $ORN_CC names another family. */
    const char *slash = strrchr(cc, '/');
    if (strstr(slash ? slash + 1 : cc, "clang")) {
        push(argv, argc, "-Wno-integer-overflow");
        push(argv, argc, "-Wno-division-by-zero");
        push(argv, argc, "-Wno-implicit-const-int-float-conversion"); /* f64(INT64_MAX) */
    } else {
        push(argv, argc, "-Wno-overflow");
        push(argv, argc, "-Wno-div-by-zero");
    }
    if (rtinc) {
        push(argv, argc, rtinc);
        for (int i = 0; inc[i]; i++) push(argv, argc, inc[i]);
    }
    bool march = false;
    for (int i = 0; i < o->ncflags; i++) march |= strncmp(o->cflags[i], "-march=", 7) == 0;
    if (!march) push(argv, argc, "-march=native");
    for (int i = 0; i < o->ncflags; i++) push(argv, argc, o->cflags[i]);
    *extra = NULL;
    const char *ef = getenv("ORN_CFLAGS");
    if (ef && *ef) {
        *extra = strdup(ef);
        for (char *t = *extra ? strtok(*extra, " \t") : NULL; t; t = strtok(NULL, " \t"))
            push(argv, argc, t);
    }
    return cc;
}

/* A plain float loop as the compiler vectorizes it with the flags of generated C: the
 * widest vector register its assembly names (x86: zmm 64 bytes, ymm 32, xmm 16). Not
 * instrumented by sanitizers (a build with them would keep the loop scalar, and its xmm
 * registers would say 16 bytes where the generated code's `omp simd` loops are wider). */
int orn_cc_vector_bytes(const OrnCcOptions *o)
{
    static const char probe[] =
        "__attribute__((no_sanitize(\"address\", \"thread\", \"undefined\")))\n"
        "void orn_vec_probe(float *restrict a, const float *restrict b)\n"
        "{\n    for (int i = 0; i < 4096; i++) a[i] += 3.0f * b[i];\n}\n";
    const char *dir = getenv("TMPDIR");
    char src[4096], as[4100];
    snprintf(src, sizeof src, "%s/orionc-vec-XXXXXX.c", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(src, 2);
    if (fd < 0) return ORN_CC_VECTOR_DEFAULT;
    close(fd);
    snprintf(as, sizeof as, "%.*ss", (int)strlen(src) - 1, src);
    int bytes = ORN_CC_VECTOR_DEFAULT;
    if (write_file(src, probe, sizeof probe - 1) == 0) {
        OrnCcOptions q = *o;
        q.opt = NULL; /* the vectorizer at -O3, whatever the program's level */
        q.debug = false;
        const char *argv[MAXARGS];
        int argc = 0;
        char *extra = NULL;
        compile_flags(&q, NULL, argv, &argc, &extra);
        push(argv, &argc, "-S");
        push(argv, &argc, src);
        push(argv, &argc, "-o");
        push(argv, &argc, as);
        argv[argc] = NULL;
        OrnBuf err;
        orn_buf_init(&err);
        FILE *f = run(argv, &err) == 0 ? fopen(as, "r") : NULL;
        if (f) {
            char line[512];
            int widest = 0;
            while (fgets(line, sizeof line, f)) {
                int w = strstr(line, "zmm")   ? 64
                        : strstr(line, "ymm") ? 32
                        : strstr(line, "xmm") ? 16
                                              : 0;
                if (w > widest) widest = w;
            }
            fclose(f);
            if (widest) bytes = widest;
        }
        orn_buf_free(&err);
        free(extra);
    }
    unlink(src);
    unlink(as);
    return bytes;
}

int orn_cc_build(const char *c, size_t n, const char *out, const OrnCcOptions *o)
{
    /* the runtime: -I of its headers; its libraries' paths (not for a shared object) */
    static const char *const libnames[] = {ORN_LIBS NULL};
    char rtinc[PATH_MAX + 2], rtdir[PATH_MAX], rtlibs[ORN_NLIBS][2 * PATH_MAX];
    if (!runtime_dir(ORN_REL_INCDIR, "orn_std.h", rtdir, sizeof rtdir)) return 2;
    snprintf(rtinc, sizeof rtinc, "-I%s", rtdir);
    if (!o->shared) {
        if (!runtime_dir(ORN_REL_LIBDIR, libnames[0], rtdir, sizeof rtdir)) return 2;
        for (int i = 0; i < ORN_NLIBS; i++)
            snprintf(rtlibs[i], sizeof rtlibs[i], "%s/%s", rtdir, libnames[i]);
    }

    char path[4096];
    bool temp = !o->keep_c;
    if (temp) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/orionc-XXXXXX.c", dir && *dir ? dir : "/tmp");
        int fd = mkstemps(path, 2);
        if (fd < 0 || close(fd) != 0) {
            fprintf(stderr, "orionc: error: cannot create a temporary file: %s\n", strerror(errno));
            return 2;
        }
    } else {
        snprintf(path, sizeof path, "%s.c", out);
    }
    if (write_file(path, c, n) != 0) {
        fprintf(stderr, "orionc: error: cannot write '%s': %s\n", path, strerror(errno));
        if (temp) unlink(path);
        return 2;
    }

    static const char *const base[] = {ORN_CC_FLAGS ORN_EXTRA_CC_FLAGS ORN_SANITIZE_FLAGS NULL};
    static const char *const libs[] = {ORN_LINK_FLAGS NULL};
    char obj[4200];
    snprintf(obj, sizeof obj, "%s.o", temp ? path : out);
    const char *argv[MAXARGS];
    int argc = 0;
    char *extra = NULL;
    const char *cc = compile_flags(o, rtinc, argv, &argc, &extra);
    /* a shared object (the REPL's modules): one step, symbols resolved when loaded */
    push(argv, &argc, o->shared ? "-fPIC" : "-c");
    if (o->shared) push(argv, &argc, "-shared");
    push(argv, &argc, path);
    push(argv, &argc, "-o");
    push(argv, &argc, o->shared ? out : obj);
    argv[argc] = NULL;
    int rc = run(argv, NULL);
    free(extra);
    if (o->shared && rc == 0) {
        if (temp) unlink(path);
        return 0;
    }
    if (rc == 127) {
        if (temp) unlink(path);
        return 2;
    }
    if (rc != 0) {
        unlink(obj);
        fprintf(stderr,
                "orionc: internal compiler error: the C compiler rejected the generated code; "
                "kept it at %s\n",
                path);
        return 3;
    }
    /* --gpu: the kernels, as the C: kept on a failure, which is orionc's */
    char cupath[4200], cuobj[4300], cudalib[4300];
    if (o->cu) {
        snprintf(cupath, sizeof cupath, "%s.cu", temp ? path : out);
        snprintf(cuobj, sizeof cuobj, "%s.o", cupath);
        /* the CUDA runtime next to nvcc: BIN/../lib64 */
        snprintf(cudalib, sizeof cudalib, "-L%s", o->nvcc);
        char *slash = strrchr(cudalib, '/');
        if (slash) *slash = 0;
        slash = strrchr(cudalib, '/');
        if (slash) strcpy(slash, "/lib64");
        if (write_file(cupath, o->cu, o->cu_len) != 0) {
            fprintf(stderr, "orionc: error: cannot write '%s': %s\n", cupath, strerror(errno));
            unlink(obj);
            if (temp) unlink(path);
            return 2;
        }
        rc = nvcc_compile(o, rtinc, cupath, cuobj);
        if (rc != 0) {
            unlink(obj);
            unlink(cuobj);
            if (rc == 127) {
                if (temp) unlink(path), unlink(cupath);
                return 2;
            }
            fprintf(stderr,
                    "orionc: internal compiler error: nvcc rejected the generated CUDA code; "
                    "kept it at %s\n",
                    cupath);
            return 3;
        }
    }
    /* link: a failure is the program's (an extern that no library defines) */
    argc = 0;
    push(argv, &argc, cc);
    for (int i = 0; base[i]; i++)
        if (strncmp(base[i], "-fsanitize", 10) == 0) push(argv, &argc, base[i]);
    push(argv, &argc, obj);
    if (o->cu) push(argv, &argc, cuobj);
    push(argv, &argc, "-o");
    push(argv, &argc, out);
    for (int i = 0; i < ORN_NLIBS; i++) push(argv, &argc, rtlibs[i]);
    for (int i = 0; libs[i]; i++) push(argv, &argc, libs[i]);
    if (o->cu) {
        push(argv, &argc, cudalib);
        push(argv, &argc, "-lcudart_static");
        push(argv, &argc, "-lrt");
        push(argv, &argc, "-ldl");
        push(argv, &argc, "-lstdc++");
    }
    /* the user's -l, -L and -Wl, in order; each -L folder that exists also an rpath, so
     * that the program finds a shared library there without LD_LIBRARY_PATH */
    char **rpath = calloc((size_t)o->nextra + 1, sizeof *rpath);
    for (int i = 0; i < o->nextra; i++) {
        push(argv, &argc, o->extra[i]);
        if (o->no_rpath || !rpath || strncmp(o->extra[i], "-L", 2) != 0) continue;
        rpath[i] = realpath(o->extra[i] + 2, NULL);
        if (!rpath[i]) continue;
        push(argv, &argc, "-Xlinker");
        push(argv, &argc, "-rpath");
        push(argv, &argc, "-Xlinker");
        push(argv, &argc, rpath[i]);
    }
    argv[argc] = NULL;
    OrnBuf log;
    orn_buf_init(&log);
    rc = run(argv, &log);
    for (int i = 0; rpath && i < o->nextra; i++) free(rpath[i]);
    free(rpath);
    unlink(obj);
    if (o->cu) {
        unlink(cuobj);
        if (temp) unlink(cupath);
    }
    if (rc != 0 && rc != 127) {
        /* Undefined externs become diagnostics at their declarations; anything else the
         * linker said is shown as it said it. */
        if (report_undefined(log.data ? log.data : "", o) == 0) {
            fputs(log.data ? log.data : "", stderr);
            fprintf(stderr,
                    "orionc: error: linking '%s' failed (is every extern fn defined by "
                    "the C library, libm or a library given with -l?)\n",
                    out);
        }
    } else if (log.len) {
        fputs(log.data, stderr); /* warnings */
    }
    orn_buf_free(&log);
    if (rc != 0) {
        if (temp) unlink(path);
        return rc == 127 ? 2 : 1;
    }
    if (temp) unlink(path);
    return 0;
}
