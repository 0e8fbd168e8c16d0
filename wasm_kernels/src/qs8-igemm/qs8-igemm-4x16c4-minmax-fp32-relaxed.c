/* Relaxed-SIMD IGEMM: 4 output pixels x 16 output channels, 4 input channels per step (c4).
 * Per step and row, 4 activation bytes are splatted (v128.load32_splat) and multiplied against
 * 4 weight vectors of 4 channels x 4 k with i32x4.relaxed_dot_i8x16_i7x16_add_s(weights,
 * activations, acc). Lanes are channels, so no horizontal reduction is needed.
 *
 * The activations are the instruction's "i7" operand: when its top bit is set, the spec lets the
 * engine read it as signed or unsigned, and lets the i16 sums of product pairs saturate (x86
 * engines without VNNI lower the dot to pmaddubsw). config.c probes the engine once and picks:
 *   __relaxed         one dot per step on activations XOR params->activation_xor:
 *                     0x80 where the operand is read as unsigned without saturation (x86 VNNI,
 *                     "usdot"; the packing folds (izp + 128) * sum(w) into the bias),
 *                     0 where it is read as signed without saturation (ARM SDOT, "sdot").
 *   __relaxed_halves  the operand is read as unsigned, but pair sums may saturate (pmaddubsw):
 *                     u = x ^ 0x80 in [0, 255] is split into b = (u + 1) >> 1 and a = u - b,
 *                     both in [0, 128], and dot(w, u) = dot(w, a) + dot(w, b). A pair sum then
 *                     lies in [-2 * 128 * 128, 2 * 127 * 128] = [-32768, 32512]: never saturates.
 *   __relaxed_split   any other behaviour, exact on every engine: hi = u >> 1 and lo = u & 1 are
 *                     both in [0, 127], where every engine agrees, and
 *                     dot(w, u) = 2 * dot(w, hi) + dot(w, lo). Needs a second set of accumulators.
 * The split forms cost two dots per step. Requantization repeats qnn_qs8_requantize_fp32 lane by
 * lane. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

/* acc##j += dot(vb##j, va) for the 4 weight vectors (channels 4j .. 4j+3). */
#define QNN_DOT4(acc, va) \
  acc##0 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(vb0, va, acc##0); \
  acc##1 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(vb1, va, acc##1); \
  acc##2 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(vb2, va, acc##2); \
  acc##3 = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(vb3, va, acc##3);

/* One row of one step: single dot, halves or the hi/lo split. */
#define QNN_ROW_STEP(m) { \
  const v128_t va = wasm_v128_xor(wasm_v128_load32_splat(x##m + k), vxor); \
  if (mode == MODE_HALVES) { \
    const v128_t va_b = wasm_u8x16_avgr(va, vzero); \
    const v128_t va_a = wasm_i8x16_sub(va, va_b); \
    QNN_DOT4(vacc##m##x, va_a) \
    QNN_DOT4(vacc##m##x, va_b) \
  } else if (mode == MODE_SPLIT) { \
    const v128_t va_hi = wasm_u8x16_shr(va, 1); \
    const v128_t va_lo = wasm_v128_and(va, vone); \
    QNN_DOT4(vacc_hi##m##x, va_hi) \
    QNN_DOT4(vacc##m##x, va_lo) \
  } else { \
    QNN_DOT4(vacc##m##x, va) \
  } }

/* Requantizes and stores row m (the bias is already in vacc, the hi part and the row correction of
 * weights with a zero point are added here). */
#define QNN_ROW_STORE(m) { \
  if (mode == MODE_SPLIT) { \
    vacc##m##x0 = wasm_i32x4_add(vacc##m##x0, wasm_i32x4_shl(vacc_hi##m##x0, 1)); \
    vacc##m##x1 = wasm_i32x4_add(vacc##m##x1, wasm_i32x4_shl(vacc_hi##m##x1, 1)); \
    vacc##m##x2 = wasm_i32x4_add(vacc##m##x2, wasm_i32x4_shl(vacc_hi##m##x2, 1)); \
    vacc##m##x3 = wasm_i32x4_add(vacc##m##x3, wasm_i32x4_shl(vacc_hi##m##x3, 1)); \
  } \
  if (corrected) { \
    const v128_t vcorr = wasm_v128_load32_splat(params->row_correction + m); \
    vacc##m##x0 = wasm_i32x4_add(vacc##m##x0, vcorr); \
    vacc##m##x1 = wasm_i32x4_add(vacc##m##x1, vcorr); \
    vacc##m##x2 = wasm_i32x4_add(vacc##m##x2, vcorr); \
    vacc##m##x3 = wasm_i32x4_add(vacc##m##x3, vcorr); \
  } \
  const v128_t vout = qnn_requantize16_fp32(vacc##m##x0, vacc##m##x1, vacc##m##x2, vacc##m##x3, \
                                            vscale0, vscale1, vscale2, vscale3, &vq); \
  if (nb == 16) { \
    wasm_v128_store(c##m + n0, vout); \
  } else { \
    qnn_store_partial(c##m + n0, vout, nb); \
  } }

enum { MODE_SINGLE, MODE_HALVES, MODE_SPLIT };

/* The shared body; `mode` and `corrected` (params->row_correction != NULL: weights with a zero
 * point) are compile-time constants in every caller, so the symmetric-weights code is unchanged. */
static inline __attribute__((always_inline)) void igemm_4x16c4(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params, const int mode, const int corrected) {
  kc = qnn_round_up(kc, 4);
  /* Rows past mr repeat the previous row (same pointers, same outputs). */
  const int8_t* const* a0 = a;
  const int8_t* const* a1 = mr > 1 ? a0 + ks : a0;
  const int8_t* const* a2 = mr > 2 ? a1 + ks : a1;
  const int8_t* const* a3 = mr > 3 ? a2 + ks : a2;
  int8_t* c0 = c;
  int8_t* c1 = mr > 1 ? c0 + c_stride : c0;
  int8_t* c2 = mr > 2 ? c1 + c_stride : c1;
  int8_t* c3 = mr > 3 ? c2 + c_stride : c2;

  const v128_t vxor = wasm_i8x16_splat(mode != MODE_SINGLE ? (int8_t) 0x80 : (int8_t) params->activation_xor);
  const v128_t vone = wasm_i8x16_const_splat(1);
  const v128_t vzero = wasm_i8x16_const_splat(0);
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);

  for (size_t n0 = 0; n0 < nc; n0 += 16) {
    const char* block = w;
    /* vacc: the bias plus the whole dot (split: plus dot(w, lo)); vacc_hi: dot(w, hi), split only. */
    v128_t vacc0x0 = wasm_v128_load(block), vacc0x1 = wasm_v128_load(block + 16);
    v128_t vacc0x2 = wasm_v128_load(block + 32), vacc0x3 = wasm_v128_load(block + 48);
    v128_t vacc1x0 = vacc0x0, vacc1x1 = vacc0x1, vacc1x2 = vacc0x2, vacc1x3 = vacc0x3;
    v128_t vacc2x0 = vacc0x0, vacc2x1 = vacc0x1, vacc2x2 = vacc0x2, vacc2x3 = vacc0x3;
    v128_t vacc3x0 = vacc0x0, vacc3x1 = vacc0x1, vacc3x2 = vacc0x2, vacc3x3 = vacc0x3;
    v128_t vacc_hi0x0 = wasm_i32x4_const_splat(0), vacc_hi0x1 = vacc_hi0x0, vacc_hi0x2 = vacc_hi0x0, vacc_hi0x3 = vacc_hi0x0;
    v128_t vacc_hi1x0 = vacc_hi0x0, vacc_hi1x1 = vacc_hi0x0, vacc_hi1x2 = vacc_hi0x0, vacc_hi1x3 = vacc_hi0x0;
    v128_t vacc_hi2x0 = vacc_hi0x0, vacc_hi2x1 = vacc_hi0x0, vacc_hi2x2 = vacc_hi0x0, vacc_hi2x3 = vacc_hi0x0;
    v128_t vacc_hi3x0 = vacc_hi0x0, vacc_hi3x1 = vacc_hi0x0, vacc_hi3x2 = vacc_hi0x0, vacc_hi3x3 = vacc_hi0x0;
    const int8_t* wp = (const int8_t*) (block + 128);

    for (size_t t = 0; t < ks; t++) {
      const int8_t* x0 = a0[t];
      const int8_t* x1 = a1[t];
      const int8_t* x2 = a2[t];
      const int8_t* x3 = a3[t];
      for (size_t k = 0; k < kc; k += 4) {
        const v128_t vb0 = wasm_v128_load(wp);
        const v128_t vb1 = wasm_v128_load(wp + 16);
        const v128_t vb2 = wasm_v128_load(wp + 32);
        const v128_t vb3 = wasm_v128_load(wp + 48);
        wp += 64;
        QNN_ROW_STEP(0)
        QNN_ROW_STEP(1)
        QNN_ROW_STEP(2)
        QNN_ROW_STEP(3)
      }
    }

    const float* scale = (const float*) (block + 64);
    const v128_t vscale0 = wasm_v128_load(scale);
    const v128_t vscale1 = wasm_v128_load(scale + 4);
    const v128_t vscale2 = wasm_v128_load(scale + 8);
    const v128_t vscale3 = wasm_v128_load(scale + 12);
    const size_t nb = qnn_min_size(16, nc - n0);
    QNN_ROW_STORE(3)
    QNN_ROW_STORE(2)
    QNN_ROW_STORE(1)
    QNN_ROW_STORE(0)
    w = wp;
  }
}

void qnn_qs8_igemm_minmax_fp32_ukernel_4x16c4__relaxed(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  if (params->row_correction != NULL) {
    igemm_4x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_SINGLE, 1);
  } else {
    igemm_4x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_SINGLE, 0);
  }
}

void qnn_qs8_igemm_minmax_fp32_ukernel_4x16c4__relaxed_halves(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  if (params->row_correction != NULL) {
    igemm_4x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_HALVES, 1);
  } else {
    igemm_4x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_HALVES, 0);
  }
}

void qnn_qs8_igemm_minmax_fp32_ukernel_4x16c4__relaxed_split(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  if (params->row_correction != NULL) {
    igemm_4x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_SPLIT, 1);
  } else {
    igemm_4x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_SPLIT, 0);
  }
}
