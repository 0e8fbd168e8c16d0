/* AVERAGE_POOL_2D and MEAN over H,W (a pool whose window is the whole image). Padded taps are not
 * counted (TFLite's semantics), so each output pixel has its own divisor. count_include_pad (ONNX)
 * divides by the whole window instead, the padded taps being input zero points.
 * Six arithmetics (the record's `arithmetic`, see qnnweb.h), so that each format matches its
 * reference runtime bit for bit:
 *   0 TFLite: when input and output share quantization, TFLite's integer average rounded half away
 *     from zero; otherwise fp32 requantization of the integer sum;
 *   1 onnxruntime QLinearAveragePool (contrib_ops/cpu/quantization/qlinear_pool.cc): taps
 *     dequantized to float32, summed in window order, divided by the count in float32, then
 *     rint(avg / output_scale + output_zero_point) (nearbyintf: half to even);
 *   2 onnxruntime QLinearGlobalAveragePool (mlas/lib/qlgavgpool.cpp): the integer sum times the
 *     float32 scale input_scale / (output_scale * count), fp32 requantization;
 *   3 XNNPACK's sum (LiteRT's delegate takes every int8 SUM): as 4 with s = scale;
 *   4 XNNPACK's mean (LiteRT's delegate takes every int8 MEAN): the raw sum times
 *     s = scale * (1 / count), plus -count * input_zero_point * s + output_zero_point, each step in
 *     float32, rint;
 *   5 onnxruntime's float GlobalAveragePool of a float function of the input (taps through a float32
 *     table), as MLAS's global pooling kernel sums (mlas/lib/pooling.cpp MlasPoolGlobalKernel: four lanes
 *     over the image in row-major order, lanes (0 + 2) + (1 + 3), then the last n % 4 taps one by one),
 *     divided by the count, then its QuantizeLinear (x / scale, clamped, rint, + zero point; NaN as 0, as
 *     the QUANTIZE kernel). Checked against onnxruntime on 7-120 channels of 1x3 to 56x56 values of every
 *     magnitude: every channel bit-exact. (onnxruntime's optimizer moves a float pool to its NCHWc
 *     kernels, which sum in plain order, when the channel count is a multiple of the CPU's block and the
 *     pool reads a graph input; after a float unary op, the only case made here, it stays
 *     on MLAS's kernel: checked for HardSwish at 16 channels and Tanh, Relu, Clip, Sigmoid, HardSigmoid,
 *     LeakyRelu, Elu at 32.) */
#pragma clang fp contract(off)   /* every float step as written: the references round each one */

#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"
#include "requantization.h"

struct avgpool2d_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  struct qnn_avgpool2d_record r;
  const float* table;  /* arithmetic 5: the taps' float32 values by input byte, 256 per table */
  int32_t table_stride; /* 256 with a table per channel, else 0 */
};

QNN_PLAN_CODE int32_t qnn_create_avgpool2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_avgpool2d_record* r = record;
  if (!qnn_check_positive(&r->batch, 10, "avgpool2d")) return QNN_ERROR_INVALID_RECORD;
  if (r->padding_top < 0 || r->padding_left < 0 || r->padding_top >= r->kernel_height ||
      r->padding_left >= r->kernel_width) {
    qnn_set_error("avgpool2d: padding must be smaller than the window");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->count_include_pad != 0 && r->count_include_pad != 1) {
    qnn_set_error("avgpool2d: count_include_pad must be 0 or 1");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->arithmetic < 0 || r->arithmetic > 5) {
    qnn_set_error("avgpool2d: arithmetic must be 0 (TFLite), 1 (onnxruntime), 2 (onnxruntime global), 3 "
                  "(XNNPACK sum), 4 (XNNPACK mean) or 5 (onnxruntime float pool of a table)");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->arithmetic != 0 && r->arithmetic != 3 && r->arithmetic != 4 && (!(r->input_scale > 0.0f && r->input_scale <= 0x1.0p+100f) ||
                             !(r->output_scale >= 0x1.0p-100f && r->output_scale <= 0x1.0p+100f))) {
    qnn_set_error("avgpool2d: input_scale and output_scale must be positive and finite");
    return QNN_ERROR_INVALID_RECORD;
  }
  if ((r->count_include_pad || r->arithmetic == 2) && (int64_t) r->kernel_height * r->kernel_width > (1 << 20)) {
    qnn_set_error("avgpool2d: a window of more than 2^20 taps with count_include_pad or arithmetic 2");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_int8(r->input_zero_point, "avgpool2d") || !qnn_check_int8(r->output_zero_point, "avgpool2d") ||
      !qnn_check_int8(r->output_min, "avgpool2d") || !qnn_check_int8(r->output_max, "avgpool2d")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  const int8_t* input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * r->channels, "avgpool2d input");
  int8_t* output = qnn_plan_tensor(
      plan, r->output, (int64_t) r->batch * r->output_height * r->output_width * r->channels, "avgpool2d output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  const float* table = NULL;
  const int32_t tables = r->arithmetic == 5 ? r->table_channels : 0;
  if (r->arithmetic == 5) {
    if (r->output_height != 1 || r->output_width != 1 || r->kernel_height != r->input_height ||
        r->kernel_width != r->input_width || r->padding_top != 0 || r->padding_left != 0 || r->count_include_pad != 0) {
      qnn_set_error("avgpool2d: arithmetic 5 is a global pool (one output pixel, the whole image, no padding)");
      return QNN_ERROR_INVALID_RECORD;
    }
    if (tables != 1 && tables != r->channels) {
      qnn_set_error("avgpool2d: table_channels must be 1 or the channel count");
      return QNN_ERROR_INVALID_RECORD;
    }
    table = qnn_plan_constant(r->table, (int64_t) tables * 256 * sizeof(float), "avgpool2d table");
    if (table == NULL) return QNN_ERROR_INVALID_RECORD;
  }
  struct avgpool2d_op* op = qnn_plan_alloc(plan, sizeof(struct avgpool2d_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output;
  op->r = *r;
  op->table = NULL;
  op->table_stride = tables > 1 ? 256 : 0;
  if (table != NULL) {
    float* copy = qnn_plan_alloc(plan, (size_t) tables * 256 * sizeof(float));
    if (copy == NULL) return QNN_ERROR_OUT_OF_MEMORY;
    qnn_memcpy(copy, table, (size_t) tables * 256 * sizeof(float));
    op->table = copy;
  }
  *result = &op->base;
  return QNN_OK;
}

/* The input rows and columns an output pixel's window covers, and how many taps its average divides
 * by (count_include_pad: the padded taps count too). */
struct pool_window {
  int32_t y_begin, y_end, x_begin, x_end, valid, count;
};

static struct pool_window pool_window(const struct qnn_avgpool2d_record* r, int32_t oy, int32_t ox) {
  struct pool_window w;
  const int32_t y0 = oy * r->stride_height - r->padding_top, x0 = ox * r->stride_width - r->padding_left;
  w.y_begin = qnn_max_i32(y0, 0);
  w.y_end = qnn_min_i32(y0 + r->kernel_height, r->input_height);
  w.x_begin = qnn_max_i32(x0, 0);
  w.x_end = qnn_min_i32(x0 + r->kernel_width, r->input_width);
  w.valid = qnn_max_i32(w.y_end - w.y_begin, 0) * qnn_max_i32(w.x_end - w.x_begin, 0);
  w.count = r->count_include_pad ? r->kernel_height * r->kernel_width : w.valid;
  return w;
}

/* arithmetic 1: onnxruntime's float32 average (see the top of this file), for channels
 * [first, first + count) of every output pixel. */
static void avgpool2d_onnx_float_channels(const struct avgpool2d_op* op, size_t first, size_t count) {
  const struct qnn_avgpool2d_record* r = &op->r;
  const int32_t channels = r->channels, c_begin = (int32_t) first, c_end = (int32_t) (first + count);
  const float input_scale = r->input_scale, output_scale = r->output_scale;
  const float output_zero_point = (float) r->output_zero_point;
  const float lo = (float) r->output_min, hi = (float) r->output_max;
  for (int32_t b = 0; b < r->batch; b++) {
    for (int32_t oy = 0; oy < r->output_height; oy++) {
      for (int32_t ox = 0; ox < r->output_width; ox++) {
        const struct pool_window w = pool_window(r, oy, ox);
        const int32_t taps = w.count;
        int8_t* out = op->output + (size_t) ((b * r->output_height + oy) * r->output_width + ox) * channels;
        for (int32_t c = c_begin; c < c_end; c++) {
          float sum = 0.0f;
          for (int32_t y = w.y_begin; y < w.y_end; y++) {
            const int8_t* row = op->input + ((b * r->input_height + y) * r->input_width) * channels + c;
            for (int32_t x = w.x_begin; x < w.x_end; x++) {
              sum += input_scale * (float) ((int32_t) row[x * channels] - r->input_zero_point);
            }
          }
          /* onnxruntime divides 0 by 0 for an empty window (NaN, which converts to INT_MIN): the minimum. */
          float f = taps > 0 ? sum / (float) taps : lo;
          f = f / output_scale + output_zero_point;
          f = f < lo ? lo : f;      /* clamping before rounding is the same for integer bounds */
          f = f > hi ? hi : f;
          f = f == f ? f : lo;
          out[c] = (int8_t) (int32_t) __builtin_rintf(f);
        }
      }
    }
  }
}

/* arithmetic 5: MLAS's float global average of the table's values, then QuantizeLinear (see the top of
 * this file), for channels [first, first + count). */
static void avgpool2d_onnx_float_table_channels(const struct avgpool2d_op* op, size_t first, size_t count) {
  const struct qnn_avgpool2d_record* r = &op->r;
  const int32_t channels = r->channels, c_begin = (int32_t) first, c_end = (int32_t) (first + count);
  const int32_t taps = r->input_height * r->input_width, vectors = taps / 4 * 4;
  const float lo = (float) (r->output_min - r->output_zero_point), hi = (float) (r->output_max - r->output_zero_point);
  for (int32_t b = 0; b < r->batch; b++) {
    const int8_t* image = op->input + (size_t) b * taps * channels;
    for (int32_t c = c_begin; c < c_end; c++) {
      const float* table = op->table + (size_t) c * op->table_stride;
      float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int32_t p = 0; p < vectors; p += 4) {
        for (int32_t k = 0; k < 4; k++) lane[k] += table[(uint8_t) image[(size_t) (p + k) * channels + c]];
      }
      float sum = (lane[0] + lane[2]) + (lane[1] + lane[3]);
      for (int32_t p = vectors; p < taps; p++) sum += table[(uint8_t) image[(size_t) p * channels + c]];
      float q = (sum / (float) taps) / r->output_scale;
      q = q == q ? q : 0.0f;
      q = q < lo ? lo : q > hi ? hi : q;
      op->output[(size_t) b * channels + c] = (int8_t) ((int32_t) __builtin_rintf(q) + r->output_zero_point);
    }
  }
}

#define SUM_CHANNELS 16  /* four i32x4 sums: in registers (64 kept them in memory: no faster) */

/* Tasks are ranges of channels (a global pool has one output pixel). */
static void avgpool2d_channels(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct avgpool2d_op* op = context;
  const struct qnn_avgpool2d_record* r = &op->r;
  if (r->arithmetic == 5) {
    avgpool2d_onnx_float_table_channels(op, first, count);
    return;
  }
  if (r->arithmetic == 1) {
    avgpool2d_onnx_float_channels(op, first, count);
    return;
  }
  const int32_t channels = r->channels, c_begin = (int32_t) first, c_end = (int32_t) (first + count);
  const int same_quantization = r->arithmetic == 0 && r->scale == 1.0f && r->input_zero_point == r->output_zero_point;
  for (int32_t b = 0; b < r->batch; b++) {
    for (int32_t oy = 0; oy < r->output_height; oy++) {
      for (int32_t ox = 0; ox < r->output_width; ox++) {
        const struct pool_window w = pool_window(r, oy, ox);
        const int32_t taps = w.count;
        /* count_include_pad: the window's padded taps count, as input zero points. */
        const int32_t padded_sum = (taps - w.valid) * r->input_zero_point;
        /* arithmetic 2: MLAS computes input_scale / (output_scale * count), in that order */
        const float multiplier = taps <= 0 ? 0.0f
                                 : r->arithmetic == 2 ? r->input_scale / (r->output_scale * (float) taps)
                                                      : r->scale / (float) taps;
        int8_t* out = op->output + (size_t) ((b * r->output_height + oy) * r->output_width + ox) * channels;
        /* the window's sums for SUM_CHANNELS channels at a time, tap by tap along the channels (clang
         * vectorizes it; faster than each channel's sum striding the image one byte per row of
         * channels: docs/performance-log.md, "Figures moved out of code comments") */
        for (int32_t c0 = c_begin; c0 < c_end; c0 += SUM_CHANNELS) {
          const int32_t n = qnn_min_i32(SUM_CHANNELS, c_end - c0);
          int32_t sums[SUM_CHANNELS];
          for (int32_t i = 0; i < n; i++) sums[i] = padded_sum;
          for (int32_t y = w.y_begin; y < w.y_end; y++) {
            const int8_t* row = op->input + ((b * r->input_height + y) * r->input_width) * channels + c0;
            for (int32_t x = w.x_begin; x < w.x_end; x++) {
              const int8_t* tap = row + x * channels;
              for (int32_t i = 0; i < n; i++) sums[i] += tap[i];
            }
          }
          for (int32_t c = c0; c < c0 + n; c++) {
            const int32_t sum = sums[c - c0];
            if (r->arithmetic == 3 || r->arithmetic == 4) {
              /* XNNPACK's sum / mean: s = scale (sum) or scale * (1 / n) (mean),
               * bias = -n * in_zp * s + out_zp, rint(sum * s + bias) */
              const float s = r->arithmetic == 3 ? r->scale : r->scale * (1.0f / (float) taps);
              const float bias = (float) (-taps * r->input_zero_point) * s + (float) r->output_zero_point;
              float q = (float) (sum - padded_sum) * s + bias;
              q = q < (float) r->output_min ? (float) r->output_min : q > (float) r->output_max ? (float) r->output_max : q;
              out[c] = (int8_t) (int32_t) __builtin_rintf(q);
            } else if (same_quantization) {
              const int32_t half = taps / 2;
              const int32_t average = taps == 0 ? 0 : (sum >= 0 ? (sum + half) / taps : (sum - half) / taps);
              out[c] = (int8_t) qnn_min_i32(qnn_max_i32(average, r->output_min), r->output_max);
            } else {
              const float f = (float) (sum - taps * r->input_zero_point) * multiplier;
              out[c] = qnn_qs8_quantize_clamped(f, r->output_zero_point, r->output_min, r->output_max);
            }
          }
        }
      }
    }
  }
}

void qnn_run_avgpool2d(const struct qnn_op* base) {
  const struct avgpool2d_op* op = (const struct avgpool2d_op*) base;
  const struct qnn_avgpool2d_record* r = &op->r;
  const size_t channels = (size_t) r->channels;
  const size_t taps = (size_t) r->batch * r->output_height * r->output_width * r->kernel_height * r->kernel_width * channels;
  qnn_parallelize_ranges(avgpool2d_channels, op, channels, 8, 2, taps / channels, QNN_TASK_ELEMENTS);
}
