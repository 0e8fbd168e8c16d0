/* Relaxed-SIMD IGEMM for engines whose relaxed dot is exact, the narrow tile for few output
 * channels: 2 output pixels x 16 output channels, 4 input channels per step (c4).
 * The body and why: qs8-igemm-2xc4-relaxed-dot.h. */
#include "qs8-igemm-2xc4-relaxed-dot.h"

void qnn_qs8_igemm_minmax_fp32_ukernel_2x16c4__relaxed_dot(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  const int corrected = params->row_correction != NULL;
  if (params->products_bounded) {
    if (corrected) igemm_2xc4(mr, nc, kc, ks, a, w, c, c_stride, params, 4, 1, 1);
    else igemm_2xc4(mr, nc, kc, ks, a, w, c, c_stride, params, 4, 0, 1);
  } else {
    if (corrected) igemm_2xc4(mr, nc, kc, ks, a, w, c, c_stride, params, 4, 1, 0);
    else igemm_2xc4(mr, nc, kc, ks, a, w, c, c_stride, params, 4, 0, 0);
  }
}
