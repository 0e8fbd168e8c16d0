/* SIMD128 depthwise convolution: 16 channels per tile, any number of taps.
 * Per tap, activations and weights are sign-extended to i16 (i16x8.load8x8) and multiplied with
 * i16x8.mul (an int8 x int8 product always fits in i16), then widened and added to four i32x4
 * accumulators. Taps are not summed in i16 first (XNNPACK's mul16_add16), so weights of -128
 * stay exact. Requantization repeats qnn_qs8_requantize_fp32 lane by lane. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

void qnn_qs8_dwconv_minmax_fp32_ukernel_c16__simd128(
    size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  const v128_t vlo = wasm_f32x4_splat(params->output_min_less_zero_point);
  const v128_t vhi = wasm_f32x4_splat(params->output_max_less_zero_point);
  const v128_t vzp = wasm_i32x4_splat(params->output_zero_point);
  const char* block = w;
  for (size_t c = 0; c < channels; c += 16) {
    v128_t vacc0 = wasm_v128_load(block);
    v128_t vacc1 = wasm_v128_load(block + 16);
    v128_t vacc2 = wasm_v128_load(block + 32);
    v128_t vacc3 = wasm_v128_load(block + 48);
    const float* scale = (const float*) (block + 64);
    const int8_t* k = (const int8_t*) (block + 128);
    for (size_t t = 0; t < ks; t++) {
      /* In the last, partial tile this reads up to 15 bytes past the row (QNN_EXTRA_BYTES); the
       * packed weights of the missing channels are zero. */
      const int8_t* x = a[t] + c;
      const v128_t vprod_lo = wasm_i16x8_mul(wasm_i16x8_load8x8(x), wasm_i16x8_load8x8(k));
      const v128_t vprod_hi = wasm_i16x8_mul(wasm_i16x8_load8x8(x + 8), wasm_i16x8_load8x8(k + 8));
      vacc0 = wasm_i32x4_add(vacc0, wasm_i32x4_extend_low_i16x8(vprod_lo));
      vacc1 = wasm_i32x4_add(vacc1, wasm_i32x4_extend_high_i16x8(vprod_lo));
      vacc2 = wasm_i32x4_add(vacc2, wasm_i32x4_extend_low_i16x8(vprod_hi));
      vacc3 = wasm_i32x4_add(vacc3, wasm_i32x4_extend_high_i16x8(vprod_hi));
      k += 16;
    }
    block = (const char*) k;

    const v128_t vout0 = qnn_requantize4_fp32(vacc0, wasm_v128_load(scale), vlo, vhi, vzp);
    const v128_t vout1 = qnn_requantize4_fp32(vacc1, wasm_v128_load(scale + 4), vlo, vhi, vzp);
    const v128_t vout2 = qnn_requantize4_fp32(vacc2, wasm_v128_load(scale + 8), vlo, vhi, vzp);
    const v128_t vout3 = qnn_requantize4_fp32(vacc3, wasm_v128_load(scale + 12), vlo, vhi, vzp);
    /* Already within [output_min, output_max]: the saturating narrows are exact. */
    v128_t vout = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(vout0, vout1), wasm_i16x8_narrow_i32x4(vout2, vout3));

    int8_t* o = output + c;
    const size_t remaining = channels - c;
    if (remaining >= 16) {
      wasm_v128_store(o, vout);
    } else {
      qnn_store_partial(o, vout, remaining);
    }
  }
}
