/* intern.c: open-addressing hash set of names (FNV-1a), grown at 3/4 load. */
#include "intern.h"

#include <stdlib.h>
#include <string.h>

struct OrnInterner {
    OrnArena *arena;
    OrnName **slots;
    size_t cap, count;
};

static uint32_t fnv1a(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

OrnInterner *orn_intern_new(OrnArena *arena)
{
    OrnInterner *in = orn_xcalloc(1, sizeof *in);
    in->arena = arena;
    in->cap = 256;
    in->slots = orn_xcalloc(in->cap, sizeof *in->slots);
    return in;
}

void orn_intern_free(OrnInterner *in)
{
    if (!in) return;
    free(in->slots);
    free(in);
}

static void grow(OrnInterner *in)
{
    size_t cap = in->cap * 2;
    OrnName **slots = orn_xcalloc(cap, sizeof *slots);
    for (size_t i = 0; i < in->cap; i++) {
        OrnName *n = in->slots[i];
        if (!n) continue;
        size_t j = n->hash & (cap - 1);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = n;
    }
    free(in->slots);
    in->slots = slots;
    in->cap = cap;
}

const OrnName *orn_intern(OrnInterner *in, const char *s, size_t len)
{
    uint32_t h = fnv1a(s, len);
    size_t j = h & (in->cap - 1);
    for (OrnName *n; (n = in->slots[j]); j = (j + 1) & (in->cap - 1))
        if (n->hash == h && n->len == len && memcmp(n->s, s, len) == 0) return n;
    OrnName *n = orn_arena_alloc(in->arena, sizeof *n);
    n->s = orn_arena_strndup(in->arena, s, len);
    n->len = (uint32_t)len;
    n->hash = h;
    in->slots[j] = n;
    if (++in->count * 4 >= in->cap * 3) grow(in);
    return n;
}

const OrnName *orn_intern_cstr(OrnInterner *in, const char *s)
{
    return orn_intern(in, s, strlen(s));
}

size_t orn_intern_count(const OrnInterner *in)
{
    return in->count;
}
