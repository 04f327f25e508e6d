"""Converters of the ops that view or overwrite part of a tensor: as_strided (where its input's
elements are dense, so storage positions name elements), as_strided_scatter (where the view
covers its whole input), diagonal, unfold, slice_scatter, diagonal_scatter and copy.

A Program holds every tensor contiguous in its logical order, while as_strided speaks of storage
positions. Where the input's strides (its fake tensor's, as eager lays it out) are a dense
permutation, the input transposed into storage order has storage positions as its row-major
positions; a view is then a reshape and transpose when its strides are the contiguous strides of
its sizes in some order, else one gather at the computed positions.
"""
import torch

from ..registry import CONVERTERS, Unsupported, converts, moves, no_rank0, pshape, val
from ..sizes import contiguous_strides
from .common import clamp_index, flat_gather, iota, linear_index, scalar, scaled

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


def _slice_bounds(size, start, end):
    """Python's clamping of a slice's start and end on a dim of `size`."""
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    return start, max(start, min(size, end + size if end < 0 else end))


@converts(aten.slice_scatter.default)
@moves
def _slice_scatter(c, n):
    """x with x[start:end:step] along dim replaced by src: src gathered along dim at
    (i - start) / step (clamped), kept where i is one of the slice's positions."""
    x, src = n.args[0], n.args[1]
    a = list(n.args) + [None] * 6
    dim = a[2] if a[2] is not None else n.kwargs.get("dim", 0)
    start = a[3] if a[3] is not None else n.kwargs.get("start")
    end = a[4] if a[4] is not None else n.kwargs.get("end")
    step = a[5] if a[5] is not None else n.kwargs.get("step", 1)
    no_rank0(x)
    xt = val(x)
    rank = xt.dim()
    dim %= rank
    size = int(xt.shape[dim])
    count = int(val(src).shape[dim])
    start, _ = _slice_bounds(size, start, end)
    s = c.tensor(src, xt.dtype)
    if count == size:
        return c.op("reshape", [s], {"shape": pshape(val(n))})
    if count == 0:
        return c.op("reshape", [c.tensor(x)], {"shape": pshape(val(n))})
    rel = c.op("sub", [iota(c, size, 1, 0), scalar(c, start)])  # i - start, along dim
    k = c.op("div", [rel, scalar(c, step)], {"rounding_mode": "floor"})
    at = c.op("gather", [s, clamp_index(c, k, count - 1)], {"axis": dim})
    inside = c.op("logical_and", [
        c.op("logical_and", [c.op("greater_equal", [rel, scalar(c, 0)]),
                             c.op("less", [rel, scalar(c, count * step)])]),
        c.op("equal", [c.op("mod", [rel, scalar(c, step)]), scalar(c, 0)])])
    shape = [1] * rank
    shape[dim] = size
    inside = c.op("reshape", [inside], {"shape": shape}) if rank > 1 else inside
    return c.op("where", [inside, at, c.tensor(x)])


def _diagonal_dims(n, t, first):
    """(offset, dim1, dim2, diagonal length) of a diagonal(_scatter) node, whose offset is
    argument `first`."""
    a = list(n.args) + [None] * 4
    offset = a[first] if a[first] is not None else n.kwargs.get("offset", 0)
    dim1 = a[first + 1] if a[first + 1] is not None else n.kwargs.get("dim1", 0)
    dim2 = a[first + 2] if a[first + 2] is not None else n.kwargs.get("dim2", 1)
    rank = t.dim()
    d1, d2 = dim1 % rank, dim2 % rank
    length = min(int(t.shape[d1]) + min(offset, 0), int(t.shape[d2]) - max(offset, 0))
    if length <= 0:
        raise Unsupported("empty diagonal")
    return offset, d1, d2, length


@converts(aten.diagonal.default)
def _diagonal(c, n):
    """x's elements at [.., i + max(-offset, 0), .., i + max(offset, 0), ..] (dims dim1,
    dim2), the other dims first and i last: one gather at the computed flat positions."""
    x = n.args[0]
    t = val(x)
    offset, d1, d2, length = _diagonal_dims(n, t, 1)
    xs = [int(s) for s in t.shape]
    strides = contiguous_strides(xs)
    rest = [d for d in range(len(xs)) if d not in (d1, d2)]
    out_shape = [xs[d] for d in rest] + [length]
    rank = len(out_shape)
    terms = [scaled(c, iota(c, xs[d], rank, j), strides[d]) for j, d in enumerate(rest)
             if xs[d] > 1]
    first = max(-offset, 0) * strides[d1] + max(offset, 0) * strides[d2]
    terms.append(c.op("add", [scaled(c, iota(c, length, rank, rank - 1), strides[d1] + strides[d2]),
                              scalar(c, first)]))
    flat = linear_index(c, terms, out_shape)
    return flat_gather(c, c.tensor(x), t.numel(), flat, out_shape, pshape(val(n)))


@converts(aten.diagonal_scatter.default)
def _diagonal_scatter(c, n):
    """x with its diagonal (offset, dim1, dim2) replaced by src: src gathered at each of x's
    positions (the other dims, then i = index along dim1 less max(-offset, 0), clamped),
    kept where index along dim2 less index along dim1 is the offset."""
    x, src = n.args[0], n.args[1]
    t = val(x)
    offset, d1, d2, length = _diagonal_dims(n, t, 2)
    xs = [int(s) for s in t.shape]
    rank = len(xs)
    rest = [d for d in range(rank) if d not in (d1, d2)]
    src_strides = contiguous_strides([xs[d] for d in rest] + [length])
    i1, i2 = iota(c, xs[d1], rank, d1), iota(c, xs[d2], rank, d2)
    k = clamp_index(c, c.op("sub", [i1, scalar(c, max(-offset, 0))]), length - 1)
    terms = [scaled(c, iota(c, xs[d], rank, d), src_strides[j]) for j, d in enumerate(rest)
             if xs[d] > 1] + [k]
    flat = linear_index(c, terms, xs)
    at = flat_gather(c, c.tensor(src, t.dtype), val(src).numel(), flat, xs, xs)
    on = c.op("equal", [c.op("sub", [i2, i1]), scalar(c, offset)])
    return c.op("where", [on, at, c.tensor(x)])


@converts(aten.unfold.default)
def _unfold(c, n):
    """Windows of `size` every `step` along dim, on a new last dim: one gather at
    [.., w * step + j, .., j] of each window w and element j."""
    x, dim, size, step = n.args[0], n.args[1], int(n.args[2]), int(n.args[3])
    t, out = val(x), val(n)
    if out.numel() == 0:
        raise Unsupported("unfold to an empty tensor")
    xs = pshape(t)
    dim %= len(xs)
    strides = contiguous_strides(xs)
    out_shape = [int(s) for s in out.shape]
    rank = len(out_shape)
    terms = [scaled(c, iota(c, out_shape[d], rank, d), strides[d] * (step if d == dim else 1))
             for d in range(len(xs)) if out_shape[d] > 1]
    if size > 1:
        terms.append(scaled(c, iota(c, size, rank, rank - 1), strides[dim]))
    if not terms:  # one element
        return c.op("reshape", [c.tensor(x)], {"shape": pshape(out)})
    flat = linear_index(c, terms, out_shape)
    return flat_gather(c, c.tensor(x), t.numel(), flat, out_shape, pshape(out))


@converts(aten.copy.default)
def _copy(c, n):
    """copy(x, src): src in x's dtype, broadcast to x's shape."""
    x, src = n.args[0], n.args[1]
    xt = val(x)
    s = c.tensor(src, xt.dtype)
    if list(val(src).shape) == list(xt.shape):
        return c.op("reshape", [s], {"shape": pshape(xt)})
    return c.op("broadcast_to", [s], {"shape": pshape(xt)})


def register_copy_variants():
    """The `<view>_copy` ops (view_copy, permute_copy, split_copy, unbind_copy, ...) compute
    what their view does: a Program never aliases, so each takes its view's converter. Run by
    the ops package once every family has registered its converters (ops/__init__.py), so the
    families' import order does not matter; a `_copy` op with a converter of its own keeps it.
    Each converted overload's `_copy` op is asked for by name (the aten namespace loads ops
    lazily: a listing of it holds only those used so far)."""
    for view, convert in list(CONVERTERS.items()):
        packet = getattr(view, "overloadpacket", None)
        if packet is None or getattr(view, "namespace", None) != "aten":
            continue
        try:
            copy = getattr(aten, f"{packet.__name__}_copy")
        except AttributeError:
            continue
        overload = getattr(copy, view._overloadname, None)
        if overload is not None and overload not in CONVERTERS:
            CONVERTERS[overload] = convert
