/// \file matmul, linear, conv2d and attention's two products on x86 through oneDNN
/// (runtime/x86/onednn.h, hlir/ops/attention_library.cc): each case is
/// compiled by the graph compiler, checked to call the oneDNN extern (or, where the case is
/// declined, the generated compute), and run on fresh random data against the reference
/// interpreter at the tolerances of tests/op_cases.h (float32: 3e-5 relative to the sum of the
/// products' magnitudes; bfloat16: 1.6e-2). Tests that need oneDNN skip, saying why, only where
/// libdnnl cannot be loaded (scripts/setup.sh installs it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/compiler.h"
#include "ir/flags.h"
#include "ir/printer.h"
#include "tests/fusion_cases.h"
#include "tests/op_cases.h"
#include "tests/x86_executor.h"
#ifdef CINN_LIKE_WITH_ONEDNN
#include "runtime/cinn_like_runtime.h"
#include "runtime/x86/onednn.h"
#endif

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using I64s = std::vector<int64_t>;

const ir::Target kX86 = ir::Target::X86();
constexpr DType kF32 = DType::kFloat32;

/// Why oneDNN cannot be used here, or "" when it can.
std::string WhyNoOneDnn() {
#ifdef CINN_LIKE_WITH_ONEDNN
  auto version = runtime::x86::DnnlVersion();
  return version.ok() ? "" : std::string(version.status().message());
#else
  return "built without oneDNN (dnnl.h was absent at build time)";
#endif
}

/// Skips where oneDNN is absent, except where the test command installed it
/// (CINN_LIKE_REQUIRE_ONEDNN=1, scripts/test.sh): there its absence fails, so CI cannot pass
/// these tests by skipping them.
bool OneDnnRequired() {
  const char* v = std::getenv("CINN_LIKE_REQUIRE_ONEDNN");
  return v != nullptr && std::string(v) == "1";
}

#define SKIP_WITHOUT_ONEDNN()                                                                     \
  if (std::string why = WhyNoOneDnn(); !why.empty()) {                                            \
    if (OneDnnRequired()) FAIL() << "CINN_LIKE_REQUIRE_ONEDNN=1 but oneDNN is unusable: " << why; \
    GTEST_SKIP() << "oneDNN cannot be loaded, so x86 matmul/conv stay generated: " << why;        \
  }

/// The printed module of case `c` compiled for x86.
std::string ModuleText(const OpCase& c) {
  auto graph = CaseGraph(c);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return "";
  auto module = hlir::CompileGraph(*graph, kX86, "op_case");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? ir::ToString(*module) : "";
}

/// Case `c` calls `function` (none of oneDNN's when empty) and matches the reference.
void RunCase(OpCase c, const std::string& function) {
  SCOPED_TRACE(c.Describe());
  c.domains.resize(c.shapes.size(), Domain::kUniform);
  std::string text = ModuleText(c);
  if (function.empty()) {
    EXPECT_THAT(text, Not(HasSubstr("cinn_like_dnnl_"))) << text;
  } else {
    EXPECT_THAT(text, HasSubstr("extern_call(\"" + function + "\"")) << text;
  }
  RunOpCase(c, kX86, RunOnX86);
}

OpCase Matmul(DType t, Shape x, Shape y, bool tx = false, bool ty = false) {
  return {"matmul", {t, t}, {x, y}, {{"transpose_x", tx}, {"transpose_y", ty}}, {}};
}

OpCase Conv(Shape x, Shape w, AttributeMap attrs, bool bias = false) {
  OpCase c{"conv2d", {kF32, kF32}, {x, w}, std::move(attrs), {}};
  if (bias) {
    c.dtypes.push_back(kF32);
    c.shapes.push_back(S({w[0].value}));
  }
  return c;
}

TEST(OneDnnX86, MatmulsCallOneDnnAndMatchTheReference) {
  SKIP_WITHOUT_ONEDNN();
  const std::string f = "cinn_like_dnnl_matmul";
  RunCase(Matmul(kF32, S({33, 20}), S({20, 17})), f);
  RunCase(Matmul(kF32, S({20, 33}), S({20, 17}), true, false), f);
  RunCase(Matmul(kF32, S({33, 20}), S({17, 20}), false, true), f);
  RunCase(Matmul(kF32, S({20, 33}), S({17, 20}), true, true), f);
  RunCase(Matmul(kF32, S({3, 9, 16}), S({3, 16, 11})), f);                 // batched
  RunCase(Matmul(kF32, S({4, 16, 9}), S({4, 11, 16}), true, true), f);     // batched, transposed
  RunCase(Matmul(kF32, S({2, 3, 9, 16}), S({16, 11})), f);                 // y broadcast
  RunCase(Matmul(kF32, S({9, 16}), S({4, 16, 11})), f);                    // x broadcast
  RunCase(Matmul(kF32, S({1, 9, 16}), S({5, 16, 11}), false, false), f);   // x batch of 1
  RunCase(Matmul(kF32, Shape{Sym("n"), Dim::Known(24)}, S({24, 10})), f);  // symbolic rows
  RunCase(Matmul(kF32, S({64, 256}), S({256, 128})), f);
}

TEST(OneDnnX86, LinearWithAndWithoutBiasCallsOneDnn) {
  SKIP_WITHOUT_ONEDNN();
  const std::string f = "cinn_like_dnnl_matmul";
  RunCase({"linear", {kF32, kF32, kF32}, {S({7, 32}), S({12, 32}), S({12})}, {}, {}}, f);
  RunCase({"linear", {kF32, kF32}, {S({7, 32}), S({12, 32})}, {}, {}}, f);
  RunCase({"linear", {kF32, kF32, kF32}, {S({2, 5, 32}), S({12, 32}), S({12})}, {}, {}}, f);
  RunCase({"linear",
           {kF32, kF32, kF32},
           {Shape{Sym("n"), Dim::Known(48)}, S({20, 48}), S({20})},
           {},
           {}},
          f);
}

/// Matmuls with a bias and a relu or tanh-gelu (hlir/pass/matmul_epilogue.h) are one oneDNN
/// matmul each, the activation a post-op: 2-D, batched with the weight broadcast and read
/// transposed, bias only, relu only; with oneDNN declined, generated kernels. The dump's
/// tactics say which ran.
TEST(OneDnnX86, MatmulEpiloguesAreOneDnnPostOps) {
  SKIP_WITHOUT_ONEDNN();
  const std::string saved_dir = FLAGS_cinn_like_dump_dir;
  const std::string saved_decline = FLAGS_cinn_like_decline_libraries;
  const std::string dir = ::testing::TempDir() + "/matmul_epilogue_x86";
  FLAGS_cinn_like_dump_dir = dir;
  for (const char* decline : {"", "oneDNN"}) {
    SCOPED_TRACE(std::string("declined: '") + decline + "'");
    FLAGS_cinn_like_decline_libraries = decline;
    NetBuilder b;
    auto x = b.CreateInput(kF32, S({33, 40}), "x");
    auto xb = b.CreateInput(kF32, S({3, 17, 40}), "xb");
    auto w = b.CreateInput(kF32, S({40, 24}), "w");
    auto wt = b.CreateInput(kF32, S({24, 40}), "wt");
    auto bias = b.CreateInput(kF32, S({24}), "bias");
    b.MarkOutput(b.Relu(b.Add(b.Matmul(x, w), bias)));
    b.MarkOutput(b.Gelu(b.Add(b.Matmul(xb, wt, false, true), bias), "tanh"));
    b.MarkOutput(b.Add(bias, b.Matmul(x, w)));
    b.MarkOutput(b.Relu(b.Matmul(xb, w)));
    std::filesystem::remove_all(dir);
    RunProgramCase(*b.Build(), kX86, RunOnX86, 1e-4);
    std::stringstream tactics;
    tactics << std::ifstream(dir + "/fused.tactics.txt").rdbuf();
    const std::string call = "library.call (oneDNN cinn_like_dnnl_matmul_epilogue";
    EXPECT_EQ(Occurrences(tactics.str(), call), *decline ? 0u : 4u) << tactics.str();
  }
  FLAGS_cinn_like_decline_libraries = saved_decline;
  FLAGS_cinn_like_dump_dir = saved_dir;
}

/// A matmul epilogue with an activation over a k known only at the call would make C the
/// activation of the bias at k = 0, which the extern refuses: the generated kernel runs it,
/// and the dump says why.
TEST(OneDnnX86Fallback, EpilogueOverASymbolicKIsGenerated) {
  SKIP_WITHOUT_ONEDNN();
  const std::string saved_dir = FLAGS_cinn_like_dump_dir;
  const std::string dir = ::testing::TempDir() + "/symbolic_k_x86";
  FLAGS_cinn_like_dump_dir = dir;
  NetBuilder b;
  auto x = b.CreateInput(kF32, Shape{Dim::Known(6), Sym("k")}, "x");
  auto w = b.CreateInput(kF32, Shape{Sym("k"), Dim::Known(4)}, "w");
  auto bias = b.CreateInput(kF32, S({4}), "bias");
  b.MarkOutput(b.Relu(b.Add(b.Matmul(x, w), bias)));
  std::filesystem::remove_all(dir);
  RunProgramCase(*b.Build(), kX86, RunOnX86, 1e-4);
  std::stringstream tactics;
  tactics << std::ifstream(dir + "/fused.tactics.txt").rdbuf();
  EXPECT_THAT(tactics.str(), HasSubstr("library.declined (a matmul epilogue with an activation "
                                       "needs k >= 1, known at compile time)"));
  FLAGS_cinn_like_dump_dir = saved_dir;
}

/// Convolutions with a bias and a relu or tanh-gelu (FoldConvEpilogue) are one oneDNN
/// convolution each, the activation a post-op: a per-channel bias then relu, the
/// convolution's own bias then tanh-gelu, a grouped strided one with relu alone, a 1x1 one on
/// layouts of oneDNN's own; with oneDNN declined, generated kernels. A batch_norm between them
/// keeps its relu.
TEST(OneDnnX86, ConvEpiloguesAreOneDnnPostOps) {
  SKIP_WITHOUT_ONEDNN();
  const std::string saved_dir = FLAGS_cinn_like_dump_dir;
  const std::string saved_decline = FLAGS_cinn_like_decline_libraries;
  const std::string dir = ::testing::TempDir() + "/conv_epilogue_x86";
  FLAGS_cinn_like_dump_dir = dir;
  for (const char* decline : {"", "oneDNN"}) {
    SCOPED_TRACE(std::string("declined: '") + decline + "'");
    FLAGS_cinn_like_decline_libraries = decline;
    NetBuilder b;
    auto x = b.CreateInput(kF32, S({2, 4, 9, 9}), "x");
    auto w = b.CreateInput(kF32, S({8, 4, 3, 3}), "w");
    auto wg = b.CreateInput(kF32, S({8, 2, 3, 3}), "wg");
    auto w1 = b.CreateInput(kF32, S({16, 4, 1, 1}), "w1");
    auto bias = b.CreateInput(kF32, S({8}), "bias");
    auto c11 = b.CreateInput(kF32, S({8, 1, 1}), "c11");
    b.MarkOutput(b.Relu(b.Add(b.Conv2d(x, w, {1, 1}, {1, 1}), c11)));
    b.MarkOutput(b.Gelu(b.Conv2d(x, w, bias, {1, 1}, {1, 1}), "tanh"));
    b.MarkOutput(b.Relu(b.Conv2d(x, wg, {2, 2}, {1, 1}, {1, 1}, 2)));
    b.MarkOutput(b.Relu(b.Conv2d(x, w1)));
    b.MarkOutput(b.Relu(b.Add(b.Mul(b.Conv2d(x, w, {1, 1}, {1, 1}), c11), c11)));
    std::filesystem::remove_all(dir);
    RunProgramCase(*b.Build(), kX86, RunOnX86, 1e-4);
    std::stringstream tactics;
    tactics << std::ifstream(dir + "/fused.tactics.txt").rdbuf();
    const std::string call = "library.call (oneDNN cinn_like_dnnl_conv2d_epilogue";
    EXPECT_EQ(Occurrences(tactics.str(), call), *decline ? 0u : 4u) << tactics.str();
  }
  FLAGS_cinn_like_decline_libraries = saved_decline;
  FLAGS_cinn_like_dump_dir = saved_dir;
}

TEST(OneDnnX86, Conv2dsCallOneDnnAndMatchTheReference) {
  SKIP_WITHOUT_ONEDNN();
  const std::string f = "cinn_like_dnnl_conv2d";
  RunCase(
      Conv(S({2, 3, 9, 8}), S({4, 3, 3, 3}), {{"paddings", I64s{1, 1}}, {"strides", I64s{2, 1}}}),
      f);
  RunCase(Conv(S({1, 4, 7, 7}), S({4, 2, 3, 3}),
               {{"groups", int64_t{2}}, {"dilations", I64s{2, 2}}}, true),
          f);
  // Depthwise, and depthwise with two filters per channel.
  RunCase(Conv(S({2, 6, 10, 10}), S({6, 1, 3, 3}),
               {{"groups", int64_t{6}}, {"paddings", I64s{1, 1}}}, true),
          f);
  RunCase(Conv(S({1, 4, 8, 8}), S({8, 1, 3, 3}), {{"groups", int64_t{4}}, {"strides", I64s{2, 2}}}),
          f);
  // A rectangular kernel with unequal strides, dilations and paddings (four symmetric entries).
  RunCase(Conv(S({2, 3, 11, 12}), S({5, 3, 3, 2}),
               {{"paddings", I64s{2, 2, 1, 1}}, {"strides", I64s{2, 1}}, {"dilations", I64s{1, 2}}},
               true),
          f);
  RunCase(Conv(S({1, 16, 5, 5}), S({8, 16, 1, 1}), {}, true), f);  // 1x1
  RunCase(Conv(Shape{Sym("n"), Dim::Known(2), Dim::Known(5), Dim::Known(5)}, S({3, 2, 3, 3}),
               {{"paddings", I64s{1, 1}}}),
          f);
}

// attention's q kᵀ and p v are two oneDNN matmuls around the generated softmax: grouped heads
// (no gather), bool and float masks broadcast, causal with Lq below and above Lk, a value head
// dim unlike q's, a symbolic query length, the benchmark's layer size.
TEST(OneDnnX86, AttentionProductsCallOneDnnAndMatchTheReference) {
  SKIP_WITHOUT_ONEDNN();
  const std::string f = "cinn_like_dnnl_matmul";
  const DType b = DType::kBool;
  RunCase({"attention",
           {kF32, kF32, kF32},
           {S({2, 4, 5, 8}), S({2, 2, 6, 8}), S({2, 2, 6, 8})},
           {},
           {}},
          f);
  RunCase({"attention",
           {kF32, kF32, kF32, b},
           {S({2, 6, 33, 16}), S({2, 3, 40, 16}), S({2, 3, 40, 12}), S({2, 1, 33, 40})},
           {{"causal", true}},
           {}},
          f);
  RunCase({"attention",
           {kF32, kF32, kF32, kF32},
           {S({1, 2, 33, 16}), S({1, 2, 20, 16}), S({1, 2, 20, 16}), S({33, 20})},
           {{"causal", true}, {"scale", 0.3}},
           {}},
          f);
  RunCase({"attention",
           {kF32, kF32, kF32},
           {Shape{Dim::Known(1), Dim::Known(2), Sym("n"), Dim::Known(32)}, S({1, 2, 33, 32}),
            S({1, 2, 33, 32})},
           {{"scale", 0.25}},
           {}},
          f);
  RunCase({"attention",
           {kF32, kF32, kF32},
           {S({2, 8, 128, 32}), S({2, 8, 128, 32}), S({2, 8, 128, 32})},
           {},
           {}},
          f);
}

#ifdef CINN_LIKE_WITH_ONEDNN
// bfloat16 is a library call exactly when oneDNN has a fast implementation for it on this CPU
// (AVX-512), which the graph compiler asks at compile time; either way it matches.
TEST(OneDnnX86, BFloat16FollowsTheCompileTimeCheck) {
  SKIP_WITHOUT_ONEDNN();
  const DType t = DType::kBFloat16;
  runtime::x86::DnnlMatmulArgs args{};
  args.dtype = runtime::x86::kDnnlBFloat16;
  args.batch = 1;
  args.m = 9;
  args.n = 11;
  args.k = 16;
  const std::string f = runtime::x86::DnnlPrepareMatmul(args).ok() ? "cinn_like_dnnl_matmul" : "";
  RunCase(Matmul(t, S({9, 16}), S({16, 11})), f);
  RunCase({"linear", {t, t, t}, {S({6, 32}), S({12, 32}), S({12})}, {}, {}}, f);
}
#endif

/// The host LLVM IR of case `c` (dumped while it builds for x86).
std::string HostIR(const OpCase& c, const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/onednn_x86";
  const std::string old = FLAGS_cinn_like_dump_dir;
  FLAGS_cinn_like_dump_dir = dir;
  auto graph = CaseGraph(c);
  auto module = hlir::CompileGraph(*graph, kX86, name);
  auto compiler = backends::Compiler::Create(kX86);
  absl::Status built = module.ok() && compiler.ok() ? (*compiler)->Build(*module)
                                                    : absl::InternalError("not compiled");
  FLAGS_cinn_like_dump_dir = old;
  EXPECT_TRUE(built.ok()) << built;
  std::stringstream text;
  text << std::ifstream(dir + "/" + name + ".host.ll").rdbuf();
  return text.str();
}

TEST(OneDnnX86Codegen, HostCodeCallsTheRuntimeExtern) {
  SKIP_WITHOUT_ONEDNN();
  std::string ir = HostIR(Matmul(kF32, S({8, 4}), S({4, 6})), "mm_host");
  EXPECT_THAT(ir, HasSubstr("declare i32 @cinn_like_dnnl_matmul(ptr, ptr, ptr, ptr, i64, i64, "
                            "i64, i64, i64, i64, i64, i64, i64, i64, ptr)"))
      << ir;
  EXPECT_THAT(ir, HasSubstr("call i32 @cinn_like_dnnl_matmul(")) << ir;
  ir = HostIR(Conv(S({1, 3, 6, 6}), S({2, 3, 3, 3}), {}), "conv_host");
  EXPECT_THAT(ir, HasSubstr("call i32 @cinn_like_dnnl_conv2d(")) << ir;
}

/// Sets FLAGS_cinn_like_extern_libs for the scope.
class ExternLibsScope {
 public:
  explicit ExternLibsScope(bool on) : saved_(FLAGS_cinn_like_extern_libs) {
    FLAGS_cinn_like_extern_libs = on;
  }
  ~ExternLibsScope() { FLAGS_cinn_like_extern_libs = saved_; }

 private:
  bool saved_;
};

TEST(OneDnnX86Fallback, ExternLibsOffUsesTheGeneratedKernels) {
  ExternLibsScope off(false);
  RunCase(Matmul(kF32, S({3, 9, 16}), S({3, 16, 11})), "");
  RunCase({"linear", {kF32, kF32, kF32}, {S({7, 32}), S({12, 32}), S({12})}, {}, {}}, "");
  RunCase(Conv(S({1, 4, 7, 7}), S({4, 2, 3, 3}), {{"groups", int64_t{2}}}, true), "");
}

/// A conv2d node with an activation of its own: the library call with the epilogue where oneDNN
/// takes it, and the generated compute applying it where the library is off.
TEST(OneDnnX86, Conv2dActivationAttributeMatchesTheReference) {
  SKIP_WITHOUT_ONEDNN();
  OpCase relu = Conv(S({1, 4, 7, 7}), S({6, 4, 3, 3}),
                     {{"paddings", I64s{1, 1}}, {"activation", std::string("relu")}}, true);
  RunCase(relu, "cinn_like_dnnl_conv2d_epilogue");
  OpCase gelu = Conv(S({1, 4, 7, 7}), S({6, 2, 3, 3}),
                     {{"groups", int64_t{2}}, {"activation", std::string("gelu_tanh")}});
  RunCase(gelu, "cinn_like_dnnl_conv2d_epilogue");
  ExternLibsScope off(false);
  RunCase(relu, "");
  RunCase(gelu, "");
}

/// The tactics the dump records for case `c` compiled for x86 as entry `name`.
std::string Tactics(const OpCase& c, const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/onednn_x86";
  const std::string old = FLAGS_cinn_like_dump_dir;
  FLAGS_cinn_like_dump_dir = dir;
  auto graph = CaseGraph(c);
  auto module = hlir::CompileGraph(*graph, kX86, name);
  FLAGS_cinn_like_dump_dir = old;
  EXPECT_TRUE(module.ok()) << module.status();
  std::stringstream text;
  text << std::ifstream(dir + "/" + name + ".tactics.txt").rdbuf();
  return text.str();
}

// What no one call expresses (a batch broadcast in one dim only; asymmetric paddings) is the
// generated compute, and the dump says why.
TEST(OneDnnX86Fallback, DeclinedCasesAreGeneratedAndTheDumpSaysWhy) {
  OpCase mm = Matmul(kF32, S({2, 1, 3, 4}), S({1, 3, 4, 6}));
  RunCase(mm, "");
  EXPECT_THAT(Tactics(mm, "declined_mm"),
              HasSubstr("library.declined (an operand's batch is partly broadcast)"));
  OpCase conv = Conv(S({1, 2, 6, 6}), S({3, 2, 3, 3}), {{"paddings", I64s{1, 0, 2, 2}}});
  RunCase(conv, "");
  EXPECT_THAT(Tactics(conv, "declined_conv"),
              HasSubstr("library.declined (the paddings are not symmetric)"));
}

// Other dtypes keep the decomposed compute (the products accumulate in float32 there), and
// the dump says why.
TEST(OneDnnX86Fallback, AttentionInOtherDTypesIsGenerated) {
  for (DType t : {DType::kFloat16, DType::kFloat64}) {
    OpCase c{"attention",
             {t, t, t},
             {S({1, 4, 7, 16}), S({1, 2, 9, 16}), S({1, 2, 9, 16})},
             {{"causal", true}},
             {}};
    RunCase(c, "");
    if (WhyNoOneDnn().empty()) {
      EXPECT_THAT(Tactics(c, "attention_" + std::string(DTypeName(t))),
                  HasSubstr("library.declined (the library matmuls are taken for float32 "
                            "attention only)"));
    }
  }
}

TEST(OneDnnX86Fallback, TheDumpNamesTheImplementationThatRuns) {
  SKIP_WITHOUT_ONEDNN();
  std::string text = Tactics(Matmul(kF32, S({16, 32}), S({32, 8})), "called_mm");
  EXPECT_THAT(text, HasSubstr("library.call (oneDNN cinn_like_dnnl_matmul (oneDNN ")) << text;
}

// oneDNN runs float32 convolutions on plain NCHW tensors through an im2col GEMM; where it has a
// direct kernel on layouts of its own (checked on AVX-512 hosts, where oneDNN 2.6 has one for
// each case below), the extern takes that one and reorders the source and weights in and the
// destination out at each call: the dump says so, and the results match the reference (the
// seed network's first layer, one with a bias and a stride). A grouped layer may go either way
// by ISA (results checked); weights larger than the activations stay on the GEMM (their reorder
// at each call would cost more).
TEST(OneDnnX86, GemmConvolutionsRunOnOneDnnsOwnLayouts) {
  SKIP_WITHOUT_ONEDNN();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const std::string f = "cinn_like_dnnl_conv2d";
  const std::string blocked = "(blocked layouts, reordered at each call)";
  const std::vector<OpCase> direct = {
      Conv(S({2, 3, 32, 32}), S({16, 3, 3, 3}), {{"paddings", I64s{1, 1}}}),
      Conv(S({3, 16, 9, 9}), S({32, 16, 3, 3}), {{"strides", I64s{2, 2}}}, true)};
  for (size_t i = 0; i < direct.size(); ++i) {
    if (avx512) {
      EXPECT_THAT(Tactics(direct[i], "blocked_conv" + std::to_string(i)), HasSubstr(blocked));
    }
    RunCase(direct[i], f);
  }
  RunCase(
      Conv(S({4, 8, 12, 12}), S({8, 4, 3, 3}), {{"groups", int64_t{2}}, {"paddings", I64s{1, 1}}}),
      f);
  const OpCase heavy = Conv(S({1, 64, 3, 3}), S({64, 64, 3, 3}), {{"paddings", I64s{1, 1}}});
  EXPECT_THAT(Tactics(heavy, "weight_heavy_conv"), Not(HasSubstr(blocked)));
  RunCase(heavy, f);
}

#ifdef CINN_LIKE_WITH_ONEDNN
TEST(OneDnnX86Error, CallsNameTheOpTheShapesAndOneDnnsStatus) {
  SKIP_WITHOUT_ONEDNN();
  std::vector<float> x(2 * 4 * 5 * 5), w(4 * 2 * 3 * 3), y(2 * 4 * 3 * 3);
  // Three groups do not divide four channels.
  EXPECT_NE(cinn_like_dnnl_conv2d(x.data(), w.data(), nullptr, y.data(), 0, 0, 2, 4, 5, 5, 4, 3, 3,
                                  3, 3, 0, 0, 1, 1, 1, 1, 3, nullptr),
            0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("oneDNN conv2d (x [2, 4, 5, 5], w [4, 1, 3, 3], y [2, 4, 3, 3]"));
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("groups must divide"));
  // An output of 4 x 4 where a 3 x 3 kernel over 5 x 5 makes 3 x 3: oneDNN refuses it.
  EXPECT_NE(cinn_like_dnnl_conv2d(x.data(), w.data(), nullptr, y.data(), 0, 0, 2, 4, 5, 5, 4, 3, 3,
                                  4, 4, 0, 0, 1, 1, 1, 1, 2, nullptr),
            0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("y [2, 4, 4, 4], pad 0x0, stride 1x1, dilation 1x1, groups 2"));
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("dnnl_dilated_convolution_forward_desc_init failed: invalid_arguments"));
  EXPECT_NE(cinn_like_dnnl_matmul(x.data(), w.data(), nullptr, y.data(), 0, 9, 1, 2, 2, 2, 0, 0, 0,
                                  0, nullptr),
            0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("oneDNN matmul (batch 1, m 2, n 2, k 2, trans_a 0, trans_b 0, batch "
                        "strides 0/0, dtype code 9): unsupported dtype"));
}

// A product over no terms is the bias on every row (or zeros): oneDNN takes no k of 0.
TEST(OneDnnX86, EmptyReductionWritesTheBias) {
  SKIP_WITHOUT_ONEDNN();
  std::vector<float> bias{1.5f, -2.f, 3.f}, c(2 * 3, 7.f);
  ASSERT_EQ(cinn_like_dnnl_matmul(nullptr, nullptr, bias.data(), c.data(), 1, 0, 1, 2, 3, 0, 0, 1,
                                  0, 0, nullptr),
            0)
      << cinn_like_get_last_error();
  EXPECT_EQ(c, (std::vector<float>{1.5f, -2.f, 3.f, 1.5f, -2.f, 3.f}));
  ASSERT_EQ(cinn_like_dnnl_matmul(nullptr, nullptr, nullptr, c.data(), 0, 0, 1, 2, 3, 0, 0, 1, 0, 0,
                                  nullptr),
            0);
  EXPECT_EQ(c, std::vector<float>(6, 0.f));
}
/// The extern refuses what it cannot compute, naming the call: an unknown activation, and an
/// activation over k = 0 (C would be the activation of the bias; the compile declines a static
/// k = 0 to the generated kernel).
TEST(OneDnnX86Error, EpilogueExternRefusesUnknownActivationsAndEmptyProducts) {
  SKIP_WITHOUT_ONEDNN();
  // a [2, 3], b [3, 3], c [2, 3].
  std::vector<float> a(6, 1.f), b(9, 1.f), bias(3, 0.5f), c(6, 0.f);
  EXPECT_NE(cinn_like_dnnl_matmul_epilogue(a.data(), b.data(), bias.data(), c.data(), 1, 0, 1, 2, 3,
                                           3, 0, 0, 0, 0, /*activation=*/7, nullptr),
            0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()), HasSubstr("unknown activation code 7"));
  EXPECT_NE(cinn_like_dnnl_matmul_epilogue(a.data(), b.data(), bias.data(), c.data(), 1, 0, 1, 2, 3,
                                           /*k=*/0, 0, 0, 0, 0, 1, nullptr),
            0);
  EXPECT_THAT(std::string(cinn_like_get_last_error()),
              HasSubstr("k must be at least 1 with an activation"));
  // A relu on a product that is negative: zeros, the bias added before it.
  std::vector<float> neg(9, -1.f);
  ASSERT_EQ(cinn_like_dnnl_matmul_epilogue(a.data(), neg.data(), bias.data(), c.data(), 1, 0, 1, 2,
                                           3, 3, 0, 0, 0, 0, 1, nullptr),
            0)
      << cinn_like_get_last_error();
  for (float v : c) EXPECT_EQ(v, 0.f);
  ASSERT_EQ(cinn_like_dnnl_matmul_epilogue(a.data(), b.data(), bias.data(), c.data(), 1, 0, 1, 2, 3,
                                           3, 0, 0, 0, 0, 1, nullptr),
            0)
      << cinn_like_get_last_error();
  for (float v : c) EXPECT_EQ(v, 3.5f);  // 3 ones times ones, plus 0.5
}

#endif

}  // namespace
}  // namespace cinn_like::testing
