/// \file The JSON form of a Program round-trips exactly: every attribute kind, symbolic dims,
/// non-finite and awkward doubles.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "frontend/net_builder.h"
#include "frontend/program_json.h"

namespace cinn_like::frontend {
namespace {

using hlir::Dim;
using hlir::DType;

TEST(ProgramJson, RoundTripsExactly) {
  std::mt19937_64 rng(std::random_device{}());
  double awkward = std::uniform_real_distribution<double>(-1, 1)(rng) / 3;  // no short decimal
  Program p;
  p.inputs.push_back({"x", {DType::kBFloat16, {Dim::Symbol("n"), Dim::Known(64)}}});
  p.inputs.push_back({"y", {DType::kInt8, {}}});
  Instruction inst;
  inst.op = "custom";
  inst.inputs = {"x", "y"};
  inst.outputs = {"z"};
  inst.attrs = {{"b", true},
                {"i", int64_t{-3}},
                {"f", awkward},
                {"whole", 2.0},
                {"inf", -INFINITY},
                {"s", std::string("tanh \"quoted\"")},
                {"is", std::vector<int64_t>{}},
                {"fs", std::vector<double>{0.1, NAN, 1e300}}};
  p.instructions.push_back(inst);
  p.outputs = {"z"};
  std::string text = ProgramToJson(p);
  auto back = ProgramFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ProgramToJson(*back), text);
  const auto& a = back->instructions[0].attrs;
  EXPECT_EQ(std::get<double>(a.at("f")), awkward);             // bit-exact
  EXPECT_TRUE(std::holds_alternative<double>(a.at("whole")));  // 2.0 stays a float
  EXPECT_TRUE(
      std::holds_alternative<std::vector<int64_t>>(a.at("is")));  // empty list keeps its kind
  EXPECT_TRUE(std::isnan(std::get<std::vector<double>>(a.at("fs"))[1]));
  EXPECT_EQ(std::get<double>(a.at("inf")), -INFINITY);
  EXPECT_EQ(back->inputs[0].desc, p.inputs[0].desc);
  EXPECT_EQ(back->inputs[1].desc.shape.size(), 0u);
}

TEST(ProgramJson, ABuiltProgramSurvivesAndStillBuildsAGraph) {
  NetBuilder b;
  Var x = b.CreateInput(DType::kFloat32, {Dim::Symbol("batch"), Dim::Known(8)}, "x");
  Var w = b.CreateInput(DType::kFloat32, hlir::MakeShape({4, 8}), "w");
  b.MarkOutput(b.Softmax(b.Gelu(b.Linear(x, w), "tanh")));
  auto p = b.Build();
  ASSERT_TRUE(p.ok()) << p.status();
  auto back = ProgramFromJson(ProgramToJson(*p));
  ASSERT_TRUE(back.ok()) << back.status();
  auto graph = BuildGraph(*back);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->nodes().size(), 3u);
  const auto& out = graph->values()[graph->outputs()[0]].desc;
  EXPECT_EQ(out.ToString(), "float32[batch, 4]");
}

}  // namespace
}  // namespace cinn_like::frontend
