/* test_snapshot.c: snapshots of a rank's arrays and runtime state (dsm/snapshot.c,
 * orn_rt_snap_write/read; the checkpoints of docs/runtime.md section 15). Arrays of every
 * storage form -- dense with and without ghost-row room, CSR, docword runs, listed keys,
 * a replicated partition, a hole in the registry -- are written by every rank into memory
 * and read back into a second context: every array has the same id, partition, tag and
 * bytes, whole-array reductions give the same bits, the next array gets the next id, and
 * the runtime's settings come back. A truncated stream and another rank's stream are
 * refused. */
#include "harness.h"

typedef struct Mem {
    char *buf;
    size_t n, cap, pos;
} Mem;

static int mem_put(void *ud, const void *p, size_t n)
{
    Mem *m = ud;
    if (m->n + n > m->cap) {
        m->cap = 2 * (m->n + n);
        m->buf = realloc(m->buf, m->cap);
        if (!m->buf) return -1;
    }
    memcpy(m->buf + m->n, p, n);
    m->n += n;
    return 0;
}

static int mem_get(void *ud, void *p, size_t n)
{
    Mem *m = ud;
    if (m->pos + n > m->n) return -1;
    memcpy(p, m->buf + m->pos, n);
    m->pos += n;
    return 0;
}

static int same_bytes(const void *a, const void *b, size_t n)
{
    return (!a && !b) || (a && b && !memcmp(a, b, n));
}

static void check_same(TestEnv *t, const OrnDsmArray *a, const OrnDsmArray *b)
{
    CHECK(t, a->id == b->id && a->type == b->type && a->ndim == b->ndim);
    CHECK(t, a->sparse == b->sparse && a->runs == b->runs && a->nnz == b->nnz);
    CHECK(t, a->part_tag == b->part_tag && !strcmp(a->name, b->name));
    CHECK(t, !memcmp(a->dims, b->dims, sizeof a->dims));
    CHECK(t, orn_dsm_part_equal(&a->part, &b->part));
    CHECK(t, !memcmp(a->part.slot, b->part.slot, (size_t)a->part.ntiles * sizeof *a->part.slot));
    for (int64_t k = 0; k < a->part.ntiles; k++) {
        const OrnDsmTile *x = &a->tiles[k], *y = &b->tiles[k];
        CHECK(t, !memcmp(x->lo, y->lo, sizeof x->lo) && !memcmp(x->hi, y->hi, sizeof x->hi));
        CHECK(t, x->n == y->n && x->held == y->held);
        if (!x->held) continue;
        size_t n = (size_t)x->n;
        CHECK(t, x->pad_lo == y->pad_lo && x->pad_hi == y->pad_hi && !x->mem == !y->mem);
        CHECK(t, same_bytes(x->vals, y->vals, n * a->esize));
        CHECK(t, same_bytes(x->keys, y->keys, n * (size_t)a->ndim * sizeof *x->keys));
        CHECK(t, same_bytes(x->rowptr, y->rowptr,
                            (size_t)(x->hi[0] - x->lo[0] + 1) * sizeof *x->rowptr));
        CHECK(t, same_bytes(x->cols, y->cols, n * sizeof *x->cols));
    }
}

/* Sparse 3-D (no runs: listed keys) and 2-D (CSR) arrays from the same elements, given by
 * rank 0. */
static void sparse_arrays(TestEnv *t, OrnDsmArray **s2, OrnDsmArray **s3)
{
    int64_t n = t->rank == 0 ? 500 : 0, k3[1500], k2[1000];
    float v[500];
    for (int64_t i = 0; i < n; i++) {
        int64_t r = (i * 37) % 97, c = (i * 11) % 50, d = i % 5;
        k3[3 * i] = r, k3[3 * i + 1] = c, k3[3 * i + 2] = d;
        k2[2 * i] = r * 5 + d, k2[2 * i + 1] = c;
        v[i] = (float)i * 0.25f - 3.0f;
    }
    int64_t d3[3] = {97, 50, 5}, d2[2] = {97 * 5, 50};
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 3, d3, 1, n, k3, v, NULL, NULL, s3));
    OK(t, orn_dsm_from_elements(t->dsm, ORN_DSM_F32, 2, d2, 1, n, k2, v, NULL, NULL, s2));
}

/* Free every array of a context (ids are small here). */
static void free_all(OrnDsmCtx *dsm)
{
    for (int id = 0; id < 64; id++) orn_dsm_free(orn_dsm_lookup(dsm, id));
}

int main(int argc, char **argv)
{
    TestEnv t;
    t_init(&t, &argc, &argv);
    char path[512];
    t_path(&t, path, sizeof path, "snap.docword");
    t_write_file(&t, path, "0 1 3\n0 4 1\n2 1 2\n3 0 5\n3 2 1\n5 4 2\n");

    /* arrays of every form, and a hole in the registry */
    OrnDsmArray *gone = NULL, *small = NULL, *big = NULL, *s2 = NULL, *s3 = NULL, *doc = NULL;
    OrnDsmArray *rep = NULL;
    int64_t ds[2] = {10, 3}, db[2] = {300, 7}, dr[1] = {33};
    OK(&t, orn_dsm_dense(t.dsm, ORN_DSM_I32, 1, dr, &gone));
    OK(&t, orn_rt_rand_array(t.rt, ORN_DSM_F64, 2, ds, 5, 1, &small));
    OK(&t, orn_rt_rand_array(t.rt, ORN_DSM_F32, 2, db, 6, 0, &big)); /* >= 64 rows: room */
    orn_dsm_free(gone);
    sparse_arrays(&t, &s2, &s3);
    OK(&t, orn_dsm_load_docword(t.dsm, path, &doc));
    OK(&t, orn_rt_rand_array(t.rt, ORN_DSM_I64, 1, dr, 7, 0, &rep));
    OrnDsmPart p;
    int nb[1] = {1};
    OK(&t, orn_dsm_part_init(&p, 1, nb));
    p.bounds[0][1] = dr[0];
    p.owner[0] = ORN_DSM_ALL;
    OK(&t, orn_dsm_repartition(rep, &p));
    orn_dsm_part_free(&p);
    orn_dsm_set_name(big, "big");
    big->part_tag = 0x1234;
    /* every form is there on some rank */
    int64_t forms[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < big->part.ntiles; k++)
        forms[0] |= big->tiles[k].held && big->tiles[k].mem;
    for (int64_t k = 0; k < s2->part.ntiles; k++)
        forms[1] |= s2->tiles[k].held && s2->tiles[k].cols;
    for (int64_t k = 0; k < s3->part.ntiles; k++)
        forms[2] |= s3->tiles[k].held && s3->tiles[k].keys;
    for (int64_t k = 0; k < doc->part.ntiles; k++)
        forms[3] |= doc->tiles[k].held && doc->tiles[k].cols;
    OK(&t, orn_dsm_allreduce_i64(t.dsm, forms, 4, ORN_DSM_MAX));
    CHECK(&t, forms[0] && forms[1] && forms[2] && forms[3] && doc->runs);
    orn_rt_set_seed(t.rt, 99);
    orn_rt_set_blocks_per_rank(t.rt, 3);
    OrnDsmArray *all[6] = {small, big, s2, s3, doc, rep};
    double sums[6];
    for (int i = 0; i < 6; i++) OK(&t, orn_dsm_sum(all[i], &sums[i]));

    Mem m = {NULL, 0, 0, 0};
    OrnDsmIo out = {mem_put, NULL, &m};
    OK(&t, orn_rt_snap_write(t.rt, &out));

    /* a second context reads it */
    OrnRtCtx *rt2 = NULL;
    OK(&t, orn_rt_init(&argc, &argv, &rt2));
    OrnDsmCtx *dsm2 = orn_rt_dsm(rt2);
    OrnDsmIo in = {NULL, mem_get, &m};
    OK(&t, orn_rt_snap_read(rt2, &in));
    CHECK(&t, m.pos == m.n);
    CHECK(&t, orn_rt_seed(rt2) == 99);
    CHECK(&t, orn_dsm_lookup(dsm2, 0) == NULL); /* `gone`, freed before the snapshot */
    for (int i = 0; i < 6; i++) {
        OrnDsmArray *b = orn_dsm_lookup(dsm2, all[i]->id);
        CHECK(&t, b != NULL);
        check_same(&t, all[i], b);
        double s;
        OK(&t, orn_dsm_sum(b, &s));
        CHECK(&t, !memcmp(&s, &sums[i], sizeof s));
    }
    OrnDsmArray *next1 = NULL, *next2 = NULL;
    OK(&t, orn_dsm_dense(t.dsm, ORN_DSM_F32, 1, dr, &next1));
    OK(&t, orn_dsm_dense(dsm2, ORN_DSM_F32, 1, dr, &next2));
    CHECK(&t, next1->id == next2->id);

    /* refused: a truncated stream, and (at several ranks) another rank's stream */
    OrnRtCtx *rt3 = NULL;
    OK(&t, orn_rt_init(&argc, &argv, &rt3));
    Mem cut = m;
    cut.n = m.n / 2;
    cut.pos = 0;
    OrnDsmIo in3 = {NULL, mem_get, &cut};
    CHECK(&t, orn_rt_snap_read(rt3, &in3) == ORN_E_FORMAT);
    free_all(orn_rt_dsm(rt3)); /* what was read before the cut */
    orn_rt_finalize(rt3);
    if (t.size > 1) {
        OrnRtCtx *rt4 = NULL;
        OK(&t, orn_rt_init(&argc, &argv, &rt4));
        /* a stream whose header names another rank: rewrite ours to say so */
        Mem other = {malloc(m.n), m.n, m.n, 0};
        memcpy(other.buf, m.buf, m.n);
        int32_t fake = (t.rank + 1) % t.size;
        /* the DSM header follows the runtime's (64 bytes and 16 per loop id: none here) */
        memcpy(other.buf + 64 + 8 + 4, &fake, sizeof fake);
        OrnDsmIo in4 = {NULL, mem_get, &other};
        CHECK(&t, orn_rt_snap_read(rt4, &in4) == ORN_E_FORMAT);
        CHECK(&t, strstr(orn_rt_error(rt4), "written by rank") != NULL);
        free(other.buf);
        orn_rt_finalize(rt4);
    }
    free(m.buf);
    free_all(dsm2);
    free_all(t.dsm);
    orn_rt_finalize(rt2);
    return t_finish(&t, "test_snapshot");
}
