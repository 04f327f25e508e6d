"""The pieces a compiled partition's call is made of, for static (kernel.CinnLikeKernel) and
symbolic (symbolic.SymbolicKernel) partitions alike: the C call plan of a Module, PyTorch's
current CUDA stream and allocation functions. call_source.py writes the call itself.
"""
import contextlib
import ctypes

import torch
import torch.utils.dlpack

from .. import _dlpack
from .._lib import check, lib


def raw_stream(device):
    """The current CUDA stream of `device` as an int, without making a torch.cuda.Stream."""
    get = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if get is not None:
        return lambda: get(device.index if device.index is not None else 0)
    return lambda: torch.cuda.current_stream(device).cuda_stream


def empty_allocator(device):
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


def make_plan(module, specs, device, ptrs_type):
    """The C call plan of `module` for arguments of the (dtype, shape) `specs`, from DLPack
    descriptions of them without data (the plan keeps dtypes, shapes and the device). A 0-d
    argument is described as one element of rank 1, the Program's form of a scalar."""
    keep = []
    ptrs = ptrs_type()
    for k, (dtype, shape) in enumerate(specs):
        device_type, device_id, code, bits, lanes = _dlpack_kind(dtype, device)
        shape = tuple(shape) or (1,)
        sizes = (ctypes.c_int64 * len(shape))(*shape)
        t = _dlpack.DLTensor(None, device_type, device_id, len(shape), code, bits, lanes, sizes)
        keep.append((sizes, t))
        ptrs[k] = ctypes.addressof(t)
    plan = Plan()
    check(lib.cinn_like_call_plan_create(module._fn, ptrs, len(specs), ctypes.byref(plan)),
          "cinn_like.torch kernel")
    return plan


_dlpack_kinds = {}


def _dlpack_kind(dtype, device):
    """(device type, device id, type code, bits, lanes) of DLPack for tensors of `dtype` on
    `device`, as PyTorch's own export writes them (asked once per pair)."""
    key = (dtype, device)
    kind = _dlpack_kinds.get(key)
    if kind is None:
        with real_tensors():  # the backend compiles under Dynamo's fake tensor mode
            cap = torch.utils.dlpack.to_dlpack(torch.empty(1, dtype=dtype, device=device))
            t = _dlpack.DLTensor.from_address(_dlpack._get_pointer(cap, b"dltensor"))
            kind = (t.device_type, t.device_id, t.code, t.bits, t.lanes)
        _dlpack_kinds[key] = kind
    return kind


class Plan(ctypes.c_void_p):
    """A C call plan, freed when the last holder (kernels, their copies, the functions written
    for them) lets it go."""

    def __del__(self):
        if self.value:
            lib.cinn_like_call_plan_free(self)
            self.value = None


def real_tensors():
    """A context in which new tensors are real, also inside a fake tensor mode."""
    try:
        from torch._subclasses.fake_tensor import unset_fake_temporarily  # noqa: PLC0415
    except ImportError:  # older PyTorch
        return contextlib.nullcontext()
    return unset_fake_temporarily()

