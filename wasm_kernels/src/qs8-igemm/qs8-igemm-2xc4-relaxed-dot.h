/* The shared body of the relaxed-SIMD IGEMM kernels for engines whose relaxed dot is exact
 * (qs8-igemm-2x24c4-minmax-fp32-relaxed-dot.c, and qs8-igemm-2x16c4-minmax-fp32-relaxed-dot.c for
 * few output channels: config.c picks per convolution): 2 output pixels x 4 * NB output channels,
 * 4 input channels per step (c4), one i32x4.relaxed_dot_i8x16_i7x16_add_s per 16 multiply-adds.
 *
 * The activations are the instruction's signed i8 operand, as they are; the weights its "i7"
 * operand. Engines read that operand as signed (ARM SDOT: config.c packs the weights as they are)
 * or as unsigned (x86 VNNI, vpdpbusd: config.c packs w ^ 0x80 = w + 128 and the operator adds
 * -128 * (the sum of the row's activations) as the row correction: weights_xor in config.h).
 * The kernels that feed the activations as the "i7" operand (qs8-igemm-2x16c4-relaxed-xor.h,
 * and this machine's former one-dot kernel) XOR each broadcast with 0x80 and hold that constant in a
 * register; without both, 12 accumulators fit beside the two activation broadcasts and the
 * streamed weight vector in the 15 vector registers V8 gives wasm code, and more accumulators hide
 * the dot's latency. With the XOR, 2x24 spilled and was slower than 2x16. Figures:
 * docs/performance-log.md, "Figures moved out of code comments". */
#ifndef QNN_QS8_IGEMM_2XC4_RELAXED_DOT_H
#define QNN_QS8_IGEMM_2XC4_RELAXED_DOT_H

#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

#define MR 2
#define MAX_NB 6

/* The shared body of the 2x16 and 2x24 tiles (and of their one-row forms, for an odd last row: a
 * fully connected layer's single row no longer computed twice): ROWS (1 or 2) pixels, NB (4 or 6)
 * weight vectors of 4 channels. ROWS, NB, `corrected` and `bounded` (params->products_bounded: the
 * lower clamp after the narrows) are compile-time constants in every caller and the loops over
 * rows and vectors have constant bounds, so clang unrolls them and keeps every array in registers. */
static inline __attribute__((always_inline)) void igemm_2xc4_tile(
    size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride, const int32_t* row_correction,
    const struct qnn_requantize_simd128 vq, const size_t ROWS, const size_t NB, const int corrected,
    const int bounded) {
  const int8_t* const* a_rows[MR] = {a, ROWS > 1 ? a + ks : a};
  int8_t* c_rows[MR] = {c, ROWS > 1 ? c + c_stride : c};

  for (size_t n0 = 0; n0 < nc; n0 += 4 * NB) {
    const char* block = w;
    v128_t vacc[MR][MAX_NB];
    for (size_t j = 0; j < NB; j++) {
      const v128_t vbias = wasm_v128_load(block + 16 * j);
      for (size_t m = 0; m < ROWS; m++) {
        /* the row's correction with the bias, before the accumulators fill the registers */
        vacc[m][j] = corrected ? wasm_i32x4_add(vbias, wasm_v128_load32_splat(row_correction + m)) : vbias;
      }
    }
    const int8_t* wp = (const int8_t*) (block + 32 * NB);

    for (size_t t = 0; t < ks; t++) {
      const int8_t* x[MR];
      for (size_t m = 0; m < ROWS; m++) x[m] = a_rows[m][t];
      for (size_t k = 0; k < kc; k += 4) {
        v128_t va[MR];
        for (size_t m = 0; m < ROWS; m++) va[m] = wasm_v128_load32_splat(x[m] + k);
        for (size_t j = 0; j < NB; j++) {
          const v128_t vb = wasm_v128_load(wp + 16 * j);
          for (size_t m = 0; m < ROWS; m++) vacc[m][j] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(va[m], vb, vacc[m][j]);
        }
        wp += 16 * NB;
      }
    }

    const float* scale = (const float*) (block + 16 * NB);
    v128_t vscale[MAX_NB];
    for (size_t j = 0; j < NB; j++) vscale[j] = wasm_v128_load(scale + 4 * j);
    const size_t nb = qnn_min_size(4 * NB, nc - n0);
    for (size_t m = 0; m < ROWS; m++) {
      const v128_t vout0 = qnn_requantize16_fp32_maybe_bounded(vacc[m][0], vacc[m][1], vacc[m][2], vacc[m][3],
                                                               vscale[0], vscale[1], vscale[2], vscale[3], &vq, bounded);
      qnn_store_up_to16(c_rows[m] + n0, vout0, nb);
      if (NB == 6 && nb > 16) {  /* channels 16..23 in the low 8 bytes */
        const v128_t vout45 = wasm_i16x8_narrow_i32x4(qnn_requantize4_fp32_maybe_bounded(vacc[m][4], vscale[4], &vq, bounded),
                                                      qnn_requantize4_fp32_maybe_bounded(vacc[m][5], vscale[5], &vq, bounded));
        const v128_t vout1 = qnn_clamp_bytes(wasm_i8x16_narrow_i16x8(vout45, vout45), &vq, bounded);
        if (nb == 24) {
          wasm_v128_store64_lane(c_rows[m] + n0 + 16, vout1, 0);
        } else {
          qnn_store_partial(c_rows[m] + n0 + 16, vout1, nb - 16);
        }
      }
    }
    w = wp;
  }
}

/* Rows in pairs: every pair reads the same packed weights; the requantization constants are made once. */
static inline __attribute__((always_inline)) void igemm_2xc4(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params, const size_t NB, const int corrected, const int bounded) {
  kc = qnn_round_up(kc, 4);
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  size_t m0 = 0;
  for (; m0 + MR <= mr; m0 += MR) {
    igemm_2xc4_tile(nc, kc, ks, a + m0 * ks, w, c + m0 * c_stride, c_stride,
                    corrected ? params->row_correction + m0 : NULL, vq, MR, NB, corrected, bounded);
  }
  if (m0 < mr) {
    igemm_2xc4_tile(nc, kc, ks, a + m0 * ks, w, c + m0 * c_stride, c_stride,
                    corrected ? params->row_correction + m0 : NULL, vq, 1, NB, corrected, bounded);
  }
}

#endif
