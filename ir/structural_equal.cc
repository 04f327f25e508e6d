/// \file Structural equality and hashing: one description of each node's fields, walked in
/// pairs to compare and alone to hash, so the two always agree.
#include "ir/structural_equal.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace cinn_like::ir {
namespace {

template <typename N, typename... Kinds>
constexpr bool kIsOneOf = (std::is_same_v<N, Kinds> || ...);

/// Each node's fields, in one order shared by equality and hashing. `r` sees the corresponding
/// fields of a and b (of one node kind, N); to hash, a and b are the same node. A node kind of
/// ir/node_list.h missing here stops the build at the static_assert.
template <typename R, typename N>
void Fields(R& r, const N* a, const N* b) {
  if constexpr (std::is_base_of_v<BinaryNode, N>) {
    r.Child(a->a, b->a);
    r.Child(a->b, b->b);
  } else if constexpr (kIsOneOf<N, IntImm, StringImm>) {
    r.Value(a->value, b->value);
  } else if constexpr (std::is_same_v<N, FloatImm>) {
    r.Float(a->value, b->value);
  } else if constexpr (std::is_same_v<N, Variable>) {
    r.Var(a, b);
  } else if constexpr (std::is_same_v<N, Not>) {
    r.Child(a->a, b->a);
  } else if constexpr (kIsOneOf<N, Cast, Evaluate>) {
    r.Child(a->value, b->value);
  } else if constexpr (std::is_same_v<N, Select>) {
    r.Child(a->cond, b->cond);
    r.Child(a->true_value, b->true_value);
    r.Child(a->false_value, b->false_value);
  } else if constexpr (kIsOneOf<N, Load, Store>) {
    r.Buffer(a->buffer, b->buffer);
    r.Children(a->indices, b->indices);
    if constexpr (std::is_same_v<N, Store>) r.Child(a->value, b->value);
  } else if constexpr (kIsOneOf<N, Ramp, Broadcast>) {
    r.Value(a->lanes, b->lanes);
    if constexpr (std::is_same_v<N, Ramp>) {
      r.Child(a->base, b->base);
      r.Child(a->stride, b->stride);
    } else {
      r.Child(a->value, b->value);
    }
  } else if constexpr (std::is_same_v<N, Call>) {
    r.Value(a->name, b->name);
    r.Value(a->call_kind, b->call_kind);
    r.Value(a->intrinsic.value_or(IntrinsicOp{}), b->intrinsic.value_or(IntrinsicOp{}));
    r.Children(a->args, b->args);
  } else if constexpr (std::is_same_v<N, For>) {
    r.Child(a->loop_var, b->loop_var);
    r.Child(a->min, b->min);
    r.Child(a->extent, b->extent);
    r.Value(a->for_kind, b->for_kind);
    r.Value(a->bind_axis, b->bind_axis);
    r.Child(a->body, b->body);
  } else if constexpr (std::is_same_v<N, IfThenElse>) {
    r.Child(a->cond, b->cond);
    r.Child(a->then_case, b->then_case);
    r.Child(a->else_case, b->else_case);
  } else if constexpr (std::is_same_v<N, Block>) {
    r.Children(a->stmts, b->stmts);
  } else if constexpr (std::is_same_v<N, Allocate>) {
    r.Buffer(a->buffer, b->buffer);
    r.Child(a->body, b->body);
  } else if constexpr (std::is_same_v<N, LetStmt>) {
    r.Child(a->var, b->var);
    r.Child(a->value, b->value);
    r.Child(a->body, b->body);
  } else {
    static_assert(!sizeof(N), "StructuralEqual: list the fields of this node kind");
  }
}

/// Calls Fields on a and b (of one kind) cast to their node type.
template <typename R, typename Node>
void DispatchFields(R& r, const Node* a, const Node* b) {
  switch (a->kind) {
#define CINN_LIKE_FIELDS_CASE(name)                                        \
  case IrNodeKind::k##name:                                                \
    if constexpr (std::is_base_of_v<Node, name>) {                         \
      Fields(r, static_cast<const name*>(a), static_cast<const name*>(b)); \
    }                                                                      \
    return;
    CINN_LIKE_ALL_NODES(CINN_LIKE_FIELDS_CASE)
#undef CINN_LIKE_FIELDS_CASE
  }
}

uint64_t Bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

/// Walks two trees in step; `ok()` is false from the first difference on.
class Equal {
 public:
  explicit Equal(bool map_free_vars, bool map_buffers = false)
      : map_(map_free_vars || map_buffers), map_buffers_(map_buffers) {}
  bool ok() const { return ok_; }

  template <typename Handle>
  void Child(const Handle& a, const Handle& b) {
    if (!ok_) return;
    if (!a.defined() || !b.defined()) {
      ok_ = a.defined() == b.defined();
      return;
    }
    // Sharing proves equality only when variables are compared by identity.
    if (a.same_as(b) && !map_) return;
    if (a->kind != b->kind || !SameType(a.get(), b.get())) {
      ok_ = false;
      return;
    }
    DispatchFields(*this, a.get(), b.get());
  }
  template <typename Handle>
  void Children(const std::vector<Handle>& a, const std::vector<Handle>& b) {
    if (a.size() != b.size()) ok_ = false;
    for (size_t i = 0; ok_ && i < a.size(); ++i) Child(a[i], b[i]);
  }
  template <typename T>
  void Value(const T& a, const T& b) {
    ok_ = ok_ && a == b;
  }
  void Float(double a, double b) {
    ok_ = ok_ && ((std::isnan(a) && std::isnan(b)) || Bits(a) == Bits(b));
  }
  void Buffer(const ir::Buffer& a, const ir::Buffer& b) {
    if (!ok_ || !map_buffers_) {
      ok_ = ok_ && a == b;
      return;
    }
    auto [ab, new_a] = buffer_a_to_b_.emplace(a.get(), b.get());
    auto [ba, new_b] = buffer_b_to_a_.emplace(b.get(), a.get());
    ok_ = ab->second == b.get() && ba->second == a.get();
    if (!ok_ || !new_a) return;
    ok_ = a->dtype == b->dtype && a->scope == b->scope && a->read_once == b->read_once;
    Children(a->shape, b->shape);
    Child(a->data, b->data);
  }
  void Var(const Variable* a, const Variable* b) {
    if (!ok_ || !map_) {
      ok_ = ok_ && a == b;
      return;
    }
    // The node kinds and types were compared already; the pairing must stay one to one.
    auto ab = a_to_b_.emplace(a, b).first;
    auto ba = b_to_a_.emplace(b, a).first;
    ok_ = ab->second == b && ba->second == a;
  }

 private:
  static bool SameType(const ExprNode* a, const ExprNode* b) { return a->type == b->type; }
  static bool SameType(const StmtNode*, const StmtNode*) { return true; }

  bool map_;
  bool map_buffers_;
  bool ok_ = true;
  std::unordered_map<const Variable*, const Variable*> a_to_b_, b_to_a_;
  std::unordered_map<const BufferNode*, const BufferNode*> buffer_a_to_b_, buffer_b_to_a_;
};

/// Walks one tree (as the pair (a, a)) and mixes every field into one hash.
class Hash {
 public:
  explicit Hash(bool map_free_vars, bool map_buffers = false)
      : map_(map_free_vars || map_buffers), map_buffers_(map_buffers) {}
  size_t value() const { return hash_; }

  template <typename Handle>
  void Child(const Handle& a, const Handle&) {
    if (!a.defined()) {
      Mix(0x5eed);
      return;
    }
    Mix(static_cast<size_t>(a->kind));
    MixType(a.get());
    DispatchFields(*this, a.get(), a.get());
  }
  template <typename Handle>
  void Children(const std::vector<Handle>& a, const std::vector<Handle>&) {
    Mix(a.size());
    for (auto& x : a) Child(x, x);
  }
  template <typename T>
  void Value(const T& a, const T&) {
    Mix(std::hash<T>()(a));
  }
  void Float(double a, double) { Mix(std::isnan(a) ? 0x7ff8 : std::hash<uint64_t>()(Bits(a))); }
  void Buffer(const ir::Buffer& a, const ir::Buffer&) {
    if (!map_buffers_) {
      Mix(std::hash<const BufferNode*>()(a.get()));
      return;
    }
    auto [it, is_new] = buffer_first_appearance_.emplace(a.get(), buffer_first_appearance_.size());
    Mix(it->second);
    if (!is_new) return;
    Mix(static_cast<size_t>(a->dtype.code()));
    Mix(static_cast<size_t>(a->dtype.bits()));
    Mix(static_cast<size_t>(a->dtype.lanes()));
    Mix(static_cast<size_t>(a->scope));
    Mix(static_cast<size_t>(a->read_once));
    Children(a->shape, a->shape);
    Child(a->data, a->data);
  }
  void Var(const Variable* a, const Variable*) {
    if (!map_) {
      Mix(std::hash<const Variable*>()(a));
      return;
    }
    Mix(first_appearance_.emplace(a, first_appearance_.size()).first->second);
  }

 private:
  void MixType(const ExprNode* e) {
    Mix(static_cast<size_t>(e->type.code()));
    Mix(static_cast<size_t>(e->type.bits()));
    Mix(static_cast<size_t>(e->type.lanes()));
  }
  void MixType(const StmtNode*) {}
  void Mix(size_t v) { hash_ ^= v + 0x9e3779b97f4a7c15ull + (hash_ << 6) + (hash_ >> 2); }

  bool map_;
  bool map_buffers_;
  size_t hash_ = 0;
  std::unordered_map<const Variable*, size_t> first_appearance_;
  std::unordered_map<const BufferNode*, size_t> buffer_first_appearance_;
};

template <typename Handle>
bool EqualTrees(const Handle& a, const Handle& b, bool map_free_vars) {
  Equal eq(map_free_vars);
  eq.Child(a, b);
  return eq.ok();
}

template <typename Handle>
size_t HashTree(const Handle& a, bool map_free_vars) {
  Hash h(map_free_vars);
  h.Child(a, a);
  return h.value();
}

}  // namespace

bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars) {
  return EqualTrees(a, b, map_free_vars);
}
bool StructuralEqual(const Stmt& a, const Stmt& b, bool map_free_vars) {
  return EqualTrees(a, b, map_free_vars);
}
bool StructuralEqual(const std::vector<Expr>& a, const std::vector<Expr>& b, bool map_free_vars) {
  Equal eq(map_free_vars);
  eq.Children(a, b);
  return eq.ok();
}

bool StructuralEqualUpToBuffers(const Stmt& a, const Stmt& b) {
  Equal eq(/*map_free_vars=*/true, /*map_buffers=*/true);
  eq.Child(a, b);
  return eq.ok();
}

size_t StructuralHashUpToBuffers(const Stmt& s) {
  Hash h(/*map_free_vars=*/true, /*map_buffers=*/true);
  h.Child(s, s);
  return h.value();
}

size_t StructuralHash(const Expr& e, bool map_free_vars) { return HashTree(e, map_free_vars); }
size_t StructuralHash(const Stmt& s, bool map_free_vars) { return HashTree(s, map_free_vars); }

}  // namespace cinn_like::ir
