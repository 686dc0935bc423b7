/* plan_check.c: the plan check shared by the analyzer and the runtime (plan.h).
 *
 * Every rule here is one the runtime's schedules rely on; a plan that passes runs. The
 * rules speak of plan data only (and of the facts the caller knows about the arrays), so
 * they hold in the program's declared order (the analyzer) as in storage order (the
 * runtime): permuting an array's dimensions, or the keys, permutes key_dim and the halo
 * widths with them and changes no answer. Its own library (orn_plan), with no
 * dependencies, so the analyzer links it without the runtime. */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>

static int fail(char *msg, int size, int at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *msg, int size, int at, const char *fmt, ...)
{
    if (msg && size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)size, fmt, ap);
        va_end(ap);
    }
    return at;
}

static const char *strategy_name(OrnRtStrategy s)
{
    switch (s) {
    case ORN_RT_1D:
        return "1d";
    case ORN_RT_2D:
        return "2d";
    case ORN_RT_2D_ORDERED:
        return "2d_ordered";
    case ORN_RT_UNIMODULAR:
        return "unimodular";
    case ORN_RT_SERIAL:
        return "serial";
    }
    return "?";
}

/* Determinant of the leading n x n block of m (n <= 4), by cofactors along row r. */
static long long det(const int m[ORN_RT_MAXDIM][ORN_RT_MAXDIM], int n, int r, unsigned cols)
{
    if (r == n) return 1;
    long long d = 0;
    int sign = 1;
    for (int c = 0; c < n; c++) {
        if (cols & (1u << c)) continue;
        if (m[r][c]) d += sign * (long long)m[r][c] * det(m, n, r + 1, cols | (1u << c));
        sign = -sign;
    }
    return d;
}

/* Dimensions of array a tied to key k, and the last such dimension. */
static int tied(const OrnRtPlanArray *a, int k, int *dim)
{
    int n = 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->key_dim[d] == k) {
            n++;
            if (dim) *dim = d;
        }
    return n;
}

static int plan_rules(const OrnRtPlan *p, char *msg, int size)
{
    int na = p->narrays;
    if (p->version != ORN_RT_PLAN_VERSION)
        return fail(msg, size, na, "plan version %d, runtime expects %d", p->version,
                    ORN_RT_PLAN_VERSION);
    if (p->nkeys < 1 || p->nkeys > ORN_RT_MAXDIM)
        return fail(msg, size, na, "%d loop keys (1 to %d allowed)", p->nkeys, ORN_RT_MAXDIM);
    if (p->narrays < 1 || !p->arrays)
        return fail(msg, size, na, "no iteration space, arguments or body");
    if (p->naccs < 0 || (p->naccs && !p->accs))
        return fail(msg, size, na, "accumulators without storage");
    if ((int)p->strategy < 0 || p->strategy > ORN_RT_SERIAL)
        return fail(msg, size, na, "unknown strategy %d", (int)p->strategy);
    int need = p->strategy == ORN_RT_1D ? 1 : p->strategy == ORN_RT_SERIAL ? 0 : 2;
    if (p->strategy == ORN_RT_UNIMODULAR && p->npart == 1) need = 1;
    if (p->npart != need)
        return fail(msg, size, na, "strategy needs %d partitioned key dimensions, plan has %d",
                    need, p->npart);
    for (int i = 0; i < need; i++) {
        if (p->part_dims[i] < 0 || p->part_dims[i] >= p->nkeys)
            return fail(msg, size, na, "partitioned key dimension %d out of range",
                        p->part_dims[i]);
        if (p->part_count[i] < 0) return fail(msg, size, na, "negative block count");
    }
    if (need == 2 && p->part_dims[0] == p->part_dims[1])
        return fail(msg, size, na, "the two partitioned key dimensions are the same");
    if (p->flush_every < 0) return fail(msg, size, na, "negative flush interval");
    if (p->strategy == ORN_RT_UNIMODULAR) {
        if (p->inner != ORN_RT_1D && p->inner != ORN_RT_2D && p->inner != ORN_RT_2D_ORDERED)
            return fail(msg, size, na, "unimodular: inner strategy %s", strategy_name(p->inner));
        long long d = det(p->transform, p->nkeys, 0, 0);
        if (d != 1 && d != -1)
            return fail(msg, size, na,
                        "unimodular: the transform is not an integer matrix with "
                        "determinant +-1");
    }
    for (int i = 0; i < p->naccs; i++)
        if ((int)p->accs[i].kind < 0 || p->accs[i].kind > ORN_RT_ACC_MAX ||
            (int)p->accs[i].type < 0 || p->accs[i].type > ORN_RT_F64)
            return fail(msg, size, na, "accumulator %d: bad kind or type", i);
    return -1;
}

/* Rules of one array that hold under every strategy. */
static int array_form(const OrnRtPlan *p, int k, char *msg, int size)
{
    const OrnRtPlanArray *a = &p->arrays[k];
    const char *nm = a->name ? a->name : "?";
    if ((int)a->role < 0 || a->role > ORN_RT_REMOTE)
        return fail(msg, size, k, "array %s: unknown role %d", nm, (int)a->role);
    if (a->ndim < 1 || a->ndim > ORN_RT_MAXDIM)
        return fail(msg, size, k, "array %s: %d dimensions (1 to %d allowed)", nm, a->ndim,
                    ORN_RT_MAXDIM);
    for (int d = 0; d < a->ndim; d++) {
        if (a->key_dim[d] < -1 || a->key_dim[d] >= p->nkeys)
            return fail(msg, size, k, "array %s: dimension %d mapped to key %d", nm, d,
                        a->key_dim[d]);
        if ((a->halo_lo[d] < 0 && a->halo_lo[d] != ORN_RT_HALO_ANY) ||
            (a->halo_hi[d] < 0 && a->halo_hi[d] != ORN_RT_HALO_ANY))
            return fail(msg, size, k, "array %s: negative halo width along dimension %d", nm, d);
    }
    if (k == 0) {
        if (a->role != ORN_RT_PARTITIONED || a->ndim != p->nkeys)
            return fail(msg, size, k,
                        "the iteration space %s must be partitioned and have one dimension per "
                        "key",
                        nm);
        for (int d = 0; d < a->ndim; d++)
            if (a->key_dim[d] != d)
                return fail(msg, size, k, "iteration space %s: dimension %d must map to key %d", nm,
                            d, d);
    }
    return -1;
}

/* Rules of one array's role under the plan's strategy. */
static int array_role(const OrnRtPlan *p, int k, const OrnRtPlanFacts *f, char *msg, int size)
{
    const OrnRtPlanArray *a = &p->arrays[k];
    const char *nm = a->name ? a->name : "?";
    const char *st = strategy_name(p->strategy);
    int k0 = p->npart > 0 ? p->part_dims[0] : -1, k1 = p->npart > 1 ? p->part_dims[1] : -1;
    int sparse = f && f[k].sparse, rows = f && f[k].rows;
    if (k > 0 && p->strategy == ORN_RT_UNIMODULAR &&
        (a->role == ORN_RT_PARTITIONED || a->role == ORN_RT_ROTATED))
        return fail(msg, size, k,
                    "array %s: unimodular loops take only prefetched, "
                    "replicated, buffered and remote arrays",
                    nm);
    if (a->role == ORN_RT_ROTATED) {
        int dim = -1;
        if (p->strategy != ORN_RT_2D && p->strategy != ORN_RT_2D_ORDERED)
            return fail(msg, size, k,
                        "array %s: only the 2d and 2d_ordered strategies rotate arrays", nm);
        if (tied(a, k1, &dim) != 1 || tied(a, k0, NULL))
            return fail(msg, size, k,
                        "%s: rotated array %s must be indexed by key %d in exactly one "
                        "dimension and not by key %d",
                        st, nm, k1, k0);
        for (int d = 0; d < a->ndim; d++)
            if (a->halo_lo[d] == ORN_RT_HALO_ANY || a->halo_hi[d] == ORN_RT_HALO_ANY)
                return fail(msg, size, k,
                            "array %s: a rotated array is read within its block and a bounded "
                            "halo only (its blocks travel)",
                            nm);
        /* Only read-only dense arrays get ghost cells (halo.c); the neighbours of any other
         * rotated block are travelling. */
        if ((a->halo_lo[dim] || a->halo_hi[dim]) && (!a->read_only || sparse))
            return fail(msg, size, k,
                        "array %s: a rotated array that is %s is read within its block only "
                        "(no halo along key %d)",
                        nm, sparse ? "sparse" : "written", k1);
    }
    if (k > 0 && a->role == ORN_RT_PARTITIONED && p->npart > 0 && !tied(a, k0, NULL))
        return fail(msg, size, k,
                    "%s: partitioned array %s must be indexed by key %d (or be rotated, "
                    "prefetched or replicated)",
                    st, nm, k0);
    if (rows && sparse && a->role != ORN_RT_REPLICATED && p->strategy != ORN_RT_SERIAL) {
        /* orn_rt_row serves the rows of the block's own tile, or of a whole copy */
        int key = a->key_dim[0], cut = 0;
        for (int i = 0; i < p->npart; i++) cut |= key >= 0 && key == p->part_dims[i];
        int own = (a->role == ORN_RT_PARTITIONED || a->role == ORN_RT_ROTATED) && cut &&
                  a->halo_lo[0] == 0 && a->halo_hi[0] == 0;
        int with = (a->role == ORN_RT_PARTITIONED || a->role == ORN_RT_ROTATED) && cut;
        if (!own && with) /* the rows are the block's, but other rows are read too */
            return fail(msg, size, k,
                        "array %s: row views of a sparse array read the rows of the block's "
                        "own tile, but the loop reads %s at rows of other blocks too (a row "
                        "view or an element whose row subscript is not the row key alone); "
                        "read those from another array with the same data (loaded again), "
                        "which the runtime prefetches",
                        nm, nm);
        if (!own)
            return fail(msg, size, k,
                        "array %s: row views of a sparse array need it replicated, or "
                        "partitioned (or rotated) along its rows with the blocks",
                        nm);
    }
    return -1;
}

int orn_rt_plan_check(const OrnRtPlan *p, const OrnRtPlanFacts *facts, char *msg, int size)
{
    if (!p) return fail(msg, size, 0, "no plan");
    int at = plan_rules(p, msg, size);
    if (at >= 0) return at;
    for (int k = 0; k < p->narrays; k++) {
        at = array_form(p, k, msg, size);
        if (at < 0) at = array_role(p, k, facts, msg, size);
        if (at >= 0) return at;
    }
    return -1;
}
