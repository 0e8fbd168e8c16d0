/* Broadcasting for the binary element-wise operators (binary_shape.h). */
#include "operators/binary_shape.h"

#include "qnnweb.h"
#include "common.h"
#include "threadpool.h"

int32_t binary_invalid(const char* what, const char* problem) {
  qnn_set_error2(what, problem);
  return QNN_ERROR_INVALID_RECORD;
}

static int64_t extent(const int32_t* dims, const int32_t* strides) {
  int64_t last = 0;
  for (int k = 0; k < 4; k++) last += (int64_t) (dims[k] - 1) * strides[k];
  return last + 1;
}

QNN_PLAN_CODE int32_t binary_shape_init(
    struct qnn_plan* plan, int32_t input_a, int32_t input_b, int32_t output, int32_t b_constant,
    const int32_t* dims, const int32_t* a_strides, const int32_t* b_strides,
    const char* what, const char* what_a, const char* what_b, const char* what_out, size_t input_bytes,
    size_t output_bytes, struct binary_shape* s) {
  s->input_bytes = input_bytes;
  s->output_bytes = output_bytes;
  if (!qnn_check_positive(dims, 4, what)) return QNN_ERROR_INVALID_RECORD;
  if (b_constant != 0 && b_constant != 1) return binary_invalid(what, ": b_constant must be 0 or 1");
  int64_t size = 1;
  for (int k = 0; k < 4; k++) {
    if (a_strides[k] < 0 || b_strides[k] < 0 || a_strides[k] > (1 << 30) || b_strides[k] > (1 << 30)) {
      return binary_invalid(what, ": an input stride is negative or huge");
    }
    size *= dims[k];
    if (size > INT32_MAX) return binary_invalid(what, ": output has more than 2^31 elements");
  }
  const int64_t a_extent = extent(dims, a_strides) * (int64_t) input_bytes;
  const int64_t b_extent = extent(dims, b_strides) * (int64_t) input_bytes;
  s->a = qnn_plan_tensor(plan, input_a, a_extent, what_a);
  s->output = qnn_plan_tensor(plan, output, size * (int64_t) s->output_bytes, what_out);
  if (s->a == NULL || s->output == NULL) return QNN_ERROR_INVALID_RECORD;
  if (b_constant) {
    const int8_t* data = qnn_plan_constant(input_b, b_extent, what_b);
    if (data == NULL) return QNN_ERROR_INVALID_RECORD;
    int8_t* copy = qnn_plan_alloc(plan, b_extent);
    if (copy == NULL) return QNN_ERROR_OUT_OF_MEMORY;
    qnn_memcpy(copy, data, (size_t) b_extent);
    s->b = copy;
  } else {
    s->b = qnn_plan_tensor(plan, input_b, b_extent, what_b);
    if (s->b == NULL) return QNN_ERROR_INVALID_RECORD;
  }
  /* Drop size-1 dimensions, merge dimensions contiguous in both inputs. */
  size_t d[4], sa[4], sb[4];
  int n = 0;
  for (int k = 0; k < 4; k++) {
    const size_t dk = (size_t) dims[k], ak = (size_t) a_strides[k], bk = (size_t) b_strides[k];
    if (dk == 1) continue;
    if (n > 0 && sa[n - 1] == ak * dk && sb[n - 1] == bk * dk) {
      d[n - 1] *= dk;
      sa[n - 1] = ak;
      sb[n - 1] = bk;
    } else {
      d[n] = dk;
      sa[n] = ak;
      sb[n] = bk;
      n++;
    }
  }
  for (int k = 0; k < 4; k++) {
    const int from = k - (4 - n);
    s->dims[k] = from >= 0 ? d[from] : 1;
    s->a_strides[k] = from >= 0 ? sa[from] : 0;
    s->b_strides[k] = from >= 0 ? sb[from] : 0;
  }
  return QNN_OK;
}

/* Tasks are ranges of the output's elements (rows of dims[3] elements, split inside a row too: a
 * residual ADD of two same-shape tensors is one long row). */
struct binary_run_context {
  const struct binary_shape* shape;
  binary_row_fn row;
  const void* params;
};

static void binary_elements(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct binary_run_context* c = context;
  const struct binary_shape* s = c->shape;
  const size_t n = s->dims[3], end = first + count;
  for (size_t at = first; at < end;) {
    const size_t r = at / n, column = at % n, run = qnn_min_size(n - column, end - at);
    const size_t i2 = r % s->dims[2], i1 = r / s->dims[2] % s->dims[1], i0 = r / s->dims[2] / s->dims[1];
    const size_t a_offset = i0 * s->a_strides[0] + i1 * s->a_strides[1] + i2 * s->a_strides[2] + column * s->a_strides[3];
    const size_t b_offset = i0 * s->b_strides[0] + i1 * s->b_strides[1] + i2 * s->b_strides[2] + column * s->b_strides[3];
    c->row(run, s->a + a_offset * s->input_bytes, s->a_strides[3], s->b + b_offset * s->input_bytes, s->b_strides[3],
           s->output + at * s->output_bytes,
           c->params);
    at += run;
  }
}

void binary_run(const struct binary_shape* s, binary_row_fn row, const void* params) {
  const size_t elements = s->dims[0] * s->dims[1] * s->dims[2] * s->dims[3];
  const struct binary_run_context context = {s, row, params};
  /* whole 64-element runs, so that the SIMD loops see whole vectors */
  qnn_parallelize_ranges(binary_elements, &context, elements, 64, 4, 1, QNN_TASK_ELEMENTS);
}
