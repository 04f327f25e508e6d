"""Helpers the converters share: index arithmetic written as cinn_like ops (an iota along one
dim, int64 scalars, a flat-index gather) and the zero-insertion of a strided window's values."""
import math

import torch

from ..registry import dtype_name

I64 = torch.int64


def iota(c, size, rank, dim):
    """int64 [0, size) laid along `dim` of a rank-`rank` shape of ones (broadcasts there)."""
    a = c.op("arange", [], {"start": 0.0, "end": float(size), "step": 1.0, "dtype": "int64"})
    shape = [1] * rank
    shape[dim] = size
    return c.op("reshape", [a], {"shape": shape}) if rank > 1 else a


def clamp_index(c, x, hi):
    """int64 x clamped into [0, hi]."""
    return c.op("minimum", [c.op("maximum", [x, scalar(c, 0)]), scalar(c, hi)])


def extreme(dt, low):
    """The lowest (`low`) or highest value of dtype dt: +-inf for floats, the integer's range
    (a fill of -inf is refused for an integer dtype), 0 or 1 for bool."""
    if dt.is_floating_point:
        return float("-inf") if low else float("inf")
    if dt == torch.bool:
        return 0.0 if low else 1.0
    info = torch.iinfo(dt)
    return float(info.min if low else info.max)


def scalar(c, value, dtype=I64):
    return c.op("fill", [], {"shape": [1], "value": float(value), "dtype": dtype_name(dtype)})


def scaled(c, x, factor):
    """x * factor for an int64 tensor (x itself when factor is 1)."""
    return x if factor == 1 else c.op("mul", [x, scalar(c, factor)])


def wrap_negative(c, index, size):
    """index + size where index < 0 (PyTorch's negative indices), as int64."""
    neg = c.op("less", [index, scalar(c, 0)])
    return c.op("where", [neg, c.op("add", [index, scalar(c, size)]), index])


def user_index(c, n, index, size, negative):
    """The int64 index tensor a user gave node `n` for a dim of `size`, checked at run time (an
    index out of range raises naming the node, as PyTorch does, where the computes would clamp
    or skip it) and, where PyTorch takes negative indices from the end (`negative`: indexing,
    put), wrapped; gather, scatter and index_reduce take [0, size) only."""
    low = -size if negative else 0
    checked = c.op("check_index", [index], {
        "low": low, "high": size,
        "what": f"{n.target}: index into a dim of size {size}"})
    return wrap_negative(c, checked, size) if negative else checked


def flat_gather(c, x, x_numel, flat, flat_shape, out_shape):
    """The elements of x (any shape, read in row-major order) at the int64 positions `flat`
    (of shape flat_shape), shaped out_shape."""
    xf = c.op("reshape", [x], {"shape": [x_numel]})
    n = math.prod(flat_shape) if flat_shape else 1
    idx = c.op("reshape", [flat], {"shape": [n]})
    g = c.op("gather", [xf, idx], {"axis": 0})
    return c.op("reshape", [g], {"shape": list(out_shape) or [1]})


def linear_index(c, terms, shape):
    """sum of int64 `terms` (each broadcasting to `shape`), materialized at `shape`."""
    total = terms[0]
    for t in terms[1:]:
        total = c.op("add", [total, t])
    return c.op("broadcast_to", [total], {"shape": list(shape)})


def dilate(c, x, shape, axes, strides):
    """Inserts stride - 1 zeros between neighbours along each axis of `axes` (shape `shape`):
    size n becomes (n - 1) * stride + 1. Returns (name, new shape)."""
    shape = list(shape)
    for a, s in zip(axes, strides):
        if s == 1 or shape[a] == 1:
            continue
        n = shape[a]
        split = shape[:a + 1] + [1] + shape[a + 1:]
        x = c.op("reshape", [x], {"shape": split})
        pads = [0] * (2 * len(split))
        pads[2 * (a + 1) + 1] = s - 1
        x = c.op("pad", [x], {"paddings": pads, "value": 0.0})
        merged = shape[:a] + [n * s] + shape[a + 1:]
        x = c.op("reshape", [x], {"shape": merged})
        shape[a] = (n - 1) * s + 1
        x = c.op("slice", [x], {"axes": [a], "starts": [0], "ends": [shape[a]]})
    return x, shape


def pad_or_crop(c, x, shape, axis, before, after):
    """Pads (with zeros) or crops `axis` by `before` and `after` elements (negative: crop).
    Returns (name, new shape)."""
    shape = list(shape)
    if before < 0 or after < 0:
        start, end = max(-before, 0), shape[axis] - max(-after, 0)
        x = c.op("slice", [x], {"axes": [axis], "starts": [start], "ends": [end]})
        shape[axis] = end - start
    if before > 0 or after > 0:
        pads = [0] * (2 * len(shape))
        pads[2 * axis], pads[2 * axis + 1] = max(before, 0), max(after, 0)
        x = c.op("pad", [x], {"paddings": pads, "value": 0.0})
        shape[axis] += max(before, 0) + max(after, 0)
    return x, shape
