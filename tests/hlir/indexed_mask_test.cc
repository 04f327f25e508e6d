/// \file A padding mask read by index, as Hugging Face's eager attention builds it: the mask
/// [B, S] indexed at (batch, key) through a folded table of row offsets and an arange that
/// PyTorch's indexing wraps and checks, then added to the scores of a softmax. Per element of
/// the [B, H, S, S] softmax the index is computed twice; it must be the plain offset (no select
/// chain over the table, no wrap, no clamp), with results equal to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cinn_like/compile.h"
#include "frontend/net_builder.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

using frontend::NetBuilder;

/// softmax(scores + where(mask[b, key] != 0, 0, lowest)) with the mask read as HF reads it.
/// With `keys_given`, the keys' indices are an input (values unknown: their wrap stays).
frontend::Program IndexedMaskSoftmax(int64_t batch, int64_t heads, int64_t seq,
                                     const std::vector<double>& row_offsets,
                                     bool keys_given = false) {
  NetBuilder b;
  auto scores = b.CreateInput(DType::kFloat32, S({batch, heads, seq, seq}), "scores");
  auto mask = b.CreateInput(DType::kInt64, S({batch, seq}), "attention_mask");
  auto keys = keys_given
                  ? b.CreateInput(DType::kInt64, S({seq}), "keys")
                  : b.Op("arange", {}, {{"end", static_cast<double>(seq)}, {"dtype", "int64"}})[0];
  auto checked = b.Op("check_index", {b.Reshape(keys, {1, 1, 1, seq})},
                      {{"low", -seq}, {"high", seq}, {"what", "index into a dim of size seq"}})[0];
  auto zero = b.Fill({1}, 0.0, DType::kInt64);
  auto wrapped =
      b.Where(b.Less(checked, zero), b.Add(checked, b.Fill({1}, seq, DType::kInt64)), checked);
  auto offsets = b.Op("constant", {},
                      {{"dtype", "int64"},
                       {"shape", std::vector<int64_t>{batch, 1, 1, 1}},
                       {"values", row_offsets}})[0];
  auto flat = b.Reshape(b.Add(offsets, wrapped), {batch * seq});
  auto kept = b.Op("gather", {b.Reshape(b.Cast(mask, DType::kBool), {batch * seq}), flat},
                   {{"axis", int64_t{0}}})[0];
  auto additive = b.Where(b.Reshape(kept, {batch, 1, 1, seq}), b.Fill({1}, 0.0),
                          b.Fill({1}, -3.4028234663852886e38));
  b.MarkOutput(b.Softmax(b.Add(scores, additive), 3));
  return *b.Build();
}

/// The kernels of the CUDA source (what follows the first kernel's signature).
std::string Kernels(const frontend::Program& program) {
  auto target = ir::Target::Parse("cuda -arch=sm_90");
  EXPECT_TRUE(target.ok()) << target.status();
  auto source = ProgramSource(program, *target, "masked");
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return "";
  const size_t k = source->find("__global__ void");
  return k == std::string::npos ? "" : source->substr(k);
}

TEST(IndexedMask, TheMaskIsReadAtItsPlainOffsetAndMatchesTheReference) {
  constexpr int64_t kBatch = 4, kHeads = 2, kSeq = 64;
  std::vector<double> offsets;
  for (int64_t i = 0; i < kBatch; ++i) offsets.push_back(static_cast<double>(i * kSeq));
  const frontend::Program program = IndexedMaskSoftmax(kBatch, kHeads, kSeq, offsets);
  const std::string kernels = Kernels(program);
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.find(" == 1 ?"), std::string::npos) << kernels;   // the table's chain
  EXPECT_EQ(kernels.find(" < 0LL ?"), std::string::npos) << kernels;  // the wrap
  EXPECT_EQ(kernels.find("min("), std::string::npos) << kernels;      // the clamp
  RunProgramCase(program, ir::Target::X86(), RunOnX86);
  // A table that is not affine in its index stays a chain, with the same results.
  std::vector<double> shuffled = {2 * kSeq, 0, 3 * kSeq, kSeq};
  const frontend::Program permuted = IndexedMaskSoftmax(kBatch, kHeads, kSeq, shuffled);
  EXPECT_NE(Kernels(permuted).find(" == 1 ?"), std::string::npos);
  RunProgramCase(permuted, ir::Target::X86(), RunOnX86);
  // Keys whose values are not known keep PyTorch's wrap and clamp: the text looked for above.
  const std::string given = Kernels(IndexedMaskSoftmax(kBatch, kHeads, kSeq, offsets, true));
  EXPECT_NE(given.find(" < 0LL ?"), std::string::npos) << given;
  EXPECT_NE(given.find("min("), std::string::npos) << given;
}

}  // namespace
}  // namespace cinn_like::testing
