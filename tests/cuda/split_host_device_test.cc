/// \file SplitHostDevice: kernels, their arguments and launch dims, the host launches, errors.
#include "ir/transforms/split_host_device.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "tests/cuda/vector_add_module.h"

namespace cinn_like::ir {
namespace {

TEST(SplitHostDevice, VectorAddBecomesOneKernelAndOneLaunch) {
  Module m = testing::GpuVectorAdd();
  auto split = SplitHostDevice(m);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->device.functions.size(), 1u);
  const LoweredFuncNode& k = *split->device.functions[0];
  EXPECT_EQ(k.name, "myadd_kernel");
  EXPECT_EQ(k.kind, LoweredFuncNode::Kind::kDeviceKernel);
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[0].name(), "A");
  EXPECT_EQ(k.args[0].kind, Argument::Kind::kInput);
  EXPECT_EQ(k.args[1].name(), "B");
  EXPECT_EQ(k.args[2].name(), "C");
  EXPECT_EQ(k.args[2].kind, Argument::Kind::kOutput);
  EXPECT_EQ(k.args[3].name(), "n");
  EXPECT_EQ(k.args[3].kind, Argument::Kind::kScalar);
  EXPECT_EQ(ToString(k.grid_dims[0]), ToString((Var(k.args[3].var) + 63) / 64));
  EXPECT_TRUE(IsConstInt(k.grid_dims[1], 1));
  EXPECT_TRUE(IsConstInt(k.block_dims[0], 64));
  EXPECT_TRUE(IsConstInt(k.block_dims[2], 1));

  ASSERT_EQ(split->host.functions.size(), 1u);
  const LoweredFuncNode& host = *split->host.functions[0];
  EXPECT_EQ(host.name, "myadd");
  EXPECT_EQ(host.kind, LoweredFuncNode::Kind::kHostEntry);
  EXPECT_EQ(host.args.size(), 3u);
  auto* eval = host.body.As<Evaluate>();
  ASSERT_NE(eval, nullptr) << ToString(host.body);
  auto* call = eval->value.As<Call>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->name, kLaunchKernel);
  EXPECT_EQ(call->call_kind, Call::CallKind::kIntrinsic);
  ASSERT_EQ(call->args.size(), 8u + 4u);
  EXPECT_EQ(call->args[0].As<StringImm>()->value, "myadd_kernel");
  EXPECT_TRUE(IsConstInt(call->args[4], 64));  // block x
  EXPECT_TRUE(IsConstInt(call->args[7], 0));   // shared memory
  EXPECT_TRUE(call->args[8].same_as(m.functions[0]->args[0].buffer->data));
  EXPECT_TRUE(call->args[10].same_as(m.functions[0]->args[2].buffer->data));
  EXPECT_EQ(call->args[11].As<Variable>()->name, "n");
}

TEST(SplitHostDevice, SeveralNestsBecomeNumberedKernelsThatTakeOnlyWhatTheyUse) {
  Var n("n");
  auto a = MakeBuffer("A", Float(32), {n});
  auto b = MakeBuffer("B", Float(32), {n});
  Var i("i"), j("j"), t("t");
  Stmt first = For::Make(i, 0, n, ForKind::kGpuThread,
                         Store::Make(b, {i}, Load::Make(a, {i}) * Expr(2.0f)), 0);
  // The same axis bound twice with different extents: the launch takes the larger.
  Stmt second =
      Block::Make({For::Make(j, 0, 32, ForKind::kGpuThread, Store::Make(a, {j}, Expr(1.0f)), 0),
                   For::Make(t, 0, 128, ForKind::kGpuThread, Store::Make(a, {t}, Expr(2.0f)), 0)});
  Stmt second_nest = For::Make(Var("bx"), 0, 4, ForKind::kGpuBlock, second, 1);
  auto f = std::make_shared<LoweredFuncNode>();
  f->name = "two";
  f->args = {Argument::Input(a), Argument::Output(b)};
  f->body = Block::Make({first, second_nest});
  Module m{"two", Target::NVGPU(90), {f}};
  auto split = SplitHostDevice(m);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->device.functions.size(), 2u);
  const LoweredFuncNode& k0 = *split->device.functions[0];
  const LoweredFuncNode& k1 = *split->device.functions[1];
  EXPECT_EQ(k0.name, "two_kernel_0");
  EXPECT_EQ(k1.name, "two_kernel_1");
  ASSERT_EQ(k0.args.size(), 3u);  // A, B, n
  EXPECT_EQ(k0.args[2].name(), "n");
  ASSERT_EQ(k1.args.size(), 1u);  // only A, written
  EXPECT_EQ(k1.args[0].kind, Argument::Kind::kOutput);
  EXPECT_TRUE(IsConstInt(k1.block_dims[0], 128)) << ToString(k1.block_dims[0]);
  EXPECT_TRUE(IsConstInt(k1.grid_dims[1], 4));
  EXPECT_TRUE(IsConstInt(k1.grid_dims[0], 1));
  auto* launches = split->host.functions[0]->body.As<Block>();
  ASSERT_NE(launches, nullptr);
  ASSERT_EQ(launches->stmts.size(), 2u);
}

TEST(SplitHostDeviceError, UnboundLoopNestNamesFunctionAndBuffer) {
  Var n("n");
  auto a = MakeBuffer("A", Float(32), {n});
  auto c = MakeBuffer("C", Float(32), {n});
  Var i("i");
  auto f = std::make_shared<LoweredFuncNode>();
  f->name = "myadd";
  f->args = {Argument::Input(a), Argument::Output(c)};
  f->body = For::Make(i, 0, n, ForKind::kSerial, Store::Make(c, {i}, Load::Make(a, {i})));
  Module m{"myadd", Target::NVGPU(90), {f}};
  auto split = SplitHostDevice(m);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(split.status().message(),
            "function myadd: a loop nest writing C has no GPU binding; bind its loops to "
            "blockIdx/threadIdx");
}

}  // namespace
}  // namespace cinn_like::ir
