/// \file GPU machine only: the attention op against the reference interpreter on fresh random
/// data, through the fused kernel (the default) on the op table's attention cases, on the larger
/// cases that walk several query and key tiles in every head-dim bucket and on fully masked
/// rows, and through the decomposed compute (extern libraries off) on the op table's cases.
#include <gtest/gtest.h>

#include "ir/flags.h"
#include "tests/attention_cases.h"
#include "tests/gpu_executor.h"

namespace cinn_like::testing {
namespace {

/// The op table's attention cases on the GPU; how many ran.
int RunTableCases() {
  int ran = 0;
  for (const OpCase& c : AllOpCases()) {
    if (c.op != "attention") continue;
    RunOpCase(c, ir::Target::NVGPU(), RunOnGpu);
    ++ran;
  }
  return ran;
}

TEST(AttentionGpu, FusedKernelMatchesReferenceOnTheOpTable) { EXPECT_GE(RunTableCases(), 8); }

TEST(AttentionGpu, FusedKernelMatchesReferenceOnLargeCases) {
  for (const OpCase& c : LargeAttentionCases()) RunOpCase(c, ir::Target::NVGPU(), RunOnGpu);
}

TEST(AttentionGpu, FusedKernelGivesFullyMaskedRowsZeroAndInfinity) {
  CheckFullyMaskedRows(ir::Target::NVGPU(), RunOnGpu);
}

TEST(AttentionGpu, DecomposedComputeMatchesReference) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_extern_libs = false;
  EXPECT_GE(RunTableCases(), 8);
  CheckFullyMaskedRows(ir::Target::NVGPU(), RunOnGpu);
}

}  // namespace
}  // namespace cinn_like::testing
