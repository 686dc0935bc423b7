/* c_hold.c: top-level loops that read dist arrays element by element.
 *
 * Top-level code runs on every rank alike, and each read of a dist array's element there is
 * a collective (dsm/array.c, orn_dsm_get). A top-level `for`, `while` or `for (k, v) in`
 * whose body writes no dist array, nor any fn it calls (cg_may_write), holds the dense dist
 * arrays it and those fns read for its duration: their reads are then served from a whole copy once
 * they have cost about as much as one (dsm/held.c, up to $ORN_HELD_MAX bytes) -- copying a 3000 x
 * 40 array into a local one element by element at -n 3 went from 120,000 collectives to 16 and one
 * allgather. The hold is a variable with a cleanup (ORN_STD_HELD): it ends with the
 * loop's scope however the scope is left (break, return; not a REPL error's longjmp:
 * orn_dsm_release_all). Loops inside a held loop hold nothing more; a fn's own loops hold
 * again (holds nest). */
#include "emit_c_int.h"

#define CG_MAXHOLD 16

/* The body of the fn a call calls, or NULL (a built-in, an extern: C code that sees no dist
 * array), with *opaque set where the callee cannot be looked into (deeper than FN_DEPTH
 * calls: recursion). */
#define FN_DEPTH 4
static const OrnNode *callee_body(const OrnNode *n, int depth, bool *opaque)
{
    const OrnSym *f = n->kind == N_CALL ? n->u.call.sym : NULL;
    if (!f || f->kind != SYM_FN) return NULL;
    const OrnNode *d = f->decl;
    if (!d || d->kind != N_FN || !d->u.fn.body || depth >= FN_DEPTH) {
        *opaque = true;
        return NULL;
    }
    return d->u.fn.body;
}

typedef struct Scan {
    bool writes;
    int depth; /* fn bodies entered */
    const OrnSym *arr[CG_MAXHOLD];
    int n;
} Scan;

/* Whether a top-level statement may write a dist array or make one: a store into an
 * element or view of an array that is not local (a buffer's update is flushed at once at
 * top level), a store into a dist array's name, a dist declaration, a parallel_for, a
 * built-in that writes its first argument or loads or makes an array -- here or in a fn it
 * calls (looked into, FN_DEPTH calls deep). */
static void writes_visit(const OrnNode *n, void *ud)
{
    Scan *sc = ud;
    if (sc->writes) return;
    if (n->kind == N_PARFOR || n->kind == N_DIST) {
        sc->writes = true;
        return;
    }
    if (n->kind == N_CALL) {
        OrnBuiltin bi = n->u.call.builtin;
        if (bi == ORN_BI_MATMUL_INTO || bi == ORN_BI_ADD_OUTER || bi == ORN_BI_SOLVE_INTO ||
            bi == ORN_BI_LOAD || bi == ORN_BI_LOAD_CSV || bi == ORN_BI_LOAD_TRIPLETS ||
            bi == ORN_BI_LOAD_LIBSVM || bi == ORN_BI_LOAD_DOCWORD || bi == ORN_BI_BUFFER) {
            sc->writes = true;
            return;
        }
        bool opaque = false;
        const OrnNode *body = callee_body(n, sc->depth, &opaque);
        if (opaque) {
            sc->writes = true;
            return;
        }
        if (body) {
            sc->depth++;
            writes_visit(body, sc);
            sc->depth--;
        }
    }
    if (n->kind == N_ASSIGN && n->u.assign.target) {
        const OrnNode *tg = n->u.assign.target;
        const OrnSym *b = orn_cg_base_sym(tg);
        bool element = tg->kind == N_INDEX && !(b && cg_is_local_array(b));
        bool whole = tg->kind != N_INDEX && b && b->type && b->type->dist;
        if (element || whole) {
            sc->writes = true;
            return;
        }
    }
    orn_ast_each_child(n, writes_visit, ud);
}

bool cg_may_write(const OrnNode *n)
{
    Scan sc = {.writes = false};
    if (n) writes_visit(n, &sc);
    return sc.writes;
}

/* The dense dist arrays whose elements or views the statement reads, here or in the fns it
 * calls (which cg_may_write looked into). */
static void reads_visit(const OrnNode *n, void *ud)
{
    Scan *sc = ud;
    if (n->kind == N_INDEX) {
        const OrnSym *b = orn_cg_base_sym(n);
        if (b && b->kind == SYM_DIST && b->type && b->type->kind == T_ARRAY && b->type->dist &&
            !b->type->sparse) {
            int i = 0;
            while (i < sc->n && sc->arr[i] != b) i++;
            if (i == sc->n && sc->n < CG_MAXHOLD) sc->arr[sc->n++] = b;
        }
    }
    bool opaque = false;
    const OrnNode *body = callee_body(n, sc->depth, &opaque);
    if (body) {
        sc->depth++;
        reads_visit(body, sc);
        sc->depth--;
    }
    orn_ast_each_child(n, reads_visit, ud);
}

bool cg_hold_open(C *c, const OrnNode *s)
{
    if ((c->cx != CX_TOP && c->cx != CX_FN) || c->holding || c->cuda || cg_may_write(s))
        return false;
    Scan h = {.n = 0};
    reads_visit(s, &h);
    if (!h.n) return false;
    cg_ol(c, "{");
    c->ind++;
    for (int i = 0; i < h.n; i++)
        cg_ol(
            c,
            "OrnDsmArray *const hd%d_ ORN_STD_HELD __attribute__((unused)) = orn_std_hold(P_, %s);",
            c->tmp++, cg_nm(c, h.arr[i]));
    c->holding = true;
    return true;
}

void cg_hold_close(C *c, bool held)
{
    if (!held) return;
    c->holding = false;
    c->ind--;
    cg_ol(c, "}");
}
