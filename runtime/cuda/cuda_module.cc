/// \file CudaModule over the dlopen()ed driver.
#include "runtime/cuda/cuda_module.h"

#include <glog/logging.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_driver.h"

namespace cinn_like::runtime::cuda {

absl::StatusOr<std::unique_ptr<CudaModule>> CudaModule::Load(const std::string& image) {
  const bool cubin = absl::StartsWith(image,
                                      "\x7f"
                                      "ELF");
  if (image.empty()) return absl::InvalidArgumentError("cannot load an empty CUDA module image");
  absl::Status s = EnsureContext();
  if (!s.ok()) return s;
  const DriverApi& d = **Driver();
  CUmodule module = nullptr;
  // c_str() ends PTX text with the NUL the driver needs.
  CUresult r = d.ModuleLoadData(&module, image.c_str());
  if (r != CUDA_SUCCESS) {
    if (cubin) {
      return absl::InternalError(absl::StrCat("cuModuleLoadData(CUBIN, ", image.size(),
                                              " bytes) failed: ", ErrorText(r),
                                              " (was the CUBIN built for this device's arch?)"));
    }
    return absl::InternalError(absl::StrCat(
        "cuModuleLoadData(PTX, ", image.size(), " bytes) failed: ", ErrorText(r),
        " (the driver's PTX JIT rejected it; a driver older than the NVRTC that wrote the PTX "
        "cannot JIT it: compile to CUBIN with FLAGS_cinn_like_nvrtc_compile_to_cubin=true)"));
  }
  return std::unique_ptr<CudaModule>(new CudaModule(module));
}

CudaModule::~CudaModule() {
  auto driver = Driver();
  if (!module_ || !driver.ok()) return;
  CUresult r = (*driver)->ModuleUnload(static_cast<CUmodule>(module_));
  if (r != CUDA_SUCCESS) LOG(WARNING) << "cuModuleUnload failed: " << ErrorText(r);
}

absl::StatusOr<void*> CudaModule::GetFunction(const std::string& name) {
  auto driver = Driver();
  if (!driver.ok()) return driver.status();
  CUfunction function = nullptr;
  CUresult r =
      (*driver)->ModuleGetFunction(&function, static_cast<CUmodule>(module_), name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) {
    return absl::NotFoundError(
        absl::StrCat("kernel ", name, " is not in the loaded CUDA module (", ErrorText(r), ")"));
  }
  absl::Status s = CheckCu(r, absl::StrCat("cuModuleGetFunction(", name, ")"));
  if (!s.ok()) return s;
  return static_cast<void*>(function);
}

}  // namespace cinn_like::runtime::cuda
