"""Converters of the shape ops: views and reshapes, transposes, expand, repeat, flip, concat,
slice, select, split, index_select and constant padding."""
import torch

from ..registry import Unsupported, converts, dtype_name, moves, no_rank0, pshape, val
from .common import iota, scalar

aten = torch.ops.aten


@converts(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
@moves
def _reshape(c, n):
    return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


def _same(c, n):
    """n's input as n's value, for the ops that leave a rank-0 tensor as it is."""
    return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


@converts(aten.permute.default)
@moves
def _permute(c, n):
    rank = val(n.args[0]).dim()
    if rank == 0:
        return _same(c, n)
    return c.op("transpose", [c.tensor(n.args[0])], {"perm": [d % rank for d in n.args[1]]})


@converts(aten.t.default)
@moves
def _t(c, n):
    if val(n.args[0]).dim() <= 1:
        return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})
    return c.op("transpose", [c.tensor(n.args[0])], {"perm": [1, 0]})


@converts(aten.transpose.int)
@moves
def _transpose(c, n):
    rank = val(n.args[0]).dim()
    if rank == 0:
        return _same(c, n)
    perm = list(range(rank))
    a, b = n.args[1] % rank, n.args[2] % rank
    perm[a], perm[b] = perm[b], perm[a]
    return c.op("transpose", [c.tensor(n.args[0])], {"perm": perm})


@converts(aten.expand.default)
@moves
def _expand(c, n):
    return c.op("broadcast_to", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


@converts(aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
@moves
def _unsqueeze(c, n):
    # A reshape to the result's shape: the same for every rank, rank 0 included.
    return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


@converts(aten.repeat.default)
def _repeat(c, n):
    """x tiled repeats[d] times along each dim d (x's shape padded with leading ones): a
    broadcast axis of repeats[d] before each dim, merged with it."""
    x, repeats = n.args[0], [int(r) for r in n.args[1]]
    out = val(n)
    if out.numel() == 0:
        raise Unsupported("repeat to an empty tensor")
    shape = [1] * (len(repeats) - val(x).dim()) + [int(s) for s in val(x).shape]
    if all(r == 1 for r in repeats):
        return _same(c, n)
    split = [v for s in shape for v in (1, s)]
    spread = [v for r, s in zip(repeats, shape) for v in (r, s)]
    y = c.op("reshape", [c.tensor(x)], {"shape": split})
    y = c.op("broadcast_to", [y], {"shape": spread})
    return c.op("reshape", [y], {"shape": pshape(out)})


@converts(aten.flip.default)
@moves
def _flip(c, n):
    """x reversed along each of dims: a gather at size - 1 - arange(size) per dim."""
    x, t = n.args[0], val(n.args[0])
    src = y = c.tensor(x)
    for d in sorted({d % max(t.dim(), 1) for d in n.args[1]}):
        size = int(t.shape[d]) if t.dim() else 1
        if size <= 1:
            continue
        rev = c.op("sub", [scalar(c, size - 1), iota(c, size, 1, 0)])
        y = c.op("gather", [y, rev], {"axis": d})
    return c.op("reshape", [y], {"shape": pshape(val(n))}) if y == src else y


@converts(aten.cat.default)
@moves
def _cat(c, n):
    xs = [x for x in n.args[0] if not (isinstance(x, torch.fx.Node) and val(x).numel() == 0)]
    no_rank0(*xs)
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
    dt = val(n).dtype
    if len(xs) == 1:
        return c.op("reshape", [c.tensor(xs[0], dt)], {"shape": pshape(val(n))})
    return c.op("concat", [c.tensor(x, dt) for x in xs], {"axis": dim % val(n).dim()})


@converts(aten.slice.Tensor)
@moves
def _slice(c, n):
    x = n.args[0]
    no_rank0(x)
    shape = val(x).shape
    dim = (n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)) % len(shape)
    start = n.args[2] if len(n.args) > 2 else n.kwargs.get("start")
    end = n.args[3] if len(n.args) > 3 else n.kwargs.get("end")
    step = n.args[4] if len(n.args) > 4 else n.kwargs.get("step", 1)
    size = int(shape[dim])
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    return c.op("slice", [c.tensor(x)], {"axes": [dim], "starts": [start], "ends": [end],
                                          "steps": [step]})


@converts(aten.select.int)
@moves
def _select(c, n):
    x, dim, index = n.args
    no_rank0(x)
    shape = val(x).shape
    dim %= len(shape)
    index %= int(shape[dim])
    s = c.op("slice", [c.tensor(x)], {"axes": [dim], "starts": [index], "ends": [index + 1]})
    return c.op("reshape", [s], {"shape": pshape(val(n))})


@converts(aten.split_with_sizes.default, aten.split.Tensor)
def _split(c, n):
    x = n.args[0]
    no_rank0(x)
    shape = val(x).shape
    dim = (n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)) % len(shape)
    outs = val(n)
    sizes = [int(t.shape[dim]) for t in outs]
    # Empty parts are zero-size fills; the others split x.
    kept = [s for s in sizes if s]
    if len(kept) == 1:
        parts = [c.op("reshape", [c.tensor(x)], {"shape": pshape(outs[sizes.index(kept[0])])})]
    else:
        parts = c.op("split", [c.tensor(x)], {"sections": kept, "axis": dim},
                     num_outputs=len(kept))
    it = iter(parts)
    return [next(it) if s else c.op("fill", [], {"shape": pshape(t), "value": 0.0,
                                                 "dtype": dtype_name(t.dtype)})
            for s, t in zip(sizes, outs)]




@converts(aten.narrow_copy.default)
def _narrow_copy(c, n):
    x, dim, start, length = n.args[:4]
    no_rank0(x)
    size = int(val(x).shape[dim])
    dim %= val(x).dim()
    if start < 0:
        start += size
    return c.op("slice", [c.tensor(x)], {"axes": [dim], "starts": [start],
                                          "ends": [start + length]})


@converts(aten.unbind_copy.int)
def _unbind_copy(c, n):
    """unbind as a split into size-1 parts, each reshaped without the dim."""
    x = n.args[0]
    no_rank0(x)
    dim = (n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)) % val(x).dim()
    outs = val(n)
    if len(outs) == 1:
        return [c.op("reshape", [c.tensor(x)], {"shape": pshape(outs[0])})]
    parts = c.op("split", [c.tensor(x)], {"sections": [1] * len(outs), "axis": dim},
                 num_outputs=len(outs))
    return [c.op("reshape", [p], {"shape": pshape(t)}) for p, t in zip(parts, outs)]


@converts(aten.index_select.default)
def _index_select(c, n):
    x, dim, index = n.args
    if val(x).dim() == 0:  # index holds one 0 (or -1): x itself
        return c.op("reshape", [c.tensor(x)], {"shape": pshape(val(n))})
    k = max(val(index).numel(), 1)
    idx = c.op("reshape", [c.tensor(index)], {"shape": [k]})
    return c.op("gather", [c.tensor(x), idx], {"axis": dim % val(x).dim()})


@converts(aten.constant_pad_nd.default)
def _pad(c, n):
    x, pad = n.args[0], n.args[1]
    value = n.args[2] if len(n.args) > 2 else n.kwargs.get("value", 0)
    if val(x).dim() == 0:  # pad is empty
        return _same(c, n)
    rank = val(x).dim()
    shape = pshape(val(x))
    xs, paddings = c.tensor(x), [0] * (2 * rank)
    axes, starts, ends = [], [], []
    for i in range(len(pad) // 2):  # pad lists the last dim first; negative amounts crop
        d = rank - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        paddings[2 * d], paddings[2 * d + 1] = max(before, 0), max(after, 0)
        if before < 0 or after < 0:
            axes.append(d)
            starts.append(max(-before, 0))
            ends.append(shape[d] - max(-after, 0))
    if axes:
        xs = c.op("slice", [xs], {"axes": axes, "starts": starts, "ends": ends})
    if not any(paddings):
        return c.op("reshape", [xs], {"shape": pshape(val(n))})
    return c.op("pad", [xs], {"paddings": paddings, "value": float(value)})
