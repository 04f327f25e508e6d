/// \file The OpenCL target's errors: target strings, a device that does not exist, a module not
/// split for a GPU, a dtype the device lacks, an OpenCL C build error with its log, and bad
/// launches; each a status with a message, none aborting the process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backends/compiler.h"
#include "frontend/net_builder.h"
#include "hlir/graph_compiler.h"
#include "ir/flags.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/tensor.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/opencl/opencl_runtime.h"
#include "tests/fusion_cases.h"
#include "tests/opencl/opencl_executor.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(OpenCLTarget, ParsesAndPrints) {
  auto t = ir::Target::Parse("opencl -device=cpu");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->is_opencl());
  EXPECT_TRUE(t->is_gpu());
  EXPECT_EQ(t->opencl_device, "cpu");
  EXPECT_EQ(t->ToString(), "opencl -device=cpu");
  EXPECT_EQ(*ir::Target::Parse("opencl"), ir::Target::OpenCL());
  auto bad = ir::Target::Parse("opencl -device=fpga");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(Message(bad.status()), HasSubstr("expected -device=cpu or -device=gpu"));
  EXPECT_FALSE(ir::Target::Parse("cuda -device=cpu").ok());
}

TEST(OpenCLErrors, AMissingDeviceNamesTheDevicesSeen) {
  auto none = runtime::opencl::Device::Select("", "no-such-device-xyz");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(Message(none.status()),
              HasSubstr("matches cinn_like_opencl_device='no-such-device-xyz'"));
  EXPECT_THAT(Message(none.status()), HasSubstr("0: "));
  auto index = runtime::opencl::Device::Select("", "99");
  EXPECT_FALSE(index.ok());
}

TEST(OpenCLErrors, AModuleLoweredForX86IsRefused) {
  auto module = CompileProgramModule(TanhChain(), ir::Target::X86(), "f");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status s = (*compiler)->Build(*module);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("not for a GPU target"));
}

/// Schedule misuse for the OpenCL target: a hand-written schedule that binds no loop is refused
/// by lowering (the target's traits make it a GPU), naming the stage; a thread axis bound twice
/// by the schedule itself.
TEST(OpenCLErrors, AScheduleThatBindsNoLoopIsNamed) {
  ir::Var n("n");
  ir::Tensor a = ir::Placeholder("A", ir::Float(32), {n});
  ir::Tensor c = ir::Compute(
      {n}, [&](const std::vector<ir::Expr>& i) { return a(i[0]) * 2.0f; }, "C");
  ir::Schedule sch = ir::Schedule::Create({c});
  auto f = ir::Lower("unbound", {a, c}, sch, OpenCLTarget());
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(Message(f.status()), HasSubstr("a loop nest writing C has no GPU binding"));
  ir::Stage& stage = sch[c];
  auto parts = stage.Split(*stage.LeafAxis(0), 64);
  ASSERT_TRUE(parts.ok());
  ASSERT_TRUE(stage.Bind(parts->second, "threadIdx.x").ok());
  EXPECT_THAT(stage.Bind(parts->first, "threadIdx.x").message(),
              HasSubstr("threadIdx.x is already bound"));
}

TEST(OpenCLErrors, ADtypeTheDeviceLacksIsNamed) {
  NetBuilder b;
  b.MarkOutput(b.Relu(b.CreateInput(DType::kBFloat16, S({4, 8}), "x")));
  auto module = CompileProgramModule(*b.Build(), OpenCLTarget(), "bf16");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status s = (*compiler)->Build(*module);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("unsupported dtype bfloat16"));
  auto device = runtime::opencl::Device::Select("", "");
  ASSERT_TRUE(device.ok());
  if (!(*device)->info().fp16) {
    NetBuilder h;
    h.MarkOutput(h.Relu(h.CreateInput(DType::kFloat16, S({4, 8}), "x")));
    auto half = CompileProgramModule(*h.Build(), OpenCLTarget(), "f16");
    ASSERT_TRUE(half.ok()) << half.status();
    absl::Status hs = (*compiler)->Build(*half);
    ASSERT_FALSE(hs.ok());
    EXPECT_THAT(Message(hs), HasSubstr("unsupported dtype float16 for this device"));
    EXPECT_THAT(Message(hs), HasSubstr("cl_khr_fp16"));
  }
}

TEST(OpenCLErrors, ABuildErrorCarriesTheLog) {
  auto device = runtime::opencl::Device::Select("", "");
  ASSERT_TRUE(device.ok()) << device.status();
  auto program = runtime::opencl::Program::Build(
      *device, "__kernel void broken(__global float* a) { a[0] = undeclared_name; }", "broken");
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(Message(program.status()), HasSubstr("building OpenCL program broken for"));
  EXPECT_THAT(Message(program.status()), HasSubstr("CL_BUILD_PROGRAM_FAILURE"));
  EXPECT_THAT(Message(program.status()), HasSubstr("undeclared_name"));
}

TEST(OpenCLErrors, BadLaunchesAndBadCallsAreStatuses) {
  EXPECT_NE(cinn_like_opencl_launch(nullptr, 1, 1, 1, 1, 1, 1, nullptr, nullptr, 0), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("no kernel handle"));
  // A compiled function called with a tensor of the wrong shape: the entry's check.
  auto module = CompileProgramModule(SoftmaxProgram(S({4, 8})), OpenCLTarget(), "softmax");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  ASSERT_TRUE((*compiler)->Build(*module).ok());
  auto fn = (*compiler)->Lookup("softmax");
  ASSERT_TRUE(fn.ok()) << fn.status();
  TypedTensor x(ir::Float(32), {4, 9}), y(ir::Float(32), {4, 8});
  DLTensor* args[] = {x.dl(), y.dl()};
  EXPECT_NE((*fn)(args, 2, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(), HasSubstr("softmax"));
}

TEST(OpenCLSource, PromisesWorkGroupsLocalMemoryAndVectors) {
  auto compiler = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto softmax = CompileProgramModule(SoftmaxProgram(S({64, 1000})), OpenCLTarget(), "softmax");
  ASSERT_TRUE(softmax.ok()) << softmax.status();
  auto source = (*compiler)->GetSourceCode(*softmax);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT(*source, HasSubstr("__kernel "));
  EXPECT_THAT(*source, HasSubstr("get_group_id(0)"));
  EXPECT_THAT(*source, HasSubstr("get_local_id(0)"));
  EXPECT_THAT(*source, HasSubstr("__local float cinn_like_reduce_scratch_float"));
  EXPECT_THAT(*source, HasSubstr("barrier(CLK_LOCAL_MEM_FENCE)"));
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({256, 1024}), "x");
  b.MarkOutput(b.Relu(b.Mul(x, x)));
  auto ew = CompileProgramModule(*b.Build(), OpenCLTarget(), "ew");
  ASSERT_TRUE(ew.ok()) << ew.status();
  auto ew_source = (*compiler)->GetSourceCode(*ew);
  ASSERT_TRUE(ew_source.ok()) << ew_source.status();
  // Every buffer argument is 16-byte aligned (the runtime copies a misaligned one): vectors at
  // a multiple of 4 elements are aligned float4 accesses.
  EXPECT_THAT(*ew_source, HasSubstr("= *(const __global float4*)(x + "));
  EXPECT_THAT(*ew_source, HasSubstr("*(__global float4*)("));
}

/// Host tensors at addresses that are not 16-byte aligned (a view one element in): the launch
/// copies them into aligned buffers and reads the written one back, so the aligned vector
/// accesses stay right.
TEST(OpenCLRuntime, MisalignedHostTensorsGiveTheSameResults) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({64, 256}), "x");
  b.MarkOutput(b.Relu(b.Mul(x, x)));
  auto module = CompileProgramModule(*b.Build(), OpenCLTarget(), "ew");
  ASSERT_TRUE(module.ok()) << module.status();
  auto compiler = backends::Compiler::Create(OpenCLTarget());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  ASSERT_TRUE((*compiler)->Build(*module).ok());
  auto fn = (*compiler)->Lookup("ew");
  ASSERT_TRUE(fn.ok()) << fn.status();
  const int64_t count = 64 * 256;
  std::vector<float> in(count + 1), out(count + 1, -1.f);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  for (float& v : in) v = dist(rng);
  std::vector<int64_t> shape = {64, 256};
  auto tensor = [&](float* data) {
    DLTensor t{};
    t.data = data;
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    return t;
  };
  for (int offset : {0, 1}) {
    SCOPED_TRACE(offset);
    DLTensor tx = tensor(in.data() + offset), ty = tensor(out.data() + offset);
    DLTensor* args[] = {&tx, &ty};
    ASSERT_EQ((*fn)(args, 2, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t k = 0; k < count; ++k) {
      const float v = in[k + offset];
      ASSERT_EQ(out[k + offset], v * v > 0 ? v * v : 0.f) << "element " << k;
    }
  }
}

}  // namespace
}  // namespace cinn_like::testing
