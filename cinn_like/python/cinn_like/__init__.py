"""cinn_like: a JIT subgraph compiler, from Python through its C API (ctypes).

    import cinn_like, numpy as np
    mod = cinn_like.compile(program_json, target="x86", name="f")
    mod(x, w, out)                # DLPack tensors: inputs then outputs, no copies
    cinn_like.set_flags(cinn_like_fast_math=True)
    mod.save("f.clm"); mod = cinn_like.load("f.clm")   # no compiler needed

Compiled Programs are kept on disk (~/.cache/cinn_like, CINN_LIKE_CACHE_DIR, or the flag
cinn_like_cache_dir; cinn_like_cache=false turns it off): cache_stats() counts its hits.

One build of libcinn_like.so serves every Python version: nothing here is compiled.
"""
import ctypes
import json
import os

from ._dlpack import dltensor_pointer
from ._lib import CinnLikeError, check, lib
from .program import ProgramBuilder

__all__ = ["compile", "load", "cache_stats", "compile_stats", "cache_dir", "set_flags", "Module", "CinnLikeError",
           "ProgramBuilder", "version"]


def version():
    return lib.cinn_like_version().decode()


def set_flags(**flags):
    """Sets cinn_like flags by name (the same as FLAGS_<name> in the environment)."""
    for name, value in flags.items():
        if not isinstance(value, (bool, int, float, str)) or value is None:
            raise TypeError(f"cinn_like.set_flags: {name} must be a bool, int, float or str, "
                            f"not {type(value).__name__}")
        if isinstance(value, bool):
            value = "true" if value else "false"
        check(lib.cinn_like_set_flag(name.encode(), str(value).encode()), f"set_flags({name})")


class Module:
    """A compiled Program; calling it runs its entry on DLPack tensors (inputs then outputs)."""

    def __init__(self, handle, name):
        self._handle = handle
        self.name = name
        fn = ctypes.c_void_p()
        check(lib.cinn_like_module_lookup(handle, name.encode(), ctypes.byref(fn)), f"lookup {name}")
        self._fn = fn
        sig = ctypes.c_char_p()
        check(lib.cinn_like_module_signature(handle, ctypes.byref(sig)), "signature")
        self.signature = json.loads(sig.value.decode())

    @property
    def source(self):
        src = ctypes.c_char_p()
        check(lib.cinn_like_module_source(self._handle, ctypes.byref(src)), "source")
        return src.value.decode()

    def __call__(self, *tensors, stream=None):
        keep = []
        ptrs = (ctypes.c_void_p * len(tensors))(*[dltensor_pointer(t, keep) for t in tensors])
        check(lib.cinn_like_call(self._fn, ptrs, len(tensors), stream), f"call {self.name}")

    def save(self, path):
        """Writes this module to one file that load() reads, in any process, without compiling."""
        check(lib.cinn_like_module_save(self._handle, _path(path, "Module.save: path")),
              f"save {path}")

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            lib.cinn_like_module_free(handle)


def _text(value, what, also=""):
    """`value` as bytes for the C API when it is a str; else a TypeError naming the argument."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str{also}, not {type(value).__name__}")
    return value.encode()


def compile(program, target="x86", name="main"):  # noqa: A001 (the package's verb)
    """Compiles a Program (its JSON text, a dict, or a ProgramBuilder) for `target`
    ("x86", "cuda", "cuda -arch=sm_90") into a Module whose entry is `name`."""
    if isinstance(program, ProgramBuilder):
        program = program.to_json()
    elif isinstance(program, dict):
        program = json.dumps(program)
    program_text = _text(program, "cinn_like.compile: program",
                         " (JSON), a dict or a ProgramBuilder")
    target_text = _text(target, "cinn_like.compile: target")
    name_text = _text(name, "cinn_like.compile: name")
    handle = ctypes.c_void_p()
    check(lib.cinn_like_compile(program_text, target_text, name_text, ctypes.byref(handle)),
          "compile")
    return Module(handle, name)


def load(path):
    """The Module saved at `path` (Module.save), with the entry name it was compiled with:
    nothing is compiled; a file made for another CPU or GPU arch, of another format version, or
    damaged is refused (CinnLikeError naming the file and why). The file's machine code runs
    when the Module is called: load only files you, or someone you trust, wrote, as with a
    shared library (the checksum finds damage, not a forgery)."""
    handle = ctypes.c_void_p()
    check(lib.cinn_like_module_load(_path(path, "cinn_like.load: path"), ctypes.byref(handle)),
          "load")
    name = ctypes.c_char_p()
    rc = lib.cinn_like_module_name(handle, ctypes.byref(name))
    if rc != 0:
        lib.cinn_like_module_free(handle)
        check(rc, "load")
    return Module(handle, name.value.decode())


def _path(path, what):
    """A str or os.PathLike path as bytes for the C API; else a TypeError naming the argument."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} must be a str or os.PathLike, not {type(path).__name__}")
    return os.fsencode(path)


def _json_of(text, what):
    if not text:  # the C side failed: its message says why
        check(-1, what)
    return json.loads(text.decode())


def cache_stats():
    """The persistent compile cache's counters in this process: hits, misses, stores, damaged,
    evictions, write_errors, waits (lookups that waited for another process compiling the same
    Program, then loaded its entry)."""
    return _json_of(lib.cinn_like_cache_stats(), "cache_stats")


def compile_stats():
    """Where this process's compile time went, summed over every compile: compiled, loaded (from
    the cache), lower_ms (library_check_ms of it: libraries loaded, cuDNN plans made),
    device_codegen_ms, nvrtc_ms, module_load_ms, host_codegen_ms, host_optimize_ms, orc_link_ms,
    cache_ms, total_ms."""
    return _json_of(lib.cinn_like_compile_stats(), "compile_stats")


def cache_dir():
    """The persistent compile cache's directory ("" when compiles do not use it now: off,
    bypassed, or a directory another user owns or others can write, refused with a warning)."""
    return lib.cinn_like_cache_dir().decode()
