/* DYNAMIC_MATMUL: onnxruntime's MatMulInteger + Cast + Mul + Add of a quantize_dynamic model, or its fused
 * MatMulIntegerToFloat / DynamicQuantizeMatMul (qnnweb.h).
 *
 * The weights are packed at load as int16 columns ([columns][depth rounded up to even], zeros past depth):
 * w - w_zp[n] with their sums, so that a run computes sum_k x_k (w - w_zp) - x_zp * sum (w - w_zp) with
 * the zero point of X, known only then, folded in per column; with saturate_pairs, the raw int8 weights,
 * which onnxruntime's AVX2 kernel multiplies with the raw uint8 activations. Each task converts a row of X
 * to int16 in its thread's scratch and takes its dot product with every column. Integer sums are exact and
 * the float steps are the same two roundings in every variant, so every module gives the same bytes. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

struct dynamic_matmul_op {
  struct qnn_op base;
  const int8_t* input;
  float* output;
  const void* parameters;
  size_t rows, depth, columns, padded_depth;
  const int16_t* weights;        /* [columns][padded_depth] */
  const int32_t* column_sums;    /* sum over k of the packed weights of each column */
  const int32_t* zero_points;    /* the weights' (int8 twin) zero points */
  const float* scales;
  const float* bias;             /* NULL: none */
  int32_t saturate_pairs;
};

QNN_PLAN_CODE static int32_t check_record(const struct qnn_dynamic_matmul_record* r) {
  if (!qnn_check_positive(&r->rows, 3, "dynamic_matmul")) return QNN_ERROR_INVALID_RECORD;
  if ((r->saturate_pairs & ~1) != 0 || r->depth > (1 << 16)) {
    qnn_set_error("dynamic_matmul: saturate_pairs not 0 or 1, or depth over 65536 (int32 sums could overflow)");
    return QNN_ERROR_INVALID_RECORD;
  }
  return QNN_OK;
}

QNN_PLAN_CODE int32_t qnn_create_dynamic_matmul(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_dynamic_matmul_record* r = record;
  int32_t status = check_record(r);
  if (status != QNN_OK) return status;
  const int64_t rows = r->rows, depth = r->depth, columns = r->columns, padded_depth = qnn_round_up(r->depth, 2);
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
  int32_t* zero_points = qnn_plan_alloc(plan, columns * 4);
  float* scales = qnn_plan_alloc(plan, columns * 4);
  float* bias = w_bias == NULL ? NULL : qnn_plan_alloc(plan, columns * 4);
  if (op == NULL || weights == NULL || sums == NULL || zero_points == NULL || scales == NULL ||
      (w_bias != NULL && bias == NULL) || !qnn_reserve_scratch((size_t) padded_depth * 2)) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }
  for (int64_t n = 0; n < columns; n++) {
    const int32_t shift = r->saturate_pairs ? 0 : w_zp[n];
    int32_t sum = 0;
    for (int64_t k = 0; k < padded_depth; k++) {
      const int32_t value = k < depth ? w[k * columns + n] - shift : 0;
      weights[n * padded_depth + k] = (int16_t) value;
      sum += value;
    }
    sums[n] = sum;
    zero_points[n] = w_zp[n];
    scales[n] = w_scales[n];
    if (bias != NULL) bias[n] = w_bias[n];
  }
  *op = (struct dynamic_matmul_op) {
    {QNN_OP_DYNAMIC_MATMUL}, input, output, parameters, (size_t) rows, (size_t) depth, (size_t) columns,
    (size_t) padded_depth, weights, sums, zero_points, scales, bias, r->saturate_pairs};
  *result = &op->base;
  return QNN_OK;
}

static int32_t dot(const int16_t* a, const int16_t* w, size_t n) {
  int32_t acc = 0;
  for (size_t k = 0; k < n; k++) acc += (int32_t) a[k] * (int32_t) w[k];
  return acc;
}

/* vpmaddubsw then vpmaddwd: each pair of products saturated to int16, the pairs summed in int32. */
static int32_t dot_saturated_pairs(const int16_t* a, const int16_t* w, size_t n) {
  int32_t acc = 0;
  for (size_t k = 0; k < n; k += 2) {
    int32_t pair = (int32_t) a[k] * (int32_t) w[k] + (int32_t) a[k + 1] * (int32_t) w[k + 1];
    pair = pair > 32767 ? 32767 : pair;
    pair = pair < -32768 ? -32768 : pair;
    acc += pair;
  }
  return acc;
}

struct matmul_pass {
  const struct dynamic_matmul_op* op;
  float x_scale;
  int32_t x_zero_point;  /* int8 twin */
};

static void multiply_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  const struct matmul_pass* pass = context;
  const struct dynamic_matmul_op* op = pass->op;
  const size_t depth = op->depth, padded_depth = op->padded_depth, columns = op->columns;
  /* saturate_pairs: the raw uint8 activations (twin + 128) and their zero point */
  const int32_t offset = op->saturate_pairs ? 128 : 0, x_zp = pass->x_zero_point + offset;
  int16_t* a = qnn_scratch(thread);
  for (size_t m = first; m < first + count; m++) {
    const int8_t* x = op->input + m * depth;
    int32_t row_sum = 0;
    for (size_t k = 0; k < depth; k++) {
      a[k] = (int16_t) (x[k] + offset);
      row_sum += a[k];
    }
    if (padded_depth != depth) a[depth] = 0;
    float* y = op->output + m * columns;
    for (size_t n = 0; n < columns; n++) {
      const int16_t* w = op->weights + n * padded_depth;
      int32_t acc = op->saturate_pairs ? dot_saturated_pairs(a, w, padded_depth) : dot(a, w, padded_depth);
      acc -= x_zp * op->column_sums[n];
      if (op->saturate_pairs) acc += op->zero_points[n] * ((int32_t) depth * x_zp - row_sum);
      const float product = (float) acc * (pass->x_scale * op->scales[n]);
      y[n] = op->bias != NULL ? product + op->bias[n] : product;
    }
  }
}

void qnn_run_dynamic_matmul(const struct qnn_op* base) {
  const struct dynamic_matmul_op* op = (const struct dynamic_matmul_op*) base;
  struct matmul_pass pass;
  qnn_memcpy(&pass.x_scale, op->parameters, 4);
  qnn_memcpy(&pass.x_zero_point, (const char*) op->parameters + 4, 4);
  pass.op = op;
  qnn_parallelize_ranges(multiply_rows, &pass, op->rows, 1, 4, (uint64_t) op->columns * op->depth, QNN_TASK_MACS);
}
