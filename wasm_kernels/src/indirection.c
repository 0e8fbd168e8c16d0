#include "indirection.h"
#include "common.h"

QNN_PLAN_CODE void qnn_indirection_init(const struct qnn_window* win, const int8_t* input, const int8_t* zero,
                          const int8_t** indirection) {
  for (size_t b = 0; b < win->batch; b++) {
    for (size_t oy = 0; oy < win->output_height; oy++) {
      for (size_t ox = 0; ox < win->output_width; ox++) {
        for (size_t ky = 0; ky < win->kernel_height; ky++) {
          /* Unsigned wrap-around makes "before the top edge" fail the < height test too. */
          const size_t iy = oy * win->stride_height + ky * win->dilation_height - win->padding_top;
          for (size_t kx = 0; kx < win->kernel_width; kx++) {
            const size_t ix = ox * win->stride_width + kx * win->dilation_width - win->padding_left;
            const int inside = iy < win->input_height && ix < win->input_width;
            *indirection++ = inside
                ? input + ((b * win->input_height + iy) * win->input_width + ix) * win->input_pixel_stride
                : zero;
          }
        }
      }
    }
  }
}
