/* TRANSPOSE of up to 4 dimensions (NCHW <-> NHWC at graph edges), elements of 1, 2 or 4 bytes. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

struct transpose_op {
  struct qnn_op base;
  const char* input;
  char* output;
  size_t element_bytes;
  size_t dims[4];            /* output dimensions */
  size_t strides[4];         /* input element stride of each output dimension */
};

int32_t qnn_create_transpose(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_transpose_record* r = record;
  if (r->element_bytes != 1 && r->element_bytes != 2 && r->element_bytes != 4) {
    qnn_set_error("transpose: element_bytes must be 1, 2 or 4");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_positive(r->input_dims, 4, "transpose")) return QNN_ERROR_INVALID_RECORD;
  int seen = 0;
  for (int k = 0; k < 4; k++) {
    if (r->perm[k] < 0 || r->perm[k] > 3 || (seen & (1 << r->perm[k]))) {
      qnn_set_error("transpose: perm is not a permutation of 0, 1, 2, 3");
      return QNN_ERROR_INVALID_RECORD;
    }
    seen |= 1 << r->perm[k];
  }
  int64_t size = 1;
  for (int k = 0; k < 4; k++) {
    size *= r->input_dims[k];
    if (size > INT32_MAX) {
      qnn_set_error("transpose: more than 2^31 elements");
      return QNN_ERROR_INVALID_RECORD;
    }
  }
  const char* input = (const char*) qnn_plan_tensor(plan, r->input, size * r->element_bytes, "transpose input");
  char* output = (char*) qnn_plan_tensor(plan, r->output, size * r->element_bytes, "transpose output");
  if (input == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  struct transpose_op* op = qnn_plan_alloc(plan, sizeof(struct transpose_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  size_t input_strides[4];
  input_strides[3] = 1;
  for (int k = 2; k >= 0; k--) input_strides[k] = input_strides[k + 1] * (size_t) r->input_dims[k + 1];
  for (int k = 0; k < 4; k++) {
    op->dims[k] = (size_t) r->input_dims[r->perm[k]];
    op->strides[k] = input_strides[r->perm[k]];
  }
  op->input = input;
  op->output = output;
  op->element_bytes = (size_t) r->element_bytes;
  *result = &op->base;
  return QNN_OK;
}

/* Tasks are ranges of the output's dims[0] x dims[1] outer rows. */
static void transpose_rows(const void* context, size_t first, size_t rows, uint32_t thread) {
  (void) thread;
  const struct transpose_op* op = context;
  const size_t eb = op->element_bytes, n = op->dims[3], s3 = op->strides[3], row_bytes = op->dims[2] * n * eb;
  for (size_t r = first; r < first + rows; r++) {
    const size_t i0 = r / op->dims[1], i1 = r % op->dims[1];
    char* out = op->output + r * row_bytes;
    const char* row = op->input + (i0 * op->strides[0] + i1 * op->strides[1]) * eb;
    if (eb == 1 && op->strides[2] == 1 && s3 != 1) {
      /* NCHW -> NHWC (a model's input): the innermost output dimension (channels, often 3) is
       * short, so walk each channel's input row contiguously and write every n-th output byte. */
      const size_t width = op->dims[2];
      for (size_t c = 0; c < n; c++) {
        for (size_t i = 0; i < width; i++) out[i * n + c] = row[c * s3 + i];
      }
      continue;
    }
    for (size_t i2 = 0; i2 < op->dims[2]; i2++) {
      const char* in = row + i2 * op->strides[2] * eb;
      if (eb == 1) {
        for (size_t i = 0; i < n; i++) out[i] = in[i * s3];
      } else if (eb == 4) {
        for (size_t i = 0; i < n; i++) qnn_memcpy(out + 4 * i, in + 4 * i * s3, 4);
      } else {
        for (size_t i = 0; i < n; i++) qnn_memcpy(out + 2 * i, in + 2 * i * s3, 2);
      }
      out += n * eb;
    }
  }
}

void qnn_run_transpose(const struct qnn_op* base) {
  const struct transpose_op* op = (const struct transpose_op*) base;
  const size_t rows = op->dims[0] * op->dims[1];
  const size_t elements = rows * op->dims[2] * op->dims[3];
  qnn_parallelize_ranges(transpose_rows, op, rows, elements >= 16384 ? qnn_items_per_task(rows, 1, 4, 2) : rows);
}
