/// \file The subexpressions a source printer computes once per statement. Fusion inlines each
/// producer into its consumers, so a value two consumers read is written out twice in the
/// consumer's expression: GELU's backward reads tanh(u) three times and u holds pow(x, 3).
/// LLVM merges such repeats itself; NVRTC does not merge calls such as tanhf (H200, GPT-2's
/// GELU backward: 47 us a call where the value computed once takes about a tenth of the
/// instructions). The C-family printers bind each repeated subexpression that calls a math
/// function to a `const` temporary before a scalar store and, in CUDA, before each lane of a
/// vector store (OpenCL's vector stores print their lanes into one vector literal: not yet).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace cinn_like::backends {

struct CommonSubexpressions {
  /// The temporaries, each a variable and its value; a value reads only earlier temporaries.
  std::vector<std::pair<ir::Var, ir::Expr>> defs;
  /// The expression, reading the temporaries.
  ir::Expr value;
};

/// Binds the scalar subexpressions of `e` that occur more than once and call a math function
/// (a kPure call) to temporaries named by `name`. A subexpression that loads memory or divides
/// integers is bound only where the statement evaluates it unconditionally at least once (not
/// only in a select's branch, a short-circuit operand or an intrinsic's argument), so that
/// computing it first never reads what the statement would not; one that calls an intrinsic is
/// never bound.
CommonSubexpressions ExtractCommonSubexpressions(const ir::Expr& e,
                                                 const std::function<std::string()>& name);

}  // namespace cinn_like::backends
