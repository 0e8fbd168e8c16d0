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
 * trunc_sat take about 12 on x86 engines (trunc_sat has no single instruction there).
 * Where the operator proved every product above -2^23 (params->products_bounded), the lower clamp
 * can be an i8x16.max after the narrows, one instruction per 16 outputs instead of one per 4: a
 * product in (-1.5 * 2^23, -2^22] leaves a float in (0, 2^23] whose bits, less the bias's, are
 * negative and saturate to -128 in the narrows; only below -1.5 * 2^23 does the sum turn negative
 * and its bits wrap (kernels pass `bounded` as a compile-time constant). */
struct qnn_requantize_simd128 {
  v128_t magic_bias, magic_min, magic_bias_less_zero_point, output_max, output_min;
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
  q.output_min = wasm_i8x16_splat((int8_t) ((int32_t) p->output_min_less_zero_point + p->output_zero_point));
  return q;
}

/* acc * scale rounded, plus the zero point (i32 lanes), clamped below unless `bounded` (then by
 * qnn_clamp_bytes after the narrows); the upper clamp is always there. */
static inline __attribute__((always_inline)) v128_t qnn_requantize4_fp32_maybe_bounded(
    v128_t acc, v128_t scale, const struct qnn_requantize_simd128* q, const int bounded) {
  const v128_t f = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc), scale), q->magic_bias);
  return wasm_i32x4_sub(bounded ? f : wasm_i32x4_max(f, q->magic_min), q->magic_bias_less_zero_point);
}

static inline v128_t qnn_requantize4_fp32(v128_t acc, v128_t scale, const struct qnn_requantize_simd128* q) {
  return qnn_requantize4_fp32_maybe_bounded(acc, scale, q, 0);
}

/* The narrowed bytes clamped above (and below where the i32 lanes were not). */
static inline __attribute__((always_inline)) v128_t qnn_clamp_bytes(v128_t bytes, const struct qnn_requantize_simd128* q,
                                                                    const int bounded) {
  const v128_t v = wasm_i8x16_min(bytes, q->output_max);
  return bounded ? wasm_i8x16_max(v, q->output_min) : v;
}

/* 16 accumulators (four i32x4, each with its scales) -> 16 int8 outputs in lane order. */
static inline __attribute__((always_inline)) v128_t qnn_requantize16_fp32_maybe_bounded(
    v128_t acc0, v128_t acc1, v128_t acc2, v128_t acc3, v128_t scale0, v128_t scale1, v128_t scale2,
    v128_t scale3, const struct qnn_requantize_simd128* q, const int bounded) {
  const v128_t out01 = wasm_i16x8_narrow_i32x4(qnn_requantize4_fp32_maybe_bounded(acc0, scale0, q, bounded),
                                               qnn_requantize4_fp32_maybe_bounded(acc1, scale1, q, bounded));
  const v128_t out23 = wasm_i16x8_narrow_i32x4(qnn_requantize4_fp32_maybe_bounded(acc2, scale2, q, bounded),
                                               qnn_requantize4_fp32_maybe_bounded(acc3, scale3, q, bounded));
  return qnn_clamp_bytes(wasm_i8x16_narrow_i16x8(out01, out23), q, bounded);
}

static inline v128_t qnn_requantize16_fp32(v128_t acc0, v128_t acc1, v128_t acc2, v128_t acc3, v128_t scale0,
                                           v128_t scale1, v128_t scale2, v128_t scale3,
                                           const struct qnn_requantize_simd128* q) {
  return qnn_requantize16_fp32_maybe_bounded(acc0, acc1, acc2, acc3, scale0, scale1, scale2, scale3, q, 0);
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
