/// \file DeviceCompiler: what the GPU compilers (CUDA, OpenCL) share around their own device
/// steps. Each builds device code its way and loads it into its runtime (a CUDA module, an
/// OpenCL program); the skeleton keeps one stable slot per kernel holding its handle, registers
/// the slot as the runtime symbol <kernel>_ptr_ that the host code reads, keeps the device
/// binaries for Code() and ExportObject, links the host entries in the ORC JIT and loads a
/// BuiltCode in one order: host check, the backend's own check, device images, host objects.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/compiler.h"
#include "backends/llvm/codegen_llvm.h"
#include "backends/llvm/execution_engine.h"
#include "backends/step_timer.h"

namespace cinn_like::backends {

class DeviceCompiler : public Compiler {
 public:
  absl::StatusOr<EntryFunction> Lookup(const std::string& name) final;
  /// The host object at `path`, each device binary beside it (<path><ext>, then
  /// <path>.<k><ext>, the extension BinaryExtension's).
  absl::Status ExportObject(const std::string& path) final;
  BuiltCode Code() const final;
  absl::Status Load(const BuiltCode& code) final;

 protected:
  DeviceCompiler(ir::Target target, std::unique_ptr<ExecutionEngine> engine)
      : Compiler(std::move(target)), engine_(std::move(engine)) {}

  /// A kernel's handle in a loaded device image (a CUfunction, an OpenCL kernel), by name.
  using KernelHandle = std::function<absl::StatusOr<void*>(const std::string& kernel)>;

  /// Loads `binary` into the device runtime and registers its kernels (RegisterKernels);
  /// `name` says which image in an error.
  virtual absl::Status LoadDevice(DeviceBinary binary, const std::string& name) = 0;
  /// Why the device images of `code` cannot be loaded here (an arch the device does not run,
  /// an image of another kind), before any is; ok by default.
  virtual absl::Status CheckDeviceImages(const BuiltCode& code) const;
  /// The file extension of an exported device binary (".cubin", ".ptx", ".cl").
  virtual std::string BinaryExtension(const DeviceBinary& binary) const = 0;

  /// Each kernel of `binary`'s handle (from `handle`) in a slot of its own, registered as the
  /// runtime symbol <kernel>_ptr_; the binary kept for Code() and ExportObject.
  absl::Status RegisterKernels(DeviceBinary binary, const KernelHandle& handle);
  /// The last steps of a Build: the host entries' LLVM IR made by `generate` (dumped as
  /// <name>.host.ll under the dump flag), optimized and linked in the ORC JIT, each step timed;
  /// the build's times finished.
  absl::Status LinkHost(const std::function<absl::StatusOr<LLVMModule>()>& generate,
                        const std::string& name, StepTimer& steps);

  std::unique_ptr<ExecutionEngine> engine_;

 private:
  std::deque<void*> kernel_slots_;  // one stable slot per kernel, holding its handle
  std::vector<DeviceBinary> device_binaries_;
};

}  // namespace cinn_like::backends
