/* CONV_2D (and FULLY_CONNECTED as a 1x1 conv): indirect GEMM over packed weights.
 *
 * Weights with a zero point zw: the packed weights are the raw int8 w and the kernels compute
 * bias + sum (x - x_zp) w as for symmetric weights; per tile of mr output pixels the operator sums
 * R[p] = sum (x - x_zp) over the pixel's taps and channels (padded taps read the zero buffer, which
 * holds x_zp, and add 0) and the kernels add -zw * R[p] to the row before requantization. int32
 * arithmetic wraps (computed in uint32), as the kernels' accumulators do. */
#include "qnnweb.h"
#include "common.h"
#include "config.h"
#include "indirection.h"
#include "operators.h"
#include "packing.h"

struct conv2d_op {
  struct qnn_op base;
  const struct qnn_gemm_config* config;
  const int8_t** indirection;
  const void* packed;
  int8_t* output;
  size_t pixels, output_channels, input_channels, taps;
  struct qnn_qs8_minmax_params params;
  int32_t input_zero_point, weights_zero_point;
  int32_t* correction;      /* mr values per tile; NULL when weights_zero_point is 0 */
};

int32_t qnn_create_conv2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_conv2d_record* r = record;
  if (!qnn_check_positive(&r->batch, 13, "conv2d")) return QNN_ERROR_INVALID_RECORD;
  if (r->padding_top < 0 || r->padding_left < 0 || r->padding_top >= (1 << 16) || r->padding_left >= (1 << 16)) {
    qnn_set_error("conv2d: negative or huge padding");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->weights_layout < QNN_WEIGHTS_OHWI || r->weights_layout > QNN_WEIGHTS_IO) {
    qnn_set_error("conv2d: weights_layout must be 0 (OHWI), 1 (OIHW) or 2 (IO)");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->weights_layout == QNN_WEIGHTS_IO && (r->kernel_height != 1 || r->kernel_width != 1)) {
    qnn_set_error("conv2d: weights_layout 2 (IO) needs a 1x1 kernel");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_int8(r->input_zero_point, "conv2d") || !qnn_check_int8(r->output_zero_point, "conv2d") ||
      !qnn_check_int8(r->output_min, "conv2d") || !qnn_check_int8(r->output_max, "conv2d") ||
      !qnn_check_int8(r->weights_zero_point, "conv2d")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t pixels = (int64_t) r->batch * r->output_height * r->output_width;
  const int64_t taps = (int64_t) r->kernel_height * r->kernel_width;
  const int8_t* input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * r->input_channels, "conv2d input");
  int8_t* output = qnn_plan_tensor(plan, r->output, pixels * r->output_channels, "conv2d output");
  const int8_t* weights = qnn_plan_constant(r->weights, (int64_t) r->output_channels * taps * r->input_channels, "conv2d weights");
  const float* scales = qnn_plan_constant(r->scales, (int64_t) r->output_channels * 4, "conv2d scales");
  const int32_t* bias = r->bias != 0 ? qnn_plan_constant(r->bias, (int64_t) r->output_channels * 4, "conv2d bias") : NULL;
  if (input == NULL || output == NULL || weights == NULL || scales == NULL || (r->bias != 0 && bias == NULL)) {
    return QNN_ERROR_INVALID_RECORD;
  }

  const struct qnn_gemm_config* config = qnn_get_gemm_config();
  struct conv2d_op* op = qnn_plan_alloc(plan, sizeof(struct conv2d_op));
  int8_t* zero = qnn_plan_alloc(plan, qnn_round_up((size_t) r->input_channels, config->kr) + QNN_EXTRA_BYTES);
  const int8_t** indirection = qnn_plan_alloc(plan, pixels * taps * (int64_t) sizeof(int8_t*));
  void* packed = qnn_plan_alloc(
      plan, qnn_pack_qs8_igemm_size(r->output_channels, taps, r->input_channels, config->nr, config->kr));
  int32_t* correction = r->weights_zero_point != 0 ? qnn_plan_alloc(plan, (int64_t) config->mr * 4) : NULL;
  if (op == NULL || zero == NULL || indirection == NULL || packed == NULL ||
      (r->weights_zero_point != 0 && correction == NULL)) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }

  qnn_memset(zero, r->input_zero_point, qnn_round_up((size_t) r->input_channels, config->kr) + QNN_EXTRA_BYTES);
  const struct qnn_window window = {
    r->batch, r->input_height, r->input_width, r->input_channels, r->output_height, r->output_width,
    r->kernel_height, r->kernel_width, r->stride_height, r->stride_width, r->dilation_height, r->dilation_width,
    r->padding_top, r->padding_left};
  qnn_indirection_init(&window, input, zero, indirection);
  const size_t kc = (size_t) r->input_channels, ks = (size_t) taps, nc = (size_t) r->output_channels;
  size_t n_stride = ks * kc, t_stride = kc, k_stride = 1;             /* OHWI */
  if (r->weights_layout == QNN_WEIGHTS_OIHW) {
    t_stride = 1;
    k_stride = ks;
  } else if (r->weights_layout == QNN_WEIGHTS_IO) {
    n_stride = 1;
    t_stride = 0;
    k_stride = nc;
  }
  qnn_pack_qs8_igemm_w(nc, ks, kc, config->nr, config->kr, r->input_zero_point + config->input_zero_point_offset,
                       weights, n_stride, t_stride, k_stride, bias, scales, packed);

  op->config = config;
  op->indirection = indirection;
  op->packed = packed;
  op->output = output;
  op->pixels = (size_t) pixels;
  op->output_channels = r->output_channels;
  op->input_channels = r->input_channels;
  op->taps = (size_t) taps;
  op->params = qnn_qs8_minmax_params_init(r->output_zero_point, r->output_min, r->output_max, config->activation_xor);
  op->input_zero_point = r->input_zero_point;
  op->weights_zero_point = r->weights_zero_point;
  op->correction = correction;
  *result = &op->base;
  return QNN_OK;
}

/* correction[m] = -zw * sum over the taps and channels of (x - x_zp) for the tile's rows; rows
 * past `rows` (up to mr) repeat the last one, as the kernels repeat the last row. */
static void row_corrections(const struct conv2d_op* op, const int8_t* const* a, size_t rows, size_t mr) {
  const size_t ks = op->taps, kc = op->input_channels;
  const uint32_t zero_sum = (uint32_t) op->input_zero_point * (uint32_t) (ks * kc);
  const uint32_t minus_zw = (uint32_t) -op->weights_zero_point;
  for (size_t m = 0; m < rows; m++) {
    uint32_t sum = 0;
    for (size_t t = 0; t < ks; t++) {
      const int8_t* x = a[m * ks + t];
      for (size_t k = 0; k < kc; k++) sum += (uint32_t) (int32_t) x[k];
    }
    op->correction[m] = (int32_t) (minus_zw * (sum - zero_sum));
  }
  for (size_t m = rows; m < mr; m++) op->correction[m] = op->correction[rows - 1];
}

void qnn_run_conv2d(const struct qnn_op* base) {
  const struct conv2d_op* op = (const struct conv2d_op*) base;
  const size_t mr = op->config->mr;
  if (op->correction == NULL) {
    for (size_t p = 0; p < op->pixels; p += mr) {
      op->config->igemm(qnn_min_size(mr, op->pixels - p), op->output_channels, op->input_channels, op->taps,
                        op->indirection + p * op->taps, op->packed, op->output + p * op->output_channels,
                        op->output_channels, &op->params);
    }
    return;
  }
  struct qnn_qs8_minmax_params params = op->params;
  params.row_correction = op->correction;
  for (size_t p = 0; p < op->pixels; p += mr) {
    const size_t rows = qnn_min_size(mr, op->pixels - p);
    const int8_t* const* a = op->indirection + p * op->taps;
    row_corrections(op, a, rows, mr);
    op->config->igemm(rows, op->output_channels, op->input_channels, op->taps, a, op->packed,
                      op->output + p * op->output_channels, op->output_channels, &params);
  }
}
