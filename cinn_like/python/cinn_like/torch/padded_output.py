"""A 16-bit GEMM result of the graph whose rows are not whole 16-byte units (GPT-2's logits,
50257 wide), computed with its rows padded and returned as a view of the padded buffer, as
Inductor's padded GEMMs return theirs.

cuBLAS runs its fast kernels only on rows aligned to 16 bytes, so the graph passes pad such a
product and slice it back (hlir/pass/matmul_padding.h): for a result the partition returns,
that slice is a copy of the whole product, which took 0.22 ms of a 2.8 ms GPT-2 float16 call
on an H200 (the logits are 8 x 512 x 50257). Here the Program computes the padded product as
its output instead, and the call returns the result as a strided view of it (build_program's
"view" result): the same values, rows `padded` elements apart.
"""
from typing import NamedTuple

import torch

from .registry import SIXTEEN_BIT, val

_ATEN = torch.ops.aten
# As hlir/pass/matmul_padding.h: products of fewer multiply-adds, or narrower, are left alone.
MIN_MACS = 1 << 24
MIN_DIM = 64
# Views that keep the product's rows whole: a result whose last dim is the product's.
_ROW_VIEWS = {_ATEN.view.default, _ATEN._unsafe_view.default, _ATEN.unsqueeze.default,
              _ATEN.alias.default}


def _transposed(node):
    """Whether fx node `node` is a 2-d transpose of another node (t, transpose(0, 1),
    permute([1, 0]))."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function" \
            or not isinstance(node.args[0], torch.fx.Node) or val(node.args[0]).dim() != 2:
        return False
    if node.target == _ATEN.t.default:
        return True
    if node.target == _ATEN.transpose.int:
        return sorted(d % 2 for d in node.args[1:3]) == [0, 1]
    return node.target == _ATEN.permute.default and list(node.args[1]) in ([1, 0], [-1, -2])


class Padded(NamedTuple):
    """A result padded_product computes padded: its mm or addmm node, the product's width and
    padded width, the result's meta as a view of the padded product, and that product's meta."""
    node: torch.fx.Node
    width: int
    padded: int
    view: torch.Tensor
    base: torch.Tensor


def padded_metas(result, inside=lambda n: n.op == "call_function"):
    """The Padded of partition result node `result`: mm or addmm (default scales) of 16-bit CUDA
    tensors with static shapes whose product rows are not whole 16-byte units, the result itself
    or viewed through _ROW_VIEWS with its rows whole, no node of the partition (`inside`: of its
    GraphModule by default) reading the result or the nodes between but the next one (another
    reader would need the unpadded product: the GEMM twice); None otherwise. plan_body reads a
    stored plan's results back by it, in the whole graph."""
    def readers(n):
        return [u for u in n.users if inside(u)]

    if readers(result):
        return None
    node = result
    while node.op == "call_function" and node.target in _ROW_VIEWS \
            and isinstance(node.args[0], torch.fx.Node) and readers(node.args[0]) == [node]:
        node = node.args[0]
    if node.op != "call_function" or node.target not in (_ATEN.mm.default, _ATEN.addmm.default):
        return None
    if any(node.kwargs.get(k, 1) != 1 for k in ("alpha", "beta")):
        return None
    meta, out = val(node), val(result)
    if meta.dtype not in SIXTEEN_BIT or meta.device.type != "cuda" or meta.dim() != 2:
        return None
    rows, width = (int(s) for s in meta.shape)
    depth = int(val(node.args[-2]).shape[1])
    align = 16 // meta.element_size()
    if width % align == 0 or width < MIN_DIM or rows * width * depth < MIN_MACS \
            or int(out.shape[-1]) != width:
        return None
    padded = -(-width // align) * align
    strides, step = [1] * out.dim(), padded
    for d in range(out.dim() - 2, -1, -1):
        strides[d] = step
        step *= int(out.shape[d])
    view = torch.empty_strided(tuple(out.shape), tuple(strides), dtype=out.dtype, device="meta")
    base = torch.empty((rows, padded), dtype=meta.dtype, device="meta")
    return Padded(node, width, padded, view, base)


def padded_product(c, result):
    """(Program value of the padded product, the result's meta as a view of it, the padded
    product's meta) for partition result node `result` (padded_metas'), converted by `c`; None
    where padded_metas declines."""
    p = padded_metas(result)
    if p is None:
        return None
    node, width, padded = p.node, p.width, p.padded
    x, y = node.args[-2:]
    transposed = _transposed(y)
    if transposed:  # a linear layer's t(weight): the weight's rows padded, read transposed
        w = c.op("pad", [c.tensor(y.args[0])], {"paddings": [0, padded - width, 0, 0], "value": 0.0})
    else:
        w = c.op("pad", [c.tensor(y)], {"paddings": [0, 0, 0, padded - width], "value": 0.0})
    product = c.op("matmul", [c.tensor(x), w], {"transpose_x": False, "transpose_y": transposed})
    if node.target == _ATEN.addmm.default:
        bias = node.args[0]
        b = c.tensor(bias, val(node).dtype)
        if isinstance(bias, torch.fx.Node) and val(bias).dim() and val(bias).shape[-1] == width:
            rank = val(bias).dim()
            b = c.op("pad", [b], {"paddings": [0, 0] * (rank - 1) + [0, padded - width],
                                  "value": 0.0})
        product = c.op("add", [product, b])
    return product, p.view, p.base
