/// \file GPU machine only: the op table of tests/op_cases.h compiled by the graph compiler for
/// the device and run against the reference interpreter on fresh random inputs, one test per
/// op (as tests/hlir/op_x86_test.cc on x86), so a failing, slow or hanging case names its op.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/gpu_executor.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

class OpGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(OpGpu, MatchesReference) {
  int n = 0;
  for (const OpCase& c : AllOpCases()) {
    if (c.op != GetParam()) continue;
    ++n;
    RunOpCase(c, ir::Target::NVGPU(), RunOnGpu);
  }
  EXPECT_GT(n, 0) << "no case for op " << GetParam();
}

std::vector<std::string> OpsWithCases() {
  std::set<std::string> ops;
  for (const OpCase& c : AllOpCases()) ops.insert(c.op);
  return {ops.begin(), ops.end()};
}

TEST(OpGpuTable, RunsMoreThanAHundredCases) {
  // The per-op tests above run every case of the table: it has not shrunk.
  EXPECT_GT(AllOpCases().size(), 100u);
  std::cout << "GPU: " << AllOpCases().size() << " op cases over " << OpsWithCases().size()
            << " ops\n";
}

TEST(OpGpuIndexAdd, ManyPositionsPerValueAndMoreThanAWarpMatchReference) {
  // The scatter's links (a warp per position, each lane taking every 32nd other): 100 positions
  // over 5 rows and 1000 over 7, many per value. Not in the op table, whose cases the fuzz
  // corpus decodes by index (a case added there gives every saved input another program).
  for (int64_t positions : {100, 1000}) {
    SCOPED_TRACE(positions);
    RunOpCase({"index_add",
               {DType::kFloat32, DType::kInt64, DType::kFloat32},
               {S({positions == 100 ? 5 : 7, 3}), S({positions}), S({positions, 3})},
               {{"axis", int64_t{0}}},
               {Domain::kUniform, Domain::kIndex, Domain::kUniform}},
              ir::Target::NVGPU(), RunOnGpu);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpGpu, ::testing::ValuesIn(OpsWithCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace cinn_like::testing
