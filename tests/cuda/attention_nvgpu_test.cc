/// \file The fused attention kernel on NVGPU without a GPU: the graph compiler's module launches
/// the library kernel from host code (no generated kernel, no [Lq, Lk] buffer), the CUDA source
/// holds its template and instance and compiles to PTX for every case of the op table and every
/// tile bucket, dtype and mask; logsumexp becomes a workspace when only `out` is read; the
/// cases the kernel does not take use the decomposed compute; bad kernel names are errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/compiler.h"
#include "backends/cuda/attention_kernel_source.h"
#include "backends/cuda/library_kernels.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/host_ir.h"
#include "ir/flags.h"
#include "ir/printer.h"
#include "tests/attention_cases.h"
#include "tests/fusion_cases.h"
#include "tests/op_cases.h"

namespace cinn_like::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const ir::Target kTarget = ir::Target::NVGPU(90);

absl::StatusOr<ir::Module> Compile(const hlir::Graph& graph) {
  return hlir::CompileGraph(graph, kTarget, "attn");
}

/// The CUDA source of `module`, compiled to PTX (the test fails when it does not compile).
std::string SourceAndPtx(const ir::Module& module, std::string* ptx_out = nullptr) {
  auto compiler = backends::Compiler::Create(kTarget);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  if (!compiler.ok()) return "";
  auto src = (*compiler)->GetSourceCode(module);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return "";
  backends::nvrtc::Compiler nvrtc;
  auto ptx = nvrtc.Compile(*src, 90, /*to_cubin=*/false, module.name);
  EXPECT_TRUE(ptx.ok()) << ptx.status() << "\n" << *src;
  if (ptx.ok() && ptx_out) *ptx_out = *ptx;
  return *src;
}

TEST(AttentionNVGPU, EveryCaseLaunchesTheLibraryKernelAndCompilesToPtx) {
  int cases = 0;
  for (const OpCase& c : AllOpCases()) {
    if (c.op != "attention" || c.dtypes[0] == DType::kFloat64) continue;
    SCOPED_TRACE(c.Describe());
    ++cases;
    auto graph = CaseGraph(c);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto module = Compile(*graph);
    ASSERT_TRUE(module.ok()) << module.status();
    const ir::LoweredFunc& f = module->functions[0];
    // One launch of the library kernel from host code; nothing generated, no workspace.
    EXPECT_TRUE(f->kernels.empty()) << ir::ToString(*f);
    std::string host = ir::ToString(f->body);
    EXPECT_THAT(host, HasSubstr("launch_kernel(\"cinn_like_attention_")) << host;
    EXPECT_THAT(host, Not(HasSubstr("allocate"))) << host;
    std::vector<std::string> names = backends::LibraryKernelNames(*module);
    ASSERT_EQ(names.size(), 1u);
    std::string ptx;
    std::string src = SourceAndPtx(*module, &ptx);
    EXPECT_THAT(src, HasSubstr("cinn_like_attention::Forward<"));
    EXPECT_THAT(src, HasSubstr("__shared__ __align__(16) float qs["));
    EXPECT_THAT(ptx, HasSubstr(".entry " + names[0]));
    // The host passes the grid, the 128 threads and the buffers to the runtime's launch.
    auto ir = backends::CudaHostIR(*module);
    ASSERT_TRUE(ir.ok()) << ir.status();
    EXPECT_THAT(*ir, HasSubstr("@" + names[0] + "_ptr_"));
    EXPECT_THAT(*ir, HasSubstr("i32 128, i32 1, i32 1"));
  }
  EXPECT_GE(cases, 8);
}

TEST(AttentionNVGPU, HfLayoutsAreReadInPlaceWithNoCopyKernel) {
  // HF's [B, S, H * D] projections viewed [B, S, H, D] and transposed, repeat_kv's expansion
  // and the output's transpose back (hlir/pass/attention_layout.h): one launch of the library
  // kernel, no generated kernel (no copy), the strides passed, in every element dtype.
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(hlir::DTypeName(t));
    auto module =
        CompileProgramModule(HfLayoutAttention(t, 2, 24, 8, 2, 64, false, true), kTarget, "attn");
    ASSERT_TRUE(module.ok()) << module.status();
    const ir::LoweredFunc& f = module->functions[0];
    // One generated kernel: the output's view as [B, S, H * D] is the graph's output, stored by
    // a copy (a model's next matmul reads the view in place); nothing copies q, k or v.
    ASSERT_EQ(f->kernels.size(), 1u) << ir::ToString(*f);
    EXPECT_THAT(ir::ToString(*f->kernels[0]), Not(HasSubstr("q["))) << ir::ToString(*f);
    const std::string host = ir::ToString(f->body);
    EXPECT_THAT(host, HasSubstr("launch_kernel(\"cinn_like_attention_")) << host;
    EXPECT_THAT(host, HasSubstr(", q, k, v, ")) << host;
    // q [2, 24, 8, 64] read as [B, H, S, D]: batch stride 24 * 8 * 64, head 64, row 8 * 64,
    // from its first element; k and v [2, 24, 2, 64]: batch 24 * 2 * 64, row 2 * 64; out as q.
    EXPECT_THAT(host, HasSubstr("int64(12288), int64(64), int64(512), int64(0), int64(3072), "
                                "int64(64), int64(128), int64(0), int64(3072), int64(64), "
                                "int64(128), int64(0), int64(12288), int64(64), int64(512), "
                                "int64(0)"))
        << host;
    std::string ptx;
    SourceAndPtx(*module, &ptx);
    EXPECT_THAT(ptx, HasSubstr(".entry cinn_like_attention_"));
  }
}

TEST(AttentionNVGPU, GPT2sPackedProjectionIsReadInPlace) {
  // q, k and v as heads of the [B, S, 3 H D] projection: no slice copied, the offsets passed.
  auto module =
      CompileProgramModule(PackedQkvAttention(DType::kFloat16, 2, 24, 4, 64), kTarget, "attn");
  ASSERT_TRUE(module.ok()) << module.status();
  const ir::LoweredFunc& f = module->functions[0];
  ASSERT_EQ(f->kernels.size(), 1u) << ir::ToString(*f);  // the output's view, as above
  const std::string host = ir::ToString(f->body);
  EXPECT_THAT(host, HasSubstr(", qkv, qkv, qkv, ")) << host;
  // Row stride 3 * 4 * 64; k's first element 4 * 64, v's 8 * 64.
  EXPECT_THAT(host, HasSubstr("int64(18432), int64(64), int64(768), int64(256), ")) << host;
  EXPECT_THAT(host, HasSubstr("int64(18432), int64(64), int64(768), int64(512), ")) << host;
  std::string ptx;
  SourceAndPtx(*module, &ptx);
  EXPECT_THAT(ptx, HasSubstr(".entry cinn_like_attention_float16_none_d64"));
}

/// attention(q, k, v) with only `out` read, then out + 1.
hlir::Graph OutThenAdd(DType t, int64_t head_dim) {
  frontend::NetBuilder b;
  auto q = b.CreateInput(t, S({2, 4, 16, head_dim}), "q");
  auto k = b.CreateInput(t, S({2, 2, 24, head_dim}), "k");
  auto v = b.CreateInput(t, S({2, 2, 24, head_dim}), "v");
  auto out = b.Op("attention", {q, k, v}, {{"causal", true}})[0];
  b.MarkOutput(b.Op("add", {out, b.Op("fill", {},
                                      {{"shape", std::vector<int64_t>{1}},
                                       {"value", 1.0},
                                       {"dtype", std::string(hlir::DTypeName(t))}})[0]})[0]);
  return *frontend::BuildGraph(*b.Build());
}

TEST(AttentionNVGPU, LogsumexpIsAWorkspaceAndTheConsumerLaunchesAfter) {
  auto module = Compile(OutThenAdd(DType::kFloat16, 64));
  ASSERT_TRUE(module.ok()) << module.status();
  const ir::LoweredFunc& f = module->functions[0];
  std::string host = ir::ToString(f->body);
  // logsumexp [2, 4, 16] float32 and out are device workspaces around the launches.
  EXPECT_THAT(host, HasSubstr("allocate")) << host;
  size_t attention = host.find("launch_kernel(\"cinn_like_attention_float16_none_d64_q64_k64_tc\"");
  size_t add = host.find("launch_kernel(\"attn_kernel");
  ASSERT_NE(attention, std::string::npos) << host;
  ASSERT_NE(add, std::string::npos) << host;
  EXPECT_LT(attention, add);
  std::string src = SourceAndPtx(*module);
  EXPECT_THAT(src, HasSubstr("__global__ void __launch_bounds__(128) "
                             "cinn_like_attention_float16_none_d64_q64_k64_tc("));
}

TEST(AttentionNVGPU, EveryBucketDTypeAndMaskCompilesToPtx) {
  std::vector<std::string> names;
  const char* dtypes[] = {"float32", "float16", "bfloat16"};
  const char* masks[] = {"none", "bool", "float32", "float16", "bfloat16"};
  const char* tiles[] = {"d32_q32_k64", "d64_q32_k64", "d128_q32_k32", "d256_q16_k16"};
  int n = 0;
  for (const char* tile : tiles) {
    for (const char* t : dtypes) {
      names.push_back(absl::StrCat("cinn_like_attention_", t, "_", masks[n++ % 5], "_", tile));
    }
  }
  std::vector<std::string> tensor_cores;
  for (const char* t : {"float16", "bfloat16", "float32"}) {
    for (const char* tile : {"d32_q64_k64_tc", "d64_q64_k64_tc", "d128_q64_k64_tc"}) {
      if (t == std::string("float32") && tile == std::string("d128_q64_k64_tc")) continue;
      tensor_cores.push_back(
          absl::StrCat("cinn_like_attention_", t, "_", masks[n++ % 5], "_", tile));
    }
  }
  // Dropout's instances (the Philox of the attention namespace), on both kinds of cores.
  names.push_back("cinn_like_attention_float32_none_d64_q32_k64_drop");
  tensor_cores.push_back("cinn_like_attention_bfloat16_bfloat16_d64_q64_k64_tc_drop");
  tensor_cores.push_back("cinn_like_attention_float32_bool_d64_q64_k64_tc_drop");
  names.insert(names.end(), tensor_cores.begin(), tensor_cores.end());
  // sm_90: every kernel, the tensor-core ones with mma.sync and ldmatrix; sm_75 (before
  // tensor cores of this shape): the tensor-core kernels on their CUDA-core tiles.
  for (auto [arch, kernels] : {std::pair{90, names}, {75, tensor_cores}}) {
    SCOPED_TRACE(arch);
    auto src = backends::LibraryKernelsSource(kernels);
    ASSERT_TRUE(src.ok()) << src.status();
    backends::nvrtc::Compiler nvrtc;
    auto ptx = nvrtc.Compile("#include <math_constants.h>\n" + *src, arch, /*to_cubin=*/false,
                             "attention_variants");
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    for (const std::string& name : kernels) EXPECT_THAT(*ptx, HasSubstr(".entry " + name));
    EXPECT_THAT(*ptx, HasSubstr(".shared"));
    if (arch == 90) {
      EXPECT_THAT(*ptx, HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
      EXPECT_THAT(*ptx, HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
      // Keys by ldmatrix as they lie, values transposed, four 8x8 matrices at once; the tiles
      // copied by cp.async.
      EXPECT_THAT(*ptx, HasSubstr("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
      EXPECT_THAT(*ptx, HasSubstr("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
      EXPECT_THAT(*ptx, HasSubstr("cp.async.cg.shared.global"));
      // float32: tf32 pairs, each float split by round-to-nearest conversions.
      EXPECT_THAT(*ptx, HasSubstr("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
      EXPECT_THAT(*ptx, HasSubstr("cvt.rna.tf32.f32"));
    } else {
      EXPECT_THAT(*ptx, Not(HasSubstr("mma.sync")));
    }
  }
}

// The largest tensor-core tiles with every mask dtype, as CUBIN for sm_90: ptxas holds each
// kernel's static shared memory (key, value and a staged mask tile) to 48 KiB.
TEST(AttentionNVGPU, LargestTensorCoreTilesFitSharedMemory) {
  std::vector<std::string> names;
  for (const char* t : {"float16", "bfloat16"}) {
    for (const char* mask : {"none", "bool", "float32", "float16", "bfloat16"}) {
      names.push_back(absl::StrCat("cinn_like_attention_", t, "_", mask, "_d128_q64_k64_tc"));
    }
  }
  names.push_back("cinn_like_attention_float32_float32_d64_q64_k64_tc");
  auto src = backends::LibraryKernelsSource(names);
  ASSERT_TRUE(src.ok()) << src.status();
  backends::nvrtc::Compiler nvrtc;
  auto cubin = nvrtc.Compile("#include <math_constants.h>\n" + *src, 90, /*to_cubin=*/true,
                             "attention_tiles");
  EXPECT_TRUE(cubin.ok()) << cubin.status();
}

TEST(AttentionNVGPU, CasesTheKernelDoesNotTakeUseTheDecomposedCompute) {
  for (auto [t, d] : {std::pair{DType::kFloat64, int64_t{16}}, {DType::kFloat32, int64_t{300}}}) {
    auto module = Compile(OutThenAdd(t, d));
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_TRUE(backends::LibraryKernelNames(*module).empty());
    EXPECT_FALSE(module->functions[0]->kernels.empty());
    SourceAndPtx(*module);
  }
  gflags::FlagSaver saver;
  FLAGS_cinn_like_extern_libs = false;
  auto module = Compile(OutThenAdd(DType::kFloat32, 64));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(backends::LibraryKernelNames(*module).empty());
}

TEST(AttentionNVGPUError, BadKernelNamesAreErrors) {
  EXPECT_TRUE(ir::AttentionKernelSpec::IsAttention("cinn_like_attention_float32_none_d64_q64_k32"));
  EXPECT_TRUE(
      backends::LibraryKernelsSource({"cinn_like_attention_float32_none_d64_q64_k32"}).ok());
  struct Bad {
    const char* name;
    const char* why;
  };
  for (const Bad& b :
       {Bad{"cinn_like_attention_float64_none_d64_q64_k32", "element dtype float64"},
        Bad{"cinn_like_attention_float32_int8_d64_q64_k32", "mask dtype int8"},
        Bad{"cinn_like_attention_float32_none_d48_q64_k32", "head dim d48"},
        Bad{"cinn_like_attention_float32_none_d64_q64_k48", "key tile k48"},
        Bad{"cinn_like_attention_float32_none_d64_q30_k32", "query tile q30"},
        Bad{"cinn_like_attention_float32_none_d256_q128_k64", "shared memory"},
        Bad{"cinn_like_attention_float32", "malformed name"},
        Bad{"cinn_like_attention_float32_none_d128_q64_k64_tc", "tensor-core tile"},
        Bad{"cinn_like_attention_float16_none_d256_q64_k64_tc", "tensor-core tile"},
        Bad{"cinn_like_attention_float16_none_d64_q64_k64_xx", "malformed name"},
        Bad{"cinn_like_attention_float16_none_d64_q64_k64_drop_tc", "malformed name"}}) {
    auto s = backends::LibraryKernelsSource({b.name});
    ASSERT_FALSE(s.ok()) << b.name;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(b.why));
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(b.name));
  }
  auto unknown = backends::LibraryKernelsSource({"some_kernel"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("kernel some_kernel is launched but neither generated for the module nor "
                        "a library kernel"));
}

}  // namespace
}  // namespace cinn_like::testing
