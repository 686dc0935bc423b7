/* dep.h: the dependence test. Pure integer math on classified subscripts; no AST, no I/O.
 *
 * A loop has n keys (n <= 4). Two accesses to the same array conflict when two iterations
 * k, k' (vectors of nonnegative integers: key ranges are unknown at compile time, so they
 * are treated as unbounded) touch the same element. In every array dimension the two
 * subscripts must then be equal:
 *
 *     ALL or UNKNOWN on either side      no constraint (touches / may touch anything)
 *     c1 vs c2 (constants)               c1 == c2, else the accesses are independent
 *     a*k_p + c vs e (constant)          fixes k_p
 *     a1*k_p + c1 vs a2*k'_q + c2        a linear Diophantine equation in two unknowns
 *
 * orn_dep_test solves that system exactly over the nonnegative integers (each equation
 * links at most two unknowns, so every connected group of unknowns is parameterized by one
 * nonnegative integer; congruences are folded in by re-parameterization, extra equations
 * fix the parameter, nonnegativity bounds it) and returns, per key dimension p, the exact
 * range (convex hull) of the distance k'_p - k_p over all solutions. The hull is exact for
 * the questions strategies ask (is the entry always 0? can it be negative?): the minimum
 * and maximum of a progression are attained.
 *
 * Overflow anywhere is answered conservatively: dependent, every entry '*'. */
#ifndef ORN_DEP_H
#define ORN_DEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ORN_DEP_MAXDIM = 4 }; /* keys of a loop and dimensions of an array */

/* One subscript, classified (see access.h for how expressions map to these). */
typedef enum {
    ORN_SUB_AFFINE,  /* a*k + c in key `key`, a != 0 */
    ORN_SUB_CONST,   /* c */
    ORN_SUB_ALL,     /* ':' (a view): every index of the dimension */
    ORN_SUB_UNKNOWN, /* anything else: may be any index */
} OrnSubKind;

typedef struct OrnSub {
    OrnSubKind kind;
    int key;      /* AFFINE: key index */
    int64_t a, c; /* AFFINE: a*k + c; CONST: c */
    bool varies;  /* UNKNOWN: may differ between iterations (depends on the key, the value,
                     array contents, random draws); false: loop-invariant (an outer
                     variable, a for-variable over an invariant range) */
    bool ranged;  /* AFFINE or CONST: c is any of [c, c2] (a window: `i + k` with k a
                     for-variable over a constant range); the dependence test takes such a
                     subscript as UNKNOWN, the halos as the whole range */
    int64_t c2;
    /* ranged, a window known at run time (c2 == c): plus s * n for n over [wlo, whi), the
     * bounds of a for whose values the run site can compute (access.h); s = -1 if wneg;
     * whi NULL: n is wlo itself (a shift: `i + lag`, lag a param) */
    const struct OrnNode *wlo, *whi;
    bool wneg;
    /* a window (whi set) moved by a shift known at run time: plus (minus, wshneg) the value
     * of wsh (`X[i + kw - 1 - k]`, kw a param); NULL: none */
    const struct OrnNode *wsh;
    bool wshneg;
} OrnSub;

/* A set of integers described by its hull [lo, hi]; lo == ORN_DEP_NINF is -infinity,
 * hi == ORN_DEP_PINF is +infinity. Finite bounds lie strictly between the two. */
#define ORN_DEP_NINF INT64_MIN
#define ORN_DEP_PINF INT64_MAX
typedef struct OrnDepRange {
    int64_t lo, hi;
} OrnDepRange;

/* A dependence vector: one range per key dimension. */
typedef struct OrnDepVec {
    int n;
    OrnDepRange d[ORN_DEP_MAXDIM];
} OrnDepVec;

/* Is there k, k' in N^nkeys with s1(k) == s2(k') in every one of the ndims dimensions?
 * If so returns true and sets *out to the hull of k' - k per key (the zero vector, k == k',
 * included when it is a solution). Returns false when the accesses are independent. */
bool orn_dep_test(int nkeys, int ndims, const OrnSub *s1, const OrnSub *s2, OrnDepVec *out);

/* One access as the dependence test sees it. */
typedef struct OrnDepRef {
    int array;        /* accesses conflict only within one array */
    bool read, write; /* a compound assignment (+=) is both */
    bool exempt;      /* never conflicts: buffer updates */
    int nsubs;
    OrnSub subs[ORN_DEP_MAXDIM];
} OrnDepRef;

/* Do a (in one iteration) and b (in another) conflict? Same array, neither exempt, and a
 * read against a write; two writes only when the loop is ordered (an unordered loop's
 * result may be any serial order's, so which write lands last is not fixed). */
bool orn_dep_conflicts(const OrnDepRef *a, const OrnDepRef *b, bool ordered);

/* Range helpers. */
OrnDepRange orn_dep_range(int64_t lo, int64_t hi);
OrnDepRange orn_dep_exact(int64_t v);
OrnDepRange orn_dep_any(void);
bool orn_dep_range_is_zero(OrnDepRange r); /* exactly {0} */
bool orn_dep_range_has_zero(OrnDepRange r);
bool orn_dep_range_equal(OrnDepRange a, OrnDepRange b);
OrnDepRange orn_dep_range_neg(OrnDepRange r);
OrnDepRange orn_dep_range_add(OrnDepRange a, OrnDepRange b); /* saturating */
OrnDepRange orn_dep_range_scale(OrnDepRange r, int64_t f);   /* saturating */
bool orn_dep_range_contains(OrnDepRange r, int64_t v);

bool orn_dep_vec_is_zero(const OrnDepVec *v);
bool orn_dep_vec_equal(const OrnDepVec *a, const OrnDepVec *b);
void orn_dep_vec_neg(const OrnDepVec *v, OrnDepVec *out);

/* Normalization. A conflict between accesses a (iteration k) and b (iteration k') is a
 * dependence in whichever order the two iterations run, so the set of distances is
 * D u -D (minus 0, which is one iteration).
 *
 * orn_dep_lexpos splits D u -D \ {0} into vectors whose members are all lexicographically
 * positive (the distance from the earlier to the later iteration in key order): a leading
 * entry that can be negative, zero or positive is cut into its positive part, its zero part
 * (and the rest is split recursively) and its negative part (negated). Writes at most
 * 2*n vectors to out and returns how many. Ordered loops use these.
 *
 * orn_dep_sign_normalize picks one sign for display and for sign-blind tests (unordered
 * loops): the first entry that is not exactly 0 is made nonnegative where that decides the
 * sign; an entry that straddles 0 ('*') is left as it is. */
int orn_dep_lexpos(const OrnDepVec *v, OrnDepVec *out);
void orn_dep_sign_normalize(OrnDepVec *v);

/* Every member of v is lexicographically positive or zero (entries straddling zero make
 * this false unless an earlier entry is certainly positive). */
bool orn_dep_vec_lexpos(const OrnDepVec *v);

/* An integer matrix (a transformation of the iteration space); row r gives new dim r. */
typedef struct OrnDepMat {
    int m[ORN_DEP_MAXDIM][ORN_DEP_MAXDIM];
} OrnDepMat;

/* out = T v by range arithmetic over the first n rows and columns. */
void orn_dep_transform(int n, const OrnDepMat *T, const OrnDepVec *v, OrnDepVec *out);

/* Contract vocabulary for an entry: an integer, "+" (lo >= 1), "0+" (lo >= 0) or "*"
 * (anything else; a superset). Writes into buf (at least 24 bytes) and returns it. */
const char *orn_dep_range_str(OrnDepRange r, char *buf, size_t size);
/* "[0, *]" into buf. */
const char *orn_dep_vec_str(const OrnDepVec *v, char *buf, size_t size);

#endif
