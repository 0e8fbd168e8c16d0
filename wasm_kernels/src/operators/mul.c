/* MUL with numpy broadcasting: fp32 requantization as conv, or onnxruntime's QLinearMul.
 *
 * Broadcasting: binary_shape.h. Rows where both inputs are contiguous run a SIMD128 loop in the
 * simd128 / relaxed modules (bit-exact with the scalar loop); other rows run scalar. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "operators/binary_shape.h"
#include "requantization.h"

#if defined(__wasm_simd128__)
  #include "requantization-simd128.h"
#endif

struct mul_params {
  int32_t a_zero_point, b_zero_point;
  float scale;
  struct qnn_qs8_minmax_params minmax;
  /* record arithmetic 1, onnxruntime's: rint((float) product * scale + zero_point_in_float) - offset */
  int32_t onnxruntime, offset, output_min, output_max;
  float zero_point_in_float;
};

static inline int8_t mul_onnxruntime(int32_t product, const struct mul_params* p) {
  const int32_t q = (int32_t) __builtin_rintf((float) product * p->scale + p->zero_point_in_float) - p->offset;
  return (int8_t) (q < p->output_min ? p->output_min : q > p->output_max ? p->output_max : q);
}

struct mul_op {
  struct qnn_op base;
  struct binary_shape shape;
  struct mul_params params;
};

#if defined(__wasm_simd128__)
/* `onnxruntime` is a constant at each call: the two forms are two inlined bodies */
static inline __attribute__((always_inline)) size_t mul_row_simd128(size_t n, const int8_t* a, const int8_t* b,
                                                                    int8_t* output, const struct mul_params* p,
                                                                    const int onnxruntime) {
  const v128_t va_zp = wasm_i16x8_splat((int16_t) p->a_zero_point);
  const v128_t vb_zp = wasm_i16x8_splat((int16_t) p->b_zero_point);
  const v128_t vscale = wasm_f32x4_splat(p->scale);
  const struct qnn_requantize_simd128 vq = qnn_requantize_simd128_init(&p->minmax);
  const v128_t vzero_point = wasm_f32x4_splat(p->zero_point_in_float);
  const v128_t voffset = wasm_i32x4_splat(p->offset);
  const v128_t vmin = wasm_i8x16_splat((int8_t) p->output_min), vmax = wasm_i8x16_splat((int8_t) p->output_max);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t va = wasm_v128_load(a + i), vb = wasm_v128_load(b + i);
    /* a - a_zp and b - b_zp are in [-255, 255]: exact in i16; their products need i32. */
    const v128_t va_lo = wasm_i16x8_sub(wasm_i16x8_extend_low_i8x16(va), va_zp);
    const v128_t va_hi = wasm_i16x8_sub(wasm_i16x8_extend_high_i8x16(va), va_zp);
    const v128_t vb_lo = wasm_i16x8_sub(wasm_i16x8_extend_low_i8x16(vb), vb_zp);
    const v128_t vb_hi = wasm_i16x8_sub(wasm_i16x8_extend_high_i8x16(vb), vb_zp);
    const v128_t products[4] = {wasm_i32x4_extmul_low_i16x8(va_lo, vb_lo), wasm_i32x4_extmul_high_i16x8(va_lo, vb_lo),
                                wasm_i32x4_extmul_low_i16x8(va_hi, vb_hi), wasm_i32x4_extmul_high_i16x8(va_hi, vb_hi)};
    if (!onnxruntime) {
      wasm_v128_store(output + i, qnn_requantize16_fp32(products[0], products[1], products[2], products[3],
                                                        vscale, vscale, vscale, vscale, &vq));
      continue;
    }
    v128_t q[4];
    for (int k = 0; k < 4; k++) {
      const v128_t f = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(products[k]), vscale), vzero_point);
      q[k] = wasm_i32x4_sub(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(f)), voffset);
    }
    const v128_t out = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]), wasm_i16x8_narrow_i32x4(q[2], q[3]));
    wasm_v128_store(output + i, wasm_i8x16_min(wasm_i8x16_max(out, vmin), vmax));
  }
  return i;
}
#endif

static void mul_row(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                    int8_t* output, const void* params) {
  const struct mul_params* p = params;
  size_t i = 0;
#if defined(__wasm_simd128__)
  if (a_stride == 1 && b_stride == 1) {
    i = p->onnxruntime ? mul_row_simd128(n, a, b, output, p, 1) : mul_row_simd128(n, a, b, output, p, 0);
  }
#endif
  for (; i < n; i++) {
    const int32_t product = ((int32_t) a[i * a_stride] - p->a_zero_point) * ((int32_t) b[i * b_stride] - p->b_zero_point);
    output[i] = p->onnxruntime ? mul_onnxruntime(product, p) : qnn_qs8_requantize_fp32(product, p->scale, &p->minmax);
  }
}

QNN_PLAN_CODE int32_t qnn_create_mul(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_mul_record* r = record;
  if (!qnn_check_int8(r->a_zero_point, "mul") || !qnn_check_int8(r->b_zero_point, "mul") ||
      !qnn_check_int8(r->output_zero_point, "mul") || !qnn_check_int8(r->output_min, "mul") ||
      !qnn_check_int8(r->output_max, "mul")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!(__builtin_fabsf(r->scale) <= 0x1.0p+100f)) {
    qnn_set_error("mul: the scale a_scale * b_scale / output_scale is not finite");
    return QNN_ERROR_INVALID_RECORD;
  }
  if ((r->arithmetic != 0 && r->arithmetic != 1) || (r->offset != 0 && r->offset != 128) ||
      (r->arithmetic == 0 && r->offset != 0)) {
    qnn_set_error("mul: arithmetic must be 0 (TFLite) or 1 (onnxruntime), offset 0 or 128 (1 only)");
    return QNN_ERROR_INVALID_RECORD;
  }
  struct mul_op* op = qnn_plan_alloc(plan, sizeof(struct mul_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  const int32_t status = binary_shape_init(
      plan, r->input_a, r->input_b, r->output, r->b_constant, r->dims, r->a_strides, r->b_strides,
      "mul", "mul input a", "mul input b", "mul output", 1, 1, &op->shape);
  if (status != QNN_OK) return status;
  op->params.a_zero_point = r->a_zero_point;
  op->params.b_zero_point = r->b_zero_point;
  op->params.scale = r->scale;
  op->params.minmax = qnn_qs8_minmax_params_init(r->output_zero_point, r->output_min, r->output_max, 0);
  op->params.onnxruntime = r->arithmetic == 1;
  op->params.offset = r->offset;
  op->params.output_min = r->output_min;
  op->params.output_max = r->output_max;
  op->params.zero_point_in_float = (float) (r->output_zero_point + r->offset);
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_mul(const struct qnn_op* base) {
  const struct mul_op* op = (const struct mul_op*) base;
  binary_run(&op->shape, mul_row, &op->params);
}
