/* The shared body of the relaxed-SIMD IGEMM kernels for engines whose relaxed dot is not known to be
 * exact (qs8-igemm-2x16c4-minmax-fp32-relaxed-halves.c and -split.c): 2 output pixels x 16 output
 * channels, 4 input channels per step (c4). Per step and row, 4 activation bytes are
 * splatted (v128.load32_splat) and XORed with 0x80 (u = x + 128, in [0, 255]); each of the 4 weight
 * vectors (4 channels x 4 k) is loaded once and multiplied against both rows with
 * i32x4.relaxed_dot_i8x16_i7x16_add_s(weights, activations, acc); the packing folds
 * (izp + 128) * sum(w) into the bias. Lanes are channels, so no horizontal reduction is needed.
 * (Engines whose dot is exact run the "relaxed-dot" kernels: one dot per step, no XOR.)
 *
 * The activations are the instruction's "i7" operand: when its top bit is set, the spec lets the
 * engine read it as signed or unsigned, and lets the i16 sums of product pairs saturate (x86
 * engines without VNNI lower the dot to pmaddubsw). config.c probes the engine once and picks:
 *   __relaxed_halves  the operand is read as unsigned, but pair sums may saturate (pmaddubsw):
 *                     u is split into b = (u + 1) >> 1 and a = u - b, both in [0, 128], and
 *                     dot(w, u) = dot(w, a) + dot(w, b). A pair sum then lies in
 *                     [-2 * 128 * 128, 2 * 127 * 128] = [-32768, 32512]: never saturates.
 *   __relaxed_split   any other behaviour, exact on every engine: hi = u >> 1 and lo = u & 1 are
 *                     both in [0, 127], where every engine agrees, and
 *                     dot(w, u) = 2 * dot(w, hi) + dot(w, lo). Needs a second set of accumulators.
 * Both cost two dots per step. Why 2 rows: V8 gives wasm code 15 of x86's 16 vector registers; the
 * former 4x16 tile needed 22 and spilled accumulators in its inner loop. Requantization repeats
 * qnn_qs8_requantize_fp32 lane by lane. */
#ifndef QNN_QS8_IGEMM_2X16C4_RELAXED_XOR_H
#define QNN_QS8_IGEMM_2X16C4_RELAXED_XOR_H

#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

#define MR 2
#define NB 4  /* weight vectors of 4 channels: NR = 16 */

enum { MODE_HALVES, MODE_SPLIT };

/* The shared body; `mode` and `corrected` (params->row_correction != NULL: weights with a zero
 * point) are compile-time constants in every caller, and the loops over rows and weight vectors
 * have constant bounds, so clang unrolls them and keeps every array in registers. */
static inline __attribute__((always_inline)) void igemm_2x16c4_tile(
    size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride, const int32_t* row_correction,
    const struct qnn_requantize_simd128 vq, const size_t ROWS, const int mode, const int corrected) {
  /* ROWS (1 or 2, a compile-time constant) pixels: an odd last row is not computed twice */
  const int8_t* const* a_rows[MR] = {a, ROWS > 1 ? a + ks : a};
  int8_t* c_rows[MR] = {c, ROWS > 1 ? c + c_stride : c};

  const v128_t vxor = wasm_i8x16_const_splat((int8_t) 0x80);
  const v128_t vone = wasm_i8x16_const_splat(1);
  const v128_t vzero = wasm_i8x16_const_splat(0);

  for (size_t n0 = 0; n0 < nc; n0 += 4 * NB) {
    const char* block = w;
    /* vacc: the bias plus the whole dot (split: plus dot(w, lo)); vacc_hi: dot(w, hi), split only. */
    v128_t vacc[MR][NB], vacc_hi[MR][NB];
    for (size_t j = 0; j < NB; j++) {
      const v128_t vbias = wasm_v128_load(block + 16 * j);
      for (size_t m = 0; m < ROWS; m++) {
        vacc[m][j] = vbias;
        vacc_hi[m][j] = wasm_i32x4_const_splat(0);
      }
    }
    const int8_t* wp = (const int8_t*) (block + 32 * NB);

    for (size_t t = 0; t < ks; t++) {
      const int8_t* x[MR];
      for (size_t m = 0; m < ROWS; m++) x[m] = a_rows[m][t];
      for (size_t k = 0; k < kc; k += 4) {
        v128_t va[MR], va2[MR];  /* the two operands of each row: the halves, or hi and lo */
        for (size_t m = 0; m < ROWS; m++) {
          const v128_t v = wasm_v128_xor(wasm_v128_load32_splat(x[m] + k), vxor);
          if (mode == MODE_HALVES) {
            va2[m] = wasm_u8x16_avgr(v, vzero);
            va[m] = wasm_i8x16_sub(v, va2[m]);
          } else {
            va2[m] = wasm_u8x16_shr(v, 1);
            va[m] = wasm_v128_and(v, vone);
          }
        }
        for (size_t j = 0; j < NB; j++) {
          const v128_t vb = wasm_v128_load(wp + 16 * j);
          for (size_t m = 0; m < ROWS; m++) {
            vacc[m][j] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(vb, va[m], vacc[m][j]);
            if (mode == MODE_HALVES) vacc[m][j] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(vb, va2[m], vacc[m][j]);
            if (mode == MODE_SPLIT) vacc_hi[m][j] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(vb, va2[m], vacc_hi[m][j]);
          }
        }
        wp += 16 * NB;
      }
    }

    const float* scale = (const float*) (block + 16 * NB);
    const v128_t vscale0 = wasm_v128_load(scale), vscale1 = wasm_v128_load(scale + 4);
    const v128_t vscale2 = wasm_v128_load(scale + 8), vscale3 = wasm_v128_load(scale + 12);
    const size_t nb = qnn_min_size(4 * NB, nc - n0);
    for (size_t m = 0; m < ROWS; m++) {
      for (size_t j = 0; j < NB; j++) {
        if (mode == MODE_SPLIT) vacc[m][j] = wasm_i32x4_add(vacc[m][j], wasm_i32x4_shl(vacc_hi[m][j], 1));
        if (corrected) vacc[m][j] = wasm_i32x4_add(vacc[m][j], wasm_v128_load32_splat(row_correction + m));
      }
      const v128_t vout = qnn_requantize16_fp32(vacc[m][0], vacc[m][1], vacc[m][2], vacc[m][3],
                                                vscale0, vscale1, vscale2, vscale3, &vq);
      qnn_store_up_to16(c_rows[m] + n0, vout, nb);
    }
    w = wp;
  }
}

/* Rows in pairs (microkernels.h: any mr); the requantization constants are made once. */
static inline __attribute__((always_inline)) void igemm_2x16c4(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params, const int mode, const int corrected) {
  kc = qnn_round_up(kc, 4);
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  size_t m0 = 0;
  for (; m0 + MR <= mr; m0 += MR) {
    igemm_2x16c4_tile(nc, kc, ks, a + m0 * ks, w, c + m0 * c_stride, c_stride,
                      corrected ? params->row_correction + m0 : NULL, vq, MR, mode, corrected);
  }
  if (m0 < mr) {
    igemm_2x16c4_tile(nc, kc, ks, a + m0 * ks, w, c + m0 * c_stride, c_stride,
                      corrected ? params->row_correction + m0 : NULL, vq, 1, mode, corrected);
  }
}

#endif
