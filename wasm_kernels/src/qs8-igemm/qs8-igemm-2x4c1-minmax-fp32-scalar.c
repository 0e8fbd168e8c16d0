/* Scalar IGEMM: 2 output pixels x 4 output channels, one input channel per step. */
#include "common.h"
#include "microkernels.h"

static void tile_2x4c1(size_t mr, size_t nc, size_t kc, size_t ks, const int8_t* const* a, const void* w,
                       int8_t* c, size_t c_stride, const int32_t* row_correction,
                       const struct qnn_qs8_minmax_params* params) {
  const int8_t* const* a0 = a;
  const int8_t* const* a1 = mr > 1 ? a + ks : a;
  int8_t* c0 = c;
  int8_t* c1 = mr > 1 ? c + c_stride : c;
  for (size_t n0 = 0; n0 < nc; n0 += 4) {
    const int32_t* bias = w;
    const float* scale = (const float*) (bias + 4);
    const int8_t* wp = (const int8_t*) (scale + 4);
    int32_t acc0[4], acc1[4];
    for (int n = 0; n < 4; n++) acc0[n] = acc1[n] = bias[n];
    for (size_t t = 0; t < ks; t++) {
      const int8_t* x0 = a0[t];
      const int8_t* x1 = a1[t];
      for (size_t k = 0; k < kc; k++) {
        const int32_t v0 = x0[k], v1 = x1[k];
        for (int n = 0; n < 4; n++) {
          acc0[n] += v0 * wp[n];
          acc1[n] += v1 * wp[n];
        }
        wp += 4;
      }
    }
    if (row_correction != NULL) {  /* weights with a zero point (see requantization.h) */
      for (int n = 0; n < 4; n++) {
        acc0[n] = (int32_t) ((uint32_t) acc0[n] + (uint32_t) row_correction[0]);
        acc1[n] = (int32_t) ((uint32_t) acc1[n] + (uint32_t) row_correction[1]);
      }
    }
    const size_t nb = qnn_min_size(4, nc - n0);
    for (size_t n = 0; n < nb; n++) {
      c1[n0 + n] = qnn_qs8_requantize_fp32(acc1[n], scale[n], params);
      c0[n0 + n] = qnn_qs8_requantize_fp32(acc0[n], scale[n], params);
    }
    w = wp;
  }
}

void qnn_qs8_igemm_minmax_fp32_ukernel_2x4c1__scalar(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  for (size_t m0 = 0; m0 < mr; m0 += 2) {  /* rows in pairs (microkernels.h: any mr) */
    tile_2x4c1(qnn_min_size(mr - m0, 2), nc, kc, ks, a + m0 * ks, w, c + m0 * c_stride, c_stride,
               params->row_correction != NULL ? params->row_correction + m0 : NULL, params);
  }
}
