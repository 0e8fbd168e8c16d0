/* qnn_fmaf: musl's fmaf idea (the float32 product is exact in double) with the double rounding of the
 * sum fixed by rounding it to odd: the double sum s and its exact rounding error (TwoSum) give the
 * double on the exact sum's side of s whose last bit is odd, and rounding that one to float32 gives the
 * correctly rounded fused result (double's 53 bits are more than float32's 24 + 2, subnormal float32
 * results included: their midpoints are doubles too, and an odd last bit never lands on one).
 * The fix is needed only where s lies on a float32 midpoint: elsewhere no midpoint lies between s and the
 * exact sum (a double there would be nearer to it than s, the nearest double), so both round alike. Most
 * sums take that early return (LayerNorm's squares and outputs: about 40 % of its time went to the fix). */
#include <stdint.h>

#include "fmaf.h"

#define FLOAT32_HALF_ULP_BITS 0x1FFFFFFFu          /* the double's bits below float32's last place */
#define FLOAT32_MIDPOINT 0x10000000u               /* ... on a midpoint: 1 then zeros */
#define FLOAT32_NORMAL_MIN 0x3810000000000000ull   /* 2^-126 as a double's bits: below it, float32 has fewer */

__attribute__((noinline)) float qnn_fmaf(float a, float b, float c) {
  const double p = (double) a * b, s = p + c;
  union { double d; uint64_t u; } odd = {s};
  if ((odd.u & FLOAT32_HALF_ULP_BITS) != FLOAT32_MIDPOINT && (odd.u & ~(1ull << 63)) >= FLOAT32_NORMAL_MIN) {
    return (float) s;   /* not on a midpoint of float32's normal range (infinities and NaN included) */
  }
  if ((odd.u & 1) == 0 && s - s == 0.0) {   /* an even, finite s: exact, or the wrong one of two neighbours */
    const double v = s - p, error = (p - (s - v)) + ((double) c - v);   /* p + c == s + error exactly */
    if (error != 0.0) odd.u += (error > 0.0) == (s > 0.0) ? 1 : (uint64_t) -1;   /* the neighbour toward p + c */
  }
  return (float) odd.d;
}
