/// \file The group scheduler's x86 tactics: what the dump says each nest got, and the results
/// of the same programs against the reference interpreter on fresh random data (odd, tiny and
/// wide shapes, the vector tails included).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

const ir::Target kX86 = ir::Target::X86();
/// float32 lanes of this host's widest vectors (8 with AVX2, 16 with AVX-512).
const int kLanes = ir::DevicePropertiesOf(kX86).vector_bytes / 4;

/// The tactics the dump records for `program` compiled for x86 as entry `name`.
std::string Tactics(const Program& program, const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/group_schedule_x86";
  const std::string old = FLAGS_cinn_like_dump_dir;
  FLAGS_cinn_like_dump_dir = dir;
  auto module = CompileProgramModule(program, kX86, name);
  FLAGS_cinn_like_dump_dir = old;
  EXPECT_TRUE(module.ok()) << module.status();
  std::stringstream text;
  text << std::ifstream(dir + "/" + name + ".tactics.txt").rdbuf();
  return text.str();
}

Program Reduce(const Shape& shape, std::vector<int64_t> axes, bool max = false) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, shape, "x");
  b.MarkOutput(max ? b.ReduceMax(x, axes) : b.ReduceSum(x, axes));
  return *b.Build();
}

TEST(GroupScheduleX86, ColumnReductionsStreamTheRowsWithVectorAccumulators) {
  EXPECT_THAT(Tactics(Reduce(S({300, 256}), {0}), "cols"),
              HasSubstr(absl::StrCat("cpu.column_reduction_streams_rows (columns of 256 in "
                                     "chunks of ",
                                     4 * kLanes)));
  EXPECT_THAT(Tactics(Reduce(S({37, 24}), {0}), "cols8"), HasSubstr("in chunks of 8"));
  for (const Shape& s :
       {S({300, 256}), S({300, 64}), S({37, 24}), S({5, 7}), S({1, 32}), S({64, 3, 40})}) {
    for (bool max : {false, true}) {
      SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), max ? " max" : " sum"));
      RunProgramCase(Reduce(s, {0}, max), kX86, RunOnX86);
      if (s.size() == 3) RunProgramCase(Reduce(s, {1}, max), kX86, RunOnX86);
    }
  }
}

TEST(GroupScheduleX86, RowReductionsAccumulateInVectorsAndRunOnThePool) {
  EXPECT_THAT(Tactics(Reduce(S({2048, 2048}), {1}), "rows"),
              HasSubstr(absl::StrCat("cpu.parallel_outer (2048 outputs of 2048 elements each "
                                     "(4096 or more: thread pool), rows of 2048 reduced in "
                                     "vectors of ",
                                     4 * kLanes, ")")));
  for (const Shape& s : {S({37, 1000}), S({3, 65}), S({4, 17}), S({2, 300, 257})}) {
    for (bool max : {false, true}) {
      SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), max ? " max" : " sum"));
      RunProgramCase(Reduce(s, {static_cast<int64_t>(s.size()) - 1}, max), kX86, RunOnX86);
    }
  }
}

TEST(GroupScheduleX86, ElementwiseChainsAreOneNest) {
  // x * a + b -> relu, times sigmoid(x): every stage inlined into the one output nest.
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({64, 512}), "x");
  auto a = b.CreateInput(DType::kFloat32, S({64, 512}), "a");
  auto bias = b.CreateInput(DType::kFloat32, S({512}), "bias");
  b.MarkOutput(b.Mul(b.Relu(b.Add(b.Mul(x, a), bias)), b.Sigmoid(x)));
  Program p = *b.Build();
  std::string tactics = Tactics(p, "chain");
  EXPECT_EQ(std::count(tactics.begin(), tactics.end(), '\n'), 1) << tactics;
  EXPECT_THAT(tactics, HasSubstr(absl::StrCat("inner loop of 512 vectorized by ", kLanes)));
  RunProgramCase(p, kX86, RunOnX86);
}

TEST(GroupScheduleX86, ASoftmaxFeedingALayerNormIsOneRowGroup) {
  // softmax's exp(x - max) is read by its sum and by its quotient, which the layer_norm after
  // it inlines: recomputed per row in cache, not a tensor of its own with four more passes.
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({64, 256}), "x");
  auto gamma = b.CreateInput(DType::kFloat32, S({256}), "gamma");
  auto beta = b.CreateInput(DType::kFloat32, S({256}), "beta");
  b.MarkOutput(b.LayerNorm(b.Softmax(x), gamma, beta));
  Program p = *b.Build();
  std::string tactics = Tactics(p, "softmax_layer_norm");
  EXPECT_EQ(std::count(tactics.begin(), tactics.end(), '\n'), 1) << tactics;
  EXPECT_THAT(tactics, HasSubstr("cpu.row_group (64 rows on the thread pool, 4 reduction(s)"));
  RunProgramCase(p, kX86, RunOnX86);
}

}  // namespace
}  // namespace cinn_like::testing
