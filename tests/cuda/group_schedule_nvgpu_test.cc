/// \file The group scheduler's GPU tactics, read from the CUDA source they produce for sm_90
/// (no GPU needed; every source also compiles to PTX): what each tactic promises is in the
/// code (vector types, warps per row and shuffles, two kernels for a split column reduction),
/// and the dump names each kernel's tactic and why. The results of the same programs are
/// checked on the GPU machine (tests/gpu/fusion_gpu_test.cc) and on x86 (tests/hlir).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "hlir/row_buckets.h"
#include "ir/flags.h"
#include "tests/cuda/fused_source.h"
#include "tests/symbolic_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Program BiasRelu(DType dt, int64_t rows, int64_t cols) {
  NetBuilder b;
  auto x = b.CreateInput(dt, S({rows, cols}), "x");
  auto bias = b.CreateInput(dt, S({cols}), "bias");
  b.MarkOutput(b.Relu(b.Add(x, bias)));
  return *b.Build();
}

/// The kernels of a source, without the helpers before them (the block-reduce helper itself
/// reads threadIdx.y).
std::string Kernels(const std::string& src) {
  size_t p = src.find("__global__");
  return p == std::string::npos ? "" : src.substr(p);
}

/// The kernel `name` of `src` (its `__global__` line to its closing brace; for a kernel
/// versioned for alignment, its aligned body), empty when absent.
std::string KernelNamed(const std::string& src, const std::string& name) {
  size_t p = src.find(" " + name + "(");
  if (p == std::string::npos) return "";
  p = src.rfind("__global__", p);
  size_t end = src.find("\n}\n", p);
  return src.substr(p, end == std::string::npos ? std::string::npos : end + 3 - p);
}

/// The copy of the first kernel's body for pointers not aligned to its vectors (before it).
std::string UnalignedCopy(const std::string& src) {
  size_t p = src.find("static __device__ __noinline__");
  return p == std::string::npos ? "" : src.substr(p, src.find("__global__") - p);
}

/// relu(batch_norm(x)) over NCHW input `x` of `shape`, its four parameters inputs of [C].
auto BatchNormRelu(NetBuilder& b, DType dt, const std::vector<int64_t>& shape) {
  auto x = b.CreateInput(dt, hlir::MakeShape(shape), "x");
  std::vector<decltype(x)> p;
  for (const char* name : {"scale", "bias", "mean", "var"}) {
    p.push_back(b.CreateInput(dt, S({shape[1]}), name));
  }
  return b.Relu(b.BatchNorm(x, p[0], p[1], p[2], p[3]));
}

TEST(GroupScheduleNVGPU, ElementwiseGroupsMove128BitsPerAccess) {
  // 4 floats, 8 halves or bfloat16s, 2 doubles, 16 bytes per thread, the pointers tested by
  // the host before the launch.
  const std::pair<DType, const char*> cases[] = {{DType::kFloat32, "float4"},
                                                 {DType::kFloat16, "uint4"},
                                                 {DType::kBFloat16, "uint4"},
                                                 {DType::kFloat64, "double2"},
                                                 {DType::kInt8, "uint4"}};
  for (const auto& [dt, vector_type] : cases) {
    SCOPED_TRACE(hlir::DTypeName(dt));
    std::string src = CompiledSource(BiasRelu(dt, 64, 1024));
    EXPECT_THAT(src, HasSubstr(absl::StrCat("*reinterpret_cast<const ", vector_type, "*>")));
    // The host tests the pointers before the launch (codegen_cuda_host.h): no test here.
    EXPECT_THAT(src, Not(HasSubstr("% 16 == 0")));
    const std::string host = CompiledHostIR(BiasRelu(dt, 64, 1024));
    EXPECT_THAT(host, HasSubstr("%fused_kernel.misaligned = icmp ne i64")) << host;
    EXPECT_THAT(host, HasSubstr("call i32 @cinn_like_cuda_launch_realigned(")) << host;
    // The fused index split into [row, column] and flattened again is one index: no
    // per-element division by the row length.
    EXPECT_THAT(src, Not(HasSubstr("/ 1024")));
  }
  // A row whose length is no multiple of the lanes, in a tensor the vectors tile: x and the
  // output by vectors along the fused index, the bias lane by lane (each lane its element).
  const std::string odd = CompiledSource(BiasRelu(DType::kFloat16, 64, 1001));
  EXPECT_THAT(odd, HasSubstr("*reinterpret_cast<const uint4*>(&x["));
  EXPECT_THAT(odd, HasSubstr("*reinterpret_cast<uint4*>(&relu_1["));
  EXPECT_THAT(odd, HasSubstr("bias[(idx1 + 7) % 1001]"));
  // One the vectors tile by no means stays scalar.
  EXPECT_THAT(CompiledSource(BiasRelu(DType::kFloat16, 63, 1001)), Not(HasSubstr("uint4")));
}

TEST(GroupScheduleNVGPU, RepeatedMathIsComputedOncePerElement) {
  // GELU's backward reads tanh(u) three times and cubes x in u: inlined, the consumer's
  // expression held each repeat, which NVRTC does not merge (H200: 47 us for 1024 x 3072
  // bfloat16, about ten times the instructions). Now one tanhf per element, as a temporary,
  // and products for the powers.
  const std::string src = Kernels(CompiledSource(GeluTanhBackward(64, 1024)));
  EXPECT_THAT(src, Not(HasSubstr("powf")));
  EXPECT_THAT(src, HasSubstr("const float cse_0 = tanhf("));
  // Two kernels (the gradient's and the output's own) of 4 lanes, one tanhf per lane.
  EXPECT_EQ(Occurrences(src, "tanhf("), 8u) << src;
  // Tensors named as the printers' temporaries keep out of their way (NVRTC compiles it).
  NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({64, 1024}), "cse_0");
  auto t = b.Tanh(b.Add(x, b.CreateInput(DType::kFloat32, S({64, 1024}), "bcast0")));
  b.MarkOutput(b.Add(b.Mul(t, t), t));
  const std::string named = CompiledSource(*b.Build());
  EXPECT_THAT(named, HasSubstr("v_cse_0"));
  EXPECT_THAT(named, HasSubstr("v_bcast0"));
}

TEST(GroupScheduleNVGPU, ChannelBroadcastsOfNchwTensorsStayVectorAccesses) {
  // batch_norm + relu after a convolution: per-channel parameters broadcast over [N, C, H, W]
  // (W = 56, a multiple of 8 halves); the output and input accesses are 16-byte vectors at
  // one fused index, not one scalar access per lane with its own division chain.
  NetBuilder b;
  b.MarkOutput(BatchNormRelu(b, DType::kFloat16, {4, 64, 56, 56}));
  std::string src = Kernels(CompiledSource(*b.Build()));
  EXPECT_THAT(src, HasSubstr("*reinterpret_cast<const uint4*>(&x["));
  EXPECT_THAT(src, HasSubstr("*reinterpret_cast<uint4*>(&"));
  EXPECT_THAT(src, Not(HasSubstr("/ 64 * 64")));  // the batch dim split and joined again
  // The per-channel scale and shift, the same for every lane, are computed once per thread
  // (before: a square root and a division per lane, which made the kernel compute-bound).
  size_t roots = 0;
  for (size_t p = src.find("sqrtf("); p != std::string::npos; p = src.find("sqrtf(", p + 1)) {
    ++roots;
  }
  EXPECT_LE(roots, 2u) << src;
  EXPECT_THAT(src, HasSubstr("const float bcast"));
}

TEST(GroupScheduleNVGPU, LayoutChangesAreTilesOfVectorsPerThread) {
  // NCHW -> NHWC and NHWC -> NCHW: each thread reads a tile with vector loads along the
  // input's contiguous axis into registers and writes it with 16-byte stores along the
  // output's: 8 x 8 halves for a copy, 4 x 8 where the stage computes (a relu). Where the
  // tiles do not fill whole blocks (the tile is read unguarded) the loads stay in memory, and
  // an axis that is no multiple of 8 gets no tile.
  auto transposed = [](std::initializer_list<int64_t> shape, std::vector<int64_t> perm, bool relu) {
    NetBuilder b;
    auto y = b.Transpose(b.CreateInput(DType::kFloat16, S(shape), "x"), perm);
    b.MarkOutput(relu ? b.Relu(y) : y);
    return b.Build();
  };
  const std::string dir = ::testing::TempDir() + "/layout_change_dump";
  const std::string old = FLAGS_cinn_like_dump_dir;
  FLAGS_cinn_like_dump_dir = dir;
  std::string to_nhwc =
      Kernels(CompiledSource(*transposed({4, 64, 56, 56}, {0, 2, 3, 1}, false), "to_nhwc"));
  std::string to_nchw =
      Kernels(CompiledSource(*transposed({4, 56, 56, 64}, {0, 3, 1, 2}, true), "to_nchw"));
  CompiledSource(*transposed({1, 8, 8, 64}, {0, 3, 1, 2}, false), "partial");
  CompiledSource(*transposed({3, 7, 9, 64}, {0, 3, 1, 2}, false), "odd");
  // Doubles: 2 lanes, so tiles of 2 x 2 whether the stage computes or copies.
  NetBuilder d;
  auto xd = d.CreateInput(DType::kFloat64, S({4, 56, 56, 64}), "x");
  d.MarkOutput(d.Relu(d.Transpose(xd, {0, 3, 1, 2})));
  CompiledSource(*d.Build(), "doubles");
  FLAGS_cinn_like_dump_dir = old;
  auto read = [&](const std::string& file) {
    std::stringstream text;
    text << std::ifstream(dir + "/" + file).rdbuf();
    return text.str();
  };
  // 8 rows: 16-byte loads; 4 rows: 8-byte loads; 16-byte stores both.
  EXPECT_THAT(to_nhwc, AllOf(HasSubstr("__half x_local[64];"),
                             HasSubstr("*reinterpret_cast<const uint4*>(&x[")));
  EXPECT_THAT(to_nchw, AllOf(HasSubstr("__half x_local[32];"),
                             HasSubstr("*reinterpret_cast<const uint2*>(&x[")));
  for (const std::string* src : {&to_nchw, &to_nhwc}) {
    EXPECT_THAT(*src, HasSubstr("*reinterpret_cast<uint4*>(&")) << *src;
  }
  const std::string read_in = "x read into registers by vectors";
  EXPECT_THAT(read("to_nhwc.tactics.txt"),
              AllOf(HasSubstr("elementwise.tiled_layout_change"), HasSubstr("a tile of 8 x 8"),
                    HasSubstr(read_in), HasSubstr("[tile_rows 8 of 8/4]")));
  EXPECT_THAT(read("to_nchw.tactics.txt"), AllOf(HasSubstr("a tile of 4 x 8"), HasSubstr(read_in),
                                                 HasSubstr("[tile_rows 4 of 4/8]")));
  EXPECT_THAT(read("partial.tactics.txt"),
              AllOf(HasSubstr("a tile of 8 x 8"), Not(HasSubstr(read_in))));
  EXPECT_THAT(read("odd.tactics.txt"), Not(HasSubstr("tiled_layout_change")));
  EXPECT_THAT(read("doubles.tactics.txt"), AllOf(HasSubstr("a tile of 2 x 2"), HasSubstr(read_in)));
}

TEST(GroupScheduleNVGPU, PoolingWindowsAreReducedByEachThread) {
  // A 2x2 max pool after batch_norm + relu: 4 elements per output, reduced by one thread
  // each (a block per output would leave 28 of its 32 lanes idle).
  NetBuilder b;
  b.MarkOutput(b.MaxPool2d(BatchNormRelu(b, DType::kFloat32, {8, 16, 32, 32}), {2, 2}));
  const std::string dir = ::testing::TempDir() + "/group_schedule_pool_dump";
  const std::string old = FLAGS_cinn_like_dump_dir;
  FLAGS_cinn_like_dump_dir = dir;
  std::string src = Kernels(CompiledSource(*b.Build(), "pool_entry"));
  FLAGS_cinn_like_dump_dir = old;
  EXPECT_THAT(src, Not(HasSubstr("cinn_like_block_reduce_max")));
  EXPECT_THAT(src, HasSubstr("__launch_bounds__(256)"));
  std::stringstream tactics;
  tactics << std::ifstream(dir + "/pool_entry.tactics.txt").rdbuf();
  EXPECT_THAT(tactics.str(), HasSubstr("reduction.thread_per_element (4 elements per output"));
}

TEST(GroupScheduleNVGPU, RereadRowsAreReadOnceIntoRegisters) {
  // softmax reads its row three times (max, sum, quotient), layer_norm after a residual add
  // reads both rows three times: each thread reads its 16 contiguous halves of each once, as
  // two 16-byte vectors, into a local array the reductions and the output read unrolled; what
  // two stages compute from the row (softmax's exp(x - max), the residual sum) is computed
  // once per element into registers too.
  NetBuilder b;
  b.MarkOutput(b.Softmax(b.CreateInput(DType::kFloat16, S({64, 512}), "x")));
  std::string softmax = Kernels(CompiledSource(*b.Build()));
  EXPECT_THAT(softmax, HasSubstr("__half x_local[16];"));
  EXPECT_THAT(softmax, HasSubstr("*reinterpret_cast<const uint4*>(&x[idx1 + "
                                 "static_cast<int32_t>(threadIdx.x) * 16])"));
  EXPECT_THAT(softmax, HasSubstr("x_local[15]"));
  EXPECT_THAT(softmax, HasSubstr("float softmax_0_exp_local[16];"));
  size_t exps = 0;
  for (size_t p = softmax.find("expf("); p != std::string::npos; p = softmax.find("expf(", p + 1)) {
    ++exps;
  }
  EXPECT_EQ(exps, 16u) << softmax;  // one per element of the thread's share
  EXPECT_THAT(softmax, HasSubstr("cinn_like_block_reduce_max<"));
  EXPECT_THAT(softmax, HasSubstr("cinn_like_block_reduce_sum<"));
  EXPECT_THAT(softmax, HasSubstr("threadIdx.y"));  // 8 rows per block
  EXPECT_THAT(softmax, Not(HasSubstr("for (")));   // every loop unrolled
  // Global reads of x only where the row is cached: vectors, whose pointers the host tests
  // before the launch (no copy of the body for others).
  auto scalar_reads = [](const std::string& src) {
    size_t reads = 0;
    for (size_t p = src.find(" x["); p != std::string::npos; p = src.find(" x[", p + 1)) ++reads;
    return reads;
  };
  EXPECT_EQ(scalar_reads(softmax), 0u) << softmax;
  EXPECT_THAT(softmax, Not(HasSubstr("% 16 == 0) {")));
  EXPECT_EQ(UnalignedCopy(CompiledSource(*b.Build())), "");
  NetBuilder c;
  auto x = c.CreateInput(DType::kFloat16, S({8, 4096}), "x");
  auto r = c.CreateInput(DType::kFloat16, S({8, 4096}), "r");
  auto gamma = c.CreateInput(DType::kFloat16, S({4096}), "gamma");
  auto beta = c.CreateInput(DType::kFloat16, S({4096}), "beta");
  c.MarkOutput(c.LayerNorm(c.Add(x, r), gamma, beta));
  std::string ln = Kernels(CompiledSource(*c.Build()));
  EXPECT_THAT(ln, HasSubstr("__half add_0_local[16];"));
  EXPECT_THAT(ln, Not(HasSubstr("x_local")));  // read by the residual sum only
  EXPECT_THAT(ln, HasSubstr("*reinterpret_cast<const uint4*>(&r["));
  EXPECT_THAT(ln, Not(HasSubstr("gamma_local")));  // read by one stage only
  EXPECT_THAT(ln, Not(HasSubstr("threadIdx.y")));  // 256 threads, one row per block
  // x also read by a second output's kernel: that kernel reads x from memory, the softmax
  // its registers; but where the other kernel reads x through a producer inlined into both
  // (exp(x) here), the softmax reads memory too (the registers would replace the producer's
  // loads in both).
  NetBuilder d;
  auto y = d.CreateInput(DType::kFloat16, S({64, 512}), "x");
  d.MarkOutput(d.Softmax(y));
  d.MarkOutput(d.Exp(y));
  std::string two = Kernels(CompiledSource(*d.Build()));
  EXPECT_THAT(two, HasSubstr("__half x_local[16];"));
  EXPECT_THAT(two, HasSubstr("expf(__half2float(reinterpret_cast<__half*>(&x_v"));
  NetBuilder e;
  auto z = e.CreateInput(DType::kFloat16, S({64, 512}), "x");
  auto ez = e.Exp(z);
  e.MarkOutput(e.Softmax(ez));
  e.MarkOutput(e.Sqrt(ez));
  EXPECT_THAT(Kernels(CompiledSource(*e.Build())), Not(HasSubstr("__half x_local")));
}

TEST(GroupScheduleNVGPU, RowsReadAtSeveralOffsetsOrOverTwoDimsCompileWithoutRegisters) {
  for (const Program& p : RowsNotHeldInRegisters()) {
    std::string src = Kernels(CompiledSource(p));
    EXPECT_THAT(src, Not(HasSubstr("float x_local"))) << src;
    EXPECT_THAT(src, HasSubstr("cinn_like_block_reduce_")) << src;
    EXPECT_EQ(CountKernels(src), 1) << src;
  }
}

TEST(GroupScheduleNVGPU, ShortRowsGetAWarpEachLongRowsABlock) {
  // 512 columns, 64 rows: 8 warps per block, each reducing its row by shuffles.
  std::string warp = Kernels(CompiledSource(ScaledRowSum(64, 512)));
  EXPECT_THAT(warp, HasSubstr("threadIdx.y"));
  EXPECT_THAT(warp, HasSubstr("cinn_like_block_reduce_sum"));
  EXPECT_EQ(CountKernels(warp), 1);
  // Each lane reads its 16 elements as 4 vectors of 4 floats; a row of 500 (no multiple of
  // 32 lanes x 4) is read one float at a time.
  EXPECT_EQ(CountOccurrences(warp, "reinterpret_cast<const float4*>(&x["), 1) << warp;
  EXPECT_THAT(Kernels(CompiledSource(ScaledRowSum(64, 500))), Not(HasSubstr("float4")));
  // GPT-2's residual LayerNorm, rows of 768 (6 vectors per lane): every read of a row is.
  {
    std::string norm = Kernels(CompiledSource(LayerNormProgram(S({64, 768}), 768, true)));
    EXPECT_THAT(norm, HasSubstr("threadIdx.y"));
    EXPECT_THAT(norm, HasSubstr("reinterpret_cast<const float4*>(&x["));
    EXPECT_THAT(norm, HasSubstr("reinterpret_cast<const float4*>(&residual["));
    EXPECT_EQ(CountOccurrences(norm, " x["), 0) << norm;  // no scalar read of x
  }
  // Rows past 1024 elements, or a row count no multiple of 2: a block per row (also where
  // the row is held in registers).
  for (const Program& p :
       {ScaledRowSum(64, 4096), ScaledRowSum(37, 512), SoftmaxProgram(S({64, 4096})),
        SoftmaxProgram(S({37, 512})), LayerNormProgram(S({64, 2048}), 2048, true)}) {
    std::string block = Kernels(CompiledSource(p));
    EXPECT_THAT(block, Not(HasSubstr("threadIdx.y")));
    EXPECT_THAT(block, HasSubstr("cinn_like_block_reduce_"));
    EXPECT_EQ(CountKernels(block), 1);
  }
}

TEST(GroupScheduleNVGPU, AFloatRowMaxFindsItsNaNsInThePassThatFindsItsExtreme) {
  // A row's max or min is NaN where the row has one (PyTorch's max): the combine is the
  // NaN-keeping maximum, in each thread and across the block, so the kernel loops over the row
  // as a sum's does (a second reduction counting NaNs read every row twice: GPT-2's loss max,
  // 0.11 ms against 0.055 for the sum beside it on an H200).
  auto row_kernel = [](bool sum, bool max, int64_t rows, int64_t cols) {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({rows, cols}), "x");
    b.MarkOutput(sum ? b.ReduceSum(x, {1}) : max ? b.ReduceMax(x, {1}) : b.ReduceMin(x, {1}));
    return Kernels(CompiledSource(*b.Build()));
  };
  auto loops = [](const std::string& k) {
    int n = 0;
    for (size_t p = k.find("for ("); p != std::string::npos; p = k.find("for (", p + 1)) ++n;
    return n;
  };
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{64, 50257}, {64, 512}}) {
    SCOPED_TRACE(cols);
    const std::string sum = row_kernel(true, false, rows, cols);
    const std::string max = row_kernel(false, true, rows, cols);
    const std::string min = row_kernel(false, false, rows, cols);
    EXPECT_EQ(CountKernels(max), 1);
    EXPECT_EQ(loops(max), loops(sum)) << max;
    EXPECT_EQ(loops(min), loops(sum)) << min;
    EXPECT_THAT(max, HasSubstr("cinn_like_maximumf(")) << max;
    EXPECT_THAT(min, HasSubstr("cinn_like_minimumf(")) << min;
    EXPECT_THAT(max, Not(HasSubstr("_nan"))) << max;
  }
  // The helpers: NaN wins in each thread's combine and in the block's.
  const std::string src = CompiledSource([] {
    NetBuilder b;
    b.MarkOutput(b.ReduceMax(b.CreateInput(DType::kFloat32, S({64, 4096}), "x"), {1}));
    return *b.Build();
  }());
  EXPECT_THAT(src, HasSubstr("float cinn_like_maximumf(float a, float b) { return (a != a || a > "
                             "b) ? a : b; }"));
  EXPECT_THAT(src, HasSubstr("return cinn_like_is_nan(a) ? a : cinn_like_is_nan(b) ? b : "
                             "max(a, b);"));
}

TEST(GroupScheduleNVGPU, AStoredValueItsGroupReadsIsStoredFromTheReadersKernel) {
  // A dropout's mask, returned for the backward and read by the dropout: stored by the
  // dropout's threads, each its own elements (4 floats a thread: 4 mask bytes), where it was a
  // kernel of its own whose reader loaded it back (GPT-2's training forward: one a layer). The
  // rows of 768 are fused with the columns and split into vectors: each thread's 4 elements
  // stay in one row (768 is a multiple of 4), so the region it stores is a row's 4 elements.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1024, 768}, {37, 33}}) {
    SCOPED_TRACE(cols);
    const std::string src = Kernels(CompiledSource(DropoutResidual(rows, cols)));
    EXPECT_EQ(CountKernels(src), 1) << src;
    EXPECT_THAT(src, HasSubstr("cinn_like_philox_uniform(")) << src;  // the mask, drawn here
  }
  // A value of one element read by another (one thread, no threadIdx.x loop to store it
  // from): each stays a kernel's nest, and the group compiles.
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({1}), "x");
    auto v = b.Add(x, b.Fill({1}, 1.0));
    b.MarkOutput(v);
    b.MarkOutput(b.Mul(v, b.Fill({1}, 2.0)));
    EXPECT_GE(CountKernels(Kernels(CompiledSource(*b.Build()))), 1);
  }
  // Read through a reshape of as many elements, each at its own row-major offset.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1024, 3072}, {38, 33}}) {
    SCOPED_TRACE(cols);
    const std::string src = Kernels(CompiledSource(ReturnedAndReshapedForItsReader(rows, cols)));
    EXPECT_EQ(CountKernels(src), 1) << src;
  }
}

TEST(GroupScheduleNVGPU, FewColumnsSplitTheirReduceAxisIntoTwoKernels) {
  // 1024 columns are 4 blocks: the 8192 rows are reduced in chunks on blockIdx.y into
  // partials, then a second kernel sums each column's partials (no atomics).
  std::string split = Kernels(CompiledSource(ReduceRows(8192, 1024, 0)));
  EXPECT_EQ(CountKernels(split), 2);
  EXPECT_THAT(split, HasSubstr("blockIdx.y"));
  EXPECT_THAT(split, HasSubstr("_rf"));
  EXPECT_THAT(split, Not(HasSubstr("atomic")));
  // Sums over [4, 256] of 1024 columns (a norm's weight gradient): the 256 split, 32 chunks of
  // 8 x 4 rows, not the 4.
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({4, 256, 1024}), "x");
  b.MarkOutput(b.ReduceSum(x, {0, 1}));
  std::string two_axes = Kernels(CompiledSource(*b.Build()));
  EXPECT_EQ(CountKernels(two_axes), 2) << two_axes;
  EXPECT_THAT(two_axes, HasSubstr("blockIdx.y"));
  // Chunks of 32 rows or fewer, and 32 partials or fewer, are unrolled: each thread's loads
  // are all in flight at once (8192 rows in 64-row chunks, above, stay loops).
  EXPECT_THAT(two_axes, Not(HasSubstr("for (")));
  EXPECT_EQ(CountOccurrences(two_axes, "x["), 32) << two_axes;
  EXPECT_THAT(split, HasSubstr("for ("));
  // 2^18 columns fill the device (1024 blocks): one kernel, a thread per column.
  std::string wide = Kernels(CompiledSource(ReduceRows(64, 1 << 18, 0)));
  EXPECT_EQ(CountKernels(wide), 1);
  EXPECT_THAT(wide, Not(HasSubstr("blockIdx.y")));
}

TEST(GroupScheduleNVGPU, FewLongRowsSplitTheirReduceAxisIntoTwoKernels) {
  // A BatchNorm's sums per channel over [N, H, W] (NCHW): 64 rows of 8 x 32 x 64 elements
  // would be 64 blocks on a device of 132 SMs. The batch axis is split into 4 chunks: a block
  // per chunk and channel into partials, then a second kernel sums each channel's 4 partials.
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({8, 64, 32, 64}), "x");
  b.MarkOutput(b.ReduceSum(x, {0, 2, 3}));
  std::string split = Kernels(CompiledSource(*b.Build()));
  EXPECT_EQ(CountKernels(split), 2) << split;
  EXPECT_THAT(split, HasSubstr("_rf"));
  EXPECT_THAT(split, HasSubstr("cinn_like_block_reduce_sum<"));
  EXPECT_THAT(split, Not(HasSubstr("atomic")));
  // A batch of 1: the first axis that splits (H) is split instead.
  frontend::NetBuilder one;
  auto y = one.CreateInput(DType::kFloat32, S({1, 32, 256, 128}), "y");
  one.MarkOutput(one.ReduceSum(y, {0, 2, 3}));
  EXPECT_EQ(CountKernels(Kernels(CompiledSource(*one.Build()))), 2);
  // Rows that fill the device (512 channels) or are short (64 rows of 4096): one kernel.
  frontend::NetBuilder wide;
  auto z = wide.CreateInput(DType::kFloat32, S({8, 512, 16, 16}), "z");
  wide.MarkOutput(wide.ReduceSum(z, {0, 2, 3}));
  EXPECT_EQ(CountKernels(Kernels(CompiledSource(*wide.Build()))), 1);
  frontend::NetBuilder short_rows;
  auto w = short_rows.CreateInput(DType::kFloat32, S({4, 64, 32, 32}), "w");
  short_rows.MarkOutput(short_rows.ReduceSum(w, {0, 2, 3}));
  EXPECT_EQ(CountKernels(Kernels(CompiledSource(*short_rows.Build()))), 1);
}

TEST(GroupScheduleNVGPU, FewLongRowsOfMegabytesAreNotComputedInTheirConsumersRows) {
  // A BatchNorm's mean read by a [C] consumer: in the consumer's rows it would be a block per
  // channel (64 blocks on 132 SMs) over a million elements; materialized, it is split.
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, S({8, 64, 32, 64}), "x");
  auto mean = b.Div(b.ReduceSum(x, {0, 2, 3}), b.Fill({64}, 8 * 32 * 64));
  b.MarkOutput(b.Mul(mean, mean));
  std::string split = Kernels(CompiledSource(*b.Build()));
  EXPECT_GE(CountKernels(split), 2) << split;
  EXPECT_THAT(split, HasSubstr("_rf"));
  // Softmaxes that stay one kernel, each row's max and sum computed in its output's rows: over
  // 8 rows of 32768 (a quarter of a million elements: the split's extra kernels would cost
  // more), and over 32 rows of 50257 (1.6 million, but no axis splits evenly: materialized, it
  // would be a block per row all the same, and a kernel more).
  for (const Shape& shape : {S({8, 32768}), S({32, 50257})}) {
    SCOPED_TRACE(hlir::ShapeToString(shape));
    frontend::NetBuilder small;
    auto y = small.CreateInput(DType::kFloat32, shape, "y");
    auto e = small.Exp(small.Sub(y, small.ReduceMax(y, {1}, /*keepdim=*/true)));
    small.MarkOutput(small.Div(e, small.ReduceSum(e, {1}, /*keepdim=*/true)));
    std::string rows = Kernels(CompiledSource(*small.Build()));
    EXPECT_EQ(CountKernels(rows), 1) << rows;
  }
}

TEST(GroupScheduleNVGPU, SymbolicSizesReduceLongRowsByABlockAndSplitColumns) {
  // A softmax over rows of symbolic length: the generic kernel (rows past every bucket of
  // hlir/row_buckets.h) takes a block of 256 threads per row
  // (cinn_like_symbolic_row_threads), each thread reading 4 floats at a time in the
  // reductions too; a column sum over symbolic rows and columns: chunks of 256 rows on
  // blockIdx.y (the last chunk's reads guarded), then their sum.
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, {hlir::Dim::Symbol("s0"), hlir::Dim::Symbol("s1")}, "x");
  b.MarkOutput(b.Softmax(x));
  const std::string all = Kernels(CompiledSource(*b.Build(), "rows"));
  EXPECT_EQ(CountKernels(all), 1 + std::size(hlir::kRowBuckets));
  std::string rows = KernelNamed(all, "rows_kernel");
  EXPECT_THAT(rows, HasSubstr("cinn_like_block_reduce_max<256>"));
  EXPECT_THAT(rows, Not(HasSubstr("threadIdx.y")));
  // float4 loads of x in the max, the sum (each twice: partition_loops' main part and tail)
  // and the quotient; the reductions combine the vector's lanes into the thread's partial.
  // The kernel is versioned for alignment on its pointers and on s1 (the rows' stride): the
  // aligned body tests no vector's address.
  EXPECT_EQ(CountOccurrences(rows, "float4 x_v"), 5) << rows;
  EXPECT_THAT(rows, HasSubstr("s1 % 8 == 0)"));
  EXPECT_EQ(CountOccurrences(rows, "% 16 == 0"), 1) << rows;
  // No copy makes s1 a multiple of 8: the host launches it as it is.
  EXPECT_THAT(CompiledHostIR(*b.Build(), "rows"), Not(HasSubstr("%rows_kernel.misaligned")));
  EXPECT_THAT(rows, HasSubstr("cinn_like_maximumf(cinn_like_maximumf(cinn_like_maximumf("));
  // A row sum alone: 256 threads per row past the buckets, a warp per row within them (one
  // kernel serves every bucket).
  frontend::NetBuilder r;
  auto z = r.CreateInput(DType::kFloat32, {hlir::Dim::Symbol("s0"), hlir::Dim::Symbol("s1")}, "z");
  r.MarkOutput(r.ReduceSum(z, {1}));
  const std::string sums = Kernels(CompiledSource(*r.Build(), "sums"));
  EXPECT_EQ(CountKernels(sums), 2);
  EXPECT_THAT(KernelNamed(sums, "sums_kernel"), HasSubstr("__launch_bounds__(256)"));
  EXPECT_THAT(KernelNamed(sums, "sums_rows_le_2048_kernel"), HasSubstr("__launch_bounds__(32)"));
  frontend::NetBuilder c;
  auto y = c.CreateInput(DType::kFloat32, {hlir::Dim::Symbol("s0"), hlir::Dim::Symbol("s1")}, "y");
  c.MarkOutput(c.ReduceSum(y, {0}));
  std::string cols = Kernels(CompiledSource(*c.Build(), "cols"));
  EXPECT_EQ(CountKernels(cols), 2);
  // The chunks share blockIdx.x with the columns' blocks (blockIdx.y stops at 65535).
  EXPECT_THAT(cols, HasSubstr("k0_outer_i_outer_fused = blockIdx.x"));
  EXPECT_THAT(cols, Not(HasSubstr("blockIdx.y")));
  // The chunk's loop: its main part (the rows before s0) unguarded, under one test of the
  // column, then the tail with the row's guard.
  EXPECT_THAT(cols,
              HasSubstr("k0_inner < min(256, max(k0_outer_i_outer_fused / idx0 * -256 + s0, 0));"));
  EXPECT_THAT(cols, HasSubstr("(s0 + 255) / 256"));
  EXPECT_THAT(cols, HasSubstr("* 256 + k0_inner < s0"));
  EXPECT_THAT(cols, Not(HasSubstr("< s0 ?")));
}

TEST(GroupScheduleNVGPU, BucketsKeepTheirKernelsBesideNestsThatWouldShareOne) {
  // A row sum over rows of symbolic length (256 threads per row in the generic entry, a warp
  // per row in the buckets) beside an independent row sum over rows of 4096 (256 threads per
  // row, as many rows): in the generic entry the two nests have one launch shape and would
  // share a kernel, in the buckets not, and MergeRowBuckets pairs the entries' statements one
  // by one; the entries are lowered with a kernel per nest, so the buckets stay.
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat32, {hlir::Dim::Symbol("s0"), hlir::Dim::Symbol("s1")}, "x");
  auto y = b.CreateInput(DType::kFloat32, {hlir::Dim::Symbol("s0"), hlir::Dim::Known(4096)}, "y");
  b.MarkOutput(b.ReduceSum(x, {1}));
  b.MarkOutput(b.ReduceSum(y, {1}));
  const std::string all = Kernels(CompiledSource(*b.Build(), "pair"));
  EXPECT_NE(all.find("pair_rows_le_2048_kernel"), std::string::npos) << all;
}

TEST(GroupScheduleNVGPU, EverySymbolicCaseCompilesToPtx) {
  // The Programs tests/gpu/symbolic_gpu_test.cc runs on the GPU, each with its buckets: the
  // CUDA source of every one compiles (a tactic that fails on a row's shape fails here in CI).
  for (const auto& c : testing::SymbolicCases()) {
    SCOPED_TRACE(c.name);
    EXPECT_GT(CountKernels(CompiledSource(c.program, "case")), 0);
  }
}

TEST(GroupScheduleNVGPU, RowsOfSymbolicLengthHaveABucketPerBoundChosenByTheEntry) {
  // A float16 softmax over rows of symbolic length: in the bucket of rows of at most 512, each
  // of a warp's lanes holds 16 elements of its row in registers (read once, two 16-byte
  // vectors; exp computed once), 8 rows per block; the host entry launches the tightest
  // bucket's kernel the row length fits, else the generic one.
  frontend::NetBuilder b;
  auto x = b.CreateInput(DType::kFloat16, {hlir::Dim::Symbol("s0"), hlir::Dim::Symbol("s1")}, "x");
  b.MarkOutput(b.Softmax(x));
  const std::string all = Kernels(CompiledSource(*b.Build(), "buckets"));
  const std::string b512 = KernelNamed(all, "buckets_rows_le_512_kernel");
  ASSERT_FALSE(b512.empty()) << all;
  EXPECT_THAT(b512, HasSubstr("__half x_local[16];"));
  EXPECT_THAT(b512, HasSubstr("float softmax_0_exp_local[16];"));
  // Two loads: in the copy where the thread's 16 elements are all in the row, and again lane
  // by lane (the vectorizer's tail) in the copy where they are not.
  EXPECT_EQ(CountOccurrences(b512, "uint4 x_v"), 4) << b512;
  EXPECT_THAT(b512, HasSubstr("if (static_cast<int32_t>(threadIdx.x) * 16 + 15 < s1) {"));
  EXPECT_THAT(b512, HasSubstr("threadIdx.y"));
  EXPECT_THAT(b512, HasSubstr("cinn_like_block_reduce_sum<32>"));
  EXPECT_THAT(KernelNamed(all, "buckets_rows_le_2048_kernel"),
              HasSubstr("cinn_like_block_reduce_sum<128>"));
  auto module = CompileProgramModule(*b.Build(), ir::Target::NVGPU(90), "buckets");
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string entry = ir::ToString(*module->functions[0]);
  const size_t b128 = entry.find("s1 <= 128"), b512_at = entry.find("s1 <= 512"),
               b2048 = entry.find("s1 <= 2048");
  ASSERT_NE(b128, std::string::npos) << entry;
  EXPECT_LT(b128, b512_at) << entry;
  EXPECT_LT(b512_at, b2048) << entry;
  EXPECT_THAT(entry, HasSubstr("\"buckets_kernel\"")) << entry;
}

TEST(GroupScheduleNVGPU, TheDumpNamesEachKernelsTacticAndWhy) {
  const std::string dir = ::testing::TempDir() + "/group_schedule_dump";
  const std::string old = FLAGS_cinn_like_dump_dir;
  FLAGS_cinn_like_dump_dir = dir;
  CompiledSource(SoftmaxProgram(S({64, 512})), "softmax_entry");
  CompiledSource(SoftmaxProgram(S({4, 8, 16, 128})), "heads_entry");
  CompiledSource(ReduceRows(8192, 1024, 0), "columns_entry");
  CompiledSource(ScaledRowSum(64, 512), "mean_entry");
  {
    frontend::NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({8, 64, 32, 64}), "x");
    b.MarkOutput(b.ReduceSum(x, {0, 2, 3}));
    CompiledSource(*b.Build(), "channels_entry");
  }
  FLAGS_cinn_like_dump_dir = old;
  auto read = [&](const std::string& file) {
    std::stringstream text;
    text << std::ifstream(dir + "/" + file).rdbuf();
    return text.str();
  };
  EXPECT_THAT(read("softmax_entry.tactics.txt"),
              HasSubstr("row_reduction.persistent_row (64 rows of 512 elements, 3 stages "
                        "reading each row: in registers 64 threads x 8 elements of inputs x "
                        "(read once) and of softmax_0_exp (computed once), 4 row(s) per block)"));
  // Attention scores [batch, heads, queries, keys]: blocks take 8 queries of one head.
  EXPECT_THAT(read("heads_entry.tactics.txt"),
              HasSubstr("row_reduction.persistent_row (512 rows of 128 elements, 3 stages "
                        "reading each row: in registers 32 threads x 4 elements of inputs x "
                        "(read once) and of softmax_0_exp (computed once), 8 row(s) per "
                        "block)"));
  // A row sum scaled: nothing is read twice, a warp per row.
  EXPECT_THAT(read("mean_entry.tactics.txt"),
              HasSubstr("row_reduction.warp_per_row (64 rows of 512 elements (<= 1024): a "
                        "warp per row, 8 rows per block"));
  EXPECT_THAT(read("columns_entry.tactics.txt"),
              HasSubstr("column_reduction.two_stage (1024 columns fill 4 blocks"));
  EXPECT_THAT(read("channels_entry.tactics.txt"),
              HasSubstr("row_reduction.two_stage (64 rows (< 264 blocks for 132 SMs) of 16384 "
                        "elements: reduce axis"));
}

/// The CUDA source and tactics of one-group `program` with its knob at `value` (the tuner's
/// choice, cinn_like/tune/autotune.h), after checking the source compiles to PTX.
std::pair<std::string, std::string> WithKnob(const Program& program, int value) {
  const ir::Target target = ir::Target::NVGPU(90);
  auto graph = frontend::BuildGraph(program);
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto fused = hlir::RunGraphPasses(*graph, hlir::TargetPassOptions(target, "knob"));
  EXPECT_TRUE(fused.ok() && fused->groups.size() == 1);
  std::vector<hlir::TacticChoice> tactics;
  auto module = hlir::CompileFusedGraph(*fused, target, "knob", {{0, value}}, &tactics);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  auto src = (*backends::Compiler::Create(target))->GetSourceCode(*module);
  EXPECT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(backends::nvrtc::Compiler().Compile(*src, 90, false, "knob").ok());
  return {*src, hlir::TacticsText(tactics)};
}

TEST(GroupScheduleNVGPU, LongRowsAloneAreReadInUnrolledVectors) {
  // 8192 floats a row, 256 threads: 8 vectors of 4 floats per thread, unrolled (no loop).
  auto [src, why] = WithKnob(ReduceRows(64, 8192, 1), 0);
  EXPECT_EQ(CountOccurrences(Kernels(src), "reinterpret_cast<const float4*>(&x["), 8) << src;
  EXPECT_THAT(Kernels(src), Not(HasSubstr("for (")));
  EXPECT_THAT(why, HasSubstr("256 threads per row (a kernel of its own), 4-element vectors per "
                             "thread, 8 each"));
  // A row that is no multiple of 4 x 256 elements: scalar loads, in a loop.
  std::string odd = Kernels(CompiledSource(ReduceRows(64, 8000, 1)));
  EXPECT_THAT(odd, Not(HasSubstr("float4")));
  EXPECT_THAT(odd, HasSubstr("for ("));
  // A row group whose consumer keeps the reduced dim (a block per row): vectors too.
  {
    NetBuilder b;
    auto sum = b.ReduceSum(b.CreateInput(DType::kFloat32, S({4, 8192}), "x"), {1}, true);
    b.MarkOutput(b.Mul(sum, b.Fill({4, 1}, 2.0)));
    EXPECT_THAT(Kernels(CompiledSource(*b.Build())), HasSubstr("float4 x_v"));
  }
  // Two reduce axes (a fused index, not always contiguous): scalar loads.
  {
    NetBuilder b;
    b.MarkOutput(b.ReduceSum(b.CreateInput(DType::kFloat32, S({64, 64, 128}), "x"), {1, 2}));
    EXPECT_THAT(Kernels(CompiledSource(*b.Build())), Not(HasSubstr("float4")));
  }
  // Every dtype's 16-byte vectors compile (CompiledSource checks the PTX), float16 and bfloat16
  // sums too (accumulated in float32, cast back by the group's consumer: a row group). The sum
  // and the max, independent nests of one launch shape, are one kernel (GroupIndependentNests)
  // in which each reads its vectors.
  const std::pair<DType, const char*> kVectors[] = {
      {DType::kFloat16, "uint4 x_v"}, {DType::kBFloat16, "uint4 x_v"},
      {DType::kInt8, "uint4 x_v"},    {DType::kFloat64, "double2 x_v"},
      {DType::kInt32, "int4 x_v"},    {DType::kInt64, "longlong2 x_v"}};
  for (const auto& [dt, vector] : kVectors) {
    SCOPED_TRACE(hlir::DTypeName(dt));
    NetBuilder b;
    auto x = b.CreateInput(dt, S({4, 8192}), "x");
    b.MarkOutput(b.ReduceSum(x, {1}));
    b.MarkOutput(b.ReduceMax(x, {1}));
    std::string kernels = Kernels(CompiledSource(*b.Build()));
    EXPECT_EQ(CountKernels(kernels), 1) << kernels;
    const size_t first = kernels.find(vector);
    ASSERT_NE(first, std::string::npos) << kernels;
    EXPECT_NE(kernels.find(vector, first + 1), std::string::npos) << kernels;
  }
}

TEST(GroupScheduleNVGPU, ReductionsLoadWhatTheyReadOnceEvictFirst) {
  // A row sum's vectors and a split column sum's scalars: each element of x read by one thread,
  // once (__ldcs: evict first).
  EXPECT_THAT(Kernels(CompiledSource(ReduceRows(64, 8192, 1))),
              HasSubstr("__ldcs(reinterpret_cast<const float4*>(&x["));
  EXPECT_THAT(Kernels(CompiledSource(ReduceRows(8192, 1024, 0))), HasSubstr("__ldcs(&x["));
  // A float16 sum (a row group: accumulated in float32, cast back) and a float64 one.
  for (const auto& [dt, load] :
       {std::pair{DType::kFloat16, "__ldcs(reinterpret_cast<const uint4*>(&x["},
        std::pair{DType::kFloat64, "__ldcs(reinterpret_cast<const double2*>(&x["}}) {
    NetBuilder b;
    b.MarkOutput(b.ReduceSum(b.CreateInput(dt, S({64, 8192}), "x"), {1}));
    EXPECT_THAT(Kernels(CompiledSource(*b.Build())), HasSubstr(load));
  }
  // A sum of a sum: the first kernel accumulates into its output (read back in its loop), which
  // the second reads once; the first keeps plain loads of it (a volatile __ldcs would keep the
  // accumulator in memory).
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({512, 300, 1024}), "x");
    b.MarkOutput(b.ReduceSum(b.ReduceSum(x, {0}), {1}));
    std::string src = Kernels(CompiledSource(*b.Build()));
    EXPECT_THAT(src, HasSubstr("__ldcs(&x["));
    EXPECT_THAT(src, Not(HasSubstr("__ldcs(&reduce_sum"))) << src;
  }
  // Plain loads in elementwise kernels (measured no faster with the hint), and where an element
  // is read again: by the max, the sum and the output of a softmax (a row held in registers or
  // not), by two kernels, by a matmul's tiles, through windows.
  std::vector<Program> again = {BiasRelu(DType::kFloat32, 64, 1024)};
  for (const Shape& s : {S({64, 4096}), S({64, 512}), S({64, 100000})}) {
    again.push_back(SoftmaxProgram(s));
  }
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({64, 1024}), "x");
    b.MarkOutput(b.Relu(x));
    b.MarkOutput(b.ReduceSum(x, {0}));
    again.push_back(*b.Build());
  }
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({64, 64}), "x");
    b.MarkOutput(b.Matmul(x, b.CreateInput(DType::kFloat32, S({64, 64}), "y")));
    again.push_back(*b.Build());
  }
  {
    NetBuilder b;
    b.MarkOutput(b.MaxPool2d(b.CreateInput(DType::kFloat32, S({8, 16, 32, 32}), "x"), {2, 2}));
    again.push_back(*b.Build());
  }
  {
    // Recomputed by each thread for each of the consumer's 64 elements of a row.
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({1024, 8}), "x");
    auto y = b.CreateInput(DType::kFloat32, S({1024, 64}), "y");
    b.MarkOutput(b.Mul(y, b.ReduceSum(x, {1}, /*keepdim=*/true)));
    again.push_back(*b.Build());
  }
  {
    // Two loads of x (x * x): both would be printed.
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({64, 8192}), "x");
    b.MarkOutput(b.ReduceSum(b.Mul(x, x), {1}));
    again.push_back(*b.Build());
  }
  gflags::FlagSaver saver;
  FLAGS_cinn_like_extern_libs = false;  // the matmul generated, not a cuBLAS call
  for (const Program& p : again) {
    std::string src = Kernels(CompiledSource(p));
    EXPECT_THAT(src, Not(HasSubstr("__ldcs"))) << src;
    EXPECT_THAT(src, HasSubstr("x[")) << src;
  }
}

TEST(GroupScheduleNVGPU, TunerKnobsChangeTheKernel) {
  // Elementwise: bytes per access, the vector type; an unknown value is the default.
  EXPECT_THAT(WithKnob(BiasRelu(DType::kFloat32, 64, 1024), 8).first,
              HasSubstr("float2 x_v0 = *reinterpret_cast<const float2*>(&x["));
  EXPECT_THAT(WithKnob(BiasRelu(DType::kFloat16, 64, 1024), 8).first,
              HasSubstr("uint2 x_v0 = *reinterpret_cast<const uint2*>(&x["));
  auto own = WithKnob(BiasRelu(DType::kFloat32, 64, 1024), 100);
  EXPECT_THAT(own.first, HasSubstr("float4 x_v0 = *reinterpret_cast<const float4*>(&x["));
  EXPECT_THAT(own.second, HasSubstr("[vector_bytes 16 of 16/8]"));
  // Doubles: 8 bytes is one lane, no vector; no knob.
  EXPECT_THAT(WithKnob(BiasRelu(DType::kFloat64, 64, 1024), 8).second, Not(HasSubstr("[")));
  // A persistent row of 2048 floats: 32 bytes a thread is 256 threads of 8, 16 bytes 512 of 4.
  EXPECT_THAT(WithKnob(SoftmaxProgram(S({64, 2048})), 32).second,
              HasSubstr("256 threads x 8 elements"));
  EXPECT_THAT(WithKnob(SoftmaxProgram(S({64, 2048})), 16).second,
              HasSubstr("512 threads x 4 elements"));
  EXPECT_THAT(WithKnob(SoftmaxProgram(S({64, 2048})), 8).second,
              HasSubstr("1024 threads x 2 elements"));
  // Float16 rows of 512 in shares of 8 bytes: 4 halves per thread, read as one 8-byte vector.
  NetBuilder b;
  b.MarkOutput(b.Softmax(b.CreateInput(DType::kFloat16, S({64, 512}), "x")));
  auto half = WithKnob(*b.Build(), 8);
  EXPECT_THAT(half.second, HasSubstr("128 threads x 4 elements"));
  EXPECT_THAT(half.first, HasSubstr("uint2"));
  // A warp per row: rows per block.
  EXPECT_THAT(WithKnob(ScaledRowSum(64, 512), 2).second,
              HasSubstr("a warp per row, 2 rows per block"));
  // A row reduction alone: threads per row; a two-stage column reduction: its chunks.
  EXPECT_THAT(WithKnob(ReduceRows(64, 8192, 1), 1024).first, HasSubstr("__launch_bounds__(1024)"));
  // (8192 rows of 1024 columns: 128 chunks of 64 by default, 4 x 128 = 512 blocks for the 264
  // that fill 132 SMs; the tuner may take twice as many or half.)
  EXPECT_THAT(WithKnob(ReduceRows(8192, 1024, 0), 64).second,
              HasSubstr("split into 64 chunks of 128"));
  EXPECT_THAT(WithKnob(ReduceRows(8192, 1024, 0), 0).second,
              HasSubstr("split into 128 chunks of 64, partials then their sum (deterministic)) "
                        "[column_chunks 128 of 128/256/64]"));
}

}  // namespace
}  // namespace cinn_like::testing
