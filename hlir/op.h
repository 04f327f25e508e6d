/// \file The op registry: what cinn_like knows about each graph-level op. Ops are registered
/// by one explicit function (RegisterAllOps) when the registry is first used, never by static
/// constructors. An OpDef is the one home of everything about an op: its arity, its fusion
/// pattern and the axes it reduces over, its shape and dtype inference (which also validates
/// attributes and dtypes), its reference implementation for the interpreter, and its compute
/// in lang (and library call) for the graph compiler. Passes and the graph compiler ask the
/// OpDef, never compare op names.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlir/attribute.h"
#include "hlir/host_tensor.h"
#include "hlir/shape.h"
#include "ir/target.h"
#include "ir/tensor.h"
#include "ir/type.h"

namespace cinn_like::hlir {

/// How an op fuses with its neighbours (TVM's and CINN's pattern kinds).
enum class OpPattern : uint8_t {
  kElementwise,  // out[i] = f(in[i]) for same-shape operands
  kBroadcast,    // elementwise after numpy broadcasting of the operands
  kInjective,    // each output element reads a computable set of input elements (reshape, slice)
  kReduction,    // reduces over some axes
  kOutFusible,   // matmul/conv: elementwise consumers may fuse into its epilogue
  kOpaque,       // never fused (extern library calls)
};
const char* OpPatternName(OpPattern p);

/// Output descs from input descs and attributes; errors name the op, the input and its shape.
using InferFn = std::function<absl::StatusOr<std::vector<TensorDesc>>(
    const std::vector<TensorDesc>& inputs, const AttributeMap& attrs)>;
/// Fills `outputs` (already shaped and typed by InferFn on the concrete shapes) from `inputs`,
/// computing in double; the interpreter rounds to the output dtype afterwards.
using ReferenceFn =
    std::function<absl::Status(const std::vector<const HostTensor*>& inputs,
                               const AttributeMap& attrs, std::vector<HostTensor>& outputs)>;

/// What op lowering knows of one output before the compute exists: its IR element type and
/// its shape as IR expressions (symbolic dims are the lowering's shared ir::Vars).
struct ComputeOutput {
  ir::Type type;
  std::vector<ir::Expr> shape;
};
/// The op in lang: its output tensors (as many as the op has outputs, with the given types
/// and shapes) from its input tensors, named `name` or `name_<k>`. The graph compiler inlines
/// and schedules them; an op without a compute runs as an extern call or is unsupported.
using ComputeFn = std::function<absl::StatusOr<std::vector<ir::Tensor>>(
    const std::vector<ir::Tensor>& inputs, const AttributeMap& attrs,
    const std::vector<ComputeOutput>& outputs, const std::string& name)>;

/// What an extern compute made: the library call's tensors, or none where the target's library
/// does not take the case (then the graph compiler uses the op's generated compute); `why`
/// says which library runs it or why not, for the log and the tactics dump.
struct ExternTensors {
  std::vector<ir::Tensor> tensors;  // empty: declined
  std::string why;
};
/// The op as a library call on `target` (ir/library_functions.h says which function, if any,
/// the target has for it); otherwise as ComputeFn.
using ExternComputeFn = std::function<absl::StatusOr<ExternTensors>(
    const ir::Target& target, const std::vector<ir::Tensor>& inputs, const AttributeMap& attrs,
    const std::vector<ComputeOutput>& outputs, const std::string& name)>;

/// The axes of input 0 that an op reduces over (sorted), from its input descs and attributes:
/// fusion puts reductions together only where they reduce the same axes of the same shape.
using ReduceAxesFn = std::function<absl::StatusOr<std::vector<int>>(
    const std::vector<TensorDesc>& inputs, const AttributeMap& attrs)>;

struct OpDef {
  std::string name;
  OpPattern pattern = OpPattern::kElementwise;
  int min_inputs = 1;
  int max_inputs = 1;   // -1: any number (concat)
  int num_outputs = 1;  // -1: as many as the inference returns (split)
  InferFn infer;
  ReferenceFn reference;
  ComputeFn compute;  // may be null (see ComputeFn)
  /// The op as a library call (cuBLAS, cuDNN, oneDNN) producing extern tensors (ir::TensorNode::
  /// extern_body); the graph compiler asks it first when FLAGS_cinn_like_extern_libs is on, and
  /// uses `compute` where it declines. May be null.
  ExternComputeFn extern_compute;
  /// The extern bodies read their inputs' data pointers only (sizes are fixed when the op's
  /// extern_compute runs): an input that is a reshape of a stored value is then passed as that
  /// value's buffer, the same bytes, instead of being copied into a buffer of its own.
  bool extern_reads_data_only = false;
  /// The op in lang for GPU targets (Target::is_gpu) where it must differ from `compute`: the
  /// scans (hlir/ops/scan.h) bind a thread to each line they walk, where the CPU runs the lines
  /// on its thread pool. May be null (then `compute` serves every target).
  ComputeFn gpu_compute;
  /// Reductions over whole axes (reduce_*, argmax, argmin) and row ops that reduce inside
  /// (softmax, log_softmax, layer_norm, rms_norm): the axes. Null for the others, including
  /// windowed reductions (the pools), which join no fusion group holding another reduction.
  ReduceAxesFn reduce_axes;
  /// The op has no value over no elements (max, min, argmax, argmin: PyTorch raises): its
  /// reduce_axes of input 0 must not be empty. Its inference refuses an axis known to be 0; an
  /// axis that is a symbol alone makes the compiled entry refuse a call that binds it to 0
  /// (GroupLowering, ir::LoweredFuncNode::SizeSymbol::why).
  bool needs_nonempty_axes = false;
  /// The op's value is known at compile time from its attributes alone (constant, fill,
  /// arange): the graph compiler inlines its compute into every reader as literals, in any
  /// fusion group, and materializes it only as a graph output (a rank-0 one as one element).
  bool compile_time_value = false;
};

/// The IR element type of a dtype (bool is ir::Bool(), bfloat16 ir::BFloat16()).
ir::Type ToIrType(DType t);

class OpRegistry {
 public:
  /// The registry with every op of RegisterAllOps, built once (thread-safe).
  static const OpRegistry& Global();

  /// Adds an op; a duplicate name is a programming error (CHECK).
  void Register(OpDef def);
  /// The op called `name`, or NotFound "unknown op 'foo'" with the closest known names.
  absl::StatusOr<const OpDef*> Find(const std::string& name) const;
  std::vector<std::string> Names() const;

  /// Checks the arity, then runs the op's inference: the one entry the frontend and the graph
  /// passes use.
  absl::StatusOr<std::vector<TensorDesc>> Infer(const std::string& op,
                                                const std::vector<TensorDesc>& inputs,
                                                const AttributeMap& attrs) const;

 private:
  std::map<std::string, OpDef> ops_;
};

/// Registers every op of the library; each family lives in hlir/ops/<family>.cc.
void RegisterAllOps(OpRegistry& registry);
void RegisterElementwiseOps(OpRegistry& registry);
void RegisterReductionOps(OpRegistry& registry);
void RegisterMatmulOps(OpRegistry& registry);
void RegisterShapeOps(OpRegistry& registry);
void RegisterConstantOps(OpRegistry& registry);
void RegisterConvOps(OpRegistry& registry);
void RegisterConvBackwardOps(OpRegistry& registry);
void RegisterIndexOps(OpRegistry& registry);
void RegisterIndexAddOp(OpRegistry& registry);
void RegisterRandomOps(OpRegistry& registry);
void RegisterAttentionOps(OpRegistry& registry);
void RegisterScanOps(OpRegistry& registry);

}  // namespace cinn_like::hlir
