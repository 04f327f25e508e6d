"""\file opinfo_worker.py: judges OpInfo samples through torch.compile(backend="cinn_like") in this
process; the suite (opinfo_suite.py) runs it in worker subprocesses so that an abort is a recorded
`died`, not a dead suite.

Reads jobs from stdin, one per line: `entry<TAB>dtype<TAB>mode<TAB>first sample`, with mode `fwd`
(the op's outputs) or `bwd` (its outputs and the gradients of its differentiable inputs under a
random cotangent: AOTAutograd hands both graphs to the backend). Writes one tagged JSON line per
event on stdout: `entry` (a job starts), `begin` (a sample starts), `sample` (its verdict), `skip`
(the job has nothing to judge) and `done`.

A sample's status (STATUSES): whole (every op handed to the backend compiled, results match),
some_fb / all_fb (some / all of them fell back, results match), no_ops (none reached it),
raised (the compiled call raised), wrong (a result differs beyond the dtype's tolerance and
from float64 more than eager does), baseline (aot_eager, the same tracing without cinn_like,
fails too: a tracing problem, not judged); the suite adds died.

With a second argument `--against-inductor`, a float16 or bfloat16 sample whose result differs
from eager (before the float64 excuse) runs through Inductor too, and its record gets the verdict
of opinfo_inductor.py as "inductor".
"""
import itertools
import json
import os
import sys

import opinfo_inductor

TAG = "@@OPINFO "
SAMPLES_PER_ENTRY = 2
# (rtol, atol) of a compiled result against eager or float64; float64 decides a mismatch.
TOLERANCES = {"float32": (1e-4, 1e-5), "float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2),
              "float64": (1e-7, 1e-7)}


def tolerance(dtype):
    return TOLERANCES.get(str(dtype).replace("torch.", ""), TOLERANCES["float32"])


def first_line(e):
    """`Type: the informative line` of an exception (Dynamo wraps backend errors)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    for ln in lines:
        if "raised:" in ln or "Error:" in ln:
            line = ln
            break
    return f"{type(e).__name__}: {line}"[:300]


def entry_keys(op_db):
    """Unique names of op_db's entries, `name` or `name.variant`, in its order."""
    keys, seen = [], {}
    for op in op_db:
        k = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        seen[k] = seen.get(k, 0) + 1
        keys.append(k if seen[k] == 1 else f"{k}#{seen[k]}")
    return keys


class Worker:
    def __init__(self, device, against_inductor=False):
        if against_inductor:  # Inductor compiles in this process, not in a pool of its own
            os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        import torch  # noqa: PLC0415
        import cinn_like.torch  # noqa: F401, PLC0415
        from torch.utils import _pytree  # noqa: PLC0415
        self.torch, self.pytree, self.device = torch, _pytree, device
        self.against_inductor = against_inductor
        self.cl = sys.modules["cinn_like.torch"]

    @staticmethod
    def emit(**kw):
        sys.stdout.write(TAG + json.dumps(kw) + "\n")
        sys.stdout.flush()

    # -- samples as tensors --------------------------------------------------------------------
    def split(self, sample):
        """(tensor leaves, rebuild(tensors) -> (args, kwargs)) of a SampleInput."""
        torch, pytree = self.torch, self.pytree
        leaves, spec = pytree.tree_flatten(([sample.input, *sample.args], dict(sample.kwargs)))
        idx = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]

        def rebuild(tensors):
            ls = list(leaves)
            for i, t in zip(idx, tensors):
                ls[i] = t
            return pytree.tree_unflatten(ls, spec)

        return [leaves[i] for i in idx], rebuild

    def fresh(self, tensors, dtype=None):
        """Copies of the sample's tensors (floating ones cast to dtype), keeping requires_grad."""
        out = []
        for t in tensors:
            c = t.detach().clone()
            if dtype is not None and c.is_floating_point():
                c = c.to(dtype)
            out.append(c.requires_grad_(t.requires_grad))
        return out

    def run(self, fn, rebuild, tensors, mode, dtype=None):
        """The outputs of fn on fresh copies; in bwd mode followed by the gradients of the inputs
        that require them, under a cotangent drawn from seed 7 (None where an input gets none)."""
        torch = self.torch
        ins = self.fresh(tensors, dtype)
        args, kwargs = rebuild(ins)
        torch.manual_seed(0)
        out = fn(*args, **kwargs)
        outs = self.pytree.tree_leaves(out)
        if mode == "fwd":
            return outs
        diff_out = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        diff_in = [t for t in ins if t.requires_grad]
        if not diff_out or not diff_in:
            return None
        gen = torch.Generator(device=diff_out[0].device).manual_seed(7)
        cot = [torch.randn(o.shape, generator=gen, device=o.device, dtype=torch.float32).to(o.dtype)
               for o in diff_out]
        grads = torch.autograd.grad(diff_out, diff_in, cot, allow_unused=True)
        return [o.detach() for o in diff_out] + list(grads)

    # -- comparison ----------------------------------------------------------------------------
    def compare(self, got, want, dtype, values=True):
        """None when `got` matches `want` at the dtype's tolerance, else what differs; with
        values=False (a random op) only kinds, shapes and dtypes are compared."""
        torch = self.torch
        if len(got) != len(want):
            return f"{len(got)} outputs, eager has {len(want)}"
        rtol, atol = tolerance(dtype)
        for i, (a, b) in enumerate(zip(got, want)):
            if isinstance(b, torch.Tensor):
                if not isinstance(a, torch.Tensor):
                    return f"output {i} is {type(a).__name__}, eager's a tensor"
                if a.shape != b.shape or a.dtype != b.dtype:
                    return f"output {i}: {a.dtype}{list(a.shape)}, eager {b.dtype}{list(b.shape)}"
                if not values:
                    continue
                if b.is_floating_point() or b.is_complex():
                    try:
                        torch.testing.assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True)
                    except AssertionError as e:
                        return f"output {i}: " + " ".join(str(e).split("\n")[1:3])
                elif not torch.equal(a, b):
                    return f"output {i}: {a.dtype} values differ"
            elif (a is None) != (b is None):
                return f"output {i}: {a!r}, eager {b!r}"
            elif values and a != b and not (a != a and b != b):
                return f"output {i}: {a!r}, eager {b!r}"
        return None

    def worse_than_eager(self, got, want, ref, dtype):
        """True when an output of `got` that differs from eager's `want` is further from the
        float64 `ref` than the tolerance allows and than twice eager's error; an output that
        cannot be judged against float64 (not floating, another shape) keeps the mismatch."""
        torch = self.torch
        rtol, atol = tolerance(dtype)
        if ref is None or len(ref) != len(got):
            return True
        for a, b, c in zip(got, want, ref):
            if self.compare([a], [b], dtype) is None:
                continue
            if not (isinstance(a, torch.Tensor) and isinstance(c, torch.Tensor)
                    and a.is_floating_point() and c.shape == a.shape):
                return True
            c = c.detach().to(torch.float64)
            err = (a.double() - c).abs().nan_to_num(0.0)
            if ((err - atol - rtol * c.abs()) > 0).any() and \
                    err.max() > 2 * (b.double() - c).abs().nan_to_num(0.0).max():
                return True
        return False

    def deterministic(self, op, rebuild, tensors):
        """False for an op whose eager result depends on the random state (dropout, rand_like)."""
        outs = []
        try:
            for seed in (1, 2):
                args, kwargs = rebuild(self.fresh(tensors))
                self.torch.manual_seed(seed)
                outs.append(self.pytree.tree_leaves(op(*args, **kwargs)))
            return self.compare(outs[0], outs[1], self.torch.float64) is None
        except Exception:  # noqa: BLE001
            return True

    # -- one sample ----------------------------------------------------------------------------
    def compiled(self, op, backend):
        self.torch._dynamo.reset()
        self.cl.reset()  # statistics; compiled modules stay until the entry changes (serve)
        return self.torch.compile(lambda *t, **k: op(*t, **k), backend=backend, dynamic=False)

    def judge(self, op, sample, dtype, mode):
        tensors, rebuild = self.split(sample)
        try:
            want = self.run(op, rebuild, tensors, mode)
        except Exception as e:  # noqa: BLE001
            return {"status": "baseline", "error": "eager raised: " + first_line(e)}
        if want is None:
            return {"status": "baseline", "error": "no differentiable output"}
        det = self.deterministic(op, rebuild, tensors)
        try:
            got, err = self.run(self.compiled(op, "cinn_like"), rebuild, tensors, mode), None
        except Exception as e:  # noqa: BLE001
            got, err = None, first_line(e)
        st = self.cl.stats()
        rec = {"ops_compiled": st.get("ops_compiled", 0), "ops_fallback": st.get("ops_fallback", 0),
               "fallbacks": sorted({f"{o}: {(r or '').splitlines()[0][:80]}"
                                    for o, r in self.cl.fallback_report()})}
        if err is None:
            mismatch = self.compare(got, want, dtype, values=det)
            if mismatch is not None and det and self.against_inductor and \
                    str(dtype)[6:] in opinfo_inductor.DTYPES:
                rec["inductor"] = self.inductor(op, sample, rebuild, tensors, mode, dtype, got,
                                                want)
            if mismatch is not None and det and self.float64_agrees(op, rebuild, tensors, mode,
                                                                     got, want, dtype):
                mismatch = None
                rec["note"] = "differs from eager, within tolerance of float64"
            if mismatch is not None:
                err = "wrong: " + mismatch
        if err is not None:
            base = self.baseline(op, rebuild, tensors, want, dtype, det, mode)
            if base is not None:
                rec.update(status="baseline", error=err, baseline_error=base)
            else:
                rec.update(status="wrong" if err.startswith("wrong: ") else "raised", error=err)
            return rec
        if rec["ops_compiled"] == 0 and rec["ops_fallback"] == 0:
            rec["status"] = "no_ops"
        elif rec["ops_fallback"] == 0:
            rec["status"] = "whole"
        else:
            rec["status"] = "all_fb" if rec["ops_compiled"] == 0 else "some_fb"
        if not det:
            rec["note"] = "random op: shape and dtype compared"
        return rec

    def float64_agrees(self, op, rebuild, tensors, mode, got, want, dtype):
        """True when `got` is within tolerance of the sample recomputed eagerly in float64, or
        no worse than eager's own result (eager's rounding, not the backend's error)."""
        try:
            ref = self.run(op, rebuild, tensors, mode, dtype=self.torch.float64)
        except Exception:  # noqa: BLE001 (no float64 kernel: eager decides)
            return False
        return not self.worse_than_eager(got, want, ref, dtype)

    def inductor(self, op, sample, rebuild, tensors, mode, dtype, got, want):
        """The sample through Inductor and eagerly in float64, judged by opinfo_inductor.py."""
        torch = self.torch
        try:
            ind, ind_error = self.run(self.compiled(op, "inductor"), rebuild, tensors, mode), None
        except Exception as e:  # noqa: BLE001
            ind, ind_error = None, first_line(e)
        try:
            ref = self.run(op, rebuild, tensors, mode, dtype=torch.float64)
        except Exception:  # noqa: BLE001 (no float64 kernel)
            ref = None
        mismatch = None if ind is None else self.compare(ind, want, dtype)
        return opinfo_inductor.record(torch, sample, dtype, tolerance(dtype), got, want, ind,
                                      ind_error, mismatch, ref)

    def baseline(self, op, rebuild, tensors, want, dtype, det, mode):
        """None when aot_eager runs the sample and matches eager, else its failure."""
        try:
            got = self.run(self.compiled(op, "aot_eager"), rebuild, tensors, mode)
        except Exception as e:  # noqa: BLE001
            return first_line(e)
        m = self.compare(got, want, dtype, values=det)
        return None if m is None else "wrong: " + m

    # -- jobs ----------------------------------------------------------------------------------
    def samples(self, op, dtype, mode):
        self.torch.manual_seed(0)  # the same samples in every run, resumed or not
        it = op.sample_inputs(self.device, dtype, requires_grad=mode == "bwd")
        return list(itertools.islice(it, SAMPLES_PER_ENTRY))

    def skip_reason(self, op, dtype, mode):
        if dtype not in op.supported_dtypes(self.device):
            return f"no {str(dtype)[6:]} on {self.device}"
        if mode == "bwd":
            if not (dtype.is_floating_point and op.supports_autograd):
                return "not differentiable"
            if dtype not in op.supported_backward_dtypes(self.device):
                return f"no {str(dtype)[6:]} backward on {self.device}"
        return None

    def describe(self, sample):
        leaves = self.pytree.tree_leaves(([sample.input, *sample.args], dict(sample.kwargs)))
        return " ".join(f"{list(v.shape)}" if isinstance(v, self.torch.Tensor) else repr(v)[:20]
                        for v in leaves)[:120]

    def serve(self, jobs):
        from torch.testing._internal.common_methods_invocations import op_db  # noqa: PLC0415
        by_key, op = dict(zip(entry_keys(op_db), op_db)), None
        for line in jobs:
            key, dname, mode, start = line.split("\t")
            if op is not by_key[key]:
                self.cl.reset(clear_cache=True)
            op, dtype, start = by_key[key], getattr(self.torch, dname), int(start)
            job = dict(key=key, dtype=dname, mode=mode)
            self.emit(kind="entry", **job)
            why = self.skip_reason(op, dtype, mode)
            try:
                samples = [] if why else self.samples(op, dtype, mode)
            except Exception as e:  # noqa: BLE001
                why = "samples: " + first_line(e)
            if why:
                self.emit(kind="skip", reason=why, **job)
            for i, sample in enumerate(samples):
                if i < start:  # an earlier worker died on this sample or ran it
                    continue
                self.emit(kind="begin", sample=i, **job)
                try:
                    rec = self.judge(op, sample, dtype, mode)
                except Exception as e:  # noqa: BLE001 (a bug of the suite itself)
                    rec = {"status": "baseline", "error": "suite: " + first_line(e)}
                self.emit(kind="sample", sample=i, desc=self.describe(sample), **rec, **job)
            self.emit(kind="done", **job)


if __name__ == "__main__":
    Worker(sys.argv[1], "--against-inductor" in sys.argv[2:]).serve(
        [ln.rstrip("\n") for ln in sys.stdin if ln.strip()])
