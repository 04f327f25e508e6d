/// \file Matmul epilogue folding: add(matmul(x, y), bias) and a relu or tanh-gelu after it
/// become one matmul with a bias input and an "activation" attribute (ops::MatmulEpilogue),
/// which a library with epilogues (cuBLASLt) runs as one GEMM writing its output once. PyTorch's
/// linear layers arrive as mm + add(bias) (+ relu): the add and the activation were a second
/// kernel reading and writing the whole product again. The pipeline runs it only on targets
/// whose library takes such matmuls (PassOptions::matmul_epilogue).
#pragma once

#include "absl/status/statusor.h"
#include "hlir/graph.h"

namespace cinn_like::hlir {

/// Folds into each matmul of a float type without an activation: when it has no bias yet, an
/// add of its product (read by nothing else and no graph output) with a bias of its dtype
/// shaped [n], [1, n] or [1, ..., 1, n] (n the product's last dim; the add broadcasts nothing
/// else), then a relu or gelu(approximate="tanh") of the result under the same conditions.
/// The folded value keeps the name of the last op folded. The pipeline runs it again after
/// reshape folding (hlir/pass/matmul_reshape.h), which removes the view between a linear
/// layer's bias and its activation.
absl::StatusOr<Graph> FoldMatmulEpilogue(const Graph& graph);

/// The same for NCHW conv2d nodes: an add of a bias per output channel ([c, 1, 1] or
/// [1, c, 1, 1]) when the convolution has none, then a relu or tanh-gelu, become one conv2d with
/// a bias input [c] and an "activation" attribute, which oneDNN runs with the activation as a
/// post-op (ir::LibraryCall::kConv2dEpilogue). A batch_norm between them (a per-channel scale
/// first) stops the chain.
absl::StatusOr<Graph> FoldConvEpilogue(const Graph& graph);

}  // namespace cinn_like::hlir
