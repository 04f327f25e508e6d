/// \file CompilerX86: host codegen, then the ORC JIT.
#include "backends/compiler_x86.h"

#include <llvm/TargetParser/Host.h>

#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_x86.h"
#include "backends/llvm/execution_engine.h"
#include "backends/step_timer.h"
#include "ir/device_properties.h"
#include "ir/flags.h"

namespace cinn_like::backends {
namespace {

/// The schedules' CPU properties: the host's widest vectors (the JIT compiles for the host).
const bool kHostQueryRegistered = [] {
  ir::RegisterDevicePropertiesQuery(
      ir::Target::Arch::kX86, [](const ir::Target& target) -> absl::StatusOr<ir::DeviceProperties> {
        ir::DeviceProperties p = ir::DefaultDeviceProperties(target);
        llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
        auto has = [&](const char* f) { return features.lookup(f); };
        p.vector_bytes = has("avx512f") ? 64 : has("avx2") || has("avx") ? 32 : 16;
        p.source = absl::StrCat("this host (", llvm::sys::getHostCPUName().str(), ", ",
                                p.vector_bytes * 8, "-bit vectors)");
        return p;
      });
  return true;
}();

}  // namespace

CompilerX86::CompilerX86(ir::Target target, std::unique_ptr<ExecutionEngine> engine)
    : Compiler(std::move(target)), engine_(std::move(engine)) {}

CompilerX86::~CompilerX86() = default;

absl::StatusOr<std::unique_ptr<Compiler>> CompilerX86::Create(const ir::Target& target) {
  auto engine = ExecutionEngine::Create();
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Compiler>(new CompilerX86(target, std::move(*engine)));
}

absl::Status CompilerX86::Build(const ir::Module& module) {
  StepTimer steps(&times_);
  // 1. LLVM IR for the whole module.
  auto llvm_module =
      steps.Run(&CompileTimes::host_codegen_ms, [&] { return CodeGenX86::Generate(module); });
  if (!llvm_module.ok()) return llvm_module.status();
  if (!DumpDir().empty()) DumpToFile(module.name + ".host.ll", llvm_module->ToString());

  // 2. Optimized (O3).
  absl::Status optimized =
      steps.Run(&CompileTimes::host_optimize_ms, [&] { return engine_->Optimize(*llvm_module); });
  if (!optimized.ok()) return optimized;

  // 3. Compiled to machine code and linked in the ORC JIT.
  absl::Status linked = steps.Run(&CompileTimes::orc_link_ms,
                                  [&] { return engine_->AddModule(std::move(*llvm_module)); });
  if (!linked.ok()) return linked;
  steps.Finish(module.name);
  return absl::OkStatus();
}

absl::StatusOr<EntryFunction> CompilerX86::Lookup(const std::string& name) {
  return engine_->LookupEntry(name);
}

absl::StatusOr<std::string> CompilerX86::GetSourceCode(const ir::Module& module) {
  auto llvm_module = CodeGenX86::Generate(module);
  if (!llvm_module.ok()) return llvm_module.status();
  return llvm_module->ToString();
}

absl::Status CompilerX86::ExportObject(const std::string& path) {
  return engine_->ExportObject(path);
}

BuiltCode CompilerX86::Code() const {
  BuiltCode code;
  auto host = HostCodeDescription();
  code.host = host.ok() ? *host : std::string();
  code.host_objects = engine_->objects();
  return code;
}

absl::Status CompilerX86::Load(const BuiltCode& code) {
  if (!code.device.empty()) {
    return absl::InvalidArgumentError("x86 code holds no device images; these are for a GPU");
  }
  return engine_->AddObjectsFor(code.host, code.host_objects);
}

}  // namespace cinn_like::backends
