/* RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (TFLite) and ONNX Resize on NHWC int8: the frontend
 * computes, per output row and column, the two input rows / columns and the weight the reference runtime
 * uses (XNNPACK's indirection or TFLite's own index rule for TFLite; onnxruntime's coordinates for ONNX),
 * so one kernel follows each bit for bit (qnnweb.h, struct qnn_resize_record):
 * - arithmetic 0 is XNNPACK's s8 ibilinear; SIMD128 computes the horizontal step as one
 *   i32x4.dot_i16x8_s of interleaved (left, right) values with (2048 - a, a), which is the same integer;
 * - arithmetic 1 and 2 are onnxruntime's float32 UpsampleBilinear: each corner's weight the product of a
 *   row and a column weight, the four products summed left to right; wasm's float32 mul / add / div are
 *   IEEE's, as x86's SSE, so SIMD128 and scalar code give onnxruntime's bits (never contracted: no FMA);
 * - arithmetic 3 is onnxruntime's NHWC integer path (1/1024 weights, a 2^20 division toward zero). */
#pragma clang fp contract(off)

#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

struct resize_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;           /* float32 values for arithmetic 4 */
  size_t batch, input_height, input_width, channels, output_height, output_width;
  int nearest;              /* every weight is 0: a gather */
  int32_t arithmetic;       /* enum qnn_resize_arithmetic */
  float scale, output_scale;           /* arithmetic 1 (1.0 for 2) */
  int32_t zero_point, output_zero_point;  /* arithmetic 1 (0 for 2) */
  const int32_t* rows;      /* output_height x (top, bottom, weight of the bottom) */
  const int32_t* columns;   /* output_width x (left, right, weight of the right) */
};

static float weight_f32(int32_t bits) {
  union { int32_t i; float f; } u = {bits};
  return u.f;
}

/* Whether `weight` is one of `arithmetic`'s (a float32 weight as bits: in [0, 1]). */
static int weight_in_range(int32_t arithmetic, int32_t weight) {
  switch (arithmetic) {
    case QNN_RESIZE_XNNPACK_Q11: return weight >= 0 && weight <= 2048;
    case QNN_RESIZE_ONNX_Q10: return weight >= 0 && weight <= 1024;
    default: {
      const float w = weight_f32(weight);
      return w >= 0.0f && w <= 1.0f;   /* false for NaN */
    }
  }
}

/* A table of `count` (first, second, weight) entries, checked against `size` input rows or columns and
 * the arithmetic's weights, copied into plan memory; *nonzero is set when some weight is not 0. */
static const int32_t* copy_table(struct qnn_plan* plan, int32_t address, int32_t count, int32_t size,
                                 int32_t arithmetic, const char* what, int* nonzero) {
  const int32_t* table = qnn_plan_constant(address, (int64_t) count * 12, what);
  if (table == NULL) return NULL;
  for (int32_t i = 0; i < count; i++) {
    const int32_t first = table[3 * i], second = table[3 * i + 1], weight = table[3 * i + 2];
    if (first < 0 || first >= size || second < 0 || second >= size || !weight_in_range(arithmetic, weight)) {
      qnn_set_error2(what, ": an input index outside the input or a weight outside the arithmetic's range");
      return NULL;
    }
    *nonzero |= weight != 0;
  }
  int32_t* copy = qnn_plan_alloc(plan, (int64_t) count * 12);
  if (copy != NULL) qnn_memcpy(copy, table, (size_t) count * 12);
  return copy;
}

QNN_PLAN_CODE int32_t qnn_create_resize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_resize_record* r = record;
  if (!qnn_check_positive(&r->batch, 6, "resize")) return QNN_ERROR_INVALID_RECORD;
  const int64_t input_bytes = (int64_t) r->batch * r->input_height * r->input_width * r->channels;
  const int64_t output_bytes = (int64_t) r->batch * r->output_height * r->output_width * r->channels *
                               (r->arithmetic == QNN_RESIZE_ONNX_FLOAT_OUTPUT ? 4 : 1);
  const int8_t* input = qnn_plan_tensor(plan, r->input, input_bytes, "resize input");
  int8_t* output = qnn_plan_tensor(plan, r->output, output_bytes, "resize output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct resize_op* op = qnn_plan_alloc(plan, sizeof(struct resize_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  if (r->arithmetic < QNN_RESIZE_XNNPACK_Q11 || r->arithmetic > QNN_RESIZE_ONNX_FLOAT_OUTPUT) {
    qnn_set_error("resize: unknown arithmetic");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int float_output = r->arithmetic == QNN_RESIZE_ONNX_FLOAT_OUTPUT;
  if ((r->arithmetic == QNN_RESIZE_ONNX_FLOAT || float_output) &&
      (!(r->scale > 0.0f && r->scale <= 3.4028234664e38f) || r->zero_point < -128 || r->zero_point > 127 ||
       (!float_output && (!(r->output_scale > 0.0f && r->output_scale <= 3.4028234664e38f) ||
                          r->output_zero_point < -128 || r->output_zero_point > 127)))) {
    qnn_set_error("resize: the scales must be positive and finite, the zero points int8");
    return QNN_ERROR_INVALID_RECORD;
  }
  int nonzero = 0;
  op->rows = copy_table(plan, r->rows, r->output_height, r->input_height, r->arithmetic, "resize rows", &nonzero);
  if (op->rows == NULL) return QNN_ERROR_INVALID_RECORD;
  op->columns = copy_table(plan, r->columns, r->output_width, r->input_width, r->arithmetic, "resize columns",
                           &nonzero);
  if (op->columns == NULL) return QNN_ERROR_INVALID_RECORD;
  op->arithmetic = r->arithmetic;
  const int dequantized = r->arithmetic == QNN_RESIZE_ONNX_FLOAT || float_output;
  op->scale = dequantized ? r->scale : 1.0f;
  op->zero_point = dequantized ? r->zero_point : 0;
  op->output_scale = dequantized && !float_output ? r->output_scale : 1.0f;
  op->output_zero_point = dequantized && !float_output ? r->output_zero_point : 0;
  op->input = input;
  op->output = output;
  op->batch = (size_t) r->batch;
  op->input_height = (size_t) r->input_height;
  op->input_width = (size_t) r->input_width;
  op->channels = (size_t) r->channels;
  op->output_height = (size_t) r->output_height;
  op->output_width = (size_t) r->output_width;
  /* every weight 0: a gather, unless arithmetic 1 quantizes the output otherwise than the input, or 4
   * outputs float32 */
  op->nearest = !nonzero && !float_output && op->scale == op->output_scale && op->zero_point == op->output_zero_point;
  *result = &op->base;
  return QNN_OK;
}

/* XNNPACK's s8 ibilinear of `channels` values (qnnweb.h). */
static void interpolate(const int8_t* tl, const int8_t* tr, const int8_t* bl, const int8_t* br, int32_t alpha_x,
                        int32_t alpha_y, size_t channels, int8_t* out) {
  size_t c = 0;
#if defined(__wasm_simd128__)
  /* (2048 - alpha_x, alpha_x) pairs: dot((l, r), that) = (l << 11) + (r - l) * alpha_x */
  const v128_t vweights = wasm_i32x4_splat((int32_t) ((uint32_t) alpha_x << 16 | (uint32_t) (2048 - alpha_x)));
  const v128_t valpha_y = wasm_i32x4_splat(alpha_y);
  const v128_t vrounding = wasm_i32x4_splat(1 << 21);
  for (; c + 8 <= channels; c += 8) {
    const v128_t vtop = wasm_i8x16_shuffle(wasm_v128_load64_zero(tl + c), wasm_v128_load64_zero(tr + c),
                                           0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t vbottom = wasm_i8x16_shuffle(wasm_v128_load64_zero(bl + c), wasm_v128_load64_zero(br + c),
                                              0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    v128_t vout[2];
    for (int h = 0; h < 2; h++) {
      const v128_t vt = wasm_i32x4_dot_i16x8(h == 0 ? wasm_i16x8_extend_low_i8x16(vtop) : wasm_i16x8_extend_high_i8x16(vtop), vweights);
      const v128_t vb = wasm_i32x4_dot_i16x8(h == 0 ? wasm_i16x8_extend_low_i8x16(vbottom) : wasm_i16x8_extend_high_i8x16(vbottom), vweights);
      const v128_t vacc = wasm_i32x4_add(wasm_i32x4_shl(vt, 11), wasm_i32x4_mul(wasm_i32x4_sub(vb, vt), valpha_y));
      vout[h] = wasm_i32x4_shr(wasm_i32x4_add(vacc, vrounding), 22);
    }
    const v128_t v16 = wasm_i16x8_narrow_i32x4(vout[0], vout[1]);
    wasm_v128_store64_lane(out + c, wasm_i8x16_narrow_i16x8(v16, v16), 0);
  }
#endif
QNN_SCALAR_LOOP
  for (; c < channels; c++) {
    const int32_t t = (int32_t) ((uint32_t) tl[c] << 11) + (tr[c] - tl[c]) * alpha_x;
    const int32_t b = (int32_t) ((uint32_t) bl[c] << 11) + (br[c] - bl[c]) * alpha_x;
    const int32_t acc = (int32_t) ((uint32_t) t << 11) + (b - t) * alpha_y;
    out[c] = (int8_t) ((acc + (1 << 21)) >> 22);
  }
}

/* arithmetic 1, 2 and 4: onnxruntime's float32 bilinear of `channels` values; dx / dy are the weights of
 * the right column / bottom row. Arithmetic 4 writes the float32 sums to `fout` (`out` unused). */
static void interpolate_onnx_float(const struct resize_op* op, const int8_t* tl, const int8_t* tr, const int8_t* bl,
                                   const int8_t* br, float dx, float dy, size_t channels, int8_t* out, float* fout) {
  const float dx2 = 1.0f - dx, dy2 = 1.0f - dy;
  const float c11 = dx2 * dy2, c21 = dx * dy2, c12 = dx2 * dy, c22 = dx * dy;
  const float scale = op->scale, output_scale = op->output_scale;
  const int32_t zero_point = op->zero_point, output_zero_point = op->output_zero_point;
  const int truncate = op->arithmetic == QNN_RESIZE_ONNX_FLOAT_TRUNCATE;
  const float lo = (float) (-128 - output_zero_point), hi = (float) (127 - output_zero_point);
  size_t c = 0;
#if defined(__wasm_simd128__)
  const v128_t vc11 = wasm_f32x4_splat(c11), vc21 = wasm_f32x4_splat(c21);
  const v128_t vc12 = wasm_f32x4_splat(c12), vc22 = wasm_f32x4_splat(c22);
  const v128_t vscale = wasm_f32x4_splat(scale), vzp = wasm_i32x4_splat(zero_point);
  const v128_t voutput_scale = wasm_f32x4_splat(output_scale), voutput_zp = wasm_i32x4_splat(output_zero_point);
  const v128_t vlo = wasm_f32x4_splat(lo), vhi = wasm_f32x4_splat(hi);
  /* 8 channels per step: each corner's 8 bytes widened once, its two halves interpolated alike */
  #define QNN_HALF(v16, half) wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_i32x4_sub( \
      half ? wasm_i32x4_extend_high_i16x8(v16) : wasm_i32x4_extend_low_i16x8(v16), vzp)), vscale)
  /* channels past the last multiple of 8 are done by one more step over the last 8 (overlapping the
   * step before, whose bytes it writes again, the same) */
  for (size_t done = 0; channels >= 8 && done < channels; done = c + 8) {
    c = done + 8 <= channels ? done : channels - 8;
    const v128_t t16 = wasm_i16x8_extend_low_i8x16(wasm_v128_load64_zero(tl + c));
    const v128_t r16 = wasm_i16x8_extend_low_i8x16(wasm_v128_load64_zero(tr + c));
    const v128_t b16 = wasm_i16x8_extend_low_i8x16(wasm_v128_load64_zero(bl + c));
    const v128_t s16 = wasm_i16x8_extend_low_i8x16(wasm_v128_load64_zero(br + c));
    v128_t vq[2];
    for (int h = 0; h < 2; h++) {
      v128_t vsum = wasm_f32x4_add(wasm_f32x4_mul(vc11, QNN_HALF(t16, h)), wasm_f32x4_mul(vc21, QNN_HALF(r16, h)));
      vsum = wasm_f32x4_add(vsum, wasm_f32x4_mul(vc12, QNN_HALF(b16, h)));
      vsum = wasm_f32x4_add(vsum, wasm_f32x4_mul(vc22, QNN_HALF(s16, h)));
      if (fout != NULL) {
        wasm_v128_store(fout + c + 4 * h, vsum);
      } else if (truncate) {
        vq[h] = wasm_i32x4_trunc_sat_f32x4(vsum);
      } else {
        const v128_t v = wasm_f32x4_min(wasm_f32x4_max(wasm_f32x4_div(vsum, voutput_scale), vlo), vhi);
        vq[h] = wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(v)), voutput_zp);
      }
    }
    if (fout == NULL) {
      const v128_t v16 = wasm_i16x8_narrow_i32x4(vq[0], vq[1]);
      wasm_v128_store64_lane(out + c, wasm_i8x16_narrow_i16x8(v16, v16), 0);
    }
  }
  #undef QNN_HALF
  if (channels >= 8) c = channels;
#endif
QNN_SCALAR_LOOP
  for (; c < channels; c++) {
    float sum = c11 * ((float) (tl[c] - zero_point) * scale) + c21 * ((float) (tr[c] - zero_point) * scale);
    sum = sum + c12 * ((float) (bl[c] - zero_point) * scale);
    sum = sum + c22 * ((float) (br[c] - zero_point) * scale);
    if (fout != NULL) {
      fout[c] = sum;
      continue;
    }
    int32_t q;
    if (truncate) {
      q = (int32_t) sum;                      /* toward zero; a convex sum of int8 values stays in range */
    } else {
      float v = sum / output_scale;
      v = v < lo ? lo : v;                    /* MLAS clamps before it rounds: the same for integer bounds */
      v = v > hi ? hi : v;
      q = (int32_t) __builtin_rintf(v) + output_zero_point;
    }
    out[c] = (int8_t) q;
  }
}

/* arithmetic 3: onnxruntime's NHWC integer bilinear of `channels` values; dx / dy in 1/1024ths. */
static void interpolate_onnx_q10(const int8_t* tl, const int8_t* tr, const int8_t* bl, const int8_t* br, int32_t dx,
                                 int32_t dy, size_t channels, int8_t* out) {
  const int32_t w11 = (1024 - dx) * (1024 - dy), w21 = dx * (1024 - dy), w12 = (1024 - dx) * dy, w22 = dx * dy;
  size_t c = 0;
#if defined(__wasm_simd128__)
  const v128_t vw11 = wasm_i32x4_splat(w11), vw21 = wasm_i32x4_splat(w21);
  const v128_t vw12 = wasm_i32x4_splat(w12), vw22 = wasm_i32x4_splat(w22);
  const v128_t vround = wasm_i32x4_splat((1 << 20) - 1);
  for (; c + 4 <= channels; c += 4) {
    #define QNN_VALUES(p) wasm_i32x4_extend_low_i16x8(wasm_i16x8_extend_low_i8x16(wasm_v128_load32_zero(p + c)))
    v128_t vsum = wasm_i32x4_add(wasm_i32x4_mul(vw11, QNN_VALUES(tl)), wasm_i32x4_mul(vw21, QNN_VALUES(tr)));
    vsum = wasm_i32x4_add(vsum, wasm_i32x4_add(wasm_i32x4_mul(vw12, QNN_VALUES(bl)), wasm_i32x4_mul(vw22, QNN_VALUES(br))));
    #undef QNN_VALUES
    /* C's division toward zero: a negative sum gets 2^20 - 1 added before the arithmetic shift */
    const v128_t vq = wasm_i32x4_shr(wasm_i32x4_add(vsum, wasm_v128_and(wasm_i32x4_shr(vsum, 31), vround)), 20);
    const v128_t v16 = wasm_i16x8_narrow_i32x4(vq, vq);
    wasm_v128_store32_lane(out + c, wasm_i8x16_narrow_i16x8(v16, v16), 0);
  }
#endif
QNN_SCALAR_LOOP
  for (; c < channels; c++) {
    const int32_t sum = w11 * tl[c] + w21 * tr[c] + w12 * bl[c] + w22 * br[c];
    out[c] = (int8_t) (sum / (1 << 20));
  }
}

/* Tasks are ranges of output rows (batch x output_height). */
static void resize_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct resize_op* op = context;
  const size_t c = op->channels, row_bytes = op->input_width * c;
  const size_t out_size = op->arithmetic == QNN_RESIZE_ONNX_FLOAT_OUTPUT ? 4 : 1;   /* bytes per output value */
  for (size_t row = first; row < first + count; row++) {
    const size_t n = row / op->output_height, y = row % op->output_height;
    const int32_t* ry = op->rows + 3 * y;
    const int8_t* top = op->input + (n * op->input_height + (size_t) ry[0]) * row_bytes;
    const int8_t* bottom = op->input + (n * op->input_height + (size_t) ry[1]) * row_bytes;
    int8_t* out = op->output + row * op->output_width * c * out_size;
    for (size_t x = 0; x < op->output_width; x++, out += c * out_size) {
      const int32_t* rx = op->columns + 3 * x;
      const int8_t *tl = top + (size_t) rx[0] * c, *tr = top + (size_t) rx[1] * c;
      const int8_t *bl = bottom + (size_t) rx[0] * c, *br = bottom + (size_t) rx[1] * c;
      if (op->nearest) {
        qnn_memcpy(out, tl, c);
      } else if (op->arithmetic == QNN_RESIZE_XNNPACK_Q11) {
        interpolate(tl, tr, bl, br, rx[2], ry[2], c, out);
      } else if (op->arithmetic == QNN_RESIZE_ONNX_Q10) {
        interpolate_onnx_q10(tl, tr, bl, br, rx[2], ry[2], c, out);
      } else {
        interpolate_onnx_float(op, tl, tr, bl, br, weight_f32(rx[2]), weight_f32(ry[2]), c, out,
                               out_size == 4 ? (float*) (void*) out : NULL);
      }
    }
  }
}

void qnn_run_resize(const struct qnn_op* base) {
  const struct resize_op* op = (const struct resize_op*) base;
  const size_t rows = op->batch * op->output_height;
  qnn_parallelize_ranges(resize_rows, op, rows, 1, 4, op->output_width * op->channels, QNN_TASK_ELEMENTS);
}
