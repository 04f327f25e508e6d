/// \file CompilerX86: host codegen, then the ORC JIT.
#include "backends/compiler_x86.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "backends/llvm/codegen_x86.h"
#include "backends/llvm/execution_engine.h"
#include "ir/flags.h"

namespace cinn_like::backends {

namespace {
double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}
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
  times_ = CompileTimes();
  auto start = std::chrono::steady_clock::now();
  auto llvm_module = CodeGenX86::Generate(module);
  if (!llvm_module.ok()) return llvm_module.status();
  times_.host_codegen_ms = MillisecondsSince(start);
  bool dump = !DumpDir().empty();
  if (dump) DumpToFile(module.name + ".host.ll", llvm_module->ToString());

  auto link_start = std::chrono::steady_clock::now();
  absl::Status s = engine_->AddModule(std::move(*llvm_module));
  if (!s.ok()) return s;
  times_.orc_link_ms = MillisecondsSince(link_start);
  times_.total_ms = MillisecondsSince(start);
  if (dump) DumpToFile(module.name + ".compile_times.txt", times_.ToString());
  return absl::OkStatus();
}

absl::StatusOr<EntryFunction> CompilerX86::Lookup(const std::string& name) {
  auto address = engine_->Lookup(name);
  if (!address.ok()) return address.status();
  return reinterpret_cast<EntryFunction>(*address);
}

absl::StatusOr<std::string> CompilerX86::GetSourceCode(const ir::Module& module) {
  auto llvm_module = CodeGenX86::Generate(module);
  if (!llvm_module.ok()) return llvm_module.status();
  return llvm_module->ToString();
}

absl::Status CompilerX86::ExportObject(const std::string& path) {
  return engine_->ExportObject(path);
}

}  // namespace cinn_like::backends
