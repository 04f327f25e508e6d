/// \file GPU machine only: the attention op against the reference interpreter on fresh random
/// data, through the fused kernel (the default, prebuilt or compiled by NVRTC) on the op table's
/// attention cases, on the larger cases that walk several query and key tiles in every head-dim
/// bucket, on fully masked rows, on a banded mask and on dropout's mask (random_uniform's), and
/// through the decomposed compute (extern libraries off) on the op table's cases; attention_grad's
/// fused kernel on large cases of both its tile widths.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/flags.h"
#include "runtime/cuda/cuda_driver.h"
#include "tests/attention_cases.h"
#include "tests/fusion_cases.h"
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

// The op table's cases through the kernels built with cinn_like (on the archs the build names)
// and through NVRTC (flag off): both match the reference.
TEST(AttentionGpu, PrebuiltAndNvrtcCompiledKernelsMatchReference) {
  gflags::FlagSaver saver;
  const int before = GpuPrebuiltKernelsLoaded();
  EXPECT_GE(RunTableCases(), 8);
  auto arch = runtime::cuda::DeviceComputeCapability();
  ASSERT_TRUE(arch.ok()) << arch.status();
#ifdef CINN_LIKE_PREBUILT_ARCHS
  const bool built_for_device = absl::StrContains(absl::StrCat(",", CINN_LIKE_PREBUILT_ARCHS, ","),
                                                  absl::StrCat(",", *arch, ","));
#else
  const bool built_for_device = false;
#endif
  if (built_for_device) {
    EXPECT_GE(GpuPrebuiltKernelsLoaded() - before, 8) << "sm_" << *arch;
  } else {
    EXPECT_EQ(GpuPrebuiltKernelsLoaded(), before) << "sm_" << *arch;
  }
  FLAGS_cinn_like_prebuilt_kernels = false;
  const int off = GpuPrebuiltKernelsLoaded();
  EXPECT_GE(RunTableCases(), 8);
  EXPECT_EQ(GpuPrebuiltKernelsLoaded(), off);
}

TEST(AttentionGpu, FusedKernelMatchesReferenceOnLargeCases) {
  for (const OpCase& c : LargeAttentionCases()) RunOpCase(c, ir::Target::NVGPU(), RunOnGpu);
}

// attention_grad's kernel on grids of both tile widths: 384 blocks of 32 keys (float32,
// dropout, a bool mask, several query tiles), and a grouped causal bfloat16 one of 80 blocks
// of 32 keys, which takes 16-key tiles (partial last tiles, query tiles skipped above the
// diagonal). The logsumexp is positive, as in the op table's cases.
TEST(AttentionGpu, BackwardKernelMatchesReferenceOnLargeCases) {
  const DType f32 = DType::kFloat32, f16 = DType::kFloat16, bf16 = DType::kBFloat16;
  const DType i64 = DType::kInt64;
  const Domain u = Domain::kUniform, lse = Domain::kPositive;
  const std::vector<OpCase> cases = {
      {"attention_grad",
       {f32, f32, f32, f32, f32, f32, DType::kBool, i64, i64},
       {S({4, 12, 100, 64}), S({4, 12, 256, 64}), S({4, 12, 256, 64}), S({4, 12, 100, 64}),
        S({4, 12, 100, 64}), S({4, 12, 100}), S({4, 1, 100, 256}), S({1}), S({1})},
       {{"dropout", 0.1}, {"scale", 0.125}},
       {u, u, u, u, u, lse, u, u, Domain::kIndex}},
      {"attention_grad",
       {bf16, bf16, bf16, bf16, bf16, f32},
       {S({2, 8, 300, 64}), S({2, 4, 300, 64}), S({2, 4, 300, 64}), S({2, 8, 300, 64}),
        S({2, 8, 300, 64}), S({2, 8, 300})},
       {{"causal", true}, {"scale", 0.05}},
       {u, u, u, u, u, lse}},
      // The tensor-core kernel at head dim 32: several key and query tiles with ragged ends,
      // a float16 mask and dropout.
      {"attention_grad",
       {f16, f16, f16, f16, f16, f32, f16, i64, i64},
       {S({2, 6, 200, 32}), S({2, 3, 130, 32}), S({2, 3, 130, 32}), S({2, 6, 200, 32}),
        S({2, 6, 200, 32}), S({2, 6, 200}), S({200, 130}), S({1}), S({1})},
       {{"dropout", 0.2}, {"scale", 0.15}},
       {u, u, u, u, u, lse, u, u, Domain::kIndex}},
  };
  for (const OpCase& c : cases) RunOpCase(c, ir::Target::NVGPU(), RunOnGpu);
}

TEST(AttentionGpu, FusedKernelGivesFullyMaskedRowsZeroAndInfinity) {
  CheckFullyMaskedRows(ir::Target::NVGPU(), RunOnGpu);
}

TEST(AttentionGpu, FusedKernelMatchesReferenceOnABandedMask) {
  CheckBandedMask(ir::Target::NVGPU(), RunOnGpu);
}

TEST(AttentionGpu, FusedKernelReadsAPaddingMaskAsItsKeysTest) {
  // BERT's padding mask, which the graph passes narrow to [B, 1, 1, S]
  // (hlir/pass/narrow_attention_masks.h; NarrowAttentionMasks.* checks the shape), against the
  // reference. 200 keys: tiles not aligned.
  RunProgramCase(PaddingMaskAttention(4, 200), ir::Target::NVGPU(), RunOnGpu);
}

TEST(AttentionGpu, FusedKernelsDropoutMaskIsTheOneRandomUniformDraws) {
  CheckDropoutIsRandomUniformsMask(ir::Target::NVGPU(), RunOnGpu);
}

TEST(AttentionGpu, DecomposedComputeMatchesReference) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_extern_libs = false;
  EXPECT_GE(RunTableCases(), 8);
  CheckFullyMaskedRows(ir::Target::NVGPU(), RunOnGpu);
}

}  // namespace
}  // namespace cinn_like::testing
