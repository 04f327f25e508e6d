"""Partitioning an aten graph: which nodes cinn_like runs, and the maximal supported partitions.

A node is supported when its op is in registry.CONVERTERS and its converter accepts it on a
scratch Converter (attributes, dtypes, ranks; what it wrote stays in the node's metadata, so
the kernel builder does not convert it again), every tensor it reads and makes has metadata
and a supported dtype, and all of them live on one CPU or CUDA device, its symbolic sizes (if
any) are polynomials and its converter never asks for their values (symbolic.py), and the allow
and deny lists (policy.py) do not keep it away. Everything else runs in PyTorch; each refusal is recorded
(cache.record_fallback) with its reason.
"""
import operator

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner, Partition
from torch.fx.passes.operator_support import OperatorSupport
from torch.fx.passes.utils.fuser_utils import topo_sort

from . import cache, policy, seeds, write_back
from . import ops  # noqa: F401 (registers the converters)
from .registry import DENSE_VIEWS, DTYPES, Unsupported, convert_alone, pshape, val
from .sizes import no_new_guards


def _tensor_values(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for t in v if isinstance(t, torch.Tensor)]
    return []


def _check_values(node):
    """The node's input and output tensors: metadata, dtype, device; returns the device."""
    devices = set()
    # Meta-device outputs hold no data (the flash attention's random-number state): a converter
    # that is asked for one refuses.
    outs = [t for t in _tensor_values(val(node)) if t.device.type != "meta"]
    if not outs:
        raise Unsupported("produces no tensor")
    ins = [a for a in node.all_input_nodes]
    for t in outs + [val(a) for a in ins]:
        for x in _tensor_values(t):
            if x.dtype not in DTYPES:
                raise Unsupported(f"dtype {x.dtype} is not supported by cinn_like")
            if x.device.type not in ("cpu", "cuda"):
                raise Unsupported(f"device {x.device} is not supported")
            devices.add(x.device)
    sizes = [a for a in ins if isinstance(val(a), torch.SymInt)]
    for a in ins:
        if not isinstance(val(a), (torch.Tensor, torch.SymInt)):
            raise Unsupported("reads a non-tensor value")
    if len(devices) != 1:
        raise Unsupported(f"tensors on several devices {sorted(map(str, devices))}")
    for t in outs + [val(a) for a in ins if a not in sizes]:
        pshape(t)  # Unsupported where a symbolic size is no polynomial
    return devices.pop()


def _is_scalar(node):
    """Whether node is size arithmetic: Python's operators or aten's sym_* ops on sizes (s0 *
    s1, x.size(0)), not a tensor op (`.item()` is one: it falls back like any other)."""
    v = node.meta.get("val")
    if not isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)):
        return False
    name = getattr(node.target, "__name__", "")
    return getattr(node.target, "__module__", None) in ("_operator", "operator", "math") or \
        name.startswith("sym_")


def op_name(node):
    t = node.target
    return getattr(t, "__name__", str(t)) if node.op == "call_function" else node.op


def check_node(node, round_each_op=False):
    """None when cinn_like can run `node` (a getitem excepted: see CinnLikeSupport), else the
    reason it cannot. `round_each_op`: the policy's emulate_precision_casts (registry.py)."""
    try:
        _check_values(node)
        with no_new_guards(node):
            convert_alone(node, round_each_op)
        return None
    except Unsupported as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 (a converter surprised by an argument)
        return f"{type(e).__name__}: {e}"


def _is_view(node):
    """Whether node is an aten view op (its result shares its first argument's storage), or a
    getitem of one (split, unbind)."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return isinstance(node.args[0], torch.fx.Node) and _is_view(node.args[0])
    return bool(getattr(node.target, "is_view", False))


def _view_source(node):
    return node.args[0].args[0] if node.target is operator.getitem else node.args[0]


# Set in an inference graph's GraphModule.meta by the backend: there every output of the kernel
# reaches the caller as it is. (In a training forward only those before SAVED_FROM do, through
# AOTAutograd's autograd wrapper, and its saved activations may be views of one base without
# anyone seeing it.)
KEEP_OUTPUT_ALIASES = "cinn_like_keep_output_aliases"


# Set in a training forward's GraphModule.meta by the backend (its partition_fn): the position
# of the first output AOTAutograd's partitioner returns only to be saved for the backward.
SAVED_FROM = "cinn_like_saved_from"
# Beside it: per saved value's name, the position in the backward of its last read.
SAVED_LAST_READ = "cinn_like_saved_last_read"


def saved_only(gm):
    """The nodes a training forward returns only to be saved for its backward (SAVED_FROM): at
    no position of the output before the saved ones, each with the rank of its last read in the
    backward (SAVED_LAST_READ; 0 where unknown). AOTAutograd holds them until the backward
    reads them: their kernels may allocate them together, in blocks by that rank
    (kernel.OutputPool). Returns {node: rank}."""
    start = gm.meta.get(SAVED_FROM)
    last_read = gm.meta.get(SAVED_LAST_READ, {})
    out = next((n for n in reversed(gm.graph.nodes) if n.op == "output"), None)
    if start is None or out is None or not isinstance(out.args[0], (list, tuple)):
        return {}
    first = {}
    for i, a in enumerate(out.args[0]):
        if isinstance(a, torch.fx.Node):
            first.setdefault(a, i)
    return {n: last_read.get(n.name, 0) for n, i in first.items()
            if i >= start and n.op == "call_function"}


def _outputs_to_the_caller(graph):
    """The output nodes of `graph` that reach the caller as the graph returns them: all of an
    inference graph's (KEEP_OUTPUT_ALIASES); a training forward's (SAVED_FROM) before its saved
    activations, where AOTAutograd returns outputs that alias each other through one
    multi-output view (`y.unbind(0)`, `y.chunk(2)`) as the graph returns them (its
    "unsafe_view_alias" outputs), not made again from their base as it does other views; none
    of a backward's."""
    out = next((n for n in graph.nodes if n.op == "output"), None)
    meta = getattr(graph.owning_module, "meta", {})
    if out is None:
        return []
    if meta.get(KEEP_OUTPUT_ALIASES):
        return out.all_input_nodes
    start = meta.get(SAVED_FROM)
    if start is None or not isinstance(out.args[0], (list, tuple)):
        return []
    return list(dict.fromkeys(a for a in out.args[0][:start] if isinstance(a, torch.fx.Node)))


def aliased_output_views(graph):
    """The view nodes that PyTorch must run so that outputs which share storage in eager share
    it here too (`return y, y[1:]`, `return y.unbind(0)`): the views on the way from each output
    to the value it is a view of (its base), a multi-output view's getitem with the view op
    itself, for every base that is computed in the graph and that two or more outputs (the base
    itself among them) reach through views. A kernel would write each output to a buffer of its
    own. Outputs that are views of inputs are left alone: AOTAutograd makes those views again
    from the inputs. Only the outputs _outputs_to_the_caller names count."""
    by_base = {}
    for o in _outputs_to_the_caller(graph):
        chain, n = [], o
        while _is_view(n) and isinstance(_view_source(n), torch.fx.Node):
            chain.append(n)
            if n.target is operator.getitem:  # split's or unbind's: the op runs in PyTorch too
                chain.append(n.args[0])
            n = _view_source(n)
        if n.op == "placeholder":
            continue
        by_base.setdefault(n, []).append(chain)
    return {v for chains in by_base.values() if len(chains) >= 2 for c in chains for v in c}


class CinnLikeSupport(OperatorSupport):
    def __init__(self, rules=policy.Policy()):
        super().__init__()
        self.rules = rules
        self.verdicts = {}
        self.chosen = set()  # the nodes the allow and deny lists keep in PyTorch
        self.scalars = set()  # size arithmetic (s0 * s1): Python's work, not a fallback
        # seeds.philox_seed (PyTorch's generator draws it) and write_back.copy_inputs (inputs
        # written back): PyTorch's own work, not fallbacks.
        self.pytorch_work = set()
        # Views that outputs share storage through (aliased_output_views): PyTorch's, not a
        # fallback.
        self.views = {}
        self.refused = False  # whether refuse() kept an op that failed to compile in PyTorch

    def verdict(self, node):
        """None when supported, else the reason; each node is checked (converted) once. A
        getitem is supported with its producer."""
        if node.op != "call_function":
            return f"{node.op} node"
        if node not in self.verdicts:
            if _is_scalar(node):  # size arithmetic on SymInts: Python's, no fallback
                self.scalars.add(node)
                reason = "a Python scalar (size arithmetic)"
            elif node in self._aliased_views(node.graph):
                reason = "a view that outputs share storage through: PyTorch makes it"
            elif node.target is seeds.philox_seed:  # PyTorch's generator, no fallback
                self.pytorch_work.add(node)
                reason = "the random ops' seed, drawn from PyTorch's generator"
            elif write_back.is_write_back(node):
                self.pytorch_work.add(node)
                reason = "inputs written back (one _foreach_copy_ per dtype)"
            elif node.target == operator.getitem:
                v = node.meta.get("val")
                reason = ("getitem of a non-tensor" if not isinstance(v, torch.Tensor)
                          else self.verdict(node.args[0]))
            else:
                reason = self.rules.refusal(node)
                if reason is not None:
                    self.chosen.add(node)
                else:
                    reason = check_node(node, self.rules.emulate_precision_casts)
                if reason is not None:
                    cache.record_fallback(op_name(node), reason)
            self.verdicts[node] = reason
        return self.verdicts[node]

    def _aliased_views(self, graph):
        if graph not in self.views:
            self.views[graph] = aliased_output_views(graph)
        return self.views[graph]

    def kept_views(self):
        """The view nodes kept in PyTorch so that outputs alias as in eager."""
        return set().union(*self.views.values()) if self.views else set()

    def refuse(self, node, reason):
        """Marks a supported op (and its getitems) as running in PyTorch for `reason`."""
        self.verdicts[node] = reason
        self.refused = True
        cache.record_fallback(op_name(node), reason)
        for u in node.users:
            if u.target is operator.getitem:
                self.verdicts[u] = reason

    def is_node_supported(self, submodules, node):
        return self.verdict(node) is None

    def fallbacks(self):
        """The op nodes (getitems aside: they follow their op) that run in PyTorch."""
        views = self.kept_views()
        return [n for n, r in self.verdicts.items()
                if r is not None and n.target is not operator.getitem and n not in self.scalars
                and n not in self.pytorch_work and n not in views]

    def unexpected_fallbacks(self):
        """[(op, reason)] of the fallbacks the allow and deny lists did not ask for: what strict
        mode raises on."""
        return [(op_name(n), self.verdicts[n]) for n in self.fallbacks() if n not in self.chosen]


# A partition of views alone copies data and saves nothing: it is left to PyTorch.
_PURE_VIEWS = DENSE_VIEWS | {torch.ops.aten.expand.default, torch.ops.aten.slice.Tensor,
                             torch.ops.aten.select.int, torch.ops.aten.reshape.default,
                             operator.getitem}


def propose(gm, support):
    """The maximal supported partitions of gm ([their nodes in topological order]) under the
    verdicts of `support`."""
    # The random ops' seeds run in PyTorch before everything they feed, the write-back after
    # everything: neither is a reason to split.
    ops = [n for n in gm.graph.nodes if n.op == "call_function"
           and n.target is not seeds.philox_seed and not write_back.is_write_back(n)]
    other_calls = any(n.op in ("call_method", "call_module") for n in gm.graph.nodes)
    if ops and not other_calls and all(support.is_node_supported(None, n) for n in ops):
        # Every op runs in cinn_like: one partition, without the partitioner's merging (its
        # time grows faster than the graph: 0.25 s of a warm start on GPT-2's 748 ops).
        proposed = [Partition(id=0, nodes=ops)]
    else:
        partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
        proposed = partitioner.propose_partitions()
    parts = [p for p in proposed if not all(n.target in _PURE_VIEWS for n in p.nodes)]
    return [piece for p in parts for piece in _by_device(topo_sort(list(p.nodes)))]


def _device_of(node):
    while node.target is operator.getitem:
        node = node.args[0]
    return _check_values(node)


def _by_device(nodes):
    """A partition's nodes split by the one device each runs on. The partitioner merges nodes
    that do not reach each other (torchvision's swin_t builds a mask on the CPU beside CUDA
    work), and a kernel runs on one device: one piece per device, each in topological order.
    No node reads another device's tensor (_check_values), so the pieces share no edge, and
    none reaches another through nodes outside (the partition as a whole did not)."""
    pieces = {}
    for n in nodes:
        pieces.setdefault(_device_of(n), []).append(n)
    return list(pieces.values())


def splice(gm, pieces):
    """gm with each piece (nodes in topological order; inputs and outputs in the order
    fuse_as_graphmodule gives them; the kernel compiled for them) replaced by one call of the
    kernel's function, followed by a getitem per output where there are several; the kernel
    becomes gm's submodule fused_<i>. An input that an earlier piece's output was is read from
    what replaced it.

    gm gets a new graph: the nodes outside the pieces are copied into it, and each piece's call
    takes the place of the piece's last node. Nodes go in the old order, except that one whose
    inputs are not there yet (a user of a piece's output may precede the piece's last node)
    waits until they are: a stable topological sort, as fuse_partitions does. Building anew
    costs the nodes kept, not those replaced (a warm start replaces a thousand nodes or more).
    Pieces that reach each other through nodes outside them (a stored plan's, changed) raise
    AssertionError and leave gm as it was."""
    if not pieces:
        return gm
    old = gm.graph
    unit = {}  # a node of a piece -> the piece's index; other nodes are units of their own
    for i, (nodes, _, _, _) in enumerate(pieces):
        unit.update((n, i) for n in nodes)
    graph = torch.fx.Graph(owning_module=gm, tracer_cls=old._tracer_cls,
                           tracer_extras=old._tracer_extras)
    graph._codegen = old._codegen
    env = {}  # an old node kept, or a piece's output -> what stands for it in the new graph

    def inputs_of(u):
        if isinstance(u, int):
            return pieces[u][1]
        return u.all_input_nodes

    def emit(u):
        if not isinstance(u, int):
            env[u] = graph.node_copy(u, env.__getitem__)
            return
        _, inputs, outputs, kernel = pieces[u]
        call = graph.call_function(kernel.call, tuple(env[a] for a in inputs))
        if len(outputs) == 1:
            call.meta = dict(outputs[0].meta)
            env[outputs[0]] = call
            return
        call.meta["val"] = tuple(o.meta.get("val") for o in outputs)
        for k, o in enumerate(outputs):
            env[o] = graph.call_function(operator.getitem, (call, k))
            env[o].meta = dict(o.meta)

    last = {pieces[i][0][-1]: i for i in range(len(pieces))}
    done = set()
    waiting = {}  # a unit not emitted yet -> the units waiting for it
    for n in old.nodes:
        if n in unit and n not in last:
            continue
        todo = [last.get(n, n)]
        while todo:
            u = todo.pop()
            missing = [d for d in (unit.get(a, a) for a in inputs_of(u)) if d not in done]
            if missing:
                waiting.setdefault(missing[-1], []).append(u)
                continue
            emit(u)
            done.add(u)
            todo.extend(reversed(waiting.pop(u, ())))
    if waiting:
        raise AssertionError("splice: the pieces' dependencies form a cycle")
    for i, (_, _, _, kernel) in enumerate(pieces):
        setattr(gm, f"fused_{i}", kernel)  # the graph calls its function: kept alive here
    gm.graph = graph
    return gm
