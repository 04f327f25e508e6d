"""A fused partition (an fx GraphModule of supported aten nodes) as one compiled Program, and
the module that runs it in place of the partition.

The Program has static shapes (the fake tensors'); rank-0 tensors travel as shape [1]. At
run time inputs are checked (device, dtype, shape), made contiguous when they are not (views:
transposes, expands, chunks), outputs are allocated with torch.empty (PyTorch's allocator) and
the entry runs on PyTorch's current stream for CUDA; an output the graph says is strided
otherwise (a transpose it returns) is copied into those strides.
"""
import ctypes

import torch
import torch.utils.dlpack

from .. import _dlpack
from .._lib import check, lib
from . import cache, ops  # noqa: F401 (ops registers the converters)
from .registry import DTYPES, Converter, convert_node, pshape, val


def build_program(sub):
    """(ProgramBuilder, inputs [(name, tensor meta)], outputs [("prog", name, meta) |
    ("input", index, None) | ("none",)]) of a fused partition GraphModule."""
    c = Converter()
    inputs = []
    outputs = []
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for i, p in enumerate(placeholders):
        c.add_input(p, f"in{i}")
        inputs.append(val(p))
    names = {}
    for n in sub.graph.nodes:
        if n.op == "call_function":
            c.env[n] = convert_node(c, n)  # replays the partitioner's conversion
        elif n.op == "output":
            res = n.args[0]
            res = list(res) if isinstance(res, (list, tuple)) else [res]
            for r in res:
                if r is None:
                    outputs.append(("none",))
                elif r.op == "placeholder":
                    outputs.append(("input", placeholders.index(r), None))
                else:
                    name = c.env[r]
                    if name not in names:
                        names[name] = len(names)
                        c.b.output(name)
                    outputs.append(("prog", names[name], val(r)))
    return c.b, inputs, outputs, len(names)


def _dense(t):
    """True when t's strides are a permutation of a row-major layout (no overlap, no gap):
    strides a fresh tensor can be given."""
    dims = sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1)
    expect = 1
    for st, sz in dims:
        if st != expect:
            return False
        expect *= sz
    return True


class CinnLikeKernel(torch.nn.Module):
    def __init__(self, module, inputs, outputs, num_prog_outputs, single):
        super().__init__()
        self.module = module
        self.inputs = inputs
        self.outputs = outputs
        self.num_prog_outputs = num_prog_outputs
        self.single = single
        self.device = inputs[0].device if inputs else next(
            o[2].device for o in outputs if o[0] == "prog")
        self.out_specs = [None] * num_prog_outputs
        # Outputs the graph gives other strides than row-major (a transposed or channels-last
        # result): the kernel writes row-major, the result is copied into those strides.
        self.restride = {}
        for o in outputs:
            if o[0] == "prog":
                self.out_specs[o[1]] = (tuple(o[2].shape), o[2].dtype)
                if not o[2].is_contiguous() and _dense(o[2]):
                    self.restride[o[1]] = tuple(o[2].stride())

    def _prepare(self, i, t, meta):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"cinn_like.torch: input {i} is {type(t).__name__}, expected a tensor")
        if t.dtype != meta.dtype and t.is_floating_point() and meta.dtype.is_floating_point \
                and torch.promote_types(t.dtype, meta.dtype) == meta.dtype:
            # An op left to PyTorch whose eager kernel disagrees with its own meta function
            # (CPU batch norm returns bfloat16 running statistics its meta says are float32):
            # the graph was traced, and compiled, for the meta's dtype. Only a widening, which
            # loses nothing; anything else is refused below.
            t = t.to(meta.dtype)
        if t.device != meta.device or t.dtype != meta.dtype or tuple(t.shape) != tuple(meta.shape):
            raise ValueError(f"cinn_like.torch: input {i} is {t.dtype}{list(t.shape)} on "
                             f"{t.device}, the kernel was compiled for {meta.dtype}"
                             f"{list(meta.shape)} on {meta.device}")
        if not t.is_contiguous():
            t = t.contiguous()
        return t.reshape(1) if t.dim() == 0 else t

    def forward(self, *args):
        ins = [self._prepare(i, t, m) for i, (t, m) in enumerate(zip(args, self.inputs))]
        outs = [torch.empty(shape or (1,), dtype=dt, device=self.device)
                for shape, dt in self.out_specs]
        keep = []
        tensors = ins + outs
        ptrs = (ctypes.c_void_p * len(tensors))()
        for k, t in enumerate(tensors):
            cap = torch.utils.dlpack.to_dlpack(t)  # no stream handshake: we run on its stream
            keep.append(cap)
            ptrs[k] = _dlpack._get_pointer(cap, b"dltensor")
        stream = None
        if self.device.type == "cuda":
            stream = ctypes.c_void_p(torch.cuda.current_stream(self.device).cuda_stream)
        rc = lib.cinn_like_call(self.module._fn, ptrs, len(tensors), stream)
        check(rc, "cinn_like.torch kernel")
        results = []
        for o in self.outputs:
            if o[0] == "none":
                results.append(None)
            elif o[0] == "input":
                results.append(args[o[1]])
            else:
                t = outs[o[1]]
                if o[1] in self.restride:
                    t = torch.empty_strided(t.shape, self.restride[o[1]], dtype=t.dtype,
                                            device=t.device).copy_(t)
                results.append(t.reshape(()) if o[2].dim() == 0 else t)
        return results[0] if self.single else tuple(results)


def compile_partition(sub, target):
    """A CinnLikeKernel for the fused partition `sub`, or raises (CinnLikeError, Unsupported)."""
    b, inputs, outputs, n = build_program(sub)
    if n == 0:
        raise ValueError("partition computes nothing")
    module = cache.get_module(b.to_json(), target)
    out_node = next(x for x in sub.graph.nodes if x.op == "output")
    single = not isinstance(out_node.args[0], (list, tuple))
    return CinnLikeKernel(module, inputs, outputs, n, single)


__all__ = ["compile_partition", "CinnLikeKernel", "DTYPES", "pshape"]
