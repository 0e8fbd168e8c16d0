/* DYNAMIC_MATMUL: onnxruntime's MatMulInteger + Cast + Mul + Add of a quantize_dynamic model, or its fused
 * MatMulIntegerToFloat / DynamicQuantizeMatMul (qnnweb.h), with MatMulInteger's exact int32 sums.
 *
 * The weights are packed at load as int16 columns ([columns][depth rounded up to 16], zeros past depth):
 * w - w_zp[n] with their sums, so that a run computes sum_k x_k (w - w_zp) - x_zp * sum (w - w_zp) with
 * the zero point of X, known only then, folded in per column. Each task converts two rows of X at a time to
 * int16 in its thread's scratch and takes their dot products (i32x4.dot_i16x8: |x| <= 255, |w - w_zp| <= 255,
 * exact) with four columns at a time. Integer sums are exact and the float steps are the same two roundings
 * in every variant, so every module gives the same bytes. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"
#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

#define DEPTH_BLOCK 16

struct dynamic_matmul_op {
  struct qnn_op base;
  const int8_t* input;
  float* output;
  const void* parameters;
  size_t rows, depth, columns, padded_depth;
  const int16_t* weights;        /* [columns][padded_depth]: w - w_zp[n] */
  const int32_t* column_sums;    /* sum over k of the packed weights of each column */
  const float* scales;
  const float* bias;             /* NULL: none */
};

QNN_PLAN_CODE static int32_t check_record(const struct qnn_dynamic_matmul_record* r) {
  if (!qnn_check_positive(&r->rows, 3, "dynamic_matmul")) return QNN_ERROR_INVALID_RECORD;
  if (r->depth > (1 << 16)) {
    qnn_set_error("dynamic_matmul: depth over 65536 (int32 sums could overflow)");
    return QNN_ERROR_INVALID_RECORD;
  }
  return QNN_OK;
}

QNN_PLAN_CODE int32_t qnn_create_dynamic_matmul(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_dynamic_matmul_record* r = record;
  int32_t status = check_record(r);
  if (status != QNN_OK) return status;
  const int64_t rows = r->rows, depth = r->depth, columns = r->columns, padded_depth = qnn_round_up(r->depth, DEPTH_BLOCK);
  const int8_t* input = qnn_plan_tensor(plan, r->input, rows * depth, "dynamic_matmul input");
  float* output = (float*) qnn_plan_tensor(plan, r->output, rows * columns * 4, "dynamic_matmul output");
  const void* parameters = qnn_plan_tensor(plan, r->input_parameters, 8, "dynamic_matmul input_parameters");
  const int8_t* w = qnn_plan_constant(r->weights, depth * columns, "dynamic_matmul weights");
  const int32_t* w_zp = qnn_plan_constant(r->weights_zero_points, columns * 4, "dynamic_matmul weights_zero_points");
  const float* w_scales = qnn_plan_constant(r->scales, columns * 4, "dynamic_matmul scales");
  const float* w_bias = r->bias == 0 ? NULL : qnn_plan_constant(r->bias, columns * 4, "dynamic_matmul bias");
  if (input == NULL || output == NULL || parameters == NULL || w == NULL || w_zp == NULL || w_scales == NULL ||
      (r->bias != 0 && w_bias == NULL)) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if ((r->input_parameters & 3) != 0) {
    qnn_set_error("dynamic_matmul: input_parameters not 4-byte aligned");
    return QNN_ERROR_INVALID_RECORD;
  }
  for (int64_t n = 0; n < columns; n++) {
    if (!qnn_check_int8(w_zp[n], "dynamic_matmul weights_zero_points")) return QNN_ERROR_INVALID_RECORD;
  }
  struct dynamic_matmul_op* op = qnn_plan_alloc(plan, sizeof(struct dynamic_matmul_op));
  int16_t* weights = qnn_plan_alloc(plan, columns * padded_depth * 2);
  int32_t* sums = qnn_plan_alloc(plan, columns * 4);
  float* scales = qnn_plan_alloc(plan, columns * 4);
  float* bias = w_bias == NULL ? NULL : qnn_plan_alloc(plan, columns * 4);
  if (op == NULL || weights == NULL || sums == NULL || scales == NULL || (w_bias != NULL && bias == NULL) ||
      !qnn_reserve_scratch((size_t) padded_depth * 4)) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }
  for (int64_t n = 0; n < columns; n++) {
    int32_t sum = 0;
    for (int64_t k = 0; k < padded_depth; k++) {
      const int32_t value = k < depth ? w[k * columns + n] - w_zp[n] : 0;
      weights[n * padded_depth + k] = (int16_t) value;
      sum += value;
    }
    sums[n] = sum;
    scales[n] = w_scales[n];
    if (bias != NULL) bias[n] = w_bias[n];
  }
  *op = (struct dynamic_matmul_op) {
    {QNN_OP_DYNAMIC_MATMUL}, input, output, parameters, (size_t) rows, (size_t) depth, (size_t) columns,
    (size_t) padded_depth, weights, sums, scales, bias};
  *result = &op->base;
  return QNN_OK;
}

/* out[r][c] = sum_k a[r][k] w[c * padded_depth + k] for two rows (a[1] may be a[0] again) and `count` (1 or 4)
 * columns. Inlined with a constant count, so that each form is a loop of its own over registers. */
static inline __attribute__((always_inline)) void dot_tile(const int16_t* const a[2], const int16_t* w,
                                                           size_t padded_depth, size_t count, int32_t out[2][4]) {
#if defined(__wasm_simd128__)
  v128_t acc[2][4];
  for (size_t c = 0; c < 4; c++) acc[0][c] = acc[1][c] = wasm_i32x4_splat(0);
  for (size_t k = 0; k < padded_depth; k += DEPTH_BLOCK) {
    const v128_t a_low[2] = {wasm_v128_load(a[0] + k), wasm_v128_load(a[1] + k)};
    const v128_t a_high[2] = {wasm_v128_load(a[0] + k + 8), wasm_v128_load(a[1] + k + 8)};
    for (size_t c = 0; c < count; c++) {
      const int16_t* column = w + c * padded_depth + k;
      const v128_t w_low = wasm_v128_load(column), w_high = wasm_v128_load(column + 8);
      for (size_t r = 0; r < 2; r++) {
        acc[r][c] = wasm_i32x4_add(acc[r][c], wasm_i32x4_add(wasm_i32x4_dot_i16x8(a_low[r], w_low),
                                                             wasm_i32x4_dot_i16x8(a_high[r], w_high)));
      }
    }
  }
  for (size_t r = 0; r < 2; r++) {
    for (size_t c = 0; c < count; c++) {
      out[r][c] = wasm_i32x4_extract_lane(acc[r][c], 0) + wasm_i32x4_extract_lane(acc[r][c], 1) +
                  wasm_i32x4_extract_lane(acc[r][c], 2) + wasm_i32x4_extract_lane(acc[r][c], 3);
    }
  }
#else
  for (size_t r = 0; r < 2; r++) {
    for (size_t c = 0; c < count; c++) {
      const int16_t* column = w + c * padded_depth;
      int32_t sum = 0;
      for (size_t k = 0; k < padded_depth; k++) sum += (int32_t) a[r][k] * column[k];
      out[r][c] = sum;
    }
  }
#endif
}

struct matmul_pass {
  const struct dynamic_matmul_op* op;
  float x_scale;
  int32_t x_zero_point;  /* int8 twin */
};

/* Row m of X (int8 twin) as int16, zeros past depth. */
static void widen_row(const struct dynamic_matmul_op* op, size_t m, int16_t* a) {
  const int8_t* x = op->input + m * op->depth;
  for (size_t k = 0; k < op->padded_depth; k++) a[k] = k < op->depth ? x[k] : 0;
}

/* Columns [first, first + count) of rows m .. m + rows - 1 (1 or 2): the sums, the zero point correction, then
 * the float scale and bias. */
static void multiply_columns(const struct matmul_pass* pass, const int16_t* const a[2], size_t m, size_t rows,
                             size_t first, size_t count) {
  const struct dynamic_matmul_op* op = pass->op;
  const int16_t* w = op->weights + first * op->padded_depth;
  int32_t sums[2][4];
  if (count == 4) dot_tile(a, w, op->padded_depth, 4, sums); else dot_tile(a, w, op->padded_depth, 1, sums);
  for (size_t r = 0; r < rows; r++) {
    float* y = op->output + (m + r) * op->columns;
    for (size_t c = 0; c < count; c++) {
      const size_t n = first + c;
      /* the zero point correction in uint32: int32 sums that wrap, as onnxruntime's do, without C's
       * undefined signed overflow (a product beyond int32 needs a depth near 2^15) */
      const uint32_t acc = (uint32_t) sums[r][c] - (uint32_t) pass->x_zero_point * (uint32_t) op->column_sums[n];
      const float product = (float) (int32_t) acc * (pass->x_scale * op->scales[n]);
      y[n] = op->bias != NULL ? product + op->bias[n] : product;
    }
  }
}

/* Rows [first, first + count) in pairs (each pair reads the packed weights once), four columns at a time. */
static void multiply_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  const struct matmul_pass* pass = context;
  const struct dynamic_matmul_op* op = pass->op;
  int16_t* scratch = qnn_scratch(thread);
  for (size_t m = first; m < first + count; m += 2) {
    const size_t rows = qnn_min_size(2, first + count - m);
    const int16_t* a[2] = {scratch, rows == 2 ? scratch + op->padded_depth : scratch};
    widen_row(op, m, scratch);
    if (rows == 2) widen_row(op, m + 1, scratch + op->padded_depth);
    size_t n = 0;
    for (; n + 4 <= op->columns; n += 4) multiply_columns(pass, a, m, rows, n, 4);
    for (; n < op->columns; n++) multiply_columns(pass, a, m, rows, n, 1);
  }
}

void qnn_run_dynamic_matmul(const struct qnn_op* base) {
  const struct dynamic_matmul_op* op = (const struct dynamic_matmul_op*) base;
  struct matmul_pass pass;
  qnn_memcpy(&pass.x_scale, op->parameters, 4);
  qnn_memcpy(&pass.x_zero_point, (const char*) op->parameters + 4, 4);
  pass.op = op;
  qnn_parallelize_ranges(multiply_rows, &pass, op->rows, 2, 4, (uint64_t) op->columns * op->depth, QNN_TASK_MACS);
}
