/// \file Debug flags: the dump directory receives every lowering stage and the host LLVM IR,
/// never through a planted link and never in a directory others can change; flags can be set by
/// name with a clear error for unknown names and bad values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "backends/compiler.h"
#include "cinn_like/compile.h"
#include "frontend/net_builder.h"
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

  const char* passes[] = {"00_schedule",
                          "01_simplify",
                          "02_vectorize_reduce",
                          "03_block_reductions",
                          "04_remove_redundant_guards",
                          "05_partition_loops",
                          "06_vectorize",
                          "07_unroll",
                          "08_flatten_storage",
                          "09_simplify_final"};
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

TEST(Flags, SafeFileNameKeepsNamesInsideTheirFolder) {
  const std::pair<const char*, const char*> cases[] = {
      {"myadd.00_schedule.ir", "myadd.00_schedule.ir"},
      {"f-1.host.ll", "f-1.host.ll"},
      {"../../x", "_._.__x"},
      {"a/b", "a_b"},
      {"..", "_."},
      {".hidden", "_hidden"},
      {"a..b", "a._b"},
      {"/etc/passwd", "_etc_passwd"},
      {"c:\\x y", "c__x_y"},
      {"", "_"},
  };
  for (auto& [name, safe] : cases) EXPECT_EQ(SafeFileName(name), safe) << name;
}

/// Every regular file under `root`, recursively.
std::vector<std::filesystem::path> FilesUnder(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  for (auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  return files;
}

// An entry name is the host's (cinn_like_compile's `name`): its dump files stay in the dump
// directory whatever it holds.
TEST(Flags, DumpFilesOfAnyEntryNameStayInTheDumpDir) {
  auto root =
      std::filesystem::temp_directory_path() / ("cinn_like_escape_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  auto dir = root / "a" / "b" / "dump";
  std::string error;
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", dir.string(), &error)) << error;
  frontend::NetBuilder b;
  b.MarkOutput(b.Relu(b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({8}), "x")));
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  for (const char* name : {"../../escape", "../../../../../escape_far", "sub/dir", "/abs"}) {
    auto compiled = CompileProgram(*program, ir::Target::X86(), name);
    ASSERT_TRUE(compiled.ok()) << name << ": " << compiled.status();
    EXPECT_TRUE((*compiled)->Lookup(name).ok()) << name;  // the entry keeps its name
  }
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", "", &error));
  auto files = FilesUnder(root);
  EXPECT_FALSE(files.empty());
  for (auto& f : files) EXPECT_EQ(f.parent_path(), dir) << f;
  EXPECT_TRUE(std::filesystem::exists(dir / "_._.__escape.program.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "sub_dir.host.ll"));
  EXPECT_FALSE(std::filesystem::exists(root / "escape.program.json"));
  EXPECT_FALSE(std::filesystem::exists(root / "a" / "escape.program.json"));
  std::filesystem::remove_all(root);
}

/// A Program of one relu, for the dump tests.
frontend::Program ReluProgram() {
  frontend::NetBuilder b;
  b.MarkOutput(b.Relu(b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({8}), "x")));
  return *b.Build();
}

// A link planted in the dump directory under a dump file's name is not followed: the file it
// points to keeps its bytes (the dump of that name is skipped with a warning).
TEST(Flags, DumpFilesDoNotFollowPlantedLinks) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("cinn_like_planted_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path dir = root / "dump";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  const fs::path precious = root / "precious.txt";
  std::ofstream(precious) << "the user's file";
  fs::create_symlink(precious, dir / "planted.program.json");
  fs::create_symlink(root / "created.txt", dir / "planted.host.ll");  // dangling
  std::string error;
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", dir.string(), &error)) << error;
  auto compiled = CompileProgram(ReluProgram(), ir::Target::X86(), "planted");
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", "", &error));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(ReadFile(precious), "the user's file");
  EXPECT_FALSE(fs::exists(root / "created.txt"));
  EXPECT_TRUE(fs::is_symlink(dir / "planted.program.json"));
  EXPECT_TRUE(fs::exists(dir / "planted.tactics.txt"));  // the other dumps are written
  fs::remove_all(root);
}

// A dump directory that is another user's or that others can write is not written into; the
// compile succeeds.
TEST(Flags, ADumpDirOthersCanChangeIsNotWritten) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("cinn_like_open_dump_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all, fs::perm_options::replace);  // 0777
  std::string error;
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", dir.string(), &error)) << error;
  EXPECT_EQ(DumpDir(), "");
  auto compiled = CompileProgram(ReluProgram(), ir::Target::X86(), "open_dump");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(fs::is_empty(dir));
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  EXPECT_EQ(DumpDir(), dir.string());
  // One this makes is the user's alone, whatever the umask.
  const fs::path made = dir / "made";
  const mode_t umask_before = umask(002);
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", made.string(), &error)) << error;
  EXPECT_EQ(DumpDir(), made.string());
  umask(umask_before);
  EXPECT_EQ(fs::status(made).permissions() & (fs::perms::group_write | fs::perms::others_write),
            fs::perms::none);
  ASSERT_TRUE(SetFlag("cinn_like_dump_dir", "", &error));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cinn_like
