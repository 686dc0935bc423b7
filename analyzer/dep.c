/* dep.c: the exact dependence test over unbounded nonnegative keys, and range arithmetic
 * on dependence vectors. See dep.h for the model.
 *
 * Unknowns: x_p = k_p (first iteration) are numbered p, y_p = k'_p (second iteration) are
 * numbered n + p. Every equation involves one or two unknowns. Each connected group of
 * unknowns (linked by two-unknown equations) is written as u = P_u * s + Q_u for one integer
 * parameter s >= 0 of the group: a spanning tree fixes P and Q (an integrality condition on
 * a new unknown is a congruence on s, solved by substituting s = L*s' + s0), and every
 * other equation of the group is linear in s, so it either always holds, never holds, or
 * fixes s. u >= 0 bounds s on one side. The group has solutions iff the bounds meet.
 * Unknowns that appear in no equation are free: s >= 0, u = s. */
#include "dep.h"

#include <stdio.h>
#include <string.h>

/* ---- checked arithmetic: any overflow sets *ovf ---- */

static int64_t add_ck(int64_t a, int64_t b, bool *ovf)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *ovf = true;
        return 0;
    }
    return r;
}

static int64_t sub_ck(int64_t a, int64_t b, bool *ovf)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) {
        *ovf = true;
        return 0;
    }
    return r;
}

static int64_t mul_ck(int64_t a, int64_t b, bool *ovf)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *ovf = true;
        return 0;
    }
    return r;
}

/* Floor and ceiling of a / b for b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && (a < 0)) q--;
    return q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && (a > 0)) q++;
    return q;
}

/* Nonnegative remainder of a modulo m > 0. */
static int64_t mod_pos(int64_t a, int64_t m)
{
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Inverse of a modulo m (gcd(a, m) == 1, m >= 1), in [0, m). */
static int64_t inv_mod(int64_t a, int64_t m)
{
    if (m == 1) return 0;
    /* extended Euclid on (a mod m, m); values stay below m, no overflow */
    int64_t r0 = m, r1 = mod_pos(a, m), t0 = 0, t1 = 1;
    while (r1) {
        int64_t q = r0 / r1, t;
        t = r0 - q * r1;
        r0 = r1;
        r1 = t;
        t = t0 - q * t1;
        t0 = t1;
        t1 = t;
    }
    return mod_pos(t0, m);
}

/* ---- ranges ---- */

OrnDepRange orn_dep_range(int64_t lo, int64_t hi)
{
    OrnDepRange r = {lo, hi};
    return r;
}

OrnDepRange orn_dep_exact(int64_t v)
{
    return orn_dep_range(v, v);
}

OrnDepRange orn_dep_any(void)
{
    return orn_dep_range(ORN_DEP_NINF, ORN_DEP_PINF);
}

bool orn_dep_range_is_zero(OrnDepRange r)
{
    return r.lo == 0 && r.hi == 0;
}

bool orn_dep_range_has_zero(OrnDepRange r)
{
    return r.lo <= 0 && r.hi >= 0;
}

bool orn_dep_range_contains(OrnDepRange r, int64_t v)
{
    return r.lo <= v && v <= r.hi;
}

bool orn_dep_range_equal(OrnDepRange a, OrnDepRange b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

static int64_t neg_bound(int64_t b)
{
    if (b == ORN_DEP_NINF) return ORN_DEP_PINF;
    if (b == ORN_DEP_PINF) return ORN_DEP_NINF;
    return -b;
}

OrnDepRange orn_dep_range_neg(OrnDepRange r)
{
    return orn_dep_range(neg_bound(r.hi), neg_bound(r.lo));
}

/* Sum of two bounds of the same side (both lower or both upper); infinities absorb,
 * overflow saturates outward (a wider range is always sound). */
static int64_t add_bound(int64_t a, int64_t b, bool lower)
{
    int64_t inf = lower ? ORN_DEP_NINF : ORN_DEP_PINF;
    if (a == inf || b == inf) return inf;
    int64_t r;
    if (__builtin_add_overflow(a, b, &r) || r == ORN_DEP_NINF || r == ORN_DEP_PINF) return inf;
    return r;
}

OrnDepRange orn_dep_range_add(OrnDepRange a, OrnDepRange b)
{
    return orn_dep_range(add_bound(a.lo, b.lo, true), add_bound(a.hi, b.hi, false));
}

/* b * f for a bound b of the side given by `lower` after scaling (f > 0). */
static int64_t scale_bound(int64_t b, int64_t f, bool lower)
{
    if (b == ORN_DEP_NINF || b == ORN_DEP_PINF) return b;
    int64_t r;
    if (__builtin_mul_overflow(b, f, &r) || r == ORN_DEP_NINF || r == ORN_DEP_PINF)
        return lower ? ORN_DEP_NINF : ORN_DEP_PINF;
    return r;
}

OrnDepRange orn_dep_range_scale(OrnDepRange r, int64_t f)
{
    if (f == 0) return orn_dep_exact(0);
    if (f < 0) {
        if (f == INT64_MIN) return orn_dep_any();
        return orn_dep_range_scale(orn_dep_range_neg(r), -f);
    }
    return orn_dep_range(scale_bound(r.lo, f, true), scale_bound(r.hi, f, false));
}

/* P*[slo, shi] + Q, saturating. */
static OrnDepRange affine_range(int64_t P, int64_t Q, OrnDepRange s)
{
    return orn_dep_range_add(orn_dep_range_scale(s, P), orn_dep_exact(Q));
}

/* ---- the solver ---- */

typedef struct Eq {
    int u, v;       /* unknowns; v == -1 for a one-unknown equation */
    int64_t au, cu; /* au*u + cu == av*v + cv   (one unknown: au*u + cu == cv) */
    int64_t av, cv;
    bool tree; /* used to define v from u */
} Eq;

enum { NVAR = 2 * ORN_DEP_MAXDIM };

typedef struct Solver {
    int n; /* keys */
    Eq eq[ORN_DEP_MAXDIM];
    int neq;
    int comp[NVAR];
    int64_t P[NVAR], Q[NVAR];
    OrnDepRange srange[NVAR]; /* per group, indexed by group id */
    bool ovf;
} Solver;

static void all_any(int n, OrnDepVec *out)
{
    out->n = n;
    for (int p = 0; p < ORN_DEP_MAXDIM; p++) out->d[p] = p < n ? orn_dep_any() : orn_dep_exact(0);
}

/* Substitute s = L*s' + s0 in every unknown of group g. */
static void rescale(Solver *S, int g, int64_t L, int64_t s0)
{
    for (int w = 0; w < 2 * S->n; w++) {
        if (S->comp[w] != g) continue;
        int64_t Q = add_ck(mul_ck(S->P[w], s0, &S->ovf), S->Q[w], &S->ovf);
        S->P[w] = mul_ck(S->P[w], L, &S->ovf);
        S->Q[w] = Q;
    }
}

/* Define unknown `v` of equation e from its known side `u` (the equation is rewritten so
 * that u is the known one). Returns false when no integer solution exists. */
static bool define_from(Solver *S, int g, int u, int64_t au, int64_t cu, int v, int64_t av,
                        int64_t cv)
{
    /* av * v = au*(P_u s + Q_u) + cu - cv = A s + B */
    int64_t A = mul_ck(au, S->P[u], &S->ovf);
    int64_t B = sub_ck(add_ck(mul_ck(au, S->Q[u], &S->ovf), cu, &S->ovf), cv, &S->ovf);
    if (S->ovf) return true;
    if (av == INT64_MIN) {
        S->ovf = true;
        return true;
    }
    int64_t m = av < 0 ? -av : av;
    if (m > 1) {
        /* A s == -B (mod m) */
        int64_t Am = mod_pos(A, m), Bm = mod_pos(-(B % m), m);
        int64_t g0 = gcd64(Am, m); /* gcd(0, m) == m */
        if (Bm % g0 != 0) return false;
        int64_t L = m / g0;
        if (L > 1) {
            int64_t s0 = mod_pos(mul_ck(Bm / g0 % L, inv_mod(Am / g0, L), &S->ovf), L);
            rescale(S, g, L, s0);
            A = mul_ck(au, S->P[u], &S->ovf);
            B = sub_ck(add_ck(mul_ck(au, S->Q[u], &S->ovf), cu, &S->ovf), cv, &S->ovf);
            if (S->ovf) return true;
        }
    }
    if (A % m != 0 || B % m != 0 || (av == -1 && (A == INT64_MIN || B == INT64_MIN))) {
        /* cannot happen after the congruence step (or overflows): stay sound */
        S->ovf = true;
        return true;
    }
    S->comp[v] = g;
    S->P[v] = A / av;
    S->Q[v] = B / av;
    return true;
}

/* Build group g from root r. Returns false if some equation has no integer solution. */
static bool build_group(Solver *S, int g, int r)
{
    S->comp[r] = g;
    S->P[r] = 1;
    S->Q[r] = 0;
    bool grew = true;
    while (grew && !S->ovf) {
        grew = false;
        for (int i = 0; i < S->neq; i++) {
            Eq *e = &S->eq[i];
            if (e->v < 0 || e->tree) continue;
            bool ku = S->comp[e->u] == g, kv = S->comp[e->v] == g;
            if (ku && S->comp[e->v] < 0) {
                if (!define_from(S, g, e->u, e->au, e->cu, e->v, e->av, e->cv)) return false;
            } else if (kv && S->comp[e->u] < 0) {
                if (!define_from(S, g, e->v, e->av, e->cv, e->u, e->au, e->cu)) return false;
            } else {
                continue;
            }
            e->tree = true;
            grew = true;
        }
    }
    return true;
}

/* Apply the remaining equations of group g and nonnegativity: the range of s. Returns
 * false if empty. */
static bool bound_group(Solver *S, int g)
{
    bool fixed = false;
    int64_t sfix = 0;
    for (int i = 0; i < S->neq && !S->ovf; i++) {
        Eq *e = &S->eq[i];
        if (e->tree || S->comp[e->u] != g) continue;
        int64_t alpha, beta;
        alpha = mul_ck(e->au, S->P[e->u], &S->ovf);
        beta = add_ck(mul_ck(e->au, S->Q[e->u], &S->ovf), e->cu, &S->ovf);
        beta = sub_ck(beta, e->cv, &S->ovf);
        if (e->v >= 0) {
            alpha = sub_ck(alpha, mul_ck(e->av, S->P[e->v], &S->ovf), &S->ovf);
            beta = sub_ck(beta, mul_ck(e->av, S->Q[e->v], &S->ovf), &S->ovf);
        }
        if (S->ovf) return true;
        /* alpha s + beta == 0 */
        if (alpha == 0) {
            if (beta != 0) return false;
            continue;
        }
        if (alpha == INT64_MIN || beta == INT64_MIN) {
            S->ovf = true;
            return true;
        }
        if (alpha < 0) alpha = -alpha, beta = -beta;
        if (beta % alpha != 0) return false;
        int64_t s = -(beta / alpha);
        if (s < 0) return false;
        if (fixed && s != sfix) return false;
        fixed = true;
        sfix = s;
    }
    int64_t lo = 0, hi = ORN_DEP_PINF;
    if (fixed) lo = hi = sfix;
    for (int w = 0; w < 2 * S->n; w++) {
        if (S->comp[w] != g) continue;
        int64_t P = S->P[w], Q = S->Q[w];
        /* P s + Q >= 0 */
        if (P > 0) {
            if (Q == INT64_MIN) {
                S->ovf = true;
                return true;
            }
            int64_t b = ceil_div(-Q, P);
            if (b > lo) lo = b;
        } else if (P < 0) {
            if (P == INT64_MIN) {
                S->ovf = true;
                return true;
            }
            int64_t b = floor_div(Q, -P);
            if (b < hi) hi = b;
        } else if (Q < 0) {
            return false;
        }
    }
    if (lo > hi) return false;
    S->srange[g] = orn_dep_range(lo, hi);
    return true;
}

bool orn_dep_test(int nkeys, int ndims, const OrnSub *s1, const OrnSub *s2, OrnDepVec *out)
{
    Solver S;
    memset(&S, 0, sizeof S);
    if (nkeys < 1 || nkeys > ORN_DEP_MAXDIM || ndims > ORN_DEP_MAXDIM) {
        all_any(nkeys < 1 ? 1 : nkeys > ORN_DEP_MAXDIM ? ORN_DEP_MAXDIM : nkeys, out);
        return true;
    }
    S.n = nkeys;
    for (int m = 0; m < ndims; m++) {
        OrnSub a = s1[m], b = s2[m];
        /* An AFFINE with a == 0 or a key out of range is treated as its safe meaning. */
        if (a.ranged) a.kind = ORN_SUB_UNKNOWN; /* a window: any of its elements */
        if (b.ranged) b.kind = ORN_SUB_UNKNOWN;
        if (a.kind == ORN_SUB_AFFINE && a.a == 0) a.kind = ORN_SUB_CONST;
        if (b.kind == ORN_SUB_AFFINE && b.a == 0) b.kind = ORN_SUB_CONST;
        if (a.kind == ORN_SUB_AFFINE && (a.key < 0 || a.key >= nkeys)) a.kind = ORN_SUB_UNKNOWN;
        if (b.kind == ORN_SUB_AFFINE && (b.key < 0 || b.key >= nkeys)) b.kind = ORN_SUB_UNKNOWN;
        if (a.kind == ORN_SUB_ALL || a.kind == ORN_SUB_UNKNOWN || b.kind == ORN_SUB_ALL ||
            b.kind == ORN_SUB_UNKNOWN)
            continue;
        if (a.kind == ORN_SUB_CONST && b.kind == ORN_SUB_CONST) {
            if (a.c != b.c) return false;
            continue;
        }
        Eq *e = &S.eq[S.neq++];
        memset(e, 0, sizeof *e);
        if (a.kind == ORN_SUB_AFFINE && b.kind == ORN_SUB_CONST) {
            e->u = a.key, e->au = a.a, e->cu = a.c, e->v = -1, e->cv = b.c;
        } else if (a.kind == ORN_SUB_CONST) {
            e->u = nkeys + b.key, e->au = b.a, e->cu = b.c, e->v = -1, e->cv = a.c;
        } else {
            e->u = a.key, e->au = a.a, e->cu = a.c;
            e->v = nkeys + b.key, e->av = b.a, e->cv = b.c;
        }
    }
    for (int w = 0; w < NVAR; w++) S.comp[w] = -1;
    int ngroups = 0;
    for (int w = 0; w < 2 * nkeys; w++) {
        if (S.comp[w] >= 0) continue;
        int g = ngroups++;
        if (!build_group(&S, g, w)) return S.ovf ? (all_any(nkeys, out), true) : false;
        if (S.ovf) break;
        if (!bound_group(&S, g)) return S.ovf ? (all_any(nkeys, out), true) : false;
        if (S.ovf) break;
    }
    if (S.ovf) {
        all_any(nkeys, out);
        return true;
    }
    out->n = nkeys;
    for (int p = 0; p < ORN_DEP_MAXDIM; p++) out->d[p] = orn_dep_exact(0);
    for (int p = 0; p < nkeys; p++) {
        int x = p, y = nkeys + p;
        if (S.comp[x] == S.comp[y]) {
            bool ovf = false;
            int64_t slope = sub_ck(S.P[y], S.P[x], &ovf), off = sub_ck(S.Q[y], S.Q[x], &ovf);
            out->d[p] = ovf ? orn_dep_any() : affine_range(slope, off, S.srange[S.comp[x]]);
        } else {
            OrnDepRange ry = affine_range(S.P[y], S.Q[y], S.srange[S.comp[y]]);
            OrnDepRange rx = affine_range(S.P[x], S.Q[x], S.srange[S.comp[x]]);
            out->d[p] = orn_dep_range_add(ry, orn_dep_range_neg(rx));
        }
    }
    return true;
}

bool orn_dep_conflicts(const OrnDepRef *a, const OrnDepRef *b, bool ordered)
{
    if (a->array != b->array || a->exempt || b->exempt) return false;
    return (a->read && b->write) || (a->write && b->read) || (ordered && a->write && b->write);
}

/* ---- vectors ---- */

bool orn_dep_vec_is_zero(const OrnDepVec *v)
{
    for (int p = 0; p < v->n; p++)
        if (!orn_dep_range_is_zero(v->d[p])) return false;
    return true;
}

bool orn_dep_vec_equal(const OrnDepVec *a, const OrnDepVec *b)
{
    if (a->n != b->n) return false;
    for (int p = 0; p < a->n; p++)
        if (!orn_dep_range_equal(a->d[p], b->d[p])) return false;
    return true;
}

void orn_dep_vec_neg(const OrnDepVec *v, OrnDepVec *out)
{
    OrnDepVec t = *v;
    for (int p = 0; p < v->n; p++) t.d[p] = orn_dep_range_neg(v->d[p]);
    *out = t;
}

static void add_unique(OrnDepVec *out, int *count, const OrnDepVec *v)
{
    for (int i = 0; i < *count; i++)
        if (orn_dep_vec_equal(&out[i], v)) return;
    out[(*count)++] = *v;
}

int orn_dep_lexpos(const OrnDepVec *v, OrnDepVec *out)
{
    int count = 0;
    OrnDepVec cur = *v;
    for (int p = 0; p < cur.n; p++) {
        OrnDepRange r = cur.d[p];
        if (orn_dep_range_is_zero(r)) continue;
        if (r.lo > 0) {
            add_unique(out, &count, &cur);
            return count;
        }
        if (r.hi < 0) {
            OrnDepVec t;
            orn_dep_vec_neg(&cur, &t);
            add_unique(out, &count, &t);
            return count;
        }
        /* straddles or touches zero: positive part, negative part, then continue with 0 */
        if (r.hi > 0) {
            OrnDepVec t = cur;
            t.d[p] = orn_dep_range(1, r.hi);
            add_unique(out, &count, &t);
        }
        if (r.lo < 0) {
            OrnDepVec t = cur, tn;
            t.d[p] = orn_dep_range(r.lo, -1);
            orn_dep_vec_neg(&t, &tn);
            add_unique(out, &count, &tn);
        }
        cur.d[p] = orn_dep_exact(0);
    }
    return count;
}

void orn_dep_sign_normalize(OrnDepVec *v)
{
    for (int p = 0; p < v->n; p++) {
        OrnDepRange r = v->d[p];
        if (orn_dep_range_is_zero(r)) continue;
        if (r.hi <= 0) orn_dep_vec_neg(v, v); /* certainly nonpositive and not all 0 */
        return;                               /* positive, or straddling: keep */
    }
}

bool orn_dep_vec_lexpos(const OrnDepVec *v)
{
    for (int p = 0; p < v->n; p++) {
        OrnDepRange r = v->d[p];
        if (r.lo > 0) return true;
        if (r.lo < 0) return false;
        /* lo == 0: members with 0 here are decided by later entries */
    }
    return true; /* all entries >= 0 with the all-zero member allowed */
}

void orn_dep_transform(int n, const OrnDepMat *T, const OrnDepVec *v, OrnDepVec *out)
{
    OrnDepVec t;
    t.n = n;
    for (int r = 0; r < ORN_DEP_MAXDIM; r++) {
        OrnDepRange acc = orn_dep_exact(0);
        if (r < n)
            for (int c = 0; c < n; c++)
                if (T->m[r][c])
                    acc = orn_dep_range_add(acc, orn_dep_range_scale(v->d[c], T->m[r][c]));
        t.d[r] = acc;
    }
    *out = t;
}

const char *orn_dep_range_str(OrnDepRange r, char *buf, size_t size)
{
    if (r.lo == r.hi)
        snprintf(buf, size, "%lld", (long long)r.lo);
    else if (r.lo >= 1)
        snprintf(buf, size, "+");
    else if (r.lo >= 0)
        snprintf(buf, size, "0+");
    else
        snprintf(buf, size, "*");
    return buf;
}

const char *orn_dep_vec_str(const OrnDepVec *v, char *buf, size_t size)
{
    size_t len = 0;
    char e[32];
    len += (size_t)snprintf(buf + len, size - len, "[");
    for (int p = 0; p < v->n && len < size; p++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", p ? ", " : "",
                                orn_dep_range_str(v->d[p], e, sizeof e));
    if (len < size) snprintf(buf + len, size - len, "]");
    return buf;
}
