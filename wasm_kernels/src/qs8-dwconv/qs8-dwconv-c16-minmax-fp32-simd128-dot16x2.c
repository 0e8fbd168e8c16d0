/* SIMD128 depthwise convolution: 16 channels per tile, taps two at a time (dot16x2).
 * The activations of two taps are interleaved byte by byte (one i8x16 shuffle per 8 channels) and
 * sign-extended, so i32x4.dot_i16x8_s multiplies each channel's two activations by its two weights
 * (packed interleaved and already in i16, packing.h) and adds the products in i32: 4 dot products
 * per 16 channels and 2 taps, where multiplying in i16 and widening takes 6 instructions per tap.
 * Exact for every int8 weight (XNNPACK's mul16_add16 sums products in i16, which excludes -128).
 * An odd last tap is paired with zero weights. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

void qnn_qs8_dwconv_minmax_fp32_ukernel_c16__simd128_dot16x2(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  for (size_t p = 0; p < pixels; p++, a += ks, output += channels) {
    const char* block = w;
    for (size_t c = 0; c < channels; c += 16) {
      v128_t vacc0 = wasm_v128_load(block);
      v128_t vacc1 = wasm_v128_load(block + 16);
      v128_t vacc2 = wasm_v128_load(block + 32);
      v128_t vacc3 = wasm_v128_load(block + 48);
      const float* scale = (const float*) (block + 64);
      const int16_t* k = (const int16_t*) (block + 128);
      for (size_t t = 0; t < ks; t += 2) {
        /* In the last, partial tile this reads up to 15 bytes past the row (QNN_EXTRA_BYTES); the
         * packed weights of the missing channels, and of the tap after an odd last one, are zero. */
        const v128_t vxa = wasm_v128_load(a[t] + c);
        const v128_t vxb = t + 1 < ks ? wasm_v128_load(a[t + 1] + c) : vxa;
        const v128_t vlo8 = wasm_i8x16_shuffle(vxa, vxb, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const v128_t vhi8 = wasm_i8x16_shuffle(vxa, vxb, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        vacc0 = wasm_i32x4_add(vacc0, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(vlo8), wasm_v128_load(k)));
        vacc1 = wasm_i32x4_add(vacc1, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(vlo8), wasm_v128_load(k + 8)));
        vacc2 = wasm_i32x4_add(vacc2, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(vhi8), wasm_v128_load(k + 16)));
        vacc3 = wasm_i32x4_add(vacc3, wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(vhi8), wasm_v128_load(k + 24)));
        k += 32;
      }
      block = (const char*) k;

      const v128_t vout = qnn_requantize16_fp32(vacc0, vacc1, vacc2, vacc3, wasm_v128_load(scale), wasm_v128_load(scale + 4),
                                                wasm_v128_load(scale + 8), wasm_v128_load(scale + 12), &vq);

      qnn_store_up_to16(output + c, vout, channels - c);
    }
  }
}
