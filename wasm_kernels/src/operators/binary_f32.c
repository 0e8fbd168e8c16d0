/* float32 ADD / SUB / MUL / DIV with broadcasting (binary_shape.h): the float ops a model runs on its
 * float input before its first QUANTIZE, e.g. (x - mean) / std. Each element is one IEEE single
 * operation, as onnxruntime's and TFLite's float kernels compute it, so every variant is bit-exact with
 * them; the SIMD128 loop (f32x4 add / sub / mul / div are IEEE too) with the scalar one. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "operators/binary_shape.h"

#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

enum { F32_ADD, F32_SUBTRACT, F32_MULTIPLY, F32_DIVIDE };

struct binary_f32_params {
  int32_t operation, b_first, clamped;
  float output_min, output_max;
};

struct binary_f32_op {
  struct qnn_op base;
  struct binary_shape shape;
  struct binary_f32_params params;
};

static inline float apply(int32_t operation, float x, float y) {
  switch (operation) {
    case F32_ADD: return x + y;
    case F32_SUBTRACT: return x - y;
    case F32_MULTIPLY: return x * y;
    default: return x / y;
  }
}

#if defined(__wasm_simd128__)
static inline v128_t apply4(int32_t operation, v128_t x, v128_t y) {
  switch (operation) {
    case F32_ADD: return wasm_f32x4_add(x, y);
    case F32_SUBTRACT: return wasm_f32x4_sub(x, y);
    case F32_MULTIPLY: return wasm_f32x4_mul(x, y);
    default: return wasm_f32x4_div(x, y);
  }
}
#endif

/* out = a OP b (b OP a when b_first), then max with output_min and min with output_max as
 * std::max / std::min do (TFLite's ActivationFunctionWithMinMax: NaN passes). */
static void binary_f32_row(size_t n, const int8_t* a_bytes, size_t a_stride, const int8_t* b_bytes, size_t b_stride,
                           int8_t* output_bytes, const void* context) {
  const struct binary_f32_params* p = context;
  const float* a = (const float*) a_bytes;
  const float* b = (const float*) b_bytes;
  float* output = (float*) output_bytes;
  const float* x = p->b_first ? b : a;
  const float* y = p->b_first ? a : b;
  const size_t x_stride = p->b_first ? b_stride : a_stride, y_stride = p->b_first ? a_stride : b_stride;
  size_t i = 0;
#if defined(__wasm_simd128__)
  if (x_stride <= 1 && y_stride <= 1) {
    const v128_t lo = wasm_f32x4_splat(p->output_min), hi = wasm_f32x4_splat(p->output_max);
    for (; i + 4 <= n; i += 4) {
      const v128_t vx = x_stride ? wasm_v128_load(x + i) : wasm_v128_load32_splat(x);
      const v128_t vy = y_stride ? wasm_v128_load(y + i) : wasm_v128_load32_splat(y);
      v128_t v = apply4(p->operation, vx, vy);
      if (p->clamped) v = wasm_f32x4_pmin(wasm_f32x4_pmax(v, lo), hi);  /* pmax(v, lo) = v < lo ? lo : v */
      wasm_v128_store(output + i, v);
    }
  }
#endif
  for (; i < n; i++) {
    float v = apply(p->operation, x[i * x_stride], y[i * y_stride]);
    if (p->clamped) {
      v = v < p->output_min ? p->output_min : v;
      v = p->output_max < v ? p->output_max : v;
    }
    output[i] = v;
  }
}

QNN_PLAN_CODE int32_t qnn_create_binary_f32(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_binary_f32_record* r = record;
  if (r->operation < F32_ADD || r->operation > F32_DIVIDE) {
    return binary_invalid("binary_f32", ": operation must be 0 (add), 1 (subtract), 2 (multiply) or 3 (divide)");
  }
  if (r->b_first != 0 && r->b_first != 1) return binary_invalid("binary_f32", ": b_first must be 0 or 1");
  if (!(r->output_min <= r->output_max)) return binary_invalid("binary_f32", ": output_min must be <= output_max");
  struct binary_f32_op* op = qnn_plan_alloc(plan, sizeof(struct binary_f32_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  const int32_t status = binary_shape_init(
      plan, r->input_a, r->input_b, r->output, r->b_constant, r->dims, r->a_strides, r->b_strides,
      "binary_f32", "binary_f32 input a", "binary_f32 input b", "binary_f32 output", 4, 4, &op->shape);
  if (status != QNN_OK) return status;
  const float largest = 3.40282347e38f;  /* [-largest, largest]: no clamp (infinities pass) */
  op->params = (struct binary_f32_params) {r->operation, r->b_first,
                                           r->output_min > -largest || r->output_max < largest,
                                           r->output_min, r->output_max};
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_binary_f32(const struct qnn_op* base) {
  const struct binary_f32_op* op = (const struct binary_f32_op*) base;
  binary_run(&op->shape, binary_f32_row, &op->params);
}
