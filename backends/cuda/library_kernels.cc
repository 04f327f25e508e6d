/// \file Which library kernels a module launches, and their source.
#include "backends/cuda/library_kernels.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "backends/cuda/attention_grad_source.h"
#include "backends/cuda/attention_kernel_source.h"
#include "backends/philox_source.h"

namespace cinn_like::backends {

std::vector<std::string> LibraryKernelNames(const ir::Module& module) {
  std::set<std::string> seen;
  for (const ir::LoweredFunc& k : ir::DeviceKernels(module)) seen.insert(k->name);
  std::vector<std::string> names;
  for (const ir::LoweredFunc& f : module.functions) {
    for (const std::string& name : ir::LaunchedKernels(f->body)) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

absl::StatusOr<std::string> LibraryKernelsSource(const std::vector<std::string>& names) {
  std::string instances;
  bool grad = false;
  for (const std::string& name : names) {
    if (!ir::AttentionKernelSpec::IsAttention(name)) {
      return absl::NotFoundError(absl::StrCat("kernel ", name,
                                              " is launched but neither generated for the module "
                                              "nor a library kernel"));
    }
    auto spec = ir::AttentionKernelSpec::Parse(name);
    if (!spec.ok()) return spec.status();
    grad = grad || spec->grad;
    auto instance =
        spec->grad ? AttentionGradKernelInstance(*spec) : AttentionKernelInstance(*spec);
    if (!instance.ok()) return instance.status();
    instances += *instance;
  }
  if (names.empty()) return std::string();
  // The attention kernels' own Philox (dropout), in their namespace with the types it names:
  // the module's generated kernels may print the global one, and the library's source compiles
  // without the module's preamble too. The backward's template only where one is launched (a
  // forward's unit, and its prebuilt fingerprint, stay as they were).
  return absl::StrCat(
      "namespace cinn_like_attention {\n"
      "typedef long long int64_t;\n"
      "typedef unsigned long long uint64_t;\n"
      "typedef unsigned int uint32_t;\n",
      PhiloxSource("__device__ __forceinline__", "__umulhi"), "}\n", AttentionKernelTemplate(),
      AttentionTileTemplate(), AttentionMmaTemplate(), grad ? AttentionGradTemplate() : "",
      grad ? AttentionGradMmaTemplate() : "", instances);
}

}  // namespace cinn_like::backends
