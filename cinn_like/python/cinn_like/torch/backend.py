"""cinn_like_backend: the torch.compile backend. AOTAutograd traces the forward and backward
graphs in core aten (after decomposition); each is partitioned, each maximal supported
partition becomes a compiled Program run in place of its nodes, the rest runs in PyTorch. A
partition that fails to compile gives back only the op at fault (isolate.py). Allow and deny
lists and strict mode (policy.py) come from set_options, torch.compile's `options` and the
environment.
"""
import contextlib
import functools
import time

import torch
from functorch.compile import make_boxed_func, min_cut_rematerialization_partition
from torch._dynamo.backends.common import aot_autograd
from torch.fx.passes.utils.fuser_utils import fuse_as_graphmodule

from .. import _lib
from . import (allocator, cache, cudagraph, isolate, owned_args, plan_body, plan_cache, policy,
               recompute_constants, sdpa_dropout, seeds, sizes, symbolic, write_back)
from .kernel import CinnLikeKernel, build_program, compile_partition, make_kernel
from .ops import attention
from .partition import (KEEP_OUTPUT_ALIASES, SAVED_FROM, SAVED_LAST_READ, CinnLikeSupport, propose,
                        saved_only, splice)
from .registry import val


def _target(nodes, cpu_target):
    """The target of a partition: cuda for CUDA tensors, else `cpu_target` (the policy's)."""
    for n in nodes:
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            return "cuda" if v.device.type == "cuda" else cpu_target
    return cpu_target


def _pooled(nodes, outputs, saved):
    """The positions of a partition's `outputs` that are only saved for the backward or written
    back into inputs (`saved`: node -> the rank of its last read in the backward, or -1), and
    read by no node outside the partition but the graph's output and the write-back (an op left
    to PyTorch could return a view of one, which would keep its block alive): the kernel
    allocates them in blocks by that rank (kernel.OutputPool). Returns {position: rank}."""
    inside = set(nodes)
    return {i: saved[n] for i, n in enumerate(outputs) if n in saved and all(
        u in inside or u.op == "output" or write_back.is_write_back(u) for u in n.users)}


def _partitions_that_compile(gm, support, saved):
    """Proposes the supported partitions of gm and compiles each; a partition that fails has
    its op at fault found (isolate.find_culprit) and refused, and the partitions are proposed
    anew, until every one compiles. Returns, per partition, (its nodes in topological order, its
    inputs, its outputs, its kernel); `saved`: the nodes only saved for the backward or written
    back into inputs, with their ranks (_pooled's)."""
    first = True
    while True:
        sorted_nodes = propose(gm, support)
        fused = _compile_ahead(gm, sorted_nodes, support.rules.cpu_target) if first else {}
        first = False
        refused = False
        pieces = []
        for i, nodes in enumerate(sorted_nodes):
            made = []  # what the last compile made: the partition's, when it compiles

            def compile_fn(trial, target=_target(nodes, support.rules.cpu_target), made=made,
                           nodes=nodes):
                sub, inputs, outputs = trial
                pooled = _pooled(nodes, outputs, saved)
                made[:] = [inputs, outputs, _compile_sub(sub, target, pooled)]
                return made[2]

            error = isolate.try_compile(gm, nodes, compile_fn, fused.get(i))
            if error is None:
                pieces.append((nodes, *made))
                continue
            cache.count("compile_failures")
            culprit, error = isolate.find_culprit(gm, nodes, compile_fn, error)
            support.refuse(culprit, f"failed to compile: {error}")
            refused = True
        if not refused:
            return pieces


def _compile_ahead(gm, sorted_nodes, cpu_target):
    """With several partitions, their Programs compiled at once (cache.prefetch), so that the
    loop that checks each partition finds its Module made. Returns the partitions' modules by
    index (fuse_as_graphmodule's (submodule, inputs, outputs)), for that loop to use rather than
    make again; a partition that cannot be converted is left to the loop, which reports it op
    by op."""
    if len(sorted_nodes) < 2:
        return {}
    subs, jobs = {}, []
    for i, nodes in enumerate(sorted_nodes):
        try:
            subs[i] = fuse_as_graphmodule(gm, nodes, "cinn_like_trial")
            sub = subs[i][0]
            b, _, _, n = build_program(sub)
            target = _target(nodes, cpu_target)
            # A worker thread has no CUDA context: it would load modules on device 0.
            if n and (target != "cuda" or torch.cuda.current_device() == 0):
                jobs.append((b.to_json(), target))
        except Exception:  # noqa: BLE001
            continue
    if len(jobs) > 1 and any(t == "cuda" for _, t in jobs):
        allocator.install()
    cache.prefetch(jobs)
    return subs


def _compile_sub(sub, target, pooled=()):
    if target == "cuda":
        allocator.install()
    return compile_partition(sub, target, pooled)


def compile_graph(gm, example_inputs, options=None, owns_args=False):
    """Partitions an aten GraphModule and compiles its supported partitions (fw and bw); an op
    the compiler fails on runs in PyTorch, the rest of its partition still compiles. `options`:
    torch.compile's options dict (policy.py), resolved now with set_options and the
    environment; in strict mode a fallback raises policy.FallbackError naming every one. With
    `owns_args` (a backward: AOTAutograd hands over its arguments) the compiled graph frees
    each argument after its last use (owned_args.py), except in the CUDA-graph mode."""
    start = time.perf_counter()
    try:
        return _compile_graph(gm, policy.resolve(options), owns_args)
    finally:
        cache.count("compile_seconds", time.perf_counter() - start)


@contextlib.contextmanager
def _lazy_graph_modules():
    """A context in which a new GraphModule generates its Python code only when first called
    (PyTorch's lazy GraphModule, private: without it, or where PyTorch was told to skip lazy
    modules, a no-op). The trial fusion makes a submodule per partition that is converted to a
    Program, never called: generating their code was over half of a warm start's Python time
    (vit_b_16 here: 0.29 s, 0.08 s with them lazy, before graph plans). fuse_as_graphmodule
    makes its submodules with the GraphModule class of torch.fx.passes.utils.common: swapped for
    the lazy one while the context lasts. Code that makes GraphModules meanwhile on another
    thread gets lazy ones too, which behave the same."""
    try:
        from torch.fx import _lazy_graph_module as lazy  # noqa: PLC0415
        from torch.fx.passes.utils import common  # noqa: PLC0415
        available = not getattr(lazy, "_force_skip_lazy_graph_module_flag", False)
    except ImportError:
        available = False
    if not available:
        yield
        return
    lifted = getattr(common, "GraphModule", None)
    swap = lifted is torch.fx.GraphModule
    if swap:
        common.GraphModule = lazy._LazyGraphModule
    try:
        with lazy._use_lazy_graph_module(True):
            yield
    finally:
        if swap:
            common.GraphModule = lifted


def _compile_graph(gm, rules, owns_args=False):
    with _lazy_graph_modules():
        return _compile_fused_graph(gm, rules, owns_args)


def _compile_fused_graph(gm, rules, owns_args):
    cache.count("graphs")
    seeds.add_seeds(gm)
    write_back.group_input_copies(gm)
    symbolic.specialize_non_polynomial(gm)
    key = plan_cache.graph_key(gm, rules)
    saved = {n: -1 for n in write_back.copied_only(gm)} | saved_only(gm)
    with plan_cache.locked(key):  # another process compiling the graph: its plan taken after
        plan = plan_cache.load(key)
        planned = _splice_plan(gm, plan, rules.cpu_target, saved) if plan is not None else None
        if planned is not None:
            fused, pieces = planned
        else:
            pieces = _compile_partitions(gm, rules, key, saved)
            fused = splice(gm, pieces)
    for nodes, _, _, _ in pieces:
        cache.count("partitions")
        cache.count("ops_compiled", sum(1 for n in nodes if n.op == "call_function"))
    owned = owns_args and not rules.cudagraphs
    if owned:
        owned_args.own_args(fused, {k.call: k for *_, k in pieces})
    fused.recompile()
    if hasattr(fused, "real_recompile"):  # a lazy GraphModule: generate its forward now
        fused.real_recompile()
    # The generated forward itself: calling the GraphModule would add nn.Module.__call__ and
    # fx's call_wrapped, a few microseconds per call on every graph.
    forward = fused.forward
    if owned:
        return owned_args.boxed(forward)
    if rules.cudagraphs:
        forward = cudagraph.wrap(fused, forward)
    boxed = make_boxed_func(forward)
    boxed.unboxed = forward  # what cinn_like_backend returns where AOT's wrapper is a no-op
    return boxed


def _compile_partitions(gm, rules, key, saved):
    """The pieces (partition.splice's) of gm found and compiled; their plan is stored under
    `key` (None: not cached)."""
    reported = len(cache.fallback_report())
    support = CinnLikeSupport(rules)
    pieces = _partitions_that_compile(gm, support, saved)
    unexpected = support.unexpected_fallbacks()
    if rules.strict and unexpected:
        raise policy.strict_error(unexpected)
    fallbacks = len(support.fallbacks())
    cache.count("ops_fallback", fallbacks)
    # A plan is kept only where every partition compiled at the first try: a failure may be
    # this moment's (no memory), and a plan would make later processes keep its op in PyTorch.
    if key is not None and not support.refused and all(
            isinstance(k, CinnLikeKernel) and hasattr(k, "program") for *_, k in pieces):
        plan_cache.store(key, plan_body.encode(
            gm, pieces, cache.fallback_report()[reported:], fallbacks,
            lambda nodes: _target(nodes, rules.cpu_target)))
    return pieces


def _splice_plan(gm, plan, cpu_target, saved):
    """(gm with the kernels of its stored plan spliced in, the pieces), their Modules from the
    compile cache; the plan's fallbacks reported and counted as a compile would. None where the
    plan does not fit gm (plan_body checks every field against gm and the Modules: a partition's
    inputs may have other metadata now, or the plan was changed and signed again), a kernel
    cannot be made or the pieces cannot be spliced (gm is then as it was): counted as
    plan_stale, and gm is compiled as if there were no plan, its plan stored anew."""
    try:
        fallbacks, ops_fallback = plan_body.fallbacks(plan)
        pieces = []
        for body, inputs, outputs, p in plan_body.partitions(
                gm, plan, lambda nodes: _target(nodes, cpu_target)):
            results = plan_body.results(p, body, inputs, outputs)
            if p["target"] == "cuda":
                allocator.install()
            module = cache.get_module(p["program"], p["target"])
            metas = [val(n) for n in inputs]
            plan_body.check_signature(module, metas, results, p["num_prog_outputs"])
            # The kernel writes its call from these fields (call_source.py): a plan holds
            # no code.
            kernel = make_kernel(module, metas, results, p["num_prog_outputs"],
                                 len(outputs) == 1, _pooled(body, outputs, saved))
            pieces.append((body, inputs, outputs, kernel))
        # Raises where the partitions reach each other through nodes outside them.
        fused = splice(gm, pieces)
    except Exception as e:  # noqa: BLE001 (any failure: compile as without the plan)
        cache.log.warning("cinn_like.torch: a stored plan does not fit its graph (%s: %s): "
                          "compiling it", type(e).__name__, e)
        cache.count("plan_stale")
        return None
    # Strict mode is part of the key, and a strict compile with a fallback it objects to raises
    # before its plan is stored: a plan's fallbacks are never strict mode's to raise on.
    for op, reason in fallbacks:
        cache.record_fallback(op, reason)
    cache.count("ops_fallback", ops_fallback)
    cache.count("plan_hits")
    return fused, pieces


def _aot_wrapper_passes_through(fgm, num_inputs):
    """Whether AOTAutograd's runtime wrappers around inference graph `fgm` would only pass its
    arguments and results through (its metadata, from the tracing context): no input written,
    every output a fresh tensor (none an input, a view of one or of another output), no effect
    tokens, RNG state or grad-mode change, no tensor subclass, no deduplicated or merged inputs
    (the graph takes what Dynamo passes), autocast off, grad off or no input requiring it.
    Then the graph's own forward can be what Dynamo calls: the wrappers cost about 20 us per
    call on the H100 host."""
    try:
        from torch._functorch._aot_autograd.schemas import (  # noqa: PLC0415
            OutputType, SubclassCreationMeta)
        from torch._guards import TracingContext  # noqa: PLC0415
        context = TracingContext.try_get()
        meta = context.fw_metadata if context is not None else None
    except ImportError:
        return False
    any_autocast = getattr(torch._C, "_is_any_autocast_enabled", torch.is_autocast_enabled)
    if meta is None or any_autocast():
        return False
    # AOT takes the inference graph also where inputs require grad but no output does; its
    # wrapper then runs the graph with grad off, which a direct call would not.
    if torch.is_grad_enabled() and any(i.requires_grad for i in meta.input_info):
        return False
    placeholders = sum(1 for n in fgm.graph.nodes if n.op == "placeholder")
    return (placeholders == num_inputs
            and not any(i.mutates_data or i.mutates_metadata for i in meta.input_info)
            and all(o.output_type == OutputType.non_alias for o in meta.output_info)
            and not meta.num_intermediate_bases
            and not meta.tokens
            and getattr(meta, "grad_enabled_mutation", None) is None
            and not getattr(meta, "num_graphsafe_rng_states", 0)
            and not getattr(meta, "is_rng_op_functionalized", False)
            and not any(isinstance(m, SubclassCreationMeta)
                        for m in [*(meta.subclass_inp_meta or []),
                                  *(meta.subclass_fw_graph_out_meta or [])]))


@functools.lru_cache(maxsize=None)
def _decompositions(batch_norm_written_out=False):
    try:
        from torch._decomp import core_aten_decompositions  # noqa: PLC0415
        table = core_aten_decompositions()
    except ImportError:  # older PyTorch
        from torch._inductor.decomposition import select_decomp_table  # noqa: PLC0415
        table = select_decomp_table()
    # Scaled dot-product attention stays whole: it becomes the fused attention op.
    for op in attention.KEEP_WHOLE:
        table.pop(op, None)
    # log_softmax written out (x - max - log(sum(exp(x - max)))), as Inductor has it: the
    # partitioner then saves the row statistics and the backward recomputes the rest from the
    # logits, where the whole op is saved whole (a language model's loss: [tokens, vocabulary],
    # 206 MB for GPT-2's training batch, written by the forward and read by the backward).
    from torch._decomp import decomposition_table  # noqa: PLC0415
    log_softmax = torch.ops.aten._log_softmax.default
    table[log_softmax] = decomposition_table[log_softmax]
    # BatchNorm in training written out (var_mean, then elementwise), as Inductor has it: the
    # partitioner then saves a convolution's output and the statistics, and the backward
    # recomputes the normalized values and the ReLU after them, where the whole op is saved
    # whole with what follows it (regnet_y_400mf: 30 MiB more saved, 16 ReLU outputs). Not
    # over a symbolic batch: the running variance's n / (n - 1) would be a symbolic float,
    # which no cinn_like op reads; the whole op falls back with that reason instead.
    if batch_norm_written_out:
        aten = torch.ops.aten
        for op in (aten._native_batch_norm_legit_functional.default,
                   aten.native_batch_norm_backward.default):
            if op in decomposition_table:
                table[op] = decomposition_table[op]
    return table


def _partition_marking_saved(joint, joint_inputs, **kwargs):
    """Inductor's min-cut partitioner (it saves for the backward only what is cheaper to keep
    than to recompute), then the saved values no input reaches computed again in the backward
    (recompute_constants.py: an attention mask made from positions is then a constant the
    backward's compile sees); the forward it returns is marked with where its saved values begin
    (partition.SAVED_FROM: after the forward's own num_fwd_outputs outputs) and when the
    backward reads each for the last time (partition.SAVED_LAST_READ)."""
    fw, bw = min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)
    if "num_fwd_outputs" in kwargs:
        recompute_constants.recompute_input_free(fw, bw, kwargs["num_fwd_outputs"])
        fw.meta[SAVED_FROM] = kwargs["num_fwd_outputs"]
        fw.meta[SAVED_LAST_READ] = _last_reads(bw)
    return fw, bw


def _last_reads(bw):
    """Per placeholder of the backward `bw` (by name: the partitioner names a saved value in both
    graphs alike), the position among bw's nodes of its last user."""
    position = {n: i for i, n in enumerate(bw.graph.nodes)}
    return {p.name: max((position[u] for u in p.users), default=0)
            for p in bw.graph.nodes if p.op == "placeholder"}


# torch.compile's modes: those that ask Inductor for CUDA graphs ask cinn_like for them.
_CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")
_MODES = (None, "default", "max-autotune-no-cudagraphs") + _CUDAGRAPH_MODES


def cinn_like_backend(gm, example_inputs, options=None, mode=None, **kwargs):
    """torch.compile(model, backend=cinn_like_backend) or backend="cinn_like"; torch.compile's
    `options` dict takes the keys of set_options (allow, deny, strict, cudagraphs, cpu_target,
    emulate_precision_casts: policy.py)
    and holds for both graphs of this compile; mode="reduce-overhead" means cudagraphs=True."""
    if mode not in _MODES:
        raise ValueError(f"torch.compile(..., mode={mode!r}): cinn_like knows the modes "
                         f"{', '.join(m for m in _MODES if m)}")
    if mode in _CUDAGRAPH_MODES:
        options = dict(options or {}, cudagraphs=True)
    policy.check_options(options, "torch.compile(..., options=)")
    if any(isinstance(x, torch.Tensor) and x.is_cuda for x in example_inputs):
        # cuBLASLt, cuDNN and NVRTC load on a thread of their own while AOTAutograd traces.
        _lib.lib.cinn_like_warm_up(b"cuda")
    sdpa_dropout.write_out(gm)  # attention with dropout: cinn_like's op, before AOTAutograd
    compile_fn = functools.partial(compile_graph, options=options)
    backward_fn = functools.partial(compile_graph, options=options, owns_args=True)
    direct = []  # the inference forward, when AOTAutograd's wrappers would only pass through
    # The closures below outlive this call (AOTAutograd keeps them with the compiled graph):
    # they must not hold Dynamo's example inputs, real tensors of the first call (GPT-2's
    # logits kept 196 MiB alive between training steps).
    num_inputs = len(example_inputs)

    def inference(fgm, inputs):
        fgm.meta[KEEP_OUTPUT_ALIASES] = True  # its outputs reach the caller as they are
        compiled = compile_graph(fgm, inputs, options)
        if _aot_wrapper_passes_through(fgm, num_inputs):
            direct.append(compiled.unboxed)
        return compiled

    # The min-cut partitioner (Inductor's) saves for the backward only what is cheaper to keep
    # than to recompute: elementwise ops between saved values are recomputed in the backward's
    # fusion groups instead of written and read back (peak memory as Inductor's).
    # Writes to inputs (BatchNorm's running statistics) stay in the graph, written back by one
    # call (write_back.py), except in the CUDA-graph mode, whose graph must not write its
    # inputs (AOTAutograd's wrapper then writes them back after the replay).
    static = not any(isinstance(x, torch.SymInt) or
                     (isinstance(x, torch.Tensor) and sizes.is_symbolic(x))
                     for x in example_inputs)
    aot = aot_autograd(fw_compiler=compile_fn, bw_compiler=backward_fn,
                       inference_compiler=inference,
                       decompositions=_decompositions(batch_norm_written_out=static),
                       partition_fn=_partition_marking_saved,
                       keep_inference_input_mutations=not policy.resolve(options).cudagraphs)
    wrapped = aot(gm, example_inputs, **kwargs)
    plain = all(type(x) in (torch.Tensor, torch.nn.Parameter) or not isinstance(x, torch.Tensor)
                for x in example_inputs)
    if direct and plain:
        cache.count("direct_inference_graphs")
        return direct[0]
    return wrapped
