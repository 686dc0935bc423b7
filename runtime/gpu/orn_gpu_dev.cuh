/* orn_gpu_dev.cuh: what a generated .cu (codegen/cuda/emit_cuda.c) compiles against: the
 * element-access and view helpers of rt.h and orn_std.h that generated loop bodies call,
 * as __host__ __device__ functions over device boxes (OrnGpuBox), and the CUDA runtime
 * behind OrnGpuOps. The C emitter writes the loop body; this header gives its calls the
 * same meaning on the device, where there is no slow path: an access outside the rank's
 * box (a plan violation, or an index out of range) sets the box's error flag and goes to
 * scratch space, and the launch then fails with a message on the host (gpu.c).
 *
 * Arithmetic is the host's: nvcc compiles with --fmad=false (no contraction, as the host C
 * is compiled with -ffp-contract=off), and view reductions keep the sixteen / eight
 * partial sums of orn_std.h in the same order (in warp kernels, one per lane: "warps"
 * below). */
#ifndef ORN_GPU_DEV_CUH
#define ORN_GPU_DEV_CUH

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "orn_gpu.h"

#define ORN_HD __host__ __device__ static inline

/* The runtime's random numbers and the scalar built-ins: the host's definitions, compiled
 * for both sides. */
#define ORN_RNG_FN ORN_HD
#include "orn_rng.h"
#define ORN_STD_SCALAR_FN ORN_HD
#include "orn_std_scalar.h"

typedef OrnGpuBox OrnRtBox;
typedef OrnGpuView OrnRtView;

/* A key as an argument: generated C passes (const int64_t[n]){...}, CUDA (C++) a temporary
 * that lives to the end of the full expression. */
typedef struct OrnGpuKey {
    int64_t k[ORN_GPU_MAXKEY];
} OrnGpuKey;
ORN_HD const int64_t *orn_gpu_key(const OrnGpuKey &key)
{
    return key.k;
}
/* The program context of generated calls (P_) is the element function's arguments. */
#define P_ a_

/* Addressing in a box: the host's (orn_box.h). */
#define ORN_BOX_FN        ORN_HD
#define ORN_BOX_LIKELY(c) (c)
#include "orn_box.h"

/* An access outside the box: flag it, hand out scratch space. */
ORN_HD char *orn_gpu_miss(const OrnRtBox *x)
{
    *x->err = 1;
    return x->scratch;
}

#define ORN_GPU_TYPED(T, name)                                                                     \
    ORN_HD T orn_rt_ld_##name(const OrnRtBox *x, int nd, const int64_t *key)                       \
    {                                                                                              \
        int64_t o;                                                                                 \
        if (ORN_BOX_LIKELY(orn_rt_box_find(x, nd, key, &o))) return ((const T *)(const void *)x->base)[o];                                  \
        orn_gpu_miss(x);                                                                           \
        return (T)0;                                                                               \
    }                                                                                              \
    ORN_HD T *orn_rt_wp_##name(const OrnRtBox *x, int nd, const int64_t *key)                      \
    {                                                                                              \
        int64_t o;                                                                                 \
        if (ORN_BOX_LIKELY(orn_rt_box_find(x, nd, key, &o))) return (T *)(void *)x->base + o;                                               \
        return (T *)(void *)orn_gpu_miss(x);                                                       \
    }                                                                                              \
    ORN_HD T *orn_rt_rw_##name(const OrnRtBox *x, int nd, const int64_t *key)                      \
    {                                                                                              \
        return orn_rt_wp_##name(x, nd, key);                                                       \
    }
ORN_GPU_TYPED(int32_t, i32)
ORN_GPU_TYPED(int64_t, i64)
ORN_GPU_TYPED(float, f32)
ORN_GPU_TYPED(double, f64)
#undef ORN_GPU_TYPED

/* ---------------------------------------------------------------- rows of sparse arrays */

/* Row i of 2-D sparse view v: its CSR form on the device (gpu.c uploads the rows a block
 * reads); a row the device does not hold flags the block, which then runs on the CPU. */
ORN_HD void orn_rt_row_csr(const OrnRtView *v, int64_t i, const int32_t **cols, int64_t *coff,
                           const int64_t **keys, const void **vals, int64_t *n)
{
    uint64_t r = (uint64_t)i - (uint64_t)v->rlo;
    *keys = NULL;
    if (v->cols && r < (uint64_t)v->rn) {
        int64_t b = v->rowptr[r];
        *cols = v->cols + b;
        *coff = v->clo;
        *vals = v->rvals + (size_t)b * v->esize;
        *n = v->rowptr[r + 1] - b;
        return;
    }
    *cols = NULL;
    *coff = 0;
    *vals = NULL;
    *n = 0;
    *v->err = 1;
}

/* Rows in decoded-key form (sparse arrays of three or more dimensions): not on the device. */
ORN_HD void orn_rt_row(const OrnRtView *v, int64_t i, const int64_t **keys, const void **vals,
                       int64_t *n)
{
    (void)i;
    *keys = NULL;
    *vals = NULL;
    *n = 0;
    *v->err = 1;
}

/* ---------------------------------------------------------------- buffers */

/* The element being run, how many updates it has recorded, and the lane recording them (in a
 * warp every lane makes the same updates: lane 0 records them). */
typedef struct OrnGpuCur {
    int64_t elem;
    int32_t seq;
    uint32_t lane;
    uint32_t accs; /* bit i: accumulator i has its slot for this element (OrnGpuArgs.acc1) */
} OrnGpuCur;

/* The element's next record (orn_gpu.h, OrnGpuRec) in the block's log, or NULL past the
 * log's capacity (and on lanes other than 0). Slots are taken with an integer atomic (no
 * float atomics: the host orders records by element and sequence); past the capacity the
 * count still grows, and the host runs the block again with a log that large. */
ORN_HD OrnGpuRec *orn_gpu_rec(const OrnGpuArgs *a, OrnGpuCur *c, int arr)
{
    if (c->lane != 0) return NULL;
#ifdef __CUDA_ARCH__
    unsigned long long slot = atomicAdd(a->nlog, 1ULL);
#else
    unsigned long long slot = (*a->nlog)++; /* emulation: one thread (lane) at a time */
#endif
    int32_t seq = c->seq++;
    if (slot >= (unsigned long long)a->caplog) return NULL;
    OrnGpuRec *r = &a->log[slot];
    r->elem = c->elem;
    r->seq = seq;
    r->arr = arr;
    return r;
}

/* `buf[key] += d` on the device: recorded, applied on the host after the launch. */
#define ORN_GPU_BADD(T, name)                                                                      \
    ORN_HD void orn_gpu_badd_##name(const OrnGpuArgs *a, OrnGpuCur *c, int k, int nd,              \
                                    const int64_t *key, T d)                                       \
    {                                                                                              \
        OrnGpuRec *r = orn_gpu_rec(a, c, k);                                                       \
        if (!r) return;                                                                            \
        for (int q = 0; q < ORN_GPU_MAXKEY; q++) r->key[q] = q < nd ? key[q] : 0;                  \
        memcpy(r->d, &d, sizeof d);                                                                \
    }
ORN_GPU_BADD(int32_t, i32)
ORN_GPU_BADD(int64_t, i64)
ORN_GPU_BADD(float, f32)
ORN_GPU_BADD(double, f64)
#undef ORN_GPU_BADD

/* The element's first update of accumulator i goes to its slot (OrnGpuArgs.acc1): 8 bytes and
 * a flag instead of a 56-byte record, and no atomic. Returns 1 when it did. */
ORN_HD int orn_gpu_acc_first(const OrnGpuArgs *a, OrnGpuCur *c, int i, int second, const void *v)
{
    if (!a->acc1 || i >= a->acc1k || i >= 32 || (c->accs >> i & 1u)) return 0;
    c->accs |= 1u << i;
    int64_t at = (int64_t)i * a->acc1n + c->elem;
    /* acc1 is 8-byte aligned (device or host allocation): one store, not eight byte stores */
    memcpy(__builtin_assume_aligned(a->acc1 + at * 8, 8), v, 8);
    a->acc1[(int64_t)a->acc1k * a->acc1n * 8 + at] = (unsigned char)(1 + (second != 0));
    return 1;
}

/* A contiguous row view's bytes (dim 1 of a 2-D box, row `fixed`) toward the L2 cache, a
 * 128-byte line per lane; nothing when the row is not in the box (cuda_pref.c). */
__device__ static inline void orn_gpu_pref_row(const OrnGpuBox *x, const int64_t *dims, int dim,
                                               int64_t fixed, unsigned lane)
{
    uint64_t rf = (uint64_t)fixed - (uint64_t)x->lo[0], r0 = (uint64_t)0 - (uint64_t)x->lo[1];
    if (dim != 1 || rf >= x->n[0] || r0 >= x->n[1] ||
        (uint64_t)dims[1] - (uint64_t)x->lo[1] > x->n[1])
        return;
    uintptr_t p = (uintptr_t)(x->base + (rf * (uint64_t)x->s[0] + r0) * x->esize);
    uintptr_t end = p + (uintptr_t)dims[1] * x->esize;
    for (uintptr_t q = (p & ~(uintptr_t)127) + 128 * (uintptr_t)lane; q < end; q += 32 * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(q));
}
/* ... and an element of a 1-D box (lane 0). */
__device__ static inline void orn_gpu_pref_elt(const OrnGpuBox *x, int64_t key, unsigned lane)
{
    uint64_t r = (uint64_t)key - (uint64_t)x->lo[0];
    if (lane == 0 && r < x->n[0])
        asm volatile("prefetch.global.L2 [%0];" ::"l"(x->base + r * x->esize));
}
/* Element e's keys and value toward the cache while the tile's previous element runs (they
 * are a gather: order[] is the tile's, keys[] and vals[] the block's); nothing on the host. */
ORN_HD void orn_gpu_prefetch_keys(const OrnGpuArgs *a, int64_t e)
{
#ifdef __CUDA_ARCH__
    asm volatile("prefetch.global.L2 [%0];" ::"l"(a->keys + e * a->nkeys));
    if (a->vals) asm volatile("prefetch.global.L2 [%0];" ::"l"(a->vals + e * a->box[0].esize));
#else
    (void)a;
    (void)e;
#endif
}

/* An update of accumulator i by operand v (second: the accumulator is min's or max's second
 * argument): the element's first in its slot, later ones recorded; applied on the host in
 * element order (float and integer operands). */
ORN_HD void orn_gpu_acc_f(const OrnGpuArgs *a, OrnGpuCur *c, int i, int second, double v)
{
    if (c->lane != 0 || orn_gpu_acc_first(a, c, i, second, &v)) return;
    OrnGpuRec *r = orn_gpu_rec(a, c, -1 - i);
    if (!r) return;
    r->key[0] = second;
    memcpy(r->d, &v, sizeof v);
}
ORN_HD void orn_gpu_acc_i(const OrnGpuArgs *a, OrnGpuCur *c, int i, int second, int64_t v)
{
    if (c->lane != 0 || orn_gpu_acc_first(a, c, i, second, &v)) return;
    OrnGpuRec *r = orn_gpu_rec(a, c, -1 - i);
    if (!r) return;
    r->key[0] = second;
    memcpy(r->d, &v, sizeof v);
}

/* ---------------------------------------------------------------- random numbers, div, mod */

/* The iteration's stream, as rt.h's orn_rt_rng_iter (b: the block's arguments). */
ORN_HD void orn_rt_rng_iter(OrnRtRng *g, const OrnGpuArgs *b, const int64_t *key)
{
    orn_rng_init(g, b->seed, b->stream, key, b->nkeys);
}
ORN_HD double orn_rt_rng_uniform(OrnRtRng *g)
{
    return orn_rng_uniform(g);
}
ORN_HD double orn_rt_rng_normal(OrnRtRng *g)
{
    return orn_rng_normal(g);
}
/* A bound below 1 is an error the CPU body reports (with its line): flag the block. */
ORN_HD int64_t orn_std_rng_int(const OrnGpuArgs *p, OrnRtRng *g, int64_t n, int line)
{
    (void)line;
    if (n <= 0) {
        *p->err = 1;
        return 0;
    }
    return orn_rng_int(g, n);
}
ORN_HD int64_t orn_std_div(const OrnGpuArgs *p, int64_t a, int64_t b, int line)
{
    (void)line;
    if (b == 0) *p->err = 1;
    return orn_std_div_soft(a, b);
}
ORN_HD int64_t orn_std_mod(const OrnGpuArgs *p, int64_t a, int64_t b, int line)
{
    (void)line;
    if (b == 0) *p->err = 1;
    return orn_std_mod_soft(a, b);
}

/* ---------------------------------------------------------------- views */

/* orn_std.h's OrnStdVec, reduced to its fast path (a pointer and a stride). */
typedef struct OrnStdVec {
    char *p;
    int64_t stride;
    int64_t len;
    const OrnRtBox *box;
} OrnStdVec;

ORN_HD OrnStdVec orn_std_vec_box(const void *prog, const OrnRtBox *x, const int64_t *dims, int dim,
                                 int64_t fixed, const char *name, int line)
{
    (void)prog;
    (void)name;
    (void)line;
    int other = 1 - dim;
    uint64_t rf = (uint64_t)fixed - (uint64_t)x->lo[other];
    uint64_t r0 = (uint64_t)0 - (uint64_t)x->lo[dim];
    OrnStdVec r;
    r.len = dims[dim];
    r.box = x;
    if (rf < x->n[other] && r0 < x->n[dim] &&
        (uint64_t)dims[dim] - (uint64_t)x->lo[dim] <= x->n[dim] && fixed >= 0 &&
        fixed < dims[other]) {
        r.p = x->base + ((other == 1 ? rf : rf * (uint64_t)x->s[other]) +
                         (dim == 1 ? r0 : r0 * (uint64_t)x->s[dim])) *
                            x->esize;
        r.stride = dim == 1 ? 1 : x->s[dim];
        return r;
    }
    r.p = orn_gpu_miss(x); /* every element to scratch[0] */
    r.stride = 0;
    return r;
}

ORN_HD void orn_std_vec_same(const OrnStdVec *a, const OrnStdVec *b)
{
    if (a->len != b->len) orn_gpu_miss(a->box);
}

#define ORN_GPU_VEC_ACCESS(T, name)                                                                \
    ORN_HD T orn_std_vget_##name(const OrnStdVec *v, int64_t x)                                    \
    {                                                                                              \
        return ((const T *)(const void *)v->p)[x * v->stride];                                     \
    }                                                                                              \
    ORN_HD void orn_std_vset_##name(const OrnStdVec *v, int64_t x, T val)                          \
    {                                                                                              \
        ((T *)(void *)v->p)[x * v->stride] = val;                                                  \
    }
ORN_GPU_VEC_ACCESS(int32_t, i32)
ORN_GPU_VEC_ACCESS(int64_t, i64)
ORN_GPU_VEC_ACCESS(float, f32)
ORN_GPU_VEC_ACCESS(double, f64)
#undef ORN_GPU_VEC_ACCESS

/* The partial-sum trees of orn_std.h, in the same order. */
ORN_HD double orn_std_lanes(const double *s)
{
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

ORN_HD float orn_std_lanes_f32(const float *s)
{
    return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
           (((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])));
}

ORN_HD float orn_std_sdot_f32(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n)
{
    float s[16] = {0};
    for (int64_t x = 0; x < n; x++) s[x & 15] += a[x * sa] * b[x * sb];
    return orn_std_lanes_f32(s);
}

/* Never reached: every device view is on the fast path (p set). */
ORN_HD float orn_std_vsdot_slow(const OrnStdVec *a, const OrnStdVec *b)
{
    (void)b;
    orn_gpu_miss(a->box);
    return 0;
}
ORN_HD double orn_std_vdot_slow(const OrnStdVec *a, const OrnStdVec *b)
{
    (void)b;
    orn_gpu_miss(a->box);
    return 0;
}

#define ORN_GPU_DOT(TA, NA, TB, NB)                                                                \
    ORN_HD double orn_std_dot_##NA##_##NB(const TA *a, int64_t sa, const TB *b, int64_t sb,        \
                                          int64_t n)                                               \
    {                                                                                              \
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                    \
        for (int64_t x = 0; x < n; x++) s[x & 7] += (double)a[x * sa] * (double)b[x * sb];         \
        return orn_std_lanes(s);                                                                   \
    }
#define ORN_GPU_DOT_ROW(TA, NA)                                                                    \
    ORN_GPU_DOT(TA, NA, int32_t, i32)                                                              \
    ORN_GPU_DOT(TA, NA, int64_t, i64)                                                              \
    ORN_GPU_DOT(TA, NA, float, f32)                                                                \
    ORN_GPU_DOT(TA, NA, double, f64)
ORN_GPU_DOT_ROW(int32_t, i32)
ORN_GPU_DOT_ROW(int64_t, i64)
ORN_GPU_DOT_ROW(float, f32)
ORN_GPU_DOT_ROW(double, f64)
#undef ORN_GPU_DOT_ROW
#undef ORN_GPU_DOT

/* ---------------------------------------------------------------- warps */

/* A warp kernel (orn_gpu.h, codegen/cuda/cuda_warp.c) runs an iteration on the 32 lanes of a warp:
 * L_ in generated code. Its barrier and its exchanges are the hardware's on the device and
 * the emulated warp's on the host (gpu_emu.c). */
ORN_HD void orn_gpu_sync(OrnGpuLane l)
{
#ifdef __CUDA_ARCH__
    (void)l;
    __syncwarp();
#else
    orn_gpu_emu_sync(l.warp, l.lane);
#endif
}

/* The row cache (orn_gpu.h, OrnGpuRowCache). Its words are copied with memcpy: the body
 * reads and writes them as its element type, which a uint32_t access must not be assumed
 * apart from (an aligned 4-byte copy: one load and one store). */
ORN_HD void orn_gpu_rc_word(void *dst, const void *src, uint32_t w)
{
    memcpy(__builtin_assume_aligned((char *)dst + 4 * (size_t)w, 4),
           __builtin_assume_aligned((const char *)src + 4 * (size_t)w, 4), 4);
}
/* The row in slot c goes back to global memory when the loop writes its array (wr), and the
 * slot is empty; the warp's lanes first wait for each other (any of them may have written
 * any word of it, or still read it), and again after the copy (the words are then free to
 * be overwritten). */
ORN_HD void orn_gpu_rc_flush(const OrnGpuLane L, OrnGpuRowCache *c, int wr)
{
    char *dst = c->tag[L.lane];
    if (!dst) return;
    orn_gpu_sync(L);
    if (wr) {
        for (uint32_t w = L.lane; w < c->words[L.lane]; w += 32) orn_gpu_rc_word(dst, c->buf, w);
        orn_gpu_sync(L);
    }
    c->tag[L.lane] = NULL;
}
/* A tile starts with empty slots, and ends with its rows back in global memory (before
 * the tile is published), the slots empty: wr has bit s set when slot s's array is
 * written by the loop. */
ORN_HD void orn_gpu_rc_begin(const OrnGpuLane L, int slots)
{
    if (!L.rc) return;
    for (int s = 0; s < slots; s++) L.rc[s].tag[L.lane] = NULL;
}
ORN_HD void orn_gpu_rc_end(const OrnGpuLane L, int slots, unsigned wr)
{
    if (!L.rc) return;
    for (int s = 0; s < slots; s++) orn_gpu_rc_flush(L, &L.rc[s], (int)(wr >> s & 1u));
}
/* The row view dims[dim]-long of box x at `fixed` (orn_std_vec_box), through slot `slot` of
 * the warp's row cache: the cached copy when it holds that row, else the row loaded into
 * it (the slot's previous row flushed first); the view itself when the warp has no cache or
 * the row is not contiguous, not whole 4-byte words, or over ORN_GPU_RC_BYTES. */
ORN_HD OrnStdVec orn_gpu_vec_row(const OrnGpuLane L, int slot, int wr, const OrnRtBox *x,
                                 const int64_t *dims, int dim, int64_t fixed, const char *name,
                                 int line)
{
    OrnStdVec r = orn_std_vec_box(NULL, x, dims, dim, fixed, name, line);
    if (!L.rc) return r;
    OrnGpuRowCache *c = &L.rc[slot];
    if (c->tag[L.lane] == r.p && r.p) {
        r.p = (char *)(void *)c->buf;
        return r;
    }
    uint64_t bytes = (uint64_t)r.len * (uint64_t)x->esize;
    orn_gpu_rc_flush(L, c, wr);
    if (r.stride != 1 || r.p == x->scratch || bytes > ORN_GPU_RC_BYTES || bytes % 4 != 0 ||
        ((uintptr_t)r.p & 3u) != 0)
        return r;
    const uint32_t words = (uint32_t)(bytes / 4);
    for (uint32_t w = L.lane; w < words; w += 32) orn_gpu_rc_word(c->buf, r.p, w);
    c->tag[L.lane] = r.p;
    c->words[L.lane] = words;
    orn_gpu_sync(L);
    r.p = (char *)(void *)c->buf;
    return r;
}

ORN_HD float orn_gpu_shfl_xor_f32(OrnGpuLane l, float v, int m)
{
#ifdef __CUDA_ARCH__
    (void)l;
    return __shfl_xor_sync(0xffffffffu, v, m);
#else
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u = (uint32_t)orn_gpu_emu_shfl(l.warp, l.lane, u, (unsigned)m);
    memcpy(&v, &u, sizeof v);
    return v;
#endif
}

ORN_HD double orn_gpu_shfl_xor(OrnGpuLane l, double v, int m)
{
#ifdef __CUDA_ARCH__
    (void)l;
    return __shfl_xor_sync(0xffffffffu, v, m);
#else
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    u = orn_gpu_emu_shfl(l.warp, l.lane, u, (unsigned)m);
    memcpy(&v, &u, sizeof v);
    return v;
#endif
}

/* The host's reductions split across a warp: lane l computes partial l mod 16 (f32) or l mod
 * 8 (f64) exactly as orn_std.h does -- the elements x = l, l + 16, ... in order -- and the
 * butterfly adds partners 1, 2, 4 (and 8) apart, which is orn_std_lanes(_f32)'s tree:
 * (s0 + s1), ((s0 + s1) + (s2 + s3)), ... (a lane adding s1 + s0 gets the same bits: IEEE
 * addition commutes). Every lane gets the sum; lanes 16..31 (8..31) duplicate the partials
 * of lanes 0..15 (0..7), so the exchanges stay within each half. */
ORN_HD float orn_gpu_lanes_f32(OrnGpuLane l, float s)
{
    for (int m = 1; m < 16; m <<= 1) s += orn_gpu_shfl_xor_f32(l, s, m);
    return s;
}

ORN_HD double orn_gpu_lanes(OrnGpuLane l, double s)
{
    for (int m = 1; m < 8; m <<= 1) s += orn_gpu_shfl_xor(l, s, m);
    return s;
}

/* dot of two views across the warp (orn_std_sdot_f32, orn_std_dot_*). */
ORN_HD float orn_gpu_sdot_f32(OrnGpuLane l, const float *a, int64_t sa, const float *b, int64_t sb,
                              int64_t n)
{
    float s = 0;
    for (int64_t x = l.lane & 15; x < n; x += 16) s += a[x * sa] * b[x * sb];
    return orn_gpu_lanes_f32(l, s);
}

#define ORN_GPU_WDOT(TA, NA, TB, NB)                                                               \
    ORN_HD double orn_gpu_dot_##NA##_##NB(OrnGpuLane l, const TA *a, int64_t sa, const TB *b,      \
                                          int64_t sb, int64_t n)                                   \
    {                                                                                              \
        double s = 0;                                                                              \
        for (int64_t x = l.lane & 7; x < n; x += 8) s += (double)a[x * sa] * (double)b[x * sb];    \
        return orn_gpu_lanes(l, s);                                                                \
    }
#define ORN_GPU_WDOT_ROW(TA, NA)                                                                   \
    ORN_GPU_WDOT(TA, NA, int32_t, i32)                                                             \
    ORN_GPU_WDOT(TA, NA, int64_t, i64)                                                             \
    ORN_GPU_WDOT(TA, NA, float, f32)                                                               \
    ORN_GPU_WDOT(TA, NA, double, f64)
ORN_GPU_WDOT_ROW(int32_t, i32)
ORN_GPU_WDOT_ROW(int64_t, i64)
ORN_GPU_WDOT_ROW(float, f32)
ORN_GPU_WDOT_ROW(double, f64)
#undef ORN_GPU_WDOT_ROW
#undef ORN_GPU_WDOT

/* ---------------------------------------------------------------- the CUDA runtime */

static int orn_gpu_cuda_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}
static int orn_gpu_cuda_select(int dev)
{
    return cudaSetDevice(dev) == cudaSuccess ? 0 : -1;
}
static int orn_gpu_cuda_sms(void)
{
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 1;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 1;
    return n > 0 ? n : 1;
}
static void *orn_gpu_cuda_alloc(size_t n)
{
    void *p = NULL;
    return cudaMalloc(&p, n ? n : 1) == cudaSuccess ? p : NULL;
}
static void orn_gpu_cuda_release(void *p)
{
    if (p) cudaFree(p);
}

/* Copies between host and device go in order on one stream that the kernels' launches
 * (the legacy default stream) are ordered with, so a copy in is not waited for before the
 * launch that reads it, through two pinned staging buffers:
 * while the DMA engine moves one chunk, the host copies the next into (or the last out of)
 * the other. Copies in return once the host's bytes are staged (the caller may change them
 * then); copies out return with the bytes in place. The state belongs to the CUDA binding
 * of this process, as the CUDA runtime's own does (the device selected, its context). */
enum { ORN_GPU_CHUNK = 4 << 20, ORN_GPU_SMALL = 64 << 10 };
typedef struct OrnGpuStage {
    int ready; /* 1 set up, -1 failed (copies then go unstaged) */
    cudaStream_t stream;
    char *pin[2];
    cudaEvent_t done[2];
} OrnGpuStage;
static OrnGpuStage orn_gpu_stage;

static cudaStream_t orn_gpu_cuda_stream(void)
{
    OrnGpuStage *g = &orn_gpu_stage;
    if (g->ready) return g->ready > 0 ? g->stream : (cudaStream_t)0;
    g->ready = -1;
    /* a blocking stream: the launches (legacy default stream) and it wait for each other */
    if (cudaStreamCreateWithFlags(&g->stream, cudaStreamDefault) != cudaSuccess) return 0;
    for (int i = 0; i < 2; i++)
        if (cudaHostAlloc((void **)&g->pin[i], ORN_GPU_CHUNK, cudaHostAllocDefault) !=
                cudaSuccess ||
            cudaEventCreateWithFlags(&g->done[i], cudaEventDisableTiming) != cudaSuccess)
            return g->stream; /* the stream without staging */
    g->ready = 1;
    return g->stream;
}

static int orn_gpu_cuda_put(void *dst, const void *src, size_t n)
{
    if (n == 0) return 0;
    cudaStream_t st = orn_gpu_cuda_stream();
    OrnGpuStage *g = &orn_gpu_stage;
    if (g->ready < 0 || n <= ORN_GPU_SMALL) /* pageable: the driver stages it before returning */
        return cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, st) == cudaSuccess ? 0 : -1;
    for (size_t off = 0, k = 0; off < n; off += ORN_GPU_CHUNK, k++) {
        size_t len = n - off < (size_t)ORN_GPU_CHUNK ? n - off : (size_t)ORN_GPU_CHUNK;
        int i = (int)(k & 1);
        if (cudaEventSynchronize(g->done[i]) != cudaSuccess) return -1; /* its last DMA */
        memcpy(g->pin[i], (const char *)src + off, len);
        if (cudaMemcpyAsync((char *)dst + off, g->pin[i], len, cudaMemcpyHostToDevice, st) !=
                cudaSuccess ||
            cudaEventRecord(g->done[i], st) != cudaSuccess)
            return -1;
    }
    return 0;
}

static int orn_gpu_cuda_get(void *dst, const void *src, size_t n)
{
    if (n == 0) return 0;
    cudaStream_t st = orn_gpu_cuda_stream();
    OrnGpuStage *g = &orn_gpu_stage;
    if (g->ready < 0 || n <= ORN_GPU_SMALL)
        return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, st) == cudaSuccess &&
                       cudaStreamSynchronize(st) == cudaSuccess
                   ? 0
                   : -1;
    /* chunk k's DMA runs while the host copies chunk k - 1 out */
    size_t prev = 0, plen = 0;
    for (size_t off = 0, k = 0;; off += ORN_GPU_CHUNK, k++) {
        int i = (int)(k & 1);
        size_t len = off < n ? (n - off < (size_t)ORN_GPU_CHUNK ? n - off : (size_t)ORN_GPU_CHUNK) : 0;
        if (len && (cudaMemcpyAsync(g->pin[i], (const char *)src + off, len,
                                    cudaMemcpyDeviceToHost, st) != cudaSuccess ||
                    cudaEventRecord(g->done[i], st) != cudaSuccess))
            return -1;
        if (k > 0) {
            int j = i ^ 1;
            if (cudaEventSynchronize(g->done[j]) != cudaSuccess) return -1;
            memcpy((char *)dst + prev, g->pin[j], plen);
        }
        if (!len) return 0;
        prev = off;
        plen = len;
    }
}
static size_t orn_gpu_cuda_mem_free(void)
{
    size_t avail = 0, total = 0;
    return cudaMemGetInfo(&avail, &total) == cudaSuccess ? avail : 0;
}
static int orn_gpu_cuda_zero(void *dst, size_t n)
{
    return n == 0 || cudaMemsetAsync(dst, 0, n, orn_gpu_cuda_stream()) == cudaSuccess ? 0 : -1;
}
/* Whether the launches (the legacy default stream) still run. */
static int orn_gpu_cuda_busy(void)
{
    return cudaStreamQuery(0) == cudaErrorNotReady;
}
static const OrnGpuOps orn_gpu_cuda_ops = {
    orn_gpu_cuda_count,   orn_gpu_cuda_select, orn_gpu_cuda_sms,      orn_gpu_cuda_alloc,
    orn_gpu_cuda_release, orn_gpu_cuda_put,    orn_gpu_cuda_get,      orn_gpu_cuda_zero,
    orn_gpu_cuda_mem_free, orn_gpu_cuda_busy};

/* ---------------------------------------------------------------- the persistent kernel */

/* The grid-wide barrier before step s (s >= 1) of a persistent kernel: every thread of the
 * grid has finished step s - 1, and its writes are visible. Thread 0 of each block announces
 * its block on the counter (a device-scope fence first) and waits until all gridDim.x blocks
 * have announced s times; the counter is zeroed before the launch. The grid is one the device
 * holds at once (orn_gpu_cuda_run), so the waiting blocks never keep another from running.
 * coop: cooperative groups' grid.sync() instead (ORN_GPU_BARRIER=coop, on a cooperative
 * launch), for the device script to compare the two. */
__device__ static inline void orn_gpu_grid_sync(unsigned long long *bar, int s, int coop)
{
    if (coop) {
        cooperative_groups::this_grid().sync();
        return;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(bar, 1ULL);
        const unsigned long long target = (unsigned long long)s * gridDim.x;
        while (*(volatile unsigned long long *)bar < target) {
#if __CUDA_ARCH__ >= 700
            __nanosleep(32);
#endif
        }
        __threadfence();
    }
    __syncthreads();
}

/* The kernel's arguments copied into the thread block's shared memory (sa), every thread
 * taking 8-byte words, then a block barrier: what the bodies read of them (boxes, extents,
 * the element order) then costs a shared-memory load, also where the compiler must reload it
 * after a store of the body. */
__device__ static inline const OrnGpuArgs *orn_gpu_args_shared(OrnGpuArgs *sa,
                                                              const OrnGpuArgs *a)
{
    static_assert(sizeof(OrnGpuArgs) % 8 == 0, "OrnGpuArgs is copied in 8-byte words");
    const int n = (int)(sizeof(OrnGpuArgs) / 8);
    for (int i = (int)threadIdx.x; i < n; i += (int)blockDim.x)
        ((uint64_t *)(void *)sa)[i] = ((const uint64_t *)(const void *)a)[i];
    __syncthreads();
    return sa;
}

/* $ORN_GPU_PROFILE: a band worker's profile (OrnGpuArgs.prof, orn_gpu.h), kept by lane 0 in
 * the block's shared memory (not registers, which the tile's body needs), added to the
 * launch's totals when the worker is done. Without a profile every call returns after one
 * test of a->prof (a shared-memory load and a predictable branch). */
typedef struct OrnGpuProf {
    long long t, start;
    unsigned long long part[4], tiles, iters, start_ns;
} OrnGpuProf;
__device__ static inline unsigned long long orn_gpu_prof_now_ns(void)
{
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}
/* the warp's record: slot warp-in-block of the block's shared array */
__device__ static inline OrnGpuProf *orn_gpu_prof_begin(const OrnGpuArgs *a, OrnGpuProf *block)
{
    OrnGpuProf *p = &block[threadIdx.x / 32];
    if (a->prof && (threadIdx.x & 31) == 0) {
        for (int k = 0; k < 4; k++) p->part[k] = 0;
        p->tiles = p->iters = 0;
        p->start_ns = orn_gpu_prof_now_ns();
        p->t = p->start = clock64();
    }
    return p;
}
/* the cycles since the last lap go to part k */
__device__ static inline void orn_gpu_prof_lap(const OrnGpuArgs *a, OrnGpuProf *p, int k)
{
    if (!a->prof || (threadIdx.x & 31) != 0) return;
    long long now = clock64();
    p->part[k] += (unsigned long long)(now - p->t);
    p->t = now;
}
__device__ static inline void orn_gpu_prof_tile(const OrnGpuArgs *a, OrnGpuProf *p, int64_t t)
{
    if (!a->prof || (threadIdx.x & 31) != 0) return;
    orn_gpu_prof_lap(a, p, ORN_GPU_PROF_TILE);
    p->tiles++;
    p->iters += (unsigned long long)(a->start[t + 1] - a->start[t]);
}
/* the worker's walk is over (it visited `visits` tiles): its parts into the launch's totals */
__device__ static inline void orn_gpu_prof_end(const OrnGpuArgs *a, OrnGpuProf *p,
                                               unsigned long long visits)
{
    if (!a->prof || (threadIdx.x & 31) != 0 || visits == 0) return;
    orn_gpu_prof_lap(a, p, ORN_GPU_PROF_OTHER);
    unsigned long long *q = a->prof, total = (unsigned long long)(p->t - p->start);
    for (int k = 0; k < 4; k++) atomicAdd(&q[k], p->part[k]);
    atomicAdd(&q[ORN_GPU_PROF_TOTAL], total);
    atomicMax(&q[ORN_GPU_PROF_MAXTOTAL], total);
    atomicAdd(&q[ORN_GPU_PROF_TILES], p->tiles);
    atomicAdd(&q[ORN_GPU_PROF_VISITS], visits);
    atomicAdd(&q[ORN_GPU_PROF_ITERS], p->iters);
    atomicAdd(&q[ORN_GPU_PROF_WORKERS], 1ULL);
    atomicMin(&q[ORN_GPU_PROF_START], p->start_ns);
    atomicMax(&q[ORN_GPU_PROF_END], orn_gpu_prof_now_ns());
}

/* The pipeline of row bands (OrnGpuArgs.bands): the warp waits until the band above has
 * published more than need - 1 finished tiles (*p >= need), lane 0 polling its counter and a
 * device-scope fence after it (the band's writes are then visible, as after
 * orn_gpu_grid_sync); returns the count seen (every lane), so that the warp waits again only
 * when it gets past it. */
__device__ static inline unsigned long long orn_gpu_band_wait(const unsigned long long *p,
                                                              unsigned long long need)
{
    unsigned long long v = 0;
    if ((threadIdx.x & 31) == 0) {
        while ((v = *(const volatile unsigned long long *)p) < need) {
#if __CUDA_ARCH__ >= 700
            __nanosleep(20);
#endif
        }
        __threadfence();
    }
    __syncwarp();
    return __shfl_sync(0xffffffffu, v, 0);
}
/* ... and publishes that its band has finished `done` tiles: after the warp's writes (a
 * device-scope fence when the last tile wrote anything: wrote), the band's counter. */
__device__ static inline void orn_gpu_band_done(unsigned long long *p, unsigned long long done,
                                                int wrote)
{
    __syncwarp();
    if ((threadIdx.x & 31) == 0) {
        if (wrote) __threadfence();
        *(volatile unsigned long long *)p = done;
    }
}

/* One launch of persistent kernel fn (blocks of 128 threads, `units` warps or threads each
 * taking tiles) for a block whose widest step has `widest` tiles: as many thread blocks as
 * the device holds at once (the occupancy of fn on every multiprocessor), no more than the
 * widest step can use. A cooperative launch where the device has it, which guarantees that
 * the grid is resident at once (the barrier needs it), else a plain one of the same size.
 * $ORN_GPU_BARRIER=coop takes cooperative groups' grid.sync() as the barrier (on a
 * cooperative launch only). Returns 0, or -1 when the launch failed (said). */
static int orn_gpu_cuda_run(const void *fn, int loop_id, const OrnGpuArgs *a, int64_t widest,
                            int units, const void *env, int *grid)
{
    /* The device's figures and each kernel's occupancy are asked once (a process uses one
     * device), not at every launch. */
    static int dev = -1, sms = 1, coop = 0, grid_sync = 0;
    enum { NFN = 16 };
    static const void *fns[NFN];
    static int occ[NFN], nfn = 0;
    if (dev < 0) {
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
            sms = 1;
        if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess)
            coop = 0;
        const char *bk = getenv("ORN_GPU_BARRIER");
        grid_sync = coop && bk && strcmp(bk, "coop") == 0;
    }
    int per_sm = 0, at = -1;
    for (int i = 0; i < nfn && at < 0; i++)
        if (fns[i] == fn) at = i;
    if (at >= 0) {
        per_sm = occ[at];
    } else {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, 128, 0) != cudaSuccess ||
            per_sm < 1)
            per_sm = 1;
        if (nfn < NFN) {
            fns[nfn] = fn;
            occ[nfn++] = per_sm;
        }
    }
    int64_t need = (widest + units - 1) / units, cap = (int64_t)per_sm * sms;
    int g = (int)(need < 1 ? 1 : need < cap ? need : cap);
    *grid = g;
    int gs = grid_sync;
    void *args[3] = {(void *)&a, (void *)env, (void *)&gs};
    cudaError_t e = coop ? cudaLaunchCooperativeKernel(fn, dim3(g), dim3(128), args, 0, 0)
                         : cudaLaunchKernel(fn, dim3(g), dim3(128), args, 0, 0);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "orion: @gpu loop %d: CUDA error: %s (a launch of %d blocks)\n", loop_id,
            cudaGetErrorString(e), g);
    return -1;
}

#endif
