"""The torch backend's graph plan cache (cinn_like/torch/plan_cache.py) across processes: a
second process handed the same graph takes the plan (no op checked, no partition proposed or
converted), loads the kernels from the compile cache and computes what eager PyTorch does on
fresh random data, with the same fallbacks reported and counted; a damaged or truncated plan is
noticed, compiled again and replaced, and a FIFO where a plan goes is neither read nor replaced;
another shape, another policy or another flag is another plan; a graph with symbolic sizes is not
planned; the compile cache's size cap evicts plans too.
"""
import json
import os
import stat
import subprocess
import sys
import unittest

from api_util import CacheDirTest

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

# One process: for each task in turn (Dynamo reset between them, so each compiles its graph
# again, as a new process would), set the flags and policy it names, compile `chain` (two
# partitions and a fallback when tanh is denied), check it against eager on fresh random data;
# print per task the backend's counters, its fallbacks and the compile cache's counters, as JSON.
_WORKER = r"""
import json, sys
import torch
import cinn_like, cinn_like.torch as ct

def chain(x, w, b):
    y = torch.tanh(torch.relu(x * w + b)) * x
    return torch.sigmoid(y).sum(-1), y.exp()

tasks = json.loads(sys.argv[1])
if any("custom" in t for t in tasks):
    # An op of this process whose metadata function is its own: the same graph structure,
    # another dtype after it, in another process.
    CAST = getattr(torch, next(t["custom"] for t in tasks if "custom" in t))

    @torch.library.custom_op("cinn_like_plan_test::cast", mutates_args=())
    def cast(x: torch.Tensor) -> torch.Tensor:
        return x.to(CAST, copy=True)

    @cast.register_fake
    def _(x):
        return torch.empty_like(x, dtype=CAST)

    def chain(x, w, b):  # noqa: F811
        y = cast(torch.relu(x * w + b))
        return torch.exp(y) * 2.0, y.sum(-1)

out = []
for task in tasks:
    torch._dynamo.reset()
    ct.reset()
    before = cinn_like.cache_stats()
    ct.set_options(deny=task.get("deny", []))
    for name, value in task.get("flags", {}).items():
        ct.set_flags(**{name: value})
    rows = task.get("rows", 16)
    x, w, b = torch.randn(rows, 24), torch.randn(24), torch.randn(24)
    with torch.no_grad():
        got = torch.compile(chain, backend="cinn_like", dynamic=task.get("dynamic", False))(x, w, b)
    for g, r in zip(got, chain(x, w, b)):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-5)
    after = cinn_like.cache_stats()
    out.append({"torch": ct.stats(), "fallbacks": ct.fallback_report(),
                "cache": {k: after[k] - before[k] for k in ("hits", "misses", "stores")}})
print(json.dumps(out))
"""


def _run(tasks, env):
    done = subprocess.run([sys.executable, "-c", _WORKER, json.dumps(tasks)], env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"worker failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@unittest.skipIf(torch is None, "needs PyTorch")
class PlanCacheAcrossProcesses(CacheDirTest):
    def plans(self):
        return self.files(".clp")

    def test_a_second_process_takes_the_plan(self):
        task = {"deny": ["tanh"]}
        [first] = _run([task], self.env)
        t1 = first["torch"]
        self.assertEqual((t1["plan_misses"], t1["plan_stores"], t1.get("plan_hits", 0)), (1, 1, 0))
        self.assertEqual(t1["partitions"], 2)
        self.assertEqual(len(self.plans()), 1)
        [second] = _run([task], self.env)
        t2 = second["torch"]
        self.assertEqual((t2["plan_hits"], t2.get("plan_misses", 0), t2.get("plan_stores", 0)),
                         (1, 0, 0))
        # Nothing compiled: both Modules came from the compile cache.
        self.assertEqual((second["cache"]["hits"], second["cache"]["misses"]), (2, 0))
        for counter in ("partitions", "ops_compiled", "ops_fallback", "compiles"):
            self.assertEqual(t2[counter], t1[counter], counter)
        self.assertEqual(second["fallbacks"], first["fallbacks"])
        self.assertTrue(any(op == "tanh.default" for op, _ in second["fallbacks"]),
                        second["fallbacks"])

    def test_a_damaged_or_truncated_plan_is_compiled_again_and_replaced(self):
        def flip(f):
            size = f.seek(0, 2)
            f.seek(size // 2)
            byte = f.read(1)
            f.seek(size // 2)
            f.write(bytes([byte[0] ^ 0x01]))

        def cut(f):
            f.truncate(f.seek(0, 2) * 2 // 3)

        _run([{}], self.env)
        [plan] = self.plans()
        for damage in (flip, cut):
            with open(os.path.join(self.cache, plan), "r+b") as f:
                damage(f)
            # The damaged plan is noticed and replaced; the same process's next compile of the
            # graph takes the new one.
            again, hit = _run([{}, {}], self.env)
            self.assertEqual((again["torch"]["plan_damaged"], again["torch"].get("plan_hits", 0),
                              again["torch"]["plan_stores"]), (1, 0, 1), damage.__name__)
            self.assertEqual(hit["torch"]["plan_hits"], 1, damage.__name__)
            self.assertEqual(self.plans(), [plan])

    def test_a_plan_path_that_is_not_a_regular_file_is_left_alone(self):
        _run([{}], self.env)
        [plan] = self.plans()
        path = os.path.join(self.cache, plan)
        os.remove(path)
        os.mkfifo(path)
        # Neither read (a FIFO would wait for a writer) nor replaced; the graph compiles, right.
        [again] = _run([{}], self.env)
        t = again["torch"]
        self.assertEqual((t["plan_misses"], t.get("plan_stores", 0), t["plan_write_errors"]),
                         (1, 0, 1))
        self.assertTrue(stat.S_ISFIFO(os.lstat(path).st_mode))

    def test_a_plan_whose_boundaries_changed_metadata_is_replaced(self):
        [first] = _run([{"custom": "float32"}], self.env)
        self.assertEqual(first["torch"]["plan_stores"], 1)
        # Another process whose custom op makes float64: the same key, other metadata after the
        # op. The plan is not taken; the graph compiles (right, against eager) and replaces it.
        [second] = _run([{"custom": "float64"}], self.env)
        t = second["torch"]
        self.assertEqual((t["plan_stale"], t.get("plan_hits", 0), t["plan_stores"]), (1, 0, 1))
        self.assertEqual(len(self.plans()), 1)

    def test_another_shape_policy_or_flag_is_another_plan_and_symbolic_none(self):
        tasks = [{}, {"rows": 17}, {"deny": ["exp"]}, {"dynamic": True},
                 {"flags": {"cinn_like_fast_math": True}}]
        results = _run(tasks, self.env)
        for task, out in zip(tasks, results):
            stored = 0 if task.get("dynamic") else 1
            self.assertEqual((out["torch"].get("plan_hits", 0),
                              out["torch"].get("plan_stores", 0)), (0, stored), task)
        self.assertEqual(len(self.plans()), 4)

    def test_the_cache_cap_evicts_plans_and_plans_are_off_with_the_cache(self):
        _run([{}], self.env)
        [old] = self.plans()
        # A cap below one entry: the next compile's store evicts every older entry.
        evicting, off = _run([{"rows": 9, "flags": {"cinn_like_cache_max_bytes": 1}},
                              {"rows": 10, "flags": {"cinn_like_cache": False}}], self.env)
        self.assertEqual(evicting["torch"]["plan_stores"], 1)
        self.assertNotIn(old, self.plans())
        self.assertEqual(off["torch"].get("plan_stores", 0) + off["torch"].get("plan_misses", 0), 0)
        self.assertEqual(off["cache"]["misses"] + off["cache"]["stores"], 0)


if __name__ == "__main__":
    unittest.main()
