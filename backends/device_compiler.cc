/// \file DeviceCompiler's shared steps.
#include "backends/device_compiler.h"

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/flags.h"

namespace cinn_like::backends {

absl::StatusOr<EntryFunction> DeviceCompiler::Lookup(const std::string& name) {
  return engine_->LookupEntry(name);
}

absl::Status DeviceCompiler::ExportObject(const std::string& path) {
  absl::Status s = engine_->ExportObject(path);
  if (!s.ok()) return s;
  for (size_t k = 0; k < device_binaries_.size(); ++k) {
    const std::string ext = BinaryExtension(device_binaries_[k]);
    const std::string file = k == 0 ? path + ext : absl::StrCat(path, ".", k, ext);
    std::ofstream out(file, std::ios::binary);
    out << device_binaries_[k].image;
    if (!out) return absl::InternalError("cannot write the device binary " + file);
  }
  return absl::OkStatus();
}

BuiltCode DeviceCompiler::Code() const {
  BuiltCode code;
  auto host = HostCodeDescription();
  code.host = host.ok() ? *host : std::string();
  code.host_objects = engine_->objects();
  code.device = device_binaries_;
  return code;
}

absl::Status DeviceCompiler::CheckDeviceImages(const BuiltCode&) const { return absl::OkStatus(); }

absl::Status DeviceCompiler::Load(const BuiltCode& code) {
  absl::Status host = CheckHostCode(code.host);  // before any image is loaded
  if (!host.ok()) return host;
  absl::Status images = CheckDeviceImages(code);
  if (!images.ok()) return images;
  for (size_t k = 0; k < code.device.size(); ++k) {
    absl::Status loaded = LoadDevice(code.device[k], absl::StrCat("loaded image ", k));
    if (!loaded.ok()) return loaded;
  }
  return engine_->AddObjectsFor(code.host, code.host_objects);
}

absl::Status DeviceCompiler::RegisterKernels(DeviceBinary binary, const KernelHandle& handle) {
  std::vector<std::pair<std::string, void*>> symbols;
  for (const std::string& kernel : binary.kernels) {
    auto h = handle(kernel);
    if (!h.ok()) return h.status();
    kernel_slots_.push_back(*h);
    symbols.emplace_back(kernel + "_ptr_", static_cast<void*>(&kernel_slots_.back()));
  }
  absl::Status registered = engine_->RegisterSymbols(symbols);
  if (!registered.ok()) return registered;
  device_binaries_.push_back(std::move(binary));
  return absl::OkStatus();
}

absl::Status DeviceCompiler::LinkHost(const std::function<absl::StatusOr<LLVMModule>()>& generate,
                                      const std::string& name, StepTimer& steps) {
  auto host = steps.Run(&CompileTimes::host_codegen_ms, generate);
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

}  // namespace cinn_like::backends
