/// \file Every op with a compute, compiled by the graph compiler for x86 and run against the
/// reference interpreter on fresh random inputs (the table of tests/op_cases.h); a few
/// multi-op graphs; the ops without a compute and the compiler's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "backends/compiler.h"
#include "tests/op_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

/// The ops registered without a compute (none today; list one here with the reason).
const std::set<std::string>& OpsWithoutCompute() {
  static const std::set<std::string> ops = {};
  return ops;
}

class OpX86 : public ::testing::TestWithParam<std::string> {};

TEST_P(OpX86, MatchesReference) {
  int n = 0;
  for (const OpCase& c : AllOpCases()) {
    if (c.op != GetParam()) continue;
    ++n;
    RunOpCase(c, ir::Target::X86(), RunOnX86);
  }
  EXPECT_GT(n, 0) << "no case for op " << GetParam();
}

std::vector<std::string> OpsWithCompute() {
  std::vector<std::string> out;
  for (const std::string& op : hlir::OpRegistry::Global().Names()) {
    if (!OpsWithoutCompute().count(op)) out.push_back(op);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpX86, ::testing::ValuesIn(OpsWithCompute()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(OpCoverage, EveryOpHasACaseOrIsListedWithoutCompute) {
  std::set<std::string> covered;
  for (const OpCase& c : AllOpCases()) covered.insert(c.op);
  for (const std::string& op : hlir::OpRegistry::Global().Names()) {
    const hlir::OpDef* def = *hlir::OpRegistry::Global().Find(op);
    if (OpsWithoutCompute().count(op)) {
      EXPECT_FALSE(def->compute) << op << " has a compute now: add cases and unlist it";
    } else {
      EXPECT_TRUE(def->compute) << op << " has no compute";
      EXPECT_TRUE(covered.count(op)) << op << " has no case in tests/op_cases.h";
    }
  }
}

// reduce_prod was the last op without a compute: it lowers to a product reduction (init 1,
// combine *).
TEST(GraphCompiler, ReduceProdLowersToAProductReduction) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({4, 5}), "x");
  b.MarkOutput(b.Op("reduce_prod", {x}, {{"axes", std::vector<int64_t>{1}}})[0]);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, ir::Target::X86(), "f");
  ASSERT_TRUE(module.ok()) << module.status();
  std::string text = ir::ToString(*module);
  EXPECT_THAT(text, HasSubstr("1.0")) << text;
  EXPECT_THAT(text, HasSubstr(" * ")) << text;
}

TEST(GraphCompilerError, ScalarValuesAreUnimplemented) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({4, 5}), "x");
  b.MarkOutput(b.Op("reduce_sum", {x})[0]);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, ir::Target::X86(), "f");
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(std::string(module.status().message()),
              HasSubstr("graph compiler: op reduce_sum makes the scalar (rank-0) output"));
}

/// Multi-op graphs: the program from `build`, run on x86 against the reference.
void RunGraph(const std::function<void(frontend::NetBuilder&)>& build,
              const std::vector<Domain>& domains = {}) {
  frontend::NetBuilder b;
  build(b);
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  auto graph = frontend::BuildGraph(*program);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, ir::Target::X86(), "graph");
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(std::random_device{}());
  std::vector<std::unique_ptr<TypedTensor>> owned;
  std::vector<TypedTensor*> args;
  std::vector<hlir::HostTensor> ref_in;
  for (size_t i = 0; i < graph->inputs().size(); ++i) {
    const hlir::TensorDesc& d = graph->values()[graph->inputs()[i]].desc;
    std::vector<int64_t> dims = Concrete(d.shape);
    owned.push_back(std::make_unique<TypedTensor>(hlir::ToIrType(d.dtype), dims));
    FillDomain(*owned.back(), i < domains.size() ? domains[i] : Domain::kUniform, rng);
    hlir::HostTensor h(d.dtype, dims);
    for (int64_t k = 0; k < h.size(); ++k) h.data[k] = owned.back()->Get(k);
    ref_in.push_back(h);
    args.push_back(owned.back().get());
  }
  auto want = hlir::RunReference(*graph, ref_in);
  ASSERT_TRUE(want.ok()) << want.status();
  for (const hlir::HostTensor& w : *want) {
    owned.push_back(std::make_unique<TypedTensor>(hlir::ToIrType(w.dtype), w.shape));
    args.push_back(owned.back().get());
  }
  RunOnX86(*module, args);
  for (size_t o = 0; o < want->size(); ++o) {
    const hlir::HostTensor& w = (*want)[o];
    Tolerance tol = ToleranceFor(w.dtype);
    for (int64_t k = 0; k < w.size(); ++k) {
      double g = args[graph->inputs().size() + o]->Get(k);
      ASSERT_NEAR(g, w.data[k], 4 * (tol.atol + tol.rtol * std::fabs(w.data[k])))
          << "output " << o << " element " << k;
    }
  }
}

TEST(GraphX86, BiasGelu) {
  RunGraph([](frontend::NetBuilder& b) {
    auto x = b.CreateInput(DType::kFloat32, {Sym("n"), Dim::Known(64)}, "x");
    auto bias = b.CreateInput(DType::kFloat32, S({64}), "bias");
    b.MarkOutput(b.Op("gelu", {b.Op("add", {x, bias})[0]})[0]);
  });
}

TEST(GraphX86, SoftmaxThenScale) {
  RunGraph([](frontend::NetBuilder& b) {
    auto x = b.CreateInput(DType::kFloat32, S({6, 50}), "x");
    auto s = b.Op("softmax", {x})[0];
    b.MarkOutput(b.Op("mul", {s, b.Op("exp", {x})[0]})[0]);
  });
}

TEST(GraphX86, ResidualLayerNorm) {
  RunGraph([](frontend::NetBuilder& b) {
    auto x = b.CreateInput(DType::kFloat32, S({8, 32}), "x");
    auto r = b.CreateInput(DType::kFloat32, S({8, 32}), "residual");
    auto g = b.CreateInput(DType::kFloat32, S({32}), "gamma");
    auto be = b.CreateInput(DType::kFloat32, S({32}), "beta");
    b.MarkOutput(b.Op("layer_norm", {b.Op("add", {x, r})[0], g, be})[0]);
  });
}

TEST(GraphX86, MlpWithTwoOutputs) {
  RunGraph([](frontend::NetBuilder& b) {
    auto x = b.CreateInput(DType::kFloat32, S({5, 16}), "x");
    auto w1 = b.CreateInput(DType::kFloat32, S({32, 16}), "w1");
    auto b1 = b.CreateInput(DType::kFloat32, S({32}), "b1");
    auto w2 = b.CreateInput(DType::kFloat32, S({8, 32}), "w2");
    auto h = b.Op("gelu", {b.Op("linear", {x, w1, b1})[0]})[0];
    b.MarkOutput(h);
    b.MarkOutput(b.Op("linear", {h, w2})[0]);
  });
}

TEST(GraphX86, ConvLikeBatchNormRelu) {
  RunGraph(
      [](frontend::NetBuilder& b) {
        auto x = b.CreateInput(DType::kFloat32, S({1, 4, 6, 6}), "x");
        std::vector<frontend::Var> p = {x};
        for (const char* n : {"scale", "bias", "mean", "var"}) {
          p.push_back(b.CreateInput(DType::kFloat32, S({4}), n));
        }
        b.MarkOutput(b.Op("relu", {b.Op("batch_norm", p)[0]})[0]);
      },
      {Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kUniform, Domain::kPositive});
}

}  // namespace
}  // namespace cinn_like::testing
