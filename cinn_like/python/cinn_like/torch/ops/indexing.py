"""Converters of the ops that read or write elements by index: embedding and its backward,
gather, advanced indexing (index.Tensor), index_put and put (overwriting or accumulating),
masked_scatter and its backward (positions from a running count of the mask),
scatter (of a tensor or a value), scatter_add, scatter_reduce and index_reduce.

Reads become one gather of the flattened tensor at int64 positions computed with arange
arithmetic; accumulating writes of rows become index_add. Scatters compare each index with each
position it may write and reduce over the indices; an overwrite keeps the last write (the
largest index position naming the element, a max reduction), which is what PyTorch's
sequential CPU loop leaves when indices repeat. Out-of-range indices raise, as in PyTorch: every
index a user gives passes a check_index op (common.user_index) or an op that checks its own
(gather, index_add); on GPUs the checks run with the flag cinn_like_check_indices, and without
it the computes still never read or write outside a buffer (gather clamps, index_add skips, a
comparison matches nothing).
"""
import math

import torch

from ..registry import Unsupported, converts, dtype_name, no_rank0, pshape, val
from ..sizes import contiguous_strides
from .common import (I64, clamp_index, extreme, flat_gather, iota,
                     linear_index, scalar, scaled, user_index)

aten = torch.ops.aten


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
    strides = contiguous_strides(xs)
    terms = []
    for d in range(rank):
        if d == dim:
            terms.append(scaled(c, user_index(c, n, c.tensor(index, I64), xs[d], False), strides[d]))
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


def _flat_position(c, n, x_shape, dims, nodes, shape):
    """The int64 row of each index tuple of node n in x viewed as
    [prod(x_shape[dims]), rest...]."""
    sizes = [x_shape[d] for d in dims]
    strides = contiguous_strides(sizes)
    terms = [scaled(c, user_index(c, n, c.tensor(i, I64), s, True), st)
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
    flat, rows = _flat_position(c, n, xs, dims, nodes, shape)
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


# The scatters below compare each index with each position it may write (work K * J per line);
# past this many comparisons they stay in PyTorch.
MAX_SCATTER_WORK = 1 << 24


def _check_work(what, shape):
    if math.prod(shape) > MAX_SCATTER_WORK:
        raise Unsupported(f"{what}: {math.prod(shape)} index comparisons (shape {shape}) exceed "
                          f"{MAX_SCATTER_WORK}")


def _last_writer(c, eq, rank, k_axis, k):
    """int64: the largest k along k_axis of the bool `eq` (rank `rank`) where eq holds, -1
    where it holds nowhere: the write that PyTorch's sequential CPU loop leaves last. Reduces
    k_axis away."""
    ks = c.op("where", [eq, iota(c, k, rank, k_axis), scalar(c, -1)])
    return c.op("reduce_max", [ks], {"axes": [k_axis], "keepdim": False})


REDUCERS = {"sum": "reduce_sum", "mean": "reduce_sum", "prod": "reduce_prod",
            "amax": "reduce_max", "amin": "reduce_min"}


def _reduce_into(c, eq, src, x_r, r_shape, k_axis, reduce, include_self, dt):
    """What reducing sources into x_r (shape r_shape) leaves: the bool eq ([.., K, J, ..], K at
    k_axis, r_shape without it) says which of the K sources (src, broadcasting to eq) reduce
    into each position. include_self joins x_r to the sources; elsewhere a position no source
    names keeps x_r. mean divides by the count (PyTorch's, at least 1)."""
    if reduce not in REDUCERS:
        raise Unsupported(f"reduce {reduce!r}")
    if reduce == "mean" and not dt.is_floating_point:
        raise Unsupported(f"mean reduce of a {dt} tensor (PyTorch floors)")
    if dt == torch.bool:
        raise Unsupported("reduce into a bool tensor")
    init = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "amax": extreme(dt, True),
            "amin": extreme(dt, False)}[reduce]
    terms = c.op("where", [eq, src, c.tensor(init, dt)])
    if include_self:  # x_r as one more source, first: [.., 1 + K, J, ..]
        spread = c.op("reshape", [x_r], {"shape": r_shape[:k_axis] + [1] + r_shape[k_axis:]})
        terms = c.op("concat", [spread, terms], {"axis": k_axis})
    out = c.op(REDUCERS[reduce], [terms], {"axes": [k_axis], "keepdim": False})
    hits = c.op("reduce_sum", [c.op("cast", [eq], {"dtype": "int32"})],
                {"axes": [k_axis], "keepdim": False})
    if reduce == "mean":
        count = c.op("cast", [hits], {"dtype": dtype_name(dt)})
        if include_self:
            count = c.op("add", [count, c.tensor(1, dt)])
        out = c.op("div", [out, c.op("maximum", [count, c.tensor(1, dt)])])
    if include_self:
        return out
    return c.op("where", [c.op("greater", [hits, scalar(c, 0, torch.int32)]), out, x_r])


class _Scatter:
    """A scatter node's parts: x (shape xs), dim, the wrapped int64 index (shape ishape) and
    eq, [.., K, J, ..] (index along dim spread against x's J positions along dim + 1). The
    region it writes has index's shape with dim replaced by J (r_shape); x's part there is
    x_r, and place() puts a new x_r back into x."""

    def __init__(self, c, n, x, dim, index, what):
        self.c, self.n = c, n
        self.xs, self.ishape = [int(s) for s in val(x).shape], [int(s) for s in val(index).shape]
        self.dt = val(n).dtype
        if len(self.xs) == 0 or len(self.ishape) != len(self.xs):
            raise Unsupported(f"{what} of a rank-0 tensor or with an index of another rank")
        if 0 in self.ishape:
            raise Unsupported(f"{what} with an empty index")
        rank = self.rank = len(self.xs)
        self.dim = dim = dim % rank
        self.j = self.xs[dim]
        self.k = self.ishape[dim]
        spread = self.ishape[:dim + 1] + [1] + self.ishape[dim + 1:]
        if self.k > 1:  # one index per line (a one-hot: nll_loss's backward) compares once per
            _check_work(what, spread[:dim + 1] + [self.j] + spread[dim + 2:])  # element written
        idx = user_index(c, n, c.tensor(index, I64), self.j, False)
        self.eq = c.op("equal", [c.op("reshape", [idx], {"shape": spread}),
                                 iota(c, self.j, rank + 1, dim + 1)])
        self.r_shape = self.ishape[:dim] + [self.j] + self.ishape[dim + 1:]
        self.x = c.tensor(x, self.dt)
        self.partial = self.r_shape != self.xs
        self.x_r = self.x
        if self.partial:
            axes = [d for d in range(rank) if self.r_shape[d] != self.xs[d]]
            self.x_r = c.op("slice", [self.x], {"axes": axes, "starts": [0] * len(axes),
                                                "ends": [self.r_shape[d] for d in axes]})

    def source(self, src):
        """src (at least index's shape) cut to index's shape, spread as [.., K, 1, ..]."""
        c, ss = self.c, [int(s) for s in val(src).shape]
        s = c.tensor(src, self.dt)
        axes = [d for d in range(self.rank) if ss[d] != self.ishape[d]]
        if axes:
            s = c.op("slice", [s], {"axes": axes, "starts": [0] * len(axes),
                                    "ends": [self.ishape[d] for d in axes]})
        d = self.dim
        return c.op("reshape", [s], {"shape": self.ishape[:d + 1] + [1] + self.ishape[d + 1:]})

    def place(self, new_r):
        """x with its region replaced by new_r."""
        if not self.partial:
            return new_r
        c = self.c
        if self.dt == torch.bool:
            raise Unsupported("scatter into part of a bool tensor")
        pads = []
        for r, x in zip(self.r_shape, self.xs):
            pads += [0, x - r]
        padded = c.op("pad", [new_r], {"paddings": pads, "value": 0.0})
        inside = None
        for d in range(self.rank):
            if self.r_shape[d] != self.xs[d]:
                m = c.op("less", [iota(c, self.xs[d], self.rank, d), scalar(c, self.r_shape[d])])
                inside = m if inside is None else c.op("logical_and", [inside, m])
        return c.op("where", [inside, padded, self.x])


@converts(aten.scatter.src, aten.scatter.value)
def _scatter(c, n):
    """out = x, then out[i with dim replaced by index[i]] = src[i] (or value) for every i of
    index: exact with repeated indices too, where the last write wins as in PyTorch's CPU
    loop (the largest i along dim naming a position is found by a max reduction)."""
    x, dim, index, src = n.args[0], n.args[1], n.args[2], n.args[3]
    if n.kwargs.get("reduce") is not None:
        raise Unsupported("scatter with reduce")
    s = _Scatter(c, n, x, dim, index, "scatter")
    if n.target == aten.scatter.value:
        hit = c.op("cast", [c.op("reduce_max", [c.op("cast", [s.eq], {"dtype": "int32"})],
                                 {"axes": [s.dim], "keepdim": False})], {"dtype": "bool"})
        return s.place(c.op("where", [hit, c.tensor(src, s.dt), s.x_r]))
    last = _last_writer(c, s.eq, s.rank + 1, s.dim, s.k)
    ss = [int(v) for v in val(src).shape]
    strides = contiguous_strides(ss)
    terms = [scaled(c, clamp_index(c, last, s.k - 1), strides[s.dim])]
    terms += [scaled(c, iota(c, s.r_shape[d], s.rank, d), strides[d])
              for d in range(s.rank) if d != s.dim and s.r_shape[d] > 1]
    flat = linear_index(c, terms, s.r_shape)
    written = flat_gather(c, c.tensor(src, s.dt), math.prod(ss), flat, s.r_shape, s.r_shape)
    hit = c.op("greater_equal", [last, scalar(c, 0)])
    return s.place(c.op("where", [hit, written, s.x_r]))


@converts(aten.scatter_add.default, aten.scatter_reduce.two, aten.scatter.reduce)
def _scatter_reduce(c, n):
    """out = x, then out[i with dim replaced by index[i]] (reduce)= src[i] for every i of
    index: per position, the reduction over the i along dim that name it (and x when
    include_self)."""
    x, dim, index, src = n.args[0], n.args[1], n.args[2], n.args[3]
    if n.target == aten.scatter_add.default:
        reduce, include_self = "sum", True
    elif n.target == aten.scatter.reduce:
        legacy = n.args[4] if len(n.args) > 4 else n.kwargs["reduce"]
        reduce, include_self = {"add": "sum", "multiply": "prod"}[legacy], True
    else:
        reduce = n.args[4] if len(n.args) > 4 else n.kwargs["reduce"]
        include_self = n.args[5] if len(n.args) > 5 else n.kwargs.get("include_self", True)
    s = _Scatter(c, n, x, dim, index, f"scatter_reduce {reduce}")
    new_r = _reduce_into(c, s.eq, s.source(src), s.x_r, s.r_shape, s.dim, reduce,
                         bool(include_self), s.dt)
    return s.place(new_r)


@converts(aten.index_reduce.default)
def _index_reduce(c, n):
    """out = x, then out[.., index[k], ..] (reduce)= source[.., k, ..] along dim for every k
    (index a vector or a scalar)."""
    x, dim, index, source, reduce = n.args[:5]
    include_self = n.args[5] if len(n.args) > 5 else n.kwargs.get("include_self", True)
    xs = pshape(val(x))  # rank 0 as [1]: its one element reduced with source's
    rank, dim = len(xs), dim % len(xs)
    k, j = val(index).numel(), xs[dim]
    _check_work("index_reduce", xs[:dim] + [k] + xs[dim:])
    dt = val(n).dtype
    idx = user_index(c, n, c.tensor(index, I64), j, False)
    spread = [1] * dim + [k, 1] + [1] * (rank - dim - 1)
    eq = c.op("equal", [c.op("reshape", [idx], {"shape": spread}), iota(c, j, rank + 1, dim + 1)])
    ss = xs[:dim] + [k] + xs[dim + 1:]
    src = c.op("reshape", [c.tensor(source, dt)], {"shape": ss[:dim + 1] + [1] + ss[dim + 1:]})
    eq = c.op("broadcast_to", [eq], {"shape": ss[:dim + 1] + [j] + ss[dim + 1:]})
    return _reduce_into(c, eq, src, c.tensor(x, dt), xs, dim, reduce, bool(include_self), dt)


def _index_put_rows(c, n, x, indices, values):
    """index_put's operands as rows: (x as [rows] + rest, the int64 row of each of the K index
    tuples [K], values as [K] + rest, back: x's shape from [rows] + rest)."""
    xs = [int(v) for v in val(x).shape]
    rank = len(xs)
    indices = indices + [None] * (rank - len(indices))
    dims, nodes, shape = _indexed(n, indices)
    if math.prod(shape) == 0 or math.prod(xs) == 0:
        raise Unsupported("index_put of no elements")
    rest = [d for d in range(rank) if d not in dims]
    rest_shape = [xs[d] for d in rest]
    flat, rows = _flat_position(c, n, xs, dims, nodes, shape)
    k = max(math.prod(shape), 1)
    dt = val(n).dtype
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    v = c.tensor(values, dt)
    if adjacent and dims[0] > 0 and rest_shape:  # x[indices] has the index dims at dims[0]
        before, s = dims[0], len(shape)
        v = c.op("broadcast_to", [v], {"shape": xs[:before] + shape + xs[dims[-1] + 1:]})
        perm = list(range(before, before + s)) + list(range(before)) + list(
            range(before + s, s + len(rest_shape)))
        v = c.op("transpose", [v], {"perm": perm})
    else:
        v = c.op("broadcast_to", [v], {"shape": (shape + rest_shape) or [1]})
    v = c.op("reshape", [v], {"shape": [k] + rest_shape})
    xt = c.tensor(x, dt)
    if dims + rest != list(range(rank)):
        xt = c.op("transpose", [xt], {"perm": dims + rest})
    base = c.op("reshape", [xt], {"shape": [rows] + rest_shape})

    def back(out):
        out = c.op("reshape", [out], {"shape": [xs[d] for d in dims] + rest_shape})
        perm = dims + rest
        if perm != list(range(rank)):
            out = c.op("transpose", [out], {"perm": [perm.index(d) for d in range(rank)]})
        return out
    return base, c.op("reshape", [flat], {"shape": [k]}), v, rows, k, rest_shape, back


def _overwrite_rows(c, base, flat, v, rows, k, rest_shape):
    """base with row flat[i] replaced by v[i], the last i winning where rows repeat."""
    _check_work("index_put", [k, rows])
    eq = c.op("equal", [c.op("reshape", [flat], {"shape": [k, 1]}), iota(c, rows, 2, 1)])
    last = _last_writer(c, eq, 2, 0, k)
    written = c.op("gather", [v, clamp_index(c, last, k - 1)], {"axis": 0})
    hit = c.op("greater_equal", [last, scalar(c, 0)])
    if rest_shape:
        hit = c.op("reshape", [hit], {"shape": [rows] + [1] * len(rest_shape)})
    return c.op("where", [hit, written, base])


def _masked_put(c, n, x, indices, values, accumulate):
    """x[mask] = values (+= with accumulate) for one boolean mask whose values are the same
    for every selected element (they broadcast along the selected elements' dim): a where."""
    p = next(d for d, i in enumerate(indices) if i is not None)
    mask, xs, dt = indices[p], [int(v) for v in val(x).shape], val(n).dtype
    ms = [int(v) for v in val(mask).shape]
    after = xs[p + len(ms):]
    vs = [int(v) for v in val(values).shape]
    along = len(vs) - len(after) - 1  # values' dim along the selected elements, if any
    if any(i is not None for i in indices[p + 1:]) or (0 <= along and vs[along] != 1):
        raise Unsupported("index_put by a boolean mask of more than one value per element "
                          "(which value goes where depends on the mask)")
    m = c.tensor(mask)
    if len(xs) > len(ms):
        m = c.op("reshape", [m], {"shape": [1] * p + ms + [1] * len(after)})
    v = c.op("broadcast_to", [c.tensor(values, dt)], {"shape": xs[:p] + [1] + after})
    if len(ms) != 1:
        v = c.op("reshape", [v], {"shape": (xs[:p] + [1] * len(ms) + after) or [1]})
    if accumulate:
        v = c.op("add", [c.tensor(x, dt), v])
    return c.op("where", [m, v, c.tensor(x, dt)])


@converts(aten.index_put.default)
def _index_put(c, n):
    """x[i0, i1, ...] = values (accumulate: +=): rows of x (the indexed dims moved first and
    merged) overwritten with the last write winning, as PyTorch's sequential CPU loop leaves
    them, or added (index_add)."""
    x, indices, values = n.args[0], list(n.args[1]), n.args[2]
    accumulate = n.args[3] if len(n.args) > 3 else n.kwargs.get("accumulate", False)
    no_rank0(x)
    if any(isinstance(i, torch.fx.Node) and val(i).dtype == torch.bool for i in indices):
        return _masked_put(c, n, x, indices, values, accumulate)
    base, flat, v, rows, k, rest_shape, back = _index_put_rows(c, n, x, indices, values)
    if accumulate:
        out = c.op("index_add", [base, flat, v], {"axis": 0})
    else:
        out = _overwrite_rows(c, base, flat, v, rows, k, rest_shape)
    return back(out)


@converts(aten.put.default)
def _put(c, n):
    """x's elements at flat (row-major) positions index = source (accumulate: +=)."""
    x, index, source = n.args[0], n.args[1], n.args[2]
    accumulate = n.args[3] if len(n.args) > 3 else n.kwargs.get("accumulate", False)
    numel, k = val(x).numel(), val(index).numel()
    if k == 0 or numel == 0:
        raise Unsupported("put of no elements")
    dt = val(n).dtype
    base = c.op("reshape", [c.tensor(x, dt)], {"shape": [numel]})
    flat = user_index(c, n, c.op("reshape", [c.tensor(index, I64)], {"shape": [k]}), numel, True)
    v = c.op("reshape", [c.tensor(source, dt)], {"shape": [k]})
    if accumulate:
        out = c.op("index_add", [base, flat, v], {"axis": 0})
    else:
        out = _overwrite_rows(c, base, flat, v, numel, k, [])
    return c.op("reshape", [out], {"shape": pshape(val(n))})


@converts(aten.nonzero_static.default)
def _nonzero_static(c, n):
    """The coordinates of the first `size` nonzero elements in row-major order, rows past
    their count filled with fill_value: each element's running count of nonzeros (a masked
    sum over the elements before it, work numel^2), row r taking the element whose count
    reaches r + 1, its flat position split into coordinates."""
    x = n.args[0]
    size = n.args[1] if len(n.args) > 1 else n.kwargs["size"]
    fill = n.args[2] if len(n.args) > 2 else n.kwargs.get("fill_value", -1)
    xs = [int(v) for v in val(x).shape]
    numel = math.prod(xs)
    if not xs or numel == 0 or size == 0:
        raise Unsupported("nonzero_static of a rank-0 or empty tensor or to no rows")
    _check_work("nonzero_static", [numel, max(numel, size)])
    flat = c.op("reshape", [c.tensor(x)], {"shape": [numel]})
    nz = c.op("not_equal", [flat, c.tensor(0, val(x).dtype)])
    nz_i = c.op("cast", [nz], {"dtype": "int64"})
    before = c.op("less_equal", [iota(c, numel, 2, 1), iota(c, numel, 2, 0)])  # [i, k]: k <= i
    count = c.op("reduce_sum", [c.op("where", [before, c.op("reshape", [nz_i], {"shape": [1, numel]}),
                                               scalar(c, 0)])], {"axes": [1], "keepdim": False})
    rows = c.op("add", [iota(c, size, 2, 0), scalar(c, 1)])  # [size, 1]: r + 1
    eq = c.op("logical_and", [c.op("equal", [c.op("reshape", [count], {"shape": [1, numel]}), rows]),
                              c.op("reshape", [nz], {"shape": [1, numel]})])
    at = _last_writer(c, eq, 2, 1, numel)  # [size]: the element, -1 past the count
    at = c.op("reshape", [at], {"shape": [size, 1]})
    strides = contiguous_strides(xs)
    cols = []
    for d in range(len(xs)):
        q = c.op("div", [at, scalar(c, strides[d])], {"rounding_mode": "floor"})
        cols.append(c.op("mod", [q, scalar(c, xs[d])]) if d > 0 else q)
    coords = c.op("concat", cols, {"axis": 1}) if len(cols) > 1 else cols[0]
    missing = c.op("less", [at, scalar(c, 0)])
    return c.op("where", [missing, scalar(c, fill), coords])


def _mask_positions(c, mask, shape):
    """(the mask broadcast to shape and flattened [numel], each element's position among the
    selected ones in row-major order (the running count of true elements, minus one), int64)."""
    numel = math.prod(shape)
    m = c.op("broadcast_to", [c.tensor(mask)], {"shape": shape or [1]})
    m = c.op("reshape", [m], {"shape": [numel]})
    count = c.op("cumsum", [c.op("cast", [m], {"dtype": "int64"})], {"axis": 0})
    return m, c.op("sub", [count, scalar(c, 1)])


@converts(aten.masked_scatter.default)
def _masked_scatter(c, n):
    """x with its selected elements (mask broadcast against x) replaced, in row-major order,
    by source's leading elements: the k-th selected element reads source's flat element k."""
    x, mask, source = n.args[:3]
    out = val(n)
    shape, k = [int(s) for s in out.shape], val(source).numel()
    numel = math.prod(shape)
    if numel == 0 or k == 0:
        raise Unsupported("masked_scatter of no elements or from an empty source")
    m, pos = _mask_positions(c, mask, shape)
    picked = flat_gather(c, c.tensor(source, out.dtype), k, clamp_index(c, pos, k - 1), [numel],
                         [numel])
    xf = c.op("reshape", [c.op("broadcast_to", [c.tensor(x, out.dtype)], {"shape": shape or [1]})],
              {"shape": [numel]})
    return c.op("reshape", [c.op("where", [m, picked, xf])], {"shape": pshape(out)})


@converts(aten.masked_scatter_backward.default)
def _masked_scatter_backward(c, n):
    """source's gradient (shape sizes): the k-th selected element's gradient at flat position
    k, zeros past the count of selected elements (an index_add; the rest index nowhere)."""
    grad, mask, sizes = n.args[:3]
    out = val(n)
    shape, k = [int(s) for s in val(grad).shape], out.numel()
    numel = math.prod(shape)
    if numel == 0 or k == 0:
        raise Unsupported("masked_scatter_backward of no elements")
    m, pos = _mask_positions(c, mask, shape)
    at = c.op("where", [m, pos, scalar(c, k)])  # index k: out of range, skipped
    g = c.op("reshape", [c.tensor(grad, out.dtype)], {"shape": [numel]})
    zeros = c.op("fill", [], {"shape": [k], "value": 0.0, "dtype": dtype_name(out.dtype)})
    return c.op("reshape", [c.op("index_add", [zeros, at, g],
                                 {"axis": 0, "skip_out_of_range": True})],
                {"shape": pshape(out)})
