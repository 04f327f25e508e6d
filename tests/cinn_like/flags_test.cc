/// \file Debug flags: the dump directory receives every lowering stage and the host LLVM IR;
/// flags can be set by name with a clear error for unknown names and bad values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/compiler.h"
#include "ir/flags.h"
#include "tools/examples.h"

namespace cinn_like {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Flags, DumpDirReceivesEveryLoweringPassAndTheHostIR) {
  auto dir =
      std::filesystem::temp_directory_path() / ("cinn_like_dump_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::string error;
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", dir.string(), &error)) << error;
  auto ex = examples::Find("myadd");
  auto func = ex->build(ir::Target::X86());
  ASSERT_TRUE(func.ok()) << func.status();
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  ASSERT_TRUE((*compiler)->Build({"myadd", ir::Target::X86(), {*func}}).ok());
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", "", &error));

  const char* passes[] = {
      "00_schedule",        "01_simplify",  "02_vectorize_reduce", "03_remove_redundant_guards",
      "04_partition_loops", "05_vectorize", "06_unroll",           "07_flatten_storage",
      "08_simplify_final"};
  for (const char* p : passes) {
    auto file = dir / (std::string("myadd.") + p + ".ir");
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
  }
  EXPECT_THAT(ReadFile(dir / "myadd.00_schedule.ir"), HasSubstr("C[((i_outer * 64) + i_inner)]"));
  EXPECT_THAT(ReadFile(dir / "myadd.host.ll"), HasSubstr("define i32 @cinn_like.entry.myadd(ptr"));
  std::filesystem::remove_all(dir);
}

TEST(Flags, SetFlagRejectsUnknownNamesAndBadValues) {
  std::string error;
  EXPECT_FALSE(SetFlag("cinn_like_no_such_flag", "1", &error));
  EXPECT_EQ(error, "unknown flag 'cinn_like_no_such_flag'");
  EXPECT_FALSE(SetFlag("cinn_like_nvrtc_compile_to_cubin", "maybe", &error));
  EXPECT_THAT(error,
              HasSubstr("invalid value 'maybe' for flag 'cinn_like_nvrtc_compile_to_cubin'"));
}

}  // namespace
}  // namespace cinn_like
