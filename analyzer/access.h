/* access.h: every access a parallel_for makes to a dist array, with its subscripts
 * classified for the dependence test.
 *
 * Collected from the body after semantic analysis (node->type, N_NAME.sym, OrnLoop):
 *   - element reads and writes A[i, j], views A[:, j] (':' touches the whole dimension),
 *     compound assignments (read and write), whole-array reads (sum(A), dot(A, B),
 *     norm(A)); rows/cols/dim/nnz/len read no elements;
 *   - the value variable: a read of the iteration space at the key; assigning it is a
 *     write-back at the key;
 *   - buffer updates (never conflict);
 *   - accesses under if/for/while, taken as if they always happen (flagged `conditional`);
 *   - accesses in user functions called from the body, analysed as if inlined at each call
 *     (parameters bound to the classified arguments; a recursive call is analysed once more
 *     with unknown parameters, which covers every deeper activation).
 *
 * Subscripts: a*k + c with k a loop key and a, c integer constants (consts and constant
 * expressions fold); constants; ':'; anything else is unknown. Variables assigned exactly
 * once (with '=') are followed to their definition, so `r = i + 1; A[r]` is A[i + 1]. An
 * unknown subscript is loop-invariant when it depends only on consts, params, variables
 * from outside the loop, and for-variables over invariant ranges (it then names the same
 * elements in every iteration). */
#ifndef ORN_ACCESS_H
#define ORN_ACCESS_H

#include <stdbool.h>

#include "dep.h"
#include "unit.h"

typedef struct OrnAccess {
    OrnSym *array;                    /* the dist array, or the buffer for buffer updates */
    OrnDepRef ref;                    /* ref.array indexes OrnAccessList.arrays */
    OrnSpan span;                     /* A[i, j], the value variable, or the whole-array argument */
    OrnSpan sub_span[ORN_DEP_MAXDIM]; /* each subscript (the access span for implicit ones) */
    const char *why_unknown[ORN_DEP_MAXDIM]; /* UNKNOWN subscripts: why, in words, or NULL */
    const OrnNode *callee; /* the N_FN the access is in, or NULL (the loop body) */
    OrnSpan call_site;     /* callee: the call in the loop body that reaches it */
    bool conditional;      /* under if, for or while */
    bool via_value;        /* the value variable (read, or written back) */
    bool whole;            /* a whole-array read: sum(A), dot(A, B), norm(A) */
    bool buffer_update;    /* B[...] += / -= on a buffer */
    bool additive;         /* a write by += or -= (one a buffer could take instead) */
    bool row_view;         /* the iterator of for (k, v) in A[i, :] */
} OrnAccess;

/* A subscript proven to lie between key `key` and `inner`: `call` is min(inner, U) with U
 * at least the key's last value, or max(inner, L) with L <= 0 (either order), and inner is
 * that key plus a window (access.c, clamp). The code generators test the key's and inner's
 * spans instead of the clamp's (codegen/version.c). In the loop body itself, not in the
 * functions it calls. */
typedef struct OrnClamp {
    const OrnNode *call, *inner;
    int key;
} OrnClamp;

typedef struct OrnAccessList {
    OrnAccess *v;
    int n;
    OrnSym **arrays; /* distinct arrays: the iteration space first, then by first use */
    int narrays;
    OrnClamp *clamps;
    int nclamps;
} OrnAccessList;

/* Collect the accesses of one loop; everything is allocated from the unit's arena. */
void orn_access_collect(OrnUnit *u, const OrnLoop *loop, OrnAccessList *out);

/* "read", "write", "read and write", "update (buffer)". */
const char *orn_access_kind(const OrnAccess *a);

#endif
