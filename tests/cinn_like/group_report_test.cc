/// \file The group report on x86 (cinn_like/tune/group_report.h): with a dump directory, a
/// built compile writes <name>.groups.txt, every group timed alone, slowest first, with its ops
/// and tactics (tests/group_report_check.h; the GPU's in tests/gpu/group_report_gpu_test.cc);
/// symbolic groups are listed untimed; the flag turns it off.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cinn_like/tune/group_report.h"
#include "tests/group_report_check.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

const ir::Target kX86 = ir::Target::X86();

TEST(GroupReport, EveryGroupIsTimedAloneAndListedSlowestFirst) {
  CheckHeavyGroupFirst(kX86, "heavy", 384, "cpu.");
}

TEST(GroupReport, SymbolicGroupsAreListedUntimed) {
  gflags::FlagSaver saver;
  const std::string dir = FreshDumpDir("symbolic");
  FLAGS_cinn_like_dump_dir = dir;
  ASSERT_TRUE(CompileProgram(TanhChain(), kX86, "symbolic").ok());
  const std::string report = ReadText(dir + "/symbolic.groups.txt");
  EXPECT_THAT(report, HasSubstr(", 0 timed"));
  EXPECT_THAT(report, HasSubstr("# not timed"));
  EXPECT_THAT(report, HasSubstr("symbolic shapes"));
}

TEST(GroupReport, TheFlagTurnsItOff) {
  gflags::FlagSaver saver;
  const std::string dir = FreshDumpDir("off");
  FLAGS_cinn_like_dump_dir = dir;
  FLAGS_cinn_like_group_report = false;
  ASSERT_TRUE(CompileProgram(HeavyAndLight(), kX86, "off").ok());
  EXPECT_TRUE(std::filesystem::exists(dir + "/off.tactics.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/off.groups.txt"));
}

TEST(GroupReport, TheTextSortsByTimeAndSaysWhyAGroupWasNotTimed) {
  std::vector<GroupTime> times(3);
  times[0] = {0, 0.5, "", "add", "add_1: elementwise.vector"};
  times[1] = {1, -1, "no stored value (computed inside its readers)", "reshape", ""};
  times[2] = {2, 1.5, "", "reduce_sum, exp", "reduce_sum_3: row_reduction.block_per_row"};
  const std::string text = GroupReportText(times, "f", kX86);
  EXPECT_THAT(text, HasSubstr("# 3 groups, 2 timed: 2.00 us in all"));
  const std::vector<std::string> lines = GroupLines(text);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_THAT(lines[0], HasSubstr("1.50  75.0%      2  reduce_sum, exp | reduce_sum_3: row_"));
  EXPECT_THAT(lines[1], HasSubstr("0.50  25.0%      0  add | add_1: elementwise.vector"));
  EXPECT_THAT(lines[2], HasSubstr("1  reshape | no stored value"));
  EXPECT_LT(text.find("# not timed"), text.find("reshape"));
}

// A tuned compile's groups are timed with the knob values the compile took, not their
// tactics' own: a choice other than the default is put in the tuner's file, and the report's
// line names that value.
TEST(GroupReport, ATunedGroupIsTimedWithItsTunedValue) {
  gflags::FlagSaver saver;
  const std::string dir = FreshDumpDir("tuned");
  const std::string cache = dir + "_choices.json";
  std::filesystem::remove(cache);
  FLAGS_cinn_like_dump_dir = dir;
  FLAGS_cinn_like_autotune = true;
  FLAGS_cinn_like_autotune_cache = cache;
  ForgetTuning();
  const Program program = BiasGelu(S({64, 1024}), 1024);
  ASSERT_TRUE(CompileProgram(program, kX86, "first").ok());
  const std::vector<int> options =
      KnobOptions(ReadText(dir + "/first.tactics.txt"), "vector_lanes");
  ASSERT_GE(options.size(), 2u);
  const int forced = options[1];  // not the tactic's own (options[0])
  auto file = nlohmann::json::parse(ReadText(cache), nullptr, false);
  ASSERT_FALSE(file.is_discarded());
  ASSERT_EQ(file["choices"].size(), 1u);
  file["choices"].begin().value()["value"] = forced;
  std::ofstream(cache) << file.dump();
  ForgetTuning();
  ASSERT_TRUE(CompileProgram(program, kX86, "tuned").ok());
  const std::string knob = absl::StrCat("[vector_lanes ", forced);
  EXPECT_THAT(ReadText(dir + "/tuned.tactics.txt"), HasSubstr(knob + " of "));
  const std::string report = ReadText(dir + "/tuned.groups.txt");
  EXPECT_THAT(report, HasSubstr("1 groups, 1 timed"));
  EXPECT_THAT(report, HasSubstr(knob + "]"));
  ForgetTuning();
}

}  // namespace
}  // namespace cinn_like::testing
