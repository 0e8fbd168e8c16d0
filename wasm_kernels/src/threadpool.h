/* Work splitting across the threads of a threaded module (pthreadpool's role in XNNPACK).
 *
 * Operators split their run into `count` independent tasks and call qnn_parallelize; each task is
 * run once, by some thread, and gets that thread's id (0 = the caller of qnn_run) for per-thread
 * scratch. Tasks must write disjoint outputs, so results do not depend on who ran what: every thread
 * count gives the same bytes. In a single-threaded build (no -matomics) it is a plain loop. */
#ifndef QNN_THREADPOOL_H
#define QNN_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

/* Per-thread scratch is sized for this many threads (thread ids 0 .. QNN_MAX_THREADS - 1). */
#define QNN_MAX_THREADS 16

typedef void (*qnn_task_fn)(const void* context, size_t task, uint32_t thread);

void qnn_parallelize(qnn_task_fn task, const void* context, size_t count);

/* Items [first, first + count) of an op's work, run by `thread`. */
typedef void (*qnn_range_fn)(const void* context, size_t first, size_t count, uint32_t thread);

/* Runs `fn` over items [0, total) in ranges of whole `granule`s (the last one ends at total), sized as
 * qnn_items_per_task says for these arguments and cut as an even split (qnn_split_count,
 * qnn_split_start); pthreadpool's parallelize_1d_tile_1d with tiles of equal work. */
void qnn_parallelize_ranges(qnn_range_fn fn, const void* context, size_t total, size_t granule, size_t tasks_per_thread,
                            uint64_t item_work, uint64_t task_work);

/* How many tasks to cut `units` units into when each should hold about `per_task` of them: made a
 * multiple of the thread count (at most `units`). The threads' slices are runs of consecutive tasks
 * (threadpool.c), so with tasks of equal work every thread's slice holds the same work. With tasks of
 * per_task units and the last one shorter, a 28x28 layer's 196 pixel tiles made 15 tasks of 13 and one
 * of 1: slices of 104 and 92 tiles on 2 threads, evened out only by stealing whole tasks (and their
 * inputs from the other core's cache); the 14x14 layers alike. */
size_t qnn_split_count(size_t units, size_t per_task);

/* The first unit of task `task` of `units` units cut into `count` tasks whose sizes differ by at most one. */
static inline size_t qnn_split_start(size_t task, size_t count, size_t units) {
  return (size_t) ((uint64_t) task * units / count);
}

/* The end of an inference: the workers go to sleep now instead of spinning for the next job. */
void qnn_pool_rest(void);

/* How many threads the host said it runs (qnn_set_threads): operators size their tasks by it. */
uint32_t qnn_thread_count(void);

/* Items per task for `total` items of `item_work` units of work each: about `tasks_per_thread` tasks
 * per thread, but none under `task_work` units (QNN_TASK_*), in whole multiples of `granule` items;
 * all of them (one task) on one thread. At least 1. */
size_t qnn_items_per_task(size_t total, size_t granule, size_t tasks_per_thread, uint64_t item_work, uint64_t task_work);

/* Work per task below which splitting an op costs more than it saves: each task is a claim and a
 * completion count, cache lines handed between cores (~0.2 us), and a small op split 16 ways ran
 * slower on 2 threads than on 1 (BlazeFace's small ops: docs/performance-log.md, "Figures moved
 * out of code comments"). */
#define QNN_TASK_MACS 131072      /* convolutions: ~1.5-3 us at 50-100 GMAC/s */
#define QNN_TASK_DW_MACS 32768    /* depthwise: ~1.5 us at ~20 GMAC/s */
#define QNN_TASK_ELEMENTS 4096    /* element-wise passes (quantize, tables, add, copies, pooling taps): ~1-3 us */

/* Set by qnn_split_finely (tests): no minimum work per task, so that small cases split too. */
extern uint32_t qnn_fine_split;

/* At most this many tasks for `work` units when each should hold at least `task_work`; at least 1
 * (SIZE_MAX when split finely). */
static inline size_t qnn_max_tasks(uint64_t work, uint64_t task_work) {
  if (qnn_fine_split) return SIZE_MAX;
  const uint64_t tasks = work / task_work;
  return tasks > 1 ? (size_t) (tasks < (uint64_t) SIZE_MAX ? tasks : SIZE_MAX) : 1;
}

#endif
