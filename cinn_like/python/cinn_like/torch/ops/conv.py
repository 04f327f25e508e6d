"""Converters of 2-d convolution (NCHW) and its backward, written as conv2d ops.

The backward of out = conv2d(x, w, stride s, padding p, dilation d, groups g):
- grad_input is a stride-1 convolution of grad_out with stride - 1 zeros inserted between its
  elements, padded by d * (k - 1) - p (and the rows the forward's stride left unread), with the
  weight flipped spatially and its in/out channels swapped per group, dilation d;
- grad_weight is a convolution of the input (batch and channels swapped: [C/g, g * N, H, W])
  with grad_out as the weight ([C_out, N, Ho, Wo]), stride d, dilation s, padding p, groups g,
  cut to the kernel's size: out[c, o, i, j] = sum over n, y, x of grad[n, o, y, x] *
  x[n, c of o's group, y * s + i * d - p, x * s + j * d - p];
- grad_bias sums grad_out over N, H and W.
"""
import operator

import torch

from ..registry import Unsupported, converts, val
from .common import dilate, pad_or_crop

aten = torch.ops.aten


@converts(aten.convolution.default)
def _conv(c, n):
    x, w, b, stride, padding, dilation, transposed, _output_padding, groups = n.args
    if transposed:
        raise Unsupported("transposed convolution")
    if val(x).dim() != 4:
        raise Unsupported(f"convolution of rank {val(x).dim()} (only 2-d, NCHW)")
    attrs = {"strides": list(stride), "paddings": list(padding), "dilations": list(dilation),
             "groups": int(groups)}
    inputs = [c.tensor(x), c.tensor(w)] + ([c.tensor(b)] if b is not None else [])
    return c.op("conv2d", inputs, attrs)


def _flip(c, w, shape, axis):
    k = shape[axis]
    if k == 1:
        return w
    rev = c.op("arange", [], {"start": float(k - 1), "end": -1.0, "step": -1.0, "dtype": "int64"})
    return c.op("gather", [w, rev], {"axis": axis})


def _grad_input(c, go, w, xs, ws, gs, stride, padding, dilation, groups):
    n, cin, h, wd = xs
    cout, cig, kh, kw = ws
    cog = cout // groups
    d, dshape = dilate(c, go, gs, [2, 3], stride)
    # The weight as [C_in, C_out / g, kh, kw], flipped in H and W.
    wt = c.op("reshape", [w], {"shape": [groups, cog, cig, kh, kw]})
    wt = c.op("transpose", [wt], {"perm": [0, 2, 1, 3, 4]})
    wt = c.op("reshape", [wt], {"shape": [cin, cog, kh, kw]})
    wt = _flip(c, _flip(c, wt, [cin, cog, kh, kw], 2), [cin, cog, kh, kw], 3)
    pads = []
    for axis, size, k in ((2, h, kh), (3, wd, kw)):
        i = axis - 2
        reach = dilation[i] * (k - 1)
        extra = (size + 2 * padding[i] - reach - 1) % stride[i]
        before, after = reach - padding[i], reach - padding[i] + extra
        d, dshape = pad_or_crop(c, d, dshape, axis, min(before, 0), min(after, 0))
        pads += [max(before, 0), max(after, 0)]
    return c.op("conv2d", [d, wt], {"strides": [1, 1], "paddings": pads,
                                    "dilations": list(dilation), "groups": groups})


def _grad_weight(c, go, x, xs, ws, gs, stride, padding, dilation, groups):
    n, cin, h, wd = xs
    cout, cig, kh, kw = ws
    cog = cout // groups
    a = c.op("reshape", [x], {"shape": [n, groups, cig, h, wd]})
    a = c.op("transpose", [a], {"perm": [2, 1, 0, 3, 4]})
    a = c.op("reshape", [a], {"shape": [cig, groups * n, h, wd]})
    b = c.op("reshape", [go], {"shape": [n, groups, cog, gs[2], gs[3]]})
    b = c.op("transpose", [b], {"perm": [1, 2, 0, 3, 4]})
    b = c.op("reshape", [b], {"shape": [cout, n, gs[2], gs[3]]})
    r = c.op("conv2d", [a, b], {"strides": list(dilation), "paddings": list(padding),
                                "dilations": list(stride), "groups": groups})
    r = c.op("slice", [r], {"axes": [2, 3], "starts": [0, 0], "ends": [kh, kw]})
    return c.op("transpose", [r], {"perm": [1, 0, 2, 3]})


@converts(aten.convolution_backward.default)
def _conv_backward(c, n):
    (go, x, w, _bias_sizes, stride, padding, dilation, transposed, _output_padding, groups,
     mask) = n.args
    if transposed:
        raise Unsupported("backward of a transposed convolution")
    if val(x).dim() != 4:
        raise Unsupported(f"convolution backward of rank {val(x).dim()} (only 2-d, NCHW)")
    if val(x).dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        raise Unsupported(f"convolution backward of {val(x).dtype}")
    xs, ws, gs = ([int(s) for s in val(t).shape] for t in (x, w, go))
    stride, padding, dilation = ([int(v) for v in a] for a in (stride, padding, dilation))
    groups = int(groups)
    used = {u.args[1] for u in n.users if u.target == operator.getitem}
    outs = [None, None, None]
    g = c.tensor(go)
    if mask[0] and 0 in used:
        outs[0] = _grad_input(c, g, c.tensor(w), xs, ws, gs, stride, padding, dilation, groups)
    if mask[1] and 1 in used:
        outs[1] = _grad_weight(c, g, c.tensor(x), xs, ws, gs, stride, padding, dilation, groups)
    if mask[2] and 2 in used:
        outs[2] = c.op("reduce_sum", [g], {"axes": [0, 2, 3], "keepdim": False})
    return outs
