/// \file Merging the buckets' host entries into the generic one, launch by launch.
#include "hlir/row_buckets.h"

#include <map>
#include <set>
#include <string>

#include <glog/logging.h>

#include "ir/module.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"
#include "ir/transforms/split_host_device.h"

namespace cinn_like::hlir {
namespace {

/// A split host entry's body: its workspaces (outermost first) and its top-level statements
/// (launches, extern calls), as SplitHostDevice makes it.
struct HostBody {
  std::vector<ir::Buffer> workspaces;
  std::vector<ir::Stmt> stmts;
};

HostBody Peel(const ir::Stmt& body) {
  HostBody out;
  ir::Stmt s = body;
  while (const auto* a = s.As<ir::Allocate>()) {
    out.workspaces.push_back(a->buffer);
    s = a->body;
  }
  if (const auto* b = s.As<ir::Block>()) {
    out.stmts = b->stmts;
  } else if (s.defined()) {
    out.stmts = {s};
  }
  return out;
}

using Kernels = std::map<std::string, ir::LoweredFunc>;

Kernels ByName(const ir::LoweredFuncNode& entry) {
  Kernels out;
  for (const ir::LoweredFunc& k : entry.kernels) out[k->name] = k;
  return out;
}

/// Whether statement `b` of a bucket launches kernels that do the same as those of the generic
/// statement `g` (library kernels and extern calls, which are not the entries' own kernels,
/// count as the same).
bool SameWork(const ir::Stmt& g, const Kernels& g_kernels, const ir::Stmt& b,
              const Kernels& b_kernels) {
  std::vector<std::string> gl = ir::LaunchedKernels(g), bl = ir::LaunchedKernels(b);
  if (gl.size() != bl.size()) return false;
  for (size_t i = 0; i < gl.size(); ++i) {
    auto gk = g_kernels.find(gl[i]);
    auto bk = b_kernels.find(bl[i]);
    if (gk == g_kernels.end() || bk == b_kernels.end()) continue;
    if (!ir::StructuralEqualUpToBuffers(ir::KernelComparableForm(*gk->second),
                                        ir::KernelComparableForm(*bk->second))) {
      return false;
    }
  }
  return true;
}

}  // namespace

ir::LoweredFunc MergeRowBuckets(const ir::LoweredFunc& generic,
                                const std::vector<RowBucket>& buckets) {
  const HostBody g = Peel(generic->body);
  const Kernels g_kernels = ByName(*generic);
  const std::vector<ir::Var> g_sizes = ir::ShapeVars(*generic);
  struct Prepared {
    HostBody body;
    Kernels kernels;
    ir::VarMap rename;  // the bucket's variables -> the generic entry's
    ir::Expr cond;
  };
  std::vector<Prepared> prepared;
  for (const RowBucket& bucket : buckets) {
    const ir::LoweredFuncNode& e = *bucket.entry;
    Prepared p{Peel(e.body), ByName(e), {}, ir::Expr()};
    const std::vector<ir::Var> sizes = ir::ShapeVars(e);
    bool pairs = e.args.size() == generic->args.size() && sizes.size() == g_sizes.size() &&
                 p.body.workspaces.size() == g.workspaces.size() &&
                 p.body.stmts.size() == g.stmts.size();
    for (size_t i = 0; pairs && i < g.workspaces.size(); ++i) {
      const ir::Buffer &a = p.body.workspaces[i], &b = g.workspaces[i];
      pairs = a->dtype == b->dtype && a->shape.size() == b->shape.size();
    }
    if (!pairs) {
      LOG(WARNING) << "row buckets: the lowering of " << e.name << " for rows of at most "
                   << bucket.bound << " has other arguments, workspaces or launches than "
                   << generic->name << "; left out (the generic kernels serve those sizes)";
      continue;
    }
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (e.args[i].is_buffer()) {
        p.rename[e.args[i].buffer->data.node()] = generic->args[i].buffer->data;
      }
    }
    for (size_t i = 0; i < sizes.size(); ++i) p.rename[sizes[i].node()] = g_sizes[i];
    for (size_t i = 0; i < g.workspaces.size(); ++i) {
      p.rename[p.body.workspaces[i]->data.node()] = g.workspaces[i]->data;
    }
    // The rows it padded, each at most the bound (a length named once).
    std::vector<ir::Expr> rows;
    for (const ir::Expr& r : bucket.padded_rows) {
      const ir::Expr renamed = ir::Substitute(r, p.rename);
      bool seen = false;
      for (const ir::Expr& o : rows) seen |= ir::StructuralEqual(o, renamed);
      if (seen) continue;
      rows.push_back(renamed);
      const ir::Expr within = renamed <= ir::IndexConst(bucket.bound);
      p.cond = p.cond.defined() ? ir::Expr(p.cond && within) : within;
    }
    if (!p.cond.defined()) continue;  // nothing padded: the generic kernels serve
    prepared.push_back(std::move(p));
  }

  auto merged = std::make_shared<ir::LoweredFuncNode>(*generic);
  std::set<std::string> added;
  std::vector<ir::Stmt> stmts;
  for (size_t i = 0; i < g.stmts.size(); ++i) {
    ir::Stmt s = g.stmts[i];
    // Loosest bucket first, so the tightest one the sizes fit is tested first. A bucket whose
    // launch does what the generic one or a looser bucket's chosen here does is left out: that
    // one serves its sizes too (a warp per row, the same for every bound).
    const Prepared* looser = nullptr;
    for (auto p = prepared.rbegin(); p != prepared.rend(); ++p) {
      const ir::Stmt& b = p->body.stmts[i];
      if (SameWork(g.stmts[i], g_kernels, b, p->kernels)) continue;
      if (looser && SameWork(looser->body.stmts[i], looser->kernels, b, p->kernels)) continue;
      looser = &*p;
      s = ir::IfThenElse::Make(p->cond, ir::Substitute(b, p->rename), s);
      for (const std::string& name : ir::LaunchedKernels(b)) {
        auto k = p->kernels.find(name);
        if (k != p->kernels.end() && added.insert(name).second) {
          merged->kernels.push_back(k->second);
        }
      }
    }
    stmts.push_back(s);
  }
  ir::Stmt body = ir::Block::Make(stmts);
  for (auto it = g.workspaces.rbegin(); it != g.workspaces.rend(); ++it) {
    body = ir::Allocate::Make(*it, body);
  }
  merged->body = body;
  return merged;
}

}  // namespace cinn_like::hlir
