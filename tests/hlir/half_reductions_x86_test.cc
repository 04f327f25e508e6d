/// \file float16 and bfloat16 reductions on x86 (issue 50, class 9): sums and means of
/// positive data, long enough that a 16-bit accumulator stalls (past 2048 a float16 sum no
/// longer grows by values below 1), within one unit in the last place of the reference
/// interpreter's float64 result rounded once; they accumulate in float32 as PyTorch's do.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

const ir::Target kX86 = ir::Target::X86();

/// One unit in the last place of `v` (normal) in `dt`: 10 bits of fraction, or 7 for bfloat16.
double Ulp(double v, DType dt) {
  const int fraction = dt == DType::kFloat16 ? 10 : 7;
  return std::ldexp(1.0, std::ilogb(std::fabs(v)) - fraction);
}

void CheckOneUlp(const Program& program, DType dt) {
  auto graph = frontend::BuildGraph(program);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto module = CompileProgramModule(program, kX86, "half_reduce");
  ASSERT_TRUE(module.ok()) << module.status();
  static std::random_device rd;
  const uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  const hlir::Value& in = graph->values()[graph->inputs()[0]];
  TypedTensor x(hlir::ToIrType(dt), Concrete(in.desc.shape));
  FillDomain(x, Domain::kPositive, rng);
  hlir::HostTensor ref_in(dt, Concrete(in.desc.shape));
  for (int64_t k = 0; k < x.size(); ++k) ref_in.data[k] = x.Get(k);
  auto want = hlir::RunReference(*graph, {ref_in});
  ASSERT_TRUE(want.ok()) << want.status();
  const hlir::HostTensor& w = (*want)[0];
  TypedTensor out(hlir::ToIrType(dt), w.shape);
  std::vector<TypedTensor*> args{&x, &out};
  RunOnX86(*module, args);
  int bad = 0;
  for (int64_t k = 0; k < w.size() && bad < 5; ++k) {
    if (std::fabs(out.Get(k) - w.data[k]) > Ulp(w.data[k], dt)) {
      ++bad;
      ADD_FAILURE() << "element " << k << ": got " << out.Get(k) << ", want " << w.data[k];
    }
  }
}

TEST(HalfReductionsX86, SumsAndMeansOfRowsAndColumnsWithinOneUlp) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    for (bool mean : {false, true}) {
      for (auto [shape, axis] : std::vector<std::pair<Shape, int64_t>>{
               {S({8, 20000}), 1}, {S({20000, 24}), 0}, {S({4, 3000, 5}), 1}, {S({70001}), 0}}) {
        SCOPED_TRACE(absl::StrCat(hlir::DTypeName(dt), " ", hlir::ShapeToString(shape),
                                  mean ? " mean " : " sum ", axis));
        NetBuilder b;
        auto x = b.CreateInput(dt, shape, "x");
        b.MarkOutput(mean ? b.ReduceMean(x, {axis}, /*keepdim=*/true)
                          : b.ReduceSum(x, {axis}, /*keepdim=*/true));
        CheckOneUlp(*b.Build(), dt);
      }
    }
  }
}

}  // namespace
}  // namespace cinn_like::testing
