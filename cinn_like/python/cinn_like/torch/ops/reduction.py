"""Converters of the reductions: sum, mean, prod, amax/amin, max/min (with indices; bool through
uint8), any, argmax/argmin, var/std/var_mean, softmax and log_softmax (half_to_float too); the
cumulative ops are scans (ops/scan.py).

A rank-0 tensor is shape [1] in a Program: reducing it (over dim 0, -1 or everything) reduces
that one axis, so rank-0 inputs need no special case beyond the axes."""
import math

import torch

from ..registry import CONVERTERS, Unsupported, converts, pshape, val

aten = torch.ops.aten


def _arg(n, i, name, default=None):
    return n.args[i] if len(n.args) > i else n.kwargs.get(name, default)


def _axes(x, dims):
    """The sorted axes of node x that reducing `dims` (an int, a list, or None or [] for all)
    reduces; a rank-0 tensor is its Program shape [1], reduced over axis 0."""
    rank = val(x).dim()
    if rank == 0:
        return [0]
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted({d % rank for d in dims})


def _reduced(c, op_name, src, axes, keepdim, out):
    """op_name of src over axes, shaped as the node's value `out` (rank 0: shape [1])."""
    if out.dim() == 0 or keepdim:
        r = c.op(op_name, [src], {"axes": axes, "keepdim": True})
        return c.op("reshape", [r], {"shape": pshape(out)}) if out.dim() == 0 else r
    return c.op(op_name, [src], {"axes": axes, "keepdim": False})


ACCUMULATING = ("reduce_sum", "reduce_mean", "reduce_prod")  # computed in the result's dtype


def _bool_as_uint8(c, x):
    """x's Program name, a bool tensor as uint8 (reduce_max/min and argmax/argmin refuse bool:
    false < true keeps its order as 0 < 1); whether it was cast."""
    if val(x).dtype == torch.bool:
        return c.tensor(x, torch.uint8), True
    return c.tensor(x), False


def _back_to_bool(c, name, cast):
    return c.op("cast", [name], {"dtype": "bool"}) if cast else name


def _reduce(op_name, dims_at=1, keepdim_at=2):
    """A reduction node (x, dims, keepdim, ...); dims_at None: over everything."""
    def conv(c, n):
        x, out = n.args[0], val(n)
        dims = None if dims_at is None else _arg(n, dims_at, "dim")
        keepdim = False if keepdim_at is None else bool(_arg(n, keepdim_at, "keepdim", False))
        if op_name in ACCUMULATING:
            src, cast = c.tensor(x, out.dtype), False
        else:
            src, cast = _bool_as_uint8(c, x)
        return _back_to_bool(c, _reduced(c, op_name, src, _axes(x, dims), keepdim, out), cast)
    return conv


CONVERTERS[aten.sum.dim_IntList] = _reduce("reduce_sum")
CONVERTERS[aten.sum.default] = _reduce("reduce_sum", None, None)
CONVERTERS[aten.mean.dim] = _reduce("reduce_mean")
CONVERTERS[aten.mean.default] = _reduce("reduce_mean", None, None)
CONVERTERS[aten.prod.dim_int] = _reduce("reduce_prod")
CONVERTERS[aten.prod.default] = _reduce("reduce_prod", None, None)
CONVERTERS[aten.amax.default] = _reduce("reduce_max")
CONVERTERS[aten.amin.default] = _reduce("reduce_min")
CONVERTERS[aten.max.default] = _reduce("reduce_max", None, None)
CONVERTERS[aten.min.default] = _reduce("reduce_min", None, None)


@converts(aten.any.dim, aten.any.dims, aten.any.default)
def _any(c, n):
    """any: the maximum of the input as int32, then nonzero as bool."""
    x = n.args[0]
    dims = _arg(n, 1, "dim")
    keepdim = bool(_arg(n, 2, "keepdim", False))
    m = _reduced(c, "reduce_max", c.tensor(x, torch.int32), _axes(x, dims), keepdim, val(n))
    return c.op("cast", [m], {"dtype": "bool"})


def _arg_reduce(c, n, name, x, dim, keepdim):
    """argmax/argmin of x along dim (None: of x flattened), shaped as n's index output."""
    t, out = val(x), val(n)
    out = out[1] if isinstance(out, (list, tuple)) else out
    src = _bool_as_uint8(c, x)[0]
    if t.dim() == 0 or dim is None:  # over x flattened: one row of numel elements
        flat = c.op("reshape", [src], {"shape": [max(t.numel(), 1)]})
        r = c.op(name, [flat], {"axis": 0, "keepdim": True})
        return c.op("reshape", [r], {"shape": pshape(out)})
    return c.op(name, [src], {"axis": dim % t.dim(), "keepdim": bool(keepdim)})


@converts(aten.argmax.default, aten.argmin.default)
def _arg_extreme(c, n):
    name = "argmax" if n.target == aten.argmax.default else "argmin"
    return _arg_reduce(c, n, name, n.args[0], _arg(n, 1, "dim"), _arg(n, 2, "keepdim", False))


@converts(aten.max.dim, aten.min.dim)
def _extreme_dim(c, n):
    """(values, indices) along dim: the first extreme element's index, NaN counting as
    extreme, as PyTorch picks; bool through uint8."""
    x, dim = n.args[0], n.args[1]
    keepdim = bool(_arg(n, 2, "keepdim", False))
    is_max = n.target == aten.max.dim
    src, cast = _bool_as_uint8(c, x)
    values = _reduced(c, "reduce_max" if is_max else "reduce_min", src, _axes(x, dim),
                      keepdim, val(n)[0])
    return [_back_to_bool(c, values, cast), _arg_reduce(c, n, "argmax" if is_max else "argmin", x, dim, keepdim)]


def _variance(c, n):
    """(var, mean) over n's dims with n's correction: the mean, then the squared deviations
    summed and divided by max(0, count - correction) (0/0 is NaN where PyTorch's is)."""
    x = n.args[0]
    dims = _arg(n, 1, "dim")
    correction = n.kwargs.get("correction")
    correction = 1 if correction is None else correction
    keepdim = bool(n.kwargs.get("keepdim", False))
    t = val(x)
    out = val(n)
    out = out[0] if isinstance(out, (list, tuple)) else out
    if not t.dtype.is_floating_point:
        raise Unsupported(f"var of a {t.dtype} tensor")
    axes = _axes(x, dims)
    shape = pshape(t)
    xs = c.tensor(x)
    mean = c.op("reduce_mean", [xs], {"axes": axes, "keepdim": True})
    d = c.op("sub", [xs, mean])
    reduced = [shape[a] for a in axes]
    if not all(isinstance(e, int) for e in reduced):
        # A symbolic count: the population variance is a mean; a correction needs the count.
        if correction != 0:
            raise Unsupported(f"var with correction {correction} over the symbolic extents "
                              f"{reduced}")
        var = _reduced(c, "reduce_mean", c.op("mul", [d, d]), axes, keepdim, out)
        return var, c.op("reshape", [mean], {"shape": pshape(out)})
    count = math.prod(reduced)
    ss = _reduced(c, "reduce_sum", c.op("mul", [d, d]), axes, keepdim, out)
    var = c.op("div", [ss, c.tensor(float(max(0, count - correction)), t.dtype)])
    return var, c.op("reshape", [mean], {"shape": pshape(out)})


@converts(aten.var.correction)
def _var(c, n):
    return _variance(c, n)[0]


@converts(aten.std.correction)
def _std(c, n):
    return c.op("sqrt", [_variance(c, n)[0]])


@converts(aten.var_mean.correction)
def _var_mean(c, n):
    return list(_variance(c, n))


@converts(aten._softmax.default, aten._log_softmax.default)
def _softmax(c, n):
    """half_to_float: a float16/bfloat16 input, a float32 result (computed in float32)."""
    x, dim = n.args[0], n.args[1]
    name = "softmax" if n.target == aten._softmax.default else "log_softmax"
    return c.op(name, [c.tensor(x, val(n).dtype)], {"axis": dim % max(val(x).dim(), 1)})
