/// \file Device properties: the registered queries and their cache.
#include "ir/device_properties.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "ir/compile_options.h"
#include "ir/flags.h"

namespace cinn_like::ir {
namespace {

struct Registry {
  std::mutex mu;
  std::map<Target::Arch, DevicePropertiesQuery> queries;
  std::map<std::string, DeviceProperties> cache;  // by Target::ToString()
};

Registry& GetRegistry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

void RegisterDevicePropertiesQuery(Target::Arch arch, DevicePropertiesQuery query) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.queries[arch] = std::move(query);
  r.cache.clear();
}

DeviceProperties DefaultDeviceProperties(const Target& target) {
  DeviceProperties p;
  p.vector_bytes = target.vector_bytes();
  if (target.is_gpu()) {
    const int arch = target.cuda_arch;
    p.multiprocessors = arch >= 90 ? 132 : arch >= 80 ? 108 : 80;
    p.max_threads_per_block = target.max_threads_per_block();
    p.shared_memory_per_block = 48 * 1024;
    p.source = absl::StrCat("default for ", target.ToString());
  } else {
    p.multiprocessors = std::max(1u, std::thread::hardware_concurrency());
    p.source = "this host";
  }
  return p;
}

const DeviceProperties& DevicePropertiesOf(const Target& target) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  // An OpenCL target's device also depends on the flag that picks it.
  const std::string key = target.is_opencl()
                              ? target.ToString() + " " + CurrentCompileOptions().opencl_device
                              : target.ToString();
  auto it = r.cache.find(key);
  if (it != r.cache.end()) return it->second;
  DeviceProperties p = DefaultDeviceProperties(target);
  auto q = r.queries.find(target.arch);
  if (q != r.queries.end()) {
    auto asked = q->second(target);
    if (asked.ok()) p = *asked;
  }
  return r.cache.emplace(key, p).first->second;
}

}  // namespace cinn_like::ir
