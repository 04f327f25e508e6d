/// \file What the group report must say for any target (tests/cinn_like/group_report_test.cc on
/// x86, tests/gpu/group_report_gpu_test.cc on the GPU machine): with a dump directory, a built
/// compile of HeavyAndLight writes <name>.groups.txt, both groups timed, the product's first
/// and its time far above the relu's, shares summing to 100%, the relu's tactic named, and no
/// dump of the groups' own compiles.
#pragma once

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/autotune_check.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {

/// The report's group lines (those not starting with '#').
inline std::vector<std::string> GroupLines(const std::string& report) {
  std::vector<std::string> lines;
  std::stringstream in(report);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

/// An empty directory for one test's dump.
inline std::string FreshDumpDir(const std::string& tag) {
  const std::string dir = ::testing::TempDir() + "/group_report_" + tag;
  std::filesystem::remove_all(dir);
  return dir;
}

/// Compiles HeavyAndLight(n) for `target` as `tag` with a dump directory and checks its report;
/// `relu_tactic`: what the relu's tactic starts with ("cpu.", "elementwise.").
inline void CheckHeavyGroupFirst(const ir::Target& target, const std::string& tag, int64_t n,
                                 const std::string& relu_tactic) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  gflags::FlagSaver saver;
  const std::string dir = FreshDumpDir(tag);
  FLAGS_cinn_like_dump_dir = dir;
  ASSERT_TRUE(FLAGS_cinn_like_group_report);  // on by default with a dump directory
  ASSERT_TRUE(CompileProgram(HeavyAndLight(n), target, tag).ok());
  const std::string report = ReadText(dir + "/" + tag + ".groups.txt");
  EXPECT_THAT(report, HasSubstr("# " + tag + " on " + target.ToString()));
  EXPECT_THAT(report, HasSubstr("2 groups, 2 timed"));
  const std::vector<std::string> lines = GroupLines(report);
  ASSERT_EQ(lines.size(), 2u) << report;
  // The product's group first: its time is far above the relu's.
  EXPECT_THAT(lines[0], HasSubstr("matmul"));
  EXPECT_THAT(lines[1], HasSubstr("relu"));
  double us[2], share[2];
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(std::sscanf(lines[k].c_str(), "%lf %lf%%", &us[k], &share[k]), 2) << lines[k];
  }
  EXPECT_GT(us[1], 0);  // a call of the relu's function takes more than the 10 ns printed
  EXPECT_GT(us[0], 10 * us[1]) << report;
  EXPECT_NEAR(share[0] + share[1], 100, 0.2);
  // The relu's line names its stage's tactic, as the tactics file does.
  EXPECT_THAT(lines[1], HasSubstr("relu_1: " + relu_tactic));
  EXPECT_THAT(ReadText(dir + "/" + tag + ".tactics.txt"), HasSubstr("relu_1: " + relu_tactic));
  // The groups' own compiles left no dump of their own.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr("_group")));
  }
}

}  // namespace cinn_like::testing
