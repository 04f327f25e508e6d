"""Converters of the ops that view or overwrite part of a tensor: as_strided (where its input's
elements are dense, so storage positions name elements), as_strided_scatter (where the view
covers its whole input), slice_scatter and copy.

A Program holds every tensor contiguous in its logical order, while as_strided speaks of storage
positions. Where the input's strides (its fake tensor's, as eager lays it out) are a dense
permutation, the input transposed into storage order has storage positions as its row-major
positions; a view is then a reshape and transpose when its strides are the contiguous strides of
its sizes in some order, else one gather at the computed positions.
"""
import torch

from ..registry import Unsupported, converts, no_rank0, pshape, val
from .common import flat_gather, iota, linear_index, scalar

aten = torch.ops.aten


def _storage_order(t):
    """A permutation of t's dims that lays them in storage order, when t's elements are dense
    (fill numel consecutive storage positions); else None."""
    big = sorted((d for d in range(t.dim()) if t.shape[d] > 1), key=lambda d: -t.stride(d))
    expect = 1
    for d in reversed(big):
        if t.stride(d) != expect:
            return None
        expect *= int(t.shape[d])
    return big + [d for d in range(t.dim()) if t.shape[d] <= 1]


def _in_storage_order(c, x):
    """(x transposed into storage order, its shape, the permutation used)."""
    t = val(x)
    perm = _storage_order(t)
    if perm is None:
        raise Unsupported(f"as_strided of a tensor whose strides {list(t.stride())} are not "
                          f"dense for its shape {list(t.shape)}")
    name = c.tensor(x)
    if perm != list(range(t.dim())):
        name = c.op("transpose", [name], {"perm": perm})
    return name, [int(t.shape[d]) for d in perm], perm


def _view_args(n, x):
    size, stride = [int(s) for s in n.args[1]], [int(s) for s in n.args[2]]
    offset = n.args[3] if len(n.args) > 3 else n.kwargs.get("storage_offset")
    t = val(x)
    rel = 0 if offset is None else int(offset) - int(t.storage_offset())
    numel = t.numel()
    last = rel + sum((s - 1) * st for s, st in zip(size, stride) if s > 0)
    if rel < 0 or last >= max(numel, 1) or any(st < 0 for st in stride):
        raise Unsupported(f"as_strided (size {size}, stride {stride}, offset {offset}) reaches "
                          f"outside its input's {numel} elements")
    return size, stride, rel


def _as_view(size, stride, rel, numel):
    """The output dims that move (size > 1, stride > 0) in storage order, when the view is a
    reshape and transpose of all numel elements; else None."""
    moving = [d for d in range(len(size)) if size[d] > 1 and stride[d] > 0]
    order = sorted(moving, key=lambda d: -stride[d])
    expect = 1
    for d in reversed(order):
        if stride[d] != expect:
            return None
        expect *= size[d]
    return order if rel == 0 and expect == numel else None


@converts(aten.as_strided.default)
def _as_strided(c, n):
    x = n.args[0]
    src, _, _ = _in_storage_order(c, x)
    size, stride, rel = _view_args(n, x)
    numel = val(x).numel()
    order = _as_view(size, stride, rel, numel)
    out_shape = pshape(val(n))
    if order is None:  # a gather of the positions rel + sum(i_d * stride_d)
        rank = max(len(size), 1)
        terms = [scalar(c, rel)] + [
            c.op("mul", [iota(c, size[d], rank, d), scalar(c, stride[d])])
            for d in range(len(size)) if size[d] > 1 and stride[d] > 0]
        flat = linear_index(c, terms, size or [1])
        return flat_gather(c, src, numel, flat, size, out_shape)
    y = c.op("reshape", [src], {"shape": [size[d] for d in order] or [1]})
    moving = sorted(order)
    perm = [order.index(d) for d in moving]
    if perm != list(range(len(perm))):
        y = c.op("transpose", [y], {"perm": perm})
    y = c.op("reshape", [y], {"shape": [size[d] if d in moving else 1
                                        for d in range(len(size))] or [1]})
    if any(size[d] > 1 and stride[d] == 0 for d in range(len(size))):
        y = c.op("broadcast_to", [y], {"shape": out_shape})
    return y


@converts(aten.as_strided_scatter.default)
def _as_strided_scatter(c, n):
    """x with the view (size, stride, offset) overwritten by src: where the view covers all of
    x, src laid back into x's layout."""
    x, src = n.args[0], n.args[1]
    size = [int(s) for s in n.args[2]]
    stride = [int(s) for s in n.args[3]]
    offset = n.args[4] if len(n.args) > 4 else n.kwargs.get("storage_offset")
    t = val(x)
    rel = 0 if offset is None else int(offset) - int(t.storage_offset())
    perm = _storage_order(t)
    order = _as_view(size, stride, rel, t.numel())
    overlapping = any(sz > 1 and st == 0 for sz, st in zip(size, stride))
    if perm is None or order is None or overlapping:
        raise Unsupported("as_strided_scatter into part of its input or of non-dense strides")
    moving = sorted(order)
    s = c.op("reshape", [c.tensor(src, t.dtype)], {"shape": [size[d] for d in moving] or [1]})
    back = [moving.index(d) for d in order]  # into storage order
    if back != list(range(len(back))):
        s = c.op("transpose", [s], {"perm": back})
    s = c.op("reshape", [s], {"shape": [int(t.shape[d]) for d in perm] or [1]})
    inverse = [perm.index(d) for d in range(t.dim())]
    if inverse != list(range(t.dim())):
        s = c.op("transpose", [s], {"perm": inverse})
    return c.op("reshape", [s], {"shape": pshape(val(n))})


@converts(aten.slice_scatter.default)
def _slice_scatter(c, n):
    """x with x[start:end] along dim replaced by src: src padded to x's shape, then a where."""
    x, src = n.args[0], n.args[1]
    a = list(n.args) + [None] * 6
    dim = a[2] if a[2] is not None else n.kwargs.get("dim", 0)
    start = a[3] if a[3] is not None else n.kwargs.get("start")
    end = a[4] if a[4] is not None else n.kwargs.get("end")
    step = a[5] if a[5] is not None else n.kwargs.get("step", 1)
    no_rank0(x)
    xt = val(x)
    if step != 1:
        raise Unsupported(f"slice_scatter with step {step}")
    if xt.dtype == torch.bool:
        raise Unsupported("slice_scatter of a bool tensor")
    rank = xt.dim()
    dim %= rank
    size = int(xt.shape[dim])
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    s = c.tensor(src, xt.dtype)
    if end - start == size:
        return c.op("reshape", [s], {"shape": pshape(val(n))})
    pads = [0] * (2 * rank)
    pads[2 * dim], pads[2 * dim + 1] = start, size - end
    padded = c.op("pad", [s], {"paddings": pads, "value": 0.0})
    i = iota(c, size, rank, dim)
    inside = c.op("logical_and", [c.op("greater_equal", [i, scalar(c, start)]),
                                  c.op("less", [i, scalar(c, end)])])
    return c.op("where", [inside, padded, c.tensor(x)])


@converts(aten.copy.default)
def _copy(c, n):
    """copy(x, src): src in x's dtype, broadcast to x's shape."""
    x, src = n.args[0], n.args[1]
    xt = val(x)
    s = c.tensor(src, xt.dtype)
    if list(val(src).shape) == list(xt.shape):
        return c.op("reshape", [s], {"shape": pshape(xt)})
    return c.op("broadcast_to", [s], {"shape": pshape(xt)})

