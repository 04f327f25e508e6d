"""The Program cache (program JSON + target + flags -> compiled Module), counters and the
fallback report of cinn_like.torch.

torch.compile caches each compiled graph per guard; this cache makes a graph that lowers to
a Program seen before (a recompile, the backward of the same shapes, a second model) reuse
its Module: the compile count proves it.
"""
import contextlib
import logging
import threading

import cinn_like

log = logging.getLogger("cinn_like.torch")

_lock = threading.Lock()
_modules = {}
_flags = {}
_fallbacks = []
_stats = {"compiles": 0, "cache_hits": 0, "compile_failures": 0, "graphs": 0, "partitions": 0,
          "ops_compiled": 0, "ops_fallback": 0, "compile_seconds": 0.0,
          "cudagraph_captures": 0, "cudagraph_replays": 0, "direct_inference_graphs": 0}


def set_flags(**flags):
    """cinn_like.set_flags that also keys the cache (a flag change compiles anew)."""
    cinn_like.set_flags(**flags)
    _flags.update(flags)


_quiet = threading.local()


@contextlib.contextmanager
def quiet():
    """Within it, cache hits are not counted (a lookup of what this graph compiled already)."""
    _quiet.on = True
    try:
        yield
    finally:
        _quiet.on = False


def get_module(program_json, target):
    key = (program_json, target, tuple(sorted(_flags.items())))
    with _lock:
        mod = _modules.get(key)
        if mod is not None:
            if not getattr(_quiet, "on", False):
                _stats["cache_hits"] += 1
            return mod
    mod = cinn_like.compile(program_json, target, "cinn_like_kernel")
    with _lock:
        _stats["compiles"] += 1
        _modules[key] = mod
    return mod


def count(name, n=1):
    with _lock:
        _stats[name] += n


def record_fallback(op, reason):
    with _lock:
        _fallbacks.append((op, reason))
    log.info("cinn_like.torch: %s runs in PyTorch: %s", op, reason)


def fallback_report():
    """Every (op, reason) that ran in PyTorch, in the order the graphs were partitioned."""
    with _lock:
        return list(_fallbacks)


def stats():
    """Counters: compiles, cache_hits, compile_failures, graphs, partitions, ops_compiled,
    ops_fallback, compile_seconds: the time spent in the backend's graph compiler
    (partitioning, converting and compiling every graph handed to it; PyTorch's tracing is
    not in it), cudagraph_captures, cudagraph_replays (the CUDA-graph mode), and
    direct_inference_graphs: inference graphs that Dynamo calls without AOTAutograd's runtime
    wrappers (backend.py: they would only have passed the arguments through)."""
    with _lock:
        return dict(_stats)


def reset(clear_cache=False):
    """Zeroes the counters and the report (and forgets the compiled Modules when asked)."""
    with _lock:
        for k in _stats:
            _stats[k] = 0
        _fallbacks.clear()
        if clear_cache:
            _modules.clear()
