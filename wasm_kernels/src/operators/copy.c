/* COPY: the bytes of one tensor into another (a no-op when the planner gave both the same memory). */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"

struct copy_op {
  struct qnn_op base;
  const void* input;
  void* output;
  size_t bytes;
};

QNN_PLAN_CODE int32_t qnn_create_copy(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_copy_record* r = record;
  if (r->bytes < 0) {
    qnn_set_error("copy: negative size");
    return QNN_ERROR_INVALID_RECORD;
  }
  const void* input = qnn_plan_tensor(plan, r->input, r->bytes, "copy");
  void* output = qnn_plan_tensor(plan, r->output, r->bytes, "copy");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct copy_op* op = qnn_plan_alloc(plan, sizeof(struct copy_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output;
  op->bytes = (size_t) r->bytes;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_copy(const struct qnn_op* base) {
  const struct copy_op* op = (const struct copy_op*) base;
  if (op->output != op->input) __builtin_memmove(op->output, op->input, op->bytes);
}
