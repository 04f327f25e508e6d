"""Converters of the network layers: layer, batch and group normalization, matmuls (mm, bmm,
addmm, baddbmm, addbmm, addmv, _trilinear) and grid sampling (convolution and pooling are
conv.py and pool.py)."""
import math
import operator

import torch

from ..registry import (SIXTEEN_BIT, Unsupported, acc_dtype, converts, dtype_name, mul_sizes,
                        no_rank0, pshape, val)
from .common import flat_gather, iota, linear_index, scaled

aten = torch.ops.aten


@converts(aten.native_layer_norm.default)
def _layer_norm(c, n):
    x, normalized_shape, w, b, eps = n.args
    no_rank0(x)
    xt = val(x)
    axis = xt.dim() - len(normalized_shape)
    axes = list(range(axis, xt.dim()))
    xs = c.tensor(x)
    users = {u.args[1] for u in n.users if u.target == operator.getitem}
    outs = [None, None, None]
    if 0 in users and (w is None or b is None):
        raise Unsupported("layer_norm without weight or bias")
    if xt.dtype != torch.float32 and (1 in users or 2 in users):
        raise Unsupported("layer_norm statistics for a dtype other than float32")
    if 1 not in users and 2 not in users:
        if 0 in users:
            outs[0] = c.op("layer_norm", [xs, c.tensor(w), c.tensor(b)],
                           {"axis": axis, "epsilon": float(eps)})
        return outs
    # Training: mean and rstd (kept dims) are saved for the backward. The output is made from
    # them, so that one chain of reductions over the rows computes all three (one fusion
    # group, one kernel): beside them the layer_norm op read each row a second time.
    mean = c.op("reduce_mean", [xs], {"axes": axes, "keepdim": True})
    d = c.op("sub", [xs, mean])
    var = c.op("reduce_mean", [c.op("mul", [d, d])], {"axes": axes, "keepdim": True})
    rstd = c.op("rsqrt", [c.op("add", [var, c.tensor(float(eps), xt.dtype)])])
    outs[1], outs[2] = mean, rstd
    if 0 in users:
        normed = c.op("mul", [d, rstd])
        outs[0] = c.op("add", [c.op("mul", [normed, c.tensor(w)]), c.tensor(b)])
    return outs


def _used(n):
    return {u.args[1] for u in n.users if u.target == operator.getitem}


def _empty(c, t):
    """A fill standing for an output with no element (eval batch norm's saved statistics)."""
    return c.op("fill", [], {"shape": pshape(t), "value": 0.0, "dtype": dtype_name(t.dtype)})


def _param(c, p, channels, dtype, value):
    """A per-channel affine parameter in dtype, or its identity (value) where it is None."""
    if p is not None:
        return c.tensor(p, dtype)
    return c.op("fill", [], {"shape": [channels], "value": float(value),
                             "dtype": dtype_name(dtype)})


def _eval_batch_norm(c, n, x, w, b, mean, var, eps):
    """(y, saved mean, saved rstd) of an eval batch norm (the running statistics); the saved
    statistics have no element."""
    no_rank0(x)
    xt = val(x)
    if xt.dim() < 2:
        raise Unsupported(f"batch_norm of a rank-{xt.dim()} tensor")
    ch = int(xt.shape[1])
    # 16-bit inputs normalize in float32 and round once, as PyTorch's kernels do (scale and
    # shift rounded to float16 were a unit in the last place off on CUDA).
    wide = acc_dtype(xt.dtype)
    y = c.op("batch_norm", [c.tensor(x, wide), _param(c, w, ch, wide, 1),
                            _param(c, b, ch, wide, 0), c.tensor(mean, wide), c.tensor(var, wide)],
             {"epsilon": float(eps), "axis": 1})
    if wide != xt.dtype:
        y = c.op("cast", [y], {"dtype": dtype_name(xt.dtype)})
    used, metas = _used(n), val(n)
    if any(i in used and metas[i].numel() != 0 for i in (1, 2)):
        raise Unsupported("batch_norm (eval) saved statistics with elements")
    return [y] + [_empty(c, metas[i]) if i in used else None for i in (1, 2)]


@converts(aten._native_batch_norm_legit_no_training.default)
def _batch_norm(c, n):
    x, w, b, mean, var, _momentum, eps = n.args
    return _eval_batch_norm(c, n, x, w, b, mean, var, eps)


def _train_batch_norm(c, n, x, w, b, rm, rv, momentum, eps):
    """(y, mean, rstd, new running mean, new running var) of a training batch norm: batch
    statistics over every axis but 1 (biased variance; the running one unbiased), in float32
    for 16-bit inputs as PyTorch computes them, each output cast to its meta's dtype."""
    xt = val(x)
    no_rank0(x)
    if xt.dim() < 2 or not xt.dtype.is_floating_point:
        raise Unsupported(f"batch_norm (training) of a rank-{xt.dim()} {xt.dtype} tensor")
    axes = [d for d in range(xt.dim()) if d != 1]
    ch = int(xt.shape[1])
    count = xt.numel() // ch
    if count < 2:
        raise Unsupported("batch_norm (training) over one value per channel")
    wide = acc_dtype(xt.dtype)
    bshape = [1, ch] + [1] * (xt.dim() - 2)
    f = lambda v: c.tensor(float(v), wide)  # noqa: E731
    xs = c.tensor(x, wide)
    mean = c.op("reduce_mean", [xs], {"axes": axes, "keepdim": True})
    d = c.op("sub", [xs, mean])
    var = c.op("reduce_mean", [c.op("mul", [d, d])], {"axes": axes, "keepdim": True})
    rstd = c.op("rsqrt", [c.op("add", [var, f(eps)])])
    per_ch = lambda t: c.op("reshape", [t], {"shape": bshape})  # noqa: E731
    y = c.op("mul", [d, rstd])
    if w is not None:
        y = c.op("mul", [y, per_ch(c.tensor(w, wide))])
    if b is not None:
        y = c.op("add", [y, per_ch(c.tensor(b, wide))])
    flat = lambda t: c.op("reshape", [t], {"shape": [ch]})  # noqa: E731
    new_rm = c.op("add", [c.op("mul", [c.tensor(rm, wide), f(1 - momentum)]),
                          c.op("mul", [flat(mean), f(momentum)])])
    unbiased = c.op("mul", [flat(var), f(momentum * count / (count - 1))])
    new_rv = c.op("add", [c.op("mul", [c.tensor(rv, wide), f(1 - momentum)]), unbiased])
    outs = [y, flat(mean), flat(rstd), new_rm, new_rv]
    metas = val(n)
    idx = [0, 1, 2, 4, 5] if len(metas) == 6 else [0, 1, 2, 3, 4]
    for k, i in enumerate(idx):
        if metas[i].dtype != wide:
            outs[k] = c.op("cast", [outs[k]], {"dtype": dtype_name(metas[i].dtype)})
    return outs


@converts(aten._native_batch_norm_legit_functional.default)
def _batch_norm_train(c, n):
    x, w, b, rm, rv, training, momentum, eps = n.args
    if training:
        return _train_batch_norm(c, n, x, w, b, rm, rv, momentum, eps)
    # Eval: the running statistics normalize and come back unchanged.
    metas = val(n)
    same = [c.op("cast", [c.tensor(t)], {"dtype": dtype_name(metas[i].dtype)})
            if 3 + k in _used(n) else None for k, (i, t) in enumerate(((3, rm), (4, rv)))]
    return _eval_batch_norm(c, n, x, w, b, rm, rv, eps) + same


@converts(aten._batch_norm_with_update_functional.default)
def _batch_norm_with_update(c, n):
    """(y, mean, rstd, reserve, new running mean, new running var); the reserve has no
    element on the CPU and in the meta (the cuDNN workspace elsewhere)."""
    x, w, b, rm, rv, momentum, eps = n.args
    reserve = val(n)[3]
    if reserve.numel() != 0:
        raise Unsupported(f"batch_norm reserve of {list(reserve.shape)}")
    y, mean, rstd, new_rm, new_rv = _train_batch_norm(c, n, x, w, b, rm, rv, momentum, eps)
    return [y, mean, rstd, _empty(c, reserve) if 3 in _used(n) else None, new_rm, new_rv]


# ---- matmul
@converts(aten.mm.default, aten.bmm.default)
def _mm(c, n):
    return c.op("matmul", [c.tensor(n.args[0]), c.tensor(n.args[1])],
                {"transpose_x": False, "transpose_y": False})


def _scaled_sum(c, n, product, bias, wide=False):
    """beta * bias + alpha * product for addmm/addmv/baddbmm/addbmm (beta 0: bias ignored, NaN
    included, as PyTorch does); a 16-bit result with a scale (or `wide`) is computed in float32
    from a float32 product and rounded once (_wide_product), as cuBLAS's epilogue does."""
    beta, alpha = n.kwargs.get("beta", 1), n.kwargs.get("alpha", 1)
    dt = val(n).dtype
    if _scaled_low(n) or wide:
        dt = acc_dtype(dt)
    if alpha != 1:
        product = c.op("mul", [product, c.tensor(alpha, dt)])
    if beta == 0:
        return c.op("broadcast_to", [product], {"shape": pshape(val(n))})
    b = c.tensor(bias, dt)
    if beta != 1:
        b = c.op("mul", [b, c.tensor(beta, dt)])
    out = c.op("add", [product, b])
    return c.op("cast", [out], {"dtype": dtype_name(val(n).dtype)}) if dt != val(n).dtype else out


def _scaled_low(n):
    """A 16-bit addmm-like node with alpha or beta other than 1."""
    return val(n).dtype in SIXTEEN_BIT and (
        n.kwargs.get("beta", 1) not in (0, 1) or n.kwargs.get("alpha", 1) != 1)


def _matmul(c, x, y, n=None):
    """x @ y; in float32 for a node whose scaled sum is (_scaled_low)."""
    dt = torch.float32 if n is not None and _scaled_low(n) else None
    return c.op("matmul", [c.tensor(x, dt), c.tensor(y, dt)],
                {"transpose_x": False, "transpose_y": False})


@converts(aten.addmm.default, aten.baddbmm.default)
def _addmm(c, n):
    bias, x, y = n.args[:3]
    return _scaled_sum(c, n, _matmul(c, x, y, n), bias)


@converts(aten.addbmm.default)
def _addbmm(c, n):
    """beta * bias + alpha * the sum over the batch of batch1 @ batch2, as one GEMM over the
    batch and k together, as PyTorch's CUDA kernel: batch1 [b, n, k] as [n, b * k], batch2 as
    [b * k, m]. 16-bit results round once (issue 50; a sum of b products each rounded to 16
    bits was off by up to 0.19 in 18% of an OpInfo sample's float16 elements): a 16-bit GEMM
    accumulates in float32, and with a bias or a scale the product is float32 (operands
    widened) so that the sum rounds once, as cuBLAS's epilogue does (a rounded product beside a
    bias that nearly cancels it was many units off). PyTorch's CPU kernel rounds after each
    batch instead."""
    bias, x, y = n.args[:3]
    (b, rows, k), m = pshape(val(x)), pshape(val(y))[2]
    out = val(n).dtype
    wide = out in SIXTEEN_BIT and (
        n.kwargs.get("beta", 1) != 0 or n.kwargs.get("alpha", 1) != 1)
    dt = acc_dtype(out) if wide else None
    xs = c.op("transpose", [c.tensor(x, dt)], {"perm": [1, 0, 2]})
    xs = c.op("reshape", [xs], {"shape": [rows, mul_sizes(b, k)]})
    ys = c.op("reshape", [c.tensor(y, dt)], {"shape": [mul_sizes(b, k), m]})
    product = c.op("matmul", [xs, ys], {"transpose_x": False, "transpose_y": False})
    return _scaled_sum(c, n, product, bias, wide)


@converts(aten.addmv.default)
def _addmv(c, n):
    bias, mat, vec = n.args[:3]
    k = int(val(vec).shape[0])
    dt = torch.float32 if _scaled_low(n) else None
    col = c.op("reshape", [c.tensor(vec, dt)], {"shape": [k, 1]})
    mv = c.op("matmul", [c.tensor(mat, dt), col], {"transpose_x": False, "transpose_y": False})
    mv = c.op("reshape", [mv], {"shape": [int(val(mat).shape[0])]})
    return _scaled_sum(c, n, mv, bias)


@converts(aten._trilinear.default)
def _trilinear(c, n):
    """sum over sumdim of i1 * i2 * i3, each unsqueezed at its expand dims to the common rank
    (nn.functional.bilinear: x1 [B, 1, I, 1] * W [1, O, I, J] * x2 [B, 1, 1, J] summed over I
    and J); 16-bit in float32, rounded once, as a matmul accumulates."""
    i1, i2, i3, e1, e2, e3, sumdim = n.args[:7]
    out = val(n)
    rank = val(i1).dim() + len(e1)
    if 0 in val(i1).shape or 0 in val(i2).shape or 0 in val(i3).shape:  # a sum of nothing
        return c.op("fill", [], {"shape": pshape(out), "value": 0.0,
                                 "dtype": dtype_name(out.dtype)})
    wide = acc_dtype(out.dtype)

    def spread(t, expand):
        shape = [int(s) for s in val(t).shape]
        for d in sorted(expand):
            shape.insert(d, 1)
        return c.op("reshape", [c.tensor(t, wide)], {"shape": shape})
    prod = c.op("mul", [c.op("mul", [spread(i1, e1), spread(i2, e2)]), spread(i3, e3)])
    if sumdim:
        prod = c.op("reduce_sum", [prod], {"axes": sorted(d % rank for d in sumdim),
                                           "keepdim": False})
    prod = c.op("reshape", [prod], {"shape": pshape(out)})
    return c.op("cast", [prod], {"dtype": dtype_name(out.dtype)}) if wide != out.dtype else prod


@converts(aten.native_group_norm.default)
def _group_norm(c, n):
    """(y, mean, rstd): x as [N, groups, C / groups * HxW] normalized per group (biased
    variance), then the per-channel weight and bias; mean and rstd are [N, groups]. 16-bit
    inputs compute in float32 and round each output once, as PyTorch's kernels do: on CPU y is
    x * a + b with a = rstd * weight and b = bias - mean * a per channel, on CUDA
    (x - mean) * rstd * weight + bias (its decomposition's two forms). Statistics and y in
    16 bits were a unit in the last place off."""
    x, w, b, batch, channels, hxw, groups, eps = n.args
    xt = val(x)
    if not xt.dtype.is_floating_point or xt.numel() == 0:
        raise Unsupported(f"group_norm of a {xt.dtype} tensor or an empty one")
    batch, channels, hxw, groups = int(batch), int(channels), int(hxw), int(groups)
    wide = acc_dtype(xt.dtype)
    xs = c.op("reshape", [c.tensor(x, wide)], {"shape": [batch, groups, channels // groups * hxw]})
    mean = c.op("reduce_mean", [xs], {"axes": [2], "keepdim": True})
    d = c.op("sub", [xs, mean])
    var = c.op("reduce_mean", [c.op("mul", [d, d])], {"axes": [2], "keepdim": True})
    rstd = c.op("rsqrt", [c.op("add", [var, c.tensor(float(eps), wide)])])
    # Per channel: [1, groups, C / groups, 1] against the input as [N, groups, C / groups, HxW].
    per_ch = lambda t: c.op("reshape", [c.tensor(t, wide)],  # noqa: E731
                            {"shape": [1, groups, channels // groups, 1]})
    grouped = [batch, groups, channels // groups, hxw]
    at_ch = lambda t: c.op("reshape", [t], {"shape": [batch, groups, 1, 1]})  # noqa: E731
    if xt.device.type == "cpu" and w is not None:
        a = c.op("mul", [at_ch(rstd), per_ch(w)])
        shift = c.op("mul", [c.op("neg", [at_ch(mean)]), a])
        if b is not None:
            shift = c.op("add", [shift, per_ch(b)])
        y = c.op("add", [c.op("mul", [c.op("reshape", [xs], {"shape": grouped}), a]), shift])
    else:
        y = c.op("reshape", [c.op("mul", [d, rstd])], {"shape": grouped})
        if w is not None:
            y = c.op("mul", [y, per_ch(w)])
        if b is not None:
            y = c.op("add", [y, per_ch(b)])
    y = c.op("reshape", [y], {"shape": pshape(xt)})
    stats = lambda t: c.op("reshape", [t], {"shape": [batch, groups]})  # noqa: E731
    outs = [y, stats(mean), stats(rstd)]
    for i, meta_ in enumerate(val(n)):
        if meta_.dtype != wide:
            outs[i] = c.op("cast", [outs[i]], {"dtype": dtype_name(meta_.dtype)})
    return outs


# ---- sampling
def _grid_coordinate(c, g, size, padding_mode, align_corners, dt):
    """PyTorch's grid_sampler_compute_source_index: the normalized coordinate g ([-1, 1]) as a
    pixel position, clipped (border) or reflected and clipped (reflection)."""
    f = lambda v: c.tensor(float(v), dt)  # noqa: E731
    one = f(1)
    if align_corners:
        x = c.op("mul", [c.op("div", [c.op("add", [g, one]), f(2)]), f(size - 1)])
    else:
        x = c.op("div", [c.op("sub", [c.op("mul", [c.op("add", [g, one]), f(size)]), one]), f(2)])
    if padding_mode == 2:
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if low == high:
            return c.op("mul", [x, f(0)])
        lo, span = low / 2, (high - low) / 2
        a = c.op("abs", [c.op("sub", [x, f(lo)])])
        extra = c.op("fmod", [a, f(span)])
        flips = c.op("floor", [c.op("div", [a, f(span)])])
        even = c.op("equal", [c.op("fmod", [flips, f(2)]), f(0)])
        x = c.op("where", [even, c.op("add", [extra, f(lo)]),
                           c.op("add", [c.op("sub", [f(span), extra]), f(lo)])])
    if padding_mode in (1, 2):
        x = c.op("minimum", [c.op("maximum", [x, f(0)]), f(size - 1)])
    return x


@converts(aten.grid_sampler_2d.default)
def _grid_sampler_2d(c, n):
    """Bilinear or nearest sampling of x [N, C, H, W] at grid [N, Ho, Wo, 2] (x, y), padding
    zeros, border or reflection, as PyTorch's CPU kernel: the four (one) taps gathered at their
    flat positions, taps outside the input weighing nothing. 16-bit inputs compute as PyTorch's
    kernel for the device does: on CPU in the input's dtype (float32 would pick other taps), on
    CUDA in float32 (its opmath type), rounded once."""
    x, grid, mode, padding_mode, align_corners = n.args
    xt, gt = val(x), val(grid)
    if mode not in (0, 1):
        raise Unsupported("grid_sampler_2d with bicubic interpolation")
    if not xt.dtype.is_floating_point or 0 in xt.shape or 0 in gt.shape:
        raise Unsupported(f"grid_sampler_2d of a {xt.dtype} {list(xt.shape)} input")
    nb, ch, h, w = (int(s) for s in xt.shape)
    ho, wo = int(gt.shape[1]), int(gt.shape[2])
    low = xt.dtype in SIXTEEN_BIT
    dt = torch.float32 if low and xt.device.type == "cuda" else xt.dtype
    g = c.tensor(grid, dt)
    coord = lambda k, size: _grid_coordinate(  # noqa: E731
        c, c.op("reshape", [c.op("slice", [g], {"axes": [3], "starts": [k], "ends": [k + 1]})],
                {"shape": [nb, 1, ho, wo]}), size, padding_mode, align_corners, dt)
    ix, iy = coord(0, w), coord(1, h)
    base = c.op("add", [scaled(c, iota(c, nb, 4, 0), ch * h * w), scaled(c, iota(c, ch, 4, 1), h * w)])
    xv = c.tensor(x, dt)
    f = lambda v: c.tensor(float(v), dt)  # noqa: E731
    zero = f(0)

    def tap(px, py):
        """The input at integer-valued positions (px, py), zero outside."""
        inside = c.op("logical_and", [
            c.op("logical_and", [c.op("greater_equal", [px, zero]),
                                 c.op("less_equal", [px, f(w - 1)])]),
            c.op("logical_and", [c.op("greater_equal", [py, zero]),
                                 c.op("less_equal", [py, f(h - 1)])])])
        at = lambda p, hi: c.op("cast", [c.op("minimum", [c.op("maximum", [p, zero]), f(hi)])],  # noqa: E731
                                {"dtype": "int64"})
        flat = linear_index(c, [base, scaled(c, at(py, h - 1), w), at(px, w - 1)],
                            [nb, ch, ho, wo])
        v = flat_gather(c, xv, nb * ch * h * w, flat, [nb, ch, ho, wo], [nb, ch, ho, wo])
        return c.op("where", [inside, v, zero])

    if mode == 1:
        out = tap(c.op("round", [ix]), c.op("round", [iy]))
    else:
        x0, y0 = c.op("floor", [ix]), c.op("floor", [iy])
        x1, y1 = c.op("add", [x0, f(1)]), c.op("add", [y0, f(1)])
        dx0, dx1 = c.op("sub", [ix, x0]), c.op("sub", [x1, ix])
        dy0, dy1 = c.op("sub", [iy, y0]), c.op("sub", [y1, iy])
        out = None
        for px, py, wx, wy in ((x0, y0, dx1, dy1), (x1, y0, dx0, dy1), (x0, y1, dx1, dy0),
                               (x1, y1, dx0, dy0)):
            term = c.op("mul", [tap(px, py), c.op("mul", [wx, wy])])
            out = term if out is None else c.op("add", [out, term])
    return c.op("cast", [out], {"dtype": dtype_name(xt.dtype)}) if dt != xt.dtype else out


# ---- distances
@converts(aten.dist.default)
def _dist(c, n):
    """The p-norm of a - b (broadcast; the difference rounded to the inputs' dtype, then summed
    in float32 for 16-bit as PyTorch's norm): p = 0 counts nonzeros, +-inf the largest or
    smallest magnitude."""
    a, b = n.args[:2]
    p = float(n.args[2] if len(n.args) > 2 else n.kwargs.get("p", 2))
    out = val(n)
    if not out.dtype.is_floating_point or not isinstance(b, torch.fx.Node):
        raise Unsupported(f"dist of {out.dtype} or of a scalar")
    shape = list(torch.broadcast_shapes(val(a).shape, val(b).shape))
    if 0 in shape:
        raise Unsupported(f"dist of empty tensors {shape}")
    wide = acc_dtype(out.dtype)
    full = lambda t: c.op("broadcast_to", [c.tensor(t, out.dtype)], {"shape": shape or [1]})  # noqa: E731
    d = c.op("sub", [full(a), full(b)])
    if wide != out.dtype:
        d = c.op("cast", [d], {"dtype": dtype_name(wide)})
    axes = {"axes": list(range(max(len(shape), 1))), "keepdim": False}
    m = c.op("abs", [d])
    if p == math.inf:
        r = c.op("reduce_max", [m], axes)
    elif p == -math.inf:
        r = c.op("reduce_min", [m], axes)
    elif p == 0:
        nz = c.op("not_equal", [d, c.tensor(0.0, wide)])
        r = c.op("reduce_sum", [c.op("cast", [nz], {"dtype": dtype_name(wide)})], axes)
    elif p == 1:
        r = c.op("reduce_sum", [m], axes)
    elif p == 2:
        r = c.op("sqrt", [c.op("reduce_sum", [c.op("mul", [d, d])], axes)])
    else:
        r = c.op("pow", [c.op("reduce_sum", [c.op("pow", [m, c.tensor(p, wide)])], axes),
                         c.tensor(1.0 / p, wide)])
    r = c.op("reshape", [r], {"shape": [1]})
    return c.op("cast", [r], {"dtype": dtype_name(out.dtype)}) if wide != out.dtype else r
