/* SIMD128 forms of requantization.h, shared by every SIMD kernel, so that all of them stay
 * bit-exact with the scalar qnn_qs8_requantize_fp32. */
#ifndef QNN_REQUANTIZATION_SIMD128_H
#define QNN_REQUANTIZATION_SIMD128_H

#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>

/* qnn_qs8_requantize_fp32 on 4 lanes, before narrowing: pmax/pmin are exactly the scalar
 * `f < lo ? lo : f` and `f > hi ? hi : f` (NaN included); trunc_sat matches the scalar cast. */
static inline v128_t qnn_requantize4_fp32(v128_t acc, v128_t scale, v128_t lo, v128_t hi, v128_t zp) {
  v128_t f = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc), scale);
  f = wasm_f32x4_pmax(f, lo);
  f = wasm_f32x4_pmin(f, hi);
  return wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(f)), zp);
}

/* Stores the first n (< 16) bytes of v: kernels never write past their output. */
static inline void qnn_store_partial(int8_t* o, v128_t v, size_t n) {
  if (n & 8) {
    wasm_v128_store64_lane(o, v, 0);
    v = wasm_i64x2_shuffle(v, v, 1, 1);
    o += 8;
  }
  if (n & 4) {
    wasm_v128_store32_lane(o, v, 0);
    v = wasm_u64x2_shr(v, 32);
    o += 4;
  }
  if (n & 2) {
    wasm_v128_store16_lane(o, v, 0);
    v = wasm_u32x4_shr(v, 16);
    o += 2;
  }
  if (n & 1) wasm_v128_store8_lane(o, v, 0);
}

#endif
