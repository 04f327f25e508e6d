/// \file Target strings in the TVM style: a kind followed by -key=value options.
#include "ir/target.h"

#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace cinn_like::ir {

absl::StatusOr<Target> Target::Parse(const std::string& text) {
  std::vector<std::string> words = absl::StrSplit(text, ' ', absl::SkipEmpty());
  if (words.empty()) return absl::InvalidArgumentError("empty target string");
  Target t;
  if (words[0] == "x86" || words[0] == "llvm" || words[0] == "cpu") {
    t = X86();
  } else if (words[0] == "cuda" || words[0] == "nvgpu") {
    t = NVGPU();
  } else if (words[0] == "opencl") {
    t = OpenCL();
  } else {
    return absl::InvalidArgumentError("unknown target kind '" + words[0] + "' in '" + text +
                                      "'; expected x86, cuda or opencl");
  }
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.rfind("-arch=sm_", 0) == 0 && t.is_nvgpu()) {
      int arch = 0;
      if (!absl::SimpleAtoi(w.substr(9), &arch) || arch <= 0) {
        return absl::InvalidArgumentError("bad CUDA arch '" + w + "' in target '" + text + "'");
      }
      t.cuda_arch = arch;
    } else if (w.rfind("-device=", 0) == 0 && t.is_opencl()) {
      t.opencl_device = w.substr(8);
      if (t.opencl_device != "cpu" && t.opencl_device != "gpu") {
        return absl::InvalidArgumentError("bad OpenCL device '" + w + "' in target '" + text +
                                          "'; expected -device=cpu or -device=gpu");
      }
    } else if (w.rfind("-libs=", 0) == 0 || w.rfind("-mattr=", 0) == 0) {
      for (auto lib : absl::StrSplit(w.substr(w.find('=') + 1), ',', absl::SkipEmpty())) {
        t.features.emplace_back(lib);
      }
    } else {
      return absl::InvalidArgumentError("unknown option '" + w + "' in target '" + text + "'");
    }
  }
  return t;
}

std::string Target::ToString() const {
  std::ostringstream os;
  if (is_x86()) {
    os << "x86";
  } else if (is_opencl()) {
    os << "opencl";
    if (!opencl_device.empty()) os << " -device=" << opencl_device;
  } else {
    os << "cuda";
    if (cuda_arch) os << " -arch=sm_" << cuda_arch;
  }
  if (!features.empty()) {
    os << (is_x86() ? " -mattr=" : " -libs=");
    for (size_t i = 0; i < features.size(); ++i) os << (i ? "," : "") << features[i];
  }
  return os.str();
}

}  // namespace cinn_like::ir
