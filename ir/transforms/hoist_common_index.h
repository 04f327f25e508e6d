/// \file Common index hoisting: index arithmetic computed once per loop iteration (or once
/// outside a loop) and named by a LetStmt, so generated CUDA reads like hand-written code.
#pragma once

#include "ir/ir.h"

namespace cinn_like::ir {

/// For each loop L inside another loop, in flattened indices (and the guards that repeat
/// them): a largest integer subterm with a multiplication, division or remainder by a
/// constant that does not depend on L's variable nor on anything bound inside L becomes
/// `let idx<k> = subterm` just outside L; one that depends on L's variable but on nothing
/// bound inside L and occurs at least twice becomes a let at the top of L's body (constant
/// offsets stay outside: x * 8 + 1 and x * 8 + 2 share one name for x * 8). Subterms
/// with loads or calls stay where they are. LLVM does this itself; the point is CUDA source
/// that NVRTC and a reader see once. Run it last: later passes need not know LetStmt.
Stmt HoistCommonIndex(const Stmt& s);

}  // namespace cinn_like::ir
