"""\file opinfo_inductor.py: the OpInfo suite's comparison with Inductor (--against-inductor).

The suite excuses a result that differs from eager when it is no further from float64 than
eager's own (opinfo_worker.py's `worse_than_eager`); that hides a backend that rounds one unit
away from eager where Inductor does not. In this mode every deterministic float16 or bfloat16
sample whose compiled result differs from eager at the dtype's tolerance (the excuse left out)
runs again through torch.compile(backend="inductor"), compared with eager the same way:

  worse_than_inductor  cinn_like differs from eager and Inductor does not: the finding
  nearer_float64       so does it, but its largest error against the float64 result is below
                       eager's (eager's own rounding; test_torch_half_accumulation's bar too),
                       or at every element beyond the tolerance it is at least as near float64
                       as eager (a backward that rounds the one differing element correctly)
  excused_by_inductor  Inductor differs too (the dtype's rounding, not cinn_like's)
  inductor_raised      Inductor could not run the sample (nothing to compare with)

Only samples that differ run Inductor. The worker half (`record`, from the worker's runs) adds
the verdict and both backends' errors to the sample's record as "inductor"; the suite half
(`summary`, `write_report`) lists the findings and writes them as JSON. A finding makes the
suite fail.
"""
import json
import math

DTYPES = ("float16", "bfloat16")
FINDING, EXCUSED, RAISED = "worse_than_inductor", "excused_by_inductor", "inductor_raised"
NEARER = "nearer_float64"
VERDICTS = {FINDING: "**cinn_like differs from eager, Inductor does not**",
            NEARER: "cinn_like differs from eager, Inductor does not, cinn_like nearer float64",
            EXCUSED: "cinn_like and Inductor both differ from eager",
            RAISED: "cinn_like differs from eager, Inductor raised"}


# ------------------------------------------------------------------------------------------
# Worker side: errors against eager, the Inductor run.
# ------------------------------------------------------------------------------------------
def _unravel(flat, shape):
    idx = []
    for d in reversed(shape):
        flat, r = divmod(flat, d)
        idx.append(r)
    return idx[::-1]


def error_stats(torch, got, want, rtol, atol, spacing_dtype=None):
    """How far the outputs `got` are from `want`, over the floating tensor outputs of one
    shape: the largest absolute and relative errors, the largest in units of the spacing of
    spacing_dtype at want's value (ulps; float16 or bfloat16), how many elements lie beyond
    atol + rtol * |want| of how many, and the worst of them (the output, the index, both values).
    Equal infinities and NaN against NaN count as equal; NaN against a number as infinite."""
    st = {"max_abs": 0.0, "max_rel": 0.0, "max_ulp": 0.0, "beyond": 0, "numel": 0}
    worst, worst_excess = None, -math.inf
    for i, (a, b) in enumerate(zip(got, want)):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                and b.is_floating_point() and a.is_floating_point() and a.shape == b.shape):
            continue
        a64, b64 = a.detach().cpu().double(), b.detach().cpu().double()
        same = (a64 == b64) | (a64.isnan() & b64.isnan())
        err = torch.where(same, 0.0, (a64 - b64).abs()).nan_to_num(nan=math.inf,
                                                                    posinf=math.inf)
        # x/0 and inf/inf are infinite
        rel = torch.where(err == 0, 0.0, err / b64.abs()).nan_to_num(nan=math.inf,
                                                                     posinf=math.inf)
        excess = err - atol - rtol * b64.abs().nan_to_num(nan=0.0, posinf=0.0)
        st["numel"] += err.numel()
        if err.numel() == 0:
            continue
        st["beyond"] += int((excess > 0).sum())
        st["max_abs"] = max(st["max_abs"], float(err.max()))
        st["max_rel"] = max(st["max_rel"], float(rel.max()))
        if spacing_dtype is not None:
            fi = torch.finfo(spacing_dtype)
            mag = b64.abs().nan_to_num(nan=1.0, posinf=1.0).clamp(min=fi.tiny)
            ulp = err / (torch.exp2(torch.floor(torch.log2(mag))) * fi.eps)
            st["max_ulp"] = max(st["max_ulp"], float(ulp.max()))
        k = int(excess.reshape(-1).argmax())
        if float(excess.reshape(-1)[k]) > worst_excess:
            worst_excess = float(excess.reshape(-1)[k])
            worst = {"output": i, "index": _unravel(k, list(a.shape)),
                     "got": float(a64.reshape(-1)[k]), "eager": float(b64.reshape(-1)[k])}
    if worst is not None:
        st["worst"] = worst
    return st


def nearer_where_beyond(torch, got, want, ref, rtol, atol):
    """Whether at every element where `got` lies beyond atol + rtol * |want| of eager's `want`,
    got is at least as near the float64 result `ref` as want is (a backend that rounds better
    than eager at the few elements where they part); False where no element is beyond."""
    beyond = 0
    for a, b, r in zip(got, want, ref):
        if not all(isinstance(t, torch.Tensor) and t.is_floating_point() for t in (a, b, r)):
            continue
        if not a.shape == b.shape == r.shape:
            continue
        a64, b64, r64 = (t.detach().cpu().double() for t in (a, b, r))
        # NaN against a number is beyond (as error_stats counts it) and at an infinite distance.
        def dist(u, v):
            same = (u == v) | (u.isnan() & v.isnan())
            return torch.where(same, 0.0, (u - v).abs()).nan_to_num(nan=math.inf)
        far = dist(a64, b64) > atol + rtol * b64.abs().nan_to_num(nan=0.0, posinf=0.0)
        if not bool(far.any()):
            continue
        if not bool((dist(a64, r64)[far] <= dist(b64, r64)[far]).all()):
            return False
        beyond += int(far.sum())
    return beyond > 0


def value_at(torch, outs, worst):
    """The value of `outs` where `worst` points (None where there is no such element)."""
    if not worst or worst["output"] >= len(outs) or not isinstance(outs[worst["output"]],
                                                                   torch.Tensor):
        return None
    t = outs[worst["output"]]
    try:
        return float(t.detach()[tuple(worst["index"])].double())
    except (IndexError, RuntimeError):
        return None


def sample_text(torch, sample):
    """The sample as a call's arguments: tensors as dtype[shape] (noncontig where strided)."""
    def fmt(v):
        if isinstance(v, torch.Tensor):
            s = f"{str(v.dtype)[6:]}{list(v.shape)}"
            return s + ("" if v.is_contiguous() else f" strides {list(v.stride())}")
        if isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        return repr(v)[:60]
    parts = [fmt(sample.input)] + [fmt(a) for a in sample.args]
    parts += [f"{k}={fmt(v)}" for k, v in sample.kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def record(torch, sample, dtype, tol, got, want, ind, ind_error, ind_mismatch, ref):
    """The "inductor" part of a record whose `got` differs from eager's `want`, given
    Inductor's outputs `ind` (or its error), compare()'s verdict on them and the float64
    outputs `ref` (None without a float64 kernel): the verdict, cinn_like's and Inductor's
    errors against eager and the three results' largest absolute errors against float64."""
    rtol, atol = tol
    rec = {"sample": sample_text(torch, sample),
           "cinn_like": error_stats(torch, got, want, rtol, atol, dtype)}
    if ind is None:
        rec.update(verdict=RAISED, inductor_error=ind_error)
        return rec
    rec["inductor"] = error_stats(torch, ind, want, rtol, atol, dtype)
    rec["inductor_differs"] = ind_mismatch
    rec["verdict"] = EXCUSED if ind_mismatch is not None else FINDING
    worst = rec["cinn_like"].get("worst")
    if worst:
        worst["inductor"] = value_at(torch, ind, worst)
    if ref is not None:
        rec["vs_float64"] = {name: error_stats(torch, outs, ref, rtol, atol)["max_abs"]
                             for name, outs in (("cinn_like", got), ("eager", want),
                                                ("inductor", ind))}
        if worst:
            worst["float64"] = value_at(torch, ref, worst)
        f64 = rec["vs_float64"]
        if rec["verdict"] == FINDING and (
                f64["cinn_like"] < f64["eager"]
                or nearer_where_beyond(torch, got, want, ref, rtol, atol)):
            rec["verdict"] = NEARER
    return rec


# ------------------------------------------------------------------------------------------
# Suite side: the findings, as text and as JSON.
# ------------------------------------------------------------------------------------------
def rows(results):
    """(entry, config, record) of every compared sample, in the run's order."""
    return [(key, cfg, r) for (key, cfg), recs in results.items()
            for r in sorted(recs, key=lambda r: r["sample"]) if "inductor" in r]


def _errors(st):
    s = (f"abs {st['max_abs']:.3g} rel {st['max_rel']:.3g} ulp {st['max_ulp']:.3g}, "
         f"{st['beyond']}/{st['numel']} beyond tolerance")
    w = st.get("worst") if st["beyond"] else None
    if w:
        s += f"; worst out {w['output']}{w['index']}: {w['got']:.6g} vs eager {w['eager']:.6g}"
        extra = [f"{k} {w[k]:.6g}" for k in ("inductor", "float64") if w.get(k) is not None]
        s += f" ({', '.join(extra)})" if extra else ""
    return s


def finding_lines(key, cfg, r):
    ind = r["inductor"]
    out = [f"  {key} {cfg} [{r['sample']}] ({r['status']}) {ind['sample']}",
           f"      cinn_like: {_errors(ind['cinn_like'])}"]
    if "inductor" in ind:
        out.append(f"      inductor:  {_errors(ind['inductor'])}")
    if "inductor_error" in ind:
        out.append(f"      inductor raised: {ind['inductor_error']}")
    f64 = ind.get("vs_float64")
    if f64:
        nearer = " (cinn_like nearer than eager)" if f64["cinn_like"] < f64["eager"] else ""
        out.append("      max abs error vs float64: " +
                   ", ".join(f"{k} {v:.3g}" for k, v in f64.items()) + nearer)
    return out


def summary(results):
    """The text: counts per verdict, each finding with its errors, the others one line each."""
    rs = rows(results)
    out = [f"\nagainst Inductor: {len(rs)} float16/bfloat16 samples differ from eager at the "
           "dtype's tolerance (float64 excuse left out)"]
    for v, label in VERDICTS.items():
        these = [(k, c, r) for k, c, r in rs if r["inductor"]["verdict"] == v]
        out.append(f"\n{label} ({v}): {len(these)}")
        for k, c, r in these:
            if v == EXCUSED:
                out.append(f"  {k} {c} [{r['sample']}]: cinn_like abs "
                           f"{r['inductor']['cinn_like']['max_abs']:.3g}, inductor abs "
                           f"{r['inductor']['inductor']['max_abs']:.3g}")
            else:
                out += finding_lines(k, c, r)
    return out


def findings(results):
    return [(k, c, r) for k, c, r in rows(results) if r["inductor"]["verdict"] == FINDING]


def write_report(path, results, about):
    """The compared samples as JSON: {"about", and a list per verdict of {entry, config,
    sample, status, ...the record's "inductor" part}}."""
    rep = {"about": about, "samples_compared": len(rows(results))}
    for v in VERDICTS:
        rep[v] = [{"entry": k, "config": c, "sample_index": r["sample"], "status": r["status"],
                   **r["inductor"]} for k, c, r in rows(results) if r["inductor"]["verdict"] == v]
    with open(path, "w") as f:
        json.dump(rep, f, indent=1)
        f.write("\n")
