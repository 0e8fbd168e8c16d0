/* qnn_fmaf: musl's fmaf idea (the float32 product is exact in double) with the double rounding of the
 * sum fixed by rounding it to odd: the double sum s and its exact rounding error (TwoSum) give the
 * double on the exact sum's side of s whose last bit is odd, and rounding that one to float32 gives the
 * correctly rounded fused result (double's 53 bits are more than float32's 24 + 2, subnormal float32
 * results included: their midpoints are doubles too, and an odd last bit never lands on one). */
#include <stdint.h>

#include "fmaf.h"

__attribute__((noinline)) float qnn_fmaf(float a, float b, float c) {
  const double p = (double) a * b, s = p + c;
  union { double d; uint64_t u; } odd = {s};
  if ((odd.u & 1) == 0 && s - s == 0.0) {   /* an even, finite s: exact, or the wrong one of two neighbours */
    const double v = s - p, error = (p - (s - v)) + ((double) c - v);   /* p + c == s + error exactly */
    if (error != 0.0) odd.u += (error > 0.0) == (s > 0.0) ? 1 : (uint64_t) -1;   /* the neighbour toward p + c */
  }
  return (float) odd.d;
}
