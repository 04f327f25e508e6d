#!/usr/bin/env python3
"""\file opinfo_sweep.py: PyTorch's OpInfo database through torch.compile(backend="cinn_like").

For each entry of torch.testing._internal.common_methods_invocations.op_db (it needs the
`expecttest` package) the first two float32 CPU samples run as
`torch.compile(lambda *t: op(*t), backend="cinn_like", dynamic=False)` against eager, and each
sample gets one status:

  whole        every op handed to the backend compiled, the result matches eager
  some_fb      some ops fell back to PyTorch, the result matches
  all_fb       every op handed to the backend fell back, the result matches
  no_ops       no op reached the backend (Dynamo ran it all, or the graph was empty)
  raised       the compiled call raised
  wrong        the result differs from eager beyond the dtype's tolerance, and from float64
  died         the worker process died (abort, segfault) or timed out on this sample
  baseline     torch.compile(backend="aot_eager") fails the same way: a tracing problem, not
               the backend's (not counted as judged)

A mismatch is decided against float64: the sample recomputed eagerly in float64; the compiled
result is wrong only when its error against that reference exceeds the tolerance and is more
than twice eager's own error. Ops whose eager result is not reproducible (random ones) are
compared by shape and dtype only.

Isolation: the entries run in worker subprocesses (this file with --worker) that report one
line per sample; when a worker dies or a sample exceeds --timeout, the parent records the
sample as `died` and starts a new worker on the remaining entries.

  CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \\
      python3 tools/opinfo_sweep.py [--ops a,b] [--limit N] [--jobs J] [--out FILE.json]
"""
import argparse
import collections
import itertools
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time

TAG = "@@SWEEP "
STATUSES = ["whole", "some_fb", "all_fb", "no_ops", "raised", "wrong", "died", "baseline"]
LABELS = {
    "whole": "every handed op compiled, result matches",
    "some_fb": "some ops fell back, result matches",
    "all_fb": "all ops fell back, result matches",
    "no_ops": "no op reached the backend",
    "died": "the Python process died (abort/timeout)",
    "raised": "the compiled call raised",
    "wrong": "wrong result",
    "baseline": "aot_eager fails too (tracing; not judged)",
}
SAMPLES_PER_ENTRY = 2
# Per-dtype tolerances (rtol, atol) for a compiled result against eager or float64.
TOLERANCES = {"float32": (1e-4, 1e-5), "float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}


def tolerance(dtype):
    return TOLERANCES.get(str(dtype).replace("torch.", ""), TOLERANCES["float32"])


# ------------------------------------------------------------------------------------------
# Worker: runs entries in this process, one report line per sample.
# ------------------------------------------------------------------------------------------
def entry_keys(op_db):
    """Unique names of the entries, 'name' or 'name.variant', in op_db's order."""
    keys, seen = [], collections.Counter()
    for op in op_db:
        k = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        seen[k] += 1
        keys.append(k if seen[k] == 1 else f"{k}#{seen[k]}")
    return keys


def first_line(e):
    msg = str(e).strip()
    # Dynamo wraps backend errors; the cause's line is the informative one.
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    for ln in lines:
        if "raised:" in ln or "Error:" in ln:
            line = ln
            break
    return f"{type(e).__name__}: {line}"[:300]


class Worker:
    def __init__(self):
        import torch  # noqa: PLC0415
        import cinn_like.torch  # noqa: F401, PLC0415
        from torch.utils import _pytree  # noqa: PLC0415
        self.torch, self.pytree = torch, _pytree
        self.cl = sys.modules["cinn_like.torch"]

    def emit(self, **kw):
        sys.stdout.write(TAG + json.dumps(kw) + "\n")
        sys.stdout.flush()

    def split(self, sample):
        """(tensor leaves, rebuild(tensors) -> (args, kwargs)) of a SampleInput."""
        torch, pytree = self.torch, self.pytree
        tree = ([sample.input, *sample.args], dict(sample.kwargs))
        leaves, spec = pytree.tree_flatten(tree)
        idx = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]

        def rebuild(tensors):
            ls = list(leaves)
            for i, t in zip(idx, tensors):
                ls[i] = t
            return pytree.tree_unflatten(ls, spec)

        return [leaves[i] for i in idx], rebuild

    def call(self, fn, rebuild, tensors):
        args, kwargs = rebuild([t.clone() for t in tensors])
        return fn(*args, **kwargs)

    def tensors_of(self, out):
        return self.pytree.tree_leaves(out)

    def compare(self, got, want, dtype, values=True):
        """None when `got` matches `want` at the dtype's tolerance, else a message; with
        values=False (a random op) only the outputs' kinds, shapes and dtypes are compared."""
        torch = self.torch
        g, w = self.tensors_of(got), self.tensors_of(want)
        if len(g) != len(w):
            return f"{len(g)} outputs, eager has {len(w)}"
        rtol, atol = tolerance(dtype)
        for i, (a, b) in enumerate(zip(g, w)):
            if isinstance(b, torch.Tensor):
                if not isinstance(a, torch.Tensor):
                    return f"output {i} is {type(a).__name__}, eager's a tensor"
                if a.shape != b.shape or a.dtype != b.dtype:
                    return (f"output {i}: {a.dtype}{list(a.shape)}, eager "
                            f"{b.dtype}{list(b.shape)}")
                if not values:
                    continue
                if b.is_floating_point() or b.is_complex():
                    try:
                        torch.testing.assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True)
                    except AssertionError as e:
                        return f"output {i}: " + " ".join(str(e).split("\n")[1:3])
                elif not torch.equal(a, b):
                    return f"output {i}: {a.dtype} values differ"
            elif values and a != b and not (a != a and b != b):
                return f"output {i}: {a!r}, eager {b!r}"
        return None

    def worse_than_eager(self, got, want, ref, dtype):
        """True when an output of `got` that differs from eager's `want` is further from the
        float64 `ref` than the tolerance allows and than twice eager's; an output that cannot
        be judged against float64 (not floating, or of another shape) keeps the mismatch."""
        torch = self.torch
        rtol, atol = tolerance(dtype)
        g, w, r = self.tensors_of(got), self.tensors_of(want), self.tensors_of(ref)
        if len(r) != len(g):
            return True
        for a, b, c in zip(g, w, r):
            if self.compare([a], [b], dtype) is None:
                continue
            if not (isinstance(a, torch.Tensor) and isinstance(c, torch.Tensor)
                    and a.is_floating_point() and c.shape == a.shape):
                return True
            c = c.to(torch.float64)
            err = (a.double() - c).abs().nan_to_num(0.0)
            if ((err - atol - rtol * c.abs()) > 0).any() and \
                    err.max() > 2 * (b.double() - c).abs().nan_to_num(0.0).max():
                return True
        return False

    def deterministic(self, op, rebuild, tensors):
        torch = self.torch
        try:
            torch.manual_seed(1)
            a = self.call(op, rebuild, tensors)
            torch.manual_seed(2)
            b = self.call(op, rebuild, tensors)
            return self.compare(a, b, torch.float64) is None
        except Exception:  # noqa: BLE001
            return True

    def compiled(self, op, backend):
        torch = self.torch
        torch._dynamo.reset()
        self.cl.reset(clear_cache=True)
        return torch.compile(lambda *t, **k: op(*t, **k), backend=backend, dynamic=False)

    def run_sample(self, op, sample, dtype):
        torch = self.torch
        tensors, rebuild = self.split(sample)
        rec = {}
        try:
            torch.manual_seed(0)
            want = self.call(op, rebuild, tensors)
        except Exception as e:  # noqa: BLE001
            return {"status": "baseline", "error": "eager raised: " + first_line(e)}
        det = self.deterministic(op, rebuild, tensors)
        fn = self.compiled(op, "cinn_like")
        try:
            torch.manual_seed(0)
            got = self.call(fn, rebuild, tensors)
            err = None
        except Exception as e:  # noqa: BLE001
            got, err = None, first_line(e)
        st = self.cl.stats()
        reasons = [list(x) for x in self.cl.fallback_report()]
        rec.update(ops_compiled=st.get("ops_compiled", 0), ops_fallback=st.get("ops_fallback", 0),
                   graphs=st.get("graphs", 0), fallbacks=reasons)
        if err is None:
            mismatch = self.compare(got, want, dtype, values=det)
            if mismatch is not None and det:
                try:
                    ref_args = [t.double() if t.is_floating_point() else t for t in tensors]
                    torch.manual_seed(0)
                    ref = self.call(op, rebuild, ref_args)
                    if not self.worse_than_eager(got, want, ref, dtype):
                        mismatch = None
                        rec["note"] = "differs from eager, within tolerance of float64"
                except Exception:  # noqa: BLE001 (no float64 kernel: eager decides)
                    pass
            if mismatch is not None:
                err = "wrong: " + mismatch
        if err is not None:
            # The baseline: does aot_eager fail the same way?
            base = self.baseline(op, rebuild, tensors, want, dtype, det)
            if base is not None:
                rec.update(status="baseline", error=err, baseline_error=base)
            else:
                rec.update(status="wrong" if err.startswith("wrong: ") else "raised", error=err)
            return rec
        if rec["ops_compiled"] == 0 and rec["ops_fallback"] == 0:
            rec["status"] = "no_ops"
        elif rec["ops_fallback"] == 0:
            rec["status"] = "whole"
        elif rec["ops_compiled"] == 0:
            rec["status"] = "all_fb"
        else:
            rec["status"] = "some_fb"
        if not det:
            rec["note"] = "random op: shape and dtype compared"
        return rec

    def baseline(self, op, rebuild, tensors, want, dtype, det):
        """None when aot_eager runs the sample and matches eager, else its failure."""
        fn = self.compiled(op, "aot_eager")
        try:
            self.torch.manual_seed(0)
            got = self.call(fn, rebuild, tensors)
        except Exception as e:  # noqa: BLE001
            return first_line(e)
        m = self.compare(got, want, dtype, values=det)
        return None if m is None else "wrong: " + m

    def run(self, keys):
        torch = self.torch
        from torch.testing._internal.common_methods_invocations import op_db  # noqa: PLC0415
        by_key = dict(zip(entry_keys(op_db), op_db))
        dtype = torch.float32
        for line in keys:
            key, _, start = line.partition("\t")
            start = int(start or 0)
            op = by_key[key]
            self.emit(kind="entry", key=key)
            if dtype not in op.supported_dtypes("cpu"):
                self.emit(kind="skip", key=key, reason="no float32 on cpu")
                self.emit(kind="done", key=key)
                continue
            try:
                torch.manual_seed(0)  # the same samples in every run, resumed or not
                samples = list(itertools.islice(
                    op.sample_inputs("cpu", dtype, requires_grad=False), SAMPLES_PER_ENTRY))
                for i, sample in enumerate(samples):
                    if i < start:  # an earlier worker died on this sample or ran it
                        continue
                    self.emit(kind="begin", key=key, sample=i)
                    try:
                        rec = self.run_sample(op, sample, dtype)
                    except Exception as e:  # noqa: BLE001 (a bug of the sweep itself)
                        rec = {"status": "baseline", "error": "sweep: " + first_line(e)}
                    rec["sample"] = i
                    rec["desc"] = self.describe(sample)
                    self.emit(kind="sample", key=key, **rec)
            except Exception as e:  # noqa: BLE001 (sample generation failed)
                self.emit(kind="skip", key=key, reason="samples: " + first_line(e))
            self.emit(kind="done", key=key)

    def describe(self, sample):
        torch = self.torch
        leaves = self.pytree.tree_leaves(([sample.input, *sample.args], dict(sample.kwargs)))
        parts = [f"{list(v.shape)}" if isinstance(v, torch.Tensor) else repr(v)[:20]
                 for v in leaves]
        return " ".join(parts)[:120]


# ------------------------------------------------------------------------------------------
# Parent: shards the entries over --jobs worker pipelines, restarting a worker after a death.
# ------------------------------------------------------------------------------------------
def stderr_tail(path):
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read()[-20000:].splitlines() if ln.strip()]
    except OSError:
        return ""
    keep = [ln for ln in lines if not ln.startswith(("W1", "I1", "warnings.warn"))]
    for ln in reversed(keep):
        if any(s in ln for s in ("Check failed", "terminate", "Assertion", "abort", "Error",
                                 "error")):
            return ln[:300]
    return keep[-1][:300] if keep else ""


def run_shard(keys, args, results, skipped, lock, progress):
    env = dict(os.environ)
    env.setdefault("TORCHDYNAMO_VERBOSE", "0")
    pending, resume = list(keys), {}  # resume: entry -> first sample to run
    while pending:
        errf = tempfile.NamedTemporaryFile(prefix="opinfo_sweep_", suffix=".err", delete=False)
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf,
                                env=env, text=True)
        proc.stdin.write("".join(f"{k}\t{resume.get(k, 0)}\n" for k in pending))
        proc.stdin.close()
        current, sample, finished = None, None, set()
        buf = ""
        deadline = time.time() + args.timeout + 60  # the imports
        timed_out = False
        while True:
            r, _, _ = select.select([proc.stdout], [], [], 5)
            if not r:
                if time.time() > deadline:
                    proc.kill()
                    timed_out = True
                    break
                continue
            chunk = os.read(proc.stdout.fileno(), 65536).decode(errors="replace")
            if not chunk:
                break
            buf += chunk
            while "\n" in buf:
                line, buf = buf.split("\n", 1)
                if not line.startswith(TAG):
                    continue
                m = json.loads(line[len(TAG):])
                kind = m.pop("kind")
                deadline = time.time() + args.timeout
                if kind == "entry":
                    current, sample = m["key"], None
                elif kind == "begin":
                    sample = m["sample"]
                elif kind == "sample":
                    with lock:
                        results[m.pop("key")].append(m)
                    sample = None
                elif kind == "skip":
                    with lock:
                        skipped[m["key"]] = m["reason"]
                elif kind == "done":
                    finished.add(m["key"])
                    with lock:
                        progress[0] += 1
                        if not args.quiet:
                            print(f"[{progress[0]}/{progress[1]}] {m['key']}: " + " ".join(
                                r["status"] for r in results[m["key"]]), flush=True)
                    current = None
        proc.wait()
        errf.close()
        if current is not None:
            why = "timeout" if timed_out else f"exit {proc.returncode}"
            tail = stderr_tail(errf.name)
            # A death outside a sample (None) or a repeated one ends the entry: no endless loop;
            # else the entry goes on in the next worker from the sample after.
            nxt = sample + 1 if sample is not None else SAMPLES_PER_ENTRY
            if nxt <= resume.get(current, 0):
                nxt = SAMPLES_PER_ENTRY
            resume[current] = nxt
            with lock:
                results[current].append({"status": "died", "sample": sample if sample is not None
                                         else 0, "error": f"{why}: {tail}"})
                if nxt >= SAMPLES_PER_ENTRY:
                    finished.add(current)
                    progress[0] += 1
                print(f"[{progress[0]}/{progress[1]}] {current}: died ({why}) {tail}", flush=True)
        elif proc.returncode != 0 and len(finished) < len(pending):
            print(f"worker failed before an entry: exit {proc.returncode}: "
                  f"{stderr_tail(errf.name)}", flush=True)
            os.unlink(errf.name)
            return
        os.unlink(errf.name)
        pending = [k for k in pending if k not in finished]


def summarize(results, skipped):
    counts = collections.Counter()
    for recs in results.values():
        for r in recs:
            counts[r["status"]] += 1
    judged = sum(counts[s] for s in STATUSES if s != "baseline")
    print(f"\n| | x86 float32 |\n|---|---|\n| samples judged | {judged} |")
    for s in STATUSES:
        pct = f" ({100 * counts[s] / judged:.0f}%)" if judged and s == "whole" else ""
        print(f"| {LABELS[s]} | {counts[s]}{pct} |")
    print(f"| entries skipped (no float32 / no samples) | {len(skipped)} |")

    missing, reasons = collections.Counter(), collections.Counter()
    for recs in results.values():
        for r in recs:
            for op, why in r.get("fallbacks", []):
                reasons[(op, why.splitlines()[0][:100] if why else "")] += 1
                if why == "no cinn_like mapping":
                    missing[op] += 1
    print(f"\nmissing aten ops (no cinn_like mapping): {len(missing)} distinct; top 20:")
    for op, n in missing.most_common(20):
        print(f"  {n:5d}  {op}")
    print("\ntop fallback reasons other than a missing mapping (op: reason -> count):")
    for (op, why), n in [x for x in reasons.most_common() if x[0][1] != "no cinn_like mapping"][:20]:
        print(f"  {n:5d}  {op}: {why}")
    for s in ["died", "raised", "wrong"]:
        rows = [(k, r) for k, recs in results.items() for r in recs if r["status"] == s]
        print(f"\n{LABELS[s]}: {len(rows)}")
        for k, r in rows:
            print(f"  {k} [{r['sample']}]: {r.get('error', '')}")
    return counts, missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", help="comma-separated entry names (name or name.variant)")
    ap.add_argument("--limit", type=int, help="only the first N entries")
    ap.add_argument("--out", help="write the status of every entry and sample as JSON")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per sample")
    ap.add_argument("--quiet", action="store_true", help="no per-entry progress lines")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        Worker().run([ln.strip() for ln in sys.stdin if ln.strip()])
        return

    from torch.testing._internal.common_methods_invocations import op_db  # noqa: PLC0415
    keys = entry_keys(op_db)
    if args.ops:
        want = args.ops.split(",")
        unknown = [w for w in want if w not in keys]
        if unknown:
            sys.exit(f"unknown op_db entries: {', '.join(unknown)}")
        keys = [k for k in keys if k in want]
    keys = [k for k in keys if "empty" not in k.split(".")[0]]  # uninitialised outputs
    if args.limit:
        keys = keys[:args.limit]

    results = collections.OrderedDict((k, []) for k in keys)
    skipped, lock, progress = {}, threading.Lock(), [0, len(keys)]
    t0 = time.time()
    shards = [keys[i::args.jobs] for i in range(args.jobs)]
    threads = [threading.Thread(target=run_shard, args=(s, args, results, skipped, lock,
                                                         progress)) for s in shards if s]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    counts, missing = summarize(results, skipped)
    print(f"\n{len(keys)} entries in {wall:.0f} s with {args.jobs} job(s)")
    if args.out:
        write_json(args.out, {"dtype": "float32", "device": "cpu", "wall_s": round(wall, 1),
                              "counts": dict(counts), "missing_ops": dict(missing.most_common()),
                              "skipped": skipped, "entries": results})


def write_json(path, doc):
    """JSON with one line per top-level field and per entry: small, and diffs line by line."""
    with open(path, "w") as f:
        f.write("{\n")
        for i, (k, v) in enumerate(doc.items()):
            sep = "," if i + 1 < len(doc) else ""
            if isinstance(v, dict) and k == "entries":
                f.write(f" {json.dumps(k)}: {{\n")
                f.write(",\n".join(f"  {json.dumps(e)}: {json.dumps(r)}" for e, r in v.items()))
                f.write(f"\n }}{sep}\n")
            else:
                f.write(f" {json.dumps(k)}: {json.dumps(v)}{sep}\n")
        f.write("}\n")


if __name__ == "__main__":
    main()
