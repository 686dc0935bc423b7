/* c_srow.c: the C back end: reads of a dense run's iteration space on the iteration's own
 * row, A[i, j + c], through the run's storage row_ (a twin of the fast version), and the
 * previous element A[i, j - 1] carried in a register.
 *
 * An ordered stencil (Gauss-Seidel's A[i, j - 1]) or a recurrence (a running sum, `y =
 * Y[i - 1] + X[i]`) reads what the previous iteration just wrote. Through the view's pointer
 * that element came back through a store and a load of another pointer (twice C's time);
 * through row_ gcc sees one array, but where the body branches (`if i == 0 ... else ...`) it
 * still reloads the element each iteration, a store-to-load forward on the loop's critical
 * path (a running sum over 8M f64: 24 ms, the C with a running variable 6.6 ms). So where
 * nothing else can change that element, the twin keeps it in a local: pv_, loaded once
 * before the range (row_[from - 1]: inside the box, because the fast range was clipped so
 * that every key's A[i, j - 1] is), set from *vp_ at the end of each iteration (elem_body),
 * and read in place of row_[j - 1] (4.3 ms). */
#include "emit_c_int.h"

typedef struct SrowScan {
    const C *c;
    bool found; /* a read on the own row at an offset other than 0 */
    bool prev;  /* a read at offset -1 */
    bool bad;   /* something that could change the previous element or skip the update */
} SrowScan;

static void srow_scan(const OrnNode *n, void *ud)
{
    SrowScan *sc = ud;
    int64_t off;
    const OrnSym *sp = sc->c->srow_arr;
    switch (n->kind) {
    case N_INDEX:
        if (orn_cg_base_sym(n) == sp && cg_srow_read(sc->c, n, &off) && off != 0) {
            sc->found = true;
            sc->prev |= off == -1;
        }
        break;
    case N_ASSIGN: { /* an element of the space written other than through the value */
        const OrnNode *tg = n->u.assign.target;
        if (tg->kind == N_INDEX && orn_cg_base_sym(tg) == sp) sc->bad = true;
        break;
    }
    case N_CALL:
        if (n->u.call.sym) sc->bad = true; /* a user function: it may write the space */
        break;
    case N_BREAK:
    case N_CONTINUE:
    case N_RETURN: /* the iteration's end (and the carried element's update) skipped */
        sc->bad = true;
        break;
    default:
        break;
    }
    orn_ast_each_child(n, srow_scan, ud);
}

bool cg_srow_read(const C *c, const OrnNode *e, int64_t *off)
{
    const OrnNode *x = e->u.index.subs, *k = c->srow_keys;
    *off = 0;
    for (; x && k; x = x->next, k = k->next) {
        const OrnSym *ks = k->u.name.sym;
        int64_t o = 0;
        if (x->kind == N_SLICE) return false;
        if (ks == c->srow_last ? !cg_var_off(x, ks, &o)
                               : !(x->kind == N_NAME && x->u.name.sym == ks))
            return false;
        if (ks == c->srow_last) *off = o;
    }
    return !x && !k;
}

bool cg_srow_version(C *c, const OrnCgLoop *l, const OrnSym *last)
{
    const OrnLoop *lp = l->loop;
    if (!lp->value || !lp->space || c->cuda || !last) return false;
    int k = orn_cg_array_index(l, lp->space);
    if (k < 0 || !orn_cg_boxable(l, k)) return false;
    for (const OrnNode *kn = lp->node->u.parfor.keys; kn; kn = kn->next)
        if (!kn->u.name.sym) return false;
    c->srow_arr = lp->space;
    c->srow_keys = lp->node->u.parfor.keys;
    c->srow_last = last;
    SrowScan sc = {c, false, false, false};
    srow_scan(lp->node->u.parfor.body, &sc);
    c->srow_arr = NULL; /* set around the twin only (body_dense); keys and last stay */
    return sc.found;
}

bool cg_srow_carry(const C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    if (!c->srow_arr || lp->naccums > 0 || c->cuda || c->warp != WARP_NONE) return false;
    for (int i = 0; i < lp->nbuffers; i++) /* in-place adds into the space (c_stmt.c) */
        if (orn_cg_buffer_target(lp->buffers[i]) == lp->space) return false;
    SrowScan sc = {c, false, false, false};
    srow_scan(lp->node->u.parfor.body, &sc);
    return sc.prev && !sc.bad;
}
