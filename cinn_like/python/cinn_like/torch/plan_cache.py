"""The graph plan cache: what the backend decided for an aten graph, kept on disk beside the
compile cache so that a process handed the same graph again (a warm start) skips the work
before the kernels: checking every op, proposing partitions, fusing trial submodules and
converting them to Programs.

A plan holds, per partition that compiled, its nodes, inputs and outputs as positions in the
graph's node list, its Program's JSON and the kernel's result layout; and the graph's fallbacks
with their reasons (plan_body.py writes and reads that body). Loading the Program's Module then
hits the compile cache (cinn_like's DiskCache: no NVRTC, no LLVM), and the backend splices the
kernels into the graph as after a cold compile (partition.splice).

A plan holds no code. Version 1 carried each kernel's call (then kernel._call_source) as marshalled
Python bytecode, which the backend ran: a body changed and signed again (a bug, or whoever can
write the directory; the checksum finds only damage) ran any bytecode, or a call that returned
the wrong values or raised at the first call, past every check. Checking bytecode against its
source means compiling the source, which is all the stored code saved (about 4 ms at 200
inputs), so the kernel writes and compiles its call from the plan's fields, and those fields are
checked against the graph and the compiled Module before any of it is used (plan_body.py): a
plan that does not fit is counted as plan_stale, the graph compiled as if there were none and
its plan replaced. What is not checked is the Program's meaning (checking it would be converting
the partition again, the work a plan saves): a Program with the partition's arguments is trusted
as the compile cache's machine code is, for who can write the directory. The fuzz target
tests/python/test_torch_plan_fuzz.py (with tests/python/plan_mutator.py) holds the loader to
this: mutated plans signed again are either used with eager's results or rejected and replaced.

The key (`graph_key`) is a SHA-256 over the graph's structure: each node's op, target and
arguments (nodes by position), the placeholders' dtypes, shapes, strides and devices, and the
get_attr tensors' metadata. Other nodes' metadata follows from these and their ops, except
where an op's metadata function is user code (a custom op): the plan also holds the metadata of
every partition's inputs and outputs, and a plan whose metadata differs from the graph's is not
used (counted as plan_stale) and is replaced. Beside them: the policy, the flags set through
cinn_like.torch and the FLAGS_cinn_like_* environment, the GPUs' compute capabilities, PyTorch's
version, this package's files and the library (path, size, modification time: another build
is another key). Graphs with symbolic sizes, call_module nodes
or arguments it cannot spell exactly are not cached.

An entry is the persistent store's plan record <cache dir>/<key>.clp (cinn_like/cache/store.h,
through the C API: cinn_like.store), its payload the body as JSON. The store names it by the
key, writes it atomically, checks its SHA-256 and that it was written under this key when it is
read, and removes one that does not check (counted as plan_damaged; the graph is compiled again
and its plan replaces it). What is not a regular file at an entry's path (a link, a FIFO) is
neither read, removed nor replaced. One process at a time compiles a graph (`locked`: the store's
lock of the key, held from the plan's lookup to its store), so that processes handed one graph at
once convert it once. The compile cache's eviction, which runs as it stores a Module, counts plan
entries with its own under the cap. Plans are used whenever the compile cache is
(cinn_like.cache_dir() is not empty): cinn_like_cache=false turns both off.
"""
import contextlib
import json
import os
import threading

import torch

import cinn_like

from .. import _lib
from .. import store as _store
from . import cache
from .sizes import is_symbolic

# In the key: 2, no bytecode (kernel calls are written from the plan's fields); 3, a record of
# the persistent store, without the key in its body.
_VERSION = 3
_KIND = "plan"


# Off, plans are neither read nor written (tests that watch the converters work turn it off:
# a plan skips them).
enabled = True


class _Uncacheable(Exception):
    """The graph holds something its key cannot spell exactly."""


_identity = []
_identity_lock = threading.Lock()


def _code_identity():
    """PyTorch's version, this package's files and the library, as text (once per process)."""
    with _identity_lock:
        if not _identity:
            parts = [f"torch {torch.__version__}"]
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            paths = [_lib.lib._name]
            for folder, dirs, files in os.walk(root):
                dirs.sort()
                paths += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
            for path in paths:
                try:
                    st = os.stat(path)
                    parts.append(f"{path} {st.st_size} {st.st_mtime_ns}")
                except OSError:
                    parts.append(f"{path} missing")
            _identity.append("\n".join(parts))
        return _identity[0]


_Node = torch.fx.Node
_EXACT = (bool, int, str, type(None))
_SPELLED = (torch.dtype, torch.device, torch.layout, torch.memory_format)


def _text(a, index):
    """An argument as exact text: nodes by position, containers by their items. (Hot: a warm
    start reads every node's arguments; the common items, nodes and ints, are spelled inline.)"""
    t = type(a)
    if t is _Node:
        return index[a]
    if t is tuple or t is list:
        parts = []
        for x in a:
            tx = type(x)
            if tx is _Node:
                parts.append(index[x])
            elif tx is int or tx is bool or x is None:
                parts.append(repr(x))
            else:
                parts.append(_text(x, index))
        inner = ",".join(parts)
        return f"[{inner}]" if t is list else f"({inner})"
    if t in _EXACT:
        return repr(a)
    if t is float:
        return a.hex()
    if isinstance(a, (list, tuple)):  # a named tuple, say
        return f"{t.__name__}({_text(list(a), index)})"
    if isinstance(a, dict):
        return "{" + ",".join(f"{k!r}:{_text(v, index)}" for k, v in a.items()) + "}"
    if isinstance(a, _SPELLED):
        return f"<{a}>"
    if isinstance(a, slice):
        return f"slice({_text(a.start, index)},{_text(a.stop, index)},{_text(a.step, index)})"
    raise _Uncacheable(f"an argument of type {t.__name__}")


_target_texts = {}


def _target_text(target):
    """A node's target as text: names (placeholders, attributes) as they are, ops and functions
    by their qualified names, remembered."""
    if isinstance(target, str):
        return target
    try:
        return _target_texts[target]
    except (KeyError, TypeError):  # TypeError: an unhashable target
        pass
    text = _callable_text(target)
    try:
        _target_texts[target] = text
    except TypeError:
        pass
    return text


def _callable_text(target):
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return str(target)
    name = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
    if "<" in name or "?" in name:  # a lambda or a local function: no stable name
        raise _Uncacheable(f"the target {target!r}")
    return name


def value_text(t):
    """A placeholder's or a partition boundary's value (its metadata) as exact text."""
    if isinstance(t, torch.Tensor):
        if is_symbolic(t):
            raise _Uncacheable("symbolic sizes")
        return f"T({t.dtype},{tuple(t.shape)},{tuple(t.stride())},{t.device})"
    if isinstance(t, (bool, int, float)):  # a SymInt is none of them
        return repr(t)
    raise _Uncacheable(f"a value of type {type(t).__name__}")


def _attribute(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def graph_key(gm, rules):
    """The plan key of `gm` compiled under policy `rules` (hex), or None when it is not cached:
    plans off, or a graph its key cannot spell (any failure to read it: a sparse tensor has no
    strides, say)."""
    if not enabled or not cinn_like.cache_dir():
        return None
    try:
        return _graph_key(gm, rules)
    except Exception:  # noqa: BLE001 (an uncacheable graph compiles as without plans)
        return None


def _graph_key(gm, rules):
    index = {}
    lines = []
    devices = set()
    for i, n in enumerate(gm.graph.nodes):
        index[n] = f"%{i}"
        if n.op == "call_module":
            raise _Uncacheable("a call_module node")
        kwargs = n.kwargs
        line = (f"{n.op} {_target_text(n.target)} {_text(n.args, index)} "
                f"{_text(kwargs, index) if kwargs else '{}'}")
        if n.op == "placeholder":
            v = n.meta.get("val")
            line += " " + value_text(v)
            if isinstance(v, torch.Tensor) and v.device.type == "cuda":
                devices.add(v.device)
        elif n.op == "get_attr":
            line += " " + value_text(_attribute(gm, n.target))
        lines.append(line)
    lists = [(kind, sorted(names), source) for kind, pairs in (("allow", rules.allow),
                                                                ("deny", rules.deny))
             for names, source in pairs]
    flags = sorted((k, str(v)) for k, v in cache.flags().items())
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("FLAGS_cinn_like_"))
    gpus = sorted((str(d), torch.cuda.get_device_capability(d)) for d in devices)
    head = [f"cinn_like plan {_VERSION}", _code_identity(), repr(lists), repr(rules.strict),
            repr(rules.cudagraphs), repr(rules.cpu_target), repr(rules.emulate_precision_casts),
            repr(flags), repr(env), repr(gpus)]
    return _store.key_of("\n".join(head + lines))


def _directory(key):
    """The store's directory for plan `key`, or None: no key, plans off or the cache off."""
    if key is None or not enabled:
        return None
    return cinn_like.cache_dir() or None


@contextlib.contextmanager
def locked(key):
    """Holds the store's lock of plan `key` in the block (not without a key or the cache): a
    process compiling the same graph meanwhile waits (counted as plan_waits), then takes the plan
    this one stores."""
    directory = _directory(key)
    with contextlib.ExitStack() as held:
        if directory is not None:
            try:
                if held.enter_context(_store.locked(directory, key)):
                    cache.count("plan_waits")
            except cinn_like.CinnLikeError as e:
                cache.log.warning("cinn_like.torch: plan %s not locked (%s): compiling", key, e)
        yield


def load(key):
    """The plan stored under `key` (a dict), or None: no entry, plans off, or a damaged entry
    (removed and counted as plan_damaged)."""
    directory = _directory(key)
    if directory is None:
        return None
    got = _store.get(directory, _KIND, key)
    if isinstance(got, _store.Miss):
        if got.reason == _store.DAMAGED:
            cache.log.warning("cinn_like.torch: %s: compiling again", got.why)
            cache.count("plan_damaged")
        else:
            if got.reason == _store.REFUSED:
                cache.log.warning("cinn_like.torch: %s: compiling", got.why)
            cache.count("plan_misses")
        return None
    try:
        plan = json.loads(got)
        if not isinstance(plan, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as e:  # sealed, yet no plan: its graph's replaces it
        cache.log.warning("cinn_like.torch: plan %s is no plan (%s): compiling again", key, e)
        cache.count("plan_damaged")
        return None
    return plan


def store(key, plan):
    """Writes `plan` under `key`, atomically; a failure is logged and counted, never raised."""
    directory = _directory(key)
    if directory is None:
        return
    body = json.dumps(plan, separators=(",", ":")).encode()
    try:
        _store.put(directory, _KIND, key, body)
        cache.count("plan_stores")
    except cinn_like.CinnLikeError as e:
        cache.log.warning("cinn_like.torch: could not write plan %s: %s", key, e)
        cache.count("plan_write_errors")
