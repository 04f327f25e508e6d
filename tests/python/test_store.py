"""The persistent store through the C API (cinn_like.store, cinn_like/cache/store.h): keys are
SHA-256 digests; a record round-trips, and one damaged, truncated, of the old plan format or
written under another key is refused and removed; a FIFO at a record's path is left alone; keys,
kinds and directories the store does not make are refused; the compile cache's eviction takes
plan records and leaves every file of the directory that is not the store's; processes writing
one key at once leave one whole record; the lock holds between processes; and the torch
backend's plan cache round-trips a plan through it. The C++ side: tests/cinn_like/store_test.cc.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

import cinn_like
from cinn_like import store
from api_util import CacheDirTest

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


class StoreTest(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self._dir.name, "store")
        self.key = store.key_of("a graph")

    def tearDown(self):
        self._dir.cleanup()

    def path(self, key=None):
        return os.path.join(self.dir, (key or self.key) + ".clp")

    def test_keys_are_sha256_digests(self):
        for text in ("", "a graph", "é\n\0"):
            self.assertEqual(store.key_of(text), hashlib.sha256(text.encode()).hexdigest())
        self.assertEqual(store.key_of(b"\xff\x00"), hashlib.sha256(b"\xff\x00").hexdigest())

    def test_a_record_round_trips_and_a_damaged_one_is_refused_and_removed(self):
        self.assertEqual(store.get(self.dir, "plan", self.key).reason, store.ABSENT)
        self.assertEqual(os.stat(self.dir).st_mode & 0o777, 0o700)  # made the user's alone
        payload = b'{"partitions": []}\0\xff'
        store.put(self.dir, "plan", self.key, payload)
        self.assertEqual(store.get(self.dir, "plan", self.key), payload)
        with open(self.path(), "rb") as f:
            good = f.read()
        flipped = bytearray(good)
        flipped[len(good) // 2] ^= 1
        old_format = b"cinn_like plan 2 " + hashlib.sha256(b"{}").hexdigest().encode() + b"\n{}"
        for bad in (bytes(flipped), good[:-1], good[:5], b"", old_format):
            with self.subTest(size=len(bad)):
                with open(self.path(), "wb") as f:
                    f.write(bad)
                got = store.get(self.dir, "plan", self.key)
                self.assertIsInstance(got, store.Miss)
                self.assertEqual(got.reason, store.DAMAGED, got.why)
                self.assertIn(self.path(), got.why)
                self.assertFalse(os.path.exists(self.path()))
        store.put(self.dir, "plan", self.key, payload)
        self.assertEqual(store.get(self.dir, "plan", self.key), payload)

    def test_a_record_under_another_keys_name_is_refused(self):
        other = store.key_of("another graph")
        store.put(self.dir, "plan", self.key, b"mine")
        store.put(self.dir, "plan", other, b"theirs")
        os.replace(self.path(other), self.path())
        got = store.get(self.dir, "plan", self.key)
        self.assertEqual(got.reason, store.DAMAGED)
        self.assertIn(f"holds the plan record of key '{other}'", got.why)

    def test_a_fifo_is_neither_read_nor_replaced(self):
        os.makedirs(self.dir, mode=0o700)
        os.mkfifo(self.path())
        got = store.get(self.dir, "plan", self.key)  # would wait for a writer if it read
        self.assertEqual(got.reason, store.REFUSED, got.why)
        self.assertIn(self.path() + " is not a regular file", got.why)
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "it is a FIFO, not a regular file"):
            store.put(self.dir, "plan", self.key, b"x")
        self.assertTrue(os.path.exists(self.path()) and not os.path.isfile(self.path()))

    def test_what_the_store_does_not_make_is_refused(self):
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "is not 64 lower-case hex digits"):
            store.put(self.dir, "plan", "../../etc/passwd", b"x")
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "no record kind 'module'"):
            store.put(self.dir, "module", self.key, b"x")
        self.assertEqual(store.get(self.dir, "clp", self.key).reason, store.REFUSED)
        os.makedirs(self.dir, mode=0o700)
        os.chmod(self.dir, 0o777)
        got = store.get(self.dir, "plan", self.key)
        self.assertEqual(got.reason, store.REFUSED)
        self.assertIn("writable by others", got.why)
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "writable by others"):
            store.put(self.dir, "plan", self.key, b"x")


# Writers of one key: each writes its own payload `n` times and reads between, exiting 1 where
# a read found anything but one writer's whole payload.
_WRITER = r"""
import sys
from cinn_like import store
directory, key, me, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
bad = 0
for _ in range(n):
    store.put(directory, "plan", key, bytes([65 + me]) * (5000 + me))
    got = store.get(directory, "plan", key)
    if isinstance(got, store.Miss) or got != bytes([got[0]]) * (5000 + got[0] - 65):
        bad += 1
sys.exit(1 if bad else 0)
"""

_LOCKER = r"""
import sys
from cinn_like import store
with store.locked(sys.argv[1], sys.argv[2], max_wait_ms=50) as waited:
    sys.exit(0 if waited else 1)
"""


class StoreAcrossProcessesTest(CacheDirTest):
    def test_processes_writing_one_key_leave_one_whole_record(self):
        key = store.key_of("raced")
        os.makedirs(self.cache, mode=0o700)
        writers = [subprocess.Popen([sys.executable, "-c", _WRITER, self.cache, key, str(w), "80"],
                                    env=self.env) for w in range(4)]
        self.assertEqual([w.wait(timeout=300) for w in writers], [0] * 4)
        got = store.get(self.cache, "plan", key)
        self.assertIn(got, [bytes([65 + w]) * (5000 + w) for w in range(4)])
        self.assertEqual(os.listdir(self.cache), [key + ".clp"])

    def test_the_lock_holds_between_processes(self):
        key = store.key_of("locked")
        with store.locked(self.cache, key) as waited:
            self.assertFalse(waited)
            held = subprocess.run([sys.executable, "-c", _LOCKER, self.cache, key], env=self.env)
        self.assertEqual(held.returncode, 0)  # it waited for this process
        free = subprocess.run([sys.executable, "-c", _LOCKER, self.cache, key], env=self.env)
        self.assertEqual(free.returncode, 1)  # nobody held it

    def test_eviction_takes_plans_and_leaves_what_is_not_the_stores(self):
        old = store.key_of("an old plan")
        store.put(self.cache, "plan", old, b"old")
        foreign = ["notes.txt", "x.clp", "model.clm", old + ".txt", old[:40] + ".clp"]
        for name in foreign:
            with open(os.path.join(self.cache, name), "w") as f:
                f.write("the user's")
        compile_one = ("import cinn_like\n"
                       "b = cinn_like.ProgramBuilder()\n"
                       "b.output(b.op('exp', [b.input('x', 'float32', [4, 3])]))\n"
                       "cinn_like.compile(b, 'x86', 'f')\n")
        env = dict(self.env, FLAGS_cinn_like_cache_max_bytes="1")
        subprocess.run([sys.executable, "-c", compile_one], env=env, check=True)
        self.assertEqual(sorted(os.listdir(self.cache)), sorted(foreign))
        for name in foreign:
            with open(os.path.join(self.cache, name)) as f:
                self.assertEqual(f.read(), "the user's")


# The plan cache over the store, in a process of its own (its directory is the compile cache's):
# a plan stored and loaded; a file of the old plan format at its path is damaged, then replaced.
_PLANS = r"""
import json, os
import cinn_like
from cinn_like import store
from cinn_like.torch import cache, plan_cache
key = store.key_of("a graph's text")
plan = {"fallbacks": [["tanh.default", "denied"]], "ops_fallback": 1, "partitions": []}
assert plan_cache.load(key) is None
plan_cache.store(key, plan)
assert plan_cache.load(key) == plan
path = os.path.join(cinn_like.cache_dir(), key + ".clp")
with open(path, "wb") as f:
    f.write(b"cinn_like plan 2 0000\n" + json.dumps(plan).encode())
assert plan_cache.load(key) is None and not os.path.exists(path)
plan_cache.store(key, plan)
with plan_cache.locked(key):
    assert plan_cache.load(key) == plan
print(json.dumps({k: v for k, v in cache.stats().items() if k.startswith("plan_")}))
"""


@unittest.skipIf(torch is None, "needs PyTorch")
class PlanCacheOverTheStoreTest(CacheDirTest):
    def test_a_plan_round_trips_through_the_c_api(self):
        done = subprocess.run([sys.executable, "-c", _PLANS], env=self.env, capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        counts = json.loads(done.stdout.strip().splitlines()[-1])
        self.assertEqual(counts, {"plan_misses": 1, "plan_stores": 2, "plan_damaged": 1})
        [name] = os.listdir(self.cache)
        self.assertTrue(name.endswith(".clp") and len(name) == 64 + 4, name)


if __name__ == "__main__":
    unittest.main()
