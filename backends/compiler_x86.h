/// \file The x86 backend: the whole module as LLVM IR, linked in the ORC JIT.
#pragma once

#include <memory>
#include <string>

#include "backends/compiler.h"

namespace cinn_like::backends {

class ExecutionEngine;

class CompilerX86 : public Compiler {
 public:
  static absl::StatusOr<std::unique_ptr<Compiler>> Create(const ir::Target& target);
  ~CompilerX86() override;

  absl::Status Build(const ir::Module& module) override;
  absl::StatusOr<EntryFunction> Lookup(const std::string& name) override;
  absl::StatusOr<std::string> GetSourceCode(const ir::Module& module) override;
  absl::Status ExportObject(const std::string& path) override;
  BuiltCode Code() const override;
  absl::Status Load(const BuiltCode& code) override;

 private:
  CompilerX86(ir::Target target, std::unique_ptr<ExecutionEngine> engine);
  std::unique_ptr<ExecutionEngine> engine_;
};

}  // namespace cinn_like::backends
