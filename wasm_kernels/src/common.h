/* Helpers shared by every kernel file. Freestanding C99: no libc, so the same sources build with
 * Emscripten (scalar, simd128) and with plain clang + wasm-ld (relaxed). */
#ifndef QNN_COMMON_H
#define QNN_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define QNN_EXPORT(name) __attribute__((export_name(#name))) name

/* Load-time code (an operator's create: checks, indirection, packing set-up), compiled for size: its
 * loops run once per model, and every module has a size budget (128 KiB, tests/kernels/test_module_size.py),
 * which unrolled and vectorized copies of them spent. */
#define QNN_PLAN_CODE __attribute__((minsize))

/* Before a scalar loop the compiler must keep scalar: a SIMD loop's tail (fewer elements than a vector:
 * a vectorized copy of it would never run, only take module budget), or float arithmetic whose order and
 * rounding are the reference's (no vectorized or unrolled reassociation either way). */
#define QNN_SCALAR_LOOP _Pragma("clang loop vectorize(disable) unroll(disable)")

/* Kernels may read up to this many bytes past the end of any activation buffer (never write). */
#define QNN_EXTRA_BYTES 16

static inline size_t qnn_min_size(size_t a, size_t b) { return a < b ? a : b; }
static inline size_t qnn_max_size(size_t a, size_t b) { return a > b ? a : b; }
static inline int32_t qnn_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t qnn_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static inline size_t qnn_round_up(size_t n, size_t q) { return (n + q - 1) / q * q; }
static inline size_t qnn_divide_round_up(size_t n, size_t q) { return (n + q - 1) / q; }

void* qnn_alloc(size_t size);

/* Per-thread scratch that every op of the module shares (a module holds one model): an op reserves
 * what one thread needs when it is created (0 when out of memory, with the error set), its tasks use
 * their thread's part, qnn_scratch(thread), when it runs. Not counted in the plan's packed bytes. */
int qnn_reserve_scratch(size_t bytes_per_thread);
void* qnn_scratch(uint32_t thread);
void qnn_set_error(const char* message);

/* Built with -mbulk-memory: these become memory.fill / memory.copy, no libc needed. */
#define qnn_memset __builtin_memset
#define qnn_memcpy __builtin_memcpy

/* Element i of an int32 (bytes 4) or int64 (bytes 8) tensor, read unaligned: a model's ids and masks. */
static inline int64_t qnn_load_integer(const char* values, size_t i, size_t bytes) {
  if (bytes == 8) {
    int64_t x;
    qnn_memcpy(&x, values + i * 8, 8);
    return x;
  }
  int32_t x;
  qnn_memcpy(&x, values + i * 4, 4);
  return x;
}

#endif
