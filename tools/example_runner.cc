/// \file The example runner: host buffers, device copies on NVGPU, reference comparison.
#include "tools/example_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

#include "runtime/cinn_like_runtime.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace cinn_like::examples {
namespace {

/// One argument: host data, and the DLTensor the function sees (host or device memory).
struct Arg {
  std::vector<int64_t> shape;
  std::vector<float> host;
  void* device = nullptr;
  DLTensor tensor{};
};

absl::Status CudaCall(int rc, const char* what) {
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(std::string(what) + ": " + cinn_like_get_last_error());
}

class DeviceBuffers {
 public:
  ~DeviceBuffers() {
#ifdef CINN_LIKE_WITH_CUDA
    for (void* p : ptrs_) cinn_like_cuda_free(p);
#endif
  }
  absl::StatusOr<void*> Alloc(size_t bytes) {
#ifdef CINN_LIKE_WITH_CUDA
    void* p = nullptr;
    absl::Status st =
        CudaCall(cinn_like_cuda_malloc(&p, std::max<size_t>(bytes, 4)), "cuda malloc");
    if (!st.ok()) return st;
    ptrs_.push_back(p);
    return p;
#else
    return absl::UnavailableError("this build has no CUDA");
#endif
  }

 private:
  std::vector<void*> ptrs_;
};

absl::Status Synchronize(bool on_gpu) {
#ifdef CINN_LIKE_WITH_CUDA
  if (on_gpu) return CudaCall(cinn_like_cuda_synchronize(), "cuda synchronize");
#endif
  return absl::OkStatus();
}

absl::Status Copy(void* dst, const void* src, size_t bytes, bool to_device) {
#ifdef CINN_LIKE_WITH_CUDA
  if (to_device)
    return CudaCall(cinn_like_cuda_memcpy_to_device(dst, src, bytes), "copy to device");
  return CudaCall(cinn_like_cuda_memcpy_to_host(dst, src, bytes), "copy to host");
#else
  return absl::UnavailableError("this build has no CUDA");
#endif
}

}  // namespace

double RelativeError(const Example& example, const std::vector<std::vector<float>>& reference,
                     const std::vector<std::vector<float>>& outputs, int64_t n) {
  // The scale is the reference run on |inputs|: sum(|a|) for a sum, |A||B| for a matmul. An
  // error relative to it stays meaningful when the true result nearly cancels to zero.
  std::vector<std::vector<float>> scale = reference;
  for (int i = 0; i < example.num_inputs; ++i) {
    for (auto& v : scale[i]) v = std::fabs(v);
  }
  example.reference(scale, n);
  double diff = 0, norm = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    size_t i = example.num_inputs + o;
    for (size_t k = 0; k < outputs[o].size(); ++k) {
      double d = static_cast<double>(outputs[o][k]) - reference[i][k];
      diff += std::isnan(d) ? INFINITY : d * d;
      norm += static_cast<double>(scale[i][k]) * scale[i][k];
    }
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

std::string RunReport::ToString() const {
  std::ostringstream os;
  os << "n=" << n << " rel_error=" << rel_error << (passed ? " ok" : " MISMATCH");
  if (run_ms > 0) os << " time=" << run_ms << "ms";
  return os.str();
}

absl::Status BuildExample(const Example& example, backends::Compiler& compiler) {
  if (compiler.Lookup(example.name).ok()) return absl::OkStatus();
  auto func = example.build(compiler.target());
  if (!func.ok()) return func.status();
  ir::Module module{example.name, compiler.target(), {*func}};
  return compiler.Build(module);
}

absl::StatusOr<RunReport> RunExample(const Example& example, backends::Compiler& compiler,
                                     int64_t n, int timed_runs) {
  auto fn = compiler.Lookup(example.name);
  if (!fn.ok()) return fn.status();
  bool on_gpu = compiler.target().is_nvgpu();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto shapes = example.shapes(n);
  std::vector<Arg> args(shapes.size());
  DeviceBuffers device;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Arg& a = args[i];
    a.shape = shapes[i];
    int64_t count = 1;
    for (auto d : a.shape) count *= d;
    a.host.resize(count);
    bool is_input = static_cast<int>(i) < example.num_inputs;
    for (auto& v : a.host) v = is_input ? dist(rng) : -12345.f;  // outputs start poisoned
    void* data = a.host.data();
    if (on_gpu) {
      auto p = device.Alloc(count * sizeof(float));
      if (!p.ok()) return p.status();
      a.device = *p;
      absl::Status st = Copy(a.device, a.host.data(), count * sizeof(float), true);
      if (!st.ok()) return st;
      data = a.device;
    }
    a.tensor.data = data;
    a.tensor.device = {on_gpu ? kDLCUDA : kDLCPU, 0};
    a.tensor.ndim = static_cast<int32_t>(a.shape.size());
    a.tensor.dtype = {kDLFloat, 32, 1};
    a.tensor.shape = a.shape.data();
  }
  std::vector<DLTensor*> ptrs;
  for (auto& a : args) ptrs.push_back(&a.tensor);
  if ((*fn)(ptrs.data(), static_cast<int32_t>(ptrs.size()), nullptr) != 0) {
    return absl::InvalidArgumentError(cinn_like_get_last_error());
  }
  absl::Status st = Synchronize(on_gpu);
  if (!st.ok()) return st;

  std::vector<std::vector<float>> ref;
  for (auto& a : args) ref.push_back(a.host);
  example.reference(ref, n);
  std::vector<std::vector<float>> outs;
  for (size_t i = example.num_inputs; i < args.size(); ++i) {
    outs.push_back(args[i].host);
    if (on_gpu) {
      st = Copy(outs.back().data(), args[i].device, outs.back().size() * sizeof(float), false);
      if (!st.ok()) return st;
    }
  }
  RunReport report;
  report.n = n;
  report.rel_error = RelativeError(example, ref, outs, n);
  report.passed = report.rel_error <= example.tolerance;

  std::vector<double> times;
  for (int r = 0; r < timed_runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    if ((*fn)(ptrs.data(), static_cast<int32_t>(ptrs.size()), nullptr) != 0) {
      return absl::InternalError(cinn_like_get_last_error());
    }
    st = Synchronize(on_gpu);
    if (!st.ok()) return st;
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    report.run_ms = times[times.size() / 2];
  }
  return report;
}

}  // namespace cinn_like::examples
