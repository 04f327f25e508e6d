/// \file The graph pass pipeline, in order, with a dump and a timer after each pass.
#include "hlir/pass/pipeline.h"

#include <glog/logging.h>

#include <chrono>
#include <cstdio>
#include <functional>

#include "absl/strings/str_cat.h"
#include "hlir/pass/common_subexpression_elimination.h"
#include "hlir/pass/constant_folding.h"
#include "hlir/pass/dead_code_elimination.h"
#include "hlir/pass/graph_dump.h"
#include "hlir/pass/simplify_batch_norm.h"
#include "ir/flags.h"

namespace cinn_like::hlir {
namespace {

/// Runs a pass, times it, and dumps its result under a numbered name.
class PassRunner {
 public:
  explicit PassRunner(std::string name) : name_(std::move(name)) {}

  absl::StatusOr<Graph> Run(const char* pass,
                            const std::function<absl::StatusOr<Graph>(const Graph&)>& fn,
                            const Graph& in) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Graph> out = fn(in);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    VLOG(2) << "graph " << name_ << ": " << pass << " took " << ms << " ms";
    if (out.ok()) Dump(pass, GraphToText(*out));
    return out;
  }
  /// Writes `<name>.<k>_<pass><ext>`; the step number advances unless `same_step`.
  void Dump(const char* pass, const std::string& text, const char* ext = ".txt",
            bool same_step = false) {
    if (same_step) --step_;
    char prefix[16];
    std::snprintf(prefix, sizeof(prefix), "%02d", step_++);
    DumpToFile(absl::StrCat(name_, ".", prefix, "_", pass, ext), text);
  }

 private:
  std::string name_;
  int step_ = 0;
};

std::string GroupsToText(const FusedGraph& fused) {
  std::string text = GraphToText(fused.graph);
  for (size_t g = 0; g < fused.groups.size(); ++g) {
    const FusionGroup& group = fused.groups[g];
    absl::StrAppend(&text, "group ", g, " (", OpPatternName(group.pattern), ", master ",
                    fused.graph.nodes()[group.master].op, "):");
    for (int n : group.nodes) absl::StrAppend(&text, " ", fused.graph.nodes()[n].op, "#", n);
    absl::StrAppend(&text, "\n");
  }
  return text;
}

}  // namespace

absl::StatusOr<FusedGraph> RunGraphPasses(const Graph& graph, const PassOptions& options) {
  InitFlagsFromEnv();
  PassRunner runner(options.dump_name);
  runner.Dump("input", GraphToText(graph));
  absl::StatusOr<Graph> g = runner.Run("simplify_batch_norm", SimplifyBatchNorm, graph);
  if (g.ok()) g = runner.Run("common_subexpression_elimination", EliminateCommonSubexpressions, *g);
  if (g.ok()) {
    g = runner.Run(
        "constant_folding",
        [&](const Graph& in) { return FoldConstants(in, options.constant_fold_max_elements); }, *g);
  }
  if (g.ok()) g = runner.Run("dead_code_elimination", EliminateDeadCode, *g);
  if (!g.ok()) return g.status();

  FusionOptions fusion;
  fusion.enabled = FLAGS_cinn_like_fusion;
  fusion.fuse_epilogue_into_extern = options.fuse_epilogue_into_extern;
  FusedGraph fused = FuseOperators(*std::move(g), fusion);
  runner.Dump("fusion", GroupsToText(fused));
  runner.Dump("fusion", FusionGroupsToDot(fused.graph, fused.groups), ".dot", /*same_step=*/true);
  return fused;
}

}  // namespace cinn_like::hlir
