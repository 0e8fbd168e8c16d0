/* Packs the activations of a 4-row GEMM tile for the c2 GEMM kernels on int16 (qs8-gemm): the rows'
 * values sign-extended to int16 and interleaved by pairs, packed[k / 2][m][k % 2], so that one
 * pointer with constant offsets reaches the four rows' pairs of a step. Row m's values are its
 * pixel's ks taps, tap t's kc channels at k = t * round_up(kc, 2) + channel.
 *
 * 8 channels of the 4 rows at a time: four i16x8.load8x8_s and a 4x4 transpose of their 32-bit pairs
 * (8 shuffles that x86 engines lower to single unpack instructions), four v128 stores. A tap whose
 * kc is not a multiple of 8 writes up to 3 pairs past its own: they land on the next tap's place,
 * written afterwards, or after the last tap, in the buffer's QNN_GEMM_PACKA_EXTRA bytes. The value in
 * a tap's padding channel (odd kc) meets a zero weight. Reads up to 7 bytes past each row
 * (QNN_EXTRA_BYTES). Rows past `rows` repeat the last row. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"

void qnn_qs8_packa_4c2_i16__simd128(size_t rows, size_t kc, size_t ks, const int8_t* const* a, int16_t* packed) {
  const int8_t* const* a0 = a;
  const int8_t* const* a1 = rows > 1 ? a0 + ks : a0;
  const int8_t* const* a2 = rows > 2 ? a1 + ks : a1;
  const int8_t* const* a3 = rows > 3 ? a2 + ks : a2;
  const size_t tap_pairs = qnn_round_up(kc, 2) / 2;
  for (size_t t = 0; t < ks; t++) {
    const int8_t* x0 = a0[t];
    const int8_t* x1 = a1[t];
    const int8_t* x2 = a2[t];
    const int8_t* x3 = a3[t];
    int16_t* out = packed + t * tap_pairs * 8;
    for (size_t k = 0; k < kc; k += 8, out += 32) {
      const v128_t v0 = wasm_i16x8_load8x8(x0 + k);  /* row 0: pairs p0 p1 p2 p3 */
      const v128_t v1 = wasm_i16x8_load8x8(x1 + k);
      const v128_t v2 = wasm_i16x8_load8x8(x2 + k);
      const v128_t v3 = wasm_i16x8_load8x8(x3 + k);
      const v128_t v01lo = wasm_i32x4_shuffle(v0, v1, 0, 4, 1, 5);  /* r0p0 r1p0 r0p1 r1p1 */
      const v128_t v01hi = wasm_i32x4_shuffle(v0, v1, 2, 6, 3, 7);
      const v128_t v23lo = wasm_i32x4_shuffle(v2, v3, 0, 4, 1, 5);
      const v128_t v23hi = wasm_i32x4_shuffle(v2, v3, 2, 6, 3, 7);
      wasm_v128_store(out, wasm_i64x2_shuffle(v01lo, v23lo, 0, 2));       /* pair 0 of rows 0-3 */
      wasm_v128_store(out + 8, wasm_i64x2_shuffle(v01lo, v23lo, 1, 3));   /* pair 1 */
      wasm_v128_store(out + 16, wasm_i64x2_shuffle(v01hi, v23hi, 0, 2));  /* pair 2 */
      wasm_v128_store(out + 24, wasm_i64x2_shuffle(v01hi, v23hi, 1, 3));  /* pair 3 */
    }
  }
}
