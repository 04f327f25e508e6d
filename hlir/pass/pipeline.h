/// \file The graph pass pipeline: the one place that lists the graph passes in order.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "hlir/graph.h"
#include "hlir/pass/constant_folding.h"
#include "hlir/pass/fusion.h"
#include "ir/target.h"

namespace cinn_like::hlir {

struct PassOptions {
  /// Constant folding evaluates nodes whose outputs have at most this many elements.
  int64_t constant_fold_max_elements = kMaxFoldedConstantElements;
  /// Let elementwise epilogues join out-fusible (extern) groups (see hlir/pass/fusion.h).
  bool fuse_epilogue_into_extern = false;
  /// Run float16 convolutions channels last (hlir/pass/conv_layout.h): for targets whose
  /// convolution library prefers it (cuDNN), when library calls are on.
  bool conv_channels_last = false;
  /// Fold bias adds and activations into matmuls (hlir/pass/matmul_epilogue.h): for targets
  /// whose matmul library applies them as the GEMM's epilogue (cuBLASLt, oneDNN's post-ops),
  /// when library calls are on.
  bool matmul_epilogue = false;
  /// Likewise for conv2d (FoldConvEpilogue): where the target's convolution library applies
  /// an activation (oneDNN's post-ops on x86).
  bool conv_epilogue = false;
  /// Pad matmuls whose rows are not 16-byte aligned (hlir/pass/matmul_padding.h): for
  /// targets whose GEMM library runs unaligned rows on slow kernels (cuBLAS), when library
  /// calls are on and the flag cinn_like_pad_matmul is.
  bool pad_matmul = false;
  /// Compute cheap values that several fusion groups read in each of them (hlir/pass/
  /// recompute_shared.h): for GPU targets, where a stored temporary is a kernel and a round trip
  /// through memory, while the flag cinn_like_fusion_recompute is on. CPUs store such a value
  /// once (their caches hold it for the readers that follow).
  bool recompute_shared = false;
  /// Attention reads and writes its operands where they lie (hlir/pass/attention_layout.h): for
  /// targets whose fused attention kernel takes strided operands (NVGPU), when library calls
  /// are on and the kernel is.
  bool attention_layouts = false;
  /// Dump files are "<dump_name>.<k>_<pass>.txt" (and .dot for the fusion groups).
  std::string dump_name = "graph";
};

/// The options for compiling for `target`, dumps named `dump_name`: float16 convolutions
/// channels last on NVGPU, and matmul and conv2d epilogues folded, when library calls are on
/// (the flag cinn_like_extern_libs) and the calls are available. With `graph`, a library is
/// asked only where the graph has the op it serves (asking loads it).
PassOptions TargetPassOptions(const ir::Target& target, const std::string& dump_name,
                              const Graph* graph = nullptr);

/// Runs, in order: batch_norm simplification, the conv layout pass (when asked), transpose
/// folding into matmuls, matmul padding (when asked), common-subexpression elimination, constant
/// folding, attention masks narrowed (narrow_attention_masks.h), attention's operand layouts
/// folded (attention_layout.h, when asked), dead-code elimination, and
/// operator fusion (off when the flag cinn_like_fusion is false: one group per node),
/// recomputing shared cheap values where asked. With the flag
/// cinn_like_dump_dir set, the graph is dumped as text before the first pass and after each,
/// and the fusion groups also as Graphviz.
/// Every pass preserves the graph's inputs, outputs (names and order) and results.
absl::StatusOr<FusedGraph> RunGraphPasses(const Graph& graph, const PassOptions& options);

}  // namespace cinn_like::hlir
