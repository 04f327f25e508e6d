"""Converters of the ops that make tensors from scalars: full, full_like, scalar_tensor, arange,
and the empty family (uninitialised memory: any value is right, zeros are written)."""
import torch

from ..registry import Unsupported, converts, dtype_name, pshape, val

aten = torch.ops.aten


@converts(aten.full.default)
def _full(c, n):
    out = val(n)
    value = n.args[1]
    if isinstance(value, torch.fx.Node):
        raise Unsupported("full with a tensor value")
    return _fill(c, pshape(out), value, out.dtype)


@converts(aten.full_like.default)
def _full_like(c, n):
    out = val(n)
    if isinstance(n.args[1], torch.fx.Node):
        raise Unsupported("full_like with a tensor value")
    return _fill(c, pshape(out), n.args[1], out.dtype)


@converts(aten.scalar_tensor.default)
def _scalar_tensor(c, n):
    return _fill(c, [1], n.args[0], val(n).dtype)


def _fill(c, shape, value, dtype):
    return c.op("fill", [], {"shape": shape, "value": float(value), "dtype": dtype_name(dtype)})


@converts(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(c, n):
    args = list(n.args)
    if n.target == aten.arange.default:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else n.kwargs.get("step", 1)
    dtype = dtype_name(val(n).dtype)
    if any(isinstance(a, torch.fx.Node) for a in (start, end, step)):
        # A symbolic length (arange(s0)): the Program takes it from the value's metadata.
        if isinstance(start, torch.fx.Node) or isinstance(step, torch.fx.Node):
            raise Unsupported("symbolic shape: arange with a symbolic start or step")
        return c.op("arange", [], {"start": float(start), "step": float(step),
                                   "size": pshape(val(n)), "dtype": dtype})
    return c.op("arange", [], {"start": float(start), "end": float(end), "step": float(step),
                               "dtype": dtype})


@converts(aten.empty.memory_format, aten.empty_permuted.default, aten.empty_strided.default,
          aten.new_empty.default, aten.new_empty_strided.default, aten.empty_like.default)
def _empty(c, n):
    """Decompositions allocate with empty and then write every element (pad.circular's copies,
    the losses' empty_permuted); the Program allocates it as zeros."""
    out = val(n)
    return _fill(c, pshape(out), 0, out.dtype)
