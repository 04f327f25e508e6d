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

using ::testing::AllOf;
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
  EXPECT_THAT(ReadFile(dir / "myadd.host.ll"), HasSubstr("define i32 @myadd(ptr"));
  std::filesystem::remove_all(dir);
}

TEST(Flags, SetFlagRejectsUnknownNamesAndBadValues) {
  std::string error;
  EXPECT_FALSE(SetFlag("cinn_like_no_such_flag", "1", &error));
  EXPECT_THAT(error, AllOf(HasSubstr("unknown flag 'cinn_like_no_such_flag'"),
                           HasSubstr("cinn_like_dump_dir"), HasSubstr("cinn_like_fast_math")));
  EXPECT_FALSE(SetFlag("cinn_like_nvrtc_compile_to_cubin", "maybe", &error));
  EXPECT_THAT(error,
              HasSubstr("invalid value 'maybe' for flag 'cinn_like_nvrtc_compile_to_cubin'"));
  EXPECT_FALSE(SetFlag("cinn_like_fusion", "", &error));
  EXPECT_THAT(error, HasSubstr("of type bool"));
  EXPECT_TRUE(SetFlag("cinn_like_fusion", "true", &error)) << error;
}

// gflags' and glog's flags are not ours: "flagfile" reads a file (and exits the process when it
// cannot), "fromenv" reads the environment, "v" changes the host's logging.
TEST(Flags, SetFlagRefusesOtherLibrariesFlags) {
  gflags::CommandLineFlagInfo v_before, v_after;
  bool has_v = gflags::GetCommandLineFlagInfo("v", &v_before);  // glog's, when built on gflags
  for (const char* name : {"flagfile", "fromenv", "tryfromenv", "undefok", "v", "logtostderr",
                           "minloglevel", "log_dir", "cinn_like", ""}) {
    std::string error;
    EXPECT_FALSE(SetFlag(name, name == std::string("flagfile") ? "/nonexistent" : "1", &error))
        << name;
    EXPECT_THAT(error, AllOf(HasSubstr(std::string("unknown flag '") + name + "'"),
                             HasSubstr("only cinn_like's flags can be set")));
  }
  if (has_v) {
    ASSERT_TRUE(gflags::GetCommandLineFlagInfo("v", &v_after));
    EXPECT_EQ(v_after.current_value, v_before.current_value);
  }
}

}  // namespace
}  // namespace cinn_like
