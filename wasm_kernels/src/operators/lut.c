/* LUT: output[i] = table[(uint8) input[i]], the kernel of every unary int8 / uint8 op (LOGISTIC,
 * TANH, HARD_SWISH, RELU..., uint8 <-> int8 conversions): the frontend computes the 256 entries.
 * LUT_F32: the same with float32 entries, for a float op whose float result is a model output.
 * SIMD128: 16 i8x16.swizzle over the table's 16-byte chunks (a swizzle gives 0 for indices >= 16,
 * so after subtracting 16 * j only chunk j contributes). */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"
#include "threadpool.h"

#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

struct lut_op {
  struct qnn_op base;
  const uint8_t* input;
  uint8_t* output;
  size_t size;
  uint8_t table[256] __attribute__((aligned(16)));
};

QNN_PLAN_CODE int32_t qnn_create_lut(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_lut_record* r = record;
  if (r->size < 0) {
    qnn_set_error("lut: negative size");
    return QNN_ERROR_INVALID_RECORD;
  }
  const uint8_t* input = (const uint8_t*) qnn_plan_tensor(plan, r->input, r->size, "lut input");
  uint8_t* output = (uint8_t*) qnn_plan_tensor(plan, r->output, r->size, "lut output");
  const uint8_t* table = qnn_plan_constant(r->table, 256, "lut table");
  if (input == NULL || output == NULL || table == NULL) return QNN_ERROR_INVALID_RECORD;
  struct lut_op* op = qnn_plan_alloc(plan, sizeof(struct lut_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output;
  op->size = (size_t) r->size;
  qnn_memcpy(op->table, table, 256);
  *result = &op->base;
  return QNN_OK;
}

__attribute__((noinline)) void qnn_lut_bytes(const uint8_t* table, const uint8_t* x, uint8_t* y, size_t count) {
  size_t i = 0;
#if defined(__wasm_simd128__)
  v128_t t[16];
  for (int j = 0; j < 16; j++) t[j] = wasm_v128_load(table + 16 * j);
  const v128_t sixteen = wasm_i8x16_splat(16);
  for (; i + 16 <= count; i += 16) {
    v128_t index = wasm_v128_load(x + i);
    v128_t out = wasm_i8x16_swizzle(t[0], index);
    for (int j = 1; j < 16; j++) {
      index = wasm_i8x16_sub(index, sixteen);
      out = wasm_v128_or(out, wasm_i8x16_swizzle(t[j], index));
    }
    wasm_v128_store(y + i, out);
  }
#endif
  for (; i < count; i++) y[i] = table[x[i]];
}

/* Tasks are ranges of whole 64-element runs (the SIMD loop takes 16). */
static void lut_range(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct lut_op* op = context;
  qnn_lut_bytes(op->table, op->input + first, op->output + first, count);
}

void qnn_run_lut(const struct qnn_op* base) {
  const struct lut_op* op = (const struct lut_op*) base;
  qnn_parallelize_ranges(lut_range, op, op->size, 64, 4, 1, QNN_TASK_ELEMENTS);
}

struct lut_f32_op {
  struct qnn_op base;
  const uint8_t* input;
  float* output;
  size_t size;
  float table[256];
};

QNN_PLAN_CODE int32_t qnn_create_lut_f32(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_lut_f32_record* r = record;
  if (r->size < 0 || r->size > (INT32_MAX >> 2)) {
    qnn_set_error("lut_f32: negative or huge size");
    return QNN_ERROR_INVALID_RECORD;
  }
  const uint8_t* input = (const uint8_t*) qnn_plan_tensor(plan, r->input, r->size, "lut_f32 input");
  float* output = (float*) qnn_plan_tensor(plan, r->output, (int64_t) r->size * 4, "lut_f32 output");
  const uint8_t* table = qnn_plan_constant(r->table, 256 * 4, "lut_f32 table");
  if (input == NULL || output == NULL || table == NULL) return QNN_ERROR_INVALID_RECORD;
  struct lut_f32_op* op = qnn_plan_alloc(plan, sizeof(struct lut_f32_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->input = input;
  op->output = output;
  op->size = (size_t) r->size;
  qnn_memcpy(op->table, table, sizeof(op->table));
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_lut_f32(const struct qnn_op* base) {
  const struct lut_f32_op* op = (const struct lut_f32_op*) base;
  for (size_t i = 0; i < op->size; i++) op->output[i] = op->table[op->input[i]];
}

/* LUT_CHANNELS: one 256-entry table per channel (the innermost dimension): PRELU with a slope per
 * channel, and any other per-channel function of one int8 value. */
struct lut_channels_op {
  struct qnn_op base;
  const uint8_t* input;
  uint8_t* output;
  size_t pixels, channels, output_bytes;
  const uint8_t* tables;     /* [channels][256] output elements, copied into the plan */
};

QNN_PLAN_CODE int32_t qnn_create_lut_channels(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_lut_channels_record* r = record;
  if (!qnn_check_positive(&r->pixels, 2, "lut_channels")) return QNN_ERROR_INVALID_RECORD;
  if (r->output_bytes != 1 && r->output_bytes != 4) {
    qnn_set_error("lut_channels: output_bytes must be 1 or 4");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t table_bytes = (int64_t) r->channels * 256 * r->output_bytes;
  const int64_t size = (int64_t) r->pixels * r->channels;
  if (size > INT32_MAX || r->channels > (1 << 20)) {
    qnn_set_error("lut_channels: more than 2^31 elements or 2^20 channels");
    return QNN_ERROR_INVALID_RECORD;
  }
  const uint8_t* input = (const uint8_t*) qnn_plan_tensor(plan, r->input, size, "lut_channels input");
  uint8_t* output = (uint8_t*) qnn_plan_tensor(plan, r->output, size * r->output_bytes, "lut_channels output");
  const uint8_t* tables = qnn_plan_constant(r->tables, table_bytes, "lut_channels tables");
  if (input == NULL || output == NULL || tables == NULL) return QNN_ERROR_INVALID_RECORD;
  struct lut_channels_op* op = qnn_plan_alloc(plan, sizeof(struct lut_channels_op));
  uint8_t* copy = op != NULL ? qnn_plan_alloc(plan, table_bytes) : NULL;
  if (copy == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  qnn_memcpy(copy, tables, (size_t) table_bytes);
  op->input = input;
  op->output = output;
  op->pixels = (size_t) r->pixels;
  op->channels = (size_t) r->channels;
  op->output_bytes = (size_t) r->output_bytes;
  op->tables = copy;
  *result = &op->base;
  return QNN_OK;
}

static void lut_channels_range(const void* context, size_t first, size_t count, uint32_t thread) {
  (void) thread;
  const struct lut_channels_op* op = context;
  const size_t channels = op->channels;
  if (op->output_bytes == 4) {
    const float* tables = (const float*) op->tables;
    for (size_t p = first; p < first + count; p++) {
      const uint8_t* x = op->input + p * channels;
      float* y = (float*) op->output + p * channels;
      for (size_t c = 0; c < channels; c++) y[c] = tables[c * 256 + x[c]];
    }
    return;
  }
  for (size_t p = first; p < first + count; p++) {
    const uint8_t* x = op->input + p * channels;
    uint8_t* y = op->output + p * channels;
    for (size_t c = 0; c < channels; c++) y[c] = op->tables[c * 256 + x[c]];
  }
}

void qnn_run_lut_channels(const struct qnn_op* base) {
  const struct lut_channels_op* op = (const struct lut_channels_op*) base;
  qnn_parallelize_ranges(lut_channels_range, op, op->pixels, 1, 4, op->channels, QNN_TASK_ELEMENTS);
}
