/// \file CompileProgram: the persistent cache, else the pipeline (Program -> Module ->
/// Compiler::Build); what a CompiledProgram holds, saves and loads.
#include "cinn_like/compile.h"

#include <nlohmann/json.hpp>

#include <optional>

#include "absl/strings/str_cat.h"
#include "cinn_like/cache/disk_cache.h"
#include "cinn_like/pipeline/compile_stats.h"
#include "cinn_like/pipeline/lower_and_build.h"
#include "cinn_like/pipeline/options_of_this_compile.h"
#include "cinn_like/pipeline/stopwatch.h"
#include "cinn_like/verify/call_check.h"
#include "frontend/program_json.h"
#include "ir/compile_options.h"
#include "ir/flags.h"
#include "runtime/files.h"

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

absl::StatusOr<std::string> ProgramSource(const frontend::Program& program,
                                          const ir::Target& target, const std::string& name) {
  OptionsOfThisCompile options;
  auto lowered = LowerAndBuild(program, target, name, PipelineEnd::kLowered, nullptr);
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
    return LowerAndBuild(*parsed, target, name, PipelineEnd::kBuilt, compiler.status()).status();
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
  Stopwatch parse_clock;
  if (absl::Status s = parse(); !s.ok()) return s;
  const frontend::Program& program = *parsed;
  const double parse_ms = parse_clock.Milliseconds();
  auto built = LowerAndBuild(program, target, name, PipelineEnd::kBuilt, *std::move(compiler),
                             /*group_report=*/true);
  if (!built.ok()) return built.status();
  auto out = std::unique_ptr<CompiledProgram>(new CompiledProgram());
  out->compiler_ = std::move(built->compiler);
  out->name_ = name;
  out->module_ = std::move(built->module);
  out->signature_ = Signature(built->graph);
  if (ir::CurrentCompileOptions().self_check) {
    out->call_check_ = MakeCallCheckContext(program, built->graph, target, name, built->fused);
  }
  if (!cache_dir.empty()) {
    Stopwatch store_clock;
    DiskCacheStore(cache_dir, key, out->Image());
    cache_ms += store_clock.Milliseconds();
  }
  RecordCompile(/*loaded=*/false, parse_ms + built->lower_ms, built->library_check_ms,
                out->compiler_->last_build_times(), cache_ms);
  return out;
}

}  // namespace cinn_like
