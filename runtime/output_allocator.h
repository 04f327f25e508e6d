/// \file Outputs allocated by the call, not before it: a caller that gives an output no memory
/// (a null data pointer) sets an allocator for the call on its thread, and the host entry asks
/// it for the output's memory just before the first statement that writes it (a training
/// step's backward then holds each gradient from its first write, not from the call's start).
/// Defined in runtime/output_allocator.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cinn_like::runtime {

/// Allocates the memory of argument `index` (an output), `bytes` long; null on failure.
using OutputAllocator = void* (*)(void* ctx, int32_t index, size_t bytes);

/// While it lives, this thread's calls allocate their outputs of null data through `alloc`.
class OutputAllocatorScope {
 public:
  OutputAllocatorScope(OutputAllocator alloc, void* ctx);
  ~OutputAllocatorScope();
  OutputAllocatorScope(const OutputAllocatorScope&) = delete;
  OutputAllocatorScope& operator=(const OutputAllocatorScope&) = delete;

 private:
  OutputAllocator previous_alloc_;
  void* previous_ctx_;
};

/// Whether this thread is in such a scope.
bool OutputAllocatorSet();

}  // namespace cinn_like::runtime
