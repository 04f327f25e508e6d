"""A fused partition (an fx GraphModule of supported aten nodes) as one compiled Program, and
the module that runs it in place of the partition.

The Program has the fake tensors' shapes: static, or symbolic under dynamic shapes (then
symbolic.SymbolicKernel runs it); rank-0 tensors travel as shape [1]. At
run time inputs are checked (device, dtype, shape, strides) and copied into the traced layout
when theirs differs (views: expands, chunks), outputs are allocated with PyTorch's allocator and
the entry runs on PyTorch's current stream for CUDA. Inputs and results whose strides are
dense in another order (channels-last, a transpose) are Program tensors in that memory order,
passed and returned without a copy (build_program). Each partition's call is a function
written for it (call_source.py), which the fused graph calls directly.
"""
import ctypes
import math

import torch

from .._lib import c_output_alloc, check, lib
from . import cache, ops  # noqa: F401 (ops registers the converters)
from .call import empty_allocator, make_plan, raw_stream
from .call_source import CallInput, CallOutput, CallSpec, make_call
from .layout import dense, inverse_order, memory_order, stored_shape
from .padded_output import padded_product
from .registry import DENSE_VIEWS, DTYPES, Converter, convert_node, dtype_name, pshape, val
from .sizes import contiguous_strides, is_symbolic
from .symbolic import SymbolicKernel


def build_program(sub):
    """(ProgramBuilder, inputs [tensor meta], outputs [("prog", index, meta) | ("view", index,
    meta, the base's meta) | ("input", index, None) | ("none",)], number of Program outputs) of a
    fused partition GraphModule. An input or a result whose meta is dense in another order than
    row-major (channels-last, a transpose) is a Program tensor in its memory order
    (`memory_order`), with a transpose to or from the logical order in the Program: such
    tensors are passed and returned as they are, never copied. A result that only reshapes or
    reorders a value the partition computes (a view the kernel would write as a copy: a
    training graph's saved activation, say) is a view of that value's Program output ("view",
    made by as_strided at the call), static shapes only."""
    # Each node replays the Fragment that partition.check_node made converting it alone, with
    # the emulate_precision_casts choice in it: this Converter's own default does not apply.
    c = Converter()
    inputs = []
    outputs = []
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for i, p in enumerate(placeholders):
        meta = val(p)
        if isinstance(meta, torch.SymInt):  # a size the graph passes: no Program input
            c.add_input(p, f"in{i}")
            inputs.append(None)
            continue
        order = memory_order(meta)
        if order is None:
            c.add_input(p, f"in{i}")
        else:
            stored = c.b.input(f"in{i}", dtype_name(meta.dtype), [int(meta.shape[d]) for d in order])
            c.env[p] = c.op("transpose", [stored], {"perm": inverse_order(order)})
        inputs.append(meta)
    static = all(m is not None and not is_symbolic(m) for m in inputs)
    names = {}

    def program_output(node, value=None):
        """The index of node's value (or Program value `value`, row-major) as a Program output
        (added once per value and order)."""
        order = memory_order(val(node)) if value is None else None
        key = (c.env[node] if value is None else value, order)
        if key not in names:
            names[key] = len(names)
            name = key[0]
            if order is not None:
                name = c.op("transpose", [name], {"perm": list(order)})
            c.b.output(name)
        return names[key]

    for n in _data_flow_order(sub):
        if n.op == "call_function":
            c.env[n] = convert_node(c, n)  # replays the partitioner's conversion
        elif n.op == "output":
            res = n.args[0]
            res = list(res) if isinstance(res, (list, tuple)) else [res]
            for r in res:
                if r is None:
                    outputs.append(("none",))
                elif r.op == "placeholder":
                    outputs.append(("input", placeholders.index(r), None))
                elif (i := _input_of_value(c, placeholders, r)) is not None:
                    outputs.append(("input", i, None))  # a converter's result that is an input
                elif (padded := padded_product(c, r) if static else None) is not None:
                    product, view, base = padded  # returned as a view of its padded rows
                    outputs.append(("view", program_output(r, product), view, base))
                elif (base := viewed_base(r) if static else None) is not None:
                    outputs.append(("view", program_output(base), val(r), val(base)))
                else:
                    outputs.append(("prog", program_output(r), val(r)))
    return c.b, inputs, outputs, len(names)


def _input_of_value(c, placeholders, node):
    """The index of the input whose Program value node's converted value is (a converter that
    returns an input as it is: attention_dropout's seed), or None."""
    value = c.env.get(node)
    if value is None:
        return None
    for i, p in enumerate(placeholders):
        if c.env.get(p) == value and isinstance(val(p), torch.Tensor) \
                and val(p).shape == val(node).shape and val(p).dtype == val(node).dtype:
            return i
    return None


def viewed_base(node, computed=lambda n: n.op == "call_function"):
    """The computed node (`computed(n)`: a partition's own, an op node of a partition's
    GraphModule by default) whose value `node` views through DENSE_VIEWS only, both dense with
    static shapes, or None."""
    base = node
    while computed(base) and base.target in DENSE_VIEWS and isinstance(base.args[0],
                                                                        torch.fx.Node):
        base = base.args[0]
    if base is node or not computed(base):
        return None
    metas = (val(node), val(base))
    if not all(isinstance(m, torch.Tensor) and not is_symbolic(m) and dense(m) for m in metas):
        return None
    return base if metas[1].storage_offset() == 0 else None


def _data_flow_order(sub):
    """sub's call_function nodes, then its output node, in an order that depends only on the
    data flow: depth first from the outputs, each node's inputs in argument order, a node after
    its inputs. Two GraphModules of one partition whose independent nodes are listed in
    different orders then give the same Program (one cache key, one compile). A node the
    outputs do not need: graph order, as it is."""
    nodes = list(sub.graph.nodes)
    output = next(n for n in reversed(nodes) if n.op == "output")
    order, done = [], set()
    stack = [(output, iter(output.all_input_nodes))]
    while stack:
        node, inputs = stack[-1]
        nxt = next((i for i in inputs if i not in done and i.op == "call_function"), None)
        if nxt is None:
            stack.pop()
            done.add(node)
            order.append(node)
        else:
            stack.append((nxt, iter(nxt.all_input_nodes)))
    if any(n.op == "call_function" and n not in done for n in nodes):
        return [n for n in nodes if n.op == "call_function"] + [output]
    return order


class CinnLikeKernel(torch.nn.Module):
    """Runs one compiled partition. The call path is prepared once: a C call plan
    (cinn_like_call_plan_create: the arguments' dtypes and shapes copied once, each call passes
    only data pointers and the stream) and `call`, a function written for this partition
    (call_source.py, with a slow path) that checks each input against its expected dtype,
    shape, device and layout with plain comparisons, allocates the outputs, runs the plan and
    returns the results, with no loop, list or DLPack capsule. Calls it does not take (an input
    of another dtype or shape, not contiguous, not a plain tensor) go to `_slow_call`, which
    converts or refuses them. The torch backend puts `call` in the graph in place of the module
    (no module lookup per call); `__call__` and `forward` are `call` too. `call_owned(inputs)`
    is `call` for a caller that hands over its only references to the inputs in a list: the
    call drops each from the list after its last read, so a backward frees its saved
    activations as it goes (owned_args.py)."""

    def __init__(self, module, inputs, outputs, num_prog_outputs, single, pooled=()):
        super().__init__()
        self.module = module
        self.inputs = inputs
        self.outputs = outputs
        self.num_prog_outputs = num_prog_outputs
        self.single = single
        self.device = inputs[0].device if inputs else next(
            o[2].device for o in outputs if o[0] in ("prog", "view"))
        # Per Program output: (shape, strides, dtype) to allocate it with (the meta's strides
        # where it is stored in another order, build_program), and its shape in memory order.
        self._out_alloc = [None] * num_prog_outputs
        self._out_stored = [None] * num_prog_outputs
        for o in outputs:
            if o[0] in ("prog", "view") and self._out_alloc[o[1]] is None:
                meta = o[2] if o[0] == "prog" else o[3]  # a view's base: the Program output
                shape = tuple(meta.shape)
                order = memory_order(meta)
                self._out_alloc[o[1]] = (shape, tuple(meta.stride()) if order
                                         else contiguous_strides(shape), meta.dtype)
                self._out_stored[o[1]] = stored_shape(shape, order)
        # Plain values (the metas are fake tensors, slow to ask), compared at every call; the
        # strides of inputs stored in another order (None: contiguous).
        self._expect = [(m.dtype, torch.Size(m.shape)) for m in inputs]
        self._in_strides = [tuple(m.stride()) if memory_order(m) else None for m in inputs]
        # Program outputs allocated together, in a few blocks per call (OutputPool): the saved
        # activations of a training forward.
        self.pool = OutputPool(pooled, self._out_alloc)
        self._device = torch.device(self.device)
        self._stream = raw_stream(self._device) if self._device.type == "cuda" else None
        self._empty = empty_allocator(self._device)
        # Large outputs allocated by the call, before their first write (LateOutputs).
        self.late = LateOutputs(len(inputs), self._out_alloc, self.pool, self._empty)
        self._num_args = len(inputs) + num_prog_outputs
        self._ptrs_type = ctypes.c_void_p * self._num_args
        self._plan = None
        self._new_plan()
        self.call = self._fast_call()
        self._call_owned = None

    def _new_plan(self):
        specs = [(m.dtype, stored_shape(tuple(m.shape), memory_order(m))) for m in self.inputs]
        specs += [(alloc[2], stored) for alloc, stored in zip(self._out_alloc, self._out_stored)]
        self._plan = make_plan(self.module, specs, self._device, self._ptrs_type)

    def _fast_call(self, owned=False):
        """`call` (`call_owned` with `owned`) for this partition: written by call_source.py
        with a slow path, `_slow_call`; the expected shapes and strides and the outputs' sizes
        are constants bound here, the pool's and the late outputs' by OutputPool.names and
        LateOutputs.names."""
        names = {"_empty": self._empty, "_plan": self._plan, "_ptrs": self._ptrs_type,
                 "_slow": self._slow_call, "__name__": __name__}
        inputs = []
        for i, (dtype, shape) in enumerate(self._expect):
            names[f"_shape{i}"], names[f"_in_strides{i}"] = shape, self._in_strides[i]
            strides = None if self._in_strides[i] is None else f"_in_strides{i}"
            inputs.append(CallInput(i, dtype, len(shape), f"_shape{i}", strides))
        outputs = []
        for k, (shape, strides, dtype) in enumerate(self._out_alloc):
            names[f"_size{k}"], names[f"_strides{k}"] = shape, strides
            outputs.append(CallOutput(dtype, f"_size{k}", f"_strides{k}"))
        names.update(self.pool.names())
        names.update(self.late.names())
        spec = CallSpec(len(inputs), tuple(inputs), tuple(outputs), tuple(self.outputs),
                        self.single, self._device, slow_path=True, pool=self.pool,
                        late=self.late.outputs)
        return make_call(spec, names, owned)[0]

    @property
    def call_owned(self):
        """`call` taking its inputs in a list it owns (the class's docstring), written on first
        use: only a backward's kernels take it."""
        if self._call_owned is None:
            self._call_owned = self._fast_call(owned=True)
        return self._call_owned

    def _prepare(self, i, t, meta):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"cinn_like.torch: input {i} is {type(t).__name__}, expected a tensor")
        if t.dtype != meta.dtype and t.is_floating_point() and meta.dtype.is_floating_point \
                and torch.promote_types(t.dtype, meta.dtype) == meta.dtype:
            # An op left to PyTorch whose eager kernel disagrees with its own meta function
            # (CPU batch norm returns bfloat16 running statistics its meta says are float32):
            # the graph was traced, and compiled, for the meta's dtype. Only a widening, which
            # loses nothing; anything else is refused below.
            t = t.to(meta.dtype)
        if t.device != meta.device or t.dtype != meta.dtype or tuple(t.shape) != tuple(meta.shape):
            raise ValueError(f"cinn_like.torch: input {i} is {t.dtype}{list(t.shape)} on "
                             f"{t.device}, the kernel was compiled for {meta.dtype}"
                             f"{list(meta.shape)} on {meta.device}")
        strides = self._in_strides[i]
        if strides is None and not t.is_contiguous():
            t = t.contiguous()
        elif strides is not None and t.stride() != strides:
            t = torch.empty_strided(t.shape, strides, dtype=t.dtype, device=t.device).copy_(t)
        return t

    def _slow_call(self, *args):
        """A call `call` does not take as it is: inputs converted (a widening dtype, made
        contiguous) or refused with the reason."""
        ins = [self._prepare(i, t, m) for i, (t, m) in enumerate(zip(args, self.inputs))]
        outs = [self._empty(shape, strides, dt) for shape, strides, dt in self._out_alloc]
        ptrs = self._ptrs_type(*[t.data_ptr() for t in ins + outs])
        check(lib.cinn_like_call_plan_run(self._plan, ptrs, self._stream and self._stream()),
              "cinn_like.torch kernel")
        results = []
        for r in self.outputs:  # build_program's
            if r[0] == "prog":
                results.append(outs[r[1]])
            elif r[0] == "view":
                m = r[2]
                results.append(outs[r[1]].as_strided(m.shape, m.stride(), m.storage_offset()))
            elif r[0] == "input":
                results.append(args[r[1]])
            else:
                results.append(None)
        return results[0] if self.single else tuple(results)

    def forward(self, *args):
        return self.call(*args)

    def __call__(self, *args):
        return self.call(*args)


def compile_partition(sub, target, pooled=()):
    """A CinnLikeKernel (a SymbolicKernel under symbolic sizes) for the fused partition `sub`, or
    raises (CinnLikeError, Unsupported); `pooled`: make_kernel's. The kernel keeps its Program's
    JSON (`program`) and result layout (`outputs`, `num_prog_outputs`) for the graph plan cache
    (plan_cache.py)."""
    b, inputs, outputs, n = build_program(sub)
    if n == 0:
        raise ValueError("partition computes nothing")
    program = b.to_json()
    module = cache.get_module(program, target)
    out_node = next(x for x in sub.graph.nodes if x.op == "output")
    single = not isinstance(out_node.args[0], (list, tuple))
    kernel = make_kernel(module, inputs, outputs, n, single, pooled=pooled)
    kernel.program = program
    return kernel


def make_kernel(module, inputs, outputs, num_prog_outputs, single, pooled=()):
    """The kernel that runs `module` for a partition of these inputs (tensor metas, None for a
    size) and outputs (build_program's); `pooled`: the positions in `outputs` whose Program
    outputs may share blocks, with the ranks of their last reads (pooled_outputs)."""
    metas = [m for m in inputs if m is not None] + [o[2] for o in outputs if o[0] == "prog"]
    if any(m is None for m in inputs) or any(is_symbolic(m) for m in metas):
        return SymbolicKernel(module, inputs, outputs, num_prog_outputs, single)
    return CinnLikeKernel(module, inputs, outputs, num_prog_outputs, single,
                          pooled_outputs(outputs, pooled))


def pooled_outputs(outputs, positions):
    """The Program outputs of `outputs` (build_program's) that only results at `positions`
    return, as they are or viewed: those that may share blocks, where there are two or more (a
    block of one is an allocation and a view more). `positions`: a mapping of position to the
    rank of the result's last read (OutputPool), or a sequence of positions (all of one rank).
    Returns {Program output: rank}, a viewed output's rank the latest of its results'."""
    if not isinstance(positions, dict):
        positions = dict.fromkeys(positions, 0)
    others = {o[1] for i, o in enumerate(outputs)
              if o[0] in ("prog", "view") and i not in positions}
    ranks = {}
    for i, o in enumerate(outputs):
        if o[0] in ("prog", "view") and i in positions and o[1] not in others:
            ranks[o[1]] = max(ranks.get(o[1], positions[i]), positions[i])
    return ranks if len(ranks) > 1 else {}


class OutputPool:
    """Program outputs allocated in a few blocks per call: an allocation per block before the
    run where each output would take its own (about 2 us each on the CUDA caching allocator,
    paid before the first kernel is queued: 85 of them before a GPT-2 training forward's first
    kernel), and the outputs' tensors made as views of their block after the run, while the GPU
    works.

    Only for outputs that nothing but the graph holds: a training forward's saved activations,
    held by AOTAutograd until the backward reads them, and values written back into inputs,
    which die once written (the torch backend pools those no other node reads,
    backend._pooled). A block lives as long as any of its outputs does: a result the caller
    keeps (the loss) must not be in one. So the outputs are grouped by the rank of their last
    read (`pooled`: Program output -> rank; a rank below 0: read by no backward, all in one
    block), in rank order, a block closed once it holds `1 / BLOCKS` of the bytes (at least
    MIN_BLOCK_BYTES): a backward that frees each saved activation after its last read
    (CinnLikeKernel.call_owned) frees each block after its last, where one block would live
    until the backward's end (a CNN's backward held every saved feature map beside the
    gradients of its first layers). Outputs under SMALL_BYTES share one block of their own
    whatever their ranks: a backward may read them last of all (the BatchNorm statistics,
    read by the weight gradients at its end), and in a block of large ones one of them would
    keep it alive.

    `offsets`: Program output -> (block, byte offset in the block, index of its dtype in
    `dtypes`); `blocks`: each block's bytes. Each output starts on a 256-byte boundary
    (cuBLASLt's best alignment, any vector width).

    Within a block, outputs of one dtype, shape and strides lie side by side (where they sit in
    a block changes nothing of when it is freed), and `runs` lists each such series of two or
    more as (outputs, block, dtype index, shape, strides, elements between starts): the call
    makes a series' tensors with one view of the block and one `unbind` (a CNN's forward saves
    a feature map, a mean and an rstd per BatchNorm: resnet18's 141 outputs were 141 Python
    `as_strided` calls, about 2 us each on the host between kernels)."""

    ALIGN = 256
    BLOCKS = 8
    MIN_BLOCK_BYTES = 4 << 20
    SMALL_BYTES = 256 << 10

    def __init__(self, pooled, out_alloc):
        self.offsets, self.dtypes, self.blocks = {}, [], []
        sizes = {}
        for k in pooled:
            shape, strides, dtype = out_alloc[k]
            span = 0 if 0 in shape else 1 + sum((n - 1) * st for n, st in zip(shape, strides))
            sizes[k] = -(-span * dtype.itemsize // self.ALIGN) * self.ALIGN

        def group(k):  # what the blocks are made in turn from: dead, large, small
            return 0 if pooled[k] < 0 else 1 if sizes[k] >= self.SMALL_BYTES else 2
        least = max(sum(sizes.values()) // self.BLOCKS, self.MIN_BLOCK_BYTES)
        last = None
        for k in sorted(pooled, key=lambda k: (group(k), pooled[k], k)):
            dtype = out_alloc[k][2]
            if dtype not in self.dtypes:
                self.dtypes.append(dtype)
            rank = (group(k), pooled[k])
            if not self.blocks or rank[0] != last[0] or (
                    rank[0] == 1 and rank != last and self.blocks[-1] >= least):
                self.blocks.append(0)
            last = rank
            self.offsets[k] = (len(self.blocks) - 1, self.blocks[-1], self.dtypes.index(dtype))
            self.blocks[-1] += sizes[k]
        self.runs = self._side_by_side(out_alloc, sizes)

    def _side_by_side(self, out_alloc, sizes):
        """Lays each block's outputs out again, those of one (dtype, shape, strides) together
        in the order of their first output, and returns the series (`runs`)."""
        runs = []
        for g in range(len(self.blocks)):
            members = sorted(k for k, (b, _, _) in self.offsets.items() if b == g)
            series = {}  # (dtype index, shape, strides) -> outputs, in first-seen order
            for k in members:
                shape, strides, _ = out_alloc[k]
                key = (self.offsets[k][2], tuple(shape), tuple(strides))
                series.setdefault(key, []).append(k)
            at = 0
            for (j, shape, strides), ks in series.items():
                for k in ks:
                    self.offsets[k] = (g, at, j)
                    at += sizes[ks[0]]
                if len(ks) > 1:
                    step = sizes[ks[0]] // self.dtypes[j].itemsize
                    runs.append((tuple(ks), g, j, shape, strides, step))
        return runs

    def names(self):
        """The constants the call's pooled lines read (call_source.py)."""
        names = {"_pool_uint8": torch.uint8}
        for g, size in enumerate(self.blocks):
            names[f"_pool_bytes{g}"] = (max(size, self.ALIGN),)
        for j, dtype in enumerate(self.dtypes):
            names[f"_pool_dtype{j}"] = dtype
        for k, (_, at, j) in self.offsets.items():
            names[f"_pool_at{k}"] = at // self.dtypes[j].itemsize  # in elements of the view
        for r, (ks, _, _, shape, strides, step) in enumerate(self.runs):
            names[f"_run_shape{r}"] = (len(ks), *shape)
            names[f"_run_strides{r}"] = (step, *strides)
        return names


class LateOutputs:
    """Program outputs of at least `MIN_BYTES` that the call allocates itself
    (cinn_like_call_plan_run_hooked): given no memory, each is allocated by `alloc` when
    the function reaches the first statement that writes it, so a training backward holds each
    large gradient from its first write, not for the whole call (its peak was every gradient
    beside the largest intermediates). Pooled outputs are allocated with their block.

    `outputs`: the Program outputs so allocated; `alloc` (a ctypes callback) makes output k's
    tensor into the call's list at k (`late`, one slot more for an exception it caught) and
    returns its address; the call passes the list as the context, so concurrent calls never
    share one."""

    MIN_BYTES = 1 << 20

    def __init__(self, num_inputs, out_alloc, pool, empty):
        self.outputs = tuple(
            k for k, (shape, strides, dtype) in enumerate(out_alloc)
            if k not in pool.offsets and math.prod(shape) * dtype.itemsize >= self.MIN_BYTES)
        expected = {k: math.prod(out_alloc[k][0]) * out_alloc[k][2].itemsize for k in self.outputs}

        def alloc(late, index, nbytes):
            # Nothing may raise through C (ctypes would return an arbitrary pointer): an
            # exception (out of memory, say) is kept in the list's last slot and the call fails;
            # the call's Python raises it.
            try:
                k = index - num_inputs
                if expected.get(k) != nbytes:
                    return None  # not an output this call allocates: the call fails naming it
                shape, strides, dtype = out_alloc[k]
                t = empty(shape, strides, dtype)
                late[k] = t
                return t.data_ptr()
            except BaseException as e:  # noqa: BLE001
                late[-1] = e
                return None

        self.alloc = c_output_alloc(alloc) if self.outputs else None

    def names(self):
        """The constants the call's lines for late outputs read (call_source.py)."""
        def missing(k):
            raise RuntimeError(f"cinn_like.torch kernel: output {k} was not allocated by its call")
        return {"_late_alloc": self.alloc, "_late_missing": missing}


__all__ = ["compile_partition", "make_kernel", "CinnLikeKernel", "DTYPES", "pshape"]
