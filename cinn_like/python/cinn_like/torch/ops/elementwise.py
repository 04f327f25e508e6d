"""Converters of the elementwise ops: unary and binary math, comparisons, where, clamp, casts
and copies."""
import torch

from ..registry import CONVERTERS, Unsupported, converts, dtype_name, meta, pshape, val

aten = torch.ops.aten


UNARY = {aten.neg: "neg", aten.abs: "abs", aten.exp: "exp", aten.log: "log", aten.sqrt: "sqrt",
         aten.rsqrt: "rsqrt", aten.reciprocal: "reciprocal", aten.sin: "sin", aten.cos: "cos",
         aten.tanh: "tanh", aten.sigmoid: "sigmoid", aten.relu: "relu", aten.silu: "silu",
         aten.log1p: "log1p", aten.erf: "erf", aten.floor: "floor", aten.ceil: "ceil",
         aten.sign: "sign", aten.logical_not: "logical_not", aten.isnan: "isnan"}


def _unary(op_name):
    def conv(c, n):
        out = val(n)
        # Float math on an integer input: PyTorch promotes to the default float dtype.
        return c.op(op_name, [c.tensor(n.args[0], out.dtype if op_name != "isnan" else None)])
    return conv


for _packet, _name in UNARY.items():
    CONVERTERS[_packet.default] = _unary(_name)


@converts(aten.gelu.default)
def _gelu(c, n):
    approximate = n.kwargs.get("approximate", n.args[1] if len(n.args) > 1 else "none")
    return c.op("gelu", [c.tensor(n.args[0])], {"approximate": approximate})


@converts(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default)
def _identity(c, n):
    if n.kwargs.get("memory_format") not in (None, torch.contiguous_format, torch.preserve_format):
        raise Unsupported("clone to a memory format other than contiguous")
    return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


BINARY = {aten.add: "add", aten.sub: "sub", aten.mul: "mul", aten.div: "div", aten.pow: "pow",
          aten.maximum: "maximum", aten.minimum: "minimum", aten.remainder: "mod",
          aten.eq: "equal", aten.ne: "not_equal", aten.lt: "less", aten.le: "less_equal",
          aten.gt: "greater", aten.ge: "greater_equal", aten.logical_and: "logical_and",
          aten.logical_or: "logical_or", aten.logical_xor: "logical_xor"}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "logical_and", "logical_or", "logical_xor"}


def _binary(op_name):
    def conv(c, n):
        a, b = n.args[0], n.args[1]
        out = val(n)
        if op_name in COMPARISONS:
            logical = op_name.startswith("logical")
            dt = torch.bool if logical else torch.result_type(meta(a), meta(b))
        else:
            dt = out.dtype
        attrs = {}
        if op_name == "div":
            mode = n.kwargs.get("rounding_mode")
            if mode is not None:
                attrs["rounding_mode"] = mode
        x, y = c.tensor(a, dt), c.tensor(b, dt)
        alpha = n.kwargs.get("alpha", 1)
        if alpha != 1:
            if op_name not in ("add", "sub"):
                raise Unsupported("alpha on an op other than add/sub")
            y = c.op("mul", [y, c.tensor(alpha, dt)])
        return c.op(op_name, [x, y], attrs)
    return conv


for _packet, _name in BINARY.items():
    for _overload in ("Tensor", "Scalar", "Tensor_Scalar", "Scalar_Tensor", "Tensor_Tensor",
                      "Tensor_mode", "Scalar_mode", "default"):
        if hasattr(_packet, _overload):
            CONVERTERS[getattr(_packet, _overload)] = _binary(_name)


@converts(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(c, n):
    dt = val(n).dtype
    return c.op("where", [c.tensor(n.args[0], torch.bool), c.tensor(n.args[1], dt),
                          c.tensor(n.args[2], dt)])


@converts(aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default, aten.hardtanh.default)
def _clamp(c, n):
    target = n.target
    lo = hi = None
    if target == aten.clamp_min.default:
        lo = n.args[1]
    elif target == aten.clamp_max.default:
        hi = n.args[1]
    else:
        default = (-1.0, 1.0) if target == aten.hardtanh.default else (None, None)
        lo = n.args[1] if len(n.args) > 1 else n.kwargs.get("min", default[0])
        hi = n.args[2] if len(n.args) > 2 else n.kwargs.get("max", default[1])
    if isinstance(lo, torch.fx.Node) or isinstance(hi, torch.fx.Node):
        raise Unsupported("tensor clamp bounds")
    inf = float("inf")
    return c.op("clip", [c.tensor(n.args[0], val(n).dtype)],
                {"min": float(-inf if lo is None else lo), "max": float(inf if hi is None else hi)})


@converts(aten._to_copy.default)
def _to_copy(c, n):
    src, out = val(n.args[0]), val(n)
    if src.device != out.device:
        raise Unsupported(f"copy between devices {src.device} -> {out.device}")
    if n.kwargs.get("memory_format") not in (None, torch.contiguous_format, torch.preserve_format):
        raise Unsupported("copy to a memory format other than contiguous")
    x = c.tensor(n.args[0])
    if src.dtype == out.dtype:
        return c.op("reshape", [x], {"shape": pshape(out)})
    return c.op("cast", [x], {"dtype": dtype_name(out.dtype)})


BITWISE = {aten.bitwise_and: "logical_and", aten.bitwise_or: "logical_or",
           aten.bitwise_xor: "logical_xor"}


def _bitwise(op_name):
    def conv(c, n):
        if val(n).dtype != torch.bool:
            raise Unsupported(f"{n.target.__name__.split('.')[0]} of {val(n).dtype} tensors")
        return c.op(op_name, [c.tensor(n.args[0], torch.bool), c.tensor(n.args[1], torch.bool)])
    return conv


for _packet, _name in BITWISE.items():
    for _overload in ("Tensor", "Scalar"):
        CONVERTERS[getattr(_packet, _overload)] = _bitwise(_name)


@converts(aten.bitwise_not.default)
def _bitwise_not(c, n):
    if val(n).dtype != torch.bool:
        raise Unsupported("bitwise_not of an integer tensor")
    return c.op("logical_not", [c.tensor(n.args[0])])
