/// \file CompilerOpenCL: Build's steps, in order, in one function.
#include "backends/opencl/compiler_opencl.h"

#include <deque>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

class CompilerOpenCL : public Compiler {
 public:
  CompilerOpenCL(ir::Target target, Device* device, std::unique_ptr<ExecutionEngine> engine)
      : Compiler(std::move(target)), device_(device), engine_(std::move(engine)) {}

  absl::Status Build(const ir::Module& module) override;
  absl::StatusOr<EntryFunction> Lookup(const std::string& name) override {
    return engine_->LookupEntry(name);
  }
  absl::StatusOr<std::string> GetSourceCode(const ir::Module& module) override;
  absl::Status ExportObject(const std::string& path) override;
  BuiltCode Code() const override;
  absl::Status Load(const BuiltCode& code) override;

 private:
  CodeGenOpenCLDev::DeviceTypes Types() const {
    const runtime::opencl::DeviceInfo& info = device_->info();
    return {info.fp16, info.fp64, info.Describe()};
  }
  /// Builds `source` for the device, gets each kernel's handle and registers it as the runtime
  /// symbol <kernel>_ptr_ (the address of a slot this compiler owns).
  absl::Status LoadDevice(DeviceBinary binary, const std::string& name);

  Device* device_;
  std::unique_ptr<ExecutionEngine> engine_;
  std::vector<std::unique_ptr<Program>> programs_;
  std::deque<void*> kernel_slots_;  // one stable slot per kernel, holding its Kernel*
  std::vector<DeviceBinary> device_binaries_;
};

absl::Status CompilerOpenCL::LoadDevice(DeviceBinary binary, const std::string& name) {
  auto program = Program::Build(device_, binary.image, name);
  if (!program.ok()) return program.status();
  std::vector<std::pair<std::string, void*>> symbols;
  for (const std::string& kernel : binary.kernels) {
    auto handle = (*program)->GetKernel(kernel);
    if (!handle.ok()) return handle.status();
    kernel_slots_.push_back(*handle);
    symbols.emplace_back(kernel + "_ptr_", static_cast<void*>(&kernel_slots_.back()));
  }
  programs_.push_back(std::move(*program));
  absl::Status registered = engine_->RegisterSymbols(symbols);
  if (!registered.ok()) return registered;
  device_binaries_.push_back(std::move(binary));
  return absl::OkStatus();
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
  auto host = steps.Run(&CompileTimes::host_codegen_ms,
                        [&] { return CodeGenOpenCLHost::Generate(module); });
  if (!host.ok()) return host.status();
  if (!DumpDir().empty()) DumpToFile(name + ".host.ll", host->ToString());
  absl::Status optimized =
      steps.Run(&CompileTimes::host_optimize_ms, [&] { return engine_->Optimize(*host); });
  if (!optimized.ok()) return optimized;
  absl::Status linked =
      steps.Run(&CompileTimes::orc_link_ms, [&] { return engine_->AddModule(std::move(*host)); });
  if (!linked.ok()) return linked;
  steps.Finish(name);
  return absl::OkStatus();
}

absl::StatusOr<std::string> CompilerOpenCL::GetSourceCode(const ir::Module& module) {
  absl::Status split = CheckSplitForGpu(module);
  if (!split.ok()) return split;
  auto source = CodeGenOpenCLDev::Generate(module, Types());
  if (!source.ok()) return source.status();
  return std::move(source->source);
}

absl::Status CompilerOpenCL::ExportObject(const std::string& path) {
  absl::Status s = engine_->ExportObject(path);
  if (!s.ok()) return s;
  for (size_t k = 0; k < device_binaries_.size(); ++k) {
    std::string file = k == 0 ? path + ".cl" : absl::StrCat(path, ".", k, ".cl");
    std::ofstream out(file, std::ios::binary);
    out << device_binaries_[k].image;
    if (!out) return absl::InternalError("cannot write the OpenCL source " + file);
  }
  return absl::OkStatus();
}

BuiltCode CompilerOpenCL::Code() const {
  BuiltCode code;
  auto host = HostCodeDescription();
  code.host = host.ok() ? *host : std::string();
  code.host_objects = engine_->objects();
  code.device = device_binaries_;  // OpenCL C: built again for the device that loads it
  return code;
}

absl::Status CompilerOpenCL::Load(const BuiltCode& code) {
  absl::Status host = CheckHostCode(code.host);
  if (!host.ok()) return host;
  for (size_t k = 0; k < code.device.size(); ++k) {
    if (code.device[k].cubin) {
      return absl::InvalidArgumentError("the code holds a CUBIN; OpenCL code is OpenCL C");
    }
    absl::Status loaded = LoadDevice(code.device[k], absl::StrCat("loaded program ", k));
    if (!loaded.ok()) return loaded;
  }
  return engine_->AddObjectsFor(code.host, code.host_objects);
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
