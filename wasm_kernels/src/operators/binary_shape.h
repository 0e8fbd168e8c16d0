/* The broadcasting shared by the binary element-wise operators (add.c, mul.c, maximum.c, lut2d.c,
 * binary_f32.c): a record's 4-D output shape and per-input element strides (0 along broadcast
 * dimensions), collapsed at create time (size-1 dimensions dropped, dimensions contiguous in both
 * inputs merged: same-shape operands become one long row, [1,H,W,C] x [1,1,1,C] becomes H*W rows of
 * C), then run as rows in parallel. */
#ifndef QNN_OPERATORS_BINARY_SHAPE_H
#define QNN_OPERATORS_BINARY_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

struct binary_shape {
  const int8_t* a;
  const int8_t* b;
  int8_t* output;
  size_t input_bytes;                   /* per input element: 1 (int8), or 4 (float32) */
  size_t output_bytes;                  /* per output element: 1 (int8), or 4 (float32) */
  size_t dims[4];                       /* collapsed, innermost last */
  size_t a_strides[4], b_strides[4];    /* in elements */
};

int32_t binary_invalid(const char* what, const char* problem);

/* Validates the shape fields (dims, strides, tensors inside the arena, the constant inside memory)
 * and fills `s`; a constant b is copied into plan memory (the staging buffer is reused). */
int32_t binary_shape_init(
    struct qnn_plan* plan, int32_t input_a, int32_t input_b, int32_t output, int32_t b_constant,
    const int32_t* dims, const int32_t* a_strides, const int32_t* b_strides,
    const char* what, const char* what_a, const char* what_b, const char* what_out, size_t input_bytes,
    size_t output_bytes, struct binary_shape* s);

/* One row of n elements: a and b advance by their strides (in elements), the output contiguously. */
typedef void (*binary_row_fn)(size_t n, const int8_t* a, size_t a_stride, const int8_t* b, size_t b_stride,
                              int8_t* output, const void* params);

/* Runs `row` over the whole output, in tasks of whole 64-element runs. */
void binary_run(const struct binary_shape* s, binary_row_fn row, const void* params);

#endif
