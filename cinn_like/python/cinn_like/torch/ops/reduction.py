"""Converters of the reductions: sum, mean, amax/amin, any, argmax/argmin, softmax and
log_softmax (half_to_float too), and cumsum."""
import torch

from ..registry import CONVERTERS, Unsupported, converts, no_rank0, pshape, val
from .common import iota

aten = torch.ops.aten


def _axes(dims, rank):
    if dims is None or len(dims) == 0:
        return list(range(rank))
    return sorted(d % rank for d in dims)


def _reduce(op_name):
    def conv(c, n):
        x = n.args[0]
        no_rank0(x)
        rank = val(x).dim()
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
        out = val(n)
        src = c.tensor(x, out.dtype if op_name in ("reduce_sum", "reduce_mean") else None)
        if out.dim() == 0:  # everything reduced: keep the dims, then shape [1]
            r = c.op(op_name, [src], {"axes": _axes(dims, rank), "keepdim": True})
            return c.op("reshape", [r], {"shape": [1]})
        return c.op(op_name, [src], {"axes": _axes(dims, rank), "keepdim": bool(keepdim)})
    return conv


CONVERTERS[aten.sum.dim_IntList] = _reduce("reduce_sum")
CONVERTERS[aten.mean.dim] = _reduce("reduce_mean")
CONVERTERS[aten.amax.default] = _reduce("reduce_max")
CONVERTERS[aten.amin.default] = _reduce("reduce_min")


@converts(aten.sum.default)
def _sum_all(c, n):
    no_rank0(n.args[0])
    x = c.tensor(n.args[0], val(n).dtype)
    r = c.op("reduce_sum", [x], {"axes": list(range(val(n.args[0]).dim())), "keepdim": True})
    return c.op("reshape", [r], {"shape": [1]})


@converts(aten.any.dim, aten.any.dims, aten.any.default)
def _any(c, n):
    """any: the maximum of the input as int32, then nonzero as bool."""
    x = n.args[0]
    no_rank0(x)
    rank = val(x).dim()
    dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    dims = [dims] if isinstance(dims, int) else dims
    keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
    m = c.op("reduce_max", [c.tensor(x, torch.int32)],
             {"axes": _axes(dims, rank), "keepdim": bool(keepdim) or val(n).dim() == 0})
    if val(n).dim() == 0:
        m = c.op("reshape", [m], {"shape": [1]})
    return c.op("cast", [m], {"dtype": "bool"})


@converts(aten.argmax.default, aten.argmin.default)
def _arg_extreme(c, n):
    x = n.args[0]
    no_rank0(x)
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    if dim is None:
        raise Unsupported("argmax/argmin over the flattened tensor")
    keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
    name = "argmax" if n.target == aten.argmax.default else "argmin"
    if val(n).dim() == 0:
        raise Unsupported("argmax/argmin to a rank-0 result")
    return c.op(name, [c.tensor(x)], {"axis": dim % val(x).dim(), "keepdim": bool(keepdim)})


@converts(aten._softmax.default, aten._log_softmax.default)
def _softmax(c, n):
    """half_to_float: a float16/bfloat16 input, a float32 result (computed in float32)."""
    x, dim = n.args[0], n.args[1]
    no_rank0(x)
    name = "softmax" if n.target == aten._softmax.default else "log_softmax"
    return c.op(name, [c.tensor(x, val(n).dtype)], {"axis": dim % val(x).dim()})


@converts(aten.cumsum.default)
def _cumsum(c, n):
    """out[.., i, ..] = sum over k <= i of x[.., k, ..]: x with a second copy of dim (k) after
    it, masked by k <= i, summed over k (work size^2 per line: meant for mask and position
    lengths, not for long scans)."""
    x, dim = n.args[0], n.args[1]
    no_rank0(x)
    out = val(n)
    shape = [int(s) for s in val(x).shape]
    rank = len(shape)
    dim %= rank
    size = shape[dim]
    xs = c.tensor(x, out.dtype)
    if size == 1:
        return c.op("reshape", [xs], {"shape": pshape(out)})
    spread = shape[:dim] + [1, size] + shape[dim + 1:]
    xb = c.op("reshape", [xs], {"shape": spread})
    i = iota(c, size, rank + 1, dim)
    k = iota(c, size, rank + 1, dim + 1)
    zero = c.tensor(0, out.dtype)
    masked = c.op("where", [c.op("less_equal", [k, i]), xb, zero])
    return c.op("reduce_sum", [masked], {"axes": [dim + 1], "keepdim": False})
