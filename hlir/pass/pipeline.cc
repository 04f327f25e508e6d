/// \file The graph pass pipeline, in order, with a dump and a timer after each pass.
#include "hlir/pass/pipeline.h"

#include "absl/strings/str_cat.h"
#include "hlir/pass/attention_layout.h"
#include "hlir/pass/common_subexpression_elimination.h"
#include "hlir/pass/constant_attention_masks.h"
#include "hlir/pass/constant_folding.h"
#include "hlir/pass/conv_layout.h"
#include "hlir/pass/dead_code_elimination.h"
#include "hlir/pass/fold_transpose.h"
#include "hlir/pass/graph_dump.h"
#include "hlir/pass/index_add_accumulate.h"
#include "hlir/pass/matmul_epilogue.h"
#include "hlir/pass/matmul_padding.h"
#include "hlir/pass/matmul_reshape.h"
#include "hlir/pass/narrow_attention_masks.h"
#include "hlir/pass/recompute_shared.h"
#include "hlir/pass/reshape_before_transpose.h"
#include "hlir/pass/simplify_batch_norm.h"
#include "hlir/pass/simplify_reshapes.h"
#include "hlir/pass/simplify_transposes.h"
#include "hlir/pass/split_to_slices.h"
#include "ir/compile_options.h"
#include "ir/flags.h"
#include "ir/library_calls.h"
#include "ir/library_functions.h"
#include "ir/pass_runner.h"

namespace cinn_like::hlir {
namespace {

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

PassOptions TargetPassOptions(const ir::Target& target, const std::string& dump_name,
                              const Graph* graph) {
  PassOptions options;
  options.dump_name = dump_name;
  options.recompute_shared = target.is_gpu() && ir::CurrentCompileOptions().fusion_recompute;
  if (!ir::CurrentCompileOptions().extern_libs) return options;
  // Whether the graph (when given) has a node of `op`: a library is probed only for a graph
  // that could use it (probing loads it; oneDNN's loading moves parallel loops to its team).
  auto has = [graph](const char* op) {
    if (!graph) return true;
    for (const Node& n : graph->nodes()) {
      if (n.op == op) return true;
    }
    return false;
  };
  if (target.arch == ir::Target::Arch::kNVGPU && has("conv2d")) {
    // Only where the channels-last library call will take float16 convolutions (not declined
    // by a flag, its library loadable): else the transposes would only cost.
    auto probe = ir::ArgsAll<ir::Conv2dArgs>(ir::kArgAtCall);
    probe.has_bias = 0, probe.dtype = 1;  // no bias, float16
    options.conv_channels_last =
        ir::FindLibraryFunction(target, ir::LibraryCall::kConv2dChannelsLast, ir::ArgList(probe))
            .ok();
  }
  options.attention_layouts = target.arch == ir::Target::Arch::kNVGPU && has("attention") &&
                              ir::FindLibraryFunction(target, ir::LibraryCall::kAttention, {}).ok();
  // cuBLAS's GEMMs want 16-byte rows; oneDNN's take any (and pads itself where it helps).
  options.pad_matmul =
      target.arch == ir::Target::Arch::kNVGPU && ir::CurrentCompileOptions().pad_matmul;
  if (target.arch != ir::Target::Arch::kNVGPU && target.arch != ir::Target::Arch::kX86) {
    return options;
  }
  // Only where a matmul (a convolution) with a bias and a relu goes to a library epilogue
  // (cuBLASLt's, or oneDNN's post-ops), probed with the dtype each target's models mostly run
  // in and stand-ins for the sizes.
  auto mm = ir::ArgsAll<ir::MatmulArgs>(ir::kArgAtCall);
  mm.has_bias = 1, mm.activation = 1;                          // bias, relu
  mm.dtype = target.arch == ir::Target::Arch::kNVGPU ? 1 : 0;  // float16, float32
  // oneDNN's check declines an activation over a k known only at the call (k = 0 there would
  // make C the activation of the bias, which its call refuses): a 64 x 64 x 64 product.
  if (target.arch == ir::Target::Arch::kX86) mm.batch = 1, mm.m = mm.n = mm.k = 64;
  mm.trans_a = mm.trans_b = 0;
  options.matmul_epilogue =
      has("matmul") && ir::FindLibraryFunction(target, ir::LibraryCall::kMatmulEpilogue,
                                               ir::ArgList(mm, /*epilogue=*/true))
                           .ok();
  auto conv = ir::ArgsAll<ir::Conv2dArgs>(ir::kArgAtCall);
  conv.has_bias = 1, conv.dtype = mm.dtype, conv.activation = 1;  // bias, that dtype, relu
  conv.pad_h = conv.pad_w = conv.stride_h = conv.stride_w = 1;
  conv.dilation_h = conv.dilation_w = conv.groups = 1;
  options.conv_epilogue =
      has("conv2d") && ir::FindLibraryFunction(target, ir::LibraryCall::kConv2dEpilogue,
                                               ir::ArgList(conv, /*epilogue=*/true))
                           .ok();
  return options;
}

absl::StatusOr<FusedGraph> RunGraphPasses(const Graph& graph, const PassOptions& options) {
  ir::BasicPassRunner<Graph> runner("graph", options.dump_name, ".txt", &GraphToText);
  runner.Dump("input", graph);
  absl::StatusOr<Graph> g = runner.Run("simplify_batch_norm", SimplifyBatchNorm, graph);
  if (g.ok() && options.conv_channels_last) {
    g = runner.Run("conv_to_channels_last", ConvToChannelsLast, *g);
  }
  if (g.ok()) {
    g = runner.Run("move_reshapes_before_transposes", MoveReshapesBeforeTransposes, *g);
  }
  if (g.ok()) g = runner.Run("simplify_reshapes", SimplifyReshapes, *g);
  if (g.ok()) g = runner.Run("simplify_transposes", SimplifyTransposes, *g);
  if (g.ok()) g = runner.Run("split_to_slices", SplitToSlices, *g);
  if (g.ok()) g = runner.Run("fold_transpose_into_matmul", FoldTransposeIntoMatmul, *g);
  if (g.ok() && options.conv_epilogue) {
    g = runner.Run("fold_conv_epilogue", FoldConvEpilogue, *g);
  }
  if (g.ok() && options.matmul_epilogue) {
    g = runner.Run("fold_matmul_epilogue", FoldMatmulEpilogue, *g);
  }
  if (g.ok()) g = runner.Run("fold_reshape_into_matmul", FoldReshapeIntoMatmul, *g);
  if (g.ok() && options.matmul_epilogue) {
    g = runner.Run("fold_matmul_epilogue", FoldMatmulEpilogue, *g);  // views gone: activations
  }
  if (g.ok() && options.pad_matmul) {
    g = runner.Run("pad_matmuls_for_alignment", PadMatmulsForAlignment, *g);
  }
  if (g.ok()) g = runner.Run("accumulate_index_add_into_sum", AccumulateIndexAddIntoSum, *g);
  if (g.ok()) g = runner.Run("common_subexpression_elimination", EliminateCommonSubexpressions, *g);
  // After CSE: the mask every layer computes alike is one value, evaluated once.
  if (g.ok()) {
    g = runner.Run(
        "simplify_constant_attention_masks",
        [](const Graph& in) { return SimplifyConstantAttentionMasks(in); }, *g);
  }
  if (g.ok()) {
    g = runner.Run(
        "constant_folding",
        [&](const Graph& in) { return FoldConstants(in, options.constant_fold_max_elements); }, *g);
  }
  // After constant folding: a padding mask's all-true test of the queries is a constant.
  if (g.ok()) g = runner.Run("narrow_attention_masks", NarrowAttentionMasks, *g);
  if (g.ok() && options.attention_layouts) {
    g = runner.Run("fold_layouts_into_attention", FoldLayoutsIntoAttention, *g);
  }
  if (g.ok()) g = runner.Run("dead_code_elimination", EliminateDeadCode, *g);
  if (!g.ok()) return g.status();

  FusionOptions fusion;
  fusion.enabled = ir::CurrentCompileOptions().fusion;
  fusion.fuse_epilogue_into_extern = options.fuse_epilogue_into_extern;
  auto made = options.recompute_shared ? FuseRecomputingSharedValues(*std::move(g), fusion)
                                       : FuseOperators(*std::move(g), fusion);
  if (!made.ok()) return made.status();
  FusedGraph fused = *std::move(made);
  runner.DumpText("fusion", [&] { return GroupsToText(fused); });
  runner.DumpText(
      "fusion", [&] { return FusionGroupsToDot(fused.graph, fused.groups); }, ".dot",
      /*same_step=*/true);
  return fused;
}

}  // namespace cinn_like::hlir
