"""Converters of the pairwise distances: _cdist_forward and _cdist_backward (torch.cdist),
_pdist_forward and _pdist_backward (nn.functional.pdist), as PyTorch's CPU kernels compute
them (dist, the distance of two tensors, is in nn.py).

The direct form reduces the p-norm of the broadcast difference [.., P, R, M] over M (work
P * R * M); for p = 2 where PyTorch uses matrix products (compute_mode 1, or the default with
more than 25 rows), it is PyTorch's: [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped at 0, its
square root. pdist's pairs i < j are read from the N x N distances at row-major pair positions
(the pair k's row is the count of rows starting at or before k)."""
import math

import torch

from ..registry import Unsupported, acc_dtype, converts, dtype_name, pshape, val
from .common import I64, flat_gather, iota, scalar

aten = torch.ops.aten

MAX_DIST_WORK = 1 << 24  # P * R * M differences, at most


def _pnorm(c, d, p, axis, dt):
    """The p-norm of the differences d over axis (p = 0 counts the nonzero ones)."""
    r = {"axes": [axis], "keepdim": False}
    m = c.op("abs", [d])
    if p == math.inf:
        return c.op("reduce_max", [m], r)
    if p == 0:
        nz = c.op("not_equal", [d, c.tensor(0.0, dt)])
        return c.op("reduce_sum", [c.op("cast", [nz], {"dtype": dtype_name(dt)})], r)
    if p == 1:
        return c.op("reduce_sum", [m], r)
    if p == 2:
        return c.op("sqrt", [c.op("reduce_sum", [c.op("mul", [d, d])], r)])
    return c.op("pow", [c.op("reduce_sum", [c.op("pow", [m, c.tensor(p, dt)])], r),
                        c.tensor(1.0 / p, dt)])


def _operands(n, x1, x2):
    """(batch shape, P, R, M) of a cdist node, the batches broadcast."""
    s1, s2 = [int(s) for s in val(x1).shape], [int(s) for s in val(x2).shape]
    batch = [int(s) for s in torch.broadcast_shapes(s1[:-2], s2[:-2])]
    return batch, s1[-2], s2[-2], s1[-1]


def _spread(c, x, batch, shape, dt):
    """x ([..., rows, M]) at batch + shape, its own batch dims aligned right."""
    s = [int(v) for v in val(x).shape]
    own = [1] * (len(batch) - len(s[:-2])) + s[:-2]
    return c.op("reshape", [c.tensor(x, dt)], {"shape": own + shape})


def _direct(c, x1, x2, p, batch, rows1, rows2, m, dt):
    """[batch.., P, R]: the p-norms of x1's rows against x2's."""
    if max(math.prod(batch), 1) * rows1 * rows2 * m > MAX_DIST_WORK:
        raise Unsupported(f"cdist: {rows1} x {rows2} rows of {m} exceed {MAX_DIST_WORK} "
                          "differences")
    d = c.op("sub", [_spread(c, x1, batch, [rows1, 1, m], dt),
                     _spread(c, x2, batch, [1, rows2, m], dt)])
    return _pnorm(c, d, p, len(batch) + 2, dt)


def _euclid_mm(c, x1, x2, batch, rows1, rows2, m, dt):
    """PyTorch's _euclidean_dist: one matrix product of the padded operands."""
    b = max(math.prod(batch), 1)
    a = c.op("broadcast_to", [_spread(c, x1, batch, [rows1, m], dt)], {"shape": batch + [rows1, m]})
    z = c.op("broadcast_to", [_spread(c, x2, batch, [rows2, m], dt)], {"shape": batch + [rows2, m]})
    a = c.op("reshape", [a], {"shape": [b, rows1, m]})
    z = c.op("reshape", [z], {"shape": [b, rows2, m]})
    na = c.op("reduce_sum", [c.op("mul", [a, a])], {"axes": [2], "keepdim": True})
    nz = c.op("reduce_sum", [c.op("mul", [z, z])], {"axes": [2], "keepdim": True})
    one = lambda r: c.op("fill", [], {"shape": [b, r, 1], "value": 1.0,  # noqa: E731
                                      "dtype": dtype_name(dt)})
    a = c.op("concat", [c.op("mul", [a, c.tensor(-2.0, dt)]), na, one(rows1)], {"axis": 2})
    z = c.op("concat", [z, one(rows2), nz], {"axis": 2})
    prod = c.op("matmul", [a, z], {"transpose_x": False, "transpose_y": True})
    out = c.op("sqrt", [c.op("maximum", [prod, c.tensor(0.0, dt)])])
    return c.op("reshape", [out], {"shape": batch + [rows1, rows2]})


@converts(aten._cdist_forward.default)
def _cdist_forward(c, n):
    x1, x2, p = n.args[:3]
    mode = n.args[3] if len(n.args) > 3 else n.kwargs.get("compute_mode")
    mode = 0 if mode is None else mode
    out = val(n)
    batch, rows1, rows2, m = _operands(n, x1, x2)
    if m == 0 or not out.dtype.is_floating_point:
        raise Unsupported(f"cdist of rows of {m} {out.dtype} elements")
    dt = acc_dtype(out.dtype)
    p = float(p)
    if p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25))):
        r = _euclid_mm(c, x1, x2, batch, rows1, rows2, m, dt)
    else:
        r = _direct(c, x1, x2, p, batch, rows1, rows2, m, dt)
    r = c.op("reshape", [r], {"shape": pshape(out)})
    return c.op("cast", [r], {"dtype": dtype_name(out.dtype)}) if dt != out.dtype else r


def _pair_gradient(c, d, g, dist, p, dt):
    """Each pair's term of x1's gradient, PyTorch's CPU formulas: d the differences [.., P, R,
    M], g and dist [.., P, R, 1]."""
    f = lambda v: c.tensor(float(v), dt)  # noqa: E731
    zero = f(0)
    sign = c.op("sign", [d])
    m = c.op("abs", [d])
    at_zero = c.op("equal", [dist, zero])
    if p == 1:
        return c.op("mul", [sign, g])
    if p == math.inf:
        return c.op("where", [c.op("equal", [m, dist]), c.op("mul", [sign, g]), zero])
    if p == 2:
        t = c.op("div", [c.op("mul", [g, d]), dist])
    elif p < 2:
        t = c.op("div", [c.op("mul", [c.op("mul", [sign, c.op("pow", [m, f(p - 1)])]), g]),
                         c.op("pow", [dist, f(p - 1)])])
        if p < 1:
            t = c.op("where", [c.op("equal", [d, zero]), zero, t])
    else:
        t = c.op("div", [c.op("mul", [c.op("mul", [d, c.op("pow", [m, f(p - 2)])]), g]),
                         c.op("pow", [dist, f(p - 1)])])
    return c.op("where", [at_zero, zero, t])


@converts(aten._cdist_backward.default)
def _cdist_backward(c, n):
    """x1's gradient: per row of x1, the sum over x2's rows of each pair's term."""
    grad, x1, x2, p, dist = n.args[:5]
    out = val(n)
    batch, rows1, rows2, m = _operands(n, x1, x2)
    p = float(p)
    if [int(s) for s in val(x1).shape] != batch + [rows1, m] or list(val(grad).shape) != batch + [
            rows1, rows2] or 0 in batch + [rows1, rows2, m]:
        raise Unsupported("cdist backward with broadcast batches or no elements")
    dt = acc_dtype(out.dtype)
    if p == 0:
        return c.op("fill", [], {"shape": pshape(out), "value": 0.0,
                                 "dtype": dtype_name(out.dtype)})
    if max(math.prod(batch), 1) * rows1 * rows2 * m > MAX_DIST_WORK:
        raise Unsupported(f"cdist backward: {rows1} x {rows2} rows of {m} exceed {MAX_DIST_WORK}")
    d = c.op("sub", [_spread(c, x1, batch, [rows1, 1, m], dt),
                     _spread(c, x2, batch, [1, rows2, m], dt)])
    col = lambda t: c.op("reshape", [c.tensor(t, dt)], {"shape": batch + [rows1, rows2, 1]})  # noqa: E731
    t = _pair_gradient(c, d, col(grad), col(dist), p, dt)
    r = c.op("reduce_sum", [t], {"axes": [len(batch) + 1], "keepdim": False})
    return c.op("cast", [r], {"dtype": dtype_name(out.dtype)}) if dt != out.dtype else r


def _pair_rows(c, rows, pairs):
    """(i, j) int64 [pairs] of pdist's pairs i < j in row-major order: row i starts at pair
    i * N - i * (i + 1) / 2."""
    i = iota(c, rows, 2, 1)  # [1, N]
    start = c.op("sub", [c.op("mul", [i, scalar(c, rows)]),
                         c.op("div", [c.op("mul", [i, c.op("add", [i, scalar(c, 1)])]), scalar(c, 2)],
                              {"rounding_mode": "floor"})])
    k = iota(c, pairs, 2, 0)  # [K, 1]
    row = c.op("sub", [c.op("reduce_sum", [c.op("cast", [c.op("less_equal", [start, k])],
                                                 {"dtype": "int64"})],
                            {"axes": [1], "keepdim": True}), scalar(c, 1)])
    at = c.op("reshape", [flat_gather(c, start, rows, row, [pairs, 1], [pairs, 1])], {"shape": [pairs, 1]})
    col = c.op("add", [c.op("sub", [k, at]), c.op("add", [row, scalar(c, 1)])])
    return row, col


@converts(aten._pdist_forward.default)
def _pdist_forward(c, n):
    """The distances of x's rows i < j, in row-major pair order (the direct p-norm)."""
    x, p = n.args[0], float(n.args[1] if len(n.args) > 1 else n.kwargs.get("p", 2.0))
    out = val(n)
    rows, m = (int(s) for s in val(x).shape)
    pairs = out.numel()
    if m == 0 or pairs == 0 or not out.dtype.is_floating_point:
        raise Unsupported(f"pdist of {rows} rows of {m} {out.dtype} elements")
    if pairs * m > MAX_DIST_WORK:
        raise Unsupported(f"pdist: {pairs} pairs of {m} exceed {MAX_DIST_WORK} differences")
    dt = acc_dtype(out.dtype)
    row, col = _pair_rows(c, rows, pairs)
    xs = c.tensor(x, dt)
    pick = lambda r: c.op("gather", [xs, c.op("reshape", [r], {"shape": [pairs]})], {"axis": 0})  # noqa: E731
    r = _pnorm(c, c.op("sub", [pick(row), pick(col)]), p, 1, dt)
    return c.op("cast", [r], {"dtype": dtype_name(out.dtype)}) if dt != out.dtype else r


@converts(aten._pdist_backward.default)
def _pdist_backward(c, n):
    """x's gradient: each pair's term added at its first row and subtracted at its second."""
    grad, x, p, dist = n.args[:4]
    p = float(p)
    out = val(n)
    rows, m = (int(s) for s in val(x).shape)
    pairs = val(grad).numel()
    if m == 0:
        raise Unsupported(f"pdist backward of {rows} rows of {m}")
    dt = acc_dtype(out.dtype)
    zeros = c.op("fill", [], {"shape": [rows, m], "value": 0.0, "dtype": dtype_name(dt)})
    if p == 0 or pairs == 0:  # no pair (one row): no gradient
        return zeros if dt == out.dtype else c.op("cast", [zeros], {"dtype": dtype_name(out.dtype)})
    row, col = _pair_rows(c, rows, pairs)
    row, col = (c.op("reshape", [t], {"shape": [pairs]}) for t in (row, col))
    xs = c.tensor(x, dt)
    d = c.op("sub", [c.op("gather", [xs, row], {"axis": 0}), c.op("gather", [xs, col], {"axis": 0})])
    col1 = lambda t: c.op("reshape", [c.tensor(t, dt)], {"shape": [pairs, 1]})  # noqa: E731
    t = _pair_gradient(c, d, col1(grad), col1(dist), p, dt)
    g = c.op("index_add", [zeros, row, t], {"axis": 0})
    g = c.op("index_add", [g, col, c.op("neg", [t])], {"axis": 0})
    return c.op("cast", [g], {"dtype": dtype_name(out.dtype)}) if dt != out.dtype else g
