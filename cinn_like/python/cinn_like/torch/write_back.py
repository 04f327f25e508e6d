"""Inputs a graph writes, written back by few calls: AOTAutograd keeps a graph's writes to its
inputs in the graph (keep_inference_input_mutations, set by the backend outside the CUDA-graph
mode) as `copy_(input, new value)` nodes after everything that reads the input; this module
turns them into one node per (dtype, device) pair of target and value calling `copy_inputs`,
which PyTorch runs as one `_foreach_copy_` (one kernel where the dtypes agree; BatchNorm's
float statistics and int64 batch count are two groups).

A training step of a CNN with BatchNorm writes each layer's running mean, variance and batch
count: 60 inputs of resnet18, each otherwise copied back by AOTAutograd's wrapper after the
graph, one Python call and one kernel launch apiece, the GPU idle meanwhile. The partitioner
counts the calls as PyTorch's own work, not fallbacks; the new values are the partitions'
outputs, which the kernels may allocate in a block of their own (backend._pooled).
"""
import torch

aten = torch.ops.aten


def copy_inputs(targets, values):
    """Writes each of `values` into the input at the same position of `targets` (copy_'s
    casting rules); returns nothing."""
    torch._foreach_copy_(list(targets), list(values))


def is_write_back(node):
    return node.op == "call_function" and node.target is copy_inputs


def _kind(node):
    v = node.meta.get("val")
    return (v.dtype, v.device) if isinstance(v, torch.Tensor) else None


def group_input_copies(gm):
    """Replaces gm's `copy_(placeholder, value)` nodes by copy_inputs nodes where the last of
    them was, one per (dtype, device) of target and value; a copy's result (its target, which a
    graph that writes an input and returns it reads) becomes the target. Returns how many copies
    it replaced: none where a placeholder is written twice (never, from AOTAutograd), a value is
    itself a target, or a node between the copies reads a target or a copy (the copies could
    not move to the last one's place)."""
    graph = gm.graph
    copies = [n for n in graph.nodes
              if n.op == "call_function" and n.target == aten.copy_.default and not n.kwargs
              and len(n.args) == 2 and isinstance(n.args[0], torch.fx.Node)
              and n.args[0].op == "placeholder" and isinstance(n.args[1], torch.fx.Node)]
    targets = [n.args[0] for n in copies]
    if not copies or len(set(targets)) != len(targets) or any(n.args[1] in targets
                                                              for n in copies):
        return 0
    nodes = list(graph.nodes)
    moved = set(copies) | set(targets)
    for n in nodes[nodes.index(copies[0]):nodes.index(copies[-1])]:
        if n not in copies and any(a in moved for a in n.all_input_nodes):
            return 0
    groups = {}
    for n in copies:
        groups.setdefault((_kind(n.args[0]), _kind(n.args[1])), []).append(n)
    at = copies[-1]
    for members in groups.values():
        with graph.inserting_after(at):
            at = graph.call_function(copy_inputs, (tuple(n.args[0] for n in members),
                                                   tuple(n.args[1] for n in members)))
    for n in copies:
        n.replace_all_uses_with(n.args[0])
        graph.erase_node(n)
    graph.lint()
    gm.recompile()
    return len(copies)


def copied_only(gm):
    """The values written back that the graph does not return: they die once written (the
    backend pools those no node outside their partition reads)."""
    out = next((n for n in reversed(gm.graph.nodes) if n.op == "output"), None)
    returned = set(out.all_input_nodes) if out is not None else set()
    return {a for n in gm.graph.nodes if is_write_back(n) for a in n.args[1]
            if a not in returned}
