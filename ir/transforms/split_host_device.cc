/// \file SplitHostDevice: collect what each bound loop nest uses, make it a kernel.
#include "ir/transforms/split_host_device.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/identifier.h"
#include "ir/structural_equal.h"
#include "ir/transforms/merge_nests.h"
#include "ir/transforms/nest_uses.h"

namespace cinn_like::ir {

namespace {

std::string WrittenName(const NestUses& uses) {
  return uses.written.empty() ? std::string("nothing") : (*uses.written.begin())->name;
}

}  // namespace

Stmt KernelComparableForm(const LoweredFuncNode& kernel) {
  // Every field of LoweredFuncNode that code generation reads must be here (a field added
  // there must be added here).
  std::vector<Stmt> stmts;
  for (const Argument& arg : kernel.args) {
    stmts.push_back(Evaluate::Make(arg.is_buffer() ? Expr(arg.buffer->data) : Expr(arg.var)));
    stmts.push_back(Evaluate::Make(Expr(static_cast<int>(arg.kind))));
  }
  for (const Expr& d : kernel.grid_dims) stmts.push_back(Evaluate::Make(d));
  for (const Expr& d : kernel.block_dims) stmts.push_back(Evaluate::Make(d));
  stmts.push_back(Evaluate::Make(Expr(kernel.shared_mem_bytes)));
  stmts.push_back(kernel.body);
  return Block::Make(stmts);
}

absl::StatusOr<LoweredFunc> SplitHostDevice(const LoweredFuncNode& f, bool merge_nests) {
  if (f.kind != LoweredFuncNode::Kind::kHostEntry) {
    return absl::InvalidArgumentError("function " + f.name + " is already a device kernel");
  }
  if (!f.kernels.empty()) {
    return absl::InvalidArgumentError("function " + f.name + " is already split");
  }
  auto host = std::make_shared<LoweredFuncNode>(f);
  // The function's intermediates (global Allocates around the whole body) stay on the host,
  // around the launches; each kernel that touches one takes its pointer as an argument.
  std::vector<Buffer> workspaces;
  Stmt body = f.body;
  while (auto* alloc = body.As<Allocate>()) {
    if (alloc->buffer->scope != MemoryScope::kGlobal) {
      return absl::InvalidArgumentError(
          absl::StrCat("function ", f.name, ": buffer ", alloc->buffer->name, " in ",
                       alloc->buffer->scope == MemoryScope::kShared ? "shared" : "local",
                       " memory is allocated outside every kernel; compute it at a loop of a "
                       "GPU-bound stage"));
    }
    workspaces.push_back(alloc->buffer);
    body = alloc->body;
  }
  std::vector<Argument> buffers;
  for (const Argument& arg : f.args) {
    if (arg.is_buffer()) buffers.push_back(arg);
  }
  for (const Buffer& w : workspaces) buffers.push_back(Argument::Output(w));
  std::vector<Stmt> stmts;
  if (auto* block = body.As<Block>()) {
    stmts = block->stmts;
  } else {
    stmts = {body};
  }
  // Each group one kernel (or host call): the top-level statements alone, or with the
  // independent nests of one launch shape together.
  std::vector<Buffer> allocated;  // at their first use: workspaces, outputs (given no memory)
  for (const Argument& a : buffers) {
    if (a.kind == Argument::Kind::kOutput) allocated.push_back(a.buffer);
  }
  stmts = HoistLastReaders(stmts, allocated, workspaces);
  std::vector<Stmt> top;
  if (merge_nests) {
    for (const std::vector<Stmt>& group :
         GroupIndependentNests(SinkOutputNests(stmts, workspaces))) {
      top.push_back(Block::Make(group));
    }
  } else {
    top = stmts;
  }
  std::vector<Var> shape_vars = ShapeVars(f);
  std::vector<Stmt> launches;
  // The kernels made so far by the hash of their comparable form (repeated layers repeat
  // kernels on other tensors: each is compiled once and launched for every layer).
  std::multimap<size_t, std::pair<Stmt, LoweredFunc>> made;
  for (size_t k = 0; k < top.size(); ++k) {
    if (IsHostCall(top[k])) {  // a library call or launch: host code, in order with the rest
      launches.push_back(top[k]);
      continue;
    }
    NestUses uses;
    uses.Visit(top[k]);
    // Loop-free statements (a scalar reduction's initial value) run as one thread; a loop
    // nest left serial would repeat in every thread, so it must be bound.
    if (!uses.bound && uses.has_loop) {
      return absl::InvalidArgumentError(
          absl::StrCat("function ", f.name, ": a loop nest writing ", WrittenName(uses),
                       " has no GPU binding; bind its loops to blockIdx/threadIdx"));
    }
    auto kernel = std::make_shared<LoweredFuncNode>();
    // A CUDA/OpenCL identifier, whatever the entry is called ("my entry", "if").
    const std::string stem = CIdentifier(f.name);
    kernel->name = top.size() == 1 ? stem + "_kernel" : absl::StrCat(stem, "_kernel_", k);
    kernel->kind = LoweredFuncNode::Kind::kDeviceKernel;
    kernel->body = top[k];
    for (int a = 0; a < 3; ++a) {
      if (uses.grid[a].defined()) kernel->grid_dims[a] = uses.grid[a];
      if (uses.block[a].defined()) kernel->block_dims[a] = uses.block[a];
    }
    std::vector<Expr> launch{StringImm::Make(kernel->name)};
    for (auto& d : kernel->grid_dims) launch.push_back(d);
    for (auto& d : kernel->block_dims) launch.push_back(d);
    launch.push_back(Expr(kernel->shared_mem_bytes));
    for (const Argument& arg : buffers) {
      const BufferNode* b = arg.buffer.get();
      if (!uses.read.count(b) && !uses.written.count(b)) continue;
      kernel->args.push_back(uses.written.count(b) ? Argument::Output(arg.buffer)
                                                   : Argument::Input(arg.buffer));
      launch.push_back(arg.buffer->data);
    }
    for (const Var& v : shape_vars) {
      if (!uses.vars.count(v.node()) || uses.loop_vars.count(v.node())) continue;
      kernel->args.push_back(Argument::Scalar(v));
      launch.push_back(v);
    }
    for (const Variable* v : uses.vars) {
      bool known = uses.loop_vars.count(v) > 0;
      for (auto& s : shape_vars) known |= s.node() == v;
      if (!known) {
        return absl::InvalidArgumentError(absl::StrCat("function ", f.name, ": variable ", v->name,
                                                       " is neither a loop index nor a "
                                                       "dimension of an argument"));
      }
    }
    const Stmt form = KernelComparableForm(*kernel);
    const size_t hash = StructuralHashUpToBuffers(form);
    auto [begin, end] = made.equal_range(hash);
    auto same = std::find_if(begin, end, [&](const auto& m) {
      return StructuralEqualUpToBuffers(m.second.first, form);
    });
    if (same != end) {
      launch[0] = StringImm::Make(same->second.second->name);
    } else {
      made.emplace(hash, std::make_pair(form, kernel));
      host->kernels.push_back(kernel);
    }
    launches.push_back(Evaluate::Make(Call::Make(Int(32), IntrinsicOp::kLaunchKernel, launch)));
  }
  host->body = Block::Make(launches);
  for (auto it = workspaces.rbegin(); it != workspaces.rend(); ++it) {
    host->body = Allocate::Make(*it, host->body);
  }
  return host;
}

}  // namespace cinn_like::ir
