"""Converters of convolution (1-d, 2-d and 3-d, plain and transposed) and its backward, written
as conv2d ops.

A 1-d convolution is a 2-d one with H = 1. A 3-d one folds the depth into the batch and the
channels: for each output depth od and kernel depth kd the input plane at depth
od * s + kd * d - p, laid out as [N * Do, C * KD, H, W] (channel c * KD + kd, so each group's
channels stay contiguous), convolved in 2-d with the weight [O, C/g * KD, KH, KW].

A transposed convolution is a stride-1 convolution of its input with stride - 1 zeros inserted
between the elements, padded by d * (k - 1) - p on both sides (output_padding more after;
negative: cropped), with the weight flipped spatially and its in/out channels swapped per
group, dilation d.

The backward of out = conv(x, w, stride s, padding p, dilation d, groups g):
- grad_input is the transposed convolution of grad_out with w (output_padding: the rows the
  forward's stride left unread); for a transposed forward it is the plain convolution;
- grad_weight is a convolution of the input (batch and channels swapped: [C/g, g * N, H, W])
  with grad_out as the weight ([C_out, N, Ho, Wo]), stride d, dilation s, padding p, groups g,
  cut to the kernel's size: out[c, o, i, j] = sum over n, y, x of grad[n, o, y, x] *
  x[n, c of o's group, y * s + i * d - p, x * s + j * d - p] (3-d: the input folded as above;
  a transposed forward swaps the roles of its input and grad_out);
- grad_bias sums grad_out over every axis but the channels.
"""
import operator

import torch

from ..registry import Unsupported, converts, val, batch_sizes
from .common import dilate, pad_or_crop

aten = torch.ops.aten
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _ints(v, m):
    v = [int(a) for a in v]
    return v * m if len(v) == 1 else v


def _geometry(x, w, stride, padding, dilation, output_padding):
    """Shapes (static, or a 2-d one's batch symbolic) and per-spatial-dim ints; refuses what the
    conv2d mapping cannot take."""
    rank = val(x).dim()
    if rank not in (3, 4, 5):
        raise Unsupported(f"convolution of rank {rank} (1-d, 2-d or 3-d only)")
    if val(x).dtype not in FLOATS:
        raise Unsupported(f"convolution of {val(x).dtype}")
    xs, ws = batch_sizes(val(x), "convolution"), [int(s) for s in val(w).shape]
    if not isinstance(xs[0], int) and rank != 4:
        raise Unsupported("symbolic shape: a symbolic batch in a convolution other than 2-d")
    if 0 in xs or 0 in ws:
        raise Unsupported(f"convolution of an empty tensor ({xs}, weight {ws})")
    m = rank - 2
    return xs, ws, [_ints(a, m) for a in (stride, padding, dilation, output_padding)]


def _fold_depth(c, x, xs, kd, stride, before, after, dilation, do):
    """[N, C, D, H, W] -> [N * Do, C * KD, H, W]: for output depth od and kernel depth k, the
    input plane at od * stride + k * dilation - before (zeros outside)."""
    nb, ch, d, h, w = xs
    x, shape = pad_or_crop(c, x, xs, 2, before, after)
    planes = []
    for k in range(kd):
        start = k * dilation
        v = c.op("slice", [x], {"axes": [2], "starts": [start],
                                "ends": [start + (do - 1) * stride + 1], "steps": [stride]})
        planes.append(c.op("reshape", [v], {"shape": [nb, ch, 1, do, h, w]}))
    x = c.op("concat", planes, {"axis": 2}) if kd > 1 else planes[0]
    x = c.op("transpose", [x], {"perm": [0, 3, 1, 2, 4, 5]})
    return c.op("reshape", [x], {"shape": [nb * do, ch * kd, h, w]})


def conv_nd(c, x, xs, w, ws, b, stride, pads, dilation, groups):
    """Convolution of a rank-3, 4 or 5 x with weight w; pads [(before, after)] per spatial dim,
    each >= 0. Returns the output's name."""
    rank = len(xs)
    if rank == 3:
        x = c.op("reshape", [x], {"shape": xs[:2] + [1, xs[2]]})
        w = c.op("reshape", [w], {"shape": ws[:2] + [1, ws[2]]})
        ox = xs[2] + sum(pads[0]) - dilation[0] * (ws[2] - 1) - 1
        out = conv_nd(c, x, xs[:2] + [1, xs[2]], w, ws[:2] + [1, ws[2]], b, [1] + stride,
                    [(0, 0)] + pads, [1] + dilation, groups)
        return c.op("reshape", [out], {"shape": [xs[0], ws[0], ox // stride[0] + 1]})
    if rank == 5:
        nb, kd = xs[0], ws[2]
        do = (xs[2] + sum(pads[0]) - dilation[0] * (kd - 1) - 1) // stride[0] + 1
        x = _fold_depth(c, x, xs, kd, stride[0], pads[0][0], pads[0][1], dilation[0], do)
        w = c.op("reshape", [w], {"shape": [ws[0], ws[1] * kd] + ws[3:]})
        y = conv_nd(c, x, [nb * do, xs[1] * kd] + xs[3:], w, [ws[0], ws[1] * kd] + ws[3:], b,
                  stride[1:], pads[1:], dilation[1:], groups)
        ho, wo = ((xs[3 + i] + sum(pads[1 + i]) - dilation[1 + i] * (ws[3 + i] - 1) - 1)
                  // stride[1 + i] + 1 for i in range(2))
        y = c.op("reshape", [y], {"shape": [nb, do, ws[0], ho, wo]})
        return c.op("transpose", [y], {"perm": [0, 2, 1, 3, 4]})
    attrs = {"strides": list(stride), "paddings": [p for pair in pads for p in pair],
             "dilations": list(dilation), "groups": int(groups)}
    return c.op("conv2d", [x, w] + ([b] if b is not None else []), attrs)


def _flip(c, w, shape, axis):
    k = shape[axis]
    if k == 1:
        return w
    rev = c.op("arange", [], {"start": float(k - 1), "end": -1.0, "step": -1.0, "dtype": "int64"})
    return c.op("gather", [w, rev], {"axis": axis})


def transposed_conv(c, x, xs, w, ws, b, stride, padding, output_padding, dilation, groups):
    """The transposed convolution of x ([N, C_in, ...]) with w ([C_in, C_out / g, k...])."""
    m = len(xs) - 2
    axes = list(range(2, 2 + m))
    x, shape = dilate(c, x, xs, axes, stride)
    pads = []
    for i, axis in enumerate(axes):
        reach = dilation[i] * (ws[axis] - 1)
        before, after = reach - padding[i], reach - padding[i] + output_padding[i]
        x, shape = pad_or_crop(c, x, shape, axis, min(before, 0), min(after, 0))
        pads.append((max(before, 0), max(after, 0)))
    cin, cog = ws[0], ws[1]
    cig = cin // groups
    wt = c.op("reshape", [w], {"shape": [groups, cig, cog] + ws[2:]})
    wt = c.op("transpose", [wt], {"perm": [0, 2, 1] + [3 + i for i in range(m)]})
    wshape = [groups * cog, cig] + ws[2:]
    wt = c.op("reshape", [wt], {"shape": wshape})
    for axis in axes:
        wt = _flip(c, wt, wshape, axis)
    return conv_nd(c, x, shape, wt, wshape, b, [1] * m, pads, dilation, groups)


@converts(aten.convolution.default)
def _convolution(c, n):
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = n.args
    xs, ws, (stride, padding, dilation, output_padding) = _geometry(
        x, w, stride, padding, dilation, output_padding)
    bt = c.tensor(b) if b is not None else None
    if transposed:
        return transposed_conv(c, c.tensor(x), xs, c.tensor(w), ws, bt, stride, padding,
                           output_padding, dilation, int(groups))
    return conv_nd(c, c.tensor(x), xs, c.tensor(w), ws, bt, stride, [(p, p) for p in padding],
                 dilation, int(groups))


def _grad_weight(c, go, x, xs, ws, gs, stride, padding, dilation, groups):
    """The weight's gradient of the plain convolution x -> grad_out (go) of shape gs."""
    if len(xs) == 3:
        xs4, ws4, gs4 = (s[:2] + [1] + s[2:] for s in (xs, ws, gs))
        r = _grad_weight(c, c.op("reshape", [go], {"shape": gs4}),
                         c.op("reshape", [x], {"shape": xs4}), xs4, ws4, gs4, [1] + stride,
                         [0] + padding, [1] + dilation, groups)
        return c.op("reshape", [r], {"shape": ws})
    if len(xs) == 5:
        nb, kd, do = xs[0], ws[2], gs[2]
        x = _fold_depth(c, x, xs, kd, stride[0], padding[0],
                        (do - 1) * stride[0] + dilation[0] * (kd - 1) + 1 - xs[2] - padding[0],
                        dilation[0], do)
        g = c.op("reshape", [c.op("transpose", [go], {"perm": [0, 2, 1, 3, 4]})],
                 {"shape": [nb * do, gs[1]] + gs[3:]})
        r = _grad_weight(c, g, x, [nb * do, xs[1] * kd] + xs[3:], [ws[0], ws[1] * kd] + ws[3:],
                         [nb * do, gs[1]] + gs[3:], stride[1:], padding[1:], dilation[1:], groups)
        return c.op("reshape", [r], {"shape": ws})
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
    (go, x, w, _bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
     mask) = n.args
    xs, ws, (stride, padding, dilation, output_padding) = _geometry(
        x, w, stride, padding, dilation, output_padding)
    gs = [int(s) for s in val(go).shape]
    groups = int(groups)
    used = {u.args[1] for u in n.users if u.target == operator.getitem}
    outs = [None, None, None]
    g = c.tensor(go)
    # A 2-d convolution's gradients on CUDA: one cuDNN backward call each (the Program ops
    # conv2d_backward_data/_filter, hlir/ops/conv_backward.cc). CPUs keep the decomposition
    # below, whose forward convolutions oneDNN runs.
    direct = val(go).device.type == "cuda" and not transposed and len(xs) == 4
    geometry = {"strides": list(stride), "paddings": list(padding), "dilations": list(dilation),
                "groups": groups}
    if direct and mask[0] and 0 in used:
        outs[0] = c.op("conv2d_backward_data", [g, c.tensor(w)],
                       dict(geometry, input_hw=xs[2:]))
    if direct and mask[1] and 1 in used:
        outs[1] = c.op("conv2d_backward_filter", [c.tensor(x), g],
                       dict(geometry, kernel_hw=ws[2:]))
    if direct:
        mask = [False, False, mask[2]]
    if mask[0] and 0 in used:
        if transposed:
            outs[0] = conv_nd(c, g, gs, c.tensor(w), ws, None, stride,
                            [(p, p) for p in padding], dilation, groups)
        else:
            extra = [(xs[2 + i] + 2 * padding[i] - dilation[i] * (ws[2 + i] - 1) - 1) % stride[i]
                     for i in range(len(xs) - 2)]
            outs[0] = transposed_conv(c, g, gs, c.tensor(w), ws, None, stride, padding, extra,
                                  dilation, groups)
    if mask[1] and 1 in used:
        if transposed:  # the forward x -> out is the adjoint of the plain conv out -> x
            outs[1] = _grad_weight(c, c.tensor(x), g, gs, ws, xs, stride, padding, dilation,
                                   groups)
        else:
            outs[1] = _grad_weight(c, g, c.tensor(x), xs, ws, gs, stride, padding, dilation,
                                   groups)
    if mask[2] and 2 in used:
        axes = [0] + list(range(2, len(gs)))
        outs[2] = c.op("reduce_sum", [g], {"axes": axes, "keepdim": False})
    return outs
