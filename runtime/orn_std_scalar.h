/* orn_std_scalar.h: the scalar built-ins that generated code calls as functions (min, max,
 * abs of integers, div and mod), shared by the host C (stdlib/orn_std.h), the kernels of @gpu
 * loops (orn_gpu_dev.cuh defines ORN_STD_SCALAR_FN as __host__ __device__) and the GPU path's
 * host side, which applies accumulator updates as the body makes them (gpu_data.c): one
 * definition, the same results on all. In runtime/ because the runtime uses it too (stdlib
 * sits on top of the runtime). */
#ifndef ORN_STD_SCALAR_H
#define ORN_STD_SCALAR_H

#include <stdint.h>

#ifndef ORN_STD_SCALAR_FN
#define ORN_STD_SCALAR_FN static inline
#endif

#define ORN_STD_MINMAX(T, name)                                                                    \
    ORN_STD_SCALAR_FN T orn_std_min_##name(T a, T b)                                               \
    {                                                                                              \
        return a <= b ? a : b;                                                                     \
    }                                                                                              \
    ORN_STD_SCALAR_FN T orn_std_max_##name(T a, T b)                                               \
    {                                                                                              \
        return a >= b ? a : b;                                                                     \
    }
ORN_STD_MINMAX(int32_t, i32)
ORN_STD_MINMAX(int64_t, i64)
ORN_STD_MINMAX(float, f32)
ORN_STD_MINMAX(double, f64)
#undef ORN_STD_MINMAX
/* abs of integers wraps like the rest of integer arithmetic (abs(INT64_MIN) == INT64_MIN) */
ORN_STD_SCALAR_FN int32_t orn_std_abs_i32(int32_t x)
{
    return x < 0 ? (int32_t)(0 - (uint32_t)x) : x;
}
ORN_STD_SCALAR_FN int64_t orn_std_abs_i64(int64_t x)
{
    return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
/* div and mod that never fail (the prefetch pass may evaluate what the body would not; the
 * device flags a zero divisor itself) */
ORN_STD_SCALAR_FN int64_t orn_std_div_soft(int64_t a, int64_t b)
{
    return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
ORN_STD_SCALAR_FN int64_t orn_std_mod_soft(int64_t a, int64_t b)
{
    return b == 0 || b == -1 ? 0 : a % b;
}
/* The identity, as a call the C front end does not look into: generated code passes the
 * other operand of a float + or - with a constant zero through it, because GCC 12 folds
 * 0.0 - X to -X when X cannot be -0.0 (X an integer converted, or fabs), giving -0.0 at
 * X = 0 where IEEE gives +0.0 (codegen/c_expr.c keep_side). Inlined, it costs nothing. */
ORN_STD_SCALAR_FN double orn_std_keep_f64(double x)
{
    return x;
}
ORN_STD_SCALAR_FN float orn_std_keep_f32(float x)
{
    return x;
}

#endif
