/* xsum.h: an exact accumulator of doubles (reduce.c's whole-array sum, dot and norm).
 *
 * The sum of any multiset of doubles, kept without rounding as a fixed-point number of
 * ORN_XSUM_CHUNKS 32-bit digits from 2^-1074 (the smallest subnormal) up, and rounded once,
 * to nearest even, when read. Integer addition is associative, so the result does not depend
 * on the order of the additions, on how they were split between accumulators or on the
 * order in which accumulators were merged: that is what makes a distributed reduction give
 * the same bits at every rank count and under every partition (docs/language.md section 13).
 *
 * Cost: a few integer operations and three memory adds per value (no branch per value but
 * the infinity/NaN test), a carry pass every 2^29 values; merging across ranks sends
 * ORN_XSUM_WORDS int64s. */
#ifndef ORN_XSUM_H
#define ORN_XSUM_H

#include <stdint.h>

/* Digits: bit positions 0 .. 32 * ORN_XSUM_CHUNKS - 1 above 2^-1074. The largest finite
 * double, with its 53-bit significand, reaches bit 2098, so digit 65 is the highest any value
 * touches; digit 66 takes the carries of up to 2^62 values. */
#define ORN_XSUM_CHUNKS 67
/* The accumulator as int64 words, for orn_dsm_allreduce_i64: the digits, then the counts of
 * NaNs, +infinities and -infinities. */
#define ORN_XSUM_WORDS (ORN_XSUM_CHUNKS + 3)

typedef struct OrnXsum {
    /* w[0 .. CHUNKS-1]: digit i weighs 2^(32 i - 1074); between carry passes a digit may be
     * any int64 (each add moves it by less than 2^33); w[CHUNKS + 0, 1, 2]: NaN, +inf, -inf
     * counts. */
    int64_t w[ORN_XSUM_WORDS];
    int64_t adds; /* values added since the last carry pass */
} OrnXsum;

void orn_xsum_init(OrnXsum *x);
void orn_xsum_add(OrnXsum *x, double v);
/* Carry pass: digits 0 .. CHUNKS-2 into [0, 2^32), the top digit signed. After it, the sum of
 * the words of up to 2^30 normalized accumulators (any order) is a valid accumulator of the
 * union of their values; it is how ranks merge (reduce.c). */
void orn_xsum_normalize(OrnXsum *x);
/* The exact sum rounded to the nearest double (ties to even): NaN if a NaN was added or both
 * infinities were, else the infinity added, else the rounded sum (an infinity when it
 * overflows); an exact zero is +0.0. Does not change the value held. */
double orn_xsum_round(const OrnXsum *x);

#endif
