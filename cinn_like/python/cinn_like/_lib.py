"""Loading libcinn_like.so and declaring the C API (cinn_like/c_api.h) for ctypes.

The library is found, in order, at $CINN_LIKE_LIBRARY, next to this package (an installed
wheel or the GPU bundle), or in the build folder of the checkout the package sits in.
"""
import ctypes
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("CINN_LIKE_LIBRARY")
    if env:
        yield env
    yield os.path.join(_HERE, "libcinn_like.so")
    root = os.path.abspath(os.path.join(_HERE, "..", "..", ".."))
    yield os.path.join(root, os.environ.get("CINN_LIKE_BUILD_DIR", "build"), "libcinn_like.so")


def _load():
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            return ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        tried.append(path)
    raise ImportError("cinn_like: libcinn_like.so not found; set CINN_LIKE_LIBRARY or build it "
                      "(./scripts/build.sh). Looked at: " + ", ".join(tried))


lib = _load()

c_module = ctypes.c_void_p
c_function = ctypes.c_void_p

lib.cinn_like_version.restype = ctypes.c_char_p
lib.cinn_like_version.argtypes = []
lib.cinn_like_get_last_error.restype = ctypes.c_char_p
lib.cinn_like_get_last_error.argtypes = []
lib.cinn_like_compile.restype = ctypes.c_int
lib.cinn_like_compile.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.POINTER(c_module)]
lib.cinn_like_warm_up.restype = ctypes.c_int
lib.cinn_like_warm_up.argtypes = [ctypes.c_char_p]
lib.cinn_like_module_lookup.restype = ctypes.c_int
lib.cinn_like_module_lookup.argtypes = [c_module, ctypes.c_char_p, ctypes.POINTER(c_function)]
lib.cinn_like_module_source.restype = ctypes.c_int
lib.cinn_like_module_source.argtypes = [c_module, ctypes.POINTER(ctypes.c_char_p)]
lib.cinn_like_module_signature.restype = ctypes.c_int
lib.cinn_like_module_signature.argtypes = [c_module, ctypes.POINTER(ctypes.c_char_p)]
lib.cinn_like_call.restype = ctypes.c_int
lib.cinn_like_call.argtypes = [c_function, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int32,
                               ctypes.c_void_p]
c_call_plan = ctypes.c_void_p
lib.cinn_like_call_plan_create.restype = ctypes.c_int
lib.cinn_like_call_plan_create.argtypes = [c_function, ctypes.POINTER(ctypes.c_void_p),
                                           ctypes.c_int32, ctypes.POINTER(c_call_plan)]
lib.cinn_like_call_plan_run.restype = ctypes.c_int
lib.cinn_like_call_plan_run.argtypes = [c_call_plan, ctypes.c_void_p, ctypes.c_void_p]
c_output_alloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_int32,
                                  ctypes.c_size_t)
c_input_release = ctypes.CFUNCTYPE(None, ctypes.py_object, ctypes.c_int32)
lib.cinn_like_call_plan_run_hooked.restype = ctypes.c_int
lib.cinn_like_call_plan_run_hooked.argtypes = [c_call_plan, ctypes.c_void_p, ctypes.c_void_p,
                                               c_output_alloc, ctypes.py_object,
                                               c_input_release, ctypes.py_object]
lib.cinn_like_call_plan_free.restype = None
lib.cinn_like_call_plan_free.argtypes = [c_call_plan]
lib.cinn_like_module_free.restype = None
lib.cinn_like_module_free.argtypes = [c_module]
lib.cinn_like_module_save.restype = ctypes.c_int
lib.cinn_like_module_save.argtypes = [c_module, ctypes.c_char_p]
lib.cinn_like_module_load.restype = ctypes.c_int
lib.cinn_like_module_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(c_module)]
lib.cinn_like_module_name.restype = ctypes.c_int
lib.cinn_like_module_name.argtypes = [c_module, ctypes.POINTER(ctypes.c_char_p)]
lib.cinn_like_cache_stats.restype = ctypes.c_char_p
lib.cinn_like_cache_stats.argtypes = []
lib.cinn_like_compile_stats.restype = ctypes.c_char_p
lib.cinn_like_compile_stats.argtypes = []
lib.cinn_like_cache_dir.restype = ctypes.c_char_p
lib.cinn_like_cache_dir.argtypes = []
c_store_lock = ctypes.c_void_p
lib.cinn_like_store_key.restype = ctypes.c_char_p
lib.cinn_like_store_key.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
lib.cinn_like_store_get.restype = ctypes.c_int
lib.cinn_like_store_get.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.POINTER(ctypes.c_void_p),
                                    ctypes.POINTER(ctypes.c_size_t),
                                    ctypes.POINTER(ctypes.c_int)]
lib.cinn_like_store_put.restype = ctypes.c_int
lib.cinn_like_store_put.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.c_char_p, ctypes.c_size_t]
lib.cinn_like_store_lock_key.restype = ctypes.c_int
lib.cinn_like_store_lock_key.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                         ctypes.POINTER(c_store_lock),
                                         ctypes.POINTER(ctypes.c_int)]
lib.cinn_like_store_unlock.restype = None
lib.cinn_like_store_unlock.argtypes = [c_store_lock]
lib.cinn_like_set_flag.restype = ctypes.c_int
lib.cinn_like_set_flag.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


class CinnLikeError(RuntimeError):
    """An error reported by the C API (its message is cinn_like_get_last_error())."""


def check(rc, what):
    if rc != 0:
        raise CinnLikeError(f"{what}: {lib.cinn_like_get_last_error().decode()}")
