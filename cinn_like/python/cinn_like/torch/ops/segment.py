"""Converters of the segment reductions: segment_reduce (by lengths or offsets; sum, mean, max,
min, prod; axis, initial) and _segment_reduce_backward, as PyTorch's CPU kernels compute them,
and embedding_bag's output (its bags are segments of the gathered rows).

Each segment s covers [start_s, end_s) along the data's axis: membership is a comparison of
each position with each segment's bounds, [.., S, L, ..], and the forward is one reduction over
L of the members (work S * L per line). The backward gives each element its segment's gradient
(a sum over S of which at most one term is not zero)."""
import math
import operator

import torch

from ..registry import Unsupported, acc_dtype, converts, dtype_name, val
from .common import I64, iota, scalar

aten = torch.ops.aten

# Past this many membership comparisons (S * L * the rest) a segment reduction stays in PyTorch.
MAX_SEGMENT_WORK = 1 << 24

IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}
REDUCE_OP = {"sum": "reduce_sum", "mean": "reduce_sum", "prod": "reduce_prod", "max": "reduce_max",
             "min": "reduce_min"}


class _Segments:
    """The segments of a segment_reduce node along `axis` of data (shape ds): S segments, L
    positions; `member` is bool [outer.., S, L, 1 (per inner dim)..], `length` int64
    [outer.., S, 1..]; spread(t) puts data-shaped t at [outer.., 1, L, inner..]."""

    def __init__(self, c, data, lengths, offsets, axis, what):
        ds = [int(s) for s in val(data).shape]
        if not ds or 0 in ds:
            raise Unsupported(f"{what} of a rank-0 or empty tensor")
        if not val(data).dtype.is_floating_point:
            raise Unsupported(f"{what} of a {val(data).dtype} tensor")
        self.c, self.ds = c, ds
        a = self.axis = axis % len(ds)
        self.outer, self.inner, self.len = ds[:a], ds[a + 1:], ds[a]
        if offsets is not None:
            s = int(val(offsets).shape[-1]) - 1
            o = c.tensor(offsets, I64)
            start = c.op("slice", [o], {"axes": [a], "starts": [0], "ends": [s]})
            end = c.op("slice", [o], {"axes": [a], "starts": [1], "ends": [s + 1]})
            length = c.op("sub", [end, start])
        elif lengths is not None:
            s = int(val(lengths).shape[-1])
            length = c.tensor(lengths, I64)
            end = c.op("cumsum", [length], {"axis": a})
            start = c.op("sub", [end, length])
        else:
            raise Unsupported(f"{what} by indices")
        self.s = s
        if s == 0:
            raise Unsupported(f"{what} into no segments")
        if math.prod(self.outer + [s, self.len] + self.inner) > MAX_SEGMENT_WORK:
            raise Unsupported(f"{what}: {s} segments of {ds} exceed {MAX_SEGMENT_WORK} "
                              "membership comparisons")
        ones = [1] * len(self.inner)
        col = lambda t: c.op("reshape", [t], {"shape": self.outer + [s, 1] + ones})  # noqa: E731
        j = iota(c, self.len, a + 2 + len(ones), a + 1)
        self.member = c.op("logical_and", [c.op("greater_equal", [j, col(start)]),
                                           c.op("less", [j, col(end)])])
        self.length = col(length)

    def spread(self, t):
        return self.c.op("reshape", [t], {"shape": self.outer + [1, self.len] + self.inner})

    def per_segment(self, t):
        """An output-shaped t ([outer.., S, inner..]) at [outer.., S, 1, inner..]."""
        return self.c.op("reshape", [t], {"shape": self.outer + [self.s, 1] + self.inner})

    def gather_back(self, terms):
        """[outer.., S, L, inner..] terms, zero outside each element's segment, summed over S:
        each element's own term, data-shaped."""
        return self.c.op("reduce_sum", [terms], {"axes": [self.axis], "keepdim": False})


def _opt(n, i, name):
    return n.args[i] if len(n.args) > i else n.kwargs.get(name)


@converts(aten.segment_reduce.default)
def _segment_reduce(c, n):
    """Per segment, initial (or the reduction's identity) reduced with the members in order:
    mean divides the sum with initial by the length (an empty segment is initial, or NaN)."""
    data, reduce = n.args[0], n.args[1]
    if _opt(n, 3, "indices") is not None:
        raise Unsupported("segment_reduce by indices")
    initial = _opt(n, 7, "initial")
    seg = _Segments(c, data, _opt(n, 2, "lengths"), _opt(n, 4, "offsets"),
                    _opt(n, 5, "axis") or 0, "segment_reduce")
    dt = val(n).dtype
    if reduce not in REDUCE_OP:
        raise Unsupported(f"segment_reduce {reduce!r}")
    f = lambda v: c.tensor(float(v), dt)  # noqa: E731
    terms = c.op("where", [seg.member, seg.spread(c.tensor(data, dt)), f(IDENTITY[reduce])])
    out = c.op(REDUCE_OP[reduce], [terms], {"axes": [seg.axis + 1], "keepdim": False})
    if initial is not None:
        combine = {"sum": "add", "mean": "add", "prod": "mul", "max": "maximum",
                   "min": "minimum"}[reduce]
        out = c.op(combine, [out, f(initial)])
    if reduce == "mean":
        length = c.op("reshape", [seg.length], {"shape": seg.outer + [seg.s] + [1] * len(seg.inner)})
        out = c.op("div", [out, c.op("cast", [length], {"dtype": dtype_name(dt)})])  # 0/0: NaN
        if initial is not None:
            out = c.op("where", [c.op("equal", [length, scalar(c, 0)]), f(initial), out])
    return out


@converts(aten._segment_reduce_backward.default)
def _segment_reduce_backward(c, n):
    """data's gradient as PyTorch's CPU kernel leaves it: sum, the segment's gradient; mean,
    divided by the length; max/min, the segment's gradient at the elements equal to the output
    (or NaN), divided by their count where there are two or more and it is positive; prod,
    grad * output / x, or grad times the product of the others (with initial) where x is zero
    or NaN."""
    grad, output, data, reduce = n.args[:4]
    initial = _opt(n, 7, "initial")
    seg = _Segments(c, data, _opt(n, 4, "lengths"), _opt(n, 5, "offsets"),
                    _opt(n, 6, "axis") or 0, "segment_reduce backward")
    dt = val(n).dtype
    f = lambda v: c.tensor(float(v), dt)  # noqa: E731
    zero = f(0)
    g = seg.per_segment(c.tensor(grad, dt))
    x = seg.spread(c.tensor(data, dt))
    if reduce == "sum":
        terms = c.op("where", [seg.member, g, zero])
    elif reduce == "mean":
        g = c.op("div", [g, c.op("cast", [seg.length], {"dtype": dtype_name(dt)})])
        terms = c.op("where", [seg.member, g, zero])
    elif reduce in ("max", "min"):
        out = seg.per_segment(c.tensor(output, dt))
        hit = c.op("logical_and", [seg.member, c.op("logical_or", [
            c.op("isnan", [x]), c.op("equal", [x, out])])])
        count = c.op("reduce_sum", [c.op("cast", [hit], {"dtype": "int64"})],
                     {"axes": [seg.axis + 1], "keepdim": True})
        split = c.op("logical_and", [c.op("greater_equal", [count, scalar(c, 2)]),
                                     c.op("greater", [g, zero])])
        g = c.op("where", [split, c.op("div", [g, c.op("cast", [count], {"dtype": dtype_name(dt)})]),
                           g])
        terms = c.op("where", [hit, g, zero])
    elif reduce == "prod":
        out = seg.per_segment(c.tensor(output, dt))
        quotient = c.op("div", [c.op("mul", [g, out]), x])
        special = c.op("logical_or", [c.op("isnan", [x]), c.op("equal", [x, zero])])
        others = c.op("mul", [g, _exclusive_product(c, seg, x, dt, initial)])
        terms = c.op("where", [seg.member, c.op("where", [special, others, quotient]), zero])
    else:
        raise Unsupported(f"segment_reduce backward {reduce!r}")
    return seg.gather_back(terms)


def _exclusive_product(c, seg, x, dt, initial):
    """[outer.., S, L, inner..]: initial (or 1) times the product of the other members of the
    segment, per element: a [.., S, L, L, ..] product (work S * L^2 per line)."""
    a, ln = seg.axis, seg.len
    if math.prod(seg.outer + [seg.s, ln, ln] + seg.inner) > MAX_SEGMENT_WORK:
        raise Unsupported(f"segment_reduce prod backward: {seg.s} segments of {seg.ds} exceed "
                          f"{MAX_SEGMENT_WORK} products")
    ones = [1] * len(seg.inner)
    rank = a + 3 + len(ones)
    other = c.op("not_equal", [iota(c, ln, rank, a + 1), iota(c, ln, rank, a + 2)])
    member_k = c.op("reshape", [seg.member], {"shape": seg.outer + [seg.s, 1, ln] + ones})
    xk = c.op("reshape", [x], {"shape": seg.outer + [1, 1, ln] + seg.inner})
    picked = c.op("where", [c.op("logical_and", [member_k, other]), xk, c.tensor(1.0, dt)])
    prod = c.op("reduce_prod", [picked], {"axes": [a + 2], "keepdim": False})
    return prod if initial is None else c.op("mul", [prod, c.tensor(float(initial), dt)])


def _used_outputs(n):
    return {u.args[1] for u in n.users if u.target == operator.getitem}


@converts(aten._embedding_bag_forward_only.default, aten._embedding_bag.default)
def _embedding_bag(c, n):
    """The bags' rows of weight (indices 1-d with offsets, the last bag up to the end or with
    include_last_offset to the last offset; or 2-d, one bag per row), padding_idx entries skipped:
    sum (each row times its per_sample_weight), mean (by the bag's count, 0 for an empty bag;
    an index_add of the rows into their bags) or max (over a [B, K, D] membership, 0 for an
    empty bag). Only the output: offset2bag, bag_size and max_indices are kernel-specific.
    16-bit sums and means weigh, add and divide the gathered rows in float32 and round once, as
    PyTorch's kernels accumulate (in 16 bits they were a unit in the last place off)."""
    weight, indices, offsets = n.args[:3]
    mode = _opt(n, 4, "mode") or 0
    psw = _opt(n, 6, "per_sample_weights")
    last = bool(_opt(n, 7, "include_last_offset"))
    padding_idx = _opt(n, 8, "padding_idx")
    padding_idx = -1 if padding_idx is None else padding_idx
    if _used_outputs(n) - {0}:
        raise Unsupported("embedding_bag's offset2bag, bag_size or max_indices (kernel-specific) "
                          "used")
    w, it, out = val(weight), val(indices), val(n)[0]
    if w.dim() != 2 or 0 in w.shape or it.numel() == 0 or out.numel() == 0:
        raise Unsupported(f"embedding_bag of weight {list(w.shape)} and indices {list(it.shape)}")
    dt, d = out.dtype, int(w.shape[1])
    k, bags = it.numel(), int(out.shape[0])
    idx = c.op("reshape", [c.tensor(indices, I64)], {"shape": [k]})
    if it.dim() == 2:
        bag = c.op("div", [iota(c, k, 1, 0), scalar(c, int(it.shape[1]))],
                   {"rounding_mode": "floor"})
    else:
        # bag of k: the last bag starting at or before k; with include_last_offset none past
        # the last offset (bag index `bags`, which index_add skips and no bag matches). The
        # documented last offset is the number of indices (CSR); for any other, PyTorch's CPU
        # kernels disagree among themselves.
        o = c.tensor(offsets, I64)
        starts = o if not last else c.op("slice", [o], {"axes": [0], "starts": [0],
                                                        "ends": [bags]})
        before = c.op("less_equal", [c.op("reshape", [starts], {"shape": [1, bags]}),
                                     c.op("reshape", [iota(c, k, 1, 0)], {"shape": [k, 1]})])
        bag = c.op("sub", [c.op("reduce_sum", [c.op("cast", [before], {"dtype": "int64"})],
                                {"axes": [1], "keepdim": False}), scalar(c, 1)])
        if last:
            end = c.op("slice", [o], {"axes": [0], "starts": [bags], "ends": [bags + 1]})
            past = c.op("greater_equal", [iota(c, k, 1, 0), end])
            bag = c.op("where", [past, scalar(c, bags), bag])
    if padding_idx >= 0:  # skipped: bag index `bags`
        bag = c.op("where", [c.op("equal", [idx, scalar(c, padding_idx)]), scalar(c, bags), bag])
    rows = c.op("gather", [c.tensor(weight, dt), idx], {"axis": 0})
    counted = c.op("less", [bag, scalar(c, bags)])
    if mode == 2:
        _check_bag_work(bags, k, d)
        member = c.op("equal", [c.op("reshape", [bag], {"shape": [1, k, 1]}),
                                iota(c, bags, 3, 0)])
        terms = c.op("where", [member, c.op("reshape", [rows], {"shape": [1, k, d]}),
                               c.tensor(float("-inf"), dt)])
        mx = c.op("reduce_max", [terms], {"axes": [1], "keepdim": False})
        hits = c.op("reduce_max", [c.op("cast", [member], {"dtype": "int32"})],
                    {"axes": [1], "keepdim": False})
        return [c.op("where", [c.op("greater", [hits, scalar(c, 0, torch.int32)]), mx,
                               c.tensor(0.0, dt)]), None, None, None]
    wide = acc_dtype(dt)
    if wide != dt:  # the gathered rows widened, not the whole table
        rows = c.op("cast", [rows], {"dtype": dtype_name(wide)})
    if psw is not None:
        if mode != 0:
            raise Unsupported("embedding_bag per_sample_weights outside mode sum")
        rows = c.op("mul", [rows, c.op("reshape", [c.tensor(psw, wide)], {"shape": [k, 1]})])
    zeros = c.op("fill", [], {"shape": [bags, d], "value": 0.0, "dtype": dtype_name(wide)})
    total = c.op("index_add", [zeros, bag, rows], {"axis": 0, "skip_out_of_range": True})
    if mode == 1:
        ones = c.op("cast", [counted], {"dtype": dtype_name(wide)})
        zero_col = c.op("fill", [], {"shape": [bags], "value": 0.0, "dtype": dtype_name(wide)})
        count = c.op("index_add", [zero_col, bag, ones], {"axis": 0, "skip_out_of_range": True})
        count = c.op("reshape", [c.op("maximum", [count, c.tensor(1.0, wide)])],
                     {"shape": [bags, 1]})
        total = c.op("div", [total, count])
    if wide != dt:
        total = c.op("cast", [total], {"dtype": dtype_name(dt)})
    return [total, None, None, None]


def _check_bag_work(bags, k, d):
    if bags * k * d > MAX_SEGMENT_WORK:
        raise Unsupported(f"embedding_bag max: {bags} bags of {k} indices of {d} exceed "
                          f"{MAX_SEGMENT_WORK} comparisons")
