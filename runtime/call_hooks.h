/// \file What a caller does for the host entry during a call, set on the caller's thread for the
/// call: allocate an output it gave no memory (a null data pointer) just before the first
/// statement that writes it, and take back an input after the last statement that names it. A
/// training step's backward then holds each gradient from its first write and each saved
/// activation until its last read, not for the whole call. Defined in runtime/call_hooks.cc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cinn_like::runtime {

/// Allocates the memory of argument `index` (an output), `bytes` long; null on failure.
using OutputAllocator = void* (*)(void* ctx, int32_t index, size_t bytes);
/// Tells the caller that the call names input `index` no more: once the work queued so far is
/// done (on a GPU, stream-ordered on the call's stream) its memory may be reused.
using InputRelease = void (*)(void* ctx, int32_t index);

/// While it lives, this thread's calls allocate their outputs of null data through `alloc` and
/// hand their inputs back through `release` (either may be null: not done).
class CallHooksScope {
 public:
  CallHooksScope(OutputAllocator alloc, void* alloc_ctx, InputRelease release, void* release_ctx);
  ~CallHooksScope();
  CallHooksScope(const CallHooksScope&) = delete;
  CallHooksScope& operator=(const CallHooksScope&) = delete;

 private:
  OutputAllocator previous_alloc_;
  void* previous_alloc_ctx_;
  InputRelease previous_release_;
  void* previous_release_ctx_;
};

/// Whether this thread is in a scope with an output allocator.
bool OutputAllocatorSet();

}  // namespace cinn_like::runtime
