/// \file Compiler::Create: the one dispatch from a target to its backend.
#include "backends/compiler.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "backends/compiler_x86.h"
#include "ir/flags.h"
#include "ir/visitor.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "backends/cuda/compiler_nvgpu.h"
#endif
#ifdef CINN_LIKE_WITH_OPENCL
#include "backends/opencl/compiler_opencl.h"
#endif

namespace cinn_like::backends {
namespace {

absl::StatusOr<std::unique_ptr<Compiler>> CreateOpenCL(const ir::Target& target) {
#ifdef CINN_LIKE_WITH_OPENCL
  return CreateOpenCLCompiler(target);
#else
  return absl::UnavailableError(
      "the OpenCL target is unavailable: cinn_like was built without CL/cl.h (opencl-headers)");
#endif
}

}  // namespace

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
    case ir::Target::Arch::kOpenCL:
      return CreateOpenCL(target);
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
    case ir::Target::Arch::kOpenCL:
      return CreateOpenCL(target);
  }
  return absl::InvalidArgumentError("unknown target " + target.ToString());
}

absl::Status Compiler::CheckSplitForGpu(const ir::Module& module) {
  if (!module.target.is_gpu()) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name, " was lowered for ",
                                                   module.target.ToString(),
                                                   ", not for a GPU target"));
  }
  struct LoopFinder : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    const ir::For* found = nullptr;
    void VisitFor(const ir::For* op) override {
      if (!found) found = op;
    }
  };
  for (const ir::LoweredFunc& f : module.functions) {
    LoopFinder finder;
    finder.Visit(f->body);
    if (finder.found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "function ", f->name, ": loop ", finder.found->loop_var.name(),
          " is in the host entry; the module is not split into host and device code (lower it "
          "with ir::Lower for the GPU target, or ir::SplitHostDevice)"));
    }
  }
  return absl::OkStatus();
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
