"""Saved values that no input reaches, computed again in the backward instead of saved.

Hugging Face's models build their attention masks in the traced graph from positions (aranges
compared, a cumulative sum, gathers: masking_utils). The min-cut partitioner will not recompute
the cumsum in the backward, so it saves the finished [B, 1, S, S] mask, and the backward graph
gets it as an input: cinn_like's pass that makes such a mask the attention's causal attribute
(hlir/pass/constant_attention_masks.h) then sees it in the forward only, and the backward's fused
attention gradient reads the mask on every tile. Here each saved tensor whose computation reads
no input of the forward (no placeholder, no random op, no attribute, no symbol) is computed again
at the start of the backward, from a copy of those nodes, and no longer saved: a mask then is a
constant in both graphs, and where cinn_like turns it into the causal attribute its computation
is dead code. A value computed again costs its kernels in the backward where saving it cost a
store and a load; such values are made from sizes alone (positions, masks, tables), and one of
floats may differ from the forward's in its last bits where the two graphs compute it apart.
"""
import torch
import torch.fx


def _input_free_nodes(graph):
    """The nodes of `graph` computed from constants alone: call_functions of deterministic ops,
    with no symbol in their value, whose inputs are all such nodes (one pass in graph order)."""
    free = set()
    for node in graph.nodes:
        val = node.meta.get("val")
        if (node.op == "call_function" and
                torch.Tag.nondeterministic_seeded not in getattr(node.target, "tags", ()) and
                not (isinstance(val, torch.Tensor) and _symbolic(val)) and
                all(n in free for n in node.all_input_nodes)):
            free.add(node)
    return free


def _symbolic(t):
    return any(isinstance(d, torch.SymInt) for d in (*t.shape, *t.stride()))


def recompute_input_free(fw, bw, num_fwd_outputs):
    """Moves into `bw` the computation of each tensor that `fw` saves for it (its outputs from
    `num_fwd_outputs` on, read by `bw`'s placeholder of the same name) and that no input
    reaches; both graphs are recompiled. Returns how many saved values it moved."""
    output = next(iter(fw.graph.find_nodes(op="output")))
    outs = list(output.args[0])
    placeholders = {n.name: n for n in bw.graph.nodes if n.op == "placeholder"}
    free = _input_free_nodes(fw.graph)
    moved = [k for k in range(num_fwd_outputs, len(outs))
             if outs[k] in free and isinstance(outs[k].meta.get("val"), torch.Tensor)
             and outs[k].name in placeholders]
    if not moved:
        return 0
    # One copy of each node the moved values need, in the forward's order, before the backward's
    # first computation.
    needed = set()
    stack = [outs[k] for k in moved]
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
        placeholder = placeholders[outs[k].name]
        placeholder.replace_all_uses_with(copies[outs[k]])
        bw.graph.erase_node(placeholder)
    gone = set(moved)
    output.args = (type(output.args[0])(o for k, o in enumerate(outs) if k not in gone),)
    for key, value in list(output.meta.items()):  # per-output metadata (descs, stack traces)
        if isinstance(value, (list, tuple)) and len(value) == len(outs):
            output.meta[key] = type(value)(v for k, v in enumerate(value) if k not in gone)
    for n in reversed(fw.graph.nodes):  # what only the moved values read
        if n in needed and not n.users:
            fw.graph.erase_node(n)
    fw.recompile()
    bw.recompile()
    return len(moved)
