/// \file GPU machine only: functions with intermediates in device memory (workspaces from
/// the runtime's allocation hook) run against a float64 reference at symbolic sizes; a
/// user-installed allocator sees every allocation and free; a refused allocation is an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/counting_allocator.h"
#include "tests/cuda/temporaries_module.h"
#include "tests/gpu/device_buffer.h"
#include "tests/test_util.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using testing::HostTensor;

using testing::DeviceBuffer;
using testing::DeviceTensor;

class TemporariesGpu : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    auto f = testing::BuildTemporaries(ir::Target::NVGPU(), GetParam());
    ASSERT_TRUE(f.ok()) << f.status();
    auto compiler = Compiler::Create(ir::Target::NVGPU());
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
    absl::Status built = compiler_->Build({(*f)->name, compiler_->target(), {*f}});
    ASSERT_TRUE(built.ok()) << built;
    auto fn = compiler_->Lookup((*f)->name);
    ASSERT_TRUE(fn.ok()) << fn.status();
    fn_ = *fn;
  }

  /// Runs at size n on fresh data; returns the function's code, checking C when it is 0.
  int RunAndCheck(int64_t n) {
    HostTensor<float> a({n}), b({n}), c({n});
    a.FillRandom();
    b.FillRandom();
    c.Poison();
    size_t bytes = n * sizeof(float);
    DeviceBuffer da(bytes), db(bytes), dc(bytes);
    EXPECT_EQ(cinn_like_cuda_memcpy_to_device(da.get(), a.data().data(), bytes), 0);
    EXPECT_EQ(cinn_like_cuda_memcpy_to_device(db.get(), b.data().data(), bytes), 0);
    EXPECT_EQ(cinn_like_cuda_memcpy_to_device(dc.get(), c.data().data(), bytes), 0);
    int64_t shape = n;
    DLTensor ta = DeviceTensor(da.get(), &shape), tb = DeviceTensor(db.get(), &shape),
             tc = DeviceTensor(dc.get(), &shape);
    DLTensor* args[] = {&ta, &tb, &tc};
    int rc = fn_(args, 3, nullptr);
    if (rc != 0) return rc;
    EXPECT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
    EXPECT_EQ(cinn_like_cuda_memcpy_to_host(c.data().data(), dc.get(), bytes), 0);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      double t = 2.0 * a[i];
      double want = GetParam() == 2 ? t + b[i] : (t + b[i]) * t;
      if (std::abs(c[i] - want) > 1e-5 * (1 + std::abs(want))) {
        ADD_FAILURE() << "n=" << n << " i=" << i << ": got " << c[i] << ", want " << want;
        ++bad;
      }
    }
    return rc;
  }

  std::unique_ptr<Compiler> compiler_;
  EntryFunction fn_ = nullptr;
};

TEST_P(TemporariesGpu, MatchesTheReferenceWithTheDefaultAllocator) {
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20}) {
    EXPECT_EQ(RunAndCheck(n), 0) << "n=" << n << ": " << cinn_like_get_last_error();
  }
}

TEST_P(TemporariesGpu, WorkspacesGoThroughTheInstalledHook) {
  testing::CountingAllocator counter;
  ASSERT_TRUE(counter.installed()) << cinn_like_get_last_error();
  int per_call = GetParam() - 1;
  int calls = 0;
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20}) {
    ASSERT_EQ(RunAndCheck(n), 0) << "n=" << n << ": " << cinn_like_get_last_error();
    ++calls;
    EXPECT_EQ(counter.allocs, per_call * calls);
    EXPECT_EQ(counter.frees, counter.allocs);
    EXPECT_EQ(counter.bytes.back(), static_cast<size_t>(n) * 4);
  }
  for (int32_t type : counter.device_types) EXPECT_EQ(type, kDLCUDA);
  for (void* s : counter.streams) EXPECT_EQ(s, nullptr);  // the stream the test called on
}

TEST_P(TemporariesGpu, RefusedAllocationReturnsAnErrorAndFreesTheOthers) {
  testing::CountingAllocator counter(/*fail_at=*/GetParam() - 1);
  ASSERT_TRUE(counter.installed());
  EXPECT_NE(RunAndCheck(1000), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("allocation of a 4000-byte workspace on cuda failed: the allocator "
                        "installed by cinn_like_set_allocator returned null"));
  EXPECT_EQ(counter.refused, 1);
  EXPECT_EQ(counter.frees, counter.allocs);
  EXPECT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
}

INSTANTIATE_TEST_SUITE_P(Stages, TemporariesGpu, ::testing::Values(2, 3));

TEST(TemporariesGpuRuntime, AbsurdDeviceAllocationIsAnErrorNamingTheBytes) {
  size_t absurd = size_t{1} << 60;
  EXPECT_EQ(cinn_like_alloc_workspace(kDLCUDA, absurd, nullptr), nullptr);
  EXPECT_THAT(
      std::string(cinn_like_get_last_error()),
      HasSubstr("allocation of a " + std::to_string(absurd) + "-byte workspace on cuda failed"));
  void* p = cinn_like_alloc_workspace(kDLCUDA, 0, nullptr);
  ASSERT_NE(p, nullptr) << cinn_like_get_last_error();
  EXPECT_EQ(cinn_like_free_workspace(kDLCUDA, p, nullptr), 0) << cinn_like_get_last_error();
}

}  // namespace
}  // namespace cinn_like::backends
