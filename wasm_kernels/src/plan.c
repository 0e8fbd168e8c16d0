#include "plan.h"

#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

struct op_kind {
  int32_t record_bytes;
  int32_t (*create)(struct qnn_plan*, const void*, struct qnn_op**);
  void (*run)(const struct qnn_op*);
};

#define QNN_OP_KIND(record, name) {sizeof(struct record), qnn_create_##name, qnn_run_##name}

static const struct op_kind op_kinds[QNN_OP_TYPE_COUNT] = {
  [QNN_OP_QUANTIZE] = QNN_OP_KIND(qnn_quantize_record, quantize),
  [QNN_OP_DEQUANTIZE] = QNN_OP_KIND(qnn_dequantize_record, dequantize),
  [QNN_OP_REQUANTIZE] = QNN_OP_KIND(qnn_requantize_record, requantize),
  [QNN_OP_CONV2D] = QNN_OP_KIND(qnn_conv2d_record, conv2d),
  [QNN_OP_DWCONV2D] = QNN_OP_KIND(qnn_dwconv2d_record, dwconv2d),
  [QNN_OP_ADD] = QNN_OP_KIND(qnn_add_record, add),
  [QNN_OP_AVGPOOL2D] = QNN_OP_KIND(qnn_avgpool2d_record, avgpool2d),
  [QNN_OP_PAD] = QNN_OP_KIND(qnn_pad_record, pad),
  [QNN_OP_SOFTMAX] = QNN_OP_KIND(qnn_softmax_record, softmax),
  [QNN_OP_COPY] = QNN_OP_KIND(qnn_copy_record, copy),
  [QNN_OP_MUL] = QNN_OP_KIND(qnn_mul_record, mul),
  [QNN_OP_MAXPOOL2D] = QNN_OP_KIND(qnn_maxpool2d_record, maxpool2d),
  [QNN_OP_COPY_SLICE] = QNN_OP_KIND(qnn_copy_slice_record, copy_slice),
  [QNN_OP_COPY_STRIDED] = QNN_OP_KIND(qnn_copy_strided_record, copy_strided),
  [QNN_OP_LUT] = QNN_OP_KIND(qnn_lut_record, lut),
  [QNN_OP_QUANTIZE_CHANNELS] = QNN_OP_KIND(qnn_quantize_channels_record, quantize_channels),
  [QNN_OP_DEQUANTIZE_CHANNELS] = QNN_OP_KIND(qnn_dequantize_channels_record, dequantize_channels),
  [QNN_OP_LUT_F32] = QNN_OP_KIND(qnn_lut_f32_record, lut_f32),
  [QNN_OP_MAXIMUM] = QNN_OP_KIND(qnn_maximum_record, maximum),
  [QNN_OP_RESIZE] = QNN_OP_KIND(qnn_resize_record, resize),
  [QNN_OP_LUT_CHANNELS] = QNN_OP_KIND(qnn_lut_channels_record, lut_channels),
  [QNN_OP_LUT2D] = QNN_OP_KIND(qnn_lut2d_record, lut2d),
  [QNN_OP_DETECTION_POSTPROCESS] = QNN_OP_KIND(qnn_detection_postprocess_record, detection_postprocess),
  [QNN_OP_BINARY_F32] = QNN_OP_KIND(qnn_binary_f32_record, binary_f32),
  [QNN_OP_BATCH_MATMUL] = QNN_OP_KIND(qnn_batch_matmul_record, batch_matmul),
  [QNN_OP_LAYER_NORM] = QNN_OP_KIND(qnn_layer_norm_record, layer_norm),
  [QNN_OP_UNARY_F32] = QNN_OP_KIND(qnn_unary_f32_record, unary_f32),
  [QNN_OP_DYNAMIC_QUANTIZE] = QNN_OP_KIND(qnn_dynamic_quantize_record, dynamic_quantize),
  [QNN_OP_DYNAMIC_MATMUL] = QNN_OP_KIND(qnn_dynamic_matmul_record, dynamic_matmul),
  [QNN_OP_REDUCE_F32] = QNN_OP_KIND(qnn_reduce_f32_record, reduce_f32),
  [QNN_OP_BATCH_MATMUL_F32] = QNN_OP_KIND(qnn_batch_matmul_f32_record, batch_matmul_f32),
  [QNN_OP_GATHER] = QNN_OP_KIND(qnn_gather_record, gather),
  [QNN_OP_CONVERT_F32] = QNN_OP_KIND(qnn_convert_f32_record, convert_f32),
  /* one run for both: a matrix product is a 1x1 convolution (dynamic_matmul.c) */
  [QNN_OP_DYNAMIC_CONV2D] = {sizeof(struct qnn_dynamic_conv2d_record), qnn_create_dynamic_conv2d,
                             qnn_run_dynamic_matmul},
};

static const struct op_kind* find_kind(int32_t type) {
  if (type <= 0 || type >= QNN_OP_TYPE_COUNT || op_kinds[type].create == NULL) return NULL;
  return &op_kinds[type];
}

int32_t QNN_EXPORT(qnn_abi_version)(void) { return QNN_ABI_VERSION; }

int32_t QNN_EXPORT(qnn_record_words)(int32_t type) {
  const struct op_kind* kind = find_kind(type);
  return kind != NULL ? kind->record_bytes / 4 : 0;
}

struct qnn_plan* QNN_EXPORT(qnn_plan_create)(int32_t op_count, int32_t arena_bytes) {
  if (op_count < 0 || arena_bytes < 0) {
    qnn_set_error("plan: negative op count or arena size");
    return NULL;
  }
  struct qnn_plan* plan = qnn_alloc(sizeof(struct qnn_plan) + (size_t) op_count * sizeof(struct qnn_op*));
  int8_t* arena = plan != NULL ? qnn_alloc((size_t) arena_bytes + QNN_EXTRA_BYTES) : NULL;
  if (arena == NULL) {
    qnn_set_error("plan: out of memory for the activation arena");
    return NULL;
  }
  plan->capacity = op_count;
  plan->arena = arena;
  plan->arena_bytes = (size_t) arena_bytes;
  return plan;
}

int32_t QNN_EXPORT(qnn_plan_add)(struct qnn_plan* plan, const int32_t* record) {
  if (plan->count >= plan->capacity) {
    qnn_set_error("plan: more ops added than the plan was created for");
    return QNN_ERROR_PLAN_FULL;
  }
  if (qnn_plan_constant((int32_t) (uintptr_t) record, 8, "record") == NULL) return QNN_ERROR_INVALID_RECORD;
  const struct op_kind* kind = find_kind(record[0]);
  if (kind == NULL) {
    qnn_set_error("plan: unknown op type in record");
    return QNN_ERROR_UNKNOWN_OP;
  }
  if (record[1] * 4 != kind->record_bytes ||
      qnn_plan_constant((int32_t) (uintptr_t) record, kind->record_bytes, "record") == NULL) {
    qnn_set_error("plan: record size does not match its op type (frontend and kernels disagree)");
    return QNN_ERROR_INVALID_RECORD;
  }
  struct qnn_op* op = NULL;
  const int32_t status = kind->create(plan, record, &op);
  if (status != QNN_OK) return status;
  op->type = record[0];
  plan->ops[plan->count++] = op;
  return QNN_OK;
}

int32_t QNN_EXPORT(qnn_plan_add_records)(struct qnn_plan* plan, const int32_t* records, int32_t count) {
  /* Records laid end to end (each is record[1] words long): one call per batch instead of one per op,
   * since a host call costs more than creating a small op (a 100,000-op model). */
  for (int32_t i = 0; i < count; i++) {
    if (qnn_plan_add(plan, records) != QNN_OK) return i;
    records += records[1];
  }
  return count;
}

int8_t* QNN_EXPORT(qnn_plan_arena)(const struct qnn_plan* plan) { return plan->arena; }

int32_t QNN_EXPORT(qnn_plan_packed_bytes)(const struct qnn_plan* plan) { return (int32_t) plan->packed_bytes; }

int32_t QNN_EXPORT(qnn_run)(const struct qnn_plan* plan) {
  if (plan->count != plan->capacity) {
    qnn_set_error("run: the plan is missing ops (an earlier qnn_plan_add failed)");
    return QNN_ERROR_PLAN_INCOMPLETE;
  }
  for (int32_t i = 0; i < plan->count; i++) {
    const struct qnn_op* op = plan->ops[i];
    op_kinds[op->type].run(op);
  }
  qnn_pool_rest();
  return QNN_OK;
}

/* Runs ops [first, first + count) of a complete plan: for per-op profiling (Model.profile). */
int32_t QNN_EXPORT(qnn_run_ops)(const struct qnn_plan* plan, int32_t first, int32_t count) {
  if (plan->count != plan->capacity) {
    qnn_set_error("run: the plan is missing ops (an earlier qnn_plan_add failed)");
    return QNN_ERROR_PLAN_INCOMPLETE;
  }
  if (first < 0 || count < 0 || first > plan->count || count > plan->count - first) {
    qnn_set_error("run_ops: op range outside the plan");
    return QNN_ERROR_INVALID_RECORD;
  }
  for (int32_t i = first; i < first + count; i++) {
    const struct qnn_op* op = plan->ops[i];
    op_kinds[op->type].run(op);
  }
  return QNN_OK;
}

void qnn_set_error2(const char* what, const char* problem) {
  char message[200];
  size_t n = 0;
  for (const char* s = what; *s != '\0' && n < 100; s++) message[n++] = *s;
  for (const char* s = problem; *s != '\0' && n + 1 < sizeof(message); s++) message[n++] = *s;
  message[n] = '\0';
  qnn_set_error(message);
}

int8_t* qnn_plan_tensor(const struct qnn_plan* plan, int32_t offset, int64_t bytes, const char* what) {
  if (offset < 0 || bytes < 0 || (int64_t) offset + bytes > (int64_t) plan->arena_bytes) {
    qnn_set_error2(what, ": tensor lies outside the activation arena");
    return NULL;
  }
  return plan->arena + offset;
}

const void* qnn_plan_constant(int32_t address, int64_t bytes, const char* what) {
  const int64_t memory_bytes = (int64_t) __builtin_wasm_memory_size(0) * 65536;
  if (address <= 0 || bytes < 0 || (int64_t) address + bytes > memory_bytes) {
    qnn_set_error2(what, ": constant data lies outside wasm memory");
    return NULL;
  }
  return (const void*) (uintptr_t) address;
}

void* qnn_plan_alloc(struct qnn_plan* plan, int64_t bytes) {
  if (bytes < 0 || bytes > (INT64_C(1) << 30)) {
    qnn_set_error("plan: an op needs more than 1 GiB for its packed weights or indirection buffer");
    return NULL;
  }
  void* p = qnn_alloc((size_t) bytes);
  if (p == NULL) qnn_set_error("plan: out of memory while packing weights");
  plan->packed_bytes += bytes;
  return p;
}

int qnn_check_positive(const int32_t* values, int count, const char* what) {
  for (int i = 0; i < count; i++) {
    if (values[i] <= 0 || values[i] > (1 << 24)) {
      qnn_set_error2(what, ": a dimension, kernel size, stride or dilation is not positive (or is absurdly large)");
      return 0;
    }
  }
  return 1;
}

int qnn_check_int8(int32_t value, const char* what) {
  if (value < -128 || value > 127) {
    qnn_set_error2(what, ": zero point or clamp bound outside int8");
    return 0;
  }
  return 1;
}
