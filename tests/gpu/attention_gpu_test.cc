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

TEST(AttentionGpu, FusedKernelReadsHfLayoutsInPlace) {
  // HF's [B, S, H, D] operands read where they lie and the output written [B, S, H, D]
  // (hlir/pass/attention_layout.h; FoldLayoutsIntoAttention.* checks the graph), grouped-query
  // heads read without repeat_kv's copy, a padding mask's row staged with each key tile: every
  // element dtype, the tensor-core and CUDA-core forms, key counts off the tiles.
  struct Case {
    DType t;
    int64_t batch, seq, heads, kv_heads, dim;
    bool padded, causal;
    double tol;
  };
  const Case cases[] = {{DType::kFloat32, 2, 200, 4, 4, 64, true, false, 1e-4},
                        {DType::kFloat32, 2, 130, 8, 2, 64, false, true, 1e-4},
                        {DType::kFloat32, 2, 100, 2, 2, 128, true, false, 1e-4},  // CUDA cores
                        {DType::kFloat16, 2, 200, 4, 4, 64, true, false, 5e-3},
                        {DType::kFloat16, 3, 77, 8, 2, 128, false, true, 5e-3},
                        {DType::kBFloat16, 2, 72, 8, 2, 128, true, true, 3e-2}};
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(hlir::DTypeName(c.t), " S ", c.seq, " H ", c.heads, "/", c.kv_heads,
                              " D ", c.dim, c.padded ? " padded" : "", c.causal ? " causal" : ""));
    RunProgramCase(
        HfLayoutAttention(c.t, c.batch, c.seq, c.heads, c.kv_heads, c.dim, c.padded, c.causal),
        ir::Target::NVGPU(), RunOnGpu, c.tol);
  }
}

TEST(AttentionGpu, FusedKernelReadsGPT2sPackedProjectionInPlace) {
  // q, k and v as heads of one [B, S, 3 H D] projection (q_heads, k_heads, v_heads).
  RunProgramCase(PackedQkvAttention(DType::kFloat32, 2, 150, 4, 64), ir::Target::NVGPU(), RunOnGpu);
  RunProgramCase(PackedQkvAttention(DType::kFloat16, 2, 150, 4, 64), ir::Target::NVGPU(), RunOnGpu,
                 5e-3);
}

TEST(AttentionGpu, FusedKernelReadsAndWritesEveryLayout) {
  // q [S, B, H, D] (nn.MultiheadAttention's, q_perm [1, 2, 0, 3]), k and v as heads [2, 4) and
  // [4, 6) of one [B, S, 6, D] value, out written [S, B, H, D] (out_perm [2, 0, 1, 3], not its
  // own inverse): the strides and offsets of every operand against the reference.
  for (DType t : {DType::kFloat32, DType::kFloat16}) {
    frontend::NetBuilder b;
    auto q = b.CreateInput(t, S({70, 2, 4, 64}), "q");
    auto kv = b.CreateInput(t, S({2, 90, 6, 64}), "kv");
    const std::vector<int64_t> bshd{0, 2, 1, 3};
    auto made = b.Op("attention", {q, kv, kv},
                     {{"q_perm", std::vector<int64_t>{1, 2, 0, 3}},
                      {"k_perm", bshd},
                      {"v_perm", bshd},
                      {"out_perm", std::vector<int64_t>{2, 0, 1, 3}},
                      {"k_heads", std::vector<int64_t>{2, 2}},
                      {"v_heads", std::vector<int64_t>{4, 2}}});
    b.MarkOutput(made[0]);
    b.MarkOutput(made[1]);
    auto program = b.Build();
    ASSERT_TRUE(program.ok()) << program.status();
    SCOPED_TRACE(hlir::DTypeName(t));
    RunProgramCase(*program, ir::Target::NVGPU(), RunOnGpu, t == DType::kFloat16 ? 5e-3 : 1e-4);
  }
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
