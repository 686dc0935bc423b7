/* arena.h: bump allocation for one compilation unit (or one REPL statement).
 *
 * Everything allocated from an arena is freed by one orn_arena_free(). Memory is
 * zero-filled and aligned to 16 bytes. Allocation never returns NULL: on out-of-memory
 * the process prints "orion: out of memory" and aborts (the only place library code ends
 * the process). */
#ifndef ORN_ARENA_H
#define ORN_ARENA_H

#include <stddef.h>

typedef struct OrnArena OrnArena;

OrnArena *orn_arena_new(void);
void orn_arena_free(OrnArena *a);
void *orn_arena_alloc(OrnArena *a, size_t size);
/* Copy n bytes of s and add a terminating NUL. */
char *orn_arena_strndup(OrnArena *a, const char *s, size_t n);
/* Bytes handed out so far (for tests and statistics). */
size_t orn_arena_used(const OrnArena *a);

/* Heap blocks for code that does not use an arena, freed with free(). Blocks of 1 KiB or
 * more start on a 64-byte cache line (zeroed ones up to 64 MiB; larger zeroed ones are
 * calloc's, zero pages mapped when first touched). orn_try_*: NULL when out of memory (or
 * n * size overflows); orn_x*: abort then. orn_xrealloc keeps no alignment. */
void *orn_try_alloc(size_t n);
void *orn_try_zalloc(size_t n, size_t size);
/* orn_try_zalloc for a data array's values (local arrays, the DSM's tiles): blocks of 4 KiB
 * or more start on a 4 KiB page, so the same index of two such arrays has the same offset in
 * its page whatever the heap did before (arena.c, PAGE). */
void *orn_try_zalloc_data(size_t n, size_t size);
void *orn_xmalloc(size_t n);
void *orn_xcalloc(size_t n, size_t size);
void *orn_xrealloc(void *p, size_t n);

#endif
