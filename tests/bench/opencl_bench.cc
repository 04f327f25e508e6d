/// \file OpenCL against CUDA on one GPU (not a test): the softmax and ew_chain workloads of
/// ../shared/bench/torch_anchor.py (float32), compiled by the same graph passes and group
/// scheduler for `cuda` and for `opencl -device=gpu` (NVIDIA's OpenCL: OCL_ICD_FILENAMES=
/// libnvidia-opencl.so.1), each kernel's launch dims printed for both, the results compared,
/// and the kernel times side by side: CUDA events around the entry on device memory (its launch,
/// a few microseconds, included), OpenCL's profiling of each NDRange (its per-launch copies of
/// host memory excluded).
///
///   opencl_bench [--reps=20]
#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/compiler.h"
#include "frontend/net_builder.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "ir/flags.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_runtime.h"
#include "runtime/opencl/opencl_runtime.h"
#include "tests/test_util.h"

DEFINE_int32(reps, 20, "timed repetitions per workload and target (the median is reported)");

namespace cinn_like {
namespace {

using frontend::NetBuilder;
using hlir::DType;
namespace cuda = runtime::cuda;

void Check(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

hlir::Shape S(std::vector<int64_t> dims) {
  hlir::Shape s;
  for (int64_t d : dims) s.push_back(hlir::Dim::Known(d));
  return s;
}

struct Workload {
  std::string name;
  frontend::Program program;
  std::vector<std::vector<int64_t>> shapes;  // inputs, then the output
};

std::vector<Workload> Workloads() {
  std::vector<Workload> out;
  {
    NetBuilder b;
    auto x = b.CreateInput(DType::kFloat32, S({65536, 512}), "x");
    b.MarkOutput(b.Softmax(x));
    out.push_back({"softmax_f32 65536x512", *b.Build(), {{65536, 512}, {65536, 512}}});
  }
  {
    NetBuilder b;  // relu(x * a + b) * sigmoid(x), b broadcast over rows
    auto x = b.CreateInput(DType::kFloat32, S({4096, 4096}), "x");
    auto a = b.CreateInput(DType::kFloat32, S({4096, 4096}), "a");
    auto bias = b.CreateInput(DType::kFloat32, S({4096}), "b");
    b.MarkOutput(b.Mul(b.Relu(b.Add(b.Mul(x, a), bias)), b.Sigmoid(x)));
    out.push_back(
        {"ew_chain_f32 4096x4096", *b.Build(), {{4096, 4096}, {4096, 4096}, {4096}, {4096, 4096}}});
  }
  return out;
}

ir::Module Lower(const frontend::Program& program, const ir::Target& target) {
  auto graph = frontend::BuildGraph(program);
  Check(graph.status(), "graph");
  auto fused = hlir::RunGraphPasses(*graph, hlir::TargetPassOptions(target, "bench", &*graph));
  Check(fused.status(), "graph passes");
  auto module = hlir::CompileFusedGraph(*fused, target, "bench");
  Check(module.status(), "graph compiler");
  return *module;
}

std::string LaunchDims(const ir::Module& module) {
  std::string out;
  for (const ir::LoweredFunc& k : ir::DeviceKernels(module)) {
    auto dims = [](const auto& d) {
      std::string s;
      for (const ir::Expr& e : d) {
        const int64_t* c = ir::AsConstInt(e);
        absl::StrAppend(&s, s.empty() ? "" : "x", c ? std::to_string(*c) : "?");
      }
      return s;
    };
    absl::StrAppend(&out, out.empty() ? "" : "; ", "grid ", dims(k->grid_dims), " block ",
                    dims(k->block_dims));
  }
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run() {
  Check(cuda::EnsureContext(), "CUDA");
  const cuda::DriverApi& d = **cuda::Driver();
  auto ocl_target = ir::Target::Parse("opencl -device=gpu");
  if (auto probe = backends::Compiler::Create(*ocl_target); !probe.ok()) {
    std::printf("OpenCL GPU target unavailable: %s\n",
                std::string(probe.status().message()).c_str());
    return 1;
  }
  auto device = runtime::opencl::Device::Select("gpu", FLAGS_cinn_like_opencl_device);
  std::printf("OpenCL device: %s\n", (*device)->info().Describe().c_str());
  std::printf("%-26s %12s %12s %10s\n", "workload", "cuda ms", "opencl ms", "ocl/cuda");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  for (Workload& w : Workloads()) {
    ir::Module cuda_module = Lower(w.program, ir::Target::NVGPU());
    ir::Module ocl_module = Lower(w.program, *ocl_target);
    std::printf("  cuda   kernels: %s\n  opencl kernels: %s\n", LaunchDims(cuda_module).c_str(),
                LaunchDims(ocl_module).c_str());
    auto cc = backends::Compiler::Create(ir::Target::NVGPU());
    Check(cc.status(), "cuda compiler");
    auto ocl = backends::Compiler::Create(*ocl_target);
    Check(ocl.status(), "opencl compiler");
    Check((*cc)->Build(cuda_module), "cuda build");
    Check((*ocl)->Build(ocl_module), "opencl build");
    auto cuda_fn = (*cc)->Lookup("bench");
    auto ocl_fn = (*ocl)->Lookup("bench");
    Check(cuda_fn.status(), "lookup");
    Check(ocl_fn.status(), "lookup");

    const size_t n = w.shapes.size();
    std::vector<std::vector<float>> host(n);
    std::vector<CUdeviceptr> dev(n);
    std::vector<DLTensor> ct(n), ot(n);
    for (size_t i = 0; i < n; ++i) {
      size_t count = 1;
      for (int64_t s : w.shapes[i]) count *= s;
      host[i].resize(count);
      for (float& v : host[i]) v = i + 1 < n ? dist(rng) : -12345.f;
      Check(cuda::CheckCu(d.MemAlloc(&dev[i], count * 4), "alloc"), "alloc");
      Check(cuda::CheckCu(d.MemcpyHtoD(dev[i], host[i].data(), count * 4), "copy"), "copy");
      ct[i] = testing::FloatView(reinterpret_cast<void*>(dev[i]), w.shapes[i], kDLCUDA);
      ot[i] = testing::FloatView(host[i].data(), w.shapes[i], kDLCPU);
    }
    std::vector<DLTensor*> cargs, oargs;
    for (size_t i = 0; i < n; ++i) cargs.push_back(&ct[i]), oargs.push_back(&ot[i]);

    CUevent start, stop;
    d.EventCreate(&start, 0);
    d.EventCreate(&stop, 0);
    struct Events {  // destroyed on every way out
      const cuda::DriverApi& d;
      CUevent a, b;
      ~Events() {
        d.EventDestroy(a);
        d.EventDestroy(b);
      }
    } events{d, start, stop};
    std::vector<double> cuda_ms, ocl_ms;
    for (int r = 0; r < FLAGS_reps + 2; ++r) {
      d.EventRecord(start, nullptr);
      if ((*cuda_fn)(cargs.data(), static_cast<int32_t>(n), nullptr) != 0) {
        std::fprintf(stderr, "cuda call: %s\n", cinn_like_get_last_error());
        return 1;
      }
      d.EventRecord(stop, nullptr);
      d.EventSynchronize(stop);
      float ms = 0;
      d.EventElapsedTime(&ms, start, stop);
      cinn_like_opencl_take_kernel_ns();
      if ((*ocl_fn)(oargs.data(), static_cast<int32_t>(n), nullptr) != 0) {
        std::fprintf(stderr, "opencl call: %s\n", cinn_like_get_last_error());
        return 1;
      }
      const double ocl = cinn_like_opencl_take_kernel_ns() * 1e-6;
      if (r >= 2) cuda_ms.push_back(ms), ocl_ms.push_back(ocl);
    }
    // The two targets' outputs agree.
    std::vector<float> cuda_out(host[n - 1].size());
    Check(cuda::CheckCu(d.MemcpyDtoH(cuda_out.data(), dev[n - 1], cuda_out.size() * 4), "copy"),
          "copy back");
    double worst = 0;
    for (size_t k = 0; k < cuda_out.size(); ++k) {
      worst = std::max(worst, std::fabs(double(cuda_out[k]) - host[n - 1][k]) /
                                  (1e-6 + std::fabs(double(cuda_out[k]))));
    }
    const double c = Median(cuda_ms), o = Median(ocl_ms);
    std::printf("%-26s %12.3f %12.3f %10.2f   (outputs agree to %.1e relative)\n", w.name.c_str(),
                c, o, o / c, worst);
    for (CUdeviceptr p : dev) d.MemFree(p);
  }
  return 0;
}

}  // namespace
}  // namespace cinn_like

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return cinn_like::Run();
}
