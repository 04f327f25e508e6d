/// \file The runtime thread pool behind kParallel loops: every index once, nesting, concurrent
/// callers and a child forked after loops ran, on the pool and then on libgomp's team
/// (UseOpenMpForParallelLoops).
#include "runtime/thread_pool.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace cinn_like::runtime {
namespace {

// Set once the OpenMP test hands the loops to libgomp (the fork test runs before it).
int openmp_loaded_ = 0;

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(int n) : hits(n) {}
};

void CountIndex(int32_t i, void* closure) { static_cast<Counts*>(closure)->hits[i]++; }

TEST(ThreadPool, EveryIndexExactlyOnce) {
  EXPECT_GE(cinn_like_num_threads(), 1);
  for (int n : {0, 1, 2, 3, 7, 64, 1001, 100000}) {
    Counts counts(n);
    ASSERT_EQ(cinn_like_parallel_for(n, CountIndex, &counts), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(counts.hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

struct Nested {
  Counts* counts;
  int inner;
};

void Outer(int32_t i, void* closure) {
  auto* nested = static_cast<Nested*>(closure);
  struct Row {
    Counts* counts;
    int base;
  } row{nested->counts, i * nested->inner};
  cinn_like_parallel_for(
      nested->inner,
      [](int32_t j, void* c) {
        auto* r = static_cast<Row*>(c);
        r->counts->hits[r->base + j]++;
      },
      &row);
}

TEST(ThreadPool, NestedLoopsRunWithoutDeadlock) {
  Counts counts(33 * 17);
  Nested nested{&counts, 17};
  ASSERT_EQ(cinn_like_parallel_for(33, Outer, &nested), 0);
  for (auto& h : counts.hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPool, ConcurrentCallers) {
  std::vector<std::thread> callers;
  std::vector<std::unique_ptr<Counts>> all;
  for (int t = 0; t < 4; ++t) all.push_back(std::make_unique<Counts>(5000));
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) cinn_like_parallel_for(5000, CountIndex, all[t].get());
    });
  }
  for (auto& c : callers) c.join();
  for (auto& counts : all) {
    for (auto& h : counts->hits) ASSERT_EQ(h.load(), 20);
  }
}

/// Runs a loop on the pool in a child forked after the parent's pool ran loops; the child's
/// exit status (0: every index once), or -1 when it has not exited within `timeout_ms`.
int ForkAndRunInChild(int timeout_ms) {
  const pid_t child = fork();
  if (child == 0) {
    Counts counts(1000);
    cinn_like_parallel_for(1000, CountIndex, &counts);
    for (auto& h : counts.hits) {
      if (h.load() != 1) _exit(2);
    }
    _exit(0);
  }
  if (child < 0) return -2;
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return -1;
}

// A DataLoader worker forks the process after kernels ran, then runs kernels itself.
TEST(ThreadPool, AChildForkedAfterLoopsRunsLoops) {
  ASSERT_LT(openmp_loaded_, 1) << "runs before the OpenMP test";
  Counts counts(5000);
  ASSERT_EQ(cinn_like_parallel_for(5000, CountIndex, &counts), 0);
  EXPECT_EQ(ForkAndRunInChild(20000), 0);
  // Forked while another thread runs loops: the fork waits for the loop, the child runs its own.
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    Counts c(5000);
    while (!stop) cinn_like_parallel_for(5000, CountIndex, &c);
  });
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ForkAndRunInChild(20000), 0) << i;
  stop = true;
  busy.join();
  // The parent's pool still runs loops.
  Counts after(5000);
  ASSERT_EQ(cinn_like_parallel_for(5000, CountIndex, &after), 0);
  for (auto& h : after.hits) ASSERT_EQ(h.load(), 1);
}

struct InRegion {
  int (*in_parallel)();
  std::atomic<int> outside{0};
};

// Last in this file: from here on, this process's parallel loops run on libgomp's team.
TEST(ThreadPoolOnOpenMp, LoopsRunOnTheTeamEveryIndexOnce) {
  void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!gomp) {
    // The test command installs oneDNN, which needs libgomp: there its absence fails.
    const char* required = std::getenv("CINN_LIKE_REQUIRE_ONEDNN");
    if (required && std::string(required) == "1") FAIL() << "libgomp.so.1: " << dlerror();
    GTEST_SKIP() << "libgomp.so.1 cannot be loaded: " << dlerror();
  }
  OpenMpRuntime omp{
      reinterpret_cast<decltype(omp.parallel)>(dlsym(gomp, "GOMP_parallel")),
      reinterpret_cast<decltype(omp.thread_num)>(dlsym(gomp, "omp_get_thread_num")),
      reinterpret_cast<decltype(omp.num_threads)>(dlsym(gomp, "omp_get_num_threads"))};
  ASSERT_TRUE(omp.parallel && omp.thread_num && omp.num_threads);
  UseOpenMpForParallelLoops(omp);
  openmp_loaded_ = 1;
  InRegion region{reinterpret_cast<int (*)()>(dlsym(gomp, "omp_in_parallel"))};
  ASSERT_NE(region.in_parallel, nullptr);
  cinn_like_parallel_for(
      64,
      [](int32_t, void* c) {
        auto* r = static_cast<InRegion*>(c);
        if (!r->in_parallel()) r->outside++;
      },
      &region);
  if (cinn_like_num_threads() >= 2) EXPECT_EQ(region.outside.load(), 0);
  for (int n : {2, 3, 1001, 100000}) {
    Counts counts(n);
    ASSERT_EQ(cinn_like_parallel_for(n, CountIndex, &counts), 0);
    for (int i = 0; i < n; ++i) ASSERT_EQ(counts.hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
  Counts nested_counts(33 * 17);
  Nested nested{&nested_counts, 17};
  ASSERT_EQ(cinn_like_parallel_for(33, Outer, &nested), 0);
  for (auto& h : nested_counts.hits) ASSERT_EQ(h.load(), 1);
  std::vector<std::thread> callers;
  std::vector<std::unique_ptr<Counts>> all;
  for (int t = 0; t < 4; ++t) all.push_back(std::make_unique<Counts>(5000));
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) cinn_like_parallel_for(5000, CountIndex, all[t].get());
    });
  }
  for (auto& c : callers) c.join();
  for (auto& counts : all) {
    for (auto& h : counts->hits) ASSERT_EQ(h.load(), 20);
  }
  // A child forked after loops ran on the team runs its loops too (on a pool of its own).
  EXPECT_EQ(ForkAndRunInChild(20000), 0);
}

}  // namespace
}  // namespace cinn_like::runtime
