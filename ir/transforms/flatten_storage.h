/// \file Storage flattening: multi-dimensional accesses to one row-major element index.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Rewrites every Load/Store `B[i0, i1, ..., ik]` of a buffer with shape [d0, ..., dk] to
/// `B[((i0 * d1 + i1) * d2 + ...) + ik]`. Vector indices stay vectors.
Stmt FlattenStorage(const Stmt& s);

}  // namespace cinn_like::ir
