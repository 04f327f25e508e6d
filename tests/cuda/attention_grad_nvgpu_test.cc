/// \file The fused attention backward kernel on NVGPU without a GPU: each attention_grad case of
/// the op table launches the library kernel once from host code (no generated kernel) and
/// compiles to PTX; every head-dim bucket, dtype and mask compiles; the cases the kernel does
/// not take use the decomposed compute; bad kernel names are errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "backends/compiler.h"
#include "backends/cuda/attention_grad_source.h"
#include "backends/cuda/library_kernels.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ir/printer.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const ir::Target kTarget = ir::Target::NVGPU(90);

/// The PTX of `module`'s CUDA source (the test fails when it does not compile).
std::string Ptx(const ir::Module& module) {
  auto compiler = backends::Compiler::Create(kTarget);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  if (!compiler.ok()) return "";
  auto src = (*compiler)->GetSourceCode(module);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return "";
  backends::nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, module.name);
  EXPECT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  return ptx.ok() ? *ptx : "";
}

TEST(AttentionGradNVGPU, EveryCaseLaunchesTheBackwardKernelAndCompilesToPtx) {
  int cases = 0;
  for (const OpCase& c : AllOpCases()) {
    if (c.op != "attention_grad" || c.dtypes[0] == DType::kFloat64) continue;
    SCOPED_TRACE(c.Describe());
    ++cases;
    auto graph = CaseGraph(c);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto module = hlir::CompileGraph(*graph, kTarget, "attn_grad");
    ASSERT_TRUE(module.ok()) << module.status();
    const ir::LoweredFunc& f = module->functions[0];
    EXPECT_TRUE(f->kernels.empty()) << ir::ToString(*f);
    std::vector<std::string> names = backends::LibraryKernelNames(*module);
    ASSERT_EQ(names.size(), 1u);
    EXPECT_TRUE(ir::AttentionKernelSpec::IsAttentionGrad(names[0])) << names[0];
    EXPECT_THAT(Ptx(*module), HasSubstr(".entry " + names[0]));
  }
  EXPECT_GE(cases, 7);
}

TEST(AttentionGradNVGPU, EveryBucketDTypeAndMaskCompilesToPtx) {
  std::vector<std::string> names;
  const char* masks[] = {"none", "bool", "float32", "float16", "bfloat16"};
  int n = 0;
  for (const char* tile : {"d32_q32_k32", "d64_q32_k32", "d64_q32_k16", "d128_q16_k16"}) {
    for (const char* t : {"float32", "float16", "bfloat16"}) {
      names.push_back(absl::StrCat("cinn_like_attention_grad_", t, "_", masks[n++ % 5], "_", tile,
                                   n % 2 ? "_drop" : ""));
    }
  }
  // Tensor cores: 16-bit types up to head dim 64, on sm_80 and later (before, the CUDA-core
  // form on each half of the key tile: the same source compiled for sm_75 below).
  for (const char* tile : {"d32_q64_k64_tc", "d64_q64_k64_tc"}) {
    for (const char* t : {"float16", "bfloat16"}) {
      names.push_back(absl::StrCat("cinn_like_attention_grad_", t, "_", masks[n++ % 5], "_", tile,
                                   n % 2 ? "_drop" : ""));
    }
  }
  auto src = backends::LibraryKernelsSource(names);
  ASSERT_TRUE(src.ok()) << src.status();
  backends::nvrtc::Compiler nvrtc;
  for (int arch : {90, 75}) {
    SCOPED_TRACE(absl::StrCat("sm_", arch));
    auto ptx = nvrtc.Compile("#include <math_constants.h>\n" + *src, arch, /*to_cubin=*/false,
                             "attention_grad_variants");
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    for (const std::string& name : names) EXPECT_THAT(*ptx, HasSubstr(".entry " + name));
    // mma.sync only where the tensor-core form is compiled in.
    EXPECT_EQ(ptx->find("mma.sync") != std::string::npos, arch >= 80);
  }
  // The backward's template is printed where a backward kernel is launched, not in a forward's
  // unit (whose source, NVRTC's work and prebuilt fingerprint it would change).
  EXPECT_THAT(*src, HasSubstr("void Backward("));
  auto forward = backends::LibraryKernelsSource({"cinn_like_attention_float32_none_d64_q32_k64"});
  ASSERT_TRUE(forward.ok()) << forward.status();
  EXPECT_THAT(*forward, Not(HasSubstr("void Backward(")));
  EXPECT_THAT(*forward, HasSubstr("void Forward("));
}

TEST(AttentionGradNVGPU, CasesTheKernelDoesNotTakeUseTheDecomposedCompute) {
  for (auto [t, d] : {std::pair{DType::kFloat64, int64_t{16}}, {DType::kFloat32, int64_t{160}}}) {
    SCOPED_TRACE(absl::StrCat(hlir::DTypeName(t), " head dim ", d));
    OpCase c{"attention_grad",
             {t, t, t, t, t, DType::kFloat32},
             {S({1, 2, 5, d}), S({1, 2, 6, d}), S({1, 2, 6, d}), S({1, 2, 5, d}), S({1, 2, 5, d}),
              S({1, 2, 5})},
             {},
             {}};
    auto graph = CaseGraph(c);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto module = hlir::CompileGraph(*graph, kTarget, "attn_grad");
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_TRUE(backends::LibraryKernelNames(*module).empty());
    EXPECT_FALSE(module->functions[0]->kernels.empty());
    EXPECT_THAT(Ptx(*module), HasSubstr(".entry"));
  }
}

TEST(AttentionGradNVGPUError, BadKernelNamesAreErrors) {
  EXPECT_TRUE(
      backends::LibraryKernelsSource({"cinn_like_attention_grad_float32_none_d64_q32_k32"}).ok());
  struct Bad {
    const char* name;
    const char* why;
  };
  for (const Bad& b :
       {Bad{"cinn_like_attention_grad_float64_none_d64_q32_k32", "element dtype"},
        Bad{"cinn_like_attention_grad_float32_int8_d64_q32_k32", "mask dtype int8"},
        Bad{"cinn_like_attention_grad_float32_none_d256_q16_k16", "head dim d256"},
        Bad{"cinn_like_attention_grad_float32_none_d64_q32_k64", "key tile k64"},
        Bad{"cinn_like_attention_grad_float32_none_d64_q24_k32", "query tile q24"},
        Bad{"cinn_like_attention_grad_float32_none_d128_q64_k32", "shared memory"},
        Bad{"cinn_like_attention_grad_float32_none_d64", "malformed name"},
        Bad{"cinn_like_attention_grad_float32_none_d64_q32_k32_tc", "tensor cores for float32"},
        Bad{"cinn_like_attention_grad_float16_none_d128_q64_k64_tc", "tensor-core tile"},
        Bad{"cinn_like_attention_grad_bfloat16_none_d64_q32_k64_tc", "tensor-core tile"},
        Bad{"cinn_like_attention_grad_float16_none_d64_q64_k64_tc_x", "malformed name"}}) {
    auto s = backends::LibraryKernelsSource({b.name});
    ASSERT_FALSE(s.ok()) << b.name;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(b.why));
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(b.name));
  }
}

}  // namespace
}  // namespace cinn_like::testing
