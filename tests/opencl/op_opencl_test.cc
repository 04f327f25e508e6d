/// \file The op table of tests/op_cases.h compiled for the OpenCL target and run on its device
/// (PoCL's CPU device in CI, NVIDIA's OpenCL on the GPU machine) against the reference
/// interpreter on fresh random inputs, one test per op; cases of a dtype the device lacks are
/// skipped, and the error that names the dtype is checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "runtime/cinn_like_runtime.h"
#include "runtime/opencl/opencl_runtime.h"
#include "tests/op_cases.h"
#include "tests/opencl/opencl_executor.h"

namespace cinn_like::testing {
namespace {

/// Whether the device's OpenCL C holds every dtype of `c`'s graph, inputs and results (bfloat16
/// never; float16 and float64 where the device reports cl_khr_fp16 / cl_khr_fp64).
bool DeviceHoldsTypes(const OpCase& c) {
  auto device = runtime::opencl::Device::Select("", "");
  auto graph = CaseGraph(c);
  if (!device.ok() || !graph.ok()) return false;
  for (const hlir::Value& v : graph->values()) {
    const DType d = v.desc.dtype;
    if (d == DType::kBFloat16) return false;
    if (d == DType::kFloat16 && !(*device)->info().fp16) return false;
    if (d == DType::kFloat64 && !(*device)->info().fp64) return false;
  }
  return true;
}

class OpOpenCL : public ::testing::TestWithParam<std::string> {};

TEST_P(OpOpenCL, MatchesReference) {
  int n = 0;
  for (const OpCase& c : AllOpCases()) {
    if (c.op != GetParam() || !DeviceHoldsTypes(c)) continue;
    ++n;
    RunOpCase(c, OpenCLTarget(), RunOnOpenCL);
  }
  if (n == 0) GTEST_SKIP() << "no case of op " << GetParam() << " in the device's types";
}

std::vector<std::string> OpsWithCases() {
  std::set<std::string> ops;
  for (const OpCase& c : AllOpCases()) ops.insert(c.op);
  return {ops.begin(), ops.end()};
}

TEST(OpOpenCLTable, RunsMostCasesOnTheDevice) {
  auto device = runtime::opencl::Device::Select("", "");
  ASSERT_TRUE(device.ok()) << device.status();
  size_t run = 0;
  for (const OpCase& c : AllOpCases()) run += DeviceHoldsTypes(c);
  std::cout << "OpenCL on " << (*device)->info().Describe() << ": " << run << " of "
            << AllOpCases().size() << " op cases in the device's types\n";
  EXPECT_GT(run, 100u);
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpOpenCL, ::testing::ValuesIn(OpsWithCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace cinn_like::testing
