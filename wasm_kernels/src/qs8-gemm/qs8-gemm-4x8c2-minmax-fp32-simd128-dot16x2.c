/* SIMD128 GEMM on packed activations: 4 output pixels x 8 output channels, 2 input channels per
 * step (c2). The operator first sign-extends the tile's rows to int16, interleaved by pairs
 * (qs8-packa), so the activations are sign-extended once per tile instead of once per block of 8
 * channels, and are never rotated: per step and row, one v128.load32_splat broadcasts the row's pair
 * (a single load instruction on x86 engines) and i32x4.dot_i16x8_s multiplies it with the pairs of 4
 * channels, whose weights i16x8.load8x8_s sign-extends as it loads them (int8 in memory, packing.h
 * with KR 2, SR 1). Per step: 6 loads, 8 dot products, 8 adds for 64 multiply-adds, where the
 * 4x8c2s4 IGEMM on int8 rows needs 3 more instructions per 64 for its sign extensions and rotations
 * (it was slower, most on the layers with few input channels; int16 weights and a 6x8 tile were no
 * faster. Figures: docs/performance-log.md, "Figures moved out of code comments").
 * 8 accumulators + 2 weight vectors + 1 activation vector fit V8's 15 vector registers. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

#define MR 4

/* Stores the 8 channels of two rows (bytes 0-7 and 8-15 of v), or the first nb of them. */
static inline void store_rows8(int8_t* r0, int8_t* r1, v128_t v, size_t nb) {
  if (nb == 8) {
    wasm_v128_store64_lane(r0, v, 0);
    wasm_v128_store64_lane(r1, v, 1);
    return;
  }
  if (nb & 4) {
    wasm_v128_store32_lane(r0, v, 0);
    wasm_v128_store32_lane(r1, v, 2);
    v = wasm_u64x2_shr(v, 32);
    r0 += 4, r1 += 4;
  }
  if (nb & 2) {
    wasm_v128_store16_lane(r0, v, 0);
    wasm_v128_store16_lane(r1, v, 4);
    v = wasm_u64x2_shr(v, 16);
    r0 += 2, r1 += 2;
  }
  if (nb & 1) {
    wasm_v128_store8_lane(r0, v, 0);
    wasm_v128_store8_lane(r1, v, 8);
  }
}

/* One step: the pair of k values at a (rows 0-3 at a, a + 2, a + 4, a + 6) times weights vb0, vb1. */
#define QNN_STEP(a, vb0, vb1)                                                \
  for (size_t m = 0; m < rows; m++) {                                        \
    const v128_t va = wasm_v128_load32_splat((a) + 2 * m);                   \
    vacc[m][0] = wasm_i32x4_add(vacc[m][0], wasm_i32x4_dot_i16x8(va, vb0));  \
    vacc[m][1] = wasm_i32x4_add(vacc[m][1], wasm_i32x4_dot_i16x8(va, vb1));  \
  }

/* `rows` (1 to MR) rows of a tile packed for MR rows: a partial last tile multiplies only its real
 * rows (MobileNetV2's 7x7 layers have 49 pixels, 12 tiles and one row; a fully connected layer has
 * one row: 4 rows' work for 1). `rows`, `corrected` and `bounded` (params->products_bounded: the
 * lower clamp after the narrows, requantization-simd128.h) are compile-time constants in every caller. */
static inline __attribute__((always_inline)) void gemm_4x8c2_tile(
    const size_t rows, size_t nc, size_t kc, const int16_t* a, const void* w, int8_t* c, size_t c_stride,
    const int32_t* row_correction, const struct qnn_requantize_simd128 vq, const int corrected,
    const int bounded) {
  for (size_t n0 = 0; n0 < nc; n0 += 8) {
    const v128_t vbias0 = wasm_v128_load(w), vbias1 = wasm_v128_load((const int32_t*) w + 4);
    v128_t vacc[MR][2];
    for (size_t m = 0; m < rows; m++) {
      vacc[m][0] = vbias0;
      vacc[m][1] = vbias1;
    }
    const float* scale = (const float*) w + 8;
    const int8_t* wp = (const int8_t*) w + 64;
    const int16_t* ap = a;
    /* Two steps per iteration: the pointers move once per 4 k, the loads use constant offsets. */
    size_t k = kc;
    for (; k >= 4; k -= 4) {
      QNN_STEP(ap, wasm_i16x8_load8x8(wp), wasm_i16x8_load8x8(wp + 8))
      QNN_STEP(ap + 2 * MR, wasm_i16x8_load8x8(wp + 16), wasm_i16x8_load8x8(wp + 24))
      ap += 4 * MR;
      wp += 32;
    }
    if (k != 0) {
      QNN_STEP(ap, wasm_i16x8_load8x8(wp), wasm_i16x8_load8x8(wp + 8))
      wp += 16;
    }
    if (corrected) {
      for (size_t m = 0; m < rows; m++) {
        const v128_t vc = wasm_v128_load32_splat(row_correction + m);
        vacc[m][0] = wasm_i32x4_add(vacc[m][0], vc);
        vacc[m][1] = wasm_i32x4_add(vacc[m][1], vc);
      }
    }
    const v128_t vscale0 = wasm_v128_load(scale), vscale1 = wasm_v128_load(scale + 4);
    const size_t nb = qnn_min_size(8, nc - n0);
    for (size_t m = 0; m < rows; m += 2) {
      const size_t m1 = m + 1 < rows ? m + 1 : m;  /* an odd last row twice: the compiler shares the work */
      const v128_t vout = qnn_requantize16_fp32_maybe_bounded(vacc[m][0], vacc[m][1], vacc[m1][0], vacc[m1][1],
                                                              vscale0, vscale1, vscale0, vscale1, &vq, bounded);
      store_rows8(c + m * c_stride + n0, c + m1 * c_stride + n0, vout, nb);  /* the odd row: the same bytes twice */
    }
    w = wp;
  }
}

/* Tiles of MR rows, packed one after another (microkernels.h); the requantization constants made once. */
static inline __attribute__((always_inline)) void gemm_4x8c2(
    size_t mr, size_t nc, size_t kc, const int16_t* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params, const int corrected, const int bounded) {
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  size_t m0 = 0;
  for (; m0 + MR <= mr; m0 += MR) {
    gemm_4x8c2_tile(MR, nc, kc, a + m0 * kc, w, c + m0 * c_stride, c_stride,
                    corrected ? params->row_correction + m0 : NULL, vq, corrected, bounded);
  }
  const int16_t* a_last = a + m0 * kc;
  int8_t* c_last = c + m0 * c_stride;
  const int32_t* correction_last = corrected ? params->row_correction + m0 : NULL;
  switch (mr - m0) {
    case 1: gemm_4x8c2_tile(1, nc, kc, a_last, w, c_last, c_stride, correction_last, vq, corrected, bounded); break;
    case 2: gemm_4x8c2_tile(2, nc, kc, a_last, w, c_last, c_stride, correction_last, vq, corrected, bounded); break;
    case 3: gemm_4x8c2_tile(3, nc, kc, a_last, w, c_last, c_stride, correction_last, vq, corrected, bounded); break;
  }
}

void qnn_qs8_gemm_minmax_fp32_ukernel_4x8c2__simd128_dot16x2(
    size_t mr, size_t nc, size_t kc, const int16_t* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  if (params->row_correction != NULL) {
    gemm_4x8c2(mr, nc, kc, a, w, c, c_stride, params, 1, 0);
  } else if (params->products_bounded) {
    gemm_4x8c2(mr, nc, kc, a, w, c, c_stride, params, 0, 1);
  } else {
    gemm_4x8c2(mr, nc, kc, a, w, c, c_stride, params, 0, 0);
  }
}
