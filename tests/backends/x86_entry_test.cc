/// \file The host entry's layout on x86: its top-level loop nests outlined
/// (backends/llvm/codegen_llvm_outline.cc), a repeated layer's nests made once and called per
/// layer, and its constant-size workspaces one arena from the allocation hook; results stay
/// right and a refused arena is an error that leaks nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "backends/llvm/host_ir.h"
#include "ir/flags.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/bench/compile_time_programs.h"
#include "tests/counting_allocator.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::backends {
namespace {

using testing::NetBuilder;
using testing::Program;

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// `layers` residual blocks x + gelu(layer_norm(x) @ w_k + b_k), each with its own weights of
/// the same shapes: the second and later blocks lower to nests equal to the first's up to
/// buffers.
Program Blocks(int layers) {
  NetBuilder b;
  using hlir::DType;
  auto x = b.CreateInput(DType::kFloat32, hlir::MakeShape({8, 32}), "x");
  for (int k = 0; k < layers; ++k) {
    std::string s = std::to_string(k);
    auto scale = b.CreateInput(DType::kFloat32, hlir::MakeShape({32}), "scale" + s);
    auto shift = b.CreateInput(DType::kFloat32, hlir::MakeShape({32}), "shift" + s);
    auto w = b.CreateInput(DType::kFloat32, hlir::MakeShape({32, 32}), "w" + s);
    auto bias = b.CreateInput(DType::kFloat32, hlir::MakeShape({32}), "b" + s);
    x = b.Add(x, b.Gelu(b.Add(b.Matmul(b.LayerNorm(x, scale, shift), w), bias)));
  }
  b.MarkOutput(x);
  return *b.Build();
}

TEST(X86Outline, RepeatedLayersCallTheFirstLayersNests) {
  auto one = testing::CompileProgramModule(Blocks(1), ir::Target::X86(), "fused");
  auto three = testing::CompileProgramModule(Blocks(3), ir::Target::X86(), "fused");
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(three.ok()) << three.status();
  auto ir1 = X86HostIR(*one);
  auto ir3 = X86HostIR(*three);
  ASSERT_TRUE(ir1.ok()) << ir1.status();
  ASSERT_TRUE(ir3.ok()) << ir3.status();
  const std::string define = "define internal i32 @fused_nest_";
  const std::string call = "call i32 @fused_nest_";
  int nests = Count(*ir1, define);
  ASSERT_GT(nests, 0) << *ir1;
  EXPECT_EQ(Count(*ir1, call), nests) << *ir1;
  // Three layers: the same functions, each called three times.
  EXPECT_EQ(Count(*ir3, define), nests) << *ir3;
  EXPECT_EQ(Count(*ir3, call), 3 * nests) << *ir3;
}

TEST(X86Outline, RepeatedLayersMatchTheReference) {
  testing::RunProgramCase(Blocks(3), ir::Target::X86(),
                          [](const ir::Module& m, std::vector<testing::TypedTensor*>& args) {
                            testing::RunOnX86(m, args);
                          });
}

/// `steps` times x = tanh(x - reduce_mean(x, 1)): on x86 each mean is a stored temporary (a
/// workspace of the arena) and each elementwise step is inlined into its reader.
absl::StatusOr<frontend::Program> CenteringChain(int steps) {
  frontend::NetBuilder b;
  frontend::Var x = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({64, 256}), "x");
  for (int i = 0; i < steps; ++i) x = b.Tanh(b.Sub(x, b.ReduceMean(x, {1}, /*keepdim=*/true)));
  b.MarkOutput(x);
  return b.Build();
}

TEST(X86Outline, HostIrGrowsLinearlyWithTheProgram) {
  // 4x the temporaries is about 4x the host IR, not 16x (the error paths once repeated every
  // live workspace's free at every check).
  auto text = [](int ops) {
    auto program = CenteringChain(ops / 4);
    EXPECT_TRUE(program.ok()) << program.status();
    auto module = testing::CompileProgramModule(*program, ir::Target::X86(), "chain");
    EXPECT_TRUE(module.ok()) << module.status();
    auto ir = X86HostIR(*module);
    EXPECT_TRUE(ir.ok()) << ir.status();
    return ir.ok() ? *ir : std::string();
  };
  std::string small = text(100), large = text(400);
  ASSERT_FALSE(small.empty());
  double growth = static_cast<double>(large.size()) / small.size();
  EXPECT_GT(growth, 2.0);
  EXPECT_LT(growth, 5.0) << "growth " << growth << "; host IR of 100 ops: " << small.size()
                         << " bytes, of 400: " << large.size();
  // One arena, freed at the end and in its unwind block; every error path goes through it.
  EXPECT_EQ(Count(large, "call ptr @cinn_like_alloc_workspace("), 1);
  EXPECT_EQ(Count(large, "call i32 @cinn_like_free_workspace("), 2);
}

TEST(X86Arena, ConstantWorkspacesAreOneAllocationPerCall) {
  // Generated matmuls: oneDNN's take their scratchpads from the same hook at each call.
  const bool externs = FLAGS_cinn_like_extern_libs;
  FLAGS_cinn_like_extern_libs = false;
  absl::Cleanup restore = [externs] { FLAGS_cinn_like_extern_libs = externs; };
  testing::CountingAllocator counter;
  ASSERT_TRUE(counter.installed());
  auto module = testing::CompileProgramModule(Blocks(2), ir::Target::X86(), "fused");
  ASSERT_TRUE(module.ok()) << module.status();
  auto ir = X86HostIR(*module);
  ASSERT_TRUE(ir.ok()) << ir.status();
  ASSERT_EQ(Count(*ir, "call ptr @cinn_like_alloc_workspace("), 1) << *ir;  // the arena
  // The arena holds several intermediates (their addresses are offsets in it), 256-aligned.
  EXPECT_GE(Count(*ir, "getelementptr inbounds i8, ptr %arena"), 2) << *ir;
  testing::RunProgramCase(Blocks(2), ir::Target::X86(),
                          [](const ir::Module& m, std::vector<testing::TypedTensor*>& args) {
                            testing::RunOnX86(m, args);
                          });
  EXPECT_EQ(counter.allocs, 1);
  EXPECT_EQ(counter.frees, 1);
  ASSERT_EQ(counter.bytes.size(), 1u);
  EXPECT_GE(counter.bytes[0], size_t{8 * 32 * 4 * 2});
}

/// Two stages, each a stored column sum of 8 MiB read by a row max: the second stage's sum
/// needs only the first stage's maxima.
Program TwoLargeStages() {
  NetBuilder b;
  auto x = b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({2, 2048, 1024}), "x");
  auto a = b.ReduceSum(x, {0});
  auto ra = b.ReduceMax(b.Tanh(a), {1}, /*keepdim=*/true);  // [2048, 1]
  auto b2 = b.ReduceSum(b.Mul(x, b.BroadcastTo(ra, {2, 2048, 1024})), {0});
  b.MarkOutput(b.ReduceMax(b.Tanh(b2), {1}));
  return *b.Build();
}

TEST(X86Arena, LargeWorkspacesAreAllocatedForTheirLiveRangeOnly) {
  // Each 8 MiB sum is allocated before the statement that writes it and freed after the one
  // that last reads it, so the two are never allocated together; in the arena each would have
  // stayed allocated for the whole call.
  testing::CountingAllocator counter;
  ASSERT_TRUE(counter.installed());
  auto module = testing::CompileProgramModule(TwoLargeStages(), ir::Target::X86(), "stages");
  ASSERT_TRUE(module.ok()) << module.status();
  auto ir = X86HostIR(*module);
  ASSERT_TRUE(ir.ok()) << ir.status();
  constexpr size_t kSum = size_t{2048} * 1024 * 4;
  testing::RunProgramCase(TwoLargeStages(), ir::Target::X86(),
                          [](const ir::Module& m, std::vector<testing::TypedTensor*>& args) {
                            testing::RunOnX86(m, args);
                          });
  EXPECT_EQ(counter.allocs, counter.frees);
  EXPECT_EQ(std::count(counter.bytes.begin(), counter.bytes.end(), kSum), 2) << *ir;
  EXPECT_LT(counter.peak_bytes, 2 * kSum) << *ir;
  EXPECT_EQ(counter.live_bytes, 0u);
}

/// A program compiled for x86 with arguments of its shapes (values unset), to call directly.
struct DirectCall {
  explicit DirectCall(const Program& program) {
    auto graph = frontend::BuildGraph(program);
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto module = testing::CompileProgramModule(program, ir::Target::X86(), "fused");
    EXPECT_TRUE(module.ok()) << module.status();
    auto made = Compiler::Create(ir::Target::X86());
    EXPECT_TRUE(made.ok()) << made.status();
    if (!graph.ok() || !module.ok() || !made.ok()) return;
    compiler = std::move(*made);
    EXPECT_TRUE(compiler->Build(*module).ok());
    auto looked_up = compiler->Lookup("fused");
    EXPECT_TRUE(looked_up.ok()) << looked_up.status();
    if (looked_up.ok()) fn = *looked_up;
    std::vector<int> values = graph->inputs();
    values.insert(values.end(), graph->outputs().begin(), graph->outputs().end());
    for (int v : values) {
      const hlir::Value& value = graph->values()[v];
      tensors.push_back(std::make_unique<testing::TypedTensor>(
          hlir::ToIrType(value.desc.dtype), testing::Concrete(value.desc.shape)));
      args.push_back(tensors.back()->dl());
    }
  }
  int Run() { return fn(args.data(), static_cast<int32_t>(args.size()), nullptr); }

  std::unique_ptr<Compiler> compiler;
  EntryFunction fn = nullptr;
  std::vector<std::unique_ptr<testing::TypedTensor>> tensors;
  std::vector<DLTensor*> args;
};

TEST(X86Arena, RefusedArenaIsAnErrorThatLeaksNothing) {
  DirectCall call(Blocks(2));
  ASSERT_NE(call.fn, nullptr);
  testing::CountingAllocator counter(/*fail_at=*/1);
  ASSERT_TRUE(counter.installed());
  cinn_like_clear_last_error();
  EXPECT_NE(call.Run(), 0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              ::testing::HasSubstr("workspace on cpu failed"));
  EXPECT_EQ(counter.refused, 1);
  EXPECT_EQ(counter.allocs, 0);
  EXPECT_EQ(counter.frees, 0);
}

TEST(X86Arena, RefusedLargeWorkspaceIsAnErrorThatLeaksNothing) {
  // Each allocation of a call refused in turn: the call fails naming the workspace, and every
  // allocation made before it (the arena, a large workspace) is freed.
  DirectCall call(TwoLargeStages());
  ASSERT_NE(call.fn, nullptr);
  int made = 0;
  {
    testing::CountingAllocator counter;
    ASSERT_EQ(call.Run(), 0) << cinn_like_get_last_error();
    made = counter.allocs;
  }
  ASSERT_GE(made, 2);
  for (int k = 1; k <= made; ++k) {
    testing::CountingAllocator counter(/*fail_at=*/k);
    cinn_like_clear_last_error();
    EXPECT_NE(call.Run(), 0) << "allocation " << k;
    EXPECT_THAT(std::string(cinn_like_get_last_error()),
                ::testing::HasSubstr("workspace on cpu failed"));
    EXPECT_EQ(counter.refused, 1);
    EXPECT_EQ(counter.allocs, k - 1);
    EXPECT_EQ(counter.frees, counter.allocs) << "allocation " << k;
    EXPECT_EQ(counter.live_bytes, 0u) << "allocation " << k;
  }
}

}  // namespace
}  // namespace cinn_like::backends
