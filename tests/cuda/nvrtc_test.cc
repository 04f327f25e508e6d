/// \file NVRTC and the CUDA runtime without a GPU: PTX and CUBIN, and the errors a user sees.
#include "backends/cuda/nvrtc_compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ir/flags.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_runtime.h"

namespace cinn_like::backends::nvrtc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kScaleSource[] =
    "extern \"C\" __global__ void __launch_bounds__(128) scale_kernel(const float* __restrict__ "
    "x,\n"
    "                                                        float* __restrict__ y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = 2.0f * x[i];\n"
    "}\n";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Nvrtc, VersionAndSupportedArchs) {
  EXPECT_FALSE(Compiler::Version().empty());
  EXPECT_NE(Compiler::Version().find('.'), std::string::npos) << Compiler::Version();
  std::vector<int> archs = Compiler::SupportedArchs();
  ASSERT_FALSE(archs.empty());
  EXPECT_TRUE(std::is_sorted(archs.begin(), archs.end()));
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  EXPECT_TRUE(Compiler::CheckArch(90, "the target").ok());
}

TEST(Nvrtc, CompilesToPtx) {
  Compiler nvrtc;
  auto ptx = nvrtc.Compile(kScaleSource, 90, /*to_cubin=*/false, "scale");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr(".entry scale_kernel"));
  EXPECT_THAT(*ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(*ptx, HasSubstr(".maxntid 128"));  // __launch_bounds__ reached the PTX
  EXPECT_THAT(*ptx, HasSubstr("%ctaid.x"));
  EXPECT_EQ(ptx->find('\0'), std::string::npos) << "the PTX keeps its terminating NUL";
}

TEST(Nvrtc, CompilesToCubinElf) {
  Compiler nvrtc;
  auto cubin = nvrtc.Compile(kScaleSource, 90, /*to_cubin=*/true, "scale");
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  ASSERT_GT(cubin->size(), 4u);
  EXPECT_EQ(cubin->substr(0, 4), std::string("\x7f"
                                             "ELF"));
  EXPECT_NE(cubin->find("scale_kernel"), std::string::npos);  // in the symbol table
}

TEST(Nvrtc, SavesSourceAndPtxToTheSavePath) {
  std::string dir = ::testing::TempDir() + "/cinn_like_nvrtc_save/nested";
  std::filesystem::remove_all(::testing::TempDir() + "/cinn_like_nvrtc_save");
  std::string saved = FLAGS_cinn_like_source_save_path;
  FLAGS_cinn_like_source_save_path = dir;
  Compiler nvrtc;
  auto ptx = nvrtc.Compile(kScaleSource, 90, /*to_cubin=*/false, "saved_scale");
  FLAGS_cinn_like_source_save_path = saved;
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_EQ(ReadFile(dir + "/saved_scale.cu"), kScaleSource);
  EXPECT_EQ(ReadFile(dir + "/saved_scale.ptx"), *ptx);
}

TEST(NvrtcError, SyntaxErrorQuotesTheLogAndTheLine) {
  std::string source =
      "extern \"C\" __global__ void broken(float* a) {\n"
      "  int i = threadIdx.x;\n"
      "  a[i] = 1.0f +;\n"  // line 3
      "}\n";
  Compiler nvrtc;
  auto out = nvrtc.Compile(source, 90, /*to_cubin=*/false, "broken");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(out.status().message());
  EXPECT_THAT(message, HasSubstr("NVRTC failed to compile broken.cu:\n"));
  EXPECT_THAT(message, HasSubstr("broken.cu(3): error"));  // NVRTC's own log
  EXPECT_THAT(message, HasSubstr("offending source:\n  3 |   a[i] = 1.0f +;"));
  EXPECT_THAT(message, Not(HasSubstr("  2 |")));  // only the offending line is quoted
}

TEST(NvrtcError, UnsupportedArchNamesArchOriginVersionAndRange) {
  absl::Status s = Compiler::CheckArch(30, "the target");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  std::string message(s.message());
  EXPECT_THAT(message, HasSubstr("CUDA arch sm_30 (from the target) is not supported by NVRTC " +
                                 Compiler::Version()));
  EXPECT_THAT(message, HasSubstr("sm_75"));
  std::vector<int> archs = Compiler::SupportedArchs();
  EXPECT_THAT(message, HasSubstr("(supported: sm_" + std::to_string(archs.front()) + " to sm_" +
                                 std::to_string(archs.back()) + ")"));

  Compiler nvrtc;
  auto out = nvrtc.Compile(kScaleSource, 30, /*to_cubin=*/true, "scale");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("sm_30 (from the caller)"));
  EXPECT_THAT(std::string(out.status().message()), Not(HasSubstr("--gpu-architecture")));
}

TEST(CudaRuntimeError, WithoutADriverCallsFailWithAMessage) {
  const bool have_driver = runtime::cuda::Driver().ok();
  void* p = nullptr;
  int rc = cinn_like_cuda_malloc(&p, 16);
  if (have_driver) {
    if (rc == 0) EXPECT_EQ(cinn_like_cuda_free(p), 0) << cinn_like_get_last_error();
  } else {
    EXPECT_NE(rc, 0);
    EXPECT_EQ(p, nullptr);
    EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("libcuda"));
    EXPECT_THAT(std::string(runtime::cuda::Driver().status().message()),
                HasSubstr("no CUDA driver: dlopen(libcuda.so.1) failed"));
    EXPECT_NE(cinn_like_cuda_synchronize(), 0);
    EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("cinn_like_cuda_synchronize"));
  }
  // An empty tensor launches nothing and succeeds, driver or not.
  EXPECT_EQ(cinn_like_cuda_launch(nullptr, "empty", 0, 1, 1, 64, 1, 1, 0, nullptr, nullptr, 0), 0);
  EXPECT_EQ(cinn_like_cuda_launch(nullptr, "empty", 4, -1, 1, 64, 1, 1, 0, nullptr, nullptr, 0), 0);
  // A missing handle names the kernel and the launch shape.
  EXPECT_EQ(cinn_like_cuda_launch(nullptr, "nohandle", 2, 1, 1, 64, 1, 1, 0, nullptr, nullptr, 0),
            -1);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("launch of kernel nohandle with grid (2, 1, 1) block (64, 1, 1) failed"));
  // The realigned launch: an empty tensor launches nothing; a table naming no argument, or an
  // alignment no power of two, is refused before the driver is asked.
  void* pointer = nullptr;
  void* args[] = {&pointer};
  cinn_like_aligned_arg bad_index{1, 16, 0, 64};
  EXPECT_EQ(cinn_like_cuda_launch_realigned(nullptr, "empty", 0, 1, 1, 64, 1, 1, 0, nullptr, args,
                                            1, &bad_index, 1),
            0);
  EXPECT_EQ(cinn_like_cuda_launch_realigned(nullptr, "k", 2, 1, 1, 64, 1, 1, 0, nullptr, args, 1,
                                            &bad_index, 1),
            -1);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("realigned launch of kernel k: aligned argument 0 (index 1, alignment 16, "
                        "64 bytes) does not describe one of its 1 arguments"));
  cinn_like_aligned_arg bad_alignment{0, 12, 0, 64};
  EXPECT_EQ(cinn_like_cuda_launch_realigned(nullptr, "k", 2, 1, 1, 64, 1, 1, 0, nullptr, args, 1,
                                            &bad_alignment, 1),
            -1);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("alignment 12"));
}

}  // namespace
}  // namespace cinn_like::backends::nvrtc
