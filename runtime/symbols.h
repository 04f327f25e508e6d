/// \file The table of runtime C functions that JIT-compiled code may call, by symbol name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cinn_like::runtime {

/// Every cinn_like_* function of the runtime C ABI (argument checks, last error, thread pool;
/// with CUDA the kernel launch and the cuBLAS/cuDNN externs; with oneDNN its externs) with its
/// address, for the JIT to define as absolute symbols.
std::vector<std::pair<std::string, void*>> RuntimeSymbols();

}  // namespace cinn_like::runtime
