/// \file The x86 open-coded vector math (backends/llvm/codegen_llvm_vector_math.cc): exp of
/// float32 vectors against the float64 std::exp over its whole range, the denormal results,
/// the overflow and underflow edges and the special values, lane by lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

TEST(X86VectorMath, ExpOfFloat32VectorsIsWithinTwoUlps) {
  constexpr int64_t kRows = 64, kCols = 64;  // 64 columns: the exp is vectorized by 8
  NetBuilder b;
  b.MarkOutput(b.Exp(b.CreateInput(DType::kFloat32, S({kRows, kCols}), "x")));
  auto module = CompileProgramModule(*b.Build(), ir::Target::X86(), "vexp");
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_NE(ir::ToString(*module).find("ramp("), std::string::npos) << "not vectorized";
  std::vector<float> in = {0.0f,
                           -0.0f,
                           1.0f,
                           -1.0f,
                           88.72283f,
                           88.72284f,
                           88.8f,
                           -87.3f,
                           -100.0f,
                           -103.97f,
                           -103.98f,
                           -104.0f,
                           1e-8f,
                           -1e-8f,
                           0.3465f,
                           0.3466f,
                           20.5f,
                           -20.5f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::nanf("")};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-105.0f, 90.0f);
  while (in.size() < kRows * kCols) in.push_back(dist(rng));
  TypedTensor x(ir::Float(32), {kRows, kCols}), y(ir::Float(32), {kRows, kCols});
  for (int64_t k = 0; k < x.size(); ++k) x.Set(k, in[k]);
  std::vector<TypedTensor*> args = {&x, &y};
  RunOnX86(*module, args);
  int bad = 0;
  for (int64_t k = 0; k < x.size() && bad < 5; ++k) {
    const double want = std::exp(static_cast<double>(in[k]));
    const float got = static_cast<float>(y.Get(k));
    const float want_f = static_cast<float>(want);
    bool ok = (std::isnan(want) && std::isnan(got)) || got == want_f;
    if (!ok && std::isfinite(want_f) && std::isfinite(got)) {
      // Two units in the last place of the float result (one ulp of the smallest denormal).
      const double ulp =
          std::max<double>(std::fabs(std::nextafter(want_f, INFINITY) - want_f),
                           static_cast<double>(std::numeric_limits<float>::denorm_min()));
      ok = std::fabs(got - want) <= 2 * ulp;
    }
    if (!ok) {
      ++bad;
      ADD_FAILURE() << "exp(" << in[k] << ") = " << got << ", want " << want;
    }
  }
}

}  // namespace
}  // namespace cinn_like::testing
