/// \file GPU machine only: every built-in example built for NVGPU (arch from the device), run
/// on the device on fresh random data at every size it is checked at, against its reference.
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

namespace cinn_like::examples {
namespace {

class ExamplesGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(ExamplesGpu, MatchesReferenceAtEverySize) {
  auto ex = Find(GetParam());
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = BuildExample(*ex, **compiler);
  ASSERT_TRUE(built.ok()) << built;
  std::printf("%s cold build on %s:\n%s", ex->name.c_str(),
              (*compiler)->target().ToString().c_str(),
              (*compiler)->last_build_times().ToString().c_str());
  for (int64_t n : ex->sizes) {
    auto report = RunExample(*ex, **compiler, n, 3);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->passed) << ex->name << " " << report->ToString();
    std::printf("  %s %s\n", ex->name.c_str(), report->ToString().c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ExamplesGpu, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace cinn_like::examples
