"""Random ops read their seed as a graph value: the rewrite that gives them one.

cinn_like draws random numbers in generated kernels from the counter-based generator Philox
(the Program op random_uniform, hlir/ops/random.cc): the element at index i of a random op is a
function of (seed, stream, i). Before partitioning, each random op of an aten graph (dropout,
rand_like, rand, bernoulli with a probability) becomes a call of one of the functions below,
which take the seed as an argument, so the partitioner sees the seed as an input of the op and
the converters (ops/random.py) as a Program input; each op gets its own stream. The seed is one
node per device at the top of the graph, `philox_seed`, which runs in PyTorch at every call: it
draws an int64 below 2^53 from PyTorch's generator of the device (as Inductor's seeds do), so
`torch.manual_seed` makes two runs draw the same numbers and each call draws new ones. The
partitioner counts it as PyTorch's own work, not a fallback.

Where cinn_like does not take a random op (an unsupported dtype, say), the function runs the
original aten op in PyTorch, with PyTorch's generator, as without the rewrite. The backward of
dropout reads the forward's mask (AOTAutograd saves it), so it never draws again.

cinn_like's attention with dropout (attention_dropout.py) takes its seed and stream as
arguments: its call gets the graph's seed and a stream, and its eager form draws from them as
the compiled kernel does; its backward draws the same mask again from the seed and stream the
forward returned.
"""
import torch

from . import attention_dropout
from .philox import SEED_LIMIT

aten = torch.ops.aten
_ATTENTION = torch.ops.cinn_like.attention_dropout.default


def philox_seed(device):
    """A fresh seed for the random ops of one graph call on `device`: an int64 [1] tensor."""
    return torch.randint(0, SEED_LIMIT, (1,), dtype=torch.int64, device=device)


def dropout(x, p, train, seed, stream):
    """aten.native_dropout(x, p, train) -> (out, mask), seeded by the graph's seed."""
    return aten.native_dropout.default(x, p, train)


def rand_like(x, seed, stream, dtype=None):
    """aten.rand_like(x, dtype=dtype): uniforms on [0, 1) of x's shape."""
    return aten.rand_like.default(x, dtype=dtype)


def rand(size, seed, stream, dtype=None, device=None):
    """aten.rand(size, dtype=dtype, device=device)."""
    return aten.rand.default(size, dtype=dtype, device=device)


def bernoulli_p(x, p, seed, stream):
    """aten.bernoulli.p(x, p): 1 with probability p, else 0, in x's dtype and shape."""
    return aten.bernoulli.p(x, p)


def _rewritten(node, seed, stream):
    """(the function, its args, its kwargs) standing for random op `node`, or None."""
    a, kw = node.args, node.kwargs
    if node.target == aten.native_dropout.default:
        return dropout, (a[0], a[1], a[2], seed, stream), {}
    if node.target == aten.rand_like.default and set(kw) <= {"dtype", "layout", "device",
                                                            "pin_memory", "memory_format"}:
        return rand_like, (a[0], seed, stream), {"dtype": kw.get("dtype")}
    if node.target == aten.rand.default and set(kw) <= {"dtype", "layout", "device",
                                                       "pin_memory"}:
        return rand, (a[0], seed, stream), {"dtype": kw.get("dtype"), "device": kw.get("device")}
    if node.target == aten.bernoulli.p and not kw:
        return bernoulli_p, (a[0], a[1], seed, stream), {}
    if node.target == _ATTENTION:
        args = attention_dropout.arguments(node)
        if args["seed"] is not None:  # a caller's own seed: its draws stay its own
            return None
        return _ATTENTION, tuple(args.values())[:7] + (seed, stream), {}
    return None


def _first_value(node):
    """The node's tensor value (the first of several), or None."""
    v = node.meta.get("val")
    v = v[0] if isinstance(v, (tuple, list)) else v
    return v if isinstance(v, torch.Tensor) else None


def add_seeds(gm):
    """Rewrites gm's random ops to read a seed node (one per device, placed before the first
    random op of that device) and a stream of their own; returns how many were rewritten."""
    graph = gm.graph
    seeds, stream = {}, 0
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        value = _first_value(node)
        if value is None or _rewritten(node, None, 0) is None:
            continue
        device = value.device
        seed = seeds.get(device)
        if seed is None:
            mode = getattr(value, "fake_mode", None)
            if mode is None:
                continue  # no fake tensors to describe the seed with: the op stays as it is
            with graph.inserting_before(node):
                seed = graph.call_function(philox_seed, (str(device),))
            with mode:
                seed.meta["val"] = torch.empty((1,), dtype=torch.int64, device=device)
            seeds[device] = seed
        fn, args, kwargs = _rewritten(node, seed, stream)
        stream += 1
        with graph.inserting_before(node):
            new = graph.call_function(fn, args, kwargs)
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
    if stream:
        graph.lint()
        gm.recompile()
    return stream
