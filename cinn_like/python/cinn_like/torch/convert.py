"""aten -> Program: one converter per core aten op, writing cinn_like ops into a ProgramBuilder.

A converter gets the Converter (builder, values so far) and the fx node; it returns the
Program name of the node's value (a list for multi-output ops) or raises Unsupported with a
reason. The partitioner runs each converter once on a scratch Converter to decide support, so
the checks live in one place. Rank-0 tensors are shape [1] inside a Program (cinn_like rejects
rank 0); ops whose meaning depends on the rank refuse them.
"""
import operator

import torch

from ..program import ProgramBuilder

aten = torch.ops.aten

DTYPES = {
    torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
    torch.float64: "float64", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.uint8: "uint8", torch.bool: "bool",
}


class Unsupported(Exception):
    """The reason a node stays in PyTorch."""


def val(node):
    v = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if v is None:
        raise Unsupported("no tensor metadata (node.meta['val'])")
    return v


def pshape(t):
    """The Program shape of a tensor value: rank 0 becomes [1]."""
    return [int(d) for d in t.shape] or [1]


def dtype_name(dt):
    if dt not in DTYPES:
        raise Unsupported(f"dtype {dt} is not supported by cinn_like")
    return DTYPES[dt]


class Converter:
    def __init__(self):
        self.b = ProgramBuilder()
        self.env = {}  # fx node -> Program name (or list of names)

    def add_input(self, node, name):
        t = val(node)
        self.env[node] = self.b.input(name, dtype_name(t.dtype), pshape(t))

    def op(self, name, inputs, attrs=None, **kw):
        return self.b.op(name, inputs, attrs, **kw)

    def tensor(self, arg, dtype=None):
        """The Program name of a node's value (cast to dtype when given) or a scalar as a
        shape-[1] fill of dtype."""
        if isinstance(arg, torch.fx.Node):
            name = self.env[arg]
            if dtype is not None and val(arg).dtype != dtype:
                name = self.op("cast", [name], {"dtype": dtype_name(dtype)})
            return name
        if isinstance(arg, (bool, int, float)):
            dt = dtype or torch.float32
            v = float(arg)
            if not dt.is_floating_point and dt != torch.bool and v != int(v):
                raise Unsupported(f"float scalar {arg} in an integer op")
            return self.op("fill", [], {"shape": [1], "value": v, "dtype": dtype_name(dt)})
        raise Unsupported(f"argument {arg!r} is not a tensor or a scalar")


def _no_rank0(*tensors):
    for t in tensors:
        if isinstance(t, torch.fx.Node) and val(t).dim() == 0:
            raise Unsupported("rank-0 tensor in a rank-dependent op")


def _meta(arg):
    """For torch.result_type: a meta tensor of the node's rank and dtype, or the scalar."""
    if isinstance(arg, torch.fx.Node):
        t = val(arg)
        return torch.empty(t.shape, dtype=t.dtype, device="meta")
    return arg


CONVERTERS = {}


def converts(*ops):
    def wrap(fn):
        for o in ops:
            CONVERTERS[o] = fn
        return fn
    return wrap


# ---- elementwise
UNARY = {aten.neg: "neg", aten.abs: "abs", aten.exp: "exp", aten.log: "log", aten.sqrt: "sqrt",
         aten.rsqrt: "rsqrt", aten.reciprocal: "reciprocal", aten.sin: "sin", aten.cos: "cos",
         aten.tanh: "tanh", aten.sigmoid: "sigmoid", aten.relu: "relu", aten.silu: "silu",
         aten.log1p: "log1p", aten.floor: "floor", aten.ceil: "ceil", aten.sign: "sign",
         aten.logical_not: "logical_not", aten.isnan: "isnan"}


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
            dt = torch.bool if logical else torch.result_type(_meta(a), _meta(b))
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


# ---- shapes
@converts(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def _reshape(c, n):
    return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


@converts(aten.permute.default)
def _permute(c, n):
    _no_rank0(n.args[0])
    rank = val(n.args[0]).dim()
    return c.op("transpose", [c.tensor(n.args[0])], {"perm": [d % rank for d in n.args[1]]})


@converts(aten.t.default)
def _t(c, n):
    _no_rank0(n.args[0])
    if val(n.args[0]).dim() == 1:
        return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})
    return c.op("transpose", [c.tensor(n.args[0])], {"perm": [1, 0]})


@converts(aten.transpose.int)
def _transpose(c, n):
    _no_rank0(n.args[0])
    rank = val(n.args[0]).dim()
    perm = list(range(rank))
    a, b = n.args[1] % rank, n.args[2] % rank
    perm[a], perm[b] = perm[b], perm[a]
    return c.op("transpose", [c.tensor(n.args[0])], {"perm": perm})


@converts(aten.expand.default)
def _expand(c, n):
    return c.op("broadcast_to", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


@converts(aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
def _unsqueeze(c, n):
    # A reshape to the result's shape: the same for every rank, rank 0 included.
    return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


@converts(aten.cat.default)
def _cat(c, n):
    xs = [x for x in n.args[0] if not (isinstance(x, torch.fx.Node) and val(x).numel() == 0)]
    _no_rank0(*xs)
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
    dt = val(n).dtype
    if len(xs) == 1:
        return c.op("reshape", [c.tensor(xs[0], dt)], {"shape": pshape(val(n))})
    return c.op("concat", [c.tensor(x, dt) for x in xs], {"axis": dim % val(n).dim()})


@converts(aten.slice.Tensor)
def _slice(c, n):
    x = n.args[0]
    _no_rank0(x)
    shape = val(x).shape
    dim = (n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)) % len(shape)
    start = n.args[2] if len(n.args) > 2 else n.kwargs.get("start")
    end = n.args[3] if len(n.args) > 3 else n.kwargs.get("end")
    step = n.args[4] if len(n.args) > 4 else n.kwargs.get("step", 1)
    size = int(shape[dim])
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    if val(n).numel() == 0:
        raise Unsupported("empty slice")
    return c.op("slice", [c.tensor(x)], {"axes": [dim], "starts": [start], "ends": [end],
                                          "steps": [step]})


@converts(aten.select.int)
def _select(c, n):
    x, dim, index = n.args
    _no_rank0(x)
    shape = val(x).shape
    dim %= len(shape)
    index %= int(shape[dim])
    s = c.op("slice", [c.tensor(x)], {"axes": [dim], "starts": [index], "ends": [index + 1]})
    return c.op("reshape", [s], {"shape": pshape(val(n))})


@converts(aten.split_with_sizes.default, aten.split.Tensor)
def _split(c, n):
    x = n.args[0]
    _no_rank0(x)
    shape = val(x).shape
    dim = (n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)) % len(shape)
    sizes = [int(t.shape[dim]) for t in val(n)]
    if any(s == 0 for s in sizes):
        raise Unsupported("split into an empty part")
    if len(sizes) == 1:
        return [c.op("reshape", [c.tensor(x)], {"shape": pshape(val(n)[0])})]
    return c.op("split", [c.tensor(x)], {"sections": sizes, "axis": dim}, num_outputs=len(sizes),
                names=[c.b._fresh("split") for _ in sizes])


@converts(aten.bitwise_not.default)
def _bitwise_not(c, n):
    if val(n).dtype != torch.bool:
        raise Unsupported("bitwise_not of an integer tensor")
    return c.op("logical_not", [c.tensor(n.args[0])])


@converts(aten.index_select.default)
def _index_select(c, n):
    x, dim, index = n.args
    _no_rank0(x, index)
    return c.op("gather", [c.tensor(x), c.tensor(index)], {"axis": dim % val(x).dim()})


@converts(aten.constant_pad_nd.default)
def _pad(c, n):
    x, pad = n.args[0], n.args[1]
    value = n.args[2] if len(n.args) > 2 else n.kwargs.get("value", 0)
    _no_rank0(x)
    if any(p < 0 for p in pad):
        raise Unsupported("negative padding (cropping)")
    rank = val(x).dim()
    paddings = [0] * (2 * rank)
    for i in range(len(pad) // 2):  # pad lists the last dim first
        d = rank - 1 - i
        paddings[2 * d], paddings[2 * d + 1] = pad[2 * i], pad[2 * i + 1]
    return c.op("pad", [c.tensor(x)], {"paddings": paddings, "value": float(value)})


@converts(aten.full.default)
def _full(c, n):
    out = val(n)
    value = n.args[1]
    if isinstance(value, torch.fx.Node):
        raise Unsupported("full with a tensor value")
    return _fill(c, pshape(out), value, out.dtype)


@converts(aten.full_like.default)
def _full_like(c, n):
    out = val(n)
    if isinstance(n.args[1], torch.fx.Node):
        raise Unsupported("full_like with a tensor value")
    return _fill(c, pshape(out), n.args[1], out.dtype)


@converts(aten.scalar_tensor.default)
def _scalar_tensor(c, n):
    return _fill(c, [1], n.args[0], val(n).dtype)


def _fill(c, shape, value, dtype):
    return c.op("fill", [], {"shape": shape, "value": float(value), "dtype": dtype_name(dtype)})


@converts(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(c, n):
    args = list(n.args)
    if n.target == aten.arange.default:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else n.kwargs.get("step", 1)
    if val(n).numel() == 0:
        raise Unsupported("empty arange")
    return c.op("arange", [], {"start": float(start), "end": float(end), "step": float(step),
                               "dtype": dtype_name(val(n).dtype)})


def convert_node(c, node):
    """Writes `node` into c (its tensor inputs already in c.env); raises Unsupported."""
    if node.op != "call_function":
        raise Unsupported(f"{node.op} node")
    if node.target == operator.getitem:
        src = c.env[node.args[0]]
        out = src[node.args[1]] if isinstance(src, list) else None
        if out is None:
            raise Unsupported("output of a multi-output op not computed")
        return out
    fn = CONVERTERS.get(node.target)
    if fn is None:
        raise Unsupported("no cinn_like mapping")
    return fn(c, node)


from . import convert_nn  # noqa: E402,F401 (registers its converters)
