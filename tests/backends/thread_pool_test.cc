/// \file The runtime thread pool behind kParallel loops: every index once, nesting, and
/// concurrent callers, on the pool and then on libgomp's team (UseOpenMpForParallelLoops).
#include "runtime/thread_pool.h"

#include <dlfcn.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace cinn_like::runtime {
namespace {

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
}

}  // namespace
}  // namespace cinn_like::runtime
