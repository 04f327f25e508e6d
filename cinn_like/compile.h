/// \file The C++ face of cinn_like for frameworks: compile a Program for a target and call
/// its functions. The C API (cinn_like/c_api.h) and the Python package sit on top of it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "cinn_like/call_check.h"
#include "frontend/program.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like {

/// A compiled Program: a backend Compiler holding the built module, and what callers need to
/// know of it.
class CompiledProgram {
 public:
  /// The host entry `name` (the name given to CompileProgram).
  absl::StatusOr<backends::EntryFunction> Lookup(const std::string& name) const;
  /// CUDA C of the device part (NVGPU) or LLVM IR (X86), generated on the first request (a
  /// compile does not pay for it) and kept; an empty string if generation fails.
  const std::string& source() const;
  /// The arguments as JSON: {"inputs": [{"name", "dtype", "shape"}], "outputs": [...]}.
  const std::string& signature() const { return signature_; }
  const ir::Module& module() const { return module_; }
  /// What the call-time self-check needs (cinn_like/call_check.h); null unless the flag
  /// cinn_like_self_check was on when this Program was compiled.
  const std::shared_ptr<const CallCheckContext>& call_check() const { return call_check_; }

 private:
  friend absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(const frontend::Program&,
                                                                         const ir::Target&,
                                                                         const std::string&);
  std::unique_ptr<backends::Compiler> compiler_;
  ir::Module module_;
  std::string signature_;
  std::shared_ptr<const CallCheckContext> call_check_;
  mutable std::once_flag source_once_;
  mutable std::string source_;
};

/// Graph passes, op lowering, then Compiler::Build for `target`: one host entry `name` taking
/// the Program's inputs then its outputs. Errors name the op, tensor and shapes at fault. The
/// debug flag cinn_like_debug_wrong_op plants wrong results (cinn_like/debug_wrong_op.h).
absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(const frontend::Program& program,
                                                                const ir::Target& target,
                                                                const std::string& name);

/// The source CompileProgram would build for `target` (CUDA C for NVGPU, LLVM IR for X86),
/// without building it: no NVRTC, no driver, no JIT. For reading a schedule on any machine.
absl::StatusOr<std::string> ProgramSource(const frontend::Program& program,
                                          const ir::Target& target, const std::string& name);

}  // namespace cinn_like
