/// \file Reductions without a value over no elements (issue 50, class 5): the max, min, argmax
/// and argmin of an empty axis have none (PyTorch raises), where a sum is 0. An axis known to be
/// empty is refused at inference (ReferenceOps.MaxAndMinOfNoElementsAreRefusedWhereSumsAreZero);
/// one that is a symbol is refused by the entry when a call binds it to 0, naming the op, where
/// it returned -inf, +inf or 0 before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program.h"
#include "frontend/program_json.h"
#include "hlir/reference_interpreter.h"
#include "tests/test_util.h"

namespace cinn_like {
namespace {

using hlir::Dim;
using hlir::DType;
using testing::FloatView;
using ::testing::HasSubstr;

/// f(x [s0, 3]) = `op` of x over axis 0, [3] (float32; argmax's int64 read as raw bytes here).
cinn_like_function Compile(const std::string& op, cinn_like_module* module) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, {Dim::Symbol("s0"), Dim::Known(3)}, "x");
  if (op == "reduce_max") b.MarkOutput(b.ReduceMax(x, {0}));
  if (op == "reduce_sum") b.MarkOutput(b.ReduceSum(x, {0}));
  if (op == "argmax") b.MarkOutput(b.Argmax(x, 0));
  const std::string json = frontend::ProgramToJson(*b.Build());
  if (cinn_like_compile(json.c_str(), "x86", "f", module) != 0) {
    ADD_FAILURE() << op << ": " << cinn_like_get_last_error();
    return nullptr;
  }
  cinn_like_function fn = nullptr;
  EXPECT_EQ(cinn_like_module_lookup(*module, "f", &fn), 0);
  return fn;
}

/// Calls fn on x [rows, 3] of `x`'s values, the result into `out` (3 elements of 8 bytes).
int Call(cinn_like_function fn, std::vector<float>& x, int64_t rows, DLDataType out_type,
         std::vector<int64_t>& out) {
  std::vector<int64_t> xs{rows, 3}, os{3};
  DLTensor a = FloatView(x.data(), xs), o = FloatView(out.data(), os);
  o.dtype = out_type;
  DLTensor* args[] = {&a, &o};
  return cinn_like_call(fn, args, 2, nullptr);
}

TEST(EmptyAxis, AMaxOrArgmaxOverASymbolBoundToZeroIsRefusedNamingTheOp) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-4, 4);
  for (const char* op : {"reduce_max", "argmax"}) {
    SCOPED_TRACE(op);
    cinn_like_module module = nullptr;
    cinn_like_function fn = Compile(op, &module);
    ASSERT_NE(fn, nullptr);
    const bool arg = std::string(op) == "argmax";
    const DLDataType type = arg ? DLDataType{kDLInt, 64, 1} : DLDataType{kDLFloat, 32, 1};
    std::vector<float> none(1, 0.0f);
    std::vector<int64_t> out(3, 7);
    ASSERT_NE(Call(fn, none, 0, type, out), 0);
    const std::string error = cinn_like_get_last_error();
    EXPECT_THAT(error, HasSubstr("tensor x has size 0 at dim 0, which sets s0; s0 must be >= 1"));
    EXPECT_THAT(error,
                HasSubstr(std::string("op ") + op + " reduces axis 0 of x (float32[s0, 3])"));
    EXPECT_EQ(out, std::vector<int64_t>(3, 7)) << "the refused call wrote its output";
    // Four rows: the maximum of each column, or its row.
    std::vector<float> x(12);
    for (float& v : x) v = dist(rng);
    ASSERT_EQ(Call(fn, x, 4, type, out), 0) << cinn_like_get_last_error();
    const float* got = reinterpret_cast<const float*>(out.data());
    for (int c = 0; c < 3; ++c) {
      int best = 0;
      for (int r = 1; r < 4; ++r) best = x[r * 3 + c] > x[best * 3 + c] ? r : best;
      if (arg) {
        EXPECT_EQ(out[c], best) << "column " << c;
      } else {
        EXPECT_EQ(got[c], x[best * 3 + c]) << "column " << c;
      }
    }
    cinn_like_module_free(module);
  }
}

TEST(EmptyAxis, TheReferenceRefusesWhatTheEntryRefusesAlsoWhereTheResultIsEmpty) {
  // x [s0, s1], the max over s0: with s0 = 0 and s1 = 0 the result has no element, yet the entry
  // refuses s0 = 0 (it checks the symbol alone); the reference, which the self-check and the
  // fuzz targets compare with, refuses it too, and runs where s0 >= 1.
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, {Dim::Symbol("s0"), Dim::Symbol("s1")}, "x");
  b.MarkOutput(b.ReduceMax(x, {0}));
  auto graph = frontend::BuildGraph(*b.Build());
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int64_t s1 : {0, 3}) {
    hlir::HostTensor none(DType::kFloat32, {0, s1});
    auto got = hlir::RunReference(*graph, {none});
    ASSERT_FALSE(got.ok()) << "s1 = " << s1;
    // Where the result has elements, the inference on the bound shapes refuses first.
    EXPECT_THAT(std::string(got.status().message()),
                HasSubstr(s1 == 0 ? "op reduce_max: axis 0 of x (float32[s0, s1]) is empty (s0 = 0)"
                                  : "op reduce_max: axis 0 of input 0 (float32[0, 3]) is empty"));
  }
  hlir::HostTensor two(DType::kFloat32, {2, 0});
  EXPECT_TRUE(hlir::RunReference(*graph, {two}).ok());
}

TEST(EmptyAxis, ASumOverASymbolBoundToZeroIsZeros) {
  cinn_like_module module = nullptr;
  cinn_like_function fn = Compile("reduce_sum", &module);
  ASSERT_NE(fn, nullptr);
  std::vector<float> none(1, 0.0f);
  std::vector<int64_t> out(3, -1);
  ASSERT_EQ(Call(fn, none, 0, DLDataType{kDLFloat, 32, 1}, out), 0) << cinn_like_get_last_error();
  const float* got = reinterpret_cast<const float*>(out.data());
  for (int c = 0; c < 3; ++c) EXPECT_EQ(got[c], 0.0f) << "column " << c;
  cinn_like_module_free(module);
}

}  // namespace
}  // namespace cinn_like
