/// \file The prebuilt library kernels (backends/cuda/prebuilt_kernels.h) without a GPU: the file
/// round-trips and refuses damage with a message; the build's own file holds a CUBIN of every
/// prebuilt attention instance for every arch the build names, each compiled from the source
/// NVRTC would compile today; a module whose library kernel is prebuilt leaves it out of its
/// translation units, and the flag cinn_like_prebuilt_kernels (or saving sources) keeps it in.
/// On the GPU machine tests/gpu/attention_gpu_test.cc runs the prebuilt kernels.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/library_kernels.h"
#include "backends/cuda/prebuilt_kernels.h"
#include "hlir/ops/attention.h"
#include "ir/flags.h"
#include "runtime/files.h"
#include "tests/cuda/fused_source.h"

namespace cinn_like::testing {
namespace {

using backends::PrebuiltKernel;
using ::testing::HasSubstr;

std::vector<PrebuiltKernel> TwoKernels() {
  return {{"k_one", 90, 11,
           std::string("\x7f"
                       "ELF one",
                       8)},
          {"k_two", 80, 22, std::string(300, 'x')}};
}

TEST(PrebuiltKernels, FileRoundTrips) {
  const std::string bytes = backends::EncodePrebuiltKernels(TwoKernels());
  auto back = backends::DecodePrebuiltKernels(bytes, "f.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*back)[i].name, TwoKernels()[i].name);
    EXPECT_EQ((*back)[i].arch, TwoKernels()[i].arch);
    EXPECT_EQ((*back)[i].source_hash, TwoKernels()[i].source_hash);
    EXPECT_EQ((*back)[i].image, TwoKernels()[i].image);
  }
}

TEST(PrebuiltKernels, DamagedFilesAreRefusedWithAMessage) {
  const std::string good = backends::EncodePrebuiltKernels(TwoKernels());
  auto refused = [](const std::string& bytes, const std::string& why) {
    auto r = backends::DecodePrebuiltKernels(bytes, "f.bin");
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("f.bin")) << why;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(why));
  };
  refused("not a kernel file", "CLPKERN1");
  refused(good.substr(0, 20), "index");
  refused(good.substr(0, good.size() - 1), "ends in the image of k_two");
  refused(good + "z", "bytes follow");
  std::string image = good;
  image[image.size() - 1] ^= 1;  // a byte of the last image
  refused(image, "image of k_two for sm_80 fails its checksum");
  std::string index = good;
  index[17] ^= 1;  // a byte of the first name (after magic, count and its length)
  refused(index, "index checksum");
}

#ifdef CINN_LIKE_PREBUILT_ARCHS
std::vector<int> BuiltArchs() {
  std::vector<int> archs;
  for (absl::string_view a : absl::StrSplit(CINN_LIKE_PREBUILT_ARCHS, ',')) {
    int arch = 0;
    EXPECT_TRUE(absl::SimpleAtoi(a, &arch)) << a;
    archs.push_back(arch);
  }
  return archs;
}

TEST(PrebuiltKernels, TheBuildsFileHoldsEveryInstanceFromTodaysSource) {
  const std::string path = backends::PrebuiltKernelsPath();
  auto bytes = runtime::ReadWholeFile(path);
  ASSERT_TRUE(bytes.has_value()) << "no prebuilt kernel file at " << path;
  auto file = backends::DecodePrebuiltKernels(*bytes, path);
  ASSERT_TRUE(file.ok()) << file.status();
  const std::vector<std::string> names = hlir::ops::PrebuiltAttentionKernels();
  ASSERT_GE(names.size(), 36u);
  for (int arch : BuiltArchs()) {
    for (const std::string& name : names) {
      auto source = backends::LibraryUnitSource(name);
      ASSERT_TRUE(source.ok()) << source.status();
      auto image = backends::PrebuiltKernelImage(name, arch, *source);
      ASSERT_TRUE(image.has_value()) << name << " for sm_" << arch << " is missing or stale";
      EXPECT_EQ(image->substr(0, 4),
                "\x7f"
                "ELF")
          << name;  // a CUBIN
      // Another source (the template changed since the file was built) is not served.
      EXPECT_FALSE(backends::PrebuiltKernelImage(name, arch, *source + " ").has_value());
    }
  }
  EXPECT_EQ(file->size(), names.size() * BuiltArchs().size());
}

/// Float16 attention with head dim 64 and no mask, whose kernel is prebuilt, then a relu (a
/// generated kernel) unless `alone`.
ir::Module AttentionModule(bool alone = false) {
  NetBuilder b;
  auto q = b.CreateInput(DType::kFloat16, S({2, 4, 128, 64}), "q");
  auto k = b.CreateInput(DType::kFloat16, S({2, 4, 128, 64}), "k");
  auto v = b.CreateInput(DType::kFloat16, S({2, 4, 128, 64}), "v");
  auto out = b.Op("attention", {q, k, v}, {{"causal", true}})[0];
  b.MarkOutput(alone ? out : b.Relu(out));
  auto module = CompileProgramModule(*b.Build(), ir::Target::NVGPU(90), "prebuilt_attention");
  EXPECT_TRUE(module.ok()) << module.status();
  return *module;
}

TEST(PrebuiltKernels, APrebuiltLibraryKernelIsLeftOutOfTheUnits) {
  const ir::Module module = AttentionModule();
  const std::vector<std::string> library = backends::LibraryKernelNames(module);
  ASSERT_EQ(library.size(), 1u);
  const std::string& kernel = library[0];
  auto source = backends::LibraryUnitSource(kernel);
  ASSERT_TRUE(source.ok());
  EXPECT_TRUE(backends::PrebuiltKernelImage(kernel, 90, *source).has_value()) << kernel;
  auto without = backends::CodeGenCudaDev::GenerateUnits(module, 4, {kernel});
  ASSERT_TRUE(without.ok()) << without.status();
  for (const backends::CudaUnit& unit : *without) {
    EXPECT_THAT(unit.kernels, ::testing::Not(::testing::Contains(kernel)));
    EXPECT_EQ(unit.source.find("cinn_like_attention::"), std::string::npos);
  }
  auto with = backends::CodeGenCudaDev::GenerateUnits(module, 4);
  ASSERT_TRUE(with.ok());
  EXPECT_THAT((*with)[0].kernels, ::testing::Contains(kernel));
}

TEST(PrebuiltKernels, BuildLoadsThemUnlessTheFlagOrSavedSourcesSayOtherwise) {
  const ir::Module module = AttentionModule();
  auto prebuilt_loaded = [&](bool flag, bool save) {
    gflags::FlagSaver saver;
    FLAGS_cinn_like_prebuilt_kernels = flag;
    const std::string dir = ::testing::TempDir() + "/prebuilt_saved";
    if (save) FLAGS_cinn_like_source_save_path = dir;
    auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
    EXPECT_TRUE(compiler.ok());
    (void)(*compiler)->Build(module);  // without a GPU the load fails after NVRTC
    return (*compiler)->last_build_times().prebuilt_kernels;
  };
  EXPECT_EQ(prebuilt_loaded(true, false), 1);
  EXPECT_EQ(prebuilt_loaded(false, false), 0);
  EXPECT_EQ(prebuilt_loaded(true, true), 0);
  {
    // Built without fast math: a fast-math compile does not take them.
    gflags::FlagSaver saver;
    FLAGS_cinn_like_fast_math = true;
    EXPECT_EQ(prebuilt_loaded(true, false), 0);
  }

  // Nothing left for NVRTC: no unit is compiled (there was once an empty one, then none and a
  // read past the end).
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok());
  absl::Status built = (*compiler)->Build(AttentionModule(/*alone=*/true));
  if (!built.ok()) EXPECT_THAT(std::string(built.message()), HasSubstr("loading the CUDA module"));
  EXPECT_EQ((*compiler)->last_build_times().prebuilt_kernels, 1);
  EXPECT_LT((*compiler)->last_build_times().nvrtc_ms, 1.0);
}
#endif  // CINN_LIKE_PREBUILT_ARCHS

}  // namespace
}  // namespace cinn_like::testing
