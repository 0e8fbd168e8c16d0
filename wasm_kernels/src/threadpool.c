/* The thread pool of the threaded modules: one instance per thread, all on one shared memory.
 *
 * Thread 0 is whoever calls qnn_run (a page's main thread may be one: it never waits with
 * memory.atomic.wait, it spins). Threads 1 .. n-1 are the host's workers, each parked in qnn_worker.
 *
 * A job is published in one of two slots (fn, context, count, threads, id) and then announced by
 * the announce word, (job id << 32) | job id. Its tasks are cut into one contiguous slice per
 * thread, as pthreadpool does: thread t claims the tasks of slice t first, then those left in the
 * other slices (stealing). Each slice has its own word, (job id << 32) | next task, and a task is
 * claimed by a compare-exchange of (id, i) -> (id, i + 1), so a claim only succeeds on the job the
 * claimer read; the words are set for a job before it is announced. Slot (id & 1) is rewritten for
 * job id + 2 only after job id + 1 was announced, so a successful claim saw that slot as published.
 * The caller runs tasks too and spins until `done` reaches the count. Workers that never started (a
 * browser starts them asynchronously) or are slow to wake only mean fewer hands: their slices are
 * stolen, no job waits for a particular thread.
 *
 * Why slices: consecutive ops split the same pixels alike, so a thread's tasks read what it wrote
 * in the op before. With tasks going to whoever claimed next, each op's input came across from the
 * other core's cache: MobileNetV2's depthwise convolutions gained far less from a second thread
 * than the same op repeated alone, and slices recovered it (docs/performance-log.md, "Figures
 * moved out of code comments").
 *
 * Workers spin for a while after each job (an inference is ~60 jobs in a row), then sleep on the
 * announce word (its low half changes with every job); the caller notifies only when some sleep.
 * At the end of an inference (qnn_pool_rest) they stop spinning and sleep at once: a worker spinning
 * on past the last op held a core the page's other work wanted (LiteRT.js, run next in the bench's
 * rounds, slowed down: docs/performance-log.md, "Figures moved out of code comments").
 *
 * Known limit (README Performance, "Threads: 1 -> 2 threads on this machine"; measurements in
 * docs/performance-log.md): this VM's guest kernel (sched_vcpu_pack) places a thread woken by a notify
 * after >= ~10 ms of sleep on the waker's vCPU, so inferences 10 ms or more apart often run with the
 * worker sharing the caller's CPU. Workers
 * woken by their own timers (timed waits, no notify) avoid it, but several pools polling at once (the
 * bench's pages) slowed every 2-thread run more than that saved; not done. */
#include "threadpool.h"

#include "common.h"

uint32_t qnn_fine_split = 0;

/* Tests: every op split as finely as its item counts allow, whatever its work (task_work), so
 * that the kernel tests' small cases run their tasks on several threads. */
void QNN_EXPORT(qnn_split_finely)(int32_t on) { qnn_fine_split = on != 0; }

size_t qnn_items_per_task(size_t total, size_t granule, size_t tasks_per_thread, uint64_t item_work, uint64_t task_work) {
  const size_t threads = qnn_thread_count();
  if (threads <= 1 || total <= 1) return total > 0 ? total : 1;
  size_t items = qnn_divide_round_up(total, tasks_per_thread * threads);
  if (!qnn_fine_split && item_work > 0) {
    const uint64_t least = (task_work + item_work - 1) / item_work;
    if (least >= total) return total;
    items = qnn_max_size(items, (size_t) least);
  }
  return qnn_min_size(qnn_round_up(items, granule), total);
}

size_t qnn_split_count(size_t units, size_t per_task) {
  const size_t threads = qnn_thread_count();
  const size_t count = qnn_divide_round_up(units, per_task > 0 ? per_task : 1);
  return threads > 1 && count > 1 ? qnn_min_size(qnn_round_up(count, threads), units) : count;
}

struct ranges {
  qnn_range_fn fn;
  const void* context;
  size_t total, granule, units, count;
};

static size_t range_start(const struct ranges* r, size_t task) {
  return qnn_min_size(qnn_split_start(task, r->count, r->units) * r->granule, r->total);
}

static void range_task(const void* context, size_t task, uint32_t thread) {
  const struct ranges* r = context;
  const size_t first = range_start(r, task);
  r->fn(r->context, first, range_start(r, task + 1) - first, thread);
}

void qnn_parallelize_ranges(qnn_range_fn fn, const void* context, size_t total, size_t granule, size_t tasks_per_thread,
                            uint64_t item_work, uint64_t task_work) {
  if (total == 0) return;
  const size_t per_task = qnn_items_per_task(total, granule, tasks_per_thread, item_work, task_work);
  const size_t units = qnn_divide_round_up(total, granule);
  const struct ranges r = {fn, context, total, granule, units, qnn_split_count(units, qnn_divide_round_up(per_task, granule))};
  qnn_parallelize(range_task, &r, r.count);
}

#if defined(__wasm_atomics__)

struct job {
  qnn_task_fn fn;
  const void* context;
  uint32_t count;
  uint32_t threads;  /* slices */
  uint32_t id;
};

#define LINE __attribute__((aligned(64)))  /* each shared word on its own cache line */

static struct {
  LINE uint64_t announce;
  LINE uint32_t done;
  LINE uint32_t sleepers;
  LINE uint32_t stop;
  LINE uint32_t resting;  /* set by qnn_pool_rest, cleared by the next job: workers sleep, not spin */
  LINE struct job slots[2];
  uint32_t threads;
} pool = {.threads = 1};

/* Slice t of the current job: (job id << 32) | its next task. */
static struct {
  LINE uint64_t word;
} slices[QNN_MAX_THREADS];

static inline uint32_t slice_start(uint32_t t, uint32_t count, uint32_t n) {
  return (uint32_t) ((uint64_t) t * count / n);
}

/* ~0.5-1 ms of polling (one atomic load per iteration: ~1-3 cycles in optimized code) before a worker
 * sleeps: longer than the single-threaded ops between two jobs of an inference and than a host's
 * call between ops (Model.profile); 10x fewer made Model.profile's ops wait for sleeping workers.
 * Likely much longer in V8, where qnn_worker, entered once, may never leave its baseline code: hence
 * qnn_pool_rest at the end of an inference. */
#define SPIN_ITERATIONS 1000000

/* Claims the next task of slice t if job `id` is still there and the slice has one left. */
static int claim_from(uint32_t t, uint32_t id, uint32_t end, uint32_t* task) {
  uint64_t word = __atomic_load_n(&slices[t].word, __ATOMIC_ACQUIRE);
  while ((uint32_t) (word >> 32) == id && (uint32_t) word < end) {
    if (__atomic_compare_exchange_n(&slices[t].word, &word, word + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      *task = (uint32_t) word;
      return 1;
    }
  }
  return 0;
}

/* Runs tasks of the announced job, its own slice first, until none is left to claim; returns the
 * announce word it read. A worker waits for the announce word to change from that one: reading it
 * again after the work, it could read the next job's, announced meanwhile, and wait through that whole
 * job while the caller ran it alone. */
static uint64_t work(uint32_t thread) {
  const uint64_t announce = __atomic_load_n(&pool.announce, __ATOMIC_ACQUIRE);
  const uint32_t id = (uint32_t) (announce >> 32);
  const struct job* job = &pool.slots[id & 1];
  if (__atomic_load_n(&job->id, __ATOMIC_ACQUIRE) != id) return announce;
  const qnn_task_fn fn = __atomic_load_n(&job->fn, __ATOMIC_RELAXED);
  const void* context = __atomic_load_n(&job->context, __ATOMIC_RELAXED);
  const uint32_t count = __atomic_load_n(&job->count, __ATOMIC_RELAXED);
  const uint32_t n = __atomic_load_n(&job->threads, __ATOMIC_RELAXED);
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t t = (thread + k) % n, end = slice_start(t + 1, count, n);
    uint32_t task;
    while (claim_from(t, id, end, &task)) {
      fn(context, task, thread);
      __atomic_fetch_add(&pool.done, 1, __ATOMIC_RELEASE);
    }
  }
  return announce;
}

void qnn_parallelize(qnn_task_fn fn, const void* context, size_t count) {
  if (pool.threads <= 1 || count <= 1) {
    for (size_t i = 0; i < count; i++) fn(context, i, 0);
    return;
  }
  /* Only thread 0 publishes, after the previous job completed: no claim on it can succeed any more,
   * and the slot written now is the one of two jobs ago. */
  const uint32_t id = (uint32_t) (__atomic_load_n(&pool.announce, __ATOMIC_RELAXED) >> 32) + 1;
  const uint32_t n = pool.threads;
  struct job* slot = &pool.slots[id & 1];
  __atomic_store_n(&slot->id, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->fn, fn, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->context, context, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->count, (uint32_t) count, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->threads, n, __ATOMIC_RELAXED);
  for (uint32_t t = 0; t < n; t++) {
    __atomic_store_n(&slices[t].word, ((uint64_t) id << 32) | slice_start(t, (uint32_t) count, n), __ATOMIC_RELEASE);
  }
  __atomic_store_n(&slot->id, id, __ATOMIC_RELEASE);
  __atomic_store_n(&pool.done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&pool.resting, 0, __ATOMIC_RELAXED);  /* published by the announce below */
  __atomic_store_n(&pool.announce, ((uint64_t) id << 32) | id, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&pool.sleepers, __ATOMIC_SEQ_CST) != 0) {
    __builtin_wasm_memory_atomic_notify((int32_t*) &pool.announce, (uint32_t) -1);
  }
  work(0);
  while (__atomic_load_n(&pool.done, __ATOMIC_ACQUIRE) != (uint32_t) count) {
  }
}

uint32_t qnn_thread_count(void) { return pool.threads; }

void qnn_pool_rest(void) { __atomic_store_n(&pool.resting, 1, __ATOMIC_RELEASE); }

int32_t QNN_EXPORT(qnn_set_threads)(int32_t threads) {
  if (threads < 1 || threads > QNN_MAX_THREADS) {
    qnn_set_error("threads: the thread count must be in [1, 16]");
    return 1;
  }
  pool.threads = (uint32_t) threads;
  return 0;
}

int32_t QNN_EXPORT(qnn_max_threads)(void) { return QNN_MAX_THREADS; }

/* A worker's whole life: runs the tasks it can claim until qnn_stop_workers. Never called on a
 * browser's main thread (it sleeps with memory.atomic.wait32). */
void QNN_EXPORT(qnn_worker)(int32_t thread) {
  for (;;) {
    const uint64_t seen = work((uint32_t) thread);
    for (uint32_t spin = 0; spin < SPIN_ITERATIONS && __atomic_load_n(&pool.announce, __ATOMIC_ACQUIRE) == seen &&
                            !__atomic_load_n(&pool.resting, __ATOMIC_ACQUIRE); spin++) {
    }
    if (__atomic_load_n(&pool.stop, __ATOMIC_ACQUIRE)) return;
    if (__atomic_load_n(&pool.announce, __ATOMIC_ACQUIRE) == seen) {
      /* Sleep on the announce word's low half: the job id, new with every job, and 0xffffffff at
       * qnn_stop_workers, so a change between the check and the wait makes the wait return at once. */
      __atomic_fetch_add(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
      __builtin_wasm_memory_atomic_wait32((int32_t*) &pool.announce, (int32_t) (uint32_t) seen, -1);
      __atomic_fetch_sub(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
    }
    if (__atomic_load_n(&pool.stop, __ATOMIC_ACQUIRE)) return;
  }
}

/* Ends every qnn_worker (they return to their hosts); from then on thread 0 runs alone. Called by
 * thread 0 between runs. */
void QNN_EXPORT(qnn_stop_workers)(void) {
  pool.threads = 1;
  __atomic_store_n(&pool.stop, 1, __ATOMIC_SEQ_CST);
  const uint32_t id = (uint32_t) (__atomic_load_n(&pool.announce, __ATOMIC_RELAXED) >> 32) + 1;
  __atomic_store_n(&pool.announce, ((uint64_t) id << 32) | 0xffffffffu, __ATOMIC_SEQ_CST);
  __builtin_wasm_memory_atomic_notify((int32_t*) &pool.announce, (uint32_t) -1);
}

int32_t QNN_EXPORT(qnn_threaded)(void) { return 1; }

#else  /* single-threaded module: the same exports, one thread */

void qnn_parallelize(qnn_task_fn fn, const void* context, size_t count) {
  for (size_t i = 0; i < count; i++) fn(context, i, 0);
}

uint32_t qnn_thread_count(void) { return 1; }

void qnn_pool_rest(void) {}

int32_t QNN_EXPORT(qnn_set_threads)(int32_t threads) {
  if (threads != 1) {
    qnn_set_error("threads: this module is single-threaded (load the -threads build for more threads)");
    return 1;
  }
  return 0;
}

int32_t QNN_EXPORT(qnn_max_threads)(void) { return 1; }

void QNN_EXPORT(qnn_worker)(int32_t thread) { (void) thread; }

void QNN_EXPORT(qnn_stop_workers)(void) {}

int32_t QNN_EXPORT(qnn_threaded)(void) { return 0; }

#endif
