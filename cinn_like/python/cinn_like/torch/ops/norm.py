"""Converters of the vector norms: linalg_vector_norm (which torch.norm, F.normalize and the
distance losses reach before PyTorch 2.15 decomposes it), as reductions of |x|.

16-bit inputs are computed in float32 and rounded once, as PyTorch's norm kernels accumulate."""
import math

import torch

from ..registry import SIXTEEN_BIT, converts, dtype_name, val
from .reduction import _arg, _axes, _reduced

aten = torch.ops.aten


@converts(aten.linalg_vector_norm.default)
def _vector_norm(c, n):
    """ord 2: sqrt(sum x^2); inf / -inf: max / min of |x|; 0: the count of nonzeros; 1: sum |x|;
    any other p: (sum |x|^p)^(1/p), over `dim` (None: every axis)."""
    x, out = n.args[0], val(n)
    ord_ = float(_arg(n, 1, "ord", 2))
    dims, keepdim = _arg(n, 2, "dim"), bool(_arg(n, 3, "keepdim", False))
    low = out.dtype in SIXTEEN_BIT
    work = torch.float32 if low else out.dtype
    xs = c.tensor(x, work)
    axes = _axes(x, dims)
    if ord_ == 0:
        nz = c.op("cast", [c.op("not_equal", [xs, c.tensor(0.0, work)])],
                  {"dtype": dtype_name(work)})
        r = _reduced(c, "reduce_sum", nz, axes, keepdim, out)
    elif math.isinf(ord_):
        name = "reduce_max" if ord_ > 0 else "reduce_min"
        r = _reduced(c, name, c.op("abs", [xs]), axes, keepdim, out)
    elif ord_ == 1:
        r = _reduced(c, "reduce_sum", c.op("abs", [xs]), axes, keepdim, out)
    elif ord_ == 2:
        r = c.op("sqrt", [_reduced(c, "reduce_sum", c.op("mul", [xs, xs]), axes, keepdim, out)])
    else:
        p = c.op("pow", [c.op("abs", [xs]), c.tensor(ord_, work)])
        s = _reduced(c, "reduce_sum", p, axes, keepdim, out)
        r = c.op("pow", [s, c.tensor(1.0 / ord_, work)])
    return c.op("cast", [r], {"dtype": dtype_name(out.dtype)}) if low else r
