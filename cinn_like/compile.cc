/// \file CompileProgram: Program -> Graph -> passes -> Module -> Compiler::Build.
#include "cinn_like/compile.h"

#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cinn_like/autotune.h"
#include "cinn_like/call_check.h"
#include "cinn_like/compile_stats.h"
#include "cinn_like/debug_wrong_op.h"
#include "cinn_like/disk_cache.h"
#include "cinn_like/warm_up.h"
#include "frontend/program_json.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "ir/compile_options.h"
#include "ir/flags.h"
#include "ir/library_functions.h"
#include "runtime/files.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cudnn.h"
#endif

namespace cinn_like {
namespace {

std::string Signature(const hlir::Graph& graph) {
  auto describe = [&](const std::vector<int>& ids) {
    nlohmann::json list = nlohmann::json::array();
    for (int id : ids) {
      const hlir::Value& v = graph.values()[id];
      nlohmann::json shape = nlohmann::json::array();
      for (const hlir::Dim& d : v.desc.shape) {
        if (d.is_symbolic()) {
          shape.push_back(d.symbol);
        } else {
          shape.push_back(d.value);
        }
      }
      list.push_back(
          {{"name", v.name}, {"dtype", hlir::DTypeName(v.desc.dtype)}, {"shape", shape}});
    }
    return list;
  };
  return nlohmann::json{{"inputs", describe(graph.inputs())},
                        {"outputs", describe(graph.outputs())}}
      .dump();
}

/// Waits for the library plans this thread's lowering queued (cuDNN's, made beside the Build:
/// runtime/cuda/cudnn.h); the first that failed.
absl::Status WaitForLibraryPlans() {
#ifdef CINN_LIKE_WITH_CUDA
  return runtime::cuda::CudnnWaitForPlans();
#else
  return absl::OkStatus();
#endif
}

}  // namespace

const std::string& CompiledProgram::source() const {
  std::call_once(source_once_, [this] {
    absl::StatusOr<std::string> source = std::string();
    if (module_) {
      source = compiler_->GetSourceCode(*module_);
    } else if (!program_json_.empty()) {
      auto program = frontend::ProgramFromJson(program_json_);
      source =
          program.ok() ? ProgramSource(*program, compiler_->target(), name_) : program.status();
    }
    source_ = source.ok() ? *source : std::string();
  });
  return source_;
}

ModuleImage CompiledProgram::Image() const {
  ModuleImage image;
  image.producer = absl::StrCat("cinn_like ", kVersion);
  image.runtime = RuntimeAbi();
  image.name = name_;
  image.target = compiler_->target().ToString();
  image.signature = signature_;
  image.code = compiler_->Code();
  return image;
}

absl::Status CompiledProgram::Save(const std::string& path) const {
  return runtime::WriteFileAtomically(path, EncodeModuleImage(Image()), kModuleFileMagic,
                                      kModuleFileFormat);
}

absl::StatusOr<backends::EntryFunction> CompiledProgram::Lookup(const std::string& name) const {
  return compiler_->Lookup(name);
}

namespace {

/// Milliseconds since it was made.
class Stopwatch {
 public:
  double Milliseconds() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// What CompileProgram and ProgramSource share: the graph, its passes and the lowered module.
struct Lowered {
  hlir::Graph graph;
  hlir::FusedGraph fused;
  ir::Module module;
};

/// `tune`: ask the tuner (cinn_like/autotune.h) for the groups' knob values, when the flag
/// cinn_like_autotune is on (it times kernels on the device: never for ProgramSource).
absl::StatusOr<Lowered> LowerProgram(const frontend::Program& program, const ir::Target& target,
                                     const std::string& name, bool tune) {
  auto graph = frontend::BuildGraph(program);
  if (!graph.ok()) return graph.status();
  const std::string wrong_ops = ir::CurrentCompileOptions().debug_wrong_op;
  auto compiled_graph = wrong_ops.empty() ? graph : PlantWrongResults(program, *graph, wrong_ops);
  if (!compiled_graph.ok()) return compiled_graph.status();
  auto fused = hlir::RunGraphPasses(*compiled_graph,
                                    hlir::TargetPassOptions(target, name, &*compiled_graph));
  if (!fused.ok()) return fused.status();
  const bool autotune = tune && ir::CurrentCompileOptions().autotune;
  std::vector<hlir::TacticChoice> tactics;
  auto module = hlir::CompileFusedGraph(*fused, target, name, {}, autotune ? &tactics : nullptr);
  if (!module.ok()) return module.status();
  if (autotune) {
    // Lowered again only where the tuner chose another value than a tactic's own.
    auto tuned = TuneGroups(*fused, tactics, target, name);
    if (!tuned.ok()) return tuned.status();
    if (!tuned->empty()) module = hlir::CompileFusedGraph(*fused, target, name, *tuned);
    if (!module.ok()) return module.status();
  }
  // The Program's bounds of its symbols, for the entry to check where it binds them.
  for (const ir::LoweredFunc& f : module->functions) {
    for (auto& [var, size] : f->size_symbols) {
      auto it = program.symbols.find(size.symbol);
      if (it == program.symbols.end()) continue;
      size.min = std::max(size.min, it->second.min);  // an op may need more (SizeSymbol::why)
      size.max = it->second.max;
    }
  }
  return Lowered{*std::move(graph), *std::move(fused), *std::move(module)};
}

}  // namespace

namespace {

/// The code-changing flags read once for the compile that starts on this thread (the cache key
/// and the lowering both read them), unless one is running already (an inner compile: the
/// tuner's).
struct OptionsOfThisCompile {
  OptionsOfThisCompile() {
    if (!ir::InstalledCompileOptions()) {
      scope.emplace(std::make_shared<const ir::CompileOptions>(ir::CompileOptions::Read()));
    }
  }
  std::optional<ir::CompileOptionsScope> scope;
};

}  // namespace

absl::StatusOr<std::string> ProgramSource(const frontend::Program& program,
                                          const ir::Target& target, const std::string& name) {
  OptionsOfThisCompile options;
  auto lowered = LowerProgram(program, target, name, /*tune=*/false);
  (void)WaitForLibraryPlans();  // nothing runs this lowering: its plans are not needed now
  if (!lowered.ok()) return lowered.status();
  auto compiler = backends::Compiler::Create(target);
  if (!compiler.ok()) return compiler.status();
  return (*compiler)->GetSourceCode(lowered->module);
}

/// A CompiledProgram of the code in `image`, loaded without compiling into `compiler` (a
/// fresh one for the image's target when null). `origin` names the file or cache entry.
absl::StatusOr<std::unique_ptr<CompiledProgram>> LoadImage(
    const ModuleImage& image, const std::string& origin,
    std::unique_ptr<backends::Compiler> compiler) {
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat("cannot load ", origin, ": ", s.message()));
  };
  if (image.runtime != RuntimeAbi()) {
    return fail(absl::FailedPreconditionError(
        absl::StrCat("it was made for the runtime '", image.runtime, "' and this library's is '",
                     RuntimeAbi(), "' (compile the Program again with this library)")));
  }
  if (!compiler) {
    auto target = ir::Target::Parse(image.target);
    if (!target.ok()) return fail(target.status());
    auto created = backends::Compiler::CreateForLoad(*target);
    if (!created.ok()) return fail(created.status());
    compiler = *std::move(created);
  }
  absl::Status loaded = compiler->Load(image.code);
  if (!loaded.ok()) return fail(loaded);
  auto out = std::unique_ptr<CompiledProgram>(new CompiledProgram());
  out->compiler_ = std::move(compiler);
  out->name_ = image.name;
  out->signature_ = image.signature;
  return out;
}

absl::StatusOr<std::unique_ptr<CompiledProgram>> LoadCompiledProgram(const std::string& path) {
  absl::StatusOr<std::string> bytes = runtime::ReadRegularFile(path, "the module file");
  if (!bytes.ok()) return bytes.status();
  auto image = DecodeModuleImage(*bytes, path);
  if (!image.ok()) return image.status();
  return LoadImage(*image, path, nullptr);
}

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(const frontend::Program& program,
                                                                const ir::Target& target,
                                                                const std::string& name) {
  return CompiledProgram::Compile(frontend::ProgramToJson(program), &program, target, name);
}

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgramJson(const std::string& program_json,
                                                                    const ir::Target& target,
                                                                    const std::string& name) {
  return CompiledProgram::Compile(program_json, nullptr, target, name);
}

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompiledProgram::Compile(
    const std::string& program_json, const frontend::Program* parsed, const ir::Target& target,
    const std::string& name) {
  OptionsOfThisCompile options;
  std::optional<frontend::Program> own;  // `parsed` where the caller had none
  auto parse = [&]() -> absl::Status {
    if (parsed) return absl::OkStatus();
    auto program = frontend::ProgramFromJson(program_json);
    if (!program.ok()) return program.status();
    own = *std::move(program);
    parsed = &*own;
    return absl::OkStatus();
  };
  DumpToFile(name + ".program.json", program_json);
  // A text with an escape is parsed first: the key's reading of it (ProgramJsonUsesLibraries)
  // then has the Program, and a text that does not parse fails before the cache is asked.
  if (!parsed && program_json.find('\\') != std::string::npos) {
    if (absl::Status s = parse(); !s.ok()) return s;
  }
  auto compiler = backends::Compiler::Create(target);  // resolves the arch (the cache key's)
  if (!compiler.ok()) {
    if (absl::Status s = parse(); !s.ok()) return s;  // the Program's errors first
    auto lowered = LowerProgram(*parsed, target, name, /*tune=*/false);
    (void)WaitForLibraryPlans();
    return lowered.ok() ? compiler.status() : lowered.status();
  }
  const std::string cache_dir = DiskCacheDir();
  std::string key;
  Stopwatch cache_clock;
  std::optional<DiskCacheCompileLock> compile_lock;  // held until this compile is stored
  if (!cache_dir.empty()) {
    key = DiskCacheKey(program_json, parsed, (*compiler)->target(), name);
    compile_lock.emplace(cache_dir, key);
    if (std::optional<ModuleImage> image = DiskCacheLookup(cache_dir, key)) {
      auto loaded = LoadImage(*image, "cache entry " + key, *std::move(compiler));
      if (loaded.ok()) {
        DiskCacheHit(cache_dir, key);
        (*loaded)->program_json_ = program_json;
        (*loaded)->from_cache_ = true;
        RecordCompile(/*loaded=*/true, 0, 0, {}, cache_clock.Milliseconds());
        return loaded;
      }
      // Code that does not link, or a name or image that does not fit, is the entry's fault;
      // anything else (no device memory, say) is this moment's, and the entry stays.
      if (absl::IsInvalidArgument(loaded.status()) || absl::IsDataLoss(loaded.status()) ||
          absl::IsFailedPrecondition(loaded.status()) || absl::IsNotFound(loaded.status())) {
        DiskCacheDiscard(cache_dir, key, std::string(loaded.status().message()));
      } else {
        DiskCacheMiss(cache_dir, key, std::string(loaded.status().message()));
      }
      compiler = backends::Compiler::Create(target);  // the failed load's is unusable
      if (!compiler.ok()) return compiler.status();
    }
  }
  double cache_ms = cache_clock.Milliseconds();
  Stopwatch lower_clock;
  if (absl::Status s = parse(); !s.ok()) return s;
  const frontend::Program& program = *parsed;
  FinishWarmUp();  // the libraries it loads are the lowering's first needs (a hit needs none)
  const double library_before = ir::LibraryCheckMilliseconds();
  // Whatever way this compile ends, no plan it queued is left being made after it.
  struct PlansWaited {
    ~PlansWaited() { (void)WaitForLibraryPlans(); }
  } plans_waited;
  auto lowered = LowerProgram(program, target, name, /*tune=*/true);
  if (!lowered.ok()) return lowered.status();
  double lower_ms = lower_clock.Milliseconds();
  double library_ms = ir::LibraryCheckMilliseconds() - library_before;
  absl::Status built = (*compiler)->Build(lowered->module);
  // The library plans made beside the Build: what the Build did not hide counts as library
  // checks, part of lowering, as when the checks made them inline.
  Stopwatch plans_clock;
  absl::Status plans = WaitForLibraryPlans();
  library_ms += plans_clock.Milliseconds();
  lower_ms += plans_clock.Milliseconds();
  if (built.ok() && !plans.ok()) {
    // A library turned a call down: lowered again, that call is the generated code's.
    LOG(INFO) << "cinn_like: compiling " << name
              << " again without a library call: " << plans.message();
    compiler = backends::Compiler::Create(target);
    if (!compiler.ok()) return compiler.status();
    lowered = LowerProgram(program, target, name, /*tune=*/true);
    if (!lowered.ok()) return lowered.status();
    built = (*compiler)->Build(lowered->module);
    // Plans queued again (those that could not be made at the first try) are made before the
    // compile returns; a refusal now is the first call's error to report.
    absl::Status again = WaitForLibraryPlans();
    if (!again.ok()) LOG(WARNING) << "cinn_like: compiling " << name << ": " << again.message();
  }
  if (!built.ok()) return built;
  auto out = std::unique_ptr<CompiledProgram>(new CompiledProgram());
  out->compiler_ = std::move(*compiler);
  out->name_ = name;
  out->module_ = lowered->module;
  out->signature_ = Signature(lowered->graph);
  if (ir::CurrentCompileOptions().self_check) {
    out->call_check_ = MakeCallCheckContext(program, lowered->graph, target, name, lowered->fused);
  }
  if (!cache_dir.empty()) {
    Stopwatch store_clock;
    DiskCacheStore(cache_dir, key, out->Image());
    cache_ms += store_clock.Milliseconds();
  }
  RecordCompile(/*loaded=*/false, lower_ms, library_ms, out->compiler_->last_build_times(),
                cache_ms);
  return out;
}

}  // namespace cinn_like
