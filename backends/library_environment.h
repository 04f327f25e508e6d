/// \file What the compile-time library checks (backends/library_functions.cc) depend on besides
/// their arguments, for keys of compiled code (cinn_like/cache/disk_cache.h): an entry made where
/// cuDNN loads calls cuDNN, one made where it does not runs generated kernels.
#pragma once

#include <string>

#include "ir/target.h"

namespace cinn_like::backends {

/// The libraries that load here for `target` and their versions, as one line, e.g.
/// "oneDNN 2.6.3" or "device: yes; cuDNN: loads". `convolutions`: whether to ask about the
/// library that runs them on GPUs (loading cuDNN costs more than a warm compile's rest).
/// (cuBLAS and cuBLASLt come with the CUDA toolkit the library was built with, NVRTC's version
/// in the key stands for them.)
std::string LibraryEnvironment(const ir::Target& target, bool convolutions);

}  // namespace cinn_like::backends
