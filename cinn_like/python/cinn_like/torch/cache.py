"""The Program cache (program JSON + target + flags -> compiled Module), counters and the
fallback report of cinn_like.torch.

torch.compile caches each compiled graph per guard; this cache makes a graph that lowers to
a Program seen before (a recompile, the backward of the same shapes, a second model) reuse
its Module: the compile count proves it.
"""
import concurrent.futures
import hashlib
import logging
import os
import threading
import weakref

import cinn_like

log = logging.getLogger("cinn_like.torch")

_lock = threading.Lock()
# The Modules of the graphs alive now, shared by every graph of the same Program: held weakly,
# so that a Module goes with the last graph that calls it (torch._dynamo.reset() drops them
# all); a Program compiled again later is loaded from the persistent compile cache.
_modules = weakref.WeakValueDictionary()
# Modules prefetch compiled that no get_module has asked for yet, held until it does (at most
# _MAX_PREFETCHED: a compile that fails midway leaves its others here).
_prefetched = {}
_MAX_PREFETCHED = 256
_flags = {}
_fallbacks = []
_stats = {"compiles": 0, "cache_hits": 0, "compile_failures": 0, "graphs": 0, "partitions": 0,
          "ops_compiled": 0, "ops_fallback": 0, "compile_seconds": 0.0,
          "cudagraph_captures": 0, "direct_inference_graphs": 0}
# Counters bumped where taking _lock would cost as much as the work counted (each CUDA-graph
# replay, a few microseconds): a one-element list each, bumped by `cell[0] += 1` without the
# lock. Two threads replaying at once may lose an increment; stats() reads them with the rest.
_cells = {"cudagraph_replays": [0]}


def set_flags(**flags):
    """cinn_like.set_flags that also keys the cache (a flag change compiles anew)."""
    cinn_like.set_flags(**flags)
    _flags.update(flags)


def flags():
    """The flags set through set_flags (part of the graph plan key, plan_cache.py)."""
    return dict(_flags)


def _key(program_json, target):
    return (program_json, target, tuple(sorted(_flags.items())))


def entry_name(program_json):
    """A partition's entry name: "cinn_like_" and the start of its Program's SHA-256, so that a
    dump directory keeps each partition's files apart and a profile's kernel names say which
    partition they belong to; the same Program gets the same name (and compile cache entry)."""
    text = program_json if isinstance(program_json, str) else str(program_json)
    return "cinn_like_" + hashlib.sha256(text.encode()).hexdigest()[:12]


def get_module(program_json, target):
    key = _key(program_json, target)
    with _lock:
        mod = _modules.get(key)
        if mod is not None:
            if _prefetched.pop(key, None) is None:  # one compiled ahead for this is no hit
                _stats["cache_hits"] += 1
            return mod
    mod = cinn_like.compile(program_json, target, entry_name(program_json))
    with _lock:
        _stats["compiles"] += 1
        _modules[key] = mod
    return mod


def _dumping():
    """Whether compiles write sources or a dump (the flags set here or in the environment)."""
    return any(_flags.get(f) or os.environ.get("FLAGS_" + f)
               for f in ("cinn_like_dump_dir", "cinn_like_source_save_path"))


def prefetch(jobs):
    """Compiles the (program_json, target) pairs not compiled yet at once, on a thread each (up
    to the host's cores): the C API releases the GIL, and NVRTC and LLVM run in parallel. Each
    becomes the Module a later get_module of it returns, counted once as a compile; a Program
    that fails is left for get_module to compile again and report. Not while dumping; CUDA
    Programs only when the current device is device 0, the one a thread without a CUDA context
    loads modules on."""
    if _dumping():  # one compile at a time writes the dump's files, as the C++ side does
        return
    todo = []
    with _lock:
        for job in dict.fromkeys(jobs):  # identical partitions compile once
            if _key(*job) not in _modules:
                todo.append(job)
    if len(todo) < 2:
        return

    def one(job):
        try:
            mod = cinn_like.compile(job[0], job[1], entry_name(job[0]))
        except Exception:  # noqa: BLE001 (get_module compiles it again and reports)
            return
        with _lock:
            key = _key(*job)
            if key not in _modules:
                _stats["compiles"] += 1
                _modules[key] = mod
                _prefetched[key] = mod
                while len(_prefetched) > _MAX_PREFETCHED:
                    _prefetched.pop(next(iter(_prefetched)))

    workers = min(len(todo), os.cpu_count() or 1, 16)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, todo))


def count(name, n=1):
    """Adds n to the counter `name` (a new counter starts at 0: symbols_specialized, ...)."""
    with _lock:
        _stats[name] = _stats.get(name, 0) + n


def cell(name):
    """The lock-free counter `name` of _cells: bump it by `cell[0] += 1`."""
    return _cells[name]


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
    wrappers (backend.py: they would only have passed the arguments through); once counted,
    the graph plans' plan_hits, plan_misses, plan_stores, plan_damaged (entries that did not
    check), plan_stale (plans that no longer fit their graph), plan_write_errors and plan_waits
    (compiles that waited for another process's compile of the same graph) (plan_cache.py)."""
    with _lock:
        return {**_stats, **{name: c[0] for name, c in _cells.items()}}


def reset(clear_cache=False):
    """Zeroes the counters and the report (and forgets the compiled Modules when asked)."""
    with _lock:
        for k in _stats:
            _stats[k] = 0
        for c in _cells.values():
            c[0] = 0
        _fallbacks.clear()
        if clear_cache:
            _modules.clear()
            _prefetched.clear()
