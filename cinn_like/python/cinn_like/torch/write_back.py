"""Inputs a graph writes, written back by one call: AOTAutograd keeps a graph's writes to its
inputs in the graph (keep_inference_input_mutations, set by the backend outside the CUDA-graph
mode) as `copy_(input, new value)` nodes after everything that reads the input; this module
turns them into one node calling `copy_inputs`, which PyTorch runs as one `_foreach_copy_`.

A training step of a CNN with BatchNorm writes each layer's running mean, variance and batch
count: 60 inputs of resnet18, each otherwise copied back by AOTAutograd's wrapper after the
graph, one Python call and one kernel launch apiece, the GPU idle meanwhile. The partitioner
counts the call as PyTorch's own work, not a fallback; the new values are the partitions'
outputs, which the kernels may allocate as one block (backend._pooled: nothing else reads them).
"""
import torch

aten = torch.ops.aten


def copy_inputs(targets, values):
    """Writes each of `values` into the input at the same position of `targets` (copy_'s
    casting rules); returns nothing."""
    torch._foreach_copy_(list(targets), list(values))


def is_write_back(node):
    return node.op == "call_function" and node.target is copy_inputs


def group_input_copies(gm):
    """Replaces gm's `copy_(placeholder, value)` nodes whose results nothing reads by one
    copy_inputs node where the last of them was; returns how many it replaced. A placeholder
    written twice (never, from AOTAutograd) keeps its copies as they are."""
    graph = gm.graph
    copies = [n for n in graph.nodes
              if n.op == "call_function" and n.target == aten.copy_.default and not n.kwargs
              and len(n.args) == 2 and isinstance(n.args[0], torch.fx.Node)
              and n.args[0].op == "placeholder" and isinstance(n.args[1], torch.fx.Node)
              and not n.users]
    targets = [n.args[0] for n in copies]
    if not copies or len(set(targets)) != len(targets):
        return 0
    # Moved to the last one's place: only if nothing between them reads what they write.
    nodes = list(graph.nodes)
    between = nodes[nodes.index(copies[0]):nodes.index(copies[-1]) + 1]
    if len(between) != len(copies):
        return 0
    with graph.inserting_after(copies[-1]):
        graph.call_function(copy_inputs, (tuple(targets), tuple(n.args[1] for n in copies)))
    for n in copies:
        graph.erase_node(n)
    graph.lint()
    gm.recompile()
    return len(copies)


def copied_only(gm):
    """The nodes whose only reader is a copy_inputs node: values that die once written back."""
    return {a for n in gm.graph.nodes if is_write_back(n) for a in n.args[1]
            if all(is_write_back(u) for u in a.users)}
