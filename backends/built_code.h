/// \file BuiltCode: what a Compiler made, as bytes. Another Compiler for the same target, in
/// this process or another, loads it (Compiler::Load) and calls its functions without compiling
/// anything: no code generation, no NVRTC, no LLVM optimisation. The persistent cache and saved
/// modules (cinn_like/cache/module_file.h) are this, with a header.
#pragma once

#include <string>
#include <vector>

namespace cinn_like::backends {

/// One device image and the kernels whose handles the host code finds through the runtime
/// symbols `<kernel>_ptr_`.
struct DeviceBinary {
  bool cubin = true;  // CUBIN for exactly the target's arch, else PTX (the driver's JIT)
  std::string image;
  std::vector<std::string> kernels;
};

struct BuiltCode {
  /// The CPU the host objects are for (backends::HostCodeDescription() where they were made).
  std::string host;
  /// Relocatable ELF objects for this host's CPU, one per Build, in order: the host entries
  /// (all of the code on X86). Their undefined symbols are the runtime's C functions, the
  /// process's libraries and the kernel handle slots of `device`.
  std::vector<std::string> host_objects;
  std::vector<DeviceBinary> device;  // one per Build on NVGPU; empty on X86
};

}  // namespace cinn_like::backends
