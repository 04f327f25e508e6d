/// \file CompilerNVGPU: Build's steps, in order, in one function.
#include "backends/cuda/compiler_nvgpu.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/library_kernels.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/cuda/prebuilt_kernels.h"
#include "backends/device_compiler.h"
#include "backends/llvm/codegen_cuda_host.h"
#include "backends/llvm/execution_engine.h"
#include "backends/step_timer.h"
#include "ir/compile_options.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_module.h"

namespace cinn_like::backends {
namespace {

/// The arch and where it came from: the target, the flag, or the device.
absl::StatusOr<std::pair<int, std::string>> ChooseArch(const ir::Target& target) {
  if (target.cuda_arch > 0) return std::make_pair(target.cuda_arch, std::string("from the target"));
  const std::string flag = ir::CurrentCompileOptions().cuda_arch;
  if (!flag.empty()) {
    absl::string_view text = flag;
    absl::ConsumePrefix(&text, "sm_");
    int arch = 0;
    if (!absl::SimpleAtoi(text, &arch) || arch <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("flag cinn_like_cuda_arch is '", flag,
                                                     "'; expected an arch such as sm_90 or 90"));
    }
    return std::make_pair(arch, std::string("from the flag cinn_like_cuda_arch"));
  }
  auto device = runtime::cuda::DeviceComputeCapability();
  if (!device.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUDA arch for the NVGPU target: the target names none, the flag cinn_like_cuda_arch "
        "is empty and the device cannot be asked (",
        device.status().message(),
        "); set FLAGS_cinn_like_cuda_arch=sm_90 to compile without a GPU"));
  }
  return std::make_pair(*device, std::string("from the device"));
}

/// Whether the device source is written to files (dump dir, source save path): then it is one
/// unit, with every kernel (the prebuilt library kernels too), so that one file holds them all.
bool SavesSources() {
  return !DumpDir().empty() || !StringFlag("cinn_like_source_save_path").empty();
}

/// How many translation units the device code of `kernels` kernels is compiled as, at once:
/// the flag cinn_like_nvrtc_units, with 0 (the default) about three kernels per unit, up to the
/// host's threads and at most 16; one while sources are saved. Most of NVRTC's time is ptxas
/// (CUDA C to PTX is a tenth of it), and ptxas scales with threads: on the GPU machine (16 vCPUs,
/// NVIDIA's ComputeCache off, fresh processes) the GPT-2 block's 10 kernels took 328-356 ms as
/// one unit, 162-224 ms as 4 and 215-292 ms as 10; efficientnet_b0's 52 kernels 1382-1409,
/// 403-432 and 475-504 ms (16 units); T5's 39 kernels 2000-2864, 922-1037 and 524-636 ms
/// (docs/benchmarks.md, "Cold GPU compiles").
size_t TranslationUnits(size_t kernels) {
  if (SavesSources()) return 1;
  if (ir::CurrentCompileOptions().nvrtc_units > 0) return ir::CurrentCompileOptions().nvrtc_units;
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min({(kernels + 2) / 3, threads, size_t{16}}));
}

/// The CUBINs of the library kernels `module` launches that the prebuilt file holds for
/// sm_<arch> (backends/cuda/prebuilt_kernels.h), one binary each; none while sources are saved
/// (one file shows them all) or with cinn_like_prebuilt_kernels off.
absl::StatusOr<std::vector<DeviceBinary>> PrebuiltLibraryKernels(const ir::Module& module,
                                                                 int arch) {
  std::vector<DeviceBinary> out;
  if (!ir::CurrentCompileOptions().prebuilt_kernels || SavesSources()) return out;
  for (const std::string& kernel : LibraryKernelNames(module)) {
    auto source = LibraryUnitSource(kernel);
    if (!source.ok()) return source.status();
    if (auto image = PrebuiltKernelImage(kernel, arch, *source)) {
      out.push_back(DeviceBinary{/*cubin=*/true, *std::move(image), {kernel}});
    }
  }
  return out;
}

/// Extra NVRTC threads running in this process, all Builds together (several Programs compile
/// at once, cinn_like.torch's prefetch among them): a Build starts one for a unit only while
/// fewer than the host's threads run, else compiles the unit on its own thread.
std::atomic<int> compile_threads{0};

bool ReserveCompileThread() {
  const int limit = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int running = compile_threads.load();
  while (running < limit) {
    if (compile_threads.compare_exchange_weak(running, running + 1)) return true;
  }
  return false;
}

void ReleaseCompileThread() { compile_threads.fetch_sub(1); }

class CompilerNVGPU : public DeviceCompiler {
 public:
  CompilerNVGPU(ir::Target target, std::unique_ptr<ExecutionEngine> engine)
      : DeviceCompiler(std::move(target), std::move(engine)) {}

  absl::Status Build(const ir::Module& module) override;
  absl::StatusOr<std::string> GetSourceCode(const ir::Module& module) override;

 private:
  /// Loads `binary` as a CUDA module and registers its kernels' handles (CUfunctions).
  absl::Status LoadDevice(DeviceBinary binary, const std::string& name) override;
  /// A CUBIN runs on its arch and newer minor versions of the same major (sm_80 on sm_86);
  /// PTX is compiled by the driver for this arch or any newer one.
  absl::Status CheckDeviceImages(const BuiltCode& code) const override;
  std::string BinaryExtension(const DeviceBinary& binary) const override {
    return binary.cubin ? ".cubin" : ".ptx";
  }

  nvrtc::Compiler nvrtc_;
  std::vector<std::unique_ptr<runtime::cuda::CudaModule>> cuda_modules_;
};

absl::Status CompilerNVGPU::LoadDevice(DeviceBinary binary, const std::string& name) {
  auto cuda_module = runtime::cuda::CudaModule::Load(binary.image);
  if (!cuda_module.ok()) {
    return absl::Status(
        cuda_module.status().code(),
        absl::StrCat("loading the CUDA module of ", name, ": ", cuda_module.status().message()));
  }
  runtime::cuda::CudaModule* loaded = cuda_module->get();
  cuda_modules_.push_back(std::move(*cuda_module));
  return RegisterKernels(std::move(binary),
                         [&](const std::string& kernel) -> absl::StatusOr<void*> {
                           auto function = loaded->GetFunction(kernel);
                           if (!function.ok()) return function.status();
                           return static_cast<void*>(*function);
                         });
}

absl::Status CompilerNVGPU::Build(const ir::Module& module) {
  absl::Status split = CheckSplitForGpu(module);
  if (!split.ok()) return split;
  StepTimer steps(&times_);
  const bool to_cubin = ir::CurrentCompileOptions().nvrtc_compile_to_cubin;
  const std::string name = module.name.empty() ? std::string("module") : module.name;
  const std::vector<ir::LoweredFunc> kernels = ir::DeviceKernels(module);
  if (!DumpDir().empty()) DumpToFile(name + ".module.ir", ir::ToString(module));

  // 1. CUDA C for the device kernels, as one translation unit or several to compile at once
  // (TranslationUnits), less the library kernels built with cinn_like for this arch.
  std::vector<DeviceBinary> prebuilt;
  auto units =
      steps.Run(&CompileTimes::device_codegen_ms, [&]() -> absl::StatusOr<std::vector<CudaUnit>> {
        std::set<std::string> prebuilt_names;
        if (to_cubin) {
          auto found = PrebuiltLibraryKernels(module, target_.cuda_arch);
          if (!found.ok()) return found.status();
          prebuilt = *std::move(found);
          for (const DeviceBinary& b : prebuilt) prebuilt_names.insert(b.kernels[0]);
        }
        return CodeGenCudaDev::GenerateUnits(module, TranslationUnits(kernels.size()),
                                             prebuilt_names);
      });
  if (!units.ok()) return units.status();
  times_.prebuilt_kernels = static_cast<int>(prebuilt.size());
  // A unit left with no kernel (every library kernel prebuilt, none generated) is not compiled.
  units->erase(std::remove_if(units->begin(), units->end(),
                              [](const CudaUnit& u) { return u.kernels.empty(); }),
               units->end());

  // 2. NVRTC to CUBIN or PTX: the first unit on this thread, each other on a thread of its own
  // where one is to be had (saves and dumps <name>.cu and the binary).
  std::vector<absl::StatusOr<std::string>> binaries(units->size(), absl::UnknownError(""));
  steps.Run(&CompileTimes::nvrtc_ms, [&] {
    auto compile = [&](size_t u) {
      const std::string unit_name = u == 0 ? name : absl::StrCat(name, ".part", u + 1);
      try {  // an exception escaping a thread would end the host process
        binaries[u] = nvrtc_.Compile((*units)[u].source, target_.cuda_arch, to_cubin, unit_name);
      } catch (const std::exception& e) {
        binaries[u] = absl::InternalError(absl::StrCat("compiling ", unit_name, ": ", e.what()));
      } catch (...) {
        binaries[u] = absl::InternalError(absl::StrCat("compiling ", unit_name, " threw"));
      }
    };
    std::vector<std::thread> threads;
    std::vector<size_t> here;  // the units this thread compiles: the first, and any not lent
    if (!units->empty()) here.push_back(0);
    for (size_t u = 1; u < units->size(); ++u) {
      if (!ReserveCompileThread()) {
        here.push_back(u);
        continue;
      }
      try {
        threads.emplace_back(
            [&compile, u, options = ir::InstalledCompileOptions(), quiet = DumpIsOff()] {
              ir::CompileOptionsScope scope(options);  // the compile's snapshot, as on its thread
              std::optional<DumpOffScope> dump_off;    // and its dumping off, where it is
              if (quiet) dump_off.emplace();
              compile(u);
              ReleaseCompileThread();
            });
      } catch (const std::system_error&) {  // no thread to be had: this one compiles it
        ReleaseCompileThread();
        here.push_back(u);
      }
    }
    for (size_t u : here) compile(u);
    for (std::thread& t : threads) t.join();
    return 0;
  });
  for (const auto& binary : binaries) {
    if (!binary.ok()) return binary.status();
  }

  // 3. Load each as a CUDA module, get each kernel's handle (library kernels too) and register
  // it as the runtime symbol <kernel>_ptr_ (needs a GPU).
  absl::Status loaded = steps.Run(&CompileTimes::module_load_ms, [&]() -> absl::Status {
    for (size_t u = 0; u < units->size(); ++u) {
      absl::Status s = LoadDevice(
          DeviceBinary{to_cubin, *std::move(binaries[u]), std::move((*units)[u].kernels)}, name);
      if (!s.ok()) return s;
    }
    for (DeviceBinary& binary : prebuilt) {
      const std::string what = "prebuilt " + binary.kernels[0];
      absl::Status s = LoadDevice(std::move(binary), what);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
  if (!loaded.ok()) return loaded;

  // 4. LLVM IR for the host entries, linked in the ORC JIT.
  return LinkHost([&] { return CodeGenCudaHost::Generate(module); }, name, steps);
}

absl::StatusOr<std::string> CompilerNVGPU::GetSourceCode(const ir::Module& module) {
  absl::Status split = CheckSplitForGpu(module);
  if (!split.ok()) return split;
  return CodeGenCudaDev::Generate(module);
}

absl::Status CompilerNVGPU::CheckDeviceImages(const BuiltCode& code) const {
  if (code.device.empty()) return absl::OkStatus();
  auto device = runtime::cuda::DeviceComputeCapability();
  if (!device.ok()) return device.status();
  const int arch = target_.cuda_arch;
  for (const DeviceBinary& binary : code.device) {
    const bool runs = binary.cubin ? *device / 10 == arch / 10 && *device >= arch : *device >= arch;
    if (!runs) {
      return absl::FailedPreconditionError(absl::StrCat("the code was built for sm_", arch, " (",
                                                        binary.cubin ? "CUBIN" : "PTX",
                                                        "); device 0 is sm_", *device));
    }
  }
  return absl::OkStatus();
}

/// The schedules ask device 0 through the driver, when the target is for its arch (or names
/// none); otherwise they use the arch's defaults (ir/device_properties.h).
const bool kDeviceQueryRegistered = [] {
  ir::RegisterDevicePropertiesQuery(
      ir::Target::Arch::kNVGPU,
      [](const ir::Target& target) -> absl::StatusOr<ir::DeviceProperties> {
        auto cc = runtime::cuda::DeviceComputeCapability();
        if (!cc.ok()) return cc.status();
        if (target.cuda_arch != 0 && target.cuda_arch != *cc) {
          return absl::FailedPreconditionError("the target is for another arch than device 0");
        }
        auto limits = runtime::cuda::DeviceLimitsOf0();
        if (!limits.ok()) return limits.status();
        ir::DeviceProperties p = ir::DefaultDeviceProperties(target);
        p.multiprocessors = limits->multiprocessors;
        p.max_threads_per_block = limits->max_threads_per_block;
        p.shared_memory_per_block = limits->shared_memory_per_block;
        p.source = absl::StrCat("device 0 (sm_", *cc, ")");
        return p;
      });
  return true;
}();

}  // namespace

absl::StatusOr<std::unique_ptr<Compiler>> CreateNVGPULoader(const ir::Target& target) {
  if (target.cuda_arch <= 0) {
    return absl::InvalidArgumentError("loading NVGPU code needs the arch it was built for");
  }
  auto engine = ExecutionEngine::Create(ExecutionEngine::HostCode::kGlue);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Compiler>(new CompilerNVGPU(target, std::move(*engine)));
}

absl::StatusOr<std::unique_ptr<Compiler>> CreateNVGPUCompiler(const ir::Target& target) {
  auto arch = ChooseArch(target);
  if (!arch.ok()) return arch.status();
  absl::Status supported = nvrtc::Compiler::CheckArch(arch->first, arch->second);
  if (!supported.ok()) return supported;
  auto engine = ExecutionEngine::Create(ExecutionEngine::HostCode::kGlue);
  if (!engine.ok()) return engine.status();
  ir::Target resolved = target;
  resolved.cuda_arch = arch->first;
  return std::unique_ptr<Compiler>(new CompilerNVGPU(resolved, std::move(*engine)));
}

}  // namespace cinn_like::backends
