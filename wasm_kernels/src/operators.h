/* One create/run pair per operator; plan.c dispatches on the record's op type. */
#ifndef QNN_OPERATORS_H
#define QNN_OPERATORS_H

#include <stdint.h>

#include "plan.h"

#define QNN_DECLARE_OPERATOR(name) \
  int32_t qnn_create_##name(struct qnn_plan* plan, const void* record, struct qnn_op** op); \
  void qnn_run_##name(const struct qnn_op* op);

QNN_DECLARE_OPERATOR(quantize)
QNN_DECLARE_OPERATOR(dequantize)
QNN_DECLARE_OPERATOR(requantize)
QNN_DECLARE_OPERATOR(conv2d)
QNN_DECLARE_OPERATOR(dwconv2d)
QNN_DECLARE_OPERATOR(add)
QNN_DECLARE_OPERATOR(avgpool2d)
QNN_DECLARE_OPERATOR(pad)
QNN_DECLARE_OPERATOR(softmax)
QNN_DECLARE_OPERATOR(copy)
QNN_DECLARE_OPERATOR(mul)
QNN_DECLARE_OPERATOR(maximum)
QNN_DECLARE_OPERATOR(maxpool2d)
QNN_DECLARE_OPERATOR(copy_slice)
QNN_DECLARE_OPERATOR(copy_strided)
QNN_DECLARE_OPERATOR(lut)
QNN_DECLARE_OPERATOR(lut_f32)
QNN_DECLARE_OPERATOR(lut_channels)
QNN_DECLARE_OPERATOR(lut2d)
QNN_DECLARE_OPERATOR(binary_f32)
QNN_DECLARE_OPERATOR(quantize_channels)
QNN_DECLARE_OPERATOR(dequantize_channels)
QNN_DECLARE_OPERATOR(resize)
QNN_DECLARE_OPERATOR(detection_postprocess)
QNN_DECLARE_OPERATOR(batch_matmul)
QNN_DECLARE_OPERATOR(layer_norm)
QNN_DECLARE_OPERATOR(unary_f32)
QNN_DECLARE_OPERATOR(dynamic_quantize)
QNN_DECLARE_OPERATOR(dynamic_matmul)
int32_t qnn_create_dynamic_conv2d(struct qnn_plan* plan, const void* record, struct qnn_op** op);  /* run: dynamic_matmul's */

/* QUANTIZE's arithmetic over `count` values (quantize.c): y = rint(clamp(x / scale)) + zero_point (x * scale
 * with reciprocal 1), clamped to int8; DYNAMIC_QUANTIZE runs it with the scale it finds. */
void qnn_quantize_values(const float* x, int8_t* y, size_t count, float scale, int32_t zero_point, int32_t reciprocal);

/* LUT's loop (lut.c): y[i] = table[x[i]] for `count` bytes; COPY_SLICE requantizes through it. */
void qnn_lut_bytes(const uint8_t* table, const uint8_t* x, uint8_t* y, size_t count);
QNN_DECLARE_OPERATOR(reduce_f32)
QNN_DECLARE_OPERATOR(batch_matmul_f32)
QNN_DECLARE_OPERATOR(gather)
QNN_DECLARE_OPERATOR(convert_f32)

/* Batched products' batches (batch_matmul.c): the element offset of batch `index`'s matrix, batch[3]
 * outermost first with these element strides; and the last element a matrix of `matrix` elements at any
 * of them reaches, + 1. */
size_t qnn_batch_offset(const int32_t* batch, const int32_t* strides, size_t index);
int64_t qnn_batch_extent(const int32_t* batch, const int32_t* strides, int64_t matrix);

/* exp(x + negative_max) as onnxruntime's float Softmax computes each element (unary_f32.c: MLAS's
 * MlasComputeSumExpF32KernelFma3, lane by lane). */
float qnn_mlas_sum_expf(float x, float negative_max);
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#include "config.h"
#include "fmaf.h"
/* A four-lane float32 multiply-add rounded once, where QNN_FMA4_EXACT() says so: relaxed SIMD's madd, which
 * the engine fuses on CPUs with FMA (config.c asks it), or SIMD128's exact emulation (fmaf.h), always. */
#if defined(__wasm_relaxed_simd__)
#define QNN_FMA4(a, b, c) wasm_f32x4_relaxed_madd(a, b, c)
#define QNN_FMA4_EXACT() qnn_relaxed_madd_fused()
#else
#define QNN_FMA4(a, b, c) qnn_fmaf4(a, b, c)
#define QNN_FMA4_EXACT() 1
#endif
/* qnn_mlas_sum_expf of four values with QNN_FMA4: the same bits where QNN_FMA4_EXACT(). */
v128_t qnn_mlas_sum_exp4(v128_t x, v128_t negative_max);
#endif

#endif
