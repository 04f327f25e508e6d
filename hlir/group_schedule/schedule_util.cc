/// \file The tactics' shared helpers.
#include "hlir/group_schedule/schedule_util.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "ir/buffer_reads.h"
#include "ir/compile_options.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "ir/visitor.h"

namespace cinn_like::hlir {

Leaves SplitLeaves(const ir::Stage& s) {
  Leaves l;
  for (int idx : s.leaves()) {
    const ir::Stage::Axis& a = s.axes()[idx];
    (a.is_reduce ? l.reduce : l.spatial).push_back(a.var);
  }
  return l;
}

int64_t StaticExtent(const ir::Stage& s, const std::vector<ir::Var>& vars) {
  int64_t n = 1;
  for (const ir::Var& v : vars) {
    for (const ir::Stage::Axis& a : s.axes()) {
      if (a.var.get() != v.get()) continue;
      const int64_t* c = ir::AsConstInt(a.extent);
      if (!c) return -1;
      n *= *c;
    }
  }
  return n;
}

int64_t ReduceExtent(const ir::Stage& s) {
  int64_t n = 1;
  for (int d = s.rank(); d < s.num_root_axes(); ++d) {
    const int64_t* c = ir::AsConstInt(s.axes()[d].extent);
    if (!c) return -1;
    n *= *c;
  }
  return n;
}

ir::Expr SymbolicReduceLength(const ir::Stage& s) {
  if (s.num_root_axes() != s.rank() + 1 || ReduceExtent(s) >= 0) return ir::Expr();
  return s.axes()[s.rank()].extent;
}

bool IsColumnReduction(const ir::Stage& s) {
  struct Finder : ir::IRVisitor {
    std::vector<const ir::Variable*> reduce;
    bool row = false, along = false;
    using ir::IRVisitor::Visit;
    void VisitLoad(const ir::Load* op) override {
      for (const ir::Variable* v : reduce) {
        if (!op->indices.empty() && ir::UsesVar(op->indices.back(), v)) row = true;
        for (const ir::Expr& index : op->indices) along = along || ir::UsesVar(index, v);
      }
      ir::IRVisitor::VisitLoad(op);
    }
  } f;
  for (int d = s.rank(); d < s.num_root_axes(); ++d)
    f.reduce.push_back(s.axes()[d].var.As<ir::Variable>());
  f.Visit(s.InlinedBody());
  if (!f.along) {
    // Nothing loaded along the reduce axes: a row reduction up to kLoadFreeRowMax elements;
    // longer ones stay column reductions, whose chunks keep a sum of 2^25 ones exact.
    const int64_t extent = ReduceExtent(s);
    return extent < 0 || extent > kLoadFreeRowMax;
  }
  return !f.row;
}

int TransposedAxis(const ir::Stage& s, const std::vector<ir::Var>& spatial,
                   std::set<const ir::BufferNode*>* buffers) {
  struct Finder : ir::IRVisitor {
    std::vector<const ir::Variable*> axes;
    int found = -1;
    std::set<const ir::BufferNode*>* buffers = nullptr;
    using ir::IRVisitor::Visit;
    void VisitLoad(const ir::Load* op) override {
      if (!op->indices.empty() && axes.size() >= 2) {
        const ir::Expr& last = op->indices.back();
        bool along_innermost = false;  // a broadcast operand does not read along it
        for (const ir::Expr& index : op->indices)
          along_innermost |= ir::UsesVar(index, axes.back());
        if (along_innermost && !ir::UsesVar(last, axes.back())) {
          for (int a = static_cast<int>(axes.size()) - 2; a >= 0 && found < 0; --a) {
            if (ir::UsesVar(last, axes[a])) found = a;
          }
          if (buffers && found >= 0 && ir::UsesVar(last, axes[found])) {
            buffers->insert(op->buffer.get());
          }
        }
      }
      ir::IRVisitor::VisitLoad(op);
    }
  } f;
  for (const ir::Var& v : spatial) f.axes.push_back(v.As<ir::Variable>());
  f.buffers = buffers;
  const ir::Expr body = s.InlinedBody();
  f.Visit(body);
  if (buffers && f.found >= 0) {
    buffers->clear();  // loads visited before the axis was found: a second pass sees them
    f.Visit(body);
  }
  return f.found;
}

namespace {

/// The loads of `buffer` in `body`, and whether they are one and the same access whose indices
/// are each one of `axes` or a constant (the loads point into `body`: the caller keeps it).
struct AxisLoads : ir::IRVisitor {
  AxisLoads(const ir::Expr& body, const std::vector<ir::Var>& axes, const ir::BufferNode* buffer)
      : buffer(buffer) {
    for (const ir::Var& v : axes) this->axes.insert(v.As<ir::Variable>());
    Visit(body);
  }
  const ir::BufferNode* buffer;
  std::set<const ir::Variable*> axes;
  std::vector<const ir::Load*> loads;
  bool simple = true;
  using ir::IRVisitor::Visit;
  void VisitLoad(const ir::Load* op) override {
    if (op->buffer.get() == buffer) {
      for (const ir::Expr& index : op->indices) {
        const ir::Variable* v = index.As<ir::Variable>();
        simple &= (v && axes.count(v)) || index.As<ir::IntImm>() != nullptr;
      }
      if (!loads.empty()) simple &= op->indices.size() == loads[0]->indices.size();
      for (size_t i = 0; simple && !loads.empty() && i < op->indices.size(); ++i) {
        simple &= ir::StructuralEqual(op->indices[i], loads[0]->indices[i]);
      }
      loads.push_back(op);
    }
    ir::IRVisitor::VisitLoad(op);
  }
};

}  // namespace

bool PermutedLoads(const ir::Stage& s, const std::vector<ir::Var>& axes,
                   const ir::BufferNode* buffer) {
  const ir::Expr body = s.InlinedBody();
  AxisLoads f(body, axes, buffer);
  return f.simple && !f.loads.empty();
}

bool ReadsEachElementOnce(const ir::Stage& s, const ir::Expr& body, const ir::BufferNode* buffer) {
  std::vector<ir::Var> roots;
  for (int a = 0; a < s.num_root_axes(); ++a) roots.push_back(s.axes()[a].var);
  AxisLoads f(body, roots, buffer);
  // One load: two equal ones would both be printed (an evict-first load is not merged).
  if (!f.simple || f.loads.size() != 1) return false;
  std::set<const ir::Variable*> used;
  for (const ir::Expr& index : f.loads[0]->indices) {
    const ir::Variable* v = index.As<ir::Variable>();
    if (v && !used.insert(v).second) return false;  // a diagonal
  }
  for (int a = 0; a < s.num_root_axes(); ++a) {
    const ir::Stage::Axis& axis = s.axes()[a];
    const int64_t* extent = ir::AsConstInt(axis.extent);
    if (!used.count(axis.var.As<ir::Variable>()) && !(extent && *extent == 1)) return false;
  }
  return true;
}

bool ReadsAlongReduceAxis(const ir::Stage& s) {
  if (s.num_root_axes() - s.rank() != 1) return false;
  const ir::Variable* k = s.axes()[s.rank()].var.As<ir::Variable>();
  struct Finder : ir::IRVisitor {
    const ir::Variable* k = nullptr;
    bool along = true;
    using ir::IRVisitor::Visit;
    void VisitLoad(const ir::Load* op) override {
      if (!op->indices.empty()) {
        const ir::Expr& last = op->indices.back();
        along &= last.As<ir::Variable>() == k || !ir::UsesVar(last, k);
        for (size_t i = 0; i + 1 < op->indices.size(); ++i) {
          along &= !ir::UsesVar(op->indices[i], k);
        }
      }
      ir::IRVisitor::VisitLoad(op);
    }
  } f;
  f.k = k;
  f.Visit(s.InlinedBody());
  return f.along;
}

int StaticRowVectorLanes(const std::vector<const ir::Stage*>& reductions, int lanes, int64_t extent,
                         int threads) {
  if (lanes < 2 || extent <= 0 || extent % (int64_t{lanes} * threads) != 0) return 0;
  for (const ir::Stage* r : reductions) {
    if (!ReadsAlongReduceAxis(*r)) return 0;
  }
  return lanes;
}

int VectorLanesOfReads(const std::vector<const ir::Stage*>& stages,
                       const std::set<const ir::BufferNode*>& skip, int bytes,
                       const ir::Target& target) {
  for (const ir::Stage* s : stages) {
    for (const ir::BufferNode* b : BuffersRead(s->InlinedBody())) {
      if (!skip.count(b)) bytes = std::max(bytes, b->dtype.bytes());
    }
  }
  return bytes > 0 ? target.vector_bytes() / bytes : 0;
}

int RowThreads(int64_t extent, const ir::Target& target) {
  const int64_t warp = target.warp_size();
  if (extent > 0 && extent < kBlockThreads) {
    return static_cast<int>((extent + warp - 1) / warp * warp);
  }
  const int symbolic = ir::CurrentCompileOptions().symbolic_row_threads;
  if (extent < 0 && symbolic >= warp && symbolic <= kBlockThreads && symbolic % warp == 0) {
    return symbolic;
  }
  return kBlockThreads;
}

absl::StatusOr<ir::Var> FuseAll(ir::Stage& s, const std::vector<ir::Var>& vars) {
  if (vars.empty()) {
    return absl::InternalError(absl::StrCat("stage ", s.tensor()->name, ": no axes to fuse"));
  }
  ir::Var fused = vars[0];
  for (size_t i = 1; i < vars.size(); ++i) {
    auto f = s.Fuse(fused, vars[i]);
    if (!f.ok()) return f.status();
    fused = *f;
  }
  return fused;
}

int FloatLanes(const ir::Target& target) {
  return std::max(1, ir::DevicePropertiesOf(target).vector_bytes / 4);
}

int LanesDividing(int64_t n, int widest) {
  for (int lanes = widest; lanes >= 2; lanes /= 2) {
    if (n > 0 && n % lanes == 0) return lanes;
  }
  return 0;
}

ReaderIndex DirectReaders(const ir::Schedule& sch) {
  ReaderIndex index;
  for (const auto& s : sch.stages()) {
    if (!s->body().defined()) continue;  // an extern stage
    for (const ir::BufferNode* b : ir::BuffersRead(s->body())) index[b].push_back(s.get());
  }
  return index;
}

absl::StatusOr<RowLeaves> FuseRows(ir::Stage& consumer, int row_dims) {
  std::vector<ir::Var> axes = LeafVars(consumer);
  std::vector<ir::Var> rows(axes.begin(), axes.begin() + row_dims);
  std::vector<ir::Var> cols(axes.begin() + row_dims, axes.end());
  if (rows.empty()) {
    auto all = FuseAll(consumer, cols);
    if (!all.ok()) return all.status();
    auto one = consumer.SplitNParts(*all, 1);
    if (!one.ok()) return one.status();
    rows = {one->first};
    cols = {one->second};
  }
  const int64_t num_rows = StaticExtent(consumer, rows);
  auto row = FuseAll(consumer, rows);
  if (!row.ok()) return row.status();
  return RowLeaves{*row, num_rows, cols};
}

absl::Status BindBlocksAndThreads(ir::Stage& s, const ir::Var& fused, int threads) {
  auto parts = s.Split(fused, threads);
  if (!parts.ok()) return parts.status();
  absl::Status st = s.Bind(parts->first, "blockIdx.x");
  if (st.ok()) st = s.Bind(parts->second, "threadIdx.x");
  return st;
}

absl::Status BindColumnsToThreads(ir::Stage& s, const std::vector<ir::Var>& cols, int threads) {
  return BindVectorsToThreads(s, cols, threads, /*lanes=*/0);
}

absl::Status BindVectorsToThreads(ir::Stage& s, const std::vector<ir::Var>& cols, int threads,
                                  int lanes, ir::Var* serial) {
  if (cols.empty()) return absl::OkStatus();
  auto col = FuseAll(s, cols);
  if (!col.ok()) return col.status();
  std::optional<ir::Var> vector;
  if (lanes >= 2) {
    auto v = s.Split(*col, lanes);
    if (!v.ok()) return v.status();
    col = v->first;
    vector = v->second;
  }
  auto parts = s.Split(*col, threads);
  if (!parts.ok()) return parts.status();
  if (serial) *serial = parts->first;
  absl::Status st = s.Bind(parts->second, "threadIdx.x");
  if (st.ok() && vector) st = s.Vectorize(*vector);
  return st;
}

absl::StatusOr<int> VectorizeRowReduce(ir::Stage& s, const ir::Target& target) {
  Leaves l = SplitLeaves(s);
  if (l.reduce.empty()) return 0;
  const int lanes = FloatLanes(target);
  const int64_t inner = StaticExtent(s, {l.reduce.back()});
  const int width = inner >= 8 * lanes ? 4 * lanes : lanes;
  if (inner < 2 * width) return 0;
  auto v = s.Vectorize(l.reduce.back(), width);
  if (!v.ok()) return v.status();
  return width;
}

std::string CountText(int64_t n) { return n < 0 ? std::string("symbolic") : absl::StrCat(n); }

std::vector<ir::Var> LeafVars(const ir::Stage& s) {
  std::vector<ir::Var> out;
  for (int l : s.leaves()) out.push_back(s.axes()[l].var);
  return out;
}

}  // namespace cinn_like::hlir
