/* extent.c: array sizes estimated at compile time (extent.h). */
#include "extent.h"

#include "ast.h"
#include "dep.h"

enum { MAX_DEPTH = 32 };
#define EST_MAX (1LL << 50) /* larger estimates are unknown (no overflow below) */

static int dims_of(const OrnSym *arr, long long *dims, int depth);

static bool est_int(const OrnNode *e, long long *v, int depth);

/* The value of integer argument i (0-based, positional) of call e. */
static bool arg_int(const OrnNode *e, int i, long long *v, int depth)
{
    const OrnNode *a = e->u.call.args;
    for (; a && i > 0; a = a->next) i--;
    return a && a->kind != N_KWARG && est_int(a, v, depth + 1);
}

static const OrnSym *arg_array(const OrnNode *e)
{
    const OrnNode *a = e->u.call.args;
    return a && a->kind == N_NAME && a->u.name.sym && a->u.name.sym->kind == SYM_DIST
               ? a->u.name.sym
               : NULL;
}

static bool est_call(const OrnNode *e, long long *v, int depth)
{
    long long a, b, dims[ORN_DEP_MAXDIM];
    switch (e->u.call.builtin) {
    case ORN_BI_ROWS:
    case ORN_BI_COLS: {
        const OrnSym *s = arg_array(e);
        int n = s ? dims_of(s, dims, depth + 1) : -1;
        int d = e->u.call.builtin == ORN_BI_ROWS ? 0 : 1;
        if (n <= d) return false;
        *v = dims[d];
        return true;
    }
    case ORN_BI_DIM: {
        const OrnSym *s = arg_array(e);
        int n = s ? dims_of(s, dims, depth + 1) : -1;
        if (n < 0 || !arg_int(e, 1, &a, depth) || a < 0 || a >= n) return false;
        *v = dims[a];
        return true;
    }
    case ORN_BI_MIN:
    case ORN_BI_MAX:
        if (!arg_int(e, 0, &a, depth) || !arg_int(e, 1, &b, depth)) return false;
        *v = (e->u.call.builtin == ORN_BI_MIN) == (a < b) ? a : b;
        return true;
    case ORN_BI_DIV:
        if (!arg_int(e, 0, &a, depth) || !arg_int(e, 1, &b, depth) || b <= 0) return false;
        *v = a / b;
        return true;
    default:
        return false;
    }
}

static bool est_int(const OrnNode *e, long long *v, int depth)
{
    if (!e || depth > MAX_DEPTH) return false;
    long long a, b;
    switch (e->kind) {
    case N_INT:
        *v = e->u.ilit.v;
        return true;
    case N_NAME: {
        const OrnSym *s = e->u.name.sym;
        if (!s) return false;
        if (s->kind == SYM_CONST || s->kind == SYM_PARAM) {
            if (s->cval.kind != T_I64 && s->cval.kind != T_I32) return false;
            *v = s->cval.i;
            return true;
        }
        /* a top-level variable: its declaring assignment */
        if (s->kind == SYM_VAR && s->global && s->decl && s->decl->kind == N_ASSIGN &&
            s->decl->u.assign.op == OP_NONE)
            return est_int(s->decl->u.assign.value, v, depth + 1);
        return false;
    }
    case N_BINARY:
        if (!est_int(e->u.binary.l, &a, depth + 1) || !est_int(e->u.binary.r, &b, depth + 1))
            return false;
        if (a < -EST_MAX || a > EST_MAX || b < -EST_MAX || b > EST_MAX) return false;
        switch (e->u.binary.op) {
        case OP_ADD:
            *v = a + b;
            return true;
        case OP_SUB:
            *v = a - b;
            return true;
        case OP_MUL:
            if (a && (b > EST_MAX / (a < 0 ? -a : a) || b < -EST_MAX / (a < 0 ? -a : a)))
                return false;
            *v = a * b;
            return true;
        default:
            return false;
        }
    case N_CALL:
        return est_call(e, v, depth);
    default:
        return false;
    }
}

/* The extents of arr, estimated: its number of dimensions, or -1. */
static int dims_of(const OrnSym *arr, long long *dims, int depth)
{
    if (!arr || depth > MAX_DEPTH || !arr->decl || arr->decl->kind != N_DIST) return -1;
    const OrnNode *init = arr->decl->u.dist.value;
    if (!init || init->kind != N_CALL) return -1;
    int first; /* the first extent argument */
    switch (init->u.call.builtin) {
    case ORN_BI_BUFFER:
        return dims_of(arg_array(init), dims, depth + 1);
    case ORN_BI_ZEROS:
    case ORN_BI_RAND:
    case ORN_BI_RANDN:
        first = 1;
        break;
    case ORN_BI_FILL:
        first = 2;
        break;
    default:
        return -1; /* loaders: sizes from the data */
    }
    int n = 0;
    for (const OrnNode *a = init->u.call.args; a && a->kind != N_KWARG; a = a->next, first--) {
        if (first > 0) continue;
        if (n == ORN_DEP_MAXDIM || !est_int(a, &dims[n], depth + 1) || dims[n] < 0) return -1;
        n++;
    }
    return n ? n : -1;
}

long long orn_extent_elems(const OrnSym *arr)
{
    long long dims[ORN_DEP_MAXDIM], n = 1;
    int nd = dims_of(arr, dims, 0);
    if (nd < 0) return -1;
    for (int i = 0; i < nd; i++) {
        if (dims[i] && n > EST_MAX / dims[i]) return -1;
        n *= dims[i];
    }
    return n;
}
