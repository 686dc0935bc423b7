/* test_sema.c: semantic analysis on programs built from strings: symbols, types, folded
 * constants, loop information (keys, value, accumulators, buffers, callees, outer reads),
 * diagnostics, and robustness on partial trees built by hand. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unit.h"

/* One analysed program and the text of its diagnostics. */
typedef struct Run {
    OrnUnit *u;
    bool ok;
    char *diags;
    size_t diags_len;
} Run;

static Run analyse(const char *src)
{
    Run r = {0};
    FILE *mem = open_memstream(&r.diags, &r.diags_len);
    r.u = orn_unit_new("t.orn", src, strlen(src), mem);
    if (orn_parse(r.u, false) != ORN_PARSE_OK) {
        fflush(mem);
        fprintf(stderr, "test program does not parse:\n%s\n%s\n", src, r.diags);
        r.ok = false;
    } else {
        r.ok = orn_sema(r.u);
    }
    fclose(mem);
    return r;
}

static void done(Run *r)
{
    orn_unit_free(r->u);
    free(r->diags);
}

static bool has(const Run *r, const char *text)
{
    bool found = r->diags && strstr(r->diags, text) != NULL;
    if (!found) fprintf(stderr, "expected diagnostic \"%s\" in:\n%s\n", text, r->diags);
    return found;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static OrnSym *sym(const Run *r, const char *name)
{
    for (int i = 0; i < r->u->sema.nsyms; i++)
        if (strcmp(r->u->sema.syms[i]->name->s, name) == 0) return r->u->sema.syms[i];
    return NULL;
}

static OrnTypeKind kind_of(const Run *r, const char *name)
{
    OrnSym *s = sym(r, name);
    return s && s->type ? s->type->kind : (OrnTypeKind)-1;
}

static bool accum(const OrnLoop *l, const char *name, OrnAccKind kind)
{
    for (int i = 0; i < l->naccums; i++)
        if (strcmp(l->accums[i].sym->name->s, name) == 0) return l->accums[i].kind == kind;
    return false;
}

static bool outer_read(const OrnLoop *l, const char *name)
{
    for (int i = 0; i < l->nouter_reads; i++)
        if (strcmp(l->outer_reads[i]->name->s, name) == 0) return true;
    return false;
}

/* After a successful analysis every expression has a type that is not T_ERROR and every
 * name that is not an element type refers to a symbol (what later passes rely on). */
static int verify(const OrnNode *n, bool expr);

static int verify_list(const OrnNode *n, bool expr)
{
    int bad = 0;
    for (; n; n = n->next) bad += verify(n, expr);
    return bad;
}

static int verify(const OrnNode *n, bool expr)
{
    if (!n) return 0;
    int bad = 0;
    bool is_expr = n->kind <= N_INDEX && n->kind != N_KWARG;
    if (expr && is_expr && (!n->type || n->type->kind == T_ERROR)) {
        fprintf(stderr, "untyped %s at %u:%u\n", orn_node_kind_name(n->kind), n->span.line,
                n->span.col);
        bad++;
    }
    switch (n->kind) {
    case N_NAME:
        if (!n->u.name.sym && !(n->type && n->type->kind == T_TYPENAME)) {
            fprintf(stderr, "unresolved name '%s' at %u:%u\n", n->u.name.id->s, n->span.line,
                    n->span.col);
            bad++;
        }
        break;
    case N_UNARY:
        bad += verify(n->u.unary.e, true);
        break;
    case N_BINARY:
        bad += verify(n->u.binary.l, true) + verify(n->u.binary.r, true);
        break;
    case N_CALL:
        bad += verify_list(n->u.call.args, true);
        break;
    case N_KWARG:
        bad += verify(n->u.kwarg.value, true);
        break;
    case N_INDEX:
        bad += verify(n->u.index.base, true) + verify_list(n->u.index.subs, true);
        break;
    case N_BLOCK:
        bad += verify_list(n->u.block.stmts, false);
        break;
    case N_EXPR:
        bad += verify(n->u.expr_stmt.e, !(n->u.expr_stmt.e->kind == N_CALL));
        break;
    case N_ASSIGN:
        bad += verify(n->u.assign.target, true) + verify(n->u.assign.value, true);
        break;
    case N_CONST:
    case N_PARAM:
        bad += !n->u.decl.sym + verify(n->u.decl.value, true);
        break;
    case N_DIST:
        bad += verify_list(n->u.dist.names, true) + verify(n->u.dist.value, true);
        break;
    case N_IF:
        bad += verify(n->u.if_.cond, true) + verify(n->u.if_.then, false) +
               verify(n->u.if_.els, false);
        break;
    case N_FOR:
        bad += verify(n->u.for_.var, true) + verify(n->u.for_.lo, true) +
               verify(n->u.for_.hi, true) + verify(n->u.for_.body, false);
        break;
    case N_FOREACH:
        bad += verify(n->u.foreach.key, true) + verify(n->u.foreach.value, true) +
               verify(n->u.foreach.iter, true) + verify(n->u.foreach.body, false);
        break;
    case N_WHILE:
        bad += verify(n->u.while_.cond, true) + verify(n->u.while_.body, false);
        break;
    case N_PARFOR:
        bad += !n->u.parfor.info + verify_list(n->u.parfor.keys, true) +
               verify(n->u.parfor.value, true) + verify(n->u.parfor.space, true) +
               verify(n->u.parfor.body, false);
        break;
    case N_RETURN:
        bad += verify(n->u.ret.value, true);
        break;
    case N_FN:
        bad += !n->u.fn.sym + verify_list(n->u.fn.args, false) + verify(n->u.fn.body, false);
        break;
    case N_ARG:
        bad += !n->u.arg.sym;
        break;
    default:
        break;
    }
    return bad;
}

static void test_types(void)
{
    Run r = analyse("a = 1 + 2.5\n"
                    "b = i32(3) * 2\n"
                    "c = f32(1) + 2\n"
                    "d = i64(1) + f32(2)\n"
                    "e = 1 < 2 and not false\n"
                    "s = \"x\"\n"
                    "f = pow(2, 3)\n"
                    "g = pow(f32(2), 3)\n"
                    "h = sqrt(4)\n"
                    "i = sqrt(f32(4))\n"
                    "j = div(i32(7), i32(2))\n"
                    "k = abs(i32(-3))\n"
                    "l = rand()\n"
                    "m = randint(10)\n"
                    "n = zeros(f32, 3, 4)\n"
                    "o = int(2.5) + float(1)\n"
                    "p = min(i32(1), 2)\n");
    CHECK(r.ok);
    CHECK(kind_of(&r, "a") == T_F64);
    CHECK(kind_of(&r, "b") == T_I64);
    CHECK(kind_of(&r, "c") == T_F32);
    CHECK(kind_of(&r, "d") == T_F32);
    CHECK(kind_of(&r, "e") == T_BOOL);
    CHECK(kind_of(&r, "s") == T_STR);
    CHECK(kind_of(&r, "f") == T_F64);
    CHECK(kind_of(&r, "g") == T_F32);
    CHECK(kind_of(&r, "h") == T_F64);
    CHECK(kind_of(&r, "i") == T_F32);
    CHECK(kind_of(&r, "j") == T_I32);
    CHECK(kind_of(&r, "k") == T_I32);
    CHECK(kind_of(&r, "l") == T_F64);
    CHECK(kind_of(&r, "m") == T_I64);
    CHECK(kind_of(&r, "o") == T_F64);
    CHECK(kind_of(&r, "p") == T_I64);
    OrnSym *n = sym(&r, "n");
    CHECK(n && n->type->kind == T_ARRAY && n->type->elem == T_F32 && n->type->ndims == 2 &&
          !n->type->dist);
    /* every expression node got a type and the declaring assignments are marked */
    OrnNode *first = r.u->program->u.block.stmts;
    CHECK(first->kind == N_ASSIGN && first->u.assign.declares);
    CHECK(first->u.assign.value->type->kind == T_F64);
    CHECK(first->u.assign.value->u.binary.l->type->kind == T_I64);
    CHECK(first->u.assign.target->u.name.sym == sym(&r, "a"));
    done(&r);

    /* assignments keep the first type, with the widening/same-kind conversions */
    r = analyse("x = 1\nx = i32(2)\ny = 1.0\ny = 2\ny = f32(1)\nz = f32(0)\nz = 1.5\n"
                "x += 1\ny *= 2\nx = 0\n");
    CHECK(r.ok);
    CHECK(kind_of(&r, "x") == T_I64 && kind_of(&r, "y") == T_F64 && kind_of(&r, "z") == T_F32);
    int declares = 0;
    for (OrnNode *s = r.u->program->u.block.stmts; s; s = s->next)
        declares += s->kind == N_ASSIGN && s->u.assign.declares;
    CHECK(declares == 3);
    done(&r);
}

static void test_symbols(void)
{
    Run r = analyse("param n = 10\n"
                    "const K = 4\n"
                    "dist A = zeros(f64, n, K)\n"
                    "x = g(1.0)\n"
                    "fn g(a: f64) -> f64\n    return a * 2.0\nend\n"
                    "extern fn lgamma(v: f64) -> f64\n"
                    "for i in 0..n\n    t = i\nend\n");
    CHECK(r.ok);
    CHECK(verify(r.u->program, false) == 0);
    OrnSema *s = &r.u->sema;
    for (int i = 0; i < s->nsyms; i++) CHECK(s->syms[i]->id == i);
    /* fns and externs are declared first, in source order */
    CHECK(s->nfns == 2);
    CHECK(s->syms[0]->kind == SYM_FN && strcmp(s->syms[0]->name->s, "g") == 0);
    CHECK(s->syms[1]->kind == SYM_EXTERN && strcmp(s->syms[1]->name->s, "lgamma") == 0);
    CHECK(s->fns[0] == s->syms[0]->decl && s->fns[1] == s->syms[1]->decl);
    CHECK(s->syms[0]->type->kind == T_F64);
    OrnSym *n = sym(&r, "n"), *k = sym(&r, "K"), *a = sym(&r, "A"), *t = sym(&r, "t");
    CHECK(n && n->kind == SYM_PARAM && n->global && n->cval.kind == T_I64 && n->cval.i == 10);
    CHECK(k && k->kind == SYM_CONST && k->cval.i == 4);
    CHECK(a && a->kind == SYM_DIST && a->type->dist && a->type->ndims == 2);
    CHECK(t && t->kind == SYM_VAR && !t->global && t->type->kind == T_I64);
    OrnSym *i = sym(&r, "i");
    CHECK(i && i->kind == SYM_LOOPVAR && i->type->kind == T_I64 && i->decl->kind == N_FOR);
    OrnSym *arg = sym(&r, "a");
    CHECK(arg && arg->kind == SYM_ARG && arg->fn == s->fns[0]);
    CHECK(sym(&r, "v") && sym(&r, "v")->kind == SYM_ARG);
    /* the call before the definition resolves to the fn */
    OrnNode *call = r.u->program->u.block.stmts->next->next->next->u.assign.value;
    CHECK(call->kind == N_CALL && call->u.call.sym == s->syms[0] && call->u.call.builtin == -1);
    done(&r);
}

static void test_consts(void)
{
    Run r = analyse("const A = 2 * 32 + div(7, 2) - mod(-7, 2)\n"
                    "const B = f32(0.1)\n"
                    "const C = not (3 > 4) and true\n"
                    "const D = max(3, 4.5)\n"
                    "const E = \"path\"\n"
                    "const F = i32(-2.9)\n"
                    "const G = A * 2\n"
                    "const H = -A\n"
                    "const I = abs(-3) + min(2, 1)\n"
                    "const J = 1.5e1 / 4.0\n"
                    "param p = -0.5\n"
                    "param q = true\n"
                    "param r = \"s\"\n"
                    "param t = -3\n");
    CHECK(r.ok);
    OrnSym *s;
    CHECK((s = sym(&r, "A")) && s->cval.kind == T_I64 && s->cval.i == 68);
    CHECK((s = sym(&r, "B")) && s->cval.kind == T_F32 && s->cval.f == (double)0.1f &&
          s->type->kind == T_F32);
    CHECK((s = sym(&r, "C")) && s->cval.kind == T_BOOL && s->cval.b);
    CHECK((s = sym(&r, "D")) && s->cval.kind == T_F64 && s->cval.f == 4.5);
    CHECK((s = sym(&r, "E")) && s->cval.kind == T_STR && strcmp(s->cval.s, "path") == 0 &&
          s->cval.slen == 4);
    CHECK((s = sym(&r, "F")) && s->cval.kind == T_I32 && s->cval.i == -2);
    CHECK((s = sym(&r, "G")) && s->cval.i == 136);
    CHECK((s = sym(&r, "H")) && s->cval.i == -68);
    CHECK((s = sym(&r, "I")) && s->cval.i == 4);
    CHECK((s = sym(&r, "J")) && s->cval.f == 3.75);
    CHECK((s = sym(&r, "p")) && s->cval.kind == T_F64 && s->cval.f == -0.5 &&
          s->type->kind == T_F64);
    CHECK((s = sym(&r, "q")) && s->cval.kind == T_BOOL && s->cval.b);
    CHECK((s = sym(&r, "r")) && s->cval.kind == T_STR && s->type->kind == T_STR);
    CHECK((s = sym(&r, "t")) && s->cval.kind == T_I64 && s->cval.i == -3);
    done(&r);

    r = analyse("const A = 9223372036854775807 + 1\n"
                "const B = div(1, 0)\n"
                "const C = 1.0 / 0.0\n"
                "x = 3\n"
                "const D = x + 1\n"
                "param p = 2 * 3\n"
                "const E = rand()\n"
                "const F = i32(3000000000)\n");
    CHECK(!r.ok);
    CHECK(has(&r, "integer overflow in constant expression"));
    CHECK(count_of(r.diags, "division by zero in constant expression") == 2);
    CHECK(has(&r, "'x' is not a constant"));
    CHECK(has(&r, "a param default must be a literal"));
    CHECK(has(&r, "'rand' cannot be used in a constant expression"));
    CHECK(has(&r, "value out of range for i32"));
    CHECK(r.u->diags.errors == 7);
    done(&r);
}

static const char sgd_mf[] = "param rank = 10\n"
                             "param lam = 0.05\n"
                             "dist ratings = load_triplets(\"r.txt\")\n"
                             "dist W = randn(f32, rank, rows(ratings), seed = 1)\n"
                             "dist H = randn(f32, rank, cols(ratings), seed = 2)\n"
                             "lr = 0.02\n"
                             "loss = 0.0\n"
                             "worst = 0.0\n"
                             "best = 1.0e30\n"
                             "prod = 1.0\n"
                             "n = 0\n"
                             "parallel_for (u, i), r in ratings\n"
                             "    e = r - dot(W[:, u], H[:, i])\n"
                             "    loss += e * e\n"
                             "    worst = max(worst, abs(e))\n"
                             "    best = min(e * e, best)\n"
                             "    prod *= 1.0\n"
                             "    n += 1\n"
                             "    W[:, u] += lr * (e * H[:, i] - lam * W[:, u])\n"
                             "    H[:, i] += lr * (e * W[:, u] - lam * H[:, i])\n"
                             "    r = e\n"
                             "end\n"
                             "printf(\"%f %d\\n\", loss, n)\n";

static void test_loop_info(void)
{
    Run r = analyse(sgd_mf);
    CHECK(r.ok);
    CHECK(verify(r.u->program, false) == 0);
    CHECK(r.u->sema.nloops == 1);
    OrnLoop *l = r.u->sema.loops[0];
    CHECK(l->index == 0 && l->node->kind == N_PARFOR && l->node->u.parfor.info == l);
    CHECK(l->space == sym(&r, "ratings"));
    CHECK(l->nkeys == 2);
    CHECK(l->keys[0] == sym(&r, "u") && l->keys[1] == sym(&r, "i"));
    CHECK(l->keys[0]->kind == SYM_KEY && l->keys[0]->key_index == 0 && l->keys[1]->key_index == 1 &&
          l->keys[0]->type->kind == T_I64);
    CHECK(l->value && l->value == sym(&r, "r") && l->value->kind == SYM_VALUE &&
          l->value->type->kind == T_F32);
    CHECK(l->naccums == 5);
    CHECK(accum(l, "loss", ACC_SUM));
    CHECK(accum(l, "worst", ACC_MAX));
    CHECK(accum(l, "best", ACC_MIN));
    CHECK(accum(l, "prod", ACC_PROD));
    CHECK(accum(l, "n", ACC_SUM));
    /* in order of first update */
    CHECK(strcmp(l->accums[0].sym->name->s, "loss") == 0);
    CHECK(strcmp(l->accums[4].sym->name->s, "n") == 0);
    CHECK(l->accums[0].first.line == 14);
    CHECK(outer_read(l, "lr") && outer_read(l, "lam"));
    CHECK(!outer_read(l, "loss") && !outer_read(l, "worst") && !outer_read(l, "W"));
    CHECK(l->nouter_reads == 2);
    CHECK(l->nbuffers == 0 && l->ncallees == 0);
    /* e is private to the iteration */
    OrnSym *e = sym(&r, "e");
    CHECK(e && e->parfor == l->node && !e->global);
    /* the view arithmetic is typed element-wise */
    OrnNode *body = l->node->u.parfor.body->u.block.stmts;
    OrnNode *dot = body->u.assign.value->u.binary.r;
    CHECK(dot->kind == N_CALL && dot->u.call.builtin == ORN_BI_DOT && dot->type->kind == T_F32);
    OrnNode *view = dot->u.call.args;
    CHECK(view->type->kind == T_VIEW && view->type->elem == T_F32 && view->type->dist);
    CHECK(view->u.index.base->u.name.sym == sym(&r, "W"));
    OrnNode *wup = body->next->next->next->next->next->next;
    CHECK(wup->kind == N_ASSIGN && wup->u.assign.target->type->kind == T_VIEW);
    /* lr and lam are weak floats: f32 view arithmetic stays f32 */
    CHECK(wup->u.assign.value->type->kind == T_VIEW && wup->u.assign.value->type->elem == T_F32);
    done(&r);
}

static void test_buffers_and_callees(void)
{
    Run r = analyse("dist X, y = load_libsvm(\"a.svm\")\n"
                    "dist w = zeros(f32, cols(X))\n"
                    "dist dw = buffer(w, apply = add, flush_every = 64)\n"
                    "dist c = zeros(i64, 4)\n"
                    "dist dc = buffer(c)\n"
                    "step = 0.1\n"
                    "fn add(old: f32, delta: f32) -> f32\n    return old + delta\nend\n"
                    "fn g(f: i64, v: f32)\n    dw[f] -= step * v\n    h(f)\nend\n"
                    "fn h(f: i64)\n    dc[0] += 1\n    h(f)\nend\n"
                    "fn unused() -> f64\n    return sum(w)\nend\n"
                    "correct = 0\n"
                    "parallel_for n, label in y\n"
                    "    z = 0.0\n"
                    "    for (f, x) in X[n, :]\n"
                    "        z += x * w[f]\n"
                    "        g(f, x)\n"
                    "    end\n"
                    "    if (z > 0.0) == (label > 0)\n"
                    "        correct += 1\n"
                    "    end\n"
                    "end\n");
    CHECK(r.ok);
    CHECK(verify(r.u->program, false) == 0);
    OrnLoop *l = r.u->sema.loops[0];
    CHECK(l->space == sym(&r, "y") && l->nkeys == 1);
    CHECK(l->ncallees == 2);
    CHECK(l->callees[0] == sym(&r, "g")->decl && l->callees[1] == sym(&r, "h")->decl);
    CHECK(l->nbuffers == 2);
    CHECK(l->buffers[0] == sym(&r, "dw") && l->buffers[1] == sym(&r, "dc"));
    CHECK(sym(&r, "dw")->type->kind == T_BUFFER &&
          sym(&r, "dw")->type->target == sym(&r, "w")->type);
    CHECK(outer_read(l, "step")); /* read by a callee */
    CHECK(accum(l, "correct", ACC_SUM));
    CHECK(sym(&r, "X")->type->sparse && sym(&r, "X")->type->ndims == 2);
    CHECK(!sym(&r, "y")->type->sparse && sym(&r, "y")->type->ndims == 1);
    OrnSym *x = sym(&r, "x");
    CHECK(x && x->kind == SYM_LOOPVAR && x->type->kind == T_F32);
    CHECK(sym(&r, "dw")->assigned_in_fn);
    done(&r);
}

/* Buffers of 2-D arrays take element-wise view updates. */
static void test_buffer_views(void)
{
    Run r = analyse("dist W = zeros(f32, 4, 8)\n"
                    "dist Wb = buffer(W)\n"
                    "dist R = load_triplets(\"r\")\n"
                    "parallel_for (u, i), v in R\n"
                    "    Wb[:, u] += v * W[:, i]\n"
                    "    Wb[0, u] -= 1\n"
                    "end\n");
    CHECK(r.ok);
    CHECK(verify(r.u->program, false) == 0);
    OrnLoop *l = r.u->sema.loops[0];
    CHECK(l->nbuffers == 1 && l->buffers[0] == sym(&r, "Wb"));
    OrnNode *st = l->node->u.parfor.body->u.block.stmts;
    CHECK(st->u.assign.target->type->kind == T_VIEW);
    CHECK(st->u.assign.target->u.index.base->u.name.sym == sym(&r, "Wb"));
    done(&r);
}

static void test_loop_errors(void)
{
    Run r = analyse("dist A = zeros(f64, 4, 4)\n"
                    "dist b = zeros(f64, 4)\n"
                    "dist bb = buffer(b)\n"
                    "loc = zeros(f64, 4)\n"
                    "loss = 0.0\n"
                    "s = 0.0\n"
                    "t = 1.0\n"
                    "m = 1.0\n"
                    "fn coll() -> f64\n    return sum(A)\nend\n"
                    "parallel_for (i, j), v in A\n"
                    "    loss = v\n" /* not a reduction */
                    "    s += v\n"
                    "    x = s\n" /* reads an accumulator */
                    "    t += v\n"
                    "    t *= v\n"     /* mixes kinds */
                    "    q = bb[i]\n"  /* reads a buffer */
                    "    loc[i] = v\n" /* element store to an outer local array */
                    "    y = coll()\n" /* collective through a call */
                    "    i = 0\n"      /* key */
                    "    m -= 1.0\n"   /* -= is not a reduction */
                    "end\n"
                    "parallel_for k in loc\nend\n"
                    "parallel_for (i) in A\nend\n");
    CHECK(!r.ok);
    CHECK(count_of(r.diags, "is written inside parallel_for but is not a reduction") == 3);
    CHECK(has(&r, "'s' is accumulated by this parallel_for and cannot be read inside it"));
    CHECK(has(&r, "'t' is updated with both '+=' and '*=' inside parallel_for"));
    CHECK(has(&r, "buffer 'bb' cannot be read inside parallel_for"));
    CHECK(has(&r, "'coll' cannot be called inside parallel_for because it uses collective 'sum'"));
    CHECK(has(&r, "cannot assign to parallel_for key 'i'"));
    CHECK(has(&r, "parallel_for iterates over 'loc', which is not a dist array"));
    CHECK(has(&r, "'A' has 2 dimensions but the loop has 1 key"));
    CHECK(has(&r, "note: use 'loss += ...' to accumulate across iterations"));
    CHECK(r.u->diags.errors == 10);
    done(&r);
}

static void test_scopes(void)
{
    Run r = analyse("g = 1.0\n"
                    "fn f(g: f64) -> f64\n    return g\nend\n"         /* a param may reuse g */
                    "fn f2() -> f64\n    g = 2.0\n    return g\nend\n" /* so may a local */
                    "if true\n    inner = 1\nend\n"
                    "for i in 0..3\nend\n"
                    "for i in 0..3\nend\n"); /* each loop has its own i */
    CHECK(r.ok);
    done(&r);

    r = analyse("if true\n    inner = 1\nend\n"
                "x = inner\n"
                "y = later\n"
                "later = 2\n"
                "const K = 1\n"
                "for K in 0..2\nend\n"
                "fn f()\n    sum = 1\nend\n"
                "int = 3\n"
                "c = 1\n"
                "fn h()\n    c += 1\nend\n"
                "fn h2()\n    d = c\n    c = 2\nend\n"
                "const K = 2\n"
                "fn f()\nend\n");
    CHECK(!r.ok);
    CHECK(has(&r, "unknown name 'inner'"));
    CHECK(has(&r, "'inner' is declared here, in a block that has ended"));
    CHECK(has(&r, "unknown name 'later'"));
    CHECK(has(&r, "'later' is declared later, here; names must be declared before use"));
    CHECK(has(&r, "'K' is already declared in an enclosing scope"));
    CHECK(has(&r, "'sum' is a built-in function and cannot be redefined"));
    CHECK(has(&r, "'int' is a type name and cannot be redefined"));
    CHECK(count_of(r.diags, "cannot assign to top-level variable 'c' inside fn") == 2);
    CHECK(count_of(r.diags, "is already declared\n") == 2);
    done(&r);
}

static void test_misc_errors(void)
{
    Run r = analyse("x = 5 / 2\n"
                    "lsos = 1.0\n"
                    "y = loss\n"
                    "z = sqroot(2.0)\n"
                    "if 1\nend\n"
                    "dist X = load_libsvm(\"a\")\n"
                    "dist v = zeros(f32, 3)\n"
                    "w = v[:]\n"
                    "printf(\"%d %s\\n\", 1.5)\n"
                    "fn f(a: f64) -> f64\n    if a > 0.0\n        return a\n    end\nend\n"
                    "u = f(1.0, 2.0)\n");
    CHECK(!r.ok);
    CHECK(has(&r, "integer division: use div(a, b) or convert an operand to float"));
    CHECK(has(&r, "unknown name 'loss'"));
    CHECK(has(&r, "did you mean 'lsos'?"));
    CHECK(has(&r, "did you mean 'sqrt'?"));
    CHECK(has(&r, "a condition must be bool, found i64"));
    CHECK(has(&r, "'load_libsvm' returns two arrays"));
    CHECK(has(&r, "a ':' view needs a 2-D array, but 'v' has 1 dimension"));
    CHECK(has(&r, "printf conversion '%d' needs an integer, but the argument is f64"));
    CHECK(has(&r, "missing return: fn 'f' must return f64 on every path"));
    CHECK(has(&r, "'f' takes 1 argument but 2 were given"));
    CHECK(r.u->diags.errors == 10); /* with the printf argument count */
    /* spans are precise: the integer division is at 1:5 */
    CHECK(has(&r, "t.orn:1:5: error: integer division"));
    done(&r);
}

static void test_eval_const(void)
{
    Run r = analyse("const K = 3\n"
                    "dist A = zeros(f64, 100)\n"
                    "parallel_for k, a in A\n"
                    "    a = A[2 * K + 1]\n"
                    "    b = A[k]\n"
                    "end\n");
    CHECK(r.ok);
    OrnNode *body = r.u->sema.loops[0]->node->u.parfor.body->u.block.stmts;
    OrnNode *sub = body->u.assign.value->u.index.subs;
    OrnConstVal v;
    CHECK(orn_sema_eval_const(sub, &v) && v.kind == T_I64 && v.i == 7);
    OrnNode *ksub = body->next->u.assign.value->u.index.subs;
    CHECK(!orn_sema_eval_const(ksub, &v));
    CHECK(ksub->u.name.sym->kind == SYM_KEY);
    CHECK(!orn_sema_eval_const(NULL, &v));
    done(&r);
}

static OrnNode *node(OrnUnit *u, OrnNodeKind k)
{
    OrnSpan sp = {0, 0, 1, 1};
    return orn_node_new(u, k, sp);
}

/* Trees with missing children, as a parser with error recovery might leave: sema must not
 * crash on any of them. */
static void test_partial_trees(void)
{
    for (int k = N_BLOCK; k <= N_FN; k++) {
        OrnUnit *u = orn_unit_new("p.orn", "x", 1, NULL);
        OrnNode *prog = node(u, N_BLOCK);
        OrnNode *s = node(u, (OrnNodeKind)k);
        prog->u.block.stmts = s;
        /* a second statement of every expression kind with no children */
        OrnNode *tail = s;
        for (int e = N_INT; e <= N_SLICE; e++) {
            OrnNode *x = node(u, N_EXPR);
            x->u.expr_stmt.e = node(u, (OrnNodeKind)e);
            tail->next = x;
            tail = x;
        }
        u->program = prog;
        orn_sema(u);
        CHECK(u->sema.syms != NULL || u->sema.nsyms == 0);
        orn_unit_free(u);
    }
    /* statements whose children are present but empty */
    OrnUnit *u = orn_unit_new("p.orn", "x", 1, NULL);
    const OrnName *x = orn_intern_cstr(u->names, "x");
    OrnNode *prog = node(u, N_BLOCK);
    OrnNode *pf = node(u, N_PARFOR);
    pf->u.parfor.keys = node(u, N_NAME);
    pf->u.parfor.keys->u.name.id = x;
    pf->u.parfor.space = node(u, N_INDEX);
    pf->u.parfor.body = node(u, N_BLOCK);
    OrnNode *as = node(u, N_ASSIGN);
    as->u.assign.target = node(u, N_INDEX);
    as->u.assign.value = node(u, N_CALL);
    pf->u.parfor.body->u.block.stmts = as;
    OrnNode *fn = node(u, N_FN);
    fn->u.fn.args = node(u, N_ARG);
    fn->u.fn.ret = node(u, N_TYPE);
    fn->u.fn.body = node(u, N_BLOCK);
    pf->next = fn;
    OrnNode *d = node(u, N_DIST);
    d->u.dist.names = node(u, N_NAME);
    d->u.dist.value = node(u, N_CALL);
    fn->next = d;
    prog->u.block.stmts = pf;
    u->program = prog;
    CHECK(!orn_sema(u) || true);
    orn_unit_free(u);
    /* no program at all */
    u = orn_unit_new("p.orn", "", 0, NULL);
    CHECK(orn_sema(u));
    CHECK(u->sema.nsyms == 0 && u->sema.nloops == 0);
    orn_unit_free(u);
}

/* Every accepted golden program (ok_*.orn in dir) analyses cleanly and fully. */
static void test_accepted_programs(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "ok_", 3) != 0 || len < 5 || strcmp(e->d_name + len - 4, ".orn"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f) continue;
        char *text = NULL;
        size_t cap = 0, got = 0, k;
        do {
            cap = cap ? 2 * cap : 65536;
            text = realloc(text, cap + 1);
            k = fread(text + got, 1, cap - got, f);
            got += k;
        } while (got == cap);
        fclose(f);
        text[got] = 0;
        Run r = analyse(text);
        if (!r.ok) fprintf(stderr, "%s:\n%s", path, r.diags);
        CHECK(r.ok);
        CHECK(verify(r.u->program, false) == 0);
        for (int i = 0; i < r.u->sema.nloops; i++) {
            OrnLoop *l = r.u->sema.loops[i];
            CHECK(l->index == i && l->space && l->nkeys == l->space->type->ndims);
            CHECK(!l->value || l->value->type->kind == l->space->type->elem);
        }
        done(&r);
        free(text);
        n++;
    }
    closedir(d);
    CHECK(n >= 5);
}

int main(int argc, char **argv)
{
    test_types();
    test_symbols();
    test_consts();
    test_loop_info();
    test_buffers_and_callees();
    test_buffer_views();
    test_loop_errors();
    test_scopes();
    test_misc_errors();
    test_eval_const();
    test_partial_trees();
    if (argc > 1) test_accepted_programs(argv[1]);
    return check_report("test_sema");
}
