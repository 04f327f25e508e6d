"""Converters of the cumulative ops onto cinn_like's scans (hlir/ops/scan.h): cumsum, cumprod,
logcumsumexp, and cummax/cummin with their int64 indices (the last occurrence of the running
extreme, NaN counting as extreme, as PyTorch picks).

Each is one scan along the node's dim, work linear in its length. cumsum and cumprod compute in
the node's result dtype (integers and bool promote to int64 as PyTorch does, or the `dtype`
argument), so the input is cast to it first. A rank-0 tensor is its Program shape [1], scanned
along axis 0."""
import torch

from ..registry import Unsupported, converts, val

aten = torch.ops.aten


def _axis(x, dim):
    return dim % max(val(x).dim(), 1)


@converts(aten.cumsum.default, aten.cumprod.default, aten.logcumsumexp.default)
def _scan(c, n):
    x, dim = n.args[0], n.args[1]
    out = val(n)
    name = {aten.cumsum.default: "cumsum", aten.cumprod.default: "cumprod",
            aten.logcumsumexp.default: "logcumsumexp"}[n.target]
    if out.dtype == torch.bool or (name == "logcumsumexp" and not out.dtype.is_floating_point):
        raise Unsupported(f"{name} with a {out.dtype} result")
    return c.op(name, [c.tensor(x, out.dtype)], {"axis": _axis(x, dim)})


@converts(aten.cummax.default, aten.cummin.default)
def _scan_extreme(c, n):
    x, dim = n.args[0], n.args[1]
    name = "cummax" if n.target == aten.cummax.default else "cummin"
    return c.op(name, [c.tensor(x)], {"axis": _axis(x, dim)}, num_outputs=2)
