/// \file Indices out of range are errors, as in PyTorch, not clamped or skipped silently.
#include "runtime/index_check.h"

#include <cstring>
#include <string>

#include "runtime/cinn_like_runtime.h"

namespace cinn_like::runtime {
namespace {

template <typename T>
int Check(const T* v, int64_t count, int64_t low, int64_t high, const char* what) {
  for (int64_t k = 0; k < count; ++k) {
    if (static_cast<int64_t>(v[k]) >= low && static_cast<int64_t>(v[k]) < high) continue;
    const std::string message = std::string(what ? what : "gather") + ": index " +
                                std::to_string(static_cast<int64_t>(v[k])) + " (at position " +
                                std::to_string(k) + ") is out of range [" + std::to_string(low) +
                                ", " + std::to_string(high) + ")";
    cinn_like_set_last_error(message.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int CheckIndices(const void* host, int64_t count, int64_t bits, int64_t low, int64_t high,
                 const char* what) {
  if (count <= 0) return 0;
  if (bits == 32) return Check(static_cast<const int32_t*>(host), count, low, high, what);
  if (bits == 64) return Check(static_cast<const int64_t*>(host), count, low, high, what);
  cinn_like_set_last_error((std::string(what ? what : "gather") + ": indices of " +
                            std::to_string(bits) + " bits; int32 or int64 expected")
                               .c_str());
  return 1;
}

}  // namespace cinn_like::runtime

extern "C" int cinn_like_check_indices(const void* indices, void* out, int64_t count, int64_t bits,
                                       int64_t low, int64_t high, const char* what,
                                       void* /*stream*/) {
  const int rc = cinn_like::runtime::CheckIndices(indices, count, bits, low, high, what);
  if (rc == 0 && count > 0 && out != indices) std::memcpy(out, indices, count * (bits / 8));
  return rc;
}
