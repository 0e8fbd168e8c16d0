/* LAYER_NORM: normalization of int8 rows with onnxruntime 1.32's float arithmetic. Each row is
 * dequantized ((q - zp) * scale, as its DequantizeLinear), normalized, scaled and shifted by float32
 * gamma / beta, and quantized as its QuantizeLinear (rint(y / output_scale) + zp, clamped).
 * arithmetic 0, LayerNormalization (core/providers/cpu/nn/layer_norm_impl.cc, ComputeJob for float):
 *   sequential float sums of x and of x * x; mean = sum / n; d = sqrtf(sum_sq / n - mean * mean + eps);
 *   y = (x - mean) / d * gamma[column] + beta[column].
 * arithmetic 1, InstanceNormalization (core/providers/cpu/nn/instance_norm.cc, Eigen's reductions with
 *   SSE's 4 lanes, as the x86-64 wheel is built): mean = eigen_sum(x) / n; var_sum = eigen_sum((x - mean)^2);
 *   inv = 1 / sqrtf(var_sum / n + eps); s = inv * gamma[c]; t = beta[c] - mean * s; y = x * s + t,
 *   c = row % channels.
 * Scalar in every variant (float32 sums in onnxruntime's order; no fused multiply-add in wasm), rows
 * split across threads. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"
#include "threadpool.h"

struct layer_norm_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  size_t rows, columns, channels;
  const float* gamma;
  const float* beta;
  int32_t arithmetic;
  float epsilon, input_scale, output_scale;
  int32_t input_zero_point, output_zero_point;
};

int32_t qnn_create_layer_norm(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_layer_norm_record* r = record;
  if (!qnn_check_positive(&r->rows, 3, "layer_norm") || !qnn_check_int8(r->input_zero_point, "layer_norm") ||
      !qnn_check_int8(r->output_zero_point, "layer_norm")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if ((r->arithmetic != 0 || r->channels != r->columns) && (r->arithmetic != 1 || r->rows % r->channels != 0)) {
    qnn_set_error("layer_norm: arithmetic 0 needs channels == columns, arithmetic 1 rows a multiple of channels");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!(r->input_scale > 0.0f && r->input_scale < 3.0e38f) || !(r->output_scale > 0.0f && r->output_scale < 3.0e38f) ||
      !(r->epsilon >= 0.0f && r->epsilon < 3.0e38f)) {
    qnn_set_error("layer_norm: scales must be positive and finite, epsilon non-negative and finite");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t size = (int64_t) r->rows * r->columns;
  const int64_t parameter_bytes = (int64_t) r->channels * sizeof(float);
  const int8_t* input = qnn_plan_tensor(plan, r->input, size, "layer_norm input");
  int8_t* output = qnn_plan_tensor(plan, r->output, size, "layer_norm output");
  const float* gamma = qnn_plan_constant(r->gamma, parameter_bytes, "layer_norm gamma");
  const float* beta = qnn_plan_constant(r->beta, parameter_bytes, "layer_norm beta");
  if (input == NULL || output == NULL || gamma == NULL || beta == NULL) return QNN_ERROR_INVALID_RECORD;
  struct layer_norm_op* op = qnn_plan_alloc(plan, sizeof(struct layer_norm_op));
  float* parameters = qnn_plan_alloc(plan, (size_t) parameter_bytes * 2);
  if (op == NULL || parameters == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  qnn_memcpy(parameters, gamma, (size_t) parameter_bytes);
  qnn_memcpy(parameters + r->channels, beta, (size_t) parameter_bytes);
  op->input = input;
  op->output = output;
  op->rows = (size_t) r->rows;
  op->columns = (size_t) r->columns;
  op->channels = (size_t) r->channels;
  op->gamma = parameters;
  op->beta = parameters + r->channels;
  op->arithmetic = r->arithmetic;
  op->epsilon = r->epsilon;
  op->input_scale = r->input_scale;
  op->output_scale = r->output_scale;
  op->input_zero_point = r->input_zero_point;
  op->output_zero_point = r->output_zero_point;
  *result = &op->base;
  return QNN_OK;
}

/* Element k of the row as its DequantizeLinear gives it, or (that - mean)^2 when `squares`. */
__attribute__((noinline)) static float term(const struct layer_norm_op* op, const int8_t* x, size_t k, int squares, float mean) {
  const float v = (float) ((int32_t) x[k] - op->input_zero_point) * op->input_scale;
  return squares ? (v - mean) * (v - mean) : v;
}

/* Eigen's sum of a Map'ed float vector with SSE packets of 4 (Redux.h, LinearVectorizedTraversal): the
 * packets from the first 16-byte-aligned element (`start`: the row begins at element row * columns of a
 * 64-byte-aligned buffer) into two accumulators over blocks of 8, added, one more packet, the lanes
 * added as (l0 + l2) + (l1 + l3), then the elements before `start` and after the last packet, in order.
 * Starting the lanes at 0 changes nothing: the terms are never -0. Without a whole packet it is the
 * sequential sum, as Eigen's. */
static float eigen_sum(const struct layer_norm_op* op, const int8_t* x, size_t start, int squares, float mean) {
  const size_t n = op->columns;
  const size_t packets = (n - start) / 4 * 4, pairs = (n - start) / 8 * 8;
  float lanes[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (size_t i = 0; i < pairs; i++) lanes[i & 7] += term(op, x, start + i, squares, mean);
  for (size_t j = 0; j < 4; j++) lanes[j] += lanes[j + 4];
  for (size_t i = pairs; i < packets; i++) lanes[i & 3] += term(op, x, start + i, squares, mean);
  float sum = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
  for (size_t k = 0; k < n; k++) {
    if (k < start || k >= start + packets) sum += term(op, x, k, squares, mean);
  }
  return sum;
}

static void layer_norm_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct layer_norm_op* op = context;
  const size_t n = op->columns;
  const float count_f = (float) n;
  for (size_t row = first; row < first + count; row++) {
    const int8_t* x = op->input + row * n;
    int8_t* y = op->output + row * n;
    float mean, deviation = 1.0f, scale = 1.0f, shift = 0.0f;
    if (op->arithmetic == 0) {
      float sum = 0.0f, sum_squares = 0.0f;
      for (size_t k = 0; k < n; k++) {
        const float v = term(op, x, k, 0, 0.0f);
        sum += v;
        sum_squares += v * v;
      }
      mean = sum / count_f;
      deviation = __builtin_sqrtf(sum_squares / count_f - mean * mean + op->epsilon);
    } else {
      const size_t start = (size_t) (-(row * n)) & 3;
      const size_t aligned = start < n ? start : n;
      mean = eigen_sum(op, x, aligned, 0, 0.0f) / count_f;
      const float inverse = 1.0f / __builtin_sqrtf(eigen_sum(op, x, aligned, 1, mean) / count_f + op->epsilon);
      scale = inverse * op->gamma[row % op->channels];
      shift = op->beta[row % op->channels] - mean * scale;
    }
    /* one element at a time: kept small (the module size budget), and as exact as lanes would be */
#pragma clang loop vectorize(disable) unroll(disable)
    for (size_t k = 0; k < n; k++) {
      const float v = term(op, x, k, 0, 0.0f);
      const float normalized = op->arithmetic == 0 ? (v - mean) / deviation * op->gamma[k] + op->beta[k] : v * scale + shift;
      y[k] = qnn_qs8_quantize_clamped(normalized / op->output_scale, op->output_zero_point, -128, 127);
    }
  }
}

void qnn_run_layer_norm(const struct qnn_op* base) {
  const struct layer_norm_op* op = (const struct layer_norm_op*) base;
  qnn_parallelize_ranges(layer_norm_rows, op, op->rows, 1, 4, op->columns * 3, QNN_TASK_ELEMENTS);
}
