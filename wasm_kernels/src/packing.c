#include "packing.h"

#include "common.h"

int64_t qnn_pack_qs8_igemm_size(int64_t nc, int64_t ks, int64_t kc, int64_t nr, int64_t kr) {
  const int64_t blocks = (nc + nr - 1) / nr;
  return blocks * (nr * (int64_t) (sizeof(int32_t) + sizeof(float)) + ks * ((kc + kr - 1) / kr * kr) * nr);
}

void qnn_pack_qs8_igemm_w(
    size_t nc, size_t ks, size_t kc, size_t nr, size_t kr, int32_t input_zero_point,
    const int8_t* w, size_t n_stride, size_t t_stride, size_t k_stride,
    const int32_t* bias, const float* scale, void* packed) {
  const size_t kc_padded = qnn_round_up(kc, kr);
  char* out = packed;
  for (size_t n0 = 0; n0 < nc; n0 += nr) {
    const size_t nb = qnn_min_size(nr, nc - n0);
    int32_t* packed_bias = (int32_t*) out;
    float* packed_scale = (float*) (out + nr * sizeof(int32_t));
    int8_t* packed_w = (int8_t*) (out + nr * (sizeof(int32_t) + sizeof(float)));
    for (size_t n = 0; n < nb; n++) {
      const int8_t* wn = w + (n0 + n) * n_stride;
      int32_t sum = 0;
      for (size_t t = 0; t < ks; t++) {
        for (size_t k = 0; k < kc; k++) sum += wn[t * t_stride + k * k_stride];
      }
      packed_bias[n] = (bias != NULL ? bias[n0 + n] : 0) - input_zero_point * sum;
      packed_scale[n] = scale[n0 + n];
    }
    for (size_t t = 0; t < ks; t++) {
      for (size_t k0 = 0; k0 < kc_padded; k0 += kr) {
        for (size_t n = 0; n < nb; n++) {
          for (size_t k = k0; k < k0 + kr && k < kc; k++) {
            packed_w[n * kr + (k - k0)] = w[(n0 + n) * n_stride + t * t_stride + k * k_stride];
          }
        }
        packed_w += nr * kr;
      }
    }
    out = (char*) packed_w;
  }
}

int64_t qnn_pack_qs8_dwconv_size(int64_t channels, int64_t ks, int64_t ct) {
  return (channels + ct - 1) / ct * ct * ((int64_t) (sizeof(int32_t) + sizeof(float)) + ks);
}

void qnn_pack_qs8_dwconv_w(
    size_t channels, size_t ks, size_t ct, int32_t input_zero_point,
    const int8_t* w, size_t t_stride, size_t c_stride, const int32_t* bias, const float* scale, void* packed) {
  char* out = packed;
  for (size_t c0 = 0; c0 < channels; c0 += ct) {
    const size_t cb = qnn_min_size(ct, channels - c0);
    int32_t* packed_bias = (int32_t*) out;
    float* packed_scale = (float*) (out + ct * sizeof(int32_t));
    int8_t* packed_w = (int8_t*) (out + ct * (sizeof(int32_t) + sizeof(float)));
    for (size_t c = 0; c < cb; c++) {
      int32_t sum = 0;
      for (size_t t = 0; t < ks; t++) {
        const int8_t wv = w[t * t_stride + (c0 + c) * c_stride];
        packed_w[t * ct + c] = wv;
        sum += wv;
      }
      packed_bias[c] = (bias != NULL ? bias[c0 + c] : 0) - input_zero_point * sum;
      packed_scale[c] = scale[c0 + c];
    }
    out = (char*) (packed_w + ks * ct);
  }
}
