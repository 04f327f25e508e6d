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
    """A value for torch.result_type: a meta tensor with the node's rank and dtype, or the scalar."""
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
            dt = torch.bool if op_name.startswith("logical") else torch.result_type(_meta(a), _meta(b))
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
    for _overload in ("Tensor", "Scalar", "Tensor_Scalar", "Scalar_Tensor", "Tensor_mode",
                      "Scalar_mode", "default"):
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


# ---- reductions
def _axes(dims, rank):
    if dims is None or len(dims) == 0:
        return list(range(rank))
    return sorted(d % rank for d in dims)


def _reduce(op_name):
    def conv(c, n):
        x = n.args[0]
        _no_rank0(x)
        rank = val(x).dim()
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
        out = val(n)
        src = c.tensor(x, out.dtype if op_name in ("reduce_sum", "reduce_mean") else None)
        if out.dim() == 0:  # everything reduced: keep the dims, then shape [1]
            r = c.op(op_name, [src], {"axes": _axes(dims, rank), "keepdim": True})
            return c.op("reshape", [r], {"shape": [1]})
        return c.op(op_name, [src], {"axes": _axes(dims, rank), "keepdim": bool(keepdim)})
    return conv


CONVERTERS[aten.sum.dim_IntList] = _reduce("reduce_sum")
CONVERTERS[aten.mean.dim] = _reduce("reduce_mean")
CONVERTERS[aten.amax.default] = _reduce("reduce_max")
CONVERTERS[aten.amin.default] = _reduce("reduce_min")


@converts(aten.sum.default)
def _sum_all(c, n):
    _no_rank0(n.args[0])
    x = c.tensor(n.args[0], val(n).dtype)
    r = c.op("reduce_sum", [x], {"axes": list(range(val(n.args[0]).dim())), "keepdim": True})
    return c.op("reshape", [r], {"shape": [1]})


@converts(aten.argmax.default, aten.argmin.default)
def _arg_extreme(c, n):
    x = n.args[0]
    _no_rank0(x)
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    if dim is None:
        raise Unsupported("argmax/argmin over the flattened tensor")
    keepdim = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
    name = "argmax" if n.target == aten.argmax.default else "argmin"
    if val(n).dim() == 0:
        raise Unsupported("argmax/argmin to a rank-0 result")
    return c.op(name, [c.tensor(x)], {"axis": dim % val(x).dim(), "keepdim": bool(keepdim)})


@converts(aten._softmax.default, aten._log_softmax.default)
def _softmax(c, n):
    x, dim, half_to_float = n.args[0], n.args[1], n.args[2]
    _no_rank0(x)
    if half_to_float:
        raise Unsupported("half_to_float softmax")
    name = "softmax" if n.target == aten._softmax.default else "log_softmax"
    return c.op(name, [c.tensor(x)], {"axis": dim % val(x).dim()})


@converts(aten.native_layer_norm.default)
def _layer_norm(c, n):
    x, normalized_shape, w, b, eps = n.args
    _no_rank0(x)
    xt = val(x)
    axis = xt.dim() - len(normalized_shape)
    axes = list(range(axis, xt.dim()))
    xs = c.tensor(x)
    users = {u.args[1] for u in n.users if u.target == operator.getitem}
    outs = [None, None, None]
    if 0 in users:
        if w is None or b is None:
            raise Unsupported("layer_norm without weight or bias")
        outs[0] = c.op("layer_norm", [xs, c.tensor(w), c.tensor(b)], {"axis": axis, "epsilon": float(eps)})
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
    """Training batch norm: batch statistics over every axis but 1, the outputs (y, mean, rstd,
    new running mean, new running var) as PyTorch defines them."""
    x, w, b, rm, rv, training, momentum, eps = n.args
    xt = val(x)
    _no_rank0(x)
    if not training or w is None or b is None or xt.dtype != torch.float32 or xt.dim() < 2:
        raise Unsupported("batch_norm (training) without affine parameters or not float32")
    axes = [d for d in range(xt.dim()) if d != 1]
    count = xt.numel() // int(xt.shape[1])
    if count < 2:
        raise Unsupported("batch_norm (training) over one value per channel")
    bshape = [1, int(xt.shape[1])] + [1] * (xt.dim() - 2)
    f = lambda v: c.tensor(float(v), torch.float32)  # noqa: E731
    xs = c.tensor(x)
    mean = c.op("reduce_mean", [xs], {"axes": axes, "keepdim": True})
    d = c.op("sub", [xs, mean])
    var = c.op("reduce_mean", [c.op("mul", [d, d])], {"axes": axes, "keepdim": True})
    rstd = c.op("rsqrt", [c.op("add", [var, f(eps)])])
    ch = lambda t: c.op("reshape", [t], {"shape": bshape})  # noqa: E731
    y = c.op("add", [c.op("mul", [c.op("mul", [d, rstd]), ch(c.tensor(w))]), ch(c.tensor(b))])
    flat = lambda t: c.op("reshape", [t], {"shape": [int(xt.shape[1])]})  # noqa: E731
    new_rm = c.op("add", [c.op("mul", [c.tensor(rm), f(1 - momentum)]), c.op("mul", [flat(mean), f(momentum)])])
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
    return c.op("fill", [], {"shape": pshape(out), "value": float(value), "dtype": dtype_name(out.dtype)})


@converts(aten.full_like.default)
def _full_like(c, n):
    out = val(n)
    if isinstance(n.args[1], torch.fx.Node):
        raise Unsupported("full_like with a tensor value")
    return c.op("fill", [], {"shape": pshape(out), "value": float(n.args[1]), "dtype": dtype_name(out.dtype)})


@converts(aten.scalar_tensor.default)
def _scalar_tensor(c, n):
    return c.op("fill", [], {"shape": [1], "value": float(n.args[0]), "dtype": dtype_name(val(n).dtype)})


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


# ---- convolution and pooling
@converts(aten.convolution.default)
def _conv(c, n):
    x, w, b, stride, padding, dilation, transposed, _output_padding, groups = n.args
    if transposed:
        raise Unsupported("transposed convolution")
    if val(x).dim() != 4:
        raise Unsupported(f"convolution of rank {val(x).dim()} (only 2-d, NCHW)")
    attrs = {"strides": list(stride), "paddings": list(padding), "dilations": list(dilation),
             "groups": int(groups)}
    inputs = [c.tensor(x), c.tensor(w)] + ([c.tensor(b)] if b is not None else [])
    return c.op("conv2d", inputs, attrs)


@converts(aten.max_pool2d_with_indices.default)
def _max_pool(c, n):
    x, kernel = n.args[0], list(n.args[1])
    stride = list(n.args[2]) if len(n.args) > 2 and n.args[2] else kernel
    padding = list(n.args[3]) if len(n.args) > 3 else [0, 0]
    dilation = list(n.args[4]) if len(n.args) > 4 else [1, 1]
    ceil_mode = n.args[5] if len(n.args) > 5 else False
    if any(u.args[1] != 0 for u in n.users if u.target == operator.getitem):
        raise Unsupported("max_pool2d indices used (backward)")
    if ceil_mode or any(d != 1 for d in dilation) or val(x).dim() != 4:
        raise Unsupported("max_pool2d with ceil_mode, dilation or a 3-d input")
    return [c.op("max_pool2d", [c.tensor(x)], {"kernel_size": _pair(kernel), "strides": _pair(stride),
                                                "paddings": _pair(padding)}), None]


@converts(aten.avg_pool2d.default)
def _avg_pool(c, n):
    a = list(n.args) + [None] * 7
    x, kernel = a[0], _pair(list(a[1]))
    stride = _pair(list(a[2])) if a[2] else kernel
    padding = _pair(list(a[3])) if a[3] is not None else [0, 0]
    ceil_mode, count_include_pad, divisor = a[4] or False, a[5] if a[5] is not None else True, a[6]
    if ceil_mode or divisor is not None or val(x).dim() != 4:
        raise Unsupported("avg_pool2d with ceil_mode, divisor_override or a 3-d input")
    return c.op("avg_pool2d", [c.tensor(x)], {"kernel_size": kernel, "strides": stride,
                                               "paddings": padding,
                                               "count_include_pad": bool(count_include_pad)})


def _pair(v):
    return list(v) * 2 if len(v) == 1 else list(v)


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
