/* MAX_POOL_2D: the max over the valid (unpadded) taps of each window, then the fused activation's
 * clamp. Input and output share quantization, so no requantization. A window with no valid tap
 * (possible with dilation or large padding) gives output_min. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"

struct maxpool2d_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  struct qnn_maxpool2d_record r;
};

QNN_PLAN_CODE int32_t qnn_create_maxpool2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_maxpool2d_record* r = record;
  if (!qnn_check_positive(&r->batch, 12, "maxpool2d")) return QNN_ERROR_INVALID_RECORD;
  if (r->padding_top < 0 || r->padding_left < 0 || r->padding_top >= (1 << 16) || r->padding_left >= (1 << 16)) {
    qnn_set_error("maxpool2d: negative or huge padding");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_int8(r->output_min, "maxpool2d") || !qnn_check_int8(r->output_max, "maxpool2d")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  const int8_t* input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * r->channels, "maxpool2d input");
  int8_t* output = qnn_plan_tensor(
      plan, r->output, (int64_t) r->batch * r->output_height * r->output_width * r->channels, "maxpool2d output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct maxpool2d_op* op = qnn_plan_alloc(plan, sizeof(struct maxpool2d_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output;
  op->r = *r;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_maxpool2d(const struct qnn_op* base) {
  const struct maxpool2d_op* op = (const struct maxpool2d_op*) base;
  const struct qnn_maxpool2d_record* r = &op->r;
  const size_t channels = (size_t) r->channels;
  const int8_t lo = (int8_t) r->output_min, hi = (int8_t) r->output_max;
  int8_t* out = op->output;
  for (int64_t b = 0; b < r->batch; b++) {
    for (int64_t oy = 0; oy < r->output_height; oy++) {
      for (int64_t ox = 0; ox < r->output_width; ox++) {
        qnn_memset(out, -128, channels);
        for (int64_t ky = 0; ky < r->kernel_height; ky++) {
          const int64_t y = oy * r->stride_height - r->padding_top + ky * r->dilation_height;
          if (y < 0 || y >= r->input_height) continue;
          for (int64_t kx = 0; kx < r->kernel_width; kx++) {
            const int64_t x = ox * r->stride_width - r->padding_left + kx * r->dilation_width;
            if (x < 0 || x >= r->input_width) continue;
            const int8_t* row = op->input + (size_t) (((b * r->input_height + y) * r->input_width + x) * r->channels);
            for (size_t c = 0; c < channels; c++) out[c] = row[c] > out[c] ? row[c] : out[c];
          }
        }
        for (size_t c = 0; c < channels; c++) {
          int8_t v = out[c] < lo ? lo : out[c];
          out[c] = v > hi ? hi : v;
        }
        out += channels;
      }
    }
  }
}
