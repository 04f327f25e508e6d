/// \file Every scalar type through the x86 backend: typed arithmetic (scalar and vectorized),
/// casts with defined rounding (nearest even to float16/bfloat16, truncation to int, integer
/// wrap), math intrinsics per type against std:: in double, and the errors of unsupported
/// combinations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/compiler.h"
#include "ir/flags.h"
#include "runtime/cinn_like_runtime.h"
#include "tests/backends/host_funcs.h"
#include "tests/typed_kernels.h"

namespace cinn_like::backends {
namespace {

using ir::Expr;
using ir::Type;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::TypedTensor;

constexpr int64_t kRows = 37;  // 37 x 16 elements

std::unique_ptr<Compiler> X86Compiler() {
  auto c = Compiler::Create(ir::Target::X86());
  EXPECT_TRUE(c.ok()) << c.status();
  return std::move(*c);
}

/// Builds `func` on x86 and returns its entry, or null after a test failure.
EntryFunction Build(Compiler* compiler, absl::StatusOr<ir::LoweredFunc> func) {
  EXPECT_TRUE(func.ok()) << func.status();
  if (!func.ok()) return nullptr;
  ir::Module m{(*func)->name, ir::Target::X86(), {*func}};
  absl::Status s = compiler->Build(m);
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return nullptr;
  auto fn = compiler->Lookup((*func)->name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *fn : nullptr;
}

/// Wraps an integer to the width and signedness of `t` (two's complement).
double WrapInt(const Type& t, long double v) {
  uint64_t bits = static_cast<uint64_t>(static_cast<__int128>(v));
  if (t.bits() < 64) bits &= (uint64_t{1} << t.bits()) - 1;
  if (t.is_uint()) return static_cast<double>(bits);
  int shift = 64 - t.bits();
  return static_cast<double>(static_cast<int64_t>(bits << shift) >> shift);
}

struct TypeCase {
  Type type;
  double lo, hi;  // input range; products of 8 to 32-bit integers overflow on purpose (int64
                  // stays within double's exact range, where the reference computes)
};

std::vector<TypeCase> ArithmeticCases() {
  return {{ir::Float16(), -4, 4},   {ir::BFloat16(), -4, 4},  {ir::Float(32), -4, 4},
          {ir::Float(64), -4, 4},   {ir::Int(8), -100, 100},  {ir::Int(16), -300, 300},
          {ir::Int(32), -1e5, 1e5}, {ir::Int(64), -5e7, 5e7}, {ir::UInt(8), 0, 255}};
}

// C = A * B + A - B in the type itself, every operation rounded (floats) or wrapped (ints).
TEST(X86Types, ArithmeticPerTypeScalarAndVectorized) {
  auto compiler = X86Compiler();
  for (const TypeCase& tc : ArithmeticCases()) {
    for (int lanes : {0, 8}) {
      const Type& t = tc.type;
      std::string name = absl::StrCat("arith_", t.ToString(), "_v", lanes);
      SCOPED_TRACE(name);
      EntryFunction fn = Build(
          compiler.get(),
          testing::BuildBinary(
              name, t, [](Expr a, Expr b) { return a * b + a - b; }, ir::Target::X86(), lanes));
      ASSERT_NE(fn, nullptr);
      TypedTensor a(t, {kRows, 16}), b(t, {kRows, 16}), c(t, {kRows, 16});
      a.FillRandom(tc.lo, tc.hi);
      b.FillRandom(tc.lo, tc.hi);
      for (int64_t i = 0; i < c.size(); ++i) c.Set(i, 77);
      DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
      ASSERT_EQ(fn(args, 3, nullptr), 0) << cinn_like_get_last_error();
      for (int64_t i = 0; i < c.size(); ++i) {
        double x = a.Get(i), y = b.Get(i), want;
        if (t.is_float()) {
          want = testing::RoundTo(t, testing::RoundTo(t, testing::RoundTo(t, x * y) + x) - y);
        } else {
          long double p = WrapInt(t, static_cast<long double>(x) * y);
          want = WrapInt(t, WrapInt(t, p + x) - y);
        }
        ASSERT_EQ(c.Get(i), want) << "i=" << i << " a=" << x << " b=" << y;
      }
    }
  }
}

TEST(X86Types, FloatLiteralEdgesStoreExactly) {
  // Transformer code puts torch.finfo(float32).min into graphs: every edge of every float type
  // must reach the stored value bit for bit (LLVM constants from the double the IR holds).
  auto compiler = X86Compiler();
  for (const Type& t : {ir::Float16(), ir::BFloat16(), ir::Float(32), ir::Float(64)}) {
    std::vector<double> edges = testing::FloatLiteralEdges(t);
    for (size_t k = 0; k < edges.size(); ++k) {
      std::string name = absl::StrCat("literal_", t.ToString(), "_", k);
      SCOPED_TRACE(absl::StrCat(name, " value ", edges[k]));
      EntryFunction fn =
          Build(compiler.get(), testing::BuildConstant(name, t, edges[k], ir::Target::X86()));
      ASSERT_NE(fn, nullptr);
      TypedTensor a(t, {2, 16}), c(t, {2, 16});
      a.FillRandom(-1, 1);
      DLTensor* args[] = {a.dl(), c.dl()};
      ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
      for (int64_t i = 0; i < c.size(); ++i) {
        ASSERT_TRUE(testing::SameFloat(c.Get(i), edges[k])) << "got " << c.Get(i);
      }
    }
  }
}

TEST(X86Types, BoolComputesAndStoresOneByte) {
  auto compiler = X86Compiler();
  for (int lanes : {0, 8}) {
    // C = (A < 0.25) != (A > 0.5), a bool tensor of bytes 0 and 1.
    auto func = testing::BuildUnary(
        absl::StrCat("bool_ops_v", lanes), ir::Float(32),
        [](Expr a) { return (a < Expr(0.25f)) != (a > Expr(0.5f)); }, ir::Target::X86(), lanes);
    EntryFunction fn = Build(compiler.get(), func);
    ASSERT_NE(fn, nullptr);
    TypedTensor a(ir::Float(32), {kRows, 16}), c(ir::Bool(), {kRows, 16});
    a.FillRandom(-1, 1);
    std::memset(c.data(), 0x55, c.bytes());
    DLTensor* args[] = {a.dl(), c.dl()};
    ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
    for (int64_t i = 0; i < c.size(); ++i) {
      double x = a.Get(i);
      ASSERT_EQ(c.Get(i), (x < 0.25) != (x > 0.5) ? 1 : 0) << "a=" << x << " lanes=" << lanes;
    }
  }
}

/// Runs C = f(A) for A of `from` over the given values (padded with random ones in [lo, hi])
/// and checks each C against `ref`; NaN must stay NaN.
void CheckUnary(const std::string& name, const Type& from, const Type& to,
                const std::function<Expr(Expr)>& f, std::vector<double> chosen, double lo,
                double hi, const std::function<double(double)>& ref, int lanes = 0) {
  SCOPED_TRACE(name);
  auto compiler = X86Compiler();
  EntryFunction fn =
      Build(compiler.get(), testing::BuildUnary(name, from, f, ir::Target::X86(), lanes));
  ASSERT_NE(fn, nullptr);
  TypedTensor a(from, {kRows, 16}), c(to, {kRows, 16});
  a.FillRandom(lo, hi);
  for (size_t i = 0; i < chosen.size(); ++i) a.Set(static_cast<int64_t>(i), chosen[i]);
  DLTensor* args[] = {a.dl(), c.dl()};
  ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
  for (int64_t i = 0; i < c.size(); ++i) {
    double want = ref(a.Get(i));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(c.Get(i))) << "i=" << i;
    } else {
      ASSERT_EQ(c.Get(i), want) << "i=" << i << " a=" << std::setprecision(17) << a.Get(i);
    }
  }
}

const double kInf = std::numeric_limits<double>::infinity();

TEST(X86Types, Float32ToFloat16RoundsToNearestEven) {
  std::vector<double> chosen = {1 + std::ldexp(1, -11),      // tie: to even 1.0
                                1 + 3 * std::ldexp(1, -11),  // tie: to even 1 + 2^-9
                                -(1 + std::ldexp(1, -11)),
                                65519,
                                65520 /* inf */,
                                1e6,
                                std::ldexp(1, -25) /* tie: 0 */,
                                3 * std::ldexp(1, -26),  // above the tie: 2^-24
                                6.1e-5,
                                -0.0,
                                kInf,
                                -kInf,
                                std::nan("")};
  for (int lanes : {0, 8}) {
    CheckUnary(
        absl::StrCat("f32_f16_f32_v", lanes), ir::Float(32), ir::Float(32),
        [](Expr x) { return ir::Cast::Make(ir::Float(32), ir::Cast::Make(ir::Float16(), x)); },
        chosen, -70000, 70000,
        [](double v) { return testing::HalfValue(testing::HalfBits(static_cast<float>(v))); },
        lanes);
  }
  // Random values near 1, where most mantissa bits are cut.
  CheckUnary(
      "f32_f16_f32_near_one", ir::Float(32), ir::Float(32),
      [](Expr x) { return ir::Cast::Make(ir::Float(32), ir::Cast::Make(ir::Float16(), x)); }, {},
      0.9, 1.1, [](double v) { return testing::HalfValue(testing::HalfBits(v)); });
}

TEST(X86Types, Float32ToBFloat16RoundsToNearestEven) {
  std::vector<double> chosen = {1 + std::ldexp(1, -8),
                                1 + 3 * std::ldexp(1, -8),
                                -(1 + std::ldexp(1, -8)),
                                3.3895313892515355e38,
                                1e-40,
                                kInf,
                                std::nan("")};
  for (int lanes : {0, 8}) {
    CheckUnary(
        absl::StrCat("f32_bf16_f32_v", lanes), ir::Float(32), ir::Float(32),
        [](Expr x) { return ir::Cast::Make(ir::Float(32), ir::Cast::Make(ir::BFloat16(), x)); },
        chosen, -1e5, 1e5,
        [](double v) {
          return std::isnan(v) ? v : testing::BFloat16Value(testing::BFloat16Bits(v));
        },
        lanes);
  }
}

TEST(X86Types, Float64To16BitRoundsOnce) {
  // Rounding to float32 first would make these exact ties and round them down to 1.0.
  CheckUnary(
      "f64_f16", ir::Float(64), ir::Float(64),
      [](Expr x) { return ir::Cast::Make(ir::Float(64), ir::Cast::Make(ir::Float16(), x)); },
      {1 + std::ldexp(1, -11) + std::ldexp(1, -40)}, -1000, 1000,
      [](double v) { return testing::HalfValue(testing::HalfBits(v)); });
  CheckUnary(
      "f64_bf16", ir::Float(64), ir::Float(64),
      [](Expr x) { return ir::Cast::Make(ir::Float(64), ir::Cast::Make(ir::BFloat16(), x)); },
      {1 + std::ldexp(1, -8) + std::ldexp(1, -40)}, -1000, 1000,
      [](double v) { return testing::BFloat16Value(testing::BFloat16Bits(v)); });
}

TEST(X86Types, IntegersToFloat16AndBack) {
  CheckUnary(
      "i32_f16", ir::Int(32), ir::Float16(),
      [](Expr x) { return ir::Cast::Make(ir::Float16(), x); }, {2049, 2051, 65520, -70000}, -70000,
      70000, [](double v) { return testing::HalfValue(testing::HalfBits(v)); });
  CheckUnary(
      "u8_bf16", ir::UInt(8), ir::BFloat16(),
      [](Expr x) { return ir::Cast::Make(ir::BFloat16(), x); }, {255, 257 - 2}, 0, 255,
      [](double v) { return testing::BFloat16Value(testing::BFloat16Bits(v)); }, 8);
  CheckUnary(
      "f16_i16", ir::Float16(), ir::Int(16), [](Expr x) { return ir::Cast::Make(ir::Int(16), x); },
      {-2.5, -0.75, 2.5}, -3000, 3000, [](double v) { return std::trunc(v); });
}

TEST(X86Types, FloatToIntTruncatesTowardZero) {
  CheckUnary(
      "f32_i32", ir::Float(32), ir::Int(32), [](Expr x) { return ir::Cast::Make(ir::Int(32), x); },
      {-1.5, -0.5, -2.999, 2.999}, -100.9, 100.9, [](double v) { return std::trunc(v); }, 8);
  CheckUnary(
      "f64_i64", ir::Float(64), ir::Int(64), [](Expr x) { return ir::Cast::Make(ir::Int(64), x); },
      {-1e12 - 0.5}, -1e15, 1e15, [](double v) { return std::trunc(v); });
  CheckUnary(
      "f32_i8", ir::Float(32), ir::Int(8), [](Expr x) { return ir::Cast::Make(ir::Int(8), x); },
      {-127.9, 127.9}, -127.9, 127.9, [](double v) { return std::trunc(v); });
}

TEST(X86Types, IntegerNarrowingWraps) {
  CheckUnary(
      "i32_i8", ir::Int(32), ir::Int(8), [](Expr x) { return ir::Cast::Make(ir::Int(8), x); },
      {128, 255, 256, -129, 1000}, -1000, 1000, [](double v) { return WrapInt(ir::Int(8), v); }, 8);
  CheckUnary(
      "i64_i16", ir::Int(64), ir::Int(16), [](Expr x) { return ir::Cast::Make(ir::Int(16), x); },
      {32768, -32769}, -1e9, 1e9, [](double v) { return WrapInt(ir::Int(16), v); });
  CheckUnary(
      "i32_u8", ir::Int(32), ir::UInt(8), [](Expr x) { return ir::Cast::Make(ir::UInt(8), x); },
      {-1, 256}, -1000, 1000, [](double v) { return WrapInt(ir::UInt(8), v); });
}

struct MathCase {
  const char* name;
  std::function<Expr(Expr)> build;
  std::function<double(double)> ref;
  double lo, hi;
};

std::vector<MathCase> MathCases() {
  return {
      {"exp", [](Expr x) { return ir::Exp(x); }, [](double v) { return std::exp(v); }, -4, 4},
      {"log", [](Expr x) { return ir::Log(x); }, [](double v) { return std::log(v); }, 0.1, 10},
      {"tanh", [](Expr x) { return ir::Tanh(x); }, [](double v) { return std::tanh(v); }, -3, 3},
      {"erf", [](Expr x) { return ir::Erf(x); }, [](double v) { return std::erf(v); }, -2, 2},
      {"sqrt", [](Expr x) { return ir::Sqrt(x); }, [](double v) { return std::sqrt(v); }, 0.1, 10},
      {"rsqrt", [](Expr x) { return ir::Rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); }, 0.1,
       10},
      {"pow", [](Expr x) { return ir::Pow(x, Expr(1.7)); },
       [](double v) { return std::pow(v, 1.7); }, 0.5, 2},
  };
}

// Relative tolerances: float64 1e-14, float32 1e-6, float16 1e-3, bfloat16 8e-3 (about two
// units in the last place of the result; inputs are exact in their type).
TEST(X86Types, MathIntrinsicsMatchStdInDouble) {
  struct Precision {
    Type type;
    double tol;
    int lanes;
  };
  auto compiler = X86Compiler();
  for (const Precision& p : {Precision{ir::Float(64), 1e-14, 0}, Precision{ir::Float(32), 1e-6, 0},
                             Precision{ir::Float(32), 1e-6, 8}, Precision{ir::Float16(), 1e-3, 8},
                             Precision{ir::BFloat16(), 8e-3, 0}}) {
    for (const MathCase& mc : MathCases()) {
      std::string name = absl::StrCat(mc.name, "_", p.type.ToString(), "_v", p.lanes);
      SCOPED_TRACE(name);
      EntryFunction fn = Build(
          compiler.get(), testing::BuildUnary(name, p.type, mc.build, ir::Target::X86(), p.lanes));
      ASSERT_NE(fn, nullptr);
      TypedTensor a(p.type, {kRows, 16}), c(p.type, {kRows, 16});
      a.FillRandom(mc.lo, mc.hi);
      DLTensor* args[] = {a.dl(), c.dl()};
      ASSERT_EQ(fn(args, 2, nullptr), 0) << cinn_like_get_last_error();
      for (int64_t i = 0; i < c.size(); ++i) {
        double want = mc.ref(a.Get(i));
        ASSERT_NEAR(c.Get(i), want, p.tol * std::fabs(want) + p.tol * 1e-3) << "a=" << a.Get(i);
      }
    }
  }
}

TEST(X86Types, FastMathFlagSetsLlvmFastFlags) {
  auto func = testing::BuildUnary(
      "fast_exp", ir::Float(32), [](Expr x) { return ir::Exp(x) * x; }, ir::Target::X86());
  ASSERT_TRUE(func.ok()) << func.status();
  auto compiler = X86Compiler();
  ir::Module m{"fast_exp", ir::Target::X86(), {*func}};
  auto precise = compiler->GetSourceCode(m);
  FLAGS_cinn_like_fast_math = true;
  auto fast = compiler->GetSourceCode(m);
  FLAGS_cinn_like_fast_math = false;
  ASSERT_TRUE(precise.ok() && fast.ok());
  EXPECT_THAT(*precise, AllOf(HasSubstr("@llvm.exp.f32"), Not(HasSubstr("fmul fast"))));
  EXPECT_THAT(*fast, AllOf(HasSubstr("call fast float @llvm.exp.f32"), HasSubstr("fmul fast")));
}

TEST(X86Types, HalfAndBFloat16AreLlvmHalfAndBfloat) {
  auto compiler = X86Compiler();
  for (const Type& t : {ir::Float16(), ir::BFloat16()}) {
    auto func = testing::BuildBinary(
        "add16", t, [](Expr a, Expr b) { return a + b; }, ir::Target::X86(), 8);
    ASSERT_TRUE(func.ok()) << func.status();
    auto ll = compiler->GetSourceCode({"add16", ir::Target::X86(), {*func}});
    ASSERT_TRUE(ll.ok()) << ll.status();
    const char* llvm_type = t.is_float16() ? "<8 x half>" : "<8 x bfloat>";
    EXPECT_THAT(*ll, AllOf(HasSubstr(llvm_type), HasSubstr("<8 x float>"))) << *ll;
  }
}

TEST(X86TypesError, ErfOfAnIntTensorNamesFunctionAndTensor) {
  auto func = testing::BuildUnary(
      "erf_of_int", ir::Int(32), [](Expr x) { return ir::Erf(x); }, ir::Target::X86());
  ASSERT_FALSE(func.ok());
  EXPECT_EQ(func.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(func.status().message(),
              AllOf(HasSubstr("function erf_of_int: tensor C: math function erf takes a "
                              "floating-point type"),
                    HasSubstr("got int32")));
}

TEST(X86TypesError, CastToHandleIsRefused) {
  auto a = ir::MakeBuffer("A", ir::Float(32), {4});
  auto out = ir::MakeBuffer("Out", ir::Handle(), {4});
  ir::Var i("i");
  auto module = testing::MakeModule(
      "to_handle", {ir::Argument::Input(a), ir::Argument::Output(out)},
      ir::For::Make(
          i, 0, 4, ir::ForKind::kSerial,
          ir::Store::Make(out, {i}, ir::Cast::Make(ir::Handle(), ir::Load::Make(a, {i})))));
  absl::Status s = X86Compiler()->Build(module);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("to_handle"), HasSubstr("cannot cast float32 to handle")));
}

TEST(X86TypesError, WrongSixteenBitDTypeIsNamed) {
  auto compiler = X86Compiler();
  EntryFunction fn = Build(
      compiler.get(),
      testing::BuildBinary(
          "bf16_add", ir::BFloat16(), [](Expr a, Expr b) { return a + b; }, ir::Target::X86()));
  ASSERT_NE(fn, nullptr);
  TypedTensor a(ir::Float16(), {2, 16}), b(ir::BFloat16(), {2, 16}), c(ir::BFloat16(), {2, 16});
  DLTensor* args[] = {a.dl(), b.dl(), c.dl()};
  ASSERT_NE(fn(args, 3, nullptr), 0);
  EXPECT_THAT(cinn_like_get_last_error(),
              HasSubstr("argument 0 (A) has dtype float16, expected bfloat16"));
}

}  // namespace
}  // namespace cinn_like::backends
