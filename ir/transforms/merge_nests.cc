/// \file GroupIndependentNests: describe each top-level statement, then join nests greedily.
#include "ir/transforms/merge_nests.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "ir/structural_equal.h"
#include "ir/transforms/nest_uses.h"

namespace cinn_like::ir {
namespace {

/// One statement of the regrouped body: a host call or other statement kept as it is, or a
/// group of nests one kernel runs.
struct Item {
  std::vector<Stmt> stmts;
  bool nest = false;  // a GPU-bound loop nest (or a group of them)
  std::array<Expr, 3> grid{}, block{};
  int64_t shared_bytes = 0;
  std::set<std::pair<int, std::string>> block_reduces;  // NestUses'
  std::set<const Variable*> read, written;              // the buffers' data variables
};

Item Describe(const Stmt& s) {
  Item item;
  item.stmts = {s};
  NestUses uses;
  uses.Visit(s);
  if (IsHostCall(s)) {
    // Every buffer the call names (its data variable) is read and written, as far as we know.
    item.read = uses.vars;
    item.written = uses.vars;
    return item;
  }
  for (const BufferNode* b : uses.read) item.read.insert(b->data.node());
  for (const BufferNode* b : uses.written) item.written.insert(b->data.node());
  item.nest = uses.bound;
  item.grid = uses.grid;
  item.block = uses.block;
  item.shared_bytes = uses.shared_bytes;
  item.block_reduces = uses.block_reduces;
  return item;
}

bool Meets(const std::set<const Variable*>& a, const std::set<const Variable*>& b) {
  for (const Variable* v : a) {
    if (b.count(v)) return true;
  }
  return false;
}

/// Whether `a` and `b` may run in either order, or at once.
bool Independent(const Item& a, const Item& b) {
  return !Meets(a.written, b.read) && !Meets(a.written, b.written) && !Meets(b.written, a.read);
}

/// The static shared memory of `a` and `b` in one kernel: their own buffers, and the arrays of
/// each block reduce helper instantiation (up to kBlockReduceSharedBytes each).
int64_t SharedBytes(const Item& a, const Item& b) {
  std::set<std::pair<int, std::string>> reduces = a.block_reduces;
  reduces.insert(b.block_reduces.begin(), b.block_reduces.end());
  return a.shared_bytes + b.shared_bytes +
         static_cast<int64_t>(reduces.size()) * kBlockReduceSharedBytes;
}

bool SameDims(const std::array<Expr, 3>& a, const std::array<Expr, 3>& b) {
  for (int i = 0; i < 3; ++i) {
    if (a[i].defined() != b[i].defined()) return false;
    if (a[i].defined() && !StructuralEqual(a[i], b[i])) return false;
  }
  return true;
}

/// The blocks of a grid of constant extents, or -1.
int64_t Blocks(const std::array<Expr, 3>& grid) {
  int64_t n = 1;
  for (const Expr& d : grid) {
    if (!d.defined()) continue;
    const int64_t* c = AsConstInt(d);
    if (!c) return -1;
    n *= *c;
  }
  return n;
}

/// Whether grid `a` spans grid `b` on every axis (constant extents over the same axes).
bool Spans(const std::array<Expr, 3>& a, const std::array<Expr, 3>& b) {
  for (int i = 0; i < 3; ++i) {
    if (a[i].defined() != b[i].defined()) return false;
    if (!a[i].defined()) continue;
    const int64_t *x = AsConstInt(a[i]), *y = AsConstInt(b[i]);
    if (!x || !y || *x < *y) return false;
  }
  return true;
}

/// Whether nests of grids `a` and `b` may share a kernel: the same grid, or grids of constant
/// extents over the same axes, one of at most kTinyGridBlocks blocks that the other spans on
/// every axis (the kernel's grid is then the other's: no block runs nothing).
bool GridsFit(const std::array<Expr, 3>& a, const std::array<Expr, 3>& b) {
  if (SameDims(a, b)) return true;
  const int64_t na = Blocks(a), nb = Blocks(b);
  if (na <= 0 || nb <= 0 || std::min(na, nb) > kTinyGridBlocks) return false;
  return Spans(a, b) || Spans(b, a);
}

/// The grid of a kernel running nests of grids `a` and `b` (GridsFit): the one that spans.
std::array<Expr, 3> LargerGrid(const std::array<Expr, 3>& a, const std::array<Expr, 3>& b) {
  if (SameDims(a, b)) return a;  // symbolic extents too
  return Spans(a, b) ? a : b;
}

}  // namespace

std::vector<Stmt> SinkOutputNests(const std::vector<Stmt>& top,
                                  const std::vector<Buffer>& workspaces) {
  std::map<const Variable*, int64_t> workspace_bytes;  // by data variable; -1: not constant
  for (const Buffer& w : workspaces) workspace_bytes[w->data.node()] = ConstantBytes(w);
  // The workspaces the moved nests read (each counted once): at most kSinkNestReadBytes more
  // for each, kSinkReadBytes together.
  std::set<const Variable*> kept_alive;
  int64_t kept_bytes = 0;
  auto sinkable_reads = [&](const Item& item) {
    int64_t bytes = 0;
    std::vector<const Variable*> more;
    for (const Variable* v : item.read) {
      auto it = workspace_bytes.find(v);
      if (it == workspace_bytes.end() || item.written.count(v) || kept_alive.count(v)) continue;
      if (it->second < 0) return false;
      bytes += it->second;
      more.push_back(v);
    }
    if (bytes > kSinkNestReadBytes || kept_bytes + bytes > kSinkReadBytes) return false;
    kept_bytes += bytes;
    kept_alive.insert(more.begin(), more.end());
    return true;
  };
  // From the end: a nest independent of every later statement that stays (`staying`: their
  // uses together) moves; the moved keep their order among themselves, so what one of them
  // needs from another is still computed before.
  Item staying;
  std::vector<bool> sunk(top.size(), false);
  bool any = false;
  for (int i = static_cast<int>(top.size()) - 1; i >= 0; --i) {
    Item item = Describe(top[i]);
    if (item.nest && Independent(item, staying) && sinkable_reads(item)) {
      sunk[i] = any = true;
      continue;
    }
    staying.read.insert(item.read.begin(), item.read.end());
    staying.written.insert(item.written.begin(), item.written.end());
  }
  if (!any) return top;
  std::vector<Stmt> out;
  for (size_t i = 0; i < top.size(); ++i) {
    if (!sunk[i]) out.push_back(top[i]);
  }
  for (size_t i = 0; i < top.size(); ++i) {
    if (sunk[i]) out.push_back(top[i]);
  }
  return out;
}

std::vector<Stmt> HoistLastReaders(const std::vector<Stmt>& top,
                                   const std::vector<Buffer>& allocated,
                                   const std::vector<Buffer>& workspaces) {
  std::map<const Variable*, int64_t> bytes;  // by data variable; -1: not constant
  for (const Buffer& b : allocated) bytes[b->data.node()] = ConstantBytes(b);
  std::vector<Stmt> order = top;
  std::vector<Item> items;
  for (const Stmt& s : order) items.push_back(Describe(s));
  auto names = [&](int i, const Variable* v) {
    return items[i].read.count(v) > 0 || items[i].written.count(v) > 0;
  };
  auto first_use = [&](const Variable* v) {
    for (int i = 0; i < static_cast<int>(items.size()); ++i) {
      if (names(i, v)) return i;
    }
    return -1;
  };
  for (const Buffer& w : workspaces) {
    const Variable* v = w->data.node();
    const int64_t size = ConstantBytes(w);
    if (size < kHoistWorkspaceBytes) continue;
    int last = -1;
    for (int i = static_cast<int>(items.size()) - 1; i >= 0 && last < 0; --i) {
      if (names(i, v)) last = i;
    }
    if (last <= 0) continue;
    // The earliest place it may run: just after the nearest earlier statement it depends on,
    // and after the workspace's other uses (before them it would free nothing sooner, and hold
    // what it writes longer).
    int to = last;
    while (to > 0 && Independent(items[to - 1], items[last]) && !names(to - 1, v)) --to;
    if (to >= last) continue;
    // What the statement names first would be held from `to` on, where the workspace is freed.
    int64_t sooner = 0;
    bool unknown = false;
    for (const Variable* u : items[last].written) {
      if (first_use(u) != last) continue;
      auto it = bytes.find(u);
      if (it == bytes.end()) continue;  // an input, or not a buffer (a variable)
      if (it->second < 0) unknown = true;
      sooner += it->second;
    }
    if (unknown || sooner >= size) continue;
    Stmt moved = order[last];
    Item item = items[last];
    order.erase(order.begin() + last);
    items.erase(items.begin() + last);
    order.insert(order.begin() + to, moved);
    items.insert(items.begin() + to, std::move(item));
  }
  return order;
}

std::vector<std::vector<Stmt>> GroupIndependentNests(const std::vector<Stmt>& top) {
  std::vector<Item> items;
  for (const Stmt& stmt : top) {
    Item item = Describe(stmt);
    int target = -1;
    if (item.nest) {
      const int oldest = std::max(0, static_cast<int>(items.size()) - kLookBack);
      for (int j = static_cast<int>(items.size()) - 1; j >= oldest; --j) {
        const Item& other = items[j];
        if (!Independent(other, item)) break;
        if (other.nest && GridsFit(other.grid, item.grid) && SameDims(other.block, item.block) &&
            SharedBytes(other, item) <= kMaxMergedSharedBytes) {
          target = j;
          break;
        }
      }
    }
    if (target < 0) {
      items.push_back(std::move(item));
      continue;
    }
    Item& group = items[target];
    group.stmts.push_back(stmt);
    group.grid = LargerGrid(group.grid, item.grid);
    group.read.insert(item.read.begin(), item.read.end());
    group.written.insert(item.written.begin(), item.written.end());
    group.shared_bytes += item.shared_bytes;
    group.block_reduces.insert(item.block_reduces.begin(), item.block_reduces.end());
  }
  std::vector<std::vector<Stmt>> groups;
  for (Item& item : items) groups.push_back(std::move(item.stmts));
  return groups;
}

}  // namespace cinn_like::ir
