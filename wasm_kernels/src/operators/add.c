/* ADD of two int8 tensors with numpy broadcasting, in the three arithmetics the reference runtimes
 * use (the record's `arithmetic`): XNNPACK's fixed point (what LiteRT's default kernels run), TFLite's
 * builtin fixed point (where LiteRT falls back to it), onnxruntime's x86 float32 form.
 *
 * Broadcasting: binary_shape.h. Rows where both inputs are contiguous run a SIMD128 loop in the
 * simd128 / relaxed modules (bit-exact with the scalar loop); other rows run scalar. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "operators/binary_shape.h"
#include "config.h"
#include "requantization.h"

#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

/* XNNPACK's form (xnn_init_qs8_add_minmax_scalar_params, what LiteRT runs):
 * out = clamp((bias + a * a_mul + b * b_mul) >> shift) + zp, with the multipliers scaled by 2^shift
 * so the larger one has 21 significant bits, and round-half-up and the zero points folded into bias.
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

/* onnxruntime's x86 QLinearAdd (mlas/lib/intrinsics/avx2/qladd_avx2.cpp, as compiled: its
 * multiply-adds contracted to FMAs), in the model's own domain (uint8 values and zero points stay
 * uint8: offset 128). Its kernel takes a vector operand x and a second operand y (a vector, or a
 * per-span scalar of its broadcasting): rx = sx / sc and ry = sy / sc in float32,
 * f = float(zc) - fma(rx, zx, ry * zy), v = fma(x, rx, fma(y, ry, f)), rounded to nearest even and
 * saturated to the domain. form 0: x is input a; 1: x is input b (a is the per-span scalar). A
 * float32 fma is computed in float64: the product of a small integer and a float32 is exact there,
 * and so is its sum with a float32 unless their exponents are 29 or more apart. */
struct add_float_params {
  float a_ratio, b_ratio, fixed;
  /* The SIMD loop's fast form (add_fast4) is trusted where its result lies below near_tie from
   * rint of it (0: never). */
  float near_tie;
  int32_t offset, b_first, domain_min, domain_max, output_min, output_max;
  int32_t fused;  /* qnn_relaxed_madd_fused(), asked when the op is made */
};

/* TFLite's builtin integer ADD (arithmetic 2): each input's term M((x - x_zp) * 2^20, x_fixed)
 * depends on that input alone, so it is a 256-entry table per input (indexed by x + 128). */
struct add_tflite_params {
  int32_t a_terms[256], b_terms[256];
  int32_t output_multiplier, output_shift, output_zero_point, output_min, output_max;
};

enum add_arithmetic { ADD_XNNPACK = 0, ADD_ONNXRUNTIME = 1, ADD_TFLITE = 2 };

struct add_op {
  struct qnn_op base;
  struct binary_shape shape;
  union {
    struct add_params xnnpack;
    struct add_float_params onnxruntime;
    struct add_tflite_params tflite;
  } params;
  int32_t arithmetic;
};

static inline float fma_f32(float x, float y, float z) {
  return (float) ((double) x * (double) y + (double) z);
}

#if defined(__wasm_simd128__)
/* fma_f32 on 4 lanes: float64 products and sums of the two halves, each rounded once to float32. */
static inline v128_t fma4_f32(v128_t x, v128_t y_f64, v128_t z) {
  const v128_t lo = wasm_f64x2_add(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(x), y_f64),
                                   wasm_f64x2_promote_low_f32x4(z));
  const v128_t x_hi = wasm_i32x4_shuffle(x, x, 2, 3, 0, 1), z_hi = wasm_i32x4_shuffle(z, z, 2, 3, 0, 1);
  const v128_t hi = wasm_f64x2_add(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(x_hi), y_f64),
                                   wasm_f64x2_promote_low_f32x4(z_hi));
  return wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 1, 4, 5);
}

/* 4 elements of add_float_row (xa, xb: f32x4 of the offset values); returns int32 lanes. */
static inline v128_t add_float4(v128_t xa, v128_t xb, const struct add_float_params* p) {
  const v128_t ra64 = wasm_f64x2_splat(p->a_ratio), rb64 = wasm_f64x2_splat(p->b_ratio);
  const v128_t fixed = wasm_f32x4_splat(p->fixed);
  const v128_t v = p->b_first ? fma4_f32(xb, rb64, fma4_f32(xa, ra64, fixed))
                              : fma4_f32(xa, ra64, fma4_f32(xb, rb64, fixed));
  const v128_t clamped = wasm_f32x4_pmin(wasm_f32x4_splat((float) p->domain_max),
                                         wasm_f32x4_pmax(wasm_f32x4_splat((float) p->domain_min), v));
  v128_t q = wasm_i32x4_sub(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(clamped)), wasm_i32x4_splat(p->offset));
  q = wasm_i32x4_max(q, wasm_i32x4_splat(p->output_min));
  return wasm_i32x4_min(q, wasm_i32x4_splat(p->output_max));
}

/* The same v in plain float32, for the offset values x (a) and y (b): x * ra + (y * rb + fixed), four
 * roundings where onnxruntime has two, so it can differ from onnxruntime's v by a few units in the
 * last place (bounded in add_float_init). It is clamped to the domain, rounded by the magic bias
 * (rint for |v| < 2^22) and returned as int32 lanes less the offset; lanes whose v lies within that
 * bound of a half-integer, where the two could round apart, are flagged in *near: where d = v - rint(v)
 * has d * d >= near_tie * near_tie (both rounded; rounding is monotonic, so every |d| >= near_tie is
 * flagged, and a few more go the exact way: one multiply where V8's f32x4.abs is three). The
 * constants are splatted once per row (struct add_fast). */
struct add_fast {
  v128_t a_ratio, b_ratio, fixed, domain_min, domain_max, magic, near_tie_squared, magic_bits_and_offset;
};

static inline v128_t add_fast4(v128_t x, v128_t y, const struct add_fast* c, v128_t* near) {
  v128_t v = wasm_f32x4_add(wasm_f32x4_mul(x, c->a_ratio), wasm_f32x4_add(wasm_f32x4_mul(y, c->b_ratio), c->fixed));
  v = wasm_f32x4_pmin(c->domain_max, wasm_f32x4_pmax(c->domain_min, v));
  const v128_t m = wasm_f32x4_add(v, c->magic);
  const v128_t d = wasm_f32x4_sub(v, wasm_f32x4_sub(m, c->magic));  /* exact: v - rint(v) */
  *near = wasm_v128_or(*near, wasm_f32x4_ge(wasm_f32x4_mul(d, d), c->near_tie_squared));
  return wasm_i32x4_sub(m, c->magic_bits_and_offset);
}

/* The offset values of 16 int8 elements as four f32x4 (each half sign-extended as it loads: V8's
 * i16x8.extend_high is two instructions). */
static inline __attribute__((always_inline)) void offset_floats16(const int8_t* x, v128_t offset, v128_t f[4]) {
  const v128_t x16[2] = {wasm_i16x8_load8x8(x), wasm_i16x8_load8x8(x + 8)};
  /* (the offset is added in int32 also where it is 0: clang 14 would fold the conversion of a bare
   * sign extension into a lane-by-lane int16 conversion) */
  for (int k = 0; k < 4; k++) {
    const v128_t x32 = (k & 1) ? wasm_i32x4_extend_high_i16x8(x16[k >> 1]) : wasm_i32x4_extend_low_i16x8(x16[k >> 1]);
    f[k] = wasm_f32x4_convert_i32x4(wasm_i32x4_add(x32, offset));
  }
}

/* 16 elements as onnxruntime computes them (add_float4), for the rare 16 the fast form cannot
 * decide. */
static v128_t add_float16_exact(const int8_t* a, const int8_t* b, const struct add_float_params* p) {
  const v128_t offset = wasm_i32x4_splat(p->offset);
  v128_t xa[4], xb[4], q[4];
  offset_floats16(a, offset, xa);
  offset_floats16(b, offset, xb);
  for (int k = 0; k < 4; k++) q[k] = add_float4(xa[k], xb[k], p);
  /* in [-128, 127] (the domain less the offset): the saturating narrows are exact */
  return wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]), wasm_i16x8_narrow_i32x4(q[2], q[3]));
}

#if defined(__wasm_relaxed_simd__)
/* Where relaxed_madd is fused (p->fused), onnxruntime's own two FMAs per element: no near-tie check,
 * no float64. */
static size_t add_float_row_fused(size_t n, const int8_t* a, const int8_t* b, int8_t* output,
                                  const struct add_float_params* p) {
  const v128_t a_ratio = wasm_f32x4_splat(p->a_ratio), b_ratio = wasm_f32x4_splat(p->b_ratio);
  const v128_t fixed = wasm_f32x4_splat(p->fixed), magic = wasm_f32x4_splat(12582912.0f);
  const v128_t domain_min = wasm_f32x4_splat((float) p->domain_min), domain_max = wasm_f32x4_splat((float) p->domain_max);
  const v128_t magic_bits_and_offset = wasm_i32x4_splat(INT32_C(0x4B400000) + p->offset);
  const v128_t offset = wasm_i32x4_splat(p->offset);
  const v128_t output_min = wasm_i8x16_splat((int8_t) p->output_min), output_max = wasm_i8x16_splat((int8_t) p->output_max);
  const size_t whole = n & ~(size_t) 15;
  for (size_t i = 0; i < whole; i += 16) {
    v128_t xa[4], xb[4], q[4];
    offset_floats16(a + i, offset, xa);
    offset_floats16(b + i, offset, xb);
    for (int k = 0; k < 4; k++) {
      v128_t v = p->b_first ? wasm_f32x4_relaxed_madd(xb[k], b_ratio, wasm_f32x4_relaxed_madd(xa[k], a_ratio, fixed))
                            : wasm_f32x4_relaxed_madd(xa[k], a_ratio, wasm_f32x4_relaxed_madd(xb[k], b_ratio, fixed));
      v = wasm_f32x4_pmin(domain_max, wasm_f32x4_pmax(domain_min, v));
      q[k] = wasm_i32x4_sub(wasm_f32x4_add(v, magic), magic_bits_and_offset);  /* rint, for |v| < 2^22 */
    }
    /* in [-128, 127] (the domain less the offset): the saturating narrows are exact */
    const v128_t out = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]), wasm_i16x8_narrow_i32x4(q[2], q[3]));
    wasm_v128_store(output + i, wasm_i8x16_min(wasm_i8x16_max(out, output_min), output_max));
  }
  return whole;
}
#endif

/* 16 elements per iteration, both inputs contiguous; returns how many it did. Every 16 go the fast
 * way; those where one of them is near a tie are noted (without a branch) and computed again as
 * onnxruntime does after each run of 64. (With the slow path inside the loop, V8 kept none of the
 * loop's constants in registers: it reloaded ten of them every 16 elements.) */
static size_t add_float_row_simd128(size_t n, const int8_t* a, const int8_t* b, int8_t* output,
                                    const struct add_float_params* p) {
#if defined(__wasm_relaxed_simd__)
  if (p->fused) return add_float_row_fused(n, a, b, output, p);
#endif
  const struct add_fast c = {
    wasm_f32x4_splat(p->a_ratio), wasm_f32x4_splat(p->b_ratio), wasm_f32x4_splat(p->fixed),
    wasm_f32x4_splat((float) p->domain_min), wasm_f32x4_splat((float) p->domain_max), wasm_f32x4_splat(12582912.0f),
    wasm_f32x4_splat(p->near_tie * p->near_tie), wasm_i32x4_splat(INT32_C(0x4B400000) + p->offset)};
  const v128_t offset = wasm_i32x4_splat(p->offset);
  const v128_t output_min = wasm_i8x16_splat((int8_t) p->output_min), output_max = wasm_i8x16_splat((int8_t) p->output_max);
  const size_t whole = n & ~(size_t) 15;
  for (size_t i = 0; i < whole;) {
    const size_t end = qnn_min_size(whole, i + 64 * 16);
    size_t redo[64], count = 0;
    for (; i < end; i += 16) {
      v128_t xa[4], xb[4], q[4];
      offset_floats16(a + i, offset, xa);
      offset_floats16(b + i, offset, xb);
      v128_t near = wasm_i32x4_splat(0);
      for (int k = 0; k < 4; k++) q[k] = add_fast4(xa[k], xb[k], &c, &near);
      /* in [-128, 127] (the domain less the offset): the saturating narrows are exact */
      const v128_t out = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]), wasm_i16x8_narrow_i32x4(q[2], q[3]));
      wasm_v128_store(output + i, wasm_i8x16_min(wasm_i8x16_max(out, output_min), output_max));
      redo[count] = i;
      count += wasm_v128_any_true(near);
    }
    for (size_t k = 0; k < count; k++) {
      const v128_t out = add_float16_exact(a + redo[k], b + redo[k], p);
      wasm_v128_store(output + redo[k], wasm_i8x16_min(wasm_i8x16_max(out, output_min), output_max));
    }
  }
  return whole;
}
#endif

static void add_float_row(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                          int8_t* output, const void* params) {
  const struct add_float_params* p = params;
  size_t i = 0;
#if defined(__wasm_simd128__)
  if (a_stride == 1 && b_stride == 1) i = add_float_row_simd128(n, a, b, output, p);
#endif
  for (; i < n; i++) {
    const float xa = (float) ((int32_t) a[i * a_stride] + p->offset);
    const float xb = (float) ((int32_t) b[i * b_stride] + p->offset);
    float v = p->b_first ? fma_f32(xb, p->b_ratio, fma_f32(xa, p->a_ratio, p->fixed))
                         : fma_f32(xa, p->a_ratio, fma_f32(xb, p->b_ratio, p->fixed));
    /* clamped in float first (the same result, and no out-of-range conversion) */
    v = v < (float) p->domain_min ? (float) p->domain_min : v > (float) p->domain_max ? (float) p->domain_max : v;
    int32_t q = (int32_t) __builtin_rintf(v) - p->offset;
    q = qnn_min_i32(qnn_max_i32(q, p->output_min), p->output_max);
    output[i] = (int8_t) q;
  }
}

static int32_t add_float_init(const struct qnn_add_record* r, struct add_float_params* p) {
  if (r->input_offset != 0 && r->input_offset != 128) return binary_invalid("add", ": input_offset must be 0 or 128");
  if (r->float_form != 0 && r->float_form != 1) return binary_invalid("add", ": float_form must be 0 or 1");
  if (!(__builtin_fabsf(r->a_multiplier) <= 0x1.0p+100f) || !(__builtin_fabsf(r->b_multiplier) <= 0x1.0p+100f)) {
    return binary_invalid("add", ": a scale ratio is not finite");
  }
  p->a_ratio = r->a_multiplier;
  p->b_ratio = r->b_multiplier;
  p->offset = r->input_offset;
  const float za = (float) (r->a_zero_point + p->offset), zb = (float) (r->b_zero_point + p->offset);
  p->b_first = r->float_form;
  const float zero_points = p->b_first ? fma_f32(p->b_ratio, zb, p->a_ratio * za) : fma_f32(p->a_ratio, za, p->b_ratio * zb);
  p->fixed = (float) (r->output_zero_point + p->offset) - zero_points;
  p->domain_min = -128 + p->offset;
  p->domain_max = 127 + p->offset;
  p->output_min = r->output_min;
  p->output_max = r->output_max;
  p->fused = qnn_relaxed_madd_fused();
  /* The fast form's v and onnxruntime's both lie within a few roundings of the exact x * ra + y * rb +
   * fixed: each of their 2 + 4 roundings is off by at most 2^-24 of a partial sum (x, y in [0, 255]),
   * and no partial sum exceeds `largest`. So where the fast v is 8 * 2^-24 * largest or more from every
   * half-integer, both round to the same integer (clamping to the integer domain bounds moves neither
   * across one). Off for ratios so large that the bound is useless. */
  const double largest = 255.0 * (__builtin_fabs(p->a_ratio) + __builtin_fabs(p->b_ratio)) + __builtin_fabs(p->fixed) + 1.0;
  const double bound = 8.0 * 0x1.0p-24 * largest;
  p->near_tie = bound <= 0.0625 ? (float) (0.5 - 2.0 * bound) : 0.0f;
  return QNN_OK;
}

static void add_tflite_row(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                           int8_t* output, const void* params) {
  const struct add_tflite_params* p = params;
  for (size_t i = 0; i < n; i++) {
    const int32_t sum = p->a_terms[a[i * a_stride] + 128] + p->b_terms[b[i * b_stride] + 128];
    int32_t out = qnn_tflite_multiply(sum, p->output_multiplier, p->output_shift) + p->output_zero_point;
    out = qnn_min_i32(qnn_max_i32(out, p->output_min), p->output_max);
    output[i] = (int8_t) out;
  }
}

static int valid_fixed(int32_t multiplier, int32_t shift) {
  return (multiplier == 0 || multiplier >= (1 << 30)) && shift >= 0 && shift <= 31;
}

/* An input's term: M((x - zp) * 2^20, multiplier, shift), subtracted when the multiplier is negative
 * (TFLite's SUB negates the scaled value: not the same as scaling by -multiplier, whose ties round
 * differently). */
static int valid_input_fixed(int32_t multiplier, int32_t shift) {
  return multiplier != INT32_MIN && valid_fixed(multiplier < 0 ? -multiplier : multiplier, shift);
}

static int32_t input_term(int32_t x, int32_t zero_point, int32_t multiplier, int32_t shift) {
  const int32_t magnitude = multiplier < 0 ? -multiplier : multiplier;
  const int32_t scaled = qnn_tflite_multiply((x - zero_point) * (1 << 20), magnitude, shift);
  return multiplier < 0 ? -scaled : scaled;
}

static int32_t add_tflite_init(const struct qnn_add_record* r, struct add_tflite_params* p) {
  if (!valid_input_fixed(r->a_fixed_multiplier, r->a_fixed_shift) ||
      !valid_input_fixed(r->b_fixed_multiplier, r->b_fixed_shift) ||
      !valid_fixed(r->output_fixed_multiplier, r->output_fixed_shift)) {
    return binary_invalid("add", ": a fixed-point multiplier is outside [2^30, 2^31) (and not 0; an input's may be "
                   "negative) or its shift outside [0, 31]");
  }
  for (int32_t x = -128; x <= 127; x++) {
    /* |x - zp| <= 255: (x - zp) * 2^20 fits int32 */
    p->a_terms[x + 128] = input_term(x, r->a_zero_point, r->a_fixed_multiplier, r->a_fixed_shift);
    p->b_terms[x + 128] = input_term(x, r->b_zero_point, r->b_fixed_multiplier, r->b_fixed_shift);
  }
  p->output_multiplier = r->output_fixed_multiplier;
  p->output_shift = r->output_fixed_shift;
  p->output_zero_point = r->output_zero_point;
  p->output_min = r->output_min;
  p->output_max = r->output_max;
  return QNN_OK;
}

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
  /* Read in the loop (volatile): clang 14 hoists the splat of a loop-invariant shift count out of the
   * loop and then shifts the 4 lanes one by one. */
  const volatile uint32_t* shift = &p->shift;
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
    const uint32_t vshift = *shift;
    for (int k = 0; k < 4; k++) {
      v128_t v = wasm_i32x4_add(wasm_i32x4_add(vbias, acc[k]), bprod[k]);
      v = wasm_i32x4_shr(v, vshift);  /* arithmetic: floor, as the scalar int64 >> shift */
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

static int32_t add_xnnpack_init(const struct qnn_add_record* r, struct add_params* p) {
  const float abs_a = __builtin_fabsf(r->a_multiplier), abs_b = __builtin_fabsf(r->b_multiplier);
  const float max_abs = abs_a > abs_b ? abs_a : abs_b;
  if (!(max_abs >= 0x1.0p-10f && max_abs < 0x1.0p+8f) || !(abs_a >= 0.0f) || !(abs_b >= 0.0f)) {
    qnn_set_error("add: input scale / output scale must be in [2^-10, 2^8)");
    return QNN_ERROR_INVALID_RECORD;
  }
  union { float f; uint32_t u; } bits = {max_abs};
  const int32_t exponent = (int32_t) (bits.u >> 23) - 127;
  const uint32_t shift = (uint32_t) (20 - exponent);  /* in [13, 30] */
  const float two_shift = (float) (1u << shift);
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
  return QNN_OK;
}

int32_t qnn_create_add(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_add_record* r = record;
  if (!qnn_check_int8(r->a_zero_point, "add") || !qnn_check_int8(r->b_zero_point, "add") ||
      !qnn_check_int8(r->output_zero_point, "add") || !qnn_check_int8(r->output_min, "add") ||
      !qnn_check_int8(r->output_max, "add")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  struct add_op* op = qnn_plan_alloc(plan, sizeof(struct add_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  int32_t status;
  switch (r->arithmetic) {
    case ADD_XNNPACK: status = add_xnnpack_init(r, &op->params.xnnpack); break;
    case ADD_ONNXRUNTIME: status = add_float_init(r, &op->params.onnxruntime); break;
    case ADD_TFLITE: status = add_tflite_init(r, &op->params.tflite); break;
    default: return binary_invalid("add", ": arithmetic must be 0, 1 or 2");
  }
  if (status != QNN_OK) return status;
  status = binary_shape_init(
      plan, r->input_a, r->input_b, r->output, r->b_constant, r->dims, r->a_strides, r->b_strides,
      "add", "add input a", "add input b", "add output", 1, 1, &op->shape);
  if (status != QNN_OK) return status;
  op->arithmetic = r->arithmetic;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_add(const struct qnn_op* base) {
  const struct add_op* op = (const struct add_op*) base;
  static const binary_row_fn rows[] = {add_row, add_float_row, add_tflite_row};
  binary_run(&op->shape, rows[op->arithmetic], &op->params);
}
