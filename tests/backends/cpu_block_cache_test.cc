/// \file The CPU block cache behind the default workspace allocator: large blocks come back at
/// the next request of their size, small ones are not kept, every block is 64-byte aligned,
/// and past the cap the least recently freed go back to the system.
#include "runtime/cpu_block_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace cinn_like::runtime {
namespace {

bool Aligned(void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(CpuBlockCache, LargeBlocksAreReusedSmallOnesAreNot) {
  const size_t before = CpuBlocksKeptBytes();
  const size_t large = (size_t{3} << 20) + 5;  // rounded up to a multiple of 64
  void* a = CpuBlockAlloc(large);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(Aligned(a));
  std::memset(a, 1, large);
  CpuBlockFree(a);
  EXPECT_GE(CpuBlocksKeptBytes(), before + large);
  void* b = CpuBlockAlloc(large);
  EXPECT_EQ(b, a);  // the kept block
  EXPECT_EQ(CpuBlocksKeptBytes(), before);
  void* other = CpuBlockAlloc(large + 4096);  // another size: a new block
  EXPECT_NE(other, a);
  CpuBlockFree(b);
  CpuBlockFree(other);
  void* small = CpuBlockAlloc(100);
  ASSERT_NE(small, nullptr);
  EXPECT_TRUE(Aligned(small));
  const size_t kept = CpuBlocksKeptBytes();
  CpuBlockFree(small);
  EXPECT_EQ(CpuBlocksKeptBytes(), kept);
  void* none = CpuBlockAlloc(0);
  EXPECT_NE(none, nullptr);
  CpuBlockFree(none);
  CpuBlockFree(nullptr);
}

TEST(CpuBlockCache, PastTheCapTheLeastRecentlyFreedGoBack) {
  // Blocks of 0.6 of the cap, never touched (address space only).
  const size_t big = kCpuBlocksKeptMax / 10 * 6;
  void* first = CpuBlockAlloc(big);
  void* second = CpuBlockAlloc(big);
  ASSERT_TRUE(first && second);
  CpuBlockFree(first);
  CpuBlockFree(second);
  EXPECT_LE(CpuBlocksKeptBytes(), kCpuBlocksKeptMax);
  void* again = CpuBlockAlloc(big);
  EXPECT_EQ(again, second);  // the first went back to the system
  CpuBlockFree(again);
}

}  // namespace
}  // namespace cinn_like::runtime
