/// \file Which buffers a piece of IR reads (buffer_reads.h): one walk over its loads.
#include "ir/buffer_reads.h"

#include "ir/visitor.h"

namespace cinn_like::ir {
namespace {

/// Every load's buffer, and (where asked) every buffer the walked IR allocates.
struct LoadFinder : IRVisitor {
  std::map<const BufferNode*, Buffer> loaded;
  std::set<const BufferNode*> allocated;
  using IRVisitor::Visit;
  void VisitLoad(const Load* op) override {
    loaded.emplace(op->buffer.get(), op->buffer);
    IRVisitor::VisitLoad(op);
  }
  void VisitAllocate(const Allocate* op) override {
    allocated.insert(op->buffer.get());
    IRVisitor::VisitAllocate(op);
  }
};

}  // namespace

std::map<const BufferNode*, Buffer> LoadedBuffers(const Expr& e) {
  LoadFinder f;
  f.Visit(e);
  return std::move(f.loaded);
}

std::set<const BufferNode*> BuffersRead(const Expr& e) {
  std::set<const BufferNode*> nodes;
  for (const auto& [node, buffer] : LoadedBuffers(e)) nodes.insert(node);
  return nodes;
}

bool Reads(const Expr& e, const std::set<const BufferNode*>& bufs) {
  for (const auto& [node, buffer] : LoadedBuffers(e)) {
    if (bufs.count(node)) return true;
  }
  return false;
}

std::set<const BufferNode*> BuffersReadFromOutside(const Stmt& s) {
  LoadFinder f;
  f.Visit(s);
  std::set<const BufferNode*> nodes;
  for (const auto& [node, buffer] : f.loaded) {
    if (!f.allocated.count(node)) nodes.insert(node);
  }
  return nodes;
}

}  // namespace cinn_like::ir
