/// \file The alignment a device kernel's vector accesses assume of its arguments, shared by the
/// CUDA C printer (which vector stores need no test of their own) and the host code (which
/// pointers it tests before the launch).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "ir/ir.h"
#include "ir/module.h"

namespace cinn_like::backends {

/// Size arguments a kernel may assume multiples of (then tested in the kernel): 8 halves, 4
/// floats.
constexpr int64_t kSizeMultiple = 8;

/// Kernel versioning for alignment. The vector stores whose every vector access is of a kernel
/// argument at an index known to be a multiple of the access's lanes (from the index's
/// constants, products and lets: ir::KnownDivisor) are aligned whenever those arguments'
/// pointers are: they print as vector accesses alone, with no test of their own.
struct KernelAlignment {
  std::set<const ir::Store*> stores;
  /// A kernel argument whose pointer those stores assume a multiple of `bytes` (16, 8 or 4).
  struct Pointer {
    int arg = 0;  // index in the kernel's arguments
    int bytes = 0;
  };
  std::vector<Pointer> pointers;  // in argument order
  /// Size arguments the stores also assume multiples of kSizeMultiple (a row stride of
  /// symbolic length, x[row * s1 + ...]).
  std::vector<const ir::Variable*> sizes;

  /// Whether the host guarantees the assumption: it tests the pointers before each launch and
  /// hands misaligned ones to cinn_like_cuda_launch_realigned (runtime/cuda/cuda_runtime.h), so
  /// the kernel holds the aligned version alone. Not with size assumptions, which no copy makes
  /// true: such a kernel tests them (and its pointers) itself and keeps a second copy of its body
  /// with a test per vector statement.
  bool HostRealigns() const { return !pointers.empty() && sizes.empty(); }
};

/// The plan for `kernel` (empty when no vector store qualifies or the kernel has shared arrays:
/// a second copy of the body would double its shared memory).
KernelAlignment PlanKernelAlignment(const ir::LoweredFuncNode& kernel);

}  // namespace cinn_like::backends
