/* xsum.c: the exact accumulator of xsum.h. A finite double is m * 2^(p - 1074) with m an
 * integer below 2^53 and p in 0 .. 2045 (p = biased exponent - 1, 0 for subnormals), so
 * adding it is adding m shifted left by p into a long fixed-point integer: m << (p mod 32)
 * spans three 32-bit digits starting at digit p / 32. Digits are int64, so negative values
 * subtract and carries wait for a carry pass (every 2^29 adds, before any digit could reach
 * 2^62). The idea is Kulisch's long accumulator, in the small-digit form of Neal's xsum
 * (arXiv:1505.05571). */
#include "xsum.h"

#include <math.h>
#include <string.h>

#define CH     ORN_XSUM_CHUNKS
#define MASK32 UINT64_C(0xffffffff)

void orn_xsum_init(OrnXsum *x)
{
    memset(x, 0, sizeof *x);
}

void orn_xsum_add(OrnXsum *x, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    unsigned e = (unsigned)(b >> 52) & 0x7ffu;
    uint64_t m = b & ((UINT64_C(1) << 52) - 1);
    if (e == 0x7ffu) {
        x->w[CH + (m ? 0 : (b >> 63) ? 2 : 1)]++;
        return;
    }
    unsigned p = e ? e - 1 : 0;
    if (e) m |= UINT64_C(1) << 52;
    unsigned i = p >> 5, s = p & 31u;
    uint64_t lo = (m & MASK32) << s; /* < 2^63 */
    uint64_t hi = (m >> 32) << s;    /* < 2^52 */
    int64_t d0 = (int64_t)(lo & MASK32);
    int64_t d1 = (int64_t)((lo >> 32) + (hi & MASK32)); /* < 2^33 */
    int64_t d2 = (int64_t)(hi >> 32);
    int64_t sg = 1 - 2 * (int64_t)(b >> 63);
    x->w[i] += sg * d0;
    x->w[i + 1] += sg * d1;
    x->w[i + 2] += sg * d2;
    if (++x->adds == (INT64_C(1) << 29)) orn_xsum_normalize(x);
}

void orn_xsum_normalize(OrnXsum *x)
{
    for (int i = 0; i < CH - 1; i++) {
        int64_t v = x->w[i];
        int64_t lo = (int64_t)((uint64_t)v & MASK32); /* v mod 2^32, in [0, 2^32) */
        x->w[i] = lo;
        x->w[i + 1] += (v - lo) / (INT64_C(1) << 32); /* exact: v - lo is a multiple */
    }
    x->adds = 0;
}

/* Bit `pos` of a normalized, non-negative accumulator (the top digit holds the bits from
 * 32 (CH - 1) up, at most 63 of them). */
static unsigned bit_at(const OrnXsum *y, int pos)
{
    int i = pos / 32 < CH - 1 ? pos / 32 : CH - 1;
    return (unsigned)(((uint64_t)y->w[i] >> (pos - 32 * i)) & 1u);
}

/* Whether any of bits 0 .. below-1 is set. */
static int any_below(const OrnXsum *y, int below)
{
    int i = below / 32, o = below % 32;
    for (int j = 0; j < i && j < CH; j++)
        if (y->w[j]) return 1;
    return i < CH && o && ((uint64_t)y->w[i] & ((UINT64_C(1) << o) - 1));
}

double orn_xsum_round(const OrnXsum *x)
{
    if (x->w[CH] || (x->w[CH + 1] && x->w[CH + 2])) return NAN;
    if (x->w[CH + 1]) return INFINITY;
    if (x->w[CH + 2]) return -INFINITY;
    OrnXsum y = *x;
    orn_xsum_normalize(&y);
    int neg = y.w[CH - 1] < 0;
    if (neg) { /* round the magnitude: negate every digit, carry again */
        for (int i = 0; i < CH; i++) y.w[i] = -y.w[i];
        orn_xsum_normalize(&y);
    }
    int top = CH - 1;
    while (top >= 0 && y.w[top] == 0) top--;
    if (top < 0) return 0.0;
    int B = 32 * top + 63 - __builtin_clzll((uint64_t)y.w[top]); /* the highest set bit */
    double r;
    if (B <= 52) { /* below 2^-1021: a multiple of 2^-1074 that a double holds exactly */
        uint64_t m = 0;
        for (int pos = B; pos >= 0; pos--) m = m << 1 | bit_at(&y, pos);
        r = ldexp((double)m, -1074);
    } else { /* the 64 bits from B down, the rest as a sticky bit; 53 of them, ties to even */
        uint64_t h = 0;
        for (int pos = B; pos >= B - 63; pos--) h = h << 1 | (pos >= 0 ? bit_at(&y, pos) : 0u);
        int sticky = B - 63 > 0 && any_below(&y, B - 63);
        uint64_t mant = h >> 11;
        int half = (int)((h >> 10) & 1u), rest = (h & 0x3ffu) || sticky;
        if (half && (rest || (mant & 1u))) mant++;
        int E = B - 52;
        if (mant >> 53) {
            mant >>= 1;
            E++;
        }
        r = ldexp((double)mant, E - 1074); /* exact, or an infinity beyond the range */
    }
    return neg ? -r : r;
}
