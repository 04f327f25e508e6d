/// \file Extern library calls on NVGPU without a GPU: a matmul (cuBLAS) or conv2d (cuDNN)
/// extern between two elementwise stages lowers to two kernels and a host call of the runtime
/// function between their launches, with the intermediates as device workspaces; the CUDA
/// compiles to PTX. Extern inputs must be stored, not inlined.
#include <glog/logging.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/host_ir.h"
#include "ir/printer.h"
#include "ir/transforms/split_host_device.h"
#include "tests/cuda/extern_module.h"
#ifdef CINN_LIKE_WITH_ONEDNN
#include "runtime/x86/onednn.h"
#endif

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;

const ir::Target kGpu = ir::Target::NVGPU(90);

const hlir::OpDef& Op(const std::string& name) {
  auto op = hlir::OpRegistry::Global().Find(name);
  CHECK(op.ok()) << op.status();
  return **op;
}

absl::StatusOr<ir::LoweredFunc> MatmulSandwich() {
  ir::Tensor b = ir::Placeholder("B", ir::Float(32), {32, 16});
  return testing::BuildExternSandwich("mm", Op("matmul").extern_compute, {}, ir::Float(32),
                                      {64, 32}, {b}, {64, 16}, ir::Target::NVGPU(90));
}

absl::StatusOr<ir::LoweredFunc> ConvSandwich() {
  ir::Tensor w = ir::Placeholder("W", ir::Float(32), {16, 3, 3, 3});
  hlir::AttributeMap attrs{{"paddings", std::vector<int64_t>{1, 1}}};
  return testing::BuildExternSandwich("conv", Op("conv2d").extern_compute, attrs, ir::Float(32),
                                      {1, 3, 224, 224}, {w}, {1, 16, 224, 224},
                                      ir::Target::NVGPU(90));
}

/// Host IR positions of the first launch, the extern call and the second launch, in order.
void ExpectLaunchCallLaunch(const ir::LoweredFunc& f, const std::string& callee) {
  ASSERT_EQ(f->kernels.size(), 2u) << ir::ToString(*f);  // split by ir::Lower
  std::string host_text = ir::ToString(f->body);
  EXPECT_THAT(host_text, HasSubstr("allocate Pre[")) << host_text;
  EXPECT_THAT(host_text, HasSubstr("allocate E[")) << host_text;
  auto ir = CudaHostIR({f->name, ir::Target::NVGPU(90), {f}});
  ASSERT_TRUE(ir.ok()) << ir.status();
  size_t first = ir->find("call i32 @cinn_like_cuda_launch(");
  // Pre's address read from the entry's frame at its use (%Pre1, ...).
  size_t call = ir->find("call i32 @" + callee + "(ptr %Pre");
  size_t second = ir->find("call i32 @cinn_like_cuda_launch(", first + 1);
  ASSERT_NE(first, std::string::npos) << *ir;
  ASSERT_NE(call, std::string::npos) << *ir;
  ASSERT_NE(second, std::string::npos) << *ir;
  EXPECT_LT(first, call);
  EXPECT_LT(call, second);
  EXPECT_THAT(*ir, HasSubstr("declare i32 @" + callee + "(ptr, ptr, ptr, ptr, i64"));
  EXPECT_THAT(*ir, HasSubstr("ptr %stream)")) << *ir;
  // The workspaces (of constant size) are parts of one arena from the runtime's hook on the
  // device (type 2).
  EXPECT_THAT(*ir, HasSubstr("%arena = call ptr @cinn_like_alloc_workspace(i32 2, i64 "));
  EXPECT_EQ(ir->find("call ptr @cinn_like_alloc_workspace"),
            ir->rfind("call ptr @cinn_like_alloc_workspace"))
      << *ir;
  EXPECT_THAT(*ir, HasSubstr("%E = getelementptr inbounds i8, ptr %arena"));
  EXPECT_THAT(*ir, HasSubstr("%Pre = getelementptr inbounds i8, ptr %arena"));

  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode({f->name, ir::Target::NVGPU(90), {f}});
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, ::testing::Not(HasSubstr(callee)));
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, f->name);
  ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  EXPECT_THAT(*ptx, HasSubstr(".entry " + f->name + "_kernel_0"));
  EXPECT_THAT(*ptx, HasSubstr(".entry " + f->name + "_kernel_2"));
}

TEST(ExternCodegen, MatmulIsAHostCublasCallBetweenTwoKernels) {
  auto f = MatmulSandwich();
  ASSERT_TRUE(f.ok()) << f.status();
  std::string body = ir::ToString((*f)->body);
  EXPECT_THAT(body, HasSubstr("extern_call(\"cinn_like_cublas_matmul\""));
  ExpectLaunchCallLaunch(*f, "cinn_like_cublas_matmul");
}

TEST(ExternCodegen, Conv2dIsAHostCudnnCallBetweenTwoKernels) {
  auto f = ConvSandwich();
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectLaunchCallLaunch(*f, "cinn_like_cudnn_conv2d");
}

TEST(ExternCodegen, MatmulPartlyBroadcastBatchFallsBackToGeneratedCompute) {
  ir::Tensor x = ir::Placeholder("X", ir::Float(32), {2, 1, 4, 8});
  ir::Tensor y = ir::Placeholder("Y", ir::Float(32), {1, 3, 8, 5});
  auto t = Op("matmul").extern_compute(kGpu, {x, y}, {}, {{ir::Float(32), {2, 3, 4, 5}}}, "M");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->tensors.empty());
  EXPECT_EQ(t->why, "an operand's batch is partly broadcast");
  auto e = Op("matmul").extern_compute(kGpu, {x, x}, {{"transpose_y", true}},
                                       {{ir::Float(32), {2, 1, 4, 4}}}, "M");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->tensors.size(), 1u);
  EXPECT_TRUE(e->tensors[0]->extern_body);
  EXPECT_EQ(e->why, "cuBLAS cinn_like_cublas_matmul");
}

TEST(ExternCodegen, AMatmulAllowedTf32PassesItsCodeToGpuLibrariesOnly) {
  // allow_tf32 is a permission: cuBLAS takes float32 code 3 (TF32 tensor cores) on GPUs; on x86
  // and without it, the float32 code 0; a float16 product keeps its own code.
  auto code = [&](const ir::Target& target, bool tf32, ir::Type t) -> std::string {
    ir::Tensor a = ir::Placeholder("A", t, {64, 32}), b = ir::Placeholder("B", t, {32, 16});
    auto e =
        Op("matmul").extern_compute(target, {a, b}, {{"allow_tf32", tf32}}, {{t, {64, 16}}}, "M");
    if (!e.ok() || e->tensors.size() != 1) return "declined";
    const ir::Tensor& m = e->tensors[0];
    std::string call = ir::ToString(m->extern_body({a->buffer, b->buffer}, m->buffer));
    // The dtype code: the second integer argument, after has_bias.
    size_t at = call.find("int64(");
    at = call.find("int64(", at + 1);
    return call.substr(at, call.find(')', at) - at + 1);
  };
  EXPECT_EQ(code(kGpu, true, ir::Float(32)), "int64(3)");
  EXPECT_EQ(code(kGpu, false, ir::Float(32)), "int64(0)");
  EXPECT_EQ(code(kGpu, true, ir::Float16()), "int64(1)");
  // x86 takes oneDNN, loaded at run time: where it is absent (the GPU machine) the product is
  // generated code, never a library call with the TF32 code.
  const std::string x86 = code(ir::Target::X86(), true, ir::Float(32));
  EXPECT_NE(x86, "int64(3)");
#ifdef CINN_LIKE_WITH_ONEDNN
  if (runtime::x86::DnnlVersion().ok()) EXPECT_EQ(x86, "int64(0)");
#endif
}

// A product over k = 0 is zeros, which cuBLAS does not write: the generated compute makes it.
TEST(ExternCodegen, MatmulAndLinearOverNoTermsAreGeneratedComputes) {
  ir::Tensor x = ir::Placeholder("X", ir::Float(32), {5, 0});
  ir::Tensor y = ir::Placeholder("Y", ir::Float(32), {0, 3});
  auto mm = Op("matmul").extern_compute(kGpu, {x, y}, {}, {{ir::Float(32), {5, 3}}}, "M");
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_TRUE(mm->tensors.empty());
  ir::Tensor w = ir::Placeholder("W", ir::Float(32), {3, 0});
  auto lin = Op("linear").extern_compute(kGpu, {x, w}, {}, {{ir::Float(32), {5, 3}}}, "L");
  ASSERT_TRUE(lin.ok()) << lin.status();
  EXPECT_TRUE(lin->tensors.empty());
  ir::Tensor w1 = ir::Placeholder("W1", ir::Float(32), {3, 1});
  ir::Tensor x1 = ir::Placeholder("X1", ir::Float(32), {5, 1});
  auto one = Op("linear").extern_compute(kGpu, {x1, w1}, {}, {{ir::Float(32), {5, 3}}}, "L");
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->tensors.size(), 1u);
  EXPECT_TRUE(one->tensors[0]->extern_body);
}

TEST(ExternCodegenError, InlinedInputOfAnExternIsAnError) {
  ir::Tensor x = ir::Placeholder("X", ir::Float(32), {4, 8});
  ir::Tensor b = ir::Placeholder("B", ir::Float(32), {8, 2});
  ir::Tensor pre = ir::Compute(
      {4, 8}, [&](const std::vector<ir::Expr>& i) { return x(i) * 2.0f; }, "Pre");
  auto e = Op("matmul").extern_compute(kGpu, {pre, b}, {}, {{ir::Float(32), {4, 2}}}, "E");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->tensors.size(), 1u);
  auto sch = ir::Schedule::Create({e->tensors[0]});
  ASSERT_TRUE(sch[pre].ComputeInline().ok());
  absl::Status inl = sch[e->tensors[0]].ComputeInline();
  EXPECT_THAT(std::string(inl.message()),
              HasSubstr("compute_inline of stage E: it is an extern call, not an expression"));
  auto f = ir::Lower("bad", {x, b, e->tensors[0]}, sch, ir::Target::NVGPU(90));
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("function bad: tensor Pre is an input of extern E but is inlined"));
}

}  // namespace
}  // namespace cinn_like::backends
