/// \file What the generated LLVM IR promises: vector types, the runtime's parallel loop,
/// the argument checks, kernel launches on the CUDA host side, and object export.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "backends/compiler.h"
#include "backends/llvm/host_ir.h"
#include "tests/backends/host_funcs.h"

namespace cinn_like::backends {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(X86Codegen, DenseRampIsOneVectorLoadAndStore) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  ir::Var i("i");
  ir::Expr dense = ir::Ramp::Make(i * 8, 1, 8);
  auto module = testing::MakeModule(
      "vcopy", {ir::Argument::Input(a), ir::Argument::Output(c)},
      ir::For::Make(
          i, 0, n / 8, ir::ForKind::kSerial,
          ir::Store::Make(c, {dense},
                          ir::Load::Make(a, {dense}) * ir::Broadcast::Make(ir::Expr(3.0f), 8))));
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  auto text = (*compiler)->GetSourceCode(module);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, AllOf(HasSubstr("load <8 x float>"), HasSubstr("store <8 x float>"),
                           Not(HasSubstr("extractelement"))));
}

TEST(X86Codegen, StridedRampIsScalarized) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  ir::Var i("i");
  auto module = testing::MakeModule(
      "gather", {ir::Argument::Input(a), ir::Argument::Output(c)},
      ir::For::Make(i, 0, n / 8, ir::ForKind::kSerial,
                    ir::Store::Make(c, {ir::Ramp::Make(i * 8, 1, 8)},
                                    ir::Load::Make(a, {ir::Ramp::Make(i, 2, 8)}))));
  auto text = X86HostIR(module);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, AllOf(HasSubstr("extractelement <8 x i32>"),
                           HasSubstr("insertelement <8 x float>"), HasSubstr("store <8 x float>")));
}

TEST(X86Codegen, EntryChecksArgumentsThroughTheRuntime) {
  auto text = X86HostIR(testing::VectorAdd("myadd"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(
      *text,
      AllOf(HasSubstr("define i32 @cinn_like.entry.myadd(ptr %args, i32 %num_args, ptr %stream)"),
            HasSubstr("@cinn_like_check_args(ptr @.str.myadd, ptr %args, i32 %num_args, i32 3)"),
            // Every tensor and constant dim in one call over a table (linear in the arguments),
            // the symbol n bound from A, the overlap of an output with the inputs refused.
            HasSubstr("call i32 @cinn_like_check_arguments(ptr @.str.myadd, ptr %args"),
            HasSubstr("@myadd.arguments = private unnamed_addr constant [3 x"),
            HasSubstr("cinn_like_check_index_range"), HasSubstr("cinn_like_check_overlap")));
}

TEST(X86Codegen, ArgumentDescriptorsHoldTheProgramsRank) {
  // Two one-element buffers: V a vector [1] in the Program, S its rank-0 value held as [1].
  auto v = ir::MakeBuffer("V", ir::Float(32), {ir::Expr(1)});
  auto s = ir::MakeBuffer("S", ir::Float(32), {ir::Expr(1)});
  ir::Argument scalar = ir::Argument::Output(s);
  scalar.rank_zero = true;
  auto module = testing::MakeModule("copy", {ir::Argument::Input(v), scalar},
                                    ir::Store::Make(s, {ir::Expr(0)}, ir::Load::Make(v, {0})));
  auto text = X86HostIR(module);
  ASSERT_TRUE(text.ok()) << text.status();
  // float32, the function's rank 1, the Program's rank (1, then 0), kDLCPU, an input then an
  // output, 32-bit indices.
  EXPECT_THAT(
      *text,
      AllOf(
          HasSubstr("{ ptr @.str.V, i32 2, i32 32, i32 1, i32 1, i32 1, i32 0, i64 2147483647 }"),
          HasSubstr("{ ptr @.str.S, i32 2, i32 32, i32 1, i32 0, i32 1, i32 1, i64 2147483647 }")));
}

TEST(X86Codegen, LoopHints) {
  auto unrolled = X86HostIR(testing::VectorAdd("u", ir::ForKind::kUnrolled));
  ASSERT_TRUE(unrolled.ok());
  // Symbolic extent: no full-unroll hint.
  EXPECT_THAT(*unrolled, Not(HasSubstr("llvm.loop.unroll.full")));
  auto vectorized = X86HostIR(testing::VectorAdd("v", ir::ForKind::kVectorized));
  ASSERT_TRUE(vectorized.ok());
  EXPECT_THAT(*vectorized, HasSubstr("llvm.loop.vectorize.enable"));

  auto a = ir::MakeBuffer("A", ir::Float(32), {16});
  ir::Var i("i");
  auto fixed = X86HostIR(testing::MakeModule(
      "fixed", {ir::Argument::Output(a)},
      ir::For::Make(i, 0, 16, ir::ForKind::kUnrolled, ir::Store::Make(a, {i}, ir::Expr(2.0f)))));
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_THAT(*fixed, HasSubstr("llvm.loop.unroll.full"));
}

TEST(X86Codegen, CudaHostLaunchesThroughTheRuntime) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  std::vector<ir::Expr> launch_args = {ir::StringImm::Make("myadd_kernel"),
                                       (n + 255) / 256,
                                       1,
                                       1,
                                       256,
                                       1,
                                       1,
                                       0,
                                       a->data,
                                       c->data,
                                       n};
  auto module = testing::MakeModule(
      "myadd", {ir::Argument::Input(a), ir::Argument::Output(c)},
      ir::Evaluate::Make(ir::Call::Make(ir::Void(), ir::IntrinsicOp::kLaunchKernel, launch_args)));
  auto text = CudaHostIR(module);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(
      *text,
      AllOf(
          HasSubstr("@myadd_kernel_ptr_ = external global ptr"),
          HasSubstr("call i32 @cinn_like_cuda_launch("), HasSubstr("ptr %stream"),
          // float32, rank 1 (the Program's as well), kDLCUDA, 32-bit indices
          HasSubstr("{ ptr @.str.A, i32 2, i32 32, i32 1, i32 1, i32 2, i32 0, i64 2147483647 }")));
  // x86 has no such intrinsic.
  auto x86 = X86HostIR(module);
  ASSERT_FALSE(x86.ok());
  EXPECT_THAT(x86.status().message(),
              HasSubstr("intrinsic call 'launch_kernel' is not supported by this target"));
}

TEST(X86Codegen, ExportObjectWritesAnElfFile) {
  auto compiler = Compiler::Create(ir::Target::X86());
  ASSERT_TRUE(compiler.ok());
  ASSERT_TRUE((*compiler)->Build(testing::VectorAdd("myadd", ir::ForKind::kParallel)).ok());
  std::string path = (std::filesystem::temp_directory_path() /
                      ("cinn_like_export_" + std::to_string(::getpid()) + ".o"))
                         .string();
  absl::Status s = (*compiler)->ExportObject(path);
  ASSERT_TRUE(s.ok()) << s;
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 4u);
  EXPECT_EQ(bytes.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(bytes.find("myadd"), std::string::npos);
  std::remove(path.c_str());
  // An unwritable path is an error, not an abort.
  EXPECT_FALSE((*compiler)->ExportObject("/nonexistent_dir/x.o").ok());
}

}  // namespace
}  // namespace cinn_like::backends
