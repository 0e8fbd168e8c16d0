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
#include "requantization-simd128.h"

/* The quads of 16 channels of four rows: [x0[c], x1[c], x2[c], x3[c]] for c in 4j .. 4j + 3. */
#define QNN_TRANSPOSE4(r0, r1, r2, r3) \
  const v128_t vx0 = wasm_v128_xor(wasm_v128_load((r0) + c), vxor); \
  const v128_t vx1 = wasm_v128_xor(wasm_v128_load((r1) + c), vxor); \
  const v128_t vx2 = wasm_v128_xor(wasm_v128_load((r2) + c), vxor); \
  const v128_t vx3 = wasm_v128_xor(wasm_v128_load((r3) + c), vxor); \
  const v128_t v01lo = wasm_i8x16_shuffle(vx0, vx1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23); \
  const v128_t v01hi = wasm_i8x16_shuffle(vx0, vx1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31); \
  const v128_t v23lo = wasm_i8x16_shuffle(vx2, vx3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23); \
  const v128_t v23hi = wasm_i8x16_shuffle(vx2, vx3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31); \
  const v128_t vq0 = wasm_i16x8_shuffle(v01lo, v23lo, 0, 8, 1, 9, 2, 10, 3, 11); \
  const v128_t vq1 = wasm_i16x8_shuffle(v01lo, v23lo, 4, 12, 5, 13, 6, 14, 7, 15); \
  const v128_t vq2 = wasm_i16x8_shuffle(v01hi, v23hi, 0, 8, 1, 9, 2, 10, 3, 11); \
  const v128_t vq3 = wasm_i16x8_shuffle(v01hi, v23hi, 4, 12, 5, 13, 6, 14, 7, 15);

#define QNN_DOT4(acc, k) \
  acc##0 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load(k), vq0, acc##0); \
  acc##1 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load((k) + 16), vq1, acc##1); \
  acc##2 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load((k) + 32), vq2, acc##2); \
  acc##3 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load((k) + 48), vq3, acc##3);

static inline void store16(int8_t* o, v128_t v, size_t remaining) {
  if (remaining >= 16) {
    wasm_v128_store(o, v);
  } else {
    qnn_store_partial(o, v, remaining);
  }
}

void qnn_qs8_dwconv_minmax_fp32_ukernel_3x3s1p2_c16__relaxed(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  (void) ks;  /* 9 */
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
      v128_t vacc0 = wasm_v128_load(block), vacc1 = wasm_v128_load(block + 16);
      v128_t vacc2 = wasm_v128_load(block + 32), vacc3 = wasm_v128_load(block + 48);
      const float* scale = (const float*) (block + 64);
      const int8_t* k = (const int8_t*) (block + 128);
      /* In the last, partial tile this reads up to 15 bytes past the row (QNN_EXTRA_BYTES); the
       * packed weights of the missing channels are zero. */
      if (pair) {
        v128_t vaccb0 = vacc0, vaccb1 = vacc1, vaccb2 = vacc2, vaccb3 = vacc3;
        for (size_t r = 0; r < 3; r++, k += 128) {
          QNN_TRANSPOSE4(a0[3 * r], a0[3 * r + 1], a0[3 * r + 2], a1[3 * r + 2])
          QNN_DOT4(vacc, k)
          QNN_DOT4(vaccb, k + 64)
        }
        const v128_t vs0 = wasm_v128_load(scale), vs1 = wasm_v128_load(scale + 4);
        const v128_t vs2 = wasm_v128_load(scale + 8), vs3 = wasm_v128_load(scale + 12);
        store16(o0 + c, qnn_requantize16_fp32(vacc0, vacc1, vacc2, vacc3, vs0, vs1, vs2, vs3, &vq), channels - c);
        store16(o0 + channels + c, qnn_requantize16_fp32(vaccb0, vaccb1, vaccb2, vaccb3, vs0, vs1, vs2, vs3, &vq),
                channels - c);
      } else {
        for (size_t r = 0; r < 3; r++, k += 128) {
          QNN_TRANSPOSE4(a0[3 * r], a0[3 * r + 1], a0[3 * r + 2], a0[3 * r + 2])
          QNN_DOT4(vacc, k)
        }
        store16(o0 + c, qnn_requantize16_fp32(vacc0, vacc1, vacc2, vacc3, wasm_v128_load(scale), wasm_v128_load(scale + 4),
                                              wasm_v128_load(scale + 8), wasm_v128_load(scale + 12), &vq),
                channels - c);
      }
      block = (const char*) k;
    }
    p += pair ? 2 : 1;
  }
}
