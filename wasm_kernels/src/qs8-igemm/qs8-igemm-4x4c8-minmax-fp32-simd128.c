/* SIMD128 IGEMM: 4 output pixels x 4 output channels, 8 input channels per step (c8).
 * Each step sign-extends 8 activations and 8 weights per channel to i16 and multiplies them with
 * i32x4.dot_i16x8_s; every (row, channel) pair keeps its own i32x4 of partial sums, reduced
 * horizontally once per block. Requantization repeats qnn_qs8_requantize_fp32 lane by lane. */
#include <wasm_simd128.h>

#include "common.h"
#include "microkernels.h"
#include "requantization-simd128.h"

/* [sum(x0), sum(x1), sum(x2), sum(x3)] of four i32x4 partial sums. */
static inline v128_t reduce4(v128_t x0, v128_t x1, v128_t x2, v128_t x3) {
  const v128_t x01 = wasm_i32x4_add(wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7));
  const v128_t x23 = wasm_i32x4_add(wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5), wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(x01, x23, 0, 1, 4, 5), wasm_i32x4_shuffle(x01, x23, 2, 3, 6, 7));
}

void qnn_qs8_igemm_minmax_fp32_ukernel_4x4c8__simd128(
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

  const v128_t vlo = wasm_f32x4_splat(params->output_min_less_zero_point);
  const v128_t vhi = wasm_f32x4_splat(params->output_max_less_zero_point);
  const v128_t vzp = wasm_i32x4_splat(params->output_zero_point);
  /* Weights with a zero point: -zw * sum(x - x_zp) per row (requantization.h); NULL otherwise. The
   * values are loaded where they are added, so nothing extra stays live in the zw = 0 path. */
  const int32_t* correction = params->row_correction;

  for (size_t n0 = 0; n0 < nc; n0 += 4) {
    const v128_t vbias = wasm_v128_load(w);
    const v128_t vscale = wasm_v128_load((const char*) w + 16);
    const int8_t* wp = (const int8_t*) w + 32;

    v128_t vacc0x0 = wasm_i32x4_const_splat(0), vacc0x1 = vacc0x0, vacc0x2 = vacc0x0, vacc0x3 = vacc0x0;
    v128_t vacc1x0 = vacc0x0, vacc1x1 = vacc0x0, vacc1x2 = vacc0x0, vacc1x3 = vacc0x0;
    v128_t vacc2x0 = vacc0x0, vacc2x1 = vacc0x0, vacc2x2 = vacc0x0, vacc2x3 = vacc0x0;
    v128_t vacc3x0 = vacc0x0, vacc3x1 = vacc0x0, vacc3x2 = vacc0x0, vacc3x3 = vacc0x0;

    for (size_t t = 0; t < ks; t++) {
      const int8_t* x0 = a0[t];
      const int8_t* x1 = a1[t];
      const int8_t* x2 = a2[t];
      const int8_t* x3 = a3[t];
      for (size_t k = 0; k < kc; k += 8) {
        const v128_t va0 = wasm_i16x8_load8x8(x0 + k);
        const v128_t va1 = wasm_i16x8_load8x8(x1 + k);
        const v128_t va2 = wasm_i16x8_load8x8(x2 + k);
        const v128_t va3 = wasm_i16x8_load8x8(x3 + k);

        const v128_t vb0 = wasm_i16x8_load8x8(wp);
        vacc0x0 = wasm_i32x4_add(vacc0x0, wasm_i32x4_dot_i16x8(va0, vb0));
        vacc1x0 = wasm_i32x4_add(vacc1x0, wasm_i32x4_dot_i16x8(va1, vb0));
        vacc2x0 = wasm_i32x4_add(vacc2x0, wasm_i32x4_dot_i16x8(va2, vb0));
        vacc3x0 = wasm_i32x4_add(vacc3x0, wasm_i32x4_dot_i16x8(va3, vb0));
        const v128_t vb1 = wasm_i16x8_load8x8(wp + 8);
        vacc0x1 = wasm_i32x4_add(vacc0x1, wasm_i32x4_dot_i16x8(va0, vb1));
        vacc1x1 = wasm_i32x4_add(vacc1x1, wasm_i32x4_dot_i16x8(va1, vb1));
        vacc2x1 = wasm_i32x4_add(vacc2x1, wasm_i32x4_dot_i16x8(va2, vb1));
        vacc3x1 = wasm_i32x4_add(vacc3x1, wasm_i32x4_dot_i16x8(va3, vb1));
        const v128_t vb2 = wasm_i16x8_load8x8(wp + 16);
        vacc0x2 = wasm_i32x4_add(vacc0x2, wasm_i32x4_dot_i16x8(va0, vb2));
        vacc1x2 = wasm_i32x4_add(vacc1x2, wasm_i32x4_dot_i16x8(va1, vb2));
        vacc2x2 = wasm_i32x4_add(vacc2x2, wasm_i32x4_dot_i16x8(va2, vb2));
        vacc3x2 = wasm_i32x4_add(vacc3x2, wasm_i32x4_dot_i16x8(va3, vb2));
        const v128_t vb3 = wasm_i16x8_load8x8(wp + 24);
        vacc0x3 = wasm_i32x4_add(vacc0x3, wasm_i32x4_dot_i16x8(va0, vb3));
        vacc1x3 = wasm_i32x4_add(vacc1x3, wasm_i32x4_dot_i16x8(va1, vb3));
        vacc2x3 = wasm_i32x4_add(vacc2x3, wasm_i32x4_dot_i16x8(va2, vb3));
        vacc3x3 = wasm_i32x4_add(vacc3x3, wasm_i32x4_dot_i16x8(va3, vb3));
        wp += 32;
      }
    }

    v128_t vsum0 = wasm_i32x4_add(vbias, reduce4(vacc0x0, vacc0x1, vacc0x2, vacc0x3));
    v128_t vsum1 = wasm_i32x4_add(vbias, reduce4(vacc1x0, vacc1x1, vacc1x2, vacc1x3));
    v128_t vsum2 = wasm_i32x4_add(vbias, reduce4(vacc2x0, vacc2x1, vacc2x2, vacc2x3));
    v128_t vsum3 = wasm_i32x4_add(vbias, reduce4(vacc3x0, vacc3x1, vacc3x2, vacc3x3));
    if (correction != NULL) {
      vsum0 = wasm_i32x4_add(vsum0, wasm_v128_load32_splat(correction + 0));
      vsum1 = wasm_i32x4_add(vsum1, wasm_v128_load32_splat(correction + 1));
      vsum2 = wasm_i32x4_add(vsum2, wasm_v128_load32_splat(correction + 2));
      vsum3 = wasm_i32x4_add(vsum3, wasm_v128_load32_splat(correction + 3));
    }
    const v128_t vout0 = qnn_requantize4_fp32(vsum0, vscale, vlo, vhi, vzp);
    const v128_t vout1 = qnn_requantize4_fp32(vsum1, vscale, vlo, vhi, vzp);
    const v128_t vout2 = qnn_requantize4_fp32(vsum2, vscale, vlo, vhi, vzp);
    const v128_t vout3 = qnn_requantize4_fp32(vsum3, vscale, vlo, vhi, vzp);
    /* Values are already in [output_min, output_max], so the saturating narrows are exact.
     * Bytes: row 0 channels 0-3, row 1 channels 0-3, ... */
    v128_t vout = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(vout0, vout1), wasm_i16x8_narrow_i32x4(vout2, vout3));

    const size_t nb = qnn_min_size(4, nc - n0);
    if (nb == 4) {
      wasm_v128_store32_lane(c3 + n0, vout, 3);
      wasm_v128_store32_lane(c2 + n0, vout, 2);
      wasm_v128_store32_lane(c1 + n0, vout, 1);
      wasm_v128_store32_lane(c0 + n0, vout, 0);
    } else {
      size_t n = n0;
      if (nb & 2) {
        wasm_v128_store16_lane(c3 + n, vout, 6);
        wasm_v128_store16_lane(c2 + n, vout, 4);
        wasm_v128_store16_lane(c1 + n, vout, 2);
        wasm_v128_store16_lane(c0 + n, vout, 0);
        vout = wasm_u32x4_shr(vout, 16);
        n += 2;
      }
      if (nb & 1) {
        wasm_v128_store8_lane(c3 + n, vout, 12);
        wasm_v128_store8_lane(c2 + n, vout, 8);
        wasm_v128_store8_lane(c1 + n, vout, 4);
        wasm_v128_store8_lane(c0 + n, vout, 0);
      }
    }
    w = wp;
  }
}
