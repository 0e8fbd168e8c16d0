/* PAD of H and W with a constant (the zero point); used only where it cannot fold into a conv. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"

struct pad_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  struct qnn_pad_record r;
};

int32_t qnn_create_pad(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_pad_record* r = record;
  if (!qnn_check_positive(&r->batch, 4, "pad") || !qnn_check_int8(r->pad_value, "pad")) return QNN_ERROR_INVALID_RECORD;
  if (r->padding_top < 0 || r->padding_bottom < 0 || r->padding_left < 0 || r->padding_right < 0 ||
      r->padding_top > (1 << 16) || r->padding_bottom > (1 << 16) || r->padding_left > (1 << 16) ||
      r->padding_right > (1 << 16)) {
    qnn_set_error("pad: negative or huge padding");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t out_h = (int64_t) r->input_height + r->padding_top + r->padding_bottom;
  const int64_t out_w = (int64_t) r->input_width + r->padding_left + r->padding_right;
  const int8_t* input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * r->channels, "pad input");
  int8_t* output = qnn_plan_tensor(plan, r->output, (int64_t) r->batch * out_h * out_w * r->channels, "pad output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct pad_op* op = qnn_plan_alloc(plan, sizeof(struct pad_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output;
  op->r = *r;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_pad(const struct qnn_op* base) {
  const struct pad_op* op = (const struct pad_op*) base;
  const struct qnn_pad_record* r = &op->r;
  const size_t row_in = (size_t) r->input_width * r->channels;
  const size_t out_w = (size_t) r->input_width + r->padding_left + r->padding_right;
  const size_t row_out = out_w * r->channels;
  int8_t* out = op->output;
  const int8_t* in = op->input;
  for (int32_t b = 0; b < r->batch; b++) {
    qnn_memset(out, r->pad_value, row_out * r->padding_top);
    out += row_out * r->padding_top;
    for (int32_t y = 0; y < r->input_height; y++) {
      qnn_memset(out, r->pad_value, (size_t) r->padding_left * r->channels);
      qnn_memcpy(out + (size_t) r->padding_left * r->channels, in, row_in);
      qnn_memset(out + (size_t) r->padding_left * r->channels + row_in, r->pad_value,
                 (size_t) r->padding_right * r->channels);
      out += row_out;
      in += row_in;
    }
    qnn_memset(out, r->pad_value, row_out * r->padding_bottom);
    out += row_out * r->padding_bottom;
  }
}
