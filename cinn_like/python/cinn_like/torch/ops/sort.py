"""Converters of the sorting family: sort (argsort, msort), topk, kthvalue, median and nanmedian
(along a dim or of everything), mode, searchsorted and bucketize, histc.

Sorting is counting: an element's rank in its row is the number of elements that sort before
it, every pair compared (x[j] < x[i], or equal with j < i: a stable order; NaN after everything
ascending, before everything descending, as PyTorch orders it); the element at sorted position
p is the one whose rank is p (a second all-pairs comparison). Work is n^2 per row of n, so rows
longer than MAX_ROW, or nodes of more than MAX_PAIRS comparisons, stay in PyTorch.

Among equal values eager CPU's indices are its algorithm's (checked against PyTorch 2.15):
  - sort(stable=True), median and nanmedian along a dim: the stable order (median's
    comparator breaks ties by index; a row with NaN has its first NaN as median): exact.
  - sort(stable=False) is std::sort, which insertion-sorts (stably) rows of up to 16
    elements; longer rows come back in introsort's order.
  - topk (std::nth_element, or std::partial_sort where 64 k <= n) keeps the stable order
    only for rows of up to 3 (nth_element's insertion sort); kthvalue's quickselect for rows
    of up to 2.
  - mode: the smallest of the most frequent values at its last occurrence (std::sort of the
    row by value: exact for rows of up to 16).
No comparison formula reproduces introsort's or a quickselect's order, so past those lengths
these ops map only where the graph uses their values alone (exact: equal values are equal,
up to the sign of a zero) and stay in PyTorch where it reads their indices. Rows with NaN in
mode differ: eager's std::sort there compares with `<`, no order with NaN (here NaN equals
nothing and is never the mode). nanmedian of an all-NaN row: NaN, here at its first element
(eager: where nth_element leaves it).
searchsorted and bucketize run eager's binary search itself (one gather and compare per
halving step), exact for any sequence, sorted or not, with sorter too.
"""
import math
import operator

import torch

from ..registry import Unsupported, converts, dtype_name, meta, pshape, val
from .common import I64, clamp_index, flat_gather, iota, scalar

aten = torch.ops.aten

MAX_ROW = 2048  # the longest row the all-pairs decomposition sorts
MAX_PAIRS = 1 << 26  # element pairs compared by one node, at most


def _arg(n, i, name, default=None):
    return n.args[i] if len(n.args) > i else n.kwargs.get(name, default)


def _check_tie_order(n, rows, what, exact_up_to, algorithm):
    """Refuses node n when the graph reads its indices and rows are longer than exact_up_to,
    where eager orders equal values by `algorithm`."""
    if rows.n <= exact_up_to:
        return
    if any(u.target == operator.getitem and u.args[1] == 1 for u in n.users):
        raise Unsupported(f"{what} indices of rows of {rows.n}: PyTorch's CPU leaves equal values "
                          f"in {algorithm}'s order (the stable order only in rows up to "
                          f"{exact_up_to}); the values alone run in cinn_like")


class _Rows:
    """x as rows [r, n] along dim (dim None: x flattened, one row), with the way back. A
    rank-0 tensor is one row of one element."""

    def __init__(self, c, x, dim, what):
        t = val(x)
        self.c, self.dtype = c, t.dtype
        shape = pshape(t)
        rank = len(shape)
        numel = math.prod(shape)
        if numel == 0:
            raise Unsupported(f"{what} of an empty tensor")
        xs = c.tensor(x)
        if dim is None:
            self.perm, self.lead, n = None, [], numel
        else:
            dim %= rank
            n = shape[dim]
            self.perm = [d for d in range(rank) if d != dim] + [dim]
            self.lead = [shape[d] for d in self.perm[:-1]]
            if self.perm != list(range(rank)):
                xs = c.op("transpose", [xs], {"perm": self.perm})
        where = "" if dim is None else f" along dim {dim}"
        if n > MAX_ROW:
            raise Unsupported(f"{what} of {n} elements{where}: the all-pairs decomposition is "
                              f"for rows up to {MAX_ROW}")
        self.r, self.n = numel // n, n
        if self.r * n * n > MAX_PAIRS:
            raise Unsupported(f"{what} of {self.r} rows of {n}: {self.r * n * n} element "
                              f"pairs exceed {MAX_PAIRS}")
        self.x = c.op("reshape", [xs], {"shape": [self.r, n]})
        self.floating = t.dtype.is_floating_point
        # comparison keys: bool compares as int32
        self.keys = self.x if t.dtype != torch.bool else c.op("cast", [self.x], {"dtype": "int32"})

    def back(self, t, m):
        """[r, m] rows back in x's layout, dim of size m."""
        c = self.c
        if self.perm is None:
            return t
        t = c.op("reshape", [t], {"shape": self.lead + [m]})
        if self.perm != list(range(len(self.perm))):
            inv = [self.perm.index(d) for d in range(len(self.perm))]
            t = c.op("transpose", [t], {"perm": inv})
        return t

    def pairs(self):
        """(x[j] as [r, 1, n], x[i] as [r, n, 1])."""
        c, r, n = self.c, self.r, self.n
        return (c.op("reshape", [self.keys], {"shape": [r, 1, n]}),
                c.op("reshape", [self.keys], {"shape": [r, n, 1]}))

    def rank(self, descending):
        """int64 [r, n]: how many elements of its row sort before each (stable order)."""
        c, n = self.c, self.n
        a, b = self.pairs()  # a = x[j], b = x[i]
        strict = c.op("greater" if descending else "less", [a, b])
        same = c.op("equal", [a, b])
        if self.floating:
            na, nb = c.op("isnan", [a]), c.op("isnan", [b])
            first, second = (na, nb) if descending else (nb, na)  # NaN largest
            strict = c.op("logical_or", [strict, c.op("logical_and", [
                first, c.op("logical_not", [second])])])
            same = c.op("logical_or", [same, c.op("logical_and", [na, nb])])
        earlier = c.op("less", [iota(c, n, 3, 2), iota(c, n, 3, 1)])  # j < i
        before = c.op("logical_or", [strict, c.op("logical_and", [same, earlier])])
        return c.op("reduce_sum", [c.op("cast", [before], {"dtype": "int64"})],
                    {"axes": [2], "keepdim": False})

    def order(self, rank, k):
        """int64 [r, k]: the element at each of the first k sorted positions."""
        c, r, n = self.c, self.r, self.n
        eq = c.op("equal", [c.op("reshape", [rank], {"shape": [r, 1, n]}), iota(c, k, 3, 1)])
        at = c.op("where", [eq, iota(c, n, 3, 2), scalar(c, 0)])
        return c.op("reduce_sum", [at], {"axes": [2], "keepdim": False})

    def pick(self, rank, position):
        """int64 [r, 1]: the element whose rank is `position` (an int64 [r, 1] or a [1])."""
        c = self.c
        at = c.op("where", [c.op("equal", [rank, position]), iota(c, self.n, 2, 1),
                            scalar(c, 0)])
        return c.op("reduce_sum", [at], {"axes": [1], "keepdim": True})

    def values(self, idx, m):
        """x's elements at the int64 [r, m] positions idx of their rows, bit for bit."""
        c, r, n = self.c, self.r, self.n
        flat = idx if r == 1 else c.op("add", [idx, c.op("mul", [iota(c, r, 2, 0),
                                                                  scalar(c, n)])])
        return flat_gather(c, self.x, r * n, flat, [r, m], [r, m])

    def nan_rows(self):
        """(bool [r, 1]: the row holds a NaN, int64 [r, 1]: its first NaN, n where none)."""
        c = self.c
        isnan = c.op("isnan", [self.x])
        first = c.op("reduce_min", [c.op("where", [isnan, iota(c, self.n, 2, 1),
                                                   scalar(c, self.n)])],
                     {"axes": [1], "keepdim": True})
        return c.op("less", [first, scalar(c, self.n)]), first


def _shaped(c, t, out):
    return c.op("reshape", [t], {"shape": pshape(out)})


@converts(aten.sort.default, aten.sort.stable)
def _sort(c, n):
    """(values, indices) along dim in the stable order (ascending: NaN last)."""
    x = n.args[0]
    if n.target == aten.sort.stable:
        dim, descending = n.kwargs.get("dim", -1), n.kwargs.get("descending", False)
    else:
        dim, descending = _arg(n, 1, "dim", -1), _arg(n, 2, "descending", False)
    rows = _Rows(c, x, dim, "sort")
    if n.target == aten.sort.default or not n.kwargs.get("stable"):
        _check_tie_order(n, rows, "sort (stable=False)", 16, "std::sort (introsort)")
    idx = rows.order(rows.rank(bool(descending)), rows.n)
    return [rows.back(rows.values(idx, rows.n), rows.n), rows.back(idx, rows.n)]


@converts(aten.topk.default)
def _topk(c, n):
    """The first k of the stable descending (largest) or ascending order along dim."""
    x, k = n.args[0], int(n.args[1])
    dim, largest = _arg(n, 2, "dim", -1), bool(_arg(n, 3, "largest", True))
    is_sorted = bool(_arg(n, 4, "sorted", True))
    rows = _Rows(c, x, dim, "topk")
    if k == 0:
        raise Unsupported("topk of k=0 (empty results)")
    if not is_sorted and k > 1 and 3 < rows.n < k * 64:
        raise Unsupported(f"topk with sorted=False of {k} of {rows.n}: PyTorch's CPU order of "
                          "the k values is std::nth_element's")
    _check_tie_order(n, rows, "topk", 3, "std::nth_element/std::partial_sort")
    idx = rows.order(rows.rank(largest), k)
    return [rows.back(rows.values(idx, k), k), rows.back(idx, k)]


@converts(aten.kthvalue.default)
def _kthvalue(c, n):
    """The k-th smallest along dim (NaN largest) and its index in the stable order."""
    x, k = n.args[0], int(n.args[1])
    dim = _arg(n, 2, "dim", -1)
    rows = _Rows(c, x, dim, "kthvalue")
    _check_tie_order(n, rows, "kthvalue", 2, "its quickselect")
    idx = rows.pick(rows.rank(False), scalar(c, k - 1))
    out = val(n)
    return [_shaped(c, rows.values(idx, 1), out[0]), _shaped(c, idx, out[1])]


def _median(c, n, dim, ignore_nan):
    """(values, indices [r, 1], rows) of the lower median: rank (count - 1) // 2 of the stable
    ascending order; median of a row with NaN: its first NaN; nanmedian counts the non-NaN
    (C++'s (count - 1) / 2: 0 for an all-NaN row)."""
    x = n.args[0]
    rows = _Rows(c, x, dim, "nanmedian" if ignore_nan else "median")
    rank = rows.rank(False)
    if not rows.floating:
        idx = rows.pick(rank, scalar(c, (rows.n - 1) // 2))
    elif ignore_nan:
        count = c.op("reduce_sum", [c.op("cast", [c.op("logical_not", [c.op("isnan", [rows.x])])],
                                         {"dtype": "int64"})], {"axes": [1], "keepdim": True})
        last = c.op("maximum", [c.op("sub", [count, scalar(c, 1)]), scalar(c, 0)])
        idx = rows.pick(rank, c.op("div", [last, scalar(c, 2)], {"rounding_mode": "floor"}))
    else:
        has_nan, first = rows.nan_rows()
        idx = c.op("where", [has_nan, first, rows.pick(rank, scalar(c, (rows.n - 1) // 2))])
    return rows.values(idx, 1), idx


@converts(aten.median.dim, aten.nanmedian.dim)
def _median_dim(c, n):
    values, idx = _median(c, n, n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", -1),
                          n.target == aten.nanmedian.dim)
    out = val(n)
    return [_shaped(c, values, out[0]), _shaped(c, idx, out[1])]


@converts(aten.median.default, aten.nanmedian.default)
def _median_all(c, n):
    values, _ = _median(c, n, None, n.target == aten.nanmedian.default)
    return _shaped(c, values, val(n))


@converts(aten.mode.default)
def _mode(c, n):
    """The smallest of the most frequent values along dim, at its last occurrence (frequency:
    a count of equal pairs; NaN equals nothing; an all-NaN row gives its first element)."""
    x = n.args[0]
    rows = _Rows(c, x, _arg(n, 1, "dim", -1), "mode")
    _check_tie_order(n, rows, "mode", 16, "std::sort (introsort)")
    a, b = rows.pairs()
    counts = c.op("reduce_sum", [c.op("cast", [c.op("equal", [a, b])], {"dtype": "int64"})],
                  {"axes": [2], "keepdim": False})
    most = c.op("reduce_max", [counts], {"axes": [1], "keepdim": True})
    candidate = c.op("logical_and", [c.op("equal", [counts, most]),
                                     c.op("greater", [counts, scalar(c, 0)])])
    if rows.floating:
        above = c.tensor(float("inf"), rows.dtype)
    else:  # the row's maximum is no smaller than any candidate
        above = c.op("reduce_max", [rows.keys], {"axes": [1], "keepdim": True})
    smallest = c.op("reduce_min", [c.op("where", [candidate, rows.keys, above])],
                    {"axes": [1], "keepdim": True})
    chosen = c.op("logical_and", [candidate, c.op("equal", [rows.keys, smallest])])
    last = c.op("reduce_max", [c.op("where", [chosen, iota(c, rows.n, 2, 1), scalar(c, -1)])],
                {"axes": [1], "keepdim": True})
    idx = clamp_index(c, last, rows.n - 1)  # -1 (no candidate: all NaN) -> 0
    out = val(n)
    return [_shaped(c, rows.values(idx, 1), out[0]), _shaped(c, idx, out[1])]


def _binary_search(c, n, seq, value, right, sorter, out_int32):
    """PyTorch's CPU binary search over each row of seq (its last dim; a 1-d seq serves every
    value): lower bound (first position p with !(seq[p] < v), i.e. the loop's test
    !(seq[mid] >= v)) or upper bound (!(seq[mid] > v)), one gather and compare per halving
    step, so any sequence (unsorted, NaN) gives eager's answer; sorter reads seq through it."""
    ss = [int(s) for s in val(seq).shape]
    nb = ss[-1]
    out = val(n)
    if nb == 0 or out.numel() == 0:
        raise Unsupported("searchsorted with an empty sequence or no values")
    common = torch.result_type(meta(seq), meta(value))
    seq_t = c.tensor(seq, common)
    v = c.tensor(value, common)
    vshape = pshape(out)
    rows = math.prod(ss[:-1])
    if rows > 1:  # values [.., m] against the matching row of seq [.., nb]
        m = vshape[-1]
        shape = [rows, m]
        v = c.op("reshape", [v], {"shape": shape})
        offset = c.op("mul", [iota(c, rows, 2, 0), scalar(c, nb)])
    else:
        shape = [max(math.prod(vshape), 1)]
        v = c.op("reshape", [v], {"shape": shape})
        offset = None
    total = rows * nb
    sorter_t = None if sorter is None else c.tensor(sorter, I64)

    def at(pos):  # seq's element at row position pos (through sorter)
        flat = pos if offset is None else c.op("add", [pos, offset])
        if sorter_t is not None:
            flat = flat_gather(c, sorter_t, total, flat, shape, shape)
            if offset is not None:
                flat = c.op("add", [flat, offset])
        return flat_gather(c, seq_t, total, flat, shape, shape)

    start = c.op("fill", [], {"shape": shape, "value": 0.0, "dtype": "int64"})
    end = c.op("fill", [], {"shape": shape, "value": float(nb), "dtype": "int64"})
    for _ in range(nb.bit_length()):  # each step at least halves end - start
        active = c.op("less", [start, end])
        half = c.op("div", [c.op("sub", [end, start]), scalar(c, 2)], {"rounding_mode": "floor"})
        mid = c.op("add", [start, half])
        # A finished search (start == end == nb) reads no element: its mid is held in range,
        # as gather checks its indices, and the comparison it feeds is not used.
        probe = at(clamp_index(c, mid, nb - 1))
        beyond = c.op("greater" if right else "greater_equal", [probe, v])
        go_right = c.op("logical_not", [beyond])
        start = c.op("where", [c.op("logical_and", [active, go_right]),
                               c.op("add", [mid, scalar(c, 1)]), start])
        end = c.op("where", [c.op("logical_and", [active, beyond]), mid, end])
    if out_int32:
        start = c.op("cast", [start], {"dtype": "int32"})
    return c.op("reshape", [start], {"shape": vshape})


@converts(aten.searchsorted.Tensor, aten.searchsorted.Scalar)
def _searchsorted(c, n):
    seq, value = n.args[0], n.args[1]
    right = bool(n.kwargs.get("right", False))
    side = n.kwargs.get("side")
    if side is not None:
        right = side == "right"
    return _binary_search(c, n, seq, value, right, n.kwargs.get("sorter"),
                          bool(n.kwargs.get("out_int32", False)))


@converts(aten.bucketize.Tensor, aten.bucketize.Scalar)
def _bucketize(c, n):
    value, boundaries = n.args[0], n.args[1]
    return _binary_search(c, n, boundaries, value, bool(n.kwargs.get("right", False)), None,
                          bool(n.kwargs.get("out_int32", False)))


# float16/bfloat16 histograms count in their dtype: PyTorch's += 1 stops where integers stop
# being exact, so longer inputs stay in PyTorch.
_EXACT_COUNT = {torch.bfloat16: 256, torch.float16: 2048}


@converts(aten.histc.default)
def _histc(c, n):
    """PyTorch's CPU histc: edges min and max (both 0, or equal: the data's extrema, widened by
    1 each way if equal, in float64 rounded to the dtype); an element inside [left, right]
    goes to bin int((x - left) * bins / (right - left)) computed in the dtype (each step
    rounded, bins too), the right edge into the last bin; NaN and elements outside ignored."""
    x = n.args[0]
    bins = int(_arg(n, 1, "bins", 100))
    lo, hi = float(_arg(n, 2, "min", 0)), float(_arg(n, 3, "max", 0))
    t = val(x)
    dt = t.dtype
    numel = t.numel()
    if not dt.is_floating_point:
        raise Unsupported(f"histc of a {dt} tensor")
    if numel == 0:
        raise Unsupported("histc of an empty tensor")
    if numel > _EXACT_COUNT.get(dt, numel):
        raise Unsupported(f"histc of {numel} {dt} elements: PyTorch counts in {dt}, exact up "
                          f"to {_EXACT_COUNT[dt]}")
    if numel * bins > MAX_PAIRS:
        raise Unsupported(f"histc of {numel} elements into {bins} bins: {numel * bins} "
                          f"comparisons exceed {MAX_PAIRS}")
    name = dtype_name(dt)
    xf = c.op("reshape", [c.tensor(x)], {"shape": [numel]})
    if lo == hi:
        def extreme(op):
            e = c.op(op, [xf], {"axes": [0], "keepdim": False})
            return c.op("cast", [e], {"dtype": "float64"})
        left, right = extreme("reduce_min"), extreme("reduce_max")
        same = c.op("equal", [left, right])
        one = c.tensor(1.0, torch.float64)
        left = c.op("where", [same, c.op("sub", [left, one]), left])
        right = c.op("where", [same, c.op("add", [right, one]), right])
        left, right = (c.op("cast", [e], {"dtype": name}) for e in (left, right))
    else:
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise Unsupported(f"histc of range [{lo}, {hi}] (PyTorch raises)")
        left, right = c.tensor(lo, dt), c.tensor(hi, dt)
    inside = c.op("logical_and", [c.op("greater_equal", [xf, left]),
                                  c.op("less_equal", [xf, right])])
    xin = c.op("where", [inside, xf, left])  # outside (NaN too): no float-to-int of it
    scaled = c.op("div", [c.op("mul", [c.op("sub", [xin, left]), c.tensor(float(bins), dt)]),
                          c.op("sub", [right, left])])
    pos = c.op("cast", [scaled], {"dtype": "int64"})
    pos = c.op("minimum", [pos, scalar(c, bins - 1)])
    pos = c.op("where", [inside, pos, scalar(c, -1)])
    hit = c.op("equal", [iota(c, bins, 2, 0), c.op("reshape", [pos], {"shape": [1, numel]})])
    return c.op("reduce_sum", [c.op("cast", [hit], {"dtype": name})],
                {"axes": [1], "keepdim": False})
