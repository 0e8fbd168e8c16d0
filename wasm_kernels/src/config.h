/* The one place that knows which microkernels a variant uses (chosen in config.c). */
#ifndef QNN_CONFIG_H
#define QNN_CONFIG_H

#include <stdint.h>

#include "microkernels.h"

struct qnn_gemm_config {
  /* Convolutions run one of two ways: the IGEMM reads int8 rows through the indirection buffer, or
   * packa gathers each tile's rows into int16 and the GEMM runs on them. */
  qnn_qs8_igemm_ukernel_fn igemm;  /* NULL when gemm is set */
  qnn_qs8_gemm_ukernel_fn gemm;
  qnn_qs8_packa_fn packa;
  uint32_t mr, nr, kr;
  uint32_t sr;  /* KR-byte groups shuffled across SR channels (packing.h); 1: none */
  /* Added to the input zero point in the bias fold: the relaxed halves/split kernels compute on
   * activations XOR 0x80 (uint8), i.e. x + 128. */
  int32_t input_zero_point_offset;
  /* XORed into every packed weight byte (0x80: w + 128, for kernels whose engine reads the weights
   * as unsigned); the operator then adds -128 * (the sum of each row's activations) to the row. */
  int32_t weights_xor;
  const char* name;
};

struct qnn_dwconv_config {
  qnn_qs8_dwconv_ukernel_fn dwconv;
  qnn_qs8_dwconv_ukernel_fn dwconv3x3s1;  /* NULL, or a kernel for 3x3 stride-1 windows (QNN_DWCONV_3X3_PAIRS) */
  uint32_t channel_tile;
  int32_t weights;                  /* enum qnn_dwconv_weights: how packing.c lays out the weights */
  int32_t input_zero_point_offset;  /* as in qnn_gemm_config */
  int32_t activation_xor;
  const char* name;
};

const struct qnn_gemm_config* qnn_get_gemm_config(void);
/* The config for a convolution with this many output channels per group. */
const struct qnn_gemm_config* qnn_get_gemm_config_for(size_t output_channels);
const struct qnn_dwconv_config* qnn_get_dwconv_config(void);
/* 1 where the relaxed module's f32x4.relaxed_madd is one fused multiply-add (probed), else 0; the
 * ADD in onnxruntime's arithmetic (its x86 kernel's FMAs) then computes as that kernel does. */
int qnn_relaxed_madd_fused(void);

#endif
