/// \file Bad programs get clear errors naming the op, the tensors and their shapes; none aborts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/net_builder.h"
#include "frontend/program_json.h"

namespace cinn_like::frontend {
namespace {

using hlir::Dim;
using hlir::DType;
using hlir::MakeShape;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string ErrorOf(const NetBuilder& b) {
  auto p = b.Build();
  EXPECT_FALSE(p.ok());
  return std::string(p.status().message());
}

TEST(ProgramErrors, ShapeMismatchInAnElementwiseOp) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4, 3}), "x");
  Var y = b.CreateInput(DType::kFloat32, MakeShape({5, 3}), "y");
  b.MarkOutput(b.Add(x, y));
  EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("op add"), HasSubstr("float32[5, 3]"),
                                HasSubstr("[4, 3] and [5, 3] do not broadcast")));
}

TEST(ProgramErrors, MatmulWithIncompatibleInnerDims) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({8, 16}), "x");
  Var y = b.CreateInput(DType::kFloat32, MakeShape({15, 4}), "y");
  b.MarkOutput(b.Matmul(x, y));
  EXPECT_THAT(ErrorOf(b),
              AllOf(HasSubstr("op matmul: inner dims differ"), HasSubstr("float32[8, 16]"),
                    HasSubstr("k = 16"), HasSubstr("float32[15, 4]"), HasSubstr("k = 15")));
}

TEST(ProgramErrors, UnknownOpName) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4}), "x");
  b.Op("relu7", {x});
  EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("unknown op 'relu7'"), HasSubstr("relu6")));
}

TEST(ProgramErrors, MissingAttribute) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({4, 4}), "x");
  b.Op("transpose", {x});
  EXPECT_THAT(ErrorOf(b), HasSubstr("op transpose: attribute 'perm' is missing (an int list)"));
  NetBuilder c;
  Var y = c.CreateInput(DType::kFloat32, MakeShape({4, 4}), "y");
  c.Op("softmax", {y}, {{"axis", std::string("last")}});
  EXPECT_THAT(ErrorOf(c),
              HasSubstr("op softmax: attribute 'axis' is string \"last\", expected int"));
}

TEST(ProgramErrors, ReshapeThatChangesTheElementCount) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3}), "x");
  b.MarkOutput(b.Reshape(x, {4, 2}));
  EXPECT_THAT(
      ErrorOf(b),
      HasSubstr("op reshape: cannot reshape float32[2, 3] (6 elements) to [4, 2] (8 elements)"));
}

TEST(ProgramErrors, AxisOutOfRange) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, MakeShape({2, 3}), "x");
  b.MarkOutput(b.ReduceSum(x, {2}));
  EXPECT_THAT(
      ErrorOf(b),
      HasSubstr("reduce_sum: axis 2 is out of range for a tensor of rank 2 (valid: -2 to 1)"));
}

TEST(ProgramErrors, DTypeTheOpDoesNotSupport) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kInt32, MakeShape({5}), "x");
  b.MarkOutput(b.Exp(x));
  EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("op exp: input 0 (int32[5]) has dtype int32"),
                                HasSubstr("exp supports float16, bfloat16, float32 and float64")));
  NetBuilder c;
  Var a = c.CreateInput(DType::kFloat32, MakeShape({5}), "a");
  Var d = c.CreateInput(DType::kFloat16, MakeShape({5}), "d");
  c.MarkOutput(c.Mul(a, d));
  EXPECT_THAT(ErrorOf(c), HasSubstr("have different dtypes; insert a cast"));
}

TEST(ProgramErrors, TheFirstErrorSticksAndLaterCallsAreHarmless) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, {Dim::Symbol("n")}, "x");
  Var bad = b.Reshape(x, {4});  // symbolic input
  Var later = b.Relu(bad);
  b.MarkOutput(later);
  EXPECT_FALSE(later.valid());
  EXPECT_THAT(ErrorOf(b), HasSubstr("op reshape: input float32[n] has symbolic dims"));
}

TEST(ProgramErrors, JsonErrorsNameThePath) {
  auto bad = ProgramFromJson(R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [4]}],
    "instructions": [{"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"k": {"complex": 1}}}],
    "outputs": ["y"]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("instructions[0].attrs.k: unknown attribute kind 'complex'"));
  auto future = ProgramFromJson(R"({"format": "cinn_like.program", "version": 99})");
  ASSERT_FALSE(future.ok());
  EXPECT_THAT(future.status().message(), HasSubstr("version 99 is not supported"));
  auto undefined = ProgramFromJson(R"({"format": "cinn_like.program", "version": 1, "inputs": [],
    "instructions": [{"op": "relu", "inputs": ["ghost"], "outputs": ["y"]}], "outputs": ["y"]})");
  ASSERT_TRUE(undefined.ok()) << undefined.status();
  auto graph = BuildGraph(*undefined);
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(),
              HasSubstr("instruction 0 (relu): input 'ghost' is not defined before it"));
  EXPECT_FALSE(ProgramFromJson("{not json").ok());
}

// fuzz_program_json's first find: json::value threw on a "format" of another type.
TEST(ProgramErrors, JsonFormatOfTheWrongTypeIsAnError) {
  for (const char* text : {R"({"format": []})", R"({"format": 1, "version": 1})", "[]", "3"}) {
    auto p = ProgramFromJson(text);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_THAT(p.status().message(), HasSubstr("not a cinn_like program")) << text;
  }
}

}  // namespace
}  // namespace cinn_like::frontend
