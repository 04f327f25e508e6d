"""Philox4x32-10 in PyTorch ops: the uniforms of cinn_like's random_uniform (ir/philox.h states
the algorithm), bit for bit, for the eager forms of cinn_like's own random ops (attention with
dropout, attention_dropout.py) that must draw what a compiled kernel draws from the same seed
and stream.

The element at row-major index i of a shape is PhiloxUniform(seed, stream, i): the counter is
(i, stream) as four 32-bit words, the key the 64-bit seed, ten rounds, and the top 24 bits of
the first output word times 2^-24. 32-bit words live in int64 tensors; each 32 x 32-bit product
is taken in 16-bit halves so that no int64 product overflows.
"""
import torch

SEED_LIMIT = 2**53  # seeds drawn below it: exact in the reference interpreter's doubles
_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # the multipliers of words 0 and 2
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # the key's Weyl increments
_ROUNDS = 10
_LOW32 = 0xFFFFFFFF


def _mul32(a, b):
    """(high, low) 32-bit words of a * b for int64 tensors a of 32-bit words and an int b."""
    al, ah = a & 0xFFFF, a >> 16
    bl, bh = b & 0xFFFF, b >> 16
    ll = al * bl
    mid = ah * bl + al * bh + (ll >> 16)  # below 2^34
    high = ah * bh + (mid >> 16)
    low = ((mid & 0xFFFF) << 16) | (ll & 0xFFFF)
    return high & _LOW32, low


# Elements drawn per pass: a pass holds about ten int64 temporaries of this many elements (320
# MiB at most), where one pass over a [B, H, L, L] draw would hold ten of its size.
CHUNK = 1 << 22


def uniform(seed, stream, shape, device):
    """float32 uniforms on [0, 1) of `shape`: seed an int (< 2^63) or an int64 tensor of one
    element, stream likewise (>= 0). Drawn CHUNK elements at a time."""
    seed = int(seed.reshape(-1)[0]) if isinstance(seed, torch.Tensor) else int(seed)
    stream = int(stream.reshape(-1)[0]) if isinstance(stream, torch.Tensor) else int(stream)
    seed, stream = seed & (2**64 - 1), stream & (2**64 - 1)
    n = 1
    for d in shape:
        n *= int(d)
    out = torch.empty(n, dtype=torch.float32, device=device)
    for start in range(0, n, CHUNK):
        end = min(n, start + CHUNK)
        out[start:end] = _draw(seed, stream, torch.arange(start, end, dtype=torch.int64,
                                                          device=device))
    return out.reshape(tuple(int(d) for d in shape))


def _draw(seed, stream, i):
    """The uniforms at row-major indices `i` (an int64 tensor) for 64-bit seed and stream."""
    c0, c1 = i & _LOW32, i >> 32
    c2 = torch.full_like(i, stream & _LOW32)
    c3 = torch.full_like(i, stream >> 32)
    k0, k1 = seed & _LOW32, seed >> 32
    for _ in range(_ROUNDS):
        h0, l0 = _mul32(c0, _M0)
        h1, l1 = _mul32(c2, _M1)
        c0, c1, c2, c3 = h1 ^ c1 ^ k0, l1, h0 ^ c3 ^ k1, l0
        k0, k1 = (k0 + _W0) & _LOW32, (k1 + _W1) & _LOW32
    return (c0 >> 8).to(torch.float32) * 2.0 ** -24
