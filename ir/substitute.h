/// \file Replacing variables by expressions, and asking whether IR uses a variable or reads a
/// buffer.
#pragma once

#include <unordered_map>

#include "ir/ir.h"

namespace cinn_like::ir {

using VarMap = std::unordered_map<const Variable*, Expr>;

/// `e` with every variable in `map` replaced by its expression.
Expr Substitute(const Expr& e, const VarMap& map);
Stmt Substitute(const Stmt& s, const VarMap& map);

/// True when `v` occurs in the IR.
bool UsesVar(const Expr& e, const Variable* v);
bool UsesVar(const Stmt& s, const Variable* v);

/// True when `e` loads from `buffer` (any buffer when null).
bool ReadsBuffer(const Expr& e, const BufferNode* buffer = nullptr);

}  // namespace cinn_like::ir
