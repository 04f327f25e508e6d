/// \file What the compiler generates code for: an x86 CPU or an NVIDIA GPU of one arch.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cinn_like::ir {

struct Target {
  enum class Arch { kX86, kNVGPU };

  Arch arch = Arch::kX86;
  int bits = 64;
  /// CPU features ("avx2", ...) or extra library names ("cublas") parsed from a target string.
  std::vector<std::string> features;
  /// NVGPU only: compute capability as major*10+minor (90 for sm_90); 0 means "ask the device,
  /// or the cinn_like_cuda_arch flag" when the Compiler is created.
  int cuda_arch = 0;

  static Target X86() { return Target{}; }
  static Target NVGPU(int cuda_arch = 0) {
    Target t;
    t.arch = Arch::kNVGPU;
    t.cuda_arch = cuda_arch;
    return t;
  }
  /// Parses "x86", "cuda", "cuda -arch=sm_90", "nvgpu -arch=sm_80".
  static absl::StatusOr<Target> Parse(const std::string& text);

  bool is_x86() const { return arch == Arch::kX86; }
  bool is_nvgpu() const { return arch == Arch::kNVGPU; }
  /// "x86" or "cuda -arch=sm_90".
  std::string ToString() const;
  bool operator==(const Target& o) const {
    return arch == o.arch && bits == o.bits && cuda_arch == o.cuda_arch && features == o.features;
  }
};

}  // namespace cinn_like::ir
