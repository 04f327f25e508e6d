/// \file CompilerOpenCL: Build's steps, in order, in one function.
#include "backends/opencl/compiler_opencl.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/device_compiler.h"
#include "backends/llvm/execution_engine.h"
#include "backends/opencl/codegen_opencl_dev.h"
#include "backends/opencl/codegen_opencl_host.h"
#include "backends/step_timer.h"
#include "ir/compile_options.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "runtime/opencl/opencl_runtime.h"

namespace cinn_like::backends {
namespace {

using runtime::opencl::Device;
using runtime::opencl::Program;

absl::StatusOr<Device*> SelectDevice(const ir::Target& target) {
  return Device::Select(target.opencl_device, ir::CurrentCompileOptions().opencl_device);
}

class CompilerOpenCL : public DeviceCompiler {
 public:
  CompilerOpenCL(ir::Target target, Device* device, std::unique_ptr<ExecutionEngine> engine)
      : DeviceCompiler(std::move(target), std::move(engine)), device_(device) {}

  absl::Status Build(const ir::Module& module) override;
  absl::StatusOr<std::string> GetSourceCode(const ir::Module& module) override;

 private:
  CodeGenOpenCLDev::DeviceTypes Types() const {
    const runtime::opencl::DeviceInfo& info = device_->info();
    return {info.fp16, info.fp64, info.Describe()};
  }
  /// Builds the OpenCL C of `binary` for the device and registers its kernels' handles.
  absl::Status LoadDevice(DeviceBinary binary, const std::string& name) override;
  /// OpenCL code is OpenCL C, built again for the device that loads it: never a CUBIN.
  absl::Status CheckDeviceImages(const BuiltCode& code) const override;
  std::string BinaryExtension(const DeviceBinary&) const override { return ".cl"; }

  Device* device_;
  std::vector<std::unique_ptr<Program>> programs_;
};

absl::Status CompilerOpenCL::LoadDevice(DeviceBinary binary, const std::string& name) {
  auto program = Program::Build(device_, binary.image, name);
  if (!program.ok()) return program.status();
  Program* built = program->get();
  programs_.push_back(std::move(*program));
  return RegisterKernels(std::move(binary),
                         [&](const std::string& kernel) -> absl::StatusOr<void*> {
                           auto handle = built->GetKernel(kernel);
                           if (!handle.ok()) return handle.status();
                           return static_cast<void*>(*handle);
                         });
}

absl::Status CompilerOpenCL::Build(const ir::Module& module) {
  absl::Status split = CheckSplitForGpu(module);
  if (!split.ok()) return split;
  // The schedules plan work-groups of up to the target's 1024 work-items; a device that allows
  // fewer is told here rather than by a failed launch.
  for (const ir::LoweredFunc& k : ir::DeviceKernels(module)) {
    const int64_t items = ir::BlockThreads(*k);
    if (items > device_->info().max_work_group_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel ", k->name, " of module ", module.name, " needs work-groups of ",
                       items, " work-items; ", device_->info().Describe(), " allows at most ",
                       device_->info().max_work_group_size));
    }
  }
  StepTimer steps(&times_);
  const std::string name = module.name.empty() ? std::string("module") : module.name;
  if (!DumpDir().empty()) DumpToFile(name + ".module.ir", ir::ToString(module));

  // 1. OpenCL C for the device kernels, as one program.
  auto source = steps.Run(&CompileTimes::device_codegen_ms,
                          [&] { return CodeGenOpenCLDev::Generate(module, Types()); });
  if (!source.ok()) return source.status();
  if (!DumpDir().empty()) DumpToFile(name + ".cl", source->source);
  SaveSourceFile(name + ".cl", source->source);

  // 2. The device's OpenCL compiler, and the kernels' handles registered as runtime symbols.
  absl::Status loaded = steps.Run(&CompileTimes::nvrtc_ms, [&] {
    return LoadDevice(DeviceBinary{/*cubin=*/false, source->source, source->kernels}, name);
  });
  if (!loaded.ok()) {
    if (!DumpDir().empty()) DumpToFile(name + ".cl_build_error.txt", std::string(loaded.message()));
    return loaded;
  }

  // 3. LLVM IR for the host entries, linked in the ORC JIT.
  return LinkHost([&] { return CodeGenOpenCLHost::Generate(module); }, name, steps);
}

absl::StatusOr<std::string> CompilerOpenCL::GetSourceCode(const ir::Module& module) {
  absl::Status split = CheckSplitForGpu(module);
  if (!split.ok()) return split;
  auto source = CodeGenOpenCLDev::Generate(module, Types());
  if (!source.ok()) return source.status();
  return std::move(source->source);
}

absl::Status CompilerOpenCL::CheckDeviceImages(const BuiltCode& code) const {
  for (const DeviceBinary& binary : code.device) {
    if (binary.cubin) {
      return absl::InvalidArgumentError("the code holds a CUBIN; OpenCL code is OpenCL C");
    }
  }
  return absl::OkStatus();
}

/// The schedules ask the selected device (compute units, work-group size, local memory).
const bool kDeviceQueryRegistered = [] {
  ir::RegisterDevicePropertiesQuery(
      ir::Target::Arch::kOpenCL,
      [](const ir::Target& target) -> absl::StatusOr<ir::DeviceProperties> {
        auto device = SelectDevice(target);
        if (!device.ok()) return device.status();
        const runtime::opencl::DeviceInfo& info = (*device)->info();
        ir::DeviceProperties p = ir::DefaultDeviceProperties(target);
        p.multiprocessors = info.compute_units;
        p.max_threads_per_block =
            std::min(info.max_work_group_size, target.max_threads_per_block());
        p.shared_memory_per_block =
            static_cast<int>(std::min<int64_t>(info.local_memory_bytes, 48 * 1024));
        p.source = info.Describe();
        return p;
      });
  return true;
}();

}  // namespace

absl::StatusOr<std::unique_ptr<Compiler>> CreateOpenCLCompiler(const ir::Target& target) {
  auto device = SelectDevice(target);
  if (!device.ok()) return device.status();
  auto engine = ExecutionEngine::Create(ExecutionEngine::HostCode::kGlue);
  if (!engine.ok()) return engine.status();
  // The runtime entry the host glue calls, beside runtime::RuntimeSymbols() (which lists the
  // entries every engine has): a device's own entries stay in its folders.
  absl::Status registered = (*engine)->RegisterSymbols(
      {{"cinn_like_opencl_launch", reinterpret_cast<void*>(&cinn_like_opencl_launch)}});
  if (!registered.ok()) return registered;
  return std::unique_ptr<Compiler>(new CompilerOpenCL(target, *device, std::move(*engine)));
}

}  // namespace cinn_like::backends
