/* bench.h: helpers shared by the hand-written C baselines of bench/run.sh (header only).
 * Timing, a deterministic RNG (splitmix64) and a fast reader for whitespace-separated
 * numeric text files. Nothing here is timed: loading happens before the timed loops. */
#ifndef ORN_BENCH_H
#define ORN_BENCH_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t bench_rng = 0x853c49e6748fea9bULL;
static inline uint64_t bench_next(void)
{
    uint64_t z = (bench_rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline double bench_uniform(void)
{
    return (double)(bench_next() >> 11) * 0x1p-53;
}
static inline double bench_gauss(void)
{
    double u1 = 1.0 - bench_uniform(), u2 = bench_uniform();
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Blocks on a 64-byte cache line, as a performance-minded program allocates its arrays
 * (malloc's start 16 bytes into a line: a vector of 8 doubles stored and loaded again per
 * row then splits over two lines -- standardize's column sums in 512-byte arrays took 15-18
 * ms a pass, 13.9 aligned); blocks of 2 MiB
 * or more on 2 MiB boundaries, asked for as transparent huge pages (madvise(MADV_HUGEPAGE):
 * where the system's THP setting is "madvise", a stream over a large array otherwise takes a
 * TLB miss every 4 KiB, 15% of a 128 MB matrix-vector pass on the benchmark machine). The
 * Orion runtime asks the same for its arrays (dsm/build.c, orn_dsm_huge). */
static inline void *bench_xmalloc(size_t n)
{
    void *p = NULL;
    const size_t huge = (size_t)2 << 20;
    if (posix_memalign(&p, n >= huge ? huge : 64, n ? n : 1) != 0) p = NULL;
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(1);
    }
#ifdef MADV_HUGEPAGE
    if (n >= huge) madvise(p, n & ~(huge - 1), MADV_HUGEPAGE);
#endif
    return p;
}

/* The whole file, NUL-terminated, placed so that its byte `at` (an Orion binary array's
 * first element: 80) starts a cache line; *len gets its length, *block what to free. Exits
 * on error. */
static inline char *bench_slurp_at(const char *path, size_t *len, size_t at, char **block)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t shift = (64 - at % 64) % 64;
    char *b = bench_xmalloc((size_t)n + 1 + shift), *buf = b + shift;
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    fclose(f);
    buf[n] = 0;
    if (len) *len = (size_t)n;
    *block = b;
    return buf;
}

/* The whole file, NUL-terminated; *len gets its length. Exits on error. */
static inline char *bench_slurp(const char *path, size_t *len)
{
    char *block;
    return bench_slurp_at(path, len, 0, &block);
}

/* Skip blanks (not newlines) and '#' comment lines; returns the next token's start. */
static inline char *bench_skip(char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (*p == '#')
            while (*p && *p != '\n') p++;
        else
            return p;
    }
}

/* p at the start of the next data line (blank and comment lines skipped), or NULL at the
 * end of the text. */
static inline char *bench_line(char *p)
{
    for (;;) {
        p = bench_skip(p);
        if (*p != '\n') return *p ? p : NULL;
        p++;
    }
}
static inline uint64_t bench_fnv(uint64_t index, const void *rec, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *p = (const unsigned char *)&index;
    for (size_t i = 0; i < 8; i++) h = (h ^ p[i]) * 1099511628211ULL;
    p = rec;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* Write VALS (d0 x d1 elements of es bytes, type code 2 f32 or 3 f64) as an ndim-D array
 * (ndim 1: d0 elements) in Orion's binary array format (dsm/saveload.c: an 80-byte header
 * with an FNV-1a checksum of each element and its index, then the values row-major),
 * which load() reads. 0, or 1 after saying why. */
static inline int bench_write_array(const char *path, const void *vals, int64_t d0, int64_t d1,
                                    int ndim, uint32_t type, size_t es)
{
    int64_t count = d0 * d1;
    uint64_t sum = 0;
    for (int64_t i = 0; i < count; i++)
        sum += bench_fnv((uint64_t)i, (const char *)vals + i * es, es);
    struct {
        char magic[8];
        uint32_t version, bom, type, ndim, sparse, zero;
        int64_t dims[4];
        int64_t count;
        uint64_t checksum;
    } h = {{'O', 'R', 'N', 'A', 'R', 'R', '\r', '\n'},
           1,
           0x01020304,
           type,
           (uint32_t)ndim,
           0,
           0,
           {d0, ndim == 2 ? d1 : 1, 1, 1},
           count,
           sum};
    _Static_assert(sizeof h == 80, "header layout");
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&h, sizeof h, 1, f) != 1 ||
        fwrite(vals, es, (size_t)count, f) != (size_t)count || fclose(f)) {
        perror(path);
        return 1;
    }
    return 0;
}

#endif
