/// \file The entry's top-level loop nests outlined (backends/llvm/codegen_llvm_outline.cc): a
/// repeated layer's nests are made once and called per layer, the results stay right, and the
/// error paths free each workspace once however many checks follow it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "backends/llvm/host_ir.h"
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

}  // namespace
}  // namespace cinn_like::backends
