/* intern.h: interned names. Two OrnName pointers from one interner are equal iff the
 * names are equal, so names compare by pointer. Names live in the interner's arena. */
#ifndef ORN_INTERN_H
#define ORN_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

typedef struct OrnName {
    const char *s; /* NUL-terminated */
    uint32_t len;
    uint32_t hash;
} OrnName;

typedef struct OrnInterner OrnInterner;

/* The interner allocates names from `arena` and its table from the heap. */
OrnInterner *orn_intern_new(OrnArena *arena);
void orn_intern_free(OrnInterner *in);
const OrnName *orn_intern(OrnInterner *in, const char *s, size_t len);
const OrnName *orn_intern_cstr(OrnInterner *in, const char *s);
size_t orn_intern_count(const OrnInterner *in);

#endif
