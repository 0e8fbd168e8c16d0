/* COPY_SLICE: one input of a CONCATENATION. The input, viewed as [outer][inner_input], goes to
 * columns [output_offset, output_offset + inner_input) of the output viewed as [outer][inner_output],
 * requantized in fp32 (as REQUANTIZE) when its quantization differs from the output's. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"

struct copy_slice_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  size_t outer, inner_input, inner_output;
  float scale;
  int32_t input_zero_point, output_zero_point;
  int identity;
};

int32_t qnn_create_copy_slice(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_copy_slice_record* r = record;
  if (r->outer <= 0 || r->inner_input <= 0 || r->inner_output <= 0) {
    qnn_set_error("copy_slice: outer, inner_input and inner_output must be positive");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->output_offset < 0 || (int64_t) r->output_offset + r->inner_input > r->inner_output) {
    qnn_set_error("copy_slice: the slice [output_offset, output_offset + inner_input) is not inside inner_output");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_int8(r->input_zero_point, "copy_slice") || !qnn_check_int8(r->output_zero_point, "copy_slice")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!(__builtin_fabsf(r->scale) <= 0x1.0p+100f)) {
    qnn_set_error("copy_slice: the scale input_scale / output_scale is not finite");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int8_t* input = qnn_plan_tensor(plan, r->input, (int64_t) r->outer * r->inner_input, "copy_slice input");
  int8_t* output = qnn_plan_tensor(plan, r->output, (int64_t) r->outer * r->inner_output, "copy_slice output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct copy_slice_op* op = qnn_plan_alloc(plan, sizeof(struct copy_slice_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output + r->output_offset;
  op->outer = (size_t) r->outer;
  op->inner_input = (size_t) r->inner_input;
  op->inner_output = (size_t) r->inner_output;
  op->scale = r->scale;
  op->input_zero_point = r->input_zero_point;
  op->output_zero_point = r->output_zero_point;
  op->identity = r->scale == 1.0f && r->input_zero_point == r->output_zero_point;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_copy_slice(const struct qnn_op* base) {
  const struct copy_slice_op* op = (const struct copy_slice_op*) base;
  const int8_t* x = op->input;
  int8_t* y = op->output;
  for (size_t i = 0; i < op->outer; i++) {
    if (op->identity) {
      __builtin_memmove(y, x, op->inner_input);
    } else {
      for (size_t j = 0; j < op->inner_input; j++) {
        const float f = (float) ((int32_t) x[j] - op->input_zero_point) * op->scale;
        y[j] = qnn_qs8_quantize_clamped(f, op->output_zero_point, -128, 127);
      }
    }
    x += op->inner_input;
    y += op->inner_output;
  }
}
