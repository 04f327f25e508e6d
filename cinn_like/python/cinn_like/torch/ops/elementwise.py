"""Converters of the elementwise ops: unary and binary math, comparisons, where, clamp, casts
and copies.

A float16/bfloat16 result of arithmetic, pointwise math, where or clamp is also computed in
float32 from its operands' unrounded float32 values, kept as its unrounded value and, where an
operand had one, rounded once as its value (registry.Converter: wide, rounded), so a chain of
them rounds where its values leave the chain, as Inductor's fused kernels do; a cast between
float32 and a 16-bit dtype passes the unrounded value on (Inductor elides a downcast before an
upcast). Under round_each_op (the emulate_precision_casts option) each op rounds, as eager does.
Ops with steps read the rounded value, as eager does: comparisons and predicates, rounding to
integers, sign, remainders, a division with a rounding mode (a value a hair from a step and the
16-bit value it rounds to fall on either side of it); so do bool and integer ops, frexp, ldexp,
nextafter (its result is defined in its own dtype) and copies.
"""
import math

import torch

from ..registry import (CONVERTERS, SIXTEEN_BIT, Unsupported, acc_dtype, converts, dtype_name,
                        meta, moves, pshape, val)

aten = torch.ops.aten


UNARY = {aten.neg: "neg", aten.abs: "abs", aten.exp: "exp", aten.log: "log", aten.sqrt: "sqrt",
         aten.rsqrt: "rsqrt", aten.reciprocal: "reciprocal", aten.sin: "sin", aten.cos: "cos",
         aten.tanh: "tanh", aten.sigmoid: "sigmoid", aten.relu: "relu", aten.silu: "silu",
         aten.log1p: "log1p", aten.erf: "erf", aten.floor: "floor", aten.ceil: "ceil",
         aten.sign: "sign", aten.logical_not: "logical_not", aten.isnan: "isnan",
         aten.round: "round", aten.trunc: "trunc", aten.fix: "trunc", aten.tan: "tan",
         aten.asin: "asin", aten.acos: "acos", aten.atan: "atan", aten.sinh: "sinh",
         aten.cosh: "cosh", aten.asinh: "asinh", aten.acosh: "acosh", aten.atanh: "atanh",
         aten.expm1: "expm1", aten.exp2: "exp2", aten.log2: "log2", aten.log10: "log10",
         aten.erfc: "erfc", aten.lgamma: "lgamma", aten.isinf: "isinf", aten.signbit: "signbit",
         aten.digamma: "digamma", aten.erfinv: "erfinv", aten.special_erfcx: "erfcx",
         aten.i0: "i0", aten.special_i0e: "i0e", aten.special_i1: "i1", aten.special_i1e: "i1e",
         aten.special_modified_bessel_i0: "i0", aten.special_modified_bessel_i1: "i1",
         aten.special_modified_bessel_k0: "bessel_k0", aten.special_modified_bessel_k1: "bessel_k1",
         aten.special_scaled_modified_bessel_k0: "bessel_k0e",
         aten.special_scaled_modified_bessel_k1: "bessel_k1e",
         aten.special_bessel_j0: "bessel_j0", aten.special_bessel_j1: "bessel_j1",
         aten.special_bessel_y0: "bessel_y0", aten.special_bessel_y1: "bessel_y1",
         aten.special_spherical_bessel_j0: "spherical_bessel_j0", aten.special_ndtri: "ndtri",
         aten.special_airy_ai: "airy_ai"}
# Tests of their input's value: the input keeps its dtype, the result is bool.
PREDICATES = {"isnan", "isinf", "signbit"}
# Ops with steps, and nextafter (its result is defined in its own dtype: the next float16 is not
# float32's), read their operands rounded, as eager does, and start no float32 chain.
ROUNDED_OPERANDS = {"floor", "ceil", "round", "trunc", "sign", "mod", "fmod", "nextafter"}
# Ops that commute with rounding to 16 bits (op(round(x)) == round(op(x))): their 16-bit value is
# always the op in 16 bits, the form the compiler's patterns know (relu(add(matmul, bias)) is a
# matmul's epilogue).
COMMUTE_WITH_ROUNDING = {"relu", "neg", "abs"}


def _elementwise(c, n, compute, chained=True, commutes=False):
    """Elementwise node n's value from compute(read), which writes n's op on operands read by
    read(arg) (arg a node or a number): their values in n's dtype; for a 16-bit result
    (Converter.keeps_wide) of an op that chains (`chained`), also their float32 values,
    unrounded where they have one, for n's unrounded value, and Converter.rounded chooses n's
    value (`commutes`: the op commutes with rounding)."""
    dt = val(n).dtype
    direct = compute(lambda a: c.tensor(a, dt))
    if not chained or not c.keeps_wide(n):
        return direct
    return c.rounded(n, compute(c.wide), direct, commutes)


def _math(c, n, op_name, args, attrs=None):
    """op_name of args (nodes or numbers) as elementwise node n's value."""
    return _elementwise(c, n, lambda read: c.op(op_name, [read(a) for a in args], attrs),
                        op_name not in ROUNDED_OPERANDS, op_name in COMMUTE_WITH_ROUNDING)


def _unary(op_name):
    def conv(c, n):
        if op_name in PREDICATES:
            return c.op(op_name, [c.tensor(n.args[0])])
        # Float math on an integer input: PyTorch promotes to the default float dtype.
        return _math(c, n, op_name, [n.args[0]])
    return conv


for _packet, _name in UNARY.items():
    CONVERTERS[_packet.default] = _unary(_name)


@converts(aten.gelu.default)
def _gelu(c, n):
    approximate = n.kwargs.get("approximate", n.args[1] if len(n.args) > 1 else "none")
    return _math(c, n, "gelu", [n.args[0]], {"approximate": approximate})


def _arg(n, i, name, default):
    return n.args[i] if len(n.args) > i else n.kwargs.get(name, default)


@converts(aten.elu.default)
def _elu(c, n):
    attrs = {"alpha": float(_arg(n, 1, "alpha", 1.0)), "scale": float(_arg(n, 2, "scale", 1.0)),
             "input_scale": float(_arg(n, 3, "input_scale", 1.0))}
    return _math(c, n, "elu", [n.args[0]], attrs)


@converts(aten.leaky_relu.default)
def _leaky_relu(c, n):
    slope = float(_arg(n, 1, "negative_slope", 0.01))
    return _math(c, n, "leaky_relu", [n.args[0]], {"negative_slope": slope})


@converts(aten.softplus.default)
def _softplus(c, n):
    attrs = {"beta": float(_arg(n, 1, "beta", 1.0)),
             "threshold": float(_arg(n, 2, "threshold", 20.0))}
    return _math(c, n, "softplus", [n.args[0]], attrs)


@converts(aten.polygamma.default)
def _polygamma(c, n):
    order = n.args[0]
    if not isinstance(order, int) or not 0 <= order <= 100:
        raise Unsupported(f"polygamma of order {order} (an int in [0, 100])")
    if order == 0:
        return _math(c, n, "digamma", [n.args[1]])
    return _math(c, n, "polygamma", [n.args[1]], {"n": order})


@converts(aten.frexp.Tensor)
def _frexp(c, n):
    """(mantissa, exponent): two ops on the same input, the exponent computed in the input's
    float dtype (every exponent of float16/bfloat16/float32/float64 is exact there) and cast."""
    x = c.tensor(n.args[0])
    exponent = c.op("cast", [c.op("frexp_exponent", [x])], {"dtype": dtype_name(torch.int32)})
    return [c.op("frexp_mantissa", [x]), exponent]


@converts(aten.frac.default)
def _frac(c, n):
    x = c.tensor(n.args[0])
    return c.op("sub", [x, c.op("trunc", [x])])


@converts(aten.isfinite.default)
def _isfinite(c, n):
    x = c.tensor(n.args[0])
    return c.op("logical_not", [c.op("logical_or", [c.op("isnan", [x]), c.op("isinf", [x])])])


@converts(aten.round.decimals)
def _round_decimals(c, n):
    """torch.round(x, decimals=d): rint(x * 10^d) / 10^d (d < 0: rint(x / 10^-d) * 10^-d), in
    float32 for float16 and bfloat16 as PyTorch's opmath does."""
    out = val(n)
    if not out.dtype.is_floating_point:
        raise Unsupported(f"round with decimals of a {out.dtype} tensor")
    d = int(_arg(n, 1, "decimals", 0))
    dt = acc_dtype(out.dtype)
    x = c.tensor(n.args[0], dt)
    scale = c.tensor(float(10 ** abs(d)), dt)
    first, last = ("div", "mul") if d < 0 else ("mul", "div")
    r = c.op(last, [c.op("round", [c.op(first, [x, scale])]), scale])
    return r if dt == out.dtype else c.op("cast", [r], {"dtype": dtype_name(out.dtype)})


@converts(aten.ldexp.Tensor, aten.ldexp.default)
def _ldexp(c, n):
    """x * 2^e, as torch.ldexp (exact for integer exponents while the result is in range)."""
    dt = val(n).dtype
    x, e = c.tensor(n.args[0], dt), c.tensor(n.args[1], dt)
    return c.op("mul", [x, c.op("exp2", [e])])


@converts(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default)
@moves
def _identity(c, n):
    if n.kwargs.get("memory_format") not in (None, torch.contiguous_format, torch.preserve_format):
        raise Unsupported("clone to a memory format other than contiguous")
    return c.op("reshape", [c.tensor(n.args[0])], {"shape": pshape(val(n))})


BINARY = {aten.add: "add", aten.sub: "sub", aten.mul: "mul", aten.div: "div", aten.pow: "pow",
          aten.maximum: "maximum", aten.minimum: "minimum", aten.remainder: "mod",
          aten.eq: "equal", aten.ne: "not_equal", aten.lt: "less", aten.le: "less_equal",
          aten.gt: "greater", aten.ge: "greater_equal", aten.logical_and: "logical_and",
          aten.logical_or: "logical_or", aten.logical_xor: "logical_xor",
          aten.fmod: "fmod", aten.fmax: "fmax", aten.fmin: "fmin", aten.atan2: "atan2",
          aten.hypot: "hypot", aten.copysign: "copysign", aten.true_divide: "div",
          aten.special_zeta: "zeta", aten.igamma: "igamma", aten.igammac: "igammac",
          aten.nextafter: "nextafter",
          aten.special_chebyshev_polynomial_t: "chebyshev_polynomial_t",
          aten.special_legendre_polynomial_p: "legendre_polynomial_p",
          aten.special_hermite_polynomial_h: "hermite_polynomial_h",
          aten.special_hermite_polynomial_he: "hermite_polynomial_he",
          aten.special_laguerre_polynomial_l: "laguerre_polynomial_l",
          aten.special_chebyshev_polynomial_u: "chebyshev_polynomial_u",
          aten.special_chebyshev_polynomial_v: "chebyshev_polynomial_v",
          aten.special_chebyshev_polynomial_w: "chebyshev_polynomial_w",
          aten.special_shifted_chebyshev_polynomial_t: "shifted_chebyshev_polynomial_t",
          aten.special_shifted_chebyshev_polynomial_u: "shifted_chebyshev_polynomial_u",
          aten.special_shifted_chebyshev_polynomial_v: "shifted_chebyshev_polynomial_v",
          aten.special_shifted_chebyshev_polynomial_w: "shifted_chebyshev_polynomial_w"}
# On bool operands PyTorch's arithmetic is logic (mul is and, add is or); cinn_like's
# arithmetic ops take numbers only.
BOOL_ARITHMETIC = {"mul": "logical_and", "add": "logical_or", "maximum": "logical_or",
                   "minimum": "logical_and"}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "logical_and", "logical_or", "logical_xor"}


def _binary(op_name):
    def conv(c, n):
        a, b = n.args[0], n.args[1]
        attrs = {}
        if op_name == "div":
            mode = n.kwargs.get("rounding_mode")
            if mode is not None:
                attrs["rounding_mode"] = mode
        alpha = n.kwargs.get("alpha", 1)
        if op_name in COMPARISONS:
            logical = op_name.startswith("logical")
            dt = torch.bool if logical else torch.result_type(meta(a), meta(b))
            return _binary_in(c, op_name, c.tensor(a, dt), c.tensor(b, dt), alpha, dt, attrs)
        dt, wide = val(n).dtype, torch.float32
        if dt not in SIXTEEN_BIT:
            return _binary_in(c, op_name, c.tensor(a, dt), c.tensor(b, dt), alpha, dt, attrs)
        if alpha != 1 or not all(isinstance(t, torch.fx.Node) for t in (a, b)):
            # A 16-bit tensor with a Python number: PyTorch computes in float32 (its opmath
            # type) and rounds once; the number rounded to 16 bits first (pi as 3.140625 in
            # sinc's gradient) was a unit off in a quarter of the elements.
            r = _binary_in(c, op_name, c.tensor(a, wide), c.tensor(b, wide), alpha, wide, attrs)
            direct = c.op("cast", [r], {"dtype": dtype_name(dt)})
        else:
            direct = _binary_in(c, op_name, c.tensor(a, dt), c.tensor(b, dt), alpha, dt, attrs)
        if op_name in ROUNDED_OPERANDS or "rounding_mode" in attrs or not c.keeps_wide(n):
            return direct
        return c.rounded(n, _binary_in(c, op_name, c.wide(a), c.wide(b), alpha, wide, attrs),
                         direct)
    return conv


def _binary_in(c, op_name, x, y, alpha, dt, attrs):
    """x op (alpha * y) of Program names x and y in dtype dt."""
    if dt == torch.bool and op_name in BOOL_ARITHMETIC:
        if alpha != 1:
            raise Unsupported("alpha on a bool add")
        return c.op(BOOL_ARITHMETIC[op_name], [x, y])
    if alpha != 1:
        if op_name not in ("add", "sub"):
            raise Unsupported("alpha on an op other than add/sub")
        y = c.op("mul", [y, c.tensor(alpha, dt)])
    return c.op(op_name, [x, y], attrs)


for _packet, _name in BINARY.items():
    for _overload in ("Tensor", "Scalar", "Tensor_Scalar", "Scalar_Tensor", "Tensor_Tensor",
                      "Tensor_mode", "Scalar_mode", "default", "self_scalar", "other_scalar",
                      "x_scalar", "n_scalar"):
        if hasattr(_packet, _overload):
            CONVERTERS[getattr(_packet, _overload)] = _binary(_name)


@converts(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(c, n):
    cond = c.tensor(n.args[0], torch.bool)
    return _elementwise(c, n, lambda read: c.op("where", [cond, read(n.args[1]),
                                                          read(n.args[2])]))


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
        return _clamp_tensor(c, n, lo, hi)
    out = val(n)
    if any(isinstance(b, float) and math.isnan(b) for b in (lo, hi)):
        if not out.dtype.is_floating_point:
            raise Unsupported("clamp of an integer tensor with a NaN bound")
        # PyTorch: a NaN bound makes every element NaN.
        return c.op("fill", [], {"shape": pshape(out), "value": float("nan"),
                                 "dtype": dtype_name(out.dtype)})
    inf = float("inf")
    bounds = {"min": float(-inf if lo is None else lo), "max": float(inf if hi is None else hi)}
    return _math(c, n, "clip", [n.args[0]], bounds)


@converts(aten.clamp.Tensor, aten.clamp_min.Tensor, aten.clamp_max.Tensor)
def _clamp_tensor_overload(c, n):
    if n.target == aten.clamp_min.Tensor:
        return _clamp_tensor(c, n, n.args[1], None)
    if n.target == aten.clamp_max.Tensor:
        return _clamp_tensor(c, n, None, n.args[1])
    return _clamp_tensor(c, n, _arg(n, 1, "min", None), _arg(n, 2, "max", None))


def _clamp_tensor(c, n, lo, hi):
    """clamp with tensor bounds: minimum(maximum(x, lo), hi), NaN in any of them giving NaN as
    in PyTorch (and hi winning where lo > hi)."""
    dt = val(n).dtype

    def clamp(read):
        r = read(n.args[0])
        for op_name, bound in (("maximum", lo), ("minimum", hi)):
            if bound is not None:
                r = c.op(BOOL_ARITHMETIC[op_name] if dt == torch.bool else op_name,
                         [r, read(bound)])
        return r
    return _elementwise(c, n, clamp)


@converts(aten._to_copy.default)
def _to_copy(c, n):
    src, out = val(n.args[0]), val(n)
    if src.device != out.device:
        raise Unsupported(f"copy between devices {src.device} -> {out.device}")
    if n.kwargs.get("memory_format") not in (None, torch.contiguous_format, torch.preserve_format):
        raise Unsupported("copy to a memory format other than contiguous")
    return _cast(c, n)


@converts(torch.ops.prims.convert_element_type.default)
def _convert_element_type(c, n):
    """prims.convert_element_type (PyTorch 2.11 hands it to the backend): a cast."""
    return _cast(c, n)


_CHAIN_FLOATS = (torch.float32,) + SIXTEEN_BIT


def _cast(c, n):
    """n's value: its input's cast to n's dtype (a copy where the dtype is the same). Unless each
    op rounds, a 16-bit value cast to float32 is its unrounded value (a copy of it) and a cast
    from float32 or 16 bits to 16 bits keeps the float32 value as the result's unrounded one."""
    x, src, out = n.args[0], val(n.args[0]).dtype, val(n)
    if src == out.dtype:
        return c.op("reshape", [c.tensor(x)], {"shape": pshape(out)})
    if not c.round_each_op and src in _CHAIN_FLOATS and out.dtype in _CHAIN_FLOATS:
        if out.dtype == torch.float32:
            return c.wide(x, fresh=True)
        direct = None if src == torch.float32 else \
            c.op("cast", [c.tensor(x)], {"dtype": dtype_name(out.dtype)})
        return c.rounded(n, c.wide(x), direct)
    return c.op("cast", [c.tensor(x)], {"dtype": dtype_name(out.dtype)})


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
