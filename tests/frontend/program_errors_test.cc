/// \file Bad programs get clear errors naming the op, the tensors and their shapes; none aborts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "hlir/shape.h"

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
  Var bad = b.Reshape(x, {4});  // n elements are not 4 for every n
  Var later = b.Relu(bad);
  b.MarkOutput(later);
  EXPECT_FALSE(later.valid());
  EXPECT_THAT(ErrorOf(b),
              HasSubstr("op reshape: cannot reshape float32[n] (n elements) to [4] (4 elements)"));
}

TEST(ProgramErrors, JsonErrorsNameThePath) {
  auto bad = ProgramFromJson(R"({"format": "cinn_like.program", "version": 1,
    "inputs": [{"name": "x", "dtype": "float32", "shape": [4]}],
    "instructions": [{"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"k": {"complex": 1}}}],
    "outputs": ["y"]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("$.instructions[0].attrs.k: unknown attribute kind 'complex'"));
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

/// A Program JSON document with one input, one instruction and the outputs given as text.
std::string Doc(const std::string& input = R"({"name": "x", "dtype": "float32", "shape": [4]})",
                const std::string& instruction =
                    R"({"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {}})",
                const std::string& outputs = R"(["y"])") {
  return R"({"format": "cinn_like.program", "version": 1, "inputs": [)" + input +
         R"(], "instructions": [)" + instruction + R"(], "outputs": )" + outputs + "}";
}

std::string Attr(const std::string& value) {
  return R"({"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"k": )" + value + "}}";
}

// A framework's JSON of the wrong types: each is an error naming the JSON path and what was
// found, never the JSON library's exception text (and never an exception).
TEST(ProgramErrors, JsonOfWrongTypesNamesThePath) {
  struct Case {
    std::string doc;
    std::string expect;  // in the message
  };
  const std::string big = "18446744073709551615";  // 2^64 - 1: an unsigned JSON integer
  const std::vector<Case> cases = {
      {R"({"format": 5})", "$: not a cinn_like program"},
      {R"({"format": null, "version": 1})", "$: not a cinn_like program"},
      {"[1, 2]", "$: not a cinn_like program"},
      {R"({"format": "cinn_like.program", "version": "1"})",
       "$.version: expected an integer, got string \"1\""},
      {R"({"format": "cinn_like.program", "version": 1.5})", "$.version: expected an integer"},
      {R"({"format": "cinn_like.program", "version": )" + big + "}",
       "$.version: expected an integer that fits int64"},
      {R"({"format": "cinn_like.program", "version": 1, "inputs": {}})",
       "$.inputs: expected an array, got an object"},
      {Doc("5"), "$.inputs[0]: expected an object, got number 5"},
      {Doc(R"({"name": null, "dtype": "float32", "shape": [4]})"),
       "$.inputs[0].name: expected a string, got null"},
      {Doc(R"({"name": "x", "dtype": 32, "shape": [4]})"),
       "$.inputs[0].dtype: expected a string, got number 32"},
      {Doc(R"({"name": "x", "dtype": "float33", "shape": [4]})"), "$.inputs[0].dtype: "},
      {Doc(R"({"name": "x", "dtype": "float32"})"), "$.inputs[0]: missing field 'shape'"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": "abc"})"),
       "$.inputs[0].shape: a shape is an array of sizes and symbol names, got string \"abc\""},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": {"n": 4}})"),
       "$.inputs[0].shape: a shape is an array"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4, 2.5]})"),
       "$.inputs[0].shape[1]: a dim is a size from 0 to 2147483647"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [-4]})"),
       "$.inputs[0].shape[0]: a dim is a size from 0 to 2147483647 (the int32 index range) or a "
       "symbol name, got number -4"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4000000000000]})"),
       "$.inputs[0].shape[0]: a dim is a size from 0"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [)" + big + "]}"),
       "$.inputs[0].shape[0]: a dim is a size from 0"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [""]})"), "$.inputs[0].shape[0]"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [true]})"),
       "$.inputs[0].shape[0]: a dim is a size from 0 to 2147483647 (the int32 index range) or a "
       "symbol name, got boolean true"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [[4]]})"), "got an array"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", "[]"),
       "$.instructions[0]: expected an object, got an array"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})",
           R"({"op": 7, "inputs": ["x"], "outputs": ["y"]})"),
       "$.instructions[0].op: expected a string, got number 7"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})",
           R"({"op": "relu", "inputs": "x", "outputs": ["y"]})"),
       "$.instructions[0].inputs: expected an array, got string \"x\""},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})",
           R"({"op": "relu", "inputs": ["x"], "outputs": [1]})"),
       "$.instructions[0].outputs[0]: expected a name, got number 1"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})",
           R"({"op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": 5})"),
       "$.instructions[0].attrs: expected an object, got number 5"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", Attr("3")),
       "$.instructions[0].attrs.k: an attribute is an object with one kind key"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", Attr(R"({"int": 1.5})")),
       "$.instructions[0].attrs.k: unknown attribute kind 'int' or a value of another type (got "
       "number 1.5"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", Attr(R"({"int": )" + big + "}")),
       "$.instructions[0].attrs.k.int: expected an integer that fits int64"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", Attr(R"({"ints": [1, "a"]})")),
       "$.instructions[0].attrs.k.ints[1]: expected an integer, got string \"a\""},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", Attr(R"({"floats": [1, null]})")),
       "$.instructions[0].attrs.k.floats[1]: expected a number"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", Attr(R"({"float": "x"})")),
       "$.instructions[0].attrs.k.float: expected a number"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})", Attr(R"({"bool": "yes"})")),
       "$.instructions[0].attrs.k: unknown attribute kind 'bool'"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})",
           R"({"op": "relu", "inputs": ["x"], "outputs": ["y"]})", R"([{}])"),
       "$.outputs[0]: expected a name, got an object"},
      {Doc(R"({"name": "x", "dtype": "float32", "shape": [4]})",
           R"({"op": "relu", "inputs": ["x"], "outputs": ["y"]})", "\"y\""),
       "$.outputs: expected an array, got string \"y\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Program> p = ProgramFromJson(c.doc);
    ASSERT_FALSE(p.ok()) << c.doc;
    std::string message(p.status().message());
    EXPECT_THAT(message, HasSubstr(c.expect)) << c.doc;
    EXPECT_THAT(message, ::testing::Not(HasSubstr("type_error"))) << c.doc;
    EXPECT_THAT(message, ::testing::Not(HasSubstr("[json.exception"))) << c.doc;
  }
  // The good document the cases spoil parses.
  EXPECT_TRUE(ProgramFromJson(Doc()).ok()) << ProgramFromJson(Doc()).status();
}

// Tensors past 64-bit indexing's 2^48 elements, or shape arithmetic that would overflow, are
// refused naming the op, the tensor and the bound (they were accepted, then miscompiled: a
// signed overflow in pad). Past 2^31 - 1 elements they compile with 64-bit indices
// (test_api_edges.py WideIndexTest runs them).
TEST(ProgramErrors, InputsPastTheIndexRange) {
  NetBuilder b;
  b.CreateInput(DType::kInt8, MakeShape({65536, 65536, 65537}), "x");
  EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("input x int8[65536, 65536, 65537]"),
                                HasSubstr("more than 281474976710656 elements")));
  NetBuilder c;
  c.CreateInput(DType::kFloat32, MakeShape({int64_t{1} << 40, int64_t{1} << 40}), "y");
  EXPECT_THAT(ErrorOf(c), HasSubstr("more than 281474976710656 elements"));  // overflows int64
  NetBuilder d;
  d.CreateInput(DType::kFloat32, MakeShape({4, -3}), "z");
  EXPECT_THAT(ErrorOf(d), HasSubstr("input z float32[4, -3] has a negative dim"));
  // Past int32's range the Program is fine.
  NetBuilder e;
  e.MarkOutput(e.Relu(e.CreateInput(DType::kInt8, MakeShape({65536, 32769}), "w")));
  EXPECT_TRUE(e.Build().ok());
}

/// A fill of [2] with `value` of dtype `t`, its outputs marked (none when the op is refused).
void Fill(NetBuilder& b, double value, DType t) {
  for (const Var& v : b.Op("fill", {},
                           {{"shape", std::vector<int64_t>{2}},
                            {"value", value},
                            {"dtype", std::string(DTypeName(t))}})) {
    b.MarkOutput(v);
  }
}

TEST(ProgramErrors, ReshapeToAShapePastInt64) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, MakeShape({4, 3}), "x");
  b.Op("reshape", {x}, {{"shape", std::vector<int64_t>{4, int64_t{1} << 62, 0}}});
  EXPECT_THAT(ErrorOf(b), HasSubstr("more elements than int64 holds"));
  NetBuilder c;  // the overflow in the product of the known sizes beside a -1
  auto y = c.CreateInput(DType::kFloat32, MakeShape({4, 3}), "y");
  c.Op("reshape", {y}, {{"shape", std::vector<int64_t>{int64_t{1} << 62, 8, -1}}});
  EXPECT_THAT(ErrorOf(c), HasSubstr("op reshape: cannot reshape float32[4, 3]"));
}

TEST(ProgramErrors, WindowAttributesPastInt32) {
  // Kernel sizes, strides and paddings are bounded as dims are, so window arithmetic on them
  // cannot overflow.
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, MakeShape({1, 2, 8, 8}), "x");
  b.Op("max_pool2d", {x},
       {{"kernel_size", std::vector<int64_t>{3, 3}},
        {"paddings", std::vector<int64_t>{int64_t{1} << 62, 0}}});
  EXPECT_THAT(ErrorOf(b), HasSubstr("op max_pool2d: attribute 'paddings' is [4611686018427387904, "
                                    "0], expected 2 (symmetric) or 4"));
  NetBuilder c;
  auto y = c.CreateInput(DType::kFloat32, MakeShape({1, 2, 8, 8}), "y");
  c.Op("avg_pool2d", {y}, {{"kernel_size", std::vector<int64_t>{int64_t{1} << 40, 2}}});
  EXPECT_THAT(ErrorOf(c), HasSubstr("expected 2 entries 1 to 2147483647"));
}

TEST(ProgramErrors, ScalarsThatOverflowTheirDType) {
  // As torch.full: an integer dtype refuses a value past its range, NaN or inf; a float dtype a
  // finite value that would round to inf. Infinities and NaN are fine floats.
  struct Case {
    DType dtype;
    double value;
    const char* expect;
  };
  for (const Case& c :
       {Case{DType::kInt64, 1e308, "value 1e+308 cannot be converted to int64"},
        Case{DType::kInt8, 128, "value 128 cannot be converted to int8"},
        Case{DType::kUInt8, -1, "value -1 cannot be converted to uint8"},
        Case{DType::kInt32, NAN, "value nan cannot be converted to int32"},
        Case{DType::kFloat16, 70000, "value 70000 cannot be converted to float16"}}) {
    NetBuilder b;
    Fill(b, c.value, c.dtype);
    EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("op fill"), HasSubstr(c.expect)));
  }
  for (double fine : {-128.0, 127.9, double{INFINITY}, double{NAN}}) {
    NetBuilder b;
    Fill(b, fine, std::isfinite(fine) ? DType::kInt8 : DType::kFloat16);
    EXPECT_TRUE(b.Build().ok()) << fine;
  }
  NetBuilder p;
  auto x = p.CreateInput(DType::kInt32, MakeShape({3}), "x");
  p.Op("pad", {x}, {{"paddings", std::vector<int64_t>{1, 1}}, {"value", -INFINITY}});  // no outputs
  EXPECT_THAT(ErrorOf(p), HasSubstr("op pad: value -inf cannot be converted to int32"));
}

TEST(ProgramErrors, OpOutputsPastTheIndexRange) {
  NetBuilder b;
  b.Op("fill", {},
       {{"shape", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}}, {"value", 1.0}});
  EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("op fill: output 0"),
                                HasSubstr("more than 281474976710656 elements")));
  NetBuilder c;  // a broadcast of two legal tensors
  auto x = c.CreateInput(DType::kFloat32, MakeShape({16777217, 1}), "x");
  auto y = c.CreateInput(DType::kFloat32, MakeShape({1, 16777217}), "y");
  c.MarkOutput(c.Add(x, y));
  EXPECT_THAT(ErrorOf(c), AllOf(HasSubstr("op add: output 0 float32[16777217, 16777217]"),
                                HasSubstr("more than 281474976710656")));
}

TEST(ProgramErrors, ShapeArithmeticThatWouldOverflow) {
  NetBuilder b;
  b.Op("constant", {},
       {{"shape", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}},
        {"values", std::vector<double>{1.0}}});
  EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("op constant: shape [1099511627776, 1099511627776]"),
                                HasSubstr("more than 2147483647 elements")));
  NetBuilder c;
  auto x = c.CreateInput(DType::kFloat32, MakeShape({4}), "x");
  c.Op("pad", {x}, {{"paddings", std::vector<int64_t>{int64_t{1} << 62, int64_t{1} << 62}}});
  EXPECT_THAT(ErrorOf(c), AllOf(HasSubstr("op pad: paddings 4611686018427387904"),
                                HasSubstr("of dim 0 of float32[4]")));
  for (double end : {1e30, double{INFINITY}, double{NAN}}) {
    NetBuilder d;
    d.Op("arange", {}, {{"end", end}});
    EXPECT_THAT(ErrorOf(d),
                AllOf(HasSubstr("op arange: start 0, end"), HasSubstr("at most 2147483647")));
  }
  // An end far before the start is empty (its length, -1e260, was cast to int64: UB; found by
  // fuzz_compile_run under UBSan).
  NetBuilder e;
  auto r =
      e.Op("arange", {}, {{"end", -1e200}, {"step", 1e-60}, {"dtype", std::string("float32")}});
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(ShapeToString(r[0].desc.shape), "[0]");
  // Sections past the axis (their sum overflowed int64; found by fuzz_compile_run under UBSan).
  NetBuilder f;
  auto y = f.CreateInput(DType::kFloat32, MakeShape({5, 2}), "y");
  f.Op("split", {y}, {{"sections", std::vector<int64_t>{5, INT64_MAX, -1}}});
  EXPECT_THAT(ErrorOf(f), HasSubstr("op split: section 1 is 9223372036854775807 but axis 0 of "
                                    "float32[5, 2] has size 5"));
}

TEST(ProgramErrors, GatherFromAnEmptyAxis) {
  // Every index is out of range (PyTorch raises); the compiled gather read outside the buffer.
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, MakeShape({0, 3}), "x");
  auto i = b.CreateInput(DType::kInt64, MakeShape({2}), "i");
  b.Op("gather", {x, i}, {{"axis", int64_t{0}}});
  EXPECT_THAT(ErrorOf(b), HasSubstr("op gather: axis 0 of float32[0, 3] is empty: none of the 2 "
                                    "indices (input 1) is in range"));
  NetBuilder c;  // no index: an empty result, fine
  auto y = c.CreateInput(DType::kFloat32, MakeShape({0, 3}), "y");
  c.MarkOutput(c.Op("gather", {y, c.CreateInput(DType::kInt64, MakeShape({0}), "j")},
                    {{"axis", int64_t{0}}})[0]);
  EXPECT_TRUE(c.Build().ok());
}

}  // namespace
}  // namespace cinn_like::frontend
