/* CONVERT_F32: int32 or int64 -> float32 (qnnweb.h), ONNX Cast of an integer model input to float (the
 * attention mask of a text encoder), rounded to nearest even as C's conversion and onnxruntime's Cast. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"

struct convert_f32_op {
  struct qnn_op base;
  const char* input;
  float* output;
  size_t size, input_bytes;
};

QNN_PLAN_CODE int32_t qnn_create_convert_f32(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_convert_f32_record* r = record;
  if (!qnn_check_positive(&r->size, 1, "convert_f32")) return QNN_ERROR_INVALID_RECORD;
  if (r->input_bytes != 4 && r->input_bytes != 8) {
    qnn_set_error("convert_f32: input_bytes must be 4 (int32) or 8 (int64)");
    return QNN_ERROR_INVALID_RECORD;
  }
  const char* input = (const char*) qnn_plan_tensor(plan, r->input, (int64_t) r->size * r->input_bytes,
                                                    "convert_f32 input");
  float* output = (float*) qnn_plan_tensor(plan, r->output, (int64_t) r->size * 4, "convert_f32 output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct convert_f32_op* op = qnn_plan_alloc(plan, sizeof(struct convert_f32_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  *op = (struct convert_f32_op) {{0}, input, output, (size_t) r->size, (size_t) r->input_bytes};
  *result = &op->base;
  return QNN_OK;
}

QNN_PLAN_CODE void qnn_run_convert_f32(const struct qnn_op* base) {
  const struct convert_f32_op* op = (const struct convert_f32_op*) base;
  for (size_t i = 0; i < op->size; i++) op->output[i] = (float) qnn_load_integer(op->input, i, op->input_bytes);
}
