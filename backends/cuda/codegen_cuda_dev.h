/// \file CodeGenCudaDev: device kernels of a split module as one CUDA C translation unit.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "backends/codegen_c.h"
#include "ir/module.h"

namespace cinn_like::backends {

class CodeGenCudaDev : public CodeGenC {
 public:
  /// `extern "C" __global__ void __launch_bounds__(threads) name(const float* __restrict__ A,
  /// ..., int32_t n)` per kernel (inputs const, launch bounds when the block is constant). A bound
  /// loop becomes `int v = blockIdx.x;` (or threadIdx), with a guard `if (v < extent)` only when
  /// its extent is not the launch dimension itself.
  static absl::StatusOr<std::string> Generate(const ir::Module& device_module);

 protected:
  const char* Language() const override { return "CUDA"; }
  std::string ScopePrefix(ir::MemoryScope scope) override;
  void PrintBoundFor(const ir::For* op) override;
  /// Block-reduce intrinsics print as calls of the helpers of block_reduce_source.h, which the
  /// translation unit then defines at its top.
  void VisitCall(const ir::Call* op) override;

 private:
  void AddKernel(const ir::LoweredFuncNode& kernel);
  const ir::LoweredFuncNode* kernel_ = nullptr;
  int guarded_bound_loops_ = 0;  // enclosing bound loops printed with an `if (v < extent)`
  bool uses_block_reduce_ = false;
};

}  // namespace cinn_like::backends
