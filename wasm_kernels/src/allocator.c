/* A bump allocator over wasm linear memory. A module holds one model: everything allocated lives
 * as long as the instance, so nothing is ever freed. */
#include "common.h"
#include "threadpool.h"

extern unsigned char __heap_base;

static uintptr_t heap_top;

void* QNN_EXPORT(qnn_alloc)(size_t size) {
  if (heap_top == 0) heap_top = qnn_round_up((uintptr_t) &__heap_base, 16);
  const uintptr_t start = heap_top;
  const uintptr_t end = qnn_round_up(start + size, 16);
  if (end < start) return NULL;
  const uintptr_t available = __builtin_wasm_memory_size(0) * 65536u;
  if (end > available) {
    const size_t pages = qnn_divide_round_up(end - available, 65536);
    if (__builtin_wasm_memory_grow(0, pages) == (size_t) -1) return NULL;
  }
  heap_top = end;
  /* Pages memory.grow adds are zero; only what lay below the old end of memory may hold an earlier
   * allocation's bytes. Leaving fresh pages untouched keeps an arena nothing has run in yet (a plan
   * the kernels go on to refuse, a model loaded but not run) out of resident memory. */
  qnn_memset((void*) start, 0, (end < available ? end : available) - start);
  return (void*) start;
}

#if defined(__wasm_atomics__)
  #define SCRATCH_THREADS QNN_MAX_THREADS
#else
  #define SCRATCH_THREADS 1
#endif

static char* scratch;
static size_t scratch_per_thread;

int qnn_reserve_scratch(size_t bytes_per_thread) {
  if (bytes_per_thread <= scratch_per_thread) return 1;
  /* A larger reservation replaces the buffer (nothing is freed): powers of two keep what is left
   * behind below the final size. */
  size_t bytes = 4096;
  while (bytes < bytes_per_thread) bytes *= 2;
  char* p = qnn_alloc(bytes * SCRATCH_THREADS);
  if (p == NULL) {
    qnn_set_error("out of memory for the per-thread scratch");
    return 0;
  }
  scratch = p;
  scratch_per_thread = bytes;
  return 1;
}

void* qnn_scratch(uint32_t thread) { return scratch + thread * scratch_per_thread; }

static char error_message[256];

void qnn_set_error(const char* message) {
  size_t i = 0;
  for (; message[i] != '\0' && i + 1 < sizeof(error_message); i++) error_message[i] = message[i];
  error_message[i] = '\0';
}

const char* QNN_EXPORT(qnn_error_message)(void) { return error_message; }
