/// \file x86 intermediates (tensors that are not arguments): workspaces from the runtime's
/// allocation hook, freed on every path; results against a float64 reference; allocation
/// failures are a nonzero return with a message, never an abort.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <tuple>

#include "backends/compiler.h"
#include "backends/llvm/host_ir.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/counting_allocator.h"
#include "tests/cuda/temporaries_module.h"
#include "tests/test_util.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using testing::HostTensor;

/// The number of stages (2 or 3) and whether the loops run on the thread pool.
class X86Temporaries : public ::testing::TestWithParam<std::tuple<int, bool>> {
 protected:
  int stages() const { return std::get<0>(GetParam()); }
  void SetUp() override {
    auto f = testing::BuildTemporaries(ir::Target::X86(), stages(), std::get<1>(GetParam()));
    ASSERT_TRUE(f.ok()) << f.status();
    func_ = *f;
    auto compiler = Compiler::Create(ir::Target::X86());
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
    absl::Status built = compiler_->Build({func_->name, ir::Target::X86(), {func_}});
    ASSERT_TRUE(built.ok()) << built;
    auto fn = compiler_->Lookup(func_->name);
    ASSERT_TRUE(fn.ok()) << fn.status();
    fn_ = *fn;
  }

  /// Runs the function at size n on fresh data; returns its code. Checks C when it is 0.
  int RunAndCheck(int64_t n) {
    HostTensor<float> a({n}), b({n}), c({n});
    a.FillRandom();
    b.FillRandom();
    c.Poison();
    DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
    int rc = fn_(args, 3, nullptr);
    if (rc != 0) return rc;
    for (int64_t i = 0; i < n; ++i) {
      double t = 2.0 * a[i];
      double want = stages() == 2 ? t + b[i] : (t + b[i]) * t;
      EXPECT_NEAR(c[i], want, 1e-5 * (1 + std::abs(want))) << "n=" << n << " i=" << i;
      if (std::abs(c[i] - want) > 1e-5 * (1 + std::abs(want))) break;
    }
    return rc;
  }

  ir::LoweredFunc func_;
  std::unique_ptr<Compiler> compiler_;
  EntryFunction fn_ = nullptr;
};

TEST_P(X86Temporaries, MatchesTheReferenceWithTheDefaultAllocator) {
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20}) {
    EXPECT_EQ(RunAndCheck(n), 0) << "n=" << n << ": " << cinn_like_get_last_error();
  }
}

TEST_P(X86Temporaries, WorkspacesGoThroughTheInstalledHook) {
  testing::CountingAllocator counter;
  ASSERT_TRUE(counter.installed()) << cinn_like_get_last_error();
  int per_call = stages() - 1;  // one workspace per intermediate
  int calls = 0;
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20}) {
    ASSERT_EQ(RunAndCheck(n), 0) << "n=" << n << ": " << cinn_like_get_last_error();
    ++calls;
    EXPECT_EQ(counter.allocs, per_call * calls);
    EXPECT_EQ(counter.frees, counter.allocs);
    // Symbolic size: n float32 elements each.
    EXPECT_EQ(counter.bytes.back(), static_cast<size_t>(n) * 4);
  }
  for (int32_t type : counter.device_types) EXPECT_EQ(type, kDLCPU);
}

TEST_P(X86Temporaries, RefusedAllocationReturnsAnErrorAndFreesTheOthers) {
  // The last workspace is refused: those allocated before it are freed on the error path.
  testing::CountingAllocator counter(/*fail_at=*/stages() - 1);
  ASSERT_TRUE(counter.installed());
  cinn_like_clear_last_error();
  EXPECT_NE(RunAndCheck(1000), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("allocation of a 4000-byte workspace on cpu failed: the allocator "
                        "installed by cinn_like_set_allocator returned null"));
  EXPECT_EQ(counter.refused, 1);
  EXPECT_EQ(counter.allocs, stages() - 2);
  EXPECT_EQ(counter.frees, counter.allocs);
}

INSTANTIATE_TEST_SUITE_P(StagesAndParallel, X86Temporaries,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Bool()));

TEST(X86TemporariesCodeGen, HostIrCallsTheHookAroundTheLoops) {
  auto f = testing::BuildTemporaries(ir::Target::X86(), 3);
  ASSERT_TRUE(f.ok()) << f.status();
  auto ir = X86HostIR({"temps3", ir::Target::X86(), {*f}});
  ASSERT_TRUE(ir.ok()) << ir.status();
  // Device type 1 (kDLCPU), the byte count from n, the entry's stream.
  EXPECT_THAT(*ir, HasSubstr("call ptr @cinn_like_alloc_workspace(i32 1, i64 %T.bytes, ptr "
                             "%stream)"));
  EXPECT_THAT(*ir, HasSubstr("call ptr @cinn_like_alloc_workspace(i32 1, i64 %U.bytes, ptr "
                             "%stream)"));
  // The entry reloads each address from its frame slot for the free (%T<k>).
  EXPECT_THAT(*ir, HasSubstr("call i32 @cinn_like_free_workspace(i32 1, ptr %T"));
  EXPECT_THAT(*ir, HasSubstr("call i32 @cinn_like_free_workspace(i32 1, ptr %U"));
  EXPECT_THAT(*ir, ::testing::Not(HasSubstr("@malloc")));
}

TEST(X86TemporariesCodeGen, ParallelLoopsCaptureTheWorkspaceAndAFailedLoopFreesIt) {
  auto f = testing::BuildTemporaries(ir::Target::X86(), 2, /*parallel=*/true);
  ASSERT_TRUE(f.ok()) << f.status();
  auto ir = X86HostIR({"temps2", ir::Target::X86(), {*f}});
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, HasSubstr("call i32 @cinn_like_parallel_for("));
  // The outlined bodies see T through their closure (each loop nest is a function of its own
  // that the entry calls); the entry frees T at the end and once more in T's unwind block,
  // where every failure after its allocation goes (the parallel loops' included).
  EXPECT_THAT(*ir, HasSubstr("define internal void @temps2_parallel_0_"));
  EXPECT_THAT(*ir, HasSubstr("define internal i32 @temps2_nest_0("));
  const std::string free_t = "@cinn_like_free_workspace(i32 1, ptr %T";
  int frees = 0;
  for (size_t at = ir->find(free_t); at != std::string::npos; at = ir->find(free_t, at + 1)) {
    ++frees;
  }
  EXPECT_EQ(frees, 2) << *ir;
  EXPECT_THAT(*ir, HasSubstr("T.unwind:")) << *ir;
}

TEST(X86TemporariesRuntime, AbsurdSizeIsAnErrorNamingTheBytes) {
  cinn_like_clear_last_error();
  size_t absurd = SIZE_MAX - 8;
  EXPECT_EQ(cinn_like_alloc_workspace(kDLCPU, absurd, nullptr), nullptr);
  EXPECT_THAT(
      std::string(cinn_like_get_last_error()),
      HasSubstr("allocation of a " + std::to_string(absurd) + "-byte workspace on cpu failed"));
  size_t huge = size_t{1} << 62;  // within range, but no machine has it
  EXPECT_EQ(cinn_like_alloc_workspace(kDLCPU, huge, nullptr), nullptr);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("allocation of a " + std::to_string(huge) +
                        "-byte workspace on cpu failed: out of host memory"));
}

TEST(X86TemporariesRuntime, DefaultCpuWorkspaceIsAlignedTo64) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{4096}}) {
    void* p = cinn_like_alloc_workspace(kDLCPU, bytes, nullptr);
    ASSERT_NE(p, nullptr) << cinn_like_get_last_error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    EXPECT_EQ(cinn_like_free_workspace(kDLCPU, p, nullptr), 0);
  }
  EXPECT_EQ(cinn_like_free_workspace(kDLCPU, nullptr, nullptr), 0);
}

TEST(X86TemporariesRuntime, SetAllocatorNeedsBothFunctions) {
  auto alloc = [](void*, size_t, int32_t, int32_t, void*) -> void* { return nullptr; };
  EXPECT_NE(cinn_like_set_allocator(alloc, nullptr, nullptr), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("cinn_like_set_allocator: give both an alloc and a free function"));
  // The failed call left the defaults in place.
  void* p = cinn_like_alloc_workspace(kDLCPU, 16, nullptr);
  EXPECT_NE(p, nullptr);
  cinn_like_free_workspace(kDLCPU, p, nullptr);
}

}  // namespace
}  // namespace cinn_like::backends
