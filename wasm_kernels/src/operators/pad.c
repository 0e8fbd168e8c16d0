/* PAD of H, W and C with a constant (the zero point, or PADV2's value); a PAD of H and W with the zero
 * point before a convolution folds into it instead. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"

struct pad_op {
  struct qnn_op base;
  const int8_t* input;
  int8_t* output;
  struct qnn_pad_record r;
};

QNN_PLAN_CODE int32_t qnn_create_pad(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_pad_record* r = record;
  if (!qnn_check_positive(&r->batch, 4, "pad") || !qnn_check_int8(r->pad_value, "pad")) return QNN_ERROR_INVALID_RECORD;
  const int32_t* paddings[6] = {&r->padding_top, &r->padding_bottom, &r->padding_left, &r->padding_right,
                                &r->padding_front, &r->padding_back};
  int huge = 0;
  for (int k = 0; k < 6; k++) huge |= *paddings[k] < 0 || *paddings[k] > (1 << 16);
  if (huge) {
    qnn_set_error("pad: negative or huge padding");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t out_h = (int64_t) r->input_height + r->padding_top + r->padding_bottom;
  const int64_t out_w = (int64_t) r->input_width + r->padding_left + r->padding_right;
  const int8_t* input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * r->channels, "pad input");
  const int64_t out_c = (int64_t) r->channels + r->padding_front + r->padding_back;
  int8_t* output = qnn_plan_tensor(plan, r->output, (int64_t) r->batch * out_h * out_w * out_c, "pad output");
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
  const size_t c_in = (size_t) r->channels, front = (size_t) r->padding_front, back = (size_t) r->padding_back;
  const size_t c_out = c_in + front + back;
  const size_t row_in = (size_t) r->input_width * c_in;
  const size_t out_w = (size_t) r->input_width + r->padding_left + r->padding_right;
  const size_t row_out = out_w * c_out;
  int8_t* out = op->output;
  const int8_t* in = op->input;
  for (int32_t b = 0; b < r->batch; b++) {
    qnn_memset(out, r->pad_value, row_out * r->padding_top);
    out += row_out * r->padding_top;
    for (int32_t y = 0; y < r->input_height; y++) {
      qnn_memset(out, r->pad_value, (size_t) r->padding_left * c_out);
      int8_t* pixel = out + (size_t) r->padding_left * c_out;
      if (front == 0 && back == 0) {
        qnn_memcpy(pixel, in, row_in);
      } else {
        for (int32_t x = 0; x < r->input_width; x++, pixel += c_out) {
          qnn_memset(pixel, r->pad_value, front);
          qnn_memcpy(pixel + front, in + (size_t) x * c_in, c_in);
          qnn_memset(pixel + front + c_in, r->pad_value, back);
        }
      }
      qnn_memset(out + (size_t) (r->padding_left + r->input_width) * c_out, r->pad_value,
                 (size_t) r->padding_right * c_out);
      out += row_out;
      in += row_in;
    }
    qnn_memset(out, r->pad_value, row_out * r->padding_bottom);
    out += row_out * r->padding_bottom;
  }
}
