/// \file Every op's module from the graph compiler for NVGPU (sm_90 forced, no GPU needed):
/// CUDA source from the NVGPU compiler, compiled to PTX by NVRTC. One case per op and dtype of
/// the op table (tests/op_cases.h). Ops whose compute has an intermediate reduction wait for
/// device temporaries: their error is checked instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

/// The ops whose computes make intermediate reductions for some dtypes (float accumulation,
/// NaN propagation, normalizations, bias): Unimplemented on NVGPU until device temporaries.
const std::set<std::string>& MayNeedDeviceTemporaries() {
  static const std::set<std::string> ops = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                                            "softmax",    "log_softmax", "layer_norm", "rms_norm",
                                            "matmul",     "linear",      "argmax",     "argmin"};
  return ops;
}

TEST(OpNVGPU, EveryOpAndDTypeCompilesToPtx) {
  const ir::Target target = ir::Target::NVGPU(90);
  auto compiler = backends::Compiler::Create(target);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  backends::nvrtc::Compiler nvrtc;
  std::set<std::tuple<std::string, DType, size_t>> seen;
  std::set<std::string> compiled_ops;
  int compiled = 0, pending = 0;
  for (const OpCase& c : AllOpCases()) {
    DType t = c.dtypes.empty() ? DType::kFloat32 : c.dtypes.back();
    if (!seen.insert({c.op, t, c.shapes.size()}).second) continue;  // linear with/without bias
    SCOPED_TRACE(c.Describe());
    auto graph = CaseGraph(c);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto module = hlir::CompileGraph(*graph, target, "op_case");
    if (!module.ok() && NeedsDeviceTemporary(module.status())) {
      EXPECT_TRUE(MayNeedDeviceTemporaries().count(c.op)) << module.status();
      EXPECT_THAT(std::string(module.status().message()),
                  HasSubstr("graph compiler: the intermediate reduction"));
      ++pending;
      continue;
    }
    ASSERT_TRUE(module.ok()) << module.status();
    auto src = (*compiler)->GetSourceCode(*module);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_THAT(*src, HasSubstr("__global__"));
    auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "op_case");
    ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
    EXPECT_THAT(*ptx, HasSubstr(".target sm_90"));
    compiled_ops.insert(c.op);
    ++compiled;
  }
  // Every op compiles for some dtype, except the normalizations (always two reductions).
  for (const std::string& op : hlir::OpRegistry::Global().Names()) {
    const hlir::OpDef* def = *hlir::OpRegistry::Global().Find(op);
    if (!def->compute) continue;
    if (op == "softmax" || op == "log_softmax" || op == "layer_norm" || op == "rms_norm" ||
        op == "reduce_mean" || op == "argmax" || op == "argmin") {
      continue;
    }
    EXPECT_TRUE(compiled_ops.count(op)) << op << " compiled for no dtype";
  }
  EXPECT_GT(compiled, 100);
  std::cout << "NVGPU: " << compiled << " op/dtype modules compiled to PTX, " << pending
            << " wait for device temporaries\n";
}

TEST(OpNVGPU, ElementwiseScheduleBindsBlocksAndThreads) {
  OpCase c{"add", {DType::kFloat32, DType::kFloat32}, {S({300, 7}), S({7})}, {}, {}};
  auto graph = CaseGraph(c);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, ir::Target::NVGPU(90), "add_bias");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  auto src = (*compiler)->GetSourceCode(*module);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("__launch_bounds__(256)"));
  EXPECT_THAT(*src, HasSubstr("blockIdx.x"));
  EXPECT_THAT(*src, HasSubstr("threadIdx.x"));
}

TEST(OpNVGPU, ReductionBindsTheReduceAxisToThreads) {
  OpCase c{
      "reduce_sum", {DType::kFloat32}, {S({64, 1000})}, {{"axes", std::vector<int64_t>{1}}}, {}};
  auto graph = CaseGraph(c);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, ir::Target::NVGPU(90), "row_sum");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  auto src = (*compiler)->GetSourceCode(*module);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("__launch_bounds__(256)"));
  EXPECT_THAT(*src, HasSubstr("block_reduce"));
}

TEST(OpNVGPU, IntermediateElementwiseIsInlinedAndReductionIsPending) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({16, 64}), "x");
  auto bias = b.CreateInput(DType::kFloat32, S({64}), "bias");
  b.MarkOutput(b.Op("gelu", {b.Op("add", {x, bias})[0]})[0]);
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, ir::Target::NVGPU(90), "bias_gelu");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  auto src = (*compiler)->GetSourceCode(*module);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("erf"));
  EXPECT_THAT(*src, ::testing::Not(HasSubstr("add_0[")));  // the sum is inlined

  frontend::NetBuilder s;
  auto y = s.CreateInput(DType::kFloat32, S({4, 32}), "y");
  s.MarkOutput(s.Op("softmax", {y})[0]);
  auto g2 = frontend::BuildGraph(*s.Build());
  ASSERT_TRUE(g2.ok()) << g2.status();
  auto m2 = hlir::CompileGraph(*g2, ir::Target::NVGPU(90), "softmax");
  ASSERT_FALSE(m2.ok());
  EXPECT_THAT(std::string(m2.status().message()),
              HasSubstr("the intermediate reduction softmax_0_max of op softmax needs a device "
                        "temporary"));
}

}  // namespace
}  // namespace cinn_like::testing
