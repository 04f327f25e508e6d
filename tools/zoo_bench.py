#!/usr/bin/env python3
"""The model zoo at realistic sizes on the GPU: eager, Inductor and cinn_like in one process.

For each model of tools/model_zoo.py (forward, eval mode, no_grad): cinn_like's outputs are
checked against eager's first (relative error of the largest output, stated tolerance), then
the median CUDA-event times of eager, torch.compile (Inductor) and torch.compile
(backend="cinn_like") calls are printed with the ratios, the GPU kernel time and launches of a
call of Inductor and cinn_like (torch.profiler; with --top N, each one's kernels by kind and its
N longest), what cinn_like compiled (ops compiled, fell back, partitions) and the compile times. Then a GPT-2 training run: the same weights and
batches through eager and cinn_like, each step's loss compared (relative error at most 1e-3),
and the fallback count.

    PYTHONPATH=cinn_like/python python3 tools/zoo_bench.py [--size realistic] [--models a,b:float16]
        [--train-steps 10] [--top N]
"""
import argparse
import copy
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import cinn_like.torch as ct  # noqa: E402
import model_zoo as zoo  # noqa: E402 (one definition of the zoo)
from kernel_profile import kernels_per_step  # noqa: E402 (one profile of the kernels)
from torch_models_bench import median_ms  # noqa: E402 (one timing method)

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
DEV = "cuda"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Relative error of the output (max |got - ref| / max |ref|) allowed per dtype.
TOLERANCE = {torch.float32: 1e-3, torch.float16: 2e-2, torch.bfloat16: 5e-2}


def to_device(inputs, dtype):
    return {k: (v.to(DEV, dtype) if v.is_floating_point() else v.to(DEV))
            for k, v in inputs.items()}


def rel_err(got, ref):
    errs = [float((g.float() - r.float()).abs().max()) / max(float(r.float().abs().max()), 1e-30)
            for g, r in zip(zoo.outputs(got), zoo.outputs(ref))]
    return max(errs)


def forward_row(name, dtype, size, top=0):
    entry = zoo.get(name)
    torch.manual_seed(0)
    model = entry.build(size).to(DEV, dtype).eval()
    inputs = to_device(entry.inputs(size, train=False), dtype)
    run = lambda m: zoo.call(m, inputs)  # noqa: E731
    with torch.no_grad():
        ref = run(model)
        torch._dynamo.reset()
        ct.reset()
        cm = torch.compile(model, backend="cinn_like", dynamic=False)
        t = time.perf_counter()
        got = run(cm)
        torch.cuda.synchronize()
        cinn_compile = time.perf_counter() - t
        s = ct.stats()
        err = rel_err(got, ref)
        im = torch.compile(model, dynamic=False)
        t = time.perf_counter()
        run(im)
        torch.cuda.synchronize()
        ind_compile = time.perf_counter() - t
        eager = median_ms(lambda: run(model), DEV)
        ind = median_ms(lambda: run(im), DEV)
        cinn = median_ms(lambda: run(cm), DEV)
        ind_k = kernels_per_step(lambda: run(im), top=top)
        cinn_k = kernels_per_step(lambda: run(cm), top=top)
    ok = err <= TOLERANCE[dtype]
    print(f"{name + ':' + str(dtype)[6:]:26s} {eager:8.2f} {ind:9.2f} {cinn:9.2f} "
          f"{eager / cinn:7.2f}x {ind / cinn:7.2f}x {ind_k[0]:7.3f} {cinn_k[0]:7.3f} "
          f"{ind_k[0] / cinn_k[0]:7.2f}x {ind_k[1]:4.0f}/{cinn_k[1]:<4.0f} "
          f"{s['ops_compiled']:6d} {s['ops_fallback']:5d} "
          f"{s['partitions']:5d} {cinn_compile:8.1f} {s['compile_seconds']:8.1f} "
          f"{ind_compile:8.1f}  {err:.1e} "
          f"{'ok' if ok else 'WRONG'}", flush=True)
    for op, reason in ct.fallback_report()[:5]:
        print(f"    fell back: {op}: {reason[:160]}")
    for mode, (_, _, kernels) in (("inductor", ind_k), ("cinn_like", cinn_k)):
        for ms, n, kernel in kernels:
            print(f"    {mode:9s} {ms:8.3f} ms {n:5.0f}x  {kernel[:110]}")
    return ok


def train_gpt2(size, steps):
    """Losses of eager and cinn_like training the same GPT-2 on the same batches (SGD)."""
    entry = zoo.get("gpt2-eager")
    torch.manual_seed(0)
    ref_model = zoo.set_train(entry.build(size).to(DEV))
    model = copy.deepcopy(ref_model)
    cm = torch.compile(model, backend="cinn_like", dynamic=False)
    torch._dynamo.reset()
    ct.reset()
    opts = [torch.optim.SGD(m.parameters(), lr=1e-3) for m in (ref_model, model)]
    worst = 0.0
    t = time.perf_counter()
    for step in range(steps):
        inputs = to_device(entry.inputs(size, train=True, seed=step), torch.float32)
        losses = []
        for m, opt in zip((ref_model, cm), opts):
            opt.zero_grad()
            loss = entry.loss(zoo.call(m, inputs), inputs)
            loss.backward()
            opt.step()
            losses.append(float(loss))
        rel = abs(losses[1] - losses[0]) / abs(losses[0])
        worst = max(worst, rel)
        print(f"  step {step:2d}  eager loss {losses[0]:.6f}  cinn_like {losses[1]:.6f}  "
              f"rel {rel:.1e}", flush=True)
    s = ct.stats()
    ok = worst <= 1e-3 and s["ops_fallback"] == 0
    print(f"gpt2 training ({size}, {steps} steps, {time.perf_counter() - t:.0f} s): worst "
          f"relative loss difference {worst:.1e} (at most 1e-3), ops compiled "
          f"{s['ops_compiled']}, fell back {s['ops_fallback']}: {'ok' if ok else 'FAILED'}")
    for op, reason in ct.fallback_report()[:10]:
        print(f"    fell back: {op}: {reason[:160]}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="realistic", choices=zoo.SIZES)
    p.add_argument("--models", default=",".join(zoo.names()),
                   help="comma-separated zoo names, each optionally :float16 / :bfloat16")
    p.add_argument("--train-steps", type=int, default=10, help="GPT-2 training steps (0: none)")
    p.add_argument("--top", type=int, default=0,
                   help="print Inductor's and cinn_like's kernels by kind and their N longest")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("zoo_bench: needs a CUDA device")
    print(f"device: {torch.cuda.get_device_name()}, size {args.size}; times are medians (ms) "
          "of CUDA events; ratios are eager/cinn_like and inductor/cinn_like (>1: cinn_like "
          "faster); kern: GPU kernel ms of a call (ind., cinn_like, ratio), launches "
          "ind./cinn_like; cinn s: the first call (tracing, compiling, running), in cinn: of it in "
          "cinn_like's graph compiler; err: relative to eager's largest output")
    print(f"{'model':26s} {'eager':>8s} {'inductor':>9s} {'cinn_like':>9s} {'vs eager':>8s} "
          f"{'vs ind.':>8s} {'kern i':>7s} {'kern c':>7s} {'kern i/c':>8s} {'launch':>9s} "
          f"{'ops':>6s} {'fb':>5s} {'parts':>5s} {'cinn s':>8s} {'in cinn':>8s} {'ind. s':>8s}  err")
    ok = True
    for spec in filter(None, args.models.split(",")):
        name, _, dt = spec.partition(":")
        try:
            ok &= forward_row(name, DTYPES[dt or "float32"], args.size, args.top)
        except Exception as e:  # noqa: BLE001 (report the model, go on with the others)
            ok = False
            print(f"{spec:26s} FAILED: {type(e).__name__}: {str(e)[:300]}", flush=True)
        torch.cuda.empty_cache()
    if args.train_steps:
        ok &= train_gpt2(args.size, args.train_steps)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
