/// \file A call's hooks (runtime/call_hooks.h) and what the host entry calls to use them
/// (cinn_like_alloc_output, cinn_like_release_input).
#include "runtime/call_hooks.h"

#include <dlpack/dlpack.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like::runtime {
namespace {

thread_local OutputAllocator current_alloc = nullptr;
thread_local void* current_ctx = nullptr;
thread_local InputRelease current_release = nullptr;
thread_local void* current_release_ctx = nullptr;

}  // namespace

CallHooksScope::CallHooksScope(OutputAllocator alloc, void* alloc_ctx, InputRelease release,
                               void* release_ctx)
    : previous_alloc_(current_alloc),
      previous_alloc_ctx_(current_ctx),
      previous_release_(current_release),
      previous_release_ctx_(current_release_ctx) {
  current_alloc = alloc;
  current_ctx = alloc_ctx;
  current_release = release;
  current_release_ctx = release_ctx;
}

CallHooksScope::~CallHooksScope() {
  current_alloc = previous_alloc_;
  current_ctx = previous_alloc_ctx_;
  current_release = previous_release_;
  current_release_ctx = previous_release_ctx_;
}

bool OutputAllocatorSet() { return current_alloc != nullptr; }

}  // namespace cinn_like::runtime

extern "C" void* cinn_like_alloc_output(const char* func, DLTensor* const* args, int32_t index,
                                        const char* name) {
  using cinn_like::runtime::current_alloc;
  using cinn_like::runtime::current_ctx;
  DLTensor* t = args[index];
  auto fail = [&](const std::string& why) -> void* {
    cinn_like_set_last_error(absl::StrCat(func, ": output ", index, " (", name, ") ", why).c_str());
    return nullptr;
  };
  // The entry checked the dtype and the shape against its own, within its index range: the
  // product cannot overflow.
  size_t bytes = (static_cast<size_t>(t->dtype.bits) * t->dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < t->ndim; ++d) bytes *= static_cast<size_t>(t->shape[d]);
  if (bytes == 0) {
    // No element (a null data pointer is a valid empty tensor): an address nothing uses.
    alignas(64) static char nothing[64];
    return nothing;
  }
  if (current_alloc == nullptr) {
    return fail("has no memory (a null data pointer) and the call has no output allocator");
  }
  void* p = current_alloc(current_ctx, index, bytes);
  if (p == nullptr) return fail(absl::StrCat("could not be allocated (", bytes, " bytes)"));
  // As a workspace's: the kernels' vector accesses assume it.
  if (reinterpret_cast<uintptr_t>(p) % 64 != 0) {
    return fail("was given memory that is not 64-byte aligned by the call's output allocator");
  }
  t->data = p;
  t->byte_offset = 0;
  return p;
}

extern "C" void cinn_like_release_input(int32_t index) {
  using cinn_like::runtime::current_release;
  using cinn_like::runtime::current_release_ctx;
  if (current_release != nullptr) current_release(current_release_ctx, index);
}
