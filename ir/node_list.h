/// \file The one list of IR node kinds. Visitor, mutator and printer declarations are
/// generated from it: adding a node is one line here plus its struct in ir/ir.h.
#pragma once

// X(Name): every node struct is `ir::Name`, its kind `IrNodeKind::kName`.
#define CINN_LIKE_EXPR_NODES(X) \
  X(IntImm)                     \
  X(FloatImm)                   \
  X(StringImm)                  \
  X(Variable)                   \
  X(Add)                        \
  X(Sub)                        \
  X(Mul)                        \
  X(Div)                        \
  X(Mod)                        \
  X(Min)                        \
  X(Max)                        \
  X(EQ)                         \
  X(NE)                         \
  X(LT)                         \
  X(LE)                         \
  X(GT)                         \
  X(GE)                         \
  X(And)                        \
  X(Or)                         \
  X(Not)                        \
  X(Select)                     \
  X(Cast)                       \
  X(Load)                       \
  X(Ramp)                       \
  X(Broadcast)                  \
  X(Call)

#define CINN_LIKE_STMT_NODES(X) \
  X(Store)                      \
  X(For)                        \
  X(IfThenElse)                 \
  X(Block)                      \
  X(Evaluate)                   \
  X(Allocate)                   \
  X(LetStmt)

#define CINN_LIKE_ALL_NODES(X) CINN_LIKE_EXPR_NODES(X) CINN_LIKE_STMT_NODES(X)

// The binary arithmetic and comparison nodes share one struct shape.
#define CINN_LIKE_BINARY_NODES(X) \
  X(Add, "+")                     \
  X(Sub, "-")                     \
  X(Mul, "*")                     \
  X(Div, "/")                     \
  X(Mod, "%")                     \
  X(Min, "min")                   \
  X(Max, "max")                   \
  X(EQ, "==")                     \
  X(NE, "!=")                     \
  X(LT, "<")                      \
  X(LE, "<=")                     \
  X(GT, ">")                      \
  X(GE, ">=")                     \
  X(And, "&&")                    \
  X(Or, "||")
