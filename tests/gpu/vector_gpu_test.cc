/// \file GPU machine only: the vectorized example vadd (float4 accesses with an alignment check
/// and a scalar tail) against a CPU reference, at sizes around the vector width and with
/// tensors that start 4 bytes past an aligned address (the misaligned fallback path).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

  /// Runs vadd on n elements whose device arrays start `offset` floats into their allocation;
  /// checks every element against the float64 sum rounded to float32 (exact for one add).
  void RunAndCheck(int64_t n, int64_t offset) {
    testing::HostTensor<float> a({n}), b({n}), c({n});
    a.FillRandom();
    b.FillRandom();
    c.Poison();
    size_t bytes = n * sizeof(float), alloc = (n + offset) * sizeof(float);
    void *da = nullptr, *db = nullptr, *dc = nullptr;
    ASSERT_EQ(cinn_like_cuda_malloc(&da, alloc), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_malloc(&db, alloc), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_malloc(&dc, alloc), 0) << cinn_like_get_last_error();
    float* pa = static_cast<float*>(da) + offset;
    float* pb = static_cast<float*>(db) + offset;
    float* pc = static_cast<float*>(dc) + offset;
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(pa, a.data().data(), bytes), 0);
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(pb, b.data().data(), bytes), 0);
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(pc, c.data().data(), bytes), 0);
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
    DLTensor ta = tensor(pa), tb = tensor(pb), tc = tensor(pc);
    DLTensor* args[] = {&ta, &tb, &tc};
    ASSERT_EQ(fn_(args, 3, nullptr), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_memcpy_to_host(c.data().data(), pc, bytes), 0);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      float want = static_cast<float>(static_cast<double>(a[i]) + b[i]);
      if (c[i] != want && mismatches++ < 5) {
        ADD_FAILURE() << "n=" << n << " offset=" << offset << " C[" << i << "] = " << c[i]
                      << ", expected " << want;
      }
    }
    EXPECT_EQ(mismatches, 0);
    cinn_like_cuda_free(da);
    cinn_like_cuda_free(db);
    cinn_like_cuda_free(dc);
  }

  std::unique_ptr<Compiler> compiler_;
  EntryFunction fn_ = nullptr;
};

TEST_P(VAddGpu, AlignedMatchesCpu) { RunAndCheck(GetParam(), 0); }

TEST_P(VAddGpu, MisalignedTensorsTakeTheScalarPath) { RunAndCheck(GetParam(), 1); }

INSTANTIATE_TEST_SUITE_P(Sizes, VAddGpu,
                         ::testing::Values(int64_t{1}, int64_t{3}, int64_t{4}, int64_t{5},
                                           int64_t{1023}, int64_t{1} << 20,
                                           (int64_t{1} << 20) + 3));

}  // namespace
}  // namespace cinn_like::backends
