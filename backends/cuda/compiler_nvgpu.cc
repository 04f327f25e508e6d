/// \file CompilerNVGPU: Build's six steps, in order, each timed and dumped.
#include "backends/cuda/compiler_nvgpu.h"

#include <chrono>
#include <deque>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/llvm/codegen_cuda_host.h"
#include "backends/llvm/execution_engine.h"
#include "ir/flags.h"
#include "ir/printer.h"
#include "ir/transforms/split_host_device.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_module.h"

namespace cinn_like::backends {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class CompilerNVGPU : public Compiler {
 public:
  CompilerNVGPU(ir::Target target, std::unique_ptr<ExecutionEngine> engine)
      : Compiler(std::move(target)), engine_(std::move(engine)) {}

  absl::Status Build(const ir::Module& module) override {
    times_ = CompileTimes();
    auto start = Clock::now();
    bool to_cubin = FLAGS_cinn_like_nvrtc_compile_to_cubin;

    // 1. Split the module into host and device modules.
    auto t = Clock::now();
    auto split = ir::SplitHostDevice(module);
    if (!split.ok()) return split.status();
    times_.split_ms = MsSince(t);
    DumpToFile(module.name + ".device.ir", ir::ToString(split->device));
    DumpToFile(module.name + ".host.ir", ir::ToString(split->host));

    // 2. CUDA C for the device module.
    t = Clock::now();
    auto source = CodeGenCudaDev::Generate(split->device);
    if (!source.ok()) return source.status();
    times_.device_codegen_ms = MsSince(t);

    // 3. NVRTC: CUDA C to CUBIN or PTX (saves .cu/.ptx when asked).
    t = Clock::now();
    auto image = nvrtc_.Compile(*source, target_.cuda_arch, to_cubin, module.name);
    if (!image.ok()) return image.status();
    times_.nvrtc_ms = MsSince(t);

    // 4. Load the image as a CUDA module and take each kernel's handle.
    t = Clock::now();
    auto cuda_module = runtime::cuda::CudaModule::Load(*image);
    if (!cuda_module.ok()) return cuda_module.status();
    std::vector<std::pair<std::string, void*>> symbols;
    for (auto& kernel : split->device.functions) {
      auto handle = (*cuda_module)->GetFunction(kernel->name);
      if (!handle.ok()) return handle.status();
      // 5. Register the handle as the runtime symbol <kernel>_ptr_: the address of a slot
      //    that holds it, which the host code loads before each launch.
      handle_slots_.push_back(*handle);
      symbols.emplace_back(kernel->name + "_ptr_", &handle_slots_.back());
    }
    times_.module_load_ms = MsSince(t);
    absl::Status registered = engine_->RegisterSymbols(symbols);
    if (!registered.ok()) return registered;

    // 6. LLVM IR for the host module, linked in the ORC JIT with those symbols.
    t = Clock::now();
    auto host = CodeGenCudaHost::Generate(split->host);
    if (!host.ok()) return host.status();
    times_.host_codegen_ms = MsSince(t);
    DumpToFile(module.name + ".host.ll", host->ToString());
    t = Clock::now();
    absl::Status linked = engine_->AddModule(std::move(*host));
    if (!linked.ok()) return linked;
    times_.orc_link_ms = MsSince(t);

    modules_.push_back(std::move(*cuda_module));
    images_.push_back({*std::move(image), to_cubin});
    times_.total_ms = MsSince(start);
    DumpToFile(module.name + ".compile_times.txt", times_.ToString());
    return absl::OkStatus();
  }

  absl::StatusOr<EntryFunction> Lookup(const std::string& name) override {
    auto address = engine_->Lookup(name);
    if (!address.ok()) return address.status();
    return reinterpret_cast<EntryFunction>(*address);
  }

  absl::StatusOr<std::string> GetSourceCode(const ir::Module& module) override {
    auto split = ir::SplitHostDevice(module);
    if (!split.ok()) return split.status();
    return CodeGenCudaDev::Generate(split->device);
  }

  absl::Status ExportObject(const std::string& path) override {
    absl::Status st = engine_->ExportObject(path);
    if (!st.ok()) return st;
    for (size_t i = 0; i < images_.size(); ++i) {
      std::string file = path + (images_.size() > 1 ? absl::StrCat(".", i) : "") +
                         (images_[i].second ? ".cubin" : ".ptx");
      std::ofstream out(file, std::ios::binary);
      out << images_[i].first;
      if (!out) return absl::InternalError("cannot write " + file);
    }
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<ExecutionEngine> engine_;
  nvrtc::Compiler nvrtc_;
  std::deque<void*> handle_slots_;  // stable addresses: the JIT code holds them
  std::vector<std::unique_ptr<runtime::cuda::CudaModule>> modules_;
  std::vector<std::pair<std::string, bool>> images_;  // (binary, is CUBIN)
};

/// The arch and where it came from.
absl::StatusOr<std::pair<int, std::string>> ChooseArch(const ir::Target& target) {
  if (!FLAGS_cinn_like_cuda_arch.empty()) {
    std::string text = FLAGS_cinn_like_cuda_arch;
    if (text.rfind("sm_", 0) == 0) text = text.substr(3);
    int arch = 0;
    if (!absl::SimpleAtoi(text, &arch) || arch <= 0) {
      return absl::InvalidArgumentError("the flag cinn_like_cuda_arch is '" +
                                        FLAGS_cinn_like_cuda_arch + "'; expected sm_90 or 90");
    }
    return std::make_pair(arch, std::string("the flag cinn_like_cuda_arch"));
  }
  if (target.cuda_arch > 0) return std::make_pair(target.cuda_arch, std::string("the target"));
  auto cc = runtime::cuda::DeviceComputeCapability();
  if (!cc.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot choose a CUDA arch: the target names none, the flag cinn_like_cuda_arch is "
        "empty, and the device cannot be asked: ",
        cc.status().message()));
  }
  return std::make_pair(*cc, std::string("the device"));
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
