/// \file A library extern's absl::Status as the C ABI's return value: 0, or -1 with the message
/// in the last-error slot (what cinn_like_cublas_*, cinn_like_cudnn_*, cinn_like_dnnl_* return).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like::runtime {

inline int ReturnStatus(const absl::Status& st) {
  if (st.ok()) return 0;
  cinn_like_set_last_error(std::string(st.message()).c_str());
  return -1;
}

}  // namespace cinn_like::runtime
