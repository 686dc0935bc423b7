/* cuda_warp.c: warp kernels of the CUDA back end (emit_c_int.h, docs/runtime.md section 16).
 *
 * A @gpu body with view work -- element-wise view statements, dot, loop reductions -- runs
 * each tile on a warp: the 32 lanes run the same iteration. Scalar code runs on every lane
 * (the lanes compute the same values and draw the same random numbers); the view work is
 * split across the lanes, each element on one lane with the host's arithmetic:
 *   - an element-wise view statement: element x on lane x mod 32 (c_stmt.c);
 *   - dot, reductions of view expressions and loop reductions: lane l computes the host's
 *     partial sum l mod 16 (f32) or l mod 8 (f64) in the host's order, and shuffles combine
 *     the partials in the host's tree (orn_gpu_lanes, c_view.c, c_for.c).
 * A write every lane would make to the same place (an element, the iteration's value) is
 * made by lane 0, its right side evaluated there too when that has no effects; buffer and
 * accumulator updates are recorded by lane 0 (orn_gpu_rec).
 *
 * Lanes advance independently between barriers, so this file places __syncwarp()
 * (orn_gpu_sync) where a lane could otherwise see shared memory in another state than the
 * CPU body does. It follows, per plan array, what lanes did since the last barrier (WarpAcc):
 * read it on every lane, read or wrote it on lane 0, read or wrote views of it along
 * dimension d in a split loop. Before a statement, a barrier when it
 *   - reads on every lane what lane 0 or a split loop wrote (RAW),
 *   - reads on lane 0 what a split loop wrote,
 *   - writes on lane 0 what any lane read, or a split loop touched (WAR, WAW),
 *   - reads in a split loop what lane 0 wrote, or what a split loop wrote along another
 *     dimension (element x of W[u, :] and of W[v, :] is lane x's: no barrier between W's
 *     and H's updates in SGD MF; W[:, k]'s is not),
 *   - writes in a split loop what any lane but through the same split read or wrote;
 * and inside a statement, between its evaluation on every lane and its writes, when these
 * touch an array the evaluation read. Control flow is uniform (every lane takes the same
 * branch), so barriers may sit in branches and loops: pending writes are synchronized
 * before a compound statement, at the end of each of its blocks, before break and continue
 * and at the end of the iteration; inside its blocks and after it, lanes may have read
 * what the compound statement reads. An iteration starts with what the tile's previous one may have
 * left unsynchronized (its reads: emit_cuda.c writes the body again until that is stable). Shuffles
 * order no memory (as on the device). Read-only arrays need no barrier. */
#include <string.h>

#include "emit_c_int.h"

/* Plan array k of a dist array the loop writes (read-only ones need no barrier), or -1. */
static int warp_array(const C *c, const OrnSym *s)
{
    if (!s || s->kind != SYM_DIST || cg_is_buffer(s)) return -1;
    int k = orn_cg_array_index(c->loop, s);
    if (k < 0 || k >= ORN_GPU_MAXARR_CG || c->loop->arrays[k].read_only) return -1;
    return k;
}

/* The iteration's value lives in array 0's box or in the block's values: as array 0. */
static int value_array(const C *c)
{
    return c->loop->arrays[0].read_only ? -1 : 0;
}

typedef struct Walk {
    const C *c;
    WarpAcc *a;
    bool lane0; /* reads by lane 0 alone, else by every lane */
    bool split; /* a dot inside: shuffles that every lane must reach */
} Walk;

static void walk_reads(const OrnNode *n, void *ud)
{
    Walk *w = ud;
    if (!n) return;
    int k = -1;
    if (n->kind == N_INDEX)
        k = warp_array(w->c, orn_cg_base_sym(n));
    else if (n->kind == N_NAME && n->u.name.sym && n->u.name.sym->kind == SYM_VALUE)
        k = value_array(w->c);
    else if (n->kind == N_CALL && n->u.call.builtin == ORN_BI_DOT)
        w->split = true;
    if (k >= 0) {
        if (w->lane0)
            w->a->rd0 |= 1u << k;
        else
            w->a->rd |= 1u << k;
    }
    orn_ast_each_child(n, walk_reads, ud);
}

static void reads(const C *c, const OrnNode *e, WarpAcc *a, bool lane0)
{
    Walk w = {c, a, lane0, false};
    walk_reads(e, &w);
}

/* Does e contain work split across the lanes (a dot: shuffles every lane must reach)? */
static bool has_split(const C *c, const OrnNode *e)
{
    WarpAcc a;
    memset(&a, 0, sizeof a);
    Walk w = {c, &a, false, false};
    walk_reads(e, &w);
    return w.split;
}

bool cg_warp_lane0(const C *c, const OrnNode *rhs)
{
    return !cg_impure(rhs) && !has_split(c, rhs);
}

/* The reads of a view statement's right side: its view leaves element-wise in the split
 * loop (dimension of the ':'), its scalar leaves and the views' fixed subscripts on every
 * lane before it (as cg_vx_collect splits them). */
static void view_reads(const C *c, const OrnNode *e, WarpAcc *a)
{
    bool view = e->type && e->type->kind == T_VIEW;
    if (view && e->kind == N_UNARY) {
        view_reads(c, e->u.unary.e, a);
        return;
    }
    if (view && e->kind == N_BINARY) {
        view_reads(c, e->u.binary.l, a);
        view_reads(c, e->u.binary.r, a);
        return;
    }
    int dim = 0, k = -1;
    const OrnNode *fixed = NULL;
    if (view && orn_cg_view_parts(e, &dim, &fixed)) {
        k = warp_array(c, orn_cg_base_sym(e));
        if (k >= 0) a->sr[k] |= (uint8_t)(1u << dim);
        reads(c, fixed, a, false);
        return;
    }
    reads(c, e, a, false);
}

/* Whether statement s is an element-wise view statement split across the lanes
 * (c_stmt.c): a fusable assignment to a view of an array that is not a buffer. */
bool cg_warp_view_split(const C *c, const OrnNode *s)
{
    if (s->kind != N_ASSIGN || s->u.assign.target->kind != N_INDEX) return false;
    const OrnNode *tg = s->u.assign.target;
    const OrnSym *ts = orn_cg_base_sym(tg);
    int dim = 0;
    const OrnNode *fixed = NULL;
    (void)c;
    return ts && cg_kind_of(tg) == T_VIEW && !cg_is_buffer(ts) &&
           orn_cg_view_parts(tg, &dim, &fixed) && orn_cg_view_fusable(tg, s->u.assign.value);
}

/* A simple statement's accesses; *mid: it reads on every lane an array it then writes. */
static void classify(const C *c, const OrnNode *s, WarpAcc *x, bool *mid)
{
    memset(x, 0, sizeof *x);
    *mid = false;
    if (s->kind != N_ASSIGN) {
        reads(c, s, x, false);
        return;
    }
    const OrnNode *tg = s->u.assign.target, *rhs = s->u.assign.value;
    bool rmw = s->u.assign.op != OP_NONE;
    int k = -1;
    if (tg->kind == N_NAME && tg->u.name.sym && tg->u.name.sym->kind == SYM_VALUE) {
        k = value_array(c);
    } else if (tg->kind == N_INDEX) {
        const OrnSym *ts = orn_cg_base_sym(tg);
        k = warp_array(c, ts);
        if (k >= 0 && cg_warp_view_split(c, s)) {
            int dim = 0;
            const OrnNode *fixed = NULL;
            orn_cg_view_parts(tg, &dim, &fixed);
            reads(c, fixed, x, false);
            view_reads(c, rhs, x);
            x->sw[k] = (uint8_t)(1u << dim);
            if (rmw) x->sr[k] |= x->sw[k];
            *mid = (x->rd >> k) & 1;
            return;
        }
        if (k >= 0 && cg_kind_of(tg) == T_VIEW) { /* not fusable: on lane 0 (c_stmt.c) */
            reads(c, tg, x, true);
            reads(c, rhs, x, true);
            x->wr0 |= 1u << k;
            return;
        }
        for (const OrnNode *sub = tg->u.index.subs; sub; sub = sub->next) reads(c, sub, x, false);
    }
    if (k < 0) { /* a local, an accumulator, a buffer: evaluated on every lane */
        reads(c, rhs, x, false);
        return;
    }
    reads(c, rhs, x, cg_warp_lane0(c, rhs));
    x->wr0 |= 1u << k;
    if (rmw) x->rd0 |= 1u << k;
    *mid = (x->rd >> k) & 1;
}

static bool one_dim(unsigned dims)
{
    return dims && !(dims & (dims - 1));
}

/* Must the lanes meet before accesses x, after st since the last barrier? */
static bool conflict(const WarpAcc *st, const WarpAcc *x)
{
    for (int k = 0; k < ORN_GPU_MAXARR_CG; k++) {
        uint32_t b = 1u << k;
        bool w0 = st->wr0 & b, sw = st->sw[k] != 0;
        if ((x->rd & b) && (w0 || sw)) return true;
        if ((x->rd0 & b) && sw) return true;
        if ((x->wr0 & b) && ((st->rd & b) || st->sr[k] || sw)) return true;
        if (x->sr[k] && (w0 || (sw && !one_dim(x->sr[k] | st->sw[k])))) return true;
        if (x->sw[k] && ((st->rd & b) || (st->rd0 & b) || w0 ||
                         ((st->sr[k] || sw) && !one_dim(x->sw[k] | st->sr[k] | st->sw[k]))))
            return true;
    }
    return false;
}

static void merge(WarpAcc *st, const WarpAcc *x)
{
    st->rd |= x->rd;
    st->rd0 |= x->rd0;
    st->wr0 |= x->wr0;
    for (int k = 0; k < ORN_GPU_MAXARR_CG; k++) st->sr[k] |= x->sr[k], st->sw[k] |= x->sw[k];
}

static bool writes_pending(const WarpAcc *st)
{
    if (st->wr0) return true;
    for (int k = 0; k < ORN_GPU_MAXARR_CG; k++)
        if (st->sw[k]) return true;
    return false;
}

void cg_warp_sync(C *c)
{
    cg_ol(c, "orn_gpu_sync(L_);");
    memset(&c->ws, 0, sizeof c->ws);
}

void cg_warp_flush(C *c)
{
    if (writes_pending(&c->ws)) cg_warp_sync(c);
}

void cg_warp_begin(C *c, const WarpAcc *start)
{
    c->warp = WARP_UNIFORM;
    c->wmid = false;
    c->ws = *start;
    c->wblock = *start;
    memset(&c->wexit, 0, sizeof c->wexit);
}

bool cg_warp_end(C *c, WarpAcc *start)
{
    cg_warp_flush(c);
    c->warp = WARP_NONE;
    WarpAcc s = *start;
    merge(&s, &c->ws);
    merge(&s, &c->wexit);
    if (memcmp(&s, start, sizeof s) == 0) return true;
    *start = s;
    return false;
}

void cg_warp_block_begin(C *c)
{
    if (c->warp == WARP_UNIFORM) c->ws = c->wblock;
}

void cg_warp_block_end(C *c)
{
    if (c->warp == WARP_UNIFORM) cg_warp_flush(c);
}

void cg_warp_mid(C *c)
{
    if (c->wmid) cg_warp_sync(c);
    c->wmid = false;
}

/* A compound statement: pending writes synchronized first; its blocks start, and it ends,
 * with what was left before it and everything it reads (on any lane: a loop's next
 * iteration follows the previous one's reads) -- their writes are synchronized at their
 * ends, before break and continue. */
static void compound(C *c, const OrnNode *s)
{
    cg_warp_flush(c);
    WarpAcc in = c->ws, x;
    memset(&x, 0, sizeof x);
    reads(c, s, &x, false);
    merge(&in, &x);
    WarpAcc outer = c->wblock;
    c->wblock = in;
    cg_st_plain(c, s);
    c->wblock = outer;
    c->ws = in;
}

void cg_warp_st(C *c, const OrnNode *s)
{
    switch (s->kind) {
    case N_CONTINUE:
    case N_BREAK:
        cg_warp_flush(c);
        if (s->kind == N_CONTINUE && c->cloops == 0) /* the iteration ends: as at its end */
            merge(&c->wexit, &c->ws);
        cg_st_plain(c, s);
        return;
    case N_IF:
    case N_WHILE:
    case N_FOREACH:
    case N_BLOCK:
        compound(c, s);
        return;
    case N_FOR:
        if (!cg_for_is_reduction(c, s)) {
            compound(c, s);
            return;
        }
        break;
    case N_CONST:
    case N_PARAM:
    case N_FN:
        return;
    default:
        break;
    }
    WarpAcc x;
    bool mid = false;
    classify(c, s, &x, &mid);
    if (conflict(&c->ws, &x)) cg_warp_sync(c);
    c->wmid = mid;
    cg_st_plain(c, s);
    c->wmid = false;
    merge(&c->ws, &x);
}

/* ---- which loops run on warps */

typedef struct Need {
    const C *c;
    bool warp;
} Need;

static void need_node(const OrnNode *n, void *ud)
{
    Need *w = ud;
    if (!n || w->warp) return;
    if ((n->kind == N_CALL && n->u.call.builtin == ORN_BI_DOT) ||
        (n->kind == N_ASSIGN && cg_warp_view_split(w->c, n)) ||
        (n->kind == N_FOR && cg_for_is_reduction(w->c, n))) {
        w->warp = true;
        return;
    }
    orn_ast_each_child(n, need_node, ud);
}

bool cg_warp_loop(const C *c, const OrnCgLoop *l)
{
    Need w = {c, false};
    need_node(l->loop->node->u.parfor.body, &w);
    return w.warp;
}
