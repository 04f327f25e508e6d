/// \file Attention's operand layouts folded in, through the graph rewriter.
#include "hlir/pass/attention_layout.h"

#include <array>
#include <optional>

#include "hlir/ops/attention.h"
#include "hlir/pass/graph_rewriter.h"

namespace cinn_like::hlir {
namespace {

using Perm = ops::AttentionLayout::Perm;

constexpr Perm kIdentity = ops::AttentionLayout::kIdentity;

/// The old graph's producers and readers of each value.
struct Uses {
  std::vector<int> producer;
  std::vector<std::vector<int>> consumers;
};

/// The perm of transpose node `node` when it has rank 4; nullopt otherwise.
std::optional<Perm> Perm4(const Node& node) {
  auto perm = GetInts(node.attrs, "perm", "transpose", {});
  if (!perm.ok() || perm->size() != 4) return std::nullopt;
  Perm p{};
  for (int d = 0; d < 4; ++d) p[d] = static_cast<int>((*perm)[d]);
  return p;
}

/// Value `v` read by `reader` alone (not a graph output either), computed by a node of `op`.
const Node* OnlyReadBy(const Graph& g, const Uses& u, int v, const char* op) {
  const int p = u.producer[v];
  if (p < 0 || g.nodes()[p].op != op || u.consumers[v].size() != 1 || IsGraphOutput(g, v)) {
    return nullptr;
  }
  return &g.nodes()[p];
}

/// An operand as the node will read it: a value of the new graph and its perm.
struct Operand {
  int value;
  Perm perm;
};

/// What repeat_kv expanded: an old graph's [B, Hkv, S, D] value (read further as an operand), or
/// an operand made in the new graph.
struct Unrepeated {
  int old_value = -1;
  std::optional<Operand> made;
};

/// repeat_kv's expansion of a [B, Hkv, S, D] value into operand `v` ([B, H, S, D]): that value
/// (the reshape's input where it adds the axis of 1 to it, else a view of the expanded value
/// without it, or a rank-4 transpose's input and perm); nullopt where `v` is not one.
absl::StatusOr<std::optional<Unrepeated>> UnrepeatedKv(const Graph& g, const Uses& u,
                                                       GraphRewriter& rw, int v) {
  const Node* merge = OnlyReadBy(g, u, v, "reshape");
  if (!merge) return std::nullopt;
  const Node* expand = OnlyReadBy(g, u, merge->inputs[0], "broadcast_to");
  if (!expand) return std::nullopt;
  const int a = expand->inputs[0];
  const Shape &in = g.values()[a].desc.shape, &out = g.values()[merge->inputs[0]].desc.shape;
  const Shape& heads = g.values()[v].desc.shape;
  // [B, Hkv, 1, S, D] -> [B, Hkv, G, S, D] -> [B, Hkv * G, S, D].
  if (in.size() != 5 || out.size() != 5 || !in[2].is_one() || in[0] != out[0] || in[1] != out[1] ||
      in[3] != out[3] || in[4] != out[4] || heads[0] != in[0] || heads[2] != in[3] ||
      heads[3] != in[4] || in[1].is_symbolic() || out[2].is_symbolic() || heads[1].is_symbolic() ||
      heads[1].value != in[1].value * out[2].value) {
    return std::nullopt;
  }
  const Shape kv{in[0], in[1], in[3], in[4]};
  if (const Node* r = OnlyReadBy(g, u, a, "reshape")) {
    if (g.values()[r->inputs[0]].desc.shape == kv) return Unrepeated{r->inputs[0], std::nullopt};
  }
  // HF's value: the projection viewed [B, S, Hkv, D], unsqueezed and transposed as one rank-5
  // transpose moving an axis of 1 to axis 2: the rank-4 transpose of the view without it.
  if (const Node* t = OnlyReadBy(g, u, a, "transpose")) {
    auto perm = GetInts(t->attrs, "perm", "transpose", {});
    const Shape& src = g.values()[t->inputs[0]].desc.shape;
    if (perm.ok() && perm->size() == 5 && src[(*perm)[2]].is_one() && (*perm)[4] == 4) {
      const int64_t unit = (*perm)[2];
      Shape view;
      for (int64_t d = 0; d < 5; ++d) {
        if (d != unit) view.push_back(src[d]);
      }
      auto viewed = rw.AddNode("reshape", {rw.Map(t->inputs[0])}, {{"shape", view}},
                               g.values()[a].name + "_rank4");
      if (!viewed.ok()) return viewed.status();
      Perm p4{};
      int e = 0;
      for (int d = 0; d < 5; ++d) {
        if (d == 2) continue;
        const int64_t x = (*perm)[d];
        p4[e++] = static_cast<int>(x > unit ? x - 1 : x);
      }
      return Unrepeated{-1, Operand{(*viewed)[0], p4}};
    }
  }
  auto viewed = rw.AddNode("reshape", {rw.Map(a)}, {{"shape", kv}}, g.values()[a].name + "_kv");
  if (!viewed.ok()) return viewed.status();
  return Unrepeated{-1, Operand{(*viewed)[0], kIdentity}};
}

/// Stored operand `v` ([B, S, H, D], its heads at axis 2) as whole heads of a wider value: v a
/// view of a slice of [B, S, W]'s last axis (GPT-2's q, k and v from its fused projection, each
/// read by the chain alone): a view of that value as [B, S, W / D, D] in the new graph and the
/// heads [first, count] v is of it; nullopt otherwise.
absl::StatusOr<std::optional<std::pair<int, std::array<int64_t, 2>>>> HeadsOfAWiderValue(
    const Graph& g, const Uses& u, GraphRewriter& rw, int v) {
  const Node* view = OnlyReadBy(g, u, v, "reshape");
  const Node* slice = view ? OnlyReadBy(g, u, view->inputs[0], "slice") : nullptr;
  if (!slice) return std::nullopt;
  const Shape &heads = g.values()[v].desc.shape, &wide = g.values()[slice->inputs[0]].desc.shape;
  auto axes = GetInts(slice->attrs, "axes", "slice", {});
  auto starts = GetInts(slice->attrs, "starts", "slice", {});
  auto ends = GetInts(slice->attrs, "ends", "slice", {});
  auto steps = GetInts(slice->attrs, "steps", "slice", {1});
  if (!axes.ok() || !starts.ok() || !ends.ok() || !steps.ok() || *axes != std::vector<int64_t>{2} ||
      starts->size() != 1 || ends->size() != 1 || *steps != std::vector<int64_t>{1} ||
      heads.size() != 4 || wide.size() != 3 || heads[0] != wide[0] || heads[1] != wide[1] ||
      heads[2].is_symbolic() || heads[3].is_symbolic() || wide[2].is_symbolic()) {
    return std::nullopt;
  }
  const int64_t d = heads[3].value, h = heads[2].value, w = wide[2].value, first = (*starts)[0];
  if (d <= 0 || w % d != 0 || first < 0 || first % d != 0 || (*ends)[0] - first != h * d) {
    return std::nullopt;
  }
  auto viewed = rw.AddNode("reshape", {rw.Map(slice->inputs[0])},
                           {{"shape", Shape{wide[0], wide[1], Dim::Known(w / d), heads[3]}}},
                           g.values()[slice->inputs[0]].name + "_heads");
  if (!viewed.ok()) return viewed.status();
  return std::make_pair((*viewed)[0], std::array<int64_t, 2>{first / d, h});
}

/// p composed after transpose t: transpose(transpose(x, t), p) is transpose(x, r), r[d] = t[p[d]].
Perm Compose(const Perm& t, const Perm& p) {
  Perm r{};
  for (int d = 0; d < 4; ++d) r[d] = t[p[d]];
  return r;
}

/// Sets operand `o`'s perm attribute to `p`, or drops it where `p` is the identity (a perm
/// composed with its inverse).
void SetPerm(AttributeMap& attrs, int o, const Perm& p) {
  if (p == kIdentity) {
    attrs.erase(ops::kAttentionPermAttrs[o]);
  } else {
    attrs[ops::kAttentionPermAttrs[o]] = std::vector<int64_t>(p.begin(), p.end());
  }
}

}  // namespace

absl::StatusOr<Graph> FoldLayoutsIntoAttention(const Graph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes().size());
  Uses u{std::vector<int>(graph.values().size(), -1), ValueConsumers(graph)};
  for (int n = 0; n < num_nodes; ++n) {
    for (int v : graph.nodes()[n].outputs) u.producer[v] = n;
  }
  GraphRewriter rw(graph);
  std::vector<bool> skip(num_nodes, false);  // the transposes of outputs written transposed
  for (int n = 0; n < num_nodes; ++n) {
    if (skip[n]) continue;
    const Node& node = graph.nodes()[n];
    auto layout = node.op == "attention" ? ops::ReadAttentionLayout(node.attrs, node.op)
                                         : absl::StatusOr<ops::AttentionLayout>();
    if (node.op != "attention" || !layout.ok()) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    bool folded = false;
    std::vector<int> inputs;
    AttributeMap attrs = node.attrs;
    // repeat_kv's expansions of k and v, folded together (one Hkv for both) or not at all: k
    // and v of different heads are not an attention.
    std::array<std::optional<Unrepeated>, 3> kv;
    auto plain = [&](int i) { return layout->perms[i] == kIdentity && layout->heads[i][1] < 0; };
    if (plain(1) && plain(2)) {
      std::array<Dim, 3> heads;
      for (int i : {1, 2}) {
        auto found = UnrepeatedKv(graph, u, rw, node.inputs[i]);
        if (!found.ok()) return found.status();
        kv[i] = *found;
        if (!kv[i]) break;
        const int at = kv[i]->old_value;
        heads[i] = at >= 0 ? graph.values()[at].desc.shape[1]
                           : ops::AttentionLogicalShape(
                                 rw.new_graph().values()[kv[i]->made->value].desc.shape,
                                 kv[i]->made->perm)[1];
      }
      if (!kv[1] || !kv[2] || heads[1] != heads[2]) kv[1].reset(), kv[2].reset();
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int v = node.inputs[i];
      if (i >= 3) {  // the mask, dropout's seed and stream
        inputs.push_back(rw.Map(v));
        continue;
      }
      Operand o{rw.Map(v), layout->perms[i]};
      int at = v;  // the old graph's value read, where it is one
      if (kv[i]) {
        folded = true;
        at = kv[i]->old_value;
        o = at >= 0 ? Operand{rw.Map(at), kIdentity} : *kv[i]->made;
      }
      if (const Node* t = at >= 0 ? OnlyReadBy(graph, u, at, "transpose") : nullptr) {
        // A transpose read by this node alone: its input, read through the composed perm. Not
        // another attention's output written transposed (it has no value of its own).
        auto tp = Perm4(*t);
        if (tp && Compose(*tp, o.perm)[3] == 3 && rw.Map(t->inputs[0]) >= 0) {
          o = {rw.Map(t->inputs[0]), Compose(*tp, o.perm)};
          at = t->inputs[0];
          folded = true;
        }
      }
      if (at >= 0 && o.perm[1] == 2 && !layout->heads[i][0] && layout->heads[i][1] < 0) {
        auto wider = HeadsOfAWiderValue(graph, u, rw, at);
        if (!wider.ok()) return wider.status();
        if (*wider) {
          o.value = (*wider)->first;
          attrs[ops::kAttentionHeadsAttrs[i]] =
              std::vector<int64_t>((*wider)->second.begin(), (*wider)->second.end());
          folded = true;
        }
      }
      SetPerm(attrs, static_cast<int>(i), o.perm);
      inputs.push_back(o.value);
    }
    // The output, where its one reader is a transpose keeping the head dim last.
    const int out = node.outputs[0];
    std::vector<std::string> names;
    for (int v : node.outputs) names.push_back(graph.values()[v].name);
    int transposed = -1;  // the reader's output, which the node now writes
    if (u.consumers[out].size() == 1 && !IsGraphOutput(graph, out)) {
      const Node* reader = &graph.nodes()[u.consumers[out][0]];
      auto rp = reader->op == "transpose" ? Perm4(*reader) : std::nullopt;
      if (rp && Compose(layout->perms[3], *rp)[3] == 3) {
        SetPerm(attrs, 3, Compose(layout->perms[3], *rp));
        transposed = reader->outputs[0];
        names[0] = graph.values()[transposed].name;
        skip[u.consumers[out][0]] = true;
        folded = true;
      }
    }
    if (!folded) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    auto made = rw.AddNode("attention", inputs, attrs, names[0], names);
    if (!made.ok()) return made.status();
    rw.SetMap(transposed >= 0 ? transposed : out, (*made)[0]);
    rw.SetMap(node.outputs[1], (*made)[1]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
