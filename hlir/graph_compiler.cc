/// \file The graph compiler's flow: placeholders, computes, the group scheduler, Lower.
#include "hlir/graph_compiler.h"

#include <algorithm>
#include <map>
#include <set>

#include <glog/logging.h>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hlir/group_schedule/group_scheduler.h"
#include "hlir/op.h"
#include "hlir/row_buckets.h"
#include "ir/compile_options.h"
#include "ir/flags.h"
#include "ir/identifier.h"
#include "ir/lower.h"
#include "ir/schedule.h"

namespace cinn_like::hlir {
namespace {

class GroupLowering {
 public:
  /// `groups` (may be empty: then every stage is scheduled on its own, as without fusion).
  GroupLowering(const Graph& graph, const ir::Target& target,
                const std::vector<FusionGroup>& groups = {},
                const std::map<int, int>& knob_values = {})
      : graph_(graph), target_(target), fail_ops_(ir::CurrentCompileOptions().debug_fail_op) {
    scheduling_.knob_values = knob_values;
    group_of_node_ = GroupOfNodes(groups, graph.nodes().size());
  }

  const std::vector<TacticChoice>& tactics() const { return tactics_; }
  /// Whether the lowered Program has symbolic sizes (known after Run).
  bool symbolic() const { return !symbols_.empty(); }

  /// Makes this lowering a bucket's (hlir/row_buckets.h): rows of symbolic length scheduled
  /// as if at most `bound`; the lengths padded are added to `*padded`.
  void SetRowBucket(int64_t bound, std::vector<ir::Expr>* padded) {
    scheduling_.symbolic_row_bound = bound;
    scheduling_.padded_rows = padded;
  }

  /// The symbols that size, alone, an axis one of `nodes` reduces and needs non-empty
  /// (OpDef::needs_nonempty_axes: the entry refuses a call binding one to 0), each with the
  /// first such op, for the message.
  std::map<std::string, std::string> NonEmptyAxisSymbols(const std::vector<int>& nodes) const {
    std::map<std::string, std::string> why;
    for (int n : nodes) {
      const Node& node = graph_.nodes()[n];
      auto def = OpRegistry::Global().Find(node.op);
      if (!def.ok() || !(*def)->needs_nonempty_axes || !(*def)->reduce_axes) continue;
      std::vector<TensorDesc> in;
      for (int v : node.inputs) in.push_back(graph_.values()[v].desc);
      auto axes = (*def)->reduce_axes(in, node.attrs);
      if (!axes.ok()) continue;
      for (int a : *axes) {
        std::optional<std::string> symbol = in[0].shape[a].symbol_name();
        if (!symbol || why.count(*symbol)) continue;
        why[*symbol] = absl::StrCat("op ", node.op, " reduces axis ", a, " of ",
                                    graph_.values()[node.inputs[0]].name, " (", in[0].ToString(),
                                    "), and over no elements it has no value");
      }
    }
    return why;
  }

  absl::StatusOr<ir::LoweredFunc> Run(const std::vector<int>& nodes, const std::vector<int>& inputs,
                                      const std::vector<int>& outputs, const std::string& name) {
    // Indices are 64-bit where a tensor passes 2^31 - 1 elements, else 32-bit (faster on GPUs).
    // Symbolic shapes stay 32-bit: the call refuses arguments past the bound.
    ir::IndexTypeScope index_type(NeedsWideIndices(nodes, inputs) ? ir::Int(64) : ir::Int(32));
    std::vector<ir::Tensor> args;
    for (int v : inputs) {
      const Value& value = graph_.values()[v];
      if (value.desc.shape.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "graph compiler: input ", value.name,
            " is a scalar (rank 0); lowering supports tensors of rank >= 1 only for now"));
      }
      tensors_[v] = ir::Placeholder(names_.Unique(value.name), ToIrType(value.desc.dtype),
                                    ShapeExprs(value.desc.shape));
      args.push_back(tensors_[v]);
    }
    for (int n : nodes) {
      absl::Status s = ComputeNode(n);
      if (!s.ok()) return s;
    }
    std::vector<ir::Tensor> outs;
    std::set<const ir::TensorNode*>& keep = scheduling_.keep;
    std::set<const ir::TensorNode*>& is_output = scheduling_.outputs;
    // Values read by a node of another group are materialized. A reshape is not (unless it
    // is an output): its source is, and its readers compute it from the source's buffer (a
    // library call reads that buffer itself, ReadReshapesThrough): a reshape moves no element,
    // so storing it would only copy.
    const std::set<int> output_values(outputs.begin(), outputs.end());
    auto keep_source = [&](int source) {
      if (graph_.values()[source].producer >= 0) keep.insert(tensors_.at(source).node().get());
    };
    for (int n : nodes) {
      for (int v : graph_.nodes()[n].inputs) {
        auto through = read_through_.find({n, v});
        if (through != read_through_.end()) {
          keep_source(through->second);
          continue;
        }
        int p = graph_.values()[v].producer;
        auto it = tensors_.find(v);
        if (p < 0 || it == tensors_.end() || group_of_node_[p] == group_of_node_[n]) continue;
        const int source = output_values.count(v) ? -1 : ReshapeSource(v);
        if (source >= 0) {
          keep_source(source);
        } else {
          keep.insert(it->second.node().get());
        }
      }
    }
    for (int v : outputs) {
      auto it = tensors_.find(v);
      if (it == tensors_.end() || it->second->is_placeholder) {
        return absl::UnimplementedError(absl::StrCat(
            "graph compiler: output ", graph_.values()[v].name,
            " is not computed by the lowered nodes (an input passed through is not supported)"));
      }
      outs.push_back(it->second);
      is_output.insert(it->second.node().get());
      keep.insert(it->second.node().get());
    }
    ir::Schedule sch = ir::Schedule::Create(outs);
    auto tactics = ScheduleGroups(sch, scheduling_, target_);
    if (!tactics.ok()) {
      return absl::Status(tactics.status().code(),
                          absl::StrCat("graph compiler: ", tactics.status().message()));
    }
    tactics->insert(tactics->begin(), library_choices_.begin(), library_choices_.end());
    DumpToFile(name + ".tactics.txt", TacticsText(*tactics));
    tactics_ = *tactics;
    args.insert(args.end(), outs.begin(), outs.end());
    auto func = ir::Lower(name, args, sch, target_);
    if (!func.ok()) return func;
    for (const auto& [symbol, var] : symbols_) (*func)->size_symbols[var.name()].symbol = symbol;
    for (const auto& [symbol, why] : NonEmptyAxisSymbols(nodes)) {
      auto it = symbols_.find(symbol);
      if (it == symbols_.end()) continue;
      ir::LoweredFuncNode::SizeSymbol& size = (*func)->size_symbols[it->second.name()];
      size.min = std::max<int64_t>(size.min, 1);
      size.why = why;
    }
    // The arguments are the inputs, then the outputs: a rank-0 one is a one-element buffer
    // (ShapeExprs), which the entry says is rank 0 in the Program.
    for (size_t i = 0; i < inputs.size() + outputs.size(); ++i) {
      const int v = i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
      (*func)->args[i].rank_zero = graph_.values()[v].desc.shape.empty();
    }
    return func;
  }

 private:
  /// Whether a value the nodes read or write has more than kMaxElements elements (static
  /// dims; symbolic ones are bound at the call, which refuses such sizes).
  bool NeedsWideIndices(const std::vector<int>& nodes, const std::vector<int>& inputs) const {
    auto large = [&](int v) {
      int64_t n = 1;
      for (const Dim& d : graph_.values()[v].desc.shape) {
        if (!d.is_symbolic() && (__builtin_mul_overflow(n, d.value, &n) || n > kMaxElements)) {
          return true;
        }
      }
      return false;
    };
    for (int v : inputs) {
      if (large(v)) return true;
    }
    for (int n : nodes) {
      for (int v : graph_.nodes()[n].outputs) {
        if (large(v)) return true;
      }
    }
    return false;
  }

  /// The IR shape of a value (constants of the index type); a rank-0 intermediate is a
  /// one-element tensor (numpy broadcasting gives the same results).
  std::vector<ir::Expr> ShapeExprs(const Shape& shape) {
    if (shape.empty()) return {ir::IndexConst(1)};
    std::vector<ir::Expr> out;
    for (const Dim& d : shape) {
      if (!d.is_symbolic()) {
        out.push_back(ir::IndexConst(d.value));
        continue;
      }
      out.push_back(SymbolicSize(d.expr()));
    }
    return out;
  }

  /// A symbolic size in IR: its symbols' variables (bound at the call from the inputs' dims)
  /// combined as the polynomial says.
  ir::Expr SymbolicSize(const SymExpr& e) {
    ir::Expr sum;
    for (const auto& [monomial, coefficient] : e.terms()) {
      ir::Expr term;
      for (const std::string& s : monomial) {
        auto it = symbols_.find(s);
        if (it == symbols_.end()) it = symbols_.emplace(s, ir::Var(names_.Unique(s))).first;
        term = term.defined() ? term * it->second : ir::Expr(it->second);
      }
      if (!term.defined()) {
        term = ir::IndexConst(coefficient);
      } else if (coefficient != 1) {
        term = ir::IndexConst(coefficient) * term;
      }
      sum = sum.defined() ? sum + term : term;
    }
    return sum.defined() ? sum : ir::IndexConst(0);
  }

  absl::Status ComputeNode(int id) {
    const Node& node = graph_.nodes()[id];
    auto def = OpRegistry::Global().Find(node.op);
    if (!def.ok()) return def.status();
    const StageInfo info{(*def)->pattern, group_of_node_[id], (*def)->compile_time_value};
    const bool use_gpu = target_.is_gpu() && (*def)->gpu_compute;
    const ComputeFn& compute = use_gpu ? (*def)->gpu_compute : (*def)->compute;
    if (!compute) {
      return absl::UnimplementedError(
          absl::StrCat("graph compiler: op ", node.op, " has no compute in lang yet"));
    }
    if (!fail_ops_.empty() && absl::c_linear_search(absl::StrSplit(fail_ops_, ','), node.op)) {
      return absl::InternalError(absl::StrCat("graph compiler: op ", node.op,
                                              " fails as FLAGS_cinn_like_debug_fail_op asks"));
    }
    std::vector<ir::Tensor> in;
    for (int v : node.inputs) {
      auto it = tensors_.find(v);
      if (it == tensors_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("graph compiler: op ", node.op, " reads ",
                                                       graph_.values()[v].name,
                                                       ", which is neither an input nor computed"));
      }
      in.push_back(it->second);
    }
    std::vector<ComputeOutput> outs;
    for (int v : node.outputs) {
      const TensorDesc& d = graph_.values()[v].desc;
      // Rank-0 intermediates (batch_norm simplification's epsilon) are inlined.
      bool is_output =
          std::find(graph_.outputs().begin(), graph_.outputs().end(), v) != graph_.outputs().end();
      if (d.shape.empty() && is_output && !info.compile_time_value) {
        return absl::UnimplementedError(absl::StrCat(
            "graph compiler: op ", node.op, " makes the scalar (rank-0) output ",
            graph_.values()[v].name, "; lowering supports outputs of rank >= 1 only for now"));
      }
      outs.push_back(ComputeOutput{ToIrType(d.dtype), ShapeExprs(d.shape)});
    }
    std::string name = names_.Unique(graph_.values()[node.outputs[0]].name);
    // A library call where the target's library takes the case (ir/library_functions.h),
    // else the generated compute; the choice and why go to the log (GLOG_v=1) and the dump.
    absl::StatusOr<std::vector<ir::Tensor>> made = std::vector<ir::Tensor>{};
    if (ir::CurrentCompileOptions().extern_libs && (*def)->extern_compute) {
      auto ext = (*def)->extern_compute(target_, in, node.attrs, outs, name);
      if (!ext.ok()) {
        made = ext.status();
      } else {
        const bool call = !ext->tensors.empty();
        if (call && (*def)->extern_reads_data_only) ReadReshapesThrough(id, ext->tensors);
        if (call) made = ext->tensors;
        VLOG(1) << "graph compiler: op " << node.op << " (" << name
                << "): " << (call ? "library call: " : "generated compute: ") << ext->why;
        library_choices_.push_back({name, call ? "library.call" : "library.declined", ext->why});
      }
    }
    if (made.ok() && made->empty()) made = compute(in, node.attrs, outs, name);
    if (!made.ok()) {
      return absl::Status(made.status().code(), absl::StrCat("graph compiler: op ", node.op, " (",
                                                             name, "): ", made.status().message()));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      tensors_[node.outputs[i]] = (*made)[i];
      Label((*made)[i].node(), info);
    }
    return absl::OkStatus();
  }

  /// The value whose bytes `v` holds when `v` is a reshape (of a reshape ...) of a value that
  /// has a buffer of its own when stored; -1 otherwise. A row-major reshape moves no element.
  int ReshapeSource(int v) const {
    int source = -1;
    for (int p = graph_.values()[v].producer; p >= 0 && graph_.nodes()[p].op == "reshape";
         p = graph_.values()[v].producer) {
      v = graph_.nodes()[p].inputs[0];
      source = v;
    }
    if (source < 0 || graph_.values()[source].desc.shape.empty()) return -1;
    const int p = graph_.values()[source].producer;
    if (p >= 0) {
      auto def = OpRegistry::Global().Find(graph_.nodes()[p].op);
      if (!def.ok() || (*def)->compile_time_value) return -1;  // literals, no buffer
    }
    return tensors_.count(source) ? source : -1;
  }

  /// Node `id`'s library call reads each input that is a reshape from its source's buffer
  /// (OpDef::extern_reads_data_only): the reshape is then computed only where another reader
  /// needs it, not copied into a buffer for the call.
  void ReadReshapesThrough(int id, std::vector<ir::Tensor>& made) {
    for (int v : graph_.nodes()[id].inputs) {
      const int source = ReshapeSource(v);
      if (source < 0) continue;
      const ir::TensorNode* reshaped = tensors_.at(v).node().get();
      for (ir::Tensor& t : made) {
        for (auto& input : t.node()->inputs) {
          if (input.get() == reshaped) input = tensors_.at(source).node();
        }
      }
      read_through_[{id, v}] = source;
    }
  }

  /// Records `info` for `t` and the new tensors it reads (the op's intermediates).
  void Label(const std::shared_ptr<ir::TensorNode>& t, const StageInfo& info) {
    if (t->is_placeholder || scheduling_.info.count(t.get())) return;
    scheduling_.info[t.get()] = info;
    for (const auto& producer : t->inputs) Label(producer, info);
  }

  const Graph& graph_;
  ir::Target target_;
  const std::string fail_ops_;  // FLAGS_cinn_like_debug_fail_op, read once per lowering
  std::map<int, ir::Tensor> tensors_;
  std::map<std::string, ir::Var> symbols_;
  ir::NameSupply names_;  // of tensors and symbols alike: no two share a name in the source
  GroupScheduleInput scheduling_;              // what the group scheduler is told, filled as we go
  std::vector<TacticChoice> tactics_;          // what it chose (Run's), library calls first
  std::vector<TacticChoice> library_choices_;  // each extern compute's call or why it declined
  std::vector<int> group_of_node_;
  std::map<std::pair<int, int>, int> read_through_;  // (node, input value) -> source value
};

}  // namespace

absl::StatusOr<ir::LoweredFunc> LowerNodes(const Graph& graph, const std::vector<int>& nodes,
                                           const std::vector<int>& inputs,
                                           const std::vector<int>& outputs,
                                           const ir::Target& target, const std::string& name) {
  return GroupLowering(graph, target).Run(nodes, inputs, outputs, name);
}

absl::StatusOr<ir::Module> CompileFusedGraph(const FusedGraph& fused, const ir::Target& target,
                                             const std::string& name,
                                             const std::map<int, int>& knob_values,
                                             std::vector<TacticChoice>* tactics) {
  const Graph& graph = fused.graph;
  std::vector<int> nodes;
  for (size_t i = 0; i < graph.nodes().size(); ++i) nodes.push_back(static_cast<int>(i));
  GroupLowering lowering(graph, target, fused.groups, knob_values);
  std::vector<ir::Expr> symbolic_rows;
  lowering.SetRowBucket(0, &symbolic_rows);
  auto func = lowering.Run(nodes, graph.inputs(), graph.outputs(), name);
  if (!func.ok()) return func.status();
  if (tactics) *tactics = lowering.tactics();
  if (target.is_gpu() && !symbolic_rows.empty()) {
    // Rows of symbolic length: lowered again per bucket of row lengths, which the entry picks
    // by the call's sizes. A bucket whose lowering fails is left out (the generic kernels
    // serve those sizes). MergeRowBuckets pairs the entries' statements one by one, and
    // independent nests sharing a kernel (GroupIndependentNests) group by launch dims, which a
    // bucket changes: the generic entry and the buckets are lowered with each nest a kernel.
    auto apart = std::make_shared<ir::CompileOptions>(ir::CurrentCompileOptions());
    const bool merged = apart->merge_kernels;
    apart->merge_kernels = false;
    ir::CompileOptionsScope scope(apart);
    if (merged) {
      GroupLowering unmerged(graph, target, fused.groups, knob_values);
      symbolic_rows.clear();
      unmerged.SetRowBucket(0, &symbolic_rows);
      func = unmerged.Run(nodes, graph.inputs(), graph.outputs(), name);
      if (!func.ok()) return func.status();
      if (tactics) *tactics = unmerged.tactics();
    }
    std::vector<RowBucket> buckets;
    for (int64_t bound : kRowBuckets) {
      RowBucket bucket{bound, nullptr, {}};
      GroupLowering again(graph, target, fused.groups, knob_values);
      again.SetRowBucket(bound, &bucket.padded_rows);
      auto entry =
          again.Run(nodes, graph.inputs(), graph.outputs(), absl::StrCat(name, "_rows_le_", bound));
      if (!entry.ok()) {
        VLOG(1) << "graph compiler: " << name << ": no bucket of rows at most " << bound << ": "
                << entry.status();
        continue;
      }
      if (bucket.padded_rows.empty()) continue;
      bucket.entry = *entry;
      buckets.push_back(std::move(bucket));
    }
    if (!buckets.empty()) func = MergeRowBuckets(*func, buckets);
  }
  return ir::Module{SafeFileName(name), target, {*func}};
}

absl::StatusOr<ir::Module> CompileGraph(const Graph& graph, const ir::Target& target,
                                        const std::string& name) {
  std::vector<int> nodes;
  for (size_t i = 0; i < graph.nodes().size(); ++i) nodes.push_back(static_cast<int>(i));
  auto func = LowerNodes(graph, nodes, graph.inputs(), graph.outputs(), target, name);
  if (!func.ok()) return func.status();
  return ir::Module{SafeFileName(name), target, {*func}};
}

}  // namespace cinn_like::hlir
