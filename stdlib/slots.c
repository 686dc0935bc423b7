/* slots.c: the session state of the `orion` REPL (orn_std.h, "the REPL's modules") and the
 * params of its modules. */
#include "orn_std.h"

#include "params.h"

typedef struct Slot {
    char *key, *type;
    size_t size;
    void *val;
} Slot;

struct OrnStdSlots {
    Slot *s;
    int n, cap;
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (!d) abort();
    memcpy(d, s, n);
    return d;
}

OrnStdSlots *orn_std_slots_new(void)
{
    OrnStdSlots *s = calloc(1, sizeof *s);
    if (!s) abort();
    return s;
}

void orn_std_slots_free(OrnStdSlots *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        free(s->s[i].key);
        free(s->s[i].type);
        free(s->s[i].val);
    }
    free(s->s);
    free(s);
}

static Slot *find(OrnStdSlots *s, const char *key)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->s[i].key, key) == 0) return &s->s[i];
    return NULL;
}

static void set(Slot *x, const char *type, const void *var, size_t size)
{
    if (strcmp(x->type, type) != 0) {
        free(x->type);
        x->type = dup_str(type);
    }
    if (x->size != size) {
        free(x->val);
        x->val = malloc(size ? size : 1);
        if (!x->val) abort();
        x->size = size;
    }
    memcpy(x->val, var, size);
}

void orn_std_slot_out(OrnStdSlots *s, const char *key, const char *type, const void *var,
                      size_t size)
{
    Slot *x = find(s, key);
    if (!x) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 16;
            s->s = realloc(s->s, (size_t)s->cap * sizeof *s->s);
            if (!s->s) abort();
        }
        x = &s->s[s->n++];
        *x = (Slot){.key = dup_str(key), .type = dup_str(""), .size = 0, .val = NULL};
    }
    set(x, type, var, size);
}

void orn_std_slot_in(OrnStdSlots *s, const char *key, const char *type, void *var, size_t size)
{
    Slot *x = find(s, key);
    if (x && x->size == size && strcmp(x->type, type) == 0)
        memcpy(var, x->val, size);
    else
        orn_std_slot_out(s, key, type, var, size);
}

const char *orn_std_slot_at(const OrnStdSlots *s, int i, const char **type)
{
    if (i < 0 || i >= s->n) return NULL;
    if (type) *type = s->s[i].type;
    return s->s[i].key;
}

const void *orn_std_slot_val(const OrnStdSlots *s, int i, size_t *size)
{
    if (i < 0 || i >= s->n) return NULL;
    if (size) *size = s->s[i].size;
    return s->s[i].val;
}

int orn_std_params(OrnStdProg *p, int argc, char **argv, const OrnStdParam *params, int nparams)
{
    int rc = orn_std_parse_params(p, argc, argv, params, nparams);
    return rc < 0 ? orn_std_observe(p) : rc;
}
