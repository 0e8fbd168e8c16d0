/* SIMD128 forms of requantization.h, shared by every SIMD kernel, so that all of them stay
 * bit-exact with the scalar qnn_qs8_requantize_fp32. */
#ifndef QNN_REQUANTIZATION_SIMD128_H
#define QNN_REQUANTIZATION_SIMD128_H

#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>

#include "requantization.h"

/* qnn_qs8_requantize_fp32 for SIMD kernels, by XNNPACK's "magic bias": adding 1.5 * 2^23 to a float
 * rounds it to an integer (to nearest-even, as rintf) held in the low mantissa bits, so the lower
 * clamp and the zero point are integer max / subtract on the float's bits, and the upper clamp is an
 * i8x16.min of the narrowed bytes. Bit-exact with the scalar clamp-then-round: rounding is monotonic
 * and the bounds are integers; a product of magnitude 2^22 or more is far outside [-255, 255] and
 * still lands on the bound it would be clamped to (positive ones saturate in the narrows, negative
 * ones fall below magic_min). 5 instructions per 4 lanes where float clamps, nearest and
 * trunc_sat take about 12 on x86 engines (trunc_sat has no single instruction there). */
struct qnn_requantize_simd128 {
  v128_t magic_bias, magic_min, magic_bias_less_zero_point, output_max;
};

static inline struct qnn_requantize_simd128 qnn_requantize_simd128_init(const struct qnn_qs8_minmax_params* p) {
  const float magic_bias = 12582912.0f;
  const float magic_min = magic_bias + p->output_min_less_zero_point;
  int32_t magic_min_bits;
  __builtin_memcpy(&magic_min_bits, &magic_min, sizeof(magic_min_bits));
  struct qnn_requantize_simd128 q;
  q.magic_bias = wasm_f32x4_splat(magic_bias);
  q.magic_min = wasm_i32x4_splat(magic_min_bits);
  q.magic_bias_less_zero_point = wasm_i32x4_splat(INT32_C(0x4B400000) - p->output_zero_point);
  q.output_max = wasm_i8x16_splat((int8_t) ((int32_t) p->output_max_less_zero_point + p->output_zero_point));
  return q;
}

/* acc * scale rounded, clamped below, plus the zero point (i32 lanes; the upper clamp is later). */
static inline v128_t qnn_requantize4_fp32(v128_t acc, v128_t scale, const struct qnn_requantize_simd128* q) {
  const v128_t f = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc), scale), q->magic_bias);
  return wasm_i32x4_sub(wasm_i32x4_max(f, q->magic_min), q->magic_bias_less_zero_point);
}

/* 16 accumulators (four i32x4, each with its scales) -> 16 int8 outputs in lane order. */
static inline v128_t qnn_requantize16_fp32(v128_t acc0, v128_t acc1, v128_t acc2, v128_t acc3, v128_t scale0,
                                           v128_t scale1, v128_t scale2, v128_t scale3,
                                           const struct qnn_requantize_simd128* q) {
  const v128_t out01 = wasm_i16x8_narrow_i32x4(qnn_requantize4_fp32(acc0, scale0, q), qnn_requantize4_fp32(acc1, scale1, q));
  const v128_t out23 = wasm_i16x8_narrow_i32x4(qnn_requantize4_fp32(acc2, scale2, q), qnn_requantize4_fp32(acc3, scale3, q));
  return wasm_i8x16_min(wasm_i8x16_narrow_i16x8(out01, out23), q->output_max);
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

/* Stores min(n, 16) bytes of v: a tile of 16 channels, the last one possibly partial. */
static inline void qnn_store_up_to16(int8_t* o, v128_t v, size_t n) {
  if (n >= 16) {
    wasm_v128_store(o, v);
  } else {
    qnn_store_partial(o, v, n);
  }
}

#endif
