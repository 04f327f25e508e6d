"""The persistent compile cache and saved modules across processes: a second process loads
what the first compiled (its counters say so); eight processes compiling the same Programs into
one directory at once all compute the right results, compile each Program once (the others wait
for it and load it) and leave one entry per Program; a directory others can write is not used
(the process compiles uncached); a module saved by one process loads and runs in another without
compiling (x86 here; CUDA too where the machine has a GPU), and a save replaces nothing but a
module file; a damaged file or a FIFO is refused with a message."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import cinn_like
from api_util import CacheDirTest

# One process's work: compile (or load) the Programs of the sizes given, check each against
# float64 numpy on fresh random data, print the cache's counters as JSON.
_WORKER = r"""
import json, sys
import numpy as np
import cinn_like

def program(cols):
    b = cinn_like.ProgramBuilder()
    x = b.input("x", "float32", [7, cols])
    w = b.input("w", "float32", [cols])
    b.output(b.op("tanh", [b.op("mul", [b.op("add", [x, w]), x])]))
    return b

def check(m, cols, rng):
    x = rng.standard_normal((7, cols)).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    out = np.full((7, cols), np.nan, np.float32)
    m(x, w, out)
    ref = np.tanh((x.astype(np.float64) + w) * x)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)

rng = np.random.default_rng()
task = json.loads(sys.argv[1])
for cols in task.get("compile", []):
    m = cinn_like.compile(program(cols), "x86", "f")
    check(m, cols, rng)
    if "save" in task:
        m.save(task["save"])
if "load" in task:
    check(cinn_like.load(task["load"]), task["load_cols"], rng)
print(json.dumps(cinn_like.cache_stats()))
"""


def _run(task, env, background=False):
    args = [sys.executable, "-c", _WORKER, json.dumps(task)]
    if background:
        return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"worker failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class DiskCacheAcrossProcesses(CacheDirTest):
    def entries(self):
        return self.files(".clm")

    def test_a_second_process_loads_what_the_first_compiled(self):
        first = _run({"compile": [33, 64]}, self.env)
        self.assertEqual((first["misses"], first["stores"], first["hits"]), (2, 2, 0))
        second = _run({"compile": [33, 64]}, self.env)
        self.assertEqual((second["misses"], second["stores"], second["hits"]), (0, 0, 2))
        self.assertEqual(len(self.entries()), 2)
        off = _run({"compile": [33]}, dict(self.env, FLAGS_cinn_like_cache="false"))
        self.assertEqual((off["misses"], off["hits"], off["stores"]), (0, 0, 0))

    def test_eight_processes_at_once_share_one_directory(self):
        sizes = [16, 17, 18]
        workers = [_run({"compile": sizes}, self.env, background=True) for _ in range(8)]
        stats = []
        for w in workers:
            out, err = w.communicate(timeout=300)
            self.assertEqual(w.returncode, 0, err)
            stats.append(json.loads(out.strip().splitlines()[-1]))
        self.assertEqual(sum(s["hits"] + s["misses"] for s in stats), 8 * len(sizes))
        # The compile lock: each Program compiled by one process, loaded by the seven others
        # (those that came while it compiled waited for it).
        self.assertEqual(sum(s["misses"] for s in stats), len(sizes))
        self.assertEqual(sum(s["stores"] for s in stats), len(sizes))
        self.assertEqual([n for n in os.listdir(self.cache) if n.endswith(".lock")], [])
        self.assertEqual(sum(s["damaged"] + s["write_errors"] for s in stats), 0)
        self.assertEqual(len(self.entries()), len(sizes))
        self.assertEqual([n for n in os.listdir(self.cache) if ".tmp." in n], [])
        again = _run({"compile": sizes}, self.env)
        self.assertEqual(again["hits"], len(sizes))

    def test_a_directory_others_can_write_is_not_used(self):
        os.makedirs(self.cache)
        os.chmod(self.cache, 0o777)
        done = subprocess.run([sys.executable, "-c", _WORKER, json.dumps({"compile": [21]})],
                              env=self.env, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)  # compiled, uncached
        stats = json.loads(done.stdout.strip().splitlines()[-1])
        self.assertEqual(stats["hits"] + stats["misses"] + stats["stores"], 0)
        self.assertIn("writable by others (mode 0777)", done.stderr)
        self.assertEqual(os.listdir(self.cache), [])

    def test_a_saved_module_runs_in_another_process(self):
        path = os.path.join(self._dir.name, "f.clm")
        _run({"compile": [40], "save": path}, self.env)
        no_cache = dict(self.env, FLAGS_cinn_like_cache="false")
        loaded = _run({"load": path, "load_cols": 40}, no_cache)
        self.assertEqual(loaded["hits"] + loaded["misses"] + loaded["stores"], 0)
        with open(path, "r+b") as f:
            f.seek(100)
            byte = f.read(1)
            f.seek(100)
            f.write(bytes([byte[0] ^ 0xFF]))
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "f.clm is damaged: .*checksum"):
            cinn_like.load(path)
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "cannot read the module file"):
            cinn_like.load(path + ".missing")

    def test_save_replaces_only_a_module_file(self):
        notes = os.path.join(self._dir.name, "notes.txt")
        with open(notes, "w") as f:
            f.write("the user's notes")
        fifo = os.path.join(self._dir.name, "fifo")
        os.mkfifo(fifo)
        for path, message in ((notes, "refusing to overwrite " + notes +
                               ": it is not a cinn_like module file"),
                              (fifo, "refusing to replace " + fifo + ": it is a FIFO")):
            done = subprocess.run([sys.executable, "-c", _WORKER,
                                   json.dumps({"compile": [40], "save": path})],
                                  env=self.env, capture_output=True, text=True, timeout=300)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn(message, done.stderr)
        with open(notes) as f:
            self.assertEqual(f.read(), "the user's notes")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        with self.assertRaisesRegex(cinn_like.CinnLikeError, fifo + ": it is a FIFO"):
            cinn_like.load(fifo)  # at once: nothing waits for a writer


def _cuda_device():
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


_CUDA_WORKER = r"""
import json, sys
import torch
import cinn_like
task = json.loads(sys.argv[1])
if task["mode"] == "save":
    # A row reduction, an elementwise group and a matmul (cuBLAS): several kernels and a call.
    b = cinn_like.ProgramBuilder()
    x = b.input("x", "float32", [300, 129])
    w = b.input("w", "float32", [129, 64])
    b.output(b.op("softmax", [b.op("mul", [x, x])], {"axis": -1}))
    b.output(b.op("matmul", [b.op("sigmoid", [x]), w]))
    cinn_like.compile(b, "cuda", "g").save(task["path"])
else:
    m = cinn_like.load(task["path"])
    x = torch.randn(300, 129, device="cuda")
    w = torch.randn(129, 64, device="cuda")
    y = torch.full_like(x, float("nan"))
    z = torch.full((300, 64), float("nan"), device="cuda")
    m(x, w, y, z)
    torch.cuda.synchronize()
    xd = x.double()
    torch.testing.assert_close(y.double(), torch.softmax(xd * xd, -1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(z.double(), torch.sigmoid(xd) @ w.double(), rtol=1e-4, atol=1e-4)
print(json.dumps(cinn_like.compile_stats()))
"""


@unittest.skipIf(_cuda_device() is None, "no CUDA device (the GPU machine runs this)")
class SavedCudaModule(unittest.TestCase):
    def test_a_saved_cuda_module_runs_in_another_process(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.clm")
            env = dict(os.environ, FLAGS_cinn_like_cache="false")
            for mode in ("save", "load"):
                done = subprocess.run([sys.executable, "-c", _CUDA_WORKER,
                                       json.dumps({"mode": mode, "path": path})],
                                      env=env, capture_output=True, text=True, timeout=300)
                self.assertEqual(done.returncode, 0, done.stderr)
            stats = json.loads(done.stdout.strip().splitlines()[-1])
            # The loading process compiled nothing: no lowering, no NVRTC, no LLVM.
            self.assertEqual((stats["compiled"], stats["nvrtc_ms"], stats["host_optimize_ms"]),
                             (0, 0, 0))


if __name__ == "__main__":
    unittest.main()
