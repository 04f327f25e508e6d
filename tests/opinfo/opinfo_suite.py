#!/usr/bin/env python3
"""\file opinfo_suite.py: PyTorch's OpInfo database through torch.compile(backend="cinn_like"),
checked against an expectations file, in the manner of Inductor's OpInfo tests.

Every entry of torch.testing._internal.common_methods_invocations.op_db (it needs the
`expecttest` package; the `empty*` entries are left out, their outputs are uninitialised) runs its
first two sample inputs per configuration, a dtype and a mode: `fwd` compares the outputs with
eager, `bwd` (differentiable ops, floating dtypes) the outputs and the input gradients. Each sample
gets a status (opinfo_worker.py says which); entries run in worker subprocesses that a death
(abort, segfault, timeout) restarts after the sample, which is recorded as `died`.

The expectations file (tests/opinfo/expect_<device>.json) holds every (entry, configuration)'s
statuses, each with its reason where it is not `whole`. With --check the suite fails when a status
differs from it in either direction: a newly failing op fails CI, and a newly compiled one asks
for the file to be updated (--update writes it from the run).

  CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \\
      python3 tests/opinfo/opinfo_suite.py --configs float32.fwd,bfloat16.fwd --jobs 2 \\
      --check tests/opinfo/expect_x86.json

--configs all adds float16 and the integer and bool dtypes; --ops and --limit pick entries.

--against-inductor judges float16 and bfloat16 samples without the float64 excuse: where the
result differs from eager, Inductor runs the sample too, and one that Inductor matches is a
finding (opinfo_inductor.py): listed with both backends' errors (--inductor-report: as JSON),
it makes the suite fail. --budget stops the run after so many seconds and reports what it judged.
"""
import argparse
import collections
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opinfo_inductor  # noqa: E402
from opinfo_worker import SAMPLES_PER_ENTRY, TAG, entry_keys  # noqa: E402

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opinfo_worker.py")
STATUSES = ["whole", "some_fb", "all_fb", "no_ops", "died", "raised", "wrong", "baseline"]
LABELS = {
    "whole": "every handed op compiled, result matches",
    "some_fb": "some ops fell back, result matches",
    "all_fb": "all ops fell back, result matches",
    "no_ops": "no op reached the backend",
    "died": "**the Python process died** (abort/timeout)",
    "raised": "**the compiled call raised**",
    "wrong": "**wrong result**",
    "baseline": "aot_eager fails too (tracing; not judged)",
}
FAILURES = ("died", "raised", "wrong")
CI_CONFIGS = ["float32.fwd", "bfloat16.fwd", "float32.bwd"]
ALL_DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
              "uint8", "bool"]
# Dense linear algebra and complex results may fall back (the exclusions): counted apart.
LINALG = {"svd", "svd_lowrank", "pca_lowrank", "cholesky", "cholesky_inverse", "cholesky_solve",
          "lu", "lu_solve", "lu_unpack", "qr", "geqrf", "ormqr", "triangular_solve", "inverse",
          "det", "logdet", "pinverse", "matrix_exp", "lobpcg", "linalg", "symeig", "eig"}


def excluded(key, recs):
    """True for dense linear algebra and complex-valued entries."""
    head = key.split(".")[0].split("#")[0]
    if head in LINALG or head in ("fft", "view_as_complex", "polar", "complex"):
        return True
    return any("complex" in f for r in recs for f in r.get("fallbacks", []))


# ------------------------------------------------------------------------------------------
# Running: jobs sharded over worker pipelines, a worker restarted after a death.
# ------------------------------------------------------------------------------------------
def stderr_tail(path):
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read()[-20000:].splitlines() if ln.strip()]
    except OSError:
        return ""
    keep = [ln for ln in lines if not ln.startswith(("W1", "I1", "warnings.warn"))]
    for ln in reversed(keep):
        if any(s in ln for s in ("Check failed", "terminate", "Assertion", "abort", "rror")):
            return ln[:300]
    return keep[-1][:300] if keep else ""


class Run:
    """The results of one run: job (entry, config) -> sample records, and skipped jobs."""

    def __init__(self, jobs, args):
        self.args, self.lock = args, threading.Lock()
        self.results = collections.OrderedDict((j, []) for j in jobs)
        self.skipped, self.done = {}, 0
        self.stop_at = time.time() + args.budget if getattr(args, "budget", None) else None
        self.cut = False  # the budget ran out
        # Each record as it comes (a run cut short keeps what it judged).
        self.out = open(args.out, "w") if args.out else None
        self.torch_version = None
        if self.out:
            import torch  # noqa: PLC0415
            self.out.write(json.dumps({"about": {"device": args.device,
                                                 "torch": torch.__version__}}) + "\n")

    def record(self, job, rec=None, skip=None):
        with self.lock:
            if rec is not None:
                self.results[job].append(rec)
                if self.out:
                    self.out.write(json.dumps({"entry": job[0], "config": job[1], **rec}) + "\n")
                    self.out.flush()
            if skip is not None:
                self.skipped[job] = skip
                if self.out:
                    self.out.write(json.dumps({"entry": job[0], "config": job[1], "skip": skip})
                                   + "\n")
                    self.out.flush()

    def finish(self, job, extra=""):
        with self.lock:
            self.done += 1
            if not self.args.quiet:
                sts = " ".join(r["status"] for r in self.results[job])
                print(f"[{self.done}/{len(self.results)}] {job[0]} {job[1]}: "
                      f"{sts or 'skip: ' + self.skipped.get(job, '')}{extra}", flush=True)

    def shard(self, jobs):
        """Runs `jobs` in one worker at a time, a new one after each death."""
        pending, resume = list(jobs), {}  # resume: job -> first sample to run
        while pending:
            pending = self.one_worker(pending, resume)

    def one_worker(self, pending, resume):
        errf = tempfile.NamedTemporaryFile(prefix="opinfo_", suffix=".err", delete=False)
        cmd = [sys.executable, WORKER, self.args.device]
        cmd += ["--against-inductor"] if self.args.against_inductor else []
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf,
                                text=True)
        proc.stdin.write("".join(f"{k}\t{c.replace('.', chr(9))}\t{resume.get((k, c), 0)}\n"
                                 for k, c in pending))
        proc.stdin.close()
        current, sample, finished, buf, timed_out = None, None, set(), "", False
        deadline = time.time() + self.args.timeout + 120  # the imports
        while True:
            if self.stop_at is not None and time.time() > self.stop_at:
                proc.kill()  # the sample under way is not judged, nor recorded
                proc.wait()
                errf.close()
                os.unlink(errf.name)
                self.cut = True
                return []
            ready, _, _ = select.select([proc.stdout], [], [], 5)
            if not ready:
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
                kind, job = m.pop("kind"), (m.pop("key"), f"{m.pop('dtype')}.{m.pop('mode')}")
                deadline = time.time() + self.args.timeout
                if kind == "entry":
                    current, sample = job, None
                elif kind == "begin":
                    sample = m["sample"]
                elif kind == "sample":
                    self.record(job, rec=m)
                    sample = None
                elif kind == "skip":
                    self.record(job, skip=m["reason"])
                elif kind == "done":
                    finished.add(job)
                    self.finish(job)
                    current = None
        proc.wait()
        errf.close()
        tail = stderr_tail(errf.name)
        os.unlink(errf.name)
        if current is not None:
            why = "timeout" if timed_out else f"exit {proc.returncode}"
            # The job goes on from the sample after; a death outside a sample, or a second one
            # at the same place, ends it (no endless restarts).
            nxt = SAMPLES_PER_ENTRY if sample is None else sample + 1
            if nxt <= resume.get(current, 0):
                nxt = SAMPLES_PER_ENTRY
            resume[current] = nxt
            self.record(current, rec={"status": "died", "sample": sample or 0,
                                      "error": f"{why}: {tail}"})
            if nxt >= SAMPLES_PER_ENTRY:
                finished.add(current)
                self.finish(current, f" ({why}: {tail})")
        elif proc.returncode != 0 and len(finished) < len(pending):
            sys.exit(f"opinfo worker failed outside any entry: exit {proc.returncode}: {tail}")
        return [j for j in pending if j not in finished]


# ------------------------------------------------------------------------------------------
# Reporting and expectations.
# ------------------------------------------------------------------------------------------
def expectation(rec):
    """A sample's line in the expectations file: its status, and why where it is not whole."""
    st = rec["status"]
    why = {"some_fb": "; ".join(rec.get("fallbacks", [])), "all_fb": "; ".join(
        rec.get("fallbacks", []))}.get(st, rec.get("error", ""))
    return f"{st}: {why}"[:240] if why and st != "whole" else st


def expectations(run):
    """{entry: {config: [sample lines] | "skip: why"}} of a run."""
    out = collections.OrderedDict()
    for (key, cfg), recs in run.results.items():
        recs = sorted(recs, key=lambda r: r["sample"])
        val = [expectation(r) for r in recs] if recs else "skip: " + run.skipped.get(
            (key, cfg), "no samples")
        out.setdefault(key, collections.OrderedDict())[cfg] = val
    return out


def status_of(line):
    return line.split(":", 1)[0]


def check(run, path):
    """The differences between the run and the expectations file, as lines (empty: none)."""
    with open(path) as f:
        want = json.load(f)["entries"]
    got, diffs = expectations(run), []
    for key, cfgs in got.items():
        for cfg, val in cfgs.items():
            exp = want.get(key, {}).get(cfg)
            if exp is None:
                diffs.append(f"{key} {cfg}: not in {os.path.basename(path)} (now {val})")
                continue
            a = [status_of(v) for v in (val if isinstance(val, list) else [val])]
            b = [status_of(v) for v in (exp if isinstance(exp, list) else [exp])]
            if a != b:
                now = val if isinstance(val, str) else "; ".join(val)
                diffs.append(f"{key} {cfg}: expected {' '.join(b)}, now {now}")
    return diffs


def write_expectations(run, path, meta):
    """The file, one line per entry so that a change diffs as that entry's line; entries and
    configurations not run this time keep their old lines."""
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f).get("entries", {})
    merged = collections.OrderedDict(old)
    for key, cfgs in expectations(run).items():
        merged.setdefault(key, collections.OrderedDict()).update(cfgs)
    with open(path, "w") as f:
        f.write("{\n")
        f.write(f' "about": {json.dumps(meta)},\n "entries": {{\n')
        f.write(",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in merged.items()))
        f.write("\n }\n}\n")


def summarize(run, configs):
    """The table of statuses per configuration (markdown), then the failures and the missing
    mappings, as lines."""
    counts = {c: collections.Counter() for c in configs}
    reach = {c: [0, 0] for c in configs}  # whole, samples reaching the backend (not excluded)
    excl = {c: 0 for c in configs}
    for (key, cfg), recs in run.results.items():
        ex = excluded(key, recs)
        for r in recs:
            counts[cfg][r["status"]] += 1
            if r["status"] in ("no_ops", "baseline"):
                continue
            if ex:
                excl[cfg] += 1
            else:
                reach[cfg][1] += 1
                reach[cfg][0] += r["status"] == "whole"
    dev = run.args.device
    out = ["| | " + " | ".join(f"{dev} {c}" for c in configs) + " |",
           "|---|" + "---|" * len(configs)]
    judged = {c: sum(counts[c][s] for s in STATUSES if s != "baseline") for c in configs}
    out.append("| samples judged | " + " | ".join(str(judged[c]) for c in configs) + " |")
    for s in STATUSES:
        out.append(f"| {LABELS[s]} | " + " | ".join(str(counts[c][s]) for c in configs) + " |")
    out.append("| **compiled whole, of the samples reaching the backend** (linalg/complex apart) | "
               + " | ".join(f"{w}/{n} ({100 * w / max(n, 1):.0f}%)" for w, n in reach.values())
               + " |")
    out.append("| linalg / complex samples reaching the backend | " +
               " | ".join(str(excl[c]) for c in configs) + " |")
    missing = collections.Counter()
    for recs in run.results.values():
        for r in recs:
            for f in r.get("fallbacks", []):
                if f.endswith("no cinn_like mapping"):
                    missing[f.split(":")[0]] += 1
    out.append(f"\naten ops without a cinn_like mapping: {len(missing)}; the most frequent:")
    out.append("  " + ", ".join(f"{op} {n}" for op, n in missing.most_common(40)))
    for s in FAILURES:
        rows = [(j, r) for j, recs in run.results.items() for r in recs if r["status"] == s]
        if rows:
            out.append(f"\n{LABELS[s]}: {len(rows)}")
            out += [f"  {key} {cfg} [{r['sample']}]: {r.get('error', '')}"
                    for (key, cfg), r in rows]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--configs", default=",".join(CI_CONFIGS),
                    help="dtype.mode list (mode fwd or bwd), or 'all'")
    ap.add_argument("--ops", help="comma-separated entries (name or name.variant)")
    ap.add_argument("--limit", type=int, help="only the first N entries")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--timeout", type=float, default=180, help="seconds per sample")
    ap.add_argument("--check", metavar="FILE", help="fail when a status differs from FILE")
    ap.add_argument("--update", metavar="FILE", help="write the statuses into FILE")
    ap.add_argument("--out", metavar="FILE", help="every sample's record as JSON lines, as it comes")
    ap.add_argument("--replay", metavar="JSONL", help="report (--check, --update) the records "
                    "of an earlier --out instead of running")
    ap.add_argument("--table", metavar="FILE", help="also write the summary table into FILE")
    ap.add_argument("--quiet", action="store_true", help="no line per job")
    ap.add_argument("--against-inductor", action="store_true", help="float16/bfloat16 samples "
                    "that differ from eager run through Inductor too (opinfo_inductor.py)")
    ap.add_argument("--inductor-report", metavar="FILE", help="the Inductor comparison as JSON")
    ap.add_argument("--budget", type=float, help="stop after so many seconds, report what ran")
    args = ap.parse_args()
    try:
        import torch  # noqa: PLC0415
        from torch.testing._internal.common_methods_invocations import op_db  # noqa: PLC0415
    except ImportError as e:  # PyTorch or expecttest missing: skipped (ctest's code 77)
        print(f"opinfo suite skipped: {e} (scripts/setup.sh installs PyTorch and expecttest)")
        sys.exit(77)

    configs = args.configs.split(",")
    if args.configs == "all":
        configs = [f"{d}.fwd" for d in ALL_DTYPES] + [f"{d}.bwd" for d in ALL_DTYPES[:4]]
    keys = entry_keys(op_db)
    if args.ops:
        unknown = [w for w in args.ops.split(",") if w not in keys]
        if unknown:
            sys.exit(f"unknown op_db entries: {', '.join(unknown)}")
        keys = [k for k in keys if k in args.ops.split(",")]
    keys = [k for k in keys if "empty" not in k.split(".")[0]]
    if args.limit:
        keys = keys[:args.limit]
    jobs = [(k, c) for k in keys for c in configs]
    if args.replay:
        run, wall = replay(args), 0.0
        configs = list(dict.fromkeys(c for _, c in run.results))
    else:
        run, wall = execute(args, keys, configs, jobs)
    report(run, args, keys, configs, wall, run.torch_version or torch.__version__)


def replay(args):
    """A Run from the records of an earlier run's --out (the GPU machine's, say)."""
    args.out, recs = None, []
    with open(args.replay) as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    about = [r["about"] for r in recs if "about" in r]
    recs = [r for r in recs if "about" not in r]
    run = Run(list(dict.fromkeys((r["entry"], r["config"]) for r in recs)), args)
    if about:
        run.torch_version, args.device = about[0]["torch"], about[0]["device"]
    for r in recs:
        job = (r.pop("entry"), r.pop("config"))
        run.record(job, skip=r["skip"]) if "skip" in r else run.record(job, rec=r)
    return run


def execute(args, keys, configs, jobs):
    run = Run(jobs, args)
    t0 = time.time()
    # Entries are dealt round the workers, each with all its configurations (they share
    # compiled Programs: the forward of float32.bwd is float32.fwd's).
    threads = [threading.Thread(target=run.shard, args=([(k, c) for k in keys[i::args.jobs]
                                                         for c in configs],))
               for i in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return run, time.time() - t0


def report(run, args, keys, configs, wall, torch_version):
    table = summarize(run, configs) + [
        f"\n{len(keys)} entries x {len(configs)} configurations in {wall:.0f} s with "
        f"{args.jobs} job(s), torch {torch_version}"]
    if args.against_inductor:
        table += opinfo_inductor.summary(run.results)
    if run.cut:
        table.append(f"\n--budget of {args.budget:.0f} s ran out: {run.done} of "
                     f"{len(run.results)} jobs finished")
    print("\n" + "\n".join(table))
    if args.table:
        with open(args.table, "w") as f:
            f.write("\n".join(table) + "\n")
    if args.update:
        write_expectations(run, args.update, {"device": args.device, "torch": torch_version,
                                              "samples_per_entry": SAMPLES_PER_ENTRY})
    failed = [(j, r) for j, recs in run.results.items() for r in recs if r["status"] in FAILURES]
    found = opinfo_inductor.findings(run.results) if args.against_inductor else []
    if args.inductor_report:
        opinfo_inductor.write_report(args.inductor_report, run.results, {
            "device": args.device, "torch": torch_version, "configs": configs,
            "entries": len({k for k, _ in run.results}), "wall_s": round(wall),
            "jobs": args.jobs, "cut_by_budget": run.cut,
            "jobs_finished": None if args.replay else run.done})
    if found:
        print(f"\n{len(found)} samples where cinn_like differs from eager and Inductor does not "
              "(listed above)")
    if args.check:
        diffs = check(run, args.check)
        if diffs:
            print(f"\n{len(diffs)} differences from {args.check} (a newly compiled op: rerun "
                  "with --update and commit the file; a new failure: fix it):")
            print("\n".join("  " + d for d in diffs))
            sys.exit(1)
        print(f"\nevery status matches {args.check}")
    elif failed:
        sys.exit(1)
    if found:
        sys.exit(1)


if __name__ == "__main__":
    main()
