/// \file Sums of ones past 2^24 elements that PyTorch computes exactly in float32 (its cascade
/// sum on the CPU, its GPU reductions' tree), where one float32 accumulator stops at 2^24
/// (x + 1 == x past it): issue 50, classes 5 (x86) and 9 (GPU threads that sum a whole column).
/// Shared by tests/hlir (x86), tests/opencl (PoCL's CPU device) and tests/gpu (the GPU machine);
/// the inputs are broadcasts where the sum's loop structure allows it, so the cases cost little
/// memory.
#pragma once

#include <gtest/gtest.h>

#include <iomanip>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/fusion_cases.h"

namespace cinn_like::testing {

/// A Program of one output whose every element is `want` when every input element is 1.
struct LongSumCase {
  std::string name;
  Program program;
  double want;
};

inline std::vector<LongSumCase> LongSumCases() {
  constexpr int64_t kN = int64_t{1} << 25;
  constexpr int64_t kOdd = kN + 1;  // no chunks of a two-stage column reduction divide it
  // kOdd is no float32: a float32 sum of kOdd ones rounds to kN.
  const double odd_sum = static_cast<double>(static_cast<float>(kOdd));
  std::vector<LongSumCase> cases;
  {
    // s.expand(n).sum(): the broadcast is inlined, one scalar loop of 2^25 additions on x86.
    NetBuilder b;
    auto s = b.CreateInput(DType::kFloat32, S({1}), "s");
    b.MarkOutput(b.ReduceSum(b.BroadcastTo(s, {kN}), {0}, /*keepdim=*/true));
    cases.push_back({"sum_of_a_broadcast_scalar", *b.Build(), static_cast<double>(kN)});
  }
  {
    // A real input, reduced in vector partials on x86: each lane alone passes 2^16, not 2^24.
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({kN}), "x");
    b.MarkOutput(b.ReduceSum(x, {0}, /*keepdim=*/true));
    cases.push_back({"sum_of_a_tensor", *b.Build(), static_cast<double>(kN)});
  }
  {
    // x86 streams columns with one vector accumulator per chunk of columns: 2^25 rows each.
    NetBuilder b;
    auto row = b.CreateInput(DType::kFloat32, S({1, 16}), "row");
    b.MarkOutput(b.ReduceSum(b.BroadcastTo(row, {kN, 16}), {0}));
    cases.push_back({"column_sums_of_a_broadcast_row", *b.Build(), static_cast<double>(kN)});
  }
  {
    // Rows that split into no chunks: on a GPU a thread sums its whole column.
    NetBuilder b;
    auto row = b.CreateInput(DType::kFloat32, S({1, 4}), "row");
    b.MarkOutput(b.ReduceSum(b.BroadcastTo(row, {kOdd, 4}), {0}));
    cases.push_back({"column_sums_of_odd_length", *b.Build(), odd_sum});
  }
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    // A column mean is a reduction with its consumer (the division; float16's cast): on a GPU
    // a thread per column sums every row, whatever the row count (a float32 accumulator for
    // float16 too).
    NetBuilder b;
    auto row = b.CreateInput(dt, S({1, 4}), "row");
    b.MarkOutput(b.ReduceMean(b.BroadcastTo(row, {kOdd, 4}), {0}));
    cases.push_back({absl::StrCat("column_means_", hlir::DTypeName(dt)), *b.Build(), 1.0});
  }
  return cases;
}

/// The sum of `n` ones of a broadcast scalar, s.expand(n).sum(): one loop of n additions (a
/// thread's on GPU targets), in blocks of 4096 and the rest after the last block (BlockReductions,
/// ir/transforms/block_reductions.h). `want` is the float64 sum, rounded once to float32.
inline LongSumCase SumOfABroadcastScalar(int64_t n) {
  NetBuilder b;
  auto s = b.CreateInput(DType::kFloat32, S({1}), "s");
  b.MarkOutput(b.ReduceSum(b.BroadcastTo(s, {n}), {0}, /*keepdim=*/true));
  return {absl::StrCat("sum_of_a_broadcast_scalar_", n), *b.Build(),
          static_cast<double>(static_cast<float>(static_cast<double>(n)))};
}

/// Sums of 2^24 + 3 ones, a loop of 4096 blocks of 4096 and a rest of 3: the blocks' total is
/// 2^24, and the rest, added into the total one by one, was lost (2^24 + 1 rounds to 2^24);
/// summed into a partial of its own and added once (`<X>_tail`), the total is the float64 sum
/// rounded once, 2^24 + 4, as in PyTorch. A broadcast scalar's sum, column sums and column means
/// of a broadcast row (on GPU targets a thread per column adds its whole column; a mean divides
/// the float32 sum by float32(n), 1 only when the sum is 2^24 + 4).
inline std::vector<LongSumCase> RestAfterTheLastBlockCases() {
  constexpr int64_t kN = (int64_t{1} << 24) + 3;
  const double rounded = static_cast<double>(static_cast<float>(static_cast<double>(kN)));
  std::vector<LongSumCase> cases = {SumOfABroadcastScalar(kN)};
  for (bool mean : {false, true}) {
    NetBuilder b;
    auto row = b.CreateInput(DType::kFloat32, S({1, 8}), "row");
    auto wide = b.BroadcastTo(row, {kN, 8});
    b.MarkOutput(mean ? b.ReduceMean(wide, {0}) : b.ReduceSum(wide, {0}));
    cases.push_back({mean ? "column_means_of_a_broadcast_row" : "column_sums_of_a_broadcast_row",
                     *b.Build(), mean ? 1.0 : rounded});
  }
  return cases;
}

/// Runs `program` on `target` through `exec` with every input filled with `value`, symbolic
/// dims of `symbols` bound to their values there (others as Concrete binds them); the first
/// output's elements.
inline std::vector<double> RunFilled(const Program& program, const ir::Target& target,
                                     const Executor& exec, double value,
                                     const std::map<std::string, int64_t>& symbols = {}) {
  auto dims = [&](const Shape& shape) {
    std::map<std::string, int64_t> values = symbols;  // the others as Concrete binds them
    for (const Dim& d : shape) {
      for (const std::string& s : d.expr().Symbols()) values.emplace(s, SymbolValue(s));
    }
    auto out = hlir::EvaluateShape(shape, values);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : std::vector<int64_t>{};
  };
  auto graph = frontend::BuildGraph(program);
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto module = CompileProgramModule(program, target, "long_sum");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!graph.ok() || !module.ok()) return {};
  std::vector<std::unique_ptr<TypedTensor>> owned;
  std::vector<TypedTensor*> args;
  for (int v : graph->inputs()) {
    const hlir::Value& in = graph->values()[v];
    owned.push_back(
        std::make_unique<TypedTensor>(hlir::ToIrType(in.desc.dtype), dims(in.desc.shape)));
    for (int64_t k = 0; k < owned.back()->size(); ++k) owned.back()->Set(k, value);
    args.push_back(owned.back().get());
  }
  const hlir::Value& out = graph->values()[graph->outputs()[0]];
  owned.push_back(
      std::make_unique<TypedTensor>(hlir::ToIrType(out.desc.dtype), dims(out.desc.shape)));
  args.push_back(owned.back().get());
  exec(*module, args);
  std::vector<double> got;
  for (int64_t k = 0; k < args.back()->size(); ++k) got.push_back(args.back()->Get(k));
  return got;
}

/// Every case of `cases` on `target`: each output element exactly the case's value.
inline void CheckSumsOfOnes(const std::vector<LongSumCase>& cases, const ir::Target& target,
                            const Executor& exec) {
  for (const LongSumCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<double> got = RunFilled(c.program, target, exec, 1.0);
    ASSERT_FALSE(got.empty());
    for (double g : got) {
      EXPECT_EQ(g, c.want) << std::setprecision(17) << "got " << g << ", want " << c.want;
    }
  }
}

/// Every case of LongSumCases on `target`: each output element exactly the case's value.
inline void CheckLongSumsOfOnes(const ir::Target& target, const Executor& exec) {
  CheckSumsOfOnes(LongSumCases(), target, exec);
}

}  // namespace cinn_like::testing
