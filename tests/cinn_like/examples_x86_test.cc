/// \file Every built-in example, built for x86 and run on fresh random data at every size it
/// is checked at, against its float64 reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

namespace cinn_like::examples {
namespace {

class ExamplesX86 : public ::testing::TestWithParam<std::string> {};

TEST_P(ExamplesX86, MatchesReferenceAtEverySize) {
  auto ex = Find(GetParam());
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = BuildExample(*ex, **compiler);
  ASSERT_TRUE(built.ok()) << built;
  for (int64_t n : ex->sizes) {
    auto report = RunExample(*ex, **compiler, n);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->passed) << ex->name << " " << report->ToString() << " tolerance "
                                << ex->tolerance;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ExamplesX86, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return info.param; });

TEST(ExamplesX86, LookupOfAnUnknownName) {
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  auto ex = Find("myadd");
  ASSERT_TRUE(BuildExample(*ex, **compiler).ok());
  auto fn = (*compiler)->Lookup("myad");
  ASSERT_FALSE(fn.ok());
  EXPECT_THAT(fn.status().message(), ::testing::HasSubstr("myad"));
  EXPECT_THAT(fn.status().message(), ::testing::HasSubstr("myadd"));  // lists what exists
}

TEST(ExamplesX86, VectorizedExampleEmitsEightLaneVectors) {
  auto compiler = backends::Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  auto ex = Find("add_vectorized");
  auto func = ex->build(ir::Target::X86());
  ASSERT_TRUE(func.ok());
  auto source = (*compiler)->GetSourceCode({"add_vectorized", ir::Target::X86(), {*func}});
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT(*source, ::testing::HasSubstr("<8 x float>"));
}

TEST(ExamplesX86, UnknownExampleNameIsAnError) {
  auto ex = Find("nope");
  ASSERT_FALSE(ex.ok());
  EXPECT_THAT(ex.status().message(), ::testing::HasSubstr("no built-in example named 'nope'"));
}

}  // namespace
}  // namespace cinn_like::examples
