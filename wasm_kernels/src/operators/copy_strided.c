/* Strided copies of 1-, 2- or 4-byte elements over up to 6 dimensions: TRANSPOSE, SLICE,
 * STRIDED_SLICE (negative steps too), SPLIT, GATHER with constant indices, DEPTH_TO_SPACE. The
 * frontend merges dimensions that stay contiguous, so most copies have rank 2 to 4. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "plan.h"
#include "threadpool.h"
#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

#define RANK 6

struct copy_strided_op {
  struct qnn_op base;
  const char* input;         /* the first element read (input + input_offset) */
  char* output;              /* the first element written */
  size_t element_bytes;
  size_t dims[RANK];
  ptrdiff_t input_strides[RANK];   /* in bytes */
  ptrdiff_t output_strides[RANK];  /* in bytes */
};

/* The byte range [first, last) that `dims` x `strides` (elements) touches from `offset`; 0 if a
 * stride is larger than any tensor could need. */
static int extent(const int32_t* dims, const int32_t* strides, int32_t offset, int32_t element_bytes,
                  int64_t* first, int64_t* last) {
  int64_t low = offset, high = offset;
  for (int k = 0; k < RANK; k++) {
    const int64_t span = (int64_t) (dims[k] - 1) * strides[k];
    if (span > INT32_MAX || span < -(int64_t) INT32_MAX) return 0;
    if (span > 0) high += span; else low += span;
  }
  *first = low * element_bytes;
  *last = (high + 1) * element_bytes;
  return 1;
}

/* Whether bytes [first, last) from the tensor at arena offset `base` lie inside the arena. */
static int inside_arena(const struct qnn_plan* plan, int32_t base, int64_t first, int64_t last, const char* what) {
  const int64_t start = (int64_t) base + first;
  if (start < 0 || start > INT32_MAX) {
    qnn_set_error2(what, ": tensor lies outside the activation arena");
    return 0;
  }
  return qnn_plan_tensor(plan, (int32_t) start, last - first, what) != NULL;
}

QNN_PLAN_CODE int32_t qnn_create_copy_strided(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_copy_strided_record* r = record;
  const int32_t eb = r->element_bytes;
  if (eb != 1 && eb != 2 && eb != 4) {
    qnn_set_error("copy_strided: element_bytes must be 1, 2 or 4");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_positive(r->dims, RANK, "copy_strided")) return QNN_ERROR_INVALID_RECORD;
  int64_t size = 1;
  for (int k = 0; k < RANK; k++) {
    size *= r->dims[k];
    if (size > INT32_MAX) {
      qnn_set_error("copy_strided: more than 2^31 elements");
      return QNN_ERROR_INVALID_RECORD;
    }
  }
  int64_t in_first, in_last, out_first, out_last;
  if (!extent(r->dims, r->input_strides, r->input_offset, eb, &in_first, &in_last) ||
      !extent(r->dims, r->output_strides, r->output_offset, eb, &out_first, &out_last)) {
    qnn_set_error("copy_strided: a stride reaches beyond 2^31 elements");
    return QNN_ERROR_INVALID_RECORD;
  }
  const char* constant = NULL;
  if (r->constant != 0) {
    const void* data = in_first < 0 ? NULL : qnn_plan_constant(r->constant, in_last, "copy_strided constant");
    char* copy = data == NULL ? NULL : qnn_plan_alloc(plan, in_last);
    if (data == NULL) {
      qnn_set_error("copy_strided: the elements read lie outside the constant");
      return QNN_ERROR_INVALID_RECORD;
    }
    if (copy == NULL) return QNN_ERROR_OUT_OF_MEMORY;
    qnn_memcpy(copy, data, (size_t) in_last);
    constant = copy;
  } else if (!inside_arena(plan, r->input, in_first, in_last, "copy_strided input")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!inside_arena(plan, r->output, out_first, out_last, "copy_strided output")) return QNN_ERROR_INVALID_RECORD;
  struct copy_strided_op* op = qnn_plan_alloc(plan, sizeof(struct copy_strided_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = (constant != NULL ? constant : (const char*) plan->arena + r->input) + (ptrdiff_t) r->input_offset * eb;
  op->output = (char*) plan->arena + r->output + (ptrdiff_t) r->output_offset * eb;
  op->element_bytes = (size_t) eb;
  for (int k = 0; k < RANK; k++) {
    op->dims[k] = (size_t) r->dims[k];
    op->input_strides[k] = (ptrdiff_t) r->input_strides[k] * eb;
    op->output_strides[k] = (ptrdiff_t) r->output_strides[k] * eb;
  }
  *result = &op->base;
  return QNN_OK;
}

#if defined(__wasm_simd128__)
/* NCHW -> NHWC of 3 channels (an RGB image), 16 pixels at a time: the three planes' bytes interleaved
 * into 48 output bytes by five shuffles. Returns how many pixels it did. */
static size_t interleave3(const int8_t* r, const int8_t* g, const int8_t* b, int8_t* out, size_t pixels) {
  size_t i = 0;
  for (; i + 16 <= pixels; i += 16) {
    const v128_t vr = wasm_v128_load(r + i), vg = wasm_v128_load(g + i), vb = wasm_v128_load(b + i);
    const v128_t rg_lo = wasm_i8x16_shuffle(vr, vg, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t rg_hi = wasm_i8x16_shuffle(vr, vg, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const v128_t rg_mid = wasm_i8x16_shuffle(rg_lo, rg_hi, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
    wasm_v128_store(out + 3 * i, wasm_i8x16_shuffle(rg_lo, vb, 0, 1, 16, 2, 3, 17, 4, 5, 18, 6, 7, 19, 8, 9, 20, 10));
    wasm_v128_store(out + 3 * i + 16, wasm_i8x16_shuffle(rg_mid, vb, 3, 21, 4, 5, 22, 6, 7, 23, 8, 9, 24, 10, 11, 25, 12, 13));
    wasm_v128_store(out + 3 * i + 32, wasm_i8x16_shuffle(rg_hi, vb, 26, 6, 7, 27, 8, 9, 28, 10, 11, 29, 12, 13, 30, 14, 15, 31));
  }
  return i;
}
#endif

/* Rows [first, first + rows) of one output block dims[4] x dims[5], strides in bytes. */
static void copy_block(const struct copy_strided_op* op, const char* in, char* out, size_t first, size_t rows) {
  const size_t eb = op->element_bytes, n = op->dims[5];
  const ptrdiff_t is4 = op->input_strides[4], is5 = op->input_strides[5];
  const ptrdiff_t os4 = op->output_strides[4], os5 = op->output_strides[5];
  in += (ptrdiff_t) first * is4;
  out += (ptrdiff_t) first * os4;
  if (is5 == (ptrdiff_t) eb && os5 == (ptrdiff_t) eb) {          /* contiguous rows */
    for (size_t i = 0; i < rows; i++) qnn_memcpy(out + i * os4, in + i * is4, n * eb);
    return;
  }
  if (eb == 1 && is4 == 1 && os5 == 1) {
    /* NCHW -> NHWC (a model's input): the innermost output dimension (channels, often 3) is short,
     * so walk each channel's input row contiguously and write every os4-th output byte. */
    size_t done = 0;
#if defined(__wasm_simd128__)
    if (n == 3 && os4 == 3) {
      const int8_t* plane = (const int8_t*) in;
      done = interleave3(plane, plane + is5, plane + 2 * is5, (int8_t*) out, rows);
    }
#endif
    for (size_t c = 0; c < n; c++) {
      const char* row = in + c * is5;
      for (size_t i = done; i < rows; i++) out[i * os4 + c] = row[i];
    }
    return;
  }
  for (size_t i = 0; i < rows; i++) {
    const char* a = in + i * is4;
    char* b = out + i * os4;
    if (eb == 1) {
      for (size_t j = 0; j < n; j++) b[j * os5] = a[j * is5];
    } else if (eb == 4) {
      for (size_t j = 0; j < n; j++) qnn_memcpy(b + j * os5, a + j * is5, 4);
    } else {
      for (size_t j = 0; j < n; j++) qnn_memcpy(b + j * os5, a + j * is5, 2);
    }
  }
}

/* Tasks are ranges of (outer block, row range) pairs: the dims[0] x .. x dims[3] outer blocks, each
 * cut into row_tasks even runs of whole 16s of its dims[4] rows (row_units 16s; an image's NCHW ->
 * NHWC is a single block), as qnn_parallelize_ranges cuts its items. */
struct copy_split {
  const struct copy_strided_op* op;
  size_t row_tasks, row_units;
};

static size_t row_start(const struct copy_split* split, size_t task) {
  return qnn_min_size(qnn_split_start(task, split->row_tasks, split->row_units) * 16, split->op->dims[4]);
}

static void copy_blocks(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct copy_split* split = context;
  const struct copy_strided_op* op = split->op;
  for (size_t item = first; item < first + count; item++) {
    size_t rest = item / split->row_tasks;
    const size_t row_task = item % split->row_tasks, first_row = row_start(split, row_task);
    const char* in = op->input;
    char* out = op->output;
    for (int k = 3; k >= 0; k--) {
      const size_t i = rest % op->dims[k];
      rest /= op->dims[k];
      in += (ptrdiff_t) i * op->input_strides[k];
      out += (ptrdiff_t) i * op->output_strides[k];
    }
    copy_block(op, in, out, first_row, row_start(split, row_task + 1) - first_row);
  }
}

void qnn_run_copy_strided(const struct qnn_op* base) {
  const struct copy_strided_op* op = (const struct copy_strided_op*) base;
  const size_t blocks = op->dims[0] * op->dims[1] * op->dims[2] * op->dims[3];
  const size_t elements = blocks * op->dims[4] * op->dims[5];
  struct copy_split split = {op, 1, qnn_divide_round_up(op->dims[4], 16)};
  if (blocks < 4 * qnn_thread_count()) {
    /* too few blocks to share: split their rows too (whole 16s, for the SIMD loop) */
    const size_t rows_per_task = qnn_items_per_task(op->dims[4], 16, 4, op->dims[5], QNN_TASK_ELEMENTS);
    split.row_tasks = qnn_split_count(split.row_units, qnn_divide_round_up(rows_per_task, 16));
  }
  const size_t items = blocks * split.row_tasks;
  qnn_parallelize_ranges(copy_blocks, &split, items, 1, 4, elements / items, QNN_TASK_ELEMENTS);
}
