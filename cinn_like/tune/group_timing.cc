/// \file CanTimeAlone, PlaceGroupArgs, BuildFunction and SecondsPerCall: a fusion group's
/// function timed on the device.
#include "cinn_like/tune/group_timing.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "backends/compiler.h"
#include "cinn_like/compare/random_inputs.h"
#include "runtime/cinn_like_runtime.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace cinn_like {
namespace {

absl::Status Synchronize(const ir::Target& target) {
#ifdef CINN_LIKE_WITH_CUDA
  if (target.is_nvgpu() && cinn_like_cuda_synchronize() != 0) {
    return absl::InternalError(cinn_like_get_last_error());
  }
#else
  (void)target;
#endif
  return absl::OkStatus();
}

}  // namespace

absl::Status CanTimeAlone(const hlir::FusedGraph& one) {
  if (one.graph.outputs().empty()) {
    return absl::FailedPreconditionError("no stored value (computed inside its readers)");
  }
  const auto& values = one.graph.values();
  if (std::any_of(values.begin(), values.end(),
                  [](const hlir::Value& v) { return !hlir::IsStatic(v.desc.shape); })) {
    return absl::FailedPreconditionError("symbolic shapes (no size to time it at)");
  }
  return absl::OkStatus();
}

absl::StatusOr<GroupArgs> PlaceGroupArgs(const hlir::Graph& graph, const ir::Target& target) {
  RandomInputOptions random;
  std::vector<hlir::HostTensor> hosts = RandomInputs(graph, random);
  for (int v : graph.outputs()) {
    std::vector<int64_t> dims;
    for (const hlir::Dim& d : graph.values()[v].desc.shape) dims.push_back(d.value);
    hosts.emplace_back(graph.values()[v].desc.dtype, dims);
  }
  GroupArgs placed;
  for (const hlir::HostTensor& h : hosts) {
    auto t = DeviceTensor::Create(h, DeviceOf(target));
    if (!t.ok()) return t.status();
    placed.args.push_back((*t)->dl());
    placed.tensors.push_back(std::move(*t));
  }
  return placed;
}

absl::StatusOr<BuiltFunction> BuildFunction(const ir::Module& module, const ir::Target& target,
                                            const std::string& fname) {
  auto compiler = backends::Compiler::Create(target);
  if (!compiler.ok()) return compiler.status();
  absl::Status st = (*compiler)->Build(module);
  if (!st.ok()) return st;
  auto fn = (*compiler)->Lookup(fname);
  if (!fn.ok()) return fn.status();
  return BuiltFunction{*std::move(compiler), *fn};
}

absl::StatusOr<double> SecondsPerCall(const BuiltFunction& f, const ir::Target& target,
                                      std::vector<DLTensor*>& args) {
  auto call = [&]() -> absl::Status {
    if (f.fn(args.data(), static_cast<int32_t>(args.size()), nullptr) != 0) {
      return absl::InternalError(cinn_like_get_last_error());
    }
    return absl::OkStatus();
  };
  using Clock = std::chrono::steady_clock;
  auto batch = [&](int calls) -> absl::StatusOr<double> {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) {
      absl::Status s = call();
      if (!s.ok()) return s;
    }
    absl::Status s = Synchronize(target);
    if (!s.ok()) return s;
    return std::chrono::duration<double>(Clock::now() - start).count() / calls;
  };
  auto once = batch(2);  // warm-up: first-call costs (module load, library plans)
  if (once.ok()) once = batch(1);
  if (!once.ok()) return once.status();
  const int calls = static_cast<int>(std::clamp(2e-3 / std::max(*once, 1e-7), 1.0, 200.0));
  double best = std::numeric_limits<double>::infinity();
  for (int b = 0; b < 3; ++b) {
    auto t = batch(calls);
    if (!t.ok()) return t.status();
    best = std::min(best, *t);
  }
  return best;
}

}  // namespace cinn_like
