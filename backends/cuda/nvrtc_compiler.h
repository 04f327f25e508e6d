/// \file NVRTC: CUDA C to PTX or CUBIN in-process, with errors that quote the source.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cinn_like::backends::nvrtc {

/// The NVRTC driver of the NVGPU backend. Stateless; safe to use from several threads.
class Compiler {
 public:
  /// Archs NVRTC supports, ascending, as 75, 80, 86, 89, 90, ... (nvrtcGetSupportedArchs).
  static std::vector<int> SupportedArchs();
  /// NVRTC's version, as "13.0" (nvrtcVersion).
  static std::string Version();
  /// Ok when NVRTC supports `arch`; else InvalidArgument like "CUDA arch sm_30 (from the target)
  /// is not supported by NVRTC 13.0 (supported: sm_75 to sm_121)". `origin` says where the arch
  /// came from: "the target", "the flag cinn_like_cuda_arch", "the device" (a leading "from " is
  /// accepted too; empty leaves the parenthesis out).
  static absl::Status CheckArch(int arch, const std::string& origin);

  /// Compiles `source` for compute capability `arch` (90 for sm_90): CUBIN for sm_<arch> when
  /// `to_cubin`, else PTX for compute_<arch>. Options: -std=c++17, -default-device and the CUDA
  /// include dir. `name` names the program (<name>.cu) in NVRTC's log and the saved files:
  /// <name>.cu, and <name>.ptx for PTX, go to FLAGS_cinn_like_source_save_path when set and to
  /// the dump dir. An unsupported arch is InvalidArgument (see CheckArch); so is source NVRTC
  /// rejects: "NVRTC failed to compile <name>.cu:\n<log>\noffending source:\n  3 | <line 3>".
  /// Returns the image: CUBIN ELF bytes, or PTX text without its terminating NUL.
  absl::StatusOr<std::string> Compile(const std::string& source, int arch, bool to_cubin,
                                      const std::string& name);
};

}  // namespace cinn_like::backends::nvrtc
