/// \file Structural equality and hashing of loop IR (Halide's `equal()`, TVM's
/// StructuralEqual): the one way to ask "is this the same expression?", never its printed text.
///
/// Contract:
///  - Equal trees have the same node kind and type at every position, equal constants, the
///    same Call name and kind, the same lanes, loop kinds and bind axes, and Loads, Stores and
///    Allocates of the same buffer (BufferNode identity: two buffers named "A" differ).
///  - FloatImm values are equal when their bits are equal or both are NaN: 0.0 and -0.0 differ.
///  - A Variable equals only itself (ir/ir.h: two Vars named "i" are different), unless
///    `map_free_vars`: then the variables of a and b are paired in order of first appearance,
///    and equal means the pairing is a bijection of variables of equal types. Loop and let
///    variables of statements are treated like any other variable.
///  - StructuralEqual(a, b, m) implies StructuralHash(a, m) == StructuralHash(b, m); with
///    `map_free_vars` a variable hashes as its first-appearance index, not its node.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace cinn_like::ir {

bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars = false);
bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars = false);

size_t StructuralHash(const Expr& e, bool map_free_vars = false);
size_t StructuralHash(const Stmt& s, bool map_free_vars = false);

/// Equal up to a renaming of free variables and of buffers: variables are paired as with
/// `map_free_vars`, and buffers likewise, in order of first appearance (a bijection); paired
/// buffers have the same dtype, scope, shape (compared under the same pairing) and cache hint
/// (BufferNode::read_once), and their data variables are paired. Two loop nests equal this way do
/// the same on different tensors: host code generation emits them once
/// (backends/llvm/codegen_llvm_outline.cc).
bool StructuralEqualUpToBuffers(const Stmt& a, const Stmt& b);
/// The hash that agrees with StructuralEqualUpToBuffers.
size_t StructuralHashUpToBuffers(const Stmt& s);

/// Element-wise StructuralEqual of two lists (index lists, argument lists).
bool StructuralEqual(const std::vector<Expr>& a, const std::vector<Expr>& b,
                     bool map_free_vars = false);

}  // namespace cinn_like::ir
