/// \file GPU machine only: the hand-built seed vector add through Compiler::Create(NVGPU),
/// run on the device at sizes around the block size, against a CPU reference; and the error
/// a wrong tensor gives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/cuda/vector_add_module.h"
#include "tests/gpu/device_buffer.h"
#include "tests/test_util.h"

namespace cinn_like::backends {
namespace {

using testing::DeviceBuffer;
using testing::DeviceTensor;

class VectorAddGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compiler = Compiler::Create(ir::Target::NVGPU());
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
    absl::Status built = compiler_->Build(testing::GpuVectorAdd());
    ASSERT_TRUE(built.ok()) << built;
    std::printf("myadd on %s:\n%s", compiler_->target().ToString().c_str(),
                compiler_->last_build_times().ToString().c_str());
    auto fn = compiler_->Lookup("myadd");
    ASSERT_TRUE(fn.ok()) << fn.status();
    fn_ = *fn;
  }
  std::unique_ptr<Compiler> compiler_;
  EntryFunction fn_ = nullptr;
};

TEST_F(VectorAddGpu, MatchesCpuAtEverySize) {
  for (int64_t n :
       {int64_t{1}, int64_t{63}, int64_t{64}, int64_t{65}, int64_t{1000}, int64_t{1} << 20}) {
    SCOPED_TRACE(n);
    testing::HostTensor<float> a({n}), b({n}), c({n});
    a.FillRandom();
    b.FillRandom();
    c.Poison();
    size_t bytes = n * sizeof(float);
    DeviceBuffer da(bytes), db(bytes), dc(bytes);
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(da.get(), a.data().data(), bytes), 0);
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(db.get(), b.data().data(), bytes), 0);
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(dc.get(), c.data().data(), bytes), 0);
    int64_t shape = n;
    DLTensor ta = DeviceTensor(da.get(), &shape), tb = DeviceTensor(db.get(), &shape),
             tc = DeviceTensor(dc.get(), &shape);
    DLTensor* args[] = {&ta, &tb, &tc};
    ASSERT_EQ(fn_(args, 3, nullptr), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_memcpy_to_host(c.data().data(), dc.get(), bytes), 0);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      float want = a[i] + b[i];
      if (c[i] != want && mismatches++ < 5) {
        ADD_FAILURE() << "n=" << n << " C[" << i << "] = " << c[i] << ", expected " << want;
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST_F(VectorAddGpu, WrongDtypeIsAnErrorNotACrash) {
  int64_t n = 100;
  DeviceBuffer da(n * 8), db(n * 4), dc(n * 4);
  DLTensor ta = DeviceTensor(da.get(), &n, 1, {kDLFloat, 64, 1});
  DLTensor tb = DeviceTensor(db.get(), &n), tc = DeviceTensor(dc.get(), &n);
  DLTensor* args[] = {&ta, &tb, &tc};
  EXPECT_NE(fn_(args, 3, nullptr), 0);
  std::string error = cinn_like_get_last_error();
  EXPECT_THAT(error, ::testing::HasSubstr("myadd"));
  EXPECT_THAT(error, ::testing::HasSubstr("(A) has dtype float64"));
  EXPECT_THAT(error, ::testing::HasSubstr("float32"));
}

TEST(CudaRuntimeGpu, DeviceArchAndEmptyLaunch) {
  int32_t arch = 0;
  ASSERT_EQ(cinn_like_cuda_device_arch(&arch), 0) << cinn_like_get_last_error();
  EXPECT_GE(arch, 75);
  EXPECT_EQ(cinn_like_cuda_launch(nullptr, "empty", 0, 1, 1, 64, 1, 1, 0, nullptr, nullptr, 0), 0);
  EXPECT_NE(cinn_like_cuda_launch(nullptr, "nohandle", 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, 0),
            0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              ::testing::HasSubstr("launch of kernel nohandle"));
}

}  // namespace
}  // namespace cinn_like::backends
