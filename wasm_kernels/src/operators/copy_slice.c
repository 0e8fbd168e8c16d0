/* COPY_SLICE: one input of a CONCATENATION. The input, viewed as [outer][inner_input], goes to
 * columns [output_offset, output_offset + inner_input) of the output viewed as [outer][inner_output],
 * requantized in fp32 (as REQUANTIZE) when its quantization differs from the output's: through a table
 * of the 256 requantized bytes, made at plan time with that arithmetic (LUT's loop), rows split across
 * threads. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"
#include "threadpool.h"

struct copy_slice_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  size_t outer, inner_input, inner_output;
  int identity;
  uint8_t table[256] __attribute__((aligned(16)));  /* the requantized byte of each input byte */
};

QNN_PLAN_CODE int32_t qnn_create_copy_slice(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
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
  op->identity = r->scale == 1.0f && r->input_zero_point == r->output_zero_point;
  for (int32_t b = 0; b < 256; b++) {
    const float f = (float) ((int32_t) (int8_t) b - r->input_zero_point) * r->scale;
    op->table[b] = (uint8_t) qnn_qs8_quantize_clamped(f, r->output_zero_point, -128, 127);
  }
  *result = &op->base;
  return QNN_OK;
}

static void copy_slice_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct copy_slice_op* op = context;
  const int8_t* x = op->input + first * op->inner_input;
  int8_t* y = op->output + first * op->inner_output;
  for (size_t i = 0; i < count; i++, x += op->inner_input, y += op->inner_output) {
    if (op->identity) {
      __builtin_memmove(y, x, op->inner_input);
    } else {
      qnn_lut_bytes(op->table, (const uint8_t*) x, (uint8_t*) y, op->inner_input);
    }
  }
}

void qnn_run_copy_slice(const struct qnn_op* base) {
  const struct copy_slice_op* op = (const struct copy_slice_op*) base;
  qnn_parallelize_ranges(copy_slice_rows, op, op->outer, 1, 4, op->inner_input, QNN_TASK_ELEMENTS);
}
