/// \file The C++ face of cinn_like for frameworks: compile a Program for a target and call
/// its functions. The C API (cinn_like/c_api.h) and the Python package sit on top of it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "cinn_like/cache/module_file.h"
#include "frontend/program.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like {

struct CallCheckContext;  // cinn_like/verify/call_check.h: only held here, by pointer

/// This library's version, "<major>.<minor>.<patch>" (cinn_like_version()).
inline constexpr char kVersion[] = "0.1.0";

/// A compiled Program: a backend Compiler holding the built module, and what callers need to
/// know of it.
class CompiledProgram {
 public:
  /// The host entry `name` (the name given to CompileProgram).
  absl::StatusOr<backends::EntryFunction> Lookup(const std::string& name) const;
  /// CUDA C of the device part (NVGPU) or LLVM IR (X86), generated on the first request (a
  /// compile does not pay for it) and kept: of the module built, or for a Program loaded from
  /// the cache, of the Program lowered again with the flags now; an empty string if generation
  /// fails or the module was loaded from a file.
  const std::string& source() const;
  /// The arguments as JSON: {"inputs": [{"name", "dtype", "shape"}], "outputs": [...]}.
  const std::string& signature() const { return signature_; }
  /// The host entry's name (CompileProgram's `name`).
  const std::string& name() const { return name_; }
  /// Whether it was loaded from the persistent cache rather than compiled.
  bool from_cache() const { return from_cache_; }
  /// Writes the module file (cinn_like/cache/module_file.h) that LoadCompiledProgram loads, in
  /// another process too, without compiling: atomically (temporary file + rename). It replaces
  /// nothing but a module file (or an empty regular file): a directory, a device, a FIFO, a
  /// symbolic link or a file of another format at `path` is an error naming it.
  absl::Status Save(const std::string& path) const;
  /// What the call-time self-check needs (cinn_like/verify/call_check.h); null unless the flag
  /// cinn_like_self_check was on when this Program was compiled.
  const std::shared_ptr<const CallCheckContext>& call_check() const { return call_check_; }

 private:
  friend absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(const frontend::Program&,
                                                                         const ir::Target&,
                                                                         const std::string&);
  friend absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgramJson(const std::string&,
                                                                             const ir::Target&,
                                                                             const std::string&);
  /// What both compile: the Program as JSON text (its cache key's), parsed here where `parsed`
  /// is null and the cache does not hold it.
  static absl::StatusOr<std::unique_ptr<CompiledProgram>> Compile(const std::string& program_json,
                                                                  const frontend::Program* parsed,
                                                                  const ir::Target& target,
                                                                  const std::string& name);
  friend absl::StatusOr<std::unique_ptr<CompiledProgram>> LoadImage(
      const ModuleImage&, const std::string&, std::unique_ptr<backends::Compiler>);
  /// What Save writes and the cache keeps.
  ModuleImage Image() const;
  std::unique_ptr<backends::Compiler> compiler_;
  std::string name_;
  std::optional<ir::Module> module_;  // what was built: source() prints it
  std::string program_json_;          // a cache hit's Program: source() parses and lowers it again
  bool from_cache_ = false;
  std::string signature_;
  std::shared_ptr<const CallCheckContext> call_check_;
  mutable std::once_flag source_once_;
  mutable std::string source_;
};

/// The Program loaded from the persistent cache (cinn_like/cache/disk_cache.h), else lowered
/// and built for `target` by the pipeline (cinn_like/pipeline/lower_and_build.h: graph passes,
/// op lowering, the tuner, Compiler::Build) and stored there: one host entry `name` taking the
/// Program's inputs then its outputs. Errors name the op, tensor and shapes at fault. The debug
/// flag cinn_like_debug_wrong_op plants wrong results (cinn_like/pipeline/debug_wrong_op.h).
absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(const frontend::Program& program,
                                                                const ir::Target& target,
                                                                const std::string& name);

/// CompileProgram of the Program in `program_json` (frontend/program_json.h), the C API's: a
/// Program the persistent cache holds is loaded without parsing its text (the text, as it is,
/// is the key). Errors as ProgramFromJson's and CompileProgram's.
absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgramJson(const std::string& program_json,
                                                                    const ir::Target& target,
                                                                    const std::string& name);

/// The module saved at `path` by CompiledProgram::Save, in this process or another: loaded and
/// linked without NVRTC and without compiling LLVM IR. Refused with a message naming the file
/// and the reason: not a module file, another format version, damaged (checksum, truncation),
/// made for another CPU or GPU arch, or for a target this build lacks.
absl::StatusOr<std::unique_ptr<CompiledProgram>> LoadCompiledProgram(const std::string& path);

/// The source CompileProgram would build for `target` (CUDA C for NVGPU, LLVM IR for X86),
/// without building it: no NVRTC, no driver, no JIT. For reading a schedule on any machine.
absl::StatusOr<std::string> ProgramSource(const frontend::Program& program,
                                          const ir::Target& target, const std::string& name);

}  // namespace cinn_like
