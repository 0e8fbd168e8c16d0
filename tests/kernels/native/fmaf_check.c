/* qnn_fmaf (wasm_kernels/src/fmaf.c) against the C library's fmaf, compiled for the host: random bit
 * patterns of every class, and products that put the double sum on a float32 midpoint (the double
 * rounding qnn_fmaf must undo), normal and subnormal results. Prints "cases mismatches ties_undone";
 * ties_undone counts the cases where rounding the double sum to float32 would have been wrong. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmaf.h"

static uint64_t state;

static uint32_t next(void) {   /* xorshift64* */
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (uint32_t) ((state * 2685821657736338717ull) >> 32);
}

static float from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static long mismatches, ties_undone;

static void check(float a, float b, float c) {
  const float got = qnn_fmaf(a, b, c), want = fmaf(a, b, c);
  if (to_bits(got) != to_bits(want) && !(isnan(got) && isnan(want))) {
    if (mismatches++ < 5) printf("fmaf(%a, %a, %a) = %a, qnn_fmaf %a\n", a, b, c, want, got);
  }
  if ((float) ((double) a * b + c) != want && !isnan(want)) ties_undone++;
}

int main(int argc, char** argv) {
  const long count = argc > 1 ? atol(argv[1]) : 1000000;
  state = argc > 2 ? strtoull(argv[2], NULL, 10) | 1 : 88172645463325252ull;
  for (long i = 0; i < count; i++) {
    check(from_bits(next()), from_bits(next()), from_bits(next()));
    /* a = (1 + k 2^-23) 2^ea, b = (1 - k 2^-23) 2^eb: a b = 2^(ea + eb) (1 - k^2 2^-46), just below half an
     * ulp of c when ea + eb = exponent(c) - 24: c + a b is a float32 midpoint but for its last bits */
    const int32_t k = (int32_t) (next() % 300) + 1, ec = (int32_t) (next() % 277) - 149;   /* c: any exponent */
    const int32_t ea = (int32_t) (next() % 40) - 20, eb = ec - 24 - ea;
    const float a = ldexpf(1.0f + (float) k * 0x1p-23f, ea) * ((next() & 1) ? -1.0f : 1.0f);
    const float b = ldexpf(1.0f - (float) k * 0x1p-23f, eb) * ((next() & 1) ? -1.0f : 1.0f);
    const float c = from_bits((next() & 0x807FFFFFu) | ((uint32_t) (ec + 127 > 0 ? ec + 127 : 0) << 23));
    check(a, b, c);
    check(a, b, -c);
    check(b, a, c);
    /* the largest float32 plus just under half its ulp (2^103): the double sum is the overflow threshold,
     * which rounds to infinity; the exact sum rounds to the largest float32 */
    const float big_a = ldexpf(1.0f + (float) k * 0x1p-23f, ea), big_b = ldexpf(1.0f - (float) k * 0x1p-23f, 103 - ea);
    const float sign = (next() & 1) ? -1.0f : 1.0f;
    check(sign * big_a, big_b, sign * 0x1.fffffep127f);
  }
  printf("%ld %ld %ld\n", count * 5, mismatches, ties_undone);
  return mismatches != 0;
}
