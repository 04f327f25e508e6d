/// \file The arena plan of a host entry: live ranges of its workspaces, then placement.
#include "backends/llvm/arena_plan.h"

#include <algorithm>
#include <vector>

#include "backends/llvm/free_vars.h"

namespace cinn_like::backends {
namespace {

struct Workspace {
  const ir::BufferNode* buffer;
  int64_t bytes;
  int first = -1, last = -1;  // the statements naming it; -1: none
};

int64_t RoundUp(int64_t v, int64_t align) { return (v + align - 1) / align * align; }

}  // namespace

ArenaPlan PlanArena(const ir::Stmt& body, int64_t align,
                    const std::function<int64_t(const ir::Buffer&)>& bytes_of, int64_t own_bytes,
                    const std::vector<const ir::Variable*>& outputs,
                    const std::vector<const ir::Variable*>& inputs) {
  ArenaPlan plan;
  plan.output_first_use.assign(outputs.size(), -1);
  plan.input_last_use.assign(inputs.size(), -1);
  std::unordered_map<const ir::Variable*, size_t> by_output, by_input;
  for (size_t k = 0; k < outputs.size(); ++k) by_output[outputs[k]] = k;
  for (size_t k = 0; k < inputs.size(); ++k) by_input[inputs[k]] = k;
  std::vector<Workspace> spaces;
  std::unordered_map<const ir::Variable*, size_t> by_data;  // a workspace's base address
  ir::Stmt s = body;
  for (auto* alloc = s.As<ir::Allocate>(); alloc; alloc = s.As<ir::Allocate>()) {
    const int64_t bytes = bytes_of(alloc->buffer);
    if (bytes >= 0) {
      by_data[alloc->buffer->data.node()] = spaces.size();
      spaces.push_back({alloc->buffer.get(), bytes});
    }
    s = alloc->body;
  }
  // Live ranges over the statements under the chain.
  const auto* block = s.As<ir::Block>();
  const std::vector<ir::Stmt> stmts = block ? block->stmts : std::vector<ir::Stmt>{s};
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i) {
    FreeVars uses;
    uses.Visit(stmts[i]);
    for (const ir::Variable* v : uses.vars) {
      auto out = by_output.find(v);
      if (out != by_output.end() && plan.output_first_use[out->second] < 0) {
        plan.output_first_use[out->second] = i;
      }
      auto in = by_input.find(v);
      if (in != by_input.end()) plan.input_last_use[in->second] = i;
      auto it = by_data.find(v);
      if (it == by_data.end()) continue;
      Workspace& w = spaces[it->second];
      if (w.first < 0) w.first = i;
      w.last = i;
    }
  }
  plan.statements = s.get();
  // Largest first (then earliest), each at the lowest offset clear of the placed workspaces
  // live at the same time. A workspace no statement names is live nowhere.
  std::vector<size_t> order;
  for (size_t i = 0; i < spaces.size(); ++i) {
    const Workspace& w = spaces[i];
    if (w.bytes >= own_bytes && w.first >= 0) {
      plan.own.push_back({w.buffer, w.bytes, w.first, w.last});
    } else {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return spaces[a].bytes != spaces[b].bytes ? spaces[a].bytes > spaces[b].bytes
                                              : spaces[a].first < spaces[b].first;
  });
  struct Placed {
    int64_t begin, end;
    int first, last;
  };
  std::vector<Placed> placed;
  for (size_t i : order) {
    const Workspace& w = spaces[i];
    // The byte ranges of the placed workspaces live with this one, by start.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (const Placed& p : placed) {
      if (w.first >= 0 && p.first <= w.last && w.first <= p.last) taken.push_back({p.begin, p.end});
    }
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (offset + w.bytes <= begin) break;  // fits in the gap before this one
      offset = std::max(offset, RoundUp(end, align));
    }
    plan.offsets[w.buffer] = offset;
    plan.bytes = std::max(plan.bytes, offset + w.bytes);
    if (w.first >= 0) placed.push_back({offset, offset + w.bytes, w.first, w.last});
  }
  return plan;
}

}  // namespace cinn_like::backends
