"""A structure-aware mutator of the torch backend's graph plans (cinn_like/torch/plan_cache.py):
it changes one field of a real plan's body the way a bug or a forger with write access to the
cache could (positions out of range or swapped, result kinds and indices, counts off by one,
metadata texts, Program JSON, bytecode, wrong JSON types, missing keys) and writes the file
signed again (its header's SHA-256 recomputed), so that it passes the loader's checksum and
reaches the checks behind it.

Each mutation says what the backend must do with it: "reject" (the plan is not used: the
graph compiles as without it) or "either" (the plan may be used, as it still describes a correct
run: its partitions listed in another order, say, or one partition left to PyTorch).
"""
import base64
import copy
import json
import marshal
import os

from cinn_like import store

_PARTITION_KEYS = ("nodes", "inputs", "outputs", "values", "target", "program", "results",
                   "num_prog_outputs")
_OTHER_TYPES = (None, True, 1.5, "x", [], {}, [[]], -1)


def _where(path):
    """(the store's directory, the plan's key) of the plan file at `path` (<dir>/<key>.clp)."""
    directory, name = os.path.split(path)
    return directory, name[:-len(".clp")]


def read(path):
    """The body (a dict) of the plan file at `path`."""
    directory, key = _where(path)
    got = store.get(directory, "plan", key)
    if isinstance(got, store.Miss):
        raise ValueError(f"no plan at {path}: {got.why}")
    return json.loads(got)


def write(path, body):
    """Writes `body` (a dict) at `path` as a record that checks."""
    directory, key = _where(path)
    store.put(directory, "plan", key, json.dumps(body, separators=(",", ":")).encode())


def mutate(plan, graph_size, rng):
    """A mutated copy of `plan` (a dict), what was done (text) and what the backend must do
    ("reject" or "either"). `graph_size`: the number of nodes of the plan's graph; `rng`: a
    random.Random."""
    plan = copy.deepcopy(plan)
    kind = rng.choice(sorted(_MUTATIONS))
    what, expect = _MUTATIONS[kind](plan, graph_size, rng)
    return plan, f"{kind}: {what}", expect


def _partition(plan, rng):
    i = rng.randrange(len(plan["partitions"]))
    return i, plan["partitions"][i]


def _positions(plan, n, rng):
    i, p = _partition(plan, rng)
    field = rng.choice(("nodes", "inputs", "outputs"))
    items = p[field]
    k = rng.randrange(len(items))
    how = rng.choice(("past the end", "negative", "another node", "duplicated", "dropped",
                      "swapped", "bool", "float", "text"))
    if how == "swapped" and len(items) < 2:
        how = "another node"
    if how == "past the end":
        items[k] = n + rng.randrange(3)
    elif how == "negative":
        items[k] = -1 - rng.randrange(n)
    elif how == "another node":
        items[k] = rng.choice([x for x in range(n) if x != items[k]])
    elif how == "duplicated":
        items.insert(rng.randrange(len(items) + 1), items[k])
    elif how == "dropped":
        items.pop(k)
    elif how == "swapped":
        j = rng.choice([x for x in range(len(items)) if x != k])
        items[k], items[j] = items[j], items[k]
        # Two body nodes may swap and stay a topological order with the same boundary.
        return f"partition {i} {field}[{k}] <-> [{j}]", "either" if field == "nodes" else "reject"
    elif how == "bool":  # JSON's true: position 1 to a reader that does not look closer
        old, items[k] = items[k], True
        return f"partition {i} {field}[{k}] {old} -> true", "either" if old == 1 else "reject"
    elif how == "float":
        items[k] = float(items[k])
    else:
        items[k] = str(items[k])
    return f"partition {i} {field}[{k}] {how}", "reject"


def _results(plan, n, rng):
    i, p = _partition(plan, rng)
    results = p["results"]
    k = rng.randrange(len(results))
    r = results[k]
    how = rng.choice(("kind", "index +1", "index -1", "index far", "swapped", "view base",
                      "shortened", "lengthened", "dropped"))
    if how == "swapped" and len(results) < 2 or how == "view base" and r[0] != "view":
        how = "index +1"
    if how == "kind":
        r[0] = rng.choice([x for x in ("prog", "view", "input", "none", "bogus") if x != r[0]])
        how += f" {r[0]}"
    elif how == "index +1":
        r[1] += 1
    elif how == "index -1":
        r[1] -= 1
    elif how == "index far":
        r[1] = rng.choice((10 ** 6, -(10 ** 6), 2 ** 63))
    elif how == "swapped":
        j = rng.choice([x for x in range(len(results)) if x != k])
        if results[j] == r:  # a result used twice: another index instead
            r[1] += 1
        else:
            results[k], results[j] = results[j], r
    elif how == "view base":
        field = rng.randrange(2, 5)
        if field == 4:
            r[4] = rng.choice(("torch.float64", "torch.int32", "torch.nonsense", "float32"))
        elif r[field]:
            d = rng.randrange(len(r[field]))
            r[field][d] = rng.choice([x for x in (r[field][d] + 1, 0, -1, r[field][d] * 2 + 2)
                                      if x != r[field][d]])
        else:
            r[field].append(2)
        how += f" [{field}]"
    elif how == "shortened":
        r.pop()
    elif how == "lengthened":
        r.append(r[1])
    else:
        results.pop(k)
    return f"partition {i} results[{k}] {how}", "reject"


def _num_prog_outputs(plan, n, rng):
    i, p = _partition(plan, rng)
    old = p["num_prog_outputs"]
    p["num_prog_outputs"] = rng.choice((old + 1, old - 1, -1, str(old), True, 2 ** 40))
    # JSON's true where the count is 1: the same number to a reader that does not look closer.
    return f"partition {i} num_prog_outputs {p['num_prog_outputs']!r}", _expect(old, p)


def _values(plan, n, rng):
    i, p = _partition(plan, rng)
    values = p["values"]
    k = rng.randrange(len(values))
    how = rng.choice(("dtype", "shape", "dropped", "reversed"))
    if how == "reversed" and values == values[::-1]:
        how = "dtype"
    if how == "dtype":
        values[k] = values[k].replace("float32", "float64") if "float32" in values[k] \
            else values[k].replace("T(", "T(torch.float32,", 1)
    elif how == "shape":  # T(dtype,(16, 24),...): a leading dim of 1
        values[k] = values[k].replace(",(", ",(1, ", 1)
    elif how == "dropped":
        values.pop(k)
    else:
        values.reverse()
    return f"partition {i} values[{k}] {how}", "reject"


def _program(plan, n, rng):
    i, p = _partition(plan, rng)
    prog = json.loads(p["program"])
    how = rng.choice(("truncated", "not JSON", "input shape", "input dtype", "input renamed",
                      "output dropped", "output added", "instruction dropped", "empty object"))
    if how == "truncated":
        p["program"] = p["program"][:rng.randrange(len(p["program"]))]
        return f"partition {i} program {how}", "reject"
    if how == "not JSON":
        p["program"] = "}" + p["program"]
        return f"partition {i} program {how}", "reject"
    if how == "input shape":
        x = rng.choice(prog["inputs"])
        x["shape"] = x["shape"] + [1] if rng.random() < 0.5 or not x["shape"] \
            else [s + 1 for s in x["shape"]]
    elif how == "input dtype":
        x = rng.choice(prog["inputs"])
        x["dtype"] = "float64" if x["dtype"] != "float64" else "float32"
    elif how == "input renamed":
        rng.choice(prog["inputs"])["name"] = "renamed"
    elif how == "output dropped":
        prog["outputs"].pop(rng.randrange(len(prog["outputs"])))
    elif how == "output added":
        prog["outputs"].append(rng.choice(prog["outputs"]))
    elif how == "instruction dropped":
        # What the dropped instruction made is read later (an error), or by nothing.
        prog["instructions"].pop(rng.randrange(len(prog["instructions"])))
        p["program"] = json.dumps(prog)
        return f"partition {i} program {how}", "either"
    else:
        prog = {}
    p["program"] = json.dumps(prog)
    return f"partition {i} program {how}", "reject"


def _call_code(plan, n, rng):
    """Marshalled bytecode in the plan, where plans of today carry it (else added): flipped,
    cut, or another function's valid code."""
    i, p = _partition(plan, rng)
    old = base64.b64decode(p["call_code"]) if "call_code" in p else None
    how = rng.choice(("flipped", "truncated", "returns None", "raises", "garbage"))
    if old is not None and how == "flipped":
        k = rng.randrange(len(old))
        code = old[:k] + bytes([old[k] ^ (1 << rng.randrange(8))]) + old[k + 1:]
    elif old is not None and how == "truncated":
        code = old[:rng.randrange(len(old))]
    elif how == "raises":
        code = marshal.dumps(compile("def run_partition(*a):\n    raise KeyError('planted')\n",
                                     "<planted>", "exec"))
    elif how == "garbage":
        code = bytes(rng.randrange(256) for _ in range(64))
    else:
        code = marshal.dumps(compile("def run_partition(*a):\n    return None\n", "<planted>",
                                     "exec"))
        how = "returns None"
    p["call_code"] = base64.b64encode(code).decode()
    return f"partition {i} call_code {how}", "reject"


def _fallbacks(plan, n, rng):
    how = rng.choice(("fallbacks", "ops_fallback"))
    if how == "fallbacks":
        plan["fallbacks"] = rng.choice(("tanh", {"tanh": "x"}, [["tanh"]], [[1, 2]], [None],
                                        [["a", "b", "c"]], 7))
        return f"fallbacks {plan['fallbacks']!r}", "reject"
    plan["ops_fallback"] = rng.choice(("1", -1, 1.5, None, [], True))
    return f"ops_fallback {plan['ops_fallback']!r}", "reject"


def _missing_key(plan, n, rng):
    if rng.random() < 0.3:
        key = rng.choice(("fallbacks", "ops_fallback", "partitions"))
        del plan[key]
        return key, "reject"
    i, p = _partition(plan, rng)
    key = rng.choice(_PARTITION_KEYS)
    del p[key]
    return f"partition {i} {key}", "reject"


def _wrong_type(plan, n, rng):
    value = copy.deepcopy(rng.choice(_OTHER_TYPES))
    if rng.random() < 0.25:
        key = rng.choice(("fallbacks", "ops_fallback", "partitions"))
        if key == "fallbacks" and value == []:
            value = {}  # an empty list is a plan without fallbacks
        old, plan[key] = plan[key], value
        # No partitions: the graph runs in PyTorch, right if slower.
        return f"{key} = {value!r}", "either" if value == [] else _expect(old, plan, key)
    i, p = _partition(plan, rng)
    key = rng.choice(_PARTITION_KEYS)
    old, p[key] = p[key], value
    return f"partition {i} {key} = {value!r}", _expect(old, p, key)


def _expect(old, holder, key="num_prog_outputs"):
    """"either" where the new value equals the old one as Python compares (true and 1), else
    "reject"."""
    return "either" if holder[key] == old else "reject"


def _target(plan, n, rng):
    i, p = _partition(plan, rng)
    p["target"] = rng.choice(("cuda", "x86 -mcpu=nonsense", "", "opencl", "X86"))
    return f"partition {i} target {p['target']!r}", "reject"


def _partitions(plan, n, rng):
    parts = plan["partitions"]
    how = rng.choice(("duplicated", "dropped", "reversed", "none"))
    if how == "duplicated":
        parts.append(copy.deepcopy(rng.choice(parts)))
        return how, "reject"
    if how == "dropped":  # its nodes run in PyTorch: right, if slower
        parts.pop(rng.randrange(len(parts)))
    elif how == "reversed":
        parts.reverse()
    else:
        parts.clear()
    return how, "either"


_MUTATIONS = {"positions": _positions, "results": _results, "num_prog_outputs": _num_prog_outputs,
              "values": _values, "program": _program, "call_code": _call_code,
              "fallbacks": _fallbacks, "missing key": _missing_key, "wrong type": _wrong_type,
              "target": _target, "partitions": _partitions}
