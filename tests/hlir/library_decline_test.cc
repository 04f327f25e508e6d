/// \file Library calls declined (ir/library_functions.h): with the flag
/// cinn_like_decline_libraries naming a library, its calls are declined at compile time and the
/// generated kernels run instead, the dump says why, and the results still match the reference
/// interpreter on fresh random data: oneDNN on x86 (run here), cuDNN and cuBLAS on NVGPU
/// (compiled here without a GPU; tests/gpu/fusion_gpu_test.cc runs them on the device).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "ir/flags.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using I64s = std::vector<int64_t>;

/// Sets FLAGS_cinn_like_decline_libraries for the scope.
class DeclineScope {
 public:
  explicit DeclineScope(const std::string& names) : saved_(FLAGS_cinn_like_decline_libraries) {
    FLAGS_cinn_like_decline_libraries = names;
  }
  ~DeclineScope() { FLAGS_cinn_like_decline_libraries = saved_; }

 private:
  std::string saved_;
};

/// A matmul, a linear with bias and a conv2d (a batch_norm + relu epilogue) of `dtype`.
Program LibraryOps(DType dtype) {
  NetBuilder b;
  auto x = b.CreateInput(dtype, S({6, 16}), "x");
  auto w = b.CreateInput(dtype, S({16, 12}), "w");
  auto lw = b.CreateInput(dtype, S({5, 16}), "lw");
  auto lb = b.CreateInput(dtype, S({5}), "lb");
  b.MarkOutput(b.Matmul(x, w));
  b.MarkOutput(b.Linear(x, lw, lb));
  auto img = b.CreateInput(dtype, S({2, 8, 9, 7}), "img");
  auto k = b.CreateInput(dtype, S({4, 8, 3, 3}), "k");
  frontend::Var p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = b.CreateInput(dtype, S({4}), i == 3 ? "var" : "p" + std::to_string(i));
  }
  auto conv = b.Op("conv2d", {img, k}, {{"paddings", I64s{1, 1}}})[0];
  b.MarkOutput(b.Relu(b.BatchNorm(conv, p[0], p[1], p[2], p[3])));
  return *b.Build();
}

/// The fused graph's text and the tactics of `program` compiled for `target` as `name`.
std::pair<std::string, std::string> Dumps(const Program& program, const ir::Target& target,
                                          const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/library_decline_" + name;
  std::filesystem::remove_all(dir);  // no stale dump of an earlier run
  const std::string old = FLAGS_cinn_like_dump_dir;
  FLAGS_cinn_like_dump_dir = dir;
  auto module = CompileProgramModule(program, target, name);
  FLAGS_cinn_like_dump_dir = old;
  EXPECT_TRUE(module.ok()) << module.status();
  auto read = [&](const std::string& file) {
    std::stringstream text;
    text << std::ifstream(dir + "/" + file).rdbuf();
    return text.str();
  };
  std::string groups;  // "<name>.<k>_fusion.txt": k depends on the passes the target runs
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > 11 && file.compare(file.size() - 11, 11, "_fusion.txt") == 0) {
      groups = read(file);
    }
  }
  return {groups, read(name + ".tactics.txt")};
}

TEST(LibraryDecline, OneDnnDeclinedByTheFlagRunsGeneratedKernelsOnX86) {
  const ir::Target x86 = ir::Target::X86();
  DeclineScope decline("onednn");  // names match case-insensitively
  const Program program = LibraryOps(DType::kFloat32);
  auto [groups, tactics] = Dumps(program, x86, "declined_x86");
#ifdef CINN_LIKE_WITH_ONEDNN
  EXPECT_THAT(tactics, HasSubstr("library.declined (oneDNN declined by the flag "
                                 "cinn_like_decline_libraries)"))
      << tactics;
#endif
  EXPECT_THAT(tactics, Not(HasSubstr("library.call"))) << tactics;
  RunProgramCase(program, x86, RunOnX86);
}

TEST(LibraryDecline, CudnnAndCublasDeclinedByTheFlagAreGeneratedOnNvgpu) {
  const ir::Target gpu = ir::Target::NVGPU(90);
  const Program program = LibraryOps(DType::kFloat16);
  {
    DeclineScope decline("cuDNN, cuBLAS");
    auto [groups, tactics] = Dumps(program, gpu, "declined_gpu");
    EXPECT_THAT(tactics, HasSubstr("library.declined (cuDNN declined by the flag")) << tactics;
    EXPECT_THAT(tactics, HasSubstr("library.declined (cuBLAS declined by the flag")) << tactics;
    EXPECT_THAT(tactics, Not(HasSubstr("library.call"))) << tactics;
    // Without the channels-last call, float16 convolutions stay NCHW: no transposes.
    EXPECT_THAT(groups, Not(HasSubstr("= transpose("))) << groups;
  }
  auto [groups, tactics] = Dumps(program, gpu, "called_gpu");
  EXPECT_THAT(tactics, HasSubstr("library.call (cuDNN cinn_like_cudnn_conv2d_nhwc")) << tactics;
  EXPECT_THAT(tactics, HasSubstr("library.call (cuBLAS cinn_like_cublas_matmul")) << tactics;
  EXPECT_THAT(groups, HasSubstr("data_format=\"NHWC\"")) << groups;
}

}  // namespace
}  // namespace cinn_like::testing
