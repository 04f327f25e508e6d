/// \file CompilerNVGPU: Build's six steps, in order, in one function.
#include "backends/cuda/compiler_nvgpu.h"

#include <chrono>
#include <deque>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/codegen_cuda_host.h"
#include "backends/llvm/execution_engine.h"
#include "ir/flags.h"
#include "ir/transforms/split_host_device.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_module.h"

namespace cinn_like::backends {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The arch and where it came from: the target, the flag, or the device.
absl::StatusOr<std::pair<int, std::string>> ChooseArch(const ir::Target& target) {
  if (target.cuda_arch > 0) return std::make_pair(target.cuda_arch, std::string("from the target"));
  if (!FLAGS_cinn_like_cuda_arch.empty()) {
    absl::string_view text = FLAGS_cinn_like_cuda_arch;
    absl::ConsumePrefix(&text, "sm_");
    int arch = 0;
    if (!absl::SimpleAtoi(text, &arch) || arch <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("flag cinn_like_cuda_arch is '",
                                                     FLAGS_cinn_like_cuda_arch,
                                                     "'; expected an arch such as sm_90 or 90"));
    }
    return std::make_pair(arch, std::string("from the flag cinn_like_cuda_arch"));
  }
  auto device = runtime::cuda::DeviceComputeCapability();
  if (!device.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUDA arch for the NVGPU target: the target names none, the flag cinn_like_cuda_arch "
        "is empty and the device cannot be asked (",
        device.status().message(),
        "); set FLAGS_cinn_like_cuda_arch=sm_90 to compile without a GPU"));
  }
  return std::make_pair(*device, std::string("from the device"));
}

class CompilerNVGPU : public Compiler {
 public:
  CompilerNVGPU(ir::Target target, std::unique_ptr<ExecutionEngine> engine)
      : Compiler(std::move(target)), engine_(std::move(engine)) {}

  absl::Status Build(const ir::Module& module) override;
  absl::StatusOr<EntryFunction> Lookup(const std::string& name) override;
  absl::StatusOr<std::string> GetSourceCode(const ir::Module& module) override;
  absl::Status ExportObject(const std::string& path) override;

 private:
  std::unique_ptr<ExecutionEngine> engine_;
  nvrtc::Compiler nvrtc_;
  std::vector<std::unique_ptr<runtime::cuda::CudaModule>> cuda_modules_;
  std::deque<void*> kernel_slots_;  // one stable slot per kernel, holding its CUfunction
  std::vector<std::string> device_binaries_;
};

absl::Status CompilerNVGPU::Build(const ir::Module& module) {
  times_ = CompileTimes();
  const bool dump = !DumpDir().empty();
  const bool to_cubin = FLAGS_cinn_like_nvrtc_compile_to_cubin;
  const std::string name = module.name.empty() ? std::string("module") : module.name;
  auto start = std::chrono::steady_clock::now();

  // 1. Split: bound loop nests become kernels, the host entry launches them.
  auto step = std::chrono::steady_clock::now();
  auto split = ir::SplitHostDevice(module);
  if (!split.ok()) return split.status();
  times_.split_ms = MillisecondsSince(step);
  if (dump) {
    DumpToFile(name + ".host.ir", ir::ToString(split->host));
    DumpToFile(name + ".device.ir", ir::ToString(split->device));
  }

  // 2. CUDA C for the device module.
  step = std::chrono::steady_clock::now();
  auto source = CodeGenCudaDev::Generate(split->device);
  if (!source.ok()) return source.status();
  times_.device_codegen_ms = MillisecondsSince(step);

  // 3. NVRTC to CUBIN or PTX (saves and dumps <name>.cu and the binary).
  step = std::chrono::steady_clock::now();
  auto binary = nvrtc_.Compile(*source, target_.cuda_arch, to_cubin, name);
  if (!binary.ok()) return binary.status();
  times_.nvrtc_ms = MillisecondsSince(step);

  // 4. Load as a CUDA module and get each kernel's handle (needs a GPU).
  step = std::chrono::steady_clock::now();
  auto cuda_module = runtime::cuda::CudaModule::Load(*binary);
  if (!cuda_module.ok()) {
    return absl::Status(
        cuda_module.status().code(),
        absl::StrCat("loading the CUDA module of ", name, ": ", cuda_module.status().message()));
  }
  std::vector<std::pair<std::string, void*>> handles;
  for (const ir::LoweredFunc& kernel : split->device.functions) {
    auto function = (*cuda_module)->GetFunction(kernel->name);
    if (!function.ok()) return function.status();
    handles.emplace_back(kernel->name, *function);
  }
  times_.module_load_ms = MillisecondsSince(step);

  // 5. Register each handle as the runtime symbol <kernel>_ptr_: the address of a slot we own.
  std::vector<std::pair<std::string, void*>> symbols;
  for (auto& [kernel, function] : handles) {
    kernel_slots_.push_back(function);
    symbols.emplace_back(kernel + "_ptr_", static_cast<void*>(&kernel_slots_.back()));
  }
  absl::Status registered = engine_->RegisterSymbols(symbols);
  if (!registered.ok()) return registered;
  cuda_modules_.push_back(std::move(*cuda_module));
  device_binaries_.push_back(std::move(*binary));

  // 6. LLVM IR for the host module, linked in the ORC JIT.
  step = std::chrono::steady_clock::now();
  auto host = CodeGenCudaHost::Generate(split->host);
  if (!host.ok()) return host.status();
  times_.host_codegen_ms = MillisecondsSince(step);
  if (dump) DumpToFile(name + ".host.ll", host->ToString());
  step = std::chrono::steady_clock::now();
  absl::Status linked = engine_->AddModule(std::move(*host));
  if (!linked.ok()) return linked;
  times_.orc_link_ms = MillisecondsSince(step);

  times_.total_ms = MillisecondsSince(start);
  if (dump) DumpToFile(name + ".compile_times.txt", times_.ToString());
  return absl::OkStatus();
}

absl::StatusOr<EntryFunction> CompilerNVGPU::Lookup(const std::string& name) {
  auto address = engine_->Lookup(name);
  if (!address.ok()) return address.status();
  return reinterpret_cast<EntryFunction>(*address);
}

absl::StatusOr<std::string> CompilerNVGPU::GetSourceCode(const ir::Module& module) {
  auto split = ir::SplitHostDevice(module);
  if (!split.ok()) return split.status();
  return CodeGenCudaDev::Generate(split->device);
}

absl::Status CompilerNVGPU::ExportObject(const std::string& path) {
  absl::Status s = engine_->ExportObject(path);
  if (!s.ok()) return s;
  const char* ext = FLAGS_cinn_like_nvrtc_compile_to_cubin ? ".cubin" : ".ptx";
  for (size_t k = 0; k < device_binaries_.size(); ++k) {
    std::string file = k == 0 ? path + ext : absl::StrCat(path, ".", k, ext);
    std::ofstream out(file, std::ios::binary);
    out << device_binaries_[k];
    if (!out) return absl::InternalError("cannot write the device binary " + file);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Compiler>> CreateNVGPUCompiler(const ir::Target& target) {
  auto arch = ChooseArch(target);
  if (!arch.ok()) return arch.status();
  absl::Status supported = nvrtc::Compiler::CheckArch(arch->first, arch->second);
  if (!supported.ok()) return supported;
  auto engine = ExecutionEngine::Create();
  if (!engine.ok()) return engine.status();
  ir::Target resolved = target;
  resolved.cuda_arch = arch->first;
  return std::unique_ptr<Compiler>(new CompilerNVGPU(resolved, std::move(*engine)));
}

}  // namespace cinn_like::backends
