/// \file Constant attention masks: evaluated by the reference interpreter, dropped or made the
/// causal attribute where the rules of the header allow.
#include "hlir/pass/constant_attention_masks.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "hlir/ops/attention.h"
#include "hlir/pass/graph_rewriter.h"
#include "hlir/reference_interpreter.h"

namespace cinn_like::hlir {
namespace {

/// The largest mask term taken for a dropped key: float16's lowest finite value, the least
/// negative one Hugging Face writes for a masked key (torch.finfo(float16).min; it writes it in
/// bfloat16 masks too, where it rounds to -65536).
constexpr double kMaskedTerm = -65504.0;

/// A mask term: kept, dropped, or a bias (a float other than 0 and the drops).
enum class Term { kKeep, kDrop, kBias };

Term Classify(double v, DType t) {
  if (t == DType::kBool) return v != 0 ? Term::kKeep : Term::kDrop;
  if (v == 0) return Term::kKeep;
  if (v <= kMaskedTerm) return Term::kDrop;  // -inf too
  return Term::kBias;
}

/// What a constant mask amounts to for a node of `lq` queries, `lk` keys and attribute `causal`.
enum class Effect { kNone, kDrop, kCausal };

Effect MaskEffect(const HostTensor& m, int64_t lq, int64_t lk, bool causal) {
  const int rank = m.rank();
  const int64_t mi = rank >= 2 ? m.shape[rank - 2] : 1, mj = rank >= 1 ? m.shape[rank - 1] : 1;
  const bool full = mi == lq && mj == lk;
  // A broadcast dim covers every query (key): only "keeps all the attribute keeps" is decided,
  // and conservatively (kept everywhere).
  bool keeps_attr = true, is_causal = full;
  for (int64_t e = 0; e < m.size(); ++e) {
    const Term term = Classify(m.data[e], m.dtype);
    const int64_t j = full ? e % mj : 0, i = full ? e / mj % mi : 0;
    const bool attr = !full || !causal || j <= i;
    if (term == Term::kBias) {
      if (attr) return Effect::kNone;  // a bias on a kept score
      continue;
    }
    const bool kept = term == Term::kKeep;
    if (attr && !kept) keeps_attr = false;
    if ((attr && kept) != (j <= i)) is_causal = false;
    if (!keeps_attr && !is_causal) return Effect::kNone;
  }
  if (keeps_attr) return Effect::kDrop;
  return is_causal ? Effect::kCausal : Effect::kNone;
}

/// `v` before the broadcasts that make it: the attention reads a broadcast mask as its source
/// (PyTorch's CUDA attention expands a [B, 1, S, S] mask to [B, H, S, S] for the memory-efficient
/// kernel: 2^26 elements for Llama's 32 heads at batch 8 of 512 tokens, past the limit).
int Unbroadcast(const Graph& graph, int v) {
  for (int p = graph.values()[v].producer; p >= 0 && graph.nodes()[p].op == "broadcast_to";
       p = graph.values()[v].producer) {
    v = graph.nodes()[p].inputs[0];
  }
  return v;
}

class MaskEvaluator {
 public:
  /// Which values no graph input reaches, every value computing them static: one pass in node
  /// order (producers come first).
  MaskEvaluator(const Graph& graph, int64_t max_elements)
      : graph_(graph), max_elements_(max_elements), input_free_(graph.values().size(), false) {
    for (const Node& node : graph.nodes()) {
      bool free = true;
      for (int in : node.inputs) free = free && input_free_[in];
      for (int out : node.outputs)
        input_free_[out] = free && IsStatic(graph.values()[out].desc.shape);
    }
  }

  /// Value `v` computed by the reference interpreter where no graph input reaches it, every
  /// value computing it is static and they have at most max_elements elements together; else
  /// (or where the interpreter fails: an index out of range, say) nullopt.
  std::optional<HostTensor> Evaluate(int v) const {
    if (!input_free_[v]) return std::nullopt;
    std::set<int> nodes;  // the nodes computing v, in node order
    for (std::vector<int> stack{graph_.values()[v].producer}; !stack.empty();) {
      const int n = stack.back();
      stack.pop_back();
      if (!nodes.insert(n).second) continue;
      for (int in : graph_.nodes()[n].inputs) stack.push_back(graph_.values()[in].producer);
    }
    int64_t elements = 0;
    for (int n : nodes) {
      for (int out : graph_.nodes()[n].outputs) {
        elements += NumElements(graph_.values()[out].desc.shape);
      }
    }
    if (elements > max_elements_) return std::nullopt;
    Graph g;
    std::map<int, int> mapped;  // old value -> value of g
    for (int n : nodes) {
      const Node& node = graph_.nodes()[n];
      std::vector<int> inputs;
      for (int in : node.inputs) inputs.push_back(mapped.at(in));
      auto outs = g.AddNode(node.op, inputs, node.attrs, {});
      if (!outs.ok()) return std::nullopt;
      for (size_t k = 0; k < outs->size(); ++k) mapped[node.outputs[k]] = (*outs)[k];
    }
    if (!g.MarkOutput(mapped.at(v)).ok()) return std::nullopt;
    auto values = RunReference(g, {});
    if (!values.ok()) return std::nullopt;
    return std::move((*values)[0]);
  }

 private:
  const Graph& graph_;
  const int64_t max_elements_;
  std::vector<bool> input_free_;  // by value
};

}  // namespace

absl::StatusOr<Graph> SimplifyConstantAttentionMasks(const Graph& graph, int64_t max_elements) {
  MaskEvaluator evaluator(graph, max_elements);
  std::map<int, std::optional<HostTensor>> masks;  // evaluated once per mask value
  GraphRewriter rw(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.nodes()[n];
    const int slot = ops::AttentionMaskInput(node.op, node.attrs, node.inputs.size());
    Effect effect = Effect::kNone;
    auto causal = GetBool(node.attrs, "causal", node.op, false);
    if (slot >= 0 && causal.ok()) {
      const int mask = Unbroadcast(graph, node.inputs[slot]);
      if (!masks.count(mask)) masks[mask] = evaluator.Evaluate(mask);
      // The [B, H, L, D] operands, wherever they lie (attention's layout attributes).
      auto layout = ops::ReadAttentionLayout(node.attrs, node.op);
      const Shape& q_in = graph.values()[node.inputs[0]].desc.shape;
      const Shape& k_in = graph.values()[node.inputs[1]].desc.shape;
      const bool ranked = layout.ok() && q_in.size() == 4 && k_in.size() == 4;
      const Shape q = ranked ? ops::AttentionOperandShape(q_in, *layout, 0) : Shape{};
      const Shape k = ranked ? ops::AttentionOperandShape(k_in, *layout, 1) : Shape{};
      if (masks[mask] && ranked && IsStatic(q) && IsStatic(k)) {
        effect = MaskEffect(*masks[mask], q[2].value, k[2].value, *causal);
      }
    }
    if (effect == Effect::kNone) {
      absl::Status s = rw.CopyNode(n);
      if (!s.ok()) return s;
      continue;
    }
    std::vector<int> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (static_cast<int>(i) != slot) inputs.push_back(rw.Map(node.inputs[i]));
    }
    AttributeMap attrs = node.attrs;
    if (effect == Effect::kCausal) attrs["causal"] = true;
    std::vector<std::string> names;
    for (int v : node.outputs) names.push_back(graph.values()[v].name);
    auto made = rw.AddNode(node.op, inputs, attrs, node.op, names);
    if (!made.ok()) return made.status();
    for (size_t i = 0; i < made->size(); ++i) rw.SetMap(node.outputs[i], (*made)[i]);
  }
  return rw.Finish();
}

}  // namespace cinn_like::hlir
