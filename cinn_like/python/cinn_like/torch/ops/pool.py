"""Converters of pooling: 2-d (NCHW) max_pool2d with the indices training saves, its backward,
and avg_pool2d; adaptive average and max pooling (2-d and 3-d, with indices).

The indices are PyTorch's (the flat position h * W + w of each window's first maximum in the
unpadded input): the window's kh * kw strided views of the input padded with -inf, stacked on a
last axis, argmax over it, turned into positions. The backward gathers instead of scattering:
for each window offset (i, j), the gradients whose index names the position that offset reads,
placed back on the input grid (zeros inserted between them for the stride, shifted by the
offset less the padding), summed over the offsets.
"""
import math
import operator

import torch

from ..registry import Unsupported, converts, dtype_name, val
from .common import (I64, contiguous_strides, dilate, iota, linear_index, pad_or_crop, scalar,
                     scaled)

aten = torch.ops.aten


def _pair(v):
    return list(v) * 2 if len(v) == 1 else list(v)


def _window(n):
    """(kernel, stride, padding) of a max_pool2d_with_indices(_backward) node's arguments
    after its leading tensors; refuses ceil_mode and dilation."""
    first = 2 if n.target == aten.max_pool2d_with_indices_backward.default else 1
    a = list(n.args) + [None] * 6
    x = n.args[first - 1]
    kernel = _pair(list(a[first]))
    stride = _pair(list(a[first + 1])) if a[first + 1] else kernel
    padding = _pair(list(a[first + 2])) if a[first + 2] is not None else [0, 0]
    dilation = _pair(list(a[first + 3])) if a[first + 3] is not None else [1, 1]
    ceil_mode = a[first + 4] or False
    if ceil_mode or any(d != 1 for d in dilation) or val(x).dim() != 4:
        raise Unsupported("max_pool2d with ceil_mode, dilation or a 3-d input")
    return kernel, stride, padding


def _offset_positions(c, xs, out_hw, stride, padding):
    """(rows, cols): int64 [1, 1, Ho, 1] and [1, 1, 1, Wo], the unpadded input row (column)
    each output reads at window offset 0."""
    rows = c.op("sub", [scaled(c, iota(c, out_hw[0], 4, 2), stride[0]), scalar(c, padding[0])])
    cols = c.op("sub", [scaled(c, iota(c, out_hw[1], 4, 3), stride[1]), scalar(c, padding[1])])
    return rows, cols


def _indices(c, x, xs, out_hw, kernel, stride, padding):
    n_, ch, h, w = xs
    ho, wo = out_hw
    xp = c.op("pad", [x], {"paddings": [0, 0, 0, 0, padding[0], padding[0], padding[1],
                                        padding[1]], "value": float("-inf")})
    views = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            v = c.op("slice", [xp], {"axes": [2, 3], "starts": [i, j],
                                     "ends": [i + (ho - 1) * stride[0] + 1,
                                              j + (wo - 1) * stride[1] + 1],
                                     "steps": list(stride)})
            views.append(c.op("reshape", [v], {"shape": [n_, ch, ho, wo, 1]}))
    stacked = c.op("concat", views, {"axis": 4}) if len(views) > 1 else views[0]
    k = c.op("argmax", [stacked], {"axis": 4, "keepdim": False})
    ki = c.op("div", [k, scalar(c, kernel[1])], {"rounding_mode": "floor"})
    kj = c.op("mod", [k, scalar(c, kernel[1])])
    rows, cols = _offset_positions(c, xs, out_hw, stride, padding)
    r = c.op("add", [rows, ki])
    return c.op("add", [scaled(c, r, w), c.op("add", [cols, kj])])


@converts(aten.max_pool2d_with_indices.default)
def _max_pool(c, n):
    x = n.args[0]
    kernel, stride, padding = _window(n)
    attrs = {"kernel_size": kernel, "strides": stride, "paddings": padding}
    xt = c.tensor(x)
    out = c.op("max_pool2d", [xt], attrs)
    used = {u.args[1] for u in n.users if u.target == operator.getitem}
    if 1 not in used:
        return [out, None]
    if not val(x).dtype.is_floating_point:
        raise Unsupported("max_pool2d indices of a non-float tensor")
    xs = [int(s) for s in val(x).shape]
    out_hw = [int(s) for s in val(n)[0].shape[2:]]
    return [out, _indices(c, xt, xs, out_hw, kernel, stride, padding)]


@converts(aten.max_pool2d_with_indices_backward.default)
def _max_pool_backward(c, n):
    go, x, indices = n.args[0], n.args[1], n.args[7]
    kernel, stride, padding = _window(n)
    xs = [int(s) for s in val(x).shape]
    gs = [int(s) for s in val(go).shape]
    h, w = xs[2], xs[3]
    g = c.tensor(go)
    idx = c.tensor(indices, I64)
    zero = scalar(c, 0, val(go).dtype)
    rows, cols = _offset_positions(c, xs, gs[2:], stride, padding)
    total = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            at = c.op("add", [scaled(c, c.op("add", [rows, scalar(c, i)]), w),
                              c.op("add", [cols, scalar(c, j)])])
            part = c.op("where", [c.op("equal", [idx, at]), g, zero])
            part, shape = dilate(c, part, gs, [2, 3], stride)
            for axis, off, size in ((2, i - padding[0], h), (3, j - padding[1], w)):
                part, shape = pad_or_crop(c, part, shape, axis, off, size - off - shape[axis])
            total = part if total is None else c.op("add", [total, part])
    return total


@converts(aten.avg_pool2d.default)
def _avg_pool(c, n):
    a = list(n.args) + [None] * 7
    x, kernel = a[0], _pair(list(a[1]))
    stride = _pair(list(a[2])) if a[2] else kernel
    padding = _pair(list(a[3])) if a[3] is not None else [0, 0]
    ceil_mode, count_include_pad, divisor = a[4] or False, a[5] if a[5] is not None else True, a[6]
    if ceil_mode or divisor is not None or val(x).dim() != 4:
        raise Unsupported("avg_pool2d with ceil_mode, divisor_override or a 3-d input")
    return c.op("avg_pool2d", [c.tensor(x)], {"kernel_size": kernel, "strides": stride,
                                               "paddings": padding,
                                               "count_include_pad": bool(count_include_pad)})


def _adaptive_window(c, in_size, out_size, rank, out_axis, in_axis):
    """bool, rank `rank`: output i (along out_axis) reads input h (along in_axis) when
    floor(i * in / out) <= h < ceil((i + 1) * in / out), PyTorch's adaptive windows; and the
    int64 window lengths along out_axis."""
    i = scaled(c, iota(c, out_size, rank, out_axis), in_size)
    start = c.op("div", [i, scalar(c, out_size)], {"rounding_mode": "floor"})
    end = c.op("div", [c.op("add", [i, scalar(c, in_size + out_size - 1)]), scalar(c, out_size)],
               {"rounding_mode": "floor"})
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
    masked to each output's window and summed over the input; divided by the window sizes."""
    x, xs, out, lead = _adaptive_dims(n, "adaptive_avg_pool")
    dt = val(n).dtype
    y = c.tensor(x)
    if all(o == 1 for o in out):
        return c.op("reduce_mean", [y], {"axes": list(range(lead, len(xs))), "keepdim": True})
    shape = list(xs)
    count = None
    for j, o in enumerate(out):
        d = lead + j
        h = shape[d]
        inside, length = _adaptive_window(c, h, o, len(shape) + 1, d, d + 1)
        spread = c.op("reshape", [y], {"shape": shape[:d] + [1] + shape[d:]})
        y = c.op("reduce_sum", [c.op("where", [inside, spread, scalar(c, 0, dt)])],
                 {"axes": [d + 1], "keepdim": False})
        shape[d] = o
        length = c.op("reshape", [length], {"shape": [o] + [1] * (len(out) - 1 - j)})
        count = length if count is None else c.op("mul", [count, length])
    return c.op("div", [y, c.op("cast", [count], {"dtype": dtype_name(dt)})])


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
    masked = c.op("where", [inside, spread, scalar(c, float("-inf"), dt)])
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
