/* UNARY_F32: output[i] = f(input[i]) on float32 tensors, f one of the float element functions ONNX models
 * run between ops (LayerNormalization -> HardSwish -> QuantizeLinear), computed as onnxruntime's x86-64
 * CPU kernels compute them on a machine with AVX2 and FMA3, step by step in float32:
 *   Erf, Exp, Sigmoid, Tanh: MLAS's FMA3 kernels (mlas/lib/x86_64/ErfKernelFma3.S, TransKernelFma3.S,
 *     logistic.cpp, tanh.cpp), every multiply-add one fused (qnn_fmaf);
 *   Elu: Eigen's pexp_float on SSE packets (no FMA), alpha (exp(x) - 1);
 *   Gelu (erf and tanh forms), HardSwish, HardSigmoid, LeakyRelu, Clip, Relu, Sqrt, Pow 2 / 3, Neg, Abs,
 *     Reciprocal, and Add / Sub / Mul / Div with a constant: their float32 expressions, one rounding each.
 * The reference is qnnweb.numerics.onnxruntime.element_function, which tests/kernels/test_unary_f32.py
 * checks this against bit for bit on every variant (and against onnxruntime itself); where Python's min /
 * max are the reference, so are their comparisons here (NaN passes through a clamp, -0 through max(x, 0)).
 * Infinities: the clamps the functions start with take them in (exp(-inf) = 0, tanh(inf) = 1,
 * erf(inf) = 1). NaN gives NaN in every function (its payload aside).
 * Scalar in every variant for now (no loop vectorized: the same floats, the code smaller; a SIMD128 form
 * would compute the same steps four at a time), elements split across threads. */
#include "qnnweb.h"
#include "common.h"
#include "fmaf.h"
#include "operators.h"
#include "threadpool.h"


/* Scalar, one function call per element whatever the flags: compiled for size (the relaxed module's
 * 128 KiB budget); minsize changes no float arithmetic. */
#pragma clang attribute push(__attribute__((minsize)), apply_to = function)

/* every product and sum rounded as written: no multiply-add fused by the compiler (a relaxed madd may be) */
#pragma clang fp contract(off)

#define F32(x) ((float) (x))   /* a double constant rounded to float32, as the references round theirs */

struct unary_f32_op {
  struct qnn_op base;
  const float* input;
  float* output;
  size_t size;
  int32_t operation;
  float alpha, beta;
  int fused;   /* QNN_FMA4_EXACT() (operators.h): four lanes at a time give apply()'s bits */
};

/* Python's max(a, b) and min(a, b), the reference's clamps: a unless b compares beyond it. */
static inline float py_max(float a, float b) { return b > a ? b : a; }
static inline float py_min(float a, float b) { return b < a ? b : a; }

/* y * 2^n rounded once to float32 (math.ldexp then float32), n in [-1022, 1023]. */
static float scale_by_power_of_2(float y, int32_t n) {
  union { uint64_t u; double d; } power = {(uint64_t) (n + 1023) << 52};
  return (float) ((double) y * power.d);
}

/* The integer n of a float32 holding one, in [-200, 200] (NaN: 0): ldexp's exponent. */
static inline int32_t exponent_of(float n) {
  return n >= -200.0f && n <= 200.0f ? (int32_t) n : 0;
}

static const float log2_reciprocal = F32(1.44269504088896341), rounding = F32(1.25829120e+7);  /* 1.5 * 2^23 */
static const float log2_high = F32(-6.93145752e-1), log2_low = F32(-1.42860677e-6);

/* MlasErfKernelFma3: an odd polynomial in x^2 below 0.921875, beyond 1 - exp(-P(|x|)) with MLAS's exp
 * polynomial, the sign copied back last (no clamp of |x|: onnxruntime 1.32's results show none). */
static const float erf_small[6] = {F32(-5.99104969e-4), F32(4.99339588e-3), F32(-2.67667342e-2),
                                   F32(1.12818025e-1), F32(-3.76124859e-1), F32(1.28379151e-1)};
static const float erf_big[7] = {F32(1.72948930e-5), F32(-3.83208680e-4), F32(3.88393435e-3), F32(-2.42545605e-2),
                                 F32(1.06777847e-1), F32(6.34846687e-1), F32(1.28717512e-1)};
static const float erf_exp_polynomial[7] = {F32(1.38319808e-3), F32(8.37550033e-3), F32(4.16689515e-2),
                                            F32(1.66664466e-1), F32(4.99999851e-1), 1.0f, 1.0f};

static float mlas_erf(float x) {
  const float* small = erf_small;
  const float* big = erf_big;
  const float* exp_polynomial = erf_exp_polynomial;
  const float a = __builtin_fabsf(x);
  float r;
  if (a < 0.921875f) {
    const float s = a * a;
    r = small[0];
QNN_SCALAR_LOOP
    for (int k = 1; k < 6; k++) r = qnn_fmaf(r, s, small[k]);
    r = qnn_fmaf(r, a, a);
  } else {
    r = big[0];
QNN_SCALAR_LOOP
    for (int k = 1; k < 7; k++) r = qnn_fmaf(r, a, big[k]);
    const float e = py_max(-qnn_fmaf(r, a, a), F32(-88.3762626647949));
    const float n = qnn_fmaf(log2_reciprocal, e, rounding) - rounding;   /* round(e / ln 2) */
    float f = qnn_fmaf(n, log2_high, e);
    f = qnn_fmaf(n, log2_low, f);
    float y = exp_polynomial[0];
QNN_SCALAR_LOOP
    for (int k = 1; k < 7; k++) y = qnn_fmaf(y, f, exp_polynomial[k]);
    r = 1.0f - scale_by_power_of_2(y, exponent_of(n));
  }
  return __builtin_signbit(x) ? -r : r;
}

/* MlasComputeExpF32KernelFma3: x clamped, m = round(x / ln 2), r = x - m ln 2 (two FMAs), p(r) by Horner,
 * then 2^m as a normal power (exponent clamped to [-126, 127]) times the rest:
 * (p * (r * rest) + rest) * normal. */
static float mlas_exp(float x) {
  static const float polynomial[6] = {0x1.694000p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f, 0x1.555450p-3f,
                                      0x1.fffff6p-2f, 1.0f};
  x = py_min(py_max(x, F32(-103.9720840454)), F32(88.7762626647950));
  const float m = qnn_fmaf(log2_reciprocal, x, rounding) - rounding;
  float r = qnn_fmaf(m, log2_high, x);
  r = qnn_fmaf(m, log2_low, r);
  float p = polynomial[0];
QNN_SCALAR_LOOP
  for (int k = 1; k < 6; k++) p = qnn_fmaf(p, r, polynomial[k]);
  const int32_t exponent = exponent_of(m), normal = qnn_min_i32(qnn_max_i32(exponent, -126), 127);
  const float rest = scale_by_power_of_2(1.0f, exponent - normal);
  p = qnn_fmaf(p, r * rest, rest);
  return scale_by_power_of_2(p, normal);
}

/* exp(x + negative_max) as MLAS's MlasComputeSumExpF32KernelFma3 computes each element of a float Softmax's
 * row: the sum clamped below at -88.376 (maxps with the bound first), MLAS's exp polynomial (its last
 * coefficient applied twice) and one power-of-2 scale made from the rounded exponent's bits. */
static const float sum_exp_polynomial[7] = {0x1.694000p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f, 0x1.555450p-3f,
                                           0x1.fffff6p-2f, 1.0f, 1.0f};

float qnn_mlas_sum_expf(float x, float negative_max) {
  const float* polynomial = sum_exp_polynomial;
  float v = x + negative_max;
  v = F32(-88.3762626647949) > v ? F32(-88.3762626647949) : v;
  const float biased = qnn_fmaf(v, log2_reciprocal, rounding), m = biased - rounding;
  v = qnn_fmaf(m, log2_high, v);
  v = qnn_fmaf(m, log2_low, v);
  float p = polynomial[0];
QNN_SCALAR_LOOP
  for (int k = 1; k < 7; k++) p = qnn_fmaf(p, v, polynomial[k]);
  union { float f; uint32_t u; } scale = {biased};
  scale.u = (scale.u << 23) + 0x3F800000u;
  return p * scale.f;
}

#if defined(__wasm_simd128__)
/* qnn_mlas_sum_expf of four values with QNN_FMA4 (operators.h): the same bits where QNN_FMA4_EXACT(). */
v128_t qnn_mlas_sum_exp4(v128_t x, v128_t negative_max) {
  const v128_t lower = wasm_f32x4_splat(F32(-88.3762626647949)), bias = wasm_f32x4_splat(rounding);
  v128_t v = wasm_f32x4_add(x, negative_max);
  v = wasm_v128_bitselect(lower, v, wasm_f32x4_gt(lower, v));
  const v128_t biased = QNN_FMA4(v, wasm_f32x4_splat(log2_reciprocal), bias);
  const v128_t m = wasm_f32x4_sub(biased, bias);
  v = QNN_FMA4(m, wasm_f32x4_splat(log2_high), v);
  v = QNN_FMA4(m, wasm_f32x4_splat(log2_low), v);
  v128_t p = wasm_f32x4_splat(sum_exp_polynomial[0]);
  for (int k = 1; k < 7; k++) p = QNN_FMA4(p, v, wasm_f32x4_splat(sum_exp_polynomial[k]));
  return wasm_f32x4_mul(p, wasm_i32x4_add(wasm_i32x4_shl(biased, 23), wasm_i32x4_splat(0x3F800000)));
}
#endif

/* MLAS's odd rational approximation x P(x^2) / Q(x^2) (logistic.cpp, tanh.cpp), Horner with FMAs. */
static float mlas_rational(float x, const float* alpha, int alphas, const float* beta, int betas) {
  const float x2 = x * x;
  float p = qnn_fmaf(x2, alpha[0], alpha[1]);
QNN_SCALAR_LOOP
  for (int k = 2; k < alphas; k++) p = qnn_fmaf(p, x2, alpha[k]);
  p = p * x;
  float q = qnn_fmaf(x2, beta[0], beta[1]);
QNN_SCALAR_LOOP
  for (int k = 2; k < betas; k++) q = qnn_fmaf(q, x2, beta[k]);
  return p / q;
}

static float mlas_logistic(float x) {
  static const float alpha[5] = {F32(4.37031012579801e-11), F32(1.15627324459942e-07), F32(6.08574864600143e-05),
                                 F32(8.51377133304701e-03), F32(2.48287947061529e-01)};
  static const float beta[6] = {F32(6.10247389755681e-13), F32(5.76102136993427e-09), F32(6.29106785017040e-06),
                                F32(1.70198817374094e-03), F32(1.16817656904453e-01), F32(9.93151921023180e-01)};
  /* clamped below only (LogisticKernelFma3.S): a few inputs near 17.5 give 1.0000001, as in onnxruntime */
  return py_max(mlas_rational(py_min(py_max(x, -18.0f), 18.0f), alpha, 5, beta, 6) + 0.5f, 0.0f);
}

static float mlas_tanh(float x) {
  static const float alpha[7] = {F32(-2.76076847742355e-16), F32(2.00018790482477e-13), F32(-8.60467152213735e-11),
                                 F32(5.12229709037114e-08), F32(1.48572235717979e-05), F32(6.37261928875436e-04),
                                 F32(4.89352455891786e-03)};
  static const float beta[4] = {F32(1.19825839466702e-06), F32(1.18534705686654e-04), F32(2.26843463243900e-03),
                                F32(4.89352518554385e-03)};
  return mlas_rational(py_min(py_max(x, -9.0f), 9.0f), alpha, 7, beta, 4);
}

/* Eigen's pexp_float (Cephes' range reduction, a degree-6 polynomial), each step rounded, no FMA: the exp
 * of onnxruntime's Elu. */
static float eigen_exp(float x) {
  if (x < -104.0f) return 0.0f;
  const float clamped = py_min(x, F32(88.723));
  const float m = __builtin_floorf(clamped * F32(1.44269504088896341) + 0.5f);
  float r = m * -0.693359375f + clamped;
  r = m * F32(2.12194440e-4) + r;
  const float r2 = r * r;
  float even = r2 * F32(1.37449637986719608306884765625e-3) + F32(4.166965186595916748046875e-2);
  const float odd = r2 * F32(8.36894474923610687255859375e-3) + F32(0.16666518151760101318359375);
  even = r2 * even + F32(0.49999988079071044921875);
  float y = r * odd + even;
  y = r2 * y + (r + 1.0f);
  return py_max(scale_by_power_of_2(y, exponent_of(m)), x);
}

#if defined(__wasm_relaxed_simd__)
/* mlas_erf of four values with QNN_FMA4 (the same bits where QNN_FMA4_EXACT()), in the relaxed variant only
 * (SIMD128's emulated FMA4 is slower here than scalar qnn_fmaf: both branches cost twice the FMAs): both
 * branches computed, the one of each lane's |x| kept; y * 2^n as (y * 2^(n + 64)) * 2^-64, exact and then
 * rounded once, as the double product of the scalar form. */
static v128_t mlas_erf4(v128_t x) {
  const v128_t a = wasm_f32x4_abs(x), s = wasm_f32x4_mul(a, a);
  v128_t small = wasm_f32x4_splat(erf_small[0]), big = wasm_f32x4_splat(erf_big[0]);
  for (int k = 1; k < 6; k++) small = QNN_FMA4(small, s, wasm_f32x4_splat(erf_small[k]));
  small = QNN_FMA4(small, a, a);
  for (int k = 1; k < 7; k++) big = QNN_FMA4(big, a, wasm_f32x4_splat(erf_big[k]));
  const v128_t lower = wasm_f32x4_splat(F32(-88.3762626647949)), bias = wasm_f32x4_splat(rounding);
  v128_t e = wasm_f32x4_neg(QNN_FMA4(big, a, a));
  e = wasm_v128_bitselect(lower, e, wasm_f32x4_gt(lower, e));
  const v128_t n = wasm_f32x4_sub(QNN_FMA4(wasm_f32x4_splat(log2_reciprocal), e, bias), bias);
  v128_t f = QNN_FMA4(n, wasm_f32x4_splat(log2_high), e);
  f = QNN_FMA4(n, wasm_f32x4_splat(log2_low), f);
  v128_t y = wasm_f32x4_splat(erf_exp_polynomial[0]);
  for (int k = 1; k < 7; k++) y = QNN_FMA4(y, f, wasm_f32x4_splat(erf_exp_polynomial[k]));
  const v128_t power = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127 + 64)), 23);
  y = wasm_f32x4_mul(wasm_f32x4_mul(y, power), wasm_f32x4_splat(0x1.0p-64f));
  big = wasm_f32x4_sub(wasm_f32x4_splat(1.0f), y);
  const v128_t r = wasm_v128_bitselect(small, big, wasm_f32x4_lt(a, wasm_f32x4_splat(0.921875f)));
  return wasm_v128_or(r, wasm_v128_and(x, wasm_i32x4_splat(INT32_MIN)));
}
#endif

static float mlas_gelu(float x) {
  return (0.5f * x) * (mlas_erf(x * F32(0.70710678118654752440)) + 1.0f);
}

static float gelu_tanh(float x) {
  const float inner = x * ((F32(0.035677408136300125) * x) * x + F32(0.7978845608028654));
  return (0.5f * x) * (mlas_tanh(inner) + 1.0f);
}

static float apply(const struct unary_f32_op* op, float x) {
  const float alpha = op->alpha, beta = op->beta;
  switch (op->operation) {
    case QNN_UNARY_F32_ERF: return mlas_erf(x);
    case QNN_UNARY_F32_EXP: return mlas_exp(x);
    case QNN_UNARY_F32_GELU: return mlas_gelu(x);
    case QNN_UNARY_F32_GELU_TANH: return gelu_tanh(x);
    case QNN_UNARY_F32_SQRT: return x >= 0.0f ? __builtin_sqrtf(x) : __builtin_nanf("");
    case QNN_UNARY_F32_SQUARE: return x * x;
    case QNN_UNARY_F32_CUBE: return (x * x) * x;
    case QNN_UNARY_F32_NEGATE: return -x;
    case QNN_UNARY_F32_ABS: return __builtin_fabsf(x);
    case QNN_UNARY_F32_RECIPROCAL: return 1.0f / x;
    case QNN_UNARY_F32_LEAKY_RELU: return x >= 0.0f ? x : alpha * x;
    case QNN_UNARY_F32_ELU: return x >= 0.0f ? x : alpha * (eigen_exp(x) - 1.0f);
    case QNN_UNARY_F32_LOGISTIC: return mlas_logistic(x);
    case QNN_UNARY_F32_TANH: return mlas_tanh(x);
    case QNN_UNARY_F32_HARD_SWISH: return x * py_min(py_max(x * F32(1.0 / 6.0) + 0.5f, 0.0f), 1.0f);
    case QNN_UNARY_F32_HARD_SIGMOID: return py_min(py_max(alpha * x + beta, 0.0f), 1.0f);
    case QNN_UNARY_F32_CLAMP: return py_min(py_max(x, alpha), beta);
    case QNN_UNARY_F32_MAX: return py_max(x, alpha);
    case QNN_UNARY_F32_MIN: return py_min(x, beta);
    case QNN_UNARY_F32_ADD: return x + alpha;
    case QNN_UNARY_F32_SUBTRACT: return x - alpha;
    case QNN_UNARY_F32_SUBTRACT_FROM: return alpha - x;
    case QNN_UNARY_F32_MULTIPLY: return x * alpha;
    case QNN_UNARY_F32_DIVIDE: return x / alpha;
    case QNN_UNARY_F32_DIVIDE_INTO: return alpha / x;
    case QNN_UNARY_F32_NONZERO_TO: return x != 0.0f ? alpha : x;   /* NaN is nonzero, as Cast to bool has it */
    case QNN_UNARY_F32_ZERO_TO: return x != 0.0f ? x : alpha;
    case QNN_UNARY_F32_SELECT: return x != 0.0f ? alpha : beta;
    case QNN_UNARY_F32_NAN_TO: return x != x ? alpha : x;
    default: return x;   /* QNN_UNARY_F32_COPY */
  }
}

QNN_PLAN_CODE int32_t qnn_create_unary_f32(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_unary_f32_record* r = record;
  if (r->size < 0 || r->size > (INT32_MAX >> 2)) {
    qnn_set_error("unary_f32: negative or huge size");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->operation < 0 || r->operation >= QNN_UNARY_F32_OPERATION_COUNT) {
    qnn_set_error("unary_f32: unknown operation");
    return QNN_ERROR_INVALID_RECORD;
  }
  /* finite constants (qnnweb.records refuses others too; a selection's may be infinite, never NaN), a clamp
   * whose bounds are in order */
  const int selection = r->operation >= QNN_UNARY_F32_NONZERO_TO;
  if (!(selection ? r->alpha == r->alpha && r->beta == r->beta : r->alpha - r->alpha == 0.0f && r->beta - r->beta == 0.0f) ||
      (r->operation == QNN_UNARY_F32_CLAMP && !(r->alpha <= r->beta))) {
    qnn_set_error("unary_f32: alpha and beta must be finite (or infinite in a selection), and alpha <= beta for a clamp");
    return QNN_ERROR_INVALID_RECORD;
  }
  const float* input = (const float*) qnn_plan_tensor(plan, r->input, (int64_t) r->size * 4, "unary_f32 input");
  float* output = (float*) qnn_plan_tensor(plan, r->output, (int64_t) r->size * 4, "unary_f32 output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct unary_f32_op* op = qnn_plan_alloc(plan, sizeof(struct unary_f32_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
#if defined(__wasm_simd128__)
  const int fused = QNN_FMA4_EXACT();
#else
  const int fused = 0;
#endif
  *op = (struct unary_f32_op) {{0}, input, output, (size_t) r->size, r->operation, r->alpha, r->beta, fused};
  *result = &op->base;
  return QNN_OK;
}

static void unary_f32_range(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct unary_f32_op* op = context;
  size_t i = first;
#if defined(__wasm_relaxed_simd__)
  /* Erf and Gelu four at a time where QNN_FMA4 rounds once: the same bits as apply() */
  const int gelu = op->operation == QNN_UNARY_F32_GELU;
  for (; op->fused && (gelu || op->operation == QNN_UNARY_F32_ERF) && i + 4 <= first + count; i += 4) {
    const v128_t x = wasm_v128_load(op->input + i);
    const v128_t r = mlas_erf4(gelu ? wasm_f32x4_mul(x, wasm_f32x4_splat(F32(0.70710678118654752440))) : x);
    wasm_v128_store(op->output + i, gelu ? wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(0.5f), x),
                                                          wasm_f32x4_add(r, wasm_f32x4_splat(1.0f))) : r);
  }
#endif
QNN_SCALAR_LOOP
  for (; i < first + count; i++) op->output[i] = apply(op, op->input[i]);
}

void qnn_run_unary_f32(const struct qnn_op* base) {
  const struct unary_f32_op* op = (const struct unary_f32_op*) base;
  /* the functions with a polynomial cost some 20 element passes of a table op each */
  const uint64_t work = op->operation >= QNN_UNARY_F32_ERF && op->operation <= QNN_UNARY_F32_GELU_TANH ? 24
                        : op->operation >= QNN_UNARY_F32_ELU && op->operation <= QNN_UNARY_F32_TANH ? 24 : 1;
  qnn_parallelize_ranges(unary_f32_range, op, op->size, 16, 4, work, QNN_TASK_ELEMENTS);
}

#pragma clang attribute pop
