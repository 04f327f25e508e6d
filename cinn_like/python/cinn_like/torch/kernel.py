"""A fused partition (an fx GraphModule of supported aten nodes) as one compiled Program, and
the module that runs it in place of the partition.

The Program has static shapes (the fake tensors'); rank-0 tensors travel as shape [1]. At
run time inputs are checked (device, dtype, shape), made contiguous when they are not (views:
transposes, expands, chunks), outputs are allocated with torch.empty (PyTorch's allocator) and
the entry runs on PyTorch's current stream for CUDA; an output the graph says is strided
otherwise (a transpose it returns) is copied into those strides.
"""
import ctypes

import torch
import torch.utils.dlpack

from .. import _dlpack
from .._lib import check, lib
from . import cache, ops  # noqa: F401 (ops registers the converters)
from .registry import DTYPES, Converter, convert_node, pshape, val


def build_program(sub):
    """(ProgramBuilder, inputs [(name, tensor meta)], outputs [("prog", name, meta) |
    ("input", index, None) | ("none",)]) of a fused partition GraphModule."""
    c = Converter()
    inputs = []
    outputs = []
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for i, p in enumerate(placeholders):
        c.add_input(p, f"in{i}")
        inputs.append(val(p))
    names = {}
    for n in sub.graph.nodes:
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
                else:
                    name = c.env[r]
                    if name not in names:
                        names[name] = len(names)
                        c.b.output(name)
                    outputs.append(("prog", names[name], val(r)))
    return c.b, inputs, outputs, len(names)


def _dense(t):
    """True when t's strides are a permutation of a row-major layout (no overlap, no gap):
    strides a fresh tensor can be given."""
    dims = sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1)
    expect = 1
    for st, sz in dims:
        if st != expect:
            return False
        expect *= sz
    return True


def _raw_stream(device):
    """The current CUDA stream of `device` as an int, without making a torch.cuda.Stream."""
    get = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if get is not None:
        return lambda: get(device.index if device.index is not None else 0)
    return lambda: torch.cuda.current_stream(device).cuda_stream


def _contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _empty(device):
    """f(shape, strides, dtype): an uninitialised tensor on `device`, through the allocation
    functions Inductor's generated code calls (no dispatcher: a third of torch.empty's cost)
    when this PyTorch has them."""
    guards = getattr(getattr(torch._C, "_dynamo", None), "guards", None)
    if device.type == "cpu" and hasattr(guards, "_empty_strided_cpu"):
        return guards._empty_strided_cpu
    if device.type == "cuda" and hasattr(guards, "_empty_strided_cuda"):
        fast, index, current = guards._empty_strided_cuda, device.index or 0, torch._C._cuda_getDevice

        def cuda(shape, strides, dtype):  # it allocates on the current device
            if current() == index:
                return fast(shape, strides, dtype)
            return torch.empty_strided(shape, strides, dtype=dtype, device=device)
        return cuda
    return lambda shape, strides, dtype: torch.empty_strided(shape, strides, dtype=dtype,
                                                             device=device)


class CinnLikeKernel(torch.nn.Module):
    """Runs one compiled partition. The call path is prepared once: the inputs' expected
    (dtype, shape) as plain tuples, the outputs' allocation arguments, the stream getter, and
    a C call plan (cinn_like_call_plan_create, made at the first call from its DLPack tensors)
    so each later call passes only data pointers: no DLPack capsule, no Python loop over
    output specs beyond one torch.empty each. `__call__` is `forward` (no module hooks: they
    would cost more than the kernel of a small partition)."""

    def __init__(self, module, inputs, outputs, num_prog_outputs, single):
        super().__init__()
        self.module = module
        self.inputs = inputs
        self.outputs = outputs
        self.num_prog_outputs = num_prog_outputs
        self.single = single
        self.device = inputs[0].device if inputs else next(
            o[2].device for o in outputs if o[0] == "prog")
        self.out_specs = [None] * num_prog_outputs
        # Outputs the graph gives other strides than row-major (a transposed or channels-last
        # result): the kernel writes row-major, the result is copied into those strides.
        self.restride = {}
        for o in outputs:
            if o[0] == "prog":
                self.out_specs[o[1]] = (tuple(o[2].shape), o[2].dtype)
                if not o[2].is_contiguous() and _dense(o[2]):
                    self.restride[o[1]] = tuple(o[2].stride())
        # Plain values (the metas are fake tensors, slow to ask), compared at every call.
        self._expect = [(m.dtype, torch.Size(m.shape)) for m in inputs]
        self._device = torch.device(self.device)
        self._stream = _raw_stream(self._device) if self._device.type == "cuda" else None
        self._empty = _empty(self._device)
        self._out_alloc = [(shape, _contiguous_strides(shape), dt) for shape, dt in self.out_specs]
        self._plan = None
        self._num_args = len(inputs) + num_prog_outputs
        self._ptrs_type = ctypes.c_void_p * self._num_args

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
        if not t.is_contiguous():
            t = t.contiguous()
        return t

    def _make_plan(self, tensors):
        """The C call plan, from this first call's tensors (their DLPack descriptions)."""
        keep = []
        ptrs = self._ptrs_type()
        for k, t in enumerate(tensors):
            cap = torch.utils.dlpack.to_dlpack(t.reshape(1) if t.dim() == 0 else t)
            keep.append(cap)
            ptrs[k] = _dlpack._get_pointer(cap, b"dltensor")
        plan = ctypes.c_void_p()
        check(lib.cinn_like_call_plan_create(self.module._fn, ptrs, self._num_args,
                                             ctypes.byref(plan)), "cinn_like.torch kernel")
        self._plan = plan

    def forward(self, *args):
        device = self._device
        ins = []
        for i, (t, (dtype, shape)) in enumerate(zip(args, self._expect)):
            if not (isinstance(t, torch.Tensor) and t.dtype == dtype and t.shape == shape
                    and t.device == device and t.is_contiguous()):
                t = self._prepare(i, t, self.inputs[i])
            ins.append(t)
        empty = self._empty
        outs = [empty(shape, strides, dt) for shape, strides, dt in self._out_alloc]
        tensors = ins + outs
        if self._plan is None:
            self._make_plan(tensors)
        ptrs = self._ptrs_type(*[t.data_ptr() for t in tensors])
        rc = lib.cinn_like_call_plan_run(self._plan, ptrs, self._stream and self._stream())
        if rc != 0:
            check(rc, "cinn_like.torch kernel")
        results = []
        for r in self.outputs:  # ("prog", index, meta) | ("input", index, None) | ("none",)
            if r[0] == "prog":
                t = outs[r[1]]
                if r[1] in self.restride:
                    t = torch.empty_strided(t.shape, self.restride[r[1]], dtype=t.dtype,
                                            device=t.device).copy_(t)
                results.append(t)
            elif r[0] == "input":
                results.append(args[r[1]])
            else:
                results.append(None)
        return results[0] if self.single else tuple(results)

    __call__ = forward

    def __del__(self):
        plan, self._plan = getattr(self, "_plan", None), None
        if plan:
            lib.cinn_like_call_plan_free(plan)


def compile_partition(sub, target):
    """A CinnLikeKernel for the fused partition `sub`, or raises (CinnLikeError, Unsupported)."""
    b, inputs, outputs, n = build_program(sub)
    if n == 0:
        raise ValueError("partition computes nothing")
    module = cache.get_module(b.to_json(), target)
    out_node = next(x for x in sub.graph.nodes if x.op == "output")
    single = not isinstance(out_node.args[0], (list, tuple))
    return CinnLikeKernel(module, inputs, outputs, n, single)


__all__ = ["compile_partition", "CinnLikeKernel", "DTYPES", "pshape"]
