#!/usr/bin/env python3
"""Batch-1 latency on the GPU: wall time per call of small inputs, where launches and host work
dominate, eager, Inductor and cinn_like in one process.

Rows: the zoo's Llama-style decoder in float16 on 1 x 32 tokens, BERT-base on 1 x 128 tokens
(float32) and torchvision's ResNet-50 on one 224 x 224 image (float32), forward in eval mode
under no_grad, `torch.compile` of the whole model (dynamic=False). Modes: eager; Inductor by
default and with mode="reduce-overhead" (its CUDA graphs); cinn_like by default and in its
CUDA-graph mode (options={"cudagraphs": True}). Each is checked against eager first (relative
error of the largest output), then timed as calls back to back: the median over rounds of the
mean wall time of --calls calls, the device synchronised after each round only. The last
columns are Inductor's time over cinn_like's, mode for mode (above 1: cinn_like faster), and
the GPU kernel time and launches of a call of Inductor and cinn_like by default (torch.profiler;
with --top N, each one's kernels by kind and its N longest).

    PYTHONPATH=cinn_like/python python3 tools/latency_bench.py [--models llama,bert,resnet50]
        [--calls 200] [--top N]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import cinn_like.torch as ct  # noqa: E402 (registers backend="cinn_like")
import model_zoo as zoo  # noqa: E402 (one definition of the zoo's models)
from kernel_profile import kernels_per_step  # noqa: E402 (one profile of the kernels)
from torch_models_bench import host_us  # noqa: E402 (one timing of calls back to back)
from zoo_bench import TOLERANCE, rel_err  # noqa: E402 (one output check)

DEV = "cuda"


def text_row(zoo_name, dtype, seq):
    """A zoo text model at its realistic shape, on the first sequence of its inputs cut to seq."""
    entry = zoo.get(zoo_name)
    model = entry.build("realistic").to(DEV, dtype).eval()
    inputs = {k: v[:1, :seq].to(DEV) for k, v in entry.inputs("realistic").items()}
    return model, inputs


def resnet50_row():
    from torchvision.models import resnet50  # noqa: PLC0415 (present on the GPU machine)
    return resnet50().to(DEV).eval(), {"x": torch.randn(1, 3, 224, 224, device=DEV)}


ROWS = {
    "llama": ("llama-sdpa float16 1x32", lambda: text_row("llama-sdpa", torch.float16, 32)),
    "bert": ("bert-sdpa float32 1x128", lambda: text_row("bert-sdpa", torch.float32, 128)),
    "resnet50": ("resnet50 float32 1x224", resnet50_row),
}
MODES = (("eager", None),
         ("inductor", dict()),
         ("inductor_ro", dict(mode="reduce-overhead")),
         ("cinn_like", dict(backend="cinn_like")),
         ("cinn_like_graph", dict(backend="cinn_like", options={"cudagraphs": True})))


def run_row(label, make, calls, top):
    torch.manual_seed(0)
    model, inputs = make()
    run = lambda m: zoo.call(m, inputs)  # noqa: E731
    dtype = next(model.parameters()).dtype
    us, kernels, worst = {}, {}, 0.0
    with torch.no_grad():
        ref = run(model)
        for mode, kwargs in MODES:
            torch._dynamo.reset()
            ct.reset()
            m = model if kwargs is None else torch.compile(model, dynamic=False, **kwargs)
            for _ in range(3):  # compile, record, replay
                got = run(m)
            worst = max(worst, rel_err(got, ref))
            us[mode] = host_us(lambda m=m: run(m), DEV, calls=calls)
            if mode in ("inductor", "cinn_like"):
                kernels[mode] = kernels_per_step(lambda m=m: run(m), top=top)
            del m
    ok = worst <= TOLERANCE[dtype]
    print(f"{label:26s} " + " ".join(f"{us[m]:9.1f}" for m, _ in MODES)
          + f" {us['inductor'] / us['cinn_like']:8.2f} {us['inductor_ro'] / us['cinn_like_graph']:8.2f}"
          f" {kernels['inductor'][0] * 1e3:7.1f} {kernels['cinn_like'][0] * 1e3:7.1f} "
          f"{kernels['inductor'][1]:4.0f}/{kernels['cinn_like'][1]:<4.0f}"
          f"  {worst:.1e} {'ok' if ok else 'WRONG'}", flush=True)
    for mode, (_, _, ranked) in kernels.items():
        for ms, n, kernel in ranked:
            print(f"    {mode:9s} {ms * 1e3:8.1f} us {n:5.0f}x  {kernel[:110]}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(ROWS), help=f"comma-separated of {', '.join(ROWS)}")
    p.add_argument("--calls", type=int, default=200, help="calls back to back per round")
    p.add_argument("--top", type=int, default=0,
                   help="print Inductor's and cinn_like's kernels by kind and their N longest")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("latency_bench: needs a CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}; us per call back to back; ratios "
          "Inductor/cinn_like (default modes, then reduce-overhead/CUDA graph; >1: cinn_like faster); "
          "kern: GPU kernel us of a call by default (Inductor, cinn_like), launches")
    print(f"{'row':26s} " + " ".join(f"{m:>9s}"[-9:] for m, _ in MODES)
          + f" {'ind/cl':>8s} {'ro/graph':>8s} {'kern i':>7s} {'kern c':>7s} {'launch':>9s}  err")
    ok = True
    for key in filter(None, args.models.split(",")):
        try:
            ok &= run_row(*ROWS[key], args.calls, args.top)
        except Exception as e:  # noqa: BLE001 (report the row, go on with the others)
            ok = False
            print(f"{key:26s} FAILED: {type(e).__name__}: {str(e)[:300]}", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
