"""The torch backend's graph plans (cinn_like/torch/plan_cache.py) fuzzed by structure: real
plans of a few small CPU graphs, each changed by plan_mutator.py and signed again, so that it
passes the store's checks. At the warm start that reads it, whatever was changed, nothing may escape
the compiled function and its results are eager's; a plan the mutator says is wrong is not used
(counted as plan_stale) and is replaced by the one the fresh compile stores (a record the store
finds of another graph is its test's: test_store.py). One worker process runs every case, so that a crash is a
failure that names the seed and the case it died in. CINN_LIKE_PLAN_FUZZ_CASES runs more cases,
CINN_LIKE_PLAN_FUZZ_SEED replays a seed.
"""
import json
import os
import random
import subprocess
import sys
import unittest

from api_util import CacheDirTest

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

_HERE = os.path.dirname(os.path.abspath(__file__))
_CASES = int(os.environ.get("CINN_LIKE_PLAN_FUZZ_CASES", "250"))
# Float32 kernels against eager: exp, sigmoid and sums may differ by a few units in the last
# place, nothing more.
_RTOL, _ATOL = 1e-5, 1e-5

# argv: the tests' folder, the seed, the number of mutated cases. Compiles each graph once (its
# plan stored), then per case: a graph's plan mutated and signed again, a warm start (Dynamo and
# the backend reset, as a new process would) on fresh random inputs against eager. Prints one
# JSON line per case as it ends.
_WORKER = r"""
import json, os, random, sys
sys.path.insert(0, sys.argv[1])
import torch
import cinn_like, cinn_like.torch as ct
from cinn_like.torch import plan_cache
import plan_mutator

def chain(x, w, b):  # with tanh denied: two partitions and a fallback
    y = torch.tanh(torch.relu(x * w + b)) * x
    return torch.sigmoid(y).sum(-1), y.exp()

def twins(a, b, c):  # inputs and outputs of one metadata: a swap shows only in the values
    return torch.relu(a - b) * c, a * b + c, (b - a).exp()

def views(x, w):  # results that are views of computed values, one transposed
    y = torch.exp(x) * w
    return (y + 1).view(-1), y.t(), x.sum(0)

GRAPHS = {"chain": (chain, [(16, 24), (24,), (24,)], ["tanh"]),
          "twins": (twins, [(8, 8), (8, 8), (8, 8)], []),
          "views": (views, [(6, 5), (5,)], [])}

sizes = []
key_of = plan_cache.graph_key
def graph_key(gm, rules):  # the aten graph's size, for the mutator's positions
    sizes.append(len(gm.graph.nodes))
    return key_of(gm, rules)
plan_cache.graph_key = graph_key

def warm_start(name):
    fn, shapes, deny = GRAPHS[name]
    torch._dynamo.reset()
    ct.reset()
    ct.set_options(deny=deny)
    args = [torch.randn(s) for s in shapes]
    with torch.no_grad():
        got = torch.compile(fn, backend="cinn_like", dynamic=False)(*args)
    for g, want in zip(got, fn(*args)):
        torch.testing.assert_close(g, want, rtol=float(sys.argv[4]), atol=float(sys.argv[5]))

cache = cinn_like.cache_dir()
plans = {}
for name in GRAPHS:
    before = set(os.listdir(cache))
    warm_start(name)
    [entry] = [f for f in os.listdir(cache) if f.endswith(".clp") and f not in before]
    path = os.path.join(cache, entry)
    plans[name] = (path, plan_mutator.read(path), sizes[-1])

seed = int(sys.argv[2])
rng = random.Random(seed)
torch.manual_seed(seed)
names = sorted(GRAPHS)
for case in range(len(names) + int(sys.argv[3])):
    name = names[case] if case < len(names) else rng.choice(names)
    path, original, size = plans[name]
    if case < len(names):  # each plan as stored, signed again: it must be taken
        body, what, expect = original, "none", "hit"
    else:
        body, what, expect = plan_mutator.mutate(original, size, rng)
    plan_mutator.write(path, body)
    record = {"case": case, "graph": name, "what": what, "expect": expect}
    print(json.dumps(record), file=sys.stderr, flush=True)  # where a crash happened
    try:
        warm_start(name)
    except Exception as e:  # noqa: BLE001 (the test reports it)
        record["error"] = f"{type(e).__name__}: {e}"[:400]
    stats = ct.stats()
    record.update({k: stats.get(k, 0) for k in ("plan_hits", "plan_stale", "plan_damaged",
                                                "plan_stores")})
    record["replaced"] = os.path.exists(path) and plan_mutator.read(path) == original
    print(json.dumps(record), flush=True)
"""


def _failure(record):
    """Why a case's outcome is wrong, or None."""
    if "error" in record:
        return record["error"]
    rejected = record["plan_stale"] + record["plan_damaged"]
    if record["expect"] == "hit" and record["plan_hits"] != 1:
        return "the plan as stored was not taken"
    if record["expect"] == "reject":
        if rejected != 1 or record["plan_hits"]:
            return "the mutated plan was used"
        if record["plan_stores"] != 1 or not record["replaced"]:
            return "the mutated plan was not replaced by the graph's own"
    if record["expect"] == "either" and rejected + record["plan_hits"] != 1:
        return "the plan was neither taken nor rejected"
    return None


@unittest.skipIf(torch is None, "needs PyTorch")
class PlanFuzz(CacheDirTest):
    def test_mutated_plans_signed_again_are_used_right_or_rejected(self):
        seed = int(os.environ.get("CINN_LIKE_PLAN_FUZZ_SEED", random.randrange(2 ** 32)))
        env = dict(self.env, TORCHINDUCTOR_CACHE_DIR=os.path.join(self._dir.name, "inductor"))
        done = subprocess.run([sys.executable, "-c", _WORKER, _HERE, str(seed), str(_CASES),
                               str(_RTOL), str(_ATOL)], env=env, capture_output=True,
                              text=True, timeout=600)
        replay = f"seed {seed} (CINN_LIKE_PLAN_FUZZ_SEED={seed} replays it)"
        records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0:
            self.fail(f"{replay}: the worker died ({done.returncode}) after "
                      f"{len(records)} cases:\n{done.stderr[-3000:]}")
        self.assertEqual(len(records), 3 + _CASES, replay)
        failures = [(r, why) for r in records if (why := _failure(r)) is not None]
        kinds = {r["what"].split(":")[0] for r in records}
        if failures:
            self.fail(f"{replay}: {len(failures)} of {len(records)} cases wrong:\n"
                      + "\n".join(f"  {why}: {r}" for r, why in failures[:15]))
        # Enough of the mutator ran for the run to mean something.
        self.assertGreaterEqual(len(kinds), 8, f"{replay}: only {sorted(kinds)}")
        self.assertGreaterEqual(sum(r["expect"] == "reject" for r in records), _CASES // 2,
                                replay)


if __name__ == "__main__":
    unittest.main()
