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
#include "ir/flags.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

TEST(OpNVGPU, EveryOpAndDTypeCompilesToPtx) {
  // Generated kernels for every op, matmul and conv included: the library path (cuBLAS,
  // cuDNN) has no device code and is covered by the extern tests.
  gflags::FlagSaver saver;
  FLAGS_cinn_like_extern_libs = false;
  const ir::Target target = ir::Target::NVGPU(90);
  auto compiler = backends::Compiler::Create(target);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  backends::nvrtc::Compiler nvrtc;
  std::set<std::tuple<std::string, DType, size_t, size_t>> seen;
  std::set<std::string> compiled_ops;
  int compiled = 0;
  for (const OpCase& c : AllOpCases()) {
    DType t = c.dtypes.empty() ? DType::kFloat32 : c.dtypes.back();
    // One module per op, dtype, input count (linear with or without bias) and rank.
    const size_t rank = c.shapes.empty() ? 0 : c.shapes[0].size();
    if (!seen.insert({c.op, t, c.shapes.size(), rank}).second) continue;
    SCOPED_TRACE(c.Describe());
    auto graph = CaseGraph(c);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto module = hlir::CompileGraph(*graph, target, "op_case");
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
  // Every op with a compute compiles (intermediate reductions become device temporaries).
  for (const std::string& op : hlir::OpRegistry::Global().Names()) {
    const hlir::OpDef* def = *hlir::OpRegistry::Global().Find(op);
    if (def->compute) EXPECT_TRUE(compiled_ops.count(op)) << op << " compiled for no dtype";
  }
  EXPECT_GT(compiled, 100);
  std::cout << "NVGPU: " << compiled << " op/dtype modules compiled to PTX\n";
}

TEST(OpNVGPU, SixteenBitSigmoidSiluAndTanhGeluTakeTheApproximateSteps) {
  // hlir/ops/elementwise_def.h `rounded16`: for 16-bit outputs __expf and rcp.approx.f32 (in
  // the PTX without .ftz: subnormal results kept); float32 outputs keep expf and the division.
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  backends::nvrtc::Compiler nvrtc;
  for (const char* op : {"sigmoid", "silu", "gelu"}) {
    for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
      AttributeMap attrs;
      if (std::string(op) == "gelu") attrs["approximate"] = std::string("tanh");
      OpCase c{op, {t}, {S({64, 256})}, attrs, {}};
      SCOPED_TRACE(c.Describe());
      auto graph = CaseGraph(c);
      ASSERT_TRUE(graph.ok()) << graph.status();
      auto module = hlir::CompileGraph(*graph, ir::Target::NVGPU(90), "act");
      ASSERT_TRUE(module.ok()) << module.status();
      auto src = (*compiler)->GetSourceCode(*module);
      ASSERT_TRUE(src.ok()) << src.status();
      EXPECT_THAT(*src, ::testing::Not(HasSubstr("tanhf(")));
      auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "act");
      ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
      // __expf is ex2.approx.f32; the precise expf's ex2 flushes (ex2.approx.ftz.f32).
      if (t == DType::kFloat32) {
        EXPECT_THAT(*src, HasSubstr("expf("));
        EXPECT_THAT(*src, ::testing::Not(HasSubstr("__expf(")));
        EXPECT_THAT(*src, ::testing::Not(HasSubstr("cinn_like_rcp_approx")));
        EXPECT_THAT(*ptx, ::testing::Not(HasSubstr("rcp.approx")));
        EXPECT_THAT(*ptx, ::testing::Not(HasSubstr("ex2.approx.f32")));
      } else {
        EXPECT_THAT(*src, HasSubstr("cinn_like_rcp_approx(__expf("));
        EXPECT_THAT(*ptx, HasSubstr("rcp.approx.f32 "));
        EXPECT_THAT(*ptx, HasSubstr("ex2.approx.f32"));
      }
    }
  }
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

/// The number of __global__ functions in CUDA source.
int CountKernels(const std::string& src) {
  int n = 0;
  for (size_t at = src.find("__global__"); at != std::string::npos;
       at = src.find("__global__", at + 1))
    ++n;
  return n;
}

TEST(OpNVGPU, IntermediateElementwiseIsInlinedAndReductionIsADeviceTemporary) {
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
  ASSERT_TRUE(m2.ok()) << m2.status();
  auto host = (*compiler)->GetSourceCode(*m2);
  ASSERT_TRUE(host.ok()) << host.status();
  // The row max and row sum are kernels of their own writing device temporaries.
  EXPECT_THAT(*host, HasSubstr("softmax_0_max"));
  EXPECT_GE(CountKernels(*host), 2);
}

}  // namespace
}  // namespace cinn_like::testing
