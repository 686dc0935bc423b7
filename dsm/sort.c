/* sort.c: a batch of elements sorted by key in place (orn_dsm_sort_elements, dsm_int.h):
 * by key, then tag, then position. The order comes from an LSD radix sort (16-bit digits)
 * of each key's offset in the keys' bounding box where its volume fits 62 bits, from a
 * bottom-up merge sort of an index otherwise; it is then applied cycle by cycle, so keys,
 * values and tags move once each and no second copy of the batch is made. A batch already
 * in order costs one pass. Used where sparse tiles are built from unordered elements
 * (array.c's scatter, build.c, refine.c).
 */
#include "dsm_int.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"

typedef struct SortBy {
    const int64_t *keys;
    const int64_t *tags;
    int ndim;
} SortBy;

static int cmp_idx(const SortBy *s, int64_t i, int64_t j)
{
    int c = orn_dsm_key_cmp(s->keys + i * s->ndim, s->keys + j * s->ndim, s->ndim);
    if (c) return c;
    if (s->tags && s->tags[i] != s->tags[j]) return s->tags[i] < s->tags[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* Bottom-up merge sort of an index permutation (stable, O(n log n), no recursion). */
static void sort_index(const SortBy *s, int64_t *idx, int64_t n)
{
    int64_t *tmp = orn_xmalloc((size_t)(n ? n : 1) * sizeof *tmp);
    int64_t *src = idx, *dst = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = cmp_idx(s, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
    free(tmp);
}

/* Stable LSD radix passes (16-bit digits) over off[0..n) of `bits` significant bits,
 * reordering idx (an order of 0..n) by off[idx[i]]. */
static void radix_passes(const uint64_t *off, int bits, int64_t n, int64_t **idx, int64_t **tmp,
                         int64_t *cnt)
{
    for (int shift = 0; shift < bits; shift += 16) {
        memset(cnt, 0, ((size_t)1 << 16) * sizeof *cnt);
        for (int64_t i = 0; i < n; i++) cnt[(off[(*idx)[i]] >> shift) & 0xffff]++;
        int64_t sum = 0;
        for (size_t b = 0; b < ((size_t)1 << 16); b++) {
            int64_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++)
            (*tmp)[cnt[(off[(*idx)[i]] >> shift) & 0xffff]++] = (*idx)[i];
        int64_t *t = *idx;
        *idx = *tmp;
        *tmp = t;
    }
}

static int bits_of(uint64_t vol)
{
    int bits = 0;
    while (bits < 64 && (vol - 1) >> bits) bits++;
    return bits;
}

/* The permutation cmp_idx sorts by -- keys, then tags, then position -- by LSD radix sort
 * of each key's row-major offset in the keys' bounding box (after a pass over the tags'
 * offsets when there are tags): O(n) per 16-bit digit, and a tile's box takes one to four.
 * Returns NULL when the box's volume does not fit in 62 bits. */
static int64_t *radix_index(int ndim, int64_t n, const int64_t *keys, const int64_t *tags)
{
    int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM];
    for (int d = 0; d < ndim; d++) lo[d] = hi[d] = keys[d];
    for (int64_t i = 1; i < n; i++)
        for (int d = 0; d < ndim; d++) {
            int64_t k = keys[i * ndim + d];
            if (k < lo[d]) lo[d] = k;
            if (k > hi[d]) hi[d] = k;
        }
    uint64_t vol = 1;
    for (int d = 0; d < ndim; d++) {
        uint64_t w = (uint64_t)(hi[d] - lo[d]) + 1;
        if (w == 0 || vol > ((uint64_t)1 << 62) / w) return NULL;
        vol *= w;
    }
    uint64_t *off = orn_xmalloc((size_t)n * sizeof *off);
    int64_t *idx = orn_xmalloc((size_t)n * sizeof *idx),
            *tmp = orn_xmalloc((size_t)n * sizeof *tmp);
    int64_t *cnt = orn_xmalloc(((size_t)1 << 16) * sizeof *cnt);
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    if (tags) {
        int64_t tlo = tags[0], thi = tags[0];
        for (int64_t i = 1; i < n; i++) {
            if (tags[i] < tlo) tlo = tags[i];
            if (tags[i] > thi) thi = tags[i];
        }
        for (int64_t i = 0; i < n; i++) off[i] = (uint64_t)tags[i] - (uint64_t)tlo;
        radix_passes(off, bits_of((uint64_t)thi - (uint64_t)tlo + 1), n, &idx, &tmp, cnt);
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t o = 0;
        for (int d = 0; d < ndim; d++)
            o = o * ((uint64_t)(hi[d] - lo[d]) + 1) + (uint64_t)(keys[i * ndim + d] - lo[d]);
        off[i] = o;
    }
    radix_passes(off, bits_of(vol), n, &idx, &tmp, cnt);
    free(cnt);
    free(tmp);
    free(off);
    return idx;
}

static inline void copy_elem(char *dst, const char *src, size_t esize)
{
    if (esize == 4)
        memcpy(dst, src, 4);
    else if (esize == 8)
        memcpy(dst, src, 8);
    else
        memcpy(dst, src, esize);
}

static inline void copy_key(int64_t *dst, const int64_t *src, int ndim)
{
    for (int d = 0; d < ndim; d++) dst[d] = src[d];
}

void orn_dsm_sort_elements(int ndim, size_t esize, int64_t n, int64_t *keys, void *vals,
                           int64_t *tags)
{
    SortBy s = {keys, tags, ndim};
    int sorted = 1;
    for (int64_t i = 1; i < n && sorted; i++) sorted = cmp_idx(&s, i - 1, i) < 0;
    if (sorted) return;
    int64_t *idx = radix_index(ndim, n, keys, tags);
    if (!idx) {
        idx = orn_xmalloc((size_t)n * sizeof *idx);
        for (int64_t i = 0; i < n; i++) idx[i] = i;
        sort_index(&s, idx, n);
    }
    /* Apply the permutation in place, cycle by cycle (position j takes the element at
     * idx[j]), so sorting needs no second copy of the elements. */
    int64_t tk[ORN_DSM_MAXDIM], tt = 0;
    unsigned char tv[16];
    char *v = vals;
    for (int64_t i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] == i) continue;
        copy_key(tk, keys + i * ndim, ndim);
        copy_elem((char *)tv, v + (size_t)i * esize, esize);
        if (tags) tt = tags[i];
        int64_t j = i;
        while (idx[j] != i) {
            int64_t k = idx[j];
            copy_key(keys + j * ndim, keys + k * ndim, ndim);
            copy_elem(v + (size_t)j * esize, v + (size_t)k * esize, esize);
            if (tags) tags[j] = tags[k];
            idx[j] = -1;
            j = k;
        }
        copy_key(keys + j * ndim, tk, ndim);
        copy_elem(v + (size_t)j * esize, (const char *)tv, esize);
        if (tags) tags[j] = tt;
        idx[j] = -1;
    }
    free(idx);
}
