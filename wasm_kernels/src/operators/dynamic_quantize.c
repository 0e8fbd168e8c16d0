/* DYNAMIC_QUANTIZE: onnxruntime's DynamicQuantizeLinear (qnnweb.h). The range is found in one pass (a
 * single task: it is one pass over a layer's input, and the quantization below needs its result), then
 * QUANTIZE's arithmetic quantizes in parallel ranges. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

struct dynamic_quantize_op {
  struct qnn_op base;
  const float* input;
  int8_t* output;
  size_t size;
  void* parameters;
};

QNN_PLAN_CODE int32_t qnn_create_dynamic_quantize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_dynamic_quantize_record* r = record;
  if (r->size < 0) {
    qnn_set_error("dynamic_quantize: negative size");
    return QNN_ERROR_INVALID_RECORD;
  }
  const float* input = (const float*) qnn_plan_tensor(plan, r->input, (int64_t) r->size * 4, "dynamic_quantize input");
  int8_t* output = qnn_plan_tensor(plan, r->output, r->size, "dynamic_quantize output");
  void* parameters = qnn_plan_tensor(plan, r->output_parameters, 8, "dynamic_quantize output_parameters");
  if (input == NULL || output == NULL || parameters == NULL) return QNN_ERROR_INVALID_RECORD;
  if ((r->output_parameters & 3) != 0) {
    qnn_set_error("dynamic_quantize: output_parameters not 4-byte aligned");
    return QNN_ERROR_INVALID_RECORD;
  }
  struct dynamic_quantize_op* op = qnn_plan_alloc(plan, sizeof(struct dynamic_quantize_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  *op = (struct dynamic_quantize_op) {{QNN_OP_DYNAMIC_QUANTIZE}, input, output, (size_t) r->size, parameters};
  *result = &op->base;
  return QNN_OK;
}

struct quantize_pass {
  const struct dynamic_quantize_op* op;
  float scale;
  int32_t zero_point;  /* int8 twin */
};

static void quantize_range(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct quantize_pass* pass = context;
  qnn_quantize_values(pass->op->input + first, pass->op->output + first, count, pass->scale, pass->zero_point, 0);
}

void qnn_run_dynamic_quantize(const struct qnn_op* base) {
  const struct dynamic_quantize_op* op = (const struct dynamic_quantize_op*) base;
  /* MlasFindMinMaxElement, then the range widened to hold 0 (onnxruntime's GetQuantizationParameter) */
  float lo = 0.0f, hi = 0.0f;
  for (size_t i = 0; i < op->size; i++) {
    const float x = op->input[i];
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float zero_point = 0.0f - lo / scale;
  zero_point = zero_point > 255.0f ? 255.0f : zero_point;
  zero_point = zero_point < 0.0f ? 0.0f : zero_point;
  struct quantize_pass pass = {op, scale, (int32_t) __builtin_rintf(zero_point) - 128};
  float* parameters = op->parameters;
  parameters[0] = scale;
  ((int32_t*) op->parameters)[1] = pass.zero_point;
  qnn_parallelize_ranges(quantize_range, &pass, op->size, 64, 4, 1, QNN_TASK_ELEMENTS);
}
