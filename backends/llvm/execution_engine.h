/// \file The JIT: LLVM 19 ORC LLJIT that optimizes host modules, links them against the
/// runtime's C ABI and hands out function addresses.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/compiler.h"
#include "backends/llvm/codegen_llvm.h"

namespace llvm::orc {
class LLJIT;
}

namespace cinn_like::backends {

/// The host's target triple and data layout (initializes the native target once).
absl::StatusOr<std::pair<std::string, std::string>> HostTargetDescription();

/// What this host's machine code is for: "<triple> <cpu> <features>". Objects made for one
/// description link only where HostCodeDescription() is the same (a saved module, a cache entry).
absl::StatusOr<std::string> HostCodeDescription();

/// Ok when objects made for the CPU `host` (a HostCodeDescription()) link and run here; else
/// FailedPrecondition naming both CPUs.
absl::Status CheckHostCode(const std::string& host);

class ExecutionEngine {
 public:
  /// What the host modules hold: kernels (X86: LLVM's O3 and its most aggressive code
  /// generation) or glue that only allocates and calls (NVGPU host entries: O1 and LLVM's fastest
  /// code generation, a fraction of the compile time for code that does no arithmetic).
  enum class HostCode { kKernels, kGlue };
  /// A JIT for the host CPU with the runtime's C functions and the process's libraries (libm)
  /// resolvable from JIT code.
  static absl::StatusOr<std::unique_ptr<ExecutionEngine>> Create(
      HostCode code = HostCode::kKernels);
  ~ExecutionEngine();

  /// Defines absolute symbols, e.g. "<kernel>_ptr_" to the address of a kernel handle slot.
  absl::Status RegisterSymbols(const std::vector<std::pair<std::string, void*>>& symbols);
  /// Verifies `m`, sets the host CPU's triple, data layout and features on it and runs the O3
  /// pipeline, O1 for glue (with the dump flag, writes <module>.host.opt.ll).
  absl::Status Optimize(LLVMModule& m);
  /// Compiles a module (optimized by Optimize) to an object for this host and adds it
  /// (AddObject), so that code generation and linking errors belong to this call.
  absl::Status AddModule(LLVMModule m);
  /// Links a relocatable object for this host (one of objects(), possibly of another process)
  /// and resolves its functions now; its entries (EntrySymbol) become Lookup's.
  absl::Status AddObject(const std::string& object);
  /// AddObject of each of `objects`, made for the CPU `host` (HostCodeDescription() where
  /// they were made): FailedPrecondition naming both CPUs when this host is another.
  absl::Status AddObjectsFor(const std::string& host, const std::vector<std::string>& objects);
  /// The objects added, in order.
  const std::vector<std::string>& objects() const { return objects_; }
  /// The address of the entry `name` added earlier (its symbol is EntrySymbol(name)); NotFound
  /// names it and the entries added.
  absl::StatusOr<void*> Lookup(const std::string& name);
  /// The host entry `name` (Compiler::Lookup of every JIT-linked backend).
  absl::StatusOr<EntryFunction> LookupEntry(const std::string& name);
  /// Writes the object of each module added: the first to `path`, the k-th (k >= 1) to
  /// <path>.<k>.o.
  absl::Status ExportObject(const std::string& path);

 private:
  ExecutionEngine();
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  HostCode code_ = HostCode::kKernels;
  std::vector<std::string> functions_;  // the entries added (by name, not symbol), in order
  std::vector<std::string> objects_;    // each object added
};

}  // namespace cinn_like::backends
