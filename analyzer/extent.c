/* extent.c: array sizes estimated at compile time (extent.h). */
#include "extent.h"

#include "ast.h"
#include "dep.h"

enum { MAX_DEPTH = 32 };
#define EST_MAX (1LL << 50) /* larger estimates are unknown (no overflow below) */

/* One extent: its estimate, or dimension `dim` of array `arr`, whose size comes from data
 * (a loader's array), or neither (unknown). */
typedef struct Ext {
    long long v;
    const OrnSym *arr;
    int dim;
} Ext;

static int exts_of(const OrnSym *arr, Ext *ext, int depth);

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
    long long a, b;
    Ext ext[ORN_DEP_MAXDIM];
    switch (e->u.call.builtin) {
    case ORN_BI_ROWS:
    case ORN_BI_COLS: {
        const OrnSym *s = arg_array(e);
        int n = s ? exts_of(s, ext, depth + 1) : -1;
        int d = e->u.call.builtin == ORN_BI_ROWS ? 0 : 1;
        if (n <= d || ext[d].v < 0) return false;
        *v = ext[d].v;
        return true;
    }
    case ORN_BI_DIM: {
        const OrnSym *s = arg_array(e);
        int n = s ? exts_of(s, ext, depth + 1) : -1;
        if (n < 0 || !arg_int(e, 1, &a, depth) || a < 0 || a >= n || ext[a].v < 0) return false;
        *v = ext[a].v;
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

/* The extent an expression gives: its estimate, else rows/cols/dim of an array (followed
 * through top-level variables), else unknown. */
static Ext ext_of(const OrnNode *e, int depth)
{
    Ext x = {-1, NULL, 0};
    if (!e || depth > MAX_DEPTH) return x;
    if (est_int(e, &x.v, depth + 1)) return x;
    x.v = -1;
    if (e->kind == N_NAME && e->u.name.sym && e->u.name.sym->kind == SYM_VAR &&
        e->u.name.sym->global && e->u.name.sym->decl && e->u.name.sym->decl->kind == N_ASSIGN &&
        e->u.name.sym->decl->u.assign.op == OP_NONE)
        return ext_of(e->u.name.sym->decl->u.assign.value, depth + 1);
    if (e->kind != N_CALL) return x;
    int d = -1;
    long long dv;
    if (e->u.call.builtin == ORN_BI_ROWS)
        d = 0;
    else if (e->u.call.builtin == ORN_BI_COLS)
        d = 1;
    else if (e->u.call.builtin == ORN_BI_DIM && arg_int(e, 1, &dv, depth) && dv >= 0 &&
             dv < ORN_DEP_MAXDIM)
        d = (int)dv;
    const OrnSym *a = arg_array(e);
    Ext ax[ORN_DEP_MAXDIM];
    if (d < 0 || !a || exts_of(a, ax, depth + 1) <= d) return x;
    return ax[d];
}

/* The constructor of dist array *arr (a buffer's: its target's, *arr set to it), with in
 * *first the position of its first extent argument, or -1 for a loader (sizes from the
 * data). NULL: not a dist array with a declaration. */
static const OrnNode *ctor_of(const OrnSym **arr, int *first)
{
    for (int depth = 0; *arr && depth < MAX_DEPTH; depth++) {
        if (!(*arr)->decl || (*arr)->decl->kind != N_DIST) return NULL;
        const OrnNode *init = (*arr)->decl->u.dist.value;
        if (!init || init->kind != N_CALL) return NULL;
        switch (init->u.call.builtin) {
        case ORN_BI_BUFFER:
            *arr = arg_array(init);
            continue;
        case ORN_BI_ZEROS:
        case ORN_BI_RAND:
        case ORN_BI_RANDN:
            *first = 1;
            return init;
        case ORN_BI_FILL:
            *first = 2;
            return init;
        default:
            *first = -1;
            return init;
        }
    }
    return NULL;
}

/* The extents of arr: its number of dimensions, or -1 (not a dist array with a
 * declaration). A loader's array has symbolic extents (itself, m). */
static int exts_of(const OrnSym *arr, Ext *ext, int depth)
{
    int first;
    const OrnNode *init = depth > MAX_DEPTH ? NULL : ctor_of(&arr, &first);
    if (!init) return -1;
    if (first < 0) { /* loaders: sizes from the data */
        const OrnType *t = arr->type;
        int nd = t && t->kind == T_ARRAY ? t->ndims : 0;
        if (nd <= 0 || nd > ORN_DEP_MAXDIM) return -1;
        for (int m = 0; m < nd; m++) ext[m] = (Ext){-1, arr, m};
        return nd;
    }
    int n = 0;
    for (const OrnNode *a = init->u.call.args; a && a->kind != N_KWARG; a = a->next, first--) {
        if (first > 0) continue;
        if (n == ORN_DEP_MAXDIM) return -1;
        ext[n++] = ext_of(a, depth + 1);
    }
    return n ? n : -1;
}

const OrnNode *orn_extent_arg(const OrnSym *arr, int d)
{
    int first, i = 0;
    const OrnNode *init = ctor_of(&arr, &first);
    if (!init || first < 0 || d < 0) return NULL;
    for (const OrnNode *a = init->u.call.args; a && a->kind != N_KWARG; a = a->next, i++)
        if (i == first + d) return a;
    return NULL;
}

long long orn_extent_elems(const OrnSym *arr)
{
    Ext ext[ORN_DEP_MAXDIM];
    long long n = 1;
    int nd = exts_of(arr, ext, 0);
    if (nd < 0) return -1;
    for (int i = 0; i < nd; i++) {
        if (ext[i].v < 0 || (ext[i].v && n > EST_MAX / ext[i].v)) return -1;
        n *= ext[i].v;
    }
    return n;
}

static bool same_ext(const Ext *a, const Ext *b)
{
    if (a->arr || b->arr) return a->arr == b->arr && a->dim == b->dim;
    return a->v >= 0 && a->v == b->v;
}

bool orn_extent_within(const OrnSym *a, const OrnSym *space)
{
    Ext ea[ORN_DEP_MAXDIM], es[ORN_DEP_MAXDIM];
    int na = exts_of(a, ea, 0), ns = exts_of(space, es, 0);
    if (na <= 0 || ns <= na) return false;
    bool used[ORN_DEP_MAXDIM] = {false};
    for (int i = 0; i < na; i++) {
        int j = 0;
        while (j < ns && (used[j] || !same_ext(&ea[i], &es[j]))) j++;
        if (j == ns) return false;
        used[j] = true;
    }
    return true;
}

bool orn_extent_overhangs(const OrnSym *a, int m, const OrnSym *space, int p)
{
    Ext ea[ORN_DEP_MAXDIM], es[ORN_DEP_MAXDIM];
    int na = exts_of(a, ea, 0), ns = exts_of(space, es, 0);
    if (m < 0 || m >= na || p < 0 || p >= ns) return false;
    long long sv = es[p].v;
    if (sv < 0 || sv > ORN_EXTENT_SMALL) return false;
    if (ea[m].arr) return true; /* from data, against a few elements */
    return ea[m].v >= 0 && ea[m].v / 2 > sv;
}

bool orn_extent_from_data(const OrnSym *a)
{
    Ext e[ORN_DEP_MAXDIM];
    return exts_of(a, e, 0) > 0 && e[0].arr == a;
}
