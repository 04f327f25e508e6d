/// \file The fused attention kernels' one description (ir::LibraryCall::kAttention): which
/// kernel an attention op launches, carried in the launched kernel's name
///
///   cinn_like_attention[_grad]_<dtype>_<mask>_d<D>_q<BM>_k<BN>[_tc][_drop]
///
/// which the op writes (hlir/ops/attention_kernel.cc, attention_grad_kernel.cc: Name) and the
/// CUDA backend reads back (backends/cuda/attention_*: Parse) to print the instance. Which
/// values a kernel takes (head dims, tiles) is the backend's to check; the form is this file's.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace cinn_like::ir {

struct AttentionKernelSpec {
  bool grad = false;              // the backward (attention_grad) kernel
  std::string dtype = "float32";  // the element: float32, float16, bfloat16
  std::string mask = "none";      // none, bool, or an element dtype
  int head_dim = 0;               // D: the larger head dim of q and v, padded to a bucket
  int rows = 0, keys = 0;         // the tile: BM query rows by BN keys
  bool tensor_cores = false;      // _tc
  bool dropout = false;           // _drop

  /// The kernel's name.
  std::string Name() const;
  /// The kernel `name` names: InvalidArgument as Error's, naming `name`, for
  /// a name not of the form, an element or mask dtype not in the lists above.
  static absl::StatusOr<AttentionKernelSpec> Parse(const std::string& name);
  /// Whether `name` starts as an attention kernel's (the backward's included) or the
  /// backward's does.
  static bool IsAttention(const std::string& name);
  static bool IsAttentionGrad(const std::string& name);

  /// The error "attention [backward ]kernel <Name>: <why> (expected <the grammar>)" about this
  /// kernel.
  absl::Status Error(const std::string& why) const;
  /// The tile's parts as the name writes them: "d64", "q32", "k64", "d64_q32_k64".
  std::string HeadDimPart() const { return "d" + std::to_string(head_dim); }
  std::string RowsPart() const { return "q" + std::to_string(rows); }
  std::string KeysPart() const { return "k" + std::to_string(keys); }
  std::string TilePart() const { return HeadDimPart() + "_" + RowsPart() + "_" + KeysPart(); }
};

}  // namespace cinn_like::ir
