"""A flag changed while another thread compiles cannot poison the persistent cache (issue 50,
class 2): the key was computed from the flags when a compile started and the lowering read them
later, so an entry could hold code its key did not describe (here: results negated by the debug
flag cinn_like_debug_wrong_op, set by another thread in the middle of a compile) and later,
clean processes ran it. Every compile now reads the code-changing flags once into one snapshot,
from which both the key and the lowering read.

The race is made certain through a seam the cache already has: a compile computes its key, then
takes the entry's lock (<dir>/<key>.lock, DiskCacheCompileLock) before it looks the entry up and
lowers. The worker holds that lock itself, starts the compile on a thread, waits until the compile
waits for the lock (the cache's `waits` counter: its key is computed), sets the flag and lets the
compile go on. Lowering that read the live flags stored negated code under the clean key every
time; with the snapshot it stores the code of its key."""
import json
import subprocess
import sys
import unittest

from api_util import CacheDirTest

# Compiles the Program once (its entry names its key), removes that entry, and compiles it again
# on a thread while this thread holds the entry's lock, setting cinn_like_debug_wrong_op once the
# compile waits for the lock; or (with "check") compiles it in a clean process, from the cache,
# and checks it against float64 numpy on fresh random data. Prints the cache's counters, the
# entries stored and whether the result was wrong.
_WORKER = r"""
import fcntl, json, os, sys, threading, time
import numpy as np
import cinn_like

def program():
    b = cinn_like.ProgramBuilder()
    x = b.input("x", "float32", [3, 40])
    w = b.input("w", "float32", [40])
    b.output(b.op("tanh", [b.op("mul", [b.op("add", [x, w]), x])]))
    return b

task = json.loads(sys.argv[1])
cache = cinn_like.cache_dir()
entries = lambda: sorted(n for n in os.listdir(cache) if n.endswith(".clm"))
out = {}
if task.get("check"):
    m = cinn_like.compile(program(), "x86", "f")
    rng = np.random.default_rng()
    x = rng.standard_normal((3, 40)).astype(np.float32)
    w = rng.standard_normal(40).astype(np.float32)
    got = np.full((3, 40), np.nan, np.float32)
    m(x, w, got)
    out["wrong"] = not np.allclose(got, np.tanh((x.astype(np.float64) + w) * x),
                                   rtol=1e-5, atol=1e-6)
else:
    cinn_like.compile(program(), "x86", "f")
    [entry] = entries()
    os.remove(os.path.join(cache, entry))
    key = entry[:-len(".clm")]
    with open(os.path.join(cache, key + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        compiling = threading.Thread(target=cinn_like.compile, args=(program(), "x86", "f"))
        compiling.start()
        deadline = time.monotonic() + 60
        while cinn_like.cache_stats()["waits"] == 0:  # the compile's key is computed
            if time.monotonic() > deadline:
                raise SystemExit("the compile never waited for the entry's lock")
            time.sleep(0.001)
        cinn_like.set_flags(cinn_like_debug_wrong_op="tanh,mul,add")
        fcntl.flock(lock, fcntl.LOCK_UN)
    compiling.join()
    cinn_like.set_flags(cinn_like_debug_wrong_op="")
    out["key"] = key
out.update(cinn_like.cache_stats(), entries=entries())
print(json.dumps(out))
"""


def _run(task, env):
    done = subprocess.run([sys.executable, "-c", _WORKER, json.dumps(task)], env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"worker failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class FlagChangedWhileCompiling(CacheDirTest):
    def test_an_entry_stored_after_a_flag_changed_mid_compile_holds_the_code_of_its_key(self):
        env = dict(self.env, FLAGS_cinn_like_debug_wrong_op="")
        racing = _run({}, env)
        # The compile waited for the lock with its key computed, then lowered and stored its
        # entry under that key, with the flag on by then.
        self.assertEqual(racing["waits"], 1, racing)
        self.assertEqual(racing["stores"], 2, racing)
        self.assertEqual(racing["entries"], [racing["key"] + ".clm"], racing)
        clean = _run({"check": True}, env)
        self.assertEqual(clean["hits"], 1, clean)
        self.assertFalse(clean["wrong"], f"the entry stored while the flag changed gave wrong "
                         f"results in a clean process ({clean})")


if __name__ == "__main__":
    unittest.main()
