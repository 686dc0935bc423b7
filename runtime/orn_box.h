/* orn_box.h: addressing in a box (OrnRtBox: base, lo, n, s per dimension, the last stride
 * 1), as generated loop bodies do it: the host's (rt.h) and the kernels' of @gpu loops
 * (orn_gpu_dev.cuh, where OrnRtBox is the device box OrnGpuBox) -- one definition.
 * The includer defines OrnRtBox, ORN_BOX_FN (the functions' qualifiers) and
 * ORN_BOX_LIKELY(c) (a branch hint, or just c). */
#ifndef ORN_BOX_H
#define ORN_BOX_H

#include <stdint.h>

/* The number of dimensions of an access with the source line it is written on above it
 * (bits 3 and up; 0: unknown), for the views' slow paths, which name the line in errors:
 * generated code passes ORN_RT_NDL(nd, line) where an accessor takes nd. */
#define ORN_RT_NDL(nd, line) ((nd) | ((line) < (1 << 27) ? (line) : 0) << 3)
#define ORN_RT_ND(ndl)       ((ndl)&7)
#define ORN_RT_LINE(ndl)     ((ndl) >> 3)

/* A source site, passed where a line is (ORN_RT_NDL above, the local arrays' checks): the
 * line, and which of the line's `name[` the access is (0: the first; the first past 8), so
 * that an error's caret points at the access that failed (runtime/srcline.c). A plain line
 * is the site of its first occurrence. */
#define ORN_RT_SITE(line, occ) ((line) < (1 << 24) ? (line) | ((occ) < 8 ? (occ) : 0) << 24 : 0)
#define ORN_RT_SITE_LINE(site) ((site) & ((1 << 24) - 1))
#define ORN_RT_SITE_OCC(site)  ((site) >> 24)

/* Whether key lies in the box, and its element offset there in *off (nd, or ORN_RT_NDL, is a
 * constant at every call site, so the loop unrolls). The accessors branch on the answer
 * alone: a test of the offset's sign as well would be a second compare and branch per
 * access, which the compiler cannot drop (histogram: 11 instructions an update where the
 * hand-written loop has 6). */
ORN_BOX_FN int orn_rt_box_find(const OrnRtBox *x, int nd, const int64_t *key, int64_t *off)
{
    nd = ORN_RT_ND(nd);
    uint64_t o = 0;
    int in = 1;
    for (int d = 0; d < nd; d++) {
        uint64_t r = (uint64_t)key[d] - (uint64_t)x->lo[d];
        in &= r < x->n[d];
        o += d == nd - 1 ? r : r * (uint64_t)x->s[d];
    }
    *off = (int64_t)o;
    return in;
}

/* The element offset of key in the box, or -1 when it lies outside. */
ORN_BOX_FN int64_t orn_rt_box_off(const OrnRtBox *x, int nd, const int64_t *key)
{
    int64_t o;
    return ORN_BOX_LIKELY(orn_rt_box_find(x, nd, key, &o)) ? o : -1;
}

/* Same without the bounds test: the caller has proven the key inside the box. */
ORN_BOX_FN int64_t orn_rt_box_at(const OrnRtBox *x, int nd, const int64_t *key)
{
    uint64_t off = 0;
    for (int d = 0; d < nd; d++) {
        uint64_t r = (uint64_t)key[d] - (uint64_t)x->lo[d];
        off += d == nd - 1 ? r : r * (uint64_t)x->s[d];
    }
    return (int64_t)off;
}

/* Whether boxes a and b address an element of their first nd dimensions at the same place
 * (the same base, origin and strides): a buffer that adds in place into the array the body
 * also reads (one rank). Generated code then reads that array through the buffer's box, so
 * that the compiler sees one pointer: `dw[f] -= step * (g * x + lam * w[f])` loads w[f]
 * once, as the hand-written `w[f] -= ...` does. */
ORN_BOX_FN int orn_rt_box_same(const OrnRtBox *a, const OrnRtBox *b, int nd)
{
    int same = a->base && a->base == b->base;
    for (int d = 0; d < nd; d++) same &= a->lo[d] == b->lo[d] && a->s[d] == b->s[d];
    return same;
}

/* key[d] in [lo, hi] (inclusive) lies in the box along d: the once-per-loop-range check of
 * generated code (loop versioning). */
ORN_BOX_FN int orn_rt_box_span(const OrnRtBox *x, int d, int64_t lo, int64_t hi)
{
    return (uint64_t)lo - (uint64_t)x->lo[d] < x->n[d] &&
           (uint64_t)hi - (uint64_t)x->lo[d] < x->n[d];
}

/* The whole extent [0, ext) along d lies in the box (a view's ':' dimension; an empty
 * extent always does). */
ORN_BOX_FN int orn_rt_box_full(const OrnRtBox *x, int d, int64_t ext)
{
    return ext <= 0 || ((uint64_t)0 - (uint64_t)x->lo[d] < x->n[d] &&
                        (uint64_t)ext - (uint64_t)x->lo[d] <= x->n[d]);
}

/* Narrow [*lo, *hi) to the values v for which v + off lies in the box along d (index-set
 * splitting: generated code runs that part of a loop without per-access tests). */
ORN_BOX_FN void orn_rt_box_clip(const OrnRtBox *x, int d, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t a = x->lo[d] - off, b = x->lo[d] + (int64_t)x->n[d] - off;
    if (*lo < a) *lo = a;
    if (*hi > b) *hi = b;
    if (*hi < *lo) *hi = *lo;
}

/* The offsets of a window: s * n + off for n in [nlo, nhi), s = -1 when neg, else 1, as
 * [*a, *b]. 0: the window is empty; -1: an offset beyond +-2^62 (nothing is clipped to
 * such a window: the caller empties its range, leaving everything to the checked code). */
ORN_BOX_FN int orn_rt_win(int64_t nlo, int64_t nhi, int neg, int64_t off, int64_t *a, int64_t *b)
{
    const int64_t big = INT64_C(1) << 62;
    if (nlo >= nhi) return 0;
    if (nlo < -big || nlo > big || nhi < -big || nhi > big || off < -big || off > big) return -1;
    *a = (neg ? -(nhi - 1) : nlo) + off;
    *b = (neg ? -nlo : nhi - 1) + off;
    return *a < -big || *b > big ? -1 : 1;
}

/* The halo width above (hi) or below a block of a window known at run time (codegen sets
 * a plan's halos with it before each run): the subscripts' constant offsets reach c (the
 * largest, or the smallest for below), and the window's offsets add to them; an empty
 * window adds nothing. At most 2^30 (a read beyond an array is an error anyway). */
ORN_BOX_FN int orn_rt_win_halo(int64_t nlo, int64_t nhi, int neg, int64_t c, int hi)
{
    int64_t a = 0, b = 0, w = orn_rt_win(nlo, nhi, neg, 0, &a, &b), cap = INT64_C(1) << 30;
    c = c < -cap ? -cap : c > cap ? cap : c;
    int64_t off = w < 0 ? (hi ? cap : -cap) : hi ? c + (b > 0 ? b : 0) : c + (a < 0 ? a : 0);
    int64_t width = hi ? off : -off;
    return width <= 0 ? 0 : width > cap ? (int)cap : (int)width;
}

/* A shift known at run time (sh, `i + lag`) plus a constant offset: *o = sh + off; 0 when
 * either is beyond +-2^62 (nothing is clipped to it, the halo is the cap). */
ORN_BOX_FN int orn_rt_shift(int64_t sh, int64_t off, int64_t *o)
{
    const int64_t big = INT64_C(1) << 62;
    if (sh > big || sh < -big || off > big || off < -big) return 0;
    *o = sh + off;
    return 1;
}

/* off + sh (off - sh when neg), saturated at +-2^62: the offsets of a window moved by a
 * shift known at run time (`X[i + kw - 1 - k]`), for orn_rt_win_halo and the clips (a sum
 * beyond the saturation clips nothing and gives the halo cap). */
ORN_BOX_FN int64_t orn_rt_shift_sat(int64_t sh, int neg, int64_t off)
{
    const int64_t big = INT64_C(1) << 62;
    sh = sh > big ? big : sh < -big ? -big : sh;
    off = off > big ? big : off < -big ? -big : off;
    int64_t o = neg ? off - sh : off + sh;
    return o > big ? big : o < -big ? -big : o;
}

/* The same for a shift known at run time (a window of one value, v). */
ORN_BOX_FN int orn_rt_shift_halo(int64_t v, int neg, int64_t c, int hi)
{
    int64_t o;
    return orn_rt_shift(v, 0, &o) ? orn_rt_win_halo(v, v + 1, neg, c, hi) : 1 << 30;
}

/* orn_rt_box_clip for a subscript v + s * n + off with n over a nested loop's range
 * [nlo, nhi) (a window, `X[i + k]` in `for k in 0..w`): both ends of the window in the box. */
ORN_BOX_FN void orn_rt_box_clip_win(const OrnRtBox *x, int d, int64_t nlo, int64_t nhi, int neg,
                                    int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t a, b;
    int w = orn_rt_win(nlo, nhi, neg, off, &a, &b);
    if (w < 0) *hi = *lo;
    if (w <= 0) return;
    orn_rt_box_clip(x, d, a, lo, hi);
    orn_rt_box_clip(x, d, b, lo, hi);
}

/* orn_rt_box_clip for a subscript v + off + sh with sh known only at run time (`i + lag`):
 * a shift beyond +-2^62 keeps nothing. */
ORN_BOX_FN void orn_rt_box_clip_shift(const OrnRtBox *x, int d, int64_t sh, int64_t off,
                                      int64_t *lo, int64_t *hi)
{
    int64_t o;
    if (orn_rt_shift(sh, off, &o))
        orn_rt_box_clip(x, d, o, lo, hi);
    else
        *hi = *lo;
}

#endif
