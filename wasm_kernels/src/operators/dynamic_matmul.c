/* DYNAMIC_MATMUL: onnxruntime's MatMulInteger + Cast + Mul + Add of a quantize_dynamic model, or its fused
 * MatMulIntegerToFloat / DynamicQuantizeMatMul (qnnweb.h), with MatMulInteger's exact int32 sums; and
 * DYNAMIC_CONV2D, its ConvInteger + Cast + Mul + Add: the same product over the rows of an im2col (each output
 * pixel's window, group by group). A matrix product is the convolution of a [rows, 1] image by a 1x1 kernel,
 * so both run one code.
 *
 * The weights are packed at load as int16 columns ([columns][depth rounded up to 16], zeros past depth):
 * w - w_zp[n] with their sums, so that a run computes sum_k x_k (w - w_zp) - x_zp * sum (w - w_zp) with
 * the zero point of X, known only then, folded in per column (a window's taps in the padding read x_zp, as
 * ConvInteger pads: they add nothing once it is folded in). Each task gathers two rows of X at a time as
 * int16 in its thread's scratch and takes their dot products (i32x4.dot_i16x8: |x| <= 255, |w - w_zp| <= 255,
 * exact) with four columns at a time. A depthwise convolution (a group per channel) runs apart: its weights
 * packed [taps][channels], each pixel's taps add (x - x_zp) (w - w_zp) into int32 sums of eight channels at a
 * time (the channels are contiguous in NHWC). Integer sums are exact and the float steps are the same two
 * roundings in every variant, so every module gives the same bytes. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"
#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

#define DEPTH_BLOCK 16

/* Where the rows of X come from: row m is output pixel (image, y, x) of an [images, height, width, channels]
 * input (channels = groups x depth / taps); a matrix [rows, depth] is rows x 1 pixels of a 1x1 window. */
struct window {
  size_t height, width, channels, output_height, output_width;
  size_t kernel_height, kernel_width, stride_height, stride_width, dilation_height, dilation_width;
  size_t padding_top, padding_left, groups;
};

struct dynamic_matmul_op {
  struct qnn_op base;
  const int8_t* input;
  float* output;
  const void* parameters;
  size_t rows, depth, columns, padded_depth;   /* depth: of one group's window; columns: of every group */
  struct window window;
  int depthwise;                 /* one channel per group: weights [depth][columns], no column sums */
  const int16_t* weights;        /* [columns][padded_depth]: w - w_zp[n] */
  const int32_t* column_sums;    /* sum over k of the packed weights of each column */
  const float* scales;
  const float* bias;             /* NULL: none */
};

/* The op of either record: the input and output tensors, then the weights [depth][columns] packed. */
QNN_PLAN_CODE static int32_t create(struct qnn_plan* plan, int32_t type, const struct window* window,
                                    const int32_t fields[7], int64_t rows, int64_t depth, int64_t columns,
                                    int64_t input_bytes, const char* what, struct qnn_op** result) {
  enum { INPUT, OUTPUT, PARAMETERS, WEIGHTS, ZERO_POINTS, SCALES, BIAS };
  if (depth > (1 << 16)) {
    qnn_set_error2(what, ": depth over 65536 (int32 sums could overflow)");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t padded_depth = qnn_round_up(depth, DEPTH_BLOCK);
  const int depthwise = window->groups > 1 && window->groups == (size_t) columns && window->channels == (size_t) columns;
  const int8_t* input = qnn_plan_tensor(plan, fields[INPUT], input_bytes, what);
  float* output = (float*) qnn_plan_tensor(plan, fields[OUTPUT], rows * columns * 4, what);
  const void* parameters = qnn_plan_tensor(plan, fields[PARAMETERS], 8, what);
  const int8_t* w = qnn_plan_constant(fields[WEIGHTS], depth * columns, what);
  const int32_t* w_zp = qnn_plan_constant(fields[ZERO_POINTS], columns * 4, what);
  const float* w_scales = qnn_plan_constant(fields[SCALES], columns * 4, what);
  const float* w_bias = fields[BIAS] == 0 ? NULL : qnn_plan_constant(fields[BIAS], columns * 4, what);
  if (input == NULL || output == NULL || parameters == NULL || w == NULL || w_zp == NULL || w_scales == NULL ||
      (fields[BIAS] != 0 && w_bias == NULL)) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if ((fields[PARAMETERS] & 3) != 0) {
    qnn_set_error2(what, ": input_parameters not 4-byte aligned");
    return QNN_ERROR_INVALID_RECORD;
  }
  for (int64_t n = 0; n < columns; n++) {
    if (!qnn_check_int8(w_zp[n], what)) return QNN_ERROR_INVALID_RECORD;
  }
  struct dynamic_matmul_op* op = qnn_plan_alloc(plan, sizeof(struct dynamic_matmul_op));
  int16_t* weights = qnn_plan_alloc(plan, columns * padded_depth * 2);
  int32_t* sums = qnn_plan_alloc(plan, columns * 4);
  float* scales = qnn_plan_alloc(plan, columns * 4);
  float* bias = w_bias == NULL ? NULL : qnn_plan_alloc(plan, columns * 4);
  if (op == NULL || weights == NULL || sums == NULL || scales == NULL || (w_bias != NULL && bias == NULL) ||
      !qnn_reserve_scratch((size_t) (depthwise ? columns : padded_depth) * 4)) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }
  for (int64_t n = 0; n < columns; n++) {
    int32_t sum = 0;
    for (int64_t k = 0; k < padded_depth; k++) {
      const int32_t value = k < depth ? w[k * columns + n] - w_zp[n] : 0;
      if (!depthwise) {
        weights[n * padded_depth + k] = (int16_t) value;
      } else if (k < depth) {
        weights[k * columns + n] = (int16_t) value;
      }
      sum += value;
    }
    sums[n] = sum;
    scales[n] = w_scales[n];
    if (bias != NULL) bias[n] = w_bias[n];
  }
  *op = (struct dynamic_matmul_op) {
    {type}, input, output, parameters, (size_t) rows, (size_t) depth, (size_t) columns, (size_t) padded_depth,
    *window, depthwise, weights, sums, scales, bias};
  *result = &op->base;
  return QNN_OK;
}

QNN_PLAN_CODE int32_t qnn_create_dynamic_matmul(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_dynamic_matmul_record* r = record;
  if (!qnn_check_positive(&r->rows, 3, "dynamic_matmul")) return QNN_ERROR_INVALID_RECORD;
  const struct window window = {r->rows, 1, r->depth, r->rows, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1};
  const int32_t fields[7] = {r->input, r->output, r->input_parameters, r->weights, r->weights_zero_points, r->scales,
                             r->bias};
  return create(plan, QNN_OP_DYNAMIC_MATMUL, &window, fields, r->rows, r->depth, r->columns,
                (int64_t) r->rows * r->depth, "dynamic_matmul", result);
}

QNN_PLAN_CODE int32_t qnn_create_dynamic_conv2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_dynamic_conv2d_record* r = record;
  if (!qnn_check_positive(&r->batch, 14, "dynamic_conv2d")) return QNN_ERROR_INVALID_RECORD;
  if (r->output_channels % r->groups != 0 || r->padding_top < 0 || r->padding_left < 0 ||
      r->padding_top >= (1 << 16) || r->padding_left >= (1 << 16)) {
    qnn_set_error("dynamic_conv2d: groups must divide output_channels; padding must be small and not negative");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t depth = (int64_t) r->kernel_height * r->kernel_width * r->input_channels;
  const struct window window = {
    r->input_height, r->input_width, (size_t) r->input_channels * r->groups, r->output_height, r->output_width,
    r->kernel_height, r->kernel_width, r->stride_height, r->stride_width, r->dilation_height, r->dilation_width,
    r->padding_top, r->padding_left, r->groups};
  const int32_t fields[7] = {r->input, r->output, r->input_parameters, r->weights, r->weights_zero_points, r->scales,
                             r->bias};
  const int64_t pixels = (int64_t) r->batch * r->output_height * r->output_width;
  return create(plan, QNN_OP_DYNAMIC_CONV2D, &window, fields, pixels, depth, r->output_channels,
                (int64_t) r->batch * r->input_height * r->input_width * window.channels, "dynamic_conv2d", result);
}
/* out[r][c] = sum_k a[r][k] w[c * padded_depth + k] for two rows (a[1] may be a[0] again) and `count` (1 or 4)
 * columns. Inlined with a constant count, so that each form is a loop of its own over registers. */
static inline __attribute__((always_inline)) void dot_tile(const int16_t* const a[2], const int16_t* w,
                                                           size_t padded_depth, size_t count, int32_t out[2][4]) {
#if defined(__wasm_simd128__)
  v128_t acc[2][4];
  for (size_t c = 0; c < 4; c++) acc[0][c] = acc[1][c] = wasm_i32x4_splat(0);
  for (size_t k = 0; k < padded_depth; k += DEPTH_BLOCK) {
    const v128_t a_low[2] = {wasm_v128_load(a[0] + k), wasm_v128_load(a[1] + k)};
    const v128_t a_high[2] = {wasm_v128_load(a[0] + k + 8), wasm_v128_load(a[1] + k + 8)};
    for (size_t c = 0; c < count; c++) {
      const int16_t* column = w + c * padded_depth + k;
      const v128_t w_low = wasm_v128_load(column), w_high = wasm_v128_load(column + 8);
      for (size_t r = 0; r < 2; r++) {
        acc[r][c] = wasm_i32x4_add(acc[r][c], wasm_i32x4_add(wasm_i32x4_dot_i16x8(a_low[r], w_low),
                                                             wasm_i32x4_dot_i16x8(a_high[r], w_high)));
      }
    }
  }
  for (size_t r = 0; r < 2; r++) {
    for (size_t c = 0; c < count; c++) {
      out[r][c] = wasm_i32x4_extract_lane(acc[r][c], 0) + wasm_i32x4_extract_lane(acc[r][c], 1) +
                  wasm_i32x4_extract_lane(acc[r][c], 2) + wasm_i32x4_extract_lane(acc[r][c], 3);
    }
  }
#else
  for (size_t r = 0; r < 2; r++) {
    for (size_t c = 0; c < count; c++) {
      const int16_t* column = w + c * padded_depth;
      int32_t sum = 0;
      for (size_t k = 0; k < padded_depth; k++) sum += (int32_t) a[r][k] * column[k];
      out[r][c] = sum;
    }
  }
#endif
}

struct matmul_pass {
  const struct dynamic_matmul_op* op;
  float x_scale;
  int32_t x_zero_point;  /* int8 twin */
};

/* Row m of X for group g (int8 twin) as int16: its window's taps in order, x_zp for those in the padding, zeros
 * past depth. */
__attribute__((noinline)) static void gather_row(const struct matmul_pass* pass, size_t m, size_t g, int16_t* a) {
  const struct dynamic_matmul_op* op = pass->op;
  const struct window* w = &op->window;
  const size_t group_channels = w->channels / w->groups;
  const size_t x = m % w->output_width, y = m / w->output_width % w->output_height;
  const int8_t* image = op->input + m / w->output_width / w->output_height * w->height * w->width * w->channels;
  size_t k = 0;
  for (size_t ky = 0; ky < w->kernel_height; ky++) {
    const size_t iy = y * w->stride_height + ky * w->dilation_height - w->padding_top;   /* wraps when above */
    for (size_t kx = 0; kx < w->kernel_width; kx++) {
      const size_t ix = x * w->stride_width + kx * w->dilation_width - w->padding_left;
      if (iy < w->height && ix < w->width) {
        const int8_t* tap = image + (iy * w->width + ix) * w->channels + g * group_channels;
        size_t c = 0;
#if defined(__wasm_simd128__)
        for (; c + 8 <= group_channels; c += 8) wasm_v128_store(a + k + c, wasm_i16x8_load8x8(tap + c));
#endif
        QNN_SCALAR_LOOP
        for (; c < group_channels; c++) a[k + c] = tap[c];
        k += group_channels;
      } else {
        QNN_SCALAR_LOOP
        for (size_t c = 0; c < group_channels; c++) a[k++] = (int16_t) pass->x_zero_point;
      }
    }
  }
  QNN_SCALAR_LOOP
  for (; k < op->padded_depth; k++) a[k] = 0;
}

/* Columns [first, first + count) of rows m .. m + rows - 1 (1 or 2): the sums, the zero point correction, then
 * the float scale and bias. */
static void multiply_columns(const struct matmul_pass* pass, const int16_t* const a[2], size_t m, size_t rows,
                             size_t first, size_t count) {
  const struct dynamic_matmul_op* op = pass->op;
  const int16_t* w = op->weights + first * op->padded_depth;
  int32_t sums[2][4];
  if (count == 4) dot_tile(a, w, op->padded_depth, 4, sums); else dot_tile(a, w, op->padded_depth, 1, sums);
  for (size_t r = 0; r < rows; r++) {
    float* y = op->output + (m + r) * op->columns;
    for (size_t c = 0; c < count; c++) {
      const size_t n = first + c;
      /* the zero point correction in uint32: int32 sums that wrap, as onnxruntime's do, without C's
       * undefined signed overflow (a product beyond int32 needs a depth near 2^15) */
      const uint32_t acc = (uint32_t) sums[r][c] - (uint32_t) pass->x_zero_point * (uint32_t) op->column_sums[n];
      const float product = (float) (int32_t) acc * (pass->x_scale * op->scales[n]);
      y[n] = op->bias != NULL ? product + op->bias[n] : product;
    }
  }
}

/* Output pixels [first, first + count) of a depthwise convolution: per pixel, each tap inside the image adds
 * (x - x_zp) (w - w_zp) into the int32 sums of every channel (in the thread's scratch), then the float steps. */
__attribute__((noinline)) static void depthwise_rows(const struct matmul_pass* pass, size_t first, size_t count,
                                                     uint32_t thread) {
  const struct dynamic_matmul_op* op = pass->op;
  const struct window* w = &op->window;
  const size_t channels = op->columns;
  uint32_t* acc = qnn_scratch(thread);   /* int32 sums that wrap, as onnxruntime's do, without C's overflow */
  for (size_t m = first; m < first + count; m++) {
    const size_t x = m % w->output_width, y = m / w->output_width % w->output_height;
    const int8_t* image = op->input + m / w->output_width / w->output_height * w->height * w->width * channels;
    qnn_memset(acc, 0, channels * sizeof(uint32_t));
    for (size_t ky = 0; ky < w->kernel_height; ky++) {
      const size_t iy = y * w->stride_height + ky * w->dilation_height - w->padding_top;   /* wraps when above */
      for (size_t kx = 0; kx < w->kernel_width; kx++) {
        const size_t ix = x * w->stride_width + kx * w->dilation_width - w->padding_left;
        if (iy >= w->height || ix >= w->width) continue;   /* the padding: (x_zp - x_zp) w adds nothing */
        const int8_t* tap = image + (iy * w->width + ix) * channels;
        const int16_t* weights = op->weights + (ky * w->kernel_width + kx) * channels;
        size_t c = 0;
#if defined(__wasm_simd128__)
        const v128_t zero_point = wasm_i16x8_splat((int16_t) pass->x_zero_point);
        for (; c + 8 <= channels; c += 8) {
          const v128_t v = wasm_i16x8_sub(wasm_i16x8_load8x8(tap + c), zero_point);
          const v128_t k = wasm_v128_load(weights + c);
          wasm_v128_store(acc + c, wasm_i32x4_add(wasm_v128_load(acc + c), wasm_i32x4_extmul_low_i16x8(v, k)));
          wasm_v128_store(acc + c + 4, wasm_i32x4_add(wasm_v128_load(acc + c + 4), wasm_i32x4_extmul_high_i16x8(v, k)));
        }
#endif
        QNN_SCALAR_LOOP
        for (; c < channels; c++) acc[c] += (uint32_t) ((tap[c] - pass->x_zero_point) * weights[c]);
      }
    }
    float* out = op->output + m * channels;
    QNN_SCALAR_LOOP
    for (size_t c = 0; c < channels; c++) {
      const float product = (float) (int32_t) acc[c] * (pass->x_scale * op->scales[c]);
      out[c] = op->bias != NULL ? product + op->bias[c] : product;
    }
  }
}

/* Rows [first, first + count) in pairs (each pair reads the packed weights once), group by group, four columns
 * at a time. */
static void multiply_rows(const void* context, size_t first, size_t count, uint32_t thread) {
  const struct matmul_pass* pass = context;
  const struct dynamic_matmul_op* op = pass->op;
  if (op->depthwise) {
    depthwise_rows(pass, first, count, thread);
    return;
  }
  const size_t group_columns = op->columns / op->window.groups;
  int16_t* scratch = qnn_scratch(thread);
  for (size_t m = first; m < first + count; m += 2) {
    const size_t rows = qnn_min_size(2, first + count - m);
    const int16_t* a[2] = {scratch, rows == 2 ? scratch + op->padded_depth : scratch};
    for (size_t g = 0; g < op->window.groups; g++) {
      gather_row(pass, m, g, scratch);
      if (rows == 2) gather_row(pass, m + 1, g, scratch + op->padded_depth);
      const size_t end = (g + 1) * group_columns;
      size_t n = g * group_columns;
      for (; n + 4 <= end; n += 4) multiply_columns(pass, a, m, rows, n, 4);
      for (; n < end; n++) multiply_columns(pass, a, m, rows, n, 1);
    }
  }
}

void qnn_run_dynamic_matmul(const struct qnn_op* base) {
  const struct dynamic_matmul_op* op = (const struct dynamic_matmul_op*) base;
  struct matmul_pass pass;
  qnn_memcpy(&pass.x_scale, op->parameters, 4);
  qnn_memcpy(&pass.x_zero_point, (const char*) op->parameters + 4, 4);
  pass.op = op;
  qnn_parallelize_ranges(multiply_rows, &pass, op->rows, 2, 4, (uint64_t) op->columns * op->depth, QNN_TASK_MACS);
}
