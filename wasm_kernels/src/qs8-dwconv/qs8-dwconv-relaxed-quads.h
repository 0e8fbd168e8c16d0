/* The activation transpose of the relaxed depthwise kernels: 16 channels of four rows (taps or
 * input columns) into channel-major quads, q[j] = [x0[c], x1[c], x2[c], x3[c]] for c = 4j .. 4j + 3,
 * each row XORed with vxor first (params->activation_xor). 4 byte and 4 16-bit interleaves. */
#ifndef QNN_QS8_DWCONV_RELAXED_QUADS_H
#define QNN_QS8_DWCONV_RELAXED_QUADS_H

#include <stdint.h>
#include <wasm_simd128.h>

static inline __attribute__((always_inline)) void qnn_quads16(
    const int8_t* r0, const int8_t* r1, const int8_t* r2, const int8_t* r3, v128_t vxor, v128_t q[4]) {
  const v128_t vx0 = wasm_v128_xor(wasm_v128_load(r0), vxor);
  const v128_t vx1 = wasm_v128_xor(wasm_v128_load(r1), vxor);
  const v128_t vx2 = wasm_v128_xor(wasm_v128_load(r2), vxor);
  const v128_t vx3 = wasm_v128_xor(wasm_v128_load(r3), vxor);
  /* byte pairs [x0[c], x1[c]] and [x2[c], x3[c]], channels 0-7 (lo) and 8-15 (hi) */
  const v128_t v01lo = wasm_i8x16_shuffle(vx0, vx1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t v01hi = wasm_i8x16_shuffle(vx0, vx1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const v128_t v23lo = wasm_i8x16_shuffle(vx2, vx3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t v23hi = wasm_i8x16_shuffle(vx2, vx3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  q[0] = wasm_i16x8_shuffle(v01lo, v23lo, 0, 8, 1, 9, 2, 10, 3, 11);
  q[1] = wasm_i16x8_shuffle(v01lo, v23lo, 4, 12, 5, 13, 6, 14, 7, 15);
  q[2] = wasm_i16x8_shuffle(v01hi, v23hi, 0, 8, 1, 9, 2, 10, 3, 11);
  q[3] = wasm_i16x8_shuffle(v01hi, v23hi, 4, 12, 5, 13, 6, 14, 7, 15);
}

/* acc[j] += dot(weights k + 16 j, q[j]): each channel's four products into its lane. */
static inline __attribute__((always_inline)) void qnn_dot_quads16(v128_t acc[4], const int8_t* k, const v128_t q[4]) {
  for (int j = 0; j < 4; j++) acc[j] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load(k + 16 * j), q[j], acc[j]);
}

#endif
