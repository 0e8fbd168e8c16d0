/* float32 fused multiply-add without a hardware FMA (WebAssembly has none outside relaxed SIMD, whose
 * madd may round twice): the x86 FMA3 arithmetic that onnxruntime's float kernels (MLAS) and their
 * results follow. */
#ifndef QNN_FMAF_H
#define QNN_FMAF_H

#include <stdint.h>

/* a * b + c rounded once to float32, for every float32 a, b, c (infinities and NaN as IEEE's fma gives
 * them; NaN payloads aside). */
float qnn_fmaf(float a, float b, float c);

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

/* The lanes of double sums where converting to float32 may round otherwise than one rounding of the exact
 * sum (qnn_fmaf's test): on a float32 midpoint, or below float32's normal range but not zero. */
static inline v128_t qnn_fmaf_double_rounds(v128_t s) {
  const v128_t magnitude = wasm_v128_and(s, wasm_i64x2_splat(INT64_MAX));
  const v128_t midpoint = wasm_i64x2_eq(wasm_v128_and(s, wasm_i64x2_splat(0x1FFFFFFF)), wasm_i64x2_splat(0x10000000));
  const v128_t tiny = wasm_v128_andnot(wasm_i64x2_lt(magnitude, wasm_i64x2_splat(0x3810000000000000ll)),
                                       wasm_i64x2_eq(magnitude, wasm_i64x2_splat(0)));
  return wasm_v128_or(midpoint, tiny);
}

/* qnn_fmaf of four lanes: each product exact in double, the sums in two double pairs rounded to float32,
 * the rare lane that may round twice redone by qnn_fmaf. The same bits as qnn_fmaf; SIMD128 has no FMA. */
static inline v128_t qnn_fmaf4(v128_t a, v128_t b, v128_t c) {
  const v128_t low = wasm_f64x2_add(wasm_f64x2_promote_low_f32x4(c),
                                    wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(a), wasm_f64x2_promote_low_f32x4(b)));
  const v128_t ah = wasm_i64x2_shuffle(a, a, 1, 1), bh = wasm_i64x2_shuffle(b, b, 1, 1), ch = wasm_i64x2_shuffle(c, c, 1, 1);
  const v128_t high = wasm_f64x2_add(wasm_f64x2_promote_low_f32x4(ch),
                                     wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(ah), wasm_f64x2_promote_low_f32x4(bh)));
  v128_t sum = wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(low), wasm_f32x4_demote_f64x2_zero(high), 0, 2);
  if (wasm_v128_any_true(wasm_v128_or(qnn_fmaf_double_rounds(low), qnn_fmaf_double_rounds(high)))) {
    float x[4], y[4], z[4], r[4];
    wasm_v128_store(x, a);
    wasm_v128_store(y, b);
    wasm_v128_store(z, c);
    for (int j = 0; j < 4; j++) r[j] = qnn_fmaf(x[j], y[j], z[j]);
    sum = wasm_v128_load(r);
  }
  return sum;
}
#endif

#endif
