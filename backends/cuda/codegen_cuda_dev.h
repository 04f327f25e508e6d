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
  /// ..., int n)` per kernel. A bound loop becomes `int v = blockIdx.x;` (or threadIdx), with
  /// a guard `if (v < extent)` only when its extent is not the launch dimension itself.
  static absl::StatusOr<std::string> Generate(const ir::Module& device_module);

 protected:
  std::string ScopePrefix(ir::MemoryScope scope) override;
  void PrintBoundFor(const ir::For* op) override;

 private:
  void AddKernel(const ir::LoweredFuncNode& kernel);
  const ir::LoweredFuncNode* kernel_ = nullptr;
};

}  // namespace cinn_like::backends
