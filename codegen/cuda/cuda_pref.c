/* cuda_pref.c: the prefetch of a warp kernel's next element (orn_gpu_pref_N).
 *
 * A tile's iterations run one after another on a warp, and each starts with a gather: its
 * keys, its value, then the rows and elements its keys pick (W[u, :], H[i, :], bu[u]), each
 * a trip to device memory that the iteration waits for. With a long-tailed column key the
 * iterations of one key form the chain that bounds a serializable schedule (gpu_sched_2d.c),
 * so that wait is the run's time. The tile walk (emit_cuda.c) therefore hands the element
 * after the current one to orn_gpu_pref_N before running the current one: it reads that
 * element's keys (themselves prefetched an element earlier) and asks the L2 cache for what
 * they address -- every contiguous row view and every element of a 1-D array whose
 * subscripts are the loop's keys alone, in a box of the block -- with no other effect (an
 * address outside the box is skipped, never reported: the iteration itself reports it).
 * Only what the iteration's own keys decide is prefetched; subscripts computed from loaded
 * values wait for the iteration. */
#include "emit_c_int.h"

enum { MAXPREF = 16 };

typedef struct {
    C *c;
    const OrnCgLoop *l;
    const OrnNode *at[MAXPREF];
    int n;
} Pref;

bool cg_is_loop_key(const OrnLoop *lp, const OrnNode *s)
{
    if (!s || s->kind != N_NAME || !s->u.name.sym) return false;
    for (int j = 0; j < lp->nkeys; j++)
        if (lp->keys[j] == s->u.name.sym) return true;
    return false;
}

/* The array of an access A[...] the prefetch can address: plan array k, boxable, not a
 * buffer or a local array; -1 otherwise. */
static int pref_array(const Pref *p, const OrnNode *e)
{
    const OrnNode *b = e->u.index.base;
    if (!b || b->kind != N_NAME || !b->u.name.sym) return -1;
    const OrnSym *s = b->u.name.sym;
    if (cg_is_local_array(s) || cg_is_buffer(s)) return -1;
    int k = orn_cg_array_index(p->l, s);
    return k >= 0 && orn_cg_boxable(p->l, k) ? k : -1;
}

static bool same_access(const OrnNode *a, const OrnNode *b)
{
    if (a->u.index.base->u.name.sym != b->u.index.base->u.name.sym) return false;
    const OrnNode *x = a->u.index.subs, *y = b->u.index.subs;
    for (; x && y; x = x->next, y = y->next) {
        if (x->kind != y->kind) return false;
        if (x->kind == N_NAME && x->u.name.sym != y->u.name.sym) return false;
    }
    return !x && !y;
}

static void collect(const OrnNode *n, void *ud)
{
    Pref *p = ud;
    if (n->kind == N_INDEX && pref_array(p, n) >= 0) {
        int nsubs = 0, slices = 0;
        bool keys = true;
        for (const OrnNode *s = n->u.index.subs; s; s = s->next, nsubs++) {
            if (s->kind == N_SLICE)
                slices++;
            else
                keys &= cg_is_loop_key(p->l->loop, s);
        }
        bool ok = keys && ((nsubs == 1 && slices == 0) || (nsubs == 2 && slices == 1));
        for (int i = 0; ok && i < p->n; i++) ok = !same_access(p->at[i], n);
        if (ok && p->n < MAXPREF) p->at[p->n++] = n;
    }
    orn_ast_each_child(n, collect, ud);
}

bool cg_gpu_pref(C *c, const OrnCgLoop *l, int id)
{
    const OrnLoop *lp = l->loop;
    Pref p = {c, l, {NULL}, 0};
    for (const OrnNode *s = lp->node->u.parfor.body->u.block.stmts; s; s = s->next) collect(s, &p);
    if (p.n == 0) return false;
    int nk = lp->nkeys;
    cg_o(c,
         "static __device__ void orn_gpu_pref_%d(const OrnGpuArgs *a_, int64_t e_, unsigned "
         "lane_)\n{\n",
         id);
    cg_o(c, "    const int64_t *const kk_ = a_->keys + e_ * %d;\n", nk);
    for (int r = 0; r < nk; r++) {
        int j = l->kperm[r] < nk ? l->kperm[r] : r;
        cg_o(c, "    const int64_t %s __attribute__((unused)) = kk_[%d];\n", cg_nm(c, lp->keys[j]),
             r);
    }
    for (int i = 0; i < p.n; i++) {
        const OrnNode *e = p.at[i];
        const OrnSym *s = e->u.index.base->u.name.sym;
        int k = orn_cg_array_index(l, s), dim;
        const OrnNode *fixed;
        if (orn_cg_view_parts(e, &dim, &fixed)) {
            cg_o(c, "    orn_gpu_pref_row(&a_->box[%d], a_->dims[%d].dims, %d, %s, lane_);\n", k, k,
                 cg_sdim(cg_perm_of(c, s), dim), cg_nm(c, fixed->u.name.sym));
        } else {
            cg_o(c, "    orn_gpu_pref_elt(&a_->box[%d], %s, lane_);\n", k,
                 cg_nm(c, e->u.index.subs->u.name.sym));
        }
    }
    cg_o(c, "}\n");
    return true;
}
