/// \file Fusion groups lowered to kernels: kernels counted in the NVGPU source (`__global__`,
/// sm_90 forced, no GPU needed, with fusion on and off), the fused schedules promised in the
/// source (block reduces in shared memory for a row), every graph run on x86 against the
/// reference interpreter, the seed network on x86, constants, and a Program JSON round trip
/// through a file compiling to the same CUDA source and x86 LLVM IR.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/compiler.h"
#include "cinn_like/compile.h"
#include "frontend/program_json.h"
#include "ir/flags.h"
#include "ir/printer.h"
#include "tests/fusion_cases.h"
#include "tests/x86_executor.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;

/// Sets a bool flag for the scope.
class FlagScope {
 public:
  FlagScope(bool* flag, bool value) : flag_(flag), saved_(*flag) { *flag = value; }
  ~FlagScope() { *flag_ = saved_; }

 private:
  bool* flag_;
  bool saved_;
};

int CountKernels(const std::string& source) {
  int n = 0;
  for (size_t p = source.find("__global__"); p != std::string::npos;
       p = source.find("__global__", p + 1)) {
    ++n;
  }
  return n;
}

std::string NVGPUSource(const Program& program) {
  const ir::Target target = ir::Target::NVGPU(90);
  auto module = CompileProgramModule(program, target, "fused");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  auto compiler = backends::Compiler::Create(target);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  auto src = (*compiler)->GetSourceCode(*module);
  EXPECT_TRUE(src.ok()) << src.status();
  return src.ok() ? *src : "";
}

int Kernels(const Program& program) { return CountKernels(NVGPUSource(program)); }

/// The kernel launches of the host entry `program` compiles to for NVGPU (a kernel equal to an
/// earlier one is launched again, not defined again).
size_t Launches(const Program& program) {
  auto module = CompileProgramModule(program, ir::Target::NVGPU(90), "fused");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? Occurrences(ir::ToString(*module), "launch_kernel(\"") : 0;
}

Shape RowsCols(Dim rows, int64_t cols) { return Shape{rows, Dim::Known(cols)}; }

struct Pattern {
  std::string name;
  Program program;
  int fused_kernels;    // with fusion on
  int unfused_kernels;  // with FLAGS_cinn_like_fusion off: one per op (op-internal reductions
                        // stay in their op's kernel)
};

std::vector<Pattern> Patterns() {
  return {
      {"bias_gelu", BiasGelu(S({37, 96}), 96), 1, 2},
      {"softmax", SoftmaxProgram(S({37, 100})), 1, 1},
      {"layer_norm", LayerNormProgram(S({37, 100}), 100, false), 1, 1},
      {"add_layer_norm", LayerNormProgram(S({37, 100}), 100, true), 1, 2},
  };
}

TEST(FusionKernels, EachPatternIsOneKernelAndOneKernelPerOpWithoutFusion) {
  for (const Pattern& p : Patterns()) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(Kernels(p.program), p.fused_kernels);
    FlagScope off(&FLAGS_cinn_like_fusion, false);
    EXPECT_EQ(Kernels(p.program), p.unfused_kernels);
  }
}

TEST(FusionKernels, EachPatternMatchesTheReferenceOnX86FusedAndUnfused) {
  for (const Pattern& p : Patterns()) {
    SCOPED_TRACE(p.name);
    RunProgramCase(p.program, ir::Target::X86(), RunOnX86);
    FlagScope off(&FLAGS_cinn_like_fusion, false);
    RunProgramCase(p.program, ir::Target::X86(), RunOnX86);
  }
}

TEST(FusionKernels, SymbolicRowsAndOddSizesMatchTheReferenceOnX86) {
  RunProgramCase(SoftmaxProgram(RowsCols(Sym("n"), 33)), ir::Target::X86(), RunOnX86);
  RunProgramCase(LayerNormProgram(RowsCols(Sym("n"), 513), 513, true), ir::Target::X86(), RunOnX86);
  RunProgramCase(BiasGelu(RowsCols(Sym("n"), 7), 7), ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, RowAndColumnExtremesKeepTheirNaNsOnX86) {
  // Vector partials combined by llvm.vector.reduce.fmaximum (a NaN in one lane), row by row
  // and column by column.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 512}, {16, 4096}, {2048, 48}}) {
    SCOPED_TRACE(cols);
    RunProgramCase(ExtremesOfRareNaNs(rows, cols), ir::Target::X86(), RunOnX86);
  }
}

TEST(FusionKernels, TheGpuTestGridMatchesTheReferenceOnX86) {
  // The shapes of tests/gpu/fusion_gpu_test.cc, so that a GPU failure is the GPU's.
  for (int64_t cols : {1, 7, 33, 1000}) {
    for (const Shape& s : {S({1, cols}), S({37, cols}), RowsCols(Sym("n"), cols),
                           Shape{Dim::Known(2), Sym("n"), Dim::Known(cols)}}) {
      SCOPED_TRACE(hlir::ShapeToString(s));
      RunProgramCase(SoftmaxProgram(s), ir::Target::X86(), RunOnX86);
      RunProgramCase(LayerNormProgram(s, cols, true), ir::Target::X86(), RunOnX86);
      RunProgramCase(BiasGelu(s, cols), ir::Target::X86(), RunOnX86);
    }
  }
}

TEST(FusionKernels, ReductionsOverEveryAxisMatchTheReferenceOnX86) {
  // A softmax or layer norm of a vector reduces to a rank-0 intermediate, read without an
  // index (this aborted the process in ir::Load::Make). tests/gpu/fusion_gpu_test.cc runs the
  // same programs on the GPU.
  for (int64_t n : {1, 5, 300}) {
    SCOPED_TRACE("n " + std::to_string(n));
    RunProgramCase(SoftmaxProgram(S({n})), ir::Target::X86(), RunOnX86);
    RunProgramCase(LayerNormProgram(S({n}), n, /*residual=*/false), ir::Target::X86(), RunOnX86);
  }
}

TEST(FusionKernels, ExternsOfConstantAndTransposedInputsMatchTheReferenceOnX86) {
  RunProgramCase(ExternsOfConstantAndTransposedInputs(), ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, AMatmulReadsAReshapeFromItsSourcesBuffer) {
  // The add's kernel (which may also sum the columns) and at most one more for the column
  // sum: no copy of the sum into a buffer of the reshape's shape.
  Program p = MatmulOfAReshape();
  const std::string source = NVGPUSource(p);
  EXPECT_LE(CountKernels(source), 2) << source;
  for (const ir::Target& target : {ir::Target::NVGPU(90), ir::Target::X86()}) {
    auto module = CompileProgramModule(p, target, "fused");
    ASSERT_TRUE(module.ok()) << module.status();
    const std::string text = ir::ToString(*module);  // host code with the library call too
    // Where oneDNN cannot be loaded the x86 matmul is generated code, which reads the reshape
    // inlined (a CPU stores a value read by two stages once): only a library call reads the
    // source's buffer.
    if (target.is_nvgpu() || text.find("cinn_like_dnnl_matmul") != std::string::npos) {
      EXPECT_EQ(Occurrences(text, "reshape"), 0u) << text;
    }
  }
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, RankZeroValuesReadByShapeOpsMatchTheReferenceOnX86) {
  // A reduction over every axis is a rank-0 value held as one element of shape [1]; ops that
  // read it without an index (expand_dims, reshape, broadcast_to) aborted the process in
  // ir::Tensor's rank check.
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({4, 5}), "x");
  auto all = b.Op("reduce_sum", {x}, {{"axes", std::vector<int64_t>{0, 1}}})[0];
  b.MarkOutput(b.ExpandDims(all, {0}));
  b.MarkOutput(b.Add(x, b.Reshape(all, {1, 1})));
  b.MarkOutput(b.BroadcastTo(all, {3, 2}));
  RunProgramCase(*b.Build(), ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, ConcatOfOneInputIsACopyOnX86) {
  // One input along a symbolic axis (a SIGSEGV: the concat's offsets read the static extent).
  for (int64_t axis : {0, 1}) {
    NetBuilder b;
    b.MarkOutput(
        b.Concat({b.CreateInput(DType::kFloat32, Shape{Sym("n"), Dim::Known(3)}, "x")}, axis));
    RunProgramCase(*b.Build(), ir::Target::X86(), RunOnX86);
  }
}

TEST(FusionKernels, ConcatOfManyInputsMatchesTheReferenceOnX86) {
  // More inputs than one concat stage reads (a tree of concats), of unequal extents, along
  // each axis, with an elementwise consumer fused after it.
  for (int64_t axis : {0, 1}) {
    for (int count : {33, 100}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + ", " + std::to_string(count) + " inputs");
      NetBuilder b;
      std::vector<frontend::Var> xs;
      for (int i = 0; i < count; ++i) {
        int64_t extent = 1 + i % 3;
        xs.push_back(b.CreateInput(DType::kFloat32, axis == 0 ? S({extent, 5}) : S({3, extent}),
                                   "x" + std::to_string(i)));
      }
      b.MarkOutput(b.Relu(b.Concat(xs, axis)));
      RunProgramCase(*b.Build(), ir::Target::X86(), RunOnX86);
    }
  }
}

TEST(FusionKernels, SoftmaxIsOneBlockPerRowWithBlockReducesInSharedMemory) {
  std::string src = NVGPUSource(SoftmaxProgram(RowsCols(Sym("n"), 1000)));
  EXPECT_EQ(CountKernels(src), 1) << src;
  EXPECT_THAT(src, HasSubstr("cinn_like_block_reduce_max"));
  EXPECT_THAT(src, HasSubstr("cinn_like_block_reduce_sum"));
  EXPECT_THAT(src, HasSubstr("__shared__"));
  EXPECT_THAT(src, HasSubstr("blockIdx.x"));
}

TEST(FusionKernels, ReduceThenElementwiseIsOneKernel) {
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({19, 300}), "x");
  b.MarkOutput(b.Sqrt(b.Abs(b.ReduceSum(x, {1}))));
  Program p = *b.Build();
  EXPECT_EQ(Kernels(p), 1);
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, AValueTwoGroupsReadIsComputedInEachInsteadOfStored) {
  // The scaled one-hot (`mul_5`, NetBuilder's name) is read by the row sum's group and by the
  // gradient's: stored by a kernel of its own and read back by both (three kernels, its buffer
  // a parameter of each), or computed in both (two kernels, no buffer of it: nothing of [rows,
  // classes] stored but the gradient). The row sum, which loads nothing along its row, is a
  // row reduction (IsColumnReduction), not a column one. x86 keeps such values stored
  // (recompute_shared.h is for GPUs); results on x86 against the reference (fresh random
  // inputs, RunProgramCase; a target out of range has a row of zeros), the rewritten graph's by
  // GraphPasses.ValuesSeveralGroupsReadAreCopiedIntoEach, on the GPU by FusionGpu.
  Program p = CrossEntropyBackward(64, 1000);
  EXPECT_EQ(Occurrences(NVGPUSource(p), "mul_5"), 0u) << NVGPUSource(p);
  EXPECT_EQ(Kernels(p), 2);
  EXPECT_THAT(NVGPUSource(p), HasSubstr("cinn_like_block_reduce_sum"));
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
  FlagScope off(&FLAGS_cinn_like_fusion_recompute, false);
  EXPECT_GE(Occurrences(NVGPUSource(p), "mul_5"), 3u) << NVGPUSource(p);
  EXPECT_EQ(Kernels(p), 3);
}

TEST(FusionKernels, ACrossEntropysShiftedLogitsAreNotStored) {
  // x - max, read by the sum of exponentials and by the loss's gather, is computed again in
  // each (recompute_shared.h); the row max, read then by both groups, joins the sum's group
  // (fusion.cc, StoredValueGroup). Before, the copies of x - max it read would have been
  // stored, so x - max was stored whole by a kernel of its own between the max's and the sum's
  // (GPT-2's training step: [1024, 50257] floats written and read back, 0.1 ms of the H200's
  // 0.22 for the loss forward). The max, the sum, the log and the loss: 4 kernels.
  Program p = CrossEntropyForward(129, 1000);
  const std::string source = NVGPUSource(p);
  EXPECT_EQ(Occurrences(source, "sub_"), 0u) << source;
  EXPECT_EQ(Kernels(p), 4) << source;
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, ALayerNormsStatisticsAreStoredFromItsRowKernel) {
  // mean and rstd are outputs (a training graph saves them for the backward): each row's
  // warp (768 elements) or block (4096) stores them from the kernel that normalizes the row,
  // where each was a kernel of its own (five kernels: the mean's sum and division, the
  // variance's sum, rsqrt, y). Results on x86 against the reference; on the GPU by FusionGpu.
  for (int64_t cols : {768, 4096}) {
    SCOPED_TRACE(cols);
    Program p = LayerNormWithStatistics(S({4, 64}), cols);
    EXPECT_EQ(Kernels(p), 1) << NVGPUSource(p);
    RunProgramCase(p, ir::Target::X86(), RunOnX86);
  }
}

TEST(FusionKernels, AnRmsNormsSavedRsqrtIsStoredFromTheNormalizingKernel) {
  // The rsqrt a training forward saves was its group's single row consumer: a warp per row
  // stored it, and the normalization read it back in a kernel of its own (Llama's 4 layers:
  // 9 launches a step). Now the normalization is the consumer and the rsqrt its row output.
  // The residual sum before it, returned too, is stored from the same kernel, each warp lane
  // storing the elements of its row it reads back (8 launches fewer a step).
  Program p = RmsNormWithSavedRsqrt(256, 1024);
  EXPECT_EQ(Kernels(p), 1) << NVGPUSource(p);
  RunProgramCase(p, ir::Target::X86(), RunOnX86, 1e-2);  // bfloat16 output
}

TEST(FusionKernels, APreNormResidualStreamIsStoredFromItsNormsKernel) {
  // Each residual sum of a pre-norm chain, read by its norm and by the next sum (returned or not),
  // joins its norm's group and is stored from the norm's row kernel: two kernels, where each
  // sum had one of its own (hlir/pass/fusion.cc, StoredValueGroup). Results on x86 against the
  // reference; on the GPU by FusionGpu.
  Program p = PreNormResidualChain(256, 1024);
  EXPECT_EQ(Kernels(p), 2) << NVGPUSource(p);
  RunProgramCase(p, ir::Target::X86(), RunOnX86, 1e-2);  // bfloat16 outputs
  // In inference the sums are not returned: the first is cheap enough to compute again in
  // the second's group, and the two norms' kernels merge.
  Program inference = PreNormResidualChain(256, 1024, /*sums_returned=*/false);
  EXPECT_EQ(Kernels(inference), 1) << NVGPUSource(inference);
  RunProgramCase(inference, ir::Target::X86(), RunOnX86, 1e-2);
  // Further down the stream a sum reads the one before it, which is not computed again: each
  // is stored from its norm's kernel, where it had a kernel of its own (ViT's and BERT's
  // inference: a residual add before each LayerNorm).
  Program deep = PreNormResidualChain(256, 1024, /*sums_returned=*/false, /*steps=*/4);
  EXPECT_EQ(Kernels(deep), 3) << NVGPUSource(deep);
  RunProgramCase(deep, ir::Target::X86(), RunOnX86, 1e-2);
  // Read at other columns than the thread that would store them holds: a kernel of its own.
  Program swapped = RmsNormOfASwappedSum(256, 1024);
  EXPECT_EQ(Kernels(swapped), 2) << NVGPUSource(swapped);
  RunProgramCase(swapped, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, ALanguageModelsLogitsAreTheMatmulsResultAndItsLastNormOneKernel) {
  // A language model's head: the last LayerNorm's y, returned, is viewed as [rows, 768] and
  // multiplied by the vocabulary's weights; the product (the logits) is returned too. One
  // generated kernel on GPUs, the LayerNorm's row kernel: the matmul's library call reads y's
  // buffer and writes the returned logits itself (folding the view into the matmul had made
  // them a copy of its [4, 64, V] product, 206 MB in GPT-2's training step, and keeping the
  // view in the LayerNorm's group had split it into four kernels).
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({4, 64, 768}), "x");
  auto gamma = b.CreateInput(DType::kFloat32, S({768}), "gamma");
  auto beta = b.CreateInput(DType::kFloat32, S({768}), "beta");
  auto w = b.CreateInput(DType::kFloat32, S({500, 768}), "w");
  auto y = b.LayerNorm(x, gamma, beta);
  b.MarkOutput(y);
  b.MarkOutput(b.Matmul(b.Reshape(y, {256, 768}), w, /*transpose_x=*/false,
                        /*transpose_y=*/true));
  Program p = *b.Build();
  EXPECT_EQ(Kernels(p), 1) << NVGPUSource(p);
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, IndependentColumnSumsShareTheirKernels) {
  // A LayerNorm backward's dgamma and dbeta (two-stage column sums over 1024 rows of 768): their
  // partials are one kernel and their final sums another, where each was a kernel of its own;
  // the sum that reads dbeta keeps its own two. Results on x86 here, on OpenCL and GPUs by
  // FusionOpenCL and FusionGpu.
  Program p = LayerNormWeightGradients(1024, 768);
  EXPECT_EQ(Launches(p), 4u) << NVGPUSource(p);
  {
    FlagScope unmerged(&FLAGS_cinn_like_merge_kernels, false);
    EXPECT_EQ(Launches(p), 6u) << NVGPUSource(p);
  }
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, ARowGroupsOtherStoredReadersKeepTheirKernels) {
  // Groups the row outputs do not take keep what they compiled to before them: a stored mean
  // that another stored value reads beside y (the mean's division is the reduction's one
  // consumer: its kernel, then y's), and a mean over short rows saved beside x - mean (two
  // kernels: the mean's, then the difference's).
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({256, 512}), "x");
    auto m = b.ReduceMean(x, {1}, /*keepdim=*/true);
    auto z = b.Mul(m, b.Fill({1}, 2.0));
    b.MarkOutput(b.Mul(b.Sub(x, m), z));
    b.MarkOutput(z);
    b.MarkOutput(m);
    Program p = *b.Build();
    EXPECT_LE(Kernels(p), 3) << NVGPUSource(p);
    RunProgramCase(p, ir::Target::X86(), RunOnX86);
  }
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({4096, 16}), "x");
    auto m = b.ReduceMean(x, {1}, /*keepdim=*/true);
    b.MarkOutput(b.Sub(x, m));
    b.MarkOutput(m);
    Program p = *b.Build();
    EXPECT_EQ(Kernels(p), 2) << NVGPUSource(p);
    RunProgramCase(p, ir::Target::X86(), RunOnX86);
  }
}

TEST(FusionKernels, ConvBatchNormReluIsTheConvAndAtMostOneMore) {
  // With extern libraries off the conv is a generated kernel: conv + at most 1 = at most 2
  // generated kernels (the conv's accumulator is computed per thread in its group's kernel).
  FlagScope externs(&FLAGS_cinn_like_extern_libs, false);
  Program p = ConvBnRelu(1, 3, 12, 4);
  int k = Kernels(p);
  EXPECT_GE(k, 1);
  EXPECT_LE(k, 2);
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, MlpIsTwoMatmulsAndAtMostTwoMoreKernels) {
  Program p = Mlp(9, 32, 64, 16);
  const hlir::OpDef* linear = *hlir::OpRegistry::Global().Find("linear");
  {
    // Generated matmuls: linear1 (+bias), gelu, linear2 (+bias): 3 kernels (gelu cannot fuse
    // into linear2's input; epilogue fusion into externs is off).
    FlagScope externs(&FLAGS_cinn_like_extern_libs, false);
    EXPECT_EQ(Kernels(p), 3);
  }
  if (linear->extern_compute) {
    // Two extern calls on the host; the generated kernels are the epilogues (at most 2).
    FlagScope externs(&FLAGS_cinn_like_extern_libs, true);
    EXPECT_LE(Kernels(p), 2);
  }
  RunProgramCase(p, ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, SeedNetworkMatchesTheReferenceOnX86) {
  RunProgramCase(ConvBnRelu(1, 3, 224, 16), ir::Target::X86(), RunOnX86);
}

TEST(FusionKernels, SmallConstantsAreInlinedLargeOnesAreUnimplemented) {
  for (int64_t n : {int64_t{5}, int64_t{65}}) {
    hlir::Graph g;
    int x = *g.AddInput("x", hlir::TensorDesc{DType::kFloat32, S({3, n})});
    std::vector<double> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(0.25 * static_cast<double>(i) - 1);
    auto c = g.AddNode(
        "constant", {},
        {{"values", values}, {"shape", std::vector<int64_t>{n}}, {"dtype", std::string("float32")}},
        {"c"});
    ASSERT_TRUE(c.ok()) << c.status();
    auto y = g.AddNode("mul", {x, (*c)[0]}, {}, {"y"});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_TRUE(g.MarkOutput((*y)[0]).ok());
    auto fused = hlir::RunGraphPasses(g, hlir::PassOptions{});
    ASSERT_TRUE(fused.ok()) << fused.status();
    auto module = hlir::CompileFusedGraph(*fused, ir::Target::X86(), "with_constant");
    if (n > 64) {
      ASSERT_FALSE(module.ok());
      EXPECT_THAT(module.status().message(),
                  HasSubstr("graph compiler: op constant (c): has 65 elements"));
      continue;
    }
    ASSERT_TRUE(module.ok()) << module.status();
    TypedTensor in(ir::Float(32), {3, n}), out(ir::Float(32), {3, n});
    for (int64_t i = 0; i < 3 * n; ++i) in.Set(i, 1.5 + static_cast<double>(i));
    std::vector<TypedTensor*> args{&in, &out};
    RunOnX86(*module, args);
    for (int64_t i = 0; i < 3 * n; ++i) {
      EXPECT_FLOAT_EQ(out.Get(i), (1.5 + static_cast<double>(i)) * values[i % n]) << i;
    }
  }
}

TEST(FusionKernels, ProgramJsonDumpedByOneCompileCompilesToTheSameSourceWhenLoaded) {
  Program p = LayerNormProgram(RowsCols(Sym("n"), 64), 64, true);
  std::string dir = ::testing::TempDir() + "/cinn_like_program_dump";
  std::filesystem::remove_all(dir);
  std::unique_ptr<CompiledProgram> first;
  {
    gflags::FlagSaver saver;
    FLAGS_cinn_like_dump_dir = dir;
    auto a = CompileProgram(p, ir::Target::X86(), "ln");
    ASSERT_TRUE(a.ok()) << a.status();
    first = std::move(*a);
  }
  // The dumped text, as another run would load it.
  std::ifstream in(dir + "/ln.program.json");
  ASSERT_TRUE(in.good()) << "missing " << dir << "/ln.program.json";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), frontend::ProgramToJson(p));
  auto loaded = frontend::ProgramFromJson(text.str());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // x86: CompileProgram's LLVM IR; NVGPU: the CUDA source of the same pipeline (Build needs
  // a driver, which the GPU machine's tests have).
  auto b = CompileProgram(*loaded, ir::Target::X86(), "ln");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(first->source(), HasSubstr("define"));
  EXPECT_EQ(first->source(), (*b)->source());
  std::string cuda = NVGPUSource(p);
  EXPECT_EQ(CountKernels(cuda), 1);
  EXPECT_EQ(cuda, NVGPUSource(*loaded));
}

/// A causal mask built from arange (the GPT-2 block's pattern, as torch.compile hands it over)
/// is a constant subgraph of 16x16 elements: larger than the graph compiler inlines, so
/// constant folding must leave it as ops, and the program compiles and matches the reference.
TEST(LargeConstants, AMaskFromArangeStaysOpsAndCompiles) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({3, 16, 16}), "x");
  auto rows = b.Reshape(b.Arange(0, 16, 1, DType::kInt64), {16, 1});
  auto cols = b.Reshape(b.Arange(0, 16, 1, DType::kInt64), {1, 16});
  auto keep = b.GreaterEqual(rows, cols);  // lower triangle, 256 elements
  auto masked = b.Where(keep, x, b.Fill({1}, -1e9, DType::kFloat32));
  b.MarkOutput(b.Softmax(masked));
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  RunProgramCase(*program, ir::Target::X86(), RunOnX86);
  auto module = CompileProgramModule(*program, ir::Target::NVGPU(90), "masked_softmax");
  ASSERT_TRUE(module.ok()) << module.status();
}

/// ResNet's head: a mean over H and W (7x7, keepdim) feeding an elementwise epilogue. The
/// group's reduction is computed per row inside the consumer's kernel, where fusing the two
/// reduce axes leaves an index divided by 1 that region inference must see through.
TEST(FusedReductions, MeanOverSpatialDimsWithAnEpilogue) {
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({2, 16, 7, 7}), "x");
  auto mean = b.ReduceMean(b.Relu(x), {2, 3}, true);
  b.MarkOutput(b.Mul(mean, b.Fill({1}, 2.0, DType::kFloat32)));
  auto program = b.Build();
  ASSERT_TRUE(program.ok()) << program.status();
  RunProgramCase(*program, ir::Target::X86(), RunOnX86);
  auto module = CompileProgramModule(*program, ir::Target::NVGPU(90), "mean_hw");
  ASSERT_TRUE(module.ok()) << module.status();
}

}  // namespace
}  // namespace cinn_like::testing
