/// \file Hand-built host entry functions (flattened indices) shared by the backend tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/module.h"

namespace cinn_like::testing {

inline ir::Module MakeModule(const std::string& name, std::vector<ir::Argument> args,
                             ir::Stmt body) {
  auto f = std::make_shared<ir::LoweredFuncNode>();
  f->name = name;
  f->kind = ir::LoweredFuncNode::Kind::kHostEntry;
  f->args = std::move(args);
  f->body = std::move(body);
  ir::Module m;
  m.name = name + "_module";
  m.target = ir::Target::X86();
  m.functions = {f};
  return m;
}

/// name(A, B, C): for i in [0, n): C[i] = A[i] + B[i], all float32 of shape {n}; `kind` is the
/// loop kind.
inline ir::Module VectorAdd(const std::string& name, ir::ForKind kind = ir::ForKind::kSerial) {
  ir::Var n("n");
  auto a = ir::MakeBuffer("A", ir::Float(32), {n});
  auto b = ir::MakeBuffer("B", ir::Float(32), {n});
  auto c = ir::MakeBuffer("C", ir::Float(32), {n});
  ir::Var i("i");
  ir::Stmt body = ir::For::Make(
      i, 0, n, kind, ir::Store::Make(c, {i}, ir::Load::Make(a, {i}) + ir::Load::Make(b, {i})));
  return MakeModule(name, {ir::Argument::Input(a), ir::Argument::Input(b), ir::Argument::Output(c)},
                    body);
}

}  // namespace cinn_like::testing
