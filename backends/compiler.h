/// \file The backend interface: build a module for a target, look its functions up by name.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/built_code.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like::backends {

/// A host entry as the framework calls it (DESIGN.md, calling convention): tensors are the
/// inputs then the outputs; returns 0, or nonzero with cinn_like_get_last_error() set.
using EntryFunction = int (*)(DLTensor** args, int32_t num_args, void* stream);

/// Wall time of each stage of the last Build, in milliseconds; stages a target does not have
/// stay 0. (The host/device split is a lowering pass: ir::Lower times it.)
struct CompileTimes {
  double device_codegen_ms = 0;  // CUDA C generation (NVGPU)
  double nvrtc_ms = 0;           // NVRTC to PTX/CUBIN (NVGPU); clBuildProgram (OpenCL)
  double module_load_ms = 0;     // CUDA module load and kernel handles (NVGPU; OpenCL: in nvrtc_ms)
  double host_codegen_ms = 0;    // LLVM IR for the host module (all of it on X86)
  double host_optimize_ms = 0;   // LLVM's O3 pipeline on it
  double orc_link_ms = 0;        // machine code and linking in the ORC JIT
  double total_ms = 0;
  int prebuilt_kernels = 0;  // library kernels loaded from the prebuilt file, not compiled (NVGPU)
  std::string ToString() const;
};

class Compiler {
 public:
  /// A compiler for `target`. NVGPU fails with a clear message when this build has no CUDA,
  /// when no arch is given and no device is present, or when NVRTC does not support the arch.
  static absl::StatusOr<std::unique_ptr<Compiler>> Create(const ir::Target& target);
  /// A compiler that only Loads code built elsewhere for `target` (its arch resolved, as
  /// target() of the compiler that built it): NVGPU asks nothing of NVRTC.
  static absl::StatusOr<std::unique_ptr<Compiler>> CreateForLoad(const ir::Target& target);
  virtual ~Compiler() = default;

  /// Compiles and links every function of `module` (as ir::Lower made it for the target: for a
  /// GPU, split into host entries and their kernels); may be called several times with
  /// modules whose function names differ.
  virtual absl::Status Build(const ir::Module& module) = 0;
  /// The host entry named `name` from an earlier Build.
  virtual absl::StatusOr<EntryFunction> Lookup(const std::string& name) = 0;
  /// Readable generated code: CUDA C of the device part for NVGPU, LLVM IR for X86.
  virtual absl::StatusOr<std::string> GetSourceCode(const ir::Module& module) = 0;
  /// Writes the object file of everything built so far (the host object; for NVGPU also the
  /// device binary next to it as <path>.cubin or <path>.ptx).
  virtual absl::Status ExportObject(const std::string& path) = 0;
  /// Everything built or loaded so far, as bytes (backends/built_code.h).
  virtual BuiltCode Code() const = 0;
  /// Makes the functions of `code` (Code() of a compiler for this target() on this host, in
  /// this process or another) callable without compiling: the host objects are linked in the
  /// ORC JIT, device images loaded and their kernel handles registered. Fails, leaving this
  /// compiler unusable, when an object does not link or an image does not load.
  virtual absl::Status Load(const BuiltCode& code) = 0;

  const ir::Target& target() const { return target_; }
  const CompileTimes& last_build_times() const { return times_; }

 protected:
  /// A module lowered for a GPU target is split: its host entries hold no loop at all (only
  /// workspace allocations, kernel launches and library calls; ir::Lower runs SplitHostDevice),
  /// so a module lowered for another target, or never split, is refused before any code is made.
  static absl::Status CheckSplitForGpu(const ir::Module& module);

  explicit Compiler(ir::Target target) : target_(std::move(target)) {}
  ir::Target target_;
  CompileTimes times_;
};

}  // namespace cinn_like::backends
