/* Weight packing: done once per op at plan time, in C (the frontend never loops over weights). */
#ifndef QNN_PACKING_H
#define QNN_PACKING_H

#include <stddef.h>
#include <stdint.h>

/* IGEMM layout, one block per NR output channels:
 *   int32 bias[NR]     bias[n] - input_zero_point * sum_k w[n][k]   (0 past nc)
 *   float scale[NR]    requantization scale                          (0 past nc)
 *   int8  w[ks][round_up(kc, SR * KR) / KR][NR][KR] ^ weights_xor    (0 past nc / kc)
 * With SR > 1 (XNNPACK's "s" kernels), group g of channel n in each run of SR groups holds the input
 * channels of group (g + n) mod SR of that run: the kernel rotates its activations by one group
 * between dot products instead of broadcasting them.
 * Weight (n, t, k) (output channel, tap, input channel) is w[n * n_stride + t * t_stride + k * k_stride]:
 * OHWI [nc][ks][kc] is (ks * kc, kc, 1), OIHW [nc][kc][ks] is (kc * ks, 1, ks), IO [kc][nc] (ks = 1)
 * is (1, 0, nc). */
int64_t qnn_pack_qs8_igemm_size(int64_t nc, int64_t ks, int64_t kc, int64_t nr, int64_t kr, int64_t sr);
void qnn_pack_qs8_igemm_w(
    size_t nc, size_t ks, size_t kc, size_t nr, size_t kr, size_t sr, int32_t input_zero_point, int32_t weights_xor,
    const int8_t* w, size_t n_stride, size_t t_stride, size_t k_stride,
    const int32_t* bias, const float* scale, void* packed);

/* Depthwise layout, one block per CT channels: int32 bias[CT], float scale[CT], then the weights,
 * in one of three forms (0 past ks):
 *   QNN_DWCONV_TAPS       int8 w[ks][CT]
 *   QNN_DWCONV_TAP_PAIRS  int16 w[round_up(ks, 2) / 2][CT][2]: taps 2p and 2p + 1 of a channel side by
 *                         side, for kernels that multiply two taps with one i16 dot product
 *   QNN_DWCONV_TAP_QUADS  int8 w[round_up(ks, 4) / 4][CT][4]: taps 4q .. 4q + 3 of a channel side by
 *                         side, for kernels that multiply four taps with one i8 dot product
 *   QNN_DWCONV_3X3_PAIRS  3x3 only: int8 w[3][2][CT][4], per kernel row r the weights of two adjacent
 *                         output pixels over four input columns: [w(r,0), w(r,1), w(r,2), 0] and
 *                         [0, w(r,0), w(r,1), w(r,2)]
 * Weight (t, c) is w[t * t_stride + c * c_stride]: TFLite [1, KH, KW, C] is (channels, 1), ONNX
 * [C, 1, KH, KW] is (1, ks). */
enum qnn_dwconv_weights {
  QNN_DWCONV_TAPS = 0, QNN_DWCONV_TAP_PAIRS = 1, QNN_DWCONV_TAP_QUADS = 2, QNN_DWCONV_3X3_PAIRS = 3
};
int64_t qnn_pack_qs8_dwconv_size(int64_t channels, int64_t ks, int64_t ct, enum qnn_dwconv_weights form);
void qnn_pack_qs8_dwconv_w(
    size_t channels, size_t ks, size_t ct, enum qnn_dwconv_weights form, int32_t input_zero_point,
    const int8_t* w, size_t t_stride, size_t c_stride, const int32_t* bias, const float* scale, void* packed);

#endif
