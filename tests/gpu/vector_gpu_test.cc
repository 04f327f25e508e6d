/// \file GPU machine only: the vectorized example vadd (float4 accesses the host checks the
/// alignment of, and a scalar tail) against a CPU reference, at sizes around the vector width
/// and with tensors that start 4, 8 or 12 bytes past an aligned address (the host's realigned
/// launch).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/test_util.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

namespace cinn_like::backends {
namespace {

class VAddGpu : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    auto compiler = Compiler::Create(ir::Target::NVGPU());
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
    auto ex = examples::Find("vadd");
    ASSERT_TRUE(ex.ok()) << ex.status();
    absl::Status built = examples::BuildExample(*ex, *compiler_);
    ASSERT_TRUE(built.ok()) << built;
    auto fn = compiler_->Lookup("vadd");
    ASSERT_TRUE(fn.ok()) << fn.status();
    fn_ = *fn;
  }

  /// Runs vadd on n elements whose device arrays A, B, C start offsets[0..2] floats into their
  /// allocations; checks every element against the float64 sum rounded to float32 (exact for
  /// one add), and that the floats of C's allocation around it are as they were.
  void RunAndCheck(int64_t n, std::array<int64_t, 3> offsets) {
    constexpr int64_t kGuard = 8;  // floats after each tensor
    std::array<testing::HostTensor<float>, 3> host = {testing::HostTensor<float>({n}),
                                                      testing::HostTensor<float>({n}),
                                                      testing::HostTensor<float>({n})};
    std::array<void*, 3> allocations{};
    std::array<float*, 3> at{};
    std::array<std::vector<float>, 3> before;  // each allocation as written
    for (int k = 0; k < 3; ++k) {
      host[k].FillRandom();
      const int64_t floats = offsets[k] + n + kGuard;
      before[k].assign(floats, -7.25f);  // the guards: a value no sum here makes
      std::copy(host[k].data().begin(), host[k].data().end(), before[k].begin() + offsets[k]);
      ASSERT_EQ(cinn_like_cuda_malloc(&allocations[k], floats * sizeof(float)), 0)
          << cinn_like_get_last_error();
      ASSERT_EQ(
          cinn_like_cuda_memcpy_to_device(allocations[k], before[k].data(), floats * sizeof(float)),
          0);
      at[k] = static_cast<float*>(allocations[k]) + offsets[k];
    }
    int64_t shape = n;
    auto tensor = [&](void* p) {
      DLTensor t{};
      t.data = p;
      t.device = {kDLCUDA, 0};
      t.ndim = 1;
      t.dtype = {kDLFloat, 32, 1};
      t.shape = &shape;
      return t;
    };
    DLTensor ta = tensor(at[0]), tb = tensor(at[1]), tc = tensor(at[2]);
    DLTensor* args[] = {&ta, &tb, &tc};
    ASSERT_EQ(fn_(args, 3, nullptr), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
    std::vector<float> after(before[2].size());
    ASSERT_EQ(
        cinn_like_cuda_memcpy_to_host(after.data(), allocations[2], after.size() * sizeof(float)),
        0);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(after.size()); ++i) {
      const int64_t e = i - offsets[2];
      const float want = e >= 0 && e < n
                             ? static_cast<float>(static_cast<double>(host[0][e]) + host[1][e])
                             : before[2][i];
      if (after[i] != want && mismatches++ < 5) {
        ADD_FAILURE() << "n=" << n << " offsets " << offsets[0] << ", " << offsets[1] << ", "
                      << offsets[2] << ": float " << i << " of C's allocation is " << after[i]
                      << ", expected " << want;
      }
    }
    EXPECT_EQ(mismatches, 0);
    for (void* p : allocations) cinn_like_cuda_free(p);
  }

  std::unique_ptr<Compiler> compiler_;
  EntryFunction fn_ = nullptr;
};

TEST_P(VAddGpu, AlignedMatchesCpu) { RunAndCheck(GetParam(), {0, 0, 0}); }

// The host finds the pointers misaligned for the float4s and runs the kernel on aligned copies
// (cinn_like_cuda_launch_realigned): every tensor, only the output, only one input (8 bytes).
TEST_P(VAddGpu, MisalignedTensorsAreRealigned) { RunAndCheck(GetParam(), {1, 1, 1}); }
TEST_P(VAddGpu, AMisalignedOutputIsCopiedBackAndNothingBesideIt) {
  RunAndCheck(GetParam(), {0, 0, 3});
}
TEST_P(VAddGpu, AMisalignedInputAlone) { RunAndCheck(GetParam(), {2, 0, 0}); }

INSTANTIATE_TEST_SUITE_P(Sizes, VAddGpu,
                         ::testing::Values(int64_t{1}, int64_t{3}, int64_t{4}, int64_t{5},
                                           int64_t{1023}, int64_t{1} << 20,
                                           (int64_t{1} << 20) + 3));

}  // namespace
}  // namespace cinn_like::backends
