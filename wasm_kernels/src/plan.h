/* The execution plan: an arena of activations and the list of ops that run over it. */
#ifndef QNN_PLAN_H
#define QNN_PLAN_H

#include <stddef.h>
#include <stdint.h>

struct qnn_op {
  int32_t type;
};

struct qnn_plan {
  int32_t capacity, count;
  int8_t* arena;
  size_t arena_bytes;
  size_t packed_bytes;
  struct qnn_op* ops[];
};

/* For operators' create functions: validated views of record fields. Each returns NULL (and sets
 * the error message, prefixed by `what`) when the bytes are not all inside the arena / memory. */
int8_t* qnn_plan_tensor(const struct qnn_plan* plan, int32_t offset, int64_t bytes, const char* what);
const void* qnn_plan_constant(int32_t address, int64_t bytes, const char* what);
/* Plan-lifetime memory for packed weights, indirection and op state (counted in packed_bytes). */
/* Sizes are int64 so that products of record fields cannot wrap in wasm32's 32-bit size_t; anything
 * over 1 GiB is refused (out of memory) before it is allocated. */
void* qnn_plan_alloc(struct qnn_plan* plan, int64_t bytes);

/* Sets the error message to what + problem. */
void qnn_set_error2(const char* what, const char* problem);

int qnn_check_positive(const int32_t* values, int count, const char* what);
int qnn_check_int8(int32_t value, const char* what);

#endif
