/* Per-channel (ONNX per-axis) QUANTIZE float32 -> int8 and DEQUANTIZE int8 -> float32 of a tensor
 * viewed as [outer][channels][inner]; the arithmetic of each element is the per-tensor ops'
 * (quantize.c) with its channel's scale and zero point. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"

struct channels_op {
  struct qnn_op base;
  const void* input;
  void* output;
  size_t outer, channels, inner;
  const float* scales;       /* copied at qnn_plan_add */
  const int32_t* zero_points;
};

/* Both records have the same fields; element_bytes are the input's and output's element sizes. */
static int32_t create_channels(struct qnn_plan* plan, const struct qnn_quantize_channels_record* r,
                               int64_t input_element_bytes, int64_t output_element_bytes, const char* what,
                               struct qnn_op** result) {
  if (!qnn_check_positive(&r->outer, 3, what)) return QNN_ERROR_INVALID_RECORD;
  const int64_t outer_channels = (int64_t) r->outer * r->channels;
  if (outer_channels > INT32_MAX || outer_channels * r->inner > INT32_MAX) {
    qnn_set_error2(what, ": more than 2^31 elements");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t size = outer_channels * r->inner;
  void* input = qnn_plan_tensor(plan, r->input, size * input_element_bytes, what);
  void* output = qnn_plan_tensor(plan, r->output, size * output_element_bytes, what);
  const float* scales = qnn_plan_constant(r->scales, (int64_t) r->channels * 4, what);
  const int32_t* zero_points = qnn_plan_constant(r->zero_points, (int64_t) r->channels * 4, what);
  if (input == NULL || output == NULL || scales == NULL || zero_points == NULL) return QNN_ERROR_INVALID_RECORD;
  for (int32_t c = 0; c < r->channels; c++) {
    if (!qnn_check_int8(zero_points[c], what)) return QNN_ERROR_INVALID_RECORD;
    if (!(scales[c] > 0.0f) || scales[c] > 3.0e38f) {
      qnn_set_error2(what, ": every scale must be positive and finite");
      return QNN_ERROR_INVALID_RECORD;
    }
  }
  struct channels_op* op = qnn_plan_alloc(plan, sizeof(struct channels_op));
  float* scales_copy = qnn_plan_alloc(plan, (int64_t) r->channels * 4);
  int32_t* zero_points_copy = qnn_plan_alloc(plan, (int64_t) r->channels * 4);
  if (op == NULL || scales_copy == NULL || zero_points_copy == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  qnn_memcpy(scales_copy, scales, (size_t) r->channels * 4);
  qnn_memcpy(zero_points_copy, zero_points, (size_t) r->channels * 4);
  op->input = input;
  op->output = output;
  op->outer = (size_t) r->outer;
  op->channels = (size_t) r->channels;
  op->inner = (size_t) r->inner;
  op->scales = scales_copy;
  op->zero_points = zero_points_copy;
  *result = &op->base;
  return QNN_OK;
}

QNN_PLAN_CODE int32_t qnn_create_quantize_channels(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  return create_channels(plan, record, 4, 1, "quantize_channels", result);
}

void qnn_run_quantize_channels(const struct qnn_op* base) {
  const struct channels_op* op = (const struct channels_op*) base;
  const float* x = op->input;
  int8_t* y = op->output;
  for (size_t o = 0; o < op->outer; o++) {
    for (size_t c = 0; c < op->channels; c++) {
      const float scale = op->scales[c];
      const int32_t zero_point = op->zero_points[c];
      for (size_t i = 0; i < op->inner; i++) y[i] = qnn_qs8_quantize_clamped(x[i] / scale, zero_point, -128, 127);
      x += op->inner;
      y += op->inner;
    }
  }
}

QNN_PLAN_CODE int32_t qnn_create_dequantize_channels(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  return create_channels(plan, record, 1, 4, "dequantize_channels", result);
}

void qnn_run_dequantize_channels(const struct qnn_op* base) {
  const struct channels_op* op = (const struct channels_op*) base;
  const int8_t* x = op->input;
  float* y = op->output;
  for (size_t o = 0; o < op->outer; o++) {
    for (size_t c = 0; c < op->channels; c++) {
      const float scale = op->scales[c];
      const int32_t zero_point = op->zero_points[c];
      for (size_t i = 0; i < op->inner; i++) y[i] = (float) ((int32_t) x[i] - zero_point) * scale;
      x += op->inner;
      y += op->inner;
    }
  }
}
