/* QUANTIZE (float32 to int8), DEQUANTIZE (int8 to float32) and REQUANTIZE (int8 to int8 of another
 * quantization), element by element. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"
#include "threadpool.h"
#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

struct unary_op {
  struct qnn_op base;
  const void* input;
  void* output;
  size_t size;
  float scale;
  int32_t input_zero_point, output_zero_point;
  int32_t reciprocal;  /* QUANTIZE: multiply by scale instead of dividing */
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

QNN_PLAN_CODE int32_t qnn_create_quantize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_quantize_record* r = record;
  if (r->size < 0) return negative_size("quantize: negative size");
  if (!qnn_check_int8(r->zero_point, "quantize")) return QNN_ERROR_INVALID_RECORD;
  if (!(r->scale > 0.0f) || r->scale > 3.0e38f) {
    qnn_set_error("quantize: the output scale must be positive and finite");
    return QNN_ERROR_INVALID_RECORD;
  }
  struct unary_op* op;
  if (r->reciprocal != 0 && r->reciprocal != 1) {
    qnn_set_error("quantize: reciprocal must be 0 or 1");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int32_t status = create_unary(plan, r->input, (int64_t) r->size * 4, r->output, r->size, "quantize", &op);
  if (status != QNN_OK) return status;
  op->size = r->size;
  op->scale = r->scale;
  op->reciprocal = r->reciprocal;
  op->output_zero_point = r->zero_point;
  *result = &op->base;
  return QNN_OK;
}

void qnn_quantize_values(const float* x, int8_t* y, size_t count, float scale, int32_t zero_point, int32_t reciprocal) {
  /* NaN: onnxruntime's QuantizeLinear (MLAS: maxps with the low bound first) gives -128; XNNPACK's
   * conversion (reciprocal) gives the zero point. */
  const float nan_scaled = reciprocal ? 0.0f : (float) (-128 - zero_point);
  size_t i = 0;
#if defined(__wasm_simd128__)
  /* The scalar operations lane by lane: the same division, NaN lanes replaced as the scalar loop does,
   * pmax/pmin as the scalar clamps, rintf by the magic bias (requantization-simd128.h; the clamped values
   * are within [-255, 255]) with the zero point folded in; values end in [-128, 127], so the narrows are
   * exact. (Not nearest + trunc_sat: trunc_sat is a sequence on x86 engines, and clang 14 splits nearest
   * lane by lane.) */
  const v128_t vscale = wasm_f32x4_splat(scale);
  const v128_t vlo = wasm_f32x4_splat((float) (-128 - zero_point));
  const v128_t vhi = wasm_f32x4_splat((float) (127 - zero_point));
  const v128_t vnan = wasm_f32x4_splat(nan_scaled);
  const v128_t vmagic = wasm_f32x4_splat(12582912.0f);
  const v128_t vmagic_less_zp = wasm_i32x4_splat(INT32_C(0x4B400000) - zero_point);
  for (; i + 16 <= count; i += 16) {
    v128_t q[4];
    for (int j = 0; j < 4; j++) {
      const v128_t vx = wasm_v128_load(x + i + 4 * j);
      v128_t f = reciprocal ? wasm_f32x4_mul(vx, vscale) : wasm_f32x4_div(vx, vscale);
      f = wasm_v128_bitselect(f, vnan, wasm_f32x4_eq(f, f));
      f = wasm_f32x4_pmin(wasm_f32x4_pmax(f, vlo), vhi);
      q[j] = wasm_i32x4_sub(wasm_f32x4_add(f, vmagic), vmagic_less_zp);
    }
    wasm_v128_store(y + i, wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]), wasm_i16x8_narrow_i32x4(q[2], q[3])));
  }
#endif
QNN_SCALAR_LOOP
  for (; i < count; i++) {
    const float scaled = reciprocal ? x[i] * scale : x[i] / scale;
    y[i] = qnn_qs8_quantize_clamped(scaled == scaled ? scaled : nan_scaled, zero_point, -128, 127);
  }
}

/* Tasks are ranges of whole 64-element runs (the SIMD loop takes 16). */
static void quantize_range(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct unary_op* op = context;
  qnn_quantize_values((const float*) op->input + first, (int8_t*) op->output + first, count, op->scale,
                      op->output_zero_point, op->reciprocal);
}

void qnn_run_quantize(const struct qnn_op* base) {
  const struct unary_op* op = (const struct unary_op*) base;
  qnn_parallelize_ranges(quantize_range, op, op->size, 64, 4, 1, QNN_TASK_ELEMENTS);
}

QNN_PLAN_CODE int32_t qnn_create_dequantize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
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

QNN_PLAN_CODE int32_t qnn_create_requantize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
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
