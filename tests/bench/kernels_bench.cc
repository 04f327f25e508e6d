/// \file GPU kernel benchmark (not a test): times cinn_like's scheduled kernels and the
/// baselines they are judged against, side by side in one process, and prints ratios:
/// memory-bound kernels as a fraction of the measured device-to-device copy bandwidth, the
/// float32 matmul as a fraction of cuBLAS SGEMM on the same buffers. Every kernel's output is
/// checked (against the example's float64 reference, or against cuBLAS) before it is timed.
/// Workload names follow ../shared/bench/torch_anchor.py where a workload is shared.
///
///   kernels_bench [--reps=50] [--only=name,name]
#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "backends/compiler.h"
#include "ir/flags.h"
#include "ir/float16.h"
#include "ir/lower.h"
#include "ir/math.h"
#include "ir/schedule.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cublas.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_runtime.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

DEFINE_int32(reps, 50, "timed repetitions per workload (the median is reported)");
DEFINE_string(only, "", "comma-separated workload names to run (default: all)");

namespace cinn_like {
namespace {

namespace cuda = runtime::cuda;

#define BENCH_CHECK_OK(expr)                                                           \
  do {                                                                                 \
    absl::Status _st = (expr);                                                         \
    if (!_st.ok()) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, _st.ToString().c_str()); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

absl::Status Rc(int rc, const char* what) {
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(std::string(what) + ": " + cinn_like_get_last_error());
}

/// Median device time of `fn` over `reps` runs (after 3 warm-ups), with CUDA events.
double MedianMs(const std::function<absl::Status()>& fn, int reps) {
  const cuda::DriverApi& d = **cuda::Driver();
  CUevent start, stop;
  BENCH_CHECK_OK(cuda::CheckCu(d.EventCreate(&start, 0), "cuEventCreate"));
  BENCH_CHECK_OK(cuda::CheckCu(d.EventCreate(&stop, 0), "cuEventCreate"));
  for (int i = 0; i < 3; ++i) BENCH_CHECK_OK(fn());
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    BENCH_CHECK_OK(cuda::CheckCu(d.EventRecord(start, nullptr), "cuEventRecord"));
    BENCH_CHECK_OK(fn());
    BENCH_CHECK_OK(cuda::CheckCu(d.EventRecord(stop, nullptr), "cuEventRecord"));
    BENCH_CHECK_OK(cuda::CheckCu(d.EventSynchronize(stop), "cuEventSynchronize"));
    float t = 0;
    BENCH_CHECK_OK(cuda::CheckCu(d.EventElapsedTime(&t, start, stop), "cuEventElapsedTime"));
    ms.push_back(t);
  }
  d.EventDestroy(start);
  d.EventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// A float32 device array with a host copy.
struct Array {
  std::vector<int64_t> shape;
  std::vector<float> host;
  void* device = nullptr;
  DLTensor tensor{};

  Array(std::vector<int64_t> s, bool random, uint64_t seed) : shape(std::move(s)) {
    int64_t count = 1;
    for (auto d : shape) count *= d;
    host.resize(count);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (auto& v : host) {  // xorshift: fast enough for 2^28 elements, never all zeros
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v = random ? static_cast<float>((x >> 40) * (2.0 / (1ull << 24)) - 1.0) : -12345.f;
    }
    BENCH_CHECK_OK(Rc(cinn_like_cuda_malloc(&device, count * sizeof(float)), "malloc"));
    BENCH_CHECK_OK(Rc(cinn_like_cuda_memcpy_to_device(device, host.data(), count * sizeof(float)),
                      "copy to device"));
    tensor.data = device;
    tensor.device = {kDLCUDA, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = {kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
  ~Array() { cinn_like_cuda_free(device); }
  size_t bytes() const { return host.size() * sizeof(float); }
  std::vector<float> Download() const {
    std::vector<float> out(host.size());
    BENCH_CHECK_OK(Rc(cinn_like_cuda_memcpy_to_host(out.data(), device, bytes()), "copy to host"));
    return out;
  }
};

double RelError(const std::vector<float>& out, const std::vector<float>& ref) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double d = static_cast<double>(out[i]) - ref[i];
    diff += std::isnan(d) ? INFINITY : d * d;
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(diff / (norm > 0 ? norm : 1));
}

struct Row {
  std::string name, baseline;
  double ms = 0, baseline_ms = 0, rel_error = 0;
  double fraction = 0;  // of the baseline's rate
  std::string note;
};

/// A built-in example on the GPU: inputs random, outputs poisoned, one checked run, then timed.
struct ExampleRun {
  std::unique_ptr<backends::Compiler> compiler;
  backends::EntryFunction fn = nullptr;
  std::vector<std::unique_ptr<Array>> args;
  std::vector<DLTensor*> ptrs;
  int num_inputs = 0;

  absl::Status Call() {
    return Rc(fn(ptrs.data(), static_cast<int32_t>(ptrs.size()), nullptr), "call");
  }
};

using Builder = std::function<absl::StatusOr<ir::LoweredFunc>(const ir::Target&)>;

/// Builds `build` for the GPU under `name` and allocates `shapes` (inputs random).
absl::StatusOr<ExampleRun> Prepare(const std::string& name, const Builder& build,
                                   const std::vector<std::vector<int64_t>>& shapes,
                                   int num_inputs) {
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU());
  if (!compiler.ok()) return compiler.status();
  auto func = build((*compiler)->target());
  if (!func.ok()) return func.status();
  absl::Status built = (*compiler)->Build(ir::Module{name, (*compiler)->target(), {*func}});
  if (!built.ok()) return built;
  ExampleRun run;
  run.compiler = std::move(*compiler);
  auto fn = run.compiler->Lookup(name);
  if (!fn.ok()) return fn.status();
  run.fn = *fn;
  run.num_inputs = num_inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    run.args.push_back(std::make_unique<Array>(shapes[i], static_cast<int>(i) < num_inputs, i + 1));
    run.ptrs.push_back(&run.args.back()->tensor);
  }
  return run;
}

/// Checks the example's outputs against its float64 reference.
absl::StatusOr<double> CheckAgainstReference(const std::string& example, ExampleRun& run,
                                             int64_t n) {
  auto ex = examples::Find(example);
  BENCH_CHECK_OK(run.Call());
  BENCH_CHECK_OK(Rc(cinn_like_cuda_synchronize(), "synchronize"));
  std::vector<std::vector<float>> ref;
  for (auto& a : run.args) ref.push_back(a->host);
  ex->reference(ref, n);
  std::vector<std::vector<float>> outs;
  for (size_t i = run.num_inputs; i < run.args.size(); ++i) outs.push_back(run.args[i]->Download());
  double worst = examples::RelativeError(*ex, ref, outs, n);
  if (!(worst <= ex->tolerance)) {
    return absl::InternalError(example + ": relative error " + std::to_string(worst) +
                               " over the tolerance " + std::to_string(ex->tolerance));
  }
  return worst;
}

double CopyBandwidth(int reps) {
  const size_t bytes = size_t{1} << 30;
  Array a({static_cast<int64_t>(bytes / 4)}, true, 7),
      b({static_cast<int64_t>(bytes / 4)}, false, 8);
  const cuda::DriverApi& d = **cuda::Driver();
  double ms = MedianMs(
      [&] {
        return cuda::CheckCu(d.MemcpyDtoD(reinterpret_cast<CUdeviceptr>(b.device),
                                          reinterpret_cast<CUdeviceptr>(a.device), bytes),
                             "cuMemcpyDtoD");
      },
      reps);
  return 2.0 * bytes / (ms * 1e-3);  // bytes read + written per second
}

/// A memory-bound example: its bytes (inputs read once, outputs written once) per second over
/// the copy bandwidth.
Row MemoryBound(const std::string& name, const std::string& example, int64_t n, double bw) {
  Row row{name, "copy"};
  auto ex = examples::Find(example);
  if (!ex.ok()) {
    row.note = "unavailable: " + std::string(ex.status().message());
    return row;
  }
  auto run = Prepare(ex->name, ex->build, ex->shapes(n), ex->num_inputs);
  if (!run.ok()) {
    row.note = "unavailable: " + std::string(run.status().message());
    return row;
  }
  auto err = CheckAgainstReference(example, *run, n);
  if (!err.ok()) {
    row.note = "WRONG: " + std::string(err.status().message());
    return row;
  }
  row.rel_error = *err;
  double bytes = 0;
  for (auto& a : run->args) bytes += a->bytes();
  row.ms = MedianMs([&] { return run->Call(); }, FLAGS_reps);
  row.baseline_ms = bytes / bw * 1e3;
  row.fraction = row.baseline_ms / row.ms;
  return row;
}

/// The shared-memory tiled float32 matmul (examples::BuildMatmulShared) at n^3 against cuBLAS
/// SGEMM on the same buffers; checked against cuBLAS.
Row MatmulVsCublas(const std::string& name, int64_t n) {
  Row row{name, "cuBLAS SGEMM"};
  auto build = [n](const ir::Target& t) {
    return examples::BuildMatmulShared(t, static_cast<int>(n), {}, "matmul_shared");
  };
  auto run = Prepare("matmul_shared", build, {{n, n}, {n, n}, {n, n}}, 2);
  if (!run.ok()) {
    row.note = "unavailable: " + std::string(run.status().message());
    return row;
  }
  auto& args = run->args;
  if (args.size() != 3 || args[0]->shape.size() != 2 || args[1]->shape.size() != 2) {
    row.note = "unexpected argument shapes";
    return row;
  }
  int64_t m = args[0]->shape[0], k = args[0]->shape[1], nn = args[1]->shape[1];
  Array expect(args[2]->shape, false, 99);
  // A poison unlike the output's: a kernel that writes nothing cannot match the other.
  std::fill(expect.host.begin(), expect.host.end(), NAN);
  BENCH_CHECK_OK(
      Rc(cinn_like_cuda_memcpy_to_device(expect.device, expect.host.data(), expect.bytes()),
         "copy to device"));
  auto cublas = [&] {
    return cuda::CublasSgemmRowMajor(static_cast<const float*>(args[0]->device),
                                     static_cast<const float*>(args[1]->device),
                                     static_cast<float*>(expect.device), m, nn, k, nullptr);
  };
  absl::Status st = cublas();
  if (!st.ok()) {
    row.note = "cuBLAS unavailable: " + std::string(st.message());
    return row;
  }
  BENCH_CHECK_OK(run->Call());
  BENCH_CHECK_OK(Rc(cinn_like_cuda_synchronize(), "synchronize"));
  row.rel_error = RelError(args[2]->Download(), expect.Download());
  if (!(row.rel_error < 1e-5)) {
    row.note = "WRONG vs cuBLAS: rel_error " + std::to_string(row.rel_error);
    return row;
  }
  row.ms = MedianMs([&] { return run->Call(); }, FLAGS_reps);
  row.baseline_ms = MedianMs(cublas, FLAGS_reps);
  row.fraction = row.baseline_ms / row.ms;
  double tflops = 2.0 * m * nn * k / (row.ms * 1e-3) / 1e12;
  row.note = "cinn_like " + std::to_string(tflops).substr(0, 5) + " TFLOP/s, cuBLAS " +
             std::to_string(2.0 * m * nn * k / (row.baseline_ms * 1e-3) / 1e12).substr(0, 5);
  return row;
}

/// The float16 elementwise chain y = relu(x * a + 1) * sigmoid(x) over symbolic n (the
/// float16 cousin of torch_anchor's ew_chain_f32), each element computed in float32 and
/// rounded once; on the GPU 8 halves (16 bytes) per thread, 256 threads per block.
absl::StatusOr<ir::LoweredFunc> BuildHalfChain(const ir::Target& target) {
  ir::Var n("n");
  ir::Tensor x = ir::Placeholder("X", ir::Float16(), {n});
  ir::Tensor a = ir::Placeholder("A", ir::Float16(), {n});
  ir::Tensor y = ir::Compute(
      {n},
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr v = x(i[0]) * a(i[0]) + ir::MakeConst(ir::Float16(), 1.0);
        ir::Expr one = ir::MakeConst(ir::Float16(), 1.0);
        ir::Expr sigmoid = one / (one + ir::Exp(-x(i[0])));
        return ir::max(v, ir::MakeConst(ir::Float16(), 0.0)) * sigmoid;
      },
      "Y");
  auto sch = ir::Schedule::Create({y});
  ir::Stage& s = sch[y];
  auto i = s.LeafAxis(0);
  if (!i.ok()) return i.status();
  auto lanes = s.Split(*i, 8);
  if (!lanes.ok()) return lanes.status();
  absl::Status st = s.Vectorize(lanes->second);
  if (!st.ok()) return st;
  auto outer = s.Split(lanes->first, 256);
  if (!outer.ok()) return outer.status();
  st = s.Bind(outer->first, "blockIdx.x");
  if (st.ok()) st = s.Bind(outer->second, "threadIdx.x");
  if (!st.ok()) return st;
  return ir::Lower("ew_chain_f16", {x, a, y}, sch, target);
}

Row HalfChain(const std::string& name, int64_t n, double bw) {
  Row row{name, "copy"};
  auto compiler = backends::Compiler::Create(ir::Target::NVGPU());
  BENCH_CHECK_OK(compiler.status());
  auto func = BuildHalfChain((*compiler)->target());
  absl::Status st =
      func.ok() ? (*compiler)->Build(ir::Module{"ew_chain_f16", (*compiler)->target(), {*func}})
                : func.status();
  if (!st.ok()) {
    row.note = "unavailable: " + std::string(st.message());
    return row;
  }
  auto fn = (*compiler)->Lookup("ew_chain_f16");
  BENCH_CHECK_OK(fn.status());
  // Inputs as float16 bits, drawn from the float Arrays' random values.
  std::vector<std::vector<uint16_t>> host(3, std::vector<uint16_t>(n));
  std::vector<void*> dev(3);
  std::vector<DLTensor> t(3);
  for (int k = 0; k < 3; ++k) {
    if (k < 2) {
      uint64_t s = 0x1234 + k;
      for (auto& h : host[k]) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        h = ir::FloatToHalfBits(static_cast<float>((s >> 40) * (6.0 / (1ull << 24)) - 3.0));
      }
    } else {
      std::fill(host[k].begin(), host[k].end(), 0x7e00);  // NaN poison
    }
    BENCH_CHECK_OK(Rc(cinn_like_cuda_malloc(&dev[k], n * 2), "malloc"));
    BENCH_CHECK_OK(Rc(cinn_like_cuda_memcpy_to_device(dev[k], host[k].data(), n * 2), "copy"));
    t[k] = DLTensor{};
    t[k].data = dev[k];
    t[k].device = {kDLCUDA, 0};
    t[k].ndim = 1;
    t[k].dtype = {kDLFloat, 16, 1};
    t[k].shape = &n;
  }
  DLTensor* ptrs[3] = {&t[0], &t[1], &t[2]};
  auto call = [&] { return Rc((*fn)(ptrs, 3, nullptr), "call"); };
  BENCH_CHECK_OK(call());
  BENCH_CHECK_OK(Rc(cinn_like_cuda_synchronize(), "synchronize"));
  std::vector<uint16_t> out(n);
  BENCH_CHECK_OK(Rc(cinn_like_cuda_memcpy_to_host(out.data(), dev[2], n * 2), "copy"));
  double diff = 0, norm = 0;
  for (int64_t k = 0; k < n; ++k) {
    double xv = ir::HalfBitsToFloat(host[0][k]), av = ir::HalfBitsToFloat(host[1][k]);
    double ref = std::max(xv * av + 1, 0.0) / (1 + std::exp(-xv));
    double d = ir::HalfBitsToFloat(out[k]) - ref;
    diff += std::isnan(d) ? INFINITY : d * d;
    norm += ref * ref;
  }
  row.rel_error = std::sqrt(diff / norm);
  // Each op rounds to float16 (2^-11 relative): a few roundings in the chain.
  if (!(row.rel_error < 5e-3)) {
    row.note = "WRONG: rel_error " + std::to_string(row.rel_error);
  } else {
    row.ms = MedianMs(call, FLAGS_reps);
    row.baseline_ms = 3.0 * n * 2 / bw * 1e3;
    row.fraction = row.baseline_ms / row.ms;
  }
  for (void* p : dev) cinn_like_cuda_free(p);
  return row;
}

bool Selected(const std::string& name) {
  if (FLAGS_only.empty()) return true;
  for (auto part : absl::StrSplit(FLAGS_only, ',')) {
    if (part == name) return true;
  }
  return false;
}

int Main() {
  BENCH_CHECK_OK(cuda::EnsureContext());
  double bw = CopyBandwidth(20);
  std::printf("copy bandwidth (device to device, read + write): %.3f TB/s\n", bw / 1e12);
  std::vector<Row> rows;
  if (Selected("reduce_sum_f32"))
    rows.push_back(MemoryBound("reduce_sum_f32", "row_sum", 8192, bw));
  if (Selected("vadd_f32_2p28")) rows.push_back(MemoryBound("vadd_f32_2p28", "vadd", 1 << 28, bw));
  if (Selected("ew_chain_f16_2p28")) {
    rows.push_back(HalfChain("ew_chain_f16_2p28", int64_t{1} << 28, bw));
  }
  if (Selected("matmul_f32_4096")) rows.push_back(MatmulVsCublas("matmul_f32_4096", 4096));
  std::printf("\n%-20s %10s %14s %12s %9s %10s  %s\n", "workload", "ms", "baseline", "baseline_ms",
              "fraction", "rel_error", "note");
  for (auto& r : rows) {
    std::printf("%-20s %10.4f %14s %12.4f %9.3f %10.2e  %s\n", r.name.c_str(), r.ms,
                r.baseline.c_str(), r.baseline_ms, r.fraction, r.rel_error, r.note.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace cinn_like

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return cinn_like::Main();
}
