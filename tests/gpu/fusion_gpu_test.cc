/// \file GPU machine only: fused groups (softmax, layer_norm, residual add + layer_norm,
/// bias + gelu) built by the graph passes and the fused graph compiler, run on the device
/// against the reference interpreter (float64) on fresh random inputs, at shapes with odd
/// rows and columns, rows longer than a block, and a symbolic batch (n = 7 at run time).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

#include "ir/flags.h"
#include "tests/fusion_cases.h"
#include "tests/gpu_executor.h"

namespace cinn_like::testing {
namespace {

const ir::Target kGpu = ir::Target::NVGPU();

std::vector<Shape> RowShapes(int64_t cols) {
  // 64 and 6 rows: a warp per row, 8 and 2 rows per block, where the rows are short; with
  // several row dims, blocks take rows of the innermost (8 and 2 of 16 and 6).
  return {S({1, cols}),
          S({37, cols}),
          S({64, cols}),
          S({6, cols}),
          S({3, 5, 16, cols}),
          S({2, 3, 6, cols}),
          Shape{Sym("n"), Dim::Known(cols)},
          Shape{Dim::Known(2), Sym("n"), Dim::Known(cols)}};
}

TEST(FusionGpu, LayerNormStatisticsStoredFromTheRowKernelMatchReference) {
  // mean and rstd stored by the row's kernel (a warp per row, a block per row, symbolic rows).
  for (int64_t cols : {768, 4096}) {
    RunProgramCase(LayerNormWithStatistics(S({4, 64}), cols), kGpu, RunOnGpu);
  }
  RunProgramCase(LayerNormWithStatistics({Sym("n")}, 512), kGpu, RunOnGpu);
  RunProgramCase(RmsNormWithSavedRsqrt(256, 1024), kGpu, RunOnGpu, 1e-2);  // bfloat16 out
  // The residual sums stored from their norms' row kernels, each lane storing what it reads.
  RunProgramCase(PreNormResidualChain(256, 1024), kGpu, RunOnGpu, 1e-2);
  RunProgramCase(PreNormResidualChain(64, 4096), kGpu, RunOnGpu, 1e-2);  // a block per row
  RunProgramCase(PreNormResidualChain(256, 1024, /*sums_returned=*/false, /*steps=*/4), kGpu,
                 RunOnGpu, 1e-2);
  RunProgramCase(RmsNormOfASwappedSum(256, 1024), kGpu, RunOnGpu);
}

TEST(FusionGpu, RowAndColumnExtremesKeepTheirNaNs) {
  // A NaN in one thread's partial survives the warp's and the block's combine (a warp per row,
  // a block per row, column partials and their final reduction).
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 512}, {16, 4096}, {2048, 48}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(ExtremesOfRareNaNs(rows, cols), kGpu, RunOnGpu);
  }
}

TEST(FusionGpu, AStoredValueStoredByItsReadersThreadsMatchesReference) {
  // The dropout's mask stored from the dropout's kernel, each thread its elements.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1024, 768}, {37, 33}, {5, 1000}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(DropoutResidual(rows, cols), kGpu, RunOnGpu);
  }
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1024, 3072}, {38, 33}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(ReturnedAndReshapedForItsReader(rows, cols), kGpu, RunOnGpu);
  }
}

TEST(FusionGpu, EmbeddingGradientsAddedInPlaceMatchReference) {
  // The product and the zeros stored in the outputs, the lookups' rows added there; the
  // product another op reads copied first (ir/in_place_extern.h).
  for (auto [vocab, tokens] : {std::pair<int64_t, int64_t>{1000, 256}, {50, 300}}) {
    SCOPED_TRACE(vocab);
    RunProgramCase(EmbeddingGradients(vocab, 64, tokens), kGpu, RunOnGpu);
  }
}

TEST(FusionGpu, IndependentNestsSharingAKernelMatchReference) {
  // A LayerNorm backward's weight and bias column sums: partials one kernel, final sums another
  // (ir/transforms/merge_nests.h), beside a sum that reads one of them.
  for (int64_t rows : {1024, 4096}) {
    RunProgramCase(LayerNormWeightGradients(rows, 768), kGpu, RunOnGpu);
  }
}

/// Column reductions with few columns split their reduce axis (two kernels: partials, then
/// their sum); with many columns, or an axis that does not split, one kernel.
TEST(FusionGpu, ColumnReductionsMatchReference) {
  for (const Shape& s : {S({4096, 256}), S({3000, 100}), S({8192, 7}), S({64, 3, 1000}),
                         S({1000, 3000}), S({33, 5})}) {
    for (DType dt : {DType::kFloat32, DType::kFloat16}) {
      for (int kind = 0; kind < 2; ++kind) {
        SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), " ", hlir::DTypeName(dt), " ",
                                  kind == 0 ? "sum" : "max"));
        NetBuilder b;
        auto x = b.CreateInput(dt, s, "x");
        b.MarkOutput(kind == 0 ? b.ReduceSum(x, {0}) : b.ReduceMax(x, {0}));
        // A float16 sum may round to the other neighbour of the reference's (its float32
        // partials add in another order): one float16 step, 2^-10 of the value, which 1e-4
        // of the sum of |x| did not always cover (seed 3342499977018157447: -8.453 for -8.461).
        RunProgramCase(*b.Build(), kGpu, RunOnGpu, dt == DType::kFloat16 ? 1e-3 : 1e-4);
      }
    }
  }
}

/// A norm's weight gradient: sum over [batch, tokens] of a product, few columns. The longer
/// reduce axis splits into chunks (the batch alone would not), partials then their sum.
TEST(FusionGpu, ColumnReductionsOverSeveralAxesMatchReference) {
  for (const Shape& s : {S({4, 256, 1024}), S({3, 200, 96}), S({8, 6, 512})}) {
    for (DType dt : {DType::kFloat32, DType::kBFloat16}) {
      SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), " ", hlir::DTypeName(dt)));
      NetBuilder b;
      auto x = b.CreateInput(dt, s, "x");
      auto y = b.CreateInput(dt, s, "y");
      b.MarkOutput(b.ReduceSum(b.Mul(x, y), {0, 1}));
      RunProgramCase(*b.Build(), kGpu, RunOnGpu);
    }
  }
}

/// A BatchNorm's statistics and weight gradient in NCHW: sums per channel over [N, H, W] with
/// too few channels to fill the device, split into chunks (TwoStageRows: the batch axis, or
/// H where the batch is 1), partials then their sum; a row count that does fill it stays one
/// kernel.
TEST(FusionGpu, FewLongRowsSplitAcrossBlocksMatchReference) {
  for (const Shape& s : {S({8, 64, 32, 64}), S({1, 32, 256, 128}), S({6, 24, 40, 72})}) {
    for (DType dt : {DType::kFloat32, DType::kFloat16}) {
      SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), " ", hlir::DTypeName(dt)));
      NetBuilder b;
      auto x = b.CreateInput(dt, s, "x");
      auto y = b.CreateInput(dt, s, "y");
      b.MarkOutput(b.ReduceSum(x, {0, 2, 3}));
      b.MarkOutput(b.ReduceSum(b.Mul(x, y), {0, 2, 3}, /*keepdim=*/true));
      RunProgramCase(*b.Build(), kGpu, RunOnGpu);
    }
  }
}

/// Row reductions alone whose rows are a multiple of 16 bytes per thread read them as vectors,
/// unrolled, evict-first (stage_tactics.cc); other lengths and every dtype against the reference.
TEST(FusionGpu, LongRowReductionsInVectorsMatchReference) {
  for (const Shape& s :
       {S({5, 8192}), S({3, 4096}), S({2, 16384}), S({4, 8000}), S({3, 2, 4096})}) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                     DType::kInt32, DType::kInt64, DType::kInt8}) {
      for (int kind = 0; kind < 2; ++kind) {
        SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), " ", hlir::DTypeName(dt), " ",
                                  kind == 0 ? "sum" : "max"));
        NetBuilder b;
        auto x = b.CreateInput(dt, s, "x");
        const int64_t last = static_cast<int64_t>(s.size()) - 1;
        b.MarkOutput(kind == 0 ? b.ReduceSum(x, {last}) : b.ReduceMax(x, {last}));
        RunProgramCase(*b.Build(), kGpu, RunOnGpu);
      }
    }
  }
  // Long rows a row group reads in vectors (block per row, not held in registers), two reduce
  // axes, a kept dim, a sum of a sum (evict-first loads of the second only), a reduction
  // recomputed per consumer element.
  RunProgramCase(SoftmaxProgram(S({3, 65536})), kGpu, RunOnGpu);
  RunProgramCase(LayerNormProgram(S({3, 65536}), 65536, true), kGpu, RunOnGpu);
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({16, 64, 128}), "x");
  b.MarkOutput(b.ReduceSum(x, {1, 2}));
  b.MarkOutput(b.ReduceSum(x, {2}, /*keepdim=*/true));
  b.MarkOutput(b.ReduceSum(b.ReduceSum(x, {0}), {1}));
  auto kept = b.ReduceSum(b.CreateInput(DType::kFloat32, S({4, 8192}), "w"), {1}, true);
  b.MarkOutput(b.Mul(kept, b.Fill({4, 1}, 2.0)));
  auto y = b.CreateInput(DType::kFloat32, S({16, 64, 8}), "y");
  b.MarkOutput(b.Mul(y, b.ReduceMax(b.CreateInput(DType::kFloat32, S({16, 64, 1024}), "z"), {2},
                                    /*keepdim=*/true)));
  RunProgramCase(*b.Build(), kGpu, RunOnGpu);
}

TEST(FusionGpu, SoftmaxMatchesReference) {
  for (int64_t cols : {1, 7, 33, 256, 1000, 4099}) {
    for (const Shape& s : RowShapes(cols)) {
      SCOPED_TRACE(hlir::ShapeToString(s));
      RunProgramCase(SoftmaxProgram(s), kGpu, RunOnGpu);
    }
  }
}

/// Rows held in registers (row_reduction.persistent_row): softmax, a masked and scaled
/// softmax, residual add + layer_norm in float32, float16 and bfloat16, rows from a warp of
/// one element per thread to a block of 1024, and row inputs read again by other kernels
/// (directly, and through a producer inlined into both).
TEST(FusionGpu, PersistentRowsMatchReference) {
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (const Shape& s : {S({37, 512}), S({64, 512}), S({64, 32}), S({5, 96}), S({3, 5, 16, 128}),
                           S({6, 4096}), S({3, 8192}), Shape{Sym("n"), Dim::Known(256)}}) {
      SCOPED_TRACE(absl::StrCat(hlir::ShapeToString(s), " ", hlir::DTypeName(dt)));
      const int64_t cols = s.back().value;
      // 16-bit outputs: the float32 sums may round an output to the neighbouring value.
      const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-2;
      {
        NetBuilder b;
        b.MarkOutput(b.Softmax(b.CreateInput(dt, s, "x")));
        RunProgramCase(*b.Build(), kGpu, RunOnGpu, tol);
      }
      {
        NetBuilder b;
        auto x = b.CreateInput(dt, s, "x");
        auto mask = b.CreateInput(dt, S({cols}), "mask");
        b.MarkOutput(b.Softmax(b.Add(b.Mul(x, b.Fill({cols}, 0.125, dt)), mask)));
        RunProgramCase(*b.Build(), kGpu, RunOnGpu, tol);
      }
      {
        NetBuilder b;
        auto x = b.CreateInput(dt, s, "x");
        auto r = b.CreateInput(dt, s, "r");
        auto gamma = b.CreateInput(dt, S({cols}), "gamma");
        auto beta = b.CreateInput(dt, S({cols}), "beta");
        b.MarkOutput(b.LayerNorm(b.Add(x, r), gamma, beta));
        RunProgramCase(*b.Build(), kGpu, RunOnGpu, tol);
      }
      {
        NetBuilder b;
        auto x = b.CreateInput(dt, s, "x");
        b.MarkOutput(b.Softmax(x));
        b.MarkOutput(b.Exp(b.Mul(x, b.Fill({cols}, 0.5, dt))));
        RunProgramCase(*b.Build(), kGpu, RunOnGpu, tol);
      }
      {
        NetBuilder b;
        auto x = b.CreateInput(dt, s, "x");
        auto ex = b.Exp(x);
        b.MarkOutput(b.Softmax(ex));
        b.MarkOutput(b.Sqrt(ex));
        b.MarkOutput(b.Relu(x));
        RunProgramCase(*b.Build(), kGpu, RunOnGpu, tol);
      }
    }
  }
}

TEST(FusionGpu, RowsNotHeldInRegistersMatchReference) {
  for (const Program& p : RowsNotHeldInRegisters()) RunProgramCase(p, kGpu, RunOnGpu);
}

/// A global average pool (resnet's head): a mean over [h, w] kept as size-1 dims, read by
/// an elementwise consumer whose own columns are those size-1 dims (a warp per row whose
/// column loop, bound to the lanes, indexes nothing).
TEST(FusionGpu, KeptDimRowReductionsMatchReference) {
  for (const Shape& s : {S({4, 64, 7, 7}), S({16, 512, 7, 7}), S({2, 3, 33, 33})}) {
    SCOPED_TRACE(hlir::ShapeToString(s));
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, s, "x");
    auto mean = b.ReduceMean(b.Relu(x), {2, 3}, /*keepdim=*/true);
    b.MarkOutput(b.Mul(mean, b.Fill({s[1].value, 1, 1}, 2.0)));
    RunProgramCase(*b.Build(), kGpu, RunOnGpu);
  }
}

TEST(FusionGpu, VectorSoftmaxAndLayerNormMatchReference) {
  for (int64_t n : {1, 5, 300, 5000}) {
    SCOPED_TRACE("n " + std::to_string(n));
    RunProgramCase(SoftmaxProgram(S({n})), kGpu, RunOnGpu);
    RunProgramCase(LayerNormProgram(S({n}), n, /*residual=*/false), kGpu, RunOnGpu);
  }
}

TEST(FusionGpu, ExternsOfConstantAndTransposedInputsMatchReference) {
  RunProgramCase(ExternsOfConstantAndTransposedInputs(), kGpu, RunOnGpu);
}

TEST(FusionGpu, RepeatedMathAndOddRowsOfVectorsMatchReference) {
  // tanh(u) read three times and pow(x, 3) in u, computed once each; vectors along the fused
  // index over rows of odd length (64 x 1001), vectors over whole rows, and rows the vectors do
  // not tile (37 x 5: scalar). The cross-entropy's per-row values are read lane by lane.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 1001}, {64, 3072}, {37, 5}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(GeluTanhBackward(rows, cols), kGpu, RunOnGpu);
  }
  RunProgramCase(CrossEntropyBackward(64, 1001), kGpu, RunOnGpu);
}

TEST(FusionGpu, ValuesCopiedIntoEveryGroupThatReadsThemMatchReference) {
  // A cross-entropy backward's one-hot computed in its row sum's kernel and in the gradient's
  // (hlir/pass/recompute_shared.h), vocabularies of one and several vectors per thread.
  for (int64_t classes : {1000, 50257}) {
    SCOPED_TRACE(classes);
    RunProgramCase(CrossEntropyBackward(64, classes), kGpu, RunOnGpu);
  }
  // A language model's loss forward: x - max computed in the row sum's kernel and again at each
  // row's target in the loss's (FusionKernels.ACrossEntropysShiftedLogitsAreNotStored).
  for (int64_t classes : {1000, 50257}) {
    SCOPED_TRACE(classes);
    RunProgramCase(CrossEntropyForward(129, classes), kGpu, RunOnGpu);
  }
}

TEST(FusionGpu, LayerNormAndResidualLayerNormMatchReference) {
  for (int64_t cols : {1, 5, 64, 513, 2048}) {
    for (const Shape& s : RowShapes(cols)) {
      SCOPED_TRACE(hlir::ShapeToString(s));
      RunProgramCase(LayerNormProgram(s, cols, false), kGpu, RunOnGpu);
      RunProgramCase(LayerNormProgram(s, cols, true), kGpu, RunOnGpu);
    }
  }
}

TEST(FusionGpu, BiasGeluMatchesReference) {
  for (int64_t cols : {1, 7, 96, 1025}) {
    for (const Shape& s : RowShapes(cols)) {
      SCOPED_TRACE(hlir::ShapeToString(s));
      RunProgramCase(BiasGelu(s, cols), kGpu, RunOnGpu);
    }
  }
}

TEST(FusionGpu, ReduceThenElementwiseAndMlpMatchReference) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, Shape{Sym("n"), Dim::Known(300)}, "x");
  b.MarkOutput(b.Sqrt(b.Abs(b.ReduceSum(x, {1}))));
  RunProgramCase(*b.Build(), kGpu, RunOnGpu);
  RunProgramCase(Mlp(9, 32, 64, 16), kGpu, RunOnGpu);
}

/// Float16 convolutions run channels last through cuDNN between fused transposes
/// (hlir/pass/conv_layout.h): conv + batch_norm + relu, a strided grouped one with a bias, and
/// one whose input is a transpose from channels last (it cancels). Tolerance: an ulp of float16
/// (cuDNN and the reference may round the float32 sum to neighbouring halves).
TEST(FusionGpu, Float16ConvolutionsChannelsLastMatchReference) {
  ASSERT_TRUE(FLAGS_cinn_like_extern_libs);
  using I64s = std::vector<int64_t>;
  const DType h = DType::kFloat16;
  // W = 16: the epilogue back to NCHW takes the layout-change order (vectors along W).
  for (const auto& xs : {S({4, 16, 12, 10}), S({3, 24, 5, 16})}) {
    NetBuilder b;
    auto x = b.CreateInput(h, xs, "x");
    auto w = b.CreateInput(h, S({32, xs[1].value, 3, 3}), "w");
    frontend::Var p[4];
    for (int i = 0; i < 4; ++i)
      p[i] = b.CreateInput(h, S({32}), i == 3 ? "var" : "p" + std::to_string(i));
    auto conv = b.Op("conv2d", {x, w}, {{"paddings", I64s{1, 1}}})[0];
    b.MarkOutput(b.Relu(b.BatchNorm(conv, p[0], p[1], p[2], p[3])));
    RunProgramCase(*b.Build(), kGpu, RunOnGpu, 2e-3);
  }
  {
    NetBuilder b;
    auto x = b.CreateInput(h, S({2, 8, 15, 13}), "x");
    auto w = b.CreateInput(h, S({16, 4, 3, 3}), "w");
    auto bias = b.CreateInput(h, S({16}), "bias");
    auto x_nhwc = b.CreateInput(h, S({3, 9, 9, 8}), "x_nhwc");
    hlir::AttributeMap attrs{
        {"paddings", I64s{1, 1}}, {"strides", I64s{2, 2}}, {"groups", int64_t{2}}};
    b.MarkOutput(b.Op("conv2d", {x, w, bias}, attrs)[0]);
    b.MarkOutput(b.Op("conv2d", {b.Transpose(x_nhwc, {0, 3, 1, 2}), w}, attrs)[0]);
    RunProgramCase(*b.Build(), kGpu, RunOnGpu, 2e-3);
  }
}

/// Float32 depthwise convolutions between channels-last LayerNorms (ConvNeXt's blocks) run
/// channels last (hlir/pass/conv_layout.h) and match the reference.
TEST(FusionGpu, Float32ConvNextBlocksChannelsLastMatchReference) {
  ASSERT_TRUE(FLAGS_cinn_like_extern_libs);
  RunProgramCase(ConvNextBlocks(32, 14, 11), kGpu, RunOnGpu, 1e-4);
}

/// cuDNN and cuBLAS declined (the flag cinn_like_decline_libraries, the fallback a library
/// failure takes): the generated kernels run and match the reference.
TEST(FusionGpu, LayoutChangesMatchReference) {
  // Transposes that move the innermost dim, alone and inside elementwise groups, at sizes the
  // layout-change order takes (innermost a multiple of the vector lanes) and odd ones.
  for (DType t : {DType::kFloat16, DType::kFloat32}) {
    for (const auto& s : {S({2, 16, 24, 8}), S({3, 7, 5, 16}), S({2, 5, 7, 9})}) {
      SCOPED_TRACE(absl::StrCat(hlir::DTypeName(t), " ", hlir::ShapeToString(s)));
      NetBuilder b;
      auto x = b.CreateInput(t, s, "x");
      auto bias = b.CreateInput(t, S({s[3].value, 1, 1}), "bias");
      b.MarkOutput(b.Relu(b.Add(b.Transpose(x, {0, 3, 1, 2}), bias)));
      b.MarkOutput(b.Transpose(x, {0, 2, 3, 1}));
      b.MarkOutput(b.Transpose(x, {3, 1, 2, 0}));
      RunProgramCase(*b.Build(), kGpu, RunOnGpu);
    }
  }
}

TEST(FusionGpu, DeclinedLibrariesFallBackToGeneratedKernels) {
  const std::string saved = FLAGS_cinn_like_decline_libraries;
  FLAGS_cinn_like_decline_libraries = "cuDNN,cuBLAS";
  for (DType t : {DType::kFloat32, DType::kFloat16}) {
    NetBuilder b;
    auto x = b.CreateInput(t, S({33, 40}), "x");
    auto w = b.CreateInput(t, S({40, 24}), "w");
    b.MarkOutput(b.Matmul(x, w));
    auto img = b.CreateInput(t, S({2, 8, 9, 7}), "img");
    auto k = b.CreateInput(t, S({4, 8, 3, 3}), "k");
    b.MarkOutput(b.Relu(b.Op("conv2d", {img, k}, {{"paddings", std::vector<int64_t>{1, 1}}})[0]));
    RunProgramCase(*b.Build(), kGpu, RunOnGpu, t == DType::kFloat16 ? 2e-3 : 1e-4);
  }
  FLAGS_cinn_like_decline_libraries = saved;
}

/// Matmuls with a bias and a relu or tanh-gelu (hlir/pass/matmul_epilogue.h): one cuBLASLt
/// call each, 2-D, batched with the weight broadcast and read transposed, bias only, relu only;
/// then with cuBLASLt declined (cuBLAS and a generated epilogue kernel). The tactics dump says
/// which ran.
TEST(FusionGpu, MatmulEpiloguesThroughCublasLtMatchReference) {
  const std::string saved_dir = FLAGS_cinn_like_dump_dir;
  const std::string saved_decline = FLAGS_cinn_like_decline_libraries;
  const std::string dir = ::testing::TempDir() + "/matmul_epilogue_gpu";
  FLAGS_cinn_like_dump_dir = dir;
  for (const char* decline : {"", "cuBLASLt"}) {
    FLAGS_cinn_like_decline_libraries = decline;
    for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(t), " declined: '", decline, "'"));
      NetBuilder b;
      auto x = b.CreateInput(t, S({33, 40}), "x");
      auto xb = b.CreateInput(t, S({3, 17, 40}), "xb");
      auto w = b.CreateInput(t, S({40, 24}), "w");
      auto wt = b.CreateInput(t, S({24, 40}), "wt");
      auto bias = b.CreateInput(t, S({24}), "bias");
      b.MarkOutput(b.Relu(b.Add(b.Matmul(x, w), bias)));
      b.MarkOutput(b.Gelu(b.Add(b.Matmul(xb, wt, false, true), bias), "tanh"));
      b.MarkOutput(b.Add(bias, b.Matmul(x, w)));
      b.MarkOutput(b.Relu(b.Matmul(xb, w)));
      std::filesystem::remove_all(dir);
      RunProgramCase(*b.Build(), kGpu, RunOnGpu,
                     t == DType::kFloat32 ? 1e-4 : (t == DType::kFloat16 ? 2e-3 : 1e-2));
      std::stringstream tactics;
      tactics << std::ifstream(dir + "/fused.tactics.txt").rdbuf();
      const std::string lt = "library.call (cuBLASLt cinn_like_cublaslt_matmul";
      EXPECT_EQ(Occurrences(tactics.str(), lt), *decline ? 0u : 4u) << tactics.str();
    }
  }
  FLAGS_cinn_like_decline_libraries = saved_decline;
  FLAGS_cinn_like_dump_dir = saved_dir;
}

TEST(FusionGpu, GeneratedMatmulsTiledAndSimpleMatchReference) {
  const bool saved = FLAGS_cinn_like_extern_libs;
  FLAGS_cinn_like_extern_libs = false;  // generated kernels: tiled at 128x64x192, simple at 100
  for (int64_t m : {128, 100}) {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({m, 64}), "x");
    auto w = b.CreateInput(DType::kFloat32, S({64, 192}), "w");
    b.MarkOutput(b.Matmul(x, w));
    RunProgramCase(*b.Build(), kGpu, RunOnGpu);
  }
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({64, 32}), "x");
  auto w = b.CreateInput(DType::kFloat32, S({128, 32}), "w");
  b.MarkOutput(b.Linear(x, w));
  RunProgramCase(*b.Build(), kGpu, RunOnGpu);
  FLAGS_cinn_like_extern_libs = saved;
}

}  // namespace
}  // namespace cinn_like::testing
