/* types.h: semantic types.
 *
 * Types are immutable and interned per unit (orn_type_* return the same pointer for the
 * same type), so they compare by pointer. T_ERROR is the type of an erroneous expression:
 * every check accepts it silently so one mistake gives one diagnostic. */
#ifndef ORN_TYPES_H
#define ORN_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "ast.h"

typedef enum {
    T_ERROR,
    T_VOID, /* result of a statement-like call */
    T_BOOL,
    T_I32,
    T_I64,
    T_F32,
    T_F64, /* numeric, in widening order */
    T_STR,
    T_ARRAY,    /* local or dist array: elem, ndims, dist, sparse; elem T_STR only for load_text */
    T_VIEW,     /* 1-D view, or an element-wise expression over views: elem, sparse, dist */
    T_BUFFER,   /* write buffer: target */
    T_TUPLE,    /* result of load_libsvm: parts[0..nparts) */
    T_TYPENAME, /* an element type used as an argument (zeros(f32, ...)): elem */
} OrnTypeKind;

struct OrnType {
    OrnTypeKind kind;
    OrnTypeKind elem;        /* T_ARRAY, T_VIEW, T_TYPENAME: element scalar kind */
    uint8_t ndims;           /* T_ARRAY: 1..4 */
    bool dist;               /* T_ARRAY, T_VIEW: partitioned across ranks */
    bool sparse;             /* T_ARRAY, T_VIEW */
    const OrnType *target;   /* T_BUFFER: the buffered array's type */
    const OrnType *parts[2]; /* T_TUPLE */
    uint8_t nparts;
};

typedef struct OrnTypes OrnTypes; /* per-unit intern table */

OrnTypes *orn_types_new(void);
void orn_types_free(OrnTypes *t);
const OrnType *orn_type_scalar(OrnTypes *t, OrnTypeKind k); /* T_ERROR..T_STR */
const OrnType *orn_type_array(OrnTypes *t, OrnTypeKind elem, int ndims, bool dist, bool sparse);
const OrnType *orn_type_view(OrnTypes *t, OrnTypeKind elem, bool dist, bool sparse);
const OrnType *orn_type_buffer(OrnTypes *t, const OrnType *target);
const OrnType *orn_type_tuple(OrnTypes *t, const OrnType *a, const OrnType *b);
const OrnType *orn_type_typename(OrnTypes *t, OrnTypeKind elem);

bool orn_type_is_numeric(const OrnType *ty); /* i32 i64 f32 f64 */
bool orn_type_is_integer(const OrnType *ty);
bool orn_type_is_float(const OrnType *ty);
/* The lines of a text file (load_text): a local 1-D array of str, read-only. */
bool orn_type_is_str_array(const OrnType *ty);
bool orn_kind_is_numeric(OrnTypeKind k);
/* C's usual arithmetic conversion of two numeric kinds: the wider of the two. */
OrnTypeKind orn_kind_promote(OrnTypeKind a, OrnTypeKind b);
/* "i32", "f64", "dist f32[2] sparse", "view of f32", ... for messages. Returns a string
 * owned by `t` (valid until orn_types_free). */
const char *orn_type_str(OrnTypes *t, const OrnType *ty);
const char *orn_kind_name(OrnTypeKind k); /* scalar kinds: "i32", ... */
/* Type name as written in source ("int", "f32", ...) to a kind; T_ERROR if not one. */
OrnTypeKind orn_kind_from_name(const char *s);

#endif
