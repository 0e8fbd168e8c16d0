/* Relaxed-SIMD depthwise convolution: 16 channels per tile, taps four at a time.
 * The activations of four taps (16 channels each) are transposed into channel-major quads
 * ([x0[c], x1[c], x2[c], x3[c]] for c = 4j .. 4j + 3 in vector j: 4 byte and 4 16-bit interleaves),
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
#include "requantization-simd128.h"

void qnn_qs8_dwconv_minmax_fp32_ukernel_c16__relaxed_tap4(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  const v128_t vxor = wasm_i8x16_splat((int8_t) params->activation_xor);
  for (size_t p = 0; p < pixels; p++, a += ks, output += channels) {
    const char* block = w;
    for (size_t c = 0; c < channels; c += 16) {
      v128_t vacc0 = wasm_v128_load(block);
      v128_t vacc1 = wasm_v128_load(block + 16);
      v128_t vacc2 = wasm_v128_load(block + 32);
      v128_t vacc3 = wasm_v128_load(block + 48);
      const float* scale = (const float*) (block + 64);
      const int8_t* k = (const int8_t*) (block + 128);
      for (size_t t = 0; t < ks; t += 4) {
        /* In the last, partial tile this reads up to 15 bytes past the row (QNN_EXTRA_BYTES); the
         * packed weights of the missing channels and taps are zero. */
        const v128_t vx0 = wasm_v128_xor(wasm_v128_load(a[t] + c), vxor);
        const v128_t vx1 = wasm_v128_xor(wasm_v128_load(a[t + 1] + c), vxor);
        const v128_t vx2 = wasm_v128_xor(wasm_v128_load(a[t + 2] + c), vxor);
        const v128_t vx3 = wasm_v128_xor(wasm_v128_load(a[t + 3] + c), vxor);
        /* byte pairs [x0[c], x1[c]] and [x2[c], x3[c]], channels 0-7 (lo) and 8-15 (hi) */
        const v128_t v01lo = wasm_i8x16_shuffle(vx0, vx1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const v128_t v01hi = wasm_i8x16_shuffle(vx0, vx1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        const v128_t v23lo = wasm_i8x16_shuffle(vx2, vx3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const v128_t v23hi = wasm_i8x16_shuffle(vx2, vx3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        /* quads [x0[c], x1[c], x2[c], x3[c]]: channels 0-3, 4-7, 8-11, 12-15 */
        const v128_t vq0 = wasm_i16x8_shuffle(v01lo, v23lo, 0, 8, 1, 9, 2, 10, 3, 11);
        const v128_t vq1 = wasm_i16x8_shuffle(v01lo, v23lo, 4, 12, 5, 13, 6, 14, 7, 15);
        const v128_t vq2 = wasm_i16x8_shuffle(v01hi, v23hi, 0, 8, 1, 9, 2, 10, 3, 11);
        const v128_t vq3 = wasm_i16x8_shuffle(v01hi, v23hi, 4, 12, 5, 13, 6, 14, 7, 15);
        vacc0 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load(k), vq0, vacc0);
        vacc1 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load(k + 16), vq1, vacc1);
        vacc2 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load(k + 32), vq2, vacc2);
        vacc3 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load(k + 48), vq3, vacc3);
        k += 64;
      }
      block = (const char*) k;

      const v128_t vout = qnn_requantize16_fp32(vacc0, vacc1, vacc2, vacc3, wasm_v128_load(scale), wasm_v128_load(scale + 4),
                                                wasm_v128_load(scale + 8), wasm_v128_load(scale + 12), &vq);
      int8_t* o = output + c;
      const size_t remaining = channels - c;
      if (remaining >= 16) {
        wasm_v128_store(o, vout);
      } else {
        qnn_store_partial(o, vout, remaining);
      }
    }
  }
}
