/// \file The conv layout pass: NCHW convolutions become channels-last (NHWC) ones between
/// transposes, for targets whose convolution library wants that layout. cuDNN does for float16
/// (its tensor-core kernels take NHWC, and around an NCHW float16 convolution it runs transpose
/// kernels of its own: 27 of 53 us for a 32x64x56x56 conv on an H100), and for float32 where
/// the graph around the convolution is channels last already (ConvNeXt: a depthwise 7x7 whose
/// result a LayerNorm reads permuted to NHWC, where the permuted read of an NCHW result made
/// the norm's rows strided). As graph nodes the transposes fuse: the one back to NCHW into the
/// convolution's elementwise consumers (a batch_norm + relu epilogue reads the NHWC result once
/// and writes NCHW), the one of an input produced by a channels-last-to-NCHW transpose cancels
/// it, and the weight's is a small kernel. Elementwise ops on a channels-last result run
/// channels last themselves (their broadcast operands reshaped to rank 4 and permuted), and so
/// do those after a transpose from NHWC to NCHW in a graph with channels-last convolutions, so
/// that between two convolutions nothing is transposed.
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Rewrites each conv2d in NCHW (no data_format, or "NCHW") with symmetric paddings, of float16
/// operands, or of float32 ones whose input is channels last (a transpose from NHWC, or a
/// value this pass keeps channels last) or whose result a transpose to NHWC reads, to
///   transpose(conv2d(transpose(x, [0, 2, 3, 1]), transpose(w, [0, 2, 3, 1]), [bias],
///                    data_format = "NHWC"), [0, 3, 1, 2])
/// where x = transpose(x', [0, 3, 1, 2]) reads x' directly, and the NCHW result is made only
/// where a node other than an elementwise op of its shape (or a graph output) reads it. Where
/// a convolution is rewritten, each transpose [0, 3, 1, 2] of the graph is kept pending too.
/// Other nodes are copied.
absl::StatusOr<Graph> ConvToChannelsLast(const Graph& graph);

}  // namespace cinn_like::hlir
