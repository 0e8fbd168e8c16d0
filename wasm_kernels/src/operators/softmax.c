/* SOFTMAX of int8 rows through a 256-entry exp table indexed by max - x (in [0, 255]), made by the
 * frontend; the row's sum is a sequential float sum.
 * arithmetic 0 (LiteRT's builtin kernel, optimized_ops::Softmax with PopulateSoftmaxLookupTable's
 * table expf(-input_scale * beta * d)): each output is round(e * (1 / (sum * output_scale))) + zp,
 * in float, halves away from zero (std::round), clamped.
 * arithmetic 1 (onnxruntime 1.32's QLinearSoftmax, contrib_ops/cpu/quantization/qlinear_softmax.cc
 * as its x86-64 wheel runs it, read from the machine code): each output is
 * nearbyint((double) e * Y / (double) sum) + zp clamped, in double, with Y = floor(1 / y_scale)
 * (inverse_output_scale). e * Y is exact in double (24-bit e, integer Y of at most 24 bits) and the
 * division is correctly rounded, so exact halves (equal maxima: four of them with Y = 254 give 63.5)
 * round to even as there.
 * arithmetic 2 (onnxruntime's float Softmax, MLAS's MlasComputeSoftmax with its x86-64 FMA3 kernels):
 * float32 rows; max from float32's lowest value up; each e = exp(x + (-max)) as its sum-exp kernel computes
 * it (qnn_mlas_sum_expf); the sum in its eight AVX lanes (lane j adds elements j, j + 8, ... in order),
 * the lanes added as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) (vhaddps twice); each output
 * e * (1 / sum). MLAS's AVX-512 kernels (16 lanes) sum in another order: on such a machine onnxruntime's
 * float Softmax may differ in the last bits. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"
#include "threadpool.h"

struct softmax_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  size_t rows, columns;
  float output_scale, inverse_output_scale;
  int32_t output_zero_point;
  int32_t arithmetic;
  int fused;         /* arithmetic 2: QNN_FMA4_EXACT() */
  float table[256];  /* table[d]: the exp of d = max - x */
};

QNN_PLAN_CODE int32_t qnn_create_softmax(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_softmax_record* r = record;
  if (!qnn_check_positive(&r->rows, 2, "softmax") || !qnn_check_int8(r->output_zero_point, "softmax")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->arithmetic < 0 || r->arithmetic > 2) {
    qnn_set_error("softmax: arithmetic must be 0 (TFLite), 1 (onnxruntime) or 2 (onnxruntime's float Softmax)");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t size = (int64_t) r->rows * r->columns * (r->arithmetic == 2 ? 4 : 1);
  const float* table = r->arithmetic == 2 ? NULL : qnn_plan_constant(r->table, 256 * sizeof(float), "softmax table");
  if (r->arithmetic != 2) {   /* arithmetic 2, float32 rows: no table, no quantization */
    if (table == NULL) return QNN_ERROR_INVALID_RECORD;
    for (int d = 0; d < 256; d++) {
      if (!(table[d] >= 0.0f && table[d] <= 0x1.0p+127f)) {
        qnn_set_error("softmax: the table must hold finite non-negative values");
        return QNN_ERROR_INVALID_RECORD;
      }
    }
    if (!(r->output_scale > 0.0f) || !(r->inverse_output_scale > 0.0f) || !(r->inverse_output_scale <= 0x1.0p+100f)) {
      qnn_set_error("softmax: the output scale and 1 / output scale must be positive");
      return QNN_ERROR_INVALID_RECORD;
    }
  }
  const int8_t* input = qnn_plan_tensor(plan, r->input, size, "softmax input");
  int8_t* output = qnn_plan_tensor(plan, r->output, size, "softmax output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct softmax_op* op = qnn_plan_alloc(plan, sizeof(struct softmax_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output;
  op->rows = r->rows;
  op->columns = r->columns;
  op->output_scale = r->output_scale;
  op->inverse_output_scale = r->inverse_output_scale;
  op->output_zero_point = r->output_zero_point;
  op->arithmetic = r->arithmetic;
#if defined(__wasm_simd128__)
  op->fused = QNN_FMA4_EXACT();
#else
  op->fused = 0;
#endif
  for (int d = 0; table != NULL && d < 256; d++) op->table[d] = table[d];
  *result = &op->base;
  return QNN_OK;
}

/* One row as onnxruntime's QLinearSoftmax (arithmetic 1). */
static void softmax_onnx_row(const struct softmax_op* op, const int8_t* x, int8_t* y) {
  const size_t columns = op->columns;
  const double inverse_output_scale = (double) op->inverse_output_scale;
  const double zero_point = (double) op->output_zero_point;
  int32_t max = -128;
  for (size_t i = 0; i < columns; i++) max = qnn_max_i32(max, x[i]);
  float sum = 0.0f;
  for (size_t i = 0; i < columns; i++) sum += op->table[max - x[i]];
  if (!(sum > 0.0f)) {  /* onnxruntime leaves such a row unwritten: write the zero point */
    for (size_t i = 0; i < columns; i++) y[i] = (int8_t) op->output_zero_point;
    return;
  }
  const double divisor = (double) sum;
  for (size_t i = 0; i < columns; i++) {
    double q = __builtin_nearbyint((double) op->table[max - x[i]] * inverse_output_scale / divisor) + zero_point;
    q = q < -128.0 ? -128.0 : q;
    q = q > 127.0 ? 127.0 : q;
    y[i] = (int8_t) (int32_t) q;
  }
}

/* One row as LiteRT's builtin kernel (arithmetic 0). */
static void softmax_tflite_row(const struct softmax_op* op, const int8_t* x, int8_t* y) {
  int32_t max = -128;
  for (size_t i = 0; i < op->columns; i++) max = qnn_max_i32(max, x[i]);
  float sum = 0.0f;
  for (size_t i = 0; i < op->columns; i++) sum += op->table[max - x[i]];
  const float multiplier = 1.0f / (sum * op->output_scale);
  for (size_t i = 0; i < op->columns; i++) {
    /* e * multiplier >= 0 (or NaN for a table of zeros); from 256 on every output is 127, and the
     * cast below stays in range */
    const float rescaled = op->table[max - x[i]] * multiplier;
    const float p = rescaled < 256.0f ? rescaled : 256.0f;
    const float whole = __builtin_truncf(p);
    const int32_t q = (int32_t) whole + (p - whole >= 0.5f) + op->output_zero_point;
    y[i] = (int8_t) (q > 127 ? 127 : q);
  }
}

/* One float32 row as onnxruntime's float Softmax (arithmetic 2). Where QNN_FMA4 rounds once (`fused`), eight
 * values at a time, one vector for lanes 0-3 and one for 4-7, as MLAS's AVX lanes add them; the rest of the row
 * (and all of it otherwise) one value at a time. */
QNN_PLAN_CODE __attribute__((noinline)) static void softmax_f32_row(const float* x, float* y, size_t columns, int fused) {
  float max = -0x1.fffffep+127f;
  for (size_t i = 0; i < columns; i++) max = x[i] > max ? x[i] : max;
  float lanes[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  size_t i = 0;
#if defined(__wasm_simd128__)
  if (fused && columns >= 8) {
    const v128_t negative_max = wasm_f32x4_splat(-max);
    v128_t low = wasm_f32x4_splat(0.0f), high = low;
    for (; i + 8 <= columns; i += 8) {
      const v128_t e0 = qnn_mlas_sum_exp4(wasm_v128_load(x + i), negative_max);
      const v128_t e1 = qnn_mlas_sum_exp4(wasm_v128_load(x + i + 4), negative_max);
      wasm_v128_store(y + i, e0);
      wasm_v128_store(y + i + 4, e1);
      low = wasm_f32x4_add(low, e0);
      high = wasm_f32x4_add(high, e1);
    }
    wasm_v128_store(lanes, low);
    wasm_v128_store(lanes + 4, high);
  }
#else
  (void) fused;
#endif
  for (; i < columns; i++) {
    y[i] = qnn_mlas_sum_expf(x[i], -max);
    lanes[i % 8] += y[i];
  }
  const float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  const float scale = 1.0f / sum;
  for (size_t k = 0; k < columns; k++) y[k] *= scale;
}

/* Rows are independent: split across threads (attention's softmax has one row per query and head). */
static void softmax_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct softmax_op* op = context;
  for (size_t row = first; row < first + count; row++) {
    if (op->arithmetic == 2) {
      softmax_f32_row((const float*) (const void*) op->input + row * op->columns,
                      (float*) (void*) op->output + row * op->columns, op->columns, op->fused);
      continue;
    }
    const int8_t* x = op->input + row * op->columns;
    int8_t* y = op->output + row * op->columns;
    if (op->arithmetic == 1) {
      softmax_onnx_row(op, x, y);
    } else {
      softmax_tflite_row(op, x, y);
    }
  }
}

void qnn_run_softmax(const struct qnn_op* base) {
  const struct softmax_op* op = (const struct softmax_op*) base;
  qnn_parallelize_ranges(softmax_rows, op, op->rows, 1, 4, (uint64_t) op->columns * (op->arithmetic == 2 ? 24 : 3),
                         QNN_TASK_ELEMENTS);
}
