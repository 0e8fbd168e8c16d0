/* Picks microkernels per variant. The variant is fixed at compile time by the target features
 * (-msimd128, -mrelaxed-simd); everything else in the module is shared. */
#include "config.h"

#include "common.h"

#if defined(__wasm_relaxed_simd__)
  #define QNN_VARIANT 2
#elif defined(__wasm_simd128__)
  #define QNN_VARIANT 1
#else
  #define QNN_VARIANT 0
#endif

int32_t QNN_EXPORT(qnn_variant)(void) { return QNN_VARIANT; }

static struct qnn_gemm_config gemm_config;
static struct qnn_dwconv_config dwconv_config;
static int initialized;

static void init_configs(void) {
#if QNN_VARIANT == 2
  gemm_config = (struct qnn_gemm_config) {
    qnn_qs8_igemm_minmax_fp32_ukernel_4x16c4__relaxed, 4, 16, 4, 128, 0x80, "qs8-igemm-4x16c4-relaxed"};
#elif QNN_VARIANT == 1
  gemm_config = (struct qnn_gemm_config) {
    qnn_qs8_igemm_minmax_fp32_ukernel_4x4c8__simd128, 4, 4, 8, 0, 0, "qs8-igemm-4x4c8-simd128"};
#else
  gemm_config = (struct qnn_gemm_config) {
    qnn_qs8_igemm_minmax_fp32_ukernel_2x4c1__scalar, 2, 4, 1, 0, 0, "qs8-igemm-2x4c1-scalar"};
#endif
#if QNN_VARIANT >= 1
  dwconv_config = (struct qnn_dwconv_config) {
    qnn_qs8_dwconv_minmax_fp32_ukernel_c16__simd128, 16, "qs8-dwconv-c16-simd128"};
#else
  dwconv_config = (struct qnn_dwconv_config) {
    qnn_qs8_dwconv_minmax_fp32_ukernel_c1__scalar, 1, "qs8-dwconv-c1-scalar"};
#endif
  initialized = 1;
}

const struct qnn_gemm_config* qnn_get_gemm_config(void) {
  if (!initialized) init_configs();
  return &gemm_config;
}

const struct qnn_dwconv_config* qnn_get_dwconv_config(void) {
  if (!initialized) init_configs();
  return &dwconv_config;
}

/* Names of the kernels in use, so the frontend can report what really ran. */
const char* QNN_EXPORT(qnn_gemm_kernel_name)(void) { return qnn_get_gemm_config()->name; }
const char* QNN_EXPORT(qnn_dwconv_kernel_name)(void) { return qnn_get_dwconv_config()->name; }
