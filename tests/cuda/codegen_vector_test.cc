/// \file CUDA vector accesses: a loop vectorized under threadIdx becomes 16-byte accesses
/// (float4, double2, uint4 for bytes), the pointers tested by the host before the launch where
/// the indices are known multiples of the lanes, else behind a test per statement with a scalar
/// fallback; a scalar tail for a non-exact split; NVRTC turns them into v4 loads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/host_ir.h"
#include "ir/transforms/split_host_device.h"
#include "tools/examples.h"

namespace cinn_like::backends {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<std::string> ExampleCuda(const std::string& name) {
  auto ex = examples::Find(name);
  if (!ex.ok()) return ex.status();
  auto f = ex->build(ir::Target::NVGPU(90));
  if (!f.ok()) return f.status();
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  if (!compiler.ok()) return compiler.status();
  return (*compiler)->GetSourceCode({name, ir::Target::NVGPU(90), {*f}});
}

/// out[ramp(t * L + offset, 1, L)] = in[ramp(t * L + offset, 1, L)] * 2 under threadIdx t of
/// 32, for one dtype; with `shared`, inside the allocation of an unused shared array; split.
absl::StatusOr<ir::Module> ScaleModule(ir::Type dtype, int lanes, int offset = 0,
                                       bool shared = false) {
  auto in = ir::MakeBuffer("In", dtype, {ir::Expr(32 * lanes + offset)});
  auto out = ir::MakeBuffer("Out", dtype, {ir::Expr(32 * lanes + offset)});
  ir::Var t("t");
  ir::Expr base = offset ? t * lanes + offset : t * lanes;
  ir::Expr idx = ir::Ramp::Make(base, 1, lanes);
  ir::Expr two = ir::Broadcast::Make(ir::MakeConst(dtype, 2), lanes);
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "scale";
  f->args = {ir::Argument::Input(in), ir::Argument::Output(out)};
  ir::Stmt body = ir::Store::Make(out, {idx}, ir::Load::Make(in, {idx}) * two);
  if (shared) {
    auto tile = ir::MakeBuffer("Tile", dtype, {ir::Expr(32)}, ir::MemoryScope::kShared);
    body = ir::Allocate::Make(tile, body);
  }
  f->body = ir::For::Make(t, 0, 32, ir::ForKind::kGpuThread, body, 0);
  auto split = ir::SplitHostDevice(*f);
  if (!split.ok()) return split.status();
  return ir::Module{"scale", ir::Target::NVGPU(90), {*split}};
}

absl::StatusOr<std::string> ScaleKernel(ir::Type dtype, int lanes, int offset = 0,
                                        bool shared = false) {
  auto module = ScaleModule(dtype, lanes, offset, shared);
  if (!module.ok()) return module.status();
  return CodeGenCudaDev::Generate(*module);
}

TEST(CodeGenCudaVector, VAddUsesFloat4LoadsAndStoresWithAScalarTail) {
  auto src = ExampleCuda("vadd");
  ASSERT_TRUE(src.ok()) << src.status();
  // The vector path: both loads and the store are float4, behind one alignment test, at the
  // element index the thread computes once (hoist_common_index).
  EXPECT_THAT(*src, HasSubstr("const int32_t idx1 = (idx0 + i_outer_inner) * 4;\n"
                              "  if (idx1 + 3 < n) {\n"));
  EXPECT_THAT(*src, HasSubstr("float4 A_v0 = *reinterpret_cast<const float4*>(&A[idx1]);"));
  EXPECT_THAT(*src, HasSubstr("float4 B_v1 = *reinterpret_cast<const float4*>(&B[idx1]);"));
  EXPECT_THAT(*src, HasSubstr("*reinterpret_cast<float4*>(&C[idx1]) = C_v2;"));
  EXPECT_THAT(*src, HasSubstr("C_v2.w = A_v0.w + B_v1.w;"));
  // Every vector index is a multiple of 4 elements: the host tests the pointers before the
  // launch (HostRealignsWhatTheKernelAssumesAligned below), the kernel tests nothing.
  EXPECT_THAT(*src, Not(HasSubstr(" % 16 == 0")));
  EXPECT_THAT(*src, Not(HasSubstr("_unaligned")));
  // The scalar tail of the non-exact split: a serial lane loop under the per-lane guard.
  EXPECT_THAT(*src, HasSubstr("for (int32_t i_inner = 0; i_inner < 4; ++i_inner) {"));
  EXPECT_THAT(*src, HasSubstr("+ i_inner < n"));
  EXPECT_THAT(*src, HasSubstr("__launch_bounds__(256)"));
}

TEST(CodeGenCudaVector, VAddPtxHasVectorLoadsAndStores) {
  auto src = ExampleCuda("vadd");
  ASSERT_TRUE(src.ok()) << src.status();
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "vadd");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr("v4.f32")) << *ptx;
  EXPECT_THAT(*ptx, HasSubstr("st.global.v4.f32")) << *ptx;
  EXPECT_THAT(*ptx, ::testing::ContainsRegex("ld\\.global(\\.nc)?\\.v4\\.f32")) << *ptx;
}

TEST(CodeGenCudaVector, AddVectorizedOnGpuUsesFloat4) {
  auto src = ExampleCuda("add_vectorized");
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("*reinterpret_cast<const float4*>(&A["));
  EXPECT_THAT(*src, HasSubstr("__launch_bounds__(16)"));
  // 256 columns split exactly: no lane guard, so no scalar tail loop over the 4 lanes.
  EXPECT_THAT(*src, Not(HasSubstr("< 4;")));
  // The row loop holds the thread loop: it is not partitioned on the GPU.
  EXPECT_THAT(*src, HasSubstr("for (int32_t i_inner = 0; i_inner < 16; ++i_inner) {\n"
                              "    const int32_t idx2 = (idx0 + i_inner) * 256;\n"
                              "    int32_t j_inner_outer = threadIdx.x;\n"
                              "    const int32_t idx3 = idx2 + (idx1 + j_inner_outer * 4);\n"
                              "    if (idx0 + i_inner < m) {\n"));
}

TEST(CodeGenCudaVector, DoublesUseDouble2Chunks) {
  auto src = ScaleKernel(ir::Float(64), 4);  // 32 bytes: two double2 per access
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("double2 In_v0_0 = *reinterpret_cast<const double2*>(&In[t * 4]);"));
  EXPECT_THAT(*src,
              HasSubstr("double2 In_v0_1 = *reinterpret_cast<const double2*>(&In[t * 4 + 2]);"));
  EXPECT_THAT(*src, HasSubstr("Out_v1_1.y = In_v0_1.y * 2.0;"));
  EXPECT_THAT(*src, HasSubstr("*reinterpret_cast<double2*>(&Out[t * 4 + 2]) = Out_v1_1;"));
}

TEST(CodeGenCudaVector, BytesUseUint4WithAReinterpretingAccessor) {
  auto src = ScaleKernel(ir::Int(8), 16);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("uint4 In_v0 = *reinterpret_cast<const uint4*>(&In[t * 16]);"));
  EXPECT_THAT(*src, HasSubstr("reinterpret_cast<int8_t*>(&Out_v1)[15] = "));
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "scale_i8");
  ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  EXPECT_THAT(*ptx, HasSubstr(".v4.u32")) << *ptx;
}

TEST(CodeGenCudaVector, MisalignedFallbackStoresEachLane) {
  // In[t * 4 + 1] is aligned only where In is 4 bytes past a 16-byte boundary: the statement
  // tests its addresses and stores lane by lane when they fail.
  auto src = ScaleKernel(ir::Float(32), 4, /*offset=*/1);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src,
              HasSubstr("if ((reinterpret_cast<unsigned long long>(&In[t * 4 + 1]) | "
                        "reinterpret_cast<unsigned long long>(&Out[t * 4 + 1])) % 16 == 0) {"));
  EXPECT_THAT(*src, HasSubstr("} else {\n    Out[t * 4 + 1] = In[t * 4 + 1] * 2.0f;\n"
                              "    Out[t * 4 + 2] = In[t * 4 + 2] * 2.0f;\n"));
  EXPECT_THAT(*src, HasSubstr("Out[t * 4 + 4] = In[t * 4 + 4] * 2.0f;\n  }\n"));
}

TEST(CodeGenCudaVector, AlignedIndicesLeaveThePointerTestToTheHost) {
  // In[t * 4] is aligned wherever In is: the kernel is the vector path alone, with no test and
  // no second copy; the host tests the pointers (HostRealignsWhatTheKernelAssumesAligned).
  auto src = ScaleKernel(ir::Float(32), 4);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, Not(HasSubstr("_unaligned")));
  EXPECT_THAT(*src, Not(HasSubstr("% 16")));
  EXPECT_THAT(*src, HasSubstr("  float4 In_v0 = *reinterpret_cast<const float4*>(&In[t * 4]);"));
  EXPECT_THAT(*src, Not(HasSubstr("Out[t * 4 + 1] =")));  // no scalar path
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, "scale_versioned");
  ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  EXPECT_THAT(*ptx, HasSubstr("st.global.v4.f32")) << *ptx;
}

TEST(CodeGenCudaVector, HostRealignsWhatTheKernelAssumesAligned) {
  // The host tests In and Out (16 bytes, the float4's) before the launch: aligned, the plain
  // launch; else the realigned one, told each argument's index, alignment, whether the kernel
  // writes it and its bytes (128 floats).
  auto module = ScaleModule(ir::Float(32), 4);
  ASSERT_TRUE(module.ok()) << module.status();
  auto ir = CudaHostIR(*module);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, HasSubstr("and i64 %"));
  EXPECT_THAT(*ir, HasSubstr(", 15"));
  EXPECT_THAT(*ir, HasSubstr("%scale_kernel.misaligned = icmp ne i64 "));
  EXPECT_THAT(*ir, HasSubstr("call i32 @cinn_like_cuda_launch(ptr %scale_kernel.handle"));
  EXPECT_THAT(*ir, HasSubstr("call i32 @cinn_like_cuda_launch_realigned(ptr %scale_kernel.handle"));
  for (const char* field :
       {"i32 0, ptr %scale_kernel.aligned0.index", "i32 16, ptr %scale_kernel.aligned0.alignment",
        "i32 0, ptr %scale_kernel.aligned0.written", "i64 512, ptr %scale_kernel.aligned0.bytes",
        "i32 1, ptr %scale_kernel.aligned1.index", "i32 16, ptr %scale_kernel.aligned1.alignment",
        "i32 1, ptr %scale_kernel.aligned1.written", "i64 512, ptr %scale_kernel.aligned1.bytes"}) {
    EXPECT_THAT(*ir, HasSubstr(std::string("store ") + field)) << *ir;
  }
  EXPECT_THAT(*ir, HasSubstr("%scale_kernel.rc = phi i32 "));
  // An index of unknown alignment tests itself in the kernel: the host launches as it is.
  auto offset = ScaleModule(ir::Float(32), 4, /*offset=*/1);
  ASSERT_TRUE(offset.ok()) << offset.status();
  auto plain = CudaHostIR(*offset);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(*plain, Not(HasSubstr("realigned"))) << *plain;
  EXPECT_THAT(*plain, HasSubstr("call i32 @cinn_like_cuda_launch(")) << *plain;
}

TEST(CodeGenCudaVector, IndicesOfUnknownAlignmentOrSharedArraysKeepATestPerStatement) {
  // In[t * 4 + 1] is aligned for no pointer In is: the statement keeps its own test.
  auto offset = ScaleKernel(ir::Float(32), 4, /*offset=*/1);
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_THAT(*offset, Not(HasSubstr("_unaligned")));
  EXPECT_THAT(*offset, HasSubstr("&Out[t * 4 + 1])) % 16 == 0) {"));
  // A second copy of the body would hold a second copy of its shared arrays.
  auto shared = ScaleKernel(ir::Float(32), 4, 0, /*shared=*/true);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_THAT(*shared, Not(HasSubstr("_unaligned")));
  EXPECT_THAT(*shared, HasSubstr("&Out[t * 4])) % 16 == 0) {"));
}

TEST(CodeGenCudaVector, StridedAccessesStayScalar) {
  auto in = ir::MakeBuffer("In", ir::Float(32), {ir::Expr(256)});
  auto out = ir::MakeBuffer("Out", ir::Float(32), {ir::Expr(256)});
  ir::Var t("t");
  ir::Expr idx = ir::Ramp::Make(t, 32, 4);  // stride 32: no dense access
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "strided";
  f->args = {ir::Argument::Input(in), ir::Argument::Output(out)};
  f->body = ir::For::Make(t, 0, 32, ir::ForKind::kGpuThread,
                          ir::Store::Make(out, {idx}, ir::Load::Make(in, {idx})), 0);
  auto split = ir::SplitHostDevice(*f);
  ASSERT_TRUE(split.ok()) << split.status();
  auto src = CodeGenCudaDev::Generate({"strided", ir::Target::NVGPU(90), {*split}});
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, Not(HasSubstr("float4")));
  EXPECT_THAT(*src, HasSubstr("Out[t + 96] = In[t + 96];"));
}

}  // namespace
}  // namespace cinn_like::backends
