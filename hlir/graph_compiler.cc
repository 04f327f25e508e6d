/// \file The graph compiler's flow: placeholders, computes, default schedules, Lower.
#include "hlir/graph_compiler.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "hlir/auto_schedule.h"
#include "hlir/op.h"
#include "ir/lower.h"
#include "ir/schedule.h"

namespace cinn_like::hlir {
namespace {

/// A C identifier from a value name ("x.1" -> "x_1", "0a" -> "v0a").
std::string Identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

/// What the compiler knows of each tensor a node's compute made.
struct TensorInfo {
  std::string op;
  OpPattern pattern;
};

class GroupLowering {
 public:
  GroupLowering(const Graph& graph, const ir::Target& target) : graph_(graph), target_(target) {}

  absl::StatusOr<ir::LoweredFunc> Run(const std::vector<int>& nodes, const std::vector<int>& inputs,
                                      const std::vector<int>& outputs, const std::string& name) {
    std::vector<ir::Tensor> args;
    for (int v : inputs) {
      const Value& value = graph_.values()[v];
      if (value.desc.shape.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "graph compiler: input ", value.name,
            " is a scalar (rank 0); lowering supports tensors of rank >= 1 only for now"));
      }
      tensors_[v] = ir::Placeholder(Identifier(value.name), ToIrType(value.desc.dtype),
                                    ShapeExprs(value.desc.shape));
      args.push_back(tensors_[v]);
    }
    for (int n : nodes) {
      absl::Status s = ComputeNode(graph_.nodes()[n]);
      if (!s.ok()) return s;
    }
    std::vector<ir::Tensor> outs;
    std::set<const ir::TensorNode*> is_output;
    for (int v : outputs) {
      auto it = tensors_.find(v);
      if (it == tensors_.end() || it->second->is_placeholder) {
        return absl::UnimplementedError(absl::StrCat(
            "graph compiler: output ", graph_.values()[v].name,
            " is not computed by the lowered nodes (an input passed through is not supported)"));
      }
      outs.push_back(it->second);
      is_output.insert(it->second.node().get());
    }
    ir::Schedule sch = ir::Schedule::Create(outs);
    absl::Status s = ScheduleAll(sch, is_output);
    if (!s.ok()) return s;
    args.insert(args.end(), outs.begin(), outs.end());
    return ir::Lower(name, args, sch, target_);
  }

 private:
  std::vector<ir::Expr> ShapeExprs(const Shape& shape) {
    std::vector<ir::Expr> out;
    for (const Dim& d : shape) {
      if (!d.is_symbolic()) {
        out.push_back(ir::Expr(static_cast<int>(d.value)));
        continue;
      }
      auto it = symbols_.find(d.symbol);
      if (it == symbols_.end())
        it = symbols_.emplace(d.symbol, ir::Var(Identifier(d.symbol))).first;
      out.push_back(it->second);
    }
    return out;
  }

  absl::Status ComputeNode(const Node& node) {
    auto def = OpRegistry::Global().Find(node.op);
    if (!def.ok()) return def.status();
    if (!(*def)->compute) {
      return absl::UnimplementedError(
          absl::StrCat("graph compiler: op ", node.op, " has no compute in lang yet"));
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
      if (d.shape.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "graph compiler: op ", node.op, " makes the scalar (rank-0) value ",
            graph_.values()[v].name, "; lowering supports tensors of rank >= 1 only for now"));
      }
      outs.push_back(ComputeOutput{ToIrType(d.dtype), ShapeExprs(d.shape)});
    }
    std::string name = Identifier(graph_.values()[node.outputs[0]].name);
    auto made = (*def)->compute(in, node.attrs, outs, name);
    if (!made.ok()) {
      return absl::Status(made.status().code(), absl::StrCat("graph compiler: op ", node.op, " (",
                                                             name, "): ", made.status().message()));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      tensors_[node.outputs[i]] = (*made)[i];
      Label((*made)[i].node(), TensorInfo{node.op, (*def)->pattern});
    }
    return absl::OkStatus();
  }

  /// Records `info` for `t` and the new tensors it reads (the op's intermediates).
  void Label(const std::shared_ptr<ir::TensorNode>& t, const TensorInfo& info) {
    if (t->is_placeholder || info_.count(t.get())) return;
    info_[t.get()] = info;
    for (const auto& producer : t->inputs) Label(producer, info);
  }

  absl::Status ScheduleAll(ir::Schedule& sch, const std::set<const ir::TensorNode*>& is_output) {
    std::vector<ir::Stage*> to_schedule;
    for (const auto& stage : sch.stages()) {
      const ir::TensorNode* t = stage->tensor().node().get();
      bool reduce = t->reduce != ir::ReduceKind::kNone;
      // On NVGPU elementwise intermediates are inlined into their consumers; an intermediate
      // reduction is its own kernel writing a device temporary (allocated by the host entry
      // through the runtime's allocation hook).
      if (target_.is_nvgpu() && !is_output.count(t) && !reduce) {
        absl::Status s = stage->ComputeInline();
        if (!s.ok()) return s;
        continue;
      }
      to_schedule.push_back(stage.get());
    }
    for (ir::Stage* stage : to_schedule) {
      const ir::TensorNode* t = stage->tensor().node().get();
      StageKind kind = StageKind::kElementwise;
      if (t->reduce != ir::ReduceKind::kNone) {
        kind =
            info_[t].pattern == OpPattern::kOutFusible ? StageKind::kMatmul : StageKind::kReduction;
      }
      absl::Status s = AutoSchedule(*stage, kind, target_);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("graph compiler: default schedule of ", t->name,
                                                   ": ", s.message()));
      }
    }
    return absl::OkStatus();
  }

  const Graph& graph_;
  ir::Target target_;
  std::map<int, ir::Tensor> tensors_;
  std::map<std::string, ir::Var> symbols_;
  std::map<const ir::TensorNode*, TensorInfo> info_;
};

}  // namespace

absl::StatusOr<ir::LoweredFunc> LowerNodes(const Graph& graph, const std::vector<int>& nodes,
                                           const std::vector<int>& inputs,
                                           const std::vector<int>& outputs,
                                           const ir::Target& target, const std::string& name) {
  return GroupLowering(graph, target).Run(nodes, inputs, outputs, name);
}

absl::StatusOr<ir::Module> CompileGraph(const Graph& graph, const ir::Target& target,
                                        const std::string& name) {
  std::vector<int> nodes;
  for (size_t i = 0; i < graph.nodes().size(); ++i) nodes.push_back(static_cast<int>(i));
  auto func = LowerNodes(graph, nodes, graph.inputs(), graph.outputs(), target, name);
  if (!func.ok()) return func.status();
  return ir::Module{name, target, {*func}};
}

}  // namespace cinn_like::hlir
