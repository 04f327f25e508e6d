/// \file The x86 open-coded vector math (backends/llvm/codegen_llvm_vector_math.cc): exp and
/// tanh of float32 vectors against float64 std::exp and std::tanh over their ranges, the
/// denormal results, the overflow and underflow edges, the branch points and the special
/// values, lane by lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

/// Runs `op` (exp or tanh) over float32 [64, 64] (vectorized by 8) on `in` (the first
/// values, then uniform ones from `lo` to `hi`) and compares each lane with `want` in float64:
/// equal as floats, or within `ulps` units in the last place of the float result.
void CheckVectorMath(const std::string& op, double (*want_fn)(double), std::vector<float> in,
                     float lo, float hi, int ulps) {
  constexpr int64_t kRows = 64, kCols = 64;
  NetBuilder b;
  auto x_var = b.CreateInput(DType::kFloat32, S({kRows, kCols}), "x");
  b.MarkOutput(op == "exp" ? b.Exp(x_var) : b.Tanh(x_var));
  auto module = CompileProgramModule(*b.Build(), ir::Target::X86(), "vmath");
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_NE(ir::ToString(*module).find("ramp("), std::string::npos) << "not vectorized";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(lo, hi);
  while (in.size() < kRows * kCols) in.push_back(dist(rng));
  TypedTensor x(ir::Float(32), {kRows, kCols}), y(ir::Float(32), {kRows, kCols});
  for (int64_t k = 0; k < x.size(); ++k) x.Set(k, in[k]);
  std::vector<TypedTensor*> args = {&x, &y};
  RunOnX86(*module, args);
  int bad = 0;
  for (int64_t k = 0; k < x.size() && bad < 5; ++k) {
    const double want = want_fn(static_cast<double>(in[k]));
    const float got = static_cast<float>(y.Get(k));
    const float want_f = static_cast<float>(want);
    bool ok = (std::isnan(want) && std::isnan(got)) || got == want_f;
    if (!ok && std::isfinite(want_f) && std::isfinite(got)) {
      // Units in the last place of the float result (at least the smallest denormal).
      const double ulp =
          std::max<double>(std::fabs(std::nextafter(want_f, INFINITY) - want_f),
                           static_cast<double>(std::numeric_limits<float>::denorm_min()));
      ok = std::fabs(got - want) <= ulps * ulp;
    }
    if (!ok) {
      ++bad;
      ADD_FAILURE() << op << "(" << in[k] << ") = " << got << ", want " << want;
    }
  }
}

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(X86VectorMath, ExpOfFloat32VectorsIsWithinTwoUlps) {
  CheckVectorMath(
      "exp", [](double v) { return std::exp(v); },
      {0.0f,    -0.0f,   1.0f,     -1.0f,    88.72283f, 88.72284f, 88.8f,
       -87.3f,  -100.0f, -103.97f, -103.98f, -104.0f,   1e-8f,     -1e-8f,
       0.3465f, 0.3466f, 20.5f,    -20.5f,   kInf,      -kInf,     std::nanf("")},
      -105.0f, 90.0f, 2);
}

TEST(X86VectorMath, TanhOfFloat32VectorsIsWithinFourUlps) {
  CheckVectorMath(
      "tanh", [](double v) { return std::tanh(v); },
      {0.0f, -0.0f, 0.4999f, 0.5f, -0.5f, 0.5001f, 1e-6f, -1e-30f, 9.0f, -9.1f, 44.0f, -45.0f,
       1e30f, kInf, -kInf, std::nanf("")},
      -6.0f, 6.0f, 4);
  CheckVectorMath(
      "tanh", [](double v) { return std::tanh(v); }, {}, -0.6f, 0.6f, 4);
}

}  // namespace
}  // namespace cinn_like::testing
