/* test_types.c: interning of types, promotions, names and message strings. */
#include <string.h>

#include "check.h"
#include "types.h"

static void test_interning(void)
{
    OrnTypes *t = orn_types_new();
    CHECK(orn_type_scalar(t, T_I64) == orn_type_scalar(t, T_I64));
    CHECK(orn_type_scalar(t, T_I64) != orn_type_scalar(t, T_I32));
    CHECK(orn_type_scalar(t, T_F64)->kind == T_F64);
    const OrnType *a = orn_type_array(t, T_F32, 2, true, true);
    CHECK(a == orn_type_array(t, T_F32, 2, true, true));
    CHECK(a != orn_type_array(t, T_F32, 2, true, false));
    CHECK(a != orn_type_array(t, T_F32, 2, false, true));
    CHECK(a != orn_type_array(t, T_F32, 1, true, true));
    CHECK(a != orn_type_array(t, T_F64, 2, true, true));
    CHECK(a->kind == T_ARRAY && a->elem == T_F32 && a->ndims == 2 && a->dist && a->sparse);
    const OrnType *v = orn_type_view(t, T_F32, true, false);
    CHECK(v == orn_type_view(t, T_F32, true, false));
    CHECK(v->kind == T_VIEW && v->elem == T_F32 && v != orn_type_view(t, T_F32, false, false));
    const OrnType *b = orn_type_buffer(t, a);
    CHECK(b == orn_type_buffer(t, a) && b->kind == T_BUFFER && b->target == a);
    CHECK(b != orn_type_buffer(t, orn_type_array(t, T_F32, 1, true, false)));
    const OrnType *y = orn_type_array(t, T_F32, 1, true, false);
    const OrnType *tu = orn_type_tuple(t, a, y);
    CHECK(tu == orn_type_tuple(t, a, y) && tu->nparts == 2 && tu->parts[0] == a &&
          tu->parts[1] == y);
    CHECK(tu != orn_type_tuple(t, y, a));
    const OrnType *tn = orn_type_typename(t, T_I32);
    CHECK(tn == orn_type_typename(t, T_I32) && tn->kind == T_TYPENAME && tn->elem == T_I32);
    /* ndims is clamped to the language's 1..4 */
    CHECK(orn_type_array(t, T_I32, 9, false, false)->ndims == 4);
    orn_types_free(t);
    orn_types_free(NULL);
}

static void test_predicates(void)
{
    OrnTypes *t = orn_types_new();
    for (int k = T_ERROR; k <= T_STR; k++) {
        const OrnType *ty = orn_type_scalar(t, (OrnTypeKind)k);
        bool num = k == T_I32 || k == T_I64 || k == T_F32 || k == T_F64;
        CHECK(orn_type_is_numeric(ty) == num);
        CHECK(orn_kind_is_numeric((OrnTypeKind)k) == num);
        CHECK(orn_type_is_integer(ty) == (k == T_I32 || k == T_I64));
        CHECK(orn_type_is_float(ty) == (k == T_F32 || k == T_F64));
    }
    CHECK(!orn_type_is_numeric(orn_type_view(t, T_F64, false, false)));
    CHECK(!orn_type_is_numeric(NULL));
    orn_types_free(t);
}

static void test_promote(void)
{
    /* C's usual conversions over i32 < i64 < f32 < f64 */
    CHECK(orn_kind_promote(T_I32, T_I32) == T_I32);
    CHECK(orn_kind_promote(T_I32, T_I64) == T_I64);
    CHECK(orn_kind_promote(T_I64, T_I32) == T_I64);
    CHECK(orn_kind_promote(T_I64, T_F32) == T_F32);
    CHECK(orn_kind_promote(T_F32, T_I64) == T_F32);
    CHECK(orn_kind_promote(T_F32, T_F64) == T_F64);
    CHECK(orn_kind_promote(T_I32, T_F64) == T_F64);
    CHECK(orn_kind_promote(T_BOOL, T_I64) == T_ERROR);
    CHECK(orn_kind_promote(T_STR, T_STR) == T_ERROR);
    CHECK(orn_kind_promote(T_ERROR, T_I64) == T_ERROR);
}

static void test_names(void)
{
    CHECK(orn_kind_from_name("int") == T_I64);
    CHECK(orn_kind_from_name("float") == T_F64);
    CHECK(orn_kind_from_name("i32") == T_I32);
    CHECK(orn_kind_from_name("f32") == T_F32);
    CHECK(orn_kind_from_name("bool") == T_BOOL);
    CHECK(orn_kind_from_name("str") == T_STR);
    CHECK(orn_kind_from_name("double") == T_ERROR);
    CHECK(orn_kind_from_name("") == T_ERROR);
    CHECK(orn_kind_from_name(NULL) == T_ERROR);
    CHECK(strcmp(orn_kind_name(T_F32), "f32") == 0);
    CHECK(strcmp(orn_kind_name(T_BOOL), "bool") == 0);
}

static void test_strings(void)
{
    OrnTypes *t = orn_types_new();
    CHECK(strcmp(orn_type_str(t, orn_type_scalar(t, T_I64)), "i64") == 0);
    const OrnType *a = orn_type_array(t, T_F32, 2, true, true);
    CHECK(strcmp(orn_type_str(t, a), "dist f32[2] sparse") == 0);
    CHECK(orn_type_str(t, a) == orn_type_str(t, a)); /* built once, owned by the table */
    CHECK(strcmp(orn_type_str(t, orn_type_array(t, T_I64, 1, false, false)), "local i64[1]") == 0);
    CHECK(strcmp(orn_type_str(t, orn_type_view(t, T_F64, true, false)), "view of f64") == 0);
    CHECK(strcmp(orn_type_str(t, orn_type_view(t, T_F32, true, true)), "sparse view of f32") == 0);
    CHECK(strcmp(orn_type_str(t, orn_type_buffer(t, orn_type_array(t, T_I64, 1, true, false))),
                 "buffer of dist i64[1]") == 0);
    const OrnType *tu = orn_type_tuple(t, a, orn_type_array(t, T_F32, 1, true, false));
    CHECK(strcmp(orn_type_str(t, tu), "(dist f32[2] sparse, dist f32[1])") == 0);
    CHECK(strcmp(orn_type_str(t, orn_type_typename(t, T_F32)), "type f32") == 0);
    CHECK(strcmp(orn_type_str(t, NULL), "<none>") == 0);
    orn_types_free(t);
}

int main(void)
{
    test_interning();
    test_predicates();
    test_promote();
    test_names();
    test_strings();
    return check_report("test_types");
}
