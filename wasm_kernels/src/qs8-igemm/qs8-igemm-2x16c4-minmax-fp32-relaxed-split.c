/* Relaxed-SIMD IGEMM, 2 output pixels x 16 output channels, 4 input channels per step (c4), exact
 * on every engine: for engines whose relaxed dot behaves in any other way.
 * The body and why: qs8-igemm-2x16c4-relaxed-xor.h. */
#include "qs8-igemm-2x16c4-relaxed-xor.h"

void qnn_qs8_igemm_minmax_fp32_ukernel_2x16c4__relaxed_split(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params) {
  if (params->row_correction != NULL) {
    igemm_2x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_SPLIT, 1);
  } else {
    igemm_2x16c4(mr, nc, kc, ks, a, w, c, c_stride, params, MODE_SPLIT, 0);
  }
}
