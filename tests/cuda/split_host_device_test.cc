/// \file SplitHostDevice: kernels, their arguments and launch dims, the host launches, errors;
/// ir::Lower runs it last for GPU targets only, and the NVGPU backend takes split modules.
#include "ir/transforms/split_host_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "backends/compiler.h"
#include "ir/lower.h"
#include "ir/printer.h"
#include "tests/cuda/vector_add_module.h"

namespace cinn_like::ir {
namespace {

using ::testing::HasSubstr;

/// C = A + B over n, split by 64 and bound to blocks and threads where the target has them.
absl::StatusOr<LoweredFunc> LowerVectorAdd(const Target& target) {
  Var n("n");
  Tensor a = Placeholder("A", Float(32), {n});
  Tensor b = Placeholder("B", Float(32), {n});
  Tensor c = Compute(
      {n}, [&](const std::vector<Expr>& i) { return a(i[0]) + b(i[0]); }, "C");
  auto sch = Schedule::Create({c});
  Stage& s = sch[c];
  auto parts = s.Split(*s.LeafAxis(0), 64);
  if (!parts.ok()) return parts.status();
  if (target.is_gpu()) {
    if (absl::Status st = s.Bind(parts->first, "blockIdx.x"); !st.ok()) return st;
    if (absl::Status st = s.Bind(parts->second, "threadIdx.x"); !st.ok()) return st;
  }
  return Lower("vadd", {a, b, c}, sch, target);
}

TEST(SplitHostDevice, LowerSplitsForAGpuTarget) {
  auto f = LowerVectorAdd(Target::NVGPU(90));
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ((*f)->kernels.size(), 1u);
  EXPECT_EQ((*f)->kernels[0]->name, "vadd_kernel");
  EXPECT_EQ((*f)->kernels[0]->kind, LoweredFuncNode::Kind::kDeviceKernel);
  auto* eval = (*f)->body.As<Evaluate>();
  ASSERT_NE(eval, nullptr) << ToString((*f)->body);
  EXPECT_TRUE(eval->value.As<Call>()->is_intrinsic(IntrinsicOp::kLaunchKernel));
  // The function prints with its kernels.
  EXPECT_THAT(ToString(**f), HasSubstr("launch_kernel(\"vadd_kernel\""));
  EXPECT_THAT(ToString(**f), HasSubstr("kernel vadd_kernel(A, B, C, n) grid("));
}

TEST(SplitHostDevice, LowerDoesNotSplitForX86) {
  auto f = LowerVectorAdd(Target::X86());
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE((*f)->kernels.empty());
  EXPECT_THAT(ToString((*f)->body), HasSubstr("for (i_inner, 0, 64)"));
  EXPECT_THAT(ToString((*f)->body), ::testing::Not(HasSubstr("launch_kernel")));
}

TEST(SplitHostDevice, VectorAddBecomesOneKernelAndOneLaunch) {
  LoweredFunc f = testing::GpuVectorAddFunc();
  auto split = SplitHostDevice(*f);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ((*split)->kernels.size(), 1u);
  const LoweredFuncNode& k = *(*split)->kernels[0];
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

  const LoweredFuncNode& host = **split;
  EXPECT_EQ(host.name, "myadd");
  EXPECT_EQ(host.kind, LoweredFuncNode::Kind::kHostEntry);
  EXPECT_EQ(host.args.size(), 3u);
  auto* eval = host.body.As<Evaluate>();
  ASSERT_NE(eval, nullptr) << ToString(host.body);
  auto* call = eval->value.As<Call>();
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->is_intrinsic(IntrinsicOp::kLaunchKernel));
  EXPECT_EQ(call->call_kind, Call::CallKind::kIntrinsic);
  EXPECT_EQ(call->name, "launch_kernel");
  ASSERT_EQ(call->args.size(), 8u + 4u);
  EXPECT_EQ(call->args[0].As<StringImm>()->value, "myadd_kernel");
  EXPECT_TRUE(IsConstInt(call->args[4], 64));  // block x
  EXPECT_TRUE(IsConstInt(call->args[7], 0));   // shared memory
  EXPECT_TRUE(call->args[8].same_as(f->args[0].buffer->data));
  EXPECT_TRUE(call->args[10].same_as(f->args[2].buffer->data));
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
  auto split = SplitHostDevice(*f);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ((*split)->kernels.size(), 2u);
  const LoweredFuncNode& k0 = *(*split)->kernels[0];
  const LoweredFuncNode& k1 = *(*split)->kernels[1];
  EXPECT_EQ(k0.name, "two_kernel_0");
  EXPECT_EQ(k1.name, "two_kernel_1");
  ASSERT_EQ(k0.args.size(), 3u);  // A, B, n
  EXPECT_EQ(k0.args[2].name(), "n");
  ASSERT_EQ(k1.args.size(), 1u);  // only A, written
  EXPECT_EQ(k1.args[0].kind, Argument::Kind::kOutput);
  EXPECT_TRUE(IsConstInt(k1.block_dims[0], 128)) << ToString(k1.block_dims[0]);
  EXPECT_TRUE(IsConstInt(k1.grid_dims[1], 4));
  EXPECT_TRUE(IsConstInt(k1.grid_dims[0], 1));
  auto* launches = (*split)->body.As<Block>();
  ASSERT_NE(launches, nullptr);
  ASSERT_EQ(launches->stmts.size(), 2u);
}

/// The kernel name each launch of `host` names, in order.
std::vector<std::string> LaunchedKernels(const LoweredFuncNode& host) {
  std::vector<std::string> names;
  auto* block = host.body.As<Block>();
  for (const Stmt& s : block ? block->stmts : std::vector<Stmt>{host.body}) {
    names.push_back(s.As<Evaluate>()->value.As<Call>()->args[0].As<StringImm>()->value);
  }
  return names;
}

TEST(SplitHostDevice, ANestEqualToAnEarlierOneOnOtherBuffersLaunchesThatKernel) {
  // Three layers: C = A - B, E = C - D (the first on other buffers), G = F - E (the operands'
  // roles swapped: in argument order its first input is subtracted, not subtracted from).
  Var n("n");
  std::map<std::string, Buffer> buf;
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G"}) {
    buf[name] = MakeBuffer(name, Float(32), {n});
  }
  auto sub = [&](const char* out, const char* x, const char* y) {
    Var i("i");
    return For::Make(i, 0, n, ForKind::kGpuThread,
                     Store::Make(buf[out], {i}, Load::Make(buf[x], {i}) - Load::Make(buf[y], {i})),
                     0);
  };
  auto f = std::make_shared<LoweredFuncNode>();
  f->name = "layers";
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G"}) {
    const bool out = name[0] == 'C' || name[0] == 'E' || name[0] == 'G';
    f->args.push_back(out ? Argument::Output(buf[name]) : Argument::Input(buf[name]));
  }
  f->body = Block::Make({sub("C", "A", "B"), sub("E", "C", "D"), sub("G", "F", "E")});
  auto split = SplitHostDevice(*f);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ((*split)->kernels.size(), 2u) << ToString(**split);
  EXPECT_EQ((*split)->kernels[0]->name, "layers_kernel_0");
  EXPECT_EQ((*split)->kernels[1]->name, "layers_kernel_2");
  EXPECT_THAT(LaunchedKernels(**split),
              ::testing::ElementsAre("layers_kernel_0", "layers_kernel_0", "layers_kernel_2"));
  // The second launch passes the second layer's buffers, in the kernel's argument order.
  auto* launch = (*split)->body.As<Block>()->stmts[1].As<Evaluate>()->value.As<Call>();
  ASSERT_EQ(launch->args.size(), 8u + 4u);
  EXPECT_TRUE(launch->args[8].same_as(buf["C"]->data));
  EXPECT_TRUE(launch->args[9].same_as(buf["D"]->data));
  EXPECT_TRUE(launch->args[10].same_as(buf["E"]->data));
  // The third differs only in the roles of its inputs: a kernel of its own, taking E, F, G.
  EXPECT_EQ((*split)->kernels[1]->args[0].buffer, buf["E"]);
}

TEST(SplitHostDevice, NestsOverOtherSizesShareAKernelAndOtherDtypesDoNot) {
  // Y = X * 2 over n, W = V * 2 over m (another symbolic size), H = G * 2 over n in float16.
  Var n("n"), m("m");
  auto x = MakeBuffer("X", Float(32), {n});
  auto y = MakeBuffer("Y", Float(32), {n});
  auto v = MakeBuffer("V", Float(32), {m});
  auto w = MakeBuffer("W", Float(32), {m});
  auto g = MakeBuffer("G", Float(16), {n});
  auto h = MakeBuffer("H", Float(16), {n});
  auto twice = [](const Buffer& out, const Buffer& in, const Var& extent, Expr two) {
    Var i("i");
    return For::Make(i, 0, extent, ForKind::kGpuThread,
                     Store::Make(out, {i}, Load::Make(in, {i}) * two), 0);
  };
  auto f = std::make_shared<LoweredFuncNode>();
  f->name = "sizes";
  f->args = {Argument::Input(x),  Argument::Output(y), Argument::Input(v),
             Argument::Output(w), Argument::Input(g),  Argument::Output(h)};
  f->body = Block::Make({twice(y, x, n, Expr(2.0f)), twice(w, v, m, Expr(2.0f)),
                         twice(h, g, n, Cast::Make(Float(16), Expr(2.0f)))});
  auto split = SplitHostDevice(*f);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ((*split)->kernels.size(), 2u) << ToString(**split);
  EXPECT_THAT(LaunchedKernels(**split),
              ::testing::ElementsAre("sizes_kernel_0", "sizes_kernel_0", "sizes_kernel_2"));
  // The shared kernel's second launch passes V, W and m, and launches m threads.
  auto* launch = (*split)->body.As<Block>()->stmts[1].As<Evaluate>()->value.As<Call>();
  ASSERT_EQ(launch->args.size(), 8u + 3u);
  EXPECT_TRUE(launch->args[8].same_as(v->data));
  EXPECT_TRUE(launch->args[9].same_as(w->data));
  EXPECT_TRUE(launch->args[10].same_as(m));
  EXPECT_TRUE(launch->args[4].same_as(m)) << ToString(launch->args[4]);
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
  auto split = SplitHostDevice(*f);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(split.status().message(),
            "function myadd: a loop nest writing C has no GPU binding; bind its loops to "
            "blockIdx/threadIdx");
}

TEST(SplitHostDeviceError, AFunctionIsSplitOnce) {
  auto split = SplitHostDevice(*testing::GpuVectorAddFunc());
  ASSERT_TRUE(split.ok()) << split.status();
  auto again = SplitHostDevice(**split);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), "function myadd is already split");
}

TEST(SplitHostDeviceError, TheNvgpuBackendRefusesAModuleThatIsNotSplit) {
  auto compiler = backends::Compiler::Create(Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  Module unsplit{"myadd", Target::NVGPU(90), {testing::GpuVectorAddFunc()}};
  auto source = (*compiler)->GetSourceCode(unsplit);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(),
              HasSubstr("function myadd: loop i_outer is in the host entry; "
                        "the module is not split"));
  EXPECT_FALSE((*compiler)->Build(unsplit).ok());
}

TEST(SplitHostDeviceError, TheNvgpuBackendRefusesAFunctionLoweredForX86) {
  // Lowered for x86: plain CPU loops, no GPU binding. Built for NVGPU they would run on the
  // host over device pointers; the backend must refuse them, by target and by loops.
  auto compiler = backends::Compiler::Create(Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto f = LowerVectorAdd(Target::X86());
  ASSERT_TRUE(f.ok()) << f.status();
  Module x86_module{"add_x86", Target::X86(), {*f}};
  auto source = (*compiler)->GetSourceCode(x86_module);
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(source.status().message(),
              HasSubstr("module add_x86 was lowered for x86, not for a GPU target"));
  Module relabelled{"add_x86", Target::NVGPU(90), {*f}};
  auto built = (*compiler)->Build(relabelled);
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(built.message(), HasSubstr("function vadd: loop"));
  EXPECT_THAT(built.message(), HasSubstr("is in the host entry; the module is not split"));
}

}  // namespace
}  // namespace cinn_like::ir
