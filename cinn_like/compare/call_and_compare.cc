/// \file CallAndCompare: the tensors placed, the call, the outputs read back and compared.
#include "cinn_like/compare/call_and_compare.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "cinn_like/compare/compare_outputs.h"
#include "cinn_like/compare/tensor_transfer.h"
#include "hlir/dtype.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like {

using hlir::HostTensor;

std::string CallAndCompare(backends::EntryFunction fn, const ir::Target& target,
                           const std::vector<HostTensor>& inputs,
                           const std::vector<HostTensor>& want,
                           const std::vector<std::string>& output_names, void* stream) {
  const DLDevice device = DeviceOf(target);
  std::vector<std::unique_ptr<DeviceTensor>> tensors;
  auto place = [&](const HostTensor& h) {
    auto t = DeviceTensor::Create(h, device);
    if (t.ok()) tensors.push_back(std::move(*t));
    return t.status();
  };
  for (const HostTensor& h : inputs) {
    absl::Status s = place(h);
    if (!s.ok()) return absl::StrCat("placing the inputs failed: ", s.message());
  }
  for (const HostTensor& w : want) {
    HostTensor poison(w.dtype, w.shape);  // what a kernel that writes nothing leaves
    for (double& v : poison.data) v = hlir::RoundToDType(-12345, w.dtype);
    absl::Status s = place(poison);
    if (!s.ok()) return absl::StrCat("placing the outputs failed: ", s.message());
  }
  std::vector<DLTensor*> args;
  for (auto& t : tensors) args.push_back(t->dl());
  if (fn(args.data(), static_cast<int32_t>(args.size()), stream) != 0) {
    return absl::StrCat("the call failed: ", cinn_like_get_last_error());
  }
  std::vector<HostTensor> got;
  for (size_t o = 0; o < want.size(); ++o) {
    auto h = ReadTensor(*args[inputs.size() + o], want[o].dtype);
    if (!h.ok()) return absl::StrCat("reading the outputs failed: ", h.status().message());
    got.push_back(std::move(*h));
  }
  return CompareOutputs(output_names, want, got);
}

}  // namespace cinn_like
