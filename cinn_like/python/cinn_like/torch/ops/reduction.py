"""Converters of the reductions: sum, mean, amax/amin, any, argmax/argmin, softmax and
log_softmax."""
import torch

from ..registry import CONVERTERS, Unsupported, converts, no_rank0, val

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
    x, dim, half_to_float = n.args[0], n.args[1], n.args[2]
    no_rank0(x)
    if half_to_float:
        raise Unsupported("half_to_float softmax")
    name = "softmax" if n.target == aten._softmax.default else "log_softmax"
    return c.op(name, [c.tensor(x)], {"axis": dim % val(x).dim()})
