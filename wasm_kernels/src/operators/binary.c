/* Binary element-wise ops with numpy broadcasting: ADD (XNNPACK's fixed-point form, what LiteRT's
 * default kernels run) and MUL (fp32 requantization, as conv).
 *
 * The record gives a 4-D output shape and per-input element strides (0 along broadcast
 * dimensions). At create time dimensions of size 1 are dropped and adjacent dimensions that are
 * contiguous in both inputs are merged, so same-shape operands become one long row and
 * [1,H,W,C] x [1,1,1,C] becomes H*W rows of C. Rows where both inputs are contiguous run a SIMD128
 * loop in the simd128 / relaxed modules (bit-exact with the scalar loop); other rows run scalar. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "requantization.h"

#if defined(__wasm_simd128__)
  #include "requantization-simd128.h"
#endif

struct binary_shape {
  const int8_t* a;
  const int8_t* b;
  int8_t* output;
  size_t dims[4];                       /* collapsed, innermost last */
  size_t a_strides[4], b_strides[4];
};

static int32_t invalid(const char* what, const char* problem) {
  qnn_set_error2(what, problem);
  return QNN_ERROR_INVALID_RECORD;
}

static int64_t extent(const int32_t* dims, const int32_t* strides) {
  int64_t last = 0;
  for (int k = 0; k < 4; k++) last += (int64_t) (dims[k] - 1) * strides[k];
  return last + 1;
}

/* Validates the shape fields (dims, strides, tensors inside the arena, the constant inside memory)
 * and fills `s`; a constant b is copied into plan memory (the staging buffer is reused). */
static int32_t binary_shape_init(
    struct qnn_plan* plan, int32_t input_a, int32_t input_b, int32_t output, int32_t b_constant,
    const int32_t* dims, const int32_t* a_strides, const int32_t* b_strides,
    const char* what, const char* what_a, const char* what_b, const char* what_out, struct binary_shape* s) {
  if (!qnn_check_positive(dims, 4, what)) return QNN_ERROR_INVALID_RECORD;
  if (b_constant != 0 && b_constant != 1) return invalid(what, ": b_constant must be 0 or 1");
  int64_t size = 1;
  for (int k = 0; k < 4; k++) {
    if (a_strides[k] < 0 || b_strides[k] < 0 || a_strides[k] > (1 << 30) || b_strides[k] > (1 << 30)) {
      return invalid(what, ": an input stride is negative or huge");
    }
    size *= dims[k];
    if (size > INT32_MAX) return invalid(what, ": output has more than 2^31 elements");
  }
  const int64_t a_extent = extent(dims, a_strides), b_extent = extent(dims, b_strides);
  s->a = qnn_plan_tensor(plan, input_a, a_extent, what_a);
  s->output = qnn_plan_tensor(plan, output, size, what_out);
  if (s->a == NULL || s->output == NULL) return QNN_ERROR_INVALID_RECORD;
  if (b_constant) {
    const int8_t* data = qnn_plan_constant(input_b, b_extent, what_b);
    if (data == NULL) return QNN_ERROR_INVALID_RECORD;
    int8_t* copy = qnn_plan_alloc(plan, b_extent);
    if (copy == NULL) return QNN_ERROR_OUT_OF_MEMORY;
    qnn_memcpy(copy, data, (size_t) b_extent);
    s->b = copy;
  } else {
    s->b = qnn_plan_tensor(plan, input_b, b_extent, what_b);
    if (s->b == NULL) return QNN_ERROR_INVALID_RECORD;
  }
  /* Drop size-1 dimensions, merge dimensions contiguous in both inputs. */
  size_t d[4], sa[4], sb[4];
  int n = 0;
  for (int k = 0; k < 4; k++) {
    const size_t dk = (size_t) dims[k], ak = (size_t) a_strides[k], bk = (size_t) b_strides[k];
    if (dk == 1) continue;
    if (n > 0 && sa[n - 1] == ak * dk && sb[n - 1] == bk * dk) {
      d[n - 1] *= dk;
      sa[n - 1] = ak;
      sb[n - 1] = bk;
    } else {
      d[n] = dk;
      sa[n] = ak;
      sb[n] = bk;
      n++;
    }
  }
  for (int k = 0; k < 4; k++) {
    const int from = k - (4 - n);
    s->dims[k] = from >= 0 ? d[from] : 1;
    s->a_strides[k] = from >= 0 ? sa[from] : 0;
    s->b_strides[k] = from >= 0 ? sb[from] : 0;
  }
  return QNN_OK;
}

typedef void (*binary_row_fn)(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                              int8_t* output, const void* params);

static void binary_run(const struct binary_shape* s, binary_row_fn row, const void* params) {
  int8_t* out = s->output;
  for (size_t i0 = 0; i0 < s->dims[0]; i0++) {
    for (size_t i1 = 0; i1 < s->dims[1]; i1++) {
      for (size_t i2 = 0; i2 < s->dims[2]; i2++) {
        const size_t a_offset = i0 * s->a_strides[0] + i1 * s->a_strides[1] + i2 * s->a_strides[2];
        const size_t b_offset = i0 * s->b_strides[0] + i1 * s->b_strides[1] + i2 * s->b_strides[2];
        row(s->dims[3], s->a + a_offset, s->a_strides[3], s->b + b_offset, s->b_strides[3], out, params);
        out += s->dims[3];
      }
    }
  }
}

/* ----------------------------------------------------------------------------------------- ADD */

/* out = clamp((bias + a * a_mul + b * b_mul) >> shift) + zp, with the multipliers scaled by 2^shift
 * so the larger one has the record's multiplier_bits significant bits (21: XNNPACK's
 * xnn_init_qs8_add_minmax_scalar_params, what LiteRT runs; 22: onnxruntime's MLAS QLinearAdd), and
 * round-half-up and the zero points folded into bias.
 * The scalar sum is 64-bit: with both scale ratios near 2^-10 it exceeds int32 (where XNNPACK's would
 * wrap). The SIMD loop sums in 32-bit lanes, and runs only when create proved that every sum fits
 * (the sum is linear in a and b, so its extremes are at the corners of [-128, 127]^2); wrapping
 * intermediate sums are harmless then, so the results are identical. */
struct add_params {
  int64_t bias;
  int32_t a_multiplier, b_multiplier;
  uint32_t shift;
  int32_t output_min_less_zero_point, output_max_less_zero_point, output_zero_point;
  int sums_fit_int32;
};

struct add_op {
  struct qnn_op base;
  struct binary_shape shape;
  struct add_params params;
};

#if defined(__wasm_simd128__)
/* 16 elements per iteration; returns how many it did. */
static size_t add_row_simd128(size_t n, const int8_t* a, const int8_t* b, int8_t* output,
                              const struct add_params* p) {
  const v128_t vbias = wasm_i32x4_splat((int32_t) p->bias);
  const v128_t va_multiplier = wasm_i32x4_splat(p->a_multiplier);
  const v128_t vb_multiplier = wasm_i32x4_splat(p->b_multiplier);
  const v128_t vmin = wasm_i32x4_splat(p->output_min_less_zero_point);
  const v128_t vmax = wasm_i32x4_splat(p->output_max_less_zero_point);
  const v128_t vzp = wasm_i32x4_splat(p->output_zero_point);
  const uint32_t shift = p->shift;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t va = wasm_v128_load(a + i), vb = wasm_v128_load(b + i);
    const v128_t va_lo = wasm_i16x8_extend_low_i8x16(va), va_hi = wasm_i16x8_extend_high_i8x16(va);
    const v128_t vb_lo = wasm_i16x8_extend_low_i8x16(vb), vb_hi = wasm_i16x8_extend_high_i8x16(vb);
    v128_t acc[4] = {
      wasm_i32x4_mul(wasm_i32x4_extend_low_i16x8(va_lo), va_multiplier),
      wasm_i32x4_mul(wasm_i32x4_extend_high_i16x8(va_lo), va_multiplier),
      wasm_i32x4_mul(wasm_i32x4_extend_low_i16x8(va_hi), va_multiplier),
      wasm_i32x4_mul(wasm_i32x4_extend_high_i16x8(va_hi), va_multiplier),
    };
    const v128_t bprod[4] = {
      wasm_i32x4_mul(wasm_i32x4_extend_low_i16x8(vb_lo), vb_multiplier),
      wasm_i32x4_mul(wasm_i32x4_extend_high_i16x8(vb_lo), vb_multiplier),
      wasm_i32x4_mul(wasm_i32x4_extend_low_i16x8(vb_hi), vb_multiplier),
      wasm_i32x4_mul(wasm_i32x4_extend_high_i16x8(vb_hi), vb_multiplier),
    };
    for (int k = 0; k < 4; k++) {
      v128_t v = wasm_i32x4_add(wasm_i32x4_add(vbias, acc[k]), bprod[k]);
      v = wasm_i32x4_shr(v, shift);  /* arithmetic: floor, as the scalar int64 >> shift */
      v = wasm_i32x4_min(wasm_i32x4_max(v, vmin), vmax);
      acc[k] = wasm_i32x4_add(v, vzp);
    }
    /* Already in [-128, 127]: the saturating narrows are exact. */
    const v128_t out_lo = wasm_i16x8_narrow_i32x4(acc[0], acc[1]);
    const v128_t out_hi = wasm_i16x8_narrow_i32x4(acc[2], acc[3]);
    wasm_v128_store(output + i, wasm_i8x16_narrow_i16x8(out_lo, out_hi));
  }
  return i;
}
#endif

static void add_row(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                    int8_t* output, const void* params) {
  const struct add_params* p = params;
  size_t i = 0;
#if defined(__wasm_simd128__)
  if (p->sums_fit_int32 && a_stride == 1 && b_stride == 1) i = add_row_simd128(n, a, b, output, p);
#endif
  for (; i < n; i++) {
    const int64_t acc = p->bias + (int64_t) a[i * a_stride] * p->a_multiplier +
                        (int64_t) b[i * b_stride] * p->b_multiplier;
    int32_t out = (int32_t) (acc >> p->shift);  /* arithmetic shift: clang and wasm define it for negatives */
    out = qnn_max_i32(out, p->output_min_less_zero_point);
    out = qnn_min_i32(out, p->output_max_less_zero_point);
    output[i] = (int8_t) (out + p->output_zero_point);
  }
}

int32_t qnn_create_add(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_add_record* r = record;
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
  if (r->multiplier_bits != 21 && r->multiplier_bits != 22) {
    qnn_set_error("add: multiplier_bits must be 21 (XNNPACK) or 22 (onnxruntime)");
    return QNN_ERROR_INVALID_RECORD;
  }
  struct add_op* op = qnn_plan_alloc(plan, sizeof(struct add_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  const int32_t status = binary_shape_init(
      plan, r->input_a, r->input_b, r->output, r->b_constant, r->dims, r->a_strides, r->b_strides,
      "add", "add input a", "add input b", "add output", &op->shape);
  if (status != QNN_OK) return status;
  union { float f; uint32_t u; } bits = {max_abs};
  const int32_t exponent = (int32_t) (bits.u >> 23) - 127;
  const uint32_t shift = (uint32_t) (r->multiplier_bits - 1 - exponent);  /* in [13, 31] */
  const float two_shift = (float) (1u << shift);
  struct add_params* p = &op->params;
  p->a_multiplier = (int32_t) __builtin_rintf(r->a_multiplier * two_shift);
  p->b_multiplier = (int32_t) __builtin_rintf(r->b_multiplier * two_shift);
  p->shift = shift;
  p->bias = (INT64_C(1) << (shift - 1)) - (int64_t) p->a_multiplier * r->a_zero_point -
            (int64_t) p->b_multiplier * r->b_zero_point;
  p->sums_fit_int32 = 1;
  for (int32_t a = -128; a <= 127; a += 255) {
    for (int32_t b = -128; b <= 127; b += 255) {
      const int64_t sum = p->bias + (int64_t) a * p->a_multiplier + (int64_t) b * p->b_multiplier;
      if (sum < INT32_MIN || sum > INT32_MAX) p->sums_fit_int32 = 0;
    }
  }
  p->output_min_less_zero_point = r->output_min - r->output_zero_point;
  p->output_max_less_zero_point = r->output_max - r->output_zero_point;
  p->output_zero_point = r->output_zero_point;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_add(const struct qnn_op* base) {
  const struct add_op* op = (const struct add_op*) base;
  binary_run(&op->shape, add_row, &op->params);
}

/* ----------------------------------------------------------------------------------------- MUL */

struct mul_params {
  int32_t a_zero_point, b_zero_point;
  float scale;
  struct qnn_qs8_minmax_params minmax;
};

struct mul_op {
  struct qnn_op base;
  struct binary_shape shape;
  struct mul_params params;
};

#if defined(__wasm_simd128__)
static size_t mul_row_simd128(size_t n, const int8_t* a, const int8_t* b, int8_t* output,
                              const struct mul_params* p) {
  const v128_t va_zp = wasm_i16x8_splat((int16_t) p->a_zero_point);
  const v128_t vb_zp = wasm_i16x8_splat((int16_t) p->b_zero_point);
  const v128_t vscale = wasm_f32x4_splat(p->scale);
  const v128_t vlo = wasm_f32x4_splat(p->minmax.output_min_less_zero_point);
  const v128_t vhi = wasm_f32x4_splat(p->minmax.output_max_less_zero_point);
  const v128_t vzp = wasm_i32x4_splat(p->minmax.output_zero_point);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t va = wasm_v128_load(a + i), vb = wasm_v128_load(b + i);
    /* a - a_zp and b - b_zp are in [-255, 255]: exact in i16; their products need i32. */
    const v128_t va_lo = wasm_i16x8_sub(wasm_i16x8_extend_low_i8x16(va), va_zp);
    const v128_t va_hi = wasm_i16x8_sub(wasm_i16x8_extend_high_i8x16(va), va_zp);
    const v128_t vb_lo = wasm_i16x8_sub(wasm_i16x8_extend_low_i8x16(vb), vb_zp);
    const v128_t vb_hi = wasm_i16x8_sub(wasm_i16x8_extend_high_i8x16(vb), vb_zp);
    const v128_t out0 = qnn_requantize4_fp32(wasm_i32x4_extmul_low_i16x8(va_lo, vb_lo), vscale, vlo, vhi, vzp);
    const v128_t out1 = qnn_requantize4_fp32(wasm_i32x4_extmul_high_i16x8(va_lo, vb_lo), vscale, vlo, vhi, vzp);
    const v128_t out2 = qnn_requantize4_fp32(wasm_i32x4_extmul_low_i16x8(va_hi, vb_hi), vscale, vlo, vhi, vzp);
    const v128_t out3 = qnn_requantize4_fp32(wasm_i32x4_extmul_high_i16x8(va_hi, vb_hi), vscale, vlo, vhi, vzp);
    wasm_v128_store(output + i, wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(out0, out1),
                                                        wasm_i16x8_narrow_i32x4(out2, out3)));
  }
  return i;
}
#endif

static void mul_row(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                    int8_t* output, const void* params) {
  const struct mul_params* p = params;
  size_t i = 0;
#if defined(__wasm_simd128__)
  if (a_stride == 1 && b_stride == 1) i = mul_row_simd128(n, a, b, output, p);
#endif
  for (; i < n; i++) {
    const int32_t product = ((int32_t) a[i * a_stride] - p->a_zero_point) * ((int32_t) b[i * b_stride] - p->b_zero_point);
    output[i] = qnn_qs8_requantize_fp32(product, p->scale, &p->minmax);
  }
}

int32_t qnn_create_mul(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
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
  struct mul_op* op = qnn_plan_alloc(plan, sizeof(struct mul_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  const int32_t status = binary_shape_init(
      plan, r->input_a, r->input_b, r->output, r->b_constant, r->dims, r->a_strides, r->b_strides,
      "mul", "mul input a", "mul input b", "mul output", &op->shape);
  if (status != QNN_OK) return status;
  op->params.a_zero_point = r->a_zero_point;
  op->params.b_zero_point = r->b_zero_point;
  op->params.scale = r->scale;
  op->params.minmax = qnn_qs8_minmax_params_init(r->output_zero_point, r->output_min, r->output_max, 0);
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_mul(const struct qnn_op* base) {
  const struct mul_op* op = (const struct mul_op*) base;
  binary_run(&op->shape, mul_row, &op->params);
}
