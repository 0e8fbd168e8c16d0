/* MAXIMUM (and MINIMUM: the record's `minimum`) with numpy broadcasting.
 *
 * Broadcasting: binary_shape.h. Rows where both inputs are contiguous run a SIMD128 loop in the
 * simd128 / relaxed modules; other rows run scalar. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "operators/binary_shape.h"

#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

struct maximum_op {
  struct qnn_op base;
  struct binary_shape shape;
  int32_t minimum;
};

/* maximum_row and minimum_row: the larger / smaller of each pair (SIMD128 16 at a time when both
 * inputs are contiguous). */
#if defined(__wasm_simd128__)
#define QNN_PICK_SIMD128(simd_pick)                                                           \
  if (a_stride == 1 && b_stride == 1) {                                                      \
    for (; i + 16 <= n; i += 16) {                                                           \
      wasm_v128_store(output + i, simd_pick(wasm_v128_load(a + i), wasm_v128_load(b + i)));  \
    }                                                                                        \
  }
#else
#define QNN_PICK_SIMD128(simd_pick)
#endif

#define QNN_PICK_ROW(name, simd_pick, first_wins)                                             \
  static void name(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride, \
                   int8_t* output, const void* params) {                                      \
    (void) params;                                                                           \
    size_t i = 0;                                                                            \
    QNN_PICK_SIMD128(simd_pick)                                                              \
    for (; i < n; i++) {                                                                     \
      const int8_t x = a[i * a_stride], y = b[i * b_stride];                                 \
      output[i] = (first_wins) ? x : y;                                                      \
    }                                                                                        \
  }

QNN_PICK_ROW(maximum_row, wasm_i8x16_max, x > y)
QNN_PICK_ROW(minimum_row, wasm_i8x16_min, x < y)

QNN_PLAN_CODE int32_t qnn_create_maximum(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_maximum_record* r = record;
  if (r->minimum != 0 && r->minimum != 1) return binary_invalid("maximum", ": minimum must be 0 or 1");
  struct maximum_op* op = qnn_plan_alloc(plan, sizeof(struct maximum_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  const int32_t status = binary_shape_init(
      plan, r->input_a, r->input_b, r->output, r->b_constant, r->dims, r->a_strides, r->b_strides,
      "maximum", "maximum input a", "maximum input b", "maximum output", 1, 1, &op->shape);
  if (status != QNN_OK) return status;
  op->minimum = r->minimum;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_maximum(const struct qnn_op* base) {
  const struct maximum_op* op = (const struct maximum_op*) base;
  binary_run(&op->shape, op->minimum ? minimum_row : maximum_row, NULL);
}
