/// \file NVGPU intermediates without a GPU: a function whose intermediates are not arguments
/// lowers into one kernel per stage that take the workspace by pointer, host code that
/// allocates it through the runtime's hook around the launches (and frees it on every
/// path), and CUDA that NVRTC compiles to PTX.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/host_ir.h"
#include "ir/printer.h"
#include "ir/transforms/split_host_device.h"
#include "tests/cuda/temporaries_module.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

/// Occurrences of `what` in `text`.
int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CodeGenTemporaries, SplitKeepsTheWorkspaceOnTheHostAndPassesItToEachKernel) {
  auto f = testing::BuildTemporaries(ir::Target::NVGPU(90), 2);  // split by ir::Lower
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(ir::ToString((*f)->body), HasSubstr("allocate T[float32 * n] in global"));
  ASSERT_EQ((*f)->kernels.size(), 2u);
  const ir::LoweredFuncNode& k0 = *(*f)->kernels[0];
  const ir::LoweredFuncNode& k1 = *(*f)->kernels[1];
  // Kernel 0 writes T; kernel 1 reads it: the function's buffers first, then workspaces.
  ASSERT_EQ(k0.args.size(), 3u);  // A, T, n
  EXPECT_EQ(k0.args[0].name(), "A");
  EXPECT_EQ(k0.args[1].name(), "T");
  EXPECT_EQ(k0.args[1].kind, ir::Argument::Kind::kOutput);
  ASSERT_EQ(k1.args.size(), 4u);  // B, C, T, n
  EXPECT_EQ(k1.args[0].name(), "B");
  EXPECT_EQ(k1.args[1].name(), "C");
  EXPECT_EQ(k1.args[2].name(), "T");
  EXPECT_EQ(k1.args[2].kind, ir::Argument::Kind::kInput);
  // The host: allocate T around both launches, in order; the entry's arguments unchanged.
  const ir::LoweredFuncNode& host = **f;
  EXPECT_EQ(host.args.size(), 3u);
  auto* alloc = host.body.As<ir::Allocate>();
  ASSERT_NE(alloc, nullptr) << ir::ToString(host.body);
  EXPECT_EQ(alloc->buffer->name, "T");
  std::string text = ir::ToString(host.body);
  size_t first = text.find("temps2_kernel_0"), second = text.find("temps2_kernel_1");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
}

TEST(CodeGenTemporaries, HostIrAllocatesAroundTheLaunchesAndFreesOnEveryPath) {
  auto f = testing::BuildTemporaries(ir::Target::NVGPU(90), 2);
  ASSERT_TRUE(f.ok()) << f.status();
  auto ir = CudaHostIR({"temps2", ir::Target::NVGPU(90), {*f}});
  ASSERT_TRUE(ir.ok()) << ir.status();
  // Device type 2 (kDLCUDA), bytes computed from n, the caller's stream.
  // Bytes from n, saturated to SIZE_MAX (refused by the allocator) when the product overflows.
  EXPECT_THAT(*ir, HasSubstr("call { i64, i1 } @llvm.umul.with.overflow.i64(i64 4, i64 "));
  EXPECT_THAT(*ir, HasSubstr("%T.bytes = select i1 "));
  EXPECT_THAT(*ir, HasSubstr("i64 -1, i64 "));
  EXPECT_THAT(*ir, HasSubstr("%T = call ptr @cinn_like_alloc_workspace(i32 2, i64 %T.bytes, ptr "
                             "%stream)"));
  size_t alloc_at = ir->find("@cinn_like_alloc_workspace(i32 2");
  size_t launch_at = ir->find("call i32 @cinn_like_cuda_launch(");
  ASSERT_NE(launch_at, std::string::npos) << *ir;
  EXPECT_LT(alloc_at, launch_at) << *ir;
  EXPECT_EQ(Count(*ir, "call i32 @cinn_like_cuda_launch("), 2) << *ir;
  // One free after the last launch, one in T's unwind block, where each launch's failure goes
  // (and a failed allocation of the output, where the caller gave it no memory): the error paths
  // cost one free per workspace, however many launches follow it.
  const std::string free_call = "call i32 @cinn_like_free_workspace(i32 2, ptr %T";
  EXPECT_EQ(Count(*ir, free_call), 2) << *ir;
  EXPECT_EQ(Count(*ir, "label %T.unwind, label %check_ok"), 3) << *ir;
  EXPECT_LT(ir->rfind("call i32 @cinn_like_cuda_launch("), ir->rfind(free_call)) << *ir;
}

TEST(CodeGenTemporaries, TwoWorkspacesAreFreedInnermostFirstOnAFailedAllocation) {
  auto f = testing::BuildTemporaries(ir::Target::NVGPU(90), 3);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->kernels.size(), 3u);
  auto ir = CudaHostIR({"temps3", ir::Target::NVGPU(90), {*f}});
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_EQ(Count(*ir, "call ptr @cinn_like_alloc_workspace(i32 2"), 2) << *ir;
  // ir::Lower wraps the body in T's Allocate, then U's: U is the outer workspace. Each is freed
  // at the end and once in its unwind block; a launch's failure (or the output's allocation's)
  // goes to T's unwind block, which frees T and goes on to U's; a failure of T's free goes to
  // U's.
  EXPECT_EQ(Count(*ir, "@cinn_like_free_workspace(i32 2, ptr %U"), 2) << *ir;
  EXPECT_EQ(Count(*ir, "@cinn_like_free_workspace(i32 2, ptr %T"), 2) << *ir;
  EXPECT_THAT(*ir, HasSubstr("br label %U.unwind")) << *ir;
  EXPECT_EQ(Count(*ir, "label %T.unwind, label %check_ok"), 4) << *ir;
}

TEST(CodeGenTemporaries, CudaHasOneKernelPerStageAndCompilesToPtx) {
  auto f = testing::BuildTemporaries(ir::Target::NVGPU(90), 2);
  ASSERT_TRUE(f.ok()) << f.status();
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode({"temps2", ir::Target::NVGPU(90), {*f}});
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("temps2_kernel_0("));
  EXPECT_THAT(*src, HasSubstr("temps2_kernel_1("));
  EXPECT_THAT(*src, HasSubstr("T[")) << *src;
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "temps2");
  ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  EXPECT_THAT(*ptx, HasSubstr(".entry temps2_kernel_0"));
  EXPECT_THAT(*ptx, HasSubstr(".entry temps2_kernel_1"));
}

TEST(CodeGenTemporaries, SharedBufferOutsideEveryKernelIsAnError) {
  ir::Var n("n"), i("i");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto s = ir::MakeBuffer("S", ir::Float(32), {ir::Expr(32)}, ir::MemoryScope::kShared);
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "bad";
  f->args = {ir::Argument::Output(a)};
  f->body = ir::Allocate::Make(s, ir::For::Make(i, 0, n, ir::ForKind::kGpuThread,
                                                ir::Store::Make(a, {i}, ir::Expr(1.0f)), 0));
  auto split = ir::SplitHostDevice(*f);
  ASSERT_FALSE(split.ok());
  EXPECT_THAT(std::string(split.status().message()),
              HasSubstr("function bad: buffer S in shared memory is allocated outside every "
                        "kernel"));
}

}  // namespace
}  // namespace cinn_like::backends
