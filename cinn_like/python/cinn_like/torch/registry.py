"""The converter registry: aten op -> a function that writes cinn_like ops for one fx node.

A converter gets the Converter (builder, values so far) and the fx node; it returns the
Program name of the node's value (a list for multi-output ops, None where an output is not
computed) or raises Unsupported with a reason. Converters live in one module per op family
(cinn_like.torch.ops.*); importing cinn_like.torch.ops registers them all. Rank-0 tensors are
shape [1] inside a Program (cinn_like rejects rank 0); ops whose meaning depends on the rank
refuse them.

Each node is converted once: the partitioner converts it on a scratch Converter to decide
support and keeps what it wrote as a Fragment in the node's metadata; the kernel builder
replays the fragments into the partition's Program (fragments survive the partitioner's copy
of the nodes, which copies node.meta).

Chains of float16/bfloat16 elementwise ops round once, as Inductor's fused kernels do: an
elementwise converter of a 16-bit result computes in float32 from its inputs' unrounded float32
values (Converter.wide), keeps its own float32 result as the node's unrounded value and gives
the node that value rounded (Converter.rounded), which is what every other reader (a matmul, a
reduction, a view, a partition output) reads; where no input has an unrounded value that is
the op in 16 bits, as before (the same value). A value from outside the partition was stored,
so it is read rounded. Converter(round_each_op=True) (the torch option emulate_precision_casts)
rounds each aten op's result instead, as eager does. A Fragment records which of its ops read
an input's float32 value, the node's unrounded value and the choice of its 16-bit value;
replayed, it asks the Converter it is replayed into for the input's float32 value and makes the
choice there, so the same fragment reads an unrounded value where the input's producer is in the
partition and the stored one where it is not.
"""
import operator

import torch

from ..program import ProgramBuilder
from .errors import Unsupported
from .sizes import size_text

DTYPES = {
    torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
    torch.float64: "float64", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.uint8: "uint8", torch.bool: "bool",
}

FRAGMENT = "cinn_like_fragment"  # the node.meta key of a node's Fragment


def val(node):
    v = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if v is None:
        raise Unsupported("no tensor metadata (node.meta['val'])")
    return v


def size(d):
    """A size as a Program has it: an int, or the text of a symbolic size (sizes.size_text)."""
    if isinstance(d, int):
        return d
    return size_text(d)


def mul_sizes(a, b):
    """a * b of two sizes (ints, or symbolic size texts)."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return f"({a})*({b})"


def batch_sizes(t, what):
    """t's sizes, the first (the batch) as its text where symbolic, the others ints; Unsupported
    where another size is symbolic."""
    dims = [size(d) for d in t.shape]
    if any(not isinstance(d, int) for d in dims[1:]):
        raise Unsupported(f"symbolic shape: {what} with symbolic sizes other than the batch "
                          f"({dims})")
    return dims


# Views that keep every element of a dense value, in another shape or order: a kernel would
# only copy their result (slices, selects and expands hold fewer or more elements; reshape
# copies what it cannot view).
_ATEN = torch.ops.aten
DENSE_VIEWS = {_ATEN.view.default, _ATEN._unsafe_view.default, _ATEN.permute.default,
               _ATEN.t.default, _ATEN.transpose.int, _ATEN.unsqueeze.default, _ATEN.squeeze.dim,
               _ATEN.squeeze.dims, _ATEN.alias.default}


def pshape(t):
    """The Program shape of a tensor value (symbolic sizes as their text): rank 0 becomes [1]."""
    return [size(d) for d in t.shape] or [1]


def dtype_name(dt):
    if dt not in DTYPES:
        raise Unsupported(f"dtype {dt} is not supported by cinn_like")
    return DTYPES[dt]


SIXTEEN_BIT = (torch.float16, torch.bfloat16)


def acc_dtype(dt):
    """The dtype PyTorch's kernels compute a `dt` result in (its acc/opmath type): float32 for
    float16 and bfloat16, `dt` itself otherwise. A converter that chains several ops for one
    16-bit aten op computes them in this type and casts once at the end, as eager rounds once."""
    return torch.float32 if dt in SIXTEEN_BIT else dt


def no_rank0(*tensors):
    for t in tensors:
        if isinstance(t, torch.fx.Node) and val(t).dim() == 0:
            raise Unsupported("rank-0 tensor in a rank-dependent op")


def meta(arg):
    """For torch.result_type: a meta tensor of the node's rank and dtype, or the scalar."""
    if isinstance(arg, torch.fx.Node):
        t = val(arg)
        return torch.empty(t.shape, dtype=t.dtype, device="meta")
    return arg


class Converter:
    def __init__(self, round_each_op=False):
        self.b = ProgramBuilder()
        self.env = {}  # fx node -> Program name (or list of names)
        self.written = []  # (op, inputs, attrs, outputs) in order, for Fragment
        self.round_each_op = round_each_op  # each 16-bit elementwise op rounds (eager's way)
        self.unrounded = {}  # 16-bit fx node -> Program name of its float32 value before rounding
        self.widened = {}  # Program name -> (fx node, fresh): a wide() that wrote an op
        self.once = {}  # fx node -> (its direct value, its unrounded value rounded): rounded()

    def add_input(self, node, name):
        """A tensor input; a size (a SymInt node, which views read as an argument: their
        converters take sizes from the value's metadata) is no Program input."""
        t = val(node)
        if isinstance(t, torch.SymInt):
            self.env[node] = None
            return
        self.env[node] = self.b.input(name, dtype_name(t.dtype), pshape(t))

    def op(self, name, inputs, attrs=None, num_outputs=1):
        """Adds op `name`; its output name, or a list of names when num_outputs > 1."""
        outs = self.b.op(name, inputs, attrs, num_outputs=num_outputs)
        outs_list = outs if isinstance(outs, list) else [outs]
        self.written.append((name, list(inputs), attrs, outs_list))
        return outs

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

    def keeps_wide(self, node):
        """Whether elementwise node `node` computes in float32 and rounds once (rounded): its
        result is float16 or bfloat16 and ops are not asked to round each (round_each_op)."""
        return not self.round_each_op and val(node).dtype in SIXTEEN_BIT

    def wide(self, arg, fresh=False):
        """The float32 value an elementwise op computes from: a node's unrounded value where an
        elementwise converter of this Converter kept one (rounded), else its value cast to
        float32; a number as a float32 fill. `fresh`: a copy of an unrounded value, not its
        name (a cast to float32 is a value of the graph of its own: two outputs of a partition
        that had one name would be one tensor)."""
        if not isinstance(arg, torch.fx.Node):
            return self.tensor(arg, torch.float32)
        if arg in self.unrounded:
            name = self.unrounded[arg]
            if not fresh:
                return name
            name = self.op("reshape", [name], {"shape": pshape(val(arg))})
        else:
            name = self.tensor(arg, torch.float32)
            if val(arg).dtype == torch.float32:
                return name
        self.widened[name] = (arg, fresh)
        return name

    def rounded(self, node, wide, direct=None, commutes=False):
        """Node's 16-bit value, and `wide` (its float32 value, computed from its operands'
        wide()) kept as its unrounded value for the elementwise ops that read it. The value is
        `wide` rounded once where an input of node has an unrounded value, else `direct`: the
        op in node's dtype from the rounded operands (as each op rounds), there equal to `wide`
        rounded, and the form the compiler's patterns know (a matmul's epilogue, the 16-bit
        forms of sigmoid or gelu); None where the rounding is the op (a cast from float32).
        `commutes`: the op commutes with rounding (relu, neg, abs), so `direct` is the value
        whatever the operands."""
        self.unrounded[node] = wide
        if commutes:
            return direct
        once = self.op("cast", [wide], {"dtype": dtype_name(val(node).dtype)})
        if direct is None:
            return once
        self.once[node] = (direct, once)
        return once if self.reads_unrounded(node) else direct

    def reads_unrounded(self, node):
        """Whether an input of node has an unrounded value here."""
        return any(a in self.unrounded for a in node.all_input_nodes)


class Fragment:
    """What one node's converter wrote, with its inputs named by position: replayable into
    any Converter whose env holds the node's inputs."""

    def __init__(self, node, converter, result):
        ins = node.all_input_nodes
        self.inputs = [converter.env[a] for a in ins]
        self.ops = list(converter.written)
        self.result = result
        # The op outputs that are an input's float32 value (Converter.wide): name -> (the
        # input's position, fresh). Replayed, each is asked of the Converter replayed into.
        self.wide_reads = {name: (ins.index(a), fresh)
                           for name, (a, fresh) in converter.widened.items() if a in ins}
        self.unrounded = converter.unrounded.get(node)  # the name of node's float32 value
        # Converter.rounded's choice, made again where replayed: the name of the unrounded value
        # rounded, where the value written here is the direct one.
        direct, once = converter.once.get(node, (None, None))
        self.once = once if result == direct else None

    def replay(self, c, node):
        ins = node.all_input_nodes
        names = dict(zip(self.inputs, (c.env[a] for a in ins)))
        for op, inputs, attrs, outs in self.ops:
            read = self.wide_reads.get(outs[0])
            if read is not None:
                names[outs[0]] = c.wide(ins[read[0]], fresh=read[1])
                continue
            new = c.op(op, [names[i] for i in inputs], attrs, num_outputs=len(outs))
            names.update(zip(outs, new if isinstance(new, list) else [new]))
        if self.unrounded is not None:
            c.unrounded[node] = names[self.unrounded]
        if isinstance(self.result, list):
            return [None if r is None else names[r] for r in self.result]
        if self.once is not None and c.reads_unrounded(node):
            return names[self.once]
        return names[self.result]


class _Wide:
    """A Converter as a data-movement converter sees it writing a node's float32 twin: its
    tensor() is the Converter's wide() (moves)."""

    def __init__(self, c):
        self._c = c

    def tensor(self, arg, dtype=None):  # noqa: ARG002 (the twin is float32 whatever the op's)
        return self._c.wide(arg)

    def __getattr__(self, name):
        return getattr(self._c, name)


def moves(fn):
    """Decorates the converter of an op that moves values and makes none (a view, a slice, a
    concatenation, a scatter of slices). Of a 16-bit result the op is written a second time on
    its operands' float32 values (Converter.wide), which is the node's unrounded value: a chain
    of elementwise ops on both sides of it rounds once, as in Inductor's fused kernels (a chain
    that stopped there read the rounded moved values, nearer neither eager nor Inductor: a
    cumulative_trapezoid backward's sum of two products 16 units off). Moving commutes with
    rounding, so the node's 16-bit value is the op on the rounded operands."""
    def convert(c, n):
        direct = fn(c, n)
        if not c.keeps_wide(n):
            return direct
        return c.rounded(n, fn(_Wide(c), n), direct, commutes=True)
    convert.__name__, convert.__doc__ = fn.__name__, fn.__doc__
    return convert


CONVERTERS = {}


def converts(*ops):
    """Registers the decorated converter for each aten overload in `ops`."""
    def wrap(fn):
        for o in ops:
            CONVERTERS[o] = fn
        return fn
    return wrap


def convert_node(c, node):
    """Writes `node` into c (its tensor inputs already in c.env); raises Unsupported. Replays
    the node's Fragment when the partitioner left one."""
    if node.op != "call_function":
        raise Unsupported(f"{node.op} node")
    if node.target == operator.getitem:
        src = c.env[node.args[0]]
        out = src[node.args[1]] if isinstance(src, list) else None
        if out is None:
            raise Unsupported("output of a multi-output op not computed")
        return out
    fragment = node.meta.get(FRAGMENT)
    if fragment is not None:
        return fragment.replay(c, node)
    empty = _empty_output(node)
    if empty is not None:
        return c.op("fill", [], {"shape": pshape(empty), "value": 0.0,
                                 "dtype": dtype_name(empty.dtype)})
    fn = CONVERTERS.get(node.target)
    if fn is None:
        raise Unsupported("no cinn_like mapping")
    return fn(c, node)


def _empty_output(node):
    """The value of a node whose one output is an empty tensor on its inputs' device (a slice,
    arange, repeat or cat with no element): whatever the op, the result is that empty tensor,
    so it is a fill; else None."""
    v = node.meta.get("val")
    if not isinstance(v, torch.Tensor) or v.dim() == 0:
        return None
    # A symbolic size's value would be a guard: such a tensor is empty for no size we know of.
    if any(not isinstance(d, int) for d in v.shape) or v.numel() != 0:
        return None
    if any(val(a).device != v.device for a in node.all_input_nodes):
        return None
    return v


def convert_alone(node, round_each_op=False):
    """Converts `node` on a scratch Converter (its inputs as placeholders) and keeps the
    Fragment in node.meta; raises Unsupported. `round_each_op`: Converter's."""
    c = Converter(round_each_op)
    for i, a in enumerate(node.all_input_nodes):
        c.add_input(a, f"in{i}")
    node.meta.pop(FRAGMENT, None)
    result = convert_node(c, node)
    node.meta[FRAGMENT] = Fragment(node, c, result)
