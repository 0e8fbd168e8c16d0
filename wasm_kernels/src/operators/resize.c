/* RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (TFLite) on NHWC int8: the frontend computes, per output
 * row and column, the two input rows / columns and the q11 weight the reference runtime uses (XNNPACK's
 * indirection for bilinear, TFLite's own index rule for nearest, with zero weights), so one kernel
 * follows both bit for bit. The arithmetic is XNNPACK's s8 ibilinear (qnnweb.h); SIMD128 computes the
 * horizontal step as one i32x4.dot_i16x8_s of interleaved (left, right) values with (2048 - a, a),
 * which is the same integer. */
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
  int8_t* output;
  size_t batch, input_height, input_width, channels, output_height, output_width;
  int nearest;              /* every alpha is 0: a gather */
  const int32_t* rows;      /* output_height x (top, bottom, alpha_y) */
  const int32_t* columns;   /* output_width x (left, right, alpha_x) */
};

/* A table of `count` (first, second, alpha) entries, checked against `size` input rows or columns,
 * copied into plan memory; *nonzero is set when some alpha is not 0. */
static const int32_t* copy_table(struct qnn_plan* plan, int32_t address, int32_t count, int32_t size,
                                 const char* what, int* nonzero) {
  const int32_t* table = qnn_plan_constant(address, (int64_t) count * 12, what);
  if (table == NULL) return NULL;
  for (int32_t i = 0; i < count; i++) {
    const int32_t first = table[3 * i], second = table[3 * i + 1], alpha = table[3 * i + 2];
    if (first < 0 || first >= size || second < 0 || second >= size || alpha < 0 || alpha > 2048) {
      qnn_set_error2(what, ": an input index outside the input or a weight outside [0, 2048]");
      return NULL;
    }
    *nonzero |= alpha != 0;
  }
  int32_t* copy = qnn_plan_alloc(plan, (int64_t) count * 12);
  if (copy != NULL) qnn_memcpy(copy, table, (size_t) count * 12);
  return copy;
}

int32_t qnn_create_resize(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_resize_record* r = record;
  if (!qnn_check_positive(&r->batch, 6, "resize")) return QNN_ERROR_INVALID_RECORD;
  const int64_t input_bytes = (int64_t) r->batch * r->input_height * r->input_width * r->channels;
  const int64_t output_bytes = (int64_t) r->batch * r->output_height * r->output_width * r->channels;
  const int8_t* input = qnn_plan_tensor(plan, r->input, input_bytes, "resize input");
  int8_t* output = qnn_plan_tensor(plan, r->output, output_bytes, "resize output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct resize_op* op = qnn_plan_alloc(plan, sizeof(struct resize_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  int nonzero = 0;
  op->rows = copy_table(plan, r->rows, r->output_height, r->input_height, "resize rows", &nonzero);
  op->columns = copy_table(plan, r->columns, r->output_width, r->input_width, "resize columns", &nonzero);
  if (op->rows == NULL || op->columns == NULL) return QNN_ERROR_INVALID_RECORD;
  op->input = input;
  op->output = output;
  op->batch = (size_t) r->batch;
  op->input_height = (size_t) r->input_height;
  op->input_width = (size_t) r->input_width;
  op->channels = (size_t) r->channels;
  op->output_height = (size_t) r->output_height;
  op->output_width = (size_t) r->output_width;
  op->nearest = !nonzero;
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
  for (; c < channels; c++) {
    const int32_t t = (int32_t) ((uint32_t) tl[c] << 11) + (tr[c] - tl[c]) * alpha_x;
    const int32_t b = (int32_t) ((uint32_t) bl[c] << 11) + (br[c] - bl[c]) * alpha_x;
    const int32_t acc = (int32_t) ((uint32_t) t << 11) + (b - t) * alpha_y;
    out[c] = (int8_t) ((acc + (1 << 21)) >> 22);
  }
}

/* Tasks are ranges of output rows (batch x output_height). */
static void resize_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct resize_op* op = context;
  const size_t c = op->channels, row_bytes = op->input_width * c;
  for (size_t row = first; row < first + count; row++) {
    const size_t n = row / op->output_height, y = row % op->output_height;
    const int32_t* ry = op->rows + 3 * y;
    const int8_t* top = op->input + (n * op->input_height + (size_t) ry[0]) * row_bytes;
    const int8_t* bottom = op->input + (n * op->input_height + (size_t) ry[1]) * row_bytes;
    int8_t* out = op->output + row * op->output_width * c;
    for (size_t x = 0; x < op->output_width; x++, out += c) {
      const int32_t* rx = op->columns + 3 * x;
      if (op->nearest) {
        qnn_memcpy(out, top + (size_t) rx[0] * c, c);
      } else {
        interpolate(top + (size_t) rx[0] * c, top + (size_t) rx[1] * c, bottom + (size_t) rx[0] * c,
                    bottom + (size_t) rx[1] * c, rx[2], ry[2], c, out);
      }
    }
  }
}

void qnn_run_resize(const struct qnn_op* base) {
  const struct resize_op* op = (const struct resize_op*) base;
  const size_t rows = op->batch * op->output_height;
  qnn_parallelize_ranges(resize_rows, op, rows, qnn_items_per_task(rows, 1, 4, 2));
}
