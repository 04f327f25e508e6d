/// \file Full unrolling of loops the schedule marked kUnrolled.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// Replaces each kUnrolled loop of constant extent (at most 512) by one copy of its body per
/// iteration. Longer or symbolic loops stay as serial loops (with a warning). kUnrollHint loops
/// are left to the backend.
Stmt UnrollLoops(const Stmt& s);

}  // namespace cinn_like::ir
