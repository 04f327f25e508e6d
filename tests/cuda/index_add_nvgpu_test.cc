/// \file index_add's GPU scatter without a GPU: the index is linked once by a kernel of its own,
/// a warp per position (whether a position is its index's first, the next position of the same
/// index, how many follow), and the scatter's threads follow those links instead of comparing
/// their index with every other one per column; the module compiles to PTX. tests/gpu runs it
/// against the reference (the op table and the training tests' tied embedding).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// The text of the kernel of `src` whose text holds `writes`: from its signature to the next
/// kernel's.
std::string Kernel(const std::string& src, const std::string& writes) {
  size_t at = src.find(writes);
  if (at == std::string::npos) return "";
  size_t begin = src.rfind("__global__", at);
  size_t end = src.find("__global__", at);
  return src.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

TEST(IndexAddNVGPU, TheScatterFollowsTheIndexLinksInsteadOfComparingEveryIndex) {
  frontend::NetBuilder b;
  auto table = b.CreateInput(DType::kFloat32, S({50, 8}), "table");
  auto ids = b.CreateInput(DType::kInt64, S({30}), "ids");
  auto rows = b.CreateInput(DType::kFloat32, S({30, 8}), "rows");
  b.MarkOutput(b.Op("index_add", {table, ids, rows}, {{"axis", int64_t{0}}})[0]);
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  auto module = CompileProgramModule(*program, ir::Target::NVGPU(90), "embedding_grad");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode(*module);
  ASSERT_TRUE(src.ok()) << src.status();
  // The links: one kernel, a warp per position (rows of threadIdx.y), its lanes comparing it
  // with every 32nd other and combining their counts by shuffles.
  const std::string links = Kernel(*src, "ids, int32_t* __restrict__ index_add_0_links");
  ASSERT_FALSE(links.empty()) << *src;
  EXPECT_THAT(links, HasSubstr("threadIdx.y"));
  EXPECT_THAT(links, HasSubstr("cinn_like_block_reduce_sum<32>"));
  EXPECT_THAT(links, HasSubstr("cinn_like_block_reduce_min<32>"));
  // The scatter: the first position's thread walks the links (a loop as long as the index's
  // count), the others do nothing; no loop over every position.
  const std::string scatter = Kernel(*src, "scatter_block");
  ASSERT_FALSE(scatter.empty()) << *src;
  EXPECT_THAT(scatter, HasSubstr("step <"));
  EXPECT_THAT(scatter, HasSubstr("_links["));
  EXPECT_THAT(scatter, Not(HasSubstr("k2")));
  backends::nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "embedding_grad");
  EXPECT_TRUE(ptx.ok()) << ptx.status();
}

TEST(IndexAddNVGPU, ATableComputedForTheScatterIsComputedInItsOutput) {
  // A tied embedding's product and an untied one's zeros are stored in their index_add's output
  // and added to there: no table-sized temporary and no copy for them. The product that a
  // column sum reads as well keeps its buffer and is copied (ir/in_place_extern.h).
  auto module =
      CompileProgramModule(EmbeddingGradients(1000, 64, 256), ir::Target::NVGPU(90), "tables");
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string entry = ir::ToString(*module->functions[0]);
  EXPECT_EQ(Occurrences(entry, "[float32 * 1000 * 64] in global"), 1) << entry;
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode(*module);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(Occurrences(*src, "int64_t e = "), 1) << *src;  // the one copy
  backends::nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "tables");
  EXPECT_TRUE(ptx.ok()) << ptx.status();
}

}  // namespace
}  // namespace cinn_like::testing
