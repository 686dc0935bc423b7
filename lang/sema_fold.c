/* sema_fold.c: const folding: the value of a constant expression, as the generated C
 * would compute it (f32 in float, C's conversions, overflow and division by zero reported).
 *
 * Why a file of its own: folding evaluates expressions that are already typed and does not
 * type them: it runs after orn_sema_expr() has set node->type (const and param declarations
 * in sema.c, constant extents and dims in sema_call.c, later passes through
 * orn_sema_eval_const()). With s == NULL it only answers, reporting nothing. */
#include "sema_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define FOLD_FAIL(s, span, ...)                                                                    \
    do {                                                                                           \
        if (s) ORN_ERR((s), (span), __VA_ARGS__);                                                  \
        return false;                                                                              \
    } while (0)

static double cv_float(const OrnConstVal *v)
{
    switch (v->kind) {
    case T_I32:
    case T_I64:
        return (double)v->i;
    case T_BOOL:
        return v->b;
    default:
        return v->f;
    }
}

/* Convert v to kind `to` in place (C's conversions); false if out of range. */
static bool cv_convert(OrnConstVal *v, OrnTypeKind to)
{
    if (v->kind == to) return true;
    if (to == T_F32 || to == T_F64) {
        double f = cv_float(v);
        v->f = to == T_F32 ? (double)(float)f : f;
    } else if (to == T_I32 || to == T_I64) {
        int64_t i;
        if (v->kind == T_F32 || v->kind == T_F64) {
            double f = trunc(v->f);
            if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0)) return false;
            i = (int64_t)f;
        } else if (v->kind == T_BOOL) {
            i = v->b;
        } else {
            i = v->i;
        }
        if (to == T_I32 && (i < INT32_MIN || i > INT32_MAX)) return false;
        v->i = i;
    } else if (to == T_BOOL) {
        return false;
    }
    v->kind = to;
    return true;
}

static bool int_result(Sema *s, OrnSpan span, OrnTypeKind k, int64_t r, bool overflow,
                       OrnConstVal *v)
{
    if (overflow || (k == T_I32 && (r < INT32_MIN || r > INT32_MAX)))
        FOLD_FAIL(s, span, "integer overflow in constant expression");
    v->kind = k;
    v->i = r;
    return true;
}

static bool fold_arith(Sema *s, const OrnNode *e, OrnOp op, OrnConstVal *l, OrnConstVal *r,
                       OrnConstVal *v)
{
    OrnTypeKind k = e->type->kind;
    if (!cv_convert(l, k) || !cv_convert(r, k))
        FOLD_FAIL(s, e->span, "value out of range in constant expression");
    if (k == T_F32 || k == T_F64) {
        double x = l->f, y = r->f, z;
        switch (op) {
        case OP_ADD:
            z = x + y;
            break;
        case OP_SUB:
            z = x - y;
            break;
        case OP_MUL:
            z = x * y;
            break;
        default:
            if (y == 0) FOLD_FAIL(s, e->span, "division by zero in constant expression");
            z = x / y;
            break;
        }
        v->kind = k;
        v->f = k == T_F32 ? (double)(float)z : z;
        return true;
    }
    int64_t z = 0;
    bool ovf;
    switch (op) {
    case OP_ADD:
        ovf = __builtin_add_overflow(l->i, r->i, &z);
        break;
    case OP_SUB:
        ovf = __builtin_sub_overflow(l->i, r->i, &z);
        break;
    case OP_MUL:
        ovf = __builtin_mul_overflow(l->i, r->i, &z);
        break;
    default:
        return false; /* integer '/' is a type error, reported already */
    }
    return int_result(s, e->span, k, z, ovf, v);
}

static bool fold_compare(const OrnNode *e, OrnOp op, OrnConstVal *l, OrnConstVal *r, OrnConstVal *v)
{
    int c;
    if (l->kind == T_BOOL && r->kind == T_BOOL) {
        c = (int)l->b - (int)r->b;
    } else {
        OrnTypeKind k = orn_kind_promote(l->kind, r->kind);
        if (k == T_ERROR || !cv_convert(l, k) || !cv_convert(r, k)) return false;
        if (k == T_I32 || k == T_I64)
            c = (l->i > r->i) - (l->i < r->i);
        else if (l->f != l->f || r->f != r->f)
            c = 2; /* NaN: unordered */
        else
            c = (l->f > r->f) - (l->f < r->f);
    }
    bool b;
    switch (op) {
    case OP_EQ:
        b = c == 0;
        break;
    case OP_NE:
        b = c != 0;
        break;
    case OP_LT:
        b = c == -1;
        break;
    case OP_LE:
        b = c == -1 || c == 0;
        break;
    case OP_GT:
        b = c == 1;
        break;
    default:
        b = c == 1 || c == 0;
        break;
    }
    (void)e;
    memset(v, 0, sizeof *v);
    v->kind = T_BOOL;
    v->b = b;
    return true;
}

static bool fold_call(Sema *s, const OrnNode *e, OrnConstVal *v)
{
    int bi = e->u.call.builtin;
    const char *name = e->u.call.id ? e->u.call.id->s : "?";
    if (bi < 0 || !(orn_builtins[bi].flags & BI_CONST))
        FOLD_FAIL(s, e->span, "'%s' cannot be used in a constant expression", name);
    OrnConstVal a[2];
    int n = 0;
    for (const OrnNode *x = e->u.call.args; x && n < 2; x = x->next)
        if (!orn_sema_fold(s, x, &a[n++])) return false;
    OrnTypeKind k = e->type->kind;
    memset(v, 0, sizeof *v);
    switch (bi) {
    case ORN_BI_I32:
    case ORN_BI_I64:
    case ORN_BI_F32:
    case ORN_BI_F64:
        *v = a[0];
        if (v->kind == T_STR)
            FOLD_FAIL(s, e->span,
                      "converting a str to a number cannot be used in a constant "
                      "expression");
        if (!cv_convert(v, k))
            FOLD_FAIL(s, e->span, "value out of range for %s in constant expression",
                      orn_kind_name(k));
        return true;
    case ORN_BI_ABS:
        *v = a[0];
        if (k == T_I32 || k == T_I64)
            return int_result(s, e->span, k, v->i < 0 ? -v->i : v->i, v->i == INT64_MIN, v);
        v->f = fabs(v->f);
        return true;
    case ORN_BI_MIN:
    case ORN_BI_MAX: {
        if (!cv_convert(&a[0], k) || !cv_convert(&a[1], k)) return false;
        bool first;
        if (k == T_I32 || k == T_I64)
            first = bi == ORN_BI_MIN ? a[0].i <= a[1].i : a[0].i >= a[1].i;
        else
            first = bi == ORN_BI_MIN ? a[0].f <= a[1].f : a[0].f >= a[1].f;
        *v = first ? a[0] : a[1];
        return true;
    }
    case ORN_BI_DIV:
    case ORN_BI_MOD: {
        if (!cv_convert(&a[0], k) || !cv_convert(&a[1], k)) return false;
        int64_t x = a[0].i, y = a[1].i;
        if (y == 0) FOLD_FAIL(s, e->span, "division by zero in constant expression");
        if (y == -1) /* INT64_MIN / -1 overflows; any x % -1 is 0 */
            return bi == ORN_BI_DIV ? int_result(s, e->span, k, -x, x == INT64_MIN, v)
                                    : int_result(s, e->span, k, 0, false, v);
        return int_result(s, e->span, k, bi == ORN_BI_DIV ? x / y : x % y, false, v);
    }
    default: {
        double x = cv_float(&a[0]), r;
        switch (bi) {
        case ORN_BI_SQRT:
            r = sqrt(x);
            break;
        case ORN_BI_EXP:
            r = exp(x);
            break;
        case ORN_BI_LOG:
            r = log(x);
            break;
        case ORN_BI_SIN:
            r = sin(x);
            break;
        case ORN_BI_COS:
            r = cos(x);
            break;
        case ORN_BI_TANH:
            r = tanh(x);
            break;
        case ORN_BI_FLOOR:
            r = floor(x);
            break;
        case ORN_BI_CEIL:
            r = ceil(x);
            break;
        case ORN_BI_SIGMOID:
            r = 1.0 / (1.0 + exp(-x));
            break;
        case ORN_BI_POW:
            r = pow(x, cv_float(&a[1]));
            break;
        default:
            FOLD_FAIL(s, e->span, "'%s' cannot be used in a constant expression", name);
        }
        if (k == T_F32) {
            /* the f32 overloads compute in float, as the generated C does */
            float fx = (float)x, fr;
            switch (bi) {
            case ORN_BI_SQRT:
                fr = sqrtf(fx);
                break;
            case ORN_BI_EXP:
                fr = expf(fx);
                break;
            case ORN_BI_LOG:
                fr = logf(fx);
                break;
            case ORN_BI_SIN:
                fr = sinf(fx);
                break;
            case ORN_BI_COS:
                fr = cosf(fx);
                break;
            case ORN_BI_TANH:
                fr = tanhf(fx);
                break;
            case ORN_BI_FLOOR:
                fr = floorf(fx);
                break;
            case ORN_BI_CEIL:
                fr = ceilf(fx);
                break;
            case ORN_BI_POW:
                fr = powf(fx, (float)cv_float(&a[1]));
                break;
            default:
                fr = 1.0f / (1.0f + expf(-fx));
                break;
            }
            r = fr;
        }
        v->kind = k;
        v->f = r;
        return true;
    }
    }
}

bool orn_sema_fold(Sema *s, const OrnNode *e, OrnConstVal *v)
{
    memset(v, 0, sizeof *v);
    if (!e || !e->type || e->type->kind == T_ERROR) return false;
    switch (e->kind) {
    case N_INT:
        v->kind = T_I64;
        v->i = e->u.ilit.v;
        return true;
    case N_FLOAT:
        v->kind = T_F64;
        v->f = e->u.flit.v;
        return true;
    case N_BOOL:
        v->kind = T_BOOL;
        v->b = e->u.blit.v;
        return true;
    case N_STR:
        v->kind = T_STR;
        v->s = e->u.slit.s;
        v->slen = e->u.slit.len;
        return true;
    case N_NAME: {
        const OrnSym *sym = e->u.name.sym;
        if (sym && sym->kind == SYM_CONST && sym->cval.kind != T_ERROR) {
            *v = sym->cval;
            return true;
        }
        if (s && sym) {
            ORN_ERR(s, e->span, "'%s' is not a constant", sym->name->s);
            orn_sema_note_decl(s, sym);
            if (sym->kind == SYM_PARAM) ORN_NOTE(s, "param values are set at run time");
        }
        return false;
    }
    case N_UNARY: {
        if (!orn_sema_fold(s, e->u.unary.e, v)) return false;
        if (e->u.unary.op == OP_NOT) {
            v->b = !v->b;
            return v->kind == T_BOOL;
        }
        if (v->kind == T_I32 || v->kind == T_I64)
            return int_result(s, e->span, v->kind, v->i == INT64_MIN ? 0 : -v->i, v->i == INT64_MIN,
                              v);
        v->f = -v->f;
        return v->kind == T_F32 || v->kind == T_F64;
    }
    case N_BINARY: {
        OrnConstVal l, r;
        OrnOp op = e->u.binary.op;
        if (!orn_sema_fold(s, e->u.binary.l, &l)) return false;
        if (op == OP_AND || op == OP_OR) {
            /* both sides must be constant, even when the left decides */
            if (!orn_sema_fold(s, e->u.binary.r, &r)) return false;
            v->kind = T_BOOL;
            v->b = op == OP_AND ? (l.b && r.b) : (l.b || r.b);
            return true;
        }
        if (!orn_sema_fold(s, e->u.binary.r, &r)) return false;
        if (l.kind == T_STR || r.kind == T_STR)
            FOLD_FAIL(s, e->span, "'%s' on str cannot be used in a constant expression",
                      orn_op_name(op));
        switch (op) {
        case OP_EQ:
        case OP_NE:
        case OP_LT:
        case OP_LE:
        case OP_GT:
        case OP_GE:
            return fold_compare(e, op, &l, &r, v);
        default:
            return fold_arith(s, e, op, &l, &r, v);
        }
    }
    case N_CALL:
        return fold_call(s, e, v);
    case N_INDEX:
        FOLD_FAIL(s, e->span, "array elements cannot be used in a constant expression");
    default:
        FOLD_FAIL(s, e->span, "this expression is not a constant");
    }
}
