"""A graph plan's body (plan_cache.py keeps it on disk): written from a compile's pieces, and read
back only where every field fits the graph it is loaded for. The checksum finds damage, not a
body changed and signed again (a bug, or whoever can write the cache's directory), so each field
is checked here before any of it is used, and a plan that does not fit raises PlanMismatch.

What is checked, against the graph and the compiled Module, never against the plan itself:
- its keys and JSON types, exactly (bools are not positions or counts);
- each partition's nodes: positions in range, each node in one partition only, call_function
  nodes in a topological order; its inputs and outputs are the ones those nodes have, in
  fuse_as_graphmodule's order (the order the Program's arguments were made in), and their
  metadata texts (`values`) are the graph's (a custom op's metadata function may have changed);
- its target is the one the backend gives those nodes;
- its results: one per output; a Program output ("prog") or a view of one ("view", its base the
  node the graph's views lead to, its metadata the graph's) numbered in the order
  kernel.build_program numbers them, so that the numbers cover exactly num_prog_outputs outputs;
  an input passed through ("input") of the output's metadata;
- the Module compiled from its Program takes exactly the arguments the kernel will pass (dtypes
  and shapes of every input and output), so no call can fail on them.
The Program's meaning is not checked (that would be converting the partition again, which is
what a plan saves): a Program that parses and has the right arguments is trusted as the compile
cache's machine code is, because of who can write the directory (docs/persistence.md, "What
the cache trusts"). The kernel's call is written from these fields (call_source.py), never read from
the plan.
"""
import functools
import operator

import torch
from torch.fx.passes.utils.fuser_utils import fuse_as_graphmodule

from .kernel import viewed_base
from .layout import memory_order, stored_shape
from .padded_output import padded_metas
from .plan_cache import value_text
from .registry import dtype_name, val

_PLAN_KEYS = {"fallbacks", "ops_fallback", "partitions"}  # the key: the store binds the record
_PARTITION_KEYS = {"nodes", "inputs", "outputs", "values", "target", "program", "results",
                   "num_prog_outputs"}


class PlanMismatch(ValueError):
    """A stored plan that does not fit the graph it was loaded for."""


def _require(ok, what):
    if not ok:
        raise PlanMismatch(what)


def encode(gm, pieces, fallbacks, ops_fallback, target_of):
    """The body of gm's plan (without its key): per piece (partition.splice's), its nodes,
    inputs and outputs as positions, their metadata, its target (`target_of(nodes)`), Program
    and result layout; the graph's fallbacks and their count."""
    position = {n: i for i, n in enumerate(gm.graph.nodes)}
    return {"fallbacks": fallbacks, "ops_fallback": ops_fallback,
            "partitions": [{"nodes": [position[n] for n in nodes],
                            "inputs": [position[n] for n in inputs],
                            "outputs": [position[n] for n in outputs],
                            "values": [value_text(val(n)) for n in inputs + outputs],
                            "target": target_of(nodes), "program": k.program,
                            "results": [_result_text(r) for r in k.outputs],
                            "num_prog_outputs": k.num_prog_outputs}
                           for nodes, inputs, outputs, k in pieces]}


def _result_text(r):
    """A kernel's result (kernel.build_program's) as JSON: its kind and index, and a view's
    base as (shape, strides, dtype)."""
    if r[0] != "view":
        return list(r[:2])
    base = r[3]
    return list(r[:2]) + [list(base.shape), list(base.stride()), str(base.dtype)]


def fallbacks(plan):
    """([(op, reason)], ops_fallback) of a plan, after its keys and their types are checked."""
    _require(isinstance(plan, dict) and set(plan) == _PLAN_KEYS, "the plan's keys")
    report, count = plan["fallbacks"], plan["ops_fallback"]
    _require(isinstance(report, list) and all(
        isinstance(f, list) and len(f) == 2 and all(type(s) is str for s in f) for f in report),
        "fallbacks: expected a list of [op, reason]")
    _require(type(count) is int and count >= 0, "ops_fallback: expected a count")
    return [tuple(f) for f in report], count


def partitions(gm, plan, target_of):
    """[(nodes, inputs, outputs, the partition's dict)] of the plan, each checked against gm."""
    nodes = list(gm.graph.nodes)
    parts = plan["partitions"]
    _require(isinstance(parts, list), "partitions: expected a list")
    taken = set()
    out = []
    for j, p in enumerate(parts):
        _require(isinstance(p, dict) and set(p) == _PARTITION_KEYS, f"partition {j}'s keys")
        body = _nodes(nodes, p["nodes"], f"partition {j} nodes")
        _require(body and not taken.intersection(body), f"partition {j}: no nodes, or another's")
        taken.update(body)
        inputs, outputs = _boundary(gm, body)
        _require(_nodes(nodes, p["inputs"], f"partition {j} inputs") == inputs
                 and _nodes(nodes, p["outputs"], f"partition {j} outputs") == outputs,
                 f"partition {j}: inputs or outputs are not its nodes'")
        _require(p["values"] == [value_text(val(n)) for n in inputs + outputs],
                 f"partition {j}: its inputs' or outputs' metadata changed")
        _require(p["target"] == target_of(body), f"partition {j}: another target")
        _require(type(p["program"]) is str, f"partition {j}: the Program is not text")
        out.append((body, inputs, outputs, p))
    return out


def _nodes(nodes, positions, what):
    """The nodes at `positions` (a JSON list of ints in range, each once)."""
    _require(isinstance(positions, list) and all(
        type(i) is int and 0 <= i < len(nodes) for i in positions)
        and len(set(positions)) == len(positions), f"{what}: expected positions in the graph")
    return [nodes[i] for i in positions]


def _boundary(gm, body):
    """(inputs, outputs) of the partition `body` as fuse_as_graphmodule gives them; body must be
    call_function nodes in a topological order."""
    members = set(body)
    inputs, seen = [], set()
    for k, n in enumerate(body):
        _require(n.op == "call_function", f"{n.name} is not an op")
        for a in n.all_input_nodes:
            if a in members:
                _require(a in seen, f"{n.name} comes before its input {a.name}")
            elif a not in inputs:
                inputs.append(a)
        seen.add(n)
    if inputs and _sorts_placeholder_inputs() and all(a.op == "placeholder" for a in inputs):
        order = {n: i for i, n in enumerate(gm.graph.nodes)}
        inputs.sort(key=order.__getitem__)
    outputs = [n for n in body if any(u not in members for u in n.users)]
    return inputs, outputs


@functools.lru_cache(maxsize=None)
def _sorts_placeholder_inputs():
    """Whether this PyTorch's fuse_as_graphmodule lists inputs that are all placeholders in the
    graph's order (newer versions) rather than in the order the partition reads them."""
    g = torch.fx.Graph()
    a, b = g.placeholder("a"), g.placeholder("b")
    g.output(g.call_function(operator.sub, (b, a)))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    _, inputs, _ = fuse_as_graphmodule(gm, [n for n in g.nodes if n.op == "call_function"],
                                       "cinn_like_probe")
    return list(inputs) == [a, b]


def results(p, body, inputs, outputs):
    """The kernel's results (kernel.build_program's form) of partition dict `p`, checked against
    the graph: kinds, Program output numbers in build_program's order, views' bases."""
    texts, count = p["results"], p["num_prog_outputs"]
    _require(isinstance(texts, list) and len(texts) == len(outputs), "one result per output")
    _require(type(count) is int and count >= 1, "num_prog_outputs: expected a count")
    members = set(body)
    made, numbered = [], 0
    for r, node in zip(texts, outputs):
        _require(isinstance(r, list) and len(r) >= 2 and type(r[1]) is int, f"result {r!r}")
        kind, k, meta = r[0], r[1], val(node)
        if kind == "input":
            _require(len(r) == 2 and 0 <= k < len(inputs)
                     and value_text(val(inputs[k])) == value_text(meta), f"result {r!r}")
            made.append(("input", k, None))
            continue
        # build_program numbers Program outputs as the results first use them.
        _require(kind in ("prog", "view") and 0 <= k <= numbered, f"result {r!r}")
        if k == numbered:
            numbered += 1
        base = viewed_base(node, members.__contains__)
        padded = padded_metas(node, members.__contains__) if kind == "view" else None
        if padded is not None and r[2:] == _result_text((kind, k, padded.view, padded.base))[2:]:
            made.append(("view", k, padded.view, padded.base))  # a padded product's rows
        elif kind == "prog":
            _require(len(r) == 2 and base is None, f"result {r!r}: not a Program output")
            made.append(("prog", k, meta))
        else:
            _require(base is not None and r[2:] == _result_text((kind, k, meta, val(base)))[2:],
                     f"result {r!r}: not a view of a Program output")
            made.append(("view", k, meta, val(base)))
    _require(numbered == count, "num_prog_outputs: not the results' Program outputs")
    return made


def check_signature(module, inputs, made, count):
    """Raises PlanMismatch unless `module` takes what a kernel of these inputs (metas) and
    results passes it: each input, then each Program output, of its dtype and shape in memory
    order (a rank-0 tensor is passed as one element)."""
    outs = [None] * count
    for r in made:
        if r[0] != "input" and outs[r[1]] is None:
            outs[r[1]] = r[2] if r[0] == "prog" else r[3]
    want = [_spec(m) for m in inputs] + [_spec(m) for m in outs]
    sig = module.signature
    got = [(a["dtype"], tuple(a["shape"]) or (1,)) for a in sig["inputs"] + sig["outputs"]]
    _require(len(sig["inputs"]) == len(inputs) and got == want,
             "the Program's arguments are not the partition's")


def _spec(meta):
    shape = stored_shape(tuple(meta.shape), memory_order(meta))
    return dtype_name(meta.dtype), tuple(shape) or (1,)
