"""Converters of the network layers: layer and batch normalization and matmuls (convolution
and pooling are conv.py and pool.py)."""
import operator

import torch

from ..registry import Unsupported, converts, no_rank0, val

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
    if 0 in users:
        if w is None or b is None:
            raise Unsupported("layer_norm without weight or bias")
        outs[0] = c.op("layer_norm", [xs, c.tensor(w), c.tensor(b)],
                       {"axis": axis, "epsilon": float(eps)})
    if 1 in users or 2 in users:  # mean and rstd (kept dims), saved for backward
        mean = c.op("reduce_mean", [xs], {"axes": axes, "keepdim": True})
        d = c.op("sub", [xs, mean])
        var = c.op("reduce_mean", [c.op("mul", [d, d])], {"axes": axes, "keepdim": True})
        rstd = c.op("rsqrt", [c.op("add", [var, c.tensor(float(eps), xt.dtype)])])
        outs[1], outs[2] = mean, rstd
    if xt.dtype != torch.float32 and (1 in users or 2 in users):
        raise Unsupported("layer_norm statistics for a dtype other than float32")
    return outs


@converts(aten._native_batch_norm_legit_no_training.default)
def _batch_norm(c, n):
    x, w, b, mean, var, _momentum, eps = n.args
    if w is None or b is None:
        raise Unsupported("batch_norm without weight or bias")
    if any(u.args[1] != 0 for u in n.users if u.target == operator.getitem):
        raise Unsupported("batch_norm saved statistics used")
    y = c.op("batch_norm", [c.tensor(x), c.tensor(w), c.tensor(b), c.tensor(mean), c.tensor(var)],
             {"epsilon": float(eps), "axis": 1})
    return [y, None, None]


@converts(aten._native_batch_norm_legit_functional.default)
def _batch_norm_train(c, n):
    """Training batch norm (float32 or float64): batch statistics over every axis but 1, the
    outputs (y, mean, rstd, new running mean, new running var) as PyTorch defines them."""
    x, w, b, rm, rv, training, momentum, eps = n.args
    xt = val(x)
    no_rank0(x)
    if (not training or w is None or b is None or xt.dim() < 2
            or xt.dtype not in (torch.float32, torch.float64)):
        raise Unsupported("batch_norm (training) without affine parameters or not float32/64")
    axes = [d for d in range(xt.dim()) if d != 1]
    count = xt.numel() // int(xt.shape[1])
    if count < 2:
        raise Unsupported("batch_norm (training) over one value per channel")
    bshape = [1, int(xt.shape[1])] + [1] * (xt.dim() - 2)
    f = lambda v: c.tensor(float(v), xt.dtype)  # noqa: E731
    xs = c.tensor(x)
    mean = c.op("reduce_mean", [xs], {"axes": axes, "keepdim": True})
    d = c.op("sub", [xs, mean])
    var = c.op("reduce_mean", [c.op("mul", [d, d])], {"axes": axes, "keepdim": True})
    rstd = c.op("rsqrt", [c.op("add", [var, f(eps)])])
    ch = lambda t: c.op("reshape", [t], {"shape": bshape})  # noqa: E731
    y = c.op("add", [c.op("mul", [c.op("mul", [d, rstd]), ch(c.tensor(w))]), ch(c.tensor(b))])
    flat = lambda t: c.op("reshape", [t], {"shape": [int(xt.shape[1])]})  # noqa: E731
    new_rm = c.op("add", [c.op("mul", [c.tensor(rm), f(1 - momentum)]),
                          c.op("mul", [flat(mean), f(momentum)])])
    unbiased = c.op("mul", [flat(var), f(momentum * count / (count - 1))])
    new_rv = c.op("add", [c.op("mul", [c.tensor(rv), f(1 - momentum)]), unbiased])
    return [y, flat(mean), flat(rstd), new_rm, new_rv]


# ---- matmul
@converts(aten.mm.default, aten.bmm.default)
def _mm(c, n):
    return c.op("matmul", [c.tensor(n.args[0]), c.tensor(n.args[1])],
                {"transpose_x": False, "transpose_y": False})


@converts(aten.addmm.default)
def _addmm(c, n):
    bias, x, y = n.args[:3]
    if n.kwargs.get("beta", 1) != 1 or n.kwargs.get("alpha", 1) != 1:
        raise Unsupported("addmm with beta or alpha")
    m = c.op("matmul", [c.tensor(x), c.tensor(y)], {"transpose_x": False, "transpose_y": False})
    return c.op("add", [m, c.tensor(bias)])
