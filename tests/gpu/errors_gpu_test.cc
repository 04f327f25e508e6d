/// \file GPU machine only: bad calls into a CUDA-built function return a clear error and leave
/// the process (and the compiler) usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

namespace cinn_like {
namespace {

using ::testing::HasSubstr;

TEST(GpuErrors, WrongDtypeWrongDeviceAndWrongCountThenAGoodCall) {
  auto ex = examples::Find("myadd");
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  ASSERT_TRUE(examples::BuildExample(*ex, **compiler).ok());
  auto fn = (*compiler)->Lookup("myadd");
  ASSERT_TRUE(fn.ok());

  int64_t n = 100;
  void* buf[3];
  for (auto& b : buf) ASSERT_EQ(cinn_like_cuda_malloc(&b, n * sizeof(double)), 0);
  DLTensor t[3];
  for (int i = 0; i < 3; ++i) {
    t[i] = DLTensor{};
    t[i].data = buf[i];
    t[i].device = {kDLCUDA, 0};
    t[i].ndim = 1;
    t[i].dtype = {kDLFloat, 32, 1};
    t[i].shape = &n;
  }
  DLTensor* args[3] = {&t[0], &t[1], &t[2]};

  t[1].dtype = {kDLFloat, 64, 1};
  EXPECT_NE((*fn)(args, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(),
              HasSubstr("argument 1 (B) has dtype float64, expected float32"));
  t[1].dtype = {kDLFloat, 32, 1};

  t[2].device = {kDLCPU, 0};
  EXPECT_NE((*fn)(args, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("(C) is on cpu, expected cuda"));
  t[2].device = {kDLCUDA, 0};

  EXPECT_NE((*fn)(args, 2, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("expected 3 tensor arguments"));

  EXPECT_EQ((*fn)(args, 3, nullptr), 0) << cinn_like_get_last_error();
  EXPECT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
  auto report = examples::RunExample(*ex, **compiler, 1000);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->passed);
  for (auto& b : buf) cinn_like_cuda_free(b);
}

}  // namespace
}  // namespace cinn_like
