/// \file A small persistent std::thread pool with chunked static scheduling (made again in a
/// child after fork()), and the same loops on a loaded OpenMP runtime's team instead
/// (UseOpenMpForParallelLoops).
#include "runtime/thread_pool.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace {

// True on pool workers and on a caller while it runs its own chunk: nested loops run serially.
thread_local bool in_parallel_region = false;

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
    for (int w = 1; w < num_threads_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
  }
  // Never destroyed (see Get): workers stay blocked on the condition variable at exit.

  /// The process's pool, made at the first call and again in a child process after fork():
  /// the child has none of the parent's workers, so the parent's pool would wait for them
  /// forever (a DataLoader worker that runs a kernel).
  static ThreadPool& Get() {
    if (ThreadPool* pool = current_.load(std::memory_order_acquire)) return *pool;
    std::lock_guard<std::mutex> lock(create_mutex_);
    ThreadPool* pool = current_.load(std::memory_order_relaxed);
    if (!pool) {
      static std::once_flag registered;
      std::call_once(registered,
                     [] { pthread_atfork(BeforeFork, AfterForkParent, AfterForkChild); });
      pool = new ThreadPool(static_cast<int>(std::thread::hardware_concurrency()));
      current_.store(pool, std::memory_order_release);
    }
    return *pool;
  }

  int num_threads() const { return num_threads_; }

  void Run(int32_t extent, void (*fn)(int32_t, void*), void* closure) {
    std::lock_guard<std::mutex> one_job(job_mutex_);  // one parallel loop at a time
    int chunks = static_cast<int>(std::min<int64_t>(num_threads_, extent));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = fn;
      closure_ = closure;
      extent_ = extent;
      chunks_ = chunks;
      pending_ = chunks - 1;
      ++generation_;
    }
    wake_.notify_all();
    in_parallel_region = true;
    RunChunk(0);
    in_parallel_region = false;
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void RunChunk(int chunk) {
    int64_t begin = static_cast<int64_t>(extent_) * chunk / chunks_;
    int64_t end = static_cast<int64_t>(extent_) * (chunk + 1) / chunks_;
    for (int64_t i = begin; i < end; ++i) fn_(static_cast<int32_t>(i), closure_);
  }

  void WorkerLoop(int worker) {
    in_parallel_region = true;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (worker >= chunks_) continue;
      }
      RunChunk(worker);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  /// fork() while no loop runs and with the pool's locks held, so that the child's copies of
  /// them are in a known state.
  static void BeforeFork() {
    create_mutex_.lock();
    if (ThreadPool* pool = current_.load(std::memory_order_relaxed)) {
      pool->job_mutex_.lock();
      pool->mutex_.lock();
    }
  }
  static void AfterForkParent() {
    if (ThreadPool* pool = current_.load(std::memory_order_relaxed)) {
      pool->mutex_.unlock();
      pool->job_mutex_.unlock();
    }
    create_mutex_.unlock();
  }
  static void AfterForkChild();

  static std::mutex create_mutex_;
  static std::atomic<ThreadPool*> current_;

  const int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex job_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;
  void (*fn_)(int32_t, void*) = nullptr;
  void* closure_ = nullptr;
  int32_t extent_ = 0;
  int chunks_ = 1;
  int pending_ = 0;
};

std::mutex ThreadPool::create_mutex_;
std::atomic<ThreadPool*> ThreadPool::current_{nullptr};

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CINN_LIKE_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CINN_LIKE_UNDER_TSAN 1
#endif

std::atomic<const cinn_like::runtime::OpenMpRuntime*> openmp{nullptr};

struct OpenMpLoop {
  const cinn_like::runtime::OpenMpRuntime* omp;
  int32_t extent;
  void (*fn)(int32_t, void*);
  void* closure;
};

/// One team member's chunk of the loop, the same static split as the pool's.
void RunOpenMpChunk(void* data) {
  const auto& loop = *static_cast<const OpenMpLoop*>(data);
  const int64_t team = std::max(1, loop.omp->num_threads()), member = loop.omp->thread_num();
  const int64_t begin = loop.extent * member / team, end = loop.extent * (member + 1) / team;
  const bool was_in_region = in_parallel_region;
  in_parallel_region = true;
  for (int64_t i = begin; i < end; ++i) loop.fn(static_cast<int32_t>(i), loop.closure);
  in_parallel_region = was_in_region;
}

/// The child's copy of the pool has no threads: it is left (leaked; its std::thread objects
/// must not be destroyed) and the next loop makes a new pool. Nor has it the threads of an
/// OpenMP team the parent's loops ran on (libgomp's team waits for them): the child's loops run
/// on its own pool.
void ThreadPool::AfterForkChild() {
  current_.store(nullptr, std::memory_order_relaxed);
  openmp.store(nullptr, std::memory_order_relaxed);
  create_mutex_.unlock();
}

}  // namespace

namespace cinn_like::runtime {

void AdoptGlobalOpenMp() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpenMpRuntime omp{
        reinterpret_cast<decltype(omp.parallel)>(dlsym(RTLD_DEFAULT, "GOMP_parallel")),
        reinterpret_cast<decltype(omp.thread_num)>(dlsym(RTLD_DEFAULT, "omp_get_thread_num")),
        reinterpret_cast<decltype(omp.num_threads)>(dlsym(RTLD_DEFAULT, "omp_get_num_threads"))};
    UseOpenMpForParallelLoops(omp);
  });
}

void UseOpenMpForParallelLoops(const OpenMpRuntime& omp) {
#ifndef CINN_LIKE_UNDER_TSAN
  if (!omp.parallel || !omp.thread_num || !omp.num_threads) return;
  const OpenMpRuntime* expected = nullptr;
  auto* kept = new OpenMpRuntime(omp);  // kept for the process, as the library it points into
  if (!openmp.compare_exchange_strong(expected, kept)) delete kept;
#else
  (void)omp;
#endif
}

}  // namespace cinn_like::runtime

extern "C" {

int cinn_like_parallel_for(int32_t extent, void (*fn)(int32_t, void*), void* closure) {
  if (extent <= 0) return 0;
  if (extent < 2 || in_parallel_region || ThreadPool::Get().num_threads() < 2) {
    for (int32_t i = 0; i < extent; ++i) fn(i, closure);
    return 0;
  }
  cinn_like::runtime::AdoptGlobalOpenMp();
  if (const auto* omp = openmp.load(std::memory_order_acquire)) {
    OpenMpLoop loop{omp, extent, fn, closure};
    const auto threads = static_cast<unsigned>(std::min(ThreadPool::Get().num_threads(), extent));
    omp->parallel(RunOpenMpChunk, &loop, threads, 0);
    return 0;
  }
  ThreadPool::Get().Run(extent, fn, closure);
  return 0;
}

int32_t cinn_like_num_threads(void) { return ThreadPool::Get().num_threads(); }

int32_t cinn_like_parallel_on_openmp(void) {
  cinn_like::runtime::AdoptGlobalOpenMp();
  return openmp.load(std::memory_order_acquire) != nullptr;
}

}  // extern "C"
