/* emit_c.c: the C back end (orn_cg_target_c): one C file per program, compiled by the
 * system C compiler against runtime/rt.h and stdlib/orn_std.h.
 *
 * Shape of the output:
 *   preamble     includes, the program context P_, params (static, parsed at start),
 *                top-level variables (static: replicated per rank), dist arrays, externs
 *   functions    each fn as a static C function (top-level version: dist element access
 *                is collective); per loop, clones of the fns its body calls that need a
 *                loop context (dist access through the block's views, the iteration's
 *                random stream)
 *   loops        per parallel_for: the OrnRtPlan initializer, the body
 *                orn_body_N(rt, block, env) iterating elements [first, first + count) in
 *                key order, and when the plan prefetches, orn_prefetch_N: the same walk
 *                reduced to the statements that compute announced keys
 *   main()       the program's state for checkpoints (OrnStdState), orn_std_init,
 *                orn_std_ckpt_init, the top-level statements (guarded so that a resumed run
 *                skips those before its safe point; the top-level loops' iterations start
 *                at safe points), orn_std_finish
 *
 * Element accesses in loop bodies go through boxes hoisted once per call (OrnRtBox: an
 * inline bounds test, then a load or store), and loops whose accesses allow it are split
 * by index set so their middle runs without tests (version.h, c_for.c). Subscripts are
 * written in each array's storage order (analyzer/layout.h).
 *
 * Expressions keep C's usual arithmetic conversions, which are the language's, with f32
 * op weak f64 giving f32 (docs/language.md); integer
 * arithmetic wraps (the program is compiled with -fwrapv). View expressions
 * (W[:, u] += s * (e * H[:, i] - lam * W[:, u])) become one loop over the view length
 * with scalar operands evaluated once before it, a fast version over strided pointers when
 * every view lies in its local box and a slow version through the runtime otherwise.
 * Reductions over views (dot, sum, norm) use the fixed eight-way partial sums of
 * orn_std.h. Views, reductions and printing are written as GNU statement expressions
 * ({ ... }), which gcc and clang accept; generated code is compiled without -pedantic. */
#include "emit_c_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* ---------------------------------------------------------------- output */

void cg_o(C *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    orn_buf_vprintf(c->b, fmt, ap);
    va_end(ap);
}

void cg_ind(C *c)
{
    for (int i = 0; i < c->ind; i++) orn_buf_puts(c->b, "    ");
}

void cg_ol(C *c, const char *fmt, ...)
{
    cg_ind(c);
    va_list ap;
    va_start(ap, fmt);
    orn_buf_vprintf(c->b, fmt, ap);
    va_end(ap);
    orn_buf_putc(c->b, '\n');
}

void cg_ice(C *c, const OrnNode *n, const char *what)
{
    if (!c->failed) orn_ice(&c->u->diags, n ? n->span : (OrnSpan){0}, "code generation: %s", what);
    c->failed = true;
}

unsigned cg_site(const C *c, const OrnNode *e, const char *name, unsigned line)
{
    const OrnSource *src = &c->p->u->src;
    if (!e || !name || e->span.line != line || line >= (1u << 24) || e->span.col < 1 || !src->text)
        return line;
    size_t len = 0;
    const char *text = orn_source_line(src, line, &len);
    if (!text) return line;
    int k = orn_name_uses_before(text, len, name, strlen(name), '[', e->span.col - 1);
    return k < 8 ? line | (unsigned)k << 24 : line;
}

const char *cg_nm(C *c, const OrnSym *s)
{
    return orn_cg_name(c->p, s);
}

/* ---------------------------------------------------------------- types */

const char *cg_ctype(OrnTypeKind k)
{
    switch (k) {
    case T_BOOL:
        return "bool";
    case T_I32:
        return "int32_t";
    case T_I64:
        return "int64_t";
    case T_F32:
        return "float";
    case T_F64:
        return "double";
    case T_STR:
        return "const char *";
    case T_VOID:
        return "void";
    default:
        return "int64_t";
    }
}

const char *cg_sfx(OrnTypeKind k)
{
    switch (k) {
    case T_I32:
        return "i32";
    case T_I64:
        return "i64";
    case T_F32:
        return "f32";
    default:
        return "f64";
    }
}

const char *cg_dsmt(OrnTypeKind k)
{
    switch (k) {
    case T_I32:
        return "ORN_DSM_I32";
    case T_I64:
        return "ORN_DSM_I64";
    case T_F32:
        return "ORN_DSM_F32";
    default:
        return "ORN_DSM_F64";
    }
}

const char *cg_rtt(OrnTypeKind k)
{
    switch (k) {
    case T_I32:
        return "ORN_RT_I32";
    case T_I64:
        return "ORN_RT_I64";
    case T_F32:
        return "ORN_RT_F32";
    default:
        return "ORN_RT_F64";
    }
}

/* Element type of an array, view or buffer. */
OrnTypeKind cg_elem_of(const OrnType *t)
{
    if (!t) return T_F64;
    if (t->kind == T_BUFFER) return t->target ? t->target->elem : T_F64;
    if (t->kind == T_ARRAY || t->kind == T_VIEW || t->kind == T_TYPENAME) return t->elem;
    return t->kind;
}

OrnTypeKind cg_kind_of(const OrnNode *e)
{
    return e && e->type ? e->type->kind : T_ERROR;
}

/* The number type of a scalar, or the element type of a view. */
OrnTypeKind cg_num_elem(const OrnNode *e)
{
    return e->type && e->type->kind == T_VIEW ? e->type->elem : cg_kind_of(e);
}

bool cg_is_local_array(const OrnSym *s)
{
    return s && s->type && s->type->kind == T_ARRAY && !s->type->dist;
}

bool cg_is_buffer(const OrnSym *s)
{
    return s && s->type && s->type->kind == T_BUFFER;
}

bool cg_in_loop_ctx(const C *c)
{
    return c->cx == CX_BODY || c->cx == CX_CLONE || c->cx == CX_PREFETCH;
}

/* ---------------------------------------------------------------- literals */

void cg_put_i64(C *c, int64_t v)
{
    if (v == INT64_MIN)
        cg_o(c, "(-INT64_C(9223372036854775807) - 1)");
    else
        cg_o(c, "INT64_C(%lld)", (long long)v);
}

void cg_put_f64(C *c, double v)
{
    if (isnan(v)) {
        cg_o(c, "__builtin_nan(\"\")");
        return;
    }
    if (isinf(v)) {
        cg_o(c, v > 0 ? "__builtin_inf()" : "(-__builtin_inf())");
        return;
    }
    char buf[48];
    snprintf(buf, sizeof buf, "%.17g", v);
    if (!strpbrk(buf, ".e")) strcat(buf, ".0");
    cg_o(c, v < 0 || (v == 0 && signbit(v)) ? "(%s)" : "%s", buf);
}

void cg_put_str(C *c, const char *s, size_t n)
{
    orn_buf_putc(c->b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '"':
            cg_o(c, "\\\"");
            break;
        case '\\':
            cg_o(c, "\\\\");
            break;
        case '\n':
            cg_o(c, "\\n");
            break;
        case '\t':
            cg_o(c, "\\t");
            break;
        case '?':
            cg_o(c, "\\?");
            break; /* no trigraphs */
        default:
            if (ch < 32 || ch >= 127)
                cg_o(c, "\\%03o", ch);
            else
                orn_buf_putc(c->b, (char)ch);
        }
    }
    orn_buf_putc(c->b, '"');
}

void cg_put_const(C *c, const OrnConstVal *v, OrnTypeKind k)
{
    switch (k) {
    case T_BOOL:
        cg_o(c, v->b ? "true" : "false");
        break;
    case T_I32:
        cg_o(c, "((int32_t)%lld)", (long long)v->i);
        break;
    case T_I64:
        cg_put_i64(c, v->i);
        break;
    case T_F32:
        cg_o(c, "((float)");
        cg_put_f64(c, v->f);
        cg_o(c, ")");
        break;
    case T_F64:
        cg_put_f64(c, v->f);
        break;
    case T_STR:
        cg_put_str(c, v->s ? v->s : "", v->slen);
        break;
    default:
        cg_o(c, "0");
        break;
    }
}

/* ---------------------------------------------------------------- unit */

/* The comment on a param's line after its declaration ("param step = 0.05  # learning
 * rate"), trimmed, for the program's --help; NULL when there is none. */
static const char *param_doc(const C *c, const OrnSym *s, size_t *n)
{
    const OrnNode *d = s->decl;
    const OrnSource *src = &c->u->src;
    if (!d || d->kind != N_PARAM || !d->u.decl.value) return NULL;
    size_t at = d->u.decl.value->span.hi;
    const char *t = src->text;
    while (at < src->len && (t[at] == ' ' || t[at] == '\t')) at++;
    if (at >= src->len || t[at] != '#') return NULL;
    at++;
    while (at < src->len && (t[at] == ' ' || t[at] == '\t')) at++;
    size_t end = at;
    while (end < src->len && t[end] != '\n' && t[end] != '\r') end++;
    while (end > at && (t[end - 1] == ' ' || t[end - 1] == '\t')) end--;
    *n = end - at;
    return end > at ? t + at : NULL;
}

static void preamble(C *c)
{
    const OrnCgProgram *p = c->p;
    OrnUnit *u = c->u;
    c->b = &c->pre;
    cg_o(c, "/* Generated by orionc from %s. Do not edit. */\n", p->file);
    /* the compiler's vector bytes, for orn_std.h's inline loops (OrnCgOptions.vec_bytes) */
    cg_o(c, "#define ORN_STD_VEC_BYTES %d\n", p->vec_bytes);
    cg_o(c, "#include \"orn_std.h\"\n%s\n", c->p->gpu ? "#include \"rt_gpu.h\"\n" : "");
    if (p->module)
        cg_o(c, "#include <setjmp.h>\n\nstatic OrnStdProg *orn_Pp;\n#define P_ orn_Pp\n");
    else
        cg_o(c, "static OrnStdProg orn_P;\n#define P_ (&orn_P)\n");
    cg_o(c, "\n/* params */\n");
    int np = 0;
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s || s->kind != SYM_PARAM) continue;
        np++;
        OrnTypeKind k = s->type->kind;
        cg_o(c, "static %s %s = ", cg_ctype(k), cg_nm(c, s));
        cg_put_const(c, &s->cval, k);
        cg_o(c, ";\n");
    }
    if (np) {
        cg_o(c, "static const OrnStdParam orn_params_[%d] = {\n", np);
        for (int i = 0; i < u->sema.nsyms; i++) {
            const OrnSym *s = u->sema.syms[i];
            if (!s || s->kind != SYM_PARAM) continue;
            OrnTypeKind k = s->type->kind;
            const char *pt = k == T_BOOL  ? "ORN_STD_PBOOL"
                             : k == T_I64 ? "ORN_STD_PI64"
                             : k == T_F64 ? "ORN_STD_PF64"
                                          : "ORN_STD_PSTR";
            cg_o(c, "    {\"%s\", %s, (void *)&%s, ", s->name->s, pt, cg_nm(c, s));
            size_t dn = 0;
            const char *doc = param_doc(c, s, &dn);
            if (doc)
                cg_put_str(c, doc, dn);
            else
                cg_o(c, "NULL");
            cg_o(c, "},\n");
        }
        cg_o(c, "};\n");
    }
    cg_o(c, "\n/* top-level variables (replicated on every rank) and dist arrays */\n");
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s) continue;
        if (orn_cg_is_static(s)) {
            if (s->type->kind == T_ARRAY)
                cg_o(c, "static OrnStdArr *%s __attribute__((unused));\n", cg_nm(c, s));
            else if (s->type->kind >= T_BOOL && s->type->kind <= T_STR)
                cg_o(c, "static %s %s __attribute__((unused));\n", cg_ctype(s->type->kind),
                     cg_nm(c, s));
        } else if (s->kind == SYM_DIST) {
            if (cg_is_buffer(s))
                cg_o(c, "static OrnRtBuffer *%s __attribute__((unused));\n", cg_nm(c, s));
            else
                cg_o(c, "static OrnDsmArray *%s __attribute__((unused));\n", cg_nm(c, s));
        }
    }
    cg_o(c, "\n/* externs */\n");
    for (int i = 0; i < u->sema.nfns; i++) {
        const OrnNode *fn = u->sema.fns[i];
        if (!fn || !fn->u.fn.is_extern || !fn->u.fn.sym) continue;
        OrnTypeKind rk = cg_fn_ret(fn);
        if (fn->u.fn.lib) {
            cg_o(c, "static %s (*%s)(", cg_ctype(rk), cg_nm(c, fn->u.fn.sym));
            cg_fn_params(c, fn, true);
            cg_o(c, ");\n");
        } else {
            cg_o(c, "extern %s %s(", cg_ctype(rk), cg_nm(c, fn->u.fn.sym));
            cg_fn_params(c, fn, true);
            cg_o(c, ") __asm__(\"%s\");\n", fn->u.fn.id->s);
        }
    }
    /* apply functions of buffers */
    c->b = &c->defs;
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s || !cg_is_buffer(s) || !s->decl || s->decl->kind != N_DIST) continue;
        const OrnNode *ap = cg_kwarg(s->decl->u.dist.value, "apply");
        const OrnSym *fs = ap ? ap->u.name.sym : NULL;
        int j = fs && fs->decl ? orn_cg_fn_index(p, fs->decl) : -1;
        if (j < 0 || c->applied[j]) continue;
        c->applied[j] = 1;
        OrnTypeKind k = cg_elem_of(s->type);
        const char *T = cg_ctype(k);
        cg_o(c, "\nstatic int orn_apply_%s(void *elem, const void *delta, void *env)\n{\n",
             cg_nm(c, fs));
        cg_o(c, "    %s old, d;\n    (void)env;\n    memcpy(&old, elem, sizeof old);\n", T);
        cg_o(c, "    memcpy(&d, delta, sizeof d);\n    old = %s(old, d);\n", cg_nm(c, fs));
        cg_o(c, "    memcpy(elem, &old, sizeof old);\n    return 0;\n}\n");
    }
}

static void *c_begin(const OrnCgProgram *p, OrnBuf *out)
{
    C *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->p = p;
    c->u = p->u;
    c->out = out;
    orn_buf_init(&c->pre);
    orn_buf_init(&c->decls);
    orn_buf_init(&c->defs);
    orn_buf_init(&c->mainb);
    c->applied = calloc((size_t)p->u->sema.nfns + 1, 1);
    preamble(c);
    return c;
}

/* ---------------------------------------------------------------- checkpoints */

/* Safe points (stdlib/ckpt.c): the starts of the iterations of the `for` (but loop
 * reductions) and `while` loops written directly at top level. */
static bool safe_point(const C *c, const OrnNode *s)
{
    return s->kind == N_WHILE || (s->kind == N_FOR && !cg_for_is_reduction(c, s));
}

/* The program's state for checkpoints: every top-level variable, local array, dist array
 * and buffer (OrnStdVar), the safe points' lines, and a hash of the source. */
static void state_table(C *c, const OrnNode *program)
{
    const OrnUnit *u = c->u;
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < u->src.len; i++)
        h = (h ^ (unsigned char)u->src.text[i]) * 1099511628211ULL;
    cg_o(c, "\n/* checkpoints: the program's state (stdlib/ckpt.c) */\n");
    int nv = 0, np = 0;
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!s) continue;
        const char *kind = NULL;
        char apply[160] = "NULL";
        if (orn_cg_is_static(s)) {
            static const char *const kinds[] = {"ORN_STD_VBOOL", "ORN_STD_VI32", "ORN_STD_VI64",
                                                "ORN_STD_VF32",  "ORN_STD_VF64", "ORN_STD_VSTR"};
            OrnTypeKind k = s->type->kind;
            if (k == T_ARRAY)
                kind = "ORN_STD_VLOCAL";
            else if (k >= T_BOOL && k <= T_STR)
                kind = kinds[k - T_BOOL];
        } else if (s->kind == SYM_DIST) {
            kind = cg_is_buffer(s) ? "ORN_STD_VBUF" : "ORN_STD_VDIST";
            const OrnNode *ap = cg_is_buffer(s) && s->decl && s->decl->kind == N_DIST
                                    ? cg_kwarg(s->decl->u.dist.value, "apply")
                                    : NULL;
            if (ap && ap->u.name.sym)
                snprintf(apply, sizeof apply, "orn_apply_%s", cg_nm(c, ap->u.name.sym));
        }
        if (!kind) continue;
        if (!nv++) cg_o(c, "static const OrnStdVar orn_vars_[] = {\n");
        cg_o(c, "    {\"%s\", %s, (void *)&%s, %s},\n", s->name->s, kind, cg_nm(c, s), apply);
    }
    if (nv) cg_o(c, "};\n");
    for (const OrnNode *s = program ? program->u.block.stmts : NULL; s; s = s->next) {
        if (!safe_point(c, s)) continue;
        cg_o(c, "%s%u", np++ ? ", " : "static const int orn_points_[] = {", s->span.line);
    }
    if (np) cg_o(c, "};\n");
    cg_o(c, "static const OrnStdState orn_state_ = {UINT64_C(0x%016llx), %s, %d, %s, %d};\n",
         (unsigned long long)h, nv ? "orn_vars_" : "NULL", nv, np ? "orn_points_" : "NULL", np);
}

/* The loop of safe point k: its bounds (or, for a `while`, its iteration counter) come from
 * the checkpoint when the run resumes there, and every iteration starts at the point. */
static void safe_loop(C *c, const OrnNode *s, int k)
{
    int id = c->tmp++;
    c->line = (int)s->span.line;
    bool held = cg_hold_open(c, s);
    cg_ol(c, "{");
    c->ind++;
    if (s->kind == N_FOR) {
        cg_ol(c, "int64_t lo%d_, hi%d_, i%d_;", id, id, id);
        cg_ol(c, "if (!orn_std_ckpt_resume(P_, %d, &lo%d_, &hi%d_, &i%d_)) {", k, id, id, id);
        c->ind++;
        cg_ind(c);
        cg_o(c, "lo%d_ = ", id);
        cg_ex_as(c, s->u.for_.lo, T_I64);
        cg_o(c, ";\n");
        cg_ind(c);
        cg_o(c, "hi%d_ = ", id);
        cg_ex_as(c, s->u.for_.hi, T_I64);
        cg_o(c, ";\n");
        cg_ol(c, "i%d_ = lo%d_;", id, id);
        c->ind--;
        cg_ol(c, "}");
        cg_ol(c, "for (; i%d_ < hi%d_; i%d_++) {", id, id, id);
        c->ind++;
        cg_ol(c, "orn_std_ckpt_point(P_, %d, lo%d_, hi%d_, i%d_);", k, id, id, id);
        char v[24];
        snprintf(v, sizeof v, "i%d_", id);
        cg_bind_var(c, s->u.for_.var->u.name.sym, "int64_t", v);
        c->ind--;
        c->cloops++;
        cg_st_block(c, s->u.for_.body);
        c->cloops--;
    } else {
        cg_ol(c, "int64_t n%d_ = 0, u%d_;", id, id);
        cg_ol(c, "orn_std_ckpt_resume(P_, %d, &u%d_, &u%d_, &n%d_);", k, id, id, id);
        cg_ol(c, "for (;; n%d_++) {", id);
        c->ind++;
        cg_ol(c, "orn_std_ckpt_point(P_, %d, 0, 0, n%d_);", k, id);
        cg_ind(c);
        cg_o(c, "if (!(");
        cg_ex_cond(c, s->u.while_.cond);
        cg_o(c, ")) break;\n");
        c->ind--;
        c->cloops++;
        cg_st_block(c, s->u.while_.body);
        c->cloops--;
    }
    cg_ol(c, "}");
    cg_ol(c, "orn_std_loop_end(P_, %d);", k);
    c->ind--;
    cg_ol(c, "}");
    cg_hold_close(c, held);
}

/* The top-level statements. With safe points, each is guarded so that a resumed run skips
 * what comes before its safe point's loop (orn_std_ckpt_skip). */
static void top_statements(C *c, const OrnNode *program)
{
    const OrnNode *list = program ? program->u.block.stmts : NULL;
    int npoints = 0, k = 0;
    bool open = false;
    for (const OrnNode *s = list; s; s = s->next) npoints += safe_point(c, s);
    for (const OrnNode *s = list; s && !c->failed; s = s->next) {
        if (safe_point(c, s)) {
            if (open) {
                c->ind--;
                cg_ol(c, "}");
                open = false;
            }
            cg_ol(c, "if (!orn_std_ckpt_skip(P_, %d)) {", k + 1);
            c->ind++;
            safe_loop(c, s, k++);
            c->ind--;
            cg_ol(c, "}");
            continue;
        }
        bool code = s->kind != N_CONST && s->kind != N_PARAM && s->kind != N_FN;
        if (!open && code && k < npoints) {
            cg_ol(c, "if (!orn_std_ckpt_skip(P_, %d)) {", k);
            c->ind++;
            open = true;
        }
        cg_st(c, s);
    }
    if (open) {
        c->ind--;
        cg_ol(c, "}");
    }
}

/* A variable that lives for the whole program: a param, a top-level scalar, string or local
 * array, a dist array or buffer (the file-scope statics of the preamble). */
static bool is_global(const OrnSym *s)
{
    if (!s) return false;
    if (s->kind == SYM_PARAM) return true;
    if (orn_cg_is_static(s))
        return s->type->kind == T_ARRAY || (s->type->kind >= T_BOOL && s->type->kind <= T_STR);
    return s->kind == SYM_DIST;
}

/* Copy every global in from (dir "in") or out to ("out") the session's slots, keyed by
 * name and declaration offset, typed by its type's name. */
static void module_slots(C *c, const char *dir)
{
    OrnUnit *u = c->u;
    for (int i = 0; i < u->sema.nsyms; i++) {
        const OrnSym *s = u->sema.syms[i];
        if (!is_global(s)) continue;
        cg_o(c, "    orn_std_slot_%s(slots_, \"%s@%u\", \"%s\", &%s, sizeof %s);\n", dir,
             s->name->s, s->span.lo, orn_type_str(u->types, s->type), cg_nm(c, s), cg_nm(c, s));
    }
}

/* The REPL's entry (OrnCgOptions.module): the statements from byte p->from on. */
static void module_entry(C *c, const OrnNode *program, int np)
{
    cg_o(c,
         "\nint orn_module_entry(OrnStdProg *p_, OrnStdSlots *slots_, int argc, char **argv)\n{\n");
    cg_o(c, "    jmp_buf jb_;\n    orn_Pp = p_;\n");
    module_slots(c, "in");
    /* `orion run prog.orn --name=value`: --help or a bad argument ends the run (100 + code) */
    cg_o(c, "    if (argc > 0) {\n");
    cg_o(c, "        int rc_ = orn_std_params(P_, argc, argv, %s, %d);\n",
         np ? "orn_params_" : "NULL", np);
    cg_o(c, "        if (rc_ >= 0) return 100 + rc_;\n    }\n");
    /* an extern that cannot be loaded: nothing has run, the input is not taken (2) */
    cg_o(c, "    if (setjmp(jb_)) {\n        p_->recover = NULL;\n        return 2;\n    }\n");
    cg_o(c, "    p_->recover = &jb_;\n");
    bool any_lib = false;
    for (int i = 0; i < c->u->sema.nfns; i++) {
        const OrnNode *fn = c->u->sema.fns[i];
        if (!fn || !fn->u.fn.is_extern || !fn->u.fn.lib || !fn->u.fn.sym) continue;
        cg_o(c, "    *(void **)(&%s) = orn_std_extern(P_, ", cg_nm(c, fn->u.fn.sym));
        cg_put_str(c, fn->u.fn.lib, strlen(fn->u.fn.lib));
        cg_o(c, ", \"%s\", %u);\n", fn->u.fn.id->s, fn->span.line);
        any_lib = true;
    }
    if (any_lib) cg_o(c, "    orn_std_externs_agreed(P_);\n"); /* every rank, or none */
    /* a run-time error: what ran stays done (1); the holds of the loops it left end
     * (their scopes' cleanups do not run) */
    cg_o(c, "    if (setjmp(jb_)) {\n        p_->recover = NULL;\n        "
            "orn_dsm_release_all(p_->dsm);\n");
    c->ind = 1;
    module_slots(c, "out");
    cg_o(c, "        return 1;\n    }\n");
    const OrnNode *first = program ? program->u.block.stmts : NULL;
    while (first && first->span.lo < c->p->from) first = first->next;
    cg_st_list(c, first);
    c->ind = 0;
    cg_o(c, "    p_->recover = NULL;\n");
    module_slots(c, "out");
    cg_o(c, "    return 0;\n}\n");
}

static void c_toplevel(void *st_, const OrnNode *program)
{
    C *c = st_;
    const OrnUnit *u = c->u;
    c->b = &c->mainb;
    c->cx = CX_TOP;
    c->loop = NULL;
    c->fn = NULL;
    int np = 0;
    for (int i = 0; i < u->sema.nsyms; i++)
        if (u->sema.syms[i] && u->sema.syms[i]->kind == SYM_PARAM) np++;
    if (c->p->module) {
        module_entry(c, program, np);
        return;
    }
    state_table(c, program);
    if (u->src.text) { /* run-time errors show the line they name (orn_std_set_source) */
        cg_o(c, "\n/* the program's source: run-time errors show the line they name */\n"
                "static const char orn_src_[] =");
        size_t i = 0;
        while (i < u->src.len) {
            size_t j = i;
            while (j < u->src.len && u->src.text[j] != '\n') j++;
            if (j < u->src.len) j++;
            cg_o(c, "\n    ");
            cg_put_str(c, u->src.text + i, j - i);
            i = j;
        }
        cg_o(c, u->src.len ? ";\n" : " \"\";\n");
    }
    cg_o(c, "\nint main(int argc, char **argv)\n{\n");
    cg_o(c, "    orn_std_init(P_, &argc, &argv, ");
    cg_put_str(c, c->p->file, strlen(c->p->file));
    cg_o(c, ", %s, %d);\n", np ? "orn_params_" : "NULL", np);
    if (u->src.text) cg_o(c, "    orn_std_set_source(P_, orn_src_);\n");
    bool any_lib = false;
    for (int i = 0; i < u->sema.nfns; i++) {
        const OrnNode *fn = u->sema.fns[i];
        if (!fn || !fn->u.fn.is_extern || !fn->u.fn.lib || !fn->u.fn.sym) continue;
        cg_o(c, "    *(void **)(&%s) = orn_std_extern(P_, ", cg_nm(c, fn->u.fn.sym));
        cg_put_str(c, fn->u.fn.lib, strlen(fn->u.fn.lib));
        cg_o(c, ", \"%s\", %u);\n", fn->u.fn.id->s, fn->span.line);
        any_lib = true;
    }
    if (any_lib) cg_o(c, "    orn_std_externs_agreed(P_);\n"); /* a library missing on a node */
    cg_o(c, "    orn_std_ckpt_init(P_, &orn_state_);\n");
    c->ind = 1;
    top_statements(c, program);
    c->ind = 0;
    cg_o(c, "    return orn_std_finish(P_);\n}\n");
}

static bool c_end(void *st_)
{
    C *c = st_;
    bool ok = !c->failed;
    orn_buf_put(c->out, c->pre.data ? c->pre.data : "", c->pre.len);
    orn_buf_puts(c->out, "\n/* functions */\n");
    orn_buf_put(c->out, c->decls.data ? c->decls.data : "", c->decls.len);
    orn_buf_put(c->out, c->defs.data ? c->defs.data : "", c->defs.len);
    orn_buf_put(c->out, c->mainb.data ? c->mainb.data : "", c->mainb.len);
    orn_buf_free(&c->pre);
    orn_buf_free(&c->decls);
    orn_buf_free(&c->defs);
    orn_buf_free(&c->mainb);
    free(c->applied);
    free(c);
    return ok;
}

const OrnCgTarget orn_cg_target_c = {
    .name = "c",
    .begin = c_begin,
    .function = cg_c_function,
    .loop = cg_c_loop,
    .toplevel = c_toplevel,
    .end = c_end,
};

/* ---------------------------------------------------------------- driver */

/* A module runs a loop that is in a statement from byte `from` on or in a fn. */
static bool module_runs(const OrnUnit *u, const OrnNode *loop, uint32_t from)
{
    for (const OrnNode *s = u->program ? u->program->u.block.stmts : NULL; s; s = s->next)
        if (s->span.lo <= loop->span.lo && loop->span.lo < s->span.hi)
            return s->kind == N_FN || s->span.lo >= from;
    return true;
}

bool orn_cg_generate(OrnUnit *u, const OrnPlanSet *plans, const OrnCgTarget *t,
                     const OrnCgOptions *opt, OrnBuf *out)
{
    OrnCgProgram p;
    int errors = u->diags.errors;
    if (!orn_cg_lower(u, plans, opt, &p)) {
        if (u->diags.errors == errors) /* lowering said nothing itself */
            orn_ice(&u->diags, (OrnSpan){0}, "code generation: a parallel_for has no plan");
        return false;
    }
    void *st_ = t->begin(&p, out);
    if (!st_) return false;
    for (int i = 0; i < u->sema.nfns; i++)
        if (u->sema.fns[i]) t->function(st_, u->sema.fns[i]);
    for (int i = 0; i < p.nloops; i++) {
        const OrnLoop *l = u->sema.loops[i];
        if (p.module && l && l->node && !module_runs(u, l->node, p.from)) continue;
        t->loop(st_, &p.loops[i]);
    }
    t->toplevel(st_, u->program);
    bool ok = t->end(st_);
    orn_cg_lower_free(&p);
    return ok;
}
