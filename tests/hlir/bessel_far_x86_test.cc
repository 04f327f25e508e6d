/// \file J0, J1, Y0 and Y1 on x86 at far arguments (|x| from 1e3 to 1e300 in float64, to
/// float32's largest in float32) against the reference interpreter in float64: both must reduce
/// the phase x - (nu/2 + 1/4) pi exactly (the fuzzer found them 2e-10 apart near 1e19, where
/// the reference subtracted it in floating point; tests/hlir/reference_ops_test.cc checks the
/// reference against mpmath there). The op table (tests/op_cases.h) stops at 1e20.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "frontend/net_builder.h"
#include "hlir/graph_compiler.h"
#include "hlir/reference_interpreter.h"
#include "tests/typed_kernels.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

using hlir::DType;
using hlir::HostTensor;

/// `n` fresh arguments of magnitude 10^U(3, max_exponent), either sign unless `positive`,
/// rounded to `t`.
std::vector<double> FarArguments(DType t, int n, double max_exponent, bool positive) {
  static std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> exponent(3, max_exponent), unit(0, 1);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    double x = std::pow(10.0, exponent(rng));
    if (!positive && unit(rng) < 0.5) x = -x;
    out.push_back(t == DType::kFloat32 ? static_cast<float>(x) : x);
  }
  return out;
}

/// op(xs) by the reference interpreter, in float64.
std::vector<double> Reference(const char* op, const std::vector<double>& xs) {
  frontend::NetBuilder b;
  const auto n = static_cast<int64_t>(xs.size());
  b.MarkOutput(b.Op(op, {b.CreateInput(DType::kFloat64, hlir::MakeShape({n}), "x")})[0]);
  auto graph = frontend::BuildGraph(*b.Build());
  EXPECT_TRUE(graph.ok()) << graph.status();
  HostTensor in(DType::kFloat64, {n});
  in.data = xs;
  auto out = hlir::RunReference(*graph, {in});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].data : std::vector<double>();
}

/// op(xs) compiled for x86 at dtype `t`.
std::vector<double> OnX86(const char* op, DType t, const std::vector<double>& xs) {
  frontend::NetBuilder b;
  const auto n = static_cast<int64_t>(xs.size());
  b.MarkOutput(b.Op(op, {b.CreateInput(t, hlir::MakeShape({n}), "x")})[0]);
  auto graph = frontend::BuildGraph(*b.Build());
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto module = hlir::CompileGraph(*graph, ir::Target::X86(), "far_bessel");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  TypedTensor in(hlir::ToIrType(t), {n}), out(hlir::ToIrType(t), {n});
  for (int64_t i = 0; i < n; ++i) in.Set(i, xs[i]);
  std::vector<TypedTensor*> args = {&in, &out};
  RunOnX86(*module, args);
  std::vector<double> got;
  for (int64_t i = 0; i < n; ++i) got.push_back(out.Get(i));
  return got;
}

TEST(BesselFarX86, MatchesTheReferenceUpTo1e300) {
  // Tolerances relative to the oscillation's amplitude sqrt(2 / (pi |x|)) (the values cross
  // zero): float64 1e-12 (both come within about 4e-16 of mpmath); float32 the rounding of the
  // float64 result, 2^-24 of at most the amplitude, doubled.
  const std::pair<const char*, bool> ops[] = {
      {"bessel_j0", false}, {"bessel_j1", false}, {"bessel_y0", true}, {"bessel_y1", true}};
  for (const auto& [op, positive] : ops) {  // (Y is NaN below 0)
    for (DType t : {DType::kFloat64, DType::kFloat32}) {
      const std::vector<double> xs =
          FarArguments(t, 256, t == DType::kFloat64 ? 300 : 38, positive);
      const std::vector<double> want = Reference(op, xs), got = OnX86(op, t, xs);
      ASSERT_EQ(want.size(), xs.size());
      ASSERT_EQ(got.size(), xs.size());
      const double rtol = t == DType::kFloat64 ? 1e-12 : std::ldexp(1.0, -23);
      int bad = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const double amplitude = std::sqrt(2 / (M_PI * std::fabs(xs[i])));
        if (std::fabs(got[i] - want[i]) <= rtol * amplitude) continue;
        if (++bad <= 3) {
          ADD_FAILURE() << op << " " << hlir::DTypeName(t) << "(" << xs[i] << "): x86 " << got[i]
                        << ", reference " << want[i] << ", amplitude " << amplitude;
        }
      }
      EXPECT_EQ(bad, 0) << op << " " << hlir::DTypeName(t) << ": of " << xs.size();
    }
  }
}

}  // namespace
}  // namespace cinn_like::testing
