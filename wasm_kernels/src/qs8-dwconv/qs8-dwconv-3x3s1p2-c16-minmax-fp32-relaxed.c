/* Relaxed-SIMD 3x3 stride-1 depthwise convolution, 16 channels per tile, two output pixels of a
 * row per pass where it can ("p2").
 * Two horizontally adjacent output pixels read, in each kernel row, four input columns: the first
 * pixel columns 0-2, the second columns 1-3. Those four columns of 16 channels are transposed once
 * into channel-major quads (as the tap4 kernel does) and feed two relaxed dots per 4 channels: the
 * first pixel's weights [w0, w1, w2, 0], the second's [0, w0, w1, w2] (packing.h,
 * QNN_DWCONV_3X3_PAIRS). So a pixel costs half a transpose per kernel row, where the tap4 kernel
 * transposes 12 taps per pixel.
 * Whether pixels p and p + 1 form such a pair is read from the indirection buffer: they do when p + 1's
 * taps 0 and 1 of every row are p's taps 1 and 2 (the same pointers, so the same bytes; padding taps
 * point at the zero buffer), i.e. stride 1 within one output row. Other pixels (a row's last, odd
 * ones) go alone with the first set of weights.
 * Only for engines whose relaxed dot is exact (see the tap4 kernel for activation_xor). */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "qs8-dwconv/qs8-dwconv-relaxed-quads.h"
#include "requantization-simd128.h"

/* `bounded`: params->products_bounded, a compile-time constant in each caller (requantization-simd128.h) */
static inline __attribute__((always_inline)) void dwconv_3x3s1p2(
    size_t pixels, size_t channels, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params, const int bounded) {
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  const v128_t vxor = wasm_i8x16_splat((int8_t) params->activation_xor);
  for (size_t p = 0; p < pixels;) {
    const int8_t* const* a0 = a + p * 9;
    const int8_t* const* a1 = a0 + 9;
    const int pair = p + 1 < pixels && a1[0] == a0[1] && a1[1] == a0[2] && a1[3] == a0[4] && a1[4] == a0[5] &&
                     a1[6] == a0[7] && a1[7] == a0[8];
    int8_t* o0 = output + p * channels;
    const char* block = w;
    for (size_t c = 0; c < channels; c += 16) {
      const v128_t vbias[4] = {wasm_v128_load(block), wasm_v128_load(block + 16), wasm_v128_load(block + 32),
                               wasm_v128_load(block + 48)};
      const float* scale = (const float*) (block + 64);
      const v128_t vs0 = wasm_v128_load(scale), vs1 = wasm_v128_load(scale + 4);
      const v128_t vs2 = wasm_v128_load(scale + 8), vs3 = wasm_v128_load(scale + 12);
      const int8_t* k = (const int8_t*) (block + 128);
      v128_t vacc[4] = {vbias[0], vbias[1], vbias[2], vbias[3]};
      v128_t vaccb[4] = {vbias[0], vbias[1], vbias[2], vbias[3]};  /* the second pixel's */
      /* In the last, partial tile this reads up to 15 bytes past the rows (QNN_EXTRA_BYTES); the
       * packed weights of the missing channels are zero. */
      if (pair) {
        for (size_t r = 0; r < 3; r++, k += 128) {
          v128_t vquads[4];
          qnn_quads16(a0[3 * r] + c, a0[3 * r + 1] + c, a0[3 * r + 2] + c, a1[3 * r + 2] + c, vxor, vquads);
          qnn_dot_quads16(vacc, k, vquads);
          qnn_dot_quads16(vaccb, k + 64, vquads);
        }
        qnn_store_up_to16(o0 + channels + c,
                          qnn_requantize16_fp32_maybe_bounded(vaccb[0], vaccb[1], vaccb[2], vaccb[3], vs0, vs1, vs2, vs3, &vq, bounded),
                          channels - c);
      } else {
        for (size_t r = 0; r < 3; r++, k += 128) {
          v128_t vquads[4];
          qnn_quads16(a0[3 * r] + c, a0[3 * r + 1] + c, a0[3 * r + 2] + c, a0[3 * r + 2] + c, vxor, vquads);
          qnn_dot_quads16(vacc, k, vquads);
        }
      }
      qnn_store_up_to16(o0 + c, qnn_requantize16_fp32_maybe_bounded(vacc[0], vacc[1], vacc[2], vacc[3], vs0, vs1, vs2, vs3, &vq, bounded),
                        channels - c);
      block = (const char*) k;
    }
    p += pair ? 2 : 1;
  }
}

void qnn_qs8_dwconv_minmax_fp32_ukernel_3x3s1p2_c16__relaxed(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  (void) ks;  /* 9 */
  if (params->products_bounded) {
    dwconv_3x3s1p2(pixels, channels, a, w, output, params, 1);
  } else {
    dwconv_3x3s1p2(pixels, channels, a, w, output, params, 0);
  }
}
