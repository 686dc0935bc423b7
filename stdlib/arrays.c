/* arrays.c: local arrays, dist-array constructors and loaders, collective element access
 * from top-level code, and views (OrnStdVec) with the built-in reductions over them. */
#include <stdarg.h>

#include "arena.h"
#include "orn_std.h"
#include "progress.h"
#include "timeline.h"

/* ---------------------------------------------------------------- helpers */

/* A load or save on the timeline (dsm/timeline.h): its span, or negative when off. */
static int64_t io_begin(OrnStdProg *p, const char *what, const char *path, int line)
{
    OrnTl *tl = orn_dsm_timeline(p->dsm);
    if (!tl) return -1;
    char name[96];
    snprintf(name, sizeof name, "%s (%s:%d)", what, p->file, line);
    int64_t sp = orn_tl_begin(tl, ORN_TL_IO, name);
    orn_tl_str(tl, sp, "path", path);
    orn_tl_int(tl, sp, "line", line);
    return sp;
}

static void io_end(OrnStdProg *p, int64_t sp)
{
    orn_tl_end(orn_dsm_timeline(p->dsm), sp);
}

/* A load on the progress line (rank 0, on a terminal): the DSM's loaders report the file's
 * bytes as they read them; ended by orn_progress_end. */
static void load_shown(OrnStdProg *p, const char *what, const char *path)
{
    if (!p->progress) return;
    const char *base = strrchr(path, '/');
    char label[160];
    snprintf(label, sizeof label, "%s(%s)", what, base && base[1] ? base + 1 : path);
    orn_progress_begin(p->progress, label, 0, ORN_PROGRESS_BYTES);
}

static size_t esize_of(int type)
{
    return orn_dsm_type_size((OrnDsmType)type);
}

static void store_double(int type, void *out, double v)
{
    switch (type) {
    case ORN_DSM_I32: {
        int32_t x = (int32_t)v;
        memcpy(out, &x, 4);
        break;
    }
    case ORN_DSM_I64: {
        int64_t x = (int64_t)v;
        memcpy(out, &x, 8);
        break;
    }
    case ORN_DSM_F32: {
        float x = (float)v;
        memcpy(out, &x, 4);
        break;
    }
    default:
        memcpy(out, &v, 8);
        break;
    }
}

/* A failure every rank agrees on, found from replicated data: printed once. */
static void fail_agreed(OrnStdProg *p, int line, const char *fmt, ...) ORN_STD_PRINTF(3, 4);
static void fail_agreed(OrnStdProg *p, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    orn_dsm_fail(p->dsm, ORN_E_ARG, "%s", msg);
    orn_std_fail(p, ORN_E_ARG, line, 1);
}

/* Every extent positive; dimensions counted from 0 (docs/language.md section 7). The same
 * extents on every rank (top-level code): the error is printed once. */
static void check_extents(OrnStdProg *p, int ndim, const int64_t *dims, const char *name, int line)
{
    for (int d = 0; d < ndim; d++)
        if (dims[d] <= 0)
            fail_agreed(p, line,
                        "%s%s%sextent %" PRId64 " in dimension %d: extents must be positive",
                        name ? "array " : "", name ? name : "", name ? ": " : "", dims[d], d);
}

/* ---------------------------------------------------------------- local arrays */

/* The elements as the constructor sets them; used: the storage held other values. */
static void arr_init(OrnStdArr *a, int init, double value, int64_t seed, bool used)
{
    char *q = a->data;
    if (init == ORN_STD_FILL)
        for (int64_t i = 0; i < a->n; i++) store_double(a->type, q + (size_t)i * a->esize, value);
    else if (init == ORN_STD_RAND || init == ORN_STD_RANDN)
        for (int64_t i = 0; i < a->n; i++)
            store_double(a->type, q + (size_t)i * a->esize,
                         orn_rt_rand_at((uint64_t)seed, i, init == ORN_STD_RANDN));
    else if (used)
        memset(q, 0, (size_t)a->n * a->esize);
}

OrnStdArr *orn_std_arr_new(OrnStdProg *p, int type, int ndim, const int64_t *dims, int init,
                           double value, int64_t seed, int line)
{
    check_extents(p, ndim, dims, NULL, line);
    OrnStdArr *a = calloc(1, sizeof *a);
    if (!a) orn_std_die(p, line, "out of memory");
    a->type = type;
    a->ndim = ndim;
    a->esize = esize_of(type);
    a->n = 1;
    for (int d = 0; d < ndim; d++) {
        a->dims[d] = dims[d];
        if (__builtin_mul_overflow(a->n, dims[d], &a->n) || a->n > ((int64_t)1 << 40))
            orn_std_die(p, line, "local array too large");
    }
    /* on a page from 4 KiB (support/arena.h) */
    a->data = orn_try_zalloc_data((size_t)a->n, a->esize);
    if (!a->data)
        orn_std_die(p, line, "out of memory for a local array of %" PRId64 " elements", a->n);
    arr_init(a, init, value, seed, false);
    return a;
}

OrnStdArr *orn_std_arr_take_slow(OrnStdProg *p, OrnStdArr **slot, int type, int ndim,
                                 const int64_t *dims, int init, double value, int64_t seed,
                                 int line)
{
    OrnStdArr *a = *slot;
    *slot = NULL;
    bool same = a && a->type == type && a->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = a->dims[d] == dims[d];
    if (same) {
        arr_init(a, init, value, seed, true);
    } else {
        orn_std_arr_free(a);
        a = orn_std_arr_new(p, type, ndim, dims, init, value, seed, line);
    }
    a->home = slot;
    return a;
}

void orn_std_arr_free(OrnStdArr *a)
{
    if (!a) return;
    if (a->home && !*a->home) { /* back into its slot for the next iteration */
        *a->home = a;
        return;
    }
    free(a->data);
    free(a);
}

void orn_std_arr_save(OrnStdProg *p, const OrnStdArr *a, const char *path, int line)
{
    int64_t n = p->rank == 0 ? a->n : 0;
    int64_t *keys = calloc((size_t)(n ? n : 1) * (size_t)a->ndim, sizeof *keys);
    if (!keys) orn_std_die(p, line, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i;
        for (int d = a->ndim - 1; d >= 0; d--) {
            keys[i * a->ndim + d] = r % a->dims[d];
            r /= a->dims[d];
        }
    }
    OrnDsmArray *tmp = NULL;
    int64_t sp = io_begin(p, "save", path, line);
    int st = orn_dsm_from_elements(p->dsm, (OrnDsmType)a->type, a->ndim, a->dims, 0, n, keys,
                                   a->data, NULL, NULL, &tmp);
    free(keys);
    if (st) orn_std_fail(p, st, line, 1);
    st = orn_dsm_save(tmp, path);
    orn_dsm_free(tmp);
    io_end(p, sp);
    if (st) orn_std_fail(p, st, line, 1);
}

/* ---------------------------------------------------------------- dist arrays */

OrnDsmArray *orn_std_dist_new_for(OrnStdProg *p, const OrnRtPlan *plan, int k,
                                  const OrnDsmArray *space, int type, int ndim, const int64_t *dims,
                                  int init, double value, int64_t seed, const char *name, int line)
{
    OrnDsmArray *a = NULL;
    int st;
    check_extents(p, ndim, dims, name, line);
    if (init == ORN_STD_RAND || init == ORN_STD_RANDN) {
        st = orn_rt_rand_array(p->rt, (OrnDsmType)type, ndim, dims, (uint64_t)seed,
                               init == ORN_STD_RANDN, &a);
    } else {
        OrnDsmPart part;
        int cut = plan && (k ? orn_rt_aligned_part_for(p->rt, plan, k, space, ndim, dims, &part)
                             : orn_rt_space_part(p->rt, plan, ndim, dims, &part));
        st = orn_dsm_dense_part(p->dsm, (OrnDsmType)type, ndim, dims, cut ? &part : NULL, &a);
        if (cut) orn_dsm_part_free(&part);
        if (!st && init == ORN_STD_FILL) {
            unsigned char v[8];
            store_double(type, v, value);
            st = orn_dsm_fill(a, v);
        }
    }
    /* Every rank leaves the constructor together: making a large array touches its pages,
     * which can take one rank many milliseconds more than another (fresh memory), and
     * that skew would otherwise be waited for, and counted, in the first loop. */
    if (!st) st = orn_dsm_barrier(p->dsm);
    if (st) orn_std_fail(p, st, line, 0);
    orn_dsm_set_name(a, name);
    return a;
}

void orn_std_dist_replica(OrnStdProg *p, OrnDsmArray *a, int line)
{
    int st = orn_rt_replica_reserve(p->rt, a);
    if (st) orn_std_fail(p, st, line, 0);
}

OrnDsmArray *orn_std_dist_new(OrnStdProg *p, int type, int ndim, const int64_t *dims, int init,
                              double value, int64_t seed, const char *name, int line)
{
    return orn_std_dist_new_for(p, NULL, 0, NULL, type, ndim, dims, init, value, seed, name, line);
}

/* ---- arrays stored in another order than declared (analyzer/layout.h) */

typedef struct PermInit {
    OrnDsmType type;
    uint64_t seed;
    int normal, nd;
    const int *perm;
    int64_t sdims[ORN_DSM_MAXDIM], ldims[ORN_DSM_MAXDIM];
} PermInit;

/* A storage row-major index to the logical row-major index. */
static int64_t logical_index(int nd, const int *perm, const int64_t *sdims, const int64_t *ldims,
                             int64_t index)
{
    int64_t lkey[ORN_DSM_MAXDIM] = {0, 0, 0, 0};
    for (int s = nd - 1; s >= 0; s--) {
        lkey[perm[s]] = index % sdims[s];
        index /= sdims[s];
    }
    int64_t li = 0;
    for (int d = 0; d < nd; d++) li = li * ldims[d] + lkey[d];
    return li;
}

static void perm_rand_elem(int64_t index, void *out, void *ud)
{
    const PermInit *r = ud;
    orn_rt_rand_elem(r->type, r->seed, logical_index(r->nd, r->perm, r->sdims, r->ldims, index),
                     r->normal, out);
}

OrnDsmArray *orn_std_dist_new_perm(OrnStdProg *p, int type, int ndim, const int64_t *dims, int init,
                                   double value, int64_t seed, const int *perm, const char *name,
                                   int line)
{
    check_extents(p, ndim, dims, name, line);
    PermInit r = {(OrnDsmType)type, (uint64_t)seed, init == ORN_STD_RANDN, ndim, perm, {0}, {0}};
    for (int s = 0; s < ndim; s++) {
        r.sdims[s] = dims[perm[s]];
        r.ldims[s] = dims[s];
    }
    OrnDsmArray *a = NULL;
    if (init != ORN_STD_RAND && init != ORN_STD_RANDN) {
        a = orn_std_dist_new(p, type, ndim, r.sdims, init, value, seed, name, line);
    } else {
        int st = orn_dsm_dense(p->dsm, (OrnDsmType)type, ndim, r.sdims, &a);
        if (!st) st = orn_dsm_init(a, perm_rand_elem, &r);
        if (!st) st = orn_dsm_barrier(p->dsm); /* as orn_std_dist_new_for's */
        if (st) orn_std_fail(p, st, line, 0);
        orn_dsm_set_name(a, name);
    }
    orn_dsm_set_perm(a, perm);
    return a;
}

/* Collective. *out: a's elements in another order, from the elements each rank owns (rank
 * 0 for replicated tiles) with their keys rearranged: to_declared, a (stored as perm says)
 * becomes an array in declared order (dimension perm[s] = a's s); else a (in declared
 * order) becomes one stored as perm says (dimension s = a's perm[s]). Returns the status. */
static int reordered(OrnStdProg *p, const OrnDsmArray *a, const int *perm, bool to_declared,
                     const char *what, int line, OrnDsmArray **out)
{
    int nd = a->ndim, me = orn_dsm_rank(p->dsm);
    int64_t n = 0, dims[ORN_DSM_MAXDIM] = {1, 1, 1, 1}, *keys;
    char *vals;
    for (int s = 0; s < nd; s++) {
        if (to_declared)
            dims[perm[s]] = a->dims[s];
        else
            dims[s] = a->dims[perm[s]];
    }
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        int own = a->part.owner[t];
        if (a->tiles[t].held && (own == me || (own == ORN_DSM_ALL && me == 0))) n += a->tiles[t].n;
    }
    keys = calloc((size_t)(n ? n : 1) * (size_t)nd, sizeof *keys);
    vals = malloc((size_t)(n ? n : 1) * a->esize);
    if (!keys || !vals) orn_std_die(p, line, "%s: out of memory", what);
    int64_t j = 0;
    for (int64_t t = 0; t < a->part.ntiles; t++) {
        const OrnDsmTile *tl = &a->tiles[t];
        int own = a->part.owner[t];
        if (!tl->held || !tl->n || !(own == me || (own == ORN_DSM_ALL && me == 0))) continue;
        memcpy(vals + (size_t)j * a->esize, tl->vals, (size_t)tl->n * a->esize);
        for (int64_t e = 0; e < tl->n; e++, j++) {
            int64_t rest = e, k[ORN_DSM_MAXDIM];
            for (int d = nd - 1; d >= 0; d--) {
                int64_t w = tl->hi[d] - tl->lo[d];
                k[d] = tl->lo[d] + rest % w;
                rest /= w;
            }
            for (int s = 0; s < nd; s++) {
                if (to_declared)
                    keys[j * nd + perm[s]] = k[s];
                else
                    keys[j * nd + s] = k[perm[s]];
            }
        }
    }
    int st = orn_dsm_from_elements(p->dsm, a->type, nd, dims, 0, n, keys, vals, NULL, NULL, out);
    free(keys);
    free(vals);
    return st;
}

void orn_std_save_perm(OrnStdProg *p, OrnDsmArray *a, const int *perm, const char *path, int line)
{
    /* The elements this rank owns, keyed logically, form a temporary array in declared
     * order, which is saved as usual. */
    int64_t sp = io_begin(p, "save", path, line);
    OrnDsmArray *tmp = NULL;
    int st = reordered(p, a, perm, true, "save", line, &tmp);
    if (!st) {
        orn_dsm_set_name(tmp, a->name);
        st = orn_dsm_save(tmp, path);
    }
    orn_dsm_free(tmp);
    io_end(p, sp);
    if (st) {
        orn_dsm_fail_ctx(p->dsm, st, "%s", "save");
        orn_std_fail(p, st, line, 1);
    }
}

static unsigned load_flags(bool allow_nonfinite)
{
    return allow_nonfinite ? ORN_DSM_ALLOW_NONFINITE : 0;
}

/* After a loader: its progress line and I/O span ended; a failure ends the job (agreed). */
static void load_end(OrnStdProg *p, int64_t sp, int st, const char *what, int line)
{
    orn_progress_end(p->progress);
    io_end(p, sp);
    if (st) {
        orn_dsm_fail_ctx(p->dsm, st, "%s", what);
        orn_std_fail(p, st, line, 1);
    }
}

OrnDsmArray *orn_std_load_triplets(OrnStdProg *p, const char *path, bool allow_nonfinite,
                                   const char *name, int line)
{
    OrnDsmArray *a = NULL;
    int64_t sp = io_begin(p, "load_triplets", path, line);
    load_shown(p, "load_triplets", path);
    int st = orn_dsm_load_triplets(p->dsm, path, load_flags(allow_nonfinite), &a);
    load_end(p, sp, st, "load_triplets", line);
    orn_dsm_set_name(a, name);
    return a;
}

void orn_std_load_libsvm(OrnStdProg *p, const char *path, bool allow_nonfinite, OrnDsmArray **X,
                         OrnDsmArray **y, const char *xname, const char *yname, int line)
{
    int64_t sp = io_begin(p, "load_libsvm", path, line);
    load_shown(p, "load_libsvm", path);
    int st = orn_dsm_load_libsvm(p->dsm, path, load_flags(allow_nonfinite), X, y);
    load_end(p, sp, st, "load_libsvm", line);
    orn_dsm_set_name(*X, xname);
    orn_dsm_set_name(*y, yname);
}

OrnDsmArray *orn_std_load_docword(OrnStdProg *p, const char *path, const char *name, int line)
{
    OrnDsmArray *a = NULL;
    int64_t sp = io_begin(p, "load_docword", path, line);
    load_shown(p, "load_docword", path);
    int st = orn_dsm_load_docword(p->dsm, path, &a);
    load_end(p, sp, st, "load_docword", line);
    orn_dsm_set_name(a, name);
    return a;
}

OrnDsmArray *orn_std_load(OrnStdProg *p, const char *path, int type, int ndim, int sparse,
                          bool allow_nonfinite, const char *name, int line)
{
    OrnDsmArray *a = NULL;
    int64_t sp = io_begin(p, "load", path, line);
    load_shown(p, "load", path);
    int st = orn_dsm_load(p->dsm, path, type, load_flags(allow_nonfinite), &a);
    load_end(p, sp, st, "load", line);
    if (a->ndim == ndim && a->sparse && !sparse && (int)a->type == type) {
        /* a text file (a binary one says dense or sparse) without some elements */
        char ext[160];
        int at = 0;
        for (int d = 0; d < a->ndim && at < (int)sizeof ext - 24; d++)
            at += snprintf(ext + at, sizeof ext - (size_t)at, "%s%" PRId64, d ? " x " : "",
                           a->dims[d]);
        double vol = 1;
        for (int d = 0; d < a->ndim; d++) vol *= (double)a->dims[d];
        fail_agreed(p, line,
                    "load: '%s' lists %" PRId64 " of the %.0f elements of a dense %d-D array "
                    "(%s, from its largest indices): a dense array's text file lists every "
                    "element, so a line is missing or an index is past the others; declare "
                    "sparse = true for an array that stores only some",
                    path, a->nnz, vol, a->ndim, ext);
    }
    if (a->ndim != ndim || !a->sparse != !sparse || (int)a->type != type) {
        /* the element type named only where it differs: a text file's is the declared one */
        bool ty = (int)a->type != type;
        fail_agreed(p, line,
                    "load: '%s' holds %s%s%s%s%d-D array, but the program declares %s%s%s%s%d-D "
                    "one (use load(path, type = ..., dims = ..., sparse = ...))",
                    path, a->sparse || !ty ? "a " : "an ", a->sparse ? "sparse " : "",
                    ty ? orn_dsm_type_name(a->type) : "", ty ? " " : "", a->ndim,
                    sparse || !ty ? "a " : "an ", sparse ? "sparse " : "",
                    ty ? orn_dsm_type_name((OrnDsmType)type) : "", ty ? " " : "", ndim);
    }
    orn_dsm_set_name(a, name);
    return a;
}

/* A loaded array (declared order) stored as perm says: the elements this rank owns, keyed in
 * storage order (the reverse of orn_std_save_perm). Frees a. */
static OrnDsmArray *stored_as(OrnStdProg *p, OrnDsmArray *a, const int *perm, const char *what,
                              const char *path, const char *name, int line)
{
    OrnDsmArray *out = NULL;
    int st = reordered(p, a, perm, false, what, line, &out);
    orn_dsm_free(a);
    if (st) {
        orn_dsm_fail_ctx(p->dsm, st, "%s: %s", what, path);
        orn_std_fail(p, st, line, 1);
    }
    orn_dsm_set_name(out, name);
    orn_dsm_set_perm(out, perm);
    return out;
}

OrnDsmArray *orn_std_load_perm(OrnStdProg *p, const char *path, int type, int ndim,
                               bool allow_nonfinite, const int *perm, const char *name, int line)
{
    OrnDsmArray *a = orn_std_load(p, path, type, ndim, 0, allow_nonfinite, name, line);
    return stored_as(p, a, perm, "load", path, name, line);
}

OrnDsmArray *orn_std_load_csv(OrnStdProg *p, const char *path, int type, bool header,
                              bool allow_nonfinite, const int *perm, const char *name, int line)
{
    OrnDsmArray *a = NULL;
    int64_t sp = io_begin(p, "load_csv", path, line);
    load_shown(p, "load_csv", path);
    int st =
        orn_dsm_load_csv(p->dsm, path, (OrnDsmType)type, header, load_flags(allow_nonfinite), &a);
    load_end(p, sp, st, "load_csv", line);
    orn_dsm_set_name(a, name);
    return perm ? stored_as(p, a, perm, "load_csv", path, name, line) : a;
}

void orn_std_save(OrnStdProg *p, OrnDsmArray *a, const char *path, int line)
{
    int64_t sp = io_begin(p, "save", path, line);
    int st = orn_dsm_save(a, path);
    io_end(p, sp);
    if (st) {
        orn_dsm_fail_ctx(p->dsm, st, "%s", "save");
        orn_std_fail(p, st, line, 1);
    }
}

OrnRtBuffer *orn_std_buffer(OrnStdProg *p, OrnDsmArray *target, orn_rt_apply_fn apply,
                            int64_t flush_every, int given, double budget, int stale_aware,
                            int line)
{
    OrnRtBuffer *b = NULL;
    if (given && flush_every <= 0)
        orn_std_die(p, line, "buffer(%s): flush_every must be positive, found %" PRId64,
                    target->name, flush_every);
    if (!(budget >= 0 && budget <= 1))
        orn_std_die(p, line,
                    "buffer(%s): budget is a fraction of the link, between 0 and 1, "
                    "found %g",
                    target->name, budget);
    int st = orn_rt_buffer_new(p->rt, target, apply, NULL, flush_every, &b);
    if (!st) st = orn_rt_buffer_set_budget(b, budget);
    if (st) orn_std_fail(p, st, line, 0);
    orn_rt_buffer_set_staleness_aware(b, stale_aware);
    return b;
}

double orn_std_dist_sum(OrnStdProg *p, OrnDsmArray *a, int line)
{
    double r = 0;
    int st = orn_dsm_sum(a, &r);
    if (st) orn_std_fail(p, st, line, 0);
    return r;
}

double orn_std_dist_dot(OrnStdProg *p, OrnDsmArray *a, OrnDsmArray *b, int line)
{
    for (int d = 0; d < a->ndim; d++)
        if (a->ndim != b->ndim || a->dims[d] != b->dims[d])
            orn_std_die(p, line, "dot(%s, %s): the arrays have different shapes", a->name, b->name);
    double r = 0;
    int st = orn_dsm_dot(a, b, &r);
    if (st) orn_std_fail(p, st, line, 0);
    return r;
}

double orn_std_dist_norm(OrnStdProg *p, OrnDsmArray *a, int line)
{
    double r = 0;
    int st = orn_dsm_norm(a, &r);
    if (st) orn_std_fail(p, st, line, 0);
    return r;
}

int64_t orn_std_dim(OrnStdProg *p, int ndim, const int64_t *dims, int64_t d, int line)
{
    if (d < 0 || d >= ndim)
        orn_std_die(p, line, "dim(A, %" PRId64 "): the array has %d dimension%s", d, ndim,
                    ndim == 1 ? "" : "s");
    return dims[d];
}

static void check_key(OrnStdProg *p, const OrnDsmArray *a, const int64_t *key, int line)
{
    for (int d = 0; d < a->ndim; d++)
        if (key[d] < 0 || key[d] >= a->dims[d])
            orn_std_die_at(p, line, a->name,
                           "index %" PRId64 " is out of range for dimension %d of %s "
                           "(extent %" PRId64 ")",
                           key[d], orn_dsm_decl_dim(a, d), a->name, a->dims[d]);
}

void orn_std_dist_get(OrnStdProg *p, OrnDsmArray *a, const int64_t *key, void *out, int line)
{
    check_key(p, a, key, line);
    int st = orn_dsm_get(a, key, out);
    if (st) orn_std_fail(p, st, line, 0);
}

OrnDsmArray *orn_std_hold(OrnStdProg *p, OrnDsmArray *a)
{
    orn_dsm_hold(a, (size_t)orn_rt_held_max(p->rt));
    return a;
}

void orn_std_held_release(OrnDsmArray *const *a)
{
    orn_dsm_release(*a);
}

void orn_std_dist_set(OrnStdProg *p, OrnDsmArray *a, const int64_t *key, const void *val, int line)
{
    check_key(p, a, key, line);
    int st = orn_dsm_set(a, key, val);
    if (st) orn_std_fail(p, st, line, 0);
}

void orn_std_buffer_add(OrnStdProg *p, OrnRtBuffer *b, const int64_t *key, const void *delta,
                        int line)
{
    OrnDsmArray *t = orn_rt_buffer_target(b);
    check_key(p, t, key, line);
    int st = p->rank == 0 ? orn_rt_buffer_add(b, key, delta) : ORN_OK;
    if (st) orn_std_fail(p, st, line, 0);
    st = orn_rt_buffer_flush(b);
    if (st) orn_std_fail(p, st, line, 0);
}

/* ---------------------------------------------------------------- views */

void orn_std_vec_bad_index(OrnStdProg *p, const char *name, int64_t fixed, int d, int64_t extent,
                           int line)
{
    orn_std_die_at(p, line, name,
                   "index %" PRId64 " is out of range for dimension %d of %s (extent %" PRId64 ")",
                   fixed, d, name, extent);
}

static OrnStdVec vec_base(OrnStdProg *p, int type, int dim, int64_t fixed, const int64_t *dims,
                          const char *name, int line)
{
    OrnStdVec r;
    memset(&r, 0, sizeof r);
    int other = 1 - dim;
    if (fixed < 0 || fixed >= dims[other])
        orn_std_vec_bad_index(p, name, fixed, other, dims[other], line);
    r.len = dims[dim];
    r.type = type;
    r.esize = esize_of(type);
    r.dim = dim;
    r.key[other] = fixed;
    r.prog = p;
    r.line = line;
    return r;
}

OrnStdVec orn_std_vec_dist(OrnStdProg *p, OrnDsmArray *a, int dim, int64_t fixed, const char *name,
                           int line)
{
    OrnStdVec r = vec_base(p, (int)a->type, dim, fixed, a->dims, name, line);
    r.dist = a;
    return r;
}

/* r's elements read into a copy of its own (r.own, r.p): a line of a 2-D array (dim >= 0)
 * or a whole 1-D array. */
static void read_own(OrnStdProg *p, OrnStdVec *r, int dim, int64_t fixed, int line)
{
    r->own = orn_xmalloc((size_t)(r->len > 0 ? r->len : 1) * r->esize);
    int st = dim >= 0 ? orn_dsm_read_line(r->dist, dim, fixed, r->own)
                      : orn_dsm_read_whole(r->dist, r->own);
    if (st) {
        free(r->own);
        orn_std_fail(p, st, line, 0);
    }
    r->p = r->own;
    r->stride = 1;
}

OrnStdVec orn_std_vec_dist_in(OrnStdProg *p, OrnDsmArray *a, int dim, int64_t fixed,
                              const char *name, int line)
{
    OrnStdVec r = orn_std_vec_dist(p, a, dim, fixed, name, line);
    if (!a->sparse && a->ndim == 2) read_own(p, &r, dim, fixed, line);
    return r;
}

OrnStdVec orn_std_vec_dist1(OrnStdProg *p, OrnDsmArray *a, int line)
{
    OrnStdVec r;
    memset(&r, 0, sizeof r);
    r.len = a->dims[0];
    r.type = (int)a->type;
    r.esize = a->esize;
    r.prog = p;
    r.line = line;
    r.dist = a;
    read_own(p, &r, -1, 0, line);
    return r;
}

void orn_std_vec_store(const OrnStdVec *v)
{
    if (!v->own || !v->dist) return;
    int st = orn_dsm_write_line(v->dist, v->dim, v->key[1 - v->dim], v->own);
    if (st) orn_std_fail(v->prog, st, v->line, 0);
}

void orn_std_vec_release(const OrnStdVec *v)
{
    free(v->own);
}

OrnStdVec orn_std_vec_buf(OrnStdProg *p, OrnRtBuffer *b, int dim, int64_t fixed, const char *name,
                          int line)
{
    OrnDsmArray *t = orn_rt_buffer_target(b);
    OrnStdVec r = vec_base(p, (int)t->type, dim, fixed, t->dims, name, line);
    r.buf = b;
    return r;
}

void orn_std_vec_len_mismatch(const OrnStdVec *a, const OrnStdVec *b)
{
    orn_std_die(a->prog, a->line,
                "element-wise operation on views of different lengths (%" PRId64 " and %" PRId64
                ")",
                a->len, b->len);
}

void orn_std_len_mismatch(OrnStdProg *p, int64_t a, int64_t b, int line)
{
    orn_std_die(
        p, line,
        "element-wise operation on views of different lengths (%" PRId64 " and %" PRId64 ")", a, b);
}

static void vkey(const OrnStdVec *v, int64_t x, int64_t *key)
{
    key[0] = v->key[0];
    key[1] = v->key[1];
    key[v->dim] = x;
}

void orn_std_vec_slow_get(const OrnStdVec *v, int64_t x, void *out)
{
    int64_t key[2];
    if (v->p) {
        memcpy(out, v->p + (size_t)(x * v->stride) * v->esize, v->esize);
        return;
    }
    vkey(v, x, key);
    if (v->view)
        orn_rt_read(v->view, key, out);
    else if (v->dist)
        orn_std_dist_get(v->prog, v->dist, key, out, v->line);
    else
        orn_std_die(v->prog, v->line, "a buffer cannot be read");
}

void orn_std_vec_slow_set(const OrnStdVec *v, int64_t x, const void *val)
{
    int64_t key[2];
    if (v->p) {
        memcpy(v->p + (size_t)(x * v->stride) * v->esize, val, v->esize);
        return;
    }
    vkey(v, x, key);
    if (v->view)
        memcpy(orn_rt_wptr(v->view, key), val, v->esize);
    else if (v->dist)
        orn_std_dist_set(v->prog, v->dist, key, val, v->line);
    else
        orn_std_die(v->prog, v->line, "a buffer can only be updated with += and -=");
}

void orn_std_vec_slow_add(const OrnStdVec *v, int64_t x, const void *delta)
{
    int64_t key[2];
    vkey(v, x, key);
    if (v->view)
        orn_rt_add(v->view, key, delta);
    else if (v->buf)
        orn_std_buffer_add(v->prog, v->buf, key, delta, v->line);
    else
        orn_std_die(v->prog, v->line, "only buffers take += deltas this way");
}

void orn_std_vec_announce_view(OrnRtView *v, const int64_t *dims, int dim, int64_t fixed)
{
    int other = 1 - dim;
    if (fixed < 0 || fixed >= dims[other]) return;
    int64_t key[2];
    key[other] = fixed;
    for (int64_t x = 0; x < dims[dim]; x++) {
        key[dim] = x;
        orn_rt_prefetch(v, key);
    }
}

void orn_std_vec_announce(const OrnStdVec *v)
{
    int64_t key[2];
    if (!v->view || v->p) return;
    for (int64_t x = 0; x < v->len; x++) {
        vkey(v, x, key);
        orn_rt_prefetch(v->view, key);
    }
}

double orn_std_vec_getd(const OrnStdVec *v, int64_t x)
{
    unsigned char buf[8];
    orn_std_vec_slow_get(v, x, buf);
    return orn_dsm_to_f64((OrnDsmType)v->type, buf);
}

double orn_std_vdot_slow(const OrnStdVec *a, const OrnStdVec *b)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    orn_std_vec_same(a, b);
    for (int64_t x = 0; x < a->len; x++)
        s[x & 7] += orn_std_vec_getd(a, x) * orn_std_vec_getd(b, x);
    return orn_std_lanes(s);
}

float orn_std_vsdot_slow(const OrnStdVec *a, const OrnStdVec *b)
{
    float s[ORN_STD_LANES_F32] = {0};
    orn_std_vec_same(a, b);
    for (int64_t x = 0; x < a->len; x++)
        s[x & (ORN_STD_LANES_F32 - 1)] += orn_std_vget_f32(a, x) * orn_std_vget_f32(b, x);
    return orn_std_lanes_f32(s);
}

double orn_std_vsum(const OrnStdVec *v)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t x = 0; x < v->len; x++) s[x & 7] += orn_std_vec_getd(v, x);
    return orn_std_lanes(s);
}

double orn_std_vnorm(const OrnStdVec *v)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t x = 0; x < v->len; x++) {
        double e = orn_std_vec_getd(v, x);
        s[x & 7] += e * e;
    }
    return sqrt(orn_std_lanes(s));
}

const void *orn_std_jam_snap(OrnStdProg *p, const OrnStdArr *a, int slot, int pad)
{
    if (slot < 0 || slot >= ORN_STD_JAM_SLOTS || a->ndim != 2 || pad < 0 || pad > 64 ||
        (a->type != ORN_DSM_F32 && a->type != ORN_DSM_F64) || a->n > ((int64_t)1 << 22))
        return NULL;
    int64_t R = a->dims[0], K = a->dims[1], Rp = R + pad;
    size_t need = (size_t)(Rp * K) * a->esize;
    if (need == 0) need = a->esize;
    if (p->jam_cap[slot] < need) {
        void *m = realloc(p->jam[slot], need);
        if (!m) return NULL;
        p->jam[slot] = m;
        p->jam_cap[slot] = need;
    }
    if (a->type == ORN_DSM_F64) {
        const double *s = a->data;
        double *d = p->jam[slot];
        for (int64_t k = 0; k < K; k++) {
            for (int64_t r = 0; r < R; r++) d[k * Rp + r] = s[r * K + k];
            for (int64_t r = R; r < Rp; r++) d[k * Rp + r] = 0;
        }
    } else {
        const float *s = a->data;
        float *d = p->jam[slot];
        for (int64_t k = 0; k < K; k++) {
            for (int64_t r = 0; r < R; r++) d[k * Rp + r] = s[r * K + k];
            for (int64_t r = R; r < Rp; r++) d[k * Rp + r] = 0;
        }
    }
    return p->jam[slot];
}
