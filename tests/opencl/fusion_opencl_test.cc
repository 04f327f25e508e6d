/// \file Fused groups built by the graph passes and the fused graph compiler for the OpenCL
/// target, run on its device against the reference interpreter on fresh random inputs: the
/// GPU tactics (elementwise vectors, warp-, block- and register-held rows, two-stage column
/// reductions, layout changes, matmul tiles) through the target's traits, at odd, tiny and
/// symbolic shapes (a symbolic batch is 7 at run time).
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/fusion_cases.h"
#include "tests/opencl/opencl_executor.h"

namespace cinn_like::testing {
namespace {

std::vector<Shape> RowShapes(int64_t cols) {
  return {S({1, cols}), S({37, cols}), S({64, cols}), S({3, 5, 16, cols}),
          Shape{Sym("n"), Dim::Known(cols)}};
}

TEST(FusionOpenCL, SoftmaxMatchesReference) {
  for (int64_t cols : {1, 7, 33, 256, 1000, 4099}) {
    for (const Shape& s : RowShapes(cols)) {
      SCOPED_TRACE(hlir::ShapeToString(s));
      RunProgramCase(SoftmaxProgram(s), OpenCLTarget(), RunOnOpenCL);
    }
  }
}

TEST(FusionOpenCL, RmsNormWithASavedRsqrtMatchesReference) {
  // The rsqrt stored from the normalizing kernel's rows (OpenCL C has no bfloat16: float64).
  RunProgramCase(RmsNormWithSavedRsqrt(37, 1024, DType::kFloat64), OpenCLTarget(), RunOnOpenCL);
}

TEST(FusionOpenCL, LayerNormAndResidualLayerNormMatchReference) {
  for (int64_t cols : {5, 128, 768, 3000}) {
    for (const Shape& s : RowShapes(cols)) {
      SCOPED_TRACE(hlir::ShapeToString(s));
      RunProgramCase(LayerNormProgram(s, cols, false), OpenCLTarget(), RunOnOpenCL);
      RunProgramCase(LayerNormProgram(s, cols, true), OpenCLTarget(), RunOnOpenCL);
    }
  }
}

TEST(FusionOpenCL, PersistentRowsMatchReference) {
  for (const Shape& s : {S({37, 512}), S({64, 32}), S({5, 96}), S({6, 4096})}) {
    SCOPED_TRACE(hlir::ShapeToString(s));
    const int64_t cols = s.back().value;
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, s, "x");
    auto mask = b.CreateInput(DType::kFloat32, S({cols}), "mask");
    b.MarkOutput(b.Softmax(b.Add(b.Mul(x, b.Fill({cols}, 0.125, DType::kFloat32)), mask)));
    b.MarkOutput(b.Exp(b.Mul(x, b.Fill({cols}, 0.5, DType::kFloat32))));
    RunProgramCase(*b.Build(), OpenCLTarget(), RunOnOpenCL);
  }
}

TEST(FusionOpenCL, RowsNotHeldInRegistersMatchReference) {
  for (const Program& p : RowsNotHeldInRegisters()) RunProgramCase(p, OpenCLTarget(), RunOnOpenCL);
}

TEST(FusionOpenCL, RowAndColumnReductionsMatchReference) {
  for (const Shape& s : {S({4096, 64}), S({3000, 100}), S({8192, 7}), S({64, 3, 100}), S({33, 5}),
                         S({5, 8192}), S({4, 8000})}) {
    for (int axis : {0, 1}) {
      for (int kind = 0; kind < 2; ++kind) {
        SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), " axis ", axis, kind ? " max" : " sum"));
        NetBuilder b;
        auto x = b.CreateInput(DType::kFloat32, s, "x");
        b.MarkOutput(kind == 0 ? b.ReduceSum(x, {axis}) : b.ReduceMax(x, {axis}));
        RunProgramCase(*b.Build(), OpenCLTarget(), RunOnOpenCL);
      }
    }
  }
}

TEST(FusionOpenCL, IndependentNestsSharingAKernelMatchReference) {
  // Column sums whose partials and final sums pair up into one kernel each, beside a sum that
  // reads one of them (ir/transforms/merge_nests.h).
  for (int64_t rows : {1024, 4096}) {
    SCOPED_TRACE(rows);
    RunProgramCase(LayerNormWeightGradients(rows, 768), OpenCLTarget(), RunOnOpenCL);
  }
}

TEST(FusionOpenCL, RowAndColumnExtremesKeepTheirNaNs) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 512}, {16, 4096}, {2048, 48}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(ExtremesOfRareNaNs(rows, cols), OpenCLTarget(), RunOnOpenCL);
  }
}

TEST(FusionOpenCL, AStoredValueStoredByItsReadersThreadsMatchesReference) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1024, 768}, {37, 33}, {5, 1000}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(DropoutResidual(rows, cols), OpenCLTarget(), RunOnOpenCL);
  }
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1024, 3072}, {38, 33}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(ReturnedAndReshapedForItsReader(rows, cols), OpenCLTarget(), RunOnOpenCL);
  }
}

TEST(FusionOpenCL, EmbeddingGradientsAddedInPlaceMatchReference) {
  for (auto [vocab, tokens] : {std::pair<int64_t, int64_t>{1000, 256}, {50, 300}}) {
    SCOPED_TRACE(vocab);
    RunProgramCase(EmbeddingGradients(vocab, 64, tokens), OpenCLTarget(), RunOnOpenCL);
  }
}

TEST(FusionOpenCL, ElementwiseBroadcastAndLayoutChangesMatchReference) {
  for (int64_t cols : {3, 64, 1000}) {
    SCOPED_TRACE(cols);
    RunProgramCase(BiasGelu(S({37, cols}), cols), OpenCLTarget(), RunOnOpenCL);
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({9, cols, 5}), "x");
    auto y = b.CreateInput(DType::kFloat32, S({5, cols}), "y");
    b.MarkOutput(b.Add(b.Transpose(x, {0, 2, 1}), y));
    RunProgramCase(*b.Build(), OpenCLTarget(), RunOnOpenCL);
  }
  RunProgramCase(TanhChain(), OpenCLTarget(), RunOnOpenCL);
  // Repeated tanh and powers computed once; vectors over rows of odd length (64 x 1001), the
  // cross-entropy's per-row values read lane by lane; rows the vectors do not tile (3 x 5).
  RunProgramCase(GeluTanhBackward(64, 1001), OpenCLTarget(), RunOnOpenCL);
  RunProgramCase(GeluTanhBackward(3, 5), OpenCLTarget(), RunOnOpenCL);
  RunProgramCase(CrossEntropyBackward(64, 1001), OpenCLTarget(), RunOnOpenCL);
  // Narrow integers: OpenCL C has one max/min overload per type, and C promotes a sum of int8
  // values and an int8 literal to int.
  for (DType dt : {DType::kInt8, DType::kUInt8, DType::kInt16}) {
    SCOPED_TRACE(hlir::DTypeName(dt));
    NetBuilder b;
    auto x = b.CreateInput(dt, S({5, 33}), "x");
    auto y = b.CreateInput(dt, S({5, 33}), "y");
    b.MarkOutput(b.Op("maximum", {b.Add(x, y), b.Fill({33}, 3, dt)})[0]);
    b.MarkOutput(b.Op("minimum", {x, b.Fill({33}, 2, dt)})[0]);
    RunProgramCase(*b.Build(), OpenCLTarget(), RunOnOpenCL);
  }
  {  // Names that are OpenCL C words or builtins.
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({4, 8}), "local");
    auto y = b.CreateInput(DType::kFloat32, S({4, 8}), "get_local_id");
    b.MarkOutput(b.Add(x, b.Relu(y)));
    RunProgramCase(*b.Build(), OpenCLTarget(), RunOnOpenCL);
  }
  RunProgramCase(WideInt8(3, 5, 70), OpenCLTarget(), RunOnOpenCL);
}

TEST(FusionOpenCL, MatmulConvAndMlpMatchReference) {
  RunProgramCase(Mlp(9, 32, 64, 16), OpenCLTarget(), RunOnOpenCL);
  RunProgramCase(ConvBnRelu(1, 3, 20, 8), OpenCLTarget(), RunOnOpenCL);
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, Shape{Sym("n"), Dim::Known(300)}, "x");
  b.MarkOutput(b.Sqrt(b.Abs(b.ReduceSum(x, {1}))));
  RunProgramCase(*b.Build(), OpenCLTarget(), RunOnOpenCL);
}

}  // namespace
}  // namespace cinn_like::testing
