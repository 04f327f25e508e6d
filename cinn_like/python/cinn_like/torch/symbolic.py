"""Dynamic shapes: graphs whose sizes are no polynomial specialised, and the call of a partition
compiled for symbolic sizes (sizes.py writes the sizes themselves).

Dynamo's guards (`s0 >= 2`) are not written into the Program as bounds
(ProgramBuilder.symbol): Dynamo checks them before any call, and graphs that differ only by a
bound would compile twice.

SymbolicKernel runs a partition compiled with symbolic sizes through a call written by
call_source.py: per call, the symbols are read from the inputs' sizes, each input's shape is
compared with its expected sizes, outputs are allocated at their sizes, and a C call plan made
once per distinct set of symbol values runs the entry (which checks the arguments again).
"""
import ctypes

import sympy
import torch

from . import cache
from .call import empty_allocator, make_plan
from .call_source import CallInput, CallOutput, CallSpec, make_call
from .layout import memory_order, stored_shape
from .sizes import is_polynomial, op_label, poly_text, size_expr, stride_texts


def specialize_non_polynomial(gm):
    """Fixes each symbol of a size of a convolution's or pooling's output in `gm` that is no
    polynomial (over a symbolic image: FloorDiv) to this trace's value, with a guard
    (Eq(s2, 16)): such a size has no Program form, and without this every op over the image
    would run in PyTorch. The other symbols (the batch) stay symbolic: a CNN under dynamic=True
    compiles once per image size and serves every batch size. Dynamo checks the guard before
    each call and traces again for another image size. Other ops with such sizes (a strided
    slice of the batch) are left to run in PyTorch, so their symbols stay symbolic; nothing is
    fixed once the shape environment is frozen (a backward graph compiled after Dynamo made its
    guards: a new one would not be checked). Returns the symbols fixed, counted in
    `symbols_specialized`."""
    env, fixed = None, {}
    for node in gm.graph.nodes:
        name = op_label(node) if node.op == "call_function" else ""
        if "conv" not in name and "pool" not in name:
            continue
        v = node.meta.get("val")
        for x in v if isinstance(v, (list, tuple)) else [v]:
            sizes = (list(x.shape) if isinstance(x, torch.Tensor)
                     else [x] if isinstance(x, torch.SymInt) else [])
            for d in sizes:
                if not isinstance(d, torch.SymInt):
                    continue
                e = size_expr(d)
                if e.is_number or is_polynomial(e):
                    continue
                env = d.node.shape_env
                if getattr(env, "frozen", False):
                    continue
                # The trace's value of each symbol (renamed backed_var_to_val after 2.11).
                values = getattr(env, "backed_var_to_val", None) or env.var_to_val
                for sym in e.free_symbols:
                    if sym not in fixed and sym in values:
                        fixed[sym] = int(values[sym])
    for sym, value in fixed.items():
        # The guard Eq(sym, value): what Dynamo checks before running this graph again.
        env.evaluate_expr(sympy.Eq(sym, value))
    if fixed:
        cache.count("symbols_specialized", len(fixed))
        cache.log.info("cinn_like.torch: sizes that are no polynomial fixed %s to this trace's "
                       "values (guarded)", {str(k): v for k, v in fixed.items()})
        _fold_fixed_sizes(gm)
    return fixed


def _fold_fixed_sizes(gm):
    """Size arithmetic that the fixed symbols made numbers (8 * sym_size(x, 2) * sym_size(x, 3)
    for a flatten) becomes those numbers in its users' arguments: otherwise it would read the
    size of an intermediate and cut the graph into two partitions there."""
    def number(n):
        v = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
        if not isinstance(v, torch.SymInt):
            return None
        e = size_expr(v)
        return int(e) if e.is_number else None

    folded = False
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        args = torch.fx.node.map_arg((node.args, node.kwargs),
                                     lambda a: a if number(a) is None else number(a))
        if args != (node.args, node.kwargs):
            node.args, node.kwargs = args
            folded = True
    if folded:
        gm.graph.eliminate_dead_code()
        gm.recompile()


class SymbolicKernel(torch.nn.Module):
    """Runs one partition compiled with symbolic sizes (see the module's docstring). `inputs`:
    per partition argument, the tensor's metadata, or None for a size argument (a SymInt the
    graph passes, which the Program does not take); `outputs` as CinnLikeKernel's."""

    def __init__(self, module, inputs, outputs, num_prog_outputs, single):
        super().__init__()
        self.module = module
        self.inputs = inputs
        self.outputs = outputs
        tensors = [m for m in inputs if m is not None]
        metas = tensors + [o[2] for o in outputs if o[0] == "prog"]
        self._device = metas[0].device
        self._plans = {}
        # Each symbol is read from the first input dim that is that symbol alone, into a local
        # of the call: (local, input, dim).
        self._symbols = {}
        reads = []
        for i, m in enumerate(inputs):
            if m is None:
                continue
            for d, s in enumerate(m.shape):
                e = None if isinstance(s, int) else size_expr(s)
                if e is not None and e.is_Symbol and e.name not in self._symbols:
                    self._symbols[e.name] = f"_z{len(self._symbols)}"
                    reads.append((self._symbols[e.name], i, d))
        # Static tensors dense in another order than row-major (a transposed weight) are
        # Program tensors in their memory order, as CinnLikeKernel's (kernel.build_program).
        self._in_shapes = [None if m is None else self._texts(m) for m in inputs]
        self._in_orders = [None if m is None else memory_order(m) for m in inputs]
        self._out_shapes = [None] * num_prog_outputs
        self._out_orders = [None] * num_prog_outputs
        self._out_strides = [None] * num_prog_outputs
        self._out_dtypes = [None] * num_prog_outputs
        for o in outputs:
            if o[0] == "prog":
                k, meta = o[1], o[2]
                self._out_shapes[k] = self._texts(meta)
                self._out_orders[k] = memory_order(meta)
                self._out_strides[k] = ([str(st) for st in meta.stride()] if self._out_orders[k]
                                        else stride_texts(self._out_shapes[k]))
                self._out_dtypes[k] = meta.dtype
        self._num_args = len(tensors) + num_prog_outputs
        self._ptrs_type = ctypes.c_void_p * self._num_args
        self.call = self._fast_call(reads, single)

    def _texts(self, meta):
        """Python texts of meta's sizes over the symbols' locals."""
        texts = []
        for d in meta.shape:
            e = None if isinstance(d, int) else size_expr(d)
            texts.append(str(d) if e is None else str(int(e)) if e.is_number
                         else poly_text(e, self._symbols))
        return texts

    def _fast_call(self, reads, single):
        """`call` for this partition: written by call_source.py without a slow path, the
        symbols read from input dims and a C call plan per set of their values."""
        names = {"_empty": empty_allocator(self._device), "_ptrs": self._ptrs_type,
                 "_plans": self._plans, "_plan_for": self._plan_for, "__name__": __name__}
        inputs = tuple(
            CallInput(i, m.dtype, len(self._in_shapes[i]), _tuple_text(self._in_shapes[i]),
                      None if self._in_orders[i] is None else str(tuple(m.stride())))
            for i, m in enumerate(self.inputs) if m is not None)
        outputs = tuple(CallOutput(dt, _tuple_text(shape), _tuple_text(strides)) for dt, shape,
                        strides in zip(self._out_dtypes, self._out_shapes, self._out_strides))
        spec = CallSpec(len(self.inputs), inputs, outputs, tuple(self.outputs), single,
                        self._device, slow_path=False, symbols=tuple(reads))
        call, self.source = make_call(spec, names)
        return call

    def _plan_for(self, key):
        """The C call plan of one set of symbol values (kept: a model sees a few sizes; past 64
        the oldest half is dropped)."""
        values = dict(zip(self._symbols.values(), key))
        def sizes(texts):
            return tuple(eval(t, {}, values) for t in texts)  # noqa: S307 (our own size texts)
        specs = [(m.dtype, stored_shape(sizes(self._in_shapes[i]), self._in_orders[i]))
                 for i, m in enumerate(self.inputs) if m is not None]
        specs += [(dt, stored_shape(sizes(s), order))
                  for dt, s, order in zip(self._out_dtypes, self._out_shapes, self._out_orders)]
        plan = make_plan(self.module, specs, self._device, self._ptrs_type)
        if len(self._plans) >= 64:
            for old in list(self._plans)[:32]:
                del self._plans[old]
        self._plans[key] = plan
        return plan

    def forward(self, *args):
        return self.call(*args)

    def __call__(self, *args):
        return self.call(*args)


def _tuple_text(texts):
    """Python text of the tuple of `texts`."""
    return "(" + "".join(f"{t}, " for t in texts) + ")"


__all__ = ["SymbolicKernel", "specialize_non_polynomial"]
