#include "packing.h"

#include "common.h"

int64_t qnn_pack_qs8_igemm_size(int64_t nc, int64_t ks, int64_t kc, int64_t nr, int64_t kr, int64_t sr) {
  const int64_t blocks = (nc + nr - 1) / nr, skr = sr * kr;
  return blocks * (nr * (int64_t) (sizeof(int32_t) + sizeof(float)) + ks * ((kc + skr - 1) / skr * skr) * nr);
}

QNN_PLAN_CODE void qnn_pack_qs8_igemm_w(
    size_t nc, size_t ks, size_t kc, size_t nr, size_t kr, size_t sr, int32_t input_zero_point, int32_t weights_xor,
    const int8_t* w, size_t n_stride, size_t t_stride, size_t k_stride,
    const int32_t* bias, const float* scale, void* packed) {
  const size_t skr = sr * kr, kc_padded = qnn_round_up(kc, skr);
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
          /* the group of channel n at position k0: (k0 / kr + n) mod sr in its run of sr groups */
          const size_t first = k0 / skr * skr + (k0 + n * kr) % skr;
          for (size_t k = first; k < first + kr && k < kc; k++) {
            packed_w[n * kr + (k - first)] = (int8_t) (w[(n0 + n) * n_stride + t * t_stride + k * k_stride] ^ weights_xor);
          }
        }
        packed_w += nr * kr;
      }
    }
    out = (char*) packed_w;
  }
}

/* Bytes of one channel's packed weights. */
static int64_t dwconv_weight_bytes(int64_t ks, enum qnn_dwconv_weights form) {
  return form == QNN_DWCONV_TAP_PAIRS ? (ks + 1) / 2 * 2 * (int64_t) sizeof(int16_t)
       : form == QNN_DWCONV_TAP_QUADS ? (ks + 3) / 4 * 4 : form == QNN_DWCONV_3X3_PAIRS ? 3 * 2 * 4 : ks;
}

int64_t qnn_pack_qs8_dwconv_size(int64_t channels, int64_t ks, int64_t ct, enum qnn_dwconv_weights form) {
  return (channels + ct - 1) / ct * ct * ((int64_t) (sizeof(int32_t) + sizeof(float)) + dwconv_weight_bytes(ks, form));
}

/* Load-time only, over few weights: compiled for size (the relaxed module's 128 KiB budget). */
QNN_PLAN_CODE void qnn_pack_qs8_dwconv_w(
    size_t channels, size_t ks, size_t ct, enum qnn_dwconv_weights form, int32_t input_zero_point,
    const int8_t* w, size_t t_stride, size_t c_stride, const int32_t* bias, const float* scale, void* packed) {
  char* out = packed;
  for (size_t c0 = 0; c0 < channels; c0 += ct) {
    const size_t cb = qnn_min_size(ct, channels - c0);
    int32_t* packed_bias = (int32_t*) out;
    float* packed_scale = (float*) (out + ct * sizeof(int32_t));
    char* packed_w = out + ct * (sizeof(int32_t) + sizeof(float));
    for (size_t c = 0; c < cb; c++) {
      int32_t sum = 0;
      for (size_t t = 0; t < ks; t++) {
        const int8_t wv = w[t * t_stride + (c0 + c) * c_stride];
        if (form == QNN_DWCONV_TAP_PAIRS) {
          ((int16_t*) packed_w)[(t / 2 * ct + c) * 2 + t % 2] = wv;
        } else if (form == QNN_DWCONV_TAP_QUADS) {
          ((int8_t*) packed_w)[(t / 4 * ct + c) * 4 + t % 4] = wv;
        } else if (form == QNN_DWCONV_3X3_PAIRS) {  /* ks == 9: row t / 3, column t % 3 */
          int8_t* row = (int8_t*) packed_w + t / 3 * 2 * ct * 4;
          row[c * 4 + t % 3] = wv;             /* the first pixel: input columns 0-2 */
          row[(ct + c) * 4 + t % 3 + 1] = wv;  /* the second: columns 1-3 */
        } else {
          ((int8_t*) packed_w)[t * ct + c] = wv;
        }
        sum += wv;
      }
      packed_bias[c] = (bias != NULL ? bias[c0 + c] : 0) - input_zero_point * sum;
      packed_scale[c] = scale[c0 + c];
    }
    out = packed_w + ct * (size_t) dwconv_weight_bytes((int64_t) ks, form);
  }
}
