"""Fallback control of cinn_like.torch: which aten ops cinn_like may run (allow and deny lists)
and strict mode (a fallback raises instead of running the op in PyTorch); and the CUDA-graph
mode (cudagraphs=True: each compiled graph on the GPU is captured and replayed, cudagraph.py);
and the target of graphs on CPU tensors (cpu_target="x86", the default, or "opencl",
"opencl -device=cpu": the OpenCL target on host memory); and where float16/bfloat16 elementwise
chains round (emulate_precision_casts=False, the default: as Inductor's fused kernels, in float32
with each value rounded where it leaves the chain; True: each aten op's result rounded, as eager
and as Inductor's option of that name do; registry.py).

Three sources, all read at each compile of a graph (forward and backward):
  cinn_like.torch.set_options(allow=..., deny=..., strict=..., cudagraphs=..., cpu_target=...,
                              emulate_precision_casts=...)       the process-wide settings
  torch.compile(..., backend="cinn_like", options={...})          per compile, same keys; a key
                                                                  given here replaces set_options'
  CINN_LIKE_TORCH_ALLOW, CINN_LIKE_TORCH_DENY (comma-separated), CINN_LIKE_TORCH_STRICT=1,
  CINN_LIKE_TORCH_CUDAGRAPHS=1, CINN_LIKE_TORCH_CPU_TARGET=opencl (replaces cpu_target),
  CINN_LIKE_TORCH_EMULATE_PRECISION_CASTS=1
The environment only narrows the Python settings: an op denied by either is denied, an op must
be in every non-empty allow list, and strict mode is on when either asks for it (CUDA graphs
and emulate_precision_casts likewise). torch.compile's mode="reduce-overhead" (or
"max-autotune") also asks for CUDA graphs.

Names are aten ops of the graph the backend sees (core aten, after decomposition: torch.softmax
arrives as `_softmax`), as fallback_report prints them: an overload packet name (`_softmax`,
every overload) or a full name (`_softmax.default`), optionally prefixed `aten.` or `aten::`.
A name that is no aten op is an error (a typo would otherwise allow or deny nothing).

Ops the lists keep in PyTorch are the user's choice: they are reported ("denied by ...", "not
in the allow list ...") but never make strict mode raise.
"""
import os
from dataclasses import dataclass

import torch

ENV_ALLOW, ENV_DENY, ENV_STRICT = "CINN_LIKE_TORCH_ALLOW", "CINN_LIKE_TORCH_DENY", \
    "CINN_LIKE_TORCH_STRICT"
ENV_CUDAGRAPHS, ENV_CPU_TARGET = "CINN_LIKE_TORCH_CUDAGRAPHS", "CINN_LIKE_TORCH_CPU_TARGET"
ENV_EMULATE = "CINN_LIKE_TORCH_EMULATE_PRECISION_CASTS"
_KEYS = ("allow", "deny", "strict", "cudagraphs", "cpu_target", "emulate_precision_casts")
_BOOLS = ("strict", "cudagraphs", "emulate_precision_casts")
_settings = {"allow": (), "deny": (), "strict": False, "cudagraphs": False, "cpu_target": "x86",
             "emulate_precision_casts": False}


class FallbackError(RuntimeError):
    """Strict mode: ops of a graph would run in PyTorch or failed to compile."""


def set_options(**options):
    """Process-wide settings: allow=[names], deny=[names] (a list or a comma-separated str; empty
    clears), strict=bool, cudagraphs=bool, cpu_target="x86"|"opencl"|"opencl -device=cpu|gpu",
    emulate_precision_casts=bool. Returns the previous settings: set_options(**old) restores
    them."""
    new = _checked(options, "cinn_like.torch.set_options")
    old = dict(_settings)
    _settings.update(new)
    return old


def get_options():
    """The process-wide settings (without torch.compile's options or the environment)."""
    return dict(_settings)


@dataclass(frozen=True)
class Policy:
    """The resolved settings of one compile: allow lists each as (names, source), deny lists
    likewise, strict, cudagraphs, the target string of graphs on CPU tensors, and whether each
    16-bit elementwise op rounds (emulate_precision_casts)."""
    allow: tuple = ()
    deny: tuple = ()
    strict: bool = False
    cudagraphs: bool = False
    cpu_target: str = "x86"
    emulate_precision_casts: bool = False

    def refusal(self, node):
        """Why the lists keep `node` (a call_function) in PyTorch, or None."""
        names = _node_names(node.target)
        for listed, source in self.deny:
            if names & listed:
                return f"denied by {source}"
        for listed, source in self.allow:
            if not names & listed:
                return f"not in the allow list ({source})"
        return None


def resolve(compile_options=None):
    """The Policy of a compile: set_options, then torch.compile's `options`, then the
    environment (read now)."""
    py = dict(_settings)
    py.update(_checked(compile_options or {}, "torch.compile(..., options=)"))
    env_allow = _names(os.environ.get(ENV_ALLOW, ""), ENV_ALLOW)
    env_target = os.environ.get(ENV_CPU_TARGET)
    env_deny = _names(os.environ.get(ENV_DENY, ""), ENV_DENY)
    return Policy(allow=_lists((py["allow"], "the allow option"), (env_allow, ENV_ALLOW)),
                  deny=_lists((py["deny"], "the deny option"), (env_deny, ENV_DENY)),
                  strict=py["strict"] or _env_flag(ENV_STRICT),
                  cudagraphs=py["cudagraphs"] or _env_flag(ENV_CUDAGRAPHS),
                  cpu_target=_cpu_target(env_target, ENV_CPU_TARGET) if env_target
                  else py["cpu_target"],
                  emulate_precision_casts=py["emulate_precision_casts"]
                  or _env_flag(ENV_EMULATE))


def _lists(*pairs):
    """The non-empty (names, source) pairs, names as a frozenset."""
    return tuple((frozenset(names), source) for names, source in pairs if names)


def strict_error(fallbacks):
    """The FallbackError for [(op, reason), ...]: every op of the graph, with its reason."""
    lines = "".join(f"\n  {op}: {why}" for op, why in fallbacks)
    return FallbackError(
        f"cinn_like.torch strict mode (strict option or {ENV_STRICT}=1): {len(fallbacks)} op(s) "
        f"of the graph would run in PyTorch:{lines}\n(deny an op, by the deny option or "
        f"{ENV_DENY}, to run it in PyTorch knowingly)")


def check_options(options, where):
    """Raises ValueError on an unknown key or a bad value of an options dict."""
    _checked(options or {}, where)


def _checked(options, where):
    unknown = sorted(set(options) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown cinn_like.torch option(s) {unknown}: expected "
                         f"{', '.join(_KEYS)}")
    out = {}
    for key, value in options.items():
        if key == "cpu_target":
            out[key] = _cpu_target(value, f"the cpu_target option of {where}")
        elif key in _BOOLS:
            if not isinstance(value, bool):
                raise ValueError(f"{where}: {key}={value!r}: expected True or False")
            out[key] = value
        else:
            out[key] = _names(value, f"the {key} option of {where}")
    return out


def _cpu_target(value, source):
    """A target string for graphs on CPU tensors: x86, or the OpenCL target on host memory."""
    text = " ".join(value.split()) if isinstance(value, str) else None
    if text not in ("x86", "opencl", "opencl -device=cpu", "opencl -device=gpu"):
        raise ValueError(f"{source}: {value!r}: expected 'x86', 'opencl', 'opencl -device=cpu' "
                         f"or 'opencl -device=gpu'")
    return text


def _names(value, source):
    """A list of aten op names (a comma-separated str or an iterable of str), normalized
    (no `aten.` prefix) and checked to exist."""
    items = value.split(",") if isinstance(value, str) else list(value or ())
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{source}: {item!r} is not an op name")
        name = item.strip()
        for prefix in ("aten::", "aten."):
            name = name[len(prefix):] if name.startswith(prefix) else name
        if not name:
            continue
        if not _is_aten_op(name):
            raise ValueError(f"{source}: {item.strip()!r} is not an aten op: expected an "
                             f"overload packet name such as '_softmax' or a full name such as "
                             f"'_softmax.default'")
        out.append(name)
    return tuple(out)


def _is_aten_op(name):
    packet, _, overload = name.partition(".")
    try:
        ops = getattr(torch.ops.aten, packet)
    except (AttributeError, RuntimeError):
        return False
    return not overload or overload in ops.overloads()


def _node_names(target):
    """The names a node's op matches: its packet name and its full name."""
    if isinstance(target, torch._ops.OpOverload):
        return {target._opname, target.__name__}
    return {getattr(target, "__name__", str(target))}


def _env_flag(var):
    value = os.environ.get(var, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{var}={os.environ[var]!r}: expected 1 or 0")
