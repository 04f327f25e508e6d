/// \file Compiler::Create: the one dispatch from a target to its backend.
#include "backends/compiler.h"

#include <sstream>

#include "backends/compiler_x86.h"
#include "ir/flags.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "backends/cuda/compiler_nvgpu.h"
#endif

namespace cinn_like::backends {

absl::StatusOr<std::unique_ptr<Compiler>> Compiler::Create(const ir::Target& target) {
  switch (target.arch) {
    case ir::Target::Arch::kX86:
      return CompilerX86::Create(target);
    case ir::Target::Arch::kNVGPU:
#ifdef CINN_LIKE_WITH_CUDA
      return CreateNVGPUCompiler(target);
#else
      return absl::UnavailableError(
          "the NVGPU target is unavailable: cinn_like was built without the CUDA toolkit (NVRTC)");
#endif
  }
  return absl::InvalidArgumentError("unknown target " + target.ToString());
}

absl::StatusOr<std::unique_ptr<Compiler>> Compiler::CreateForLoad(const ir::Target& target) {
  switch (target.arch) {
    case ir::Target::Arch::kX86:
      return CompilerX86::Create(target);
    case ir::Target::Arch::kNVGPU:
#ifdef CINN_LIKE_WITH_CUDA
      return CreateNVGPULoader(target);
#else
      return absl::UnavailableError(
          "cannot load NVGPU code: cinn_like was built without the CUDA toolkit");
#endif
  }
  return absl::InvalidArgumentError("unknown target " + target.ToString());
}

std::string CompileTimes::ToString() const {
  std::ostringstream os;
  os << "device_codegen_ms " << device_codegen_ms << "\n"
     << "nvrtc_ms " << nvrtc_ms << "\n"
     << "module_load_ms " << module_load_ms << "\n"
     << "host_codegen_ms " << host_codegen_ms << "\n"
     << "host_optimize_ms " << host_optimize_ms << "\n"
     << "orc_link_ms " << orc_link_ms << "\n"
     << "total_ms " << total_ms << "\n"
     << "prebuilt_kernels " << prebuilt_kernels << "\n";
  return os.str();
}

}  // namespace cinn_like::backends
