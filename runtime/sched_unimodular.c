/* sched_unimodular.c: the unimodular strategy: iterate the transformed space as a wavefront.
 *
 * An ordered loop whose dependence vectors are not non-negative (a 9-point stencil has
 * (1, -1)) is run in the space y = T x, where the analyzer's unimodular T (integer, det
 * +-1) makes every dependence non-negative and lexicographically positive. The runtime
 * copies the iteration space into a temporary sparse array keyed by y - min(y), cuts it
 * into B0 x B1 blocks along the partitioned transformed dimensions (histogram-balanced,
 * rows dealt cyclically), and runs block (s, t) at step s + t, its elements in key order of
 * y. Bodies still see the original keys (x = T^-1 (y + min)) and address the iteration
 * space with them: those accesses are mapped through T to the temporary array (the
 * prefetch cache and on-demand reads cover neighbours in other blocks). At the end the
 * values are written back to the iteration space.
 *
 * Cost model (N iterations, t per iteration, P ranks, B0 = B1 = B, halo H keys per block,
 * E bytes per element, latency a, byte time b):
 *   T = 2 (2 (P-1) a + N E b / P)                   copy in and write back
 *     + (2B - 1) steps x [ ceil(active / P) (N / B^2) t + 4 (P-1) a + 32 H b ]
 * As for 2d_ordered, the result equals the serial loop in key order at any rank count.
 * With one partitioned dimension (inner 1d) the blocks are independent and run in one step.
 * Other arrays of such a loop must be prefetched, replicated, buffered or remote.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

typedef struct Uni {
    OrnDsmArray *tmp;
    int64_t **keys; /* per tile of tmp: original keys of its elements */
    int64_t ntiles;
    int n;
    int64_t inv[ORN_RT_MAXDIM][ORN_RT_MAXDIM];
    int64_t off[ORN_RT_MAXDIM];
} Uni;

static int64_t det(int n, int64_t m[ORN_RT_MAXDIM][ORN_RT_MAXDIM])
{
    if (n == 1) return m[0][0];
    int64_t s = 0, sub[ORN_RT_MAXDIM][ORN_RT_MAXDIM];
    for (int c = 0; c < n; c++) {
        for (int i = 1; i < n; i++)
            for (int j = 0, jj = 0; j < n; j++)
                if (j != c) sub[i - 1][jj++] = m[i][j];
        int64_t d = det(n - 1, sub);
        s += (c % 2 ? -1 : 1) * m[0][c] * d;
    }
    return s;
}

/* Inverse of a unimodular matrix: the adjugate times det (= 1 / det). */
static int inverse(int n, const int T[ORN_RT_MAXDIM][ORN_RT_MAXDIM],
                   int64_t inv[ORN_RT_MAXDIM][ORN_RT_MAXDIM])
{
    int64_t m[ORN_RT_MAXDIM][ORN_RT_MAXDIM], sub[ORN_RT_MAXDIM][ORN_RT_MAXDIM];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (T[i][j] > 1000000 || T[i][j] < -1000000) return -1;
            m[i][j] = T[i][j];
        }
    int64_t d = det(n, m);
    if (d != 1 && d != -1) return -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (n == 1) {
                inv[0][0] = d;
                continue;
            }
            /* cofactor C[j][i] -> inv[i][j] */
            for (int r = 0, rr = 0; r < n; r++) {
                if (r == j) continue;
                for (int c = 0, cc = 0; c < n; c++)
                    if (c != i) sub[rr][cc++] = m[r][c];
                rr++;
            }
            int64_t cof = ((i + j) % 2 ? -1 : 1) * det(n - 1, sub);
            inv[i][j] = cof * d;
        }
    return 0;
}

static int owner_cyclic(const Exec *x, const int *g)
{
    return g[0] < 0 ? 0 : g[0] % x->P;
}

static const int64_t *orig_keys(Exec *x, int64_t tile)
{
    const Uni *U = x->sched_state;
    return U->keys[tile];
}

static int setup(Exec *x)
{
    const OrnRtPlan *p = x->plan;
    OrnDsmArray *src = x->loop->args[0].array;
    int n = p->nkeys, status = ORN_OK;
    Uni *U = orn_xcalloc(1, sizeof *U);
    x->sched_state = U;
    U->n = n;
    if (inverse(n, p->transform, U->inv) != 0)
        return rt_fail(x, ORN_E_PLAN,
                       "unimodular: the transform is not an integer matrix with "
                       "determinant +-1");
    /* Transformed keys of the local elements (each element counted once). */
    int64_t cnt = 0;
    for (int64_t t = 0; t < src->part.ntiles; t++)
        if (src->tiles[t].held && (src->part.owner[t] != ORN_DSM_ALL || x->me == 0))
            cnt += src->tiles[t].n;
    int64_t *y = orn_xmalloc((size_t)(cnt ? cnt : 1) * (size_t)n * 8);
    char *vals = orn_xmalloc((size_t)(cnt ? cnt : 1) * src->esize);
    int64_t m = 0, lo[ORN_RT_MAXDIM], hi[ORN_RT_MAXDIM];
    for (int i = 0; i < n; i++) {
        lo[i] = INT64_MAX;
        hi[i] = INT64_MIN;
    }
    for (int64_t t = 0; t < src->part.ntiles; t++) {
        const OrnDsmTile *tl = &src->tiles[t];
        if (!tl->held || (src->part.owner[t] == ORN_DSM_ALL && x->me != 0)) continue;
        int64_t key[ORN_RT_MAXDIM];
        memcpy(key, tl->lo, sizeof key);
        for (int64_t e = 0; e < tl->n; e++, m++) {
            int64_t sk[ORN_RT_MAXDIM];
            if (src->sparse) orn_dsm_tile_key(src, tl, e, sk);
            const int64_t *xk = src->sparse ? sk : key;
            for (int i = 0; i < n; i++) {
                int64_t v = 0;
                for (int j = 0; j < n; j++) v += (int64_t)p->transform[i][j] * xk[j];
                y[m * n + i] = v;
                if (v < lo[i]) lo[i] = v;
                if (v > hi[i]) hi[i] = v;
            }
            memcpy(vals + (size_t)m * src->esize, (const char *)tl->vals + (size_t)e * src->esize,
                   src->esize);
            if (!src->sparse)
                for (int d = n - 1; d >= 0; d--) {
                    if (++key[d] < tl->hi[d]) break;
                    key[d] = tl->lo[d];
                }
        }
    }
    status = orn_dsm_allreduce_i64(x->dsm, lo, (size_t)n, ORN_DSM_MIN);
    if (!status) status = orn_dsm_allreduce_i64(x->dsm, hi, (size_t)n, ORN_DSM_MAX);
    int64_t dims[ORN_RT_MAXDIM];
    for (int i = 0; i < n && !status; i++) {
        U->off[i] = lo[i] <= hi[i] ? lo[i] : 0;
        dims[i] = lo[i] <= hi[i] ? hi[i] - lo[i] + 1 : 0;
    }
    for (int64_t e = 0; e < m && !status; e++)
        for (int i = 0; i < n; i++) y[e * n + i] -= U->off[i];
    if (!status)
        status =
            orn_dsm_from_elements(x->dsm, src->type, n, dims, 1, m, y, vals, NULL, NULL, &U->tmp);
    free(y);
    free(vals);
    if (status) return status;
    orn_dsm_set_name(U->tmp, "transformed iteration space");
    if (!orn_dsm_linear_ok(U->tmp))
        return rt_fail(x, ORN_E_PLAN, "unimodular: the transformed space is too large");

    /* The wavefront runs over the transformed copy. */
    x->iter = U->tmp;
    x->vi[0].store = U->tmp;
    x->vi[0].xform = 1;
    for (int i = 0; i < n; i++) {
        x->vi[0].off[i] = U->off[i];
        for (int j = 0; j < n; j++) x->vi[0].T[i][j] = p->transform[i][j];
    }
    status = rt_partition_all(x, p->npart, owner_cyclic);
    if (status) return status;
    U->ntiles = U->tmp->part.ntiles;
    U->keys = orn_xcalloc((size_t)U->ntiles, sizeof *U->keys);
    for (int64_t t = 0; t < U->ntiles; t++) {
        const OrnDsmTile *tl = &U->tmp->tiles[t];
        if (!tl->held || !tl->n) continue;
        int64_t *k = U->keys[t] = orn_xmalloc((size_t)tl->n * (size_t)n * 8);
        orn_dsm_tile_keys(U->tmp, tl, 0, tl->n, k); /* transformed keys, mapped back in place */
        for (int64_t e = 0; e < tl->n; e++) {
            int64_t ty[ORN_RT_MAXDIM];
            memcpy(ty, k + e * n, (size_t)n * 8);
            for (int i = 0; i < n; i++) {
                int64_t v = 0;
                for (int j = 0; j < n; j++) v += U->inv[i][j] * (ty[j] + U->off[j]);
                k[e * n + i] = v;
            }
        }
    }
    x->iter_keys = orig_keys;
    x->halo = 1;
    /* One partitioned dimension: the blocks are independent (inner 1d), one step. */
    x->nsteps = p->npart == 1 ? 1 : (int64_t)x->nb[0] + x->nb[1] - 1;
    return ORN_OK;
}

static void work(Exec *x, int64_t s, int rank, WorkList *out)
{
    if (x->plan->npart == 1)
        rt_work_owned(x, rank, out);
    else
        rt_work_wavefront(x, s, rank, out);
}

/* Write the values back into the iteration space. */
static int finish(Exec *x)
{
    Uni *U = x->sched_state;
    OrnDsmArray *tmp = U->tmp, *src = x->loop->args[0].array;
    int64_t cnt = 0, m = 0;
    for (int64_t t = 0; t < U->ntiles; t++)
        if (tmp->tiles[t].held) cnt += tmp->tiles[t].n;
    int64_t *keys = orn_xmalloc((size_t)(cnt ? cnt : 1) * (size_t)U->n * 8);
    char *vals = orn_xmalloc((size_t)(cnt ? cnt : 1) * tmp->esize);
    for (int64_t t = 0; t < U->ntiles; t++) {
        const OrnDsmTile *tl = &tmp->tiles[t];
        if (!tl->held || !tl->n) continue;
        memcpy(keys + m * U->n, U->keys[t], (size_t)tl->n * (size_t)U->n * 8);
        memcpy(vals + (size_t)m * tmp->esize, tl->vals, (size_t)tl->n * tmp->esize);
        m += tl->n;
    }
    int status = orn_dsm_write_elements(src, m, keys, vals);
    free(keys);
    free(vals);
    return status;
}

static void cleanup(Exec *x)
{
    Uni *U = x->sched_state;
    if (!U) return;
    if (U->keys)
        for (int64_t t = 0; t < U->ntiles; t++) free(U->keys[t]);
    free(U->keys);
    orn_dsm_free(U->tmp);
    free(U);
    x->sched_state = NULL;
}

const OrnRtSched orn_rt_sched_unimodular = {
    .name = "unimodular",
    .setup = setup,
    .step_begin = rt_step_noop,
    .step_end = rt_step_noop,
    .work = work,
    .finish = finish,
    .cleanup = cleanup,
    .step_sync = 1,
};
