/// \file CudaModule: a PTX or CUBIN image loaded into the primary context, and its kernels.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace cinn_like::runtime::cuda {

/// One loaded CUmodule; unloaded when destroyed. Kernel handles die with it.
class CudaModule {
 public:
  /// Loads a CUBIN or PTX image into device 0's primary context (EnsureContext first). The
  /// error names the driver's error and, for PTX, says that the driver's JIT rejected it.
  static absl::StatusOr<std::unique_ptr<CudaModule>> Load(const std::string& image);
  /// The CUfunction of kernel `name`, as void*; NotFound naming the kernel.
  absl::StatusOr<void*> GetFunction(const std::string& name);
  /// cuModuleUnload; errors are logged only.
  ~CudaModule();

  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

 private:
  explicit CudaModule(void* module) : module_(module) {}
  void* module_;  // CUmodule
};

}  // namespace cinn_like::runtime::cuda
