/// \file LowerAndBuild: Program -> Graph -> passes -> Module -> Compiler::Build, and its retries.
#include "cinn_like/pipeline/lower_and_build.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "cinn_like/pipeline/debug_wrong_op.h"
#include "cinn_like/pipeline/options_of_this_compile.h"
#include "cinn_like/pipeline/stopwatch.h"
#include "cinn_like/tune/autotune.h"
#include "cinn_like/tune/group_report.h"
#include "cinn_like/tune/warm_up.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "ir/compile_options.h"
#include "ir/library_functions.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cudnn.h"
#endif

namespace cinn_like {
namespace {

/// Waits for the library plans this thread's lowering queued (cuDNN's, made beside the Build:
/// runtime/cuda/cudnn.h); the first that failed.
absl::Status WaitForLibraryPlans() {
#ifdef CINN_LIKE_WITH_CUDA
  return runtime::cuda::CudnnWaitForPlans();
#else
  return absl::OkStatus();
#endif
}

/// The Program's bounds of its symbols, for the entry to check where it binds them.
void BoundSymbols(const frontend::Program& program, ir::Module& module) {
  for (const ir::LoweredFunc& f : module.functions) {
    for (auto& [var, size] : f->size_symbols) {
      auto it = program.symbols.find(size.symbol);
      if (it == program.symbols.end()) continue;
      size.min = std::max(size.min, it->second.min);  // an op may need more (SizeSymbol::why)
      size.max = it->second.max;
    }
  }
}

/// One lowering's result.
struct Lowered {
  hlir::Graph graph;
  hlir::FusedGraph fused;
  ir::Module module;
  std::vector<hlir::TacticChoice> tactics;  // where the tuner or the group report needs them
  std::map<int, int> knob_values;           // the tuner's, by group, where it chose any
};

}  // namespace

absl::StatusOr<ProgramBuild> LowerAndBuild(
    const frontend::Program& program, const ir::Target& target, const std::string& name,
    PipelineEnd end, absl::StatusOr<std::unique_ptr<backends::Compiler>> compiler,
    bool group_report) {
  OptionsOfThisCompile options;
  if (end == PipelineEnd::kBuilt && compiler.ok() && !*compiler) {
    compiler = backends::Compiler::Create(target);
  }
  const bool build = end == PipelineEnd::kBuilt && compiler.ok();
  const bool tune = build && ir::CurrentCompileOptions().autotune;
  // The group report (group_report.h) is written beside the dump of a built compile.
  const bool report = build && group_report && GroupReportIsOn();

  // The lowering, whole: the graph, its passes, each fusion group's functions; tuned, the
  // groups lowered again where the tuner chose another knob value than their tactic's own.
  auto lower = [&]() -> absl::StatusOr<Lowered> {
    auto graph = frontend::BuildGraph(program);
    if (!graph.ok()) return graph.status();
    const std::string wrong_ops = ir::CurrentCompileOptions().debug_wrong_op;
    auto compiled_graph = wrong_ops.empty() ? graph : PlantWrongResults(program, *graph, wrong_ops);
    if (!compiled_graph.ok()) return compiled_graph.status();
    auto fused = hlir::RunGraphPasses(*compiled_graph,
                                      hlir::TargetPassOptions(target, name, &*compiled_graph));
    if (!fused.ok()) return fused.status();
    std::vector<hlir::TacticChoice> tactics;
    auto module =
        hlir::CompileFusedGraph(*fused, target, name, {}, tune || report ? &tactics : nullptr);
    if (!module.ok()) return module.status();
    std::map<int, int> knob_values;
    if (tune) {
      // Retry 1: lowered again only where the tuner chose another value than a tactic's own.
      absl::StatusOr<std::map<int, int>> tuned = TuneGroups(*fused, tactics, target, name);
      if (!tuned.ok()) return tuned.status();
      knob_values = *std::move(tuned);
      if (!knob_values.empty()) {
        module = hlir::CompileFusedGraph(*fused, target, name, knob_values, &tactics);
      }
      if (!module.ok()) return module.status();
    }
    BoundSymbols(program, *module);
    return Lowered{*std::move(graph), *std::move(fused), *std::move(module), std::move(tactics),
                   std::move(knob_values)};
  };

  if (!build) {
    absl::StatusOr<Lowered> lowered = lower();
    (void)WaitForLibraryPlans();  // nothing runs this lowering: its plans are not needed now
    if (!lowered.ok()) return lowered.status();
    if (!compiler.ok()) return compiler.status();
    return ProgramBuild{std::move(lowered->graph), std::move(lowered->fused),
                        std::move(lowered->module), /*compiler=*/nullptr};
  }

  Stopwatch lower_clock;
  FinishWarmUp();  // the libraries it loads are the lowering's first needs
  const double library_before = ir::LibraryCheckMilliseconds();
  // Whatever way this ends, no plan it queued is left being made after it.
  struct PlansWaited {
    ~PlansWaited() { (void)WaitForLibraryPlans(); }
  } plans_waited;
  absl::StatusOr<Lowered> lowered = lower();
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
    // Retry 2: a library turned a call down; lowered again, that call is the generated code's.
    LOG(INFO) << "cinn_like: compiling " << name
              << " again without a library call: " << plans.message();
    compiler = backends::Compiler::Create(target);
    if (!compiler.ok()) return compiler.status();
    lowered = lower();
    if (!lowered.ok()) return lowered.status();
    built = (*compiler)->Build(lowered->module);
    // Plans queued again (those that could not be made at the first try) are made before the
    // compile returns; a refusal now is the first call's error to report.
    absl::Status again = WaitForLibraryPlans();
    if (!again.ok()) LOG(WARNING) << "cinn_like: compiling " << name << ": " << again.message();
  }
  if (!built.ok()) return built;
  if (report) {
    WriteGroupReport(lowered->fused, lowered->tactics, lowered->knob_values, target, name);
  }
  return ProgramBuild{std::move(lowered->graph),
                      std::move(lowered->fused),
                      std::move(lowered->module),
                      *std::move(compiler),
                      lower_ms,
                      library_ms};
}

}  // namespace cinn_like
