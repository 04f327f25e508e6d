"""The one writer of a compiled partition's call: the Python source of `run_partition(a0, ..)`,
straight-line code for its number of inputs and outputs (no loop, list or DLPack capsule), for
static (kernel.CinnLikeKernel) and symbolic (symbolic.SymbolicKernel) partitions alike. What
differs between them is data in a `CallSpec`: the texts of the expected shapes and strides,
the symbols read from input dims (and so a plan per set of their values), whether a call the
checks refuse goes to a slow path or raises, and the static partitions' output pool, late
outputs and owned inputs.
"""
from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch

from .._lib import c_input_release, c_output_alloc, check, lib
from .call import raw_stream


class CallInput(NamedTuple):
    """A tensor argument of the Program: parameter a<param> of the call, expected of `dtype`
    and `rank`, of the shape the Python text `shape` evaluates to (a bound torch.Size or a
    tuple of size texts over the symbols' locals) and, where not contiguous, of the strides
    `strides` evaluates to (None: contiguous)."""
    param: int
    dtype: torch.dtype
    rank: int
    shape: str
    strides: Optional[str]


class CallOutput(NamedTuple):
    """A Program output: allocated as `dtype` at the shape and strides its Python texts
    evaluate to (unless pooled or late)."""
    dtype: torch.dtype
    shape: str
    strides: str


@dataclass(frozen=True)
class CallSpec:
    """What `call_source` writes a partition's call from.

    `num_params`: the call's parameters a0.. (sizes the graph passes included); `inputs`: the
    tensor ones, in the Program's order; `outputs`: the Program's outputs; `results`: the
    call's results (build_program's outputs), one value when `single`; `device`: where the
    tensors are.

    `slow_path`: True, a call the checks refuse (another dtype, shape, device or layout, not a
    plain tensor) returns `_slow(a0, ..)`, which the caller binds, and every check is one
    condition; False, there is no slow path: a value that is no tensor of the rank expected
    raises ValueError naming the ranks, an input of another dtype, shape or device raises
    ValueError naming the input, the dtype, shape and device it got and those expected, and an
    input in another layout is copied into the expected one (b<i>; a<i> stays the caller's
    tensor, which an ("input", i) result returns).

    `symbols`: None, the sizes are static and the call runs the one C call plan `_plan`;
    otherwise ((local, param, dim), ..): each symbol read from a dim of an input (after the
    ranks are checked, so only without a slow path) into the local its size texts name, and the
    call's plan is `_plans.get(key)` or `_plan_for(key)` of their values (the caller binds both).

    `pool`: the outputs allocated in blocks, with `offsets`, `blocks` and `runs`
    (kernel.OutputPool: their tensors made after the run, the kernels queued by then, a run's
    with one view and one unbind; it binds the `_pool_*` and `_run_*` names); `late`: the
    outputs the call allocates before their first write (kernel.LateOutputs: it binds
    `_late_alloc` and `_late_missing`)."""
    num_params: int
    inputs: tuple
    outputs: tuple
    results: tuple
    single: bool
    device: torch.device
    slow_path: bool
    symbols: Optional[tuple] = None
    pool: object = None
    late: tuple = ()

    def __post_init__(self):
        assert not (self.slow_path and self.symbols), "symbols are read after a check that raises"


def _drop(inputs, index):
    # Nothing may raise through C: the call goes on holding the input (freed when it returns).
    try:
        inputs[index] = None
    except BaseException:  # noqa: BLE001, S110
        pass


# The input release of every owned call (cinn_like_call_plan_run_hooked): the call's list of
# inputs is its context. The null hooks: neither outputs allocated nor inputs released.
_release_input = c_input_release(_drop)
_no_alloc, _no_release = c_output_alloc(), c_input_release()


def make_call(spec, names, owned=False):
    """(function, source): the call `call_source(spec, owned)` writes, compiled with the names
    it reads bound: those of `spec` and the library here, then `names`, the caller's (`_empty`
    and `_ptrs`; `_plan`, or `_plans` and `_plan_for`; `_slow` with a slow path; whatever names
    the spec's texts and its pool and late outputs read; `__name__`, the function's module)."""
    device = spec.device
    scope = {
        "torch": torch,
        "_tensor": (torch.Tensor, torch.nn.Parameter),
        "_device": device.index if device.index is not None else 0,
        "_run": lib.cinn_like_call_plan_run,
        "_run_hooked": lib.cinn_like_call_plan_run_hooked,
        "_release_input": _release_input,
        "_no_alloc": _no_alloc,
        "_no_release": _no_release,
        "_fail": lambda rc: check(rc, "cinn_like.torch kernel"),
    }
    if device.type == "cuda":
        scope["_stream"] = raw_stream(device)
    for x in spec.inputs:
        scope[f"_dtype{x.param}"] = x.dtype
    for k, o in enumerate(spec.outputs):
        scope[f"_odtype{k}"] = o.dtype
    scope.update(names)
    source = call_source(spec, owned)
    exec(compile(source, "<cinn_like partition>", "exec"), scope)  # noqa: S102 (our own source)
    return scope["run_partition_owned" if owned else "run_partition"], source


def call_source(spec, owned=False):
    """Python source of `run_partition(a0, ..)`, the call of `spec` (CallSpec): its inputs
    checked, its outputs allocated, the C call plan run on their pointers (on PyTorch's current
    stream on CUDA), its results returned. With `owned`, `run_partition_owned(inputs)` instead:
    it takes a list it owns (CinnLikeKernel.call_owned) and drops each input from it once the
    call has read it for the last time (cinn_like_release_input), so that an input nothing
    else holds is freed before the call returns."""
    offsets = spec.pool.offsets if spec.pool else {}
    blocks = spec.pool.blocks if spec.pool else []
    late = spec.late
    params = ", ".join(f"a{i}" for i in range(spec.num_params))
    if owned:
        lines = ["def run_partition_owned(inputs):"]
        if spec.num_params:
            lines.append(f"    {params}, = inputs")
    else:
        lines = [f"def run_partition({params}):"]
    slow = "_slow(*inputs)" if owned else f"_slow({params})"
    lines += _checks(spec, params, slow)
    plan = "_plan"
    if spec.symbols is not None:
        plan, key = "plan", "(" + "".join(f"{local}, " for local, _, _ in spec.symbols) + ")"
        lines.append(f"    plan = _plans.get({key})")
        lines.append("    if plan is None:")
        lines.append(f"        plan = _plan_for({key})")
    for k, o in enumerate(spec.outputs):
        if k not in offsets and k not in late:
            lines.append(f"    o{k} = _empty({o.shape}, {o.strides}, _odtype{k})")
    for g in range(len(blocks)):
        lines.append(f"    block{g} = _empty(_pool_bytes{g}, (1,), _pool_uint8)")
        lines.append(f"    at{g} = block{g}.data_ptr()")
    # Without a slow path an input is read from b<i>, its copy in the expected layout.
    read = "a" if spec.slow_path else "b"
    pointers = [f"{read}{x.param}.data_ptr()" for x in spec.inputs]
    pointers += [f"at{offsets[k][0]} + {offsets[k][1]}" if k in offsets
                 else "None" if k in late else f"o{k}.data_ptr()"
                 for k in range(len(spec.outputs))]
    stream = "_stream()" if spec.device.type == "cuda" else "None"
    lines.append(f"    ptrs = _ptrs({', '.join(pointers)})")
    if owned:
        # Only the list holds the inputs now (those the results pass through excepted).
        passed = {r[1] for r in spec.results if r[0] == "input"}
        dropped = [f"a{i}" for i in range(spec.num_params) if i not in passed]
        if not spec.slow_path:
            dropped += [f"b{x.param}" for x in spec.inputs]
        if dropped:
            lines.append(f"    {' = '.join(dropped)} = None")
    if late:
        lines.append(f"    late = [None] * {len(spec.outputs) + 1}")
    if late or owned:
        alloc = "_late_alloc, late" if late else "_no_alloc, None"
        release = "_release_input, inputs" if owned else "_no_release, None"
        lines.append(f"    rc = _run_hooked({plan}, ptrs, {stream}, {alloc}, {release})")
    else:
        lines.append(f"    rc = _run({plan}, ptrs, {stream})")
    lines.append("    if rc:")
    if late:
        lines.append("        if late[-1] is not None:")
        lines.append("            raise late[-1]")
    lines.append("        _fail(rc)")
    for k in late:
        lines.append(f"    o{k} = late[{k}]")
        lines.append(f"    if o{k} is None:")
        lines.append(f"        _late_missing({k})")
    for g, j in sorted({(g, j) for g, _, j in offsets.values()}):
        lines.append(f"    v{g}_{j} = block{g}.view(_pool_dtype{j})")
    runs = spec.pool.runs if spec.pool else []
    in_runs = {k for ks, *_ in runs for k in ks}
    for r, (ks, g, _, _, _, _) in enumerate(runs):
        j = offsets[ks[0]][2]
        targets = "".join(f"o{k}, " for k in ks)
        lines.append(f"    {targets}= v{g}_{j}.as_strided(_run_shape{r}, _run_strides{r}, "
                     f"_pool_at{ks[0]}).unbind(0)")
    for k, (g, _, j) in sorted(offsets.items()):
        if k in in_runs:
            continue
        o = spec.outputs[k]
        lines.append(f"    o{k} = v{g}_{j}.as_strided({o.shape}, {o.strides}, _pool_at{k})")
    lines.append(f"    return {results_source(spec.results, spec.single, spec.pool)}")
    return "\n".join(lines) + "\n"


def _checks(spec, params, slow):
    """The lines that check the call's inputs, read its symbols and, without a slow path, copy
    inputs into the layouts expected (CallSpec's `slow_path`). With a slow path: one condition
    over every input, the call `slow` returned where it fails. Without: the types and ranks,
    the symbol reads, then per input its dtype, shape and device, each raising ValueError."""
    device = "a{0}.is_cuda and a{0}.get_device() == _device" \
        if spec.device.type == "cuda" else "a{0}.is_cpu"

    def matches(x):
        i = x.param
        return f"a{i}.dtype is _dtype{i} and a{i}.shape == {x.shape} and {device.format(i)}"

    if spec.slow_path:
        checks = " and\n            ".join(
            f"type(a{x.param}) in _tensor and {matches(x)} and "
            + (f"a{x.param}.is_contiguous()" if x.strides is None
               else f"a{x.param}.stride() == {x.strides}")
            for x in spec.inputs)
        return [f"    if not ({checks or 'True'}):", f"        return {slow}"]
    ranks = " and ".join(f"type(a{x.param}) in _tensor and a{x.param}.dim() == {x.rank}"
                         for x in spec.inputs)
    lines = [f"    if not ({ranks or 'True'}):",
             f"        raise ValueError('cinn_like.torch: a partition compiled for tensors of "
             f"ranks {[x.rank for x in spec.inputs]} got ' + str([getattr(a, 'shape', a) for "
             f"a in ({params},)]))"]
    lines += [f"    {local} = a{i}.shape[{d}]" for local, i, d in spec.symbols or ()]
    for x in spec.inputs:
        i = x.param
        lines.append(f"    if not ({matches(x)}):")
        lines.append(f"        raise ValueError('cinn_like.torch: input {i} is ' + str(a{i}.dtype)"
                     f" + str(list(a{i}.shape)) + ' on ' + str(a{i}.device) + ', expected '"
                     f" + str(_dtype{i}) + str(list({x.shape})))")
        lines.append(f"    b{i} = a{i}")
        if x.strides is None:
            lines.append(f"    if not a{i}.is_contiguous():")
            lines.append(f"        b{i} = a{i}.contiguous()")
        else:
            lines.append(f"    if a{i}.stride() != {x.strides}:")
            lines.append(f"        b{i} = torch.empty_strided(a{i}.shape, {x.strides}, "
                         f"dtype=a{i}.dtype, device=a{i}.device).copy_(a{i})")
    return lines


def results_source(outputs, single, pool=None):
    """Python of a partition call's results: o<k> for Program output k, a view of it, a<i> for
    input i passed through, None; one value or a tuple. A view's offset counts from its
    base's start, in the block where the base is pooled."""
    def one(r):
        if r[0] == "view":
            m = r[2]
            at = f" + _pool_at{r[1]}" if pool and r[1] in pool.offsets else ""
            return (f"o{r[1]}.as_strided({tuple(m.shape)}, {tuple(m.stride())}, "
                    f"{m.storage_offset()}{at})")
        return f"o{r[1]}" if r[0] == "prog" else f"a{r[1]}" if r[0] == "input" else "None"
    results = [one(r) for r in outputs]
    return results[0] if single else "(" + "".join(f"{x}, " for x in results) + ")"
