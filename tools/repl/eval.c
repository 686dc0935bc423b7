/* eval.c: the REPL's evaluator (eval.h). */
#define _GNU_SOURCE /* RTLD_DEFAULT */

#include "eval.h"

#include <dlfcn.h>
#include <ffi.h>
#include <setjmp.h>

/* A value with the C type the generated code gives it: T_BOOL (an int 0/1 in arithmetic),
 * T_I32, T_I64, T_F32, T_F64, T_STR; T_VOID for a call without a result. */
typedef struct Val {
    OrnTypeKind k;
    int64_t i;
    double f;
    float f32;
    const char *s;
} Val;

typedef struct Ev {
    OrnStdProg *p;
    OrnStdSlots *slots;
    OrnUnit *u;
    const char *(*keep)(void *ud, const char *s);
    void *ud;
    int line;
    int jump; /* 1 break, 2 continue */
    /* extern "lib" fns looked up in this piece (each once, agreed by the ranks) */
    const OrnNode *ext_fn[16];
    void *ext_ptr[16];
    int next;
} Ev;

enum { MAXARGS = 32 };

/* ---------------------------------------------------------------- what can be evaluated */

static bool scalar(OrnTypeKind k)
{
    return k >= T_BOOL && k <= T_STR;
}

static bool kind_ok(const OrnNode *e)
{
    return e->type && scalar(e->type->kind);
}

static bool global_var(const OrnSym *s)
{
    return s && (s->kind == SYM_VAR || s->kind == SYM_LOOPVAR || s->kind == SYM_PARAM) && !s->fn &&
           !s->parfor && s->type && scalar(s->type->kind);
}

static bool ok_expr(const OrnNode *e);

static bool ok_args(const OrnNode *args, int *n)
{
    *n = 0;
    for (const OrnNode *a = args; a; a = a->next) {
        if (a->kind == N_KWARG || !ok_expr(a) || ++*n > MAXARGS) return false;
    }
    return true;
}

static bool ok_call(const OrnNode *e)
{
    int n;
    if (!ok_args(e->u.call.args, &n)) return false;
    const OrnSym *fs = e->u.call.sym;
    if (fs) {
        if (fs->kind != SYM_EXTERN || !fs->decl) return false;
        for (const OrnNode *a = fs->decl->u.fn.args; a; a = a->next)
            if (!a->u.arg.sym || !a->u.arg.sym->type || !scalar(a->u.arg.sym->type->kind))
                return false;
        return fs->type && (fs->type->kind == T_VOID || scalar(fs->type->kind));
    }
    int bi = e->u.call.builtin;
    if (bi >= 0 && bi < ORN_BI__COUNT && (orn_builtins[bi].flags & BI_CONST))
        return true; /* scalar math and conversions */
    switch (bi) {
    case ORN_BI_RAND:
    case ORN_BI_RANDN:
        return n == 0;
    case ORN_BI_RANDINT:
    case ORN_BI_WALL_TIME:
    case ORN_BI_PRINT:
    case ORN_BI_EPRINT:
    case ORN_BI_EXIT:
    case ORN_BI_SEED:
    case ORN_BI_LOG_METRIC:
        return true;
    default:
        return false;
    }
}

static bool integral(const OrnNode *e)
{
    return e->type && (e->type->kind == T_BOOL || orn_type_is_integer(e->type));
}

static bool ok_expr(const OrnNode *e)
{
    if (!e) return false;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
    case N_BOOL:
    case N_STR:
        return true;
    case N_NAME: {
        const OrnSym *s = e->u.name.sym;
        return s && (s->kind == SYM_CONST ? kind_ok(e) : global_var(s));
    }
    case N_UNARY:
        return kind_ok(e) && ok_expr(e->u.unary.e);
    case N_BINARY:
        if (!kind_ok(e) || e->type->kind == T_STR) return false;
        if (e->u.binary.op == OP_DIV && integral(e->u.binary.l) && integral(e->u.binary.r))
            return false; /* C's integer division: left to the compiled code */
        return ok_expr(e->u.binary.l) && ok_expr(e->u.binary.r) && kind_ok(e->u.binary.l) &&
               kind_ok(e->u.binary.r) && e->u.binary.l->type->kind != T_STR &&
               e->u.binary.r->type->kind != T_STR;
    case N_CALL:
        return ok_call(e);
    default:
        return false;
    }
}

static bool ok_stmt(const OrnNode *s);

static bool ok_list(const OrnNode *s)
{
    for (; s; s = s->next)
        if (!ok_stmt(s)) return false;
    return true;
}

static bool ok_stmt(const OrnNode *s)
{
    switch (s->kind) {
    case N_EXPR:
        return ok_expr(s->u.expr_stmt.e);
    case N_ASSIGN: {
        const OrnNode *t = s->u.assign.target;
        return t->kind == N_NAME && global_var(t->u.name.sym) && t->u.name.sym->kind == SYM_VAR &&
               ok_expr(s->u.assign.value) &&
               !(s->u.assign.op != OP_NONE && t->u.name.sym->type->kind == T_STR); /* s += t */
    }
    case N_CONST:
        return true;
    case N_PARAM:
        return s->u.decl.sym && global_var(s->u.decl.sym);
    case N_IF:
        return ok_expr(s->u.if_.cond) && ok_stmt(s->u.if_.then) &&
               (!s->u.if_.els || ok_stmt(s->u.if_.els));
    case N_WHILE:
        return ok_expr(s->u.while_.cond) && ok_stmt(s->u.while_.body);
    case N_FOR:
        return global_var(s->u.for_.var->u.name.sym) && ok_expr(s->u.for_.lo) &&
               ok_expr(s->u.for_.hi) && ok_stmt(s->u.for_.body);
    case N_BREAK:
    case N_CONTINUE:
        return true;
    case N_BLOCK:
        return ok_list(s->u.block.stmts);
    default:
        return false;
    }
}

static const OrnNode *first_new(const OrnUnit *u, uint32_t from)
{
    const OrnNode *s = u->program ? u->program->u.block.stmts : NULL;
    while (s && s->span.lo < from) s = s->next;
    return s;
}

bool orn_eval_supported(const OrnUnit *u, uint32_t from)
{
    return ok_list(first_new(u, from));
}

/* ---------------------------------------------------------------- values */

static Val v_i(OrnTypeKind k, int64_t i)
{
    return (Val){.k = k, .i = i};
}
static Val v_f64(double f)
{
    return (Val){.k = T_F64, .f = f};
}
static Val v_f32(float f)
{
    return (Val){.k = T_F32, .f32 = f};
}

static bool is_int(const Val *v)
{
    return v->k == T_BOOL || v->k == T_I32 || v->k == T_I64;
}

static bool truthy(Val v)
{
    return v.k == T_F64 ? v.f != 0 : v.k == T_F32 ? v.f32 != 0 : v.i != 0;
}

/* C's conversion of v to type k (a cast, or an assignment to a variable of type k). */
static Val conv(Val v, OrnTypeKind k)
{
    if (v.k == k || k == T_STR) return v;
    switch (k) {
    case T_BOOL:
        return v_i(T_BOOL, truthy(v));
    case T_I32:
        return v_i(T_I32, is_int(&v) ? (int32_t)v.i : v.k == T_F64 ? (int32_t)v.f : (int32_t)v.f32);
    case T_I64:
        return v_i(T_I64, is_int(&v) ? v.i : v.k == T_F64 ? (int64_t)v.f : (int64_t)v.f32);
    case T_F32:
        return v_f32(is_int(&v) ? (float)v.i : v.k == T_F64 ? (float)v.f : v.f32);
    case T_F64:
        return v_f64(is_int(&v) ? (double)v.i : v.k == T_F64 ? v.f : (double)v.f32);
    default:
        return v;
    }
}

/* The usual arithmetic conversions (bool and int32 are int). */
static OrnTypeKind common(const Val *a, const Val *b)
{
    if (a->k == T_F64 || b->k == T_F64) return T_F64;
    if (a->k == T_F32 || b->k == T_F32) return T_F32;
    if (a->k == T_I64 || b->k == T_I64) return T_I64;
    return T_I32;
}

/* a op b in C on values of their C types (-fwrapv: integers wrap). */
static Val arith(OrnOp op, Val a, Val b)
{
    OrnTypeKind k = common(&a, &b);
    a = conv(a, k), b = conv(b, k);
    if (op >= OP_EQ && op <= OP_GE) {
        int r;
        double x = k == T_F32 ? a.f32 : a.f, y = k == T_F32 ? b.f32 : b.f;
        if (k == T_I32 || k == T_I64) {
            int64_t p = a.i, q = b.i;
            r = op == OP_EQ   ? p == q
                : op == OP_NE ? p != q
                : op == OP_LT ? p < q
                : op == OP_LE ? p <= q
                : op == OP_GT ? p > q
                              : p >= q;
        } else {
            r = op == OP_EQ   ? x == y
                : op == OP_NE ? x != y
                : op == OP_LT ? x < y
                : op == OP_LE ? x <= y
                : op == OP_GT ? x > y
                              : x >= y;
        }
        return v_i(T_I32, r);
    }
    switch (k) {
    case T_F64:
        return v_f64(op == OP_ADD   ? a.f + b.f
                     : op == OP_SUB ? a.f - b.f
                     : op == OP_MUL ? a.f * b.f
                                    : a.f / b.f);
    case T_F32: {
        float x = a.f32, y = b.f32;
        return v_f32(op == OP_ADD ? x + y : op == OP_SUB ? x - y : op == OP_MUL ? x * y : x / y);
    }
    case T_I64: {
        uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
        return v_i(T_I64, (int64_t)(op == OP_ADD ? x + y : op == OP_SUB ? x - y : x * y));
    }
    default: {
        uint32_t x = (uint32_t)a.i, y = (uint32_t)b.i;
        return v_i(T_I32, (int32_t)(op == OP_ADD ? x + y : op == OP_SUB ? x - y : x * y));
    }
    }
}

/* ---------------------------------------------------------------- variables */

static size_t csize(OrnTypeKind k)
{
    switch (k) {
    case T_BOOL:
        return sizeof(bool);
    case T_I32:
        return sizeof(int32_t);
    case T_I64:
        return sizeof(int64_t);
    case T_F32:
        return sizeof(float);
    case T_F64:
        return sizeof(double);
    default:
        return sizeof(const char *);
    }
}

static void slot_key(const OrnSym *s, char *key, size_t n)
{
    snprintf(key, n, "%s@%u", s->name->s, s->span.lo);
}

/* The value of a global in its slot (zero-initialized, as a static, when it has none). */
static Val get_var(Ev *x, const OrnSym *s)
{
    char key[512];
    slot_key(s, key, sizeof key);
    OrnTypeKind k = s->type->kind;
    union {
        bool b;
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
        const char *s;
    } c;
    memset(&c, 0, sizeof c);
    orn_std_slot_in(x->slots, key, orn_type_str(x->u->types, s->type), &c, csize(k));
    switch (k) {
    case T_BOOL:
        return v_i(T_BOOL, c.b);
    case T_I32:
        return v_i(T_I32, c.i32);
    case T_I64:
        return v_i(T_I64, c.i64);
    case T_F32:
        return v_f32(c.f32);
    case T_F64:
        return v_f64(c.f64);
    default:
        return (Val){.k = T_STR, .s = c.s ? c.s : ""};
    }
}

static void set_var(Ev *x, const OrnSym *s, Val v)
{
    char key[512];
    slot_key(s, key, sizeof key);
    OrnTypeKind k = s->type->kind;
    v = conv(v, k);
    bool b = v.i != 0;
    int32_t i32 = (int32_t)v.i;
    const void *src = k == T_BOOL  ? (const void *)&b
                      : k == T_I32 ? (const void *)&i32
                      : k == T_I64 ? (const void *)&v.i
                      : k == T_F32 ? (const void *)&v.f32
                      : k == T_F64 ? (const void *)&v.f
                                   : (const void *)&v.s;
    orn_std_slot_out(x->slots, key, orn_type_str(x->u->types, s->type), src, csize(k));
}

/* ---------------------------------------------------------------- expressions */

static Val ev(Ev *x, const OrnNode *e);

static Val const_val(Ev *x, const OrnConstVal *c, OrnTypeKind k)
{
    switch (k) {
    case T_BOOL:
        return v_i(T_BOOL, c->b);
    case T_I32:
        return v_i(T_I32, (int32_t)c->i);
    case T_I64:
        return v_i(T_I64, c->i);
    case T_F32:
        return v_f32((float)c->f);
    case T_F64:
        return v_f64(c->f);
    default:
        return (Val){.k = T_STR, .s = x->keep(x->ud, c->s ? c->s : "")};
    }
}

static ffi_type *ffi_of(OrnTypeKind k)
{
    switch (k) {
    case T_BOOL:
        return &ffi_type_uint8;
    case T_I32:
        return &ffi_type_sint32;
    case T_I64:
        return &ffi_type_sint64;
    case T_F32:
        return &ffi_type_float;
    case T_F64:
        return &ffi_type_double;
    case T_VOID:
        return &ffi_type_void;
    default:
        return &ffi_type_pointer;
    }
}

/* The storage of v as C type k, for libffi. */
typedef union Cell {
    bool b;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    const char *s;
    int i;
} Cell;

static void *cell_of(Cell *c, Val v, OrnTypeKind k)
{
    v = conv(v, k);
    switch (k) {
    case T_BOOL:
        c->b = v.i != 0;
        break;
    case T_I32:
        c->i32 = (int32_t)v.i;
        break;
    case T_I64:
        c->i64 = v.i;
        break;
    case T_F32:
        c->f32 = v.f32;
        break;
    case T_F64:
        c->f64 = v.f;
        break;
    default:
        c->s = v.s;
        break;
    }
    return c;
}

/* An extern fn through libffi: arguments converted to the parameters' types. */
static Val call_extern(Ev *x, const OrnNode *e)
{
    const OrnSym *fs = e->u.call.sym;
    const OrnNode *fn = fs->decl;
    void *f = NULL;
    if (fn->u.fn.lib) {
        /* once per piece: looked up on every rank, then agreed (a library missing on one
         * node is reported once and every rank leaves the piece, orn_std_externs_agreed) */
        int i = 0;
        while (i < x->next && x->ext_fn[i] != fn) i++;
        if (i < x->next) {
            f = x->ext_ptr[i];
        } else {
            f = orn_std_extern(x->p, fn->u.fn.lib, fn->u.fn.id->s, fn->span.line);
            orn_std_externs_agreed(x->p);
            if (x->next < (int)(sizeof x->ext_fn / sizeof x->ext_fn[0])) {
                x->ext_fn[x->next] = fn;
                x->ext_ptr[x->next++] = f;
            }
        }
    } else {
        f = dlsym(RTLD_DEFAULT, fn->u.fn.id->s);
    }
    if (!f) orn_std_die(x->p, x->line, "extern fn '%s': no such symbol", fn->u.fn.id->s);
    ffi_type *types[MAXARGS];
    void *vals[MAXARGS];
    Cell cells[MAXARGS];
    int n = 0;
    const OrnNode *par = fn->u.fn.args;
    for (const OrnNode *a = e->u.call.args; a && n < MAXARGS; a = a->next, par = par->next) {
        OrnTypeKind pk = par->u.arg.sym->type->kind;
        Val v = ev(x, a);
        types[n] = ffi_of(pk);
        vals[n] = cell_of(&cells[n], v, pk);
        n++;
    }
    OrnTypeKind rk = fs->type->kind;
    ffi_cif cif;
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)n, ffi_of(rk), types) != FFI_OK)
        orn_std_die(x->p, x->line, "extern fn '%s': libffi cannot make the call", fn->u.fn.id->s);
    union {
        ffi_arg r;
        int64_t i64;
        float f32;
        double f64;
        const char *s;
    } r;
    memset(&r, 0, sizeof r);
    ffi_call(&cif, FFI_FN(f), &r, vals);
    switch (rk) {
    case T_VOID:
        return (Val){.k = T_VOID};
    case T_BOOL:
        return v_i(T_BOOL, (uint8_t)r.r != 0);
    case T_I32:
        return v_i(T_I32, (int32_t)r.r);
    case T_I64:
        return v_i(T_I64, r.i64);
    case T_F32:
        return v_f32(r.f32);
    case T_F64:
        return v_f64(r.f64);
    default:
        return (Val){.k = T_STR, .s = x->keep(x->ud, r.s ? r.s : "")};
    }
}

/* print/eprint: orn_std_print(p, types, ...) through libffi's variadic calls. */
static void call_print(Ev *x, const OrnNode *e, bool eprint)
{
    char letters[MAXARGS + 1];
    ffi_type *types[MAXARGS + 2] = {&ffi_type_pointer, &ffi_type_pointer};
    Cell cells[MAXARGS];
    const char *tp = letters;
    OrnStdProg *p = x->p;
    void *vals[MAXARGS + 2] = {&p, &tp};
    int n = 0;
    for (const OrnNode *a = e->u.call.args; a && n < MAXARGS; a = a->next, n++) {
        Val v = ev(x, a);
        switch (a->type->kind) {
        case T_BOOL:
            letters[n] = 'b', cells[n].i = (int)conv(v, T_I32).i, types[n + 2] = &ffi_type_sint;
            break;
        case T_I32:
        case T_I64:
            letters[n] = 'i', cells[n].i64 = conv(v, T_I64).i, types[n + 2] = &ffi_type_sint64;
            break;
        case T_F32:
        case T_F64:
            letters[n] = a->type->kind == T_F32 ? 'g' : 'f';
            cells[n].f64 = conv(v, T_F64).f, types[n + 2] = &ffi_type_double;
            break;
        default:
            letters[n] = 's', cells[n].s = v.s, types[n + 2] = &ffi_type_pointer;
            break;
        }
        vals[n + 2] = &cells[n];
    }
    letters[n] = '\0';
    ffi_cif cif;
    if (ffi_prep_cif_var(&cif, FFI_DEFAULT_ABI, 2, (unsigned)n + 2, &ffi_type_void, types) !=
        FFI_OK)
        orn_std_die(p, x->line, "print: libffi cannot make the call");
    ffi_call(&cif, eprint ? FFI_FN(orn_std_eprint) : FFI_FN(orn_std_print), NULL, vals);
}

static Val call_builtin(Ev *x, const OrnNode *e)
{
    OrnTypeKind k = e->type ? e->type->kind : T_VOID;
    const OrnNode *a0 = e->u.call.args, *a1 = a0 ? a0->next : NULL;
    int bi = e->u.call.builtin;
    switch (bi) {
    case ORN_BI_PRINT:
    case ORN_BI_EPRINT:
        call_print(x, e, bi == ORN_BI_EPRINT);
        return (Val){.k = T_VOID};
    case ORN_BI_RAND:
        return v_f64(orn_std_rand(x->p));
    case ORN_BI_RANDN:
        return v_f64(orn_std_randn(x->p));
    case ORN_BI_WALL_TIME:
        return v_f64(orn_std_wall_time());
    default:
        break;
    }
    Val a = a0 ? ev(x, a0) : (Val){0}, b = a1 ? ev(x, a1) : (Val){0};
    bool f32 = k == T_F32;
    /* one-argument libm functions, in the type of the call (f32 calls the f variant) */
    static const struct {
        int bi;
        float (*f)(float);
        double (*d)(double);
    } unary[] = {{ORN_BI_SQRT, sqrtf, sqrt},    {ORN_BI_EXP, expf, exp},
                 {ORN_BI_LOG, logf, log},       {ORN_BI_SIN, sinf, sin},
                 {ORN_BI_COS, cosf, cos},       {ORN_BI_TANH, tanhf, tanh},
                 {ORN_BI_FLOOR, floorf, floor}, {ORN_BI_CEIL, ceilf, ceil}};
    for (size_t u = 0; u < sizeof unary / sizeof unary[0]; u++)
        if (unary[u].bi == bi)
            return f32 ? v_f32(unary[u].f(conv(a, T_F32).f32))
                       : v_f64(unary[u].d(conv(a, T_F64).f));
    switch (bi) {
    case ORN_BI_SIGMOID:
        return f32 ? v_f32(1.0f / (1.0f + expf(-conv(a, T_F32).f32)))
                   : v_f64(1.0 / (1.0 + exp(-conv(a, T_F64).f)));
    case ORN_BI_ABS:
        if (k == T_F32) return v_f32(fabsf(conv(a, T_F32).f32));
        if (k == T_F64) return v_f64(fabs(conv(a, T_F64).f));
        if (k == T_I32) return v_i(T_I32, orn_std_abs_i32((int32_t)conv(a, T_I32).i));
        return v_i(T_I64, orn_std_abs_i64(conv(a, T_I64).i));
    case ORN_BI_POW:
        return f32 ? v_f32(powf(conv(a, T_F32).f32, conv(b, T_F32).f32))
                   : v_f64(pow(conv(a, T_F64).f, conv(b, T_F64).f));
    case ORN_BI_MIN:
    case ORN_BI_MAX: {
        a = conv(a, k), b = conv(b, k);
        bool le = arith(bi == ORN_BI_MIN ? OP_LE : OP_GE, a, b).i != 0;
        return le ? a : b;
    }
    case ORN_BI_DIV:
    case ORN_BI_MOD: {
        int64_t p = conv(a, T_I64).i, q = conv(b, T_I64).i;
        int64_t r =
            bi == ORN_BI_DIV ? orn_std_div(x->p, p, q, x->line) : orn_std_mod(x->p, p, q, x->line);
        return conv(v_i(T_I64, r), k);
    }
    case ORN_BI_I32:
    case ORN_BI_I64:
    case ORN_BI_F32:
    case ORN_BI_F64:
        if (a.k == T_STR) { /* the text parsed, as the compiled code does */
            if (k == T_F32) return v_f32(orn_std_str_to_f32(x->p, a.s, x->line));
            if (k == T_F64) return v_f64(orn_std_str_to_f64(x->p, a.s, x->line));
            return conv(v_i(T_I64, orn_std_str_to_int(x->p, a.s, k == T_I32 ? 32 : 64, x->line)),
                        k);
        }
        return conv(a, k);
    case ORN_BI_RANDINT:
        return v_i(T_I64, orn_std_randint(x->p, conv(a, T_I64).i, x->line));
    case ORN_BI_EXIT:
        fflush(stdout);
        orn_std_exit(x->p, conv(a, T_I64).i);
    case ORN_BI_SEED:
        orn_std_set_seed(x->p, conv(a, T_I64).i);
        return (Val){.k = T_VOID};
    case ORN_BI_LOG_METRIC: /* a: the name, b: the step; the value third, left to right */
        orn_std_log_metric(x->p, a.s, conv(b, T_I64).i, conv(ev(x, a1->next), T_F64).f, x->line);
        return (Val){.k = T_VOID};
    default:
        orn_std_die(x->p, x->line, "internal error: the evaluator met built-in %d", bi);
    }
}

static Val ev(Ev *x, const OrnNode *e)
{
    switch (e->kind) {
    case N_INT:
        return v_i(T_I64, e->u.ilit.v);
    case N_FLOAT:
        return v_f64(e->u.flit.v);
    case N_BOOL:
        return v_i(T_BOOL, e->u.blit.v);
    case N_STR:
        return (Val){.k = T_STR, .s = x->keep(x->ud, e->u.slit.s)};
    case N_NAME: {
        const OrnSym *s = e->u.name.sym;
        return s->kind == SYM_CONST ? const_val(x, &s->cval, s->type->kind) : get_var(x, s);
    }
    case N_UNARY: {
        Val v = ev(x, e->u.unary.e);
        if (e->u.unary.op == OP_NOT) return v_i(T_I32, !truthy(v));
        if (v.k == T_F64) return v_f64(-v.f);
        if (v.k == T_F32) return v_f32(-v.f32);
        if (v.k == T_I64) return v_i(T_I64, (int64_t)(0 - (uint64_t)v.i));
        return v_i(T_I32, (int32_t)(0 - (uint32_t)v.i));
    }
    case N_BINARY: {
        OrnOp op = e->u.binary.op;
        Val l = ev(x, e->u.binary.l);
        if (op == OP_AND) return v_i(T_I32, truthy(l) && truthy(ev(x, e->u.binary.r)));
        if (op == OP_OR) return v_i(T_I32, truthy(l) || truthy(ev(x, e->u.binary.r)));
        Val r = ev(x, e->u.binary.r);
        /* f32 op weak f64 is f32: the f64 side converts first (c_expr.c) */
        if (e->type->kind == T_F32) {
            if (e->u.binary.l->type->kind == T_F64) l = conv(l, T_F32);
            if (e->u.binary.r->type->kind == T_F64) r = conv(r, T_F32);
        }
        return arith(op, l, r);
    }
    case N_CALL:
        return e->u.call.sym ? call_extern(x, e) : call_builtin(x, e);
    default:
        orn_std_die(x->p, x->line, "internal error: the evaluator met a %s",
                    orn_node_kind_name(e->kind));
    }
}

/* ---------------------------------------------------------------- statements */

static void run_list(Ev *x, const OrnNode *s);

static void run_stmt(Ev *x, const OrnNode *s)
{
    x->line = (int)s->span.line;
    switch (s->kind) {
    case N_EXPR:
        ev(x, s->u.expr_stmt.e);
        return;
    case N_ASSIGN: {
        const OrnSym *t = s->u.assign.target->u.name.sym;
        Val v = ev(x, s->u.assign.value);
        OrnTypeKind k = t->type->kind;
        if (s->u.assign.op != OP_NONE && k != T_STR && k != T_BOOL)
            v = arith(s->u.assign.op, get_var(x, t), v);
        set_var(x, t, v);
        return;
    }
    case N_PARAM: { /* declared: its default unless the session has it already */
        const OrnSym *ps = s->u.decl.sym;
        char key[512];
        slot_key(ps, key, sizeof key);
        const char *type;
        bool have = false;
        for (int i = 0; orn_std_slot_at(x->slots, i, &type); i++)
            have |= strcmp(orn_std_slot_at(x->slots, i, &type), key) == 0;
        if (!have) set_var(x, ps, const_val(x, &ps->cval, ps->type->kind));
        return;
    }
    case N_IF:
        if (truthy(ev(x, s->u.if_.cond)))
            run_stmt(x, s->u.if_.then);
        else if (s->u.if_.els)
            run_stmt(x, s->u.if_.els);
        return;
    case N_WHILE:
        while (truthy(ev(x, s->u.while_.cond))) {
            run_stmt(x, s->u.while_.body);
            if (x->jump == 1) break;
            x->jump = 0;
            x->line = (int)s->span.line;
        }
        x->jump = 0;
        return;
    case N_FOR: {
        int64_t lo = conv(ev(x, s->u.for_.lo), T_I64).i, hi = conv(ev(x, s->u.for_.hi), T_I64).i;
        for (int64_t i = lo; i < hi; i++) {
            set_var(x, s->u.for_.var->u.name.sym, v_i(T_I64, i));
            run_stmt(x, s->u.for_.body);
            if (x->jump == 1) break;
            x->jump = 0;
        }
        x->jump = 0;
        return;
    }
    case N_BREAK:
        x->jump = 1;
        return;
    case N_CONTINUE:
        x->jump = 2;
        return;
    case N_BLOCK:
        run_list(x, s->u.block.stmts);
        return;
    default: /* N_CONST: folded where it is used */
        return;
    }
}

static void run_list(Ev *x, const OrnNode *s)
{
    for (; s && !x->jump; s = s->next) run_stmt(x, s);
}

int orn_eval_run(OrnStdProg *p, OrnStdSlots *slots, OrnUnit *u, uint32_t from,
                 const char *(*keep)(void *ud, const char *s), void *ud)
{
    Ev x = {.p = p, .slots = slots, .u = u, .keep = keep, .ud = ud};
    jmp_buf jb;
    if (setjmp(jb)) {
        p->recover = NULL;
        return 1;
    }
    p->recover = &jb;
    run_list(&x, first_new(u, from));
    p->recover = NULL;
    return 0;
}
