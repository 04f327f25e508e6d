/// \file CodeGenCudaDev: the device kernels of a split module as one CUDA C translation unit.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/codegen_c.h"
#include "backends/cuda/kernel_alignment.h"
#include "ir/module.h"

namespace cinn_like::backends {

/// One CUDA C translation unit and the kernels it defines (the names a loaded module is asked
/// for: library kernels too).
struct CudaUnit {
  std::string source;
  std::vector<std::string> kernels;
};

class CodeGenCudaDev : public CodeGenC {
 public:
  /// `extern "C" __global__ void __launch_bounds__(threads) name(const float* __restrict__ A,
  /// ..., int32_t n)` per kernel (inputs const, launch bounds when the block is constant). A bound
  /// loop becomes `int v = blockIdx.x;` (or threadIdx), with a guard `if (v < extent)` only when
  /// its extent is not the launch dimension itself.
  /// The kernels are those of the module's host entries (ir::DeviceKernels), in order.
  static absl::StatusOr<std::string> Generate(const ir::Module& module);
  /// The same kernels as up to `max_units` translation units (never more than there are
  /// kernels), to compile at once: the longest kernel first, each to the unit with the least
  /// source so far; each unit has the prelude, headers and helpers its kernels need, the first
  /// the library kernels other than `prebuilt` (those the caller has compiled already). One unit
  /// is Generate's source.
  static absl::StatusOr<std::vector<CudaUnit>> GenerateUnits(
      const ir::Module& module, int max_units, const std::set<std::string>& prebuilt = {});
  /// What every unit starts with: a comment naming `title`, the headers of the types this
  /// generator's kernels use and the fixed-width integer types (NVRTC has no <cstdint>).
  std::string Preamble(const std::string& title) const;

  /// The CUDA vector type holding `bytes` (16, 8 or 4) of elements of `elem`, and how a
  /// lane is spelled: float4 and `.x`..`.w`; double2; uint4 with a reinterpreting accessor
  /// for elements without a native vector type (half, int8). Empty when there is none.
  struct VectorType {
    std::string name;
    int lanes = 0;
    bool native = false;  // components .x .y .z .w
  };
  static VectorType CudaVectorType(const ir::Type& elem, int bytes);

 protected:
  const char* Language() const override { return "CUDA"; }
  std::string ScopePrefix(ir::MemoryScope scope) override;
  void PrintBoundFor(const ir::For* op) override;
  /// Block-reduce intrinsics print as calls of the helpers of block_reduce_source.h, which the
  /// translation unit then defines at its top.
  void VisitCall(const ir::Call* op) override;
  /// sync_threads is `__syncthreads`, the block reduces the helpers of block_reduce_source.h;
  /// the host-side and CPU intrinsics have no spelling in device code.
  const char* IntrinsicFunctionName(ir::IntrinsicOp op) override;

  // Types, casts and math spellings: codegen_cuda_types.cc. float16 is __half, bfloat16 is
  // __nv_bfloat16; their headers are included only when a kernel uses them.
  std::string TypeName(const ir::Type& t) override;
  std::string FloatLiteral(const ir::Type& t, double v) override;
  std::string WidenToFloat(const ir::Type& t, const std::string& e) override;
  std::string NarrowFromFloat(const ir::Type& t, const std::string& e) override;
  std::string MathFunctionName(ir::MathOp op, const ir::Type& t) override;
  /// fast_recip of float32: `cinn_like_rcp_approx(x)`, PTX rcp.approx.f32 without flush to
  /// zero, defined in the units whose kernels use it.
  std::string Reciprocal(const ir::Type& t, const std::string& x) override;
  bool FastMath() const override;
  void VisitCast(const ir::Cast* op) override;
  /// A scalar load of a buffer of evict_first_ of a type __ldcs takes (float, double, the
  /// integers) is `__ldcs(&buf[i])`; others as in C.
  void VisitLoad(const ir::Load* op) override;
  /// The #include lines of the 16-bit float headers this translation unit needs.
  std::string TypeIncludes() const;

 private:
  /// A vector store `buf[ramp(base, 1, L)] = value` as 16-, 8- or 4-byte vector accesses
  /// (float4, float2, double2, uint4 for 8 halves, ...): alone for a store of the kernel's
  /// alignment plan while printing its aligned version, else when every dense access of the
  /// statement is aligned at run time, and otherwise as one scalar store per lane:
  ///   if ((addr(&A[b]) | addr(&C[b])) % 16 == 0) {
  ///     float4 A_v0 = *reinterpret_cast<const float4*>(&A[b]);  ...lane by lane on .x .y .z .w
  ///     *reinterpret_cast<float4*>(&C[b]) = C_v1;
  ///   } else { C[b] = A[b] + ...; C[b + 1] = ...; }
  void PrintVectorStore(const ir::Store* op) override;
  /// Kernel versioning for alignment (kernel_alignment.h). Where the host realigns the
  /// pointers, the kernel holds the aligned version alone: the plan's stores print as vector
  /// accesses with no test. Otherwise (size assumptions) the kernel tests this, once,
  /// `(reinterpret_cast<unsigned long long>(A) | ...) % 16 == 0 && n % 8 == 0`, and arguments
  /// that fail it go to `<kernel>_unaligned`, the body with the per-statement checks: one uniform
  /// branch per kernel instead of one per vector statement (a softmax kernel of rows of 512
  /// halves, H100: 0.144 -> 0.141 ms, Triton's 0.141). Empty when the plan is.
  static std::string KernelAlignmentTest(const ir::LoweredFuncNode& kernel,
                                         const KernelAlignment& plan);
  std::set<const ir::Store*> aligned_stores_;
  bool assume_aligned_ = false;  // printing the aligned version of the kernel
  int vector_count_ = 0;         // numbers the vector temporaries of a function
  void AddKernel(const ir::LoweredFuncNode& kernel);
  const ir::LoweredFuncNode* kernel_ = nullptr;
  /// The kernel's input buffers read once (ir::BufferNode::read_once): loaded evict-first.
  std::set<const ir::BufferNode*> evict_first_;
  bool uses_block_reduce_ = false;
  bool uses_rcp_approx_ = false;  // fast_recip: the unit defines cinn_like_rcp_approx
  bool uses_fp16_ = false;
  bool uses_bf16_ = false;
};

}  // namespace cinn_like::backends
