#!/usr/bin/env python3
"""Symbolic against static compiles, side by side in one process: what one compile for every
size costs at run time.

Rows: the anchor's softmax, layernorm and reduce workloads (`../shared/bench/torch_anchor.py`,
imported) and the GPT-2 block of tools/torch_models_bench.py. Each is compiled twice with
backend="cinn_like": static (dynamic=False, the anchor's shape) and symbolic (dynamic=True,
every dim its own symbol: duck shaping off), the symbolic one first called at half the sizes
(every dim of every argument halved; the layernorms' rows and the block's batch and sequence
only: their widths are fixed by the workload) so that the timed
call at the anchor's shape runs the same symbolic compile. Both are checked against eager, then
timed: median of a call (CUDA events) and, on the GPU, the device time of the kernels of one
call (torch.profiler). The last columns are symbolic/static: at most 1.15 (GPT-2 block) and 1.2
(the workloads) is issue 17's goal.

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \\
        python3 tools/dynamic_bench.py [--device cuda|cpu]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import cinn_like.torch as ct  # noqa: E402 (registers backend="cinn_like")
from roofline_bench import anchor_workloads, kernel_ms, load_anchor, rel_err  # noqa: E402
from torch_models_bench import median_ms, models  # noqa: E402

ROWS = ("softmax_f16", "layernorm_f16", "add_layernorm_f16", "reduce_sum_f32", "reduce_col_f32")
TOLERANCE = {torch.float32: 1e-3, torch.float16: 1e-2}


def halved(args, dims=None):
    """Each argument with its dims (all, or those in `dims`) halved, contiguous."""
    out = []
    for a in args:
        index = tuple(slice(0, max(s // 2, 1)) if dims is None or d in dims else slice(None)
                      for d, s in enumerate(a.shape))
        out.append(a[index].contiguous())
    return tuple(out)


def compiled_programs(fn, calls):
    """Runs fn on each argument tuple of `calls` (no grad); the Programs compiled meanwhile."""
    before = ct.stats()["compiles"]
    with torch.no_grad():
        for args in calls:
            fn(*args)
    return ct.stats()["compiles"] - before


def time_row(name, fn, args, small, device):
    torch._dynamo.reset()
    ct.reset()
    with torch.no_grad():
        want = fn(*args)
    static = torch.compile(fn, backend="cinn_like", dynamic=False)
    symbolic = torch.compile(fn, backend="cinn_like", dynamic=True)
    n_static = compiled_programs(static, [args])
    n_symbolic = compiled_programs(symbolic, [small, args])
    with torch.no_grad():
        errors = [rel_err(f(*args), want) for f in (static, symbolic)]
        ms = [median_ms(lambda f=f: f(*args), device) for f in (static, symbolic)]
        kms = ([kernel_ms(lambda f=f: f(*args)) for f in (static, symbolic)]
               if device == "cuda" else [float("nan")] * 2)
    dtype = want.dtype if isinstance(want, torch.Tensor) else torch.float32
    ok = all(e <= TOLERANCE.get(dtype, 1e-3) for e in errors)
    shape = "x".join(str(s) for s in args[0].shape)
    print(f"{name:<20} {shape:<14} {n_static:>3} {n_symbolic:>4} {'ok' if ok else 'WRONG':<6}"
          f"{ms[0]:>9.3f} {ms[1]:>9.3f} {kms[0]:>9.3f} {kms[1]:>9.3f}"
          f"{ms[1] / ms[0]:>8.2f} {kms[1] / kms[0]:>8.2f}", flush=True)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--anchor", help="path of torch_anchor.py (default: ../shared/bench/)")
    p.add_argument("--only", help="comma-separated rows to run (default: all)")
    a = p.parse_args()
    only = set(a.only.split(",")) if a.only else None
    config = torch.fx.experimental._config
    config.backed_size_oblivious, config.use_duck_shape = True, False
    name = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    print(f"device={name} torch={torch.__version__}; programs: compiled for the timed shape "
          f"(static) and for half and full sizes (symbolic); times in ms")
    print(f"{'row':<20} {'shape':<14} {'st':>3} {'sym':>4} {'check':<6}{'static':>9} "
          f"{'symbolic':>9} {'k.static':>9} {'k.symb':>9}{'call x':>8} {'kern x':>8}")
    ok = True
    for row, fn, args, _, _ in anchor_workloads(load_anchor(a.anchor), a.device):
        if row in ROWS and (only is None or row in only):
            # The layernorm rows name their normalized width (4096): only their rows vary.
            small = (tuple(x[:x.shape[0] // 2].contiguous() if x.dim() > 1 else x for x in args)
                     if "layernorm" in row else halved(args))
            ok &= time_row(row, fn, args, small, a.device)
    for row, model, inputs in models(a.device):
        if row == "gpt2_block" and (only is None or row in only):
            model = model.to(a.device).eval()
            args = tuple(x.to(a.device) for x in inputs)
            ok &= time_row(row, model, args, halved(args, dims={0, 1}), a.device)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
