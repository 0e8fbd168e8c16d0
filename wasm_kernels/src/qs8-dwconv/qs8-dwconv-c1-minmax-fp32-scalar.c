/* Scalar depthwise convolution, one channel per tile, any number of taps. */
#include "common.h"
#include "microkernels.h"

void qnn_qs8_dwconv_minmax_fp32_ukernel_c1__scalar(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params) {
  for (size_t p = 0; p < pixels; p++, a += ks, output += channels) {
    const char* block = w;
    for (size_t c = 0; c < channels; c++) {
      const int32_t bias = *(const int32_t*) block;
      const float scale = *(const float*) (block + sizeof(int32_t));
      const int8_t* k = (const int8_t*) (block + sizeof(int32_t) + sizeof(float));
      int32_t acc = bias;
      for (size_t t = 0; t < ks; t++) acc += (int32_t) a[t][c] * k[t];
      output[c] = qnn_qs8_requantize_fp32(acc, scale, params);
      block = (const char*) (k + ks);
    }
  }
}
