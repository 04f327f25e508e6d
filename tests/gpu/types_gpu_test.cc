/// \file GPU machine only: the typed kernels of tests/typed_kernels.h run on the device, every
/// scalar type, against the same float64 references as the x86 type tests (bit-exact for
/// integer and 16-bit float arithmetic and for casts; float32/float64 arithmetic within the
/// fma contraction NVRTC does; CUDA math within stated tolerances).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tests/typed_kernels.h"

namespace cinn_like::backends {
namespace {

using ir::Expr;
using ir::Type;
using testing::TypedTensor;

constexpr int64_t kRows = 37;

/// Builds `func` for the device's arch and returns its entry, or null after a failure.
EntryFunction Build(Compiler* compiler, absl::StatusOr<ir::LoweredFunc> func) {
  EXPECT_TRUE(func.ok()) << func.status();
  if (!func.ok()) return nullptr;
  absl::Status s = compiler->Build({(*func)->name, compiler->target(), {*func}});
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return nullptr;
  auto fn = compiler->Lookup((*func)->name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *fn : nullptr;
}

/// Copies the host tensors to the device, runs `fn` on them (inputs then the output), copies
/// the output back.
void RunOnDevice(EntryFunction fn, std::vector<TypedTensor*> tensors) {
  std::vector<void*> device(tensors.size());
  std::vector<DLTensor> views(tensors.size());
  std::vector<DLTensor*> args;
  for (size_t k = 0; k < tensors.size(); ++k) {
    ASSERT_EQ(cinn_like_cuda_malloc(&device[k], tensors[k]->bytes()), 0)
        << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(device[k], tensors[k]->data(), tensors[k]->bytes()),
              0);
    views[k] = *tensors[k]->dl();
    views[k].data = device[k];
    views[k].device = {kDLCUDA, 0};
    args.push_back(&views[k]);
  }
  ASSERT_EQ(fn(args.data(), static_cast<int32_t>(args.size()), nullptr), 0)
      << cinn_like_get_last_error();
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
  TypedTensor* out = tensors.back();
  ASSERT_EQ(cinn_like_cuda_memcpy_to_host(out->data(), device.back(), out->bytes()), 0);
  for (void* p : device) cinn_like_cuda_free(p);
}

double WrapInt(const Type& t, long double v) {
  uint64_t bits = static_cast<uint64_t>(static_cast<__int128>(v));
  if (t.bits() < 64) bits &= (uint64_t{1} << t.bits()) - 1;
  if (t.is_uint()) return static_cast<double>(bits);
  int shift = 64 - t.bits();
  return static_cast<double>(static_cast<int64_t>(bits << shift) >> shift);
}

class TypesGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compiler = Compiler::Create(ir::Target::NVGPU());
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    compiler_ = std::move(*compiler);
  }
  std::unique_ptr<Compiler> compiler_;
};

TEST_F(TypesGpu, ArithmeticPerType) {
  struct Case {
    Type type;
    double lo, hi;
  };
  for (const Case& tc :
       {Case{ir::Float16(), -4, 4}, Case{ir::BFloat16(), -4, 4}, Case{ir::Float(32), -4, 4},
        Case{ir::Float(64), -4, 4}, Case{ir::Int(8), -100, 100}, Case{ir::Int(16), -300, 300},
        Case{ir::Int(32), -1e5, 1e5}, Case{ir::Int(64), -5e7, 5e7}, Case{ir::UInt(8), 0, 255}}) {
    const Type& t = tc.type;
    SCOPED_TRACE(t.ToString());
    EntryFunction fn = Build(
        compiler_.get(), testing::BuildBinary(
                             "gpu_arith_" + t.ToString(), t,
                             [](Expr a, Expr b) { return a * b + a - b; }, compiler_->target()));
    ASSERT_NE(fn, nullptr);
    TypedTensor a(t, {kRows, 16}), b(t, {kRows, 16}), c(t, {kRows, 16});
    a.FillRandom(tc.lo, tc.hi);
    b.FillRandom(tc.lo, tc.hi);
    RunOnDevice(fn, {&a, &b, &c});
    for (int64_t i = 0; i < c.size(); ++i) {
      double x = a.Get(i), y = b.Get(i), want;
      if (t.is_float()) {
        want = testing::RoundTo(t, testing::RoundTo(t, testing::RoundTo(t, x * y) + x) - y);
      } else {
        want = WrapInt(t, WrapInt(t, WrapInt(t, static_cast<long double>(x) * y) + x) - y);
      }
      if (t == ir::Float(32) || t == ir::Float(64)) {
        // NVRTC contracts a * b + a into one fma (--fmad=true, its default): one rounding
        // fewer than the reference, so within a few units in the last place. float16 and
        // bfloat16 round each product back (__float2half_rn), which blocks contraction.
        double eps = t.bits() == 32 ? std::ldexp(1, -22) : std::ldexp(1, -51);
        ASSERT_NEAR(c.Get(i), want, eps * (std::fabs(x * y) + std::fabs(x) + std::fabs(y)))
            << "i=" << i << " a=" << x << " b=" << y;
      } else {
        ASSERT_EQ(c.Get(i), want) << "i=" << i << " a=" << x << " b=" << y;
      }
    }
  }
}

TEST_F(TypesGpu, FloatLiteralEdgesStoreExactly) {
  for (const Type& t : {ir::Float16(), ir::BFloat16(), ir::Float(32), ir::Float(64)}) {
    std::vector<double> edges = testing::FloatLiteralEdges(t);
    for (size_t k = 0; k < edges.size(); ++k) {
      std::string name = absl::StrCat("literal_", t.ToString(), "_", k);
      SCOPED_TRACE(absl::StrCat(name, " value ", edges[k]));
      EntryFunction fn =
          Build(compiler_.get(), testing::BuildConstant(name, t, edges[k], compiler_->target()));
      ASSERT_NE(fn, nullptr);
      TypedTensor a(t, {2, 16}), c(t, {2, 16});
      a.FillRandom(-1, 1);
      RunOnDevice(fn, {&a, &c});
      for (int64_t i = 0; i < c.size(); ++i) {
        ASSERT_TRUE(testing::SameFloat(c.Get(i), edges[k])) << "got " << c.Get(i);
      }
    }
  }
}

TEST_F(TypesGpu, CastsRoundToNearestEvenTruncateAndWrap) {
  struct Case {
    std::string name;
    Type from, to;
    double lo, hi;
    std::vector<double> chosen;
    std::function<double(double)> ref;
  };
  const double tie16 = 1 + std::ldexp(1, -11), tie_bf = 1 + std::ldexp(1, -8);
  std::vector<Case> cases = {
      {"f32_f16",
       ir::Float(32),
       ir::Float16(),
       -70000,
       70000,
       {tie16, 3 * tie16 - 2, 65520},
       [](double v) { return testing::HalfValue(testing::HalfBits(v)); }},
      {"f32_bf16",
       ir::Float(32),
       ir::BFloat16(),
       -1e5,
       1e5,
       {tie_bf, -tie_bf},
       [](double v) { return testing::BFloat16Value(testing::BFloat16Bits(v)); }},
      {"f64_f16",
       ir::Float(64),
       ir::Float16(),
       -1000,
       1000,
       {tie16 + std::ldexp(1, -40)},
       [](double v) { return testing::HalfValue(testing::HalfBits(v)); }},
      {"i32_f16",
       ir::Int(32),
       ir::Float16(),
       -70000,
       70000,
       {2049, 2051},
       [](double v) { return testing::HalfValue(testing::HalfBits(v)); }},
      {"f32_i32",
       ir::Float(32),
       ir::Int(32),
       -100.9,
       100.9,
       {-1.5, -0.5, 2.999},
       [](double v) { return std::trunc(v); }},
      {"f16_i16",
       ir::Float16(),
       ir::Int(16),
       -3000,
       3000,
       {-2.5},
       [](double v) { return std::trunc(v); }},
      {"i32_i8",
       ir::Int(32),
       ir::Int(8),
       -1000,
       1000,
       {128, -129},
       [](double v) { return WrapInt(ir::Int(8), v); }},
      {"i32_u8",
       ir::Int(32),
       ir::UInt(8),
       -1000,
       1000,
       {-1, 256},
       [](double v) { return WrapInt(ir::UInt(8), v); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Type to = c.to;
    EntryFunction fn = Build(
        compiler_.get(), testing::BuildUnary(
                             "gpu_cast_" + c.name, c.from,
                             [&](Expr x) { return ir::Cast::Make(to, x); }, compiler_->target()));
    ASSERT_NE(fn, nullptr);
    TypedTensor a(c.from, {kRows, 16}), out(c.to, {kRows, 16});
    a.FillRandom(c.lo, c.hi);
    for (size_t i = 0; i < c.chosen.size(); ++i) a.Set(static_cast<int64_t>(i), c.chosen[i]);
    RunOnDevice(fn, {&a, &out});
    for (int64_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out.Get(i), c.ref(a.Get(i))) << "i=" << i << " a=" << a.Get(i);
    }
  }
}

// CUDA's math library: float32 within 1e-6 relative (erff, tanhf, powf are 2 to 3 ulp),
// float64 1e-14, float16 1e-3, bfloat16 8e-3 (computed in float32, rounded once).
TEST_F(TypesGpu, MathIntrinsicsMatchStdInDouble) {
  struct MathCase {
    const char* name;
    std::function<Expr(Expr)> build;
    std::function<double(double)> ref;
    double lo, hi;
  };
  std::vector<MathCase> ops = {
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
  for (auto [type, tol] : std::vector<std::pair<Type, double>>{{ir::Float(64), 1e-14},
                                                               {ir::Float(32), 1e-6},
                                                               {ir::Float16(), 1e-3},
                                                               {ir::BFloat16(), 8e-3}}) {
    for (const MathCase& mc : ops) {
      std::string name = absl::StrCat("gpu_", mc.name, "_", type.ToString());
      SCOPED_TRACE(name);
      EntryFunction fn =
          Build(compiler_.get(), testing::BuildUnary(name, type, mc.build, compiler_->target()));
      ASSERT_NE(fn, nullptr);
      TypedTensor a(type, {kRows, 16}), c(type, {kRows, 16});
      a.FillRandom(mc.lo, mc.hi);
      RunOnDevice(fn, {&a, &c});
      for (int64_t i = 0; i < c.size(); ++i) {
        double want = mc.ref(a.Get(i));
        ASSERT_NEAR(c.Get(i), want, tol * std::fabs(want) + tol * 1e-3) << "a=" << a.Get(i);
      }
    }
  }
}

}  // namespace
}  // namespace cinn_like::backends
