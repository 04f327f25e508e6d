"""Intermediate buffers of compiled Programs from PyTorch's allocators (runtime hook
cinn_like_set_allocator): CUDA workspaces come from the caching allocator on the stream the
kernel runs on, CPU ones from torch.empty, so cinn_like and PyTorch share one memory pool.

Installed once, at the first compile, when libcinn_like exports the hook; otherwise cinn_like
keeps its own allocators (nothing breaks).
"""
import ctypes

import torch

from .._lib import lib

_ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32,
                          ctypes.c_int32, ctypes.c_void_p)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                         ctypes.c_void_p)
_KDLCPU, _KDLCUDA = 1, 2
_cpu_buffers = {}  # address -> the tensor that owns it
_installed = []
counts = {"alloc": 0, "free": 0}  # calls through the hook


# The caching allocator's own entries (torch.cuda.caching_allocator_alloc adds a device
# guard that costs more than the allocation: several us per workspace on the H100 host).
_raw_alloc = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc", None)
_raw_delete = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_delete", None)
_current_device = getattr(torch._C, "_cuda_getDevice", None)


def _alloc(_ctx, nbytes, device_type, device_id, stream):
    counts["alloc"] += 1
    try:
        if device_type == _KDLCUDA:
            size = max(int(nbytes), 1)
            if _raw_alloc is not None and _current_device() == device_id:
                return _raw_alloc(size, stream or 0)
            return torch.cuda.caching_allocator_alloc(size, device_id, stream or 0)
        buf = torch.empty(int(nbytes) + 64, dtype=torch.uint8)
        addr = (buf.data_ptr() + 63) // 64 * 64
        _cpu_buffers[addr] = buf
        return addr
    except Exception:  # noqa: BLE001 (null tells cinn_like the allocation failed)
        return None


def _free(_ctx, ptr, device_type, _device_id, _stream):
    if not ptr:
        return
    counts["free"] += 1
    try:
        if device_type == _KDLCUDA:
            (_raw_delete or torch.cuda.caching_allocator_delete)(ptr)
        else:
            _cpu_buffers.pop(ptr, None)
    except Exception:  # noqa: BLE001 (a callback must not raise through C)
        pass


def install():
    """Installs the hook once; returns whether PyTorch now allocates cinn_like's workspaces."""
    if _installed:
        return _installed[0]
    fn = getattr(lib, "cinn_like_set_allocator", None)
    ok = False
    if fn is not None:
        fn.restype = ctypes.c_int
        fn.argtypes = [_ALLOC, _FREE, ctypes.c_void_p]
        callbacks = (_ALLOC(_alloc), _FREE(_free))
        ok = fn(callbacks[0], callbacks[1], None) == 0
        _installed.append(ok)
        _installed.append(callbacks)  # ctypes callbacks must outlive their use
    else:
        _installed.append(False)
    return ok
