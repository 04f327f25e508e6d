/// \file Symbolic sizes on x86: each Program of tests/symbolic_cases.h compiles once and is
/// called at eight to ten batch sizes and sequence lengths (1, 2, odd sizes, powers of two, up
/// to 512 tokens), each call on fresh random inputs compared with the reference interpreter. A call
/// whose sizes break the Program (two dims that must be equal, a polynomial dim) is refused
/// with a message naming the tensor and the dim; a Program whose sizes no call could bind is
/// refused when it is compiled.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include "cinn_like/compare/call_and_compare.h"
#include "cinn_like/compare/random_inputs.h"
#include "cinn_like/compile.h"
#include "frontend/program.h"
#include "frontend/program_json.h"
#include "hlir/reference_interpreter.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/symbolic_cases.h"

namespace cinn_like {
namespace {

using ::testing::HasSubstr;

TEST(SymbolicShapes, OneCompileServesEverySize) {
  for (const auto& c : testing::SymbolicCases())
    testing::CheckAtEverySize(c, ir::Target::X86(), nullptr);
}

TEST(SymbolicShapes, ACallThatBreaksTheSizesIsRefusedByName) {
  testing::SymbolicCase c = testing::AttentionShapes();
  auto compiled = CompileProgram(c.program, ir::Target::X86(), "f");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto fn = (*compiled)->Lookup("f");
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto graph = frontend::BuildGraph(c.program);
  ASSERT_TRUE(graph.ok());
  RandomInputOptions o;
  o.sizes = {{"s0", 2}, {"s1", 5}};
  std::vector<hlir::HostTensor> inputs = RandomInputs(*graph, o);
  auto want = hlir::RunReference(*graph, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  // k with 6 tokens where q has 5: s1 cannot be both.
  inputs[1] = hlir::HostTensor(hlir::DType::kFloat32, {2, 4, 6, 16});
  std::string diffs =
      CallAndCompare(*fn, ir::Target::X86(), inputs, *want, c.program.outputs, nullptr);
  EXPECT_THAT(diffs, HasSubstr("tensor k has size 6 at dim 2, expected 5 = s1 (s1 from q dim 2)"));
}

TEST(SymbolicShapes, APolynomialDimOfAnInputIsChecked) {
  // x is [s0, s1]; y must be [s0*s1]: a y of another length is refused, naming y.
  auto program = frontend::ProgramFromJson(R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": ["s0", "s1"]},
               {"name": "y", "dtype": "float32", "shape": ["s1*s0"]}],
    "instructions": [
      {"op": "reshape", "inputs": ["x"], "outputs": ["r"],
       "attrs": {"shape": {"shape": ["s0*s1"]}}},
      {"op": "add", "inputs": ["r", "y"], "outputs": ["z"], "attrs": {}}],
    "outputs": ["z"]})");
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->inputs[1].desc.shape[0].symbol, "s0*s1");  // canonical
  auto compiled = CompileProgram(*program, ir::Target::X86(), "f");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto fn = (*compiled)->Lookup("f");
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto graph = frontend::BuildGraph(*program);
  ASSERT_TRUE(graph.ok());
  RandomInputOptions o;
  o.sizes = {{"s0", 3}, {"s1", 7}};
  std::vector<hlir::HostTensor> inputs = RandomInputs(*graph, o);
  ASSERT_EQ(inputs[1].shape, std::vector<int64_t>{21});
  auto want = hlir::RunReference(*graph, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(CallAndCompare(*fn, ir::Target::X86(), inputs, *want, program->outputs, nullptr), "");
  inputs[1] = hlir::HostTensor(hlir::DType::kFloat32, {20});
  std::string diffs =
      CallAndCompare(*fn, ir::Target::X86(), inputs, *want, program->outputs, nullptr);
  EXPECT_THAT(diffs, HasSubstr("tensor y has size 20 at dim 0, expected 21 = (s0 * s1) (s0 from x "
                               "dim 0, s1 from x dim 1)"));
  auto refused = hlir::RunReference(*graph, inputs);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("s0*s1 = 21"));
}

TEST(SymbolicShapes, SizesNoCallCouldBindAreRefusedAtCompile) {
  // Only s0*s1 is given: no input has s0 or s1 by itself.
  auto alone = frontend::ProgramFromJson(R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": ["s0*s1", 4]}],
    "instructions": [{"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {}}],
    "outputs": ["y"]})");
  ASSERT_TRUE(alone.ok()) << alone.status();
  auto compiled = CompileProgram(*alone, ir::Target::X86(), "f");
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("tensor x float32[s0*s1, 4] uses the symbol s0"));
  // A fill of a size of a symbol no input has.
  auto fresh = frontend::ProgramFromJson(R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": ["s0", 4]}],
    "instructions": [{"op": "fill", "inputs": [], "outputs": ["y"],
                      "attrs": {"shape": {"shape": ["s2", 4]}, "value": {"float": 1.0}}},
                     {"op": "relu", "inputs": ["x"], "outputs": ["z"], "attrs": {}}],
    "outputs": ["z", "y"]})");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  compiled = CompileProgram(*fresh, ir::Target::X86(), "f");
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("symbol s2"));
}

TEST(SymbolicShapes, AReshapeWhoseCountsDifferIsRefused) {
  auto bad = frontend::ProgramFromJson(R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": ["s0", "s1", 4]}],
    "instructions": [{"op": "reshape", "inputs": ["x"], "outputs": ["y"],
                      "attrs": {"shape": {"shape": ["s0", 4, 3]}}}],
    "outputs": ["y"]})");
  ASSERT_TRUE(bad.ok()) << bad.status();
  auto compiled = CompileProgram(*bad, ir::Target::X86(), "f");
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("cannot reshape float32[s0, s1, 4] (4*s0*s1 elements) to [s0, 4, 3]"));
}

TEST(SymbolicShapes, ASizeOutsideItsSymbolsBoundsIsRefused) {
  // Dynamo's guard s0 >= 2 as the Program's fact: a call with one row is refused, naming the
  // tensor, the dim, the symbol and its bound; rows within the bounds run.
  auto program = frontend::ProgramFromJson(R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": ["s0", 8]}],
    "instructions": [{"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {}}],
    "outputs": ["y"], "symbols": {"s0": {"min": 2, "max": 64}}})");
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->symbols.at("s0").min, 2);
  auto again = frontend::ProgramFromJson(frontend::ProgramToJson(*program));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->symbols.at("s0").max, 64);
  auto compiled = CompileProgram(*program, ir::Target::X86(), "f");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto fn = (*compiled)->Lookup("f");
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto graph = frontend::BuildGraph(*program);
  ASSERT_TRUE(graph.ok());
  for (int64_t rows : {1, 2, 64, 65}) {
    RandomInputOptions o;
    o.sizes = {{"s0", rows}};
    std::vector<hlir::HostTensor> inputs = RandomInputs(*graph, o);
    auto want = hlir::RunReference(*graph, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    std::string diffs =
        CallAndCompare(*fn, ir::Target::X86(), inputs, *want, program->outputs, nullptr);
    if (rows >= 2 && rows <= 64) {
      EXPECT_EQ(diffs, "") << rows;
    } else {
      EXPECT_THAT(diffs, HasSubstr(absl::StrCat("f: tensor x has size ", rows,
                                                " at dim 0, which sets s0; s0 must be >= 2 and "
                                                "<= 64")));
    }
  }
}

TEST(SymbolicShapes, BoundsOfNoInputsSymbolOrOutOfOrderAreRefused) {
  const std::string head = R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": ["s0", 8]}],
    "instructions": [], "outputs": ["x"], "symbols": )";
  auto unknown = frontend::ProgramFromJson(head + R"({"n": {"min": 2}}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("$.symbols.n: no input has this symbol as a dim"));
  auto reversed = frontend::ProgramFromJson(head + R"({"s0": {"min": 9, "max": 3}}})");
  ASSERT_FALSE(reversed.ok());
  EXPECT_THAT(reversed.status().message(), HasSubstr("bounds [9, 3] are not within"));
  auto misspelt = frontend::ProgramFromJson(head + R"({"s0": {"minimum": 2}}})");
  ASSERT_FALSE(misspelt.ok());
  EXPECT_THAT(misspelt.status().message(), HasSubstr("unknown key 'minimum'"));
  // The same Programs built in C++ (whose JSON would not read back) are refused when compiled.
  auto program = frontend::ProgramFromJson(head + "{}}");
  ASSERT_TRUE(program.ok()) << program.status();
  frontend::Program stray = *program;
  stray.symbols["n"] = frontend::SymbolRange{2, 8};
  auto compiled = CompileProgram(stray, ir::Target::X86(), "f");
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("the program's symbol n: no input has this symbol as a dim"));
  frontend::Program backwards = *program;
  backwards.symbols["s0"] = frontend::SymbolRange{9, 3};
  compiled = CompileProgram(backwards, ir::Target::X86(), "f");
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("the program's symbol s0: bounds [9, 3] are not within"));
  // Bounds of a bound symbol print and read back.
  frontend::Program fine = *program;
  fine.symbols["s0"] = frontend::SymbolRange{2, 8};
  auto again = frontend::ProgramFromJson(frontend::ProgramToJson(fine));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->symbols.at("s0").max, 8);
  EXPECT_TRUE(frontend::BuildGraph(fine).ok());
}

}  // namespace
}  // namespace cinn_like
