/* types.c: the per-unit type table.
 *
 * Owns every OrnType of a unit. Scalars are preallocated; composite types are kept in one
 * list and found by linear search (a program has a handful of distinct array types, so a
 * hash table would not pay for itself). Each entry carries its message string, built on
 * first use, so orn_type_str() hands out a pointer that lives as long as the table. */
#include "types.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "strbuf.h"

typedef struct Entry {
    OrnType t; /* first member: an Entry * is an OrnType * */
    char *str; /* orn_type_str(), heap, built lazily */
    struct Entry *next;
} Entry;

struct OrnTypes {
    Entry scalars[T_STR + 1]; /* T_ERROR..T_STR */
    Entry *list;              /* composite types, newest first */
};

OrnTypes *orn_types_new(void)
{
    OrnTypes *t = orn_xcalloc(1, sizeof *t);
    for (int k = T_ERROR; k <= T_STR; k++) t->scalars[k].t.kind = (OrnTypeKind)k;
    return t;
}

void orn_types_free(OrnTypes *t)
{
    if (!t) return;
    for (int k = T_ERROR; k <= T_STR; k++) free(t->scalars[k].str);
    for (Entry *e = t->list, *next; e; e = next) {
        next = e->next;
        free(e->str);
        free(e);
    }
    free(t);
}

const OrnType *orn_type_scalar(OrnTypes *t, OrnTypeKind k)
{
    if ((int)k < T_ERROR || k > T_STR) k = T_ERROR;
    return &t->scalars[k].t;
}

/* Find `want` among the composite types, or add a copy of it. */
static const OrnType *intern(OrnTypes *t, const OrnType *want)
{
    for (Entry *e = t->list; e; e = e->next) {
        const OrnType *h = &e->t;
        if (h->kind == want->kind && h->elem == want->elem && h->ndims == want->ndims &&
            h->dist == want->dist && h->sparse == want->sparse && h->target == want->target &&
            h->nparts == want->nparts && h->parts[0] == want->parts[0] &&
            h->parts[1] == want->parts[1])
            return h;
    }
    Entry *e = orn_xcalloc(1, sizeof *e);
    e->t = *want;
    e->next = t->list;
    t->list = e;
    return &e->t;
}

const OrnType *orn_type_array(OrnTypes *t, OrnTypeKind elem, int ndims, bool dist, bool sparse)
{
    if (ndims < 1) ndims = 1;
    if (ndims > 4) ndims = 4;
    OrnType want = {
        .kind = T_ARRAY, .elem = elem, .ndims = (uint8_t)ndims, .dist = dist, .sparse = sparse};
    return intern(t, &want);
}

const OrnType *orn_type_view(OrnTypes *t, OrnTypeKind elem, bool dist, bool sparse)
{
    OrnType want = {.kind = T_VIEW, .elem = elem, .ndims = 1, .dist = dist, .sparse = sparse};
    return intern(t, &want);
}

const OrnType *orn_type_buffer(OrnTypes *t, const OrnType *target)
{
    OrnType want = {.kind = T_BUFFER, .target = target};
    if (target && target->kind == T_ARRAY) {
        want.elem = target->elem;
        want.ndims = target->ndims;
        want.dist = true;
        want.sparse = target->sparse;
    }
    return intern(t, &want);
}

const OrnType *orn_type_tuple(OrnTypes *t, const OrnType *a, const OrnType *b)
{
    OrnType want = {.kind = T_TUPLE, .parts = {a, b}, .nparts = 2};
    return intern(t, &want);
}

const OrnType *orn_type_typename(OrnTypes *t, OrnTypeKind elem)
{
    OrnType want = {.kind = T_TYPENAME, .elem = elem};
    return intern(t, &want);
}

bool orn_kind_is_numeric(OrnTypeKind k)
{
    return k >= T_I32 && k <= T_F64;
}

bool orn_type_is_numeric(const OrnType *ty)
{
    return ty && orn_kind_is_numeric(ty->kind);
}

bool orn_type_is_integer(const OrnType *ty)
{
    return ty && (ty->kind == T_I32 || ty->kind == T_I64);
}

bool orn_type_is_float(const OrnType *ty)
{
    return ty && (ty->kind == T_F32 || ty->kind == T_F64);
}

bool orn_type_is_str_array(const OrnType *ty)
{
    return ty && ty->kind == T_ARRAY && ty->elem == T_STR;
}

OrnTypeKind orn_kind_promote(OrnTypeKind a, OrnTypeKind b)
{
    if (!orn_kind_is_numeric(a) || !orn_kind_is_numeric(b)) return T_ERROR;
    return a > b ? a : b; /* the kinds are declared in widening order */
}

const char *orn_kind_name(OrnTypeKind k)
{
    switch (k) {
    case T_ERROR:
        return "<error>";
    case T_VOID:
        return "void";
    case T_BOOL:
        return "bool";
    case T_I32:
        return "i32";
    case T_I64:
        return "i64";
    case T_F32:
        return "f32";
    case T_F64:
        return "f64";
    case T_STR:
        return "str";
    case T_ARRAY:
        return "array";
    case T_VIEW:
        return "view";
    case T_BUFFER:
        return "buffer";
    case T_TUPLE:
        return "tuple";
    case T_TYPENAME:
        return "type name";
    }
    return "?";
}

OrnTypeKind orn_kind_from_name(const char *s)
{
    static const struct {
        const char *name;
        OrnTypeKind kind;
    } names[] = {
        {"i32", T_I32},   {"i64", T_I64}, {"f32", T_F32},   {"f64", T_F64},
        {"bool", T_BOOL}, {"int", T_I64}, {"float", T_F64}, {"str", T_STR},
    };
    if (!s) return T_ERROR;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return names[i].kind;
    return T_ERROR;
}

static void put_type(OrnBuf *b, const OrnType *ty)
{
    switch (ty->kind) {
    case T_ARRAY:
        orn_buf_printf(b, "%s %s[%d]%s", ty->dist ? "dist" : "local", orn_kind_name(ty->elem),
                       ty->ndims, ty->sparse ? " sparse" : "");
        break;
    case T_VIEW:
        orn_buf_printf(b, "%sview of %s", ty->sparse ? "sparse " : "", orn_kind_name(ty->elem));
        break;
    case T_BUFFER:
        orn_buf_puts(b, "buffer of ");
        if (ty->target)
            put_type(b, ty->target);
        else
            orn_buf_puts(b, "<error>");
        break;
    case T_TUPLE:
        orn_buf_putc(b, '(');
        for (int i = 0; i < ty->nparts; i++) {
            if (i) orn_buf_puts(b, ", ");
            if (ty->parts[i]) put_type(b, ty->parts[i]);
        }
        orn_buf_putc(b, ')');
        break;
    case T_TYPENAME:
        orn_buf_printf(b, "type %s", orn_kind_name(ty->elem));
        break;
    default:
        orn_buf_puts(b, orn_kind_name(ty->kind));
        break;
    }
}

const char *orn_type_str(OrnTypes *t, const OrnType *ty)
{
    if (!ty) return "<none>";
    if (ty->kind <= T_STR) return orn_kind_name(ty->kind);
    Entry *e = t->list;
    while (e && &e->t != ty) e = e->next;
    if (!e) return orn_kind_name(ty->kind); /* not from this table: be safe */
    if (!e->str) {
        OrnBuf b;
        orn_buf_init(&b);
        put_type(&b, ty);
        e->str = b.data;
    }
    return e->str;
}
