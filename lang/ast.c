/* ast.c: node construction, names of kinds and operators, and the --emit=ast dump.
 *
 * The dump is part of the test surface (tests/golden/ast): it must be deterministic and
 * change only when the tree does. One node per line, indented two spaces per level:
 *     <label: ><kind> <line>:<col>[ <details>]
 * where the label names the role of a child when the kind alone does not say it
 * ("cond:", "then:", "else:", "body:", ...). Strings are printed quoted with C-style
 * escapes and \xNN for bytes outside printable ASCII, so the dump is always plain text. */
#include "ast.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "unit.h"

static const char *const kind_names[N__COUNT] = {
#define X(k, s) [k] = s,
#include "ast.def"
#undef X
};

OrnNode *orn_node_new(OrnUnit *u, OrnNodeKind kind, OrnSpan span)
{
    OrnNode *n = orn_arena_alloc(u->arena, sizeof *n);
    n->kind = kind;
    n->span = span;
    return n;
}

const char *orn_node_kind_name(OrnNodeKind kind)
{
    return (unsigned)kind < N__COUNT ? kind_names[kind] : "?";
}

const char *orn_op_name(OrnOp op)
{
    switch (op) {
    case OP_NONE:
        return "";
    case OP_ADD:
        return "+";
    case OP_SUB:
        return "-";
    case OP_MUL:
        return "*";
    case OP_DIV:
        return "/";
    case OP_EQ:
        return "==";
    case OP_NE:
        return "!=";
    case OP_LT:
        return "<";
    case OP_LE:
        return "<=";
    case OP_GT:
        return ">";
    case OP_GE:
        return ">=";
    case OP_AND:
        return "and";
    case OP_OR:
        return "or";
    case OP_NEG:
        return "-";
    case OP_NOT:
        return "not";
    }
    return "?";
}

int orn_list_len(const OrnNode *list)
{
    int n = 0;
    for (; list; list = list->next) n++;
    return n;
}

/* ---- dump -------------------------------------------------------------------------- */

static void put_quoted(FILE *out, const char *s, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (c < 0x20 || c >= 0x7f)
                fprintf(out, "\\x%02x", c);
            else
                fputc(c, out);
        }
    }
    fputc('"', out);
}

/* The shortest form that reads back as the same double, always with a '.' or an
 * exponent so that it reads as a float ("5.0", not "5"); plain decimals ("300.0") unless
 * the magnitude needs an exponent. */
static void put_float(FILE *out, double v)
{
    char buf[400];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    double mag = v < 0 ? -v : v;
    if (strchr(buf, 'e') && mag >= 1e-5 && mag < 1e16) {
        for (int dec = 1; dec <= 25; dec++) {
            snprintf(buf, sizeof buf, "%.*f", dec, v);
            if (strtod(buf, NULL) == v) break;
        }
    }
    fputs(buf, out);
    if (!strpbrk(buf, ".eEni")) fputs(".0", out);
}

static void dump(FILE *out, const OrnNode *n, int depth, const char *label);

static void dump_list(FILE *out, const OrnNode *list, int depth, const char *label)
{
    for (; list; list = list->next) dump(out, list, depth, label);
}

static void dump(FILE *out, const OrnNode *n, int depth, const char *label)
{
    if (!n) return;
    fprintf(out, "%*s", depth * 2, "");
    if (label) fprintf(out, "%s: ", label);
    if (n->kind == N_FN && n->u.fn.is_extern) fputs("extern ", out);
    fprintf(out, "%s %u:%u", orn_node_kind_name(n->kind), n->span.line, n->span.col);
    int d = depth + 1;
    switch (n->kind) {
    case N_INT:
        fprintf(out, " %" PRId64 "\n", n->u.ilit.v);
        break;
    case N_FLOAT:
        fputc(' ', out);
        put_float(out, n->u.flit.v);
        fputc('\n', out);
        break;
    case N_STR:
        fputc(' ', out);
        put_quoted(out, n->u.slit.s, n->u.slit.len);
        fputc('\n', out);
        break;
    case N_BOOL:
        fprintf(out, " %s\n", n->u.blit.v ? "true" : "false");
        break;
    case N_NAME:
        fprintf(out, " %s\n", n->u.name.id->s);
        break;
    case N_UNARY:
        fprintf(out, " %s\n", orn_op_name(n->u.unary.op));
        dump(out, n->u.unary.e, d, NULL);
        break;
    case N_BINARY:
        fprintf(out, " %s\n", orn_op_name(n->u.binary.op));
        dump(out, n->u.binary.l, d, NULL);
        dump(out, n->u.binary.r, d, NULL);
        break;
    case N_CALL:
        fprintf(out, " %s\n", n->u.call.id->s);
        dump_list(out, n->u.call.args, d, NULL);
        break;
    case N_KWARG:
        fprintf(out, " %s\n", n->u.kwarg.id->s);
        dump(out, n->u.kwarg.value, d, NULL);
        break;
    case N_INDEX:
        fputc('\n', out);
        dump(out, n->u.index.base, d, "base");
        dump_list(out, n->u.index.subs, d, "sub");
        break;
    case N_SLICE:
    case N_BREAK:
    case N_CONTINUE:
        fputc('\n', out);
        break;
    case N_BLOCK:
        fputc('\n', out);
        dump_list(out, n->u.block.stmts, d, NULL);
        break;
    case N_EXPR:
        fputc('\n', out);
        dump(out, n->u.expr_stmt.e, d, NULL);
        break;
    case N_ASSIGN:
        fprintf(out, " %s=\n", orn_op_name(n->u.assign.op));
        dump(out, n->u.assign.target, d, "target");
        dump(out, n->u.assign.value, d, "value");
        break;
    case N_CONST:
    case N_PARAM:
        fprintf(out, " %s\n", n->u.decl.id->s);
        dump(out, n->u.decl.value, d, NULL);
        break;
    case N_DIST:
        fputc('\n', out);
        dump_list(out, n->u.dist.names, d, "name");
        dump(out, n->u.dist.value, d, "value");
        break;
    case N_IF:
        fputc('\n', out);
        dump(out, n->u.if_.cond, d, "cond");
        dump(out, n->u.if_.then, d, "then");
        dump(out, n->u.if_.els, d, "else");
        break;
    case N_FOR:
        fputc('\n', out);
        dump(out, n->u.for_.var, d, "var");
        dump(out, n->u.for_.lo, d, "lo");
        dump(out, n->u.for_.hi, d, "hi");
        dump(out, n->u.for_.body, d, "body");
        break;
    case N_FOREACH:
        fputc('\n', out);
        dump(out, n->u.foreach.key, d, "key");
        dump(out, n->u.foreach.value, d, "value");
        dump(out, n->u.foreach.iter, d, "iter");
        dump(out, n->u.foreach.body, d, "body");
        break;
    case N_WHILE:
        fputc('\n', out);
        dump(out, n->u.while_.cond, d, "cond");
        dump(out, n->u.while_.body, d, "body");
        break;
    case N_PARFOR:
        if (n->u.parfor.ordered)
            fprintf(out, " @ordered(%u:%u)", n->u.parfor.ordered_span.line,
                    n->u.parfor.ordered_span.col);
        if (n->u.parfor.gpu)
            fprintf(out, " @gpu(%u:%u)", n->u.parfor.gpu_span.line, n->u.parfor.gpu_span.col);
        if (n->u.parfor.keys_paren) fputs(" (keys)", out);
        fputc('\n', out);
        dump_list(out, n->u.parfor.keys, d, "key");
        dump(out, n->u.parfor.value, d, "value");
        dump(out, n->u.parfor.space, d, "space");
        dump(out, n->u.parfor.body, d, "body");
        break;
    case N_RETURN:
        fputc('\n', out);
        dump(out, n->u.ret.value, d, NULL);
        break;
    case N_FN:
        fprintf(out, " %s", n->u.fn.id->s);
        if (n->u.fn.lib) {
            fputs(" lib=", out);
            put_quoted(out, n->u.fn.lib, strlen(n->u.fn.lib));
        }
        fputc('\n', out);
        dump_list(out, n->u.fn.args, d, NULL);
        dump(out, n->u.fn.ret, d, "ret");
        dump(out, n->u.fn.body, d, "body");
        break;
    case N_ARG:
        fprintf(out, " %s\n", n->u.arg.id->s);
        dump(out, n->u.arg.type, d, NULL);
        break;
    case N_TYPE:
        fprintf(out, " %s\n", n->u.type.id->s);
        break;
    case N__COUNT:
        fputc('\n', out);
        break;
    }
}

void orn_ast_dump(FILE *out, const OrnNode *root)
{
    dump(out, root, 0, NULL);
}

static void each(const OrnNode *n, void (*f)(const OrnNode *, void *), void *ud)
{
    if (n) f(n, ud);
}

static void each_list(const OrnNode *l, void (*f)(const OrnNode *, void *), void *ud)
{
    for (; l; l = l->next) f(l, ud);
}

void orn_ast_each_child(const OrnNode *n, void (*f)(const OrnNode *child, void *ud), void *ud)
{
    if (!n) return;
    switch (n->kind) {
    case N_UNARY:
        each(n->u.unary.e, f, ud);
        break;
    case N_BINARY:
        each(n->u.binary.l, f, ud);
        each(n->u.binary.r, f, ud);
        break;
    case N_CALL:
        each_list(n->u.call.args, f, ud);
        break;
    case N_KWARG:
        each(n->u.kwarg.value, f, ud);
        break;
    case N_INDEX:
        each(n->u.index.base, f, ud);
        each_list(n->u.index.subs, f, ud);
        break;
    case N_BLOCK:
        each_list(n->u.block.stmts, f, ud);
        break;
    case N_EXPR:
        each(n->u.expr_stmt.e, f, ud);
        break;
    case N_ASSIGN:
        each(n->u.assign.target, f, ud);
        each(n->u.assign.value, f, ud);
        break;
    case N_CONST:
    case N_PARAM:
        each(n->u.decl.value, f, ud);
        break;
    case N_DIST:
        each_list(n->u.dist.names, f, ud);
        each(n->u.dist.value, f, ud);
        break;
    case N_IF:
        each(n->u.if_.cond, f, ud);
        each(n->u.if_.then, f, ud);
        each(n->u.if_.els, f, ud);
        break;
    case N_FOR:
        each(n->u.for_.var, f, ud);
        each(n->u.for_.lo, f, ud);
        each(n->u.for_.hi, f, ud);
        each(n->u.for_.body, f, ud);
        break;
    case N_FOREACH:
        each(n->u.foreach.key, f, ud);
        each(n->u.foreach.value, f, ud);
        each(n->u.foreach.iter, f, ud);
        each(n->u.foreach.body, f, ud);
        break;
    case N_WHILE:
        each(n->u.while_.cond, f, ud);
        each(n->u.while_.body, f, ud);
        break;
    case N_PARFOR:
        each_list(n->u.parfor.keys, f, ud);
        each(n->u.parfor.value, f, ud);
        each(n->u.parfor.space, f, ud);
        each(n->u.parfor.body, f, ud);
        break;
    case N_RETURN:
        each(n->u.ret.value, f, ud);
        break;
    case N_FN:
        each_list(n->u.fn.args, f, ud);
        each(n->u.fn.ret, f, ud);
        each(n->u.fn.body, f, ud);
        break;
    case N_ARG:
        each(n->u.arg.type, f, ud);
        break;
    default:
        break;
    }
}
