/// \file The shared-memory schedules in CUDA C: `__shared__` tiles, `__syncthreads()` barriers
/// around each k slice, a register accumulator array, and NVRTC compiling it for sm_90.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "tests/cuda/index_names.h"
#include "tools/examples.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

std::string MatmulSharedSource(int size, const examples::MatmulSharedConfig& config) {
  auto f = examples::BuildMatmulShared(ir::Target::NVGPU(90), size, config, "mm");
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return "";
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  auto source = (*compiler)->GetSourceCode({"mm", ir::Target::NVGPU(90), {*f}});
  EXPECT_TRUE(source.ok()) << source.status();
  return source.ok() ? *source : "";
}

TEST(CodeGenSchedule, SharedTilesBarriersAndRegisterAccumulators) {
  std::string src = MatmulSharedSource(1024, {});
  EXPECT_THAT(src, HasSubstr("__launch_bounds__(256) mm_kernel("));
  EXPECT_THAT(src, HasSubstr("__shared__ float A_shared[1024];"));
  EXPECT_THAT(src, HasSubstr("__shared__ float B_shared[1024];"));
  EXPECT_THAT(src, HasSubstr("  float C_local[64];\n"));
  EXPECT_THAT(src, HasSubstr("int32_t i_outer = blockIdx.y;"));
  EXPECT_THAT(src, HasSubstr("int32_t j_inner_inner = threadIdx.x;"));
  // Thread-strided tiles: neighbouring threads read neighbouring B_shared columns and store
  // neighbouring C columns.
  std::string a_row = testing::CudaIndexName(src, "i_inner_inner * 8");
  EXPECT_THAT(src, HasSubstr("C_local[1] = C_local[1] + A_shared[" + a_row + "] * " +
                             "B_shared[j_inner_inner + 16];"))
      << src;
  std::string block_row = testing::CudaIndexName(src, "i_outer * 128");
  std::string block_col = testing::CudaIndexName(src, "j_outer * 128");
  std::string c_row = testing::CudaIndexName(src, "(" + block_row + " + i_inner_inner) * 1024");
  EXPECT_THAT(
      src, HasSubstr("C[" + c_row + " + (" + block_col + " + (j_inner_inner + 16))] = C_local[1];"))
      << src;
  // Register accumulators: constant indices only (the tile loops are unrolled).
  EXPECT_THAT(src, HasSubstr("C_local[63] = C_local[63] + A_shared["));
  // Two barriers per k slice: after the copies, after the products.
  size_t first = src.find("__syncthreads();");
  ASSERT_NE(first, std::string::npos);
  size_t second = src.find("__syncthreads();", first + 1);
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(src.find("__syncthreads();", second + 1), std::string::npos);
  EXPECT_LT(src.rfind("B_shared[", first), first);
  EXPECT_NE(src.find("C_local[0] = C_local[0] + A_shared[", first), std::string::npos);
  EXPECT_LT(src.find("C_local[0] = C_local[0] + A_shared[", first), second);
}

TEST(CodeGenSchedule, StorageAlignPadsTheSharedRows) {
  std::string src = MatmulSharedSource(256, {64, 4, 8, /*shared_row_pad=*/1});
  EXPECT_THAT(src, HasSubstr("__shared__ float A_shared[576];"));  // 64 rows of 8 + 1
  EXPECT_THAT(src, HasSubstr("__shared__ float B_shared[520];"));  // 8 rows of 64 + 1
  EXPECT_THAT(src, HasSubstr(" * 9 + "));
}

TEST(CodeGenSchedule, PartialTilesAreGuardedOutsideTheBarriers) {
  std::string src = MatmulSharedSource(300, {64, 4, 8});
  EXPECT_THAT(src, HasSubstr("if ("));
  // Every barrier sits in the k loop's body, never inside a guard: the lines that open the
  // scopes around it, up to the k loop, are plain scopes (the shared tiles'), no `if`/`else`.
  std::vector<std::string> lines = absl::StrSplit(src, '\n');
  auto indent = [](const std::string& l) { return l.find_first_not_of(' '); };
  int barriers = 0;
  for (size_t at = 0; at < lines.size(); ++at) {
    if (lines[at].find("__syncthreads();") == std::string::npos) continue;
    ++barriers;
    size_t depth = indent(lines[at]);
    for (size_t up = at; up-- > 0 && depth > 0;) {
      if (lines[up].empty() || indent(lines[up]) >= depth) continue;
      depth = indent(lines[up]);
      const std::string opener = lines[up].substr(depth);
      if (opener.rfind("for (int32_t C_local_k_outer", 0) == 0) break;
      EXPECT_EQ(opener, "{") << "the barrier of line " << at + 1 << " in\n" << src;
    }
  }
  EXPECT_EQ(barriers, 2);
}

TEST(CodeGenSchedule, NvrtcCompilesTheSharedMatmulForSm90) {
  for (auto [size, config] : {std::pair{1024, examples::MatmulSharedConfig{}},
                              std::pair{1024, examples::MatmulSharedConfig{64, 4, 16, 1, false}},
                              std::pair{300, examples::MatmulSharedConfig{64, 4, 8}}}) {
    std::string src = MatmulSharedSource(size, config);
    ASSERT_FALSE(src.empty());
    nvrtc::Compiler nvrtc;
    auto ptx = nvrtc.Compile(src, 90, /*to_cubin=*/false, "mm");
    ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << src;
    EXPECT_THAT(*ptx, HasSubstr(".shared"));
    EXPECT_THAT(*ptx, HasSubstr("bar.sync"));
  }
}

}  // namespace
}  // namespace cinn_like::backends
