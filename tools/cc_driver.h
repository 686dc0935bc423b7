/* cc_driver.h: orionc's back half: write the generated C and run the system C compiler on
 * it (flags from the configured orn_config.h; the runtime's headers and libraries found
 * relative to the running executable, so an installed prefix can be moved). */
#ifndef ORN_CC_DRIVER_H
#define ORN_CC_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct OrnCcOptions {
    const char *opt;    /* "-O2" (default), "-O0", ... */
    bool debug;         /* -g */
    bool keep_c;        /* keep the C file next to the output (OUT.c) */
    const char **extra; /* -l, -L and -Wl, arguments passed to the linker, in order */
    int nextra;
    bool no_rpath;       /* --no-rpath: -L directories are not added to the run-time search path */
    const char **cflags; /* -march= / -mtune= passed to the compiler */
    int ncflags;
    /* Called for each symbol the linker reports undefined; returns true when it reported
     * the symbol itself (e.g. at the extern's declaration in the .orn file). NULL: none. */
    bool (*on_undefined)(void *ud, const char *symbol);
    void *ud;
    /* --gpu: the kernels' CUDA source (cu_len bytes), compiled with nvcc (the path) and
     * linked into the executable with the CUDA runtime; NULL: none. */
    const char *cu;
    size_t cu_len;
    const char *nvcc;
    bool shared; /* build a shared object (-fPIC -shared, no libraries) instead */
} OrnCcOptions;

/* The nvcc that --gpu uses: $ORN_NVCC when set (even to nothing: then none), else the one
 * CMake found, else the first on PATH. Writes its path to buf; false when there is none. */
bool orn_cc_find_nvcc(char *buf, size_t n);

/* Compile C text `c` (n bytes) into the executable `out`. Returns 0 on success; 3 (an
 * internal compiler error, reported) when the C compiler rejects the code, which is then
 * kept and its path printed; 1 when linking fails (an extern no library defines); 2 when
 * a file cannot be written, the compiler cannot run or the runtime is not where the
 * executable expects it (all reported). Each -LDIR of o->extra that exists also becomes
 * an rpath (its absolute path) unless o->no_rpath. */
int orn_cc_build(const char *c, size_t n, const char *out, const OrnCcOptions *o);

/* The bytes of a vector as the C compiler vectorizes generated C with o's compiler and
 * flags ($ORN_CC, $ORN_CFLAGS, -march= included): a probe loop compiled to assembly, its
 * widest vector register (x86: 64 for zmm, 32 for ymm, 16 for xmm). The code generator
 * writes its register partials at that width (OrnCgOptions.vec_bytes), so that a load of
 * what a vectorized loop stored is forwarded from the store. ORN_CC_VECTOR_DEFAULT when
 * the probe cannot run or names none. */
enum { ORN_CC_VECTOR_DEFAULT = 32 };
int orn_cc_vector_bytes(const OrnCcOptions *o);

#endif
