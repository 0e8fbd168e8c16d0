/* LAYER_NORM: normalization of int8 rows with onnxruntime 1.32's float arithmetic, as its x86-64 wheel
 * computes it on a CPU with AVX2 and FMA (read from the wheel's machine code: the C++ source leaves the
 * order of operations to the compiler and MLAS). Each row is dequantized ((q - zp) * scale, as its
 * DequantizeLinear), normalized, scaled and shifted by float32 gamma / beta, and quantized as its
 * QuantizeLinear (rint(y / output_scale) + zp, clamped). With a table, the input's values are the table's (a float
 * op onnxruntime ran on the dequantized input first: one table, or one per column), and with float_output the
 * result is written as float32 (a model's float output). With float_input the input is float32 (a float op's
 * result), its values read as they are.
 * arithmetic 0, LayerNormalization (core/providers/cpu/nn/layer_norm_impl.cc, ComputeJob for float):
 *   rows of up to 7: Welford's update in float32: delta = x - mean, mean += delta / k, m2 += (x - mean) * delta;
 *     d = sqrtf(m2 / n + eps); y = (x - mean) / d * gamma + beta.
 *   longer rows, MLAS's AVX2 kernel: mean = (float) (double sum / n), the double sum in 4 lanes over blocks of 4
 *     then the rest in order; squares of (x - mean) fused-multiply-added into 8 float32 lanes over blocks of 8,
 *     the lanes added as ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), then 4 products added one by one
 *     when 4 or more are left, the last ones fused; inv = 1 / sqrtf(sum / n + eps);
 *     y = fma((x - mean) * inv, gamma, beta).
 * arithmetic 1, InstanceNormalization (core/providers/cpu/nn/instance_norm.cc, Eigen's reductions with
 *   SSE's 4 lanes): mean = eigen_sum(x) / n; var_sum = eigen_sum((x - mean)^2), its packets from element 0
 *   (an expression has no address for Eigen to align: it loads unaligned packets from the start);
 *   inv = 1 / sqrtf(var_sum / n + eps); s = inv * gamma[c]; t = beta[c] - mean * s; y = x * s + t,
 *   c = row % channels.
 * Scalar in every variant (wasm has no fused multiply-add: qnn_fmaf computes x86's exactly), rows split
 * across threads. */
#include "qnnweb.h"
#include "common.h"
#include "fmaf.h"
#include "operators.h"
#include "requantization.h"
#include "threadpool.h"

/* Loops kept as written, one element at a time: unrolled or vectorized they computed the same floats in
 * twice the code (every module's size counts). */

struct layer_norm_op {
  struct qnn_op base;
  struct qnn_layer_norm_record r;  /* its sizes, arithmetic, epsilon, output quantization */
  const uint8_t* input;   /* int8, or float32 with r.float_input */
  void* output;
  const float* gamma;
  const float* beta;
  const float* values;  /* by the byte's bits: (q - zp) * scale, as DequantizeLinear gives it, or the table's */
  size_t stride;        /* 256 where each column has a table of its own, else 0 */
  float dequantized[256];
};

/* The float value of element k of a row starting at x. */
static inline float value(const struct layer_norm_op* op, const uint8_t* x, size_t k) {
  return op->r.float_input ? ((const float*) x)[k] : op->values[k * op->stride + x[k]];
}

QNN_PLAN_CODE int32_t qnn_create_layer_norm(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_layer_norm_record* r = record;
  if (!qnn_check_positive(&r->rows, 3, "layer_norm") || !qnn_check_int8(r->input_zero_point, "layer_norm") ||
      !qnn_check_int8(r->output_zero_point, "layer_norm")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if (((r->arithmetic != 0 || r->channels != r->columns) && (r->arithmetic != 1 || r->rows % r->channels != 0)) ||
      !(r->input_scale > 0.0f && r->input_scale < 3.0e38f) || !(r->output_scale > 0.0f && r->output_scale < 3.0e38f) ||
      !(r->epsilon >= 0.0f && r->epsilon < 3.0e38f) || (uint32_t) r->table_per_column > 1 ||
      (uint32_t) r->float_output > 1 || (uint32_t) r->float_input > 1 || (r->float_input && r->table != 0)) {
    qnn_set_error("layer_norm: arithmetic 0 needs channels == columns, 1 rows a multiple of channels; scales "
                  "positive and finite, epsilon non-negative and finite; table_per_column, float_output, "
                  "float_input 0 or 1, no table with float_input");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t size = (int64_t) r->rows * r->columns, parameter_bytes = (int64_t) r->channels * 4;
  const uint8_t* input = (const uint8_t*) qnn_plan_tensor(plan, r->input, r->float_input ? size * 4 : size,
                                                          "layer_norm input");
  int8_t* output = qnn_plan_tensor(plan, r->output, r->float_output ? size * 4 : size, "layer_norm output");
  const int64_t table_bytes = r->table_per_column ? (int64_t) r->columns * 1024 : 1024;
  const float* table = r->table != 0 ? qnn_plan_constant(r->table, table_bytes, "layer_norm table") : NULL;
  if (r->table != 0 && table == NULL) return QNN_ERROR_INVALID_RECORD;
  const float* gamma = qnn_plan_constant(r->gamma, parameter_bytes, "layer_norm gamma");
  const float* beta = qnn_plan_constant(r->beta, parameter_bytes, "layer_norm beta");
  if (input == NULL || output == NULL || gamma == NULL || beta == NULL) return QNN_ERROR_INVALID_RECORD;
  struct layer_norm_op* op = qnn_plan_alloc(plan, sizeof(struct layer_norm_op));
  float* parameters = qnn_plan_alloc(plan, parameter_bytes * 2 + (table != NULL ? table_bytes : 0));
  if (op == NULL || parameters == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  qnn_memcpy(parameters, gamma, (size_t) parameter_bytes);
  qnn_memcpy(parameters + r->channels, beta, (size_t) parameter_bytes);
  op->r = *r;
  op->input = input;
  op->output = output;
  op->gamma = parameters;
  op->beta = parameters + r->channels;
QNN_SCALAR_LOOP
  for (int32_t q = -128; q < 128; q++) op->dequantized[(uint8_t) q] = (float) (q - r->input_zero_point) * r->input_scale;
  op->values = op->dequantized;
  op->stride = r->table_per_column ? 256 : 0;
  if (table != NULL) {
    qnn_memcpy(parameters + 2 * r->channels, table, (size_t) table_bytes);
    op->values = parameters + 2 * r->channels;
  }
  *result = &op->base;
  return QNN_OK;
}

/* Eigen's sum over a row of a Map'ed float vector with SSE packets of 4 (Redux.h, LinearVectorizedTraversal)
 * of the values or, with `squares`, of (value - mean)^2: the packets from element `start` (the values': the
 * first 16-byte-aligned one, the row beginning at element row * columns of a 64-byte-aligned buffer) into two accumulators over
 * blocks of 8, added, one more packet, the lanes added as (l0 + l2) + (l1 + l3), then the elements before
 * `start` and after the last packet, in order. Lanes starting at -0 change nothing (-0 + t is t, -0 too); without
 * a whole packet it is the sequential sum, as Eigen's. */
__attribute__((noinline)) static float eigen_sum(const struct layer_norm_op* op, const uint8_t* x, size_t start, int squares, float mean) {
  const size_t n = (size_t) op->r.columns, packets = (n - start) / 4 * 4, pairs = (n - start) / 8 * 8;
  float lanes[8] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f}, sum = -0.0f;
QNN_SCALAR_LOOP
  for (size_t i = 0; i <= n; i++) {
    if (i == pairs) {
      for (size_t j = 0; j < 4; j++) lanes[j] += lanes[j + 4];
    }
    if (i == packets) sum = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
    if (i == n) break;
    /* packet elements first (i < packets: element start + i), then the others in order */
    const size_t k = i < packets ? start + i : i - packets < start ? i - packets : i;
    const float v = value(op, x, k), t = squares ? (v - mean) * (v - mean) : v;
    if (i < packets) {
      lanes[i < pairs ? i & 7 : i & 3] += t;
    } else {
      sum += t;
    }
  }
  return sum;
}

/* One row: its statistics as onnxruntime computes them (see the top of the file), then each element
 * normalized and quantized. */
static void layer_norm_row(const struct layer_norm_op* op, size_t row) {
  const size_t n = (size_t) op->r.columns;
  const uint8_t* x = op->input + (op->r.float_input ? row * n * 4 : row * n);
  int8_t* y = (int8_t*) op->output + row * n;
  float* y_float = (float*) op->output + row * n;
  const float count = (float) n;
  float mean = 0.0f, inverse = 1.0f, deviation = 1.0f, scale = 1.0f, shift = 0.0f;
  if (op->r.arithmetic == 1) {
    const size_t start = (size_t) (-(row * n)) & 3;
    const size_t aligned = start < n ? start : n;
    mean = eigen_sum(op, x, aligned, 0, 0.0f) / count;
    inverse = 1.0f / __builtin_sqrtf(eigen_sum(op, x, 0, 1, mean) / count + op->r.epsilon);
    const size_t channel = row % (size_t) op->r.channels;
    scale = inverse * op->gamma[channel];
    shift = op->beta[channel] - mean * scale;
  } else if (n <= 7) {
    float m2 = 0.0f;
QNN_SCALAR_LOOP
    for (size_t k = 0; k < n; k++) {
      const float v = value(op, x, k), delta = v - mean;
      mean += delta / (float) (k + 1);
      m2 += (v - mean) * delta;
    }
    deviation = __builtin_sqrtf(m2 / count + op->r.epsilon);
  } else {
    double lanes[4] = {0.0, 0.0, 0.0, 0.0};
    size_t k = 0;
QNN_SCALAR_LOOP
    for (; k < n / 4 * 4; k++) lanes[k & 3] += (double) value(op, x, k);
    double total = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
QNN_SCALAR_LOOP
    for (; k < n; k++) total += (double) value(op, x, k);
    mean = (float) (total / (double) n);
    float squares[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
QNN_SCALAR_LOOP
    for (k = 0; k < n / 8 * 8; k++) {
      const float d = value(op, x, k) - mean;
      squares[k & 7] = qnn_fmaf(d, d, squares[k & 7]);
    }
    float sum = ((squares[0] + squares[4]) + (squares[2] + squares[6])) + ((squares[1] + squares[5]) + (squares[3] + squares[7]));
    const size_t products = n - k >= 4 ? k + 4 : k;  /* 4 or more left: the first 4 squared, then added */
QNN_SCALAR_LOOP
    for (; k < n; k++) {
      const float d = value(op, x, k) - mean;
      sum = k < products ? sum + d * d : qnn_fmaf(d, d, sum);
    }
    inverse = 1.0f / __builtin_sqrtf(sum / count + op->r.epsilon);
  }
QNN_SCALAR_LOOP
  for (size_t k = 0; k < n; k++) {
    const float v = value(op, x, k), d = v - mean;
    const float normalized = op->r.arithmetic == 1 ? v * scale + shift
                             : n <= 7 ? d / deviation * op->gamma[k] + op->beta[k]
                             : qnn_fmaf(d * inverse, op->gamma[k], op->beta[k]);
    if (op->r.float_output) {
      y_float[k] = normalized;
    } else {
      y[k] = qnn_qs8_quantize_clamped(normalized / op->r.output_scale, op->r.output_zero_point, -128, 127);
    }
  }
}

static void layer_norm_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  for (size_t row = first; row < first + count; row++) layer_norm_row(context, row);
}

void qnn_run_layer_norm(const struct qnn_op* base) {
  const struct layer_norm_op* op = (const struct layer_norm_op*) base;
  qnn_parallelize_ranges(layer_norm_rows, op, (size_t) op->r.rows, 1, 4, (size_t) op->r.columns * 3, QNN_TASK_ELEMENTS);
}
