/* DEPTHWISE_CONV_2D. Depth multiplier 1 runs the variant's SIMD microkernel; other multipliers
 * (rare in real models) run a scalar loop in every variant. */
#include "qnnweb.h"
#include "common.h"
#include "config.h"
#include "indirection.h"
#include "operators.h"
#include "packing.h"
#include "threadpool.h"

struct dwconv2d_op {
  struct qnn_op base;
  qnn_qs8_dwconv_ukernel_fn ukernel;  /* NULL: the depth-multiplier loop */
  const int8_t** indirection;
  const void* packed;
  int8_t* output;
  size_t pixels, channels, taps, depth_multiplier;
  struct qnn_qs8_minmax_params params;
};

QNN_PLAN_CODE int32_t qnn_create_dwconv2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_dwconv2d_record* r = record;
  if (!qnn_check_positive(&r->batch, 13, "dwconv2d") || !qnn_check_positive(&r->depth_multiplier, 1, "dwconv2d")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->padding_top < 0 || r->padding_left < 0 || r->padding_top >= (1 << 16) || r->padding_left >= (1 << 16)) {
    qnn_set_error("dwconv2d: negative or huge padding");
    return QNN_ERROR_INVALID_RECORD;
  }
  if ((int64_t) r->input_channels * r->depth_multiplier != r->output_channels) {
    qnn_set_error("dwconv2d: output channels must be input channels x depth multiplier");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->weights_layout != 0 && r->weights_layout != 1) {
    qnn_set_error("dwconv2d: weights_layout must be 0 ([kh][kw][oc]) or 1 ([oc][kh][kw])");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_int8(r->input_zero_point, "dwconv2d") || !qnn_check_int8(r->output_zero_point, "dwconv2d") ||
      !qnn_check_int8(r->output_min, "dwconv2d") || !qnn_check_int8(r->output_max, "dwconv2d")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t pixels = (int64_t) r->batch * r->output_height * r->output_width;
  const int64_t taps = (int64_t) r->kernel_height * r->kernel_width;
  const int8_t* input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * r->input_channels, "dwconv2d input");
  int8_t* output = qnn_plan_tensor(plan, r->output, pixels * r->output_channels, "dwconv2d output");
  const int8_t* weights = qnn_plan_constant(r->weights, taps * r->output_channels, "dwconv2d weights");
  const float* scales = qnn_plan_constant(r->scales, (int64_t) r->output_channels * 4, "dwconv2d scales");
  const int32_t* bias = r->bias != 0 ? qnn_plan_constant(r->bias, (int64_t) r->output_channels * 4, "dwconv2d bias") : NULL;
  if (input == NULL || output == NULL || weights == NULL || scales == NULL || (r->bias != 0 && bias == NULL)) {
    return QNN_ERROR_INVALID_RECORD;
  }

  const struct qnn_dwconv_config* config = qnn_get_dwconv_config();
  const size_t tile = r->depth_multiplier == 1 ? config->channel_tile : 1;
  /* 3x3 stride-1 windows (most of MobileNetV2's depthwise time) have their own kernel where the
   * variant has one. */
  const int use_3x3s1 = r->depth_multiplier == 1 && config->dwconv3x3s1 != NULL && r->kernel_height == 3 &&
                        r->kernel_width == 3 && r->stride_height == 1 && r->stride_width == 1 &&
                        r->dilation_height == 1 && r->dilation_width == 1;
  const enum qnn_dwconv_weights form = use_3x3s1 ? QNN_DWCONV_3X3_PAIRS
      : r->depth_multiplier == 1 ? (enum qnn_dwconv_weights) config->weights : QNN_DWCONV_TAPS;
  const int32_t offset = r->depth_multiplier == 1 ? config->input_zero_point_offset : 0;
  struct dwconv2d_op* op = qnn_plan_alloc(plan, sizeof(struct dwconv2d_op));
  int8_t* zero = qnn_plan_alloc(plan, qnn_round_up((size_t) r->input_channels, tile) + QNN_EXTRA_BYTES);
  /* Kernels taking taps four at a time see a multiple of 4 per pixel: the last tap repeated (its
   * packed weights past taps are zero), so their inner loop has no tail. (The pairs kernel does an
   * odd last tap alone: cheaper than a pair.) */
  const int64_t kernel_taps = form == QNN_DWCONV_TAP_QUADS ? (int64_t) qnn_round_up((size_t) taps, 4) : taps;
  const int8_t** indirection = qnn_plan_alloc(plan, pixels * kernel_taps * (int64_t) sizeof(int8_t*));
  void* packed = qnn_plan_alloc(plan, qnn_pack_qs8_dwconv_size(r->output_channels, taps, tile, form));
  if (op == NULL || zero == NULL || indirection == NULL || packed == NULL) return QNN_ERROR_OUT_OF_MEMORY;

  qnn_memset(zero, r->input_zero_point, qnn_round_up((size_t) r->input_channels, tile) + QNN_EXTRA_BYTES);
  const struct qnn_window window = {
    r->batch, r->input_height, r->input_width, r->input_channels, r->output_height, r->output_width,
    r->kernel_height, r->kernel_width, r->stride_height, r->stride_width, r->dilation_height, r->dilation_width,
    r->padding_top, r->padding_left};
  qnn_indirection_init(&window, input, zero, indirection);
  for (int64_t i = pixels * kernel_taps - 1; kernel_taps != taps && i >= 0; i--) {  /* backwards: in place */
    const int64_t t = i % kernel_taps;
    indirection[i] = indirection[i / kernel_taps * taps + (t < taps ? t : taps - 1)];
  }
  const size_t t_stride = r->weights_layout == 0 ? (size_t) r->output_channels : 1;
  const size_t c_stride = r->weights_layout == 0 ? 1 : (size_t) taps;
  qnn_pack_qs8_dwconv_w(r->output_channels, taps, tile, form, r->input_zero_point + offset, weights, t_stride, c_stride, bias,
                        scales, packed);

  op->ukernel = use_3x3s1 ? config->dwconv3x3s1 : r->depth_multiplier == 1 ? config->dwconv : NULL;
  op->indirection = indirection;
  op->packed = packed;
  op->output = output;
  op->pixels = (size_t) pixels;
  op->channels = r->output_channels;
  op->taps = (size_t) kernel_taps;
  op->depth_multiplier = r->depth_multiplier;
  op->params = qnn_qs8_minmax_params_init(r->output_zero_point, r->output_min, r->output_max,
                                          r->depth_multiplier == 1 ? config->activation_xor : 0);
  op->params.products_bounded = qnn_products_bounded((size_t) r->output_channels, (size_t) taps, weights, c_stride,
                                                     t_stride, 0, NULL, bias, scales);
  *result = &op->base;
  return QNN_OK;
}

/* Packed with a channel tile of 1: per output channel int32 bias, float scale, int8 w[taps]. */
static void run_depth_multiplier(const struct dwconv2d_op* op, const int8_t* const* a, int8_t* output) {
  const char* block = op->packed;
  for (size_t c = 0; c < op->channels; c++) {
    const int32_t bias = *(const int32_t*) block;
    const float scale = *(const float*) (block + sizeof(int32_t));
    const int8_t* k = (const int8_t*) (block + sizeof(int32_t) + sizeof(float));
    const size_t input_channel = c / op->depth_multiplier;
    int32_t acc = bias;
    for (size_t t = 0; t < op->taps; t++) acc += (int32_t) a[t][input_channel] * k[t];
    output[c] = qnn_qs8_requantize_fp32(acc, scale, &op->params);
    block = (const char*) (k + op->taps);
  }
}

/* Tasks are ranges of output pixels (XNNPACK splits by output rows; a range may span rows). */
static void dwconv2d_pixels(const void* context, size_t first, size_t pixels, uint32_t thread) {
  (void) thread;
  const struct dwconv2d_op* op = context;
  const int8_t* const* a = op->indirection + first * op->taps;
  int8_t* output = op->output + first * op->channels;
  if (op->ukernel != NULL) {
    op->ukernel(pixels, op->channels, op->taps, a, op->packed, output, &op->params);
    return;
  }
  for (size_t p = 0; p < pixels; p++) run_depth_multiplier(op, a + p * op->taps, output + p * op->channels);
}

void qnn_run_dwconv2d(const struct qnn_op* base) {
  const struct dwconv2d_op* op = (const struct dwconv2d_op*) base;
  qnn_parallelize_ranges(dwconv2d_pixels, op, op->pixels, 1, 8, (uint64_t) op->channels * op->taps, QNN_TASK_DW_MACS);
}
