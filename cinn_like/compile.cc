/// \file CompileProgram: Program -> Graph -> passes -> Module -> Compiler::Build.
#include "cinn_like/compile.h"

#include <nlohmann/json.hpp>

#include "cinn_like/autotune.h"
#include "cinn_like/debug_wrong_op.h"
#include "frontend/program_json.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "ir/flags.h"

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
    auto source = compiler_->GetSourceCode(module_);
    source_ = source.ok() ? *source : std::string();
  });
  return source_;
}

absl::StatusOr<backends::EntryFunction> CompiledProgram::Lookup(const std::string& name) const {
  return compiler_->Lookup(name);
}

namespace {

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
  const std::string wrong_ops = StringFlag("cinn_like_debug_wrong_op");
  auto compiled_graph = wrong_ops.empty() ? graph : PlantWrongResults(program, *graph, wrong_ops);
  if (!compiled_graph.ok()) return compiled_graph.status();
  auto fused = hlir::RunGraphPasses(*compiled_graph,
                                    hlir::TargetPassOptions(target, name, &*compiled_graph));
  if (!fused.ok()) return fused.status();
  const bool autotune = tune && FLAGS_cinn_like_autotune;
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
  return Lowered{*std::move(graph), *std::move(fused), *std::move(module)};
}

}  // namespace

absl::StatusOr<std::string> ProgramSource(const frontend::Program& program,
                                          const ir::Target& target, const std::string& name) {
  auto lowered = LowerProgram(program, target, name, /*tune=*/false);
  if (!lowered.ok()) return lowered.status();
  auto compiler = backends::Compiler::Create(target);
  if (!compiler.ok()) return compiler.status();
  return (*compiler)->GetSourceCode(lowered->module);
}

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileProgram(const frontend::Program& program,
                                                                const ir::Target& target,
                                                                const std::string& name) {
  DumpToFile(name + ".program.json", frontend::ProgramToJson(program));
  auto lowered = LowerProgram(program, target, name, /*tune=*/true);
  if (!lowered.ok()) return lowered.status();
  const hlir::Graph* graph = &lowered->graph;
  const hlir::FusedGraph* fused = &lowered->fused;
  const ir::Module* module = &lowered->module;
  auto compiler = backends::Compiler::Create(target);
  if (!compiler.ok()) return compiler.status();
  absl::Status built = (*compiler)->Build(*module);
  if (!built.ok()) return built;
  auto out = std::unique_ptr<CompiledProgram>(new CompiledProgram());
  out->compiler_ = std::move(*compiler);
  out->module_ = *module;
  out->signature_ = Signature(*graph);
  if (FLAGS_cinn_like_self_check) {
    out->call_check_ = MakeCallCheckContext(program, *graph, target, name, *fused);
  }
  return out;
}

}  // namespace cinn_like
