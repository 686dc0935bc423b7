/* managed.c: managed communication for buffers; the contract and the schedule are in
 * managed.h. Cost per boundary: one branch-free pass over the target for the changed
 * elements, their priorities, a selection in linear time (quickselect) when more changed than
 * fit, P - 1 messages of at most k entries sent, P - 1 received and applied. */
#include "managed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "transport.h"

#define MG_TAG          ORN_TAG_MANAGED
#define MG_HDR          8 /* a message: int64 count, then count entries */
#define RT_MG_SUBROUNDS 8

struct RtManaged {
    OrnDsmCtx *dsm;
    int P, me, m, lag;
    int type;
    int64_t n;
    size_t es, entry; /* element bytes; entry bytes: uint32 index + element */
    size_t cap;       /* bytes of one message buffer: header + n entries */
    double budget, bw;
    int64_t fixed_k;      /* $ORN_MANAGED_ENTRIES, else -1 */
    char *ref;            /* R (managed.h) */
    uint32_t *cand;       /* scratch: the changed elements */
    double *pri;          /* scratch: their priorities */
    double *sel;          /* scratch: a copy for the selection */
    unsigned char *count; /* staleness-aware: ranks per element in one exchange */
    int nslot;            /* message buffers per peer: m (allocated at first use) */
    char **sbuf;          /* [slot]: this rank's message */
    char **rbuf;          /* [slot * P + q]: rank q's message */
    OrnDsmReq **req;      /* [slot * 2P + i]: receives then sends of a slot */
    int *peer;
    double t_mark; /* end of the last boundary (or the round's start) */
    double t_work; /* this round's seconds outside boundaries so far */
    int fixed_lag; /* $ORN_MANAGED_LAG given */
    int round_m;   /* the loop's sub-rounds in this round (the least over its buffers) */
    char *xbuf;    /* the flush's exchange: per rank its changes and its t_work */
};

static int env_int(const char *name, int dflt, int lo)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    long v = strtol(s, NULL, 10);
    return v < lo ? lo : (int)v;
}

/* The link: a ring exchange (send to the next rank, receive from the previous) of a small
 * and a large message, the best of two tries each. The small one's time is the latency; the
 * difference of their times is the large one's extra bytes at the link's rate (bytes/s).
 * The minimum bandwidth and the maximum latency over ranks. */
static int probe(OrnRtCtx *rt, double *bw, double *lat)
{
    const char *env = getenv("ORN_LINK_BW"), *envl = getenv("ORN_LINK_LATENCY");
    if (env && *env && envl && *envl) {
        *bw = strtod(env, NULL);
        *lat = strtod(envl, NULL);
        return ORN_OK;
    }
    OrnDsmCtx *dsm = rt->dsm;
    int P = orn_dsm_size(dsm), me = orn_dsm_rank(dsm), status = ORN_OK;
    const size_t small = 1024, large = 1024 + ((size_t)64 << 10); /* 0.5 ms at 1 Gbit/s */
    char *out = orn_xcalloc(large, 1), *in = orn_xmalloc(large);
    double best[2] = {1e30, 1e30};
    int peers[2] = {(me + P - 1) % P, (me + 1) % P};
    for (int t = 0; t < 4 && !status; t++) {
        size_t n = t % 2 ? large : small;
        OrnDsmReq *reqs[2] = {NULL, NULL};
        double t0 = rt_now();
        status = orn_dsm_irecv(dsm, in, n, peers[0], MG_TAG, &reqs[0]);
        if (!status) status = orn_dsm_isend(dsm, out, n, peers[1], MG_TAG, &reqs[1]);
        if (!status) status = orn_dsm_waitall(dsm, reqs, peers, 2, "bandwidth probe");
        double dt = rt_now() - t0;
        if (dt < best[t % 2]) best[t % 2] = dt;
    }
    free(out);
    free(in);
    double v[2] = {best[1] > best[0] ? (double)(large - small) / (best[1] - best[0]) : HUGE_VAL,
                   -best[0]};
    if (!status) status = orn_dsm_allreduce_f64(dsm, v, 2, ORN_DSM_MIN);
    *bw = env && *env ? strtod(env, NULL) : v[0];
    *lat = envl && *envl ? strtod(envl, NULL) : -v[1];
    return status;
}

int rt_managed_new(OrnRtBuffer *b, int P, RtManaged **out)
{
    OrnDsmArray *a = b->target;
    *out = NULL;
    if (b->budget <= 0 || P < 2 || b->apply || !b->snap ||
        (a->type != ORN_DSM_F32 && a->type != ORN_DSM_F64))
        return ORN_OK;
    OrnRtCtx *rt = b->rt;
    if (rt->link_bw <= 0) {
        int status = probe(rt, &rt->link_bw, &rt->link_lat);
        if (status) return status;
    }
    RtManaged *m = orn_xcalloc(1, sizeof *m);
    m->dsm = rt->dsm;
    m->P = P;
    m->me = orn_dsm_rank(rt->dsm);
    m->m = env_int("ORN_MANAGED_SUBROUNDS", RT_MG_SUBROUNDS, 1);
    m->fixed_lag = env_int("ORN_MANAGED_LAG", 0, 1);
    /* the buffer's first round measures only (no lag known: nothing is sent) */
    m->lag = m->fixed_lag ? m->fixed_lag : b->mg_lag ? b->mg_lag : m->m;
    const char *fk = getenv("ORN_MANAGED_ENTRIES");
    m->fixed_k = fk && *fk ? strtoll(fk, NULL, 10) : -1;
    m->type = a->type;
    m->n = a->nnz;
    m->es = a->esize;
    m->entry = 4 + m->es;
    m->cap = MG_HDR + (size_t)m->n * m->entry;
    m->budget = b->budget;
    m->bw = rt->link_bw;
    size_t bytes = (size_t)m->n * m->es;
    m->ref = orn_xmalloc(bytes ? bytes : 1);
    m->xbuf = orn_xmalloc((size_t)P * (bytes + 8));
    memcpy(m->ref, b->replica, bytes);
    m->cand = orn_xmalloc((size_t)(m->n + 1) * sizeof *m->cand);
    m->pri = orn_xmalloc((size_t)(m->n ? m->n : 1) * sizeof *m->pri);
    m->sel = orn_xmalloc((size_t)(m->n ? m->n : 1) * sizeof *m->sel);
    if (b->stale_aware) m->count = orn_xcalloc((size_t)(m->n ? m->n : 1), 1);
    m->nslot = m->m;
    m->sbuf = orn_xcalloc((size_t)m->nslot, sizeof *m->sbuf);
    m->rbuf = orn_xcalloc((size_t)m->nslot * (size_t)P, sizeof *m->rbuf);
    m->req = orn_xcalloc((size_t)m->nslot * 2 * (size_t)P, sizeof *m->req);
    m->peer = orn_xcalloc(2 * (size_t)P, sizeof *m->peer);
    *out = m;
    return ORN_OK;
}

void rt_managed_free(RtManaged *m)
{
    if (!m) return;
    for (int i = 0; i < m->nslot * 2 * m->P; i++) orn_dsm_drop(m->dsm, &m->req[i]); /* errors */
    for (int s = 0; s < m->nslot; s++) {
        free(m->sbuf[s]);
        for (int q = 0; q < m->P; q++) free(m->rbuf[s * m->P + q]);
    }
    free(m->sbuf);
    free(m->rbuf);
    free(m->req);
    free(m->peer);
    free(m->ref);
    free(m->xbuf);
    free(m->cand);
    free(m->pri);
    free(m->sel);
    free(m->count);
    free(m);
}

int rt_managed_subrounds(const RtManaged *m)
{
    return m->m;
}

void rt_managed_round_begin(RtManaged *m, int subrounds)
{
    m->round_m = subrounds;
    m->t_mark = rt_now();
    m->t_work = 0;
}

/* The lag for the next round, from the fastest rank's seconds of work in this one (the same
 * on every rank): the sub-rounds that the link's latency takes, at least 1 (so that a
 * message has usually arrived when it is applied); m when that leaves no message. */
static int choose_lag(int m, double t_round, double lat)
{
    double sub = t_round / m, l = sub > 0 ? ceil(lat / sub) : HUGE_VAL;
    return l <= 1 ? 1 : l <= m - 2 ? (int)l : m;
}

/* The k-th largest of v[0..n) (1 <= k <= n), in linear expected time; v is reordered.
 * Pivots are medians of three (deterministic). */
static double kth_largest(double *v, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1, want = k - 1; /* index in descending order */
    while (lo < hi) {
        double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        double p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > p) i++;
            while (v[j] < p) j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            return v[want];
    }
    return v[want];
}

/* Typed pieces: T the element type. */
#define MG_TYPED(T, SFX)                                                                           \
    /* The changed elements (c != r) into cand, in index order, their priorities into pri;         \
     * returns their count. One branch-free pass over the target, then the changed ones. */        \
    static int64_t changes_##SFX(const T *c, const T *r, int64_t n, uint32_t *cand, double *pri)   \
    {                                                                                              \
        int64_t nc = 0;                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                          \
            cand[nc] = (uint32_t)i;                                                                \
            nc += c[i] != r[i];                                                                    \
        }                                                                                          \
        double mean = 0;                                                                           \
        for (int64_t x = 0; x < nc; x++) mean += fabs((double)r[cand[x]]);                         \
        double eps = (nc ? 0.01 * mean / (double)nc : 0) + 1e-30;                                  \
        for (int64_t x = 0; x < nc; x++) {                                                         \
            uint32_t i = cand[x];                                                                  \
            T u = (T)(c[i] - r[i]);                                                                \
            pri[x] = fabs((double)u) / (fabs((double)r[i]) + eps);                                 \
        }                                                                                          \
        return nc;                                                                                 \
    }                                                                                              \
    /* The message: the changed elements whose priority beats thr, then those equal to it in       \
     * index order until k; r takes the copy's value at each. Returns the entry count. */          \
    static int64_t pack_##SFX(const T *c, T *r, const uint32_t *cand, int64_t nc,                  \
                              const double *pri, double thr, int64_t k, int64_t ties, char *msg)   \
    {                                                                                              \
        int64_t cnt = 0;                                                                           \
        char *e = msg + MG_HDR;                                                                    \
        for (int64_t x = 0; x < nc && cnt < k; x++) {                                              \
            if (pri[x] < thr) continue;                                                            \
            if (pri[x] == thr) {                                                                   \
                if (ties <= 0) continue;                                                           \
                ties--;                                                                            \
            }                                                                                      \
            uint32_t i = cand[x];                                                                  \
            T u = (T)(c[i] - r[i]);                                                                \
            memcpy(e, &i, 4);                                                                      \
            memcpy(e + 4, &u, sizeof u);                                                           \
            e += 4 + sizeof u;                                                                     \
            r[i] = c[i];                                                                           \
            cnt++;                                                                                 \
        }                                                                                          \
        memcpy(msg, &cnt, 8);                                                                      \
        return cnt;                                                                                \
    }                                                                                              \
    /* Add message msg's entries (scaled by 1 / count[i] when count) to g, and to c and r too      \
     * (another rank's message). */                                                                \
    static void apply_##SFX(const char *msg, T *g, T *c, T *r, const unsigned char *count)         \
    {                                                                                              \
        int64_t cnt;                                                                               \
        memcpy(&cnt, msg, 8);                                                                      \
        const char *e = msg + MG_HDR;                                                              \
        for (int64_t x = 0; x < cnt; x++, e += 4 + sizeof(T)) {                                    \
            uint32_t i;                                                                            \
            T u;                                                                                   \
            memcpy(&i, e, 4);                                                                      \
            memcpy(&u, e + 4, sizeof u);                                                           \
            if (count && count[i] > 1) u = (T)(u / (T)count[i]);                                   \
            g[i] += u;                                                                             \
            if (c) {                                                                               \
                c[i] += u;                                                                         \
                r[i] += u;                                                                         \
            }                                                                                      \
        }                                                                                          \
    }
MG_TYPED(float, f32)
MG_TYPED(double, f64)
#undef MG_TYPED

/* Entries for the message after a sub-round of t seconds. */
static int64_t budget_entries(const RtManaged *m, double t)
{
    if (m->fixed_k >= 0) return m->fixed_k < m->n ? m->fixed_k : m->n;
    double k = m->budget * m->bw * t / ((double)(m->P - 1) * (double)m->entry);
    if (!(k < (double)m->n)) return m->n; /* also an unmeasurably fast link (inf) */
    return k > 0 ? (int64_t)k : 0;
}

/* Select and send message j (slot s) to every other rank, receives of theirs posted first. */
static int send_message(OrnRtBuffer *b, RtManaged *m, int s, double t)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    int P = m->P, status = ORN_OK;
    OrnDsmReq **req = m->req + (size_t)s * 2 * (size_t)P;
    int64_t nc = m->type == ORN_DSM_F32
                     ? changes_f32((const float *)(void *)b->replica, (const float *)(void *)m->ref,
                                   m->n, m->cand, m->pri)
                     : changes_f64((const double *)(void *)b->replica,
                                   (const double *)(void *)m->ref, m->n, m->cand, m->pri);
    int64_t k = budget_entries(m, t);
    double thr = 0;
    int64_t ties = k;
    if (k > 0 && nc > k) {
        int64_t above = 0;
        memcpy(m->sel, m->pri, (size_t)nc * sizeof *m->sel);
        thr = kth_largest(m->sel, nc, k);
        for (int64_t x = 0; x < nc; x++) above += m->pri[x] > thr;
        ties = k - above;
    }
    if (!m->sbuf[s]) { /* the slot's first use */
        m->sbuf[s] = orn_xmalloc(m->cap);
        for (int q = 0; q < P; q++)
            if (q != m->me) m->rbuf[s * P + q] = orn_xmalloc(m->cap);
    }
    char *msg = m->sbuf[s];
    int64_t cnt = k <= 0 ? 0
                  : m->type == ORN_DSM_F32
                      ? pack_f32((const float *)(void *)b->replica, (float *)(void *)m->ref,
                                 m->cand, nc, m->pri, thr, k, ties, msg)
                      : pack_f64((const double *)(void *)b->replica, (double *)(void *)m->ref,
                                 m->cand, nc, m->pri, thr, k, ties, msg);
    if (k <= 0) memcpy(msg, &cnt, 8);
    b->rt->stats.early += cnt;
    for (int q = 0; q < P && !status; q++)
        if (q != m->me) status = orn_dsm_irecv(dsm, m->rbuf[s * P + q], m->cap, q, MG_TAG, &req[q]);
    for (int q = 0; q < P && !status; q++)
        if (q != m->me)
            status =
                orn_dsm_isend(dsm, msg, MG_HDR + (size_t)cnt * m->entry, q, MG_TAG, &req[P + q]);
    return status;
}

/* Wait for every rank's message of slot s and apply them all in rank order. */
/* The staleness-aware count of every element in slot s's messages: one more per rank that
 * sent it (up to 255), or back to 0. */
static void count_ranks(RtManaged *m, int s, int add)
{
    for (int q = 0; q < m->P; q++) {
        const char *msg = q == m->me ? m->sbuf[s] : m->rbuf[s * m->P + q];
        int64_t cnt;
        memcpy(&cnt, msg, 8);
        for (int64_t x = 0; x < cnt; x++) {
            uint32_t i;
            memcpy(&i, msg + MG_HDR + (size_t)x * m->entry, 4);
            if (!add)
                m->count[i] = 0;
            else if (m->count[i] < 255)
                m->count[i]++;
        }
    }
}

static int apply_message(OrnRtBuffer *b, RtManaged *m, int s)
{
    OrnDsmCtx *dsm = b->rt->dsm;
    int P = m->P;
    OrnDsmReq **req = m->req + (size_t)s * 2 * (size_t)P;
    for (int i = 0; i < 2 * P; i++) m->peer[i] = i % P;
    int status = orn_dsm_waitall(dsm, req, m->peer, 2 * P, "managed buffer message");
    if (status) return status;
    if (m->count) count_ranks(m, s, 1); /* ranks per element in this exchange */
    for (int q = 0; q < P; q++) {
        int own = q == m->me;
        const char *msg = own ? m->sbuf[s] : m->rbuf[s * P + q];
        if (m->type == ORN_DSM_F32)
            apply_f32(msg, (float *)(void *)b->snap, own ? NULL : (float *)(void *)b->replica,
                      (float *)(void *)m->ref, m->count);
        else
            apply_f64(msg, (double *)(void *)b->snap, own ? NULL : (double *)(void *)b->replica,
                      (double *)(void *)m->ref, m->count);
    }
    if (m->count) count_ranks(m, s, 0);
    return ORN_OK;
}

int rt_managed_boundary(OrnRtBuffer *b, int j)
{
    RtManaged *m = b->mg;
    double now = rt_now(), t = now - m->t_mark;
    int status = ORN_OK;
    orn_dsm_touch(b->target); /* changes are applied on arrival */
    m->t_work += t;
    int ns = m->lag + 1; /* slots in use this round (lag <= m - 2 when anything is sent) */
    if (j + m->lag <= m->round_m - 2) status = send_message(b, m, j % ns, t);
    if (!status && j >= m->lag) status = apply_message(b, m, (j - m->lag) % ns);
    m->t_mark = rt_now();
    return status;
}

int rt_managed_flush(OrnRtBuffer *b)
{
    RtManaged *m = b->mg;
    OrnDsmCtx *dsm = b->rt->dsm;
    int P = m->P;
    orn_dsm_touch(b->target);
    int64_t vol = m->n;
    size_t bytes = (size_t)vol * m->es, stride = bytes + 8;
    char *all = m->xbuf, *mine = all + (size_t)m->me * stride;
    m->t_work += rt_now() - m->t_mark;
    memcpy(mine + bytes, &m->t_work, 8);
    /* this rank's unsent changes: copy - R */
    if (m->type == ORN_DSM_F32) {
        const float *c = (const float *)(void *)b->replica, *r = (const float *)(void *)m->ref;
        float *d = (float *)(void *)mine;
        for (int64_t i = 0; i < vol; i++) d[i] = c[i] - r[i];
    } else {
        const double *c = (const double *)(void *)b->replica, *r = (const double *)(void *)m->ref;
        double *d = (double *)(void *)mine;
        for (int64_t i = 0; i < vol; i++) d[i] = c[i] - r[i];
    }
    int status = orn_dsm_allgather_into(dsm, all, stride, "buffer flush");
    if (status) return status;
    if (b->stale_aware)
        rt_stale_add(m->type, b->snap, all, stride, P, vol);
    else
        for (int q = 0; q < P && !status; q++)
            status = rt_buffer_add_changes(b, b->snap, all + (size_t)q * stride, vol);
    double fastest = HUGE_VAL;
    for (int q = 0; q < P; q++) {
        double t;
        memcpy(&t, all + (size_t)q * stride + bytes, 8);
        if (t < fastest) fastest = t;
    }
    if (!m->fixed_lag) m->lag = b->mg_lag = choose_lag(m->m, fastest, b->rt->link_lat);
    memcpy(b->replica, b->snap, bytes);
    memcpy(m->ref, b->snap, bytes);
    b->rt->stats.flushed += vol;
    m->t_mark = rt_now();
    return status;
}
