/* buffer.c: write buffers (buffer(A) in the language).
 *
 * A rank sums its deltas per key in a hash map (so a hot key costs one record per flush,
 * whatever the number of updates). A flush sends each rank's records, sorted by key, to
 * the owners of the keys (to every rank for replicated tiles) with one alltoallv; the owner
 * applies them in source-rank order, records of one source in key order. Each element
 * therefore sees its deltas in a fixed order (rank 0's first), so results are bit-identical
 * from run to run. Cost per flush: 2 (P-1) a + 16 b per distinct key updated.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

int orn_rt_buffer_new(OrnRtCtx *rt, OrnDsmArray *target, orn_rt_apply_fn apply, void *env,
                      int64_t flush_every, OrnRtBuffer **out)
{
    if (!orn_dsm_linear_ok(target))
        return orn_dsm_fail(rt->dsm, ORN_E_ARG, "buffer(%s): array too large to buffer",
                            target->name);
    if (flush_every < 0)
        return orn_dsm_fail(rt->dsm, ORN_E_ARG, "buffer(%s): flush_every must be >= 0",
                            target->name);
    OrnRtBuffer *b = orn_xcalloc(1, sizeof *b);
    b->rt = rt;
    b->target = target;
    b->apply = apply;
    b->env = env;
    b->flush_every = flush_every;
    rt_map_init(&b->deltas, 8);
    *out = b;
    return ORN_OK;
}

void orn_rt_buffer_free(OrnRtBuffer *b)
{
    if (!b) return;
    rt_map_free(&b->deltas);
    free(b);
}

OrnDsmArray *orn_rt_buffer_target(OrnRtBuffer *b)
{
    return b->target;
}

static void add_typed(int type, void *acc, const void *d)
{
    switch (type) {
    case ORN_DSM_I32: {
        int32_t a, x;
        memcpy(&a, acc, 4);
        memcpy(&x, d, 4);
        a = (int32_t)((uint32_t)a + (uint32_t)x); /* wraps like the target would */
        memcpy(acc, &a, 4);
        break;
    }
    case ORN_DSM_I64: {
        int64_t a, x;
        memcpy(&a, acc, 8);
        memcpy(&x, d, 8);
        a = (int64_t)((uint64_t)a + (uint64_t)x);
        memcpy(acc, &a, 8);
        break;
    }
    case ORN_DSM_F32: {
        float a, x;
        memcpy(&a, acc, 4);
        memcpy(&x, d, 4);
        a += x;
        memcpy(acc, &a, 4);
        break;
    }
    case ORN_DSM_F64: {
        double a, x;
        memcpy(&a, acc, 8);
        memcpy(&x, d, 8);
        a += x;
        memcpy(acc, &a, 8);
        break;
    }
    }
}

int rt_buffer_add_lin(OrnRtBuffer *b, int64_t lin, const void *delta)
{
    int created;
    void *acc = rt_map_insert(&b->deltas, lin, &created);
    add_typed(b->target->type, acc, delta);
    return ORN_OK;
}

int orn_rt_buffer_add(OrnRtBuffer *b, const int64_t *key, const void *delta)
{
    OrnDsmArray *a = b->target;
    for (int d = 0; d < a->ndim; d++)
        if (key[d] < 0 || key[d] >= a->dims[d])
            return orn_dsm_fail(b->rt->dsm, ORN_E_RANGE, "buffer(%s): key outside the array",
                                a->name);
    return rt_buffer_add_lin(b, orn_dsm_ravel(a, key), delta);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int orn_rt_buffer_flush(OrnRtBuffer *b)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    OrnDsmArray *a = b->target;
    int P = orn_dsm_size(dsm), status = ORN_OK;
    const size_t rec = 16;
    int64_t n = b->deltas.n, m = 0;
    int64_t *lins = orn_xmalloc((size_t)(n ? n : 1) * sizeof *lins);
    int *dest = orn_xmalloc((size_t)(n ? n : 1) * sizeof *dest);
    size_t *sc = orn_xcalloc((size_t)P, sizeof *sc), *rc = orn_xcalloc((size_t)P, sizeof *rc);
    size_t *pos = orn_xcalloc((size_t)P + 1, sizeof *pos);
    char *sbuf = NULL, *rbuf = NULL;

    for (int64_t i = 0; i < b->deltas.cap; i++)
        if (b->deltas.keys[i] >= 0) lins[m++] = b->deltas.keys[i];
    (void)m;
    if (n > 1) qsort(lins, (size_t)n, sizeof *lins, cmp_i64);
    for (int64_t i = 0; i < n; i++) {
        int64_t key[ORN_DSM_MAXDIM];
        orn_dsm_unravel(a, lins[i], key);
        dest[i] = a->part.owner[orn_dsm_part_tile_of(&a->part, key)];
        if (dest[i] == ORN_DSM_ALL)
            for (int p = 0; p < P; p++) sc[p] += rec;
        else
            sc[dest[i]] += rec;
    }
    for (int p = 0; p < P; p++) pos[p + 1] = pos[p] + sc[p];
    sbuf = orn_xmalloc(pos[P] ? pos[P] : 1);
    for (int64_t i = 0; i < n; i++) {
        const void *d = rt_map_find(&b->deltas, lins[i]);
        for (int p = 0; p < P; p++) {
            if (dest[i] != ORN_DSM_ALL && dest[i] != p) continue;
            memcpy(sbuf + pos[p], &lins[i], 8);
            memcpy(sbuf + pos[p] + 8, d, 8);
            pos[p] += rec;
        }
    }
    rt_map_clear(&b->deltas);
    b->rt->stats.flushed += n;
    status = orn_dsm_alltoallv(dsm, sbuf, sc, (void **)&rbuf, rc, "buffer flush");
    if (status) goto fn_exit;
    /* Apply in source-rank order (the receive buffer is in rank order). */
    size_t total = 0;
    for (int p = 0; p < P; p++) total += rc[p];
    for (size_t off = 0; off < total && !status; off += rec) {
        int64_t lin, key[ORN_DSM_MAXDIM];
        memcpy(&lin, rbuf + off, 8);
        orn_dsm_unravel(a, lin, key);
        void *elem = orn_dsm_local_ptr(a, key);
        if (!elem) {
            status = orn_dsm_fail(dsm, ORN_E_RANGE,
                                  "buffer(%s): a delta for an element that is not stored here "
                                  "(sparse arrays keep their structure)",
                                  a->name);
            break;
        }
        if (b->apply) {
            if (b->apply(elem, rbuf + off + 8, b->env) != 0)
                status =
                    orn_dsm_fail(dsm, ORN_E_BODY, "buffer(%s): apply function failed", a->name);
        } else {
            add_typed(a->type, elem, rbuf + off + 8);
        }
    }
fn_exit:
    free(lins);
    free(dest);
    free(sc);
    free(rc);
    free(pos);
    free(sbuf);
    free(rbuf);
    return status;
}
