/* sema_infer.c: float inference for weakly initialised locals, and the driver orn_sema().
 *
 * The rule (docs/language.md, "Float inference"): a local of a parallel_for or fn body
 * whose first assignment stores a weak f64 (a literal, a param or const, ...: weak() in
 * sema_expr.c) is f32 when every later assignment or update of it stores an f32 or a weak
 * value, at least one f32; otherwise f64, as C's rules give. `dd = 0.0` then `dd += t * t`
 * with t f32 makes dd f32; `best = 1e30` then `best = dd` makes best f32 once dd is.
 *
 * Types flow through the whole body (a local declared from dd is f32 when dd is), so the
 * decision is made by sema itself rather than by a second type checker: orn_sema() walks
 * the program silently ("probes") with the set F of declarations typed f32, starting
 * empty, growing F by every candidate that qualifies under F, until F is stable; a last
 * walk with F then fills the unit and reports, so every diagnostic is reported once and
 * names the inferred types. F only grows: typing a variable f32 instead of f64 turns f64
 * results into f32 ones and never the reverse, so each member keeps qualifying, and the
 * loop ends after at most one walk per candidate (errors do not stop it: sema recovers
 * from each, and what it types is typed the same way). A program without candidates is
 * walked twice, once silently.
 *
 * In a probe, the variable itself reads as weak in the value of its own update (x = x * a +
 * t, x = min(x, e)): that is the type the value would have if x were f32, made weak so that
 * x alone is no evidence for f32. A cycle of variables that only feed each other (a = b + t;
 * b = a) stays f64: F grows from evidence, never from assumption. */
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

void orn_sema_infer_decl(Sema *s, OrnNode *n, OrnNode *val, OrnSym *sym)
{
    if (!s->loop && !s->fn) return; /* top-level variables (accumulators) keep C's rules */
    if (sym->type->kind != T_F64 || !orn_sema_weak(s, val)) return;
    for (int i = 0; i < s->nf32decls; i++)
        if (s->f32decls[i] == n) sym->type = orn_type_scalar(s->ty, T_F32);
    OrnSemaCand c = {n, sym, false, false};
    ORN_VPUSH(s->cands, s->ncands, s->capcands, c);
}

OrnSemaCand *orn_sema_cand(Sema *s, const OrnSym *sym)
{
    for (int i = s->ncands - 1; i >= 0; i--)
        if (s->cands[i].sym == sym) return &s->cands[i];
    return NULL;
}

/* An update of candidate c (n: the N_ASSIGN, after its value is checked). Only probes
 * decide; there the variable reads as weak in its own update. */
void orn_sema_infer_update(Sema *s, OrnNode *n, OrnSemaCand *c)
{
    if (!s->probe) return;
    const OrnNode *v = n->u.assign.value;
    /* x = min(x, e) / max(...): what is stored is x or e; e decides */
    if (n->u.assign.op == OP_NONE && v->kind == N_CALL &&
        (v->u.call.builtin == ORN_BI_MIN || v->u.call.builtin == ORN_BI_MAX)) {
        const OrnNode *a = v->u.call.args, *b = a ? a->next : NULL;
        if (a && b && !b->next && a->kind == N_NAME && a->u.name.sym == c->sym)
            v = b;
        else if (a && b && !b->next && b->kind == N_NAME && b->u.name.sym == c->sym)
            v = a;
    }
    const OrnType *t = v->type;
    if (!t || t->kind == T_ERROR) return;
    const OrnSym *saved = s->selfweak;
    s->selfweak = c->sym;
    if (t->kind == T_F32)
        c->f32 = true;
    else if (!orn_sema_weak(s, v))
        c->f64 = true; /* strong f64, or an integer that is not weak */
    s->selfweak = saved;
}

/* Clear what a walk wrote into the nodes, so the next walk starts from the parser's tree
 * (some checks reuse a type already set: eval_args, expect_int). */
static void scrub(const OrnNode *cn, void *ud)
{
    (void)ud;
    OrnNode *n = (OrnNode *)cn; /* the tree is ours: orn_ast_each_child only walks it */
    n->type = NULL;
    switch (n->kind) {
    case N_NAME:
        n->u.name.sym = NULL;
        break;
    case N_CALL:
        n->u.call.builtin = -1;
        n->u.call.sym = NULL;
        break;
    case N_ASSIGN:
        n->u.assign.declares = false;
        break;
    case N_CONST:
    case N_PARAM:
        n->u.decl.sym = NULL;
        break;
    case N_PARFOR:
        n->u.parfor.info = NULL;
        break;
    case N_FN:
        n->u.fn.sym = NULL;
        break;
    case N_ARG:
        n->u.arg.sym = NULL;
        break;
    default:
        break;
    }
    orn_ast_each_child(n, scrub, NULL);
}

static void scrub_program(OrnUnit *u)
{
    OrnNode *prog = u->program;
    if (prog && prog->kind == N_BLOCK) prog = prog->u.block.stmts;
    for (OrnNode *x = prog; x; x = x->next) scrub(x, NULL);
}

bool orn_sema(OrnUnit *u)
{
    int errors0 = u->diags.errors;
    OrnNode **f32 = NULL;
    int nf32 = 0;
    for (bool first = true;; first = false) {
        OrnDiags quiet;
        orn_diags_init(&quiet, u->diags.src, NULL);
        OrnNode **next = NULL;
        int nnext = 0;
        if (!first) scrub_program(u);
        int ncands = orn_sema_walk(u, &quiet, f32, nf32, true, &next, &nnext);
        if (ncands == 0 || nnext == nf32) { /* stable */
            free(next);
            break;
        }
        free(f32);
        f32 = next;
        nf32 = nnext;
    }
    scrub_program(u);
    orn_sema_walk(u, &u->diags, f32, nf32, false, NULL, NULL);
    free(f32);
    return u->diags.errors == errors0;
}
