/* BATCH_MATMUL of two int8 activations: Y[b] = A[b] B[b] (qnnweb.h).
 *
 * arithmetic 0 (fp32): B has no packed form at load, so each run packs every batch's B into the
 * layout of the convolutions' GEMM kernels (packing.c: its column sums times A's zero point folded
 * into the bias, XOR 0x80 where the config packs so), one task per batch, then runs the kernels on
 * A's rows through a pointer per row (gemm_rows.c: B's zero point is conv's per-tensor weight zero
 * point, -b_zp * sum(a - a_zp) per row), in tasks of batches x ranges of whole row tiles.
 * arithmetic 1 (TFLite's fixed point): TFLite's accumulate-then-rescale, scalar, in the same tasks.
 * Everything here but the kernels is compiled for size (QNN_PLAN_CODE): the relaxed module has a size
 * budget, and TFLite's form is its builtin kernel's scalar loop. */
#include "qnnweb.h"
#include "common.h"
#include "config.h"
#include "gemm_rows.h"
#include "operators.h"
#include "packing.h"
#include "requantization.h"
#include "threadpool.h"

struct batch_matmul_op {
  struct qnn_op base;
  struct qnn_batch_matmul_record r;
  struct qnn_gemm_rows gemm;
  const int8_t* a;
  const int8_t* b;
  int8_t* output;
  size_t batches;
  size_t k_stride, n_stride;       /* B's element (k, n) at k * k_stride + n * n_stride */
  const int8_t** row_pointers;     /* batches x rows: A's rows, what the kernels read */
  const float* scales;             /* columns copies of the scale, for packing */
  char* packed;                    /* batches blocks of packed_bytes */
  size_t packed_bytes;
  int32_t* correction;             /* QNN_CORRECTION_ROWS per thread; NULL when not corrected */
};

/* The element offset of batch `index`'s matrix for these strides (BATCH_MATMUL_F32's too). */
QNN_PLAN_CODE size_t qnn_batch_offset(const int32_t* batch, const int32_t* strides, size_t index) {
  size_t offset = 0;
  for (int k = 2; k >= 0; k--) {
    offset += index % (size_t) batch[k] * (size_t) strides[k];
    index /= (size_t) batch[k];
  }
  return offset;
}

/* The last element a matrix of `matrix` elements (after the batch offsets) reaches, + 1. */
QNN_PLAN_CODE int64_t qnn_batch_extent(const int32_t* batch, const int32_t* strides, int64_t matrix) {
  int64_t last = matrix;
  for (int k = 0; k < 3; k++) last += (int64_t) (batch[k] - 1) * strides[k];
  return last;
}

QNN_PLAN_CODE static int32_t check_record(const struct qnn_batch_matmul_record* r) {
  if (!qnn_check_positive(r->batch, 3, "batch_matmul") || !qnn_check_positive(&r->rows, 3, "batch_matmul") ||
      !qnn_check_int8(r->a_zero_point, "batch_matmul") || !qnn_check_int8(r->b_zero_point, "batch_matmul") ||
      !qnn_check_int8(r->output_zero_point, "batch_matmul") || !qnn_check_int8(r->output_min, "batch_matmul") ||
      !qnn_check_int8(r->output_max, "batch_matmul")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  int valid = (r->transpose_b & ~1) == 0 && (r->arithmetic & ~1) == 0 &&
              (r->arithmetic == 1 ? (r->fixed_multiplier == 0 || r->fixed_multiplier >= (1 << 30)) &&
                                        (r->fixed_shift & ~31) == 0
                                  : r->scale > 0.0f && r->scale <= 0x1.0p+100f);
  for (int k = 0; k < 3; k++) valid &= r->a_strides[k] >= 0 && r->b_strides[k] >= 0;
  if (!valid) {
    qnn_set_error("batch_matmul: negative strides, transpose_b or arithmetic not 0 or 1, or a bad scale / multiplier");
    return QNN_ERROR_INVALID_RECORD;
  }
  return QNN_OK;
}

QNN_PLAN_CODE int32_t qnn_create_batch_matmul(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_batch_matmul_record* r = record;
  int32_t status = check_record(r);
  if (status != QNN_OK) return status;
  const int64_t batches = (int64_t) r->batch[0] * r->batch[1] * r->batch[2];
  const int8_t* a = qnn_plan_tensor(plan, r->input_a, qnn_batch_extent(r->batch, r->a_strides, (int64_t) r->rows * r->depth),
                                    "batch_matmul input_a");
  const int8_t* b = qnn_plan_tensor(plan, r->input_b, qnn_batch_extent(r->batch, r->b_strides, (int64_t) r->depth * r->columns),
                                    "batch_matmul input_b");
  int8_t* output = qnn_plan_tensor(plan, r->output, batches * r->rows * r->columns, "batch_matmul output");
  if (a == NULL || b == NULL || output == NULL) return QNN_ERROR_INVALID_RECORD;
  const struct qnn_gemm_config* config = qnn_get_gemm_config_for((size_t) r->columns);
  const int64_t packed_bytes = qnn_pack_qs8_igemm_size(r->columns, 1, r->depth, config->nr, config->kr, config->sr);
  struct batch_matmul_op* op = qnn_plan_alloc(plan, sizeof(struct batch_matmul_op));
  const int8_t** row_pointers = qnn_plan_alloc(plan, batches * r->rows * (int64_t) sizeof(int8_t*));
  /* TFLite's arithmetic packs nothing */
  char* packed = qnn_plan_alloc(plan, r->arithmetic == 0 ? batches * packed_bytes : 0);
  float* scales = qnn_plan_alloc(plan, (int64_t) r->columns * 4);
  int32_t* correction = qnn_plan_alloc(plan, (int64_t) QNN_CORRECTION_ROWS * QNN_MAX_THREADS * 4);
  const size_t gemm_kc = qnn_round_up((size_t) r->depth, 2), gemm_rows = qnn_gemm_chunk_rows(config->mr, gemm_kc);
  if (op == NULL || row_pointers == NULL || packed == NULL || scales == NULL || correction == NULL ||
      (config->gemm != NULL && !qnn_reserve_scratch(gemm_rows * gemm_kc * sizeof(int16_t) + QNN_GEMM_PACKA_EXTRA))) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }
  for (int32_t n = 0; n < r->columns; n++) scales[n] = r->scale;
  for (int64_t i = 0; i < batches; i++) {
    const int8_t* matrix = a + qnn_batch_offset(r->batch, r->a_strides, (size_t) i);
    for (int32_t m = 0; m < r->rows; m++) row_pointers[i * r->rows + m] = matrix + m * r->depth;
  }
  *op = (struct batch_matmul_op) {
    {QNN_OP_BATCH_MATMUL}, *r,
    {config, (size_t) r->depth, 1, 1, r->a_zero_point, r->b_zero_point, gemm_kc, gemm_rows,
     qnn_qs8_minmax_params_init(r->output_zero_point, r->output_min, r->output_max, 0)},
    a, b, output, (size_t) batches, r->transpose_b ? 1 : (size_t) r->columns, r->transpose_b ? (size_t) r->depth : 1,
    row_pointers, scales, packed, (size_t) packed_bytes,
    qnn_gemm_rows_corrected(config, r->b_zero_point) ? correction : NULL};
  *result = &op->base;
  return QNN_OK;
}

QNN_PLAN_CODE static void pack_task(const void* context, size_t batch, uint32_t thread) {
  (void) thread;
  const struct batch_matmul_op* op = context;
  const struct qnn_gemm_config* config = op->gemm.config;
  qnn_pack_qs8_igemm_w((size_t) op->r.columns, 1, (size_t) op->r.depth, config->nr, config->kr, config->sr,
                       op->r.a_zero_point + config->input_zero_point_offset, config->weights_xor,
                       op->b + qnn_batch_offset(op->r.batch, op->r.b_strides, batch), op->n_stride, 0, op->k_stride, NULL,
                       op->scales, op->packed + batch * op->packed_bytes);
}

/* TFLite's builtin kernel: rows [first, end) of one batch. */
QNN_PLAN_CODE static void fixed_point_rows(const struct batch_matmul_op* op, size_t batch, size_t first, size_t end) {
  const struct qnn_batch_matmul_record* r = &op->r;
  const int8_t* b = op->b + qnn_batch_offset(r->batch, r->b_strides, batch);
  for (size_t m = first; m < end; m++) {
    const int8_t* a = op->row_pointers[batch * r->rows + m];
    int8_t* y = op->output + (batch * r->rows + m) * r->columns;
    for (int32_t n = 0; n < r->columns; n++) {
      int32_t acc = 0;
      for (int32_t k = 0; k < r->depth; k++) {
        acc += (a[k] - r->a_zero_point) * (b[k * op->k_stride + n * op->n_stride] - r->b_zero_point);
      }
      const int32_t out = qnn_tflite_multiply(acc, r->fixed_multiplier, r->fixed_shift) + r->output_zero_point;
      y[n] = (int8_t) qnn_min_i32(qnn_max_i32(out, r->output_min), r->output_max);
    }
  }
}

struct batch_matmul_split {
  const struct batch_matmul_op* op;
  size_t tiles, row_tasks;  /* per batch: row tiles of mr, split evenly */
};

QNN_PLAN_CODE static void multiply_task(const void* context, size_t task, uint32_t thread) {
  const struct batch_matmul_split* split = context;
  const struct batch_matmul_op* op = split->op;
  const size_t mr = op->gemm.config->mr, rows = (size_t) op->r.rows, columns = (size_t) op->r.columns;
  const size_t batch = task / split->row_tasks, row_task = task % split->row_tasks;
  const size_t first = qnn_split_start(row_task, split->row_tasks, split->tiles) * mr;
  const size_t end = qnn_min_size(rows, qnn_split_start(row_task + 1, split->row_tasks, split->tiles) * mr);
  if (first >= end) return;
  if (op->r.arithmetic == 1) {
    fixed_point_rows(op, batch, first, end);
    return;
  }
  qnn_gemm_rows_run(&op->gemm, op->row_pointers + batch * rows + first, end - first,
                    op->packed + batch * op->packed_bytes, columns, op->output + (batch * rows + first) * columns, columns,
                    op->correction != NULL ? op->correction + thread * QNN_CORRECTION_ROWS : NULL, thread);
}

QNN_PLAN_CODE void qnn_run_batch_matmul(const struct qnn_op* base) {
  const struct batch_matmul_op* op = (const struct batch_matmul_op*) base;
  if (op->r.arithmetic == 0) qnn_parallelize(pack_task, op, op->batches);
  const size_t tiles = qnn_divide_round_up((size_t) op->r.rows, op->gemm.config->mr);
  const uint64_t tile_macs = (uint64_t) op->gemm.config->mr * (uint64_t) op->r.columns * (uint64_t) op->r.depth;
  const size_t per_task = qnn_items_per_task(op->batches * tiles, 1, 8, tile_macs, QNN_TASK_MACS);
  struct batch_matmul_split split = {op, tiles, qnn_divide_round_up(tiles, per_task)};
  qnn_parallelize(multiply_task, &split, op->batches * split.row_tasks);
}
