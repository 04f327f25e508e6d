/// \file The tuner on x86 (cinn_like/tune/autotune.h): an elementwise group's vector width timed
/// once, remembered, read from the cache file, and right with every width; off by default;
/// a malformed cache file ignored and replaced, a file of another format left alone; symbolic
/// shapes left untimed. The GPU knobs are checked the same way on the GPU machine
/// (tests/gpu/autotune_gpu_test.cc).
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "ir/device_properties.h"
#include "tests/autotune_check.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

const ir::Target kX86 = ir::Target::X86();

TEST(Autotune, ElementwiseVectorWidthsOnX86) {
  CheckTuning(BiasGelu(S({64, 1024}), 1024), kX86, "vector_lanes", "x86_bias_gelu");
}

TEST(Autotune, IsOffByDefault) {
  gflags::FlagSaver saver;
  const std::string dir = ::testing::TempDir() + "/autotune_off";
  FLAGS_cinn_like_dump_dir = dir;
  ASSERT_FALSE(FLAGS_cinn_like_autotune);
  const TuningStats before = GetTuningStats();
  ASSERT_TRUE(CompileProgram(BiasGelu(S({64, 1024}), 1024), kX86, "untuned").ok());
  EXPECT_EQ(GetTuningStats().trials, before.trials);
  EXPECT_EQ(GetTuningStats().groups_remembered, before.groups_remembered);
  // The tactic's own width (a register of float32 lanes), with the options a tuner would time.
  const int lanes = ir::DevicePropertiesOf(kX86).vector_bytes / 4;
  EXPECT_THAT(ReadText(dir + "/untuned.tactics.txt"),
              HasSubstr(absl::StrCat("[vector_lanes ", lanes, " of ", lanes, "/")));
}

// Truncated JSON, a version of the wrong type, a choice no tactic offers: nothing of such a
// file is used; the group is timed and the file rewritten with its choice.
TEST(Autotune, AMalformedCacheFileIsIgnoredAndReplaced) {
  gflags::FlagSaver saver;
  const std::string cache = ::testing::TempDir() + "/autotune_bad.json";
  FLAGS_cinn_like_autotune = true;
  FLAGS_cinn_like_autotune_cache = cache;
  std::string key;
  for (const std::string& text : {std::string("{\"version\": 1, \"choices\": [tru"),
                                  std::string("{\"version\": \"1\", \"choices\": {}}"),
                                  std::string("{\"version\": 1, \"choices\": {\"KEY\": "
                                              "{\"knob\": \"vector_lanes\", \"value\": 3}}}")}) {
    std::string written = text;
    if (const size_t at = written.find("KEY"); at != std::string::npos) written.replace(at, 3, key);
    SCOPED_TRACE(written);
    std::ofstream(cache) << written;
    ForgetTuning();
    const TuningStats before = GetTuningStats();
    ASSERT_TRUE(CompileProgram(BiasGelu(S({32, 512}), 512), kX86, "bad_cache").ok());
    EXPECT_EQ(GetTuningStats().groups_timed, before.groups_timed + 1);
    EXPECT_EQ(GetTuningStats().groups_remembered, before.groups_remembered);
    auto file = nlohmann::json::parse(ReadText(cache), nullptr, false);
    ASSERT_FALSE(file.is_discarded()) << ReadText(cache);
    EXPECT_EQ(file["version"], 1);
    ASSERT_EQ(file["choices"].size(), 1u);
    key = file["choices"].begin().key();
    EXPECT_NE(file["choices"][key]["value"], 3);
  }
  ForgetTuning();
}

// A file the flag names that is not a tuning cache (a user's file, a directory) is not replaced:
// the choice is kept in memory only, with a warning.
TEST(Autotune, AFileOfAnotherFormatIsNotReplaced) {
  gflags::FlagSaver saver;
  const std::string dir = ::testing::TempDir() + "/autotune_not_ours";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/sub");
  FLAGS_cinn_like_autotune = true;
  for (const std::string& path : {dir + "/notes.txt", dir + "/sub"}) {
    SCOPED_TRACE(path);
    if (path == dir + "/notes.txt") std::ofstream(path) << "the user's notes";
    FLAGS_cinn_like_autotune_cache = path;
    ForgetTuning();
    const TuningStats before = GetTuningStats();
    ASSERT_TRUE(CompileProgram(BiasGelu(S({32, 256}), 256), kX86, "not_ours").ok());
    EXPECT_EQ(GetTuningStats().groups_timed, before.groups_timed + 1);
  }
  EXPECT_EQ(ReadText(dir + "/notes.txt"), "the user's notes");
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/sub"));
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
  ForgetTuning();
}

TEST(Autotune, SymbolicShapesAreNotTimed) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_autotune = true;
  FLAGS_cinn_like_autotune_cache = "";
  ForgetTuning();
  const TuningStats before = GetTuningStats();
  ASSERT_TRUE(CompileProgram(TanhChain(), kX86, "symbolic").ok());
  EXPECT_EQ(GetTuningStats().trials, before.trials);
  EXPECT_EQ(GetTuningStats().groups_timed, before.groups_timed);
}

}  // namespace
}  // namespace cinn_like::testing
