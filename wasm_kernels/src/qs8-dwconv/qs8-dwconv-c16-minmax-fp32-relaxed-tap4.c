/* Relaxed-SIMD depthwise convolution: 16 channels per tile, taps four at a time.
 * The activations of four taps (16 channels each) are transposed into channel-major quads
 * ([x0[c], x1[c], x2[c], x3[c]] for c = 4j .. 4j + 3 in vector j: qs8-dwconv-relaxed-quads.h),
 * so i32x4.relaxed_dot_i8x16_i7x16_add_s(weights, activations, acc) adds each channel's four
 * products to its lane; the weights are packed in the same quads (packing.h, QNN_DWCONV_TAP_QUADS).
 * 24 instructions per 64 multiply-adds, where the SIMD128 dot16x2 kernel takes 20 per 32.
 *
 * Only for engines whose relaxed dot is exact (config.c's probe): the activations, the dot's "i7"
 * operand, are XORed with params->activation_xor (0x80 where the engine reads them as unsigned,
 * with (izp + 128) * sum(w) folded into the bias; 0 where it reads them as signed). ks is a multiple
 * of 4: the operator repeats a pixel's last tap, whose copies have zero weights. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "qs8-dwconv/qs8-dwconv-relaxed-quads.h"
#include "requantization-simd128.h"

/* `bounded`: params->products_bounded, a compile-time constant in each caller (requantization-simd128.h) */
static inline __attribute__((always_inline)) void dwconv_tap4(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params, const int bounded) {
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  const v128_t vxor = wasm_i8x16_splat((int8_t) params->activation_xor);
  for (size_t p = 0; p < pixels; p++, a += ks, output += channels) {
    const char* block = w;
    for (size_t c = 0; c < channels; c += 16) {
      v128_t vacc[4] = {wasm_v128_load(block), wasm_v128_load(block + 16), wasm_v128_load(block + 32),
                        wasm_v128_load(block + 48)};
      const float* scale = (const float*) (block + 64);
      const int8_t* k = (const int8_t*) (block + 128);
      for (size_t t = 0; t < ks; t += 4, k += 64) {
        /* In the last, partial tile this reads up to 15 bytes past the row (QNN_EXTRA_BYTES); the
         * packed weights of the missing channels and taps are zero. */
        v128_t vquads[4];
        qnn_quads16(a[t] + c, a[t + 1] + c, a[t + 2] + c, a[t + 3] + c, vxor, vquads);
        qnn_dot_quads16(vacc, k, vquads);
      }
      block = (const char*) k;

      const v128_t vout = qnn_requantize16_fp32_maybe_bounded(vacc[0], vacc[1], vacc[2], vacc[3], wasm_v128_load(scale),
                                                              wasm_v128_load(scale + 4), wasm_v128_load(scale + 8),
                                                              wasm_v128_load(scale + 12), &vq, bounded);
      qnn_store_up_to16(output + c, vout, channels - c);
    }
  }
}

void qnn_qs8_dwconv_minmax_fp32_ukernel_c16__relaxed_tap4(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  if (params->products_bounded) {
    dwconv_tap4(pixels, channels, ks, a, w, output, params, 1);
  } else {
    dwconv_tap4(pixels, channels, ks, a, w, output, params, 0);
  }
}
