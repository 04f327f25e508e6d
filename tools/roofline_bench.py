#!/usr/bin/env python3
"""Eager, Inductor and cinn_like side by side in one process, against the memory roofline.

Rows: every workload of the anchor file (`../shared/bench/torch_anchor.py`, imported, never
copied), two workloads of the project's own (an HF-style RMSNorm in float16, an HF BERT layer in
float32, when transformers is installed) and the models of tools/torch_models_bench.py. For each row, cinn_like's output is
checked against eager's first (stated tolerance per dtype); then the median time of a call of
eager, torch.compile (Inductor) and torch.compile(backend="cinn_like") is printed (CUDA events
on the GPU, wall time on the CPU), on the GPU also the device time of the kernels of one call
(torch.profiler), and for the memory-bound workloads the fraction of the copy bandwidth that
cinn_like reaches (bytes the workload must move / measured copy bandwidth / its time). The last
columns are Inductor/cinn_like: above 1 is cinn_like faster. On the GPU the dispatch-bound tiny
chain gets a second line: microseconds per call of eager, cinn_like and cinn_like's CUDA-graph
mode (mode="reduce-overhead") over calls back to back, and eager/it for each. The geometric
means close the table.

On the CPU the same workloads run at smaller sizes (every dim above 4096 divided by 4: the
anchor's 8192x8192 is 2048x2048) against Inductor's C++ backend.

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \\
        python3 tools/roofline_bench.py [--device cuda|cpu] [--only softmax_f16,mlp] [--json F]
"""
import argparse
import contextlib
import importlib.util
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import cinn_like.torch  # noqa: E402 (registers backend="cinn_like")
from torch_models_bench import host_us, median_ms, models  # noqa: E402 (one timing method, one model set)

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHORS = [os.path.join(HERE, "..", "..", "shared", "bench", "torch_anchor.py"),
           os.path.join(HERE, "..", "gpu_bundle", "torch_anchor.py")]
# The rows whose time is bound by memory traffic (the roofline goal applies to them).
MEMORY_BOUND = {"ew_chain_f32", "bias_gelu_f16", "softmax_f16", "layernorm_f16",
                "add_layernorm_f16", "reduce_sum_f32", "reduce_col_f32"}
# Dispatch-bound rows: on the GPU also timed back to back, as tools/call_path_bench.py times
# calls (host_us: a call's host time is its cost; one call alone, timed between events after a
# synchronize, adds a cost of waking up to each column): eager, cinn_like and cinn_like's
# CUDA-graph mode (mode="reduce-overhead").
CUDAGRAPH_ROWS = {"tiny_ew_chain_f32"}
# max |got - want| / max |want| allowed, by the output's dtype.
TOLERANCE = {torch.float32: 1e-3, torch.float16: 1e-2, torch.bfloat16: 5e-2}
CPU_SHRINK_ABOVE, CPU_SHRINK_BY = 4096, 4


def load_anchor(path):
    for p in [path] if path else ANCHORS:
        if p and os.path.exists(p):
            spec = importlib.util.spec_from_file_location("torch_anchor", p)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    sys.exit(f"roofline_bench: no anchor file at {path or ' or '.join(ANCHORS)} (--anchor PATH)")


@contextlib.contextmanager
def smaller_random_tensors():
    """torch.randn/torch.rand with every dim above CPU_SHRINK_ABOVE divided by CPU_SHRINK_BY."""
    randn, rand = torch.randn, torch.rand

    def shrink(shape):
        return [d // CPU_SHRINK_BY if d > CPU_SHRINK_ABOVE else d for d in shape]

    torch.randn = lambda *s, **kw: randn(*shrink(s), **kw)
    torch.rand = lambda *s, **kw: rand(*shrink(s), **kw)
    try:
        yield
    finally:
        torch.randn, torch.rand = randn, rand


def anchor_workloads(anchor, device):
    """(name, fn, args, bytes moved at minimum, memory-bound) of the anchor's workloads."""
    anchor.dev = device
    with smaller_random_tensors() if device == "cpu" else contextlib.nullcontext():
        rows = anchor.workloads()
    for name, fn, args, nbytes in rows:
        yield name, fn, args, nbytes, name in MEMORY_BOUND


def rms_norm(x, weight, eps=1e-6):
    """RMSNorm as Hugging Face's Llama writes it: float32 statistics, the weight in x's dtype."""
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def project_workloads(device):
    """The workloads issue 52 names beside the anchor's, at the anchor's sizes (the CPU's smaller)."""
    cpu = device == "cpu"
    rows, hidden = (4096, 4096) if cpu else (16384, 4096)
    x = torch.randn(rows, hidden, device=device, dtype=torch.float16)
    w = torch.randn(hidden, device=device, dtype=torch.float16)
    yield "rmsnorm_f16", rms_norm, (x, w), 2 * x.numel() * x.element_size() + 2 * hidden, True
    try:
        from transformers import BertConfig  # noqa: PLC0415 (optional dependency)
        from transformers.models.bert.modeling_bert import BertLayer  # noqa: PLC0415
    except ImportError:
        return
    config = BertConfig(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    config._attn_implementation = "sdpa"
    layer = BertLayer(config).to(device).eval()
    batch, seq = (2, 128) if cpu else (8, 512)
    yield "bert_layer_f32", layer, (torch.randn(batch, seq, 768, device=device),), 0, False


def model_rows(device):
    for name, model, inputs in models(device):
        model = model.to(device).eval()
        inputs = tuple(x.to(device) for x in inputs)
        yield name, model, inputs, 0, False


def copy_bandwidth(device):
    """Bytes read plus written per second by a device copy of 1 GiB (256 MiB on the CPU)."""
    x = torch.empty((1 << 30) if device == "cuda" else (1 << 28), dtype=torch.uint8, device=device)
    y = torch.empty_like(x)
    ms = median_ms(lambda: y.copy_(x), device, reps=10)
    return 2 * x.numel() / (ms * 1e-3)


def kernel_ms(fn, reps=5):
    """Device time of the kernels (and copies) of one call, from torch.profiler."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    total_us = sum(e.self_device_time_total for e in prof.key_averages())
    return total_us / reps / 1e3


def first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        return first_tensor(out[0])
    return first_tensor(next(iter(out.values())))


def rel_err(got, want):
    got, want = first_tensor(got).float(), first_tensor(want).float()
    return float((got - want).abs().max()) / max(float(want.abs().max()), 1e-30)


def run_row(name, fn, args, nbytes, memory_bound, device, bw, reps):
    torch._dynamo.reset()
    cinn_like.torch.reset()
    with torch.no_grad():
        want = fn(*args)
        inductor = torch.compile(fn)
        ours = torch.compile(fn, backend="cinn_like")
        t = time.perf_counter()
        got = ours(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        compile_s = time.perf_counter() - t
        err = rel_err(got, want)
        inductor(*args)
        stats = cinn_like.torch.stats()
        row = dict(name=name, bytes=nbytes, memory_bound=memory_bound, rel_err=err,
                   tolerance=TOLERANCE.get(first_tensor(want).dtype, 1e-3),
                   ops_compiled=stats["ops_compiled"], ops_fallback=stats["ops_fallback"],
                   partitions=stats["partitions"], cinn_like_compile_s=compile_s)
        for label, f in (("eager", fn), ("inductor", inductor), ("cinn_like", ours)):
            row[f"{label}_ms"] = median_ms(lambda f=f: f(*args), device, reps)
            if device == "cuda":
                row[f"{label}_kernel_ms"] = kernel_ms(lambda f=f: f(*args))
        if device == "cuda" and name in CUDAGRAPH_ROWS:
            graphed = torch.compile(fn, backend="cinn_like", mode="reduce-overhead")
            for _ in range(3):  # run, capture, replay
                graphed(*args)
            row["cudagraph_rel_err"] = rel_err(graphed(*args), want)
            for label, f in (("eager", fn), ("cinn_like", ours), ("cudagraph", graphed)):
                row[f"back_to_back_{label}_us"] = host_us(lambda f=f: f(*args), device)
    if memory_bound:
        time_key = "cinn_like_kernel_ms" if device == "cuda" else "cinn_like_ms"
        row["cinn_like_bw_fraction"] = nbytes / bw / (row[time_key] * 1e-3)
    row["speedup_vs_inductor"] = row["inductor_ms"] / row["cinn_like_ms"]
    if device == "cuda":
        row["kernel_speedup_vs_inductor"] = row["inductor_kernel_ms"] / row["cinn_like_kernel_ms"]
    return row


def print_row(r, device):
    bw = f"{r['cinn_like_bw_fraction']:6.2f}" if "cinn_like_bw_fraction" in r else f"{'-':>6}"
    ok = "ok" if r["rel_err"] <= r["tolerance"] else f"ERR {r['rel_err']:.1e}"
    line = (f"{r['name']:<26}{r['eager_ms']:>9.3f}{r['inductor_ms']:>10.3f}{r['cinn_like_ms']:>10.3f}")
    if device == "cuda":
        line += (f"{r['inductor_kernel_ms']:>10.3f}{r['cinn_like_kernel_ms']:>10.3f}")
    line += f"{bw:>8}{r['speedup_vs_inductor']:>9.2f}"
    if device == "cuda":
        line += f"{r['kernel_speedup_vs_inductor']:>9.2f}"
    line += f"{r['ops_fallback']:>6}  {ok}"
    print(line, flush=True)
    if "back_to_back_cudagraph_us" in r:
        err = r["cudagraph_rel_err"]
        ok = "ok" if err <= r["tolerance"] else f"ERR {err:.1e}"
        eager, ours, graph = (r[f"back_to_back_{k}_us"]
                              for k in ("eager", "cinn_like", "cudagraph"))
        print(f"  back to back, us per call: eager {eager:.1f}, cinn_like {ours:.1f} "
              f"(eager/it {eager / ours:.2f}), cinn_like CUDA graph {graph:.1f} "
              f"(eager/it {eager / graph:.2f}; result {ok})", flush=True)


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--anchor", help="path of torch_anchor.py (default: ../shared/bench/)")
    ap.add_argument("--only", help="comma-separated row names")
    ap.add_argument("--skip", default="", help="comma-separated row names to leave out")
    ap.add_argument("--no-models", action="store_true", help="the workloads only, no models")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--autotune", action="store_true",
                    help="cinn_like times its groups' tactic knobs at compile time "
                         "(flag cinn_like_autotune) and keeps the fastest")
    ap.add_argument("--json", help="write the rows here (default: $OUT/roofline_bench.json)")
    a = ap.parse_args()
    device = a.device
    if a.autotune:
        cinn_like.set_flags(cinn_like_autotune=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    anchor = load_anchor(a.anchor)
    bw = copy_bandwidth(device)
    device_name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    print(f"device={device_name} torch={torch.__version__} copy_bw={bw / 1e9:.1f} GB/s "
          f"threads={torch.get_num_threads()} autotune={a.autotune}")
    head = f"{'row':<26}{'eager':>9}{'inductor':>10}{'cinn_like':>10}"
    if device == "cuda":
        head += f"{'ind kern':>10}{'cl kern':>10}"
    head += f"{'bw frac':>8}{'ind/cl':>9}" + (f"{'kern i/c':>9}" if device == "cuda" else "")
    print(head + f"{'fb':>6}  check   (ms; ind/cl > 1: cinn_like faster)")
    only = set(a.only.split(",")) if a.only else None
    skip = set(filter(None, a.skip.split(",")))
    sources = [anchor_workloads(anchor, device), project_workloads(device)]
    sources += [] if a.no_models else [model_rows(device)]
    rows = []
    for source in sources:
        for name, fn, args, nbytes, memory_bound in source:
            if (only and name not in only) or name in skip:
                continue
            r = run_row(name, fn, args, nbytes, memory_bound, device, bw, a.reps)
            print_row(r, device)
            rows.append(r)
    g = geomean([r["speedup_vs_inductor"] for r in rows])
    print(f"geomean Inductor/cinn_like over {len(rows)} rows: {g:.2f}", end="")
    if device == "cuda":
        print(f" (kernels {geomean([r['kernel_speedup_vs_inductor'] for r in rows]):.2f})", end="")
    print()
    path = a.json or (os.path.join(os.environ["OUT"], f"roofline_bench_{device}.json")
                      if os.environ.get("OUT") else None)
    if path:
        with open(path, "w") as f:
            json.dump(dict(device=device_name, copy_bw=bw, rows=rows), f, indent=1)
    bad = [r["name"] for r in rows if max(r["rel_err"], r.get("cudagraph_rel_err", 0))
           > r["tolerance"]]
    if bad:
        print(f"roofline_bench: outputs differ from eager beyond tolerance: {', '.join(bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
