/// \file The group report's compiles for NVGPU dump nothing (cinn_like/tune/group_report.h):
/// not on this thread, nor on the threads that compile the device code's other NVRTC units
/// (CompilerNVGPU::Build), which carry the report's DumpOffScope over. Without a GPU the groups
/// compile and are listed untimed (no driver to load them); with one they are timed.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cinn_like/tune/group_report.h"
#include "ir/flags.h"
#include "tests/group_report_check.h"

namespace cinn_like::testing {
namespace {

TEST(GroupReportNvgpu, TheGroupsCompilesDumpNothingOnAnyThread) {
  gflags::FlagSaver saver;
  const std::string dir = FreshDumpDir("units");
  FLAGS_cinn_like_dump_dir = dir;
  FLAGS_cinn_like_nvrtc_units = 8;  // each kernel a unit, the second on a thread of its own
  FLAGS_cinn_like_nvrtc_compile_to_cubin = false;
  const ir::Target gpu = ir::Target::NVGPU(90);
  // A column sum too narrow to fill the device: two kernels (partials, then their sum).
  auto graph = frontend::BuildGraph(ReduceRows(8192, 1024, 0));
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto fused = hlir::RunGraphPasses(*graph, hlir::TargetPassOptions(gpu, "units", &*graph));
  ASSERT_TRUE(fused.ok()) << fused.status();
  std::vector<hlir::TacticChoice> tactics;
  ASSERT_TRUE(hlir::CompileFusedGraph(*fused, gpu, "units", {}, &tactics).ok());
  EXPECT_THAT(ReadText(dir + "/units.tactics.txt"), ::testing::HasSubstr("two_stage"));
  std::filesystem::remove_all(dir);  // the whole compile's own dump
  const std::vector<GroupTime> times = TimeGroups(*fused, tactics, {}, gpu, "units");
  ASSERT_EQ(times.size(), fused->groups.size());
  // Built before its tensors are placed: without a GPU, NVRTC ran and loading failed.
  if (times[0].us < 0) EXPECT_THAT(times[0].why, ::testing::HasSubstr("loading the CUDA module"));
  std::vector<std::string> written;
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      written.push_back(entry.path().filename().string());
    }
  }
  EXPECT_TRUE(written.empty()) << absl::StrJoin(written, ", ");
}

}  // namespace
}  // namespace cinn_like::testing
