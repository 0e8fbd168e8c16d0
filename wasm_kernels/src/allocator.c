/* A bump allocator over wasm linear memory. A module holds one model: everything allocated lives
 * as long as the instance, so nothing is ever freed. */
#include "common.h"

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
  /* Fresh pages are zero, but the end of an earlier allocation's page may not be. */
  qnn_memset((void*) start, 0, end - start);
  return (void*) start;
}

static char error_message[256];

void qnn_set_error(const char* message) {
  size_t i = 0;
  for (; message[i] != '\0' && i + 1 < sizeof(error_message); i++) error_message[i] = message[i];
  error_message[i] = '\0';
}

const char* QNN_EXPORT(qnn_error_message)(void) { return error_message; }
