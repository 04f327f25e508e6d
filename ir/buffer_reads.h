/// \file Which buffers a piece of IR reads: the one home of this question, asked by lowering
/// (a function's arguments) and by the group scheduler (a stage's inputs, its readers).
#pragma once

#include <map>
#include <set>

#include "ir/ir.h"

namespace cinn_like::ir {

/// The buffers `e` loads from, each with its Buffer (for a caller that marks them:
/// BufferNode::read_once).
std::map<const BufferNode*, Buffer> LoadedBuffers(const Expr& e);
/// The buffers `e` loads from.
std::set<const BufferNode*> BuffersRead(const Expr& e);
/// Whether `e` loads from any of `bufs`.
bool Reads(const Expr& e, const std::set<const BufferNode*>& bufs);
/// The buffers statement `s` loads from, except those it allocates itself (an extern
/// statement's locals).
std::set<const BufferNode*> BuffersReadFromOutside(const Stmt& s);

}  // namespace cinn_like::ir
