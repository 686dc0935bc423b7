/* arena.c: chunked bump allocator. Large requests get a chunk of their own. */
#include "arena.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 64 * 1024, ALIGN = 16 };

typedef struct Chunk {
    struct Chunk *prev;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} Chunk;

struct OrnArena {
    Chunk *head;
    size_t total;
};

static void oom(void)
{
    fputs("orion: out of memory\n", stderr);
    abort();
}

/* Blocks of at least LINE_MIN bytes start on a cache line. malloc's large blocks start 16
 * bytes into a page, so two arrays could differ by 32 or 48 bytes modulo 64: the vector loop
 * over both then aligns one and splits the other's every load over two lines (matvec_col's
 * y += A[:, j] x[j]: 1.3x slower, A at 16 and y at 48 modulo 64, in plain C too). From 256
 * bytes (32 doubles): a short vector of sums, stored and loaded again per row, split over two
 * lines fails its store-to-load forwarding (a 512-byte column-sum array in plain C: 13.9 ms a
 * pass aligned, 15-18 at malloc's alignment). */
enum { LINE = 64, LINE_MIN = 256 };
/* From this size zeroed blocks come from calloc, zero pages the kernel maps when first
 * touched (a large buffer's dense store mostly untouched), at malloc's alignment. */
#define ZERO_LAZY ((size_t)64 << 20)

/* Blocks of 2 MiB or more start on 2 MiB, where a transparent huge page can map their
 * first 2 MiB (the DSM advises its tiles so, dsm/build.c orn_dsm_huge): a tile of 2-4 MiB
 * then takes one page fault for most of itself, not 512 (a wavefront's bands after a
 * repartition: 16 MB of new tiles a rank, 6 ms of 4 KiB faults). */
#define HUGE_ALIGN ((size_t)2 << 20)

/* Data arrays of 4 KiB or more start on a page. A row-times-vector loop streams the row and
 * reads the vector at the same index; where the vector sat 64 bytes below the row modulo
 * 4 KiB, every row of a matrix whose rows are whole pages (a power-of-two width) ran 1.35x
 * slower on a Xeon (Sapphire Rapids: matvec_foreach 0.0115 s against 0.0080 with the vector
 * on a page; the same loop in plain C, its loads in the order gcc had emitted them: 0.0106 s at
 * that offset, 0.0080-0.0085 at 0, 0x40, 0x800, 0xf80, 0xfe0). The heap's offset was luck
 * (whatever was allocated before); on a page it is the tiles' (dsm/array.c, their rows
 * start on a page when they are whole pages). */
enum { PAGE = 4096 };

/* A block of n >= LINE_MIN bytes on its alignment: 2 MiB from HUGE_ALIGN, else a page from
 * PAGE where `page` (data arrays), else a line. */
static void *alloc_aligned(size_t n, bool page)
{
    size_t align = n >= HUGE_ALIGN ? HUGE_ALIGN : page && n >= PAGE ? PAGE : LINE;
    void *p = NULL;
    return posix_memalign(&p, align, n) == 0 ? p : NULL;
}

void *orn_try_alloc(size_t n)
{
    return n < LINE_MIN ? malloc(n ? n : 1) : alloc_aligned(n, false);
}

static void *zalloc(size_t n, size_t size, bool page)
{
    size_t b; /* as calloc(n ? n : 1, size ? size : 1) always was here */
    if (__builtin_mul_overflow(n ? n : 1, size ? size : 1, &b)) return NULL;
    if (b < LINE_MIN || b >= ZERO_LAZY) return calloc(b, 1);
    void *p = alloc_aligned(b, page);
    if (p) memset(p, 0, b);
    return p;
}

void *orn_try_zalloc(size_t n, size_t size)
{
    return zalloc(n, size, false);
}

void *orn_try_zalloc_data(size_t n, size_t size)
{
    return zalloc(n, size, true);
}

void *orn_xmalloc(size_t n)
{
    void *p = orn_try_alloc(n);
    if (!p) oom();
    return p;
}

void *orn_xcalloc(size_t n, size_t size)
{
    void *p = orn_try_zalloc(n, size);
    if (!p) oom();
    return p;
}

void *orn_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom();
    return q;
}

OrnArena *orn_arena_new(void)
{
    return orn_xcalloc(1, sizeof(OrnArena));
}

void orn_arena_free(OrnArena *a)
{
    if (!a) return;
    for (Chunk *c = a->head, *prev; c; c = prev) {
        prev = c->prev;
        free(c);
    }
    free(a);
}

void *orn_arena_alloc(OrnArena *a, size_t size)
{
    if (size > SIZE_MAX - ALIGN - sizeof(Chunk)) oom();
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    Chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > CHUNK / 4 ? size : CHUNK;
        Chunk *n = orn_xmalloc(sizeof(Chunk) + cap);
        n->cap = cap;
        n->used = 0;
        if (cap == size && c) { /* big block: keep the current chunk on top for small ones */
            n->prev = c->prev;
            c->prev = n;
        } else {
            n->prev = c;
            a->head = n;
        }
        c = n;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}

char *orn_arena_strndup(OrnArena *a, const char *s, size_t n)
{
    char *p = orn_arena_alloc(a, n + 1);
    if (n) memcpy(p, s, n);
    p[n] = 0;
    return p;
}

size_t orn_arena_used(const OrnArena *a)
{
    return a->total;
}
