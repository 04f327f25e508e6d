"""Converters of the random ops, after seeds.add_seeds gave each its seed and stream: dropout,
rand_like, rand and bernoulli with a probability, built on the Program op random_uniform
(uniforms on [0, 1) from Philox at (seed, stream, element index)).

Dropout keeps an element where its uniform is below 1 - p, as PyTorch's CUDA kernel does, and
scales the kept ones by 1 / (1 - p); its mask is the bool tensor PyTorch's native_dropout
returns, which AOTAutograd saves for the backward. The numbers differ from PyTorch's own (its
generator's stream is its own), as Inductor's do: what holds is the distribution, a new draw at
each call, and the same draws from the same torch.manual_seed.
"""
import torch

from .. import seeds
from ..registry import SIXTEEN_BIT, Unsupported, converts, dtype_name, pshape, val


def _uniform(c, n, seed, stream, shape):
    if not isinstance(stream, int) or stream < 0:
        raise Unsupported(f"random op without a stream of its own ({stream!r})")
    return c.op("random_uniform", [c.tensor(seed)],
                {"shape": shape, "dtype": "float32", "stream": stream})


def _scalar(c, value):
    return c.op("fill", [], {"shape": [1], "value": float(value), "dtype": "float32"})


@converts(seeds.dropout)
def _dropout(c, n):
    x, p, train, seed, stream = n.args
    out, _ = val(n)
    if not isinstance(p, (int, float)):
        raise Unsupported("dropout with a tensor probability")
    xs = c.tensor(x)
    shape = pshape(val(x))
    if train is False or p == 0:  # every element kept (train None means training, as PyTorch)
        keep = c.op("fill", [], {"shape": shape, "value": 1.0, "dtype": "bool"})
        return [c.op("reshape", [xs], {"shape": shape}), keep]  # x itself, a copy (as clone)
    u = _uniform(c, n, seed, stream, shape)
    keep = c.op("less", [u, _scalar(c, 1.0 - p)])
    # PyTorch scales in float32 and rounds once: 1 / (1 - p) in bfloat16 would be off by up to
    # 2^-9 of every kept element.
    wide = out.dtype in SIXTEEN_BIT
    dt = torch.float32 if wide else out.dtype
    xw = c.op("cast", [xs], {"dtype": "float32"}) if wide else xs
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    zero = c.op("fill", [], {"shape": [1], "value": 0.0, "dtype": dtype_name(dt)})
    factor = c.op("fill", [], {"shape": [1], "value": scale, "dtype": dtype_name(dt)})
    y = c.op("mul", [c.op("where", [keep, xw, zero]), factor])
    return [c.op("cast", [y], {"dtype": dtype_name(out.dtype)}) if wide else y, keep]


# The largest float below 1 in each 16-bit type: a float32 uniform above it would round to 1.
_BELOW_ONE = {torch.float16: 1 - 2.0 ** -11, torch.bfloat16: 1 - 2.0 ** -8}


def _as(c, x, dtype):
    """A float32 uniform in `dtype`; 16-bit uniforms stay below 1 ([0, 1) as PyTorch's),
    rounding to nearest below that."""
    if dtype == torch.float32:
        return x
    if dtype in _BELOW_ONE:
        x = c.op("minimum", [x, _scalar(c, _BELOW_ONE[dtype])])
    return c.op("cast", [x], {"dtype": dtype_name(dtype)})


@converts(seeds.rand_like, seeds.rand)
def _rand(c, n):
    """rand_like(x, seed, stream) and rand(size, seed, stream): the value's shape and dtype."""
    seed, stream = n.args[1], n.args[2]
    out = val(n)
    if not out.dtype.is_floating_point:
        raise Unsupported(f"{n.target.__name__} of dtype {out.dtype}")
    return _as(c, _uniform(c, n, seed, stream, pshape(out)), out.dtype)


@converts(seeds.bernoulli_p)
def _bernoulli_p(c, n):
    x, p, seed, stream = n.args
    out = val(n)
    if not isinstance(p, (int, float)):
        raise Unsupported("bernoulli with a tensor probability")
    hit = c.op("less", [_uniform(c, n, seed, stream, pshape(out)), _scalar(c, p)])
    return c.op("cast", [hit], {"dtype": dtype_name(out.dtype)})
