/* fp32 requantization, the single scheme every kernel uses (XNNPACK's "minmax_fp32").
 * acc * scale in float32, clamp in float to [min - zp, max - zp], round to nearest-even, add zp.
 * The SIMD kernels perform the same float32 operations in the same order, so they are bit-exact
 * with this scalar code. */
#ifndef QNN_REQUANTIZATION_H
#define QNN_REQUANTIZATION_H

#include <stddef.h>
#include <stdint.h>

struct qnn_qs8_minmax_params {
  float output_min_less_zero_point;
  float output_max_less_zero_point;
  int32_t output_zero_point;
  int32_t activation_xor;   /* the relaxed depthwise kernels flip activations to uint8 with 0x80 (usdot) */
  /* IGEMM only: NULL, or MR int32 values added to every accumulator of row m (after the whole dot
   * product and the bias, before the float conversion): -zw * sum(x - x_zp) of the row's pixel
   * for weights with a zero point zw. Rows past mr repeat the last row's value. */
  const int32_t* row_correction;
  /* Set by operators that proved every accumulator times its scale above -2^23 (from the weights,
   * bias and scales): SIMD kernels may then clamp below after narrowing (qnn_requantize_simd128). */
  int32_t products_bounded;
};

static inline struct qnn_qs8_minmax_params qnn_qs8_minmax_params_init(
    int32_t output_zero_point, int32_t output_min, int32_t output_max, int32_t activation_xor) {
  struct qnn_qs8_minmax_params p;
  p.output_min_less_zero_point = (float) (output_min - output_zero_point);
  p.output_max_less_zero_point = (float) (output_max - output_zero_point);
  p.output_zero_point = output_zero_point;
  p.activation_xor = activation_xor;
  p.row_correction = 0;
  p.products_bounded = 0;
  return p;
}

/* For qnn_qs8_minmax_params.products_bounded: whether every accumulator of a convolution, times its
 * channel's scale, lies within +-2^23: |acc| <= |bias| + 255 * sum |w - zw|, since the activations
 * less their zero point lie in [-255, 255]. Channel n's weight i (of its taps x input channels) is
 * at weights[n * n_stride + i * i_stride]; zero_points (per channel) or zero_point. */
static inline int qnn_products_bounded(size_t channels, size_t elements, const int8_t* weights, size_t n_stride,
                                       size_t i_stride, int32_t zero_point, const int32_t* zero_points,
                                       const int32_t* bias, const float* scales) {
  for (size_t n = 0; n < channels; n++) {
    const int32_t zw = zero_points != NULL ? zero_points[n] : zero_point;
    int64_t sum = 0;
    for (size_t i = 0; i < elements; i++) {
      const int32_t v = (int32_t) weights[n * n_stride + i * i_stride] - zw;
      sum += v < 0 ? -v : v;
    }
    const double b = bias != NULL ? (double) bias[n] : 0.0;
    if (((b < 0 ? -b : b) + 255.0 * (double) sum) * (double) scales[n] >= 8388608.0) return 0;
  }
  return 1;
}

static inline int8_t qnn_qs8_requantize_fp32(int32_t acc, float scale, const struct qnn_qs8_minmax_params* p) {
  float f = (float) acc * scale;
  f = f < p->output_min_less_zero_point ? p->output_min_less_zero_point : f;
  f = f > p->output_max_less_zero_point ? p->output_max_less_zero_point : f;
  return (int8_t) ((int32_t) __builtin_rintf(f) + p->output_zero_point);
}

/* Requantize a float already scaled to the output domain (element-wise ops). */
static inline int8_t qnn_qs8_quantize_clamped(float f, int32_t zero_point, int32_t min, int32_t max) {
  const float lo = (float) (min - zero_point), hi = (float) (max - zero_point);
  f = f < lo ? lo : f;
  f = f > hi ? hi : f;
  return (int8_t) ((int32_t) __builtin_rintf(f) + zero_point);
}

/* gemmlowp's SaturatingRoundingDoublingHighMul then RoundingDivideByPOT (TFLite's
 * MultiplyByQuantizedMultiplierSmallerThanOneExp): round(x * multiplier / 2^31), halves away
 * from zero, then x / 2^shift, halves away from zero. */
static inline int32_t qnn_tflite_multiply(int32_t x, int32_t multiplier, int32_t shift) {
  const int64_t product = (int64_t) x * multiplier;  /* no saturation case: multiplier < 2^31 */
  const int64_t nudge = product >= 0 ? (INT64_C(1) << 30) : 1 - (INT64_C(1) << 30);
  const int32_t high = (int32_t) ((product + nudge) / (INT64_C(1) << 31));  /* C division: toward zero */
  const int32_t mask = (int32_t) ((UINT32_C(1) << shift) - 1);
  const int32_t remainder = high & mask, threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> shift) + (remainder > threshold ? 1 : 0);
}

#endif
