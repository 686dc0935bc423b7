/* c_gather.c: software prefetch for a sparse walk's gathers. A CSR row's loop (`for (u, r)
 * in R[i, :]`) whose body reads another array at the walk's key -- ALS's W[u, :] for the
 * users u of an item -- misses the cache once an entry when that array is large and the
 * keys scattered, and a long body keeps the processor from running ahead to the next
 * entries' loads. The columns are in memory ahead of the walk, so the loop first prefetches
 * what the entry CG_GATHER_AHEAD further on will read (runtime/rt.h orn_rt_box_prefetch):
 * ALS 1.17 -> 0.81 s an iteration at -n 1 (4 to 16 ahead within 5%).
 *
 * Where it is left out: a short body (no loop, no operation on a whole row): the processor's
 * own window spans many entries, and the prefetches cost more than they save (a pull
 * PageRank's `acc[d] += w * pr[s]` with them: 0.011 -> 0.016 s); a box too small to miss
 * (orn_rt_box_gather_far, tested once before the walk; SLR's 400 KB of weights); a
 * foreach's checked version (its columns may be listed keys); the element loop of a sparse
 * `parallel_for` (SGD MF's H[i, :], 400-byte rows read whole by a dot and an update: 1-2%
 * slower with them, 4 or 8 lines ahead). */
#include "emit_c_int.h"

#include <stdio.h>

enum { CG_GATHER_AHEAD = 8, CG_GATHER_MAX = 4 };

typedef struct {
    C *c;
    const OrnSym *key;
    int n, k[CG_GATHER_MAX], nd[CG_GATHER_MAX];
    const OrnSym *s[CG_GATHER_MAX];
    bool heavy; /* a loop or a whole row's operation in the body */
} Gather;

static void gather_visit(const OrnNode *n, void *ud)
{
    Gather *g = ud;
    g->heavy |=
        n->kind == N_FOR || n->kind == N_FOREACH || n->kind == N_WHILE || n->kind == N_SLICE;
    if (n->kind == N_INDEX) {
        const OrnSym *s = orn_cg_base_sym(n);
        const OrnNode *sub = n->u.index.subs;
        int nd = orn_list_len(sub);
        if (s && s->type && s->type->dist && (nd == 1 || nd == 2) && sub->kind == N_NAME &&
            sub->u.name.sym == g->key) {
            int k = orn_cg_array_index(g->c->loop, s), seen = 0;
            for (int i = 0; i < g->n; i++) seen |= g->k[i] == k;
            if (k >= 0 && !seen && g->n < CG_GATHER_MAX && orn_cg_boxable(g->c->loop, k)) {
                g->k[g->n] = k, g->nd[g->n] = nd, g->s[g->n] = s;
                g->n++;
            }
        }
    }
    orn_ast_each_child(n, gather_visit, ud);
}

void cg_gather_prefetch(C *c, const OrnNode *body, const OrnSym *key, int id, bool head)
{
    if (c->cuda || !c->loop || !key || !body) return;
    Gather g = {.c = c, .key = key};
    gather_visit(body, &g);
    for (int i = 0; g.heavy && i < g.n; i++) {
        const char *t = cg_ctype(cg_elem_of(g.s[i]->type));
        if (head)
            cg_ol(c, "const int pf%d_%d_ = orn_rt_box_gather_far(&X%d_, %d, sizeof(%s));", id, i,
                  g.k[i], g.nd[i], t);
        else
            cg_ol(c,
                  "if (pf%d_%d_ && j%d_ + %d < rn%d_) orn_rt_box_prefetch(&X%d_, %d, ro%d_ + "
                  "rc%d_[j%d_ + %d], sizeof(%s));",
                  id, i, id, CG_GATHER_AHEAD, id, g.k[i], g.nd[i], id, id, id, CG_GATHER_AHEAD, t);
    }
}
