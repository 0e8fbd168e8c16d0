/* GATHER: rows of a constant table picked by run-time indices (qnnweb.h): ONNX Gather of a token
 * embedding table (int8, uint8 held as int8, or float32 rows) by a model's int64 input_ids. Rows are
 * copied; indices are read as ONNX defines them (negative ones count from the end), and one outside the
 * table gives a row of zeros rather than reading outside it. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

struct gather_op {
  struct qnn_op base;
  const char* table;
  const char* indices;
  char* output;
  size_t count, rows, row_bytes, index_bytes;
};

QNN_PLAN_CODE int32_t qnn_create_gather(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_gather_record* r = record;
  if (!qnn_check_positive(&r->count, 3, "gather")) return QNN_ERROR_INVALID_RECORD;
  if (r->index_bytes != 4 && r->index_bytes != 8) {
    qnn_set_error("gather: index_bytes must be 4 (int32) or 8 (int64)");
    return QNN_ERROR_INVALID_RECORD;
  }
  const char* table = qnn_plan_constant(r->table, (int64_t) r->rows * r->row_bytes, "gather table");
  const char* indices = (const char*) qnn_plan_tensor(plan, r->indices, (int64_t) r->count * r->index_bytes,
                                                      "gather indices");
  char* output = (char*) qnn_plan_tensor(plan, r->output, (int64_t) r->count * r->row_bytes, "gather output");
  if (table == NULL || indices == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct gather_op* op = qnn_plan_alloc(plan, sizeof(struct gather_op));
  char* rows = qnn_plan_alloc(plan, (int64_t) r->rows * r->row_bytes);   /* constants live during qnn_plan_add only */
  if (op == NULL || rows == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  qnn_memcpy(rows, table, (size_t) r->rows * (size_t) r->row_bytes);
  *op = (struct gather_op) {{0}, rows, indices, output, (size_t) r->count, (size_t) r->rows, (size_t) r->row_bytes,
                            (size_t) r->index_bytes};
  *result = &op->base;
  return QNN_OK;
}

QNN_PLAN_CODE void qnn_run_gather(const struct qnn_op* base) {
  const struct gather_op* op = (const struct gather_op*) base;
  const int64_t rows = (int64_t) op->rows;
  for (size_t i = 0; i < op->count; i++) {
    int64_t index = qnn_load_integer(op->indices, i, op->index_bytes);
    index += index < 0 ? rows : 0;
    char* y = op->output + i * op->row_bytes;
    if (index >= 0 && index < rows) {
      qnn_memcpy(y, op->table + (size_t) index * op->row_bytes, op->row_bytes);
    } else {
      qnn_memset(y, 0, op->row_bytes);
    }
  }
}
