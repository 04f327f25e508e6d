"""cinn_like_backend: the torch.compile backend. AOTAutograd traces the forward and backward
graphs in core aten (after decomposition); each is partitioned, each maximal supported
partition becomes a compiled Program run in place of its nodes, the rest runs in PyTorch.
"""
import operator

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from . import allocator, cache
from .kernel import compile_partition
from .ops import attention
from .partition import op_name, partition


def _target(sub):
    for n in sub.graph.nodes:
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            return "cuda" if v.device.type == "cuda" else "x86"
    return "x86"


def compile_graph(gm, example_inputs):
    """Partitions an aten GraphModule and compiles its supported partitions (fw and bw)."""
    cache.count("graphs")
    fused, support = partition(gm)
    for node in list(fused.graph.nodes):
        if node.op != "call_module" or not node.target.startswith("fused_"):
            continue
        sub = getattr(fused, node.target)
        ops = [n for n in sub.graph.nodes if n.op == "call_function"]
        target = _target(sub)
        if target == "cuda":
            allocator.install()
        try:
            kernel = compile_partition(sub, target)
        except Exception as e:  # noqa: BLE001 (any failure: the partition runs in PyTorch)
            cache.count("compile_failures")
            for n in ops:
                cache.record_fallback(op_name(n), f"partition failed to compile: {e}")
            cache.count("ops_fallback", len(ops))
            continue
        setattr(fused, node.target, kernel)
        cache.count("partitions")
        cache.count("ops_compiled", len(ops))
    cache.count("ops_fallback", sum(1 for n, r in support.verdicts.items()
                                    if r is not None and n.target is not operator.getitem))
    fused.recompile()
    return make_boxed_func(fused)


def _decompositions():
    try:
        from torch._decomp import core_aten_decompositions  # noqa: PLC0415
        table = core_aten_decompositions()
    except ImportError:  # older PyTorch
        from torch._inductor.decomposition import select_decomp_table  # noqa: PLC0415
        table = select_decomp_table()
    # Scaled dot-product attention stays whole: it becomes the fused attention op.
    for op in attention.KEEP_WHOLE:
        table.pop(op, None)
    return table


_aot = None


def cinn_like_backend(gm, example_inputs, **kwargs):
    """torch.compile(model, backend=cinn_like_backend) or backend="cinn_like"."""
    global _aot
    if _aot is None:
        _aot = aot_autograd(fw_compiler=compile_graph, bw_compiler=compile_graph,
                            decompositions=_decompositions())
    return _aot(gm, example_inputs, **kwargs)
