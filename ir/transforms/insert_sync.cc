/// \file InsertSync: a summary of shared-memory accesses per statement, composed over
/// sequences and loops.
#include "ir/transforms/insert_sync.h"

#include <set>

#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

using BufferSet = std::set<const BufferNode*>;

bool Intersects(const BufferSet& a, const BufferSet& b) {
  for (auto* x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

void Merge(BufferSet* into, const BufferSet& from) { into->insert(from.begin(), from.end()); }

bool IsSync(const Stmt& s) {
  auto* e = s.As<Evaluate>();
  auto* c = e ? e->value.As<Call>() : nullptr;
  return c && c->is_intrinsic(IntrinsicOp::kSyncThreads);
}

/// Shared buffers a statement reads and writes, barriers ignored.
struct Accesses : IRVisitor {
  BufferSet reads, writes;
  using IRVisitor::Visit;
  void VisitLoad(const Load* op) override {
    if (op->buffer->scope == MemoryScope::kShared) reads.insert(op->buffer.get());
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    if (op->buffer->scope == MemoryScope::kShared) writes.insert(op->buffer.get());
    IRVisitor::VisitStore(op);
  }
};

/// A statement with barriers inserted, and the shared accesses before its first barrier
/// (`first`) and after its last (`last`); without a barrier both are all its accesses.
struct Summary {
  Stmt stmt;
  BufferSet first_reads, first_writes, last_reads, last_writes;
  bool has_sync = false;
};

Summary Process(const Stmt& s);

Summary Leaf(const Stmt& s) {
  Summary out;
  out.stmt = s;
  if (IsSync(s)) {
    out.has_sync = true;
    return out;
  }
  Accesses a;
  a.Visit(s);
  out.first_reads = out.last_reads = a.reads;
  out.first_writes = out.last_writes = a.writes;
  return out;
}

Summary ProcessBlock(const Stmt& self, const std::vector<Stmt>& stmts) {
  Summary out;
  std::vector<Stmt> seq;
  bool changed = false;
  BufferSet reads, writes;  // since the last barrier
  for (const Stmt& s : stmts) {
    Summary c = Process(s);
    if (Intersects(c.first_reads, writes) || Intersects(c.first_writes, reads)) {
      seq.push_back(MakeSyncThreads());
      changed = true;
      reads.clear();
      writes.clear();
      out.has_sync = true;
    }
    seq.push_back(c.stmt);
    changed |= !c.stmt.same_as(s);
    if (!out.has_sync) {
      Merge(&out.first_reads, c.first_reads);
      Merge(&out.first_writes, c.first_writes);
    }
    if (c.has_sync) {
      out.has_sync = true;
      reads = c.last_reads;
      writes = c.last_writes;
    } else {
      Merge(&reads, c.last_reads);
      Merge(&writes, c.last_writes);
    }
  }
  out.last_reads = reads;
  out.last_writes = writes;
  out.stmt = changed ? Block::Make(seq) : self;
  return out;
}

Summary Process(const Stmt& s) {
  if (auto* b = s.As<Block>()) return ProcessBlock(s, b->stmts);
  if (auto* a = s.As<Allocate>()) {
    Summary in = Process(a->body);
    in.stmt = in.stmt.same_as(a->body) ? s : Allocate::Make(a->buffer, in.stmt);
    return in;
  }
  if (auto* f = s.As<For>()) {
    Summary body = Process(f->body);
    bool bound = f->for_kind == ForKind::kGpuBlock || f->for_kind == ForKind::kGpuThread;
    // The next iteration's first accesses follow this iteration's last ones.
    if (!bound && body.has_sync &&
        (Intersects(body.first_reads, body.last_writes) ||
         Intersects(body.first_writes, body.last_reads))) {
      body.stmt = Block::Make({body.stmt, MakeSyncThreads()});
      body.last_reads.clear();
      body.last_writes.clear();
    }
    body.stmt = body.stmt.same_as(f->body) ? s
                                           : For::Make(f->loop_var, f->min, f->extent, f->for_kind,
                                                       body.stmt, f->bind_axis);
    return body;
  }
  return Leaf(s);  // stores, evaluates, and ifs (no barrier inside divergent code)
}

}  // namespace

Stmt MakeSyncThreads() {
  return Evaluate::Make(Call::Make(Int(32), IntrinsicOp::kSyncThreads, {}));
}

Stmt InsertSync(const Stmt& s) { return Process(s).stmt; }

}  // namespace cinn_like::ir
