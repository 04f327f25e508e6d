/// \file SelfCheck (and cinn_replay, its command line): a Program that matches the reference
/// passes; a failing one is narrowed to its first differing instruction, found by compiling
/// prefixes; inputs the reference refuses are an error of the check, not a verdict.
#include "cinn_like/verify/self_check.h"

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/net_builder.h"
#include "ir/flags.h"
#include "tests/fusion_cases.h"

namespace cinn_like {
namespace {

using hlir::DType;
using ::testing::HasSubstr;

frontend::Program Chain() { return testing::TanhChain(); }

TEST(SelfCheck, AMatchingProgramPasses) {
  SelfCheckOptions options;
  options.sizes["n"] = 13;
  auto report = SelfCheck(Chain(), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok) << report->summary;
  EXPECT_THAT(report->summary, HasSubstr("every output matches the reference"));
  EXPECT_EQ(report->first_bad_instruction, -1);
}

TEST(SelfCheck, AFailureIsNarrowedToItsFirstInstruction) {
  // The compiler "fails" on tanh, the third instruction, as a compiler bug would.
  gflags::FlagSaver saver;
  FLAGS_cinn_like_debug_fail_op = "tanh";
  auto report = SelfCheck(Chain(), SelfCheckOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->first_bad_instruction, 2) << report->summary;
  EXPECT_THAT(report->summary, HasSubstr("first differing instruction: 2 (op tanh)"));
  ASSERT_EQ(report->smallest.instructions.size(), 3u);
  EXPECT_EQ(report->smallest.outputs, report->smallest.instructions[2].outputs);
}

TEST(SelfCheck, AWrongValueIsNarrowedToItsFirstInstruction) {
  // The compiled code of exp, the second instruction, computes a wrong value (negated), a
  // silent miscompile: it compiles and runs, and only the comparison finds it.
  gflags::FlagSaver saver;
  FLAGS_cinn_like_debug_wrong_op = "exp";
  auto report = SelfCheck(Chain(), SelfCheckOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->first_bad_instruction, 1) << report->summary;
  EXPECT_THAT(report->summary, HasSubstr("first differing instruction: 1 (op exp)"));
  EXPECT_THAT(report->summary, HasSubstr("(tolerance 0.0001)"));
}

TEST(SelfCheck, IntegersAndBoolsCompareExactly) {
  frontend::NetBuilder b;
  auto a = b.CreateInput(DType::kInt32, hlir::MakeShape({6, 4}), "a");
  auto c = b.CreateInput(DType::kInt32, hlir::MakeShape({4}), "c");
  auto sum = b.Add(a, c);
  b.MarkOutput(sum);
  b.MarkOutput(b.Op("logical_not", {b.Op("equal", {sum, c})[0]})[0]);
  const frontend::Program program = *b.Build();
  auto pass = SelfCheck(program, SelfCheckOptions{});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_TRUE(pass->ok) << pass->summary;
  gflags::FlagSaver saver;
  FLAGS_cinn_like_debug_wrong_op = "logical_not";  // bool results flipped
  auto report = SelfCheck(program, SelfCheckOptions{});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->first_bad_instruction, 2) << report->summary;
  EXPECT_THAT(report->summary, HasSubstr("(bool[6, 4]) element 0"));
  EXPECT_THAT(report->summary, HasSubstr("(tolerance 0)"));
}

TEST(SelfCheck, InputsTheReferenceRefusesAreAnErrorOfTheCheck) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, hlir::MakeShape({3}), "x");
  auto i = b.CreateInput(DType::kInt64, hlir::MakeShape({40}), "i");
  b.MarkOutput(b.Op("gather", {x, i}, {{"axis", int64_t{0}}})[0]);
  auto report = SelfCheck(*b.Build(), SelfCheckOptions{});  // indices in [-5, 5]: out of range
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(), HasSubstr("the reference refuses the random inputs"));
  SelfCheckOptions valid;
  valid.int_low = 0;
  valid.int_high = 2;
  auto ok = SelfCheck(*b.Build(), valid);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->ok) << ok->summary;
}

}  // namespace
}  // namespace cinn_like
