/// \file GPU machine only: every float16 and bfloat16 value through sigmoid, silu and
/// tanh-gelu (tests/rounded16_cases.h), whose kernels for 16-bit outputs use CUDA's __expf and
/// rcp.approx.f32 (ir::FastExp, ir::FastRecip): within one unit in the last place of the
/// float64 reference, and few one unit off.
#include <gtest/gtest.h>

#include "tests/gpu_executor.h"
#include "tests/rounded16_cases.h"

namespace cinn_like::testing {
namespace {

TEST(Rounded16Gpu, EveryFloat16AndBFloat16Value) {
  for (const Rounded16Case& c : Rounded16Cases()) {
    for (DType t : {DType::kFloat16, DType::kBFloat16}) {
      CheckEvery16BitValue(c, t, ir::Target::NVGPU(), RunOnGpu);
    }
  }
}

}  // namespace
}  // namespace cinn_like::testing
