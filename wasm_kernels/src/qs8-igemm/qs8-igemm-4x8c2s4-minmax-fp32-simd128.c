/* SIMD128 IGEMM: 4 output pixels x 8 output channels, 8 input channels per step as 4 pairs (c2)
 * shuffled across each group of 4 channels (s4): the 4x4c2s4 scheme (see that kernel) with two
 * channel groups per activation rotation, so each sign-extended, rotated activation vector feeds two
 * i32x4.dot_i16x8_s. 8 accumulators + 4 activations + 2 weights: 14 of x86's 16 vector registers. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

/* One of the four dot steps of a block: weights vb0 (channels 0-3) and vb1 (channels 4-7). */
#define QNN_DOT_STEP(vb0, vb1)                                       \
  vacc0x0 = wasm_i32x4_add(vacc0x0, wasm_i32x4_dot_i16x8(va0, vb0)); \
  vacc0x1 = wasm_i32x4_add(vacc0x1, wasm_i32x4_dot_i16x8(va0, vb1)); \
  vacc1x0 = wasm_i32x4_add(vacc1x0, wasm_i32x4_dot_i16x8(va1, vb0)); \
  vacc1x1 = wasm_i32x4_add(vacc1x1, wasm_i32x4_dot_i16x8(va1, vb1)); \
  vacc2x0 = wasm_i32x4_add(vacc2x0, wasm_i32x4_dot_i16x8(va2, vb0)); \
  vacc2x1 = wasm_i32x4_add(vacc2x1, wasm_i32x4_dot_i16x8(va2, vb1)); \
  vacc3x0 = wasm_i32x4_add(vacc3x0, wasm_i32x4_dot_i16x8(va3, vb0)); \
  vacc3x1 = wasm_i32x4_add(vacc3x1, wasm_i32x4_dot_i16x8(va3, vb1));

#define QNN_ROTATE                              \
  va0 = wasm_i32x4_shuffle(va0, va0, 1, 2, 3, 0); \
  va1 = wasm_i32x4_shuffle(va1, va1, 1, 2, 3, 0); \
  va2 = wasm_i32x4_shuffle(va2, va2, 1, 2, 3, 0); \
  va3 = wasm_i32x4_shuffle(va3, va3, 1, 2, 3, 0);

static inline void store4(int8_t* c0, int8_t* c1, int8_t* c2, int8_t* c3, v128_t vout, size_t nb) {
  if (nb >= 4) {
    wasm_v128_store32_lane(c3, vout, 3);
    wasm_v128_store32_lane(c2, vout, 2);
    wasm_v128_store32_lane(c1, vout, 1);
    wasm_v128_store32_lane(c0, vout, 0);
    return;
  }
  if (nb & 2) {
    wasm_v128_store16_lane(c3, vout, 6);
    wasm_v128_store16_lane(c2, vout, 4);
    wasm_v128_store16_lane(c1, vout, 2);
    wasm_v128_store16_lane(c0, vout, 0);
    vout = wasm_u32x4_shr(vout, 16);
    c0 += 2, c1 += 2, c2 += 2, c3 += 2;
  }
  if (nb & 1) {
    wasm_v128_store8_lane(c3, vout, 12);
    wasm_v128_store8_lane(c2, vout, 8);
    wasm_v128_store8_lane(c1, vout, 4);
    wasm_v128_store8_lane(c0, vout, 0);
  }
}

void qnn_qs8_igemm_minmax_fp32_ukernel_4x8c2s4__simd128(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  kc = qnn_round_up(kc, 8);
  /* Rows past mr repeat the previous row (same pointers, same outputs), so nothing is read from
   * or written to rows that do not exist. */
  const int8_t* const* a0 = a;
  const int8_t* const* a1 = mr > 1 ? a0 + ks : a0;
  const int8_t* const* a2 = mr > 2 ? a1 + ks : a1;
  const int8_t* const* a3 = mr > 3 ? a2 + ks : a2;
  int8_t* c0 = c;
  int8_t* c1 = mr > 1 ? c0 + c_stride : c0;
  int8_t* c2 = mr > 2 ? c1 + c_stride : c1;
  int8_t* c3 = mr > 3 ? c2 + c_stride : c2;

  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(params);
  /* Weights with a zero point: -zw * sum(x - x_zp) per row (requantization.h); NULL otherwise. */
  const int32_t* correction = params->row_correction;

  for (size_t n0 = 0; n0 < nc; n0 += 8) {
    v128_t vacc0x0 = wasm_v128_load(w);
    v128_t vacc0x1 = wasm_v128_load((const int32_t*) w + 4);
    v128_t vacc1x0 = vacc0x0, vacc2x0 = vacc0x0, vacc3x0 = vacc0x0;
    v128_t vacc1x1 = vacc0x1, vacc2x1 = vacc0x1, vacc3x1 = vacc0x1;
    const float* scale = (const float*) w + 8;
    const int8_t* wp = (const int8_t*) w + 64;

    for (size_t t = 0; t < ks; t++) {
      const int8_t* x0 = a0[t];
      const int8_t* x1 = a1[t];
      const int8_t* x2 = a2[t];
      const int8_t* x3 = a3[t];
      for (size_t k = 0; k < kc; k += 8) {
        v128_t va0 = wasm_i16x8_load8x8(x0 + k);
        v128_t va1 = wasm_i16x8_load8x8(x1 + k);
        v128_t va2 = wasm_i16x8_load8x8(x2 + k);
        v128_t va3 = wasm_i16x8_load8x8(x3 + k);
        /* packed per step s: channels 0-7, one pair each (16 bytes) */
        QNN_DOT_STEP(wasm_i16x8_load8x8(wp), wasm_i16x8_load8x8(wp + 8))
        QNN_ROTATE
        QNN_DOT_STEP(wasm_i16x8_load8x8(wp + 16), wasm_i16x8_load8x8(wp + 24))
        QNN_ROTATE
        QNN_DOT_STEP(wasm_i16x8_load8x8(wp + 32), wasm_i16x8_load8x8(wp + 40))
        QNN_ROTATE
        QNN_DOT_STEP(wasm_i16x8_load8x8(wp + 48), wasm_i16x8_load8x8(wp + 56))
        wp += 64;
      }
    }

    if (correction != NULL) {
      const v128_t vc0 = wasm_v128_load32_splat(correction + 0), vc1 = wasm_v128_load32_splat(correction + 1);
      const v128_t vc2 = wasm_v128_load32_splat(correction + 2), vc3 = wasm_v128_load32_splat(correction + 3);
      vacc0x0 = wasm_i32x4_add(vacc0x0, vc0), vacc0x1 = wasm_i32x4_add(vacc0x1, vc0);
      vacc1x0 = wasm_i32x4_add(vacc1x0, vc1), vacc1x1 = wasm_i32x4_add(vacc1x1, vc1);
      vacc2x0 = wasm_i32x4_add(vacc2x0, vc2), vacc2x1 = wasm_i32x4_add(vacc2x1, vc2);
      vacc3x0 = wasm_i32x4_add(vacc3x0, vc3), vacc3x1 = wasm_i32x4_add(vacc3x1, vc3);
    }
    const v128_t vscale0 = wasm_v128_load(scale), vscale1 = wasm_v128_load(scale + 4);
    /* Bytes of vout0 (channels 0-3) and vout1 (4-7): row 0, row 1, row 2, row 3. */
    const v128_t vout0 = qnn_requantize16_fp32(vacc0x0, vacc1x0, vacc2x0, vacc3x0, vscale0, vscale0, vscale0, vscale0, &vq);
    const v128_t vout1 = qnn_requantize16_fp32(vacc0x1, vacc1x1, vacc2x1, vacc3x1, vscale1, vscale1, vscale1, vscale1, &vq);
    const size_t nb = qnn_min_size(8, nc - n0);
    store4(c0 + n0, c1 + n0, c2 + n0, c3 + n0, vout0, nb);
    if (nb > 4) store4(c0 + n0 + 4, c1 + n0 + 4, c2 + n0 + 4, c3 + n0 + 4, vout1, nb - 4);
    w = wp;
  }
}
