/// \file Programs whose tensors would pass 32-bit indexing, or whose shape arithmetic
/// overflows, are refused with a message naming the op, the tensor and the bound (they were
/// accepted and then miscompiled: a SIGSEGV past 2^31 elements, a signed overflow in pad).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/net_builder.h"
#include "hlir/shape.h"

namespace cinn_like::frontend {
namespace {

using hlir::DType;
using hlir::MakeShape;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string ErrorOf(const NetBuilder& b) {
  auto p = b.Build();
  EXPECT_FALSE(p.ok());
  return std::string(p.status().message());
}

TEST(ProgramSizeErrors, InputsPastTheIndexRange) {
  NetBuilder b;
  b.CreateInput(DType::kInt8, MakeShape({65536, 32769}), "x");
  EXPECT_THAT(ErrorOf(b), AllOf(HasSubstr("input x int8[65536, 32769]"),
                                HasSubstr("more than 2147483647 elements")));
  NetBuilder c;
  c.CreateInput(DType::kFloat32, MakeShape({int64_t{1} << 40, int64_t{1} << 40}), "y");
  EXPECT_THAT(ErrorOf(c), HasSubstr("more than 2147483647 elements"));  // the product overflows
  NetBuilder d;
  d.CreateInput(DType::kFloat32, MakeShape({4, -3}), "z");
  EXPECT_THAT(ErrorOf(d), HasSubstr("input z float32[4, -3] has a negative dim"));
  // The largest allowed tensor is fine.
  NetBuilder e;
  e.MarkOutput(e.Relu(e.CreateInput(DType::kInt8, MakeShape({hlir::kMaxElements}), "w")));
  EXPECT_TRUE(e.Build().ok());
}

TEST(ProgramSizeErrors, OpOutputsPastTheIndexRange) {
  NetBuilder b;
  b.Op("fill", {},
       {{"shape", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}}, {"value", 1.0}});
  EXPECT_THAT(ErrorOf(b),
              AllOf(HasSubstr("op fill: output 0"), HasSubstr("more than 2147483647 elements")));
  NetBuilder c;  // a broadcast of two legal tensors
  auto x = c.CreateInput(DType::kFloat32, MakeShape({65536, 1}), "x");
  auto y = c.CreateInput(DType::kFloat32, MakeShape({1, 65536}), "y");
  c.MarkOutput(c.Add(x, y));
  EXPECT_THAT(ErrorOf(c), AllOf(HasSubstr("op add: output 0 float32[65536, 65536]"),
                                HasSubstr("more than 2147483647")));
}

TEST(ProgramSizeErrors, ShapeArithmeticThatWouldOverflow) {
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
}

TEST(ProgramSizeErrors, GatherFromAnEmptyAxis) {
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
