/* Indirection buffers (QNNPACK/XNNPACK's indirect convolution): one input-row pointer per output
 * pixel and kernel tap; taps that fall in the padding point at a buffer of input zero points. */
#ifndef QNN_INDIRECTION_H
#define QNN_INDIRECTION_H

#include <stddef.h>
#include <stdint.h>

struct qnn_window {
  size_t batch, input_height, input_width, input_pixel_stride;
  size_t output_height, output_width;
  size_t kernel_height, kernel_width, stride_height, stride_width, dilation_height, dilation_width;
  size_t padding_top, padding_left;
};

/* Fills indirection[pixel * ks + tap], pixels in NHW order, taps in (ky, kx) order. */
void qnn_indirection_init(const struct qnn_window* window, const int8_t* input, const int8_t* zero,
                          const int8_t** indirection);

#endif
