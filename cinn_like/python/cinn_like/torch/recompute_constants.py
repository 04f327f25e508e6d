"""Saved values that no input reaches, computed again in the backward instead of saved.

Hugging Face's models build their attention masks in the traced graph from positions (aranges
compared, a cumulative sum, gathers: masking_utils). The min-cut partitioner will not recompute a
cumsum or an index in the backward, so it saves the finished [B, 1, S, S] mask, and the backward
graph gets it as an input: cinn_like's pass that makes such a mask the attention's causal
attribute (hlir/pass/constant_attention_masks.h) then sees it in the forward only, and the
backward's fused attention gradient reads the mask on every tile. Here each saved tensor whose
computation reads no input of the forward (no placeholder, no random op, no attribute) is
computed again at the start of the backward, from a copy of those nodes, and no longer saved: a
mask then is a constant in both graphs. Such values cost nothing to recompute that saving them
did not (they are made from sizes alone), and the forward stores one tensor less.
"""
import torch
import torch.fx


def _input_free(node, memo):
    """Whether `node` is computed from constants alone: a call_function of a deterministic op
    whose inputs are all such nodes."""
    if node not in memo:
        target = node.target
        free = (node.op == "call_function" and
                torch.Tag.nondeterministic_seeded not in getattr(target, "tags", ()))
        memo[node] = free  # before the inputs: the graph is a DAG, this only shortens the walk
        memo[node] = free and all(_input_free(n, memo) for n in node.all_input_nodes)
    return memo[node]


def recompute_input_free(fw, bw, num_fwd_outputs):
    """Moves into `bw` the computation of each tensor that `fw` saves for it (its outputs from
    `num_fwd_outputs` on, read by `bw`'s placeholder of the same name and position) and that no
    input reaches; both graphs are recompiled. Returns how many saved values it moved."""
    output = next(iter(fw.graph.find_nodes(op="output")))
    outs = list(output.args[0])
    saved = outs[num_fwd_outputs:]
    placeholders = [n for n in bw.graph.nodes if n.op == "placeholder"]
    memo = {}
    moved = [k for k, s in enumerate(saved)
             if isinstance(s, torch.fx.Node) and isinstance(s.meta.get("val"), torch.Tensor)
             and k < len(placeholders) and placeholders[k].name == s.name and _input_free(s, memo)]
    if not moved:
        return 0
    # One copy of each node the moved values need, in the forward's order, before the backward's
    # first computation.
    needed = set()
    stack = [saved[k] for k in moved]
    while stack:
        n = stack.pop()
        if n not in needed:
            needed.add(n)
            stack.extend(n.all_input_nodes)
    copies = {}
    first = next(n for n in bw.graph.nodes if n.op != "placeholder")
    with bw.graph.inserting_before(first):
        for n in fw.graph.nodes:
            if n in needed:
                copies[n] = bw.graph.node_copy(n, lambda a: copies[a])
    for k in moved:
        placeholders[k].replace_all_uses_with(copies[saved[k]])
        bw.graph.erase_node(placeholders[k])
    kept = set(moved)
    output.args = (type(output.args[0])(o for i, o in enumerate(outs)
                                        if i < num_fwd_outputs or i - num_fwd_outputs not in kept),)
    for n in reversed(fw.graph.nodes):  # what only the moved values read
        if n in needed and not n.users:
            fw.graph.erase_node(n)
    fw.recompile()
    bw.recompile()
    return len(moved)
