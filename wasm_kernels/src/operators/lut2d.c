/* LUT2D with numpy broadcasting (binary_shape.h): any function of two int8 values as a 256 x 256
 * table (ONNX's float Sub between DequantizeLinear and QuantizeLinear: the frontend computes
 * onnxruntime's float32 arithmetic for every pair), of int8 or of float32 results. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "operators/binary_shape.h"

struct lut2d_op {
  struct qnn_op base;
  struct binary_shape shape;
  const uint8_t* table;      /* [a + 128][b + 128] x output_bytes, copied into the plan */
};

static void lut2d_row(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                      int8_t* output, const void* params) {
  const uint8_t* table = params;
  for (size_t i = 0; i < n; i++) {
    const size_t row = (size_t) ((int32_t) a[i * a_stride] + 128), column = (size_t) ((int32_t) b[i * b_stride] + 128);
    output[i] = (int8_t) table[row * 256 + column];
  }
}

static void lut2d_f32_row(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                          int8_t* output, const void* params) {
  const uint8_t* table = params;
  for (size_t i = 0; i < n; i++) {
    const size_t row = (size_t) ((int32_t) a[i * a_stride] + 128), column = (size_t) ((int32_t) b[i * b_stride] + 128);
    qnn_memcpy(output + 4 * i, table + 4 * (row * 256 + column), 4);
  }
}

QNN_PLAN_CODE int32_t qnn_create_lut2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_lut2d_record* r = record;
  if (r->output_bytes != 1 && r->output_bytes != 4) return binary_invalid("lut2d", ": output_bytes must be 1 or 4");
  const int64_t table_bytes = 65536 * (int64_t) r->output_bytes;
  const uint8_t* table = qnn_plan_constant(r->table, table_bytes, "lut2d table");
  if (table == NULL) return QNN_ERROR_INVALID_RECORD;
  struct lut2d_op* op = qnn_plan_alloc(plan, sizeof(struct lut2d_op));
  uint8_t* copy = op != NULL ? qnn_plan_alloc(plan, table_bytes) : NULL;
  if (copy == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  qnn_memcpy(copy, table, (size_t) table_bytes);
  const int32_t status = binary_shape_init(
      plan, r->input_a, r->input_b, r->output, r->b_constant, r->dims, r->a_strides, r->b_strides,
      "lut2d", "lut2d input a", "lut2d input b", "lut2d output", 1, (size_t) r->output_bytes, &op->shape);
  if (status != QNN_OK) return status;
  op->table = copy;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_lut2d(const struct qnn_op* base) {
  const struct lut2d_op* op = (const struct lut2d_op*) base;
  binary_run(&op->shape, op->shape.output_bytes == 4 ? lut2d_f32_row : lut2d_row, op->table);
}
