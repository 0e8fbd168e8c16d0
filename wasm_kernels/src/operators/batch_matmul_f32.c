/* BATCH_MATMUL_F32: Y[b] = A[b] B[b] of two float32 activations (qnnweb.h), the attention products of a
 * dynamically quantized model (onnxruntime runs them as float MatMul: MLAS's SGEMM). Each output is its
 * products summed in depth order from the first, each multiply-add fused, as MLAS's x86-64 FMA kernels
 * sum each output for depths up to their stride (128). A dynamically quantized model quantizes these
 * results again, so a last-bit difference here moves whole quanta later: the simd128 and scalar variants
 * fuse exactly (qnn_fmaf's method), the relaxed one with relaxed multiply-adds where the engine fuses them
 * (qnn_relaxed_madd_fused: machines with FMA; four rows at a time, sharing each load of B), else by qnn_fmaf too.
 * Rows of every batch split across threads. */
#include "qnnweb.h"
#include "common.h"
#include "config.h"
#include "operators.h"
#include "fmaf.h"
#include "threadpool.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#pragma clang fp contract(off)

struct batch_matmul_f32_op {
  struct qnn_op base;
  struct qnn_batch_matmul_f32_record r;
  const float* a;
  const float* b;
  float* output;
  size_t rows;   /* over every batch */
  int fused;     /* qnn_relaxed_madd_fused(): the relaxed variant's multiply-adds are FMAs */
};

QNN_PLAN_CODE int32_t qnn_create_batch_matmul_f32(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_batch_matmul_f32_record* r = record;
  if (!qnn_check_positive(r->batch, 3, "batch_matmul_f32") || !qnn_check_positive(&r->rows, 3, "batch_matmul_f32")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  for (int k = 0; k < 3; k++) {
    if (r->a_strides[k] < 0 || r->b_strides[k] < 0) {
      qnn_set_error("batch_matmul_f32: negative strides");
      return QNN_ERROR_INVALID_RECORD;
    }
  }
  const int64_t batches = (int64_t) r->batch[0] * r->batch[1] * r->batch[2];
  const float* a = (const float*) qnn_plan_tensor(
      plan, r->input_a, qnn_batch_extent(r->batch, r->a_strides, (int64_t) r->rows * r->depth) * 4, "batch_matmul_f32 input_a");
  const float* b = (const float*) qnn_plan_tensor(
      plan, r->input_b, qnn_batch_extent(r->batch, r->b_strides, (int64_t) r->depth * r->columns) * 4,
      "batch_matmul_f32 input_b");
  float* output = (float*) qnn_plan_tensor(plan, r->output, batches * r->rows * r->columns * 4, "batch_matmul_f32 output");
  if (a == NULL || b == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct batch_matmul_f32_op* op = qnn_plan_alloc(plan, sizeof(struct batch_matmul_f32_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  *op = (struct batch_matmul_f32_op) {{0}, *r, a, b, output, (size_t) (batches * r->rows), qnn_relaxed_madd_fused()};
  *result = &op->base;
  return QNN_OK;
}

/* y[n] for n in [first, columns): each multiply-add fused, exactly (qnn_fmaf). */
static void fused_columns(const float* x, const float* b, float* y, size_t depth, size_t columns, size_t first) {
  for (size_t n = first; n < columns; n++) {
    float acc = 0.0f;
    for (size_t k = 0; k < depth; k++) acc = qnn_fmaf(x[k], b[k * columns + n], acc);
    y[n] = acc;
  }
}

#if defined(__wasm_relaxed_simd__)
/* y[first .. columns) = x[0 .. depth) B, B's row k at b + k * columns: relaxed multiply-adds, 8 columns then 4
 * at a time, where the engine fuses them (`fused`: qnn_relaxed_madd_fused); the rest, or all, by qnn_fmaf. */
__attribute__((noinline)) static void row_times_matrix(const float* x, const float* b, float* y, size_t depth, size_t columns, int fused,
                             size_t first) {
  size_t n = first;
  for (; fused && n + 8 <= columns; n += 8) {
    v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0;
    for (size_t k = 0; k < depth; k++) {
      const v128_t xk = wasm_v128_load32_splat(x + k);
      const float* bk = b + k * columns + n;
      acc0 = wasm_f32x4_relaxed_madd(xk, wasm_v128_load(bk), acc0);
      acc1 = wasm_f32x4_relaxed_madd(xk, wasm_v128_load(bk + 4), acc1);
    }
    wasm_v128_store(y + n, acc0);
    wasm_v128_store(y + n + 4, acc1);
  }
  for (; fused && n + 4 <= columns; n += 4) {
    v128_t acc = wasm_f32x4_splat(0.0f);
    for (size_t k = 0; k < depth; k++) {
      acc = wasm_f32x4_relaxed_madd(wasm_v128_load32_splat(x + k), wasm_v128_load(b + k * columns + n), acc);
    }
    wasm_v128_store(y + n, acc);
  }
  fused_columns(x, b, y, depth, columns, n);
}

/* Four rows x[r * depth ..] times B into y[r * columns ..], 8 columns at a time sharing each load of B (engines
 * that fuse relaxed multiply-adds only), the same sums as row_times_matrix's; the last columns by it. */
static void four_rows_times_matrix(const float* x, const float* b, float* y, size_t depth, size_t columns) {
  size_t n = 0;
  for (; n + 8 <= columns; n += 8) {
    v128_t acc[4][2];
    for (size_t r = 0; r < 4; r++) acc[r][0] = acc[r][1] = wasm_f32x4_splat(0.0f);
    _Pragma("clang loop unroll(disable)")
    for (size_t k = 0; k < depth; k++) {
      const v128_t b0 = wasm_v128_load(b + k * columns + n), b1 = wasm_v128_load(b + k * columns + n + 4);
      for (size_t r = 0; r < 4; r++) {
        const v128_t xk = wasm_v128_load32_splat(x + r * depth + k);
        acc[r][0] = wasm_f32x4_relaxed_madd(xk, b0, acc[r][0]);
        acc[r][1] = wasm_f32x4_relaxed_madd(xk, b1, acc[r][1]);
      }
    }
    for (size_t r = 0; r < 4; r++) {
      wasm_v128_store(y + r * columns + n, acc[r][0]);
      wasm_v128_store(y + r * columns + n + 4, acc[r][1]);
    }
  }
  for (size_t r = 0; r < 4; r++) row_times_matrix(x + r * depth, b, y + r * columns, depth, columns, 1, n);
}
#else
#if defined(__wasm_simd128__)
/* y[n .. n + 4) of row x times B, each multiply-add fused exactly (qnn_fmaf4). */
static void four_columns(const float* x, const float* b, float* y, size_t depth, size_t columns) {
  v128_t acc = wasm_f32x4_splat(0.0f);
  for (size_t k = 0; k < depth; k++) acc = qnn_fmaf4(wasm_v128_load32_splat(x + k), wasm_v128_load(b + k * columns), acc);
  wasm_v128_store(y, acc);
}
#endif

/* y[0 .. columns) = x[0 .. depth) B, B's row k at b + k * columns: each multiply-add fused exactly, as
 * MLAS's FMA kernels compute it (four columns at a time in doubles with SIMD128, the rest by qnn_fmaf). */
static void row_times_matrix(const float* x, const float* b, float* y, size_t depth, size_t columns, int fused,
                             size_t first) {
  (void) fused;
  size_t n = first;
#if defined(__wasm_simd128__)
  for (; n + 4 <= columns; n += 4) four_columns(x, b + n, y + n, depth, columns);
#endif
  fused_columns(x, b, y, depth, columns, n);
}
#endif

static void matmul_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct batch_matmul_f32_op* op = context;
  const size_t rows = (size_t) op->r.rows, depth = (size_t) op->r.depth, columns = (size_t) op->r.columns;
  for (size_t row = first; row < first + count;) {
    const size_t batch = row / rows, m = row % rows;
    const float* x = op->a + qnn_batch_offset(op->r.batch, op->r.a_strides, batch) + m * depth;
    const float* b = op->b + qnn_batch_offset(op->r.batch, op->r.b_strides, batch);
#if defined(__wasm_relaxed_simd__)
    if (op->fused && m + 4 <= rows && row + 4 <= first + count) {   /* four rows of one batch */
      four_rows_times_matrix(x, b, op->output + row * columns, depth, columns);
      row += 4;
      continue;
    }
#endif
    row_times_matrix(x, b, op->output + row * columns, depth, columns, op->fused, 0);
    row++;
  }
}

void qnn_run_batch_matmul_f32(const struct qnn_op* base) {
  const struct batch_matmul_f32_op* op = (const struct batch_matmul_f32_op*) base;
  const uint64_t row_macs = (uint64_t) op->r.depth * (uint64_t) op->r.columns;
  qnn_parallelize_ranges(matmul_rows, op, op->rows, 1, 4, row_macs, QNN_TASK_MACS);
}
