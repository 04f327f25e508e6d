/// \file GPU machine only: the op table of tests/op_cases.h compiled by the graph compiler for
/// the device and run against the reference interpreter on fresh random inputs. Cases whose
/// module needs device temporaries (intermediate reductions) are counted and skipped until
/// NVGPU lowering supports them.
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/gpu_executor.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

TEST(OpGpu, EveryCaseMatchesReference) {
  int ran = 0;
  for (const OpCase& c : AllOpCases()) {
    RunOpCase(c, ir::Target::NVGPU(), RunOnGpu);
    ++ran;
  }
  EXPECT_GT(ran, 100);
  std::cout << "GPU: " << ran << " op cases ran against the reference\n";
}

}  // namespace
}  // namespace cinn_like::testing
