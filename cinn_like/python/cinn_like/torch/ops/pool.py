"""Converters of pooling: 2-d and 3-d max pooling with the indices training saves, average
pooling, both backward ops (ceil_mode, dilation, divisor_override, unbatched inputs; 1-d pooling
reaches here as 2-d with H = 1); adaptive average and max pooling (2-d and 3-d, with indices).

Under ceil_mode the last window may start inside the input or its left padding and run past the
right padding: the input is padded further (-inf for the maximum, zeros for the sums), and an
average's divisor is PyTorch's (the window clipped to the padded input, or to the input without
count_include_pad). The indices are PyTorch's (the flat position h * W + w of each window's
first maximum in the unpadded input): the window's strided views of the padded input, stacked
on a last axis, argmax over it, turned into positions. The max backward gathers instead of
scattering: for each window offset, the gradients whose index names the position that offset
reads, placed back on the input grid (zeros inserted between them for the stride, shifted by
the offset less the padding), summed over the offsets. The average's backward is a transposed
convolution with ones (conv.py).
"""
import itertools
import math
import operator

import torch

from ..registry import Unsupported, acc_dtype, converts, dtype_name, val, batch_sizes, mul_sizes
from ..sizes import contiguous_strides
from .common import (I64, dilate, extreme, iota, linear_index, pad_or_crop,
                     scalar, scaled)
from .conv import conv_nd, transposed_conv

aten = torch.ops.aten


def _named(n):
    """The node's arguments by their schema names, defaults filled in."""
    out = {}
    for i, a in enumerate(n.target._schema.arguments):
        if i < len(n.args):
            out[a.name] = n.args[i]
        elif a.name in n.kwargs:
            out[a.name] = n.kwargs[a.name]
        else:
            out[a.name] = a.default_value if a.has_default_value() else None
    return out


class _Window:
    """A pooling node's geometry over its m spatial dims: the input as [N, C, spatial...] (an
    unbatched input gets N = 1), kernel, stride, padding, dilation, the output's spatial sizes
    (the meta's: ceil_mode included) and `after`, the padding after each dim that the last
    window reaches (more than padding under ceil_mode)."""

    def __init__(self, n, x, m, out_shape):
        a = _named(n)

        def dims(v, default):
            v = [v] if isinstance(v, int) else list(v or [])
            return [int(e) for e in v] * (m if len(v) == 1 else 1) if v else default
        # A batched input's batch may be symbolic (its text), its other sizes not.
        xs = (batch_sizes(val(x), "pooling") if val(x).dim() == m + 2
              else [int(s) for s in val(x).shape])
        if len(xs) not in (m + 1, m + 2) or 0 in xs:
            raise Unsupported(f"{n.target.__name__.split('.')[0]} of a {xs} input")
        if not val(x).dtype.is_floating_point:
            raise Unsupported(f"pooling of a {val(x).dtype} tensor")
        self.unbatched = len(xs) == m + 1
        self.xs = [1] + xs if self.unbatched else xs
        self.size = self.xs[2:]
        self.kernel = dims(a["kernel_size"], None)
        self.stride = dims(a["stride"], self.kernel)
        self.padding = dims(a["padding"], [0] * m)
        self.dilation = dims(a.get("dilation"), [1] * m)
        self.out = [int(s) for s in out_shape[-m:]]
        self.after = [max(p, (o - 1) * s + d * (k - 1) + 1 - z - p) for o, s, d, k, z, p in zip(
            self.out, self.stride, self.dilation, self.kernel, self.size, self.padding)]
        self.args = a

    def batched(self, c, t, spatial):
        """t as [N, C, spatial...] (an unbatched tensor gets N = 1)."""
        return c.op("reshape", [t], {"shape": self.xs[:2] + list(spatial)}) if self.unbatched else t

    def unbatch(self, c, t, spatial):
        return c.op("reshape", [t], {"shape": self.xs[1:2] + list(spatial)}) if self.unbatched else t

    def pad(self, c, x, value):
        """x padded by padding before and `after` after each spatial dim, with value."""
        pads = [0, 0, 0, 0]
        for p, q in zip(self.padding, self.after):
            pads += [p, q]
        return c.op("pad", [x], {"paddings": pads, "value": float(value)})

    def starts(self, c, i):
        """int64, rank m + 2 along dim 2 + i: the unpadded input position each output's window
        starts at."""
        m = len(self.out)
        return c.op("sub", [scaled(c, iota(c, self.out[i], m + 2, 2 + i), self.stride[i]),
                            scalar(c, self.padding[i])])

    def stack(self, c, xp):
        """The padded input's window elements, [N, C, out..., prod(kernel)] in row-major order
        of the window offsets."""
        m = len(self.out)
        views = []
        for offs in itertools.product(*(range(k) for k in self.kernel)):
            starts = [o * d for o, d in zip(offs, self.dilation)]
            ends = [s0 + (o - 1) * s + 1 for s0, o, s in zip(starts, self.out, self.stride)]
            v = c.op("slice", [xp], {"axes": list(range(2, 2 + m)), "starts": starts,
                                     "ends": ends, "steps": list(self.stride)})
            views.append(c.op("reshape", [v], {"shape": self.xs[:2] + self.out + [1]}))
        return c.op("concat", views, {"axis": m + 2}) if len(views) > 1 else views[0]

    def position(self, c, offsets):
        """int64: the flat position in the unpadded spatial dims that each output's window
        reads at `offsets` (one int64 tensor or int per dim), out-of-range coordinates
        included."""
        strides = contiguous_strides(self.size)
        terms = []
        for i, o in enumerate(offsets):
            o = scalar(c, o) if isinstance(o, int) else o
            at = c.op("add", [self.starts(c, i), scaled(c, o, self.dilation[i])])
            terms.append(scaled(c, at, strides[i]))
        total = terms[0]
        for t in terms[1:]:
            total = c.op("add", [total, t])
        return total


def _max_pool_nd(c, n, m):
    """Values and PyTorch's indices (the flat position of each window's first maximum in the
    unpadded spatial dims): 2-d without dilation through max_pool2d, else the maximum of the
    window's strided views of the input padded with -inf (an integer dtype's minimum)."""
    x = n.args[0]
    win = _Window(n, x, m, val(n)[0].shape)
    xt = win.batched(c, c.tensor(x), win.size)
    lowest = extreme(val(x).dtype, True)
    used = {u.args[1] for u in n.users if u.target == operator.getitem}
    plain = m == 2 and win.dilation == [1, 1]
    stack = None
    if plain and win.after == win.padding:
        out = c.op("max_pool2d", [xt], {"kernel_size": win.kernel, "strides": win.stride,
                                        "paddings": win.padding})
    elif plain:
        out = c.op("max_pool2d", [win.pad(c, xt, lowest)],
                   {"kernel_size": win.kernel, "strides": win.stride, "paddings": [0, 0]})
    else:
        stack = win.stack(c, win.pad(c, xt, lowest))
        out = c.op("reduce_max", [stack], {"axes": [m + 2], "keepdim": False})
    out = win.unbatch(c, out, win.out)
    if 1 not in used:
        return [out, None]
    if stack is None:
        stack = win.stack(c, win.pad(c, xt, lowest))
    k = c.op("argmax", [stack], {"axis": m + 2, "keepdim": False})
    offsets, inner = [], math.prod(win.kernel)
    for kk in win.kernel:
        inner //= kk
        o = c.op("div", [k, scalar(c, inner)], {"rounding_mode": "floor"}) if inner > 1 else k
        offsets.append(c.op("mod", [o, scalar(c, kk)]))
    return [out, win.unbatch(c, win.position(c, offsets), win.out)]


@converts(aten.max_pool2d_with_indices.default)
def _max_pool2d(c, n):
    return _max_pool_nd(c, n, 2)


@converts(aten.max_pool3d_with_indices.default)
def _max_pool3d(c, n):
    return _max_pool_nd(c, n, 3)


@converts(aten.max_pool2d_with_indices_backward.default,
          aten.max_pool3d_with_indices_backward.default)
def _max_pool_backward(c, n):
    """For each window offset, the gradients whose index names the position that offset reads,
    placed back on the input grid (zeros inserted for the stride, shifted by offset * dilation
    less the padding, cut to the input); summed over the offsets."""
    m = 2 if n.target == aten.max_pool2d_with_indices_backward.default else 3
    go, x = n.args[0], n.args[1]
    win = _Window(n, x, m, val(go).shape)
    gs = win.xs[:2] + win.out
    g = win.batched(c, c.tensor(go), win.out)
    idx = win.batched(c, c.tensor(_named(n)["indices"], I64), win.out)
    zero = scalar(c, 0, val(go).dtype)
    total = None
    for offs in itertools.product(*(range(k) for k in win.kernel)):
        place = [o * d - p for o, d, p in zip(offs, win.dilation, win.padding)]
        reach = [(o - 1) * s + 1 for o, s in zip(win.out, win.stride)]
        if any(q + r <= 0 or q >= z for q, r, z in zip(place, reach, win.size)):
            continue  # this offset reads only padding
        part = c.op("where", [c.op("equal", [idx, win.position(c, list(offs))]), g, zero])
        part, shape = dilate(c, part, gs, list(range(2, 2 + m)), win.stride)
        for i, (q, z) in enumerate(zip(place, win.size)):
            part, shape = pad_or_crop(c, part, shape, 2 + i, q, z - q - shape[2 + i])
        total = part if total is None else c.op("add", [total, part])
    return win.unbatch(c, total, win.size)


def _avg_divisor(c, win, dt):
    """The divisor of each output, PyTorch's: divisor_override, else the window's size clipped
    to the padded input (count_include_pad) or to the input; [out...] broadcastable."""
    if win.args["divisor_override"] is not None:
        return scalar(c, int(win.args["divisor_override"]), dt)
    include = win.args["count_include_pad"]
    total = None
    for i, (k, z, p) in enumerate(zip(win.kernel, win.size, win.padding)):
        start = win.starts(c, i)
        end = c.op("minimum", [c.op("add", [start, scalar(c, k)]), scalar(c, z + p)])
        if not include:
            start = c.op("maximum", [start, scalar(c, 0)])
            end = c.op("minimum", [end, scalar(c, z)])
        length = c.op("sub", [end, start])
        total = length if total is None else c.op("mul", [total, length])
    return c.op("cast", [total], {"dtype": dtype_name(dt)})


def _avg_pool_nd(c, n, m):
    """2-d without ceil_mode's extra windows or divisor_override through avg_pool2d; else the
    window sums (a convolution of the input, in float32 for 16-bit floats, with ones) divided
    by PyTorch's divisor and rounded once."""
    x = n.args[0]
    win = _Window(n, x, m, val(n).shape)
    dt = val(x).dtype
    xt = win.batched(c, c.tensor(x), win.size)
    a = win.args
    if (m == 2 and win.after == win.padding and a["divisor_override"] is None):
        out = c.op("avg_pool2d", [xt], {"kernel_size": win.kernel, "strides": win.stride,
                                        "paddings": win.padding,
                                        "count_include_pad": bool(a["count_include_pad"])})
        return win.unbatch(c, out, win.out)
    wide = acc_dtype(dt)
    planes = [mul_sizes(win.xs[0], win.xs[1]), 1]
    xw = c.op("reshape", [c.tensor(x, wide)], {"shape": planes + win.size})
    ones = c.op("fill", [], {"shape": [1, 1] + win.kernel, "value": 1.0,
                             "dtype": dtype_name(wide)})
    sums = conv_nd(c, xw, planes + win.size, ones, [1, 1] + win.kernel, None, win.stride,
                   list(zip(win.padding, win.after)), [1] * m, 1)
    sums = c.op("reshape", [sums], {"shape": win.xs[:2] + win.out})
    out = c.op("div", [sums, _avg_divisor(c, win, wide)])
    out = c.op("cast", [out], {"dtype": dtype_name(dt)}) if wide != dt else out
    return win.unbatch(c, out, win.out)


@converts(aten.avg_pool2d.default)
def _avg_pool2d(c, n):
    return _avg_pool_nd(c, n, 2)


@converts(aten.avg_pool3d.default)
def _avg_pool3d(c, n):
    return _avg_pool_nd(c, n, 3)


@converts(aten.avg_pool2d_backward.default, aten.avg_pool3d_backward.default)
def _avg_pool_backward(c, n):
    """Each output's gradient over its divisor, spread over its window: the transposed
    convolution with ones (stride, padding; cut or padded to the input's size)."""
    m = 2 if n.target == aten.avg_pool2d_backward.default else 3
    go, x = n.args[0], n.args[1]
    win = _Window(n, x, m, val(go).shape)
    dt = val(go).dtype
    wide = acc_dtype(dt)
    g = win.batched(c, c.tensor(go, wide), win.out)
    g = c.op("div", [g, _avg_divisor(c, win, wide)])
    planes = [mul_sizes(win.xs[0], win.xs[1]), 1]
    g = c.op("reshape", [g], {"shape": planes + win.out})
    ones = c.op("fill", [], {"shape": [1, 1] + win.kernel, "value": 1.0,
                             "dtype": dtype_name(wide)})
    extra = [z + 2 * p - k - (o - 1) * s for z, p, k, o, s in zip(
        win.size, win.padding, win.kernel, win.out, win.stride)]
    r = transposed_conv(c, g, planes + win.out, ones, [1, 1] + win.kernel, None, win.stride,
                        win.padding, extra, [1] * m, 1)
    r = c.op("reshape", [r], {"shape": win.xs[:2] + win.size})
    r = c.op("cast", [r], {"dtype": dtype_name(dt)}) if wide != dt else r
    return win.unbatch(c, r, win.size)


def _adaptive_bounds(c, in_size, out_size, rank, out_axis):
    """int64, rank `rank` along out_axis: PyTorch's adaptive windows, output i reading
    floor(i * in / out) <= h < ceil((i + 1) * in / out); (start, end)."""
    i = scaled(c, iota(c, out_size, rank, out_axis), in_size)
    start = c.op("div", [i, scalar(c, out_size)], {"rounding_mode": "floor"})
    end = c.op("div", [c.op("add", [i, scalar(c, in_size + out_size - 1)]), scalar(c, out_size)],
               {"rounding_mode": "floor"})
    return start, end


def _adaptive_window(c, in_size, out_size, rank, out_axis, in_axis):
    """bool, rank `rank`: output i (along out_axis) reads input h (along in_axis) in its
    adaptive window; and the int64 window lengths along out_axis."""
    start, end = _adaptive_bounds(c, in_size, out_size, rank, out_axis)
    h = iota(c, in_size, rank, in_axis)
    inside = c.op("logical_and", [c.op("greater_equal", [h, start]), c.op("less", [h, end])])
    return inside, c.op("sub", [end, start])


def _adaptive_dims(n, what):
    x = n.args[0]
    out = [int(s) for s in n.args[1]]
    xs = [int(s) for s in val(x).shape]
    if len(xs) not in (len(out) + 1, len(out) + 2) or 0 in xs:
        raise Unsupported(f"{what} of a {xs} input")
    if not val(x).dtype.is_floating_point:
        raise Unsupported(f"{what} of a {val(x).dtype} tensor")
    return x, xs, out, len(xs) - len(out)


@converts(aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default)
def _adaptive_avg_pool(c, n):
    """The mean of each adaptive window: per pooled dim, the input spread against the outputs,
    masked to each output's window and summed over the input; divided by the window sizes.
    16-bit inputs sum and divide in float32 and round once, as PyTorch's kernels (a 16-bit sum
    per pooled dim, then a 16-bit division, was a unit in the last place off)."""
    x, xs, out, lead = _adaptive_dims(n, "adaptive_avg_pool")
    dt = val(n).dtype
    if all(o == 1 for o in out):  # reduce_mean accumulates in float32 and rounds once
        return c.op("reduce_mean", [c.tensor(x)], {"axes": list(range(lead, len(xs))),
                                                   "keepdim": True})
    wide = acc_dtype(dt)
    y = c.tensor(x, wide)
    shape = list(xs)
    count = None
    for j, o in enumerate(out):
        d = lead + j
        h = shape[d]
        inside, length = _adaptive_window(c, h, o, len(shape) + 1, d, d + 1)
        spread = c.op("reshape", [y], {"shape": shape[:d] + [1] + shape[d:]})
        y = c.op("reduce_sum", [c.op("where", [inside, spread, scalar(c, 0, wide)])],
                 {"axes": [d + 1], "keepdim": False})
        shape[d] = o
        length = c.op("reshape", [length], {"shape": [o] + [1] * (len(out) - 1 - j)})
        count = length if count is None else c.op("mul", [count, length])
    y = c.op("div", [y, c.op("cast", [count], {"dtype": dtype_name(wide)})])
    return c.op("cast", [y], {"dtype": dtype_name(dt)}) if wide != dt else y


@converts(aten.adaptive_max_pool2d.default, aten.adaptive_max_pool3d.default)
def _adaptive_max_pool(c, n):
    """The maximum of each adaptive window and its flat position in the pooled dims: the input
    spread against every output (work: outputs x window grid), masked to the window; the index
    is the first maximal element's in row-major order, or the last NaN's, as PyTorch's loop
    leaves it."""
    x, xs, out, lead = _adaptive_dims(n, "adaptive_max_pool")
    m = len(out)
    ins = xs[lead:]
    work = math.prod(xs[:lead]) * math.prod(out) * math.prod(ins)
    if work > 1 << 24:
        raise Unsupported(f"adaptive_max_pool: {work} window comparisons")
    rank = lead + 2 * m  # [lead.., out.., in..]
    inside = None
    for j in range(m):
        w, _ = _adaptive_window(c, ins[j], out[j], rank, lead + j, lead + m + j)
        inside = w if inside is None else c.op("logical_and", [inside, w])
    dt = val(x).dtype
    spread = c.op("reshape", [c.tensor(x)], {"shape": xs[:lead] + [1] * m + ins})
    in_axes = list(range(lead + m, rank))
    masked = c.op("where", [inside, spread, scalar(c, extreme(dt, True), dt)])
    values = c.op("reduce_max", [masked], {"axes": in_axes, "keepdim": False})
    used = {u.args[1] for u in n.users if u.target == operator.getitem}
    if 1 not in used:
        return [values, None]
    strides = contiguous_strides(ins)
    pos = linear_index(c, [scaled(c, iota(c, ins[j], rank, lead + m + j), strides[j])
                           for j in range(m) if ins[j] > 1] or [scalar(c, 0)],
                       [1] * (lead + m) + ins)
    vs = c.op("reshape", [values], {"shape": xs[:lead] + out + [1] * m})
    at_max = c.op("logical_and", [inside, c.op("equal", [spread, vs])])
    first = c.op("reduce_min", [c.op("where", [at_max, pos, scalar(c, math.prod(ins))])],
                 {"axes": in_axes, "keepdim": False})
    nan = c.op("logical_and", [inside, c.op("isnan", [spread])])
    last_nan = c.op("reduce_max", [c.op("where", [nan, pos, scalar(c, -1)])],
                    {"axes": in_axes, "keepdim": False})
    return [values, c.op("where", [c.op("isnan", [values]), last_nan, first])]


@converts(aten._adaptive_avg_pool2d_backward.default, aten._adaptive_avg_pool3d_backward.default)
def _adaptive_avg_pool_backward(c, n):
    """Each output's gradient divided by its window's length along each pooled dim in turn (as
    PyTorch's loop divides), then spread back over its window one dim at a time: against the
    inputs, masked to the window, summed over the outputs."""
    go, x = n.args[0], n.args[1]
    xs = [int(s) for s in val(x).shape]
    gs = [int(s) for s in val(go).shape]
    m = 2 if n.target == aten._adaptive_avg_pool2d_backward.default else 3
    if len(xs) not in (m + 1, m + 2) or 0 in xs or not val(go).dtype.is_floating_point:
        raise Unsupported(f"adaptive_avg_pool backward of a {val(go).dtype} {xs} input")
    dt = val(go).dtype
    lead = len(xs) - m
    y, shape = c.tensor(go), list(gs)
    for j in range(m):
        d = lead + j
        h, o = xs[d], gs[d]
        start, end = _adaptive_bounds(c, h, o, len(shape), d)
        length = c.op("cast", [c.op("sub", [end, start])], {"dtype": dtype_name(dt)})
        y = c.op("div", [y, length])
    for j in range(m):
        d = lead + j
        h, o = xs[d], shape[d]
        inside, _ = _adaptive_window(c, h, o, len(shape) + 1, d, d + 1)
        spread = c.op("reshape", [y], {"shape": shape[:d + 1] + [1] + shape[d + 1:]})
        y = c.op("reduce_sum", [c.op("where", [inside, spread, scalar(c, 0, dt)])],
                 {"axes": [d], "keepdim": False})
        shape[d] = h
    return y


@converts(aten.adaptive_max_pool2d_backward.default, aten.adaptive_max_pool3d_backward.default)
def _adaptive_max_pool_backward(c, n):
    """Each input position's gradient: the sum of the output gradients whose index names it (the
    outputs spread against the inputs in the pooled dims, flattened)."""
    go, x, indices = n.args[:3]
    xs = [int(s) for s in val(x).shape]
    gs = [int(s) for s in val(go).shape]
    m = 2 if n.target == aten.adaptive_max_pool2d_backward.default else 3
    if len(xs) not in (m + 1, m + 2) or 0 in xs or not val(go).dtype.is_floating_point:
        raise Unsupported(f"adaptive_max_pool backward of a {val(go).dtype} {xs} input")
    lead = xs[:len(xs) - m]
    outs, ins = math.prod(gs[len(lead):]), math.prod(xs[len(lead):])
    work = math.prod(lead) * outs * ins
    if work > 1 << 24:
        raise Unsupported(f"adaptive_max_pool backward: {work} index comparisons")
    g = c.op("reshape", [c.tensor(go)], {"shape": lead + [outs, 1]})
    idx = c.op("reshape", [c.tensor(indices, I64)], {"shape": lead + [outs, 1]})
    pos = iota(c, ins, len(lead) + 2, len(lead) + 1)
    hit = c.op("where", [c.op("equal", [idx, pos]), g, scalar(c, 0, val(go).dtype)])
    r = c.op("reduce_sum", [hit], {"axes": [len(lead)], "keepdim": False})
    return c.op("reshape", [r], {"shape": xs})
