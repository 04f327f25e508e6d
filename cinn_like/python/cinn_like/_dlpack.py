"""DLPack without copies: the DLTensor* inside an object's __dlpack__ capsule.

The capsule stays owned by the caller's list, so the exporter's deleter runs when the capsule
is garbage collected, after the call; cinn_like never takes ownership.
"""
import ctypes

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def dltensor_pointer(obj, keep_alive, stream=None):
    """The address of obj's DLTensor (DLManagedTensor starts with it); appends the capsule to
    keep_alive. `obj` is anything with __dlpack__ (torch tensors, numpy arrays, ...)."""
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"cinn_like: {type(obj).__name__} does not support DLPack (__dlpack__)")
    try:
        capsule = obj.__dlpack__(stream=stream) if stream is not None else obj.__dlpack__()
    except TypeError:
        capsule = obj.__dlpack__()
    keep_alive.append(capsule)
    return _get_pointer(capsule, b"dltensor")


class DLTensor(ctypes.Structure):
    """dlpack.h's DLTensor (its DLDevice and DLDataType inlined), for descriptions made here."""
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]
