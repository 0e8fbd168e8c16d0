/* Element-wise ops: QUANTIZE, DEQUANTIZE, REQUANTIZE, ADD and COPY. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"

struct unary_op {
  struct qnn_op base;
  const void* input;
  void* output;
  size_t size;
  float scale;
  int32_t input_zero_point, output_zero_point;
};

static int32_t negative_size(const char* message) {
  qnn_set_error(message);
  return QNN_ERROR_INVALID_RECORD;
}

static int32_t create_unary(struct qnn_plan* plan, int32_t input, int64_t input_bytes, int32_t output,
                            int64_t output_bytes, const char* what, struct unary_op** result) {
  void* in = qnn_plan_tensor(plan, input, input_bytes, what);
  void* out = qnn_plan_tensor(plan, output, output_bytes, what);
  if (in == NULL || out == NULL) return QNN_ERROR_INVALID_RECORD;
  struct unary_op* op = qnn_plan_alloc(plan, sizeof(struct unary_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = in;
  op->output = out;
  *result = op;
  return QNN_OK;
}

int32_t qnn_create_quantize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_quantize_record* r = record;
  if (r->size < 0) return negative_size("quantize: negative size");
  if (!qnn_check_int8(r->zero_point, "quantize")) return QNN_ERROR_INVALID_RECORD;
  struct unary_op* op;
  const int32_t status = create_unary(plan, r->input, (int64_t) r->size * 4, r->output, r->size, "quantize", &op);
  if (status != QNN_OK) return status;
  op->size = r->size;
  op->scale = r->inverse_scale;
  op->output_zero_point = r->zero_point;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_quantize(const struct qnn_op* base) {
  const struct unary_op* op = (const struct unary_op*) base;
  const float* x = op->input;
  int8_t* y = op->output;
  for (size_t i = 0; i < op->size; i++) {
    y[i] = qnn_qs8_quantize_clamped(x[i] * op->scale, op->output_zero_point, -128, 127);
  }
}

int32_t qnn_create_dequantize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_dequantize_record* r = record;
  if (r->size < 0) return negative_size("dequantize: negative size");
  if (!qnn_check_int8(r->zero_point, "dequantize")) return QNN_ERROR_INVALID_RECORD;
  struct unary_op* op;
  const int32_t status = create_unary(plan, r->input, r->size, r->output, (int64_t) r->size * 4, "dequantize", &op);
  if (status != QNN_OK) return status;
  op->size = r->size;
  op->scale = r->scale;
  op->input_zero_point = r->zero_point;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_dequantize(const struct qnn_op* base) {
  const struct unary_op* op = (const struct unary_op*) base;
  const int8_t* x = op->input;
  float* y = op->output;
  for (size_t i = 0; i < op->size; i++) y[i] = (float) ((int32_t) x[i] - op->input_zero_point) * op->scale;
}

int32_t qnn_create_requantize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_requantize_record* r = record;
  if (r->size < 0) return negative_size("requantize: negative size");
  if (!qnn_check_int8(r->input_zero_point, "requantize") ||
      !qnn_check_int8(r->output_zero_point, "requantize")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  struct unary_op* op;
  const int32_t status = create_unary(plan, r->input, r->size, r->output, r->size, "requantize", &op);
  if (status != QNN_OK) return status;
  op->size = r->size;
  op->scale = r->scale;
  op->input_zero_point = r->input_zero_point;
  op->output_zero_point = r->output_zero_point;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_requantize(const struct qnn_op* base) {
  const struct unary_op* op = (const struct unary_op*) base;
  const int8_t* x = op->input;
  int8_t* y = op->output;
  for (size_t i = 0; i < op->size; i++) {
    const float f = (float) ((int32_t) x[i] - op->input_zero_point) * op->scale;
    y[i] = qnn_qs8_quantize_clamped(f, op->output_zero_point, -128, 127);
  }
}

int32_t qnn_create_copy(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_copy_record* r = record;
  if (r->bytes < 0) return negative_size("copy: negative size");
  struct unary_op* op;
  const int32_t status = create_unary(plan, r->input, r->bytes, r->output, r->bytes, "copy", &op);
  if (status != QNN_OK) return status;
  op->size = r->bytes;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_copy(const struct qnn_op* base) {
  const struct unary_op* op = (const struct unary_op*) base;
  if (op->output != op->input) __builtin_memmove(op->output, op->input, op->size);
}

/* ADD in XNNPACK's fixed-point form (what LiteRT's default kernels run), so results match them:
 * out = clamp((bias + a * a_mul + b * b_mul) >> shift) + zp, with the multipliers scaled by
 * 2^shift so the larger one has 22 significant bits, and round-half-up folded into bias. The sum
 * is 64-bit: with both scale ratios near 2^-10 it exceeds int32 (where XNNPACK's would wrap). */
struct add_op {
  struct qnn_op base;
  const int8_t* a;
  const int8_t* b;
  int8_t* output;
  size_t size;
  int64_t bias;
  int32_t a_multiplier, b_multiplier;
  uint32_t shift;
  int32_t output_min_less_zero_point, output_max_less_zero_point, output_zero_point;
};

int32_t qnn_create_add(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_add_record* r = record;
  if (r->size < 0) return negative_size("add: negative size");
  if (!qnn_check_int8(r->a_zero_point, "add") || !qnn_check_int8(r->b_zero_point, "add") ||
      !qnn_check_int8(r->output_zero_point, "add") || !qnn_check_int8(r->output_min, "add") ||
      !qnn_check_int8(r->output_max, "add")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  const float abs_a = __builtin_fabsf(r->a_multiplier), abs_b = __builtin_fabsf(r->b_multiplier);
  const float max_abs = abs_a > abs_b ? abs_a : abs_b;
  if (!(max_abs >= 0x1.0p-10f && max_abs < 0x1.0p+8f) || !(abs_a >= 0.0f) || !(abs_b >= 0.0f)) {
    qnn_set_error("add: input scale / output scale must be in [2^-10, 2^8)");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int8_t* a = qnn_plan_tensor(plan, r->input_a, r->size, "add input a");
  const int8_t* b = qnn_plan_tensor(plan, r->input_b, r->size, "add input b");
  int8_t* output = qnn_plan_tensor(plan, r->output, r->size, "add output");
  if (a == NULL || b == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct add_op* op = qnn_plan_alloc(plan, sizeof(struct add_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  union { float f; uint32_t u; } bits = {max_abs};
  const int32_t exponent = (int32_t) (bits.u >> 23) - 127;
  const uint32_t shift = (uint32_t) (21 - exponent);  /* in [13, 31] */
  const float two_shift = (float) (1u << shift);
  op->a_multiplier = (int32_t) __builtin_rintf(r->a_multiplier * two_shift);
  op->b_multiplier = (int32_t) __builtin_rintf(r->b_multiplier * two_shift);
  op->shift = shift;
  op->bias = (INT64_C(1) << (shift - 1)) - (int64_t) op->a_multiplier * r->a_zero_point -
             (int64_t) op->b_multiplier * r->b_zero_point;
  op->a = a;
  op->b = b;
  op->output = output;
  op->size = (size_t) r->size;
  op->output_min_less_zero_point = r->output_min - r->output_zero_point;
  op->output_max_less_zero_point = r->output_max - r->output_zero_point;
  op->output_zero_point = r->output_zero_point;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_add(const struct qnn_op* base) {
  const struct add_op* op = (const struct add_op*) base;
  for (size_t i = 0; i < op->size; i++) {
    const int64_t acc = op->bias + (int64_t) op->a[i] * op->a_multiplier + (int64_t) op->b[i] * op->b_multiplier;
    int32_t out = (int32_t) (acc >> op->shift);  /* arithmetic shift: clang and wasm define it for negatives */
    out = qnn_max_i32(out, op->output_min_less_zero_point);
    out = qnn_min_i32(out, op->output_max_less_zero_point);
    op->output[i] = (int8_t) (out + op->output_zero_point);
  }
}
