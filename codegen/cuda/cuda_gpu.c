/* cuda_gpu.c: what both back ends need of a @gpu loop under `orionc --gpu` (emit_c_int.h):
 * whether the CUDA back end runs its body (cg_gpu_loop), the struct of the body's outer
 * scalars that the host hands to the kernels (cg_gpu_env), and the host side of the loop
 * in the C file (cg_gpu_host): a body with the CPU body's signature that gives the block
 * to the runtime's GPU path (runtime/gpu/rt_gpu.h), the CPU body its fallback.
 *
 * The CUDA back end runs loop bodies made of scalar arithmetic and the math built-ins,
 * element access to the plan's dense dist arrays, views (dot, element-wise view
 * assignments that fuse into one loop, `for (k, v) in` a view or a row of a 2-D sparse
 * array), element updates of buffers (recorded on the device, applied on the host), random
 * draws, if/for/while, and accumulators of every kind, at top level, under any strategy but
 * unimodular. Anything else (user fns, local arrays, sparse arrays read element by element,
 * a buffer's view, a dot with a whole dist array, printing, a skewed schedule) is reported with a
 * warning and the loop runs on the CPU path. */
#include <string.h>

#include "emit_c_int.h"

typedef struct Check {
    const C *c;
    const OrnCgLoop *l;
    const OrnNode *bad; /* the first construct the CUDA back end does not run */
    const char *why;
} Check;

/* for (k, v) in X[i, :]: a row of a 2-D sparse array of the plan (its CSR rows go to the
 * device), or a view of a dense one (checked as any other view). */
static bool foreach_ok(const Check *k, const OrnNode *n, bool *sparse)
{
    const OrnNode *it = n->u.foreach.iter, *fixed = NULL;
    const OrnSym *as = orn_cg_base_sym(it);
    int dim = 0;
    if (!as || !as->type || as->type->kind != T_ARRAY || !as->type->dist ||
        !orn_cg_view_parts(it, &dim, &fixed))
        return false;
    *sparse = as->type->sparse;
    if (!*sparse) return true;
    return dim == 1 && as->type->ndims == 2 && orn_cg_array_index(k->l, as) >= 0;
}

/* rows/cols/len of a dist array of the plan: its extents are in the kernel's arguments
 * (`for (k, v) in X[i, :]` is `for k in 0..cols(X)`, lang/sema_rewrite.c) */
static bool extent_ok(const Check *k, const OrnNode *call)
{
    int bi = call->u.call.builtin;
    const OrnNode *a = call->u.call.args;
    if (bi != ORN_BI_ROWS && bi != ORN_BI_COLS && bi != ORN_BI_LEN) return false;
    if (!a || a->next || a->kind != N_NAME || !a->u.name.sym) return false;
    const OrnSym *s = a->u.name.sym;
    return s->kind == SYM_DIST && !cg_is_buffer(s) && orn_cg_array_index(k->l, s) >= 0;
}

static void check_node(const OrnNode *n, void *ud)
{
    Check *k = ud;
    if (k->bad || !n) return;
    switch (n->kind) {
    case N_FOREACH: {
        bool sparse = false;
        if (!foreach_ok(k, n, &sparse)) {
            k->why = "'for (k, v) in' anything but a view of a dist array in a loop body";
            break;
        }
        if (!sparse) break;
        /* the row's subscript and the body; the sparse array itself is read as rows only */
        const OrnNode *fixed = NULL;
        int dim = 0;
        orn_cg_view_parts(n->u.foreach.iter, &dim, &fixed);
        check_node(fixed, ud);
        check_node(n->u.foreach.body, ud);
        if (k->why && !k->bad) k->bad = n;
        return;
    }
    case N_RETURN:
        k->why = "'return' in a loop body";
        break;
    case N_ASSIGN: {
        /* view assignments: element-wise (one fused loop, split across a warp's lanes) */
        const OrnNode *tg = n->u.assign.target;
        const OrnSym *ts = tg->kind == N_INDEX ? orn_cg_base_sym(tg) : NULL;
        if (!ts || cg_kind_of(tg) != T_VIEW) break;
        if (cg_is_buffer(ts))
            k->why = "an update of a buffer's view in a loop body";
        else if (!orn_cg_view_fusable(tg, n->u.assign.value))
            k->why = "a view assignment that reads its target along the other dimension";
        break;
    }
    case N_CALL:
        if (n->u.call.sym) {
            k->why = "a call of a fn in a loop body";
            break;
        }
        {
            /* scalar math and conversions (the const-foldable built-ins), dot, and scalar
             * random draws (rand(), randn(), randint(n): not the array constructors) */
            int bi = n->u.call.builtin;
            bool draw = (bi == ORN_BI_RAND || bi == ORN_BI_RANDN) && !n->u.call.args;
            bool ok = bi == ORN_BI_DOT || bi == ORN_BI_RANDINT || draw || extent_ok(k, n) ||
                      (bi >= 0 && bi < ORN_BI__COUNT && (orn_builtins[bi].flags & BI_CONST));
            if (!ok) k->why = "this built-in in a loop body";
            for (const OrnNode *a = n->u.call.args; ok && bi == ORN_BI_DOT && a; a = a->next)
                if (a->kind == N_NAME && a->type && a->type->kind == T_ARRAY && a->type->dist)
                    k->why = "dot with a whole dist array in a loop body";
        }
        break;
    case N_NAME: {
        const OrnSym *s = n->u.name.sym;
        if (!s) break;
        if (s->kind == SYM_DIST && orn_cg_array_index(k->l, s) < 0)
            k->why = "an array outside the loop's plan";
        else if (s->kind == SYM_DIST && !cg_is_buffer(s) &&
                 !orn_cg_boxable(k->l, orn_cg_array_index(k->l, s)))
            k->why = "a sparse array read element by element in a loop body";
        else if (s->type && s->type->kind == T_ARRAY && !s->type->dist)
            k->why = "a local array in a loop body";
        else if ((s->kind == SYM_VAR || s->kind == SYM_PARAM) && s->parfor == NULL &&
                 orn_cg_acc_index(k->l, s) < 0 &&
                 (!(s->kind == SYM_PARAM || orn_cg_is_static(s)) || !s->type ||
                  s->type->kind < T_BOOL || s->type->kind > T_F64))
            k->why =
                "a variable of the enclosing code that is not a top-level scalar in a loop body";
        break;
    }
    default:
        break;
    }
    if (k->why) {
        k->bad = n;
        return;
    }
    orn_ast_each_child(n, check_node, ud);
}

bool cg_gpu_check(const C *c, const OrnCgLoop *l, const OrnNode **bad, const char **why)
{
    const OrnLoop *lp = l->loop;
    Check k = {c, l, NULL, NULL};
    if (l->narrays > ORN_GPU_MAXARR_CG || lp->naccums > ORN_GPU_MAXACC_CG ||
        lp->nkeys > ORN_RT_MAXDIM_CG)
        k.why = "loops with this many arrays, accumulators or keys", k.bad = lp->node;
    /* a skewed loop's body reads its space through the transform: no box to send */
    if (!k.why && l->strategy == ORN_STRAT_UNIMODULAR)
        k.why = "loops with a skewed (unimodular) schedule", k.bad = lp->node;
    if (!k.why) check_node(lp->node->u.parfor.body, &k);
    if (bad) *bad = k.bad;
    if (why) *why = k.why;
    return k.why == NULL;
}

/* The plan arrays whose rows the body walks (for (k, v) in X[i, :] over a sparse array): the
 * ones whose CSR rows the runtime sends to the device, a bit per plan array. */
typedef struct Rows {
    const OrnCgLoop *l;
    uint32_t mask;
} Rows;

static void rows_node(const OrnNode *n, void *ud)
{
    Rows *r = ud;
    if (!n) return;
    if (n->kind == N_FOREACH) {
        const OrnSym *as = orn_cg_base_sym(n->u.foreach.iter);
        int k = as && as->type && as->type->sparse ? orn_cg_array_index(r->l, as) : -1;
        if (k >= 0 && k < 32) r->mask |= 1u << k;
    }
    orn_ast_each_child(n, rows_node, ud);
}

uint32_t cg_gpu_rows(const OrnCgLoop *l)
{
    Rows r = {l, 0};
    rows_node(l->loop->node->u.parfor.body, &r);
    return r.mask;
}

bool cg_gpu_loop(const C *c, const OrnCgLoop *l)
{
    return c->p->gpu && l->loop->node->u.parfor.gpu && cg_gpu_check(c, l, NULL, NULL);
}

/* Top-level scalars the body reads (params and variables), in the loop's order. */
static bool env_member(const C *c, const OrnCgLoop *l, const OrnSym *s)
{
    (void)c;
    return (s->kind == SYM_PARAM || (s->kind == SYM_VAR && orn_cg_is_static(s))) &&
           orn_cg_acc_index(l, s) < 0 && s->type && s->type->kind >= T_BOOL &&
           s->type->kind <= T_F64;
}

void cg_gpu_env(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    cg_o(c, "typedef struct OrnGpuEnv_%d {\n", l->id);
    int n = 0;
    for (int i = 0; i < lp->nouter_reads; i++) {
        const OrnSym *s = lp->outer_reads[i];
        if (!env_member(c, l, s)) continue;
        cg_o(c, "    %s %s;\n", cg_ctype(s->type->kind), cg_nm(c, s));
        n++;
    }
    if (!n) cg_o(c, "    char unused_;\n");
    cg_o(c, "} OrnGpuEnv_%d;\n", l->id);
}

/* The element prologue of the CUDA body: the outer scalars, arrays and keys under the
 * names the C emitter gives them. */
void cg_gpu_env_locals(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    for (int i = 0; i < lp->nouter_reads; i++) {
        const OrnSym *s = lp->outer_reads[i];
        if (!env_member(c, l, s)) continue;
        cg_o(c, "    const %s %s __attribute__((unused)) = env_->%s;\n", cg_ctype(s->type->kind),
             cg_nm(c, s), cg_nm(c, s));
    }
}

void cg_gpu_host(C *c, const OrnCgLoop *l)
{
    const OrnLoop *lp = l->loop;
    cg_o(c, "\n/* @gpu: the kernels of this loop are in the program's .cu */\n");
    cg_gpu_env(c, l);
    cg_o(c, "extern const OrnGpuKernel orn_gpu_kernel_%d;\n", l->id);
    cg_o(c, "static int orn_gbody_%d(OrnRtCtx *rt_, const OrnRtBlock *b_, void *env_)\n{\n", l->id);
    cg_o(c, "    OrnGpuEnv_%d ge_;\n    memset(&ge_, 0, sizeof ge_);\n", l->id);
    for (int i = 0; i < lp->nouter_reads; i++) {
        const OrnSym *s = lp->outer_reads[i];
        if (!env_member(c, l, s)) continue;
        cg_o(c, "    ge_.%s = %s;\n", cg_nm(c, s), cg_nm(c, s));
    }
    cg_o(c, "    OrnGpuDims dims_[%d];\n    memset(dims_, 0, sizeof dims_);\n", l->narrays);
    for (int k = 0; k < l->narrays; k++) {
        const OrnCgArray *a = &l->arrays[k];
        if (a->role == ORN_ROLE_BUFFERED) continue;
        cg_o(c, "    memcpy(dims_[%d].dims, %s->dims, sizeof(int64_t) * %d);\n", k,
             cg_nm(c, a->sym), a->ndim);
    }
    cg_o(c,
         "    return orn_gpu_block(rt_, b_, &orn_plan_%d, &orn_gpu_kernel_%d, dims_, &ge_, "
         "orn_body_%d, env_);\n}\n",
         l->id, l->id, l->id);
}
