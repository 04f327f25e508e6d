/// \file Human-readable text of the IR, used by dumps, error messages and IR tests.
#pragma once

#include <ostream>
#include <string>

#include "ir/ir.h"

namespace cinn_like::ir {

/// `(a + b)`, `A[i, j]`, `ramp(base, stride, lanes)`, ...
std::string ToString(const Expr& e);
/// One statement per line, two spaces per nesting level:
///   for (i, 0, n) {
///     C[i] = (A[i] + B[i])
///   }
/// Loops that are not serial carry their kind first: `vectorize for`, `blockIdx.x for`.
std::string ToString(const Stmt& s);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

}  // namespace cinn_like::ir
