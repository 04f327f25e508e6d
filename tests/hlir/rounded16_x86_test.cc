/// \file x86: every float16 and bfloat16 value through sigmoid, silu and tanh-gelu, the ops
/// with approximate steps for 16-bit outputs (tests/rounded16_cases.h). The x86 backend lowers
/// those steps as exp and 1 / x; the GPU machine runs the same check on CUDA's forms.
#include <gtest/gtest.h>

#include "tests/rounded16_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

TEST(Rounded16X86, EveryFloat16AndBFloat16Value) {
  for (const Rounded16Case& c : Rounded16Cases()) {
    for (DType t : {DType::kFloat16, DType::kBFloat16}) {
      CheckEvery16BitValue(c, t, ir::Target::X86(), RunOnX86);
    }
  }
}

}  // namespace
}  // namespace cinn_like::testing
