/// \file The graph compiler's flow: placeholders, computes, default schedules, Lower.
#include "hlir/graph_compiler.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hlir/auto_schedule.h"
#include "hlir/inline_size.h"
#include "hlir/op.h"
#include "ir/flags.h"
#include "ir/identifier.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

namespace cinn_like::hlir {
namespace {

/// What the compiler knows of each tensor a node's compute made.
struct TensorInfo {
  OpPattern pattern = OpPattern::kElementwise;
  int group = -1;                   // the fusion group of the node that made it (-1: no groups)
  bool compile_time_value = false;  // OpDef::compile_time_value: always inlined
};

/// Reductions of at most this many elements per output are computed per thread on GPUs.
constexpr int64_t kPerThreadMaxReduce = 32;

class GroupLowering {
 public:
  /// `groups` (may be empty: then every stage is scheduled on its own, as without fusion).
  GroupLowering(const Graph& graph, const ir::Target& target,
                const std::vector<FusionGroup>& groups = {})
      : graph_(graph), target_(target), fail_ops_(StringFlag("cinn_like_debug_fail_op")) {
    group_of_node_.assign(graph.nodes().size(), -1);
    for (size_t g = 0; g < groups.size(); ++g) {
      for (int n : groups[g].nodes) group_of_node_[n] = static_cast<int>(g);
    }
    num_groups_ = static_cast<int>(groups.size());
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
    std::set<const ir::TensorNode*> is_output, keep;
    // Values read by a node of another group are materialized.
    for (int n : nodes) {
      for (int v : graph_.nodes()[n].inputs) {
        int p = graph_.values()[v].producer;
        auto it = tensors_.find(v);
        if (p >= 0 && it != tensors_.end() && group_of_node_[p] != group_of_node_[n])
          keep.insert(it->second.node().get());
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
    absl::Status s = ScheduleAll(sch, keep, is_output);
    if (!s.ok()) return s;
    args.insert(args.end(), outs.begin(), outs.end());
    return ir::Lower(name, args, sch, target_);
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
      auto it = symbols_.find(d.symbol);
      if (it == symbols_.end())
        it = symbols_.emplace(d.symbol, ir::Var(names_.Unique(d.symbol))).first;
      out.push_back(it->second);
    }
    return out;
  }

  absl::Status ComputeNode(int id) {
    const Node& node = graph_.nodes()[id];
    auto def = OpRegistry::Global().Find(node.op);
    if (!def.ok()) return def.status();
    const TensorInfo info{(*def)->pattern, group_of_node_[id], (*def)->compile_time_value};
    // The extern computes call NVIDIA's libraries (cuBLAS, cuDNN): a question of the vendor,
    // which no trait answers.
    const bool use_extern =
        target_.is_nvgpu() && FLAGS_cinn_like_extern_libs && (*def)->extern_compute;
    const bool use_gpu = target_.is_gpu() && (*def)->gpu_compute;
    const ComputeFn& compute = use_extern ? (*def)->extern_compute
                               : use_gpu  ? (*def)->gpu_compute
                                          : (*def)->compute;
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
    auto made = compute(in, node.attrs, outs, name);
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

  /// Records `info` for `t` and the new tensors it reads (the op's intermediates).
  void Label(const std::shared_ptr<ir::TensorNode>& t, const TensorInfo& info) {
    if (t->is_placeholder || info_.count(t.get())) return;
    info_[t.get()] = info;
    for (const auto& producer : t->inputs) Label(producer, info);
  }

  /// Stages of values that cross groups or leave the function are materialized; within a
  /// group (GPUs) elementwise/broadcast/injective stages are inlined and reductions are
  /// computed inside the group's kernel, one block per row (RowGroup) or one element per thread
  /// (ThreadGroup), where the group allows.
  absl::Status ScheduleAll(ir::Schedule& sch, const std::set<const ir::TensorNode*>& keep,
                           const std::set<const ir::TensorNode*>& is_output) {
    // A library call (extern) reads whole stored buffers: its inputs are never inlined.
    std::set<const ir::TensorNode*> extern_inputs;
    for (const auto& stage : sch.stages()) {
      if (!stage->tensor()->extern_body) continue;
      for (const auto& in : stage->tensor()->inputs) extern_inputs.insert(in.get());
    }
    std::vector<ir::Stage*> roots;
    std::map<int, std::vector<ir::Stage*>> internal_reductions;  // by group, schedule order
    InlineSizes sizes;                                           // stages are producers first
    for (const auto& stage : sch.stages()) {
      const ir::TensorNode* t = stage->tensor().node().get();
      if (t->extern_body) continue;  // a library call: nothing to schedule or inline
      bool reduce = t->reduce != ir::ReduceKind::kNone;
      bool constant = info_[t].compile_time_value || (IsOneElement(*t) && !reduce);
      // A stage whose inlined element would pass the budget is a kernel of its own (below).
      bool fits = constant || sizes.Estimate(*stage) <= InlineSizes::kBudget;
      if ((keep.count(t) && !(constant && !is_output.count(t))) || extern_inputs.count(t)) {
        roots.push_back(stage.get());
      } else if (constant || (target_.is_gpu() && !reduce && fits)) {
        absl::Status s = stage->ComputeInline();
        if (!s.ok()) return s;
        sizes.Inline(*stage);
      } else if (target_.is_gpu() && !reduce) {
        roots.push_back(stage.get());  // past the budget: a kernel writing a device temporary
      } else if (target_.is_gpu() && info_[t].group >= 0) {
        internal_reductions[info_[t].group].push_back(stage.get());
      } else {
        // CPUs: a temporary; GPUs without groups: a kernel writing a device temporary.
        roots.push_back(stage.get());
      }
    }
    std::set<ir::Stage*> done;
    for (auto& [group, reductions] : internal_reductions) {
      ir::Stage* consumer = RowConsumer(roots, group, reductions);
      if (!consumer) {
        // Materialized: a kernel of its own writing a device temporary.
        roots.insert(roots.end(), reductions.begin(), reductions.end());
        continue;
      }
      absl::Status s = PerThread(reductions) ? ThreadGroup(sch, *consumer, reductions)
                                             : RowGroup(sch, *consumer, reductions);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("graph compiler: block-per-row schedule of ",
                                                   consumer->tensor().name(), ": ", s.message()));
      }
      done.insert(consumer);
    }
    for (ir::Stage* stage : roots) {
      if (done.count(stage)) continue;
      const ir::TensorNode* t = stage->tensor().node().get();
      StageKind kind = StageKind::kElementwise;
      if (t->reduce != ir::ReduceKind::kNone) {
        kind =
            info_[t].pattern == OpPattern::kOutFusible ? StageKind::kMatmul : StageKind::kReduction;
      }
      absl::Status s;
      if (kind == StageKind::kMatmul && target_.has_shared_memory() && CanTileMatmul(sch, *stage)) {
        s = TileMatmul(sch, stage->tensor());
      } else {
        s = AutoSchedule(*stage, kind, target_);
      }
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("graph compiler: default schedule of ", t->name,
                                                   ": ", s.message()));
      }
    }
    return absl::OkStatus();
  }

  static bool IsOneElement(const ir::TensorNode& t) {
    for (const ir::Expr& d : t.shape) {
      const int64_t* c = ir::AsConstInt(d);
      if (!c || *c != 1) return false;
    }
    return true;
  }

  /// The number of leading dimensions of `consumer` that `reduction` keeps (its other
  /// dimensions are size-1 kept dims), or -1 when its shape is not such a prefix.
  static int KeptRows(const ir::TensorNode& reduction, const ir::TensorNode& consumer) {
    const auto& rs = reduction.shape;
    const auto& cs = consumer.shape;
    if (rs.empty()) return cs.empty() ? -1 : 0;  // a scalar: the whole consumer is one row
    int rows = static_cast<int>(rs.size());
    if (rs.size() == cs.size()) {
      while (rows > 0) {
        const int64_t* c = ir::AsConstInt(rs[rows - 1]);
        if (!c || *c != 1) break;
        --rows;
      }
      if (rows == 0) rows = static_cast<int>(rs.size());  // all size 1: every dim a row
    }
    if (rows == 0 || rows > static_cast<int>(cs.size())) return -1;
    for (int d = 0; d < rows; ++d) {
      if (!ir::StructuralEqual(rs[d], cs[d])) return -1;
    }
    return rows;
  }

  /// The one materialized non-reduction stage of `group` whose computation reads the group's
  /// internal `reductions` and whose leading dims they all keep (the same number of rows);
  /// null when there is none or more than one reader, or the shapes do not fit the
  /// block-per-row pattern.
  ir::Stage* RowConsumer(const std::vector<ir::Stage*>& roots, int group,
                         const std::vector<ir::Stage*>& reductions) {
    std::set<const ir::BufferNode*> bufs;
    for (ir::Stage* r : reductions) bufs.insert(r->tensor()->buffer.get());
    ir::Stage* consumer = nullptr;
    for (ir::Stage* s : roots) {
      if (!Reads(s->InlinedBody(), bufs)) continue;
      const ir::TensorNode* t = s->tensor().node().get();
      if (consumer || info_[t].group != group || t->reduce != ir::ReduceKind::kNone) return nullptr;
      consumer = s;
    }
    if (!consumer) return nullptr;
    row_dims_ = -1;
    const ir::Expr body = consumer->InlinedBody();
    for (ir::Stage* r : reductions) {
      if (!Reads(body, {r->tensor()->buffer.get()})) return nullptr;  // read only by another
      int rows = KeptRows(*r->tensor().node(), *consumer->tensor().node());
      if (rows < 0 || (row_dims_ >= 0 && rows != row_dims_)) return nullptr;
      row_dims_ = rows;
    }
    return consumer;
  }

  /// Reductions computed by each thread for its own element (matmul/conv accumulators, column
  /// reductions, short windows such as pools) rather than by a block per row.
  bool PerThread(const std::vector<ir::Stage*>& reductions) {
    const ir::Stage& r = *reductions[0];
    if (info_[r.tensor().node().get()].pattern == OpPattern::kOutFusible) return true;
    if (r.rank() > 0 && IsColumnReduction(r)) return true;  // coalesced over the columns
    int64_t extent = 1;
    for (int d = r.rank(); d < r.num_root_axes(); ++d) {
      const int64_t* c = ir::AsConstInt(r.axes()[d].extent);
      if (!c) return false;
      extent *= *c;
    }
    return extent <= kPerThreadMaxReduce;
  }

  /// The consumer's elements over blocks of 256 threads; each reduction computed by each
  /// thread for its element, in registers, inside the thread's loop.
  absl::Status ThreadGroup(ir::Schedule& sch, ir::Stage& consumer,
                           const std::vector<ir::Stage*>& reductions) {
    std::vector<ir::Var> axes;
    for (int l : consumer.leaves()) axes.push_back(consumer.axes()[l].var);
    auto fused = FuseAll(consumer, axes);
    if (!fused.ok()) return fused.status();
    auto parts = consumer.Split(*fused, RowThreads(-1, target_));
    if (!parts.ok()) return parts.status();
    absl::Status st = consumer.Bind(parts->first, "blockIdx.x");
    if (st.ok()) st = consumer.Bind(parts->second, "threadIdx.x");
    for (auto it = reductions.rbegin(); st.ok() && it != reductions.rend(); ++it) {
      st = (*it)->ComputeAt(consumer, parts->second);
    }
    return st;
  }

  static bool Reads(const ir::Expr& e, const std::set<const ir::BufferNode*>& bufs) {
    struct Finder : ir::IRVisitor {
      const std::set<const ir::BufferNode*>* bufs;
      bool found = false;
      using ir::IRVisitor::Visit;
      void VisitLoad(const ir::Load* op) override {
        found = found || bufs->count(op->buffer.get());
        ir::IRVisitor::VisitLoad(op);
      }
    } f;
    f.bufs = &bufs;
    f.Visit(e);
    return f.found;
  }

  /// One block per row of `consumer` (its first row_dims_ dims fused on blockIdx.x, the rest
  /// fused and split over threadIdx.x); each reduction is computed inside the row's block
  /// loop into shared memory, its reduce axes over the same threads (a block reduce).
  absl::Status RowGroup(ir::Schedule& sch, ir::Stage& consumer,
                        const std::vector<ir::Stage*>& reductions) {
    int64_t reduce_extent = 1;
    for (int d = reductions[0]->rank(); d < reductions[0]->num_root_axes(); ++d) {
      const int64_t* c = ir::AsConstInt(reductions[0]->axes()[d].extent);
      reduce_extent = c && reduce_extent > 0 ? reduce_extent * *c : -1;
    }
    int threads = RowThreads(reduce_extent, target_);
    std::vector<ir::Var> axes;
    for (int l : consumer.leaves()) axes.push_back(consumer.axes()[l].var);
    std::vector<ir::Var> rows(axes.begin(), axes.begin() + row_dims_);
    std::vector<ir::Var> cols(axes.begin() + row_dims_, axes.end());
    if (rows.empty()) {
      // Scalar reductions: the whole consumer is the one row, a loop of extent 1 split off.
      auto all = FuseAll(consumer, cols);
      if (!all.ok()) return all.status();
      auto one = consumer.SplitNParts(*all, 1);
      if (!one.ok()) return one.status();
      rows = {one->first};
      cols = {one->second};
    }
    auto row = FuseAll(consumer, rows);
    if (!row.ok()) return row.status();
    absl::Status st = consumer.Bind(*row, "blockIdx.x");
    if (!st.ok()) return st;
    if (!cols.empty()) {
      auto col = FuseAll(consumer, cols);
      if (!col.ok()) return col.status();
      auto parts = consumer.Split(*col, threads);
      if (!parts.ok()) return parts.status();
      st = consumer.Bind(parts->second, "threadIdx.x");
      if (!st.ok()) return st;
    }
    // Consumers first: a reduction read by another (softmax's max by its sum) is attached
    // after its reader, so that the reader's loads count in its region.
    for (auto it = reductions.rbegin(); it != reductions.rend(); ++it) {
      ir::Tensor t = (*it)->tensor();
      auto cache = sch.CacheWrite(t, "shared");
      if (!cache.ok()) return cache.status();
      st = sch[t].ComputeInline();
      if (!st.ok()) return st;
      ir::Stage& c = sch[*cache];
      st = c.ComputeAt(consumer, *row);
      if (!st.ok()) return st;
      std::vector<ir::Var> reduce;
      for (int l : c.leaves()) {
        if (c.axes()[l].is_reduce) reduce.push_back(c.axes()[l].var);
      }
      if (reduce.empty()) continue;
      auto r = FuseAll(c, reduce);
      if (!r.ok()) return r.status();
      auto parts = c.Split(*r, threads);
      if (!parts.ok()) return parts.status();
      st = c.Bind(parts->second, "threadIdx.x");
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  const Graph& graph_;
  ir::Target target_;
  const std::string fail_ops_;  // FLAGS_cinn_like_debug_fail_op, read once per lowering
  std::map<int, ir::Tensor> tensors_;
  std::map<std::string, ir::Var> symbols_;
  ir::NameSupply names_;  // of tensors and symbols alike: no two share a name in the source
  std::map<const ir::TensorNode*, TensorInfo> info_;
  std::vector<int> group_of_node_;
  int num_groups_ = 0;
  int row_dims_ = -1;  // RowConsumer's result: the consumer's leading dims on blockIdx.x
};

}  // namespace

absl::StatusOr<ir::LoweredFunc> LowerNodes(const Graph& graph, const std::vector<int>& nodes,
                                           const std::vector<int>& inputs,
                                           const std::vector<int>& outputs,
                                           const ir::Target& target, const std::string& name) {
  return GroupLowering(graph, target).Run(nodes, inputs, outputs, name);
}

absl::StatusOr<ir::Module> CompileFusedGraph(const FusedGraph& fused, const ir::Target& target,
                                             const std::string& name) {
  const Graph& graph = fused.graph;
  std::vector<int> nodes;
  for (size_t i = 0; i < graph.nodes().size(); ++i) nodes.push_back(static_cast<int>(i));
  auto func =
      GroupLowering(graph, target, fused.groups).Run(nodes, graph.inputs(), graph.outputs(), name);
  if (!func.ok()) return func.status();
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
