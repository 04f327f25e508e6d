/// \file GPU machine only: the Programs of tests/symbolic_cases.h (symbolic batch and sequence
/// length: views as polynomials, softmax, layer_norm, batched matmuls) compiled once for CUDA
/// and called at every size of their lists, each call on fresh random inputs against the
/// reference interpreter.
#include <gtest/gtest.h>

#include "tests/symbolic_cases.h"

namespace cinn_like::testing {
namespace {

TEST(SymbolicShapesGpu, OneCompileServesEverySize) {
  for (const auto& c : SymbolicCases()) CheckAtEverySize(c, ir::Target::NVGPU(), nullptr);
}

}  // namespace
}  // namespace cinn_like::testing
