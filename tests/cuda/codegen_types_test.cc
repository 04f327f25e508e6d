/// \file CUDA codegen of every scalar type: __half / __nv_bfloat16 with their headers only
/// when used, casts with defined rounding, math spellings (fast-math included), and NVRTC
/// compiling each kernel to PTX for sm_90.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "ir/flags.h"
#include "tests/cuda/index_names.h"
#include "tests/cuda/vector_add_module.h"
#include "tests/typed_kernels.h"

namespace cinn_like::backends {
namespace {

using ir::Expr;
using ir::Type;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

/// The CUDA source of `func` for sm_90, after checking that NVRTC compiles it to PTX.
std::string CudaSource(absl::StatusOr<ir::LoweredFunc> func) {
  EXPECT_TRUE(func.ok()) << func.status();
  if (!func.ok()) return "";
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode({(*func)->name, ir::Target::NVGPU(90), {*func}});
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return "";
  nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, (*func)->name);
  EXPECT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  if (ptx.ok()) EXPECT_THAT(*ptx, HasSubstr(".entry " + (*func)->name + "_kernel"));
  return *src;
}

std::string BinaryKernel(const std::string& name, const Type& t, const testing::BinaryFn& f) {
  return CudaSource(testing::BuildBinary(name, t, f, ir::Target::NVGPU(90)));
}

std::string UnaryKernel(const std::string& name, const Type& t,
                        const std::function<Expr(Expr)>& f) {
  return CudaSource(testing::BuildUnary(name, t, f, ir::Target::NVGPU(90)));
}

/// The value C reads from the literal of `src` in `C[...] = <literal>;`, parsed as C would parse
/// it (std::from_chars rounds to nearest like the compiler): 16-bit conversions of an exact
/// float literal, HUGE_VAL(F), and the bit-pattern NaN spellings.
double StoredLiteral(const std::string& src, const Type& t) {
  size_t at = src.find("C[");
  at = src.find("] = ", at);
  EXPECT_NE(at, std::string::npos) << src;
  std::string lit = src.substr(at + 4, src.find(';', at) - at - 4);
  for (const char* narrow : {"__float2half_rn(", "__float2bfloat16_rn("}) {
    if (absl::StartsWith(lit, narrow))
      lit = lit.substr(strlen(narrow), lit.size() - strlen(narrow) - 1);
  }
  if (absl::StrContains(lit, "_as_")) return std::numeric_limits<double>::quiet_NaN();
  bool neg = absl::StartsWith(lit, "-");
  if (absl::EndsWith(lit, "HUGE_VALF") || absl::EndsWith(lit, "HUGE_VAL")) {
    return neg ? -HUGE_VAL : HUGE_VAL;
  }
  bool f32 = absl::EndsWith(lit, "f");
  EXPECT_EQ(f32, t.bits() != 64) << lit;
  if (f32) lit.pop_back();
  double v = 0;
  const char* end = lit.data() + lit.size();
  if (f32) {
    float f = 0;
    EXPECT_EQ(std::from_chars(lit.data(), end, f).ptr, end) << lit;
    v = f;
  } else {
    EXPECT_EQ(std::from_chars(lit.data(), end, v).ptr, end) << lit;
  }
  return v;
}

TEST(CodeGenCudaTypes, FloatLiteralEdgesReadBackExactly) {
  // FLT_MAX once made the shortest-literal search parse "3.403e+38" with std::stof, which
  // threw: the edges of every float type now print and read back bit for bit, and compile.
  for (const Type& t : {ir::Float16(), ir::BFloat16(), ir::Float(32), ir::Float(64)}) {
    std::vector<double> edges = testing::FloatLiteralEdges(t);
    for (size_t k = 0; k < edges.size(); ++k) {
      std::string name = absl::StrCat("literal_", t.ToString(), "_", k);
      SCOPED_TRACE(absl::StrCat(name, " value ", edges[k]));
      std::string src =
          CudaSource(testing::BuildConstant(name, t, edges[k], ir::Target::NVGPU(90)));
      ASSERT_FALSE(src.empty());
      double got = StoredLiteral(src, t);
      EXPECT_TRUE(testing::SameFloat(got, edges[k])) << "read back " << got << " from\n" << src;
    }
  }
}

TEST(CodeGenCudaTypes, HalfKernelUsesHalfComputedInFloat) {
  std::string src =
      BinaryKernel("half_fma", ir::Float16(), [](Expr a, Expr b) { return a * b + a; });
  EXPECT_THAT(src,
              AllOf(HasSubstr("#include <cuda_fp16.h>"), Not(HasSubstr("cuda_bf16.h")),
                    HasSubstr("const __half* __restrict__ A"), HasSubstr("__half* __restrict__ C"),
                    HasSubstr("__float2half_rn(__half2float(__float2half_rn(__half2float(A[")))
      << src;
}

TEST(CodeGenCudaTypes, BFloat16KernelUsesNvBfloat16) {
  std::string src =
      BinaryKernel("bf16_sub", ir::BFloat16(), [](Expr a, Expr b) { return max(a - b, a); });
  EXPECT_THAT(src, AllOf(HasSubstr("#include <cuda_bf16.h>"), Not(HasSubstr("cuda_fp16.h")),
                         HasSubstr("const __nv_bfloat16* __restrict__ A"),
                         HasSubstr("__float2bfloat16_rn(max(__bfloat162float(")))
      << src;
}

TEST(CodeGenCudaTypes, Float32KernelIncludesNoHalfHeader) {
  std::string src = BinaryKernel("f32_add", ir::Float(32), [](Expr a, Expr b) { return a + b; });
  EXPECT_THAT(src, AllOf(Not(HasSubstr("cuda_fp16.h")), Not(HasSubstr("cuda_bf16.h"))));
}

TEST(CodeGenCudaTypes, CastsRoundToNearestEvenAndTruncate) {
  std::string f32_f16 = UnaryKernel("f32_f16", ir::Float(32), [](Expr x) {
    return ir::Cast::Make(ir::Float(32), ir::Cast::Make(ir::Float16(), x));
  });
  EXPECT_THAT(f32_f16, AllOf(HasSubstr("__half2float(__float2half_rn(A["))) << f32_f16;
  std::string f64 = UnaryKernel("f64_casts", ir::Float(64), [](Expr x) {
    return ir::Cast::Make(ir::Float(64), ir::Cast::Make(ir::BFloat16(), x)) +
           ir::Cast::Make(ir::Float(64), ir::Cast::Make(ir::Float16(), x));
  });
  EXPECT_THAT(f64, AllOf(HasSubstr("__double2bfloat16(A["), HasSubstr("__double2half(A["))) << f64;
  std::string ints = UnaryKernel("int_casts", ir::Int(8), [](Expr x) {
    return ir::Cast::Make(ir::Int(8),
                          ir::Cast::Make(ir::Float16(), x) +
                              ir::Cast::Make(ir::Float16(), ir::Cast::Make(ir::Int(64), x)));
  });
  EXPECT_THAT(ints, AllOf(HasSubstr("(int8_t)__half2float("), HasSubstr("__int2half_rn((int)A["),
                          HasSubstr("__ll2half_rn((int64_t)A[")))
      << ints;
  // (A uint8 through bfloat16 and straight back is the uint8 itself: the simplifier drops both
  // casts. Halved, it is not.)
  std::string bf = UnaryKernel("u8_bf16", ir::UInt(8), [](Expr x) {
    return ir::Cast::Make(ir::UInt(8),
                          ir::Cast::Make(ir::BFloat16(), x) * ir::MakeConst(ir::BFloat16(), 0.5));
  });
  EXPECT_THAT(bf, HasSubstr("__uint2bfloat16_rn((unsigned int)A[")) << bf;
}

TEST(CodeGenCudaTypes, EveryIntegerTypeAndBoolCompiles) {
  for (const Type& t : {ir::Int(8), ir::Int(16), ir::Int(32), ir::Int(64), ir::UInt(8)}) {
    std::string src =
        BinaryKernel("int_" + t.ToString(), t, [](Expr a, Expr b) { return a * b - a % b; });
    EXPECT_THAT(
        src, HasSubstr(absl::StrCat(t.is_uint() ? "uint" : "int", t.bits(), "_t* __restrict__ C")));
  }
  std::string b = UnaryKernel("to_bool", ir::Float16(),
                              [](Expr x) { return x > ir::MakeConst(ir::Float16(), 0.5); });
  std::string row = testing::CudaIndexName(b, "i * 16");
  EXPECT_THAT(
      b, AllOf(HasSubstr("bool* __restrict__ C"), HasSubstr("__half2float(A[" + row + " + j]) > " +
                                                            "__half2float(__float2half_rn(0.5f))")))
      << b;
}

TEST(CodeGenCudaTypes, MathPerTypeAndFastMath) {
  auto exp_rsqrt = [](Expr x) { return ir::Exp(x) + ir::Rsqrt(x) + ir::Erf(x); };
  std::string f32 = UnaryKernel("math_f32", ir::Float(32), exp_rsqrt);
  EXPECT_THAT(f32, AllOf(HasSubstr("expf(A["), HasSubstr("(1.0f / sqrtf(A["), HasSubstr("erff(A["),
                         Not(HasSubstr("__expf"))))
      << f32;
  std::string f64 = UnaryKernel("math_f64", ir::Float(64), exp_rsqrt);
  EXPECT_THAT(f64, AllOf(HasSubstr("exp(A["), HasSubstr("(1.0 / sqrt(A["), HasSubstr("erf(A[")))
      << f64;
  std::string f16 = UnaryKernel("math_f16", ir::Float16(),
                                [](Expr x) { return ir::Tanh(x) * ir::Pow(x, Expr(2.0)); });
  std::string row = testing::CudaIndexName(f16, "i * 16");
  EXPECT_THAT(f16, AllOf(HasSubstr("__float2half_rn(tanhf(__half2float(A["),
                         HasSubstr("__float2half_rn(powf(__half2float(A[" + row + " + j]), " +
                                   "__half2float(__float2half_rn(2.0f))))")))
      << f16;
  FLAGS_cinn_like_fast_math = true;
  std::string fast = UnaryKernel("math_fast", ir::Float(32), exp_rsqrt);
  std::string fast64 = UnaryKernel("math_fast64", ir::Float(64), exp_rsqrt);
  FLAGS_cinn_like_fast_math = false;
  EXPECT_THAT(fast, AllOf(HasSubstr("__expf(A["), HasSubstr("rsqrtf(A["),
                          Not(HasSubstr("/ sqrtf(")), HasSubstr("erff(A[")))
      << fast;
  EXPECT_THAT(fast64, AllOf(HasSubstr("exp(A["), Not(HasSubstr("__exp")))) << fast64;
}

TEST(CodeGenCudaTypes, FastExpAndFastRecipWhateverTheFlag) {
  // ir/math.h: ops ask for these where a 16-bit rounding hides their error.
  auto fast = [](Expr x) { return ir::FastRecip(x) * ir::FastExp(x); };
  std::string f32 = UnaryKernel("fast_f32", ir::Float(32), fast);
  EXPECT_THAT(f32, AllOf(HasSubstr("cinn_like_rcp_approx(A["), HasSubstr("__expf(A["),
                         HasSubstr("asm(\"rcp.approx.f32 %0, %1;\"")))
      << f32;
  std::string f64 = UnaryKernel("fast_f64", ir::Float(64), fast);
  EXPECT_THAT(f64, AllOf(HasSubstr("(1.0 / A["), HasSubstr("exp(A["), Not(HasSubstr("__expf")),
                         Not(HasSubstr("cinn_like_rcp_approx"))))
      << f64;
  gflags::FlagSaver saver;
  FLAGS_cinn_like_fast_math = true;
  std::string flagged = UnaryKernel("fast_flag_f32", ir::Float(32), fast);
  EXPECT_THAT(flagged, AllOf(HasSubstr("cinn_like_rcp_approx(A["), HasSubstr("__expf(A[")))
      << flagged;
}

TEST(CodeGenCudaTypesError, ErfOfAnIntegerNamesTheFunction) {
  // Hand-built (Lower would refuse it first): the codegen's own check.
  auto out = ir::MakeBuffer("Out", ir::Int(32), {32});
  ir::Var tx("tx");
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = "k";
  f->args = {ir::Argument::Output(out)};
  f->body = ir::For::Make(tx, 0, 32, ir::ForKind::kGpuThread,
                          ir::Store::Make(out, {tx}, ir::Erf(Expr(tx))), 0);
  auto compiler = Compiler::Create(ir::Target::NVGPU(90));
  ASSERT_TRUE(compiler.ok());
  auto src = (*compiler)->GetSourceCode(testing::SplitGpuModule("k", {f}));
  ASSERT_FALSE(src.ok());
  EXPECT_THAT(std::string(src.status().message()),
              HasSubstr("math function 'erf' of type int32 on 1 arguments in CUDA codegen"));
}

}  // namespace
}  // namespace cinn_like::backends
