/* cuda_rows.c: which arrays of a warp kernel go through the warp's row cache
 * (runtime/gpu/orn_gpu.h, OrnGpuRowCache; orn_gpu_vec_row in orn_gpu_dev.cuh).
 *
 * A tile's iterations run one after another on one warp, and in a long-tailed data set the
 * iterations of one column key form the chain that bounds a serializable schedule
 * (gpu_sched_2d.c): each reads the row the previous one wrote (SGD MF's H[i, :]), a round
 * trip to device memory per iteration. A row cache in the warp's shared memory keeps the
 * row there while consecutive iterations have the same key, and writes it back when the key
 * changes and at the end of the tile.
 *
 * That is sound for an array when every access of the body to it is the row view A[k, :]
 * (or A[:, k]: the runtime caches only contiguous rows) of one loop key k: the iteration
 * then touches that row alone, and the schedule gives the rows of a tile's keys to that
 * tile alone while it runs (or the loop never writes the array). The iteration space
 * (array 0, whose elements the value variable addresses), buffers and local arrays never
 * qualify. At most ORN_GPU_RC_SLOTS arrays, the first in plan order. emit_cuda.c checks
 * what was written: a view of a chosen array built any other way (inside a loop split
 * across the lanes, where the cache's barriers cannot be) drops the array and the body is
 * written again (cg_gpu_rc_check). */
#include <stdio.h>
#include <string.h>

#include "emit_c_int.h"

enum { RC_SLOTS = 2 }; /* runtime/gpu/orn_gpu.h's ORN_GPU_RC_SLOTS */

typedef struct {
    const OrnLoop *lp;
    const OrnSym *s;
    const OrnSym *key; /* the key of the views seen so far */
    int dim;           /* their ':' dimension */
    bool ok;
} RowScan;

static void scan(const OrnNode *n, void *ud)
{
    RowScan *r = ud;
    if (!n || !r->ok) return;
    if (n->kind == N_INDEX && orn_cg_base_sym(n) == r->s) {
        int dim;
        const OrnNode *fixed = NULL;
        if (!orn_cg_view_parts(n, &dim, &fixed) || !cg_is_loop_key(r->lp, fixed) ||
            (r->key && (r->key != fixed->u.name.sym || r->dim != dim))) {
            r->ok = false;
            return;
        }
        r->key = fixed->u.name.sym;
        r->dim = dim;
        return; /* its subscripts: the key and ':' */
    }
    if (n->kind == N_NAME && n->u.name.sym == r->s) {
        r->ok = false; /* the whole array, or something else than a row view */
        return;
    }
    orn_ast_each_child(n, scan, ud);
}

void cg_gpu_rc_choose(C *c, const OrnCgLoop *l, uint32_t dropped)
{
    memset(c->rc_slot, -1, sizeof c->rc_slot);
    c->rc_wr = 0;
    c->nrc = 0;
    if (!c->p->gpu_rowcache) return; /* orionc --gpu-rowcache only: measured slower (docs) */
    const OrnLoop *lp = l->loop;
    for (int k = 1; k < l->narrays && k < ORN_GPU_MAXARR_CG && c->nrc < RC_SLOTS; k++) {
        const OrnCgArray *a = &l->arrays[k];
        const OrnSym *s = a->sym;
        if (dropped >> k & 1u) continue;
        if (!s || s->kind != SYM_DIST || cg_is_buffer(s) || cg_is_local_array(s) ||
            a->role == ORN_ROLE_BUFFERED || a->ndim != 2 || !orn_cg_boxable(l, k))
            continue;
        RowScan r = {lp, s, NULL, -1, true};
        for (const OrnNode *st = lp->node->u.parfor.body->u.block.stmts; st && r.ok; st = st->next)
            scan(st, &r);
        if (!r.ok || !r.key) continue;
        c->rc_slot[k] = (signed char)c->nrc;
        if (!a->read_only) c->rc_wr |= 1u << c->nrc;
        c->nrc++;
    }
}

/* Occurrences of `what` in text[0 .. n). */
static int count(const char *text, size_t n, const char *what)
{
    int found = 0;
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (text[i] == what[0] && memcmp(text + i, what, w) == 0) found++;
    return found;
}

uint32_t cg_gpu_rc_check(const C *c, const char *body, size_t n)
{
    uint32_t bad = 0;
    for (int k = 0; k < ORN_GPU_MAXARR_CG; k++) {
        if (c->rc_slot[k] < 0) continue;
        char box[32], via[96];
        snprintf(box, sizeof box, "&X%d_", k);
        snprintf(via, sizeof via, "orn_gpu_vec_row(L_, %d, %u, &X%d_,", c->rc_slot[k],
                 c->rc_wr >> c->rc_slot[k] & 1u, k);
        if (count(body, n, box) != count(body, n, via)) bad |= 1u << k;
    }
    return bad;
}
