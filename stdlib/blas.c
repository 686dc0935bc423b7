/* blas.c: dense linear algebra built-ins through OpenBLAS: matmul_into (gemm, gemv),
 * add_outer (ger) and solve_into (posv, Cholesky).
 *
 * Matrices are local 2-D arrays (row-major, contiguous); vectors are OrnStdVec: a local
 * 1-D array, a view of a local array, or a view of a dist array. A vector on the fast path
 * (p != NULL) is passed to BLAS with its stride; one that is not (elements owned by
 * another rank, or top-level access to a dist array) is gathered into a scratch copy, and
 * an output vector is computed into scratch and then stored element by element. An input
 * that overlaps the output in memory is copied first, since BLAS assumes they do not.
 *
 * Determinism: OpenBLAS runs single-threaded in every rank (orn_std_blas_init, called
 * from orn_std_init when the program uses these built-ins), so a call computes the same
 * bits for the same inputs on the same machine; its blocking and kernels (which may use
 * fused multiply-adds) are fixed by the sizes, never by the thread count or the rank. */
#include "orn_std.h"

#include <cblas.h>
#include <limits.h>

/* LAPACK's Cholesky solve as OpenBLAS exports it (Fortran calling convention: everything
 * by reference, then the hidden length of the character argument). */
void sposv_(const char *uplo, const int *n, const int *nrhs, float *a, const int *lda, float *b,
            const int *ldb, int *info, size_t uplo_len);
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b,
            const int *ldb, int *info, size_t uplo_len);

void orn_std_blas_init(void)
{
    openblas_set_num_threads(1);
}

static int to_int(OrnStdProg *p, int64_t v, const char *what, int line)
{
    if (v > INT_MAX || v < INT_MIN)
        orn_std_die(p, line, "%s: %" PRId64 " is too large for BLAS (at most %d)", what, v,
                    INT_MAX);
    return (int)v;
}

static void *scratch(OrnStdProg *p, int64_t n, size_t esize, const char *what, int line)
{
    void *q = malloc((size_t)(n > 0 ? n : 1) * esize);
    if (!q) orn_std_die(p, line, "%s: out of memory", what);
    return q;
}

/* Byte ranges, to detect an input that overlaps the output. */
typedef struct Range {
    const char *lo, *hi;
} Range;

static Range vec_range(const OrnStdVec *v)
{
    Range r = {NULL, NULL};
    if (v->p && v->len > 0) orn_std_vec_bytes(v, &r.lo, &r.hi);
    return r;
}

static Range arr_range(const OrnStdArr *a)
{
    Range r = {(const char *)a->data, (const char *)a->data + (size_t)a->n * a->esize};
    return r;
}

static bool overlap(Range a, Range b)
{
    return a.lo && b.lo && a.lo < b.hi && b.lo < a.hi;
}

/* A vector as BLAS takes it: pointer and increment, gathered into `*own` when it is not
 * on the fast path or overlaps `out`. */
static const void *vec_in(OrnStdProg *p, const OrnStdVec *v, Range out, int *inc, void **own,
                          const char *what, int line)
{
    *own = NULL;
    if (v->p && !overlap(vec_range(v), out)) {
        *inc = to_int(p, v->stride, what, line);
        return v->p;
    }
    char *q = scratch(p, v->len, v->esize, what, line);
    for (int64_t x = 0; x < v->len; x++) orn_std_vec_slow_get(v, x, q + (size_t)x * v->esize);
    *own = q;
    *inc = 1;
    return q;
}

/* A matrix input: its data, or a copy when it overlaps `out`. */
static const void *arr_in(OrnStdProg *p, const OrnStdArr *a, Range out, void **own,
                          const char *what, int line)
{
    *own = NULL;
    if (!overlap(arr_range(a), out)) return a->data;
    *own = scratch(p, a->n, a->esize, what, line);
    memcpy(*own, a->data, (size_t)a->n * a->esize);
    return *own;
}

/* An output vector: written in place on the fast path, else through scratch (filled with
 * the current values when `load`) that vec_out_done stores back. */
static void *vec_out(OrnStdProg *p, const OrnStdVec *v, bool load, int *inc, void **own,
                     const char *what, int line)
{
    *own = NULL;
    if (v->p) {
        *inc = to_int(p, v->stride, what, line);
        return v->p;
    }
    char *q = scratch(p, v->len, v->esize, what, line);
    if (load)
        for (int64_t x = 0; x < v->len; x++) orn_std_vec_slow_get(v, x, q + (size_t)x * v->esize);
    else
        memset(q, 0, (size_t)v->len * v->esize);
    *own = q;
    *inc = 1;
    return q;
}

static void vec_out_done(const OrnStdVec *v, void *own)
{
    if (!own) return;
    for (int64_t x = 0; x < v->len; x++)
        orn_std_vec_slow_set(v, x, (const char *)own + (size_t)x * v->esize);
    free(own);
}

static void same_type(OrnStdProg *p, int a, int b, const char *what, int line)
{
    if (a != b) orn_std_die(p, line, "%s: operands of different element types", what);
    if (a != ORN_DSM_F32 && a != ORN_DSM_F64)
        orn_std_die(p, line, "%s: operands must be f32 or f64", what);
}

void orn_std_blas_gemm(OrnStdProg *p, OrnStdArr *C, const OrnStdArr *A, const OrnStdArr *B,
                       bool add, int line)
{
    static const char what[] = "matmul_into";
    same_type(p, C->type, A->type, what, line);
    same_type(p, C->type, B->type, what, line);
    if (A->dims[1] != B->dims[0])
        orn_std_die(p, line,
                    "%s: A has %" PRId64 " columns but B has %" PRId64 " rows (A is %" PRId64
                    " x %" PRId64 ", B is %" PRId64 " x %" PRId64 ")",
                    what, A->dims[1], B->dims[0], A->dims[0], A->dims[1], B->dims[0], B->dims[1]);
    if (C->dims[0] != A->dims[0] || C->dims[1] != B->dims[1])
        orn_std_die(p, line, "%s: C is %" PRId64 " x %" PRId64 " but A B is %" PRId64 " x %" PRId64,
                    what, C->dims[0], C->dims[1], A->dims[0], B->dims[1]);
    int m = to_int(p, A->dims[0], what, line), k = to_int(p, A->dims[1], what, line);
    int n = to_int(p, B->dims[1], what, line);
    void *oa, *ob;
    Range out = arr_range(C);
    const void *a = arr_in(p, A, out, &oa, what, line), *b = arr_in(p, B, out, &ob, what, line);
    if (C->type == ORN_DSM_F32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n,
                    add ? 1.0f : 0.0f, C->data, n);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n,
                    add ? 1.0 : 0.0, C->data, n);
    free(oa);
    free(ob);
}

void orn_std_blas_gemv(OrnStdProg *p, const OrnStdVec *y, const OrnStdArr *A, const OrnStdVec *x,
                       bool trans, bool add, int line)
{
    static const char what[] = "matmul_into";
    same_type(p, y->type, A->type, what, line);
    same_type(p, y->type, x->type, what, line);
    int64_t in = trans ? A->dims[0] : A->dims[1], outn = trans ? A->dims[1] : A->dims[0];
    if (x->len != in)
        orn_std_die(p, line,
                    trans ? "%s: the vector has %" PRId64 " elements but B has %" PRId64
                            " rows (B is %" PRId64 " x %" PRId64 ")"
                          : "%s: the vector has %" PRId64 " elements but A has %" PRId64
                            " columns (A is %" PRId64 " x %" PRId64 ")",
                    what, x->len, in, A->dims[0], A->dims[1]);
    if (y->len != outn)
        orn_std_die(p, line, "%s: the result has %" PRId64 " elements but C has %" PRId64, what,
                    outn, y->len);
    int m = to_int(p, A->dims[0], what, line), n = to_int(p, A->dims[1], what, line);
    int incx, incy;
    void *ox, *oa, *oy;
    void *yy = vec_out(p, y, add, &incy, &oy, what, line);
    Range out = vec_range(y);
    const void *xx = vec_in(p, x, out, &incx, &ox, what, line);
    const void *a = arr_in(p, A, out, &oa, what, line);
    enum CBLAS_TRANSPOSE t = trans ? CblasTrans : CblasNoTrans;
    if (y->type == ORN_DSM_F32)
        cblas_sgemv(CblasRowMajor, t, m, n, 1.0f, a, n, xx, incx, add ? 1.0f : 0.0f, yy, incy);
    else
        cblas_dgemv(CblasRowMajor, t, m, n, 1.0, a, n, xx, incx, add ? 1.0 : 0.0, yy, incy);
    free(ox);
    free(oa);
    vec_out_done(y, oy);
}

void orn_std_blas_ger(OrnStdProg *p, OrnStdArr *A, const OrnStdVec *x, const OrnStdVec *y,
                      double scale, int line)
{
    static const char what[] = "add_outer";
    same_type(p, A->type, x->type, what, line);
    same_type(p, A->type, y->type, what, line);
    if (x->len != A->dims[0] || y->len != A->dims[1])
        orn_std_die(p, line,
                    "%s: A is %" PRId64 " x %" PRId64 " but x y' is %" PRId64 " x %" PRId64, what,
                    A->dims[0], A->dims[1], x->len, y->len);
    int m = to_int(p, A->dims[0], what, line), n = to_int(p, A->dims[1], what, line);
    int incx, incy;
    void *ox, *oy;
    Range out = arr_range(A);
    const void *xx = vec_in(p, x, out, &incx, &ox, what, line);
    const void *yy = vec_in(p, y, out, &incy, &oy, what, line);
    if (A->type == ORN_DSM_F32)
        cblas_sger(CblasRowMajor, m, n, (float)scale, xx, incx, yy, incy, A->data, n);
    else
        cblas_dger(CblasRowMajor, m, n, scale, xx, incx, yy, incy, A->data, n);
    free(ox);
    free(oy);
}

void orn_std_blas_solve(OrnStdProg *p, const OrnStdVec *x, const OrnStdArr *A, const OrnStdVec *b,
                        int line)
{
    static const char what[] = "solve_into";
    same_type(p, x->type, A->type, what, line);
    same_type(p, x->type, b->type, what, line);
    if (A->dims[0] != A->dims[1])
        orn_std_die(p, line, "%s: A must be square, found %" PRId64 " x %" PRId64, what, A->dims[0],
                    A->dims[1]);
    if (b->len != A->dims[0] || x->len != A->dims[0])
        orn_std_die(p, line,
                    "%s: A is %" PRId64 " x %" PRId64 " but b has %" PRId64
                    " elements and x %" PRId64,
                    what, A->dims[0], A->dims[1], b->len, x->len);
    int n = to_int(p, A->dims[0], what, line), one = 1, info = 0;
    size_t es = A->esize;
    /* posv overwrites A with its factor and b with the solution: work on copies (A is
     * small in the intended use, a K x K normal matrix) */
    unsigned char small[4096];
    size_t need = ((size_t)n * (size_t)n + (size_t)n) * es;
    unsigned char *w =
        need <= sizeof small ? small : scratch(p, n * (int64_t)n + n, es, what, line);
    unsigned char *wb = w + (size_t)n * (size_t)n * es;
    memcpy(w, A->data, (size_t)n * (size_t)n * es);
    for (int64_t i = 0; i < n; i++) orn_std_vec_slow_get(b, i, wb + (size_t)i * es);
    /* row-major A is column-major A'; 'L' of A' is the upper triangle of A */
    if (A->type == ORN_DSM_F32)
        sposv_("L", &n, &one, (float *)(void *)w, &n, (float *)(void *)wb, &n, &info, 1);
    else
        dposv_("L", &n, &one, (double *)(void *)w, &n, (double *)(void *)wb, &n, &info, 1);
    if (info == 0)
        for (int64_t i = 0; i < n; i++) orn_std_vec_slow_set(x, i, wb + (size_t)i * es);
    if (w != small) free(w);
    if (info > 0)
        orn_std_die(p, line,
                    "%s: A is not positive definite (its leading %d x %d minor is not); "
                    "solve_into needs a symmetric positive definite matrix",
                    what, info, info);
    if (info < 0) orn_std_die(p, line, "%s: LAPACK rejected argument %d", what, -info);
}
