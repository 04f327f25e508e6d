"""Converters of the ops that read or write elements by index: embedding and its backward,
gather, advanced indexing (index.Tensor), index_put (accumulating: the backward of embedding and
indexing) and scatter of a value (the backward of nll_loss).

Reads become one gather of the flattened tensor at int64 positions computed with arange
arithmetic; accumulating writes become index_add. Out-of-range indices never read or write
outside a buffer (gather clamps, index_add skips), where PyTorch would raise.
"""
import math

import torch

from ..registry import Unsupported, converts, dtype_name, no_rank0, pshape, val
from .common import I64, flat_gather, iota, linear_index, scalar, scaled, wrap_negative

aten = torch.ops.aten


def _strides(shape):
    s, out = 1, []
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


@converts(aten.embedding.default)
def _embedding(c, n):
    weight, indices = n.args[0], n.args[1]
    w = val(weight)
    if w.dim() != 2:
        raise Unsupported(f"embedding of a rank-{w.dim()} weight")
    k = max(val(indices).numel(), 1)
    idx = c.op("reshape", [c.tensor(indices, I64)], {"shape": [k]})
    rows = c.op("gather", [c.tensor(weight), idx], {"axis": 0})
    return c.op("reshape", [rows], {"shape": pshape(val(n))})


@converts(aten.embedding_dense_backward.default)
def _embedding_backward(c, n):
    """The weight's gradient: each id's gradient row added at its row (index_add), none for
    padding_idx."""
    grad, indices, num_weights, padding_idx, scale_by_freq = n.args[:5]
    if scale_by_freq:
        raise Unsupported("embedding backward with scale_grad_by_freq")
    g = val(grad)
    dim = int(g.shape[-1])
    k = max(val(indices).numel(), 1)
    idx = c.op("reshape", [c.tensor(indices, I64)], {"shape": [k]})
    rows = c.op("reshape", [c.tensor(grad)], {"shape": [k, dim]})
    if padding_idx is not None and padding_idx >= 0:
        pad = c.op("equal", [c.op("reshape", [idx], {"shape": [k, 1]}), scalar(c, padding_idx)])
        rows = c.op("where", [pad, c.tensor(0, g.dtype), rows])
    zeros = c.op("fill", [], {"shape": [int(num_weights), dim], "value": 0.0,
                              "dtype": dtype_name(g.dtype)})
    return c.op("index_add", [zeros, idx, rows], {"axis": 0})


@converts(aten.gather.default)
def _gather(c, n):
    """out[i] = x[i with dim replaced by index[i]]: one gather at the flat positions."""
    x, dim, index = n.args[0], n.args[1], n.args[2]
    no_rank0(x, index)
    xs, ishape = list(val(x).shape), list(val(index).shape)
    rank = len(xs)
    dim %= rank
    strides = _strides(xs)
    terms = []
    for d in range(rank):
        if d == dim:
            terms.append(scaled(c, wrap_negative(c, c.tensor(index, I64), xs[d]), strides[d]))
        elif ishape[d] > 1:
            terms.append(scaled(c, iota(c, ishape[d], rank, d), strides[d]))
    flat = linear_index(c, terms, ishape)
    return flat_gather(c, c.tensor(x), math.prod(xs), flat, ishape, pshape(val(n)))


def _indexed(n, indices):
    """(dims indexed, the index nodes, their broadcast shape) of an index/index_put node."""
    dims = [d for d, i in enumerate(indices) if i is not None]
    nodes = [indices[d] for d in dims]
    for i in nodes:
        if not isinstance(i, torch.fx.Node):
            raise Unsupported("index by a non-tensor")
        if val(i).dtype == torch.bool:
            raise Unsupported("index by a boolean mask (a data-dependent shape)")
    shape = list(torch.broadcast_shapes(*[val(i).shape for i in nodes]))
    return dims, nodes, shape


def _flat_position(c, x_shape, dims, nodes, shape):
    """The int64 row of each index tuple in x viewed as [prod(x_shape[dims]), rest...]."""
    sizes = [x_shape[d] for d in dims]
    strides = _strides(sizes)
    terms = [scaled(c, wrap_negative(c, c.tensor(i, I64), s), st)
             for i, s, st in zip(nodes, sizes, strides)]
    return linear_index(c, terms, shape or [1]), math.prod(sizes)


@converts(aten.index.Tensor)
def _index(c, n):
    """x[i0, i1, ...] with tensor indices (None entries keep their dim): the indexed dims moved
    first and merged, one gather of rows, then PyTorch's placement of the result dims (at the
    first indexed dim when the indexed dims are adjacent, else first)."""
    x, indices = n.args[0], list(n.args[1])
    no_rank0(x)
    xs = list(val(x).shape)
    rank = len(xs)
    indices += [None] * (rank - len(indices))
    dims, nodes, shape = _indexed(n, indices)
    rest = [d for d in range(rank) if d not in dims]
    xt = c.tensor(x)
    if dims + rest != list(range(rank)):
        xt = c.op("transpose", [xt], {"perm": dims + rest})
    flat, rows = _flat_position(c, xs, dims, nodes, shape)
    rest_shape = [xs[d] for d in rest]
    xt = c.op("reshape", [xt], {"shape": [rows] + rest_shape})
    k = max(math.prod(shape), 1)
    g = c.op("gather", [xt, c.op("reshape", [flat], {"shape": [k]})], {"axis": 0})
    out = c.op("reshape", [g], {"shape": (shape + rest_shape) or [1]})
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    if adjacent and dims[0] > 0 and rest_shape:
        before = dims[0]  # rest dims before the indexed ones
        s, r = len(shape), len(rest_shape)
        perm = list(range(s, s + before)) + list(range(s)) + list(range(s + before, s + r))
        out = c.op("transpose", [out], {"perm": perm})
    return out


@converts(aten.index_put.default)
def _index_put(c, n):
    """x[i0, i1, ...] += values (accumulate=True) on the leading dims: an index_add of rows."""
    x, indices, values = n.args[0], list(n.args[1]), n.args[2]
    accumulate = n.args[3] if len(n.args) > 3 else n.kwargs.get("accumulate", False)
    if not accumulate:
        raise Unsupported("index_put without accumulate (which write wins is unspecified)")
    no_rank0(x)
    xs = list(val(x).shape)
    dims, nodes, shape = _indexed(n, indices)
    if dims != list(range(len(dims))):
        raise Unsupported("index_put on dims other than the leading ones")
    rest_shape = xs[len(dims):]
    flat, rows = _flat_position(c, xs, dims, nodes, shape)
    k = max(math.prod(shape), 1)
    dt = val(x).dtype
    v = c.tensor(values, dt)
    v = c.op("broadcast_to", [v], {"shape": (shape + rest_shape) or [1]})
    v = c.op("reshape", [v], {"shape": [k] + rest_shape})
    base = c.op("reshape", [c.tensor(x)], {"shape": [rows] + rest_shape})
    out = c.op("index_add", [base, c.op("reshape", [flat], {"shape": [k]}), v], {"axis": 0})
    return c.op("reshape", [out], {"shape": pshape(val(n))})


@converts(aten.scatter.value)
def _scatter_value(c, n):
    """out = x, with `value` at x[i with dim replaced by index[i]] (index as large as x except
    along dim): where(some index along dim names this position, value, x)."""
    x, dim, index, value = n.args[0], n.args[1], n.args[2], n.args[3]
    if n.kwargs.get("reduce") is not None:
        raise Unsupported("scatter with reduce")
    no_rank0(x, index)
    xs, ishape = list(val(x).shape), list(val(index).shape)
    rank = len(xs)
    dim %= rank
    if any(ishape[d] != xs[d] for d in range(rank) if d != dim):
        raise Unsupported(f"scatter with an index {ishape} smaller than x {xs} off dim {dim}")
    idx = wrap_negative(c, c.tensor(index, I64), xs[dim])
    if ishape[dim] == 1:
        hit = c.op("equal", [idx, iota(c, xs[dim], rank, dim)])
    else:  # [.., k, 1, ..] == [.., 1, size, ..], any over k
        split = ishape[:dim + 1] + [1] + ishape[dim + 1:]
        eq = c.op("equal", [c.op("reshape", [idx], {"shape": split}),
                            iota(c, xs[dim], rank + 1, dim + 1)])
        m = c.op("reduce_max", [c.op("cast", [eq], {"dtype": "int32"})],
                 {"axes": [dim], "keepdim": False})
        hit = c.op("cast", [m], {"dtype": "bool"})
    dt = val(n).dtype
    return c.op("where", [hit, c.tensor(value, dt), c.tensor(x, dt)])
