/* SIMD128 depthwise convolution: 16 channels per tile, taps two at a time (dot16x2), two output
 * pixels at a time.
 * Each tap's activations are sign-extended as they load (i16x8.load8x8_s: one instruction on x86
 * engines) and the two taps' i16 lanes interleaved (one unpack per 4 channels), so i32x4.dot_i16x8_s
 * multiplies each channel's two activations by its two weights (packed interleaved and already in
 * i16, packing.h) and adds the products in i32: 4 dot products per 16 channels and 2 taps, where
 * multiplying in i16 and widening takes 6 instructions per tap. (Interleaving the taps' bytes first
 * and sign-extending after takes two instructions more per 16 channels: the high half's extension
 * is two on x86; it was slower, and so was unrolling the 3x3 tap loop.)
 * Exact for every int8 weight (XNNPACK's mul16_add16 sums products in i16, which excludes -128).
 * Two pixels share each weight load and loop step: the kernel is bound by instruction count, not by
 * its multiplies (V8 keeps one pixel's 4 accumulators in registers and spills 3 of two pixels' 8,
 * which still win). Figures: docs/performance-log.md, "Figures moved out of code comments".
 * An odd last tap goes alone: its activations in both lanes of each pair (loaded once), times its
 * pair's packed weights (w, 0); one tap pointer and two loads fewer than the pair of the last tap and
 * a zero-weight copy the kernel took before. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

/* acc[0..3] += taps (x0, x1) of 16 channels times their weight pairs vk[0..3]. */
static inline __attribute__((always_inline)) void dot_tap_pair(const int8_t* x0, const int8_t* x1, const v128_t vk[4], v128_t acc[4]) {
  const v128_t a0 = wasm_i16x8_load8x8(x0), b0 = wasm_i16x8_load8x8(x1);
  const v128_t a1 = wasm_i16x8_load8x8(x0 + 8), b1 = wasm_i16x8_load8x8(x1 + 8);
  acc[0] = wasm_i32x4_add(acc[0], wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(a0, b0, 0, 8, 1, 9, 2, 10, 3, 11), vk[0]));
  acc[1] = wasm_i32x4_add(acc[1], wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(a0, b0, 4, 12, 5, 13, 6, 14, 7, 15), vk[1]));
  acc[2] = wasm_i32x4_add(acc[2], wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(a1, b1, 0, 8, 1, 9, 2, 10, 3, 11), vk[2]));
  acc[3] = wasm_i32x4_add(acc[3], wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(a1, b1, 4, 12, 5, 13, 6, 14, 7, 15), vk[3]));
}

/* `pixels` (1 or 2) output pixels, whose ks tap pointers follow each other in `a`, for channels
 * [c, c + 16) of the block at w; returns the next block. In the last, partial tile the loads read up
 * to 15 bytes past the row (QNN_EXTRA_BYTES); the packed weights of the missing channels are zero. */
static inline __attribute__((always_inline)) const char* dwconv_tile(
    const int pixels, size_t ks, const int8_t* const* a, size_t c, const char* block, int8_t* output,
    size_t channels, const struct qnn_requantize_simd128* vq) {
  v128_t acc[2][4];
  for (int p = 0; p < pixels; p++) {
    for (int i = 0; i < 4; i++) acc[p][i] = wasm_v128_load(block + 16 * i);
  }
  const float* scale = (const float*) (block + 64);
  const int16_t* k = (const int16_t*) (block + 128);
  const int8_t* const* taps[2] = {a, a + ks};
  for (size_t t = 2; t <= ks; t += 2, k += 32) {
    const v128_t vk[4] = {wasm_v128_load(k), wasm_v128_load(k + 8), wasm_v128_load(k + 16), wasm_v128_load(k + 24)};
    for (int p = 0; p < pixels; p++) {
      dot_tap_pair(taps[p][0] + c, taps[p][1] + c, vk, acc[p]);
      taps[p] += 2;
    }
  }
  if (ks & 1) {  /* the last tap alone, against its pair's weights (w, 0): each activation twice */
    const v128_t vk[4] = {wasm_v128_load(k), wasm_v128_load(k + 8), wasm_v128_load(k + 16), wasm_v128_load(k + 24)};
    for (int p = 0; p < pixels; p++) dot_tap_pair(taps[p][0] + c, taps[p][0] + c, vk, acc[p]);
    k += 32;
  }
  const v128_t vs0 = wasm_v128_load(scale), vs1 = wasm_v128_load(scale + 4), vs2 = wasm_v128_load(scale + 8),
               vs3 = wasm_v128_load(scale + 12);
  for (int p = 0; p < pixels; p++) {
    qnn_store_up_to16(output + p * channels + c,
                      qnn_requantize16_fp32(acc[p][0], acc[p][1], acc[p][2], acc[p][3], vs0, vs1, vs2, vs3, vq), channels - c);
  }
  return (const char*) k;
}

void qnn_qs8_dwconv_minmax_fp32_ukernel_c16__simd128_dot16x2(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  for (; pixels >= 2; pixels -= 2, a += 2 * ks, output += 2 * channels) {
    const char* block = w;
    for (size_t c = 0; c < channels; c += 16) block = dwconv_tile(2, ks, a, c, block, output, channels, &vq);
  }
  if (pixels != 0) {
    const char* block = w;
    for (size_t c = 0; c < channels; c += 16) block = dwconv_tile(1, ks, a, c, block, output, channels, &vq);
  }
}
