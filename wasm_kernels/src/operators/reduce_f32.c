/* REDUCE_F32: float32 means (or sums) as onnxruntime 1.32's float ReduceMean / ReduceSum compute them
 * (core/providers/cpu/reduction/reduction_ops.h), in one of two of its orders (the record's arithmetic):
 *
 * arithmetic 0, over the last axes: each row of [rows][columns] (FastReduceKR:
 * ConstEigenVectorArrayMap(row).sum(), then divided by the count; a reduction over every axis takes Eigen's
 * mean(), the same sum and division). Eigen's sum (Redux.h, LinearVectorizedTraversal, SSE packets of 4
 * floats) starts its packets at the row's first 16-byte-aligned element: two packet accumulators over
 * blocks of 8, added, one more packet when 4 or more are left, the lanes added as (l0 + l2) + (l1 + l3)
 * (predux), then the elements before the first aligned one and those after the last packet, in order; a
 * row without a whole packet after its aligned start is summed in order. The alignment is that of the row
 * in onnxruntime's buffer, whose start is 64-byte aligned: row r starts at element r * columns, so its
 * packets start at element (-r * columns) mod 4; never the address where qnnweb's arena holds the tensor,
 * so the result is the same wherever the planner puts it. Accumulators start at -0.0, which adds nothing
 * to any float (-0 + +0 = +0, -0 + -0 = -0), so they hold exactly what Eigen's, loaded from the first
 * packets, do.
 *
 * arithmetic 1, over leading axes: each column of [rows][columns] (FastReduceRK: the first row copied,
 * then each next row added element by element, then divided by the count; for small shapes its generic
 * loop adds in the same order from +0, which differs only in the sign of a column of -0.0 alone), written
 * to float32 [columns].
 *
 * arithmetic 2, each row of [rows][columns] as MLAS's global pooling kernel sums it (MlasPoolGlobalKernel: a
 * float GlobalAveragePool, each channel of an NCHW tensor one row): four lanes from +0 over the row's packets
 * of 4 from its first element, added as (l0 + l2) + (l1 + l3), then the elements after the last packet in
 * order, then divided by the count.
 *
 * Plain float32 additions in these orders (no -ffast-math: the compiler keeps them), so every variant gives
 * the same bits. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

enum { REDUCE_MEAN = 0, REDUCE_SUM = 1 };

struct reduce_f32_op {
  struct qnn_op base;
  const float* input;
  float* output;
  size_t rows, columns;
  int32_t operation, arithmetic;
};

QNN_PLAN_CODE int32_t qnn_create_reduce_f32(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_reduce_f32_record* r = record;
  if (!qnn_check_positive(&r->rows, 2, "reduce_f32")) return QNN_ERROR_INVALID_RECORD;
  if ((r->operation != REDUCE_MEAN && r->operation != REDUCE_SUM) || r->arithmetic < 0 || r->arithmetic > 2) {
    qnn_set_error("reduce_f32: operation must be 0 (mean) or 1 (sum), arithmetic 0 (rows), 1 (columns) or 2 "
                  "(rows as MLAS's pooling)");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t size = (int64_t) r->rows * r->columns;
  const float* input = (const float*) qnn_plan_tensor(plan, r->input, size * 4, "reduce_f32 input");
  float* output = (float*) qnn_plan_tensor(plan, r->output, (int64_t) (r->arithmetic == 1 ? r->columns : r->rows) * 4,
                                           "reduce_f32 output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct reduce_f32_op* op = qnn_plan_alloc(plan, sizeof(struct reduce_f32_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  *op = (struct reduce_f32_op) {{0}, input, output, (size_t) r->rows, (size_t) r->columns, r->operation, r->arithmetic};
  *result = &op->base;
  return QNN_OK;
}

/* Eigen's sum of x[0 .. n), its packets from element `start` (<= n) on (see the top of the file). */
static float eigen_sum(const float* x, size_t n, size_t start) {
  const size_t packets = (n - start) / 4 * 4, pairs = (n - start) / 8 * 8;
  const float* p = x + start;
  float a[4] = {-0.0f, -0.0f, -0.0f, -0.0f}, b[4] = {-0.0f, -0.0f, -0.0f, -0.0f};
  size_t i = 0;
  for (; i < pairs; i += 8) {
    for (size_t j = 0; j < 4; j++) {
      a[j] += p[i + j];
      b[j] += p[i + 4 + j];
    }
  }
  for (size_t j = 0; j < 4; j++) a[j] += b[j];
  if (i < packets) {
    for (size_t j = 0; j < 4; j++) a[j] += p[i + j];
  }
  float sum = (a[0] + a[2]) + (a[1] + a[3]);
  for (size_t k = 0; k < start; k++) sum += x[k];
  for (size_t k = start + packets; k < n; k++) sum += x[k];
  return sum;
}

/* MLAS's global pooling sum of x[0 .. n) (see the top of the file). */
__attribute__((noinline)) static float mlas_pool_sum(const float* x, size_t n) {
  float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  size_t i = 0;
  QNN_SCALAR_LOOP
  for (; i + 4 <= n; i += 4) {
    for (size_t j = 0; j < 4; j++) a[j] += x[i + j];
  }
  float sum = (a[0] + a[2]) + (a[1] + a[3]);
  QNN_SCALAR_LOOP
  for (; i < n; i++) sum += x[i];
  return sum;
}

static void reduce_f32_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct reduce_f32_op* op = context;
  const size_t n = op->columns;
  const float divisor = (float) n;
  for (size_t row = first; row < first + count; row++) {
    const size_t aligned = (size_t) (-(row * n)) & 3;  /* elements before the row's first 16-byte boundary */
    const float sum = op->arithmetic == 2 ? mlas_pool_sum(op->input + row * n, n)
                                          : eigen_sum(op->input + row * n, n, aligned < n ? aligned : n);
    op->output[row] = op->operation == REDUCE_MEAN ? sum / divisor : sum;
  }
}

/* Columns [first, first + count): the first row, then each next row added in order (vectorizable: each
 * column's additions stay its own, in row order). */
static void reduce_f32_columns(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct reduce_f32_op* op = context;
  const float* x = op->input + first;
  float* y = op->output + first;
  for (size_t k = 0; k < count; k++) y[k] = x[k];
  for (size_t row = 1; row < op->rows; row++) {
    x += op->columns;
    for (size_t k = 0; k < count; k++) y[k] += x[k];
  }
  if (op->operation == REDUCE_MEAN) {
    const float divisor = (float) op->rows;
    for (size_t k = 0; k < count; k++) y[k] /= divisor;
  }
}

void qnn_run_reduce_f32(const struct qnn_op* base) {
  const struct reduce_f32_op* op = (const struct reduce_f32_op*) base;
  if (op->arithmetic == 1) {
    qnn_parallelize_ranges(reduce_f32_columns, op, op->columns, 16, 4, op->rows, QNN_TASK_ELEMENTS);
  } else {
    qnn_parallelize_ranges(reduce_f32_rows, op, op->rows, 1, 4, op->columns, QNN_TASK_ELEMENTS);
  }
}
