"""A flag changed while other threads compile cannot poison the persistent cache (issue 50,
class 2): the key was computed from the flags when a compile started and the lowering read them
later, so an entry could hold code its key did not describe (here: results negated by the debug
flag cinn_like_debug_wrong_op, set by another thread in the middle of a compile) and later,
clean processes ran it. Every compile now reads the code-changing flags once into one snapshot,
from which both the key and the lowering read."""
import json
import subprocess
import sys
import unittest

from api_util import CacheDirTest

# Compiles the Programs of the sizes given on four threads while a fifth flips the flag, or (with
# "check") compiles them in a clean process and checks each against float64 numpy on fresh random
# data; prints the cache's counters and how many results were wrong.
_WORKER = r"""
import json, sys, threading
import numpy as np
import cinn_like

def program(cols):
    b = cinn_like.ProgramBuilder()
    x = b.input("x", "float32", [3, cols])
    w = b.input("w", "float32", [cols])
    b.output(b.op("tanh", [b.op("mul", [b.op("add", [x, w]), x])]))
    return b

task = json.loads(sys.argv[1])
sizes = task["sizes"]
wrong = 0
if task.get("check"):
    rng = np.random.default_rng()
    for cols in sizes:
        m = cinn_like.compile(program(cols), "x86", "f")
        x = rng.standard_normal((3, cols)).astype(np.float32)
        w = rng.standard_normal(cols).astype(np.float32)
        out = np.full((3, cols), np.nan, np.float32)
        m(x, w, out)
        want = np.tanh((x.astype(np.float64) + w) * x)
        wrong += not np.allclose(out, want, rtol=1e-5, atol=1e-6)
else:
    stop = threading.Event()
    def flip():
        on = False
        while not stop.is_set():
            on = not on
            cinn_like.set_flags(cinn_like_debug_wrong_op="tanh,mul,add" if on else "")
    def compile_some(part):
        for cols in part:
            cinn_like.compile(program(cols), "x86", "f")
    flipper = threading.Thread(target=flip)
    flipper.start()
    workers = [threading.Thread(target=compile_some, args=(sizes[k::4],)) for k in range(4)]
    for t in workers: t.start()
    for t in workers: t.join()
    stop.set()
    flipper.join()
print(json.dumps(dict(cinn_like.cache_stats(), wrong=int(wrong))))
"""


def _run(task, env):
    done = subprocess.run([sys.executable, "-c", _WORKER, json.dumps(task)], env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"worker failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class FlagChangedWhileCompiling(CacheDirTest):
    def test_entries_stored_while_a_flag_flips_hold_the_code_of_their_key(self):
        sizes = list(range(8, 68))  # 60 Programs
        env = dict(self.env, FLAGS_cinn_like_debug_wrong_op="")
        racing = _run({"sizes": sizes}, env)
        self.assertGreater(racing["stores"], 0, racing)  # some compiles ran with the flag off
        clean = _run({"sizes": sizes, "check": True}, env)
        self.assertGreater(clean["hits"], 0, clean)
        self.assertEqual(clean["wrong"], 0, f"{clean['wrong']} of {len(sizes)} Programs gave "
                         f"wrong results from the cache ({clean})")


if __name__ == "__main__":
    unittest.main()
